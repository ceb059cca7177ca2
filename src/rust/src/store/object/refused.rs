//! A refused connection on the object stores follows the HTTP store's rule
//! (`store/retry.rs`, `REFUSED_RETRIES`): nothing listens at the address,
//! which is a wrong endpoint far more often than a server restarting, so
//! the request fails after a few retries instead of object_store's whole
//! retry budget (minutes by default).
//!
//! object_store decides whether to retry from the kind of the transport
//! error, and counts retries inside its own loop, out of reach. Its HTTP
//! connector is the one seam: the client here counts the refusals of a
//! host in a row (an answer resets the count) and, past the limit, hands
//! object_store the refusal as an error of a kind it does not retry.

use crate::store::retry::REFUSED_RETRIES;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;
use std::sync::atomic::{AtomicUsize, Ordering};

/// object_store's reqwest connector, with refusals counted.
#[derive(Debug, Default)]
pub(super) struct RefusalLimit;

impl HttpConnector for RefusalLimit {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountRefusals {
            inner,
            in_a_row: AtomicUsize::new(0),
        }))
    }
}

#[derive(Debug)]
struct CountRefusals {
    inner: HttpClient,
    /// Refused connections since the last answer.
    in_a_row: AtomicUsize,
}

#[async_trait::async_trait]
impl HttpService for CountRefusals {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        match self.inner.execute(req).await {
            Ok(answer) => {
                self.in_a_row.store(0, Ordering::Relaxed);
                Ok(answer)
            }
            Err(e) if refused(&e) => {
                let n = self.in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
                Err(past_limit(n, e))
            }
            Err(e) => Err(e),
        }
    }
}

/// The error of the `n`th refusal in a row: past `REFUSED_RETRIES` + 1
/// tries, one object_store does not retry.
fn past_limit(n: usize, e: HttpError) -> HttpError {
    if n > REFUSED_RETRIES {
        HttpError::new(HttpErrorKind::Unknown, e)
    } else {
        e
    }
}

/// Whether the host refused the connection.
fn refused(e: &HttpError) -> bool {
    crate::store::retry::connection_refused(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal() -> HttpError {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        HttpError::new(HttpErrorKind::Connect, io)
    }

    #[test]
    fn refusals_past_the_limit_are_errors_object_store_does_not_retry() {
        assert!(refused(&refusal()));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(!refused(&HttpError::new(HttpErrorKind::Interrupted, reset)));
        for n in 1..=REFUSED_RETRIES {
            assert_eq!(past_limit(n, refusal()).kind(), HttpErrorKind::Connect);
        }
        let last = past_limit(REFUSED_RETRIES + 1, refusal());
        assert_eq!(last.kind(), HttpErrorKind::Unknown);
        assert!(refused(&last), "the refusal stays in the message");
    }
}
