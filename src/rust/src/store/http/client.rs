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
//! first request, and again in a process forked after it (their sockets
//! and poll registrations belong to the parent).

use super::HttpOptions;
use crate::error::{Result, ZarrError};
use crate::store::retry::{parse_retry_after, retry_status, Transient};
use std::future::Future;
use std::sync::{Arc, Mutex};
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
    /// The process the runtime was made in, and the runtime with its client.
    io: Mutex<Option<(u32, Arc<Io>)>>,
}

struct Io {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
}

/// The runtime and client of each set of options used in this process (by
/// process id): a store opened again, as every `open_zarr()` of a URL
/// does, reuses them and their open connections. Making them (TLS set-up,
/// a new connection) cost ~5 ms of CPU, several times an open's requests.
/// Never dropped: a forked child must not drop its parent's runtime.
static SHARED: Mutex<Vec<(u32, HttpOptions, Arc<Io>)>> = Mutex::new(Vec::new());

impl Client {
    pub fn new(options: HttpOptions) -> Client {
        Client {
            options,
            io: Mutex::new(None),
        }
    }

    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    fn io(&self) -> Result<Arc<Io>> {
        let pid = std::process::id();
        let mut slot = self.io.lock().unwrap_or_else(|e| e.into_inner());
        match slot.take() {
            Some((made_in, io)) if made_in == pid => {
                *slot = Some((made_in, Arc::clone(&io)));
                return Ok(io);
            }
            // Dropping the parent's runtime here would deregister its
            // sockets from a poll instance the parent still uses.
            Some((_, io)) => std::mem::forget(io),
            None => {}
        }
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, io)) = shared
            .iter()
            .find(|(made_in, o, _)| *made_in == pid && *o == self.options)
        {
            *slot = Some((pid, Arc::clone(io)));
            return Ok(Arc::clone(io));
        }
        let fail = |e: String| ZarrError::Io(format!("cannot start the HTTP client: {e}"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(2)
            .thread_name("zarr-http")
            .build()
            .map_err(|e| fail(e.to_string()))?;
        crate::store::install_crypto_provider();
        let o = &self.options;
        let http = {
            let _inside = runtime.enter();
            reqwest::Client::builder()
                .connect_timeout(o.connect_timeout)
                .read_timeout(o.request_timeout)
                .pool_max_idle_per_host(o.max_concurrency)
                .redirect(reqwest::redirect::Policy::limited(10))
                .user_agent(format!("zarr-r/{}", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| fail(error_chain(&e)))?
        };
        let io = Arc::new(Io { runtime, http });
        *slot = Some((pid, Arc::clone(&io)));
        shared.push((pid, self.options, Arc::clone(&io)));
        Ok(io)
    }

    /// Run the future `f` makes with the client, on the calling thread.
    pub fn run<T, F>(&self, f: impl FnOnce(reqwest::Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T>>,
    {
        let io = self.io()?;
        crate::store::wait::block_on(&io.runtime, f(io.http.clone()))
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

/// The causes of a reqwest error, outermost first, without the URL it
/// names (which may carry a token in its query).
/// Whether the host refused the connection (nothing listens at the port).
fn refused(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
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
