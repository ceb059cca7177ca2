//! Keeping the pool's workers off the CPU of the thread that hands them
//! work.
//!
//! When the caller wakes an idle worker and starts on its own share at
//! once, Linux may queue the worker on the caller's CPU instead of an idle
//! one (kernels that pack virtual CPUs do this on purpose: waking a halted
//! vCPU is dear for the host). The worker then waits until the caller's
//! time slice ends. Measured on a 2-vCPU VM, after a quarter of a second
//! idle: the worker started 1.8 ms late (median of 40) and shared the
//! caller's CPU in 36 of 40 wakes; with its affinity set to the other CPUs
//! first, 90 us late and never on the caller's CPU. A read of four chunks
//! (2.6 ms of work) was done by the caller alone before.
//!
//! The workers' affinity is only changed when the caller's CPU is not the
//! one they already avoid, so a run of calls from one CPU makes no system
//! calls; a caller allowed on a single CPU leaves the workers as they are.

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::{AtomicI32, Ordering};

    pub struct Steer {
        tids: Vec<libc::pid_t>,
        /// The CPU the workers avoid now; -1 for none.
        avoided: AtomicI32,
    }

    impl Steer {
        pub fn of(pool: &rayon::ThreadPool) -> Steer {
            // SAFETY: gettid has no preconditions.
            let tids = pool.broadcast(|_| unsafe { libc::gettid() });
            Steer {
                tids,
                avoided: AtomicI32::new(-1),
            }
        }

        pub fn away_from_caller(&self) {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() };
            if cpu < 0 || self.tids.is_empty() || self.avoided.load(Ordering::Relaxed) == cpu {
                return;
            }
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: an all-zero cpu_set_t is the empty set; the calls get
            // its true size, and a failure (more CPUs than the set holds)
            // leaves the workers as they are.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(0, size, &mut set) != 0 {
                    return;
                }
                libc::CPU_CLR(cpu as usize, &mut set);
                if libc::CPU_COUNT(&set) == 0 {
                    return;
                }
                for &tid in &self.tids {
                    libc::sched_setaffinity(tid, size, &set);
                }
            }
            self.avoided.store(cpu, Ordering::Relaxed);
        }

        /// The CPU the workers avoid, -1 for none.
        #[cfg(test)]
        pub fn avoided(&self) -> i32 {
            self.avoided.load(Ordering::Relaxed)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub struct Steer;

    impl Steer {
        pub fn of(_pool: &rayon::ThreadPool) -> Steer {
            Steer
        }

        pub fn away_from_caller(&self) {}
    }
}

pub use imp::Steer;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn cpus_of(tid: libc::pid_t) -> Vec<usize> {
        // SAFETY: as in away_from_caller.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    #[test]
    fn workers_avoid_the_callers_cpu_and_keep_the_others() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let steer = Steer::of(&pool);
        let tids = pool.broadcast(|_| unsafe { libc::gettid() });
        let allowed = cpus_of(0);
        steer.away_from_caller();
        let avoided = steer.avoided();
        for tid in tids {
            let got = cpus_of(tid);
            if allowed.len() > 1 {
                // The CPU the caller was on is avoided; every other
                // allowed CPU stays open.
                assert!(allowed.contains(&(avoided as usize)));
                let mut want = allowed.clone();
                want.retain(|&c| c != avoided as usize);
                assert_eq!(got, want);
            } else {
                // a caller allowed on one CPU leaves the workers alone
                assert_eq!(avoided, -1);
                assert_eq!(got, allowed);
            }
        }
        // The pool still runs work.
        assert_eq!(pool.install(|| 6 * 7), 42);
    }
}
