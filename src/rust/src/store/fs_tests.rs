//! File store tests: the shared suite, opening, keys as paths below the
//! root; then against a hostile or crashing world: atomic new values,
//! writers killed mid-write, FIFOs and links.

use super::fs::FsWriteOptions;
use super::tests::*;
use super::*;
use std::fs;

#[test]
fn fs_store_passes_the_suite() {
    let dir = TempDir::new("suite");
    let store = open_rw(&dir, "store");
    check_store(&store);
    assert!(
        dir.join("store").is_dir(),
        "erase_prefix(\"\") removed the root"
    );
    assert_eq!(
        files_below(&dir.join("store")),
        Vec::<String>::new(),
        "temporary files left behind"
    );
}

#[test]
fn fs_store_read_only_refuses_writes() {
    let dir = TempDir::new("ro");
    set(&open_rw(&dir, "store"), "a/b", b"value");
    let ro = FsStore::open(&dir.str("store"), true, false).unwrap();
    check_read_only(&ro, "a/b", b"value");
    assert_eq!(files_below(&dir.join("store")), strings(&["a/b"]));
}

#[test]
fn fs_open_missing_folder_without_create_is_not_found() {
    let dir = TempDir::new("missing");
    let root = dir.str("not/there");
    for read_only in [false, true] {
        let e = assert_kind(FsStore::open(&root, read_only, false), "not_found", "open");
        assert!(
            e.message().contains(&root),
            "message does not name the path: {e}"
        );
    }
    assert!(
        !dir.join("not").exists(),
        "open without create made a folder"
    );
    // Read-only with create must not create it either.
    assert!(FsStore::open(&root, true, true).is_err());
    assert!(!dir.join("not").exists(), "a read-only open made a folder");
}

#[test]
fn fs_open_with_create_makes_nested_folders() {
    let dir = TempDir::new("create");
    let store = FsStore::open(&dir.str("x/y/z.zarr"), false, true).unwrap();
    assert!(dir.join("x/y/z.zarr").is_dir());
    assert_eq!(
        store.describe(),
        format!("local store at {}", dir.join("x/y/z.zarr").display())
    );
    // Opening an existing folder with create is fine and keeps its keys.
    set(&store, "k", b"v");
    let again = FsStore::open(&dir.str("x/y/z.zarr"), false, true).unwrap();
    assert_eq!(get(&again, "k").unwrap(), b"v");
}

#[test]
fn fs_open_a_file_is_an_error() {
    let dir = TempDir::new("file-root");
    fs::write(dir.join("plain"), b"not a folder").unwrap();
    for create in [false, true] {
        let e = FsStore::open(&dir.str("plain"), false, create).expect_err("opened a file");
        assert!(e.message().contains("plain"), "{e}");
    }
    assert_eq!(fs::read(dir.join("plain")).unwrap(), b"not a folder");
}

#[test]
fn fs_open_file_uri() {
    let dir = TempDir::new("uri");
    fs::create_dir_all(dir.join("my data")).unwrap();
    fs::write(dir.join("my data/k"), b"v").unwrap();
    let encoded = dir.str("my data").replace('%', "%25").replace(' ', "%20");
    let uri = if encoded.starts_with('/') {
        format!("file://{encoded}")
    } else {
        format!("file:///{encoded}")
    };
    let store = FsStore::open(&uri, true, false).unwrap();
    assert_eq!(get(&store, "k").unwrap(), b"v");
    assert_eq!(
        store.describe(),
        format!("local store at {}", dir.join("my data").display())
    );
    assert_eq!(store.root(), dir.join("my data"));
    if cfg!(unix) {
        let localhost = format!("FILE://localhost{encoded}");
        assert_eq!(
            get(&FsStore::open(&localhost, true, false).unwrap(), "k").unwrap(),
            b"v"
        );
        assert_kind(
            FsStore::open("file://elsewhere/data", true, false),
            "unsupported",
            "remote host",
        );
        for bad in [
            "file:///bad%zzpath",
            "file:///bad%+1",
            "file:///bad%2",
            "file:relative",
        ] {
            assert_kind(FsStore::open(bad, true, false), "invalid_key", bad);
        }
        // The minimal form "file:/path" of RFC 8089.
        let minimal = format!("file:{encoded}");
        assert_eq!(
            get(&FsStore::open(&minimal, true, false).unwrap(), "k").unwrap(),
            b"v"
        );
        let missing = format!("file://{}", dir.str("gone").replace(' ', "%20"));
        assert_kind(
            FsStore::open(&missing, true, false),
            "not_found",
            "missing uri",
        );
    }
    assert_kind(FsStore::open("", true, false), "invalid_key", "empty root");
}

#[test]
fn fs_keys_are_paths_below_the_root() {
    let dir = TempDir::new("layout");
    let store = open_rw(&dir, "store");
    set(&store, "foo/bar", b"bytes");
    assert_eq!(
        fs::read(dir.join("store").join("foo").join("bar")).unwrap(),
        b"bytes"
    );
    // Files made by other tools are keys too (the reverse translation).
    fs::create_dir_all(dir.join("store/x/y")).unwrap();
    fs::write(dir.join("store/x/y/z"), b"external").unwrap();
    fs::create_dir_all(dir.join("store/empty/folder")).unwrap();
    assert_eq!(store.list().unwrap(), strings(&["foo/bar", "x/y/z"]));
    assert_eq!(get(&store, "x/y/z").unwrap(), b"external");
    // An empty folder is a prefix in list_dir, though it holds no keys.
    assert_eq!(
        store.list_dir_str("").unwrap(),
        listing(&[], &["empty/", "foo/", "x/"])
    );
    assert_eq!(
        store.list_prefix_str("empty/").unwrap(),
        Vec::<String>::new()
    );
    // erase removes folders it leaves empty, so listings match the keys.
    store.erase_str("foo/bar").unwrap();
    assert!(!dir.join("store/foo").exists());
    assert!(dir.join("store").is_dir());
    store.erase_prefix_str("x/").unwrap();
    assert!(!dir.join("store/x").exists());
    store.erase_prefix_str("").unwrap();
    assert!(dir.join("store").is_dir());
    assert_eq!(fs::read_dir(dir.join("store")).unwrap().count(), 0);
}

#[test]
fn fs_set_conflicting_with_a_folder_or_file_fails_cleanly() {
    let dir = TempDir::new("conflict");
    let store = open_rw(&dir, "store");
    set(&store, "d/x", b"x");
    assert_kind(
        store.set_str("d", b"over a folder"),
        "io",
        "set over a folder",
    );
    set(&store, "f", b"file");
    assert_kind(
        store.set_str("f/x", b"below a file"),
        "io",
        "set below a file",
    );
    assert_eq!(get(&store, "d/x").unwrap(), b"x");
    assert_eq!(get(&store, "f").unwrap(), b"file");
    assert_eq!(
        files_below(&dir.join("store")),
        strings(&["d/x", "f"]),
        "temporary file left behind"
    );
}

#[test]
fn fs_listings_skip_temporary_files() {
    let dir = TempDir::new("tmpfiles");
    let store = open_rw(&dir, "store");
    set(&store, "a/b", b"1");
    fs::write(dir.join("store/.tmp-zarr-999-0"), b"partial").unwrap();
    fs::write(dir.join("store/a/.tmp-zarr-999-1"), b"partial").unwrap();
    assert_eq!(store.list().unwrap(), strings(&["a/b"]));
    assert_eq!(store.list_dir_str("a/").unwrap(), listing(&["a/b"], &[]));
    assert_eq!(store.list_dir_str("").unwrap(), listing(&[], &["a/"]));
    // The names are reserved, so no key can collide with a temporary file.
    assert_kind(
        store.set_str(".tmp-zarr-1", b"x"),
        "invalid_key",
        "set temp name",
    );
    assert_kind(
        store.get_str("a/.tmp-zarr-999-1", ByteRange::All),
        "invalid_key",
        "get temp name",
    );
    // Other dot files are ordinary keys (Zarr v2 metadata).
    set(&store, ".zgroup", b"{}");
    assert_eq!(store.list().unwrap(), strings(&[".zgroup", "a/b"]));
}

#[test]
fn fs_concurrent_sets_of_one_key_leave_a_whole_value_and_no_temp_files() {
    let dir = TempDir::new("concurrent");
    let store = open_rw(&dir, "store");
    let values: Vec<Vec<u8>> = (0..8u8)
        .map(|t| vec![t; 200_000 + 1000 * t as usize])
        .collect();
    std::thread::scope(|s| {
        for value in &values {
            let store = &store;
            s.spawn(move || {
                for _ in 0..20 {
                    store.set_str("c/0/0", value).unwrap();
                }
            });
        }
    });
    let got = get(&store, "c/0/0").unwrap();
    assert!(
        values.contains(&got),
        "the value is not one writer's whole value"
    );
    assert_eq!(files_below(&dir.join("store")), strings(&["c/0/0"]));
}

#[test]
fn fs_keys_cannot_escape_the_root() {
    let dir = TempDir::new("escape");
    fs::write(dir.join("secret"), b"outside").unwrap();
    let store = open_rw(&dir, "store");
    set(&store, "a/b", b"inside");
    let absolute = dir.str("secret");
    for key in [
        "../secret",
        "a/../../secret",
        "a/b/../../../secret",
        absolute.as_str(),
        "..\\secret",
    ] {
        assert_kind(store.get_str(key, ByteRange::All), "invalid_key", key);
        assert_kind(store.get_str(key, ByteRange::Suffix(3)), "invalid_key", key);
        assert_kind(store.exists_str(key), "invalid_key", key);
        assert_kind(store.size_str(key), "invalid_key", key);
        assert_kind(store.set_str(key, b"overwritten"), "invalid_key", key);
        assert_kind(store.erase_str(key), "invalid_key", key);
    }
    for prefix in ["../", "a/../../", "../store/"] {
        assert_kind(store.list_prefix_str(prefix), "invalid_key", prefix);
        assert_kind(store.list_dir_str(prefix), "invalid_key", prefix);
        assert_kind(store.erase_prefix_str(prefix), "invalid_key", prefix);
    }
    assert_eq!(fs::read(dir.join("secret")).unwrap(), b"outside");
    assert_eq!(files_below(dir.path()), strings(&["secret", "store/a/b"]));
}

#[cfg(unix)]
#[test]
fn fs_ranged_get_reads_only_the_range() {
    let dir = TempDir::new("sparse");
    let store = open_rw(&dir, "store");
    // A sparse 4 GiB file: reading it whole would take seconds and gigabytes.
    let len: u64 = 1 << 32;
    let file = fs::File::create(dir.join("store/big")).unwrap();
    if file.set_len(len).is_err() {
        return; // a file system without large files; nothing to show here
    }
    drop(file);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(dir.join("store/big"))
        .unwrap();
    use std::io::{Seek, SeekFrom, Write};
    f.seek(SeekFrom::Start(len - 4)).unwrap();
    f.write_all(b"tail").unwrap();
    drop(f);
    assert_eq!(
        store.get_str("big", ByteRange::Suffix(4)).unwrap().unwrap(),
        b"tail"
    );
    assert_eq!(
        store
            .get_str("big", ByteRange::From(len - 2))
            .unwrap()
            .unwrap(),
        b"il"
    );
    assert_eq!(
        store
            .get_str(
                "big",
                ByteRange::Range {
                    offset: len - 8,
                    length: 5
                }
            )
            .unwrap()
            .unwrap(),
        b"\0\0\0\0t"
    );
    assert_eq!(store.size_str("big").unwrap(), Some(len));
    assert!(store.get_str("big", ByteRange::From(len + 1)).is_err());
}

#[cfg(unix)]
#[test]
fn fs_symlinked_files_are_keys_and_symlinked_folders_are_not_followed() {
    let dir = TempDir::new("links");
    let store = open_rw(&dir, "store");
    fs::create_dir_all(dir.join("outside")).unwrap();
    fs::write(dir.join("outside/file"), b"linked").unwrap();
    std::os::unix::fs::symlink(dir.join("outside/file"), dir.join("store/link")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), dir.join("store/folder")).unwrap();
    assert_eq!(get(&store, "link").unwrap(), b"linked");
    assert_eq!(store.list().unwrap(), strings(&["link"]));
    // Erasing everything unlinks; it does not empty the linked folder.
    store.erase_prefix_str("").unwrap();
    assert_eq!(fs::read(dir.join("outside/file")).unwrap(), b"linked");
    assert_eq!(fs::read_dir(dir.join("store")).unwrap().count(), 0);
}

fn open_with(dir: &TempDir, rel: &str, options: FsWriteOptions) -> FsStore {
    FsStore::open_with(&dir.str(rel), false, true, options).unwrap()
}

#[test]
fn fs_new_and_replaced_values_leave_no_temporary_files_with_every_option() {
    for (fsync, atomic_new) in [(false, true), (true, true), (false, false), (true, false)] {
        let dir = TempDir::new("options");
        let store = open_with(&dir, "store", FsWriteOptions { fsync, atomic_new });
        set(&store, "c/0/0", b"new");
        set(&store, "c/0/0", b"replaced");
        store.set_parts_str("c/1/0", &[b"two ", b"parts"]).unwrap();
        assert_eq!(get(&store, "c/0/0").unwrap(), b"replaced");
        assert_eq!(get(&store, "c/1/0").unwrap(), b"two parts");
        assert_eq!(
            files_below(&dir.join("store")),
            strings(&["c/0/0", "c/1/0"]),
            "fsync {fsync}, atomic_new {atomic_new}"
        );
    }
}

/// The pid of a process that has ended.
#[cfg(unix)]
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[cfg(unix)]
#[test]
fn fs_temporary_files_of_killed_writers_are_removed_by_the_next_write_or_erase() {
    let dir = TempDir::new("stale");
    fs::create_dir_all(dir.join("store/a")).unwrap();
    fs::create_dir_all(dir.join("store/b")).unwrap();
    let dead = format!(".tmp-zarr-{}-0", dead_pid());
    // pid 1 runs as long as the machine does: a live writer's file stays.
    let live = ".tmp-zarr-1-0";
    for folder in ["a", "b"] {
        fs::write(dir.join(&format!("store/{folder}/{dead}")), b"torn").unwrap();
        fs::write(dir.join(&format!("store/{folder}/{live}")), b"busy").unwrap();
    }
    let store = open_rw(&dir, "store");
    assert_eq!(store.list().unwrap(), Vec::<String>::new());
    set(&store, "a/k", b"v");
    store.erase_str("b/k").unwrap();
    assert_eq!(
        files_below(&dir.join("store")),
        strings(&["a/.tmp-zarr-1-0", "a/k", "b/.tmp-zarr-1-0"])
    );
}

#[cfg(unix)]
#[test]
fn fs_a_fifo_or_device_is_an_io_error_and_never_blocks() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("fifo");
    let store = open_rw(&dir, "store");
    let fifo = dir.join("store/c");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let e = assert_kind(store.get_str("c", ByteRange::All), "io", "get of a FIFO");
    assert!(e.message().contains("not a regular file"), "{e}");
    assert_kind(
        store.get_str("c", ByteRange::Suffix(4)),
        "io",
        "ranged get of a FIFO",
    );
    let mut buf = [0u8; 4];
    let mut bufs = [std::io::IoSliceMut::new(&mut buf)];
    assert_kind(
        store.get_direct_str("c", &mut bufs),
        "io",
        "direct get of a FIFO",
    );
    assert_eq!(store.size_str("c").unwrap(), None);
    std::os::unix::fs::symlink("/dev/zero", dir.join("store/zero")).unwrap();
    assert_kind(
        store.get_str("zero", ByteRange::All),
        "io",
        "get of a device",
    );
    // A folder is a prefix, not a key.
    set(&store, "d/x", b"x");
    assert_eq!(store.get_str("d", ByteRange::All).unwrap(), None);
}

#[cfg(unix)]
#[test]
fn fs_writes_never_follow_a_link_out_of_the_root_but_reads_do() {
    let dir = TempDir::new("linkout");
    fs::create_dir_all(dir.join("outside/arr/c")).unwrap();
    fs::write(dir.join("outside/arr/c/0"), b"theirs").unwrap();
    let store = open_rw(&dir, "store");
    std::os::unix::fs::symlink(dir.join("outside/arr"), dir.join("store/arr")).unwrap();
    assert_eq!(get(&store, "arr/c/0").unwrap(), b"theirs");
    for (what, r) in [
        ("set", store.set_str("arr/c/0", b"ours")),
        ("set new", store.set_str("arr/c/1", b"ours")),
        ("set new folder", store.set_str("arr/d/0", b"ours")),
        ("erase", store.erase_str("arr/c/0")),
        ("erase_prefix", store.erase_prefix_str("arr/c/")),
        ("erase_prefix name", store.erase_prefix_str("arr/c/0")),
    ] {
        let e = assert_kind(r, "invalid_key", what);
        assert!(e.message().contains("symbolic link"), "{what}: {e}");
    }
    assert_eq!(
        files_below(&dir.join("outside")),
        strings(&["arr/c/0"]),
        "a write went through the link"
    );
    assert_eq!(fs::read(dir.join("outside/arr/c/0")).unwrap(), b"theirs");
    // A key that is itself a link to a file: writing replaces the link.
    std::os::unix::fs::symlink(dir.join("outside/arr/c/0"), dir.join("store/k")).unwrap();
    set(&store, "k", b"ours");
    assert_eq!(get(&store, "k").unwrap(), b"ours");
    assert_eq!(fs::read(dir.join("outside/arr/c/0")).unwrap(), b"theirs");
    // Links inside the root are fine to write through.
    fs::create_dir_all(dir.join("store/real")).unwrap();
    std::os::unix::fs::symlink(dir.join("store/real"), dir.join("store/alias")).unwrap();
    set(&store, "alias/x", b"inside");
    assert_eq!(fs::read(dir.join("store/real/x")).unwrap(), b"inside");
}

#[test]
fn fs_get_direct_fills_buffers_only_for_a_value_of_their_length() {
    let dir = TempDir::new("direct");
    let store = open_rw(&dir, "store");
    // Two buffers, as the columns of a chunk: 3 + 2 bytes.
    let read = |key: &str| {
        let (mut a, mut b) = ([0u8; 3], [0u8; 2]);
        let got = {
            let mut bufs = [
                std::io::IoSliceMut::new(&mut a),
                std::io::IoSliceMut::new(&mut b),
            ];
            store.get_direct_str(key, &mut bufs).unwrap()
        };
        (got, a, b)
    };
    set(&store, "exact", b"abcde");
    assert_eq!(read("exact"), (Direct::Done, *b"abc", *b"de"));
    set(&store, "short", b"abcd");
    assert_eq!(read("short").0, Direct::NotDone);
    set(&store, "long", b"abcdef");
    assert_eq!(read("long").0, Direct::NotDone);
    set(&store, "empty", b"");
    assert_eq!(read("empty").0, Direct::NotDone);
    assert_eq!(read("none").0, Direct::Missing);
    // A folder is a prefix, not a key; a file where a folder should be
    // leaves nothing below it.
    set(&store, "d/x", b"x");
    assert_eq!(read("d").0, Direct::Missing);
    assert_eq!(read("exact/x").0, Direct::Missing);
    // No buffers at all: only an empty value fits them.
    let mut none: [std::io::IoSliceMut; 0] = [];
    assert_eq!(
        store.get_direct_str("empty", &mut none).unwrap(),
        Direct::Done
    );
    assert_eq!(
        store.get_direct_str("exact", &mut none).unwrap(),
        Direct::NotDone
    );
}
