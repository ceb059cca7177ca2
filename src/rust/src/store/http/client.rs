//! The HTTP client of the HTTP store: reqwest over hyper, with rustls and
//! ring for https and the platform's root certificates, the stack the
//! object stores use, so the package links one HTTP/TLS implementation.
//!
//! reqwest is async. Each store (stores with the same options share one)
//! drives a current-thread tokio runtime from the thread that reads: a
//! batch of requests is one future with many requests in flight on that
//! one thread, so fetching adds no threads to
//! the engine's pool (which `zarr_num_threads()`, `_R_CHECK_LIMIT_CORES_`
//! and `OMP_THREAD_LIMIT` size) beyond at most two short-lived ones for
//! host name lookups. The runtime and the connections are made on the
//! first request, and again in a process forked after it (`crate::runtime`).

use super::HttpOptions;
use crate::error::{Result, ZarrError};
use crate::runtime::{HttpIo, HttpSettings};
use crate::store::retry::{parse_retry_after, retry_status, Transient};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// What a request was for, to word messages.
#[derive(Clone, Copy)]
pub(super) enum Method {
    Get,
    Head,
}

/// How one try of a request ended when it gave no value.
pub(super) enum Fail {
    /// A failure that another try may not have.
    Retry(Transient),
    /// The answer, final (a refusal, a wrong answer, no memory).
    Stop(ZarrError),
}

impl From<ZarrError> for Fail {
    fn from(e: ZarrError) -> Fail {
        Fail::Stop(e)
    }
}

/// The outcome of one try.
pub(super) type Try<T> = std::result::Result<T, Fail>;

impl Method {
    pub(super) fn verb(self) -> &'static str {
        match self {
            Method::Get => "read",
            Method::Head => "look up",
        }
    }
}

pub(super) struct Client {
    options: HttpOptions,
}

impl Client {
    pub fn new(options: HttpOptions) -> Client {
        Client { options }
    }

    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// This process's runtime and client for these options (shared by the
    /// stores with equal options; see `crate::runtime`).
    fn io(&self) -> Result<Arc<HttpIo>> {
        let o = &self.options;
        crate::runtime::http_io(HttpSettings {
            connect_timeout: o.connect_timeout,
            read_timeout: o.request_timeout,
            max_idle_per_host: o.max_concurrency,
        })
    }

    /// Run the future `f` makes with the client, on the calling thread.
    pub fn run<T, F>(&self, f: impl FnOnce(reqwest::Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T>>,
    {
        let io = self.io()?;
        crate::store::wait::block_on(&io.runtime, f(io.client.clone()))
    }

    /// Send a request for `key` (`url` as shown, `full` as sent: with the
    /// query) with `headers`; a failure to get a response names both.
    pub async fn send(
        &self,
        http: &reqwest::Client,
        method: Method,
        key: &str,
        (url, full): (&str, &str),
        headers: &[(&str, &str)],
    ) -> Try<reqwest::Response> {
        let mut req = match method {
            Method::Get => http.get(full),
            Method::Head => http.head(full),
        };
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.send()
            .await
            .map_err(|e| self.transport_error(method, key, url, &e))
    }

    /// The whole body of `resp`. Its size comes from the server, so memory
    /// is asked for as the bytes arrive and a refusal is an error.
    pub async fn body(&self, key: &str, url: &str, resp: &mut reqwest::Response) -> Try<Vec<u8>> {
        let mut out: Vec<u8> = Vec::new();
        // Content-Length only sizes the first allocation, and is capped:
        // a server may claim anything.
        let hint = resp.content_length().unwrap_or(0).min(1 << 30) as usize;
        let _ = out.try_reserve_exact(hint);
        while let Some(piece) = resp
            .chunk()
            .await
            .map_err(|e| self.transport_error(Method::Get, key, url, &e))?
        {
            out.try_reserve(piece.len()).map_err(|_| {
                ZarrError::Memory(format!(
                    "cannot read '{key}' at {url}: no memory for {} more bytes after {}",
                    piece.len(),
                    out.len()
                ))
            })?;
            out.extend_from_slice(&piece);
        }
        Ok(out)
    }

    /// Read and drop a small error body so the connection can be reused; a
    /// large one is left unread (the connection is then closed).
    pub async fn discard(resp: &mut reqwest::Response) {
        let mut left: usize = 64 * 1024;
        while let Ok(Some(piece)) = resp.chunk().await {
            match left.checked_sub(piece.len()) {
                Some(l) => left = l,
                None => return,
            }
        }
    }

    /// A request that got no (whole) answer: tried again unless the
    /// request itself cannot be made (a bad URL, a redirect loop).
    fn transport_error(&self, method: Method, key: &str, url: &str, e: &reqwest::Error) -> Fail {
        let secs = |d: Duration| d.as_secs_f64();
        let why = if e.is_timeout() {
            let limit = if e.is_connect() {
                self.options.connect_timeout
            } else {
                self.options.request_timeout
            };
            format!("timed out after {} s", secs(limit))
        } else {
            error_chain(e)
        };
        if e.is_builder() || e.is_redirect() {
            return Fail::Stop(ZarrError::Io(format!(
                "cannot {} '{key}' at {url}: {why}",
                method.verb()
            )));
        }
        Fail::Retry(Transient {
            why,
            retry_after: None,
            refused: refused(e),
        })
    }

    /// An answer with an error `status`: a server error or throttling is
    /// tried again (after the server's Retry-After, if `resp` gives one).
    pub fn status_error(
        &self,
        method: Method,
        key: &str,
        url: &str,
        resp: &reqwest::Response,
    ) -> Fail {
        let status = resp.status();
        let reason = status.canonical_reason().unwrap_or("");
        let code = status.as_u16();
        let status = format!("{code} {reason}");
        let status = status.trim_end();
        if retry_status(code) {
            return Fail::Retry(Transient {
                why: format!("HTTP status {status}"),
                retry_after: header(resp, "retry-after").and_then(parse_retry_after),
                refused: false,
            });
        }
        let what = method.verb();
        Fail::Stop(if status.starts_with("403") {
            ZarrError::Io(format!("cannot {what} '{key}': {status} from {url}"))
        } else {
            ZarrError::Io(format!(
                "cannot {what} '{key}': HTTP status {status} from {url}"
            ))
        })
    }
}

/// Whether the host refused the connection (nothing listens at the port).
fn refused(e: &reqwest::Error) -> bool {
    crate::store::retry::connection_refused(e)
}

/// The causes of a reqwest error, outermost first, without the URL it
/// names (which may carry a token in its query).
fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.contains(&text) {
            parts.push(text);
        }
        source = s.source();
    }
    if parts.is_empty() {
        // reqwest's own text names the URL: say the kind instead.
        let kind = if e.is_redirect() {
            "too many redirects"
        } else if e.is_connect() {
            "cannot connect"
        } else if e.is_builder() {
            "not a valid request"
        } else {
            "the request failed"
        };
        parts.push(kind.to_string());
    }
    parts.join(": ")
}

/// A response header as text, if it is text.
pub(super) fn header<'a>(resp: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}
