//! URLs of the HTTP store: the base URL a user gives, the URL of a key,
//! and the `Content-Range` header of a partial response (RFC 9110, 14.4).

use crate::error::{Result, ZarrError};

/// Keys of metadata documents, whose body must not be a web page.
pub(super) fn is_metadata_key(key: &str) -> bool {
    ["zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"]
        .iter()
        .any(|m| key.ends_with(m))
}

/// A `Content-Range: bytes a-b/total` header (`*` for either part unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ContentRange {
    pub first: Option<(u64, u64)>,
    pub total: Option<u64>,
}

pub(super) fn parse_content_range(v: &str) -> Option<ContentRange> {
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

/// Check an http(s) URL and split it into a base ending in "/" (with
/// non-ASCII characters and spaces percent-encoded; existing escapes are
/// kept) and its query ("" or "?..."). A fragment is dropped.
pub(super) fn normalize_base_url(url: &str) -> Result<(String, String)> {
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
    crate::store::escape::push_url(&mut base, rest);
    if !base.ends_with('/') {
        base.push('/');
    }
    let mut q = String::new();
    crate::store::escape::push_url(&mut q, query);
    let check = format!("{base}{q}");
    match ::url::Url::parse(&check) {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) => Ok((base, q)),
        Ok(_) => bad("no host"),
        Err(e) => bad(&e.to_string()),
    }
}
