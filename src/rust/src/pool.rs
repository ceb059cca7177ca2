//! The package's own rayon pool. R owns the process, so we never touch
//! rayon's global pool (another package may configure it); the pool is
//! rebuilt only when the requested thread count changes, or in a forked child.

use crate::error::{Result, ZarrError};
use crate::steer::Steer;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The pool's threads, and what keeps them off the caller's CPU.
pub struct Workers {
    pub pool: ThreadPool,
    steer: Steer,
}

/// The pool: its thread count, the process it was made in, its workers.
static POOL: Slot = Mutex::new(None);

/// The pool with `threads` workers (at least one).
///
/// A pool made before the process forked (`parallel::mclapply()`) has no
/// threads in the child: work handed to it would never run and the caller
/// would wait for ever. The child gets a pool of its own; the inherited
/// one is never dropped, since its threads are not there to be told.
pub fn pool(threads: usize) -> Arc<Workers> {
    pool_in(&POOL, threads)
}

/// The slot that `pool` keeps the pool in.
type Slot = Mutex<Option<(usize, u32, Arc<Workers>)>>;

/// `pool` over a given slot, so that a test can have one no other test
/// touches (tests run in parallel, and one asking for another thread
/// count replaces the shared pool).
fn pool_in(slot: &Slot, threads: usize) -> Arc<Workers> {
    let threads = threads.max(1);
    let pid = std::process::id();
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    match guard.take() {
        Some((n, made_in, p)) if made_in == pid && n == threads => {
            *guard = Some((n, made_in, Arc::clone(&p)));
            return p;
        }
        Some((_, made_in, p)) if made_in != pid => std::mem::forget(p),
        _ => {}
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("zarr-worker-{i}"))
        .build()
        .expect("the zarr thread pool could not be started");
    let steer = Steer::of(&pool);
    let p = Arc::new(Workers { pool, steer });
    *guard = Some((threads, pid, Arc::clone(&p)));
    p
}

thread_local! {
    // (thread budget of the running task, threads of the whole operation);
    // (1, 0) outside tasks.
    static BUDGET: Cell<(usize, usize)> = const { Cell::new((1, 0)) };
}

/// The thread budget of the task running on this thread (1 outside tasks).
pub fn threads() -> usize {
    BUDGET.with(Cell::get).0
}

fn with_budget<R>(budget: usize, total: usize, f: impl FnOnce() -> R) -> R {
    let before = BUDGET.with(|t| t.replace((budget.max(1), total)));
    // Restored on unwind too, so a panicking task leaves no stale budget.
    struct Restore((usize, usize));
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// Run `task` on every item with `threads` threads: the calling thread and
/// `threads - 1` pool workers. Stops at the first error and returns it.
///
/// The caller works too because a read of a few chunks is over in about a
/// millisecond, which is how long waking an idle worker can take on a
/// virtual machine; the workers join when they are up. Items are handed
/// out in runs of consecutive items, large first and shrinking (guided
/// scheduling): consecutive chunks write neighbouring parts of the
/// output, so two threads rarely fault in the same pages, and the small
/// runs at the end keep the threads finishing together.
///
/// While a task runs, `threads()` on its thread returns its share of
/// `threads` (all of them when there is one item, 1 when there are more
/// items than threads), so that codecs with parallel work inside one chunk
/// (sharding) neither oversubscribe the machine nor leave it idle. Nested
/// calls run in the same pool.
pub fn run_tasks<T: Sync>(
    items: &[T],
    threads: usize,
    task: impl Fn(&T) -> Result<()> + Sync + Send,
) -> Result<()> {
    let total = match BUDGET.with(Cell::get).1 {
        0 => threads,
        t => t,
    };
    if threads <= 1 || items.len() <= 1 {
        return with_budget(threads, total, || items.iter().try_for_each(task));
    }
    let used = threads.min(items.len());
    let share = (threads / used).max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<ZarrError>> = Mutex::new(None);
    let n = items.len();
    let claim = || {
        let mut start = next.load(Ordering::Relaxed);
        loop {
            if start >= n {
                return None;
            }
            let len = (n - start).div_ceil(2 * used);
            match next.compare_exchange_weak(
                start,
                start + len,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(start..start + len),
                Err(now) => start = now,
            }
        }
    };
    let work = || {
        while let Some(run) = claim() {
            for item in &items[run] {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if let Err(e) = task(item) {
                    stop.store(true, Ordering::Relaxed);
                    let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(e);
                    return;
                }
            }
        }
    };
    let workers = pool(total.max(2) - 1);
    if rayon::current_thread_index().is_none() {
        // The caller is about to wake idle workers and work alongside
        // them (see steer.rs).
        workers.steer.away_from_caller();
    }
    workers.pool.in_place_scope(|s| {
        for _ in 1..used {
            s.spawn(|_| with_budget(share, total, work));
        }
        with_budget(share, total, work);
    });
    match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `run_tasks`, collecting each item's result, in the order of the items.
pub fn collect_tasks<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    task: impl Fn(&T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    if threads <= 1 || items.len() <= 1 {
        return items.iter().map(task).collect();
    }
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let indexed: Vec<(usize, &T)> = items.iter().enumerate().collect();
    run_tasks(&indexed, threads, |&(i, item)| {
        let r = task(item)?;
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        Ok(())
    })?;
    Ok(slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every task ran")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_whatever_the_thread_count() {
        for threads in [1, 2, 3, 8] {
            for n in [0, 1, 2, 5, 257] {
                let seen: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                let items: Vec<usize> = (0..n).collect();
                run_tasks(&items, threads, |&i| {
                    seen[i].fetch_add(1, Ordering::Relaxed);
                    Ok(())
                })
                .unwrap();
                assert!(
                    seen.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                    "{threads} {n}"
                );
            }
        }
    }

    #[test]
    fn tasks_see_the_thread_budget() {
        assert_eq!(threads(), 1);
        let items: Vec<usize> = (0..20).collect();
        // more items than threads: each task runs alone
        run_tasks(&items, 2, |_| {
            assert_eq!(threads(), 1);
            Ok(())
        })
        .unwrap();
        // one item: it gets every thread, and nested work shares them
        run_tasks(&items[..1], 3, |_| {
            assert_eq!(threads(), 3);
            run_tasks(&items[..2], threads(), |_| {
                assert_eq!(threads(), 1);
                Ok(())
            })
        })
        .unwrap();
        run_tasks(&items[..2], 4, |_| {
            assert_eq!(threads(), 2);
            Ok(())
        })
        .unwrap();
        assert_eq!(threads(), 1);
    }

    #[test]
    fn results_come_back_in_item_order() {
        let items: Vec<u32> = (0..300).collect();
        let out = collect_tasks(&items, 2, |&i| Ok(i * 2)).unwrap();
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_error_stops_the_run() {
        let items: Vec<usize> = (0..1000).collect();
        let ran = AtomicUsize::new(0);
        let e = run_tasks(&items, 2, |&i| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i == 10 {
                Err(ZarrError::CorruptChunk(format!("item {i}")))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(e.message(), "item 10");
        assert!(ran.load(Ordering::Relaxed) < 1000);
    }
    #[test]
    fn pool_has_the_requested_threads_and_is_reused() {
        let slot = super::Slot::new(None);
        let a = super::pool_in(&slot, 2);
        assert_eq!(a.pool.current_num_threads(), 2);
        let b = super::pool_in(&slot, 2);
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        let c = super::pool_in(&slot, 0);
        assert_eq!(c.pool.current_num_threads(), 1);
        assert!(!std::sync::Arc::ptr_eq(&a, &c));
        assert_eq!(super::pool(3).pool.current_num_threads(), 3);
    }
}
