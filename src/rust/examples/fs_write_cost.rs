//! What writing new chunks atomically costs on a file system, against
//! writing them in place: `cargo run --release --no-default-features
//! --example fs_write_cost [folder] [files] [bytes]`. Three ways to create
//! `files` new files of `bytes` bytes each, interleaved over rounds so a
//! busy machine weighs on each alike; the median round is printed.
//!
//! - in place: create the file exclusively and write it (what the file
//!   store did before; a killed writer leaves a short or empty file);
//! - temp + rename: the file store's `set` (write a temporary file, rename);
//! - O_TMPFILE + linkat (Linux): an unnamed file given its name when
//!   complete; nothing is left behind by a killed writer, but linkat cannot
//!   replace an existing file, so overwrites would still need a rename.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use zarr::store::{FsStore, StoreKey, Writes};

/// Writes `files` new files of one value into a folder.
type WriteFiles = fn(&Path, usize, &[u8]);

fn in_place(dir: &Path, files: usize, value: &[u8]) {
    for i in 0..files {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(i.to_string()))
            .unwrap();
        f.write_all(value).unwrap();
    }
}

fn temp_rename(dir: &Path, files: usize, value: &[u8]) {
    let store = FsStore::open(dir.to_str().unwrap(), false, true).unwrap();
    for i in 0..files {
        store
            .set(&StoreKey::new(i.to_string()).unwrap(), value)
            .unwrap();
    }
}

#[cfg(target_os = "linux")]
fn tmpfile_linkat(dir: &Path, files: usize, value: &[u8]) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    for i in 0..files {
        let mut f = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .open(dir)
            .unwrap();
        f.write_all(value).unwrap();
        let from = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
        let to = CString::new(dir.join(i.to_string()).as_os_str().as_bytes()).unwrap();
        // SAFETY: both are NUL-terminated paths that live across the call.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        assert_eq!(r, 0, "linkat: {}", std::io::Error::last_os_error());
    }
}

#[cfg(not(target_os = "linux"))]
fn tmpfile_linkat(dir: &Path, files: usize, value: &[u8]) {
    in_place(dir, files, value)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = args
        .get(1)
        .map(Into::into)
        .unwrap_or_else(std::env::temp_dir);
    let files: usize = args.get(2).map_or(2000, |s| s.parse().unwrap());
    let bytes: usize = args.get(3).map_or(10_000, |s| s.parse().unwrap());
    let value = vec![7u8; bytes];
    let ways: [(&str, WriteFiles); 3] = [
        ("in place", in_place),
        ("temp + rename", temp_rename),
        ("O_TMPFILE + linkat", tmpfile_linkat),
    ];
    let mut times = vec![Vec::new(); ways.len()];
    for round in 0..7 {
        for (w, (_, write)) in ways.iter().enumerate() {
            let dir = base.join(format!("fs-write-cost-{}-{round}-{w}", std::process::id()));
            fs::create_dir_all(&dir).unwrap();
            let t = Instant::now();
            write(&dir, files, &value);
            times[w].push(t.elapsed().as_secs_f64());
            fs::remove_dir_all(&dir).unwrap();
        }
    }
    println!("{files} new files of {bytes} bytes in {}", base.display());
    let base_median = median(&mut times[0].clone());
    for (w, (name, _)) in ways.iter().enumerate() {
        let m = median(&mut times[w]);
        println!(
            "{name:>20}: {:8.2} us per file ({:+.0}% against in place)",
            1e6 * m / files as f64,
            100.0 * (m / base_median - 1.0)
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}
