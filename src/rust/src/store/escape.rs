//! Percent-encoding of the URLs the stores build, through the
//! `percent-encoding` crate (the one `url` uses), with the two byte sets
//! they need: one for keys and reference-file paths, one for the URLs a
//! user gives.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS, NON_ALPHANUMERIC};

/// Everything but RFC 3986's unreserved characters and "/": a store key
/// (or a path below a URL) whose segments are kept apart.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// What a URL a user typed cannot hold as it is: controls, space,
/// non-ASCII bytes and the characters RFC 3986 excludes; reserved
/// characters and existing escapes ("%") are kept.
const URL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `path` appended to `out`, every byte but unreserved ones and "/"
/// escaped.
pub(crate) fn push_path(out: &mut String, path: &str) {
    out.extend(utf8_percent_encode(path, PATH));
}

/// `path` with every byte but unreserved ones and "/" escaped.
pub(crate) fn path(path: &str) -> String {
    utf8_percent_encode(path, PATH).to_string()
}

/// `url` (part of one) appended to `out`, with what a URL cannot hold
/// escaped.
pub(crate) fn push_url(out: &mut String, url: &str) {
    out.extend(utf8_percent_encode(url, URL));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_escape_all_but_unreserved_characters_and_slashes() {
        assert_eq!(path("a b/ü%.bin"), "a%20b/%C3%BC%25.bin");
        assert_eq!(path("x#y?z=1&w"), "x%23y%3Fz%3D1%26w");
        assert_eq!(path("c/0.1/refs.0.parq"), "c/0.1/refs.0.parq");
        assert_eq!(path("A-z_0~9"), "A-z_0~9");
        assert_eq!(
            path("+:@!$'()*,;[]\t\u{7f}"),
            "%2B%3A%40%21%24%27%28%29%2A%2C%3B%5B%5D%09%7F"
        );
        assert_eq!(path("日本"), "%E6%97%A5%E6%9C%AC");
        let mut out = String::from("http://h/b/");
        push_path(&mut out, "a b/c");
        assert_eq!(out, "http://h/b/a%20b/c");
    }

    #[test]
    fn urls_keep_reserved_characters_and_escapes() {
        let mut out = String::new();
        push_url(&mut out, "example.org/a b/ü/%2F/x#y?q=1&r=[2]:@!$'()*+,;");
        assert_eq!(out, "example.org/a%20b/%C3%BC/%2F/x#y?q=1&r=[2]:@!$'()*+,;");
        let mut out = String::new();
        push_url(&mut out, "\"<>\\^`{|}\t\u{7f}~");
        assert_eq!(out, "%22%3C%3E%5C%5E%60%7B%7C%7D%09%7F~");
    }
}
