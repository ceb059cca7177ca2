//! The store abstraction (v3-core.rst "Storage"): a key/value map of byte
//! strings. Every store is `Send + Sync` so the engine can fetch and write
//! chunks from its thread pool.

use crate::error::{Result, ZarrError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

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

pub use fs::FsStore;
pub use growing::Growing;
pub use http::HttpStore;
#[cfg(test)]
pub(crate) use key::StrKeys;
pub use key::{validate_key, validate_prefix, StoreKey, StorePrefix};
pub use memory::MemoryStore;
pub use object::ObjectStore;
pub use reference::RefStore;

/// What `Store::get_each_growing` calls as a value's bytes come in.
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

pub trait Store: Send + Sync {
    /// The value at `key`, or `None` if there is none.
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>>;
    /// Store `value` at `key`, replacing what was there. Read-only stores
    /// keep the default, which refuses.
    fn set(&self, key: &StoreKey, _value: &[u8]) -> Result<()> {
        Err(read_only_error(&self.describe(), "write", key))
    }
    /// Store the concatenation of `parts` at `key`. Stores that write
    /// files override this to write the parts one after another, without
    /// assembling the value in memory first (a shard and its index).
    fn set_parts(&self, key: &StoreKey, parts: &[&[u8]]) -> Result<()> {
        self.set(key, &parts.concat())
    }
    /// Remove `key`; removing a key that does not exist is not an error.
    /// Read-only stores keep the default, which refuses.
    fn erase(&self, key: &StoreKey) -> Result<()> {
        Err(read_only_error(&self.describe(), "erase", key))
    }
    /// Remove every key that starts with `prefix`. Read-only stores keep
    /// the default, which refuses.
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        Err(read_only_error(&self.describe(), "erase prefix", prefix))
    }
    /// Every key in the store, sorted.
    fn list(&self) -> Result<Vec<String>>;
    /// Every key that starts with `prefix`, sorted.
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>>;
    /// Keys and prefixes directly below `prefix` ("" or ending in "/").
    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing>;
    fn exists(&self, key: &StoreKey) -> Result<bool>;
    /// Size in bytes of the value at `key`, `None` if absent.
    fn size(&self, key: &StoreKey) -> Result<Option<u64>>;
    fn read_only(&self) -> bool;
    /// Whether `get` with a range reads only those bytes (not the whole value).
    fn supports_partial_reads(&self) -> bool {
        true
    }
    /// A short description for printing: "local store at <root>", "memory store".
    fn describe(&self) -> String;
    /// Fetch several values at once. Stores with latency (HTTP) override
    /// this to fetch concurrently; the default fetches one after another.
    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        requests.iter().map(|(k, r)| self.get(k, *r)).collect()
    }
    /// Fetch several values with up to `in_flight` requests out at once,
    /// handing each to `arrived` (with its position in `requests`) as it
    /// comes in, on the calling thread; when `arrived` returns false no
    /// further request starts. The default fetches up to 64 at a time
    /// with `get_many` (a window is handed over once all of it is in, and
    /// the next is fetched while it is decoded); stores that can hand
    /// values over one by one as they arrive override it.
    fn get_each(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
    ) {
        let mut at = 0;
        for part in requests.chunks(in_flight.clamp(1, 64)) {
            for got in self.get_many(part) {
                if !arrived(at, got) {
                    return;
                }
                at += 1;
            }
        }
    }
    /// Whether `get_each_growing` hands values over while they arrive
    /// (the default hands each over once it is all there).
    fn streams_values(&self) -> bool {
        false
    }
    /// `get_each`, with each value in a [`Growing`] that `grew` is told
    /// of (from any thread, with the request's position) as its bytes
    /// come in, before `arrived` gets it complete. The default tells
    /// nothing before the value is complete.
    fn get_each_growing(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        grew: GrewFn,
        arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
    ) {
        let _ = grew;
        self.get_each(requests, in_flight, &mut |i, got| {
            arrived(i, got.map(|v| v.map(Growing::whole)))
        })
    }
    /// Whether the engine should fetch chunks with `get_many` in batches
    /// (true for network stores) instead of one `get` per decode task.
    fn prefers_batches(&self) -> bool {
        false
    }
    /// Whether `get_direct` can do anything: the engine prepares the
    /// buffers only for stores that say so.
    fn reads_direct(&self) -> bool {
        false
    }
    /// Read the whole value at `key` straight into `bufs`, one after
    /// another, if it is exactly as long as they are together. Stores
    /// that cannot (the default), and values of another length, give
    /// `Direct::NotDone`, and the caller reads the value with `get`; the
    /// buffers may then hold anything.
    fn get_direct(&self, _key: &StoreKey, _bufs: &mut [std::io::IoSliceMut<'_>]) -> Result<Direct> {
        Ok(Direct::NotDone)
    }
    /// Whether `set_if_version` is a real compare-and-swap here.
    fn supports_conditional_writes(&self) -> bool {
        false
    }
    /// The value at `key` and a tag of its version (an object store's
    /// ETag or generation) for `set_if_version`; stores without versions
    /// give no tag.
    fn get_versioned(&self, key: &StoreKey) -> Result<Option<(Vec<u8>, Option<String>)>> {
        Ok(self.get(key, ByteRange::All)?.map(|v| (v, None)))
    }
    /// Write `value` at `key` only if it is still at version `tag` (with
    /// `None`: only if there is no value yet), so that two processes
    /// updating one metadata document cannot lose an update silently: the
    /// loser gets `ZarrError::Conflict`. Returns the new version tag.
    /// Stores that cannot (the default) refuse with `Unsupported`.
    fn set_if_version(
        &self,
        key: &StoreKey,
        _value: &[u8],
        _tag: Option<&str>,
    ) -> Result<Option<String>> {
        Err(ZarrError::Unsupported(format!(
            "{} has no conditional writes (key '{key}')",
            self.describe()
        )))
    }
    /// `range` of the value at `key`, and a handle that reads more ranges
    /// of that same version of the value, whatever writers do meanwhile:
    /// a shard's inner chunks must come from the shard its index came
    /// from. None when there is no value. The default reads later ranges
    /// with `get`, from whatever version is there then; stores that can
    /// pin a version override it.
    fn get_pinned<'s>(
        &'s self,
        key: &StoreKey,
        range: ByteRange,
    ) -> Result<Option<PinnedRead<'s>>> {
        Ok(self.get(key, range)?.map(|b| {
            (
                b,
                Box::new(Latest {
                    store: self,
                    key: key.clone(),
                }) as Box<dyn Pinned>,
            )
        }))
    }
}

/// What `Store::get_pinned` gives: the first range, and the pinned value.
pub type PinnedRead<'s> = (Vec<u8>, Box<dyn Pinned + 's>);

/// One version of one value (see `Store::get_pinned`).
pub trait Pinned: Send + Sync {
    /// `range` of the pinned value.
    fn get(&self, range: ByteRange) -> Result<Vec<u8>>;
    /// Several ranges of the pinned value, results in their order. Stores
    /// with latency override it to ask for them concurrently.
    fn get_many(&self, ranges: &[ByteRange]) -> Vec<Result<Vec<u8>>> {
        ranges.iter().map(|r| self.get(*r)).collect()
    }
}

/// The default `Pinned`: whatever version the store holds at each read.
struct Latest<'s, S: Store + ?Sized> {
    store: &'s S,
    key: StoreKey,
}

impl<S: Store + ?Sized> Latest<'_, S> {
    fn found(&self, got: Result<Option<Vec<u8>>>) -> Result<Vec<u8>> {
        got?.ok_or_else(|| {
            ZarrError::CorruptChunk(format!("'{}' disappeared while it was read", self.key))
        })
    }
}

impl<S: Store + ?Sized> Pinned for Latest<'_, S> {
    fn get(&self, range: ByteRange) -> Result<Vec<u8>> {
        self.found(self.store.get(&self.key, range))
    }

    /// The store's own batches, concurrent where the store has latency.
    fn get_many(&self, ranges: &[ByteRange]) -> Vec<Result<Vec<u8>>> {
        let requests: Vec<(StoreKey, ByteRange)> =
            ranges.iter().map(|r| (self.key.clone(), *r)).collect();
        self.store
            .get_many(&requests)
            .into_iter()
            .map(|got| self.found(got))
            .collect()
    }
}

/// The outcome of `Store::get_direct`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// The buffers hold the whole value.
    Done,
    /// There is no value at the key.
    Missing,
    /// Nothing usable was read; read the value with `get`.
    NotDone,
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
