//! Store keys and prefixes, checked once where they enter the package (from
//! R, from a chunk key encoding, from a reference set): every `Store`
//! method takes these types, so no store checks a key again and none can
//! be handed a key that escapes its root.

use crate::error::{Result, ZarrError};
use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

/// A checked string read as the string it holds: `as_str`, `Deref` and
/// `AsRef` to `str`, and `Display` as the text itself.
macro_rules! reads_as_str {
    ($t:ident) => {
        impl $t {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Deref for $t {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $t {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// A key no store can be escaped with: relative, '/'-separated segments
/// that are neither empty nor `.`/`..`, no backslash, no NUL.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey(String);

impl StoreKey {
    /// `key` if it is valid, else an `InvalidKey` error naming it.
    pub fn new(key: impl Into<String>) -> Result<StoreKey> {
        let key = key.into();
        validate_key(&key)?;
        Ok(StoreKey(key))
    }

    /// A key built from parts that were checked when they entered: a
    /// normalized node path and a chunk key encoding's output (digits and
    /// its "/" or "." separator), or a document name below such a path.
    pub(crate) fn from_checked(key: String) -> StoreKey {
        debug_assert!(validate_key(&key).is_ok(), "invalid key '{key}'");
        StoreKey(key)
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A prefix of keys: "" (the whole store), or a valid key with or without
/// a trailing "/". `list_prefix` and `erase_prefix` match it as written;
/// `list_dir` lists the folder `dir()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StorePrefix(String);

impl StorePrefix {
    /// `prefix` if it is valid, else an `InvalidKey` error naming it.
    pub fn new(prefix: impl Into<String>) -> Result<StorePrefix> {
        let prefix = prefix.into();
        validate_prefix(&prefix)?;
        Ok(StorePrefix(prefix))
    }

    /// The whole store.
    pub fn root() -> StorePrefix {
        StorePrefix(String::new())
    }

    /// The folder of a key: `key` followed by "/".
    pub fn folder(key: &StoreKey) -> StorePrefix {
        StorePrefix(format!("{key}/"))
    }

    /// The folder `list_dir` lists, ending in "/" unless it is the root:
    /// every store lists "a" as the folder "a", as it does "a/".
    pub fn dir(&self) -> Cow<'_, str> {
        if self.0.is_empty() || self.0.ends_with('/') {
            Cow::Borrowed(&self.0)
        } else {
            Cow::Owned(format!("{}/", self.0))
        }
    }
}

reads_as_str!(StoreKey);
reads_as_str!(StorePrefix);

/// Refuse keys that could escape a store root or are not portable:
/// empty segments, `.`/`..` segments, absolute paths, backslashes and NUL.
pub fn validate_key(key: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid key '{}': {why}",
            key.escape_debug()
        )))
    };
    if key.is_empty() {
        return bad("empty key");
    }
    if key.starts_with('/') {
        return bad("keys are relative, they cannot start with '/'");
    }
    if key.contains('\\') {
        return bad("backslashes are not allowed");
    }
    if key.contains('\0') {
        return bad("NUL characters are not allowed");
    }
    for seg in key.split('/') {
        if seg.is_empty() {
            return bad("empty path segment");
        }
        if seg == "." || seg == ".." {
            return bad("'.' and '..' segments are not allowed");
        }
    }
    Ok(())
}

/// A prefix is "" or a valid key followed by "/".
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() {
        return Ok(());
    }
    match prefix.strip_suffix('/') {
        Some(p) => validate_key(p),
        None => validate_key(prefix),
    }
}

/// The store methods with keys and prefixes as strings, each checked as it
/// comes in, as the R bindings do: tests reach a store the way a caller
/// from outside does, bad keys included.
#[cfg(test)]
pub(crate) trait StrKeys: super::Store {
    fn get_str(&self, key: &str, range: super::ByteRange) -> Result<Option<Vec<u8>>> {
        self.get(&StoreKey::new(key)?, range)
    }
    fn set_str(&self, key: &str, value: &[u8]) -> Result<()> {
        let key = StoreKey::new(key)?;
        super::writable(self, "write", &key)?.set(&key, value)
    }
    fn set_parts_str(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        let key = StoreKey::new(key)?;
        super::writable(self, "write", &key)?.set_parts(&key, parts)
    }
    fn erase_str(&self, key: &str) -> Result<()> {
        let key = StoreKey::new(key)?;
        super::writable(self, "erase", &key)?.erase(&key)
    }
    fn erase_prefix_str(&self, prefix: &str) -> Result<()> {
        let prefix = StorePrefix::new(prefix)?;
        super::writable(self, "erase prefix", &prefix)?.erase_prefix(&prefix)
    }
    fn list_str(&self) -> Result<Vec<String>> {
        super::listable(self, "")?.list()
    }
    fn list_prefix_str(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = StorePrefix::new(prefix)?;
        super::listable(self, &prefix)?.list_prefix(&prefix)
    }
    fn list_dir_str(&self, prefix: &str) -> Result<super::DirListing> {
        let prefix = StorePrefix::new(prefix)?;
        super::listable(self, &prefix)?.list_dir(&prefix)
    }
    fn exists_str(&self, key: &str) -> Result<bool> {
        self.exists(&StoreKey::new(key)?)
    }
    fn size_str(&self, key: &str) -> Result<Option<u64>> {
        self.size(&StoreKey::new(key)?)
    }
    fn set_if_version_str(
        &self,
        key: &str,
        value: &[u8],
        tag: Option<&str>,
    ) -> Result<Option<String>> {
        super::set_if_version(self, &StoreKey::new(key)?, value, tag)
    }
    /// `DirectReads::get_direct`; `NotDone` where the store has none.
    fn get_direct_str(
        &self,
        key: &str,
        bufs: &mut [std::io::IoSliceMut<'_>],
    ) -> Result<super::Direct> {
        let key = StoreKey::new(key)?;
        match self.as_direct() {
            Some(reads) => reads.get_direct(&key, bufs),
            None => Ok(super::Direct::NotDone),
        }
    }
    fn get_pinned_str(
        &self,
        key: &str,
        range: super::ByteRange,
    ) -> Result<Option<super::PinnedRead<'_>>> {
        super::get_pinned(self, &StoreKey::new(key)?, range)
    }
    /// `get_many` of the valid keys in one batch; a bad key's slot holds
    /// its error.
    fn get_many_str(
        &self,
        requests: &[(String, super::ByteRange)],
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let checked: Vec<Result<StoreKey>> = requests
            .iter()
            .map(|(k, _)| StoreKey::new(k.as_str()))
            .collect();
        let valid: Vec<(StoreKey, super::ByteRange)> = checked
            .iter()
            .zip(requests)
            .filter_map(|(k, (_, r))| k.as_ref().ok().map(|k| (k.clone(), *r)))
            .collect();
        let mut got = self.get_many(&valid).into_iter();
        checked
            .into_iter()
            .map(|k| match k {
                Ok(_) => got.next().expect("one result per request"),
                Err(e) => Err(e),
            })
            .collect()
    }
}

#[cfg(test)]
impl<S: super::Store + ?Sized> StrKeys for S {}
