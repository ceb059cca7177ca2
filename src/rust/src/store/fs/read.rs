//! Reading values from files: a value's file is opened without waiting on
//! a FIFO and checked to be a regular file; whole values can be read
//! straight into the caller's buffers, and ranges from one open file.

use super::*;

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

impl FsStore {
    /// Read the bytes of `range` from the file, seeking past the rest so a
    /// shard index or inner chunk costs only its own bytes.
    pub(super) fn read_range(
        &self,
        key: &str,
        path: &Path,
        mut file: File,
        len: u64,
        range: ByteRange,
    ) -> Result<Vec<u8>> {
        let (start, end) = resolve_range(key, len, range)?;
        let err = |e| io_error("read", key, path, e);
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
}

/// Open a value's file for reading, if it is a regular file. A FIFO or a
/// device is an error, never waited on: the open does not block (opening
/// a FIFO would wait for a writer) and the type of what was opened is
/// checked before any read (reading a device may never end). A folder, or
/// no file, is `None`: it is a prefix, not a key.
///
/// No `stat` of the path comes first: a chunk read is then one path walk,
/// not two, which for chunks of a few KiB is a good part of their cost.
pub(super) fn open_regular(key: &str, path: &Path) -> Result<Option<(File, Metadata)>> {
    let file = match open_nonblocking(path) {
        Ok(f) => f,
        Err(e) => return open_failed(key, path, e).map(|()| None),
    };
    let meta = file
        .metadata()
        .map_err(|e| io_error("read", key, path, e))?;
    if !is_regular(key, path, &meta)? {
        return Ok(None);
    }
    // O_NONBLOCK has no effect on reads of a regular file (Linux, macOS),
    // so the flag can stay.
    Ok(Some((file, meta)))
}

/// Open for reading without waiting on a FIFO; O_NOCTTY: a terminal
/// device opened by mistake does not become R's controlling terminal
/// before it is refused.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    opts.open(path)
}

/// An open that failed: Ok when there is no key at `path` (nothing, or a
/// folder), else the error. The path's type says which error it is (a
/// socket cannot be opened at all, and is not a regular file either).
fn open_failed(key: &str, path: &Path, e: io::Error) -> Result<()> {
    if is_missing(&e) {
        return Ok(());
    }
    match fs::metadata(path) {
        Ok(m) if !is_regular(key, path, &m)? => Ok(()),
        Err(m) if is_missing(&m) => Ok(()),
        _ => Err(io_error("read", key, path, e)),
    }
}

/// Whether an opened `path` is a regular file (true) or a folder, which is
/// no key (false); anything else (a FIFO, a device) is an error.
fn is_regular(key: &str, path: &Path, meta: &Metadata) -> Result<bool> {
    if meta.is_dir() {
        return Ok(false);
    }
    if !meta.is_file() {
        return Err(not_regular(key, path));
    }
    Ok(true)
}

/// `get_direct` of an open file: read the value into `bufs` and one byte
/// past them, with no `fstat` first. A chunk of a few KiB is then open,
/// one readv and close, the kernel's floor for a file read; the stat
/// `open_regular` does before reading was a tenth of that again.
///
/// A readv that returns fewer bytes than asked has met the end of a
/// regular file, so a value exactly as long as `bufs` ends the loop after
/// one call. (A FIFO whose writer has put exactly that many bytes in it
/// is read as a value here, where `get` refuses it; nothing else that
/// can be opened gives a short read of that length.) A value of any other
/// length, or a read error, takes the stat after all, to tell what was
/// opened: a folder is no key, a FIFO or
/// a device is the error `open_regular` gives (the read ends, as at most
/// one byte more than the value is asked for and O_NONBLOCK keeps a FIFO
/// from waiting), and a regular file of another length is `NotDone`.
fn read_direct(
    key: &str,
    path: &Path,
    mut file: File,
    bufs: &mut [io::IoSliceMut<'_>],
) -> Result<Direct> {
    let total: usize = bufs.iter().map(|b| b.len()).sum();
    let mut probe = [0u8; 1];
    let mut all: Vec<io::IoSliceMut> = bufs
        .iter_mut()
        .map(|b| io::IoSliceMut::new(&mut b[..]))
        .chain(std::iter::once(io::IoSliceMut::new(&mut probe)))
        .collect();
    let mut rest = &mut all[..];
    let mut got = 0usize;
    let mut failed = None;
    while !rest.is_empty() {
        // readv takes at most IOV_MAX (1024 on Linux) buffers at a time.
        let k = rest.len().min(1024);
        let asked: usize = rest[..k].iter().map(|b| b.len()).sum();
        match file.read_vectored(&mut rest[..k]) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                io::IoSliceMut::advance_slices(&mut rest, n);
                if n < asked && got == total {
                    return Ok(Direct::Done);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if got == total && failed.is_none() {
        return Ok(Direct::Done);
    }
    let meta = file
        .metadata()
        .map_err(|e| io_error("read", key, path, e))?;
    if !is_regular(key, path, &meta)? {
        return Ok(Direct::Missing);
    }
    match failed {
        Some(e) => Err(io_error("read", key, path, e)),
        None => Ok(Direct::NotDone),
    }
}

fn not_regular(key: &str, path: &Path) -> ZarrError {
    ZarrError::Io(format!(
        "cannot read '{key}' ({}): not a regular file (a FIFO, device or socket); only regular files are values",
        path.display()
    ))
}

impl DirectReads for FsStore {
    fn get_direct(&self, key: &StoreKey, bufs: &mut [io::IoSliceMut<'_>]) -> Result<Direct> {
        let path = self.key_path(key)?;
        match open_nonblocking(&path) {
            Ok(file) => read_direct(key, &path, file, bufs),
            Err(e) => open_failed(key, &path, e).map(|()| Direct::Missing),
        }
    }
}

#[cfg(unix)]
impl PinnedReads for FsStore {
    /// Reads of one open file: a value is replaced by renaming a new file
    /// over it, and an open file keeps the old one.
    fn get_pinned<'s>(
        &'s self,
        key: &StoreKey,
        range: ByteRange,
    ) -> Result<Option<PinnedRead<'s>>> {
        let path = self.key_path(key)?;
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(io_error("read", key, &path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| io_error("read", key, &path, e))?;
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
}
