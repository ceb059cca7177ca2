//! The shared store test suite: the behaviour v3-core.rst ("Abstract store
//! interface") asks of every store, written once against `&dyn Store` and
//! run on each implementation, plus the file system store spec
//! (v3-stores-filesystem.rst) checks that only make sense on disk.

use super::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

mod listing;
mod reads;
mod writes;

pub use listing::*;
pub use reads::*;
pub use writes::*;

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
        store.list_str().unwrap(),
        Vec::<String>::new(),
        "erase_prefix(\"\") left keys"
    );
}

/// Run every check on `store`, which must be writable and empty.
pub fn check_store(store: &dyn Store) {
    assert!(store.as_writable().is_some());
    assert_eq!(
        store.list_str().unwrap(),
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
    assert_eq!(store.list_str().unwrap(), strings(&["a/b"]));
    assert_eq!(get(store, "a/b").unwrap(), b"keep");
    clear(store);
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
    assert_eq!(empty.list_str().unwrap(), Vec::<String>::new());
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

    /// Write `data` to the file `rel` (making its folders); its path.
    pub(crate) fn write(&self, rel: &str, data: &[u8]) -> String {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, data).unwrap();
        self.str(rel)
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
