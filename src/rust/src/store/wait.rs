//! Waiting for a network answer on R's thread without deafness to Ctrl-C:
//! a request to a server that does not answer runs until its timeout (30
//! s for HTTP), and object_store retries a timed-out request until its
//! retry timeout (180 s by default), all while R waited in `block_on`.

use crate::error::Result;
use std::future::Future;
use std::time::Duration;

/// How often R's thread asks whether it was interrupted while it waits.
const ASK_EVERY: Duration = Duration::from_millis(20);

/// `rt.block_on(fut)`, except that on a thread that checks for interrupts
/// (R's) the wait ends with the interrupt error as soon as one comes;
/// `fut` is then dropped, which cancels its requests.
pub fn block_on<T>(
    rt: &tokio::runtime::Runtime,
    fut: impl Future<Output = Result<T>>,
) -> Result<T> {
    if !crate::pool::checks_interrupts() {
        return rt.block_on(fut);
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
