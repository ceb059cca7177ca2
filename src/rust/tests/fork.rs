//! The fork-safety rule of `runtime.rs`, in a process of its own (a test
//! binary runs its tests on threads; a fork while another test held a lock
//! would leave the child waiting for it).

use std::time::Duration;

/// The work a process can hand out: tasks on the pool (with the caller
/// and a worker) and a task on the object stores' runtime.
fn works() -> bool {
    let items: Vec<usize> = (0..1000).collect();
    let sum = std::sync::atomic::AtomicUsize::new(0);
    let ran = zarr::pool::run_tasks(&items, 2, |&i| {
        sum.fetch_add(i, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    let rt = zarr::runtime::io_runtime().unwrap();
    ran.is_ok()
        && sum.into_inner() == 499_500
        && rt.block_on(rt.spawn(async { 6 * 7 })).unwrap() == 42
}

/// A child forked after the pool and the runtime were used makes its own:
/// work handed to them runs there (on the parent's it would wait for
/// ever), and the parent's go on working.
#[cfg(unix)]
#[test]
fn a_forked_child_makes_its_own_pool_and_runtime() {
    assert!(works());
    // SAFETY: this binary's only test runs on this thread; the child runs
    // the package's code and leaves with _exit, without the parent's
    // destructors.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let ok = std::panic::catch_unwind(works);
        unsafe { libc::_exit(if matches!(ok, Ok(true)) { 0 } else { 1 }) };
    }
    let mut status = 0;
    let mut waited = 0;
    while unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) } != child {
        waited += 1;
        if waited > 2000 {
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            panic!("the forked child hung (20 s)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
    assert_eq!(libc::WEXITSTATUS(status), 0, "the child's work failed");
    assert!(works());
}
