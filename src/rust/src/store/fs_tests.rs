//! File store tests against a hostile or crashing world: atomic new
//! values, writers killed mid-write, FIFOs and links.

use super::fs::FsWriteOptions;
use super::tests::{assert_kind, files_below, get, open_rw, set, strings, TempDir};
use super::*;
use std::fs;

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
        store.set_parts("c/1/0", &[b"two ", b"parts"]).unwrap();
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
    store.erase("b/k").unwrap();
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
    let e = assert_kind(store.get("c", ByteRange::All), "io", "get of a FIFO");
    assert!(e.message().contains("not a regular file"), "{e}");
    assert_kind(
        store.get("c", ByteRange::Suffix(4)),
        "io",
        "ranged get of a FIFO",
    );
    let mut buf = [0u8; 4];
    let mut bufs = [std::io::IoSliceMut::new(&mut buf)];
    assert_kind(
        store.get_direct("c", &mut bufs),
        "io",
        "direct get of a FIFO",
    );
    assert_eq!(store.size("c").unwrap(), None);
    std::os::unix::fs::symlink("/dev/zero", dir.join("store/zero")).unwrap();
    assert_kind(store.get("zero", ByteRange::All), "io", "get of a device");
    // A folder is a prefix, not a key.
    set(&store, "d/x", b"x");
    assert_eq!(store.get("d", ByteRange::All).unwrap(), None);
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
        ("set", store.set("arr/c/0", b"ours")),
        ("set new", store.set("arr/c/1", b"ours")),
        ("set new folder", store.set("arr/d/0", b"ours")),
        ("erase", store.erase("arr/c/0")),
        ("erase_prefix", store.erase_prefix("arr/c/")),
        ("erase_prefix name", store.erase_prefix("arr/c/0")),
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
