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

/// Options that give up after two quick retries.
fn impatient() -> HttpOptions {
    HttpOptions {
        retry: crate::store::retry::RetryPolicy {
            max_retries: 2,
            retry_timeout: Duration::from_secs(5),
        },
        ..HttpOptions::default()
    }
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
    assert_eq!(store.get_str("r", ByteRange::All).unwrap(), Some(value()));
    assert_eq!(store.get_str("e", ByteRange::All).unwrap(), Some(vec![]));
    assert_eq!(
        store.get_str("big", ByteRange::All).unwrap(),
        Some(vec![7u8; 123_457])
    );
    assert_eq!(store.get_str("nope", ByteRange::All).unwrap(), None);
    assert_eq!(store.get_str("a/b/c", ByteRange::All).unwrap(), None);
    assert!(store.as_writable().is_none());
    assert!(store.as_batched().is_some());
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
            assert!(store.exists_str(key).unwrap(), "{key}");
            assert_eq!(store.size_str(key).unwrap(), Some(size), "{key}");
        }
        assert!(!store.exists_str("nope").unwrap());
        assert_eq!(store.size_str("nope").unwrap(), None);
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
        store.get_str("a b/ü%.bin", ByteRange::All).unwrap(),
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
        kind(store.get_str(key, ByteRange::All), "invalid_key");
        kind(store.exists_str(key), "invalid_key");
        kind(store.size_str(key), "invalid_key");
        kind(store.set_str(key, b"x"), "invalid_key");
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
    assert_eq!(store.get_str("r", ByteRange::All).unwrap(), Some(value()));
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
    let store = HttpStore::with_options(&server.url, impatient()).unwrap();
    let e = kind(store.get_str("forbidden/x", ByteRange::All), "io");
    assert!(e.message().contains("403 Forbidden"), "{e}");
    assert!(
        e.message().contains(&format!("{}/forbidden/x", server.url)),
        "{e}"
    );
    kind(store.get_str("forbidden/x", ByteRange::Suffix(2)), "io");
    kind(store.exists_str("forbidden/x"), "io");
    kind(store.size_str("forbidden/x"), "io");
    // A 500 is tried again, and the message says how often.
    let e = kind(store.get_str("broken/x", ByteRange::All), "io");
    assert!(
        e.message()
            .contains("HTTP status 500 Internal Server Error after 3 attempts"),
        "{e}"
    );
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
        let e = kind(store.get_str(key, ByteRange::All), "metadata");
        assert!(e.message().contains("returned HTML"), "{e}");
        assert!(e.message().contains(&format!("'{key}'")), "{e}");
        assert!(e.message().contains(&server.url), "{e}");
    }
    // Other keys are bytes like any other.
    assert!(store.get_str("c/0", ByteRange::All).unwrap().is_some());
}

#[test]
fn http_writes_and_listings_are_refused() {
    let server = serve(&files(), Mode::default());
    let store = store_for(&server);
    let e = kind(store.set_str("r", b"x"), "read_only");
    assert!(
        e.message().contains("'r'") && e.message().contains("HTTP store"),
        "{e}"
    );
    kind(store.erase_str("r"), "read_only");
    kind(store.erase_prefix_str(""), "read_only");
    kind(store.erase_prefix_str("a/"), "read_only");
    let e = kind(store.list_str(), "unsupported");
    let said = "cannot list '': listing is not supported by HTTP store at http://";
    assert!(e.message().starts_with(said), "{e}");
    assert!(e.message().ends_with(&store.describe()), "{e}");
    kind(store.list_prefix_str("a/"), "unsupported");
    kind(store.list_dir_str(""), "unsupported");
    assert_eq!(store.get_str("r", ByteRange::All).unwrap(), Some(value()));
}

#[test]
fn http_connection_refused_is_an_io_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/x");
    let store = HttpStore::with_options(&url, impatient()).unwrap();
    let e = kind(store.get_str("zarr.json", ByteRange::All), "io");
    assert!(e.message().contains(&format!("{url}/zarr.json")), "{e}");
    kind(store.exists_str("zarr.json"), "io");
}

#[test]
fn http_https_to_a_plain_server_is_an_io_error_not_a_panic() {
    let server = serve(&files(), Mode::default());
    let url = server.url.replacen("http://", "https://", 1);
    let store = HttpStore::with_options(&url, impatient()).unwrap();
    let e = kind(store.get_str("r", ByteRange::All), "io");
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
        request_timeout: Duration::from_millis(300),
        ..impatient()
    };
    let store = HttpStore::with_options(&server.url, options).unwrap();
    let t0 = Instant::now();
    let e = kind(store.get_str("r", ByteRange::All), "io");
    // The server never answers: only the limit ends the request. The bound
    // is a guard against a hang, far above the 0.3 s limit.
    assert!(t0.elapsed() < Duration::from_secs(30));
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
    let got = store.get_many_str(&requests);
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
    // Concurrency is shown by the server's count of requests in flight, not
    // by a time, which a loaded machine stretches.
    let s = server.stats.lock().unwrap();
    assert!(
        s.max_in_flight > 1 && s.max_in_flight <= 16,
        "{}",
        s.max_in_flight
    );
    // Connections are kept alive: fewer than the requests sent. How many
    // fewer is hyper's choice: a request that finds no idle connection
    // starts one even if another frees up first, so a loaded machine opens
    // more than 16 (28 seen under a parallel test run).
    assert_eq!(s.requests, 66);
    assert!(s.connections < s.requests, "{} connections", s.connections);
    drop(s);
    // A second batch, no larger than the idle pool, reuses the idle
    // connections of the first.
    let before = server.stats.lock().unwrap().connections;
    let again = store.get_many_str(&requests[..16]);
    assert!(again.iter().all(|r| r.is_ok()));
    let s = server.stats.lock().unwrap();
    assert!(
        s.connections - before <= 4,
        "{} new connections",
        s.connections - before
    );
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
