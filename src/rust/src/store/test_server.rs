//! A small HTTP/1.1 server on 127.0.0.1 for the tests of the HTTP and
//! reference stores. It keeps connections open, answers Range requests
//! (or ignores them), and can refuse HEAD, answer with HTML, hang or be
//! slow, so each client path can be driven without a network. It stops
//! with the test process.

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
}

/// Serve `files` (paths relative to `root`, e.g. "/data") as `mode` says.
/// Request paths are percent-decoded before they are looked up.
pub fn serve(root: &str, files: &[(&str, Vec<u8>)], mode: Mode) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}{root}", listener.local_addr().unwrap());
    let files: Arc<HashMap<String, Vec<u8>>> = Arc::new(
        files
            .iter()
            .map(|(k, v)| (format!("{root}/{k}"), v.clone()))
            .collect(),
    );
    let stats = Arc::new(Mutex::new(Stats::default()));
    let st = Arc::clone(&stats);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            st.lock().unwrap().connections += 1;
            let (files, st) = (Arc::clone(&files), Arc::clone(&st));
            std::thread::spawn(move || {
                let _ = handle(conn, &files, mode, &st);
            });
        }
    });
    Server { url, stats }
}

fn handle(
    conn: TcpStream,
    files: &HashMap<String, Vec<u8>>,
    mode: Mode,
    stats: &Mutex<Stats>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut range = None;
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
        let (status, headers, body) = respond(files, mode, &path, head, range.as_deref());
        stats.lock().unwrap().in_flight -= 1;
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
    files: &HashMap<String, Vec<u8>>,
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
    let path = path.split('?').next().unwrap_or("");
    let path = url_decode(path);
    let Some(data) = files.get(&path) else {
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
