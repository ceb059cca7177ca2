//! The fetch pipeline against a store of numbered values, one that panics
//! and one that hangs: each value handled once, errors and panics stopping
//! it, fetches taken over or dropped.

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
        StartedFetch::start(store.clone(), requests(&["k0", "k1", "k2", "k3"]), 1, false).unwrap();
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
