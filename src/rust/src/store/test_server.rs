//! A small HTTP/1.1 server on 127.0.0.1 for the tests of the HTTP and
//! reference stores. It keeps connections open, answers Range requests
//! (or ignores them), and can refuse HEAD, answer with HTML, hang or be
//! slow, so each client path can be driven without a network. Each file
//! has a strong ETag of its version and If-Match is honoured, and a file
//! can be replaced while a client reads (`Server::replace_after`). It
//! stops with the test process.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default, Clone, Copy)]
pub struct Mode {
    pub ignore_range: bool,
    pub no_head: bool,
    pub html: bool,
    pub hang: bool,
    pub no_content_length_on_head: bool,
    pub delay_ms: u64,
}

#[derive(Default)]
pub struct Stats {
    pub requests: usize,
    pub in_flight: usize,
    pub max_in_flight: usize,
    pub connections: usize,
    /// Each request's path as sent (still percent-encoded) ...
    pub paths: Vec<String>,
    /// ... and its Range header.
    pub ranges: Vec<Option<String>>,
    /// Requests refused with 412 because their If-Match named an old version.
    pub precondition_failed: usize,
}

impl Stats {
    /// Path and Range header of each request, in the order they came.
    pub fn log(&self) -> Vec<(String, Option<String>)> {
        self.paths
            .iter()
            .cloned()
            .zip(self.ranges.iter().cloned())
            .collect()
    }
}

pub struct Server {
    /// "http://127.0.0.1:port" followed by the root the files are under.
    pub url: String,
    pub stats: Arc<Mutex<Stats>>,
    root: String,
    swaps: Arc<Mutex<Vec<Swap>>>,
}

/// A file's bytes and its version, the ETag.
type Files = Mutex<HashMap<String, (Vec<u8>, u64)>>;

/// A replacement of a file's bytes, made once `after` requests for it have
/// been answered.
struct Swap {
    path: String,
    after: usize,
    value: Vec<u8>,
}

impl Server {
    /// Give `key` the bytes `value` (and a new ETag) right after its
    /// `after`-th request has been answered: a writer replacing a shard
    /// between a reader's requests.
    pub fn replace_after(&self, key: &str, after: usize, value: Vec<u8>) {
        self.swaps.lock().unwrap().push(Swap {
            path: format!("{}/{key}", self.root),
            after,
            value,
        });
    }
}

/// Serve `files` (paths relative to `root`, e.g. "/data") as `mode` says.
/// Request paths are percent-decoded before they are looked up.
pub fn serve(root: &str, files: &[(&str, Vec<u8>)], mode: Mode) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}{root}", listener.local_addr().unwrap());
    let files: Arc<Files> = Arc::new(Mutex::new(
        files
            .iter()
            .map(|(k, v)| (format!("{root}/{k}"), (v.clone(), 1)))
            .collect(),
    ));
    let stats = Arc::new(Mutex::new(Stats::default()));
    let swaps = Arc::new(Mutex::new(Vec::new()));
    let (st, sw) = (Arc::clone(&stats), Arc::clone(&swaps));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            st.lock().unwrap().connections += 1;
            let (files, st, sw) = (Arc::clone(&files), Arc::clone(&st), Arc::clone(&sw));
            std::thread::spawn(move || {
                let _ = handle(conn, &files, mode, &st, &sw);
            });
        }
    });
    Server {
        url,
        stats,
        root: root.to_string(),
        swaps,
    }
}

/// Make the replacements due now that `path` has had `answered` requests.
fn apply_swaps(files: &Files, swaps: &Mutex<Vec<Swap>>, path: &str, answered: usize) {
    let mut swaps = swaps.lock().unwrap();
    let mut files = files.lock().unwrap();
    swaps.retain(|s| {
        if s.path != path || s.after > answered {
            return true;
        }
        let version = files.get(path).map_or(0, |f| f.1) + 1;
        files.insert(s.path.clone(), (s.value.clone(), version));
        false
    });
}

fn handle(
    conn: TcpStream,
    files: &Files,
    mode: Mode,
    stats: &Mutex<Stats>,
    swaps: &Mutex<Vec<Swap>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut range = None;
        let mut if_match = None;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':') {
                if name.eq_ignore_ascii_case("range") {
                    range = Some(value.trim().to_string());
                } else if name.eq_ignore_ascii_case("if-match") {
                    if_match = Some(value.trim().to_string());
                }
            }
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        {
            let mut s = stats.lock().unwrap();
            s.requests += 1;
            s.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(s.in_flight);
            s.paths.push(path.clone());
            s.ranges.push(range.clone());
        }
        if mode.hang {
            std::thread::sleep(Duration::from_secs(5));
            return Ok(());
        }
        if mode.delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(mode.delay_ms));
        }
        let head = method == "HEAD";
        let file_path = url_decode(path.split('?').next().unwrap_or(""));
        let (status, headers, body) = {
            let files = files.lock().unwrap();
            let file = files.get(&file_path);
            let etag = file.map(|f| format!("\"v{}\"", f.1));
            match (&if_match, &etag) {
                (Some(want), Some(have)) if want != have => {
                    stats.lock().unwrap().precondition_failed += 1;
                    ("412 Precondition Failed", vec![], vec![])
                }
                _ => {
                    let (status, mut headers, body) =
                        respond(file.map(|f| &f.0), mode, &path, head, range.as_deref());
                    if let (Some(etag), false) = (etag, mode.html) {
                        headers.push(("ETag".to_string(), etag));
                    }
                    (status, headers, body)
                }
            }
        };
        let answered = {
            let mut s = stats.lock().unwrap();
            s.in_flight -= 1;
            s.paths.iter().filter(|p| **p == path).count()
        };
        apply_swaps(files, swaps, &file_path, answered);
        let mut out = format!("HTTP/1.1 {status}\r\n");
        let mut has_length = false;
        for (k, v) in &headers {
            has_length |= k == "Content-Length";
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if !(has_length || head && mode.no_content_length_on_head) {
            out.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        out.push_str("\r\n");
        conn.write_all(out.as_bytes())?;
        if !head {
            conn.write_all(&body)?;
        }
        conn.flush()?;
    }
}

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

type Reply = (&'static str, Vec<(String, String)>, Vec<u8>);

/// Paths with a "forbidden" or "broken" folder get 403 or 500.
fn respond(
    file: Option<&Vec<u8>>,
    mode: Mode,
    path: &str,
    head: bool,
    range: Option<&str>,
) -> Reply {
    if head && mode.no_head {
        return ("405 Method Not Allowed", vec![], vec![]);
    }
    if path.contains("/forbidden/") {
        return ("403 Forbidden", vec![], b"no".to_vec());
    }
    if path.contains("/broken/") {
        return ("500 Internal Server Error", vec![], b"oops".to_vec());
    }
    if mode.html {
        let page = b"<!DOCTYPE html><html><body>hi</body></html>".to_vec();
        let h = vec![("Content-Type".to_string(), "text/html".to_string())];
        return ("200 OK", h, page);
    }
    let Some(data) = file else {
        return ("404 Not Found", vec![], b"not found".to_vec());
    };
    let len = data.len() as u64;
    let whole = |data: &Vec<u8>| {
        let h = vec![("Content-Length".to_string(), len.to_string())];
        ("200 OK", h, data.clone())
    };
    let Some(spec) = range.filter(|_| !mode.ignore_range && !head) else {
        return whole(data);
    };
    let spec = spec.strip_prefix("bytes=").unwrap();
    let (a, b) = spec.split_once('-').unwrap();
    let (start, end) = if a.is_empty() {
        let n: u64 = b.parse().unwrap();
        (len.saturating_sub(n), len)
    } else {
        let a: u64 = a.parse().unwrap();
        let e = if b.is_empty() {
            len
        } else {
            (b.parse::<u64>().unwrap() + 1).min(len)
        };
        (a, e)
    };
    if start >= end {
        let h = vec![("Content-Range".to_string(), format!("bytes */{len}"))];
        return ("416 Range Not Satisfiable", h, vec![]);
    }
    let h = vec![(
        "Content-Range".to_string(),
        format!("bytes {start}-{}/{len}", end - 1),
    )];
    (
        "206 Partial Content",
        h,
        data[start as usize..end as usize].to_vec(),
    )
}
