//! Waiting for a network answer on R's thread without deafness to Ctrl-C:
//! a request to a server that does not answer runs until its timeout (30
//! s for HTTP), and object_store retries a timed-out request until its
//! retry timeout (180 s by default), all while R waited in `block_on`.
//! On the thread of a fetch (engine/fetch.rs) the wait ends when the read
//! that asked for the values stops: its requests, their retries and their
//! back-off waits do not go on in the background.

use crate::error::Result;
use std::future::Future;
use std::time::Duration;

/// How often R's thread asks whether it was interrupted while it waits.
const ASK_EVERY: Duration = Duration::from_millis(20);

/// `rt.block_on(fut)`, except that on a thread that checks for interrupts
/// (R's) the wait ends with the interrupt error as soon as one comes;
/// `fut` is then dropped, which cancels its requests. On a thread with a
/// cancel flag (`crate::runtime::with_cancel`) it ends likewise when the
/// flag is raised.
pub fn block_on<T>(
    rt: impl std::ops::Deref<Target = tokio::runtime::Runtime>,
    fut: impl Future<Output = Result<T>>,
) -> Result<T> {
    if !crate::pool::checks_interrupts() {
        let Some(cancel) = crate::runtime::cancel_flag() else {
            return rt.block_on(fut);
        };
        return rt.block_on(async {
            let fut = std::pin::pin!(fut);
            let raised = std::pin::pin!(cancel.raised());
            match futures::future::select(fut, raised).await {
                futures::future::Either::Left((done, _)) => done,
                futures::future::Either::Right(_) => Err(cancelled_error()),
            }
        });
    }
    rt.block_on(async {
        let mut fut = std::pin::pin!(fut);
        loop {
            match tokio::time::timeout(ASK_EVERY, &mut fut).await {
                Ok(done) => return done,
                // The check runs R code: on this thread, between polls.
                Err(_) if crate::pool::interrupted() => {
                    return Err(crate::pool::interrupted_error())
                }
                Err(_) => {}
            }
        }
    })
}

/// The error of a request whose read stopped waiting for it.
pub fn cancelled_error() -> crate::error::ZarrError {
    crate::error::ZarrError::Interrupted("the read that asked for this value stopped".into())
}
