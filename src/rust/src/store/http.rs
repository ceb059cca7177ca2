//! The HTTP store: a read-only store whose keys are paths below a base URL
//! (the layout of the file system store, served by any web server or
//! object store). A value is the body of a GET of `<base URL>/<key>`; byte
//! ranges use the `Range: bytes=` header (RFC 9110, section 14). HTTP has
//! no listing, so hierarchies are found through consolidated metadata
//! (handled above this layer) or are a single root node.
//!
//! One `ureq::Agent` is shared by every request, so connections are kept
//! alive and reused; `get_many` fetches with up to `max_concurrency`
//! requests in flight on threads of its own (never rayon's pool, whose
//! threads must not block on the network).

use super::*;
use std::io::ErrorKind;
use std::time::Duration;
use ureq::http::{Response, StatusCode};
use ureq::{Agent, Body};

/// Connection settings of an [`HttpStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// Limit on resolving the host name and opening the connection.
    pub connect_timeout: Duration,
    /// Limit on each read from the connection (the wait for the response
    /// headers and for every piece of the body).
    pub read_timeout: Duration,
    /// The most requests `get_many` has in flight at once.
    pub max_concurrency: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            max_concurrency: 16,
        }
    }
}

pub struct HttpStore {
    /// The base URL, percent-encoded, ending in "/", without query.
    base: String,
    /// "" or the query of the given URL ("?token=..."), added to every
    /// request but never shown in messages.
    query: String,
    agent: Agent,
    options: HttpOptions,
}

impl std::fmt::Debug for HttpStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the query: it may hold a token.
        f.debug_struct("HttpStore")
            .field("base", &self.base)
            .field("options", &self.options)
            .finish()
    }
}

/// What a request was for, to word messages.
#[derive(Clone, Copy)]
enum Method {
    Get,
    Head,
}

impl HttpStore {
    /// Open a store at `url` (http:// or https://) with the default options.
    /// No request is made: a server that is down is seen on the first read.
    pub fn open(url: &str) -> Result<HttpStore> {
        HttpStore::with_options(url, HttpOptions::default())
    }

    pub fn with_options(url: &str, options: HttpOptions) -> Result<HttpStore> {
        let (base, query) = normalize_base_url(url)?;
        let concurrency = options.max_concurrency.max(1);
        let config = Agent::config_builder()
            // Statuses are looked at here: 404 is a missing key, not an error.
            .http_status_as_error(false)
            .timeout_resolve(Some(options.connect_timeout))
            .timeout_connect(Some(options.connect_timeout))
            .timeout_per_read(Some(options.read_timeout))
            .timeout_per_write(Some(options.read_timeout))
            .max_idle_connections(concurrency.max(10))
            .max_idle_connections_per_host(concurrency)
            .user_agent(format!("zarr-r/{}", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(HttpStore {
            base,
            query,
            agent: Agent::new_with_config(config),
            options: HttpOptions {
                max_concurrency: concurrency,
                ..options
            },
        })
    }

    /// The base URL, percent-encoded and ending in "/" (without the query).
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The URL of `key` (valid), as shown in messages: without the query.
    fn key_url(&self, key: &str) -> String {
        let mut url = self.base.clone();
        for (i, seg) in key.split('/').enumerate() {
            if i > 0 {
                url.push('/');
            }
            percent_encode_into(&mut url, seg.as_bytes(), |b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
            });
        }
        url
    }

    fn send(
        &self,
        method: Method,
        key: &str,
        url: &str,
        range: Option<&str>,
    ) -> Result<Response<Body>> {
        let full = format!("{url}{}", self.query);
        let result = match method {
            Method::Get => {
                let mut req = self.agent.get(&full);
                if let Some(r) = range {
                    req = req.header("Range", r);
                }
                req.call()
            }
            Method::Head => self.agent.head(&full).call(),
        };
        result.map_err(|e| self.transport_error(method, key, url, e))
    }

    fn read_body(&self, key: &str, url: &str, resp: &mut Response<Body>) -> Result<Vec<u8>> {
        resp.body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_vec()
            .map_err(|e| self.transport_error(Method::Get, key, url, e))
    }

    /// Read and drop a small error body so the connection can be reused; a
    /// large one is left unread (the connection is then closed).
    fn discard_body(resp: &mut Response<Body>) {
        let _ = resp.body_mut().with_config().limit(64 * 1024).read_to_vec();
    }

    fn transport_error(&self, method: Method, key: &str, url: &str, e: ureq::Error) -> ZarrError {
        let what = match method {
            Method::Get => "read",
            Method::Head => "look up",
        };
        let secs = |d: Duration| d.as_secs_f64();
        let why = match &e {
            ureq::Error::Timeout(t) => {
                let limit = match t {
                    ureq::Timeout::Resolve | ureq::Timeout::Connect => self.options.connect_timeout,
                    _ => self.options.read_timeout,
                };
                format!("timed out after {} s", secs(limit))
            }
            ureq::Error::Io(io) if io.kind() == ErrorKind::TimedOut => {
                format!("timed out after {} s", secs(self.options.read_timeout))
            }
            ureq::Error::Io(io) => format!("{io}"),
            ureq::Error::HostNotFound => "host not found".to_string(),
            other => format!("{other}"),
        };
        ZarrError::Io(format!("cannot {what} '{key}' at {url}: {why}"))
    }

    fn status_error(&self, method: Method, key: &str, url: &str, status: StatusCode) -> ZarrError {
        let what = match method {
            Method::Get => "read",
            Method::Head => "look up",
        };
        let reason = status.canonical_reason().unwrap_or("");
        let status = format!("{} {reason}", status.as_u16());
        let status = status.trim_end();
        if status.starts_with("403") {
            ZarrError::Io(format!("cannot {what} '{key}': {status} from {url}"))
        } else {
            ZarrError::Io(format!(
                "cannot {what} '{key}': HTTP status {status} from {url}"
            ))
        }
    }

    /// A metadata document that came back as a web page (a server that
    /// answers every path with a page, a login page, a wrong URL).
    fn check_not_html(
        &self,
        key: &str,
        url: &str,
        resp: &Response<Body>,
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

    fn get_all(&self, key: &str, url: &str) -> Result<Option<Vec<u8>>> {
        let mut resp = self.send(Method::Get, key, url, None)?;
        let status = resp.status();
        if status.is_success() {
            let body = self.read_body(key, url, &mut resp)?;
            self.check_not_html(key, url, &resp, &body)?;
            return Ok(Some(body));
        }
        Self::discard_body(&mut resp);
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        Err(self.status_error(Method::Get, key, url, status))
    }

    fn get_range(&self, key: &str, url: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
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
            return match self.size_of(key, url)? {
                None => Ok(None),
                Some(len) => {
                    let (start, end) = resolve_range(key, len, range)?;
                    if start == end {
                        Ok(Some(Vec::new()))
                    } else {
                        // Only overflowing ranges get here, and those are
                        // past the end of any value.
                        Err(ZarrError::CorruptChunk(format!(
                            "byte range {range:?} of '{key}' cannot be requested"
                        )))
                    }
                }
            };
        };
        let mut resp = self.send(Method::Get, key, url, Some(&spec))?;
        let status = resp.status();
        match status {
            StatusCode::PARTIAL_CONTENT => {
                let content_range = header(&resp, "content-range").and_then(parse_content_range);
                let body = self.read_body(key, url, &mut resp)?;
                self.check_not_html(key, url, &resp, &body)?;
                self.check_partial(key, url, range, content_range, &body)?;
                Ok(Some(body))
            }
            // The server ignored the Range header: cut the whole value here.
            s if s.is_success() => {
                let body = self.read_body(key, url, &mut resp)?;
                self.check_not_html(key, url, &resp, &body)?;
                slice_range(key, body, range).map(Some)
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                let total = header(&resp, "content-range")
                    .and_then(parse_content_range)
                    .and_then(|c| c.total);
                Self::discard_body(&mut resp);
                let total = match total {
                    Some(t) => t,
                    None => match self.size_of(key, url)? {
                        Some(t) => t,
                        None => return Ok(None),
                    },
                };
                let (start, end) = resolve_range(key, total, range)?;
                if start == end {
                    Ok(Some(Vec::new()))
                } else {
                    Err(ZarrError::Io(format!(
                        "cannot read '{key}': {url} refused the byte range {spec} of its {total} bytes"
                    )))
                }
            }
            StatusCode::NOT_FOUND => {
                Self::discard_body(&mut resp);
                Ok(None)
            }
            _ => {
                Self::discard_body(&mut resp);
                Err(self.status_error(Method::Get, key, url, status))
            }
        }
    }

    /// A 206 response holds exactly the bytes asked for; a range past the
    /// end of the value is the same error as in every other store.
    fn check_partial(
        &self,
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
            ) if b.checked_sub(a).map(|d| d + 1) != Some(got) => {
                bad(format!("{} bytes", b - a + 1))
            }
            (_, Some(n)) if n != got => bad(format!("{n} bytes")),
            _ => Ok(()),
        }
    }

    /// The size of the value at `key` (valid) at `url`: HEAD's
    /// Content-Length, or a one-byte ranged GET when HEAD is refused or
    /// gives no length.
    fn size_of(&self, key: &str, url: &str) -> Result<Option<u64>> {
        let mut resp = self.send(Method::Head, key, url, None)?;
        let status = resp.status();
        if status.is_success() {
            if let Some(n) = header(&resp, "content-length").and_then(|v| v.trim().parse().ok()) {
                return Ok(Some(n));
            }
            return self.probe(key, url);
        }
        Self::discard_body(&mut resp);
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => self.probe(key, url),
            _ => Err(self.status_error(Method::Head, key, url, status)),
        }
    }

    /// The size of the value at `key`, from a GET of its first byte.
    fn probe(&self, key: &str, url: &str) -> Result<Option<u64>> {
        let mut resp = self.send(Method::Get, key, url, Some("bytes=0-0"))?;
        let status = resp.status();
        let total = header(&resp, "content-range")
            .and_then(parse_content_range)
            .and_then(|c| c.total);
        match status {
            StatusCode::PARTIAL_CONTENT => {
                Self::discard_body(&mut resp);
                match total {
                    Some(t) => Ok(Some(t)),
                    // The total is not told: only the whole value has it.
                    None => Ok(self.get_all(key, url)?.map(|v| v.len() as u64)),
                }
            }
            s if s.is_success() => Ok(Some(self.read_body(key, url, &mut resp)?.len() as u64)),
            // bytes=0-0 is unsatisfiable only for an empty value.
            StatusCode::RANGE_NOT_SATISFIABLE => {
                Self::discard_body(&mut resp);
                Ok(Some(total.unwrap_or(0)))
            }
            StatusCode::NOT_FOUND => {
                Self::discard_body(&mut resp);
                Ok(None)
            }
            _ => {
                Self::discard_body(&mut resp);
                Err(self.status_error(Method::Get, key, url, status))
            }
        }
    }

    fn no_listing(&self) -> ZarrError {
        ZarrError::Unsupported("listing is not supported by HTTP stores".into())
    }
}

fn header<'a>(resp: &'a Response<Body>, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Keys of metadata documents, whose body must not be a web page.
fn is_metadata_key(key: &str) -> bool {
    ["zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"]
        .iter()
        .any(|m| key.ends_with(m))
}

/// A `Content-Range: bytes a-b/total` header (`*` for either part unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ContentRange {
    first: Option<(u64, u64)>,
    total: Option<u64>,
}

fn parse_content_range(v: &str) -> Option<ContentRange> {
    let v = v.trim();
    let rest = v
        .get(..6)
        .filter(|u| u.eq_ignore_ascii_case("bytes "))
        .map(|_| v[6..].trim_start())?;
    let (range, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    let first = match range.trim() {
        "*" => None,
        r => {
            let (a, b) = r.split_once('-')?;
            let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            if b < a {
                return None;
            }
            Some((a, b))
        }
    };
    Some(ContentRange { first, total })
}

fn percent_encode_into(out: &mut String, bytes: &[u8], keep: impl Fn(u8) -> bool) {
    for &b in bytes {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Check an http(s) URL and split it into a base ending in "/" (with
/// non-ASCII characters and spaces percent-encoded; existing escapes are
/// kept) and its query ("" or "?..."). A fragment is dropped.
fn normalize_base_url(url: &str) -> Result<(String, String)> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid store URL '{}': {why}",
            url.escape_debug()
        )))
    };
    let trimmed = url.trim();
    let scheme_len = ["http://", "https://"]
        .iter()
        .find(|s| {
            trimmed
                .get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s))
        })
        .map(|s| s.len());
    let Some(scheme_len) = scheme_len else {
        return bad("only http:// and https:// URLs are supported");
    };
    let without_fragment = trimmed.split('#').next().unwrap_or("");
    let (location, query) = match without_fragment.find('?') {
        Some(i) => without_fragment.split_at(i),
        None => (without_fragment, ""),
    };
    let rest = &location[scheme_len..];
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return bad("no host");
    }
    let mut base = String::with_capacity(location.len() + 1);
    base.push_str(&location[..scheme_len].to_ascii_lowercase());
    percent_encode_into(&mut base, rest.as_bytes(), |b| {
        b.is_ascii_graphic()
            && !matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            )
    });
    if !base.ends_with('/') {
        base.push('/');
    }
    let mut q = String::new();
    percent_encode_into(&mut q, query.as_bytes(), |b| {
        b.is_ascii_graphic()
            && !matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            )
    });
    let check = format!("{base}{q}");
    match check.parse::<ureq::http::Uri>() {
        Ok(u) if u.host().is_some_and(|h| !h.is_empty()) => Ok((base, q)),
        Ok(_) => bad("no host"),
        Err(e) => bad(&e.to_string()),
    }
}

impl Store for HttpStore {
    fn get(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let url = self.key_url(key);
        match range {
            ByteRange::All => self.get_all(key, &url),
            _ => self.get_range(key, &url, range),
        }
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        validate_key(key)?;
        Err(read_only_error(self, "write", key))
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        Err(read_only_error(self, "erase", key))
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        Err(read_only_error(self, "erase prefix", prefix))
    }

    fn list(&self) -> Result<Vec<String>> {
        Err(self.no_listing())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Err(self.no_listing())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        validate_prefix(prefix)?;
        Err(self.no_listing())
    }

    fn exists(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        let url = self.key_url(key);
        let mut resp = self.send(Method::Head, key, &url, None)?;
        let status = resp.status();
        if status.is_success() {
            return Ok(true);
        }
        Self::discard_body(&mut resp);
        match status {
            StatusCode::NOT_FOUND => Ok(false),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => {
                Ok(self.probe(key, &url)?.is_some())
            }
            _ => Err(self.status_error(Method::Head, key, &url, status)),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        self.size_of(key, &self.key_url(key))
    }

    fn read_only(&self) -> bool {
        true
    }

    fn supports_partial_reads(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("HTTP store at {}", self.base)
    }

    /// Up to `max_concurrency` requests in flight, on scoped threads (the
    /// calling thread is one of them) sharing the agent's connections;
    /// results are in the order of `requests`.
    fn get_many(&self, requests: &[(String, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let n = requests.len();
        fetch_concurrently(n, n.min(self.options.max_concurrency), |i| {
            let (key, range) = &requests[i];
            self.get(key, *range)
        })
    }

    fn prefers_batches(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    //! Against the test server of `store::test_server`, which can ignore
    //! Range headers, refuse HEAD, answer with HTML or hang.
    use super::*;
    use crate::store::test_server::{self, Mode, Server};
    use crate::store::tests::check_range_reads;
    use std::net::TcpListener;
    use std::time::Instant;

    fn serve(files: &[(&str, Vec<u8>)], mode: Mode) -> Server {
        test_server::serve("/data", files, mode)
    }

    fn value() -> Vec<u8> {
        (0..100).collect()
    }

    fn files() -> Vec<(&'static str, Vec<u8>)> {
        vec![
            ("r", value()),
            ("e", vec![]),
            (
                "zarr.json",
                br#"{"zarr_format":3,"node_type":"group"}"#.to_vec(),
            ),
            ("a b/ü%.bin", b"odd".to_vec()),
            ("big", vec![7u8; 123_457]),
        ]
    }

    fn store_for(server: &Server) -> HttpStore {
        HttpStore::open(&server.url).unwrap()
    }

    fn kind<T: std::fmt::Debug>(r: Result<T>, kind: &str) -> ZarrError {
        match r {
            Err(e) => {
                assert_eq!(e.kind(), kind, "wrong kind: {e}");
                e
            }
            Ok(v) => panic!("expected a {kind} error, got Ok({v:?})"),
        }
    }

    #[test]
    fn http_get_whole_values_and_missing_keys() {
        let server = serve(&files(), Mode::default());
        let store = store_for(&server);
        assert_eq!(store.get("r", ByteRange::All).unwrap(), Some(value()));
        assert_eq!(store.get("e", ByteRange::All).unwrap(), Some(vec![]));
        assert_eq!(
            store.get("big", ByteRange::All).unwrap(),
            Some(vec![7u8; 123_457])
        );
        assert_eq!(store.get("nope", ByteRange::All).unwrap(), None);
        assert_eq!(store.get("a/b/c", ByteRange::All).unwrap(), None);
        assert!(store.read_only());
        assert!(store.supports_partial_reads());
        assert!(store.prefers_batches());
        assert_eq!(store.describe(), format!("HTTP store at {}/", server.url));
    }

    #[test]
    fn http_byte_ranges_use_range_requests() {
        let server = serve(&files(), Mode::default());
        let store = store_for(&server);
        check_range_reads(&store);
        let s = server.stats.lock().unwrap();
        assert!(s.ranges.iter().any(|r| r.as_deref() == Some("bytes=10-14")));
        assert!(s.ranges.iter().any(|r| r.as_deref() == Some("bytes=42-")));
        assert!(s.ranges.iter().any(|r| r.as_deref() == Some("bytes=-10")));
    }

    #[test]
    fn http_byte_ranges_are_cut_locally_when_the_server_ignores_them() {
        let mode = Mode {
            ignore_range: true,
            ..Mode::default()
        };
        let server = serve(&files(), mode);
        check_range_reads(&store_for(&server));
    }

    #[test]
    fn http_exists_and_size_use_head_or_a_ranged_get() {
        for mode in [
            Mode::default(),
            Mode {
                no_head: true,
                ..Mode::default()
            },
            Mode {
                no_content_length_on_head: true,
                ..Mode::default()
            },
        ] {
            let server = serve(&files(), mode);
            let store = store_for(&server);
            for (key, size) in [("e", 0), ("r", 100), ("big", 123_457)] {
                assert!(store.exists(key).unwrap(), "{key}");
                assert_eq!(store.size(key).unwrap(), Some(size), "{key}");
            }
            assert!(!store.exists("nope").unwrap());
            assert_eq!(store.size("nope").unwrap(), None);
            if mode.no_head {
                let s = server.stats.lock().unwrap();
                assert!(s.ranges.iter().any(|r| r.as_deref() == Some("bytes=0-0")));
            }
        }
    }

    #[test]
    fn http_keys_are_validated_and_percent_encoded() {
        let server = serve(&files(), Mode::default());
        let store = store_for(&server);
        assert_eq!(
            store.get("a b/ü%.bin", ByteRange::All).unwrap(),
            Some(b"odd".to_vec())
        );
        assert!(server
            .stats
            .lock()
            .unwrap()
            .paths
            .contains(&"/data/a%20b/%C3%BC%25.bin".to_string()));
        let before = server.stats.lock().unwrap().requests;
        for &key in crate::store::tests::BAD_KEYS {
            kind(store.get(key, ByteRange::All), "invalid_key");
            kind(store.exists(key), "invalid_key");
            kind(store.size(key), "invalid_key");
            kind(store.set(key, b"x"), "invalid_key");
        }
        assert_eq!(server.stats.lock().unwrap().requests, before, "no request");
    }

    #[test]
    fn http_base_urls_are_normalized() {
        let (b, q) = normalize_base_url("HTTP://example.org/a b/ü").unwrap();
        assert_eq!(b, "http://example.org/a%20b/%C3%BC/");
        assert_eq!(q, "");
        let (b, q) = normalize_base_url("https://example.org/x/?sig=1%2B2#frag").unwrap();
        assert_eq!(b, "https://example.org/x/");
        assert_eq!(q, "?sig=1%2B2");
        let (b, _) = normalize_base_url("http://127.0.0.1:8080").unwrap();
        assert_eq!(b, "http://127.0.0.1:8080/");
        for bad in [
            "ftp://example.org/x",
            "/local/path",
            "http://",
            "http:///x",
            "",
        ] {
            kind(HttpStore::open(bad), "invalid_key");
        }
        let s = HttpStore::open("http://example.org/data").unwrap();
        assert_eq!(s.key_url("c/0/1"), "http://example.org/data/c/0/1");
        assert_eq!(s.key_url(".zarray"), "http://example.org/data/.zarray");
    }

    #[test]
    fn http_query_is_sent_with_every_request_but_not_shown() {
        let server = serve(&files(), Mode::default());
        let store = HttpStore::open(&format!("{}?token=abc", server.url)).unwrap();
        assert_eq!(store.get("r", ByteRange::All).unwrap(), Some(value()));
        assert!(server
            .stats
            .lock()
            .unwrap()
            .paths
            .contains(&"/data/r?token=abc".to_string()));
        assert!(!store.describe().contains("token"));
    }

    #[test]
    fn http_errors_name_the_url_and_status() {
        let server = serve(&files(), Mode::default());
        let store = store_for(&server);
        let e = kind(store.get("forbidden/x", ByteRange::All), "io");
        assert!(e.message().contains("403 Forbidden"), "{e}");
        assert!(
            e.message().contains(&format!("{}/forbidden/x", server.url)),
            "{e}"
        );
        kind(store.get("forbidden/x", ByteRange::Suffix(2)), "io");
        kind(store.exists("forbidden/x"), "io");
        kind(store.size("forbidden/x"), "io");
        let e = kind(store.get("broken/x", ByteRange::All), "io");
        assert!(e.message().contains("500"), "{e}");
        assert!(
            e.message().contains(&format!("{}/broken/x", server.url)),
            "{e}"
        );
    }

    #[test]
    fn http_html_instead_of_metadata_is_a_metadata_error() {
        let server = serve(
            &files(),
            Mode {
                html: true,
                ..Mode::default()
            },
        );
        let store = store_for(&server);
        for key in [
            "zarr.json",
            "g/.zarray",
            ".zmetadata",
            ".zgroup",
            "a/.zattrs",
        ] {
            let e = kind(store.get(key, ByteRange::All), "metadata");
            assert!(e.message().contains("returned HTML"), "{e}");
            assert!(e.message().contains(&format!("'{key}'")), "{e}");
            assert!(e.message().contains(&server.url), "{e}");
        }
        // Other keys are bytes like any other.
        assert!(store.get("c/0", ByteRange::All).unwrap().is_some());
    }

    #[test]
    fn http_writes_and_listings_are_refused() {
        let server = serve(&files(), Mode::default());
        let store = store_for(&server);
        let e = kind(store.set("r", b"x"), "read_only");
        assert!(
            e.message().contains("'r'") && e.message().contains("HTTP store"),
            "{e}"
        );
        kind(store.erase("r"), "read_only");
        kind(store.erase_prefix(""), "read_only");
        kind(store.erase_prefix("a/"), "read_only");
        let e = kind(store.list(), "unsupported");
        assert_eq!(e.message(), "listing is not supported by HTTP stores");
        kind(store.list_prefix("a/"), "unsupported");
        kind(store.list_dir(""), "unsupported");
        assert_eq!(store.get("r", ByteRange::All).unwrap(), Some(value()));
    }

    #[test]
    fn http_connection_refused_is_an_io_error() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/x");
        let store = HttpStore::open(&url).unwrap();
        let e = kind(store.get("zarr.json", ByteRange::All), "io");
        assert!(e.message().contains(&format!("{url}/zarr.json")), "{e}");
        kind(store.exists("zarr.json"), "io");
    }

    #[test]
    fn http_https_to_a_plain_server_is_an_io_error_not_a_panic() {
        let server = serve(&files(), Mode::default());
        let url = server.url.replacen("http://", "https://", 1);
        let store = HttpStore::open(&url).unwrap();
        let e = kind(store.get("r", ByteRange::All), "io");
        assert!(e.message().contains(&format!("{url}/r")), "{e}");
    }

    #[test]
    fn http_timeouts_are_io_errors_naming_the_limit() {
        let server = serve(
            &files(),
            Mode {
                hang: true,
                ..Mode::default()
            },
        );
        let options = HttpOptions {
            read_timeout: Duration::from_millis(300),
            ..HttpOptions::default()
        };
        let store = HttpStore::with_options(&server.url, options).unwrap();
        let t0 = Instant::now();
        let e = kind(store.get("r", ByteRange::All), "io");
        assert!(t0.elapsed() < Duration::from_secs(3));
        assert!(e.message().contains("timed out after 0.3 s"), "{e}");
        assert!(e.message().contains(&format!("{}/r", server.url)), "{e}");
    }

    #[test]
    fn http_get_many_is_concurrent_ordered_and_reuses_connections() {
        let mut fs: Vec<(String, Vec<u8>)> = (0..64)
            .map(|i| (format!("c/{i}"), vec![i as u8; 100 + i]))
            .collect();
        fs.push(("zarr.json".into(), b"{}".to_vec()));
        let files: Vec<(&str, Vec<u8>)> = fs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let server = serve(
            &files,
            Mode {
                delay_ms: 50,
                ..Mode::default()
            },
        );
        let store = store_for(&server);
        let mut requests: Vec<(String, ByteRange)> = (0..64)
            .map(|i| (format!("c/{i}"), ByteRange::All))
            .collect();
        requests.push(("missing".into(), ByteRange::All));
        requests.push(("c/3".into(), ByteRange::Suffix(2)));
        requests.push(("../bad".into(), ByteRange::All));
        let t0 = Instant::now();
        let got = store.get_many(&requests);
        let elapsed = t0.elapsed();
        assert_eq!(got.len(), requests.len());
        for (i, r) in got.iter().take(64).enumerate() {
            assert_eq!(
                r.as_ref().unwrap().as_deref(),
                Some(&vec![i as u8; 100 + i][..])
            );
        }
        assert_eq!(got[64].as_ref().unwrap(), &None);
        assert_eq!(got[65].as_ref().unwrap().as_deref(), Some(&[3u8, 3][..]));
        assert_eq!(got[66].as_ref().unwrap_err().kind(), "invalid_key");
        // 66 requests of 50 ms one after another take 3.3 s; 16 at a time
        // about 0.25 s.
        assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
        let s = server.stats.lock().unwrap();
        assert!(
            s.max_in_flight > 1 && s.max_in_flight <= 16,
            "{}",
            s.max_in_flight
        );
        drop(s);
        // A second batch reuses the idle connections of the first.
        let before = server.stats.lock().unwrap().connections;
        let again = store.get_many(&requests[..16]);
        assert!(again.iter().all(|r| r.is_ok()));
        let s = server.stats.lock().unwrap();
        assert!(
            s.connections - before <= 4,
            "{} new connections",
            s.connections - before
        );
        assert!(s.connections <= 20, "{} connections", s.connections);
    }

    #[test]
    fn http_content_range_parsing() {
        assert_eq!(
            parse_content_range("bytes 0-9/100"),
            Some(ContentRange {
                first: Some((0, 9)),
                total: Some(100)
            })
        );
        assert_eq!(
            parse_content_range("bytes */100"),
            Some(ContentRange {
                first: None,
                total: Some(100)
            })
        );
        assert_eq!(
            parse_content_range("bytes 5-6/*"),
            Some(ContentRange {
                first: Some((5, 6)),
                total: None
            })
        );
        assert_eq!(parse_content_range("bytes 9-1/100"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
    }
}
