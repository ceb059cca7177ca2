//! The store abstraction (v3-core.rst "Storage"): a key/value map of byte
//! strings. Every store is `Send + Sync` so the engine can fetch and write
//! chunks from its thread pool.

use crate::error::{Result, ZarrError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub mod capability;
pub(crate) mod escape;
pub mod fs;
pub mod growing;
pub mod http;
#[cfg(feature = "icechunk")]
pub mod icechunk;
pub mod key;
pub mod memory;
pub mod object;
pub mod reference;
pub mod retry;
pub mod wait;

pub(crate) use capability::refuse_if_read_only;
pub use capability::{
    get_each_growing, get_pinned, get_versioned, listable, set_if_version, writable, BatchedReads,
    Direct, DirectReads, Listing, Pinned, PinnedRead, PinnedReads, StreamedReads, VersionedWrites,
    Writes,
};
pub use fs::FsStore;
pub use growing::Growing;
pub use http::HttpStore;
#[cfg(test)]
pub(crate) use key::StrKeys;
pub use key::{validate_key, validate_prefix, StoreKey, StorePrefix};
pub use memory::MemoryStore;
pub use object::ObjectStore;
pub use reference::RefStore;

/// What `StreamedReads::get_each_growing` calls as a value's bytes come in.
pub type GrewFn = Arc<dyn Fn(usize, &Arc<Growing>) + Send + Sync>;

/// Which bytes of a value to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteRange {
    /// The whole value.
    All,
    /// `length` bytes starting at `offset`.
    Range { offset: u64, length: u64 },
    /// Everything from `offset` to the end.
    From(u64),
    /// The last `n` bytes.
    Suffix(u64),
}

/// The result of `list_dir`: keys directly below a prefix, and the
/// sub-prefixes (each ending in "/") one level down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirListing {
    pub keys: Vec<String>,
    pub prefixes: Vec<String>,
}

/// The core of every store: reading values by key. Ranged reads are core
/// too: every store reads only the bytes of a range (a memory store
/// slices). Writing, listing and what only some stores can do are
/// capability traits (capability.rs) that `as_*()` offers.
pub trait Store: Send + Sync {
    /// The value at `key` (`range` of it), or `None` if there is none.
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>>;
    /// Fetch several values at once. Stores that can fetch them
    /// concurrently override this; the default fetches one after another.
    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        requests.iter().map(|(k, r)| self.get(k, *r)).collect()
    }
    fn exists(&self, key: &StoreKey) -> Result<bool>;
    /// Size in bytes of the value at `key`, `None` if absent.
    fn size(&self, key: &StoreKey) -> Result<Option<u64>>;
    /// A short description for printing: "local store at <root>", "memory store".
    fn describe(&self) -> String;

    /// Writes: None for a read-only store.
    fn as_writable(&self) -> Option<&dyn Writes> {
        None
    }
    /// Listings: None for a store that cannot enumerate its keys.
    fn as_listable(&self) -> Option<&dyn Listing> {
        None
    }
    /// Batched reads, for a store whose requests wait on a network.
    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        None
    }
    /// Values handed over while their bytes arrive.
    fn as_streamed(&self) -> Option<&dyn StreamedReads> {
        None
    }
    /// Values read straight into the caller's buffers.
    fn as_direct(&self) -> Option<&dyn DirectReads> {
        None
    }
    /// Ranges read from one version of a value.
    fn as_pinned(&self) -> Option<&dyn PinnedReads> {
        None
    }
    /// Compare-and-swap writes by version tag.
    fn as_versioned(&self) -> Option<&dyn VersionedWrites> {
        None
    }
}

/// Cut `data` to `range`; out-of-bounds ranges are an error naming `key`.
pub fn slice_range(key: &str, data: Vec<u8>, range: ByteRange) -> Result<Vec<u8>> {
    let len = data.len() as u64;
    let (start, end) = resolve_range(key, len, range)?;
    if start == 0 && end == len {
        return Ok(data);
    }
    Ok(data[start as usize..end as usize].to_vec())
}

/// The `[start, end)` byte interval of `range` in a value of `len` bytes.
pub fn resolve_range(key: &str, len: u64, range: ByteRange) -> Result<(u64, u64)> {
    let out_of_bounds = |what: String| {
        Err(ZarrError::CorruptChunk(format!(
            "byte range {what} is past the end of '{key}' ({len} bytes)"
        )))
    };
    match range {
        ByteRange::All => Ok((0, len)),
        ByteRange::Range { offset, length } => {
            let end = offset.saturating_add(length);
            if end > len {
                return out_of_bounds(format!("{offset}..{end}"));
            }
            Ok((offset, end))
        }
        ByteRange::From(offset) => {
            if offset > len {
                return out_of_bounds(format!("{offset}.."));
            }
            Ok((offset, len))
        }
        ByteRange::Suffix(n) => {
            if n > len {
                return out_of_bounds(format!("last {n}"));
            }
            Ok((len - n, len))
        }
    }
}

/// The error of a write, erase or erase prefix (`what`) refused by the
/// read-only store `described`.
pub(crate) fn read_only_error(described: &str, what: &str, key: &str) -> ZarrError {
    ZarrError::ReadOnly(format!("cannot {what} '{key}': {described} is read-only"))
}

/// `fetch(0)` to `fetch(n - 1)` on up to `workers` scoped threads, results
/// in order. Threads take the next index as they finish, so a slow request
/// holds up only its own thread.
///
/// The calling thread fetches too, unless it has an interrupt check (R's
/// thread): then it waits and asks the check, and on a stop no further
/// request starts (those in flight finish); the ones never made give an
/// `interrupted` error.
pub(crate) fn fetch_concurrently<T: Send>(
    n: usize,
    workers: usize,
    fetch: impl Fn(usize) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    let watching = crate::pool::checks_interrupts();
    if workers <= 1 && !watching {
        return (0..n).map(fetch).collect();
    }
    let next = AtomicUsize::new(0);
    let cancel = AtomicBool::new(false);
    // Each result is sent as it is fetched; the channel closes when every
    // fetching thread is done.
    let (tx, rx) = mpsc::channel::<(usize, Result<T>)>();
    let work = |tx: mpsc::Sender<(usize, Result<T>)>| {
        while !cancel.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n || tx.send((i, fetch(i))).is_err() {
                break;
            }
        }
    };
    let mut results: Vec<Option<Result<T>>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let spawned = workers.max(1) - usize::from(!watching);
        // A thread that cannot be started leaves its share to the others.
        let handles: Vec<_> = (0..spawned)
            .filter_map(|_| {
                let tx = tx.clone();
                std::thread::Builder::new()
                    .spawn_scoped(s, || work(tx))
                    .ok()
            })
            .collect();
        if watching && !handles.is_empty() {
            drop(tx);
            loop {
                match rx.recv_timeout(CHECK_EVERY) {
                    Ok((i, r)) => results[i] = Some(r),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if crate::pool::interrupted() {
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        } else {
            work(tx);
            for (i, r) in rx.iter() {
                results[i] = Some(r);
            }
        }
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(crate::pool::interrupted_error())))
        .collect()
}

/// How often R's thread, waiting for fetches, asks whether to stop.
const CHECK_EVERY: Duration = Duration::from_millis(10);

#[cfg(test)]
mod fs_tests;
#[cfg(test)]
pub(crate) mod test_server;
#[cfg(test)]
pub mod tests;
