//! The one error type of the engine. Each variant becomes an R condition of
//! class `zarr_error_<kind>` (see `ZarrError::kind`), so R code can catch a
//! kind of failure without matching on message text.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZarrError {
    /// A key, node or file that does not exist where it must.
    NotFound(String),
    /// A write, erase or create on a store opened read-only.
    ReadOnly(String),
    /// A chunk whose bytes cannot be decoded into the expected shape.
    CorruptChunk(String),
    /// A checksum that does not match the data it guards.
    Checksum(String),
    /// A zarr.json (or v2 metadata) that is malformed or not supported.
    Metadata(String),
    /// A selection outside the array or of the wrong rank.
    Selection(String),
    /// A codec configuration that is invalid, or a codec failure on encode.
    Codec(String),
    /// A store key that is not allowed (escapes the root, has `..`, ...).
    InvalidKey(String),
    /// An operating system error while reading or writing a store.
    Io(String),
    /// A valid Zarr feature this package does not implement (yet).
    Unsupported(String),
    /// Data of the wrong type or length for the array.
    Type(String),
    /// Memory for a chunk, shard or result that could not be had: the
    /// size comes from a file or from metadata, so it is an error and not
    /// an abort of R.
    Memory(String),
    /// The call was stopped by the user (Ctrl-C) or by a time limit.
    Interrupted(String),
    /// A request the store refused for want of rights (HTTP 401/403).
    PermissionDenied(String),
    /// A conditional write that lost to another writer (HTTP 412): the
    /// value changed since it was read, or was created meanwhile.
    Conflict(String),
    /// An argument of a call that the operation cannot take (a shape that
    /// would empty a dimension, a dimension out of range).
    Argument(String),
}

pub type Result<T> = std::result::Result<T, ZarrError>;

impl ZarrError {
    /// The suffix of the R condition class: `zarr_error_<kind>`.
    pub fn kind(&self) -> &'static str {
        match self {
            ZarrError::NotFound(_) => "not_found",
            ZarrError::ReadOnly(_) => "read_only",
            ZarrError::CorruptChunk(_) => "corrupt_chunk",
            ZarrError::Checksum(_) => "checksum",
            ZarrError::Metadata(_) => "metadata",
            ZarrError::Selection(_) => "selection",
            ZarrError::Codec(_) => "codec",
            ZarrError::InvalidKey(_) => "invalid_key",
            ZarrError::Io(_) => "io",
            ZarrError::Unsupported(_) => "unsupported",
            ZarrError::Type(_) => "type",
            ZarrError::Memory(_) => "memory",
            ZarrError::Interrupted(_) => "interrupted",
            ZarrError::PermissionDenied(_) => "permission_denied",
            ZarrError::Conflict(_) => "conflict",
            ZarrError::Argument(_) => "argument",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            ZarrError::NotFound(m)
            | ZarrError::ReadOnly(m)
            | ZarrError::CorruptChunk(m)
            | ZarrError::Checksum(m)
            | ZarrError::Metadata(m)
            | ZarrError::Selection(m)
            | ZarrError::Codec(m)
            | ZarrError::InvalidKey(m)
            | ZarrError::Io(m)
            | ZarrError::Unsupported(m)
            | ZarrError::Type(m)
            | ZarrError::Memory(m)
            | ZarrError::Interrupted(m) => m,
            ZarrError::PermissionDenied(m) | ZarrError::Conflict(m) | ZarrError::Argument(m) => m,
        }
    }

    fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        match self {
            ZarrError::NotFound(m) => ZarrError::NotFound(f(m)),
            ZarrError::ReadOnly(m) => ZarrError::ReadOnly(f(m)),
            ZarrError::CorruptChunk(m) => ZarrError::CorruptChunk(f(m)),
            ZarrError::Checksum(m) => ZarrError::Checksum(f(m)),
            ZarrError::Metadata(m) => ZarrError::Metadata(f(m)),
            ZarrError::Selection(m) => ZarrError::Selection(f(m)),
            ZarrError::Codec(m) => ZarrError::Codec(f(m)),
            ZarrError::InvalidKey(m) => ZarrError::InvalidKey(f(m)),
            ZarrError::Io(m) => ZarrError::Io(f(m)),
            ZarrError::Unsupported(m) => ZarrError::Unsupported(f(m)),
            ZarrError::Type(m) => ZarrError::Type(f(m)),
            ZarrError::Memory(m) => ZarrError::Memory(f(m)),
            ZarrError::Interrupted(m) => ZarrError::Interrupted(f(m)),
            ZarrError::PermissionDenied(m) => ZarrError::PermissionDenied(f(m)),
            ZarrError::Conflict(m) => ZarrError::Conflict(f(m)),
            ZarrError::Argument(m) => ZarrError::Argument(f(m)),
        }
    }

    /// Prefix the message with where it happened, e.g. `chunk 'c/0/1'`.
    pub fn context(self, what: &str) -> Self {
        self.map_message(|m| format!("{what}: {m}"))
    }

    /// A decode failure of a chunk is a corrupt chunk, whatever layer saw it,
    /// except for checksum and unsupported-feature errors which keep their kind.
    pub fn into_corrupt(self) -> Self {
        match self {
            ZarrError::Codec(m) => ZarrError::CorruptChunk(m),
            other => other,
        }
    }
}

/// A buffer of `n` bytes (capacity only) for `what`, or a memory error.
/// Every buffer whose size comes from a store or from metadata is made
/// here: Rust aborts the process when an allocation fails, and the process
/// is R's.
pub fn try_buffer(n: usize, what: &str) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| memory_error(n, what))?;
    Ok(v)
}

/// `try_buffer` filled with `n` copies of `byte`.
pub fn try_filled(n: usize, byte: u8, what: &str) -> Result<Vec<u8>> {
    let mut v = try_buffer(n, what)?;
    v.resize(n, byte);
    Ok(v)
}

/// `pattern` repeated `times` times, in memory that may be refused.
pub fn try_repeat(pattern: &[u8], times: usize, what: &str) -> Result<Vec<u8>> {
    let n = checked_bytes(pattern.len(), times, what)?;
    let mut v = try_buffer(n, what)?;
    for _ in 0..times {
        v.extend_from_slice(pattern);
    }
    Ok(v)
}

/// `n` copies of `value`, in memory that may be refused.
pub fn try_vec<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| memory_error(n.saturating_mul(std::mem::size_of::<T>()), what))?;
    v.resize(n, value);
    Ok(v)
}

/// `count` items of `size` bytes, or a memory error when that overflows.
pub fn checked_bytes(size: usize, count: usize, what: &str) -> Result<usize> {
    size.checked_mul(count)
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            ZarrError::Memory(format!(
                "{what}: {count} items of {size} bytes do not fit in memory"
            ))
        })
}

/// The product of `dims`, or None when it overflows.
pub fn checked_product<I: IntoIterator<Item = usize>>(dims: I) -> Option<usize> {
    dims.into_iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(d))
}

fn memory_error(n: usize, what: &str) -> ZarrError {
    ZarrError::Memory(format!("{what}: cannot allocate {n} bytes"))
}

impl fmt::Display for ZarrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ZarrError {}

impl From<serde_json::Error> for ZarrError {
    fn from(e: serde_json::Error) -> Self {
        ZarrError::Metadata(format!("invalid JSON: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_kind_and_prefixes_the_message() {
        let e = ZarrError::NotFound("no such key".into()).context("array '/a'");
        assert_eq!(e.kind(), "not_found");
        assert_eq!(e.message(), "array '/a': no such key");
    }

    #[test]
    fn impossible_buffers_are_memory_errors_not_aborts() {
        let e = try_buffer(isize::MAX as usize, "chunk 'c/0'").unwrap_err();
        assert_eq!(e.kind(), "memory");
        assert!(e.message().contains("chunk 'c/0'"));
        assert_eq!(
            checked_bytes(8, usize::MAX / 4, "x").unwrap_err().kind(),
            "memory"
        );
        assert_eq!(try_repeat(&[1, 2], 3, "x").unwrap(), vec![1, 2, 1, 2, 1, 2]);
        assert_eq!(try_filled(3, 7, "x").unwrap(), vec![7, 7, 7]);
        assert_eq!(checked_product([1usize << 32, 1 << 32]), None);
        assert_eq!(checked_product([3usize, 4]), Some(12));
    }

    #[test]
    fn codec_errors_become_corrupt_chunks_on_read() {
        assert_eq!(
            ZarrError::Codec("x".into()).into_corrupt().kind(),
            "corrupt_chunk"
        );
        assert_eq!(
            ZarrError::Checksum("x".into()).into_corrupt().kind(),
            "checksum"
        );
    }
}
