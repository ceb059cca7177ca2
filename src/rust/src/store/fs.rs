//! The file system store: stores/filesystem spec, version 1.0
//! (v3-stores-filesystem.rst, filesystem-store-spec.md). A key's "/"
//! segments are path components below the root folder; a value is the
//! content of that file.

use super::*;
use std::collections::HashSet;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Names of files that `set` writes before renaming them into place. The
/// leading "." keeps them out of the way of tools; listings skip them so a
/// reader never sees a half-written value as a key. It is not a plain "."
/// because Zarr v2 keys (".zarray", ".zattrs") start with one. The name
/// goes on with the writer's pid, so a later writer can tell the leftovers
/// of a killed process from the files of a live one.
const TEMP_PREFIX: &str = ".tmp-zarr-";

/// One version of a file's value: reads by position from one open file.
#[cfg(unix)]
struct PinnedFile {
    file: File,
    len: u64,
    key: String,
}

#[cfg(unix)]
impl Pinned for PinnedFile {
    fn get(&self, range: ByteRange) -> Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let (start, end) = resolve_range(&self.key, self.len, range)?;
        let n = usize::try_from(end - start).unwrap_or(usize::MAX);
        let mut buf = crate::error::try_filled(n, 0, &format!("'{}'", self.key))?;
        self.file
            .read_exact_at(&mut buf, start)
            .map_err(|e| ZarrError::Io(format!("cannot read '{}': {e}", self.key)))?;
        Ok(buf)
    }
}

/// Process-wide, so pid + counter names a temporary file uniquely on the
/// machine whichever thread writes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

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

#[derive(Debug)]
pub struct FsStore {
    root: PathBuf,
    /// The root with every link resolved: a folder written to must lie
    /// below it.
    real_root: PathBuf,
    read_only: bool,
    options: FsWriteOptions,
    /// Folders this store has written to: each is checked once to lie
    /// inside the root and cleared of the temporary files of dead writers.
    prepared: Mutex<HashSet<PathBuf>>,
}

impl FsStore {
    /// Open a store rooted at `root` (a path or a `file://` URI); `create`
    /// makes the folder if missing, otherwise a missing folder is a NotFound
    /// error.
    pub fn open(root: &str, read_only: bool, create: bool) -> Result<FsStore> {
        Self::open_with(root, read_only, create, FsWriteOptions::default())
    }

    /// `open` with write options.
    pub fn open_with(
        root: &str,
        read_only: bool,
        create: bool,
        options: FsWriteOptions,
    ) -> Result<FsStore> {
        let given = root_path(root)?;
        // Absolute, so a later change of R's working directory (setwd) does
        // not move the store.
        let root = std::path::absolute(&given).map_err(|e| {
            ZarrError::Io(format!(
                "cannot resolve store root '{}': {e}",
                given.display()
            ))
        })?;
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(ZarrError::Io(format!(
                    "store root '{}' is a file, not a folder",
                    root.display()
                )))
            }
            Err(e) if is_missing(&e) && create && !read_only => {
                fs::create_dir_all(&root).map_err(|e| {
                    ZarrError::Io(format!(
                        "cannot create store root '{}': {e}",
                        root.display()
                    ))
                })?;
            }
            Err(e) if is_missing(&e) && create => {
                return Err(ZarrError::ReadOnly(format!(
                    "cannot create store root '{}': the store is opened read-only",
                    root.display()
                )))
            }
            Err(e) if is_missing(&e) => {
                return Err(ZarrError::NotFound(format!(
                    "store root '{}' does not exist",
                    root.display()
                )))
            }
            Err(e) => {
                return Err(ZarrError::Io(format!(
                    "cannot open store root '{}': {e}",
                    root.display()
                )))
            }
        }
        let real_root = fs::canonicalize(&root).map_err(|e| {
            ZarrError::Io(format!(
                "cannot resolve store root '{}': {e}",
                root.display()
            ))
        })?;
        Ok(FsStore {
            root,
            real_root,
            read_only,
            options,
            prepared: Mutex::new(HashSet::new()),
        })
    }

    /// The absolute root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `key`; the key must already be valid.
    fn key_path(&self, key: &str) -> Result<PathBuf> {
        let mut path = self.root.clone();
        for seg in key.split('/') {
            check_segment(key, seg)?;
            path.push(seg);
        }
        Ok(path)
    }

    /// The folder of a prefix ("" or ending in "/") and the start of the
    /// names in it that match (empty when the prefix ends in "/").
    fn prefix_path<'a>(&self, prefix: &'a str) -> Result<(PathBuf, &'a str)> {
        let (dir, name) = match prefix.rfind('/') {
            Some(i) => (&prefix[..i], &prefix[i + 1..]),
            None => ("", prefix),
        };
        let path = if dir.is_empty() {
            self.root.clone()
        } else {
            self.key_path(dir)?
        };
        if !name.is_empty() {
            check_segment(prefix, name)?;
        }
        Ok((path, name))
    }

    fn io_error(&self, what: &str, key: &str, path: &Path, e: io::Error) -> ZarrError {
        ZarrError::Io(format!("cannot {what} '{key}' ({}): {e}", path.display()))
    }

    fn check_writable(&self, what: &str, key: &str) -> Result<()> {
        if self.read_only {
            return Err(read_only_error(self, what, key));
        }
        Ok(())
    }

    /// Read the bytes of `range` from the file, seeking past the rest so a
    /// shard index or inner chunk costs only its own bytes.
    fn read_range(
        &self,
        key: &str,
        path: &Path,
        mut file: File,
        len: u64,
        range: ByteRange,
    ) -> Result<Vec<u8>> {
        let (start, end) = resolve_range(key, len, range)?;
        let err = |e| self.io_error("read", key, path, e);
        let n = usize::try_from(end - start).map_err(|_| {
            ZarrError::Io(format!(
                "cannot read '{key}': {} bytes do not fit in memory",
                end - start
            ))
        })?;
        if range == ByteRange::All {
            // read_to_end rather than read_exact: the length is only a hint.
            let mut buf = crate::error::try_buffer(n, &format!("'{key}'"))?;
            file.read_to_end(&mut buf).map_err(err)?;
            return Ok(buf);
        }
        let mut buf = crate::error::try_filled(n, 0, &format!("'{key}'"))?;
        if n > 0 {
            file.seek(SeekFrom::Start(start)).map_err(err)?;
            file.read_exact(&mut buf).map_err(err)?;
        }
        Ok(buf)
    }

    /// Write a value: to a temporary file beside `path`, then renamed over
    /// it, for new keys as for existing ones. Readers and other writers see
    /// the old value or the new one, and a process killed mid-write leaves
    /// at most a temporary file, never a short or empty value.
    fn write_value(&self, key: &str, path: &Path, parts: &[&[u8]]) -> Result<()> {
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
                        .map_err(|e| self.io_error("create the folder of", key, dir, e))?;
                }
                Err(e) => return Err(self.io_error("write", key, path, e)),
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
            return Err(self.io_error("write", key, path, e));
        }
        Ok(())
    }

    /// Before the first write into `dir`: refuse a folder that a symbolic
    /// link leads out of the root (a write there would change files of
    /// another store or anything else the user can write), and remove the
    /// temporary files that killed writers left there.
    fn prepare_dir(&self, key: &str, dir: &Path) -> Result<()> {
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
    fn check_inside_root(&self, key: &str, dir: &Path) -> Result<()> {
        let mut existing = dir;
        let real = loop {
            match fs::canonicalize(existing) {
                Ok(real) => break real,
                Err(e) if is_missing(&e) && existing != self.root => match existing.parent() {
                    Some(parent) => existing = parent,
                    None => return Ok(()),
                },
                Err(e) => return Err(self.io_error("write", key, existing, e)),
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
    fn write_atomic(&self, key: &str, path: &Path, parts: &[&[u8]]) -> Result<()> {
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
                        .map_err(|e| self.io_error("create the folder of", key, dir, e))?;
                }
                Err(e) => return Err(self.io_error("write", key, &tmp, e)),
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
            return Err(self.io_error("write", key, path, e));
        }
        if self.options.fsync {
            sync_dir(dir).map_err(|e| self.io_error("flush the folder of", key, dir, e))?;
        }
        Ok(())
    }

    /// Remove the folders above `path` that are now empty, up to the root,
    /// so listings do not show prefixes without keys. A concurrent set
    /// that loses its folder this way makes it again (see write_atomic).
    fn remove_empty_parents(&self, path: &Path) {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == self.root || !d.starts_with(&self.root) || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }

    /// Append the keys of every file below `dir` (whose key prefix is
    /// `prefix`) to `out`.
    fn walk(&self, dir: &Path, prefix: &str, only: &str, out: &mut Vec<String>) -> Result<()> {
        for (name, kind) in self.read_dir(dir, prefix)? {
            if !name.starts_with(only) {
                continue;
            }
            match kind {
                Kind::File => out.push(format!("{prefix}{name}")),
                Kind::Dir => self.walk(&dir.join(&name), &format!("{prefix}{name}/"), "", out)?,
            }
        }
        Ok(())
    }

    /// The entries of `dir` that can be keys or prefixes; a missing folder
    /// has none.
    fn read_dir(&self, dir: &Path, prefix: &str) -> Result<Vec<(String, Kind)>> {
        let err = |e| self.io_error("list", prefix, dir, e);
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if is_missing(&e) => return Ok(Vec::new()),
            Err(e) => return Err(err(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                // Removed by someone else while we list.
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(err(e)),
            };
            // A name that is not UTF-8 or not a valid key segment cannot be
            // asked for by key, so it is not part of the store.
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if validate_key(&name).is_err() || check_segment(&name, &name).is_err() {
                continue;
            }
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(err(e)),
            };
            let kind = if file_type.is_file() {
                Kind::File
            } else if file_type.is_dir() {
                Kind::Dir
            } else if file_type.is_symlink() {
                // A link to a file is a key (get follows it); links to
                // folders are not followed, as they could form a cycle.
                match fs::metadata(entry.path()) {
                    Ok(m) if m.is_file() => Kind::File,
                    _ => continue,
                }
            } else {
                continue;
            };
            out.push((name, kind));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// Turn the `root` argument into a path: `file://` URIs (RFC 8089, the
/// canonical URI of this store) are percent-decoded, anything else is a path.
fn root_path(root: &str) -> Result<PathBuf> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid store root '{}': {why}",
            root.escape_debug()
        )))
    };
    if root.is_empty() {
        return bad("empty path");
    }
    if root.contains('\0') {
        return bad("NUL characters are not allowed");
    }
    let path = match file_url_parts(root) {
        None => return Ok(PathBuf::from(root)),
        Some(Ok(path)) => path,
        Some(Err(host)) => {
            return Err(ZarrError::Unsupported(format!(
                "file URI '{root}' names the remote host '{host}'; only local files are supported"
            )))
        }
    };
    if !path.starts_with('/') {
        return bad("a file URI needs an absolute path");
    }
    let decoded = match percent_decode(path) {
        Some(d) => d,
        None => return bad("malformed percent-encoding or not UTF-8"),
    };
    if decoded.contains('\0') {
        return bad("NUL characters are not allowed");
    }
    Ok(local_path(decoded))
}

/// The still percent-encoded path of a `file:` URL (RFC 8089), with or
/// without an authority; None when `s` is not a file URL, Err(host) when
/// it names a host other than this one.
pub(crate) fn file_url_parts(s: &str) -> Option<std::result::Result<&str, &str>> {
    let rest = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("file:"))
        .map(|_| &s[5..])?;
    let Some(authority_path) = rest.strip_prefix("//") else {
        return Some(Ok(rest));
    };
    let (host, path) = match authority_path.find('/') {
        Some(i) => authority_path.split_at(i),
        None => (authority_path, ""),
    };
    if host.is_empty() || host.eq_ignore_ascii_case("localhost") {
        Some(Ok(path))
    } else {
        Some(Err(host))
    }
}

/// The local path of a decoded file URL path.
pub(crate) fn local_path(decoded: String) -> PathBuf {
    // "file:///C:/data" is the drive path "C:/data" on Windows.
    #[cfg(windows)]
    {
        let b = decoded.as_bytes();
        if b.len() >= 3 && b[1].is_ascii_alphabetic() && b[2] == b':' {
            return PathBuf::from(&decoded[1..]);
        }
    }
    PathBuf::from(decoded)
}

/// Decode %XX escapes; None for a malformed escape or a result that is
/// not UTF-8. (Also used for the file URLs of reference sets.)
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            // from_str_radix alone would take a sign: "%+1".
            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// validate_key already refuses "..", "/" and "\\"; this also refuses what
/// the platform would read as more than one plain name (a drive "C:" or an
/// alternate data stream on Windows), and the names of temporary files.
fn check_segment(key: &str, seg: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid key '{}': {why}",
            key.escape_debug()
        )))
    };
    if seg.starts_with(TEMP_PREFIX) {
        return bad(&format!(
            "names starting with '{TEMP_PREFIX}' are reserved for temporary files"
        ));
    }
    if cfg!(windows) && seg.contains(':') {
        return bad("':' is not allowed in a file name");
    }
    let mut parts = Path::new(seg).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(c)), None) if c == seg => Ok(()),
        _ => bad("not a plain file name"),
    }
}

/// The file (or a folder on its path) is not there; a file where a folder
/// should be counts as missing too.
/// Write `parts` one after another with as few system calls as the
/// kernel allows (writev takes up to 1024 buffers): a chunk written
/// straight from R memory is one part per column.
fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
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
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, _: &Path) -> bool {
    true
}

/// Remove the temporary files in `dir` whose writer is gone: a process
/// killed between creating one and renaming it. Files of live processes
/// (this one included) are theirs to rename.
fn remove_stale_temp_files(dir: &Path) {
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
fn process_alive(pid: u32) -> bool {
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
fn process_alive(_: u32) -> bool {
    true
}

/// Flush a folder's entries (a rename into it) to the disk.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows has no handle on a folder to flush; the rename is journaled.
#[cfg(not(unix))]
fn sync_dir(_: &Path) -> io::Result<()> {
    Ok(())
}

/// Open a value's file for reading, if it is a regular file. A FIFO or a
/// device is an error, never opened by a blocking call (opening a FIFO
/// waits for a writer; reading a device may never end): its type is
/// checked before opening, and the open does not block in case the file
/// was swapped for one meanwhile. A folder, or no file, is `None`: it is a
/// prefix, not a key.
fn open_regular(key: &str, path: &Path) -> Result<Option<(File, Metadata)>> {
    let io_err =
        |e: io::Error| ZarrError::Io(format!("cannot read '{key}' ({}): {e}", path.display()));
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => return Ok(None),
        Ok(m) if !m.is_file() => return Err(not_regular(key, path)),
        Ok(_) => {}
        Err(e) if is_missing(&e) => return Ok(None),
        Err(e) => return Err(io_err(e)),
    }
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if is_missing(&e) => return Ok(None),
        // Windows cannot open a folder as a file.
        Err(_) if path.is_dir() => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        return Ok(None);
    }
    if !meta.is_file() {
        return Err(not_regular(key, path));
    }
    // O_NONBLOCK has no effect on reads of a regular file (Linux, macOS),
    // so the flag can stay.
    Ok(Some((file, meta)))
}

fn not_regular(key: &str, path: &Path) -> ZarrError {
    ZarrError::Io(format!(
        "cannot read '{key}' ({}): not a regular file (a FIFO, device or socket); only regular files are values",
        path.display()
    ))
}

fn is_missing(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

#[cfg(not(windows))]
fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Windows refuses a rename over a file another thread is renaming or
/// holds open without delete sharing, for a moment; retry briefly.
#[cfg(windows)]
fn rename_replacing(from: &Path, to: &Path) -> io::Result<()> {
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

impl Store for FsStore {
    fn get(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        let Some((file, meta)) = open_regular(key, &path)? else {
            return Ok(None);
        };
        self.read_range(key, &path, file, meta.len(), range)
            .map(Some)
    }

    /// Reads of one open file: a value is replaced by renaming a new file
    /// over it, and an open file keeps the old one.
    #[cfg(unix)]
    fn get_pinned<'s>(&'s self, key: &str, range: ByteRange) -> Result<Option<PinnedRead<'s>>> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(self.io_error("read", key, &path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| self.io_error("read", key, &path, e))?;
        if !meta.is_file() {
            return Ok(None);
        }
        let pinned = PinnedFile {
            file,
            len: meta.len(),
            key: key.to_string(),
        };
        let first = pinned.get(range)?;
        Ok(Some((first, Box::new(pinned))))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn reads_direct(&self) -> bool {
        true
    }

    fn get_direct(&self, key: &str, bufs: &mut [io::IoSliceMut<'_>]) -> Result<Direct> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        let Some((mut file, meta)) = open_regular(key, &path)? else {
            return Ok(Direct::Missing);
        };
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if meta.len() != total as u64 {
            return Ok(Direct::NotDone);
        }
        let mut rest = bufs;
        while !rest.is_empty() {
            // readv takes at most IOV_MAX (1024 on Linux) buffers at a time.
            let k = rest.len().min(1024);
            match file.read_vectored(&mut rest[..k]) {
                // Shorter than its length a moment ago: changed meanwhile.
                Ok(0) => return Ok(Direct::NotDone),
                Ok(n) => io::IoSliceMut::advance_slices(&mut rest, n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error("read", key, &path, e)),
            }
        }
        Ok(Direct::Done)
    }

    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        self.check_writable("write", key)?;
        self.write_value(key, &path, parts)
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        self.check_writable("erase", key)?;
        self.prepare_dir(key, path.parent().unwrap_or(&self.root))?;
        match fs::remove_file(&path) {
            Ok(()) => {
                self.remove_empty_parents(&path);
                Ok(())
            }
            Err(e) if is_missing(&e) => Ok(()),
            // A folder is not a key, so there is nothing to erase.
            Err(_) if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) => Ok(()),
            Err(e) => Err(self.io_error("erase", key, &path, e)),
        }
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        let (dir, name) = self.prefix_path(prefix)?;
        self.check_writable("erase prefix", prefix)?;
        let remove = |path: &Path, is_dir: bool| {
            let r = if is_dir {
                fs::remove_dir_all(path)
            } else {
                fs::remove_file(path)
            };
            match r {
                Err(e) if !is_missing(&e) => Err(self.io_error("erase prefix", prefix, path, e)),
                _ => Ok(()),
            }
        };
        // Not through a link out of the root: that would erase another
        // store's files.
        let folder = if name.is_empty() && dir != self.root {
            dir.parent().unwrap_or(&self.root)
        } else {
            dir.as_path()
        };
        self.check_inside_root(prefix, folder)?;
        if name.is_empty() && dir != self.root {
            // "a/b/": the whole folder goes (a file "a/b" is not below it).
            return match fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => remove(&dir, true),
                _ => Ok(()),
            };
        }
        // "" (everything inside, not the root itself) or "a/b" (every entry
        // of "a" whose name starts with "b").
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(self.io_error("erase prefix", prefix, &dir, e)),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(self.io_error("erase prefix", prefix, &dir, e)),
            };
            let entry_name = entry.file_name();
            if !entry_name.to_str().is_some_and(|n| n.starts_with(name)) {
                continue;
            }
            // file_type does not follow links, so a link to a folder
            // outside the store is unlinked, not emptied.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            remove(&entry.path(), is_dir)?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix("")
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        let (dir, name) = self.prefix_path(prefix)?;
        let mut keys = Vec::new();
        self.walk(&dir, &prefix[..prefix.len() - name.len()], name, &mut keys)?;
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = dir_prefix(prefix)?;
        let (dir, _) = self.prefix_path(&prefix)?;
        let mut listing = DirListing::default();
        for (name, kind) in self.read_dir(&dir, &prefix)? {
            match kind {
                Kind::File => listing.keys.push(format!("{prefix}{name}")),
                Kind::Dir => listing.prefixes.push(format!("{prefix}{name}/")),
            }
        }
        listing.keys.sort_unstable();
        listing.prefixes.sort_unstable();
        Ok(listing)
    }

    fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let path = self.key_path(key)?;
        match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Ok(None),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(self.io_error("read", key, &path, e)),
        }
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn describe(&self) -> String {
        format!("local store at {}", self.root.display())
    }
}
