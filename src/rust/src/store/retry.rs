//! The retry policy of the network stores: which failures of a request are
//! worth another try, how long to wait before it, and when to give up.
//!
//! A request is tried again after a 5xx status, 408, 429 (after the
//! server's Retry-After, when it gives one in seconds), a connection that
//! failed, was reset or closed before the answer, a body cut short of its
//! Content-Length, and a timeout. The wait doubles from `INITIAL_BACKOFF`
//! up to `MAX_BACKOFF`, each one drawn at random below that bound ("full
//! jitter"), so that many readers that failed together do not come back
//! together. Retrying stops after `max_retries` retries or when the next
//! wait would end past `retry_timeout` since the first try.
//!
//! The HTTP store runs its requests through [`Attempts`]. The object stores
//! hand the same numbers to `object_store`'s own retry loop
//! (`object/config.rs`), which retries the same failures (a body cut short
//! is read on from where it stopped, pinned to its ETag) except that it
//! does not read Retry-After; its refused connections are cut at
//! [`REFUSED_RETRIES`] by `object/refused.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The first wait's upper bound; each retry doubles it.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two tries (a Retry-After may ask for more).
pub const MAX_BACKOFF: Duration = Duration::from_secs(15);
/// Retries of a connection the host refused: nothing listens there, which
/// is a wrong address far more often than a server restarting, so a typo
/// in a URL fails in about a second rather than after the whole budget.
pub const REFUSED_RETRIES: usize = 3;

/// How persistent the network stores are. The defaults let a read ride
/// out a minute of a Wi-Fi link that drops or a server that sheds load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries of one request after its first try.
    pub max_retries: usize,
    /// The longest time from a request's first try to its last.
    pub retry_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 10,
            retry_timeout: Duration::from_secs(120),
        }
    }
}

/// A failed try that may succeed when made again.
#[derive(Debug, Clone)]
pub struct Transient {
    /// What went wrong, as a message says it ("HTTP status 503 Service
    /// Unavailable", "connection closed before the answer").
    pub why: String,
    /// The wait the server asked for (Retry-After).
    pub retry_after: Option<Duration>,
    /// The host refused the connection (see [`REFUSED_RETRIES`]).
    pub refused: bool,
}

/// The tries of one request.
pub struct Attempts {
    policy: RetryPolicy,
    start: Instant,
    tries: usize,
}

/// What to do after a transient failure.
pub enum Next {
    /// Wait this long, then try again.
    Wait(Duration),
    /// Give up: the failure ends the request.
    GiveUp,
}

impl Attempts {
    pub fn new(policy: RetryPolicy) -> Attempts {
        Attempts {
            policy,
            start: Instant::now(),
            tries: 0,
        }
    }

    /// How many tries were made (counting the one that just failed, once
    /// [`Attempts::after`] was called for it).
    pub fn tries(&self) -> usize {
        self.tries
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Count a failed try and say whether to make another.
    pub fn after(&mut self, failure: &Transient) -> Next {
        self.tries += 1;
        let retries = self.tries - 1;
        if retries >= self.policy.max_retries || failure.refused && retries >= REFUSED_RETRIES {
            return Next::GiveUp;
        }
        let wait = failure
            .retry_after
            .unwrap_or_else(|| jittered(backoff_bound(retries)));
        if self.start.elapsed() + wait > self.policy.retry_timeout {
            return Next::GiveUp;
        }
        Next::Wait(wait)
    }

    /// The end of a message for a request that failed for good: how many
    /// tries over how long, and the last failure.
    pub fn gave_up(&self, last: &Transient) -> String {
        let p = self.policy;
        format!(
            "{} after {} {} in {:.1} s (max_retries {}, retry_timeout {} s)",
            last.why,
            self.tries,
            if self.tries == 1 {
                "attempt"
            } else {
                "attempts"
            },
            self.elapsed().as_secs_f64(),
            p.max_retries,
            p.retry_timeout.as_secs_f64()
        )
    }
}

/// The bound of the wait before retry `n` (0 for the first retry).
fn backoff_bound(n: usize) -> Duration {
    let factor = 1u32 << n.min(16);
    INITIAL_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// A wait drawn evenly from [bound / 10, bound]: a little is always waited.
fn jittered(bound: Duration) -> Duration {
    let unit = (next_random() >> 11) as f64 / (1u64 << 53) as f64;
    bound.mul_f64(0.1 + 0.9 * unit)
}

/// splitmix64 over a counter seeded by the clock: jitter only has to differ
/// between requests and processes, not be unpredictable.
fn next_random() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut s = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    if s == 0 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        s = nanos ^ u64::from(std::process::id()) << 32;
        STATE.store(s, Ordering::Relaxed);
    }
    let mut z = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether an answer with this status is worth asking for again: the
/// server failed (5xx), timed out waiting for the request (408) or sheds
/// load (429). 501 (Not Implemented) and 505 never change.
/// Whether an error, or one of its causes, is a refused connection
/// (nothing listens at the port): the HTTP and the object stores both stop
/// retrying those after `REFUSED_RETRIES`.
pub fn connection_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = s.source();
    }
    false
}

pub fn retry_status(status: u16) -> bool {
    matches!(status, 408 | 429) || (500..600).contains(&status) && !matches!(status, 501 | 505)
}

/// A Retry-After header's wait, when it gives one in seconds (RFC 9110,
/// 10.2.3); an HTTP date is not read (the backoff then applies).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: u64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(secs.min(3600)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(retry_after: Option<Duration>) -> Transient {
        Transient {
            why: "HTTP status 503 Service Unavailable".into(),
            retry_after,
            refused: false,
        }
    }

    #[test]
    fn a_refused_connection_is_retried_a_few_times_only() {
        let mut a = Attempts::new(RetryPolicy::default());
        let refused = Transient {
            why: "Connection refused".into(),
            retry_after: Some(Duration::ZERO),
            refused: true,
        };
        for _ in 0..REFUSED_RETRIES {
            assert!(matches!(a.after(&refused), Next::Wait(_)));
        }
        assert!(matches!(a.after(&refused), Next::GiveUp));
        assert_eq!(a.tries(), REFUSED_RETRIES + 1);
        // other failures get the whole budget
        let mut b = Attempts::new(RetryPolicy::default());
        for _ in 0..RetryPolicy::default().max_retries {
            assert!(matches!(
                b.after(&fail(Some(Duration::ZERO))),
                Next::Wait(_)
            ));
        }
        assert!(matches!(b.after(&fail(Some(Duration::ZERO))), Next::GiveUp));
    }

    #[test]
    fn retries_stop_at_max_retries() {
        let mut a = Attempts::new(RetryPolicy {
            max_retries: 3,
            retry_timeout: Duration::from_secs(100),
        });
        let f = fail(Some(Duration::ZERO));
        for _ in 0..3 {
            assert!(matches!(a.after(&f), Next::Wait(d) if d == Duration::ZERO));
        }
        assert!(matches!(a.after(&f), Next::GiveUp));
        assert_eq!(a.tries(), 4);
        assert!(a
            .gave_up(&f)
            .starts_with("HTTP status 503 Service Unavailable after 4 attempts in "));
    }

    #[test]
    fn a_wait_past_the_time_budget_gives_up() {
        let mut a = Attempts::new(RetryPolicy {
            max_retries: 10,
            retry_timeout: Duration::from_secs(2),
        });
        assert!(
            matches!(a.after(&fail(Some(Duration::from_secs(1)))), Next::Wait(d) if d.as_secs() == 1)
        );
        assert!(matches!(
            a.after(&fail(Some(Duration::from_secs(5)))),
            Next::GiveUp
        ));
    }

    #[test]
    fn backoff_doubles_within_its_bounds() {
        assert_eq!(backoff_bound(0), Duration::from_millis(100));
        assert_eq!(backoff_bound(3), Duration::from_millis(800));
        assert_eq!(backoff_bound(40), MAX_BACKOFF);
        for n in 0..8 {
            let b = backoff_bound(n);
            let w = jittered(b);
            assert!(w <= b && w >= b / 10, "{w:?} outside {b:?}");
        }
    }

    #[test]
    fn statuses_and_retry_after() {
        for s in [500, 502, 503, 504, 408, 429] {
            assert!(retry_status(s), "{s}");
        }
        for s in [400, 403, 404, 412, 416, 501, 505] {
            assert!(!retry_status(s), "{s}");
        }
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
