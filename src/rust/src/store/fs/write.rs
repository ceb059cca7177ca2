//! Writing values of the file store: each through a temporary file
//! renamed over the old value (new values too, unless asked otherwise),
//! only into folders that lie inside the root, and the clean-up of the
//! temporary files that killed writers leave.

use super::*;

/// Names of files that `set` writes before renaming them into place. The
/// leading "." keeps them out of the way of tools; listings skip them so a
/// reader never sees a half-written value as a key. It is not a plain "."
/// because Zarr v2 keys (".zarray", ".zattrs") start with one. The name
/// goes on with the writer's pid, so a later writer can tell the leftovers
/// of a killed process from the files of a live one.
pub(super) const TEMP_PREFIX: &str = ".tmp-zarr-";

/// Process-wide, so pid + counter names a temporary file uniquely on the
/// machine whichever thread writes.
pub(super) static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How the file store writes values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsWriteOptions {
    /// Flush each value (and the rename in its folder) to the disk before
    /// `set` returns: a power loss then keeps it. Off by default, as in
    /// zarr-python: it costs a disk flush per chunk, and the rename alone
    /// already keeps a killed process from leaving a torn value.
    pub fsync: bool,
    /// Write new values through a temporary file and a rename, as existing
    /// ones always are. Turned off, a new value is written in place (its
    /// file created exclusively): faster for many small chunks on a fast
    /// file system, but a writer killed mid-write leaves a short or empty
    /// chunk that fails every read until it is written again.
    pub atomic_new: bool,
}

impl Default for FsWriteOptions {
    fn default() -> Self {
        FsWriteOptions {
            fsync: false,
            atomic_new: true,
        }
    }
}

impl FsStore {
    /// Write a value: to a temporary file beside `path`, then renamed over
    /// it, for new keys as for existing ones. Readers and other writers see
    /// the old value or the new one, and a process killed mid-write leaves
    /// at most a temporary file, never a short or empty value.
    pub(super) fn write_value(&self, key: &str, path: &Path, parts: &[&[u8]]) -> Result<()> {
        let dir = path.parent().unwrap_or(&self.root);
        self.prepare_dir(key, dir)?;
        if self.options.atomic_new {
            return self.write_atomic(key, path, parts);
        }
        let mut attempts = 0;
        let mut file = loop {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(f) => break f,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    return self.write_atomic(key, path, parts)
                }
                Err(e) if is_missing(&e) && attempts < 3 => {
                    attempts += 1;
                    fs::create_dir_all(dir)
                        .map_err(|e| io_error("create the folder of", key, dir, e))?;
                }
                Err(e) => return Err(io_error("write", key, path, e)),
            }
        };
        let mut written = write_parts(&mut file, parts);
        if self.options.fsync {
            written = written.and_then(|_| file.sync_all());
        }
        if let Err(e) = written {
            // Only our own file: a concurrent writer may have renamed a
            // whole value over it meanwhile.
            let ours = same_file(&file, path);
            // Closed before the removal, which Windows needs.
            drop(file);
            if ours {
                let _ = fs::remove_file(path);
            }
            return Err(io_error("write", key, path, e));
        }
        Ok(())
    }

    /// Before the first write into `dir`: refuse a folder that a symbolic
    /// link leads out of the root (a write there would change files of
    /// another store or anything else the user can write), and remove the
    /// temporary files that killed writers left there.
    pub(super) fn prepare_dir(&self, key: &str, dir: &Path) -> Result<()> {
        let mut prepared = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        if prepared.contains(dir) {
            return Ok(());
        }
        self.check_inside_root(key, dir)?;
        remove_stale_temp_files(dir);
        prepared.insert(dir.to_path_buf());
        Ok(())
    }

    /// The nearest existing folder at or above `dir` must resolve to a
    /// folder below the root; the folders still to create will be below it.
    pub(super) fn check_inside_root(&self, key: &str, dir: &Path) -> Result<()> {
        let mut existing = dir;
        let real = loop {
            match fs::canonicalize(existing) {
                Ok(real) => break real,
                Err(e) if is_missing(&e) && existing != self.root => match existing.parent() {
                    Some(parent) => existing = parent,
                    None => return Ok(()),
                },
                Err(e) => return Err(io_error("write", key, existing, e)),
            }
        };
        if real.starts_with(&self.real_root) {
            return Ok(());
        }
        Err(ZarrError::InvalidKey(format!(
            "cannot write '{key}': '{}' is a symbolic link that leads out of the store root '{}' (to '{}'); writes never follow links out of the store",
            existing.display(),
            self.root.display(),
            real.display()
        )))
    }

    /// Write `value` to a temporary file beside `path`, then rename it over
    /// `path`, so readers (and other writers) see the old or the new value,
    /// never a partial one.
    pub(super) fn write_atomic(&self, key: &str, path: &Path, parts: &[&[u8]]) -> Result<()> {
        let dir = path.parent().unwrap_or(&self.root);
        let mut attempts = 0;
        let (tmp, mut file) = loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!("{TEMP_PREFIX}{}-{n}", std::process::id()));
            // create_new: a stale file of a dead process with the same pid
            // must not be shared, so try the next name.
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                // A concurrent erase removed the (then empty) folder: make it again.
                Err(e) if is_missing(&e) && attempts < 3 => {
                    attempts += 1;
                    fs::create_dir_all(dir)
                        .map_err(|e| io_error("create the folder of", key, dir, e))?;
                }
                Err(e) => return Err(io_error("write", key, &tmp, e)),
            }
        };
        let mut written = write_parts(&mut file, parts);
        if self.options.fsync {
            written = written.and_then(|_| file.sync_all());
        }
        // Closed before the rename or removal, which Windows needs.
        drop(file);
        let written = written.and_then(|_| rename_replacing(&tmp, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_error("write", key, path, e));
        }
        if self.options.fsync {
            sync_dir(dir).map_err(|e| io_error("flush the folder of", key, dir, e))?;
        }
        Ok(())
    }

    /// Remove the folders above `path` that are now empty, up to the root,
    /// so listings do not show prefixes without keys. A concurrent set
    /// that loses its folder this way makes it again (see write_atomic).
    pub(super) fn remove_empty_parents(&self, path: &Path) {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == self.root || !d.starts_with(&self.root) || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

/// Write `parts` one after another with as few system calls as the
/// kernel allows (writev takes up to 1024 buffers): a chunk written
/// straight from R memory is one part per column.
pub(super) fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| io::IoSlice::new(p))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        let k = rest.len().min(1024);
        match file.write_vectored(&rest[..k]) {
            Ok(0) => return Err(io::Error::from(ErrorKind::WriteZero)),
            Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether `path` still names the file open as `file`.
#[cfg(unix)]
pub(super) fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
pub(super) fn same_file(_: &File, _: &Path) -> bool {
    true
}

/// Remove the temporary files in `dir` whose writer is gone: a process
/// killed between creating one and renaming it. Files of live processes
/// (this one included) are theirs to rename.
pub(super) fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process `pid` runs on this machine (signal 0 only checks).
#[cfg(unix)]
pub(super) fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only reports whether
    // the process exists (EPERM: it exists but belongs to another user).
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Without a cheap check, every other writer counts as alive: its files
/// are left alone.
#[cfg(not(unix))]
pub(super) fn process_alive(_: u32) -> bool {
    true
}

/// Flush a folder's entries (a rename into it) to the disk.
#[cfg(unix)]
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows has no handle on a folder to flush; the rename is journaled.
#[cfg(not(unix))]
pub(super) fn sync_dir(_: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(not(windows))]
pub(super) fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Windows refuses a rename over a file another thread is renaming or
/// holds open without delete sharing, for a moment; retry briefly.
#[cfg(windows)]
pub(super) fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    let mut attempt = 0;
    loop {
        match fs::rename(from, to) {
            Err(e) if e.kind() == ErrorKind::PermissionDenied && attempt < 20 && !to.is_dir() => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(5 * attempt));
            }
            other => return other,
        }
    }
}
