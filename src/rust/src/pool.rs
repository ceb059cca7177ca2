//! Tasks on the package's own pool (`crate::runtime::pool`): the thread
//! budget of each task, interrupts asked on R's thread, progress.

use crate::error::{Result, ZarrError};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::runtime::{pool, Workers};

thread_local! {
    // (thread budget of the running task, threads of the whole operation);
    // (1, 0) outside tasks.
    static BUDGET: Cell<(usize, usize)> = const { Cell::new((1, 0)) };
    // How the calling thread learns that it should stop (R's main thread:
    // a pending Ctrl-C or time limit), and what it has been told; None on
    // every other thread.
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
}

/// The interrupt check a caller installs: asked with the work done so far
/// (items, total items), so that it can report progress too; true means
/// stop. It must not unwind or jump.
pub type Check = fn(usize, usize) -> bool;

/// The calling thread's interrupt check and progress, for the whole call
/// (all runs of tasks in it): a check is due `CHECK_EVERY` after the last
/// one, whichever run it falls in, and a yes is remembered.
struct Watch {
    check: Check,
    last: Instant,
    hit: bool,
    progress: Arc<Progress>,
    /// Told of the first stop (see `tell_on_interrupt`).
    hooks: Vec<Arc<dyn Fn() + Send + Sync>>,
}

/// Items done and to do in the outermost runs of tasks of one call.
#[derive(Default)]
struct Progress {
    done: AtomicUsize,
    total: AtomicUsize,
    declared: AtomicBool,
}

/// How often at least the calling thread asks its check while the engine
/// works: well under the 0.2 s a user or a time limit may wait.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// Run `f` with `check` as this thread's interrupt check: the engine calls
/// it from this thread only, while tasks run, and stops them when it says
/// so.
pub fn with_interrupt_check<R>(check: Check, f: impl FnOnce() -> R) -> R {
    let watch = Watch {
        check,
        last: Instant::now(),
        hit: false,
        progress: Arc::default(),
        hooks: Vec::new(),
    };
    let before = WATCH.with(|w| w.replace(Some(watch)));
    struct Restore(Option<Watch>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WATCH.with(|w| *w.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(before);
    f()
}

/// Run `f` with `hook` told (on this thread) when the interrupt check says
/// stop: threads that wait for something other than this thread's tasks
/// (values a fetch hands over) are woken by it instead of polling. On a
/// thread without an interrupt check, just `f`.
pub fn tell_on_interrupt<R>(hook: Arc<dyn Fn() + Send + Sync>, f: impl FnOnce() -> R) -> R {
    let added = WATCH.with(|w| match w.borrow_mut().as_mut() {
        Some(w) => {
            w.hooks.push(hook);
            true
        }
        None => false,
    });
    struct Pop(bool);
    impl Drop for Pop {
        fn drop(&mut self) {
            if self.0 {
                WATCH.with(|w| {
                    if let Some(w) = w.borrow_mut().as_mut() {
                        w.hooks.pop();
                    }
                });
            }
        }
    }
    let _pop = Pop(added);
    f()
}

/// Whether the calling thread has an interrupt check (only R's thread).
pub fn checks_interrupts() -> bool {
    WATCH.with(|w| w.borrow().is_some())
}

/// Whether the work should stop now: asks the calling thread's check when
/// one is due (false on threads without one, such as the workers).
pub fn interrupted() -> bool {
    // The check (when due) or the answer so far.
    let due = WATCH.with(|w| {
        let w = w.borrow();
        let w = w.as_ref().ok_or(false)?;
        if w.hit || w.last.elapsed() < CHECK_EVERY {
            return Err(w.hit);
        }
        let p = &w.progress;
        let done = p.done.load(Ordering::Relaxed);
        Ok((w.check, done, p.total.load(Ordering::Relaxed)))
    });
    match due {
        Err(hit) => hit,
        Ok((check, done, total)) => {
            // Asked with no borrow held: the check runs R code.
            let hit = check(done, total);
            if hit {
                INTERRUPTS_SEEN.fetch_add(1, Ordering::Relaxed);
            }
            let hooks = WATCH.with(|w| {
                let mut w = w.borrow_mut();
                let w = w.as_mut()?;
                let first = hit && !w.hit;
                w.hit |= hit;
                w.last = Instant::now();
                first.then(|| w.hooks.clone())
            });
            // Called with no borrow held, and no lock of the caller's.
            for hook in hooks.unwrap_or_default() {
                hook();
            }
            hit
        }
    }
}

/// Interrupts R's thread has seen so far: threads of a call that wait
/// for something else than a task (a fetched value) stop when this moves.
static INTERRUPTS_SEEN: AtomicU64 = AtomicU64::new(0);

/// How many interrupts R's thread has seen so far.
pub fn interrupts_seen() -> u64 {
    INTERRUPTS_SEEN.load(Ordering::Relaxed)
}

/// The error of a stopped call.
pub fn interrupted_error() -> ZarrError {
    ZarrError::Interrupted("interrupted (by the user or a time limit)".into())
}

/// Say how many items the call's outermost runs of tasks will have in all,
/// when it hands them out in several runs (batches): progress is then
/// counted against this total instead of each run's own.
pub fn expect_items(n: usize) {
    WATCH.with(|w| {
        if let Some(w) = w.borrow().as_ref() {
            w.progress.total.store(n, Ordering::Relaxed);
            w.progress.declared.store(true, Ordering::Relaxed);
        }
    });
}

/// The progress counter of an outermost run on the checking thread (None
/// for nested runs and on other threads), with the run's items added to
/// the total unless a total was declared.
fn progress_of_run(n: usize) -> Option<Arc<Progress>> {
    if BUDGET.with(Cell::get).1 != 0 {
        return None;
    }
    WATCH.with(|w| {
        let w = w.borrow();
        let p = &w.as_ref()?.progress;
        if !p.declared.load(Ordering::Relaxed) {
            p.total.fetch_add(n, Ordering::Relaxed);
        }
        Some(Arc::clone(p))
    })
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
    let progress = progress_of_run(items.len());
    let count = |n: usize| {
        if let Some(p) = &progress {
            p.done.fetch_add(n, Ordering::Relaxed);
        }
    };
    if threads <= 1 || items.len() <= 1 {
        return with_budget(threads, total, || {
            items.iter().try_for_each(|item| {
                if interrupted() {
                    return Err(interrupted_error());
                }
                task(item)?;
                count(1);
                Ok(())
            })
        });
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
    // One item; false when the run is over (an error, or asked to stop).
    let run_one = |item: &T| -> bool {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if let Err(e) = task(item) {
            stop.store(true, Ordering::Relaxed);
            let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(e);
            return false;
        }
        count(1);
        true
    };
    let work = || {
        while let Some(run) = claim() {
            if !items[run].iter().all(run_one) {
                return;
            }
        }
    };
    let stop_if_asked = || {
        if interrupted() {
            stop.store(true, Ordering::Relaxed);
            let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(interrupted_error);
        }
    };
    // Each worker says when it is done; the caller, once out of items,
    // waits for that here instead of in rayon, so that it can keep asking
    // whether to stop.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let worker = |done: mpsc::Sender<()>| {
        with_budget(share, total, work);
        let _ = done.send(());
    };
    let workers = pool(total.max(2) - 1);
    if rayon::current_thread_index().is_none() {
        // The caller is about to wake idle workers and work alongside
        // them (see steer.rs).
        workers.steer.away_from_caller();
    }
    workers.pool.in_place_scope(|s| {
        for _ in 1..used {
            let done = done_tx.clone();
            s.spawn(move |_| worker(done));
        }
        drop(done_tx);
        with_budget(share, total, || {
            while let Some(run) = claim() {
                let go_on = items[run].iter().all(|item| {
                    stop_if_asked();
                    run_one(item)
                });
                if !go_on {
                    return;
                }
            }
        });
        if checks_interrupts() {
            // Ends when every worker has sent or gone (a panic).
            while let Err(mpsc::RecvTimeoutError::Timeout) | Ok(()) =
                done_rx.recv_timeout(CHECK_EVERY)
            {
                stop_if_asked();
            }
        }
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
    fn an_interrupt_stops_the_run_and_the_pool_works_after_it() {
        fn yes(_: usize, _: usize) -> bool {
            true
        }
        let items: Vec<usize> = (0..400).collect();
        for threads in [1, 3] {
            let ran = AtomicUsize::new(0);
            let e = with_interrupt_check(yes, || {
                run_tasks(&items, threads, |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                    Ok(())
                })
            })
            .unwrap_err();
            assert_eq!(e.kind(), "interrupted");
            // 400 items of 2 ms are 0.8 s of work; a check every 50 ms
            // stops well before the end.
            assert!(ran.load(Ordering::Relaxed) < 300, "{threads}");
            let again = AtomicUsize::new(0);
            run_tasks(&items, threads, |_| {
                again.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
            .unwrap();
            assert_eq!(again.load(Ordering::Relaxed), 400);
        }
    }
}
