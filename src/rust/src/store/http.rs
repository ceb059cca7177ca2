//! The HTTP store: a read-only store whose keys are paths below a base URL
//! (the layout of the file system store, served by any web server or
//! object store). A value is the body of a GET of `<base URL>/<key>`; byte
//! ranges use the `Range: bytes=` header (RFC 9110, section 14). HTTP has
//! no listing, so hierarchies are found through consolidated metadata
//! (handled above this layer) or are a single root node.
//!
//! Requests go through one client per store (`client.rs`), so connections
//! are kept alive and reused; `get_many` keeps up to `max_concurrency`
//! requests in flight. A shard read pins the shard's version by the
//! ETag of its index (`get_pinned`): its inner chunks are asked for with
//! `If-Match`, so a shard replaced meanwhile is noticed, not mixed.

use super::*;
use crate::store::retry::{Attempts, Next, RetryPolicy};
use address::{is_metadata_key, normalize_base_url, parse_content_range, ContentRange};
use client::{header, Client, Fail, Method, Try};
use futures::stream::{self, StreamExt};
use reqwest::StatusCode;
use std::time::Duration;

mod address;
mod client;
mod pinned;
#[cfg(test)]
mod tests;

/// Connection settings of an [`HttpStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// Limit on resolving the host name and opening the connection.
    pub connect_timeout: Duration,
    /// Limit on each wait for the server (for the response headers and
    /// for every piece of the body): a stalled request fails after it,
    /// however long a slow but steady download takes.
    pub request_timeout: Duration,
    /// The most requests `get_many` has in flight at once.
    pub max_concurrency: usize,
    /// When a failed request is tried again.
    pub retry: RetryPolicy,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_concurrency: 16,
            retry: RetryPolicy::default(),
        }
    }
}

pub struct HttpStore {
    /// The base URL, percent-encoded, ending in "/", without query.
    base: String,
    /// "" or the query of the given URL ("?token=..."), added to every
    /// request but never shown in messages.
    query: String,
    client: Client,
}

impl std::fmt::Debug for HttpStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the query: it may hold a token.
        f.debug_struct("HttpStore")
            .field("base", &self.base)
            .field("options", self.client.options())
            .finish()
    }
}

/// A value as fetched, with the version tag the server gave it.
type Versioned = (Vec<u8>, Option<String>);

/// The strong ETag of a response. A weak one (`W/"..."`) never matches in
/// `If-Match` (RFC 9110, 13.1.1), so it cannot pin a version.
fn strong_etag(resp: &reqwest::Response) -> Option<String> {
    header(resp, "etag")
        .map(str::trim)
        .filter(|t| t.starts_with('"'))
        .map(str::to_string)
}

impl HttpStore {
    /// Open a store at `url` (http:// or https://) with the default options.
    /// No request is made: a server that is down is seen on the first read.
    pub fn open(url: &str) -> Result<HttpStore> {
        HttpStore::with_options(url, HttpOptions::default())
    }

    pub fn with_options(url: &str, options: HttpOptions) -> Result<HttpStore> {
        let (base, query) = normalize_base_url(url)?;
        Ok(HttpStore {
            base,
            query,
            client: Client::new(HttpOptions {
                max_concurrency: options.max_concurrency.max(1),
                ..options
            }),
        })
    }

    /// The base URL, percent-encoded and ending in "/" (without the query).
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The URL of `key` (valid), as shown in messages: without the query.
    fn key_url(&self, key: &str) -> String {
        let mut url = self.base.clone();
        crate::store::escape::push_path(&mut url, key);
        url
    }

    async fn send(
        &self,
        http: &reqwest::Client,
        method: Method,
        key: &str,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Try<reqwest::Response> {
        let full = format!("{url}{}", self.query);
        self.client
            .send(http, method, key, (url, &full), headers)
            .await
    }

    /// A metadata document that came back as a web page (a server that
    /// answers every path with a page, a login page, a wrong URL).
    fn check_not_html(
        &self,
        key: &str,
        url: &str,
        resp: &reqwest::Response,
        body: &[u8],
    ) -> Result<()> {
        if !is_metadata_key(key) {
            return Ok(());
        }
        let html_type = header(resp, "content-type")
            .is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("text/html"));
        let start = body
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(body)
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        if html_type || start == Some(&b'<') {
            return Err(ZarrError::Metadata(format!(
                "'{key}' at {url} returned HTML, not Zarr metadata"
            )));
        }
        Ok(())
    }

    /// The body of a successful response, checked, with its ETag. With
    /// `pin`, a response of another version (a server that ignores
    /// If-Match) is refused.
    async fn take_body(
        &self,
        key: &str,
        url: &str,
        pin: Option<&str>,
        resp: &mut reqwest::Response,
    ) -> Try<Versioned> {
        let etag = strong_etag(resp);
        if let (Some(want), Some(got)) = (pin, etag.as_deref()) {
            if want != got {
                return Err(changed(key, url).into());
            }
        }
        let body = self.client.body(key, url, resp).await?;
        self.check_not_html(key, url, resp, &body)?;
        Ok((body, etag))
    }

    /// `range` of the value at `key` (valid), with its ETag; with `pin`,
    /// only from the version of that ETag (a `Conflict` error otherwise).
    async fn fetch(
        &self,
        http: &reqwest::Client,
        key: &str,
        range: ByteRange,
        pin: Option<&str>,
    ) -> Result<Option<Versioned>> {
        let url = self.key_url(key);
        self.retrying(Method::Get, key, &url, || async {
            match range {
                ByteRange::All => self.get_all(http, key, &url, pin).await,
                _ => self.get_range(http, key, &url, range, pin).await,
            }
        })
        .await
    }

    /// The answer of `once` (one try of a request for `key` at `url`),
    /// tried again after transient failures as the retry policy allows.
    /// Every try is a new request with the same headers (an `If-Match`
    /// pin included), so a retried read never mixes versions.
    async fn retrying<T, F, Fut>(&self, method: Method, key: &str, url: &str, once: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Try<T>>,
    {
        let mut attempts = Attempts::new(self.client.options().retry);
        loop {
            let failure = match once().await {
                Ok(v) => return Ok(v),
                Err(Fail::Stop(e)) => return Err(e),
                Err(Fail::Retry(t)) => t,
            };
            match attempts.after(&failure) {
                Next::Wait(d) => tokio::time::sleep(d).await,
                Next::GiveUp => {
                    return Err(ZarrError::Io(format!(
                        "cannot {} '{key}' at {url}: {}",
                        method.verb(),
                        attempts.gave_up(&failure)
                    )))
                }
            }
        }
    }

    async fn get_all(
        &self,
        http: &reqwest::Client,
        key: &str,
        url: &str,
        pin: Option<&str>,
    ) -> Try<Option<Versioned>> {
        let headers: Vec<(&str, &str)> = pin.map(|t| ("If-Match", t)).into_iter().collect();
        let mut resp = self.send(http, Method::Get, key, url, &headers).await?;
        let status = resp.status();
        if status.is_success() {
            return self.take_body(key, url, pin, &mut resp).await.map(Some);
        }
        Client::discard(&mut resp).await;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            StatusCode::PRECONDITION_FAILED if pin.is_some() => Err(changed(key, url).into()),
            _ => Err(self.client.status_error(Method::Get, key, url, &resp)),
        }
    }

    async fn get_range(
        &self,
        http: &reqwest::Client,
        key: &str,
        url: &str,
        range: ByteRange,
        pin: Option<&str>,
    ) -> Try<Option<Versioned>> {
        let spec = match range {
            ByteRange::Range { offset, length } if length > 0 => offset
                .checked_add(length)
                .map(|end| format!("bytes={offset}-{}", end - 1)),
            ByteRange::From(offset) => Some(format!("bytes={offset}-")),
            ByteRange::Suffix(n) if n > 0 => Some(format!("bytes=-{n}")),
            _ => None,
        };
        let Some(spec) = spec else {
            // An empty range (or one past u64) cannot be asked for in a
            // Range header: the size tells whether it is valid.
            return match self.size_of(http, key, url).await? {
                None => Ok(None),
                Some(len) => {
                    let (start, end) = resolve_range(key, len, range)?;
                    if start == end {
                        Ok(Some((Vec::new(), None)))
                    } else {
                        // Only overflowing ranges get here, and those are
                        // past the end of any value.
                        Err(ZarrError::CorruptChunk(format!(
                            "byte range {range:?} of '{key}' cannot be requested"
                        ))
                        .into())
                    }
                }
            };
        };
        let mut headers = vec![("Range", spec.as_str())];
        if let Some(t) = pin {
            headers.push(("If-Match", t));
        }
        let mut resp = self.send(http, Method::Get, key, url, &headers).await?;
        let status = resp.status();
        match status {
            StatusCode::PARTIAL_CONTENT => {
                let content_range = header(&resp, "content-range").and_then(parse_content_range);
                let (body, etag) = self.take_body(key, url, pin, &mut resp).await?;
                check_partial(key, url, range, content_range, &body)?;
                Ok(Some((body, etag)))
            }
            // The server ignored the Range header: cut the whole value here.
            s if s.is_success() => {
                let (body, etag) = self.take_body(key, url, pin, &mut resp).await?;
                Ok(Some((slice_range(key, body, range)?, etag)))
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                let total = header(&resp, "content-range")
                    .and_then(parse_content_range)
                    .and_then(|c| c.total);
                Client::discard(&mut resp).await;
                let total = match total {
                    Some(t) => t,
                    None => match self.size_of(http, key, url).await? {
                        Some(t) => t,
                        None => return Ok(None),
                    },
                };
                let (start, end) = resolve_range(key, total, range)?;
                if start == end {
                    Ok(Some((Vec::new(), None)))
                } else {
                    Err(ZarrError::Io(format!(
                        "cannot read '{key}': {url} refused the byte range {spec} of its {total} bytes"
                    ))
                    .into())
                }
            }
            StatusCode::NOT_FOUND => {
                Client::discard(&mut resp).await;
                Ok(None)
            }
            StatusCode::PRECONDITION_FAILED if pin.is_some() => {
                Client::discard(&mut resp).await;
                Err(changed(key, url).into())
            }
            _ => {
                Client::discard(&mut resp).await;
                Err(self.client.status_error(Method::Get, key, url, &resp))
            }
        }
    }

    /// The size of the value at `key` (valid) at `url`: HEAD's
    /// Content-Length, or a one-byte ranged GET when HEAD is refused or
    /// gives no length.
    async fn size_of(&self, http: &reqwest::Client, key: &str, url: &str) -> Try<Option<u64>> {
        let mut resp = self.send(http, Method::Head, key, url, &[]).await?;
        let status = resp.status();
        if status.is_success() {
            if let Some(n) = header(&resp, "content-length").and_then(|v| v.trim().parse().ok()) {
                return Ok(Some(n));
            }
            return self.probe(http, key, url).await;
        }
        Client::discard(&mut resp).await;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => {
                self.probe(http, key, url).await
            }
            _ => Err(self.client.status_error(Method::Head, key, url, &resp)),
        }
    }

    /// The size of the value at `key`, from a GET of its first byte.
    async fn probe(&self, http: &reqwest::Client, key: &str, url: &str) -> Try<Option<u64>> {
        let mut resp = self
            .send(http, Method::Get, key, url, &[("Range", "bytes=0-0")])
            .await?;
        let status = resp.status();
        let total = header(&resp, "content-range")
            .and_then(parse_content_range)
            .and_then(|c| c.total);
        match status {
            StatusCode::PARTIAL_CONTENT => {
                Client::discard(&mut resp).await;
                match total {
                    Some(t) => Ok(Some(t)),
                    // The total is not told: only the whole value has it.
                    None => Ok(Box::pin(self.get_all(http, key, url, None))
                        .await?
                        .map(|(v, _)| v.len() as u64)),
                }
            }
            s if s.is_success() => Ok(Some(
                self.client.body(key, url, &mut resp).await?.len() as u64
            )),
            // bytes=0-0 is unsatisfiable only for an empty value.
            StatusCode::RANGE_NOT_SATISFIABLE => {
                Client::discard(&mut resp).await;
                Ok(Some(total.unwrap_or(0)))
            }
            StatusCode::NOT_FOUND => {
                Client::discard(&mut resp).await;
                Ok(None)
            }
            _ => {
                Client::discard(&mut resp).await;
                Err(self.client.status_error(Method::Get, key, url, &resp))
            }
        }
    }

    async fn exists_at(&self, http: &reqwest::Client, key: &str, url: &str) -> Try<bool> {
        let mut resp = self.send(http, Method::Head, key, url, &[]).await?;
        let status = resp.status();
        if status.is_success() {
            return Ok(true);
        }
        Client::discard(&mut resp).await;
        match status {
            StatusCode::NOT_FOUND => Ok(false),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => {
                Ok(self.probe(http, key, url).await?.is_some())
            }
            _ => Err(self.client.status_error(Method::Head, key, url, &resp)),
        }
    }

    /// `requests` with up to `max_concurrency` in flight on the calling
    /// thread, results in their order.
    fn fetch_many(
        &self,
        requests: &[(&StoreKey, ByteRange)],
        pin: Option<&str>,
    ) -> Vec<Result<Option<Versioned>>> {
        let n = requests.len();
        let run = self.client.run(|http| async move {
            let http = &http;
            Ok(stream::iter(
                requests
                    .iter()
                    .map(|&(key, range)| async move { self.fetch(http, key, range, pin).await }),
            )
            .buffered(self.client.options().max_concurrency)
            .collect::<Vec<_>>()
            .await)
        });
        match run {
            Ok(got) => got,
            Err(e) => (0..n).map(|_| Err(e.clone())).collect(),
        }
    }
}

/// The error of a read whose value changed since the version it pinned.
fn changed(key: &str, url: &str) -> ZarrError {
    ZarrError::Conflict(format!(
        "'{key}' at {url} changed while it was read (its ETag is not the one read first)"
    ))
}

/// A 206 response holds exactly the bytes asked for; a range past the
/// end of the value is the same error as in every other store.
fn check_partial(
    key: &str,
    url: &str,
    range: ByteRange,
    content_range: Option<ContentRange>,
    body: &[u8],
) -> Result<()> {
    let got = body.len() as u64;
    let bad = |want: String| {
        Err(ZarrError::Io(format!(
            "cannot read '{key}': {url} returned {got} bytes{}, expected {want}",
            match content_range {
                Some(ContentRange {
                    first: Some((a, b)),
                    ..
                }) => format!(" (bytes {a}-{b})"),
                _ => String::new(),
            }
        )))
    };
    if let Some(ContentRange {
        first: Some((first, last)),
        total: Some(total),
    }) = content_range
    {
        let (start, end) = resolve_range(key, total, range)?;
        if first != start || last.checked_add(1) != Some(end) || got != end - start {
            return bad(format!("bytes {start}-{}", end.saturating_sub(1)));
        }
        return Ok(());
    }
    let want = match range {
        ByteRange::Range { length, .. } => Some(length),
        ByteRange::Suffix(n) => Some(n),
        _ => None,
    };
    match (content_range, want) {
        (
            Some(ContentRange {
                first: Some((a, b)),
                ..
            }),
            _,
        ) if b.checked_sub(a).map(|d| d + 1) != Some(got) => bad(format!("{} bytes", b - a + 1)),
        (_, Some(n)) if n != got => bad(format!("{n} bytes")),
        _ => Ok(()),
    }
}

impl Store for HttpStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        let got = self
            .client
            .run(|http| async move { self.fetch(&http, key, range, None).await })?;
        Ok(got.map(|(bytes, _)| bytes))
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        let url = self.key_url(key);
        self.client.run(|http| async move {
            self.retrying(Method::Head, key, &url, || self.exists_at(&http, key, &url))
                .await
        })
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        let url = self.key_url(key);
        self.client.run(|http| async move {
            self.retrying(Method::Head, key, &url, || self.size_of(&http, key, &url))
                .await
        })
    }

    fn describe(&self) -> String {
        format!("HTTP store at {}", self.base)
    }

    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let requests: Vec<(&StoreKey, ByteRange)> = requests.iter().map(|(k, r)| (k, *r)).collect();
        self.fetch_many(&requests, None)
            .into_iter()
            .map(|r| r.map(|v| v.map(|(bytes, _)| bytes)))
            .collect()
    }

    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        Some(self)
    }

    fn as_pinned(&self) -> Option<&dyn PinnedReads> {
        Some(self)
    }
}

impl BatchedReads for HttpStore {}
