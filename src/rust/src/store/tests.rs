//! The shared store test suite: the behaviour v3-core.rst ("Abstract store
//! interface") asks of every store, written once against `&dyn Store` and
//! run on each implementation, plus the file system store spec
//! (v3-stores-filesystem.rst) checks that only make sense on disk.

use super::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Keys no store may accept: each could escape a root folder or is not
/// portable.
pub const BAD_KEYS: &[&str] = &[
    "",
    "/abs",
    "/etc/passwd",
    "..",
    "../x",
    "a/../../x",
    "a/..",
    ".",
    "./a",
    "a/./b",
    "a//b",
    "a/",
    "a\\b",
    "..\\x",
    "a\0b",
];

/// Prefixes no store may accept.
pub const BAD_PREFIXES: &[&str] = &[
    "/", "//", "/a/", "../", "a/../", "..", "./", "a//", "a\\b/", "a\0/",
];

pub(crate) fn get(store: &dyn Store, key: &str) -> Option<Vec<u8>> {
    store
        .get_str(key, ByteRange::All)
        .unwrap_or_else(|e| panic!("get '{key}': {e}"))
}

pub(crate) fn set(store: &dyn Store, key: &str, value: &[u8]) {
    store
        .set_str(key, value)
        .unwrap_or_else(|e| panic!("set '{key}': {e}"));
}

fn set_all(store: &dyn Store, keys: &[&str]) {
    for key in keys {
        set(store, key, key.as_bytes());
    }
}

pub(crate) fn strings(keys: &[&str]) -> Vec<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut v = strings(keys);
    v.sort();
    v
}

pub(crate) fn listing(keys: &[&str], prefixes: &[&str]) -> DirListing {
    DirListing {
        keys: strings(keys),
        prefixes: strings(prefixes),
    }
}

pub(crate) fn assert_kind<T: std::fmt::Debug>(r: Result<T>, kind: &str, what: &str) -> ZarrError {
    match r {
        Err(e) => {
            assert_eq!(e.kind(), kind, "{what}: wrong error kind: {e}");
            e
        }
        Ok(v) => panic!("{what}: expected a {kind} error, got Ok({v:?})"),
    }
}

/// Leave the store as every check expects to find it: empty.
fn clear(store: &dyn Store) {
    store.erase_prefix_str("").unwrap();
    assert_eq!(
        store.list().unwrap(),
        Vec::<String>::new(),
        "erase_prefix(\"\") left keys"
    );
}

/// Run every check on `store`, which must be writable and empty.
pub fn check_store(store: &dyn Store) {
    assert!(!store.read_only());
    assert_eq!(
        store.list().unwrap(),
        Vec::<String>::new(),
        "the suite needs an empty store"
    );
    check_round_trip(store);
    check_missing(store);
    check_ranges(store);
    check_erase(store);
    check_erase_prefix(store);
    check_list(store);
    check_list_dir(store);
    check_exists_and_size(store);
    check_invalid_keys(store);
    check_concurrent_writes(store);
}

pub fn check_round_trip(store: &dyn Store) {
    set(store, "zarr.json", b"{}");
    assert_eq!(get(store, "zarr.json").unwrap(), b"{}");

    // A shorter value replaces a longer one entirely (no stale tail).
    set(store, "a/b", b"a longer first value");
    set(store, "a/b", b"short");
    assert_eq!(get(store, "a/b").unwrap(), b"short");

    set(store, "empty", b"");
    assert_eq!(get(store, "empty").unwrap(), Vec::<u8>::new());

    let bytes: Vec<u8> = (0..=255).cycle().take(100_000).collect();
    set(store, "g/arr/c/0/1", &bytes);
    assert_eq!(get(store, "g/arr/c/0/1").unwrap(), bytes);

    // A value written in parts is their concatenation, replacing the old.
    store
        .set_parts_str("g/arr/c/0/1", &[b"head", b"", &bytes[..10], b"tail"])
        .unwrap();
    let mut want = b"head".to_vec();
    want.extend_from_slice(&bytes[..10]);
    want.extend_from_slice(b"tail");
    assert_eq!(get(store, "g/arr/c/0/1").unwrap(), want);
    set(store, "g/arr/c/0/1", &bytes);

    // Zarr v2 keys start with "."; keys are case sensitive and Unicode.
    set(store, "g/.zarray", b"v2");
    set(store, "Foo", b"upper");
    set(store, "foo", b"lower");
    set(store, "donn\u{e9}es/\u{3b1}", b"unicode");
    assert_eq!(get(store, "g/.zarray").unwrap(), b"v2");
    assert_eq!(get(store, "donn\u{e9}es/\u{3b1}").unwrap(), b"unicode");
    if store
        .list()
        .unwrap()
        .iter()
        .filter(|k| k.eq_ignore_ascii_case("foo"))
        .count()
        == 2
    {
        // Only stores on case-sensitive file systems can hold both.
        assert_eq!(get(store, "Foo").unwrap(), b"upper");
        assert_eq!(get(store, "foo").unwrap(), b"lower");
    }
    clear(store);
}

pub fn check_missing(store: &dyn Store) {
    assert_eq!(get(store, "nothing"), None);
    assert_eq!(get(store, "no/such/key"), None);
    assert_eq!(
        store.get_str("nothing", ByteRange::Suffix(4)).unwrap(),
        None
    );
    assert_eq!(
        store
            .get_str(
                "nothing",
                ByteRange::Range {
                    offset: 100,
                    length: 1
                }
            )
            .unwrap(),
        None
    );
    assert!(!store.exists_str("nothing").unwrap());
    assert_eq!(store.size_str("nothing").unwrap(), None);

    // "d" is only a prefix of "d/x", not a key.
    set(store, "d/x", b"x");
    assert_eq!(get(store, "d"), None);
    assert!(!store.exists_str("d").unwrap());
    assert_eq!(store.size_str("d").unwrap(), None);
    store.erase_str("d").unwrap();
    assert_eq!(
        get(store, "d/x").unwrap(),
        b"x",
        "erasing a prefix-only key removed keys below it"
    );
    // Below an existing key there is nothing.
    assert_eq!(get(store, "d/x/y"), None);
    assert!(!store.exists_str("d/x/y").unwrap());
    assert_eq!(store.size_str("d/x/y").unwrap(), None);
    store.erase_str("d/x/y").unwrap();
    assert_eq!(store.list_prefix_str("d/x/").unwrap(), Vec::<String>::new());
    clear(store);
}

pub fn check_ranges(store: &dyn Store) {
    let value: Vec<u8> = (0..100).collect();
    set(store, "r", &value);
    set(store, "e", b"");
    check_range_reads(store);
    clear(store);
}

/// The byte range reads of a store holding "r" (the bytes 0 to 99) and
/// "e" (empty) but no "missing"; separate from `check_ranges` so that a
/// store that cannot be written (HTTP) can be checked on keys it serves.
pub fn check_range_reads(store: &dyn Store) {
    let value: Vec<u8> = (0..100).collect();
    let ok = |range: ByteRange, want: &[u8]| {
        let got = store
            .get_str("r", range)
            .unwrap_or_else(|e| panic!("{range:?}: {e}"));
        assert_eq!(got.as_deref(), Some(want), "{range:?}");
    };
    ok(ByteRange::All, &value);
    ok(
        ByteRange::Range {
            offset: 10,
            length: 5,
        },
        &value[10..15],
    );
    ok(
        ByteRange::Range {
            offset: 0,
            length: 100,
        },
        &value,
    );
    ok(
        ByteRange::Range {
            offset: 0,
            length: 0,
        },
        &[],
    );
    ok(
        ByteRange::Range {
            offset: 95,
            length: 5,
        },
        &value[95..],
    );
    ok(
        ByteRange::Range {
            offset: 100,
            length: 0,
        },
        &[],
    );
    ok(ByteRange::From(0), &value);
    ok(ByteRange::From(42), &value[42..]);
    ok(ByteRange::From(100), &[]);
    ok(ByteRange::Suffix(0), &[]);
    ok(ByteRange::Suffix(10), &value[90..]);
    ok(ByteRange::Suffix(100), &value);

    for range in [
        ByteRange::Range {
            offset: 96,
            length: 5,
        },
        ByteRange::Range {
            offset: 101,
            length: 0,
        },
        ByteRange::Range {
            offset: u64::MAX,
            length: 2,
        },
        ByteRange::Range {
            offset: 1,
            length: u64::MAX,
        },
        ByteRange::From(101),
        ByteRange::Suffix(101),
    ] {
        let want = resolve_range("r", 100, range).unwrap_err();
        let got = store.get_str("r", range).unwrap_err();
        assert_eq!(got, want, "{range:?}");
        assert!(got.message().contains("'r'"), "{got}");
    }

    assert_eq!(
        store.get_str("e", ByteRange::Suffix(0)).unwrap(),
        Some(vec![])
    );
    assert_eq!(
        store.get_str("e", ByteRange::From(0)).unwrap(),
        Some(vec![])
    );
    assert!(store.get_str("e", ByteRange::Suffix(1)).is_err());
    assert!(store
        .get_str(
            "e",
            ByteRange::Range {
                offset: 0,
                length: 1
            }
        )
        .is_err());
    for range in [
        ByteRange::All,
        ByteRange::From(1),
        ByteRange::Suffix(1),
        ByteRange::Range {
            offset: 0,
            length: 0,
        },
    ] {
        assert_eq!(store.get_str("missing", range).unwrap(), None, "{range:?}");
    }
}

pub fn check_erase(store: &dyn Store) {
    set_all(store, &["a/b", "a/bc", "a/b.json", "x"]);
    store.erase_str("a/b").unwrap();
    assert_eq!(get(store, "a/b"), None);
    assert!(!store.exists_str("a/b").unwrap());
    assert_eq!(store.list().unwrap(), strings(&["a/b.json", "a/bc", "x"]));
    // Erasing what is not there is not an error, twice over.
    store.erase_str("a/b").unwrap();
    store.erase_str("never/was").unwrap();
    store.erase_str("x").unwrap();
    assert_eq!(store.list().unwrap(), strings(&["a/b.json", "a/bc"]));
    // A key can be written again after it was erased.
    set(store, "a/b", b"again");
    assert_eq!(get(store, "a/b").unwrap(), b"again");
    clear(store);
}

pub fn check_erase_prefix(store: &dyn Store) {
    let keys = [
        "a/b",
        "a/c/d",
        "a/c/e",
        "a/c.json",
        "ab",
        "a.json",
        "b/x",
        "zarr.json",
    ];
    set_all(store, &keys);
    store.erase_prefix_str("a/c/").unwrap();
    assert_eq!(
        store.list().unwrap(),
        sorted(&["a/b", "a/c.json", "ab", "a.json", "b/x", "zarr.json"])
    );
    // "a/" is not "a": "ab" and "a.json" stay.
    store.erase_prefix_str("a/").unwrap();
    assert_eq!(
        store.list().unwrap(),
        sorted(&["ab", "a.json", "b/x", "zarr.json"])
    );
    store.erase_prefix_str("missing/").unwrap();
    store.erase_prefix_str("a/").unwrap();
    // A prefix without "/" is a plain string prefix.
    set_all(store, &["a/b", "a/c/d"]);
    store.erase_prefix_str("a").unwrap();
    assert_eq!(store.list().unwrap(), sorted(&["b/x", "zarr.json"]));
    // A prefix below a key is empty: nothing goes.
    store.erase_prefix_str("zarr.json/").unwrap();
    assert_eq!(store.list().unwrap(), sorted(&["b/x", "zarr.json"]));
    store.erase_prefix_str("").unwrap();
    assert_eq!(store.list().unwrap(), Vec::<String>::new());
    // The store still works after being emptied.
    set(store, "after/clear", b"1");
    assert_eq!(get(store, "after/clear").unwrap(), b"1");
    clear(store);
}

/// Keys whose sorted order is byte order, not path order: "a-b" and "a.b"
/// sort before "a/...", "B" before "a".
const TREE: &[&str] = &[
    "zarr.json",
    "a/c/1/0",
    "B",
    "a/zarr.json",
    "a/c/0/1",
    "a-b",
    "a/b/zarr.json",
    "ab",
    "a/c/0/0",
    "a.b",
];

pub fn check_list(store: &dyn Store) {
    assert_eq!(store.list().unwrap(), Vec::<String>::new());
    set_all(store, TREE);
    let all = store.list().unwrap();
    assert_eq!(all, sorted(TREE));
    assert_eq!(
        all,
        strings(&[
            "B",
            "a-b",
            "a.b",
            "a/b/zarr.json",
            "a/c/0/0",
            "a/c/0/1",
            "a/c/1/0",
            "a/zarr.json",
            "ab",
            "zarr.json"
        ])
    );
    assert_eq!(store.list_prefix_str("").unwrap(), all);
    assert_eq!(
        store.list_prefix_str("a/").unwrap(),
        strings(&[
            "a/b/zarr.json",
            "a/c/0/0",
            "a/c/0/1",
            "a/c/1/0",
            "a/zarr.json"
        ])
    );
    assert_eq!(
        store.list_prefix_str("a/c/0/").unwrap(),
        strings(&["a/c/0/0", "a/c/0/1"])
    );
    assert_eq!(
        store.list_prefix_str("missing/").unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(store.list_prefix_str("ab/").unwrap(), Vec::<String>::new());
    assert_eq!(
        store.list_prefix_str("zarr.json/").unwrap(),
        Vec::<String>::new()
    );
    // Without a trailing "/" a prefix matches the start of a name.
    assert_eq!(
        store.list_prefix_str("a").unwrap(),
        strings(&[
            "a-b",
            "a.b",
            "a/b/zarr.json",
            "a/c/0/0",
            "a/c/0/1",
            "a/c/1/0",
            "a/zarr.json",
            "ab"
        ])
    );
    assert_eq!(
        store.list_prefix_str("a/c/0").unwrap(),
        strings(&["a/c/0/0", "a/c/0/1"])
    );
    clear(store);
}

pub fn check_list_dir(store: &dyn Store) {
    assert_eq!(store.list_dir_str("").unwrap(), DirListing::default());
    set_all(store, TREE);
    assert_eq!(
        store.list_dir_str("").unwrap(),
        listing(&["B", "a-b", "a.b", "ab", "zarr.json"], &["a/"])
    );
    assert_eq!(
        store.list_dir_str("a/").unwrap(),
        listing(&["a/zarr.json"], &["a/b/", "a/c/"])
    );
    assert_eq!(
        store.list_dir_str("a/c/").unwrap(),
        listing(&[], &["a/c/0/", "a/c/1/"])
    );
    assert_eq!(
        store.list_dir_str("a/c/0/").unwrap(),
        listing(&["a/c/0/0", "a/c/0/1"], &[])
    );
    assert_eq!(
        store.list_dir_str("a/b/").unwrap(),
        listing(&["a/b/zarr.json"], &[])
    );
    assert_eq!(
        store.list_dir_str("missing/").unwrap(),
        DirListing::default()
    );
    assert_eq!(store.list_dir_str("a.b/").unwrap(), DirListing::default());
    // "a" names the same folder as "a/".
    assert_eq!(
        store.list_dir_str("a").unwrap(),
        store.list_dir_str("a/").unwrap()
    );
    clear(store);
}

pub fn check_exists_and_size(store: &dyn Store) {
    set(store, "s/zero", b"");
    set(store, "s/five", b"12345");
    set(store, "s/big", &vec![7u8; 123_457]);
    for (key, size) in [("s/zero", 0), ("s/five", 5), ("s/big", 123_457)] {
        assert!(store.exists_str(key).unwrap(), "{key}");
        assert_eq!(store.size_str(key).unwrap(), Some(size), "{key}");
    }
    assert!(!store.exists_str("s/six").unwrap());
    assert_eq!(store.size_str("s/six").unwrap(), None);
    store.erase_str("s/five").unwrap();
    assert!(!store.exists_str("s/five").unwrap());
    assert_eq!(store.size_str("s/five").unwrap(), None);
    clear(store);
}

pub fn check_invalid_keys(store: &dyn Store) {
    set(store, "a/b", b"keep");
    for &key in BAD_KEYS {
        let what = |m: &str| format!("{m}({:?})", key);
        let e = assert_kind(
            store.get_str(key, ByteRange::All),
            "invalid_key",
            &what("get"),
        );
        assert!(
            e.message().contains(&key.escape_debug().to_string()),
            "message does not name the key: {e}"
        );
        assert_kind(
            store.get_str(key, ByteRange::Suffix(1)),
            "invalid_key",
            &what("get suffix"),
        );
        assert_kind(store.set_str(key, b"x"), "invalid_key", &what("set"));
        assert_kind(store.erase_str(key), "invalid_key", &what("erase"));
        assert_kind(store.exists_str(key), "invalid_key", &what("exists"));
        assert_kind(store.size_str(key), "invalid_key", &what("size"));
    }
    for &prefix in BAD_PREFIXES {
        let what = |m: &str| format!("{m}({:?})", prefix);
        assert_kind(
            store.list_prefix_str(prefix),
            "invalid_key",
            &what("list_prefix"),
        );
        assert_kind(store.list_dir_str(prefix), "invalid_key", &what("list_dir"));
        assert_kind(
            store.erase_prefix_str(prefix),
            "invalid_key",
            &what("erase_prefix"),
        );
    }
    // Nothing was written or erased by the refused calls.
    assert_eq!(store.list().unwrap(), strings(&["a/b"]));
    assert_eq!(get(store, "a/b").unwrap(), b"keep");
    clear(store);
}

/// Several threads write their own keys and one shared key: every value
/// ends up complete, the shared key holds one writer's whole value.
pub fn check_concurrent_writes(store: &dyn Store) {
    const THREADS: u8 = 8;
    const ROUNDS: usize = 25;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let value = vec![t; 10_000 + t as usize];
                for i in 0..ROUNDS {
                    set(store, "shared", &value);
                    set(store, &format!("t{t}/{i}"), &value);
                    let got = get(store, "shared").expect("the shared key vanished");
                    let first = got[0];
                    assert_eq!(got, vec![first; 10_000 + first as usize], "torn value");
                }
            });
        }
    });
    let got = get(store, "shared").unwrap();
    assert_eq!(got, vec![got[0]; 10_000 + got[0] as usize]);
    assert_eq!(store.list().unwrap().len(), THREADS as usize * ROUNDS + 1);
    for t in 0..THREADS {
        assert_eq!(
            get(store, &format!("t{t}/{}", ROUNDS - 1)).unwrap(),
            vec![t; 10_000 + t as usize]
        );
    }
    clear(store);
}

/// `store` is read-only and holds `key` with `value`: reads work, every
/// write is refused and changes nothing.
pub fn check_read_only(store: &dyn Store, key: &str, value: &[u8]) {
    assert!(store.read_only());
    assert_eq!(get(store, key).unwrap(), value);
    let before = store.list().unwrap();
    let e = assert_kind(store.set_str(key, b"changed"), "read_only", "set");
    assert!(
        e.message().contains(key),
        "message does not name the key: {e}"
    );
    assert_kind(store.set_str("new/key", b"x"), "read_only", "set new");
    assert_kind(store.erase_str(key), "read_only", "erase");
    assert_kind(store.erase_str("not/there"), "read_only", "erase missing");
    assert_kind(store.erase_prefix_str(""), "read_only", "erase_prefix all");
    assert_kind(store.erase_prefix_str("a/"), "read_only", "erase_prefix");
    // Keys are still checked first.
    assert_kind(store.set_str("../x", b"x"), "invalid_key", "set bad key");
    assert_eq!(get(store, key).unwrap(), value);
    assert_eq!(store.list().unwrap(), before);
    assert!(store.exists_str(key).unwrap());
    assert_eq!(store.size_str(key).unwrap(), Some(value.len() as u64));
}

// --- memory store ----------------------------------------------------------

#[test]
fn memory_store_passes_the_suite() {
    let store = MemoryStore::new(false);
    check_store(&store);
    assert_eq!(store.describe(), "memory store");
}

#[test]
fn memory_store_read_only_refuses_writes() {
    let store = MemoryStore::new(false);
    set(&store, "a/b", b"value");
    check_read_only(&store.into_read_only(), "a/b", b"value");
    let empty = MemoryStore::new(true);
    assert_kind(empty.set_str("k", b"v"), "read_only", "set");
    assert_eq!(empty.list().unwrap(), Vec::<String>::new());
}

#[test]
fn memory_store_is_shareable_across_threads() {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new(false));
    let s2 = store.clone();
    std::thread::spawn(move || s2.set_str("k", b"v").unwrap())
        .join()
        .unwrap();
    assert_eq!(get(&*store, "k").unwrap(), b"v");
}

// --- file system store -----------------------------------------------------

/// A fresh folder under the system temp folder, removed on drop. pid and a
/// counter keep parallel tests (and parallel test runs) apart.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("zarr-store-test-{}-{n}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    pub(crate) fn str(&self, rel: &str) -> String {
        self.join(rel)
            .to_str()
            .expect("temp folder is not UTF-8")
            .to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Every file below `dir`, as paths relative to it with "/".
pub(crate) fn files_below(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{rel}{}", entry.file_name().to_string_lossy());
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), &format!("{name}/"), out);
            } else {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

pub(crate) fn open_rw(dir: &TempDir, rel: &str) -> FsStore {
    FsStore::open(&dir.str(rel), false, true).unwrap()
}
