//! The file system store: stores/filesystem spec, version 1.0
//! (v3-stores-filesystem.rst, filesystem-store-spec.md). A key's "/"
//! segments are path components below the root folder; a value is the
//! content of that file.

use super::*;
use location::{check_segment, check_segments, root_path};
pub(crate) use location::{file_url_parts, local_path, percent_decode};
use read::open_regular;
use std::collections::HashSet;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
pub use write::FsWriteOptions;
use write::*;

mod location;
mod read;
mod write;

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
        check_segments(key)?;
        // Sized once: a chunk read or write builds one of these per chunk.
        let mut path = PathBuf::with_capacity(self.root.as_os_str().len() + key.len() + 1);
        path.push(&self.root);
        if cfg!(unix) {
            // The key's "/" is the separator already.
            path.push(key);
        } else {
            for seg in key.split('/') {
                path.push(seg);
            }
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
        let err = |e| io_error("list", prefix, dir, e);
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

fn io_error(what: &str, key: &str, path: &Path, e: io::Error) -> ZarrError {
    ZarrError::Io(format!("cannot {what} '{key}' ({}): {e}", path.display()))
}

/// The file (or a folder on its path) is not there; a file where a folder
/// should be counts as missing too.
fn is_missing(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

impl Store for FsStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        let path = self.key_path(key)?;
        let Some((file, meta)) = open_regular(key, &path)? else {
            return Ok(None);
        };
        self.read_range(key, &path, file, meta.len(), range)
            .map(Some)
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        let path = self.key_path(key)?;
        match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Ok(None),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(io_error("read", key, &path, e)),
        }
    }

    fn describe(&self) -> String {
        format!("local store at {}", self.root.display())
    }

    fn as_writable(&self) -> Option<&dyn Writes> {
        (!self.read_only).then_some(self as &dyn Writes)
    }

    fn as_listable(&self) -> Option<&dyn Listing> {
        Some(self)
    }

    fn as_direct(&self) -> Option<&dyn DirectReads> {
        Some(self)
    }

    #[cfg(unix)]
    fn as_pinned(&self) -> Option<&dyn PinnedReads> {
        Some(self)
    }
}

impl Writes for FsStore {
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &StoreKey, parts: &[&[u8]]) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "write", key)?;
        let path = self.key_path(key)?;
        self.write_value(key, &path, parts)
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase", key)?;
        let path = self.key_path(key)?;
        self.prepare_dir(key, path.parent().unwrap_or(&self.root))?;
        match fs::remove_file(&path) {
            Ok(()) => {
                self.remove_empty_parents(&path);
                Ok(())
            }
            Err(e) if is_missing(&e) => Ok(()),
            // A folder is not a key, so there is nothing to erase.
            Err(_) if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) => Ok(()),
            Err(e) => Err(io_error("erase", key, &path, e)),
        }
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase prefix", prefix)?;
        let (dir, name) = self.prefix_path(prefix)?;
        let remove = |path: &Path, is_dir: bool| {
            let r = if is_dir {
                fs::remove_dir_all(path)
            } else {
                fs::remove_file(path)
            };
            match r {
                Err(e) if !is_missing(&e) => Err(io_error("erase prefix", prefix, path, e)),
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
            Err(e) => return Err(io_error("erase prefix", prefix, &dir, e)),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(io_error("erase prefix", prefix, &dir, e)),
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
}

impl Listing for FsStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        let (dir, name) = self.prefix_path(prefix)?;
        let mut keys = Vec::new();
        self.walk(&dir, &prefix[..prefix.len() - name.len()], name, &mut keys)?;
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        let prefix = prefix.dir().into_owned();
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
}
