//! Where a file store is: its root argument (a path or a `file://` URI)
//! as a path, and the checks of a key segment that becomes a file name.

use super::*;

/// Turn the `root` argument into a path: `file://` URIs (RFC 8089, the
/// canonical URI of this store) are percent-decoded, anything else is a path.
pub(super) fn root_path(root: &str) -> Result<PathBuf> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid store root '{}': {why}",
            root.escape_debug()
        )))
    };
    if root.is_empty() {
        return bad("empty path");
    }
    if root.contains('\0') {
        return bad("NUL characters are not allowed");
    }
    let path = match file_url_parts(root) {
        None => return Ok(PathBuf::from(root)),
        Some(Ok(path)) => path,
        Some(Err(host)) => {
            return Err(ZarrError::Unsupported(format!(
                "file URI '{root}' names the remote host '{host}'; only local files are supported"
            )))
        }
    };
    if !path.starts_with('/') {
        return bad("a file URI needs an absolute path");
    }
    let decoded = match percent_decode(path) {
        Some(d) => d,
        None => return bad("malformed percent-encoding or not UTF-8"),
    };
    if decoded.contains('\0') {
        return bad("NUL characters are not allowed");
    }
    Ok(local_path(decoded))
}

/// The still percent-encoded path of a `file:` URL (RFC 8089), with or
/// without an authority; None when `s` is not a file URL, Err(host) when
/// it names a host other than this one.
pub(crate) fn file_url_parts(s: &str) -> Option<std::result::Result<&str, &str>> {
    let rest = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("file:"))
        .map(|_| &s[5..])?;
    let Some(authority_path) = rest.strip_prefix("//") else {
        return Some(Ok(rest));
    };
    let (host, path) = match authority_path.find('/') {
        Some(i) => authority_path.split_at(i),
        None => (authority_path, ""),
    };
    if host.is_empty() || host.eq_ignore_ascii_case("localhost") {
        Some(Ok(path))
    } else {
        Some(Err(host))
    }
}

/// The local path of a decoded file URL path.
pub(crate) fn local_path(decoded: String) -> PathBuf {
    // "file:///C:/data" is the drive path "C:/data" on Windows.
    #[cfg(windows)]
    {
        let b = decoded.as_bytes();
        if b.len() >= 3 && b[1].is_ascii_alphabetic() && b[2] == b':' {
            return PathBuf::from(&decoded[1..]);
        }
    }
    PathBuf::from(decoded)
}

/// Decode %XX escapes; None for a malformed escape or a result that is
/// not UTF-8. (Also used for the file URLs of reference sets.)
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            // from_str_radix alone would take a sign: "%+1".
            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `check_segment` of every segment of the valid key `key`. On Unix only a
/// temporary file's name can be refused, so one search of the whole key
/// tells whether any segment needs looking at: this runs for every chunk
/// read or written.
pub(super) fn check_segments(key: &str) -> Result<()> {
    let temp_name = key
        .match_indices(TEMP_PREFIX)
        .any(|(i, _)| i == 0 || key.as_bytes()[i - 1] == b'/');
    if cfg!(unix) && !temp_name {
        return Ok(());
    }
    key.split('/').try_for_each(|seg| check_segment(key, seg))
}

/// validate_key already refuses "..", "/" and "\\"; this also refuses what
/// the platform would read as more than one plain name (a drive "C:" or an
/// alternate data stream on Windows), and the names of temporary files.
pub(super) fn check_segment(key: &str, seg: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(ZarrError::InvalidKey(format!(
            "invalid key '{}': {why}",
            key.escape_debug()
        )))
    };
    if seg.starts_with(TEMP_PREFIX) {
        return bad(&format!(
            "names starting with '{TEMP_PREFIX}' are reserved for temporary files"
        ));
    }
    if cfg!(windows) && seg.contains(':') {
        return bad("':' is not allowed in a file name");
    }
    // On Unix a segment of a valid key (no "/", not empty, "." or "..")
    // is always one plain name: the parse below would only cost time, once
    // per segment of every chunk read or written.
    if cfg!(unix) {
        debug_assert!(crate::store::validate_key(seg).is_ok());
        return Ok(());
    }
    let mut parts = Path::new(seg).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(c)), None) if c == seg => Ok(()),
        _ => bad("not a plain file name"),
    }
}
