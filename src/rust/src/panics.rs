//! Panics the package catches itself: the guard around every call from R,
//! and the Parquet reader around a decoder that asserts on malformed
//! files. A caught panic becomes a classed error whose message carries the
//! panic's, so Rust's own report on stderr ("thread ... panicked at ...",
//! and a backtrace when RUST_BACKTRACE is set) would only repeat it, in a
//! form an R user cannot act on. The hook installed here stays quiet for
//! those panics and keeps the previous hook's output for every other one.
//!
//! A panic is caught when it happens on a thread inside [`catch`], or on
//! one of the package's own threads (named "zarr-...": the engine's
//! workers, the object stores' runtimes) while some thread is inside
//! [`catch`]: their work is only ever started from a caught call, and a
//! worker's panic is resumed on the calling thread, where it is caught.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

thread_local! {
    /// How deep this thread is in [`catch`] calls.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// How many [`catch`] calls are running, on all threads.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

static INSTALL: Once = Once::new();

/// Leaves the counts right when `f` unwinds, too.
struct Inside;

impl Inside {
    fn enter() -> Inside {
        DEPTH.with(|d| d.set(d.get() + 1));
        RUNNING.fetch_add(1, Ordering::SeqCst);
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `f`, catching a panic, with Rust's report of it kept off stderr.
pub fn catch<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    install_hook();
    let _inside = Inside::enter();
    catch_unwind(AssertUnwindSafe(f))
}

/// The message of a panic's payload (a `String` or `&str`), if it has one.
pub fn message(payload: &(dyn Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
}

/// Whether a panic on this thread, now, will be caught by [`catch`].
pub fn caught_here() -> bool {
    if DEPTH.with(|d| d.get()) > 0 {
        return true;
    }
    RUNNING.load(Ordering::SeqCst) > 0
        && std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("zarr-"))
}

/// Put the quiet hook in front of the one in place (Rust's default, or
/// whatever the process set), once.
fn install_hook() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !caught_here() {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_keeps_its_message_and_the_counts_are_restored() {
        let r = catch(|| -> u8 { panic!("the decoder stopped at page {}", 3) });
        let payload = r.unwrap_err();
        assert_eq!(
            message(&*payload).as_deref(),
            Some("the decoder stopped at page 3")
        );
        assert_eq!(DEPTH.with(|d| d.get()), 0);
        assert_eq!(catch(|| 7).unwrap(), 7);
        let r = catch(|| -> u8 { std::panic::panic_any(42u32) });
        assert_eq!(message(&*r.unwrap_err()), None);
    }

    #[test]
    fn only_panics_inside_catch_or_on_the_packages_threads_during_one_are_quiet() {
        // Other tests of this binary run catch() on their threads: only
        // what this thread and its named threads see is asserted.
        assert!(!caught_here());
        let inner = catch(|| {
            let here = caught_here();
            let worker = std::thread::Builder::new()
                .name("zarr-worker-test".into())
                .spawn(caught_here)
                .unwrap()
                .join()
                .unwrap();
            let other = std::thread::Builder::new()
                .name("someone-else".into())
                .spawn(caught_here)
                .unwrap()
                .join()
                .unwrap();
            (here, worker, other)
        })
        .unwrap();
        assert_eq!(inner, (true, true, false));
        assert!(!caught_here());
    }

    #[test]
    fn a_panic_on_a_worker_is_caught_by_the_caller() {
        let r = catch(|| {
            std::thread::Builder::new()
                .name("zarr-worker-panics".into())
                .spawn(|| panic!("worker gave up"))
                .unwrap()
                .join()
                .map_err(|p| message(&*p))
        })
        .unwrap();
        assert_eq!(r, Err(Some("worker gave up".to_string())));
    }
}
