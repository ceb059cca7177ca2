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
use crate::store::{get_each_growing, ByteRange, GrewFn, Growing, Store, StoreKey};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Bytes of decoded data a read keeps in flight or waiting for a thread
/// (twice that at most: as much again may wait in the queue): 16 shards of
/// 1024 x 1024 doubles, or 256 chunks of 256 x 256.
pub(super) const FETCH_BUDGET: usize = 128 << 20;

/// How many requests of values that decode to `decoded_bytes` each the
/// pipeline keeps in flight: the budget's worth, at least one.
pub(super) fn in_flight_for(decoded_bytes: usize) -> usize {
    (FETCH_BUDGET / decoded_bytes.max(1)).max(1)
}

/// What a fetch hands over of a value.
pub(super) enum Event {
    /// More of its bytes are in (streamed fetches only; at most one such
    /// event of a value waits at a time).
    Grew(Arc<Growing>),
    /// All of it is in (None: there is no such value).
    Done(Result<Option<Arc<Growing>>>),
}

/// An event of the value at this position in the requests.
type Arrival = (usize, Event);

/// A fetch that went out before its read: the requests are in flight on a
/// thread of their own while the caller gets the read's result ready. A
/// read from R that is due a collection of R's heap (see r/alloc.rs)
/// starts its fetch first, so that the collection, which only R's thread
/// can run, takes place while the requests wait for the network instead
/// of before they are sent. Dropped unused, it stops at the next value.
pub struct StartedFetch {
    requests: Vec<(StoreKey, ByteRange)>,
    in_flight: usize,
    streamed: bool,
    arrivals: Arc<Arrivals>,
    fetcher: Option<std::thread::JoinHandle<()>>,
}

impl StartedFetch {
    /// Send `requests` now, up to `in_flight` at once; the values wait
    /// (as many as `in_flight`) for `fetch_pipelined` (or, `streamed`,
    /// `fetch_streamed`) to take them.
    pub(super) fn start(
        store: Arc<dyn Store>,
        requests: Vec<(StoreKey, ByteRange)>,
        in_flight: usize,
        streamed: bool,
    ) -> Result<StartedFetch> {
        let in_flight = in_flight.max(1);
        let arrivals = Arc::new(Arrivals::new(in_flight, requests.len()));
        let cancel = Arc::clone(&arrivals.cancel);
        let (theirs, list) = (Arc::clone(&arrivals), requests.clone());
        let grew: GrewFn = if streamed {
            let theirs = Arc::clone(&arrivals);
            Arc::new(move |i, value| theirs.grew(i, value))
        } else {
            Arc::new(|_, _| {})
        };
        let fetcher = std::thread::Builder::new()
            .name("zarr-prefetch".into())
            .spawn(move || {
                let _over = theirs.fetching();
                // Requests (and their retries) end when the read stops.
                crate::runtime::with_cancel(cancel, || {
                    get_each_growing(&*store, &list, in_flight, grew, &mut |i, got| {
                        theirs.push((i, Event::Done(got)))
                    })
                });
            })
            .map_err(|e| ZarrError::Io(format!("cannot start a thread to fetch with: {e}")))?;
        Ok(StartedFetch {
            requests,
            in_flight,
            streamed,
            arrivals,
            fetcher: Some(fetcher),
        })
    }
}

/// Started fetches that a read took over, so far (for tests).
static TAKEN_OVER: AtomicU64 = AtomicU64::new(0);

/// How many reads so far took over a fetch started before them.
pub fn fetches_taken_over() -> u64 {
    TAKEN_OVER.load(Ordering::Relaxed)
}

impl Drop for StartedFetch {
    fn drop(&mut self) {
        // The fetcher sees this at its next value and ends by itself.
        self.arrivals.close();
    }
}

/// Fetch `requests` on a thread named `zarr-prefetch` (so a panic there
/// is one the package's quiet hook knows) with up to `in_flight` in
/// flight, and run `handle` on each value as it arrives, on up to
/// `threads` threads. Stops at the first error and returns it; no request
/// starts after that. A `started` fetch of the same requests is taken
/// over instead of sending them again (a fetch of other requests is
/// dropped).
pub(super) fn fetch_pipelined(
    store: &Arc<dyn Store>,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    threads: usize,
    started: Option<StartedFetch>,
    handle: impl Fn(usize, Result<Option<Vec<u8>>>) -> Result<()> + Sync + Send,
) -> Result<()> {
    let n = requests.len();
    run_fetch(store, requests, in_flight, started, false, |arrivals| {
        // As many tasks as values: each task takes whichever value is in
        // next, so decoding follows the order of arrival.
        let slots: Vec<usize> = (0..n).collect();
        run_tasks(&slots, threads, |_| {
            // A fetch that is not streamed hands over Done events only.
            let Some((i, Event::Done(got))) = arrivals.take()? else {
                return Ok(());
            };
            // The other threads may wait for values that never come (a
            // server that does not answer): they stop with this error.
            handle(i, got.map(|v| v.map(Growing::into_vec))).inspect_err(|e| arrivals.stop_with(e))
        })
    })
}

/// `fetch_pipelined`, with `handle` told of each value's bytes as they
/// come in (`Event::Grew`, on stores that stream values) as well as when
/// all of it is in (`Event::Done`), on up to `threads` threads.
pub(super) fn fetch_streamed(
    store: &Arc<dyn Store>,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    threads: usize,
    started: Option<StartedFetch>,
    handle: impl Fn(usize, Event) -> Result<()> + Sync + Send,
) -> Result<()> {
    run_fetch(store, requests, in_flight, started, true, |arrivals| {
        let workers: Vec<usize> = (0..threads.max(1)).collect();
        run_tasks(&workers, threads, |_| {
            while let Some((i, event)) = arrivals.take()? {
                handle(i, event).inspect_err(|e| arrivals.stop_with(e))?;
            }
            Ok(())
        })
    })
}

/// Start the fetch of `requests` (or take over `started`), let `take`
/// take its values, and end it.
fn run_fetch(
    store: &Arc<dyn Store>,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    started: Option<StartedFetch>,
    streamed: bool,
    take: impl FnOnce(&Arrivals) -> Result<()>,
) -> Result<()> {
    if requests.is_empty() {
        return Ok(());
    }
    let mut fetch = match started.filter(|s| {
        s.requests == requests && s.in_flight == in_flight.max(1) && s.streamed == streamed
    }) {
        Some(s) => {
            TAKEN_OVER.fetch_add(1, Ordering::Relaxed);
            s
        }
        None => StartedFetch::start(Arc::clone(store), requests.to_vec(), in_flight, streamed)?,
    };
    // An interrupt that R's thread sees between two values (while it
    // decodes) wakes the threads waiting for values.
    let arrivals = Arc::clone(&fetch.arrivals);
    let hook: Arc<dyn Fn() + Send + Sync> =
        Arc::new(move || arrivals.stop_with(&crate::pool::interrupted_error()));
    let done = crate::pool::tell_on_interrupt(hook, || take(&fetch.arrivals));
    fetch.arrivals.close();
    let fetcher = fetch.fetcher.take();
    // A read that stopped early (an error, an interrupt) does not wait for
    // the requests still out: one to a server that does not answer holds
    // its thread until its timeout and retries, minutes on an object
    // store. The fetcher ends by itself once an answer comes (or the
    // store gives up), and sends nothing more. A fetch that is over is
    // joined, so that a panic on its thread reaches the caller.
    if done.is_ok() || fetch.arrivals.fetch_over() {
        if let Some(Err(panic)) = fetcher.map(|f| f.join()) {
            std::panic::resume_unwind(panic);
        }
    }
    done
}

/// The values fetched and not yet taken, with the fetcher waiting while
/// `cap` of them wait.
struct Arrivals {
    queue: Mutex<Queue>,
    changed: Condvar,
    cap: usize,
    /// Of each value: an `Event::Grew` of it waits in the queue.
    told: Vec<AtomicBool>,
    /// How many values there are.
    n: usize,
    /// Raised when no task takes values any more: the fetcher's requests
    /// and their retries stop at once.
    cancel: Arc<crate::runtime::Cancel>,
}

struct Queue {
    items: VecDeque<Arrival>,
    /// The fetcher may still push.
    fetching: bool,
    /// The tasks may still take (false once the run stopped).
    taking: bool,
    /// A task took a value or the run stopped: someone is there.
    met: bool,
    /// Why the run stopped early: every waiting task returns it.
    why: Option<ZarrError>,
    /// `Event::Done`s taken so far.
    done_taken: usize,
}

/// How often R's thread, waiting for a value, asks R whether to stop (the
/// other threads wait until they are woken).
const ASK_EVERY: Duration = Duration::from_millis(20);

/// A started fetch whose values nobody has come for in this long was left
/// behind (its read never ran: R's allocation of the result jumped out on
/// an error): its fetcher stops instead of holding the values forever.
const UNMET_AFTER: Duration = Duration::from_secs(120);

/// Marks the fetch over when dropped.
struct FetchOver<'a>(&'a Arrivals);

impl Drop for FetchOver<'_> {
    fn drop(&mut self) {
        self.0.lock().fetching = false;
        self.0.changed.notify_all();
    }
}

impl Arrivals {
    fn new(cap: usize, n: usize) -> Arrivals {
        Arrivals {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                fetching: true,
                taking: true,
                met: false,
                why: None,
                done_taken: 0,
            }),
            changed: Condvar::new(),
            cap,
            told: (0..n).map(|_| AtomicBool::new(false)).collect(),
            n,
            cancel: Arc::default(),
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
        let since = Instant::now();
        let mut q = self.lock();
        while q.taking && q.items.len() >= self.cap {
            let left = UNMET_AFTER.saturating_sub(since.elapsed());
            if !q.met && left.is_zero() {
                q.taking = false;
                q.items.clear();
                break;
            }
            q = if q.met {
                self.changed.wait(q).unwrap_or_else(|e| e.into_inner())
            } else {
                self.changed
                    .wait_timeout(q, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            };
        }
        if !q.taking {
            return false;
        }
        q.items.push_back(item);
        self.changed.notify_all();
        true
    }

    /// Queue that more of value `i` is in, unless that is queued already;
    /// never waits (the bytes are in memory already).
    fn grew(&self, i: usize, value: &Arc<Growing>) {
        if self.told[i].swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.lock();
        if q.taking {
            q.items.push_back((i, Event::Grew(Arc::clone(value))));
            self.changed.notify_all();
        }
    }

    /// The next event, waiting for it; None once every value's
    /// `Event::Done` has been taken; an error when the fetch ended without
    /// it (the fetcher stopped) or the caller is asked to stop.
    fn take(&self) -> Result<Option<Arrival>> {
        let mut q = self.lock();
        q.met = true;
        loop {
            if let Some(item) = q.items.pop_front() {
                match item.1 {
                    // Taken before it is handled: growth from now on is
                    // told again, growth before is seen by the handler.
                    Event::Grew(_) => self.told[item.0].store(false, Ordering::Release),
                    Event::Done(_) => q.done_taken += 1,
                }
                self.changed.notify_all();
                return Ok(Some(item));
            }
            if q.done_taken == self.n {
                return Ok(None);
            }
            if let Some(why) = &q.why {
                return Err(why.clone());
            }
            if !q.fetching {
                return Err(ZarrError::Io(
                    "the fetch of the read ended before all its values arrived".into(),
                ));
            }
            if !crate::pool::checks_interrupts() {
                // Woken by a value, the fetch's end or a stop (an error,
                // or an interrupt R's thread saw: `run_fetch`'s hook).
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            q = self
                .changed
                .wait_timeout(q, ASK_EVERY)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            // The check runs R code and may tell the hook, which locks the
            // queue: asked without the lock.
            drop(q);
            let stop = crate::pool::interrupted();
            q = self.lock();
            if stop {
                let why = crate::pool::interrupted_error();
                self.stop_locked(&mut q, &why);
                return Err(why);
            }
        }
    }

    /// Stop the run for `why`: the tasks waiting for values return it,
    /// and the fetcher stops at its next value.
    fn stop_with(&self, why: &ZarrError) {
        let mut q = self.lock();
        self.stop_locked(&mut q, why);
    }

    fn stop_locked(&self, q: &mut Queue, why: &ZarrError) {
        q.why.get_or_insert_with(|| why.clone());
        q.taking = false;
        q.met = true;
        q.items.clear();
        self.cancel.cancel();
        self.changed.notify_all();
    }

    /// Whether the fetcher has stopped pushing (done, stopped or gone).
    fn fetch_over(&self) -> bool {
        !self.lock().fetching
    }

    /// No more values are taken: the fetcher stops at its next push.
    fn close(&self) {
        let mut q = self.lock();
        q.taking = false;
        q.met = true;
        q.items.clear();
        self.cancel.cancel();
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A store of values "v<i>" for keys "k<i>"; key "boom" panics; key
    /// "hang" answers only once the test lets it (or after 30 s), and
    /// says which came first.
    #[derive(Default)]
    struct Numbers {
        fetched: AtomicUsize,
        quiet: AtomicBool,
        released: Mutex<bool>,
        changed: Condvar,
        answered_after_release: AtomicBool,
    }

    impl Store for Numbers {
        fn get(&self, key: &StoreKey, _range: ByteRange) -> Result<Option<Vec<u8>>> {
            if key.as_str() == "boom" {
                self.quiet
                    .store(crate::panics::caught_here(), Ordering::SeqCst);
                panic!("the fetch gave up on {}", key.as_str());
            }
            if key.as_str() == "hang" {
                let r = self.released.lock().unwrap();
                let (r, _) = self
                    .changed
                    .wait_timeout_while(r, Duration::from_secs(30), |r| !*r)
                    .unwrap();
                self.answered_after_release.store(*r, Ordering::SeqCst);
            }
            self.fetched.fetch_add(1, Ordering::SeqCst);
            Ok(Some(key.as_str().replace('k', "v").into_bytes()))
        }
        fn exists(&self, _key: &StoreKey) -> Result<bool> {
            Ok(true)
        }
        fn size(&self, _key: &StoreKey) -> Result<Option<u64>> {
            Ok(None)
        }
        fn describe(&self) -> String {
            "numbers".into()
        }
    }

    fn as_dyn(store: &Arc<Numbers>) -> Arc<dyn Store> {
        store.clone()
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
            read_each_once(&Arc::new(Numbers::default()), &keys, in_flight, None);
        }
    }

    /// Read `keys` from `store` through the pipeline (taking over
    /// `started`) and check that each value reached the handler once.
    fn read_each_once(
        store: &Arc<Numbers>,
        keys: &[&str],
        in_flight: usize,
        started: Option<StartedFetch>,
    ) {
        let seen: Vec<Mutex<Option<Vec<u8>>>> = keys.iter().map(|_| Mutex::new(None)).collect();
        fetch_pipelined(
            &as_dyn(store),
            &requests(keys),
            in_flight,
            2,
            started,
            |i, got| {
                let prev = seen[i].lock().unwrap().replace(got?.unwrap());
                assert!(prev.is_none(), "value {i} handled twice");
                Ok(())
            },
        )
        .unwrap();
        for (i, s) in seen.iter().enumerate() {
            assert_eq!(
                s.lock().unwrap().as_deref(),
                Some(format!("v{i}").as_bytes())
            );
        }
    }

    #[test]
    fn an_error_of_a_handler_stops_the_fetch() {
        let keys: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let store = Arc::new(Numbers::default());
        let err = fetch_pipelined(&as_dyn(&store), &requests(&keys), 1, 2, None, |i, _| {
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
        let store = Arc::new(Numbers::default());
        let r = crate::panics::catch(|| {
            fetch_pipelined(
                &as_dyn(&store),
                &requests(&["k0", "boom", "k2"]),
                1,
                2,
                None,
                |_, got| got.map(|_| ()),
            )
        });
        let payload = r.unwrap_err();
        assert_eq!(
            crate::panics::message(&*payload).as_deref(),
            Some("the fetch gave up on boom")
        );
        // Its thread is one of the package's: the hook kept it off stderr.
        assert!(store.quiet.load(Ordering::SeqCst));
    }

    #[test]
    fn a_started_fetch_is_taken_over_and_sends_nothing_twice() {
        let keys: Vec<String> = (0..25).map(|i| format!("k{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let store = Arc::new(Numbers::default());
        let started = StartedFetch::start(store.clone(), requests(&keys), 4, false).unwrap();
        // Values wait for the read: a window of them queued, at most
        // another window fetched.
        std::thread::sleep(Duration::from_millis(50));
        let early = store.fetched.load(Ordering::SeqCst);
        assert!((4..=8).contains(&early), "fetched {early} before the read");
        read_each_once(&store, &keys, 4, Some(started));
        assert_eq!(store.fetched.load(Ordering::SeqCst), keys.len());
    }

    #[test]
    fn a_started_fetch_of_other_requests_is_dropped_and_stops() {
        let store = Arc::new(Numbers::default());
        let started =
            StartedFetch::start(store.clone(), requests(&["k0", "k1", "k2", "k3"]), 1, false)
                .unwrap();
        let mut got = Vec::new();
        let got_ref = Mutex::new(&mut got);
        fetch_pipelined(
            &as_dyn(&store),
            &requests(&["k5", "k6"]),
            1,
            1,
            Some(started),
            |i, v| {
                got_ref.lock().unwrap().push((i, v?.unwrap()));
                Ok(())
            },
        )
        .unwrap();
        got.sort();
        assert_eq!(got, vec![(0, b"v5".to_vec()), (1, b"v6".to_vec())]);
        // The dropped fetch ends at its next value: of its four, it
        // fetched the one waiting and at most one more.
        std::thread::sleep(Duration::from_millis(100));
        assert!(store.fetched.load(Ordering::SeqCst) <= 2 + 2);
    }

    #[test]
    fn a_read_that_stops_does_not_wait_for_a_request_that_hangs() {
        let store = Arc::new(Numbers::default());
        // The first value fails the read while "hang" is out.
        let err = fetch_pipelined(
            &as_dyn(&store),
            &requests(&["k0", "hang"]),
            1,
            1,
            None,
            |i, _| {
                if i == 0 {
                    return Err(ZarrError::Interrupted("stop".into()));
                }
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(err.kind(), "interrupted");
        // The read returned before the hanging request was answered.
        *store.released.lock().unwrap() = true;
        store.changed.notify_all();
        for _ in 0..500 {
            if store.answered_after_release.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(store.answered_after_release.load(Ordering::SeqCst));
    }
}
