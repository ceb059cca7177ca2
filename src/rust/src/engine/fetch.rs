//! The fetch side of reads from stores with latency (object stores, HTTP,
//! reference sets): one pipeline that both whole-chunk reads and
//! whole-shard reads use. A thread of its own keeps up to `in_flight`
//! requests out and hands each value over as it arrives; the engine's
//! threads decode each one as soon as it is there. Fetching in batches
//! and decoding a batch only once all of it had arrived left the cores
//! idle while the first batch came in and the link idle while the last
//! one was decoded; a slow request held up a whole batch.

use crate::error::{Result, ZarrError};
use crate::pool::run_tasks;
use crate::store::{ByteRange, Store, StoreKey};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Bytes of decoded data a read keeps in flight or waiting for a thread
/// (twice that at most: as much again may wait in the queue): 16 shards of
/// 1024 x 1024 doubles, or 256 chunks of 256 x 256.
pub(super) const FETCH_BUDGET: usize = 128 << 20;

/// How many requests of values that decode to `decoded_bytes` each the
/// pipeline keeps in flight: the budget's worth, at least one.
pub(super) fn in_flight_for(decoded_bytes: usize) -> usize {
    (FETCH_BUDGET / decoded_bytes.max(1)).max(1)
}

/// One fetched value: its position in the requests, and what came.
type Arrival = (usize, Result<Option<Vec<u8>>>);

/// Fetch `requests` on a thread named `zarr-prefetch` (so a panic there
/// is one the package's quiet hook knows) with up to `in_flight` in
/// flight, and run `handle` on each value as it arrives, on up to
/// `threads` threads. Stops at the first error and returns it; no request
/// starts after that.
pub(super) fn fetch_pipelined(
    store: &dyn Store,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    threads: usize,
    handle: impl Fn(usize, Result<Option<Vec<u8>>>) -> Result<()> + Sync + Send,
) -> Result<()> {
    let n = requests.len();
    if n == 0 {
        return Ok(());
    }
    let arrivals = Arrivals::new(in_flight.max(1));
    std::thread::scope(|s| {
        let fetcher = std::thread::Builder::new()
            .name("zarr-prefetch".into())
            .spawn_scoped(s, || {
                // Marks the fetch over on a panic too, so that no thread
                // waits for values that will never come.
                let _over = arrivals.fetching();
                store.get_each(requests, in_flight, &mut |i, got| arrivals.push((i, got)));
            })
            .map_err(|e| ZarrError::Io(format!("cannot start a thread to fetch with: {e}")))?;
        // As many tasks as values: each task takes whichever value is in
        // next, so decoding follows the order of arrival.
        let slots: Vec<usize> = (0..n).collect();
        let done = run_tasks(&slots, threads, |_| {
            let (i, got) = arrivals.take()?;
            handle(i, got)
        });
        arrivals.close();
        match fetcher.join() {
            Ok(()) => done,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The values fetched and not yet taken, with the fetcher waiting while
/// `cap` of them wait.
struct Arrivals {
    queue: Mutex<Queue>,
    changed: Condvar,
    cap: usize,
}

struct Queue {
    items: VecDeque<Arrival>,
    /// The fetcher may still push.
    fetching: bool,
    /// The tasks may still take (false once the run stopped).
    taking: bool,
}

/// How often a task waiting for a value asks whether to stop.
const WAIT_STEP: Duration = Duration::from_millis(20);

/// Marks the fetch over when dropped.
struct FetchOver<'a>(&'a Arrivals);

impl Drop for FetchOver<'_> {
    fn drop(&mut self) {
        self.0.lock().fetching = false;
        self.0.changed.notify_all();
    }
}

impl Arrivals {
    fn new(cap: usize) -> Arrivals {
        Arrivals {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                fetching: true,
                taking: true,
            }),
            changed: Condvar::new(),
            cap,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fetching(&self) -> FetchOver<'_> {
        FetchOver(self)
    }

    /// Queue a value, waiting while the queue is full; false when no
    /// task takes values any more (the fetch should stop).
    fn push(&self, item: Arrival) -> bool {
        let mut q = self.lock();
        while q.taking && q.items.len() >= self.cap {
            q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        if !q.taking {
            return false;
        }
        q.items.push_back(item);
        self.changed.notify_all();
        true
    }

    /// The next value in, waiting for it; an error when the fetch ended
    /// without it (the fetcher stopped) or the caller is asked to stop.
    fn take(&self) -> Result<Arrival> {
        let mut q = self.lock();
        loop {
            if let Some(item) = q.items.pop_front() {
                self.changed.notify_all();
                return Ok(item);
            }
            if !q.fetching {
                return Err(ZarrError::Io(
                    "the fetch of the read ended before all its values arrived".into(),
                ));
            }
            q = self
                .changed
                .wait_timeout(q, WAIT_STEP)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if crate::pool::interrupted() {
                return Err(crate::pool::interrupted_error());
            }
        }
    }

    /// No more values are taken: the fetcher stops at its next push.
    fn close(&self) {
        let mut q = self.lock();
        q.taking = false;
        q.items.clear();
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DirListing, StorePrefix};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A store of values "v<i>" for keys "k<i>"; key "boom" panics.
    #[derive(Default)]
    struct Numbers {
        fetched: AtomicUsize,
        quiet: AtomicBool,
    }

    impl Store for Numbers {
        fn get(&self, key: &StoreKey, _range: ByteRange) -> Result<Option<Vec<u8>>> {
            if key.as_str() == "boom" {
                self.quiet
                    .store(crate::panics::caught_here(), Ordering::SeqCst);
                panic!("the fetch gave up on {}", key.as_str());
            }
            self.fetched.fetch_add(1, Ordering::SeqCst);
            Ok(Some(key.as_str().replace('k', "v").into_bytes()))
        }
        fn list(&self) -> Result<Vec<String>> {
            Ok(vec![])
        }
        fn list_prefix(&self, _prefix: &StorePrefix) -> Result<Vec<String>> {
            Ok(vec![])
        }
        fn list_dir(&self, _prefix: &StorePrefix) -> Result<DirListing> {
            Ok(DirListing::default())
        }
        fn exists(&self, _key: &StoreKey) -> Result<bool> {
            Ok(true)
        }
        fn size(&self, _key: &StoreKey) -> Result<Option<u64>> {
            Ok(None)
        }
        fn read_only(&self) -> bool {
            true
        }
        fn describe(&self) -> String {
            "numbers".into()
        }
    }

    fn requests(keys: &[&str]) -> Vec<(StoreKey, ByteRange)> {
        keys.iter()
            .map(|k| (StoreKey::new(*k).unwrap(), ByteRange::All))
            .collect()
    }

    #[test]
    fn every_value_reaches_its_handler_once_whatever_the_window() {
        let keys: Vec<String> = (0..37).map(|i| format!("k{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        for in_flight in [1, 4, 64] {
            let store = Numbers::default();
            let seen: Vec<Mutex<Option<Vec<u8>>>> = keys.iter().map(|_| Mutex::new(None)).collect();
            fetch_pipelined(&store, &requests(&keys), in_flight, 2, |i, got| {
                let prev = seen[i].lock().unwrap().replace(got?.unwrap());
                assert!(prev.is_none(), "value {i} handled twice");
                Ok(())
            })
            .unwrap();
            for (i, s) in seen.iter().enumerate() {
                assert_eq!(
                    s.lock().unwrap().as_deref(),
                    Some(format!("v{i}").as_bytes())
                );
            }
        }
    }

    #[test]
    fn an_error_of_a_handler_stops_the_fetch() {
        let keys: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let store = Numbers::default();
        let err = fetch_pipelined(&store, &requests(&keys), 1, 2, |i, _| {
            if i == 3 {
                return Err(ZarrError::CorruptChunk("chunk 3 is bad".into()));
            }
            Ok(())
        })
        .unwrap_err();
        assert_eq!(err.kind(), "corrupt_chunk");
        // The default get_each fetches in windows of one: the fetch stops
        // within a few values of the error.
        assert!(store.fetched.load(Ordering::SeqCst) < 10);
    }

    #[test]
    fn a_panic_on_the_fetch_thread_is_quiet_and_reaches_the_caller() {
        let store = Numbers::default();
        let r = crate::panics::catch(|| {
            fetch_pipelined(&store, &requests(&["k0", "boom", "k2"]), 1, 2, |_, got| {
                got.map(|_| ())
            })
        });
        let payload = r.unwrap_err();
        assert_eq!(
            crate::panics::message(&*payload).as_deref(),
            Some("the fetch gave up on boom")
        );
        // Its thread is one of the package's: the hook kept it off stderr.
        assert!(store.quiet.load(Ordering::SeqCst));
    }
}
