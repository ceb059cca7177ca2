//! A bench-only S3 server: the operations bench/cloud_read.R and its
//! Python contenders use (bucket create/head/location, object put, get
//! with a byte range, head, delete, and ListObjectsV2), on objects held in
//! memory.
//!
//! Why not s3s-fs: it streams every answer from its file through a 4 KiB
//! buffer (32,768 reads and body frames per 128 MiB), each read a hop to
//! tokio's blocking pool, and opens side files of its own (attributes,
//! ETag) for every GET, so on a two-core machine it took more CPU per
//! full read than any client did. Here an answer is a slice of the
//! stored bytes handed to hyper in one piece, so what is left is the
//! HTTP framing and the kernel's copy to the socket.
//!
//! The S3 protocol (routing, SigV4 checks, XML) is the `s3s` crate's, the
//! same s3s-fs is built on.
//!
//! Latency without a proxy: `--delay-ms N` makes every S3 request wait N
//! ms (a tokio sleep of its own) before it is answered, so requests in
//! flight wait side by side as over a real link, and no relay spends CPU
//! on the shared cores. Paths starting with `/__` are never S3's (a bucket
//! name starts with a letter or digit, and requests are taken path-style
//! only): they are answered here, before s3s, not delayed and not counted:
//!
//! - `GET /__bench/stats`: `{"requests": N, "delay_ms": D}`, N the S3
//!   requests received since the start or the last reset;
//! - `POST /__bench/reset`: N back to 0 (answers the stats);
//! - `POST /__bench/delay?ms=D`: the delay from now on, so one server
//!   loaded once serves settings of several latencies (answers the stats);
//! - `POST /__bench/link?mbit=R`: from now on every GET body goes out in
//!   pieces of 64 KiB through one shared link of R Mbit/s (0: no limit),
//!   each piece in the order its request asked for the link, as a
//!   client's requests share its connection to a cloud region;
//! - anything else under `/__`: 404 (the Python contenders ask every
//!   endpoint for a proxy's counters, and this is not one).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::dto::*;
use s3s::service::S3Service;
use s3s::service::S3ServiceBuilder;
use s3s::{s3_error, Body, HttpError, HttpResponse, S3Request, S3Response, S3Result, S3};
use tokio::net::TcpListener;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone)]
struct Stored {
    data: Bytes,
    etag: String,
    modified: SystemTime,
}

type Bucket = BTreeMap<String, Stored>;

#[derive(Default)]
struct Memory {
    buckets: RwLock<HashMap<String, Bucket>>,
    link: Arc<Link>,
    // A new ETag per write: clients only compare them, and a counter
    // costs nothing where an MD5 of the body would cost a pass over it.
    writes: AtomicU64,
}

impl Memory {
    fn object(&self, bucket: &str, key: &str) -> S3Result<Stored> {
        let buckets = self.buckets.read().unwrap();
        let b = buckets.get(bucket).ok_or_else(|| s3_error!(NoSuchBucket))?;
        b.get(key).cloned().ok_or_else(|| s3_error!(NoSuchKey))
    }

    fn check_bucket(&self, bucket: &str) -> S3Result<()> {
        if self.buckets.read().unwrap().contains_key(bucket) {
            Ok(())
        } else {
            Err(s3_error!(NoSuchBucket))
        }
    }

    /// `f` on a bucket, under the write lock.
    fn change_bucket<T>(
        &self,
        bucket: &str,
        f: impl FnOnce(&mut Bucket) -> S3Result<T>,
    ) -> S3Result<T> {
        let mut buckets = self.buckets.write().unwrap();
        f(buckets
            .get_mut(bucket)
            .ok_or_else(|| s3_error!(NoSuchBucket))?)
    }
}

fn etag_matches(cond: &ETagCondition, current: Option<&Stored>) -> bool {
    match (cond, current) {
        (ETagCondition::Any, current) => current.is_some(),
        (ETagCondition::ETag(tag), Some(s)) => tag.value() == s.etag,
        (ETagCondition::ETag(_), None) => false,
    }
}

#[async_trait::async_trait]
impl S3 for Memory {
    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let mut buckets = self.buckets.write().unwrap();
        if buckets.contains_key(&req.input.bucket) {
            return Err(s3_error!(BucketAlreadyOwnedByYou));
        }
        buckets.insert(req.input.bucket, Bucket::new());
        Ok(S3Response::new(CreateBucketOutput::default()))
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        self.check_bucket(&req.input.bucket)?;
        Ok(S3Response::new(HeadBucketOutput::default()))
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        self.check_bucket(&req.input.bucket)?;
        Ok(S3Response::new(GetBucketLocationOutput::default()))
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let input = req.input;
        // The body is gathered before the lock is taken: a slow upload
        // must not hold up the readers.
        let mut data = BytesMut::new();
        if let Some(mut body) = input.body {
            while let Some(piece) = body.next().await {
                let piece = piece.map_err(|e| s3_error!(IncompleteBody, "{e}"))?;
                data.extend_from_slice(&piece);
            }
        }
        self.change_bucket(&input.bucket, |b| {
            let current = b.get(&input.key);
            // Conditional writes, as object stores use them for
            // create-if-absent and compare-and-swap.
            if let Some(cond) = &input.if_none_match {
                if current.is_some()
                    && (matches!(cond, ETagCondition::Any) || etag_matches(cond, current))
                {
                    return Err(s3_error!(PreconditionFailed));
                }
            }
            if let Some(cond) = &input.if_match {
                if !etag_matches(cond, current) {
                    return Err(s3_error!(PreconditionFailed));
                }
            }
            let n = self.writes.fetch_add(1, Ordering::Relaxed);
            let stored = Stored {
                data: data.freeze(),
                etag: format!("{n:032x}"),
                modified: SystemTime::now(),
            };
            let output = PutObjectOutput {
                e_tag: Some(ETag::Strong(stored.etag.clone())),
                size: Some(stored.data.len() as i64),
                ..Default::default()
            };
            b.insert(input.key, stored);
            Ok(S3Response::new(output))
        })
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let input = req.input;
        let stored = self.object(&input.bucket, &input.key)?;
        let len = stored.data.len() as u64;
        let (body, content_range) = match &input.range {
            None => (stored.data.clone(), None),
            Some(range) => {
                let r = range.check(len)?;
                let part = stored.data.slice(r.start as usize..r.end as usize);
                (
                    part,
                    Some(format!("bytes {}-{}/{}", r.start, r.end - 1, len)),
                )
            }
        };
        let output = GetObjectOutput {
            content_length: Some(body.len() as i64),
            // A slice of the stored bytes (no copy), written by hyper in
            // one piece.
            body: Some(self.link.send(body)),
            content_range,
            e_tag: Some(ETag::Strong(stored.etag)),
            last_modified: Some(Timestamp::from(stored.modified)),
            ..Default::default()
        };
        Ok(S3Response::new(output))
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let stored = self.object(&req.input.bucket, &req.input.key)?;
        let output = HeadObjectOutput {
            content_length: Some(stored.data.len() as i64),
            e_tag: Some(ETag::Strong(stored.etag)),
            last_modified: Some(Timestamp::from(stored.modified)),
            ..Default::default()
        };
        Ok(S3Response::new(output))
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        self.change_bucket(&req.input.bucket, |b| {
            b.remove(&req.input.key);
            Ok(())
        })?;
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let input = req.input;
        let deleted = self.change_bucket(&input.bucket, |b| {
            Ok(input
                .delete
                .objects
                .into_iter()
                .map(|o| {
                    b.remove(&o.key);
                    DeletedObject {
                        key: Some(o.key),
                        ..Default::default()
                    }
                })
                .collect())
        })?;
        Ok(S3Response::new(DeleteObjectsOutput {
            deleted: Some(deleted),
            ..Default::default()
        }))
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let input = req.input;
        let buckets = self.buckets.read().unwrap();
        let b = buckets
            .get(&input.bucket)
            .ok_or_else(|| s3_error!(NoSuchBucket))?;
        let prefix = input.prefix.clone().unwrap_or_default();
        let max_keys = input.max_keys.unwrap_or(1000).max(1) as usize;
        // Listing resumes after the later of the token (the last key or
        // common prefix of the previous page) and start-after.
        let after = match (&input.continuation_token, &input.start_after) {
            (Some(t), Some(s)) => Some(t.max(s).clone()),
            (t, s) => t.clone().or_else(|| s.clone()),
        };
        let mut contents = Vec::new();
        let mut prefixes = BTreeSet::new();
        let mut last = None;
        let mut truncated = false;
        for (key, stored) in b.range(prefix.clone()..) {
            if !key.starts_with(&prefix) {
                break;
            }
            // A key under a delimiter is listed as its common prefix.
            let entry = match input.delimiter.as_deref().filter(|d| !d.is_empty()) {
                Some(d) => key[prefix.len()..]
                    .find(d)
                    .map(|i| key[..prefix.len() + i + d.len()].to_owned()),
                None => None,
            };
            let name = entry.clone().unwrap_or_else(|| key.clone());
            if after.as_ref().is_some_and(|a| name.as_str() <= a.as_str())
                || prefixes.contains(&name)
            {
                continue;
            }
            if contents.len() + prefixes.len() == max_keys {
                truncated = true;
                break;
            }
            match entry {
                Some(p) => {
                    prefixes.insert(p);
                }
                None => contents.push(Object {
                    key: Some(key.clone()),
                    size: Some(stored.data.len() as i64),
                    e_tag: Some(ETag::Strong(stored.etag.clone())),
                    last_modified: Some(Timestamp::from(stored.modified)),
                    ..Default::default()
                }),
            }
            last = Some(name);
        }
        let output = ListObjectsV2Output {
            name: Some(input.bucket),
            key_count: Some((contents.len() + prefixes.len()) as i32),
            contents: Some(contents),
            common_prefixes: Some(
                prefixes
                    .into_iter()
                    .map(|p| CommonPrefix { prefix: Some(p) })
                    .collect(),
            ),
            prefix: input.prefix,
            delimiter: input.delimiter,
            max_keys: Some(max_keys as i32),
            is_truncated: Some(truncated),
            next_continuation_token: if truncated { last } else { None },
            continuation_token: input.continuation_token,
            start_after: input.start_after,
            ..Default::default()
        };
        Ok(S3Response::new(output))
    }
}

/// The S3 service behind the bench's own routes, with the added latency.
#[derive(Clone)]
struct Bench {
    s3: S3Service,
    state: Arc<BenchState>,
}

#[derive(Default)]
struct BenchState {
    requests: AtomicU64,
    delay_ms: AtomicU64,
    link: Arc<Link>,
}

/// A link of limited bandwidth that every answer's body shares.
#[derive(Default)]
struct Link {
    /// Mbit/s; 0 for no limit.
    mbit: AtomicU64,
    /// When the link is next free.
    free_at: std::sync::Mutex<Option<tokio::time::Instant>>,
}

const LINK_PIECE: usize = 64 << 10;

impl Link {
    /// `body` as an answer: in one piece without a limit, else in pieces
    /// that each wait for their turn on the link and its time there.
    fn send(self: &Arc<Self>, body: Bytes) -> StreamingBlob {
        let mbit = self.mbit.load(Ordering::Relaxed);
        if mbit == 0 {
            return StreamingBlob::from(Body::from(body));
        }
        let link = Arc::clone(self);
        let pieces = futures::stream::unfold((body, link), move |(mut rest, link)| async move {
            if rest.is_empty() {
                return None;
            }
            let piece = rest.split_to(rest.len().min(LINK_PIECE));
            let on_link = Duration::from_secs_f64(piece.len() as f64 * 8.0 / (mbit as f64 * 1e6));
            let done = {
                let mut free = link.free_at.lock().unwrap();
                let now = tokio::time::Instant::now();
                let start = free.map_or(now, |f| f.max(now));
                *free = Some(start + on_link);
                start + on_link
            };
            tokio::time::sleep_until(done).await;
            Some((Ok::<_, std::io::Error>(piece), (rest, link)))
        });
        StreamingBlob::wrap(pieces)
    }
}

impl BenchState {
    fn stats(&self) -> String {
        format!(
            "{{\"requests\": {}, \"delay_ms\": {}, \"link_mbit\": {}}}\n",
            self.requests.load(Ordering::Relaxed),
            self.delay_ms.load(Ordering::Relaxed),
            self.link.mbit.load(Ordering::Relaxed)
        )
    }

    fn answer(&self, method: &http::Method, uri: &http::Uri) -> HttpResponse {
        let respond = |status: u16, body: Body| {
            http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(body)
                .unwrap()
        };
        let ok = |text: String| respond(200, Body::from(text));
        match (method.as_str(), uri.path()) {
            ("GET", "/__bench/stats") => ok(self.stats()),
            ("POST", "/__bench/reset") => {
                self.requests.store(0, Ordering::Relaxed);
                ok(self.stats())
            }
            ("POST", "/__bench/delay") => match query_number(uri, "ms") {
                Some(ms) => {
                    self.delay_ms.store(ms, Ordering::Relaxed);
                    ok(self.stats())
                }
                None => respond(
                    400,
                    Body::from("POST /__bench/delay?ms=<integer>\n".to_owned()),
                ),
            },
            ("POST", "/__bench/link") => match query_number(uri, "mbit") {
                Some(mbit) => {
                    self.link.mbit.store(mbit, Ordering::Relaxed);
                    ok(self.stats())
                }
                None => respond(
                    400,
                    Body::from("POST /__bench/link?mbit=<integer>\n".to_owned()),
                ),
            },
            _ => respond(404, Body::empty()),
        }
    }
}

/// The whole number `name=<n>` of the query of `uri`, if there is one.
fn query_number(uri: &http::Uri, name: &str) -> Option<u64> {
    uri.query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .and_then(|v| v.parse::<u64>().ok())
}

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for Bench {
    type Response = HttpResponse;
    type Error = HttpError;
    type Future = futures::future::BoxFuture<'static, Result<HttpResponse, HttpError>>;

    fn call(&self, req: http::Request<hyper::body::Incoming>) -> Self::Future {
        if req.uri().path().starts_with("/__") {
            let resp = self.state.answer(req.method(), req.uri());
            return Box::pin(async move { Ok(resp) });
        }
        self.state.requests.fetch_add(1, Ordering::Relaxed);
        let delay = self.state.delay_ms.load(Ordering::Relaxed);
        let s3 = self.s3.clone();
        Box::pin(async move {
            // Each request sleeps in its own task: concurrent requests
            // overlap their waits, as on a link with that round trip,
            // instead of queueing behind one another.
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            hyper::service::Service::call(&s3, req).await
        })
    }
}

struct Options {
    host: String,
    port: u16,
    access_key: Option<String>,
    secret_key: Option<String>,
    buckets: Vec<String>,
    delay_ms: u64,
}

const USAGE: &str =
    "usage: zarr-bench-s3 [--host H] [--port P] [--access-key K --secret-key S] [--bucket B]... [--delay-ms N]";

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        host: "127.0.0.1".into(),
        port: 8014,
        access_key: None,
        secret_key: None,
        buckets: Vec::new(),
        delay_ms: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--version" {
            println!("zarr-bench-s3 {VERSION}");
            std::process::exit(0);
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--host" => o.host = value,
            "--port" => {
                o.port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port: {value}"))?
            }
            "--access-key" => o.access_key = Some(value),
            "--secret-key" => o.secret_key = Some(value),
            "--bucket" => o.buckets.push(value),
            "--delay-ms" => {
                o.delay_ms = value
                    .parse()
                    .map_err(|_| format!("--delay-ms: not a whole number of ms: {value}"))?
            }
            _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    if o.access_key.is_some() != o.secret_key.is_some() {
        return Err("--access-key and --secret-key go together".into());
    }
    Ok(o)
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = runtime.block_on(serve(opts)) {
        eprintln!("zarr-bench-s3: {e}");
        std::process::exit(1);
    }
}

async fn serve(opts: Options) -> std::io::Result<()> {
    let link = Arc::new(Link::default());
    let memory = Memory {
        link: Arc::clone(&link),
        ..Default::default()
    };
    for b in &opts.buckets {
        memory
            .buckets
            .write()
            .unwrap()
            .insert(b.clone(), Bucket::new());
    }
    let mut builder = S3ServiceBuilder::new(memory);
    if let (Some(ak), Some(sk)) = (opts.access_key, opts.secret_key) {
        builder.set_auth(SimpleAuth::from_single(ak, sk));
    }
    let state = BenchState {
        link,
        ..Default::default()
    };
    state.delay_ms.store(opts.delay_ms, Ordering::Relaxed);
    let service = Bench {
        s3: builder.build(),
        state: Arc::new(state),
    };
    let listener = TcpListener::bind((opts.host.as_str(), opts.port)).await?;
    eprintln!(
        "zarr-bench-s3 {VERSION} on http://{}, {} ms per request",
        listener.local_addr()?,
        opts.delay_ms
    );
    let http = Arc::new(ConnBuilder::new(TokioExecutor::new()));
    loop {
        let (socket, _) = listener.accept().await?;
        // As the clients set it: without it a small answer can wait for
        // a delayed ACK.
        let _ = socket.set_nodelay(true);
        let conn = http
            .serve_connection(TokioIo::new(socket), service.clone())
            .into_owned();
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}
