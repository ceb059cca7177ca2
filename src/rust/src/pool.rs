//! The package's own rayon pool. R owns the process, so we never touch
//! rayon's global pool (another package may configure it); the pool is
//! rebuilt only when the requested thread count changes.

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

static POOL: Mutex<Option<(usize, Arc<ThreadPool>)>> = Mutex::new(None);

/// The pool with `threads` workers (at least one).
pub fn pool(threads: usize) -> Arc<ThreadPool> {
    let threads = threads.max(1);
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((n, p)) = guard.as_ref() {
        if *n == threads {
            return Arc::clone(p);
        }
    }
    let p = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("zarr-worker-{i}"))
            .build()
            .expect("the zarr thread pool could not be started"),
    );
    *guard = Some((threads, Arc::clone(&p)));
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn pool_has_the_requested_threads_and_is_reused() {
        let a = super::pool(2);
        assert_eq!(a.current_num_threads(), 2);
        let b = super::pool(2);
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(super::pool(0).current_num_threads(), 1);
    }
}
