//! Object stores: Amazon S3 and S3-compatible servers (MinIO, Ceph, R2,
//! moto), Google Cloud Storage and Azure Blob Storage, through Apache
//! Arrow's `object_store` crate, the engine zarrs, obstore, polars and
//! delta-rs share. The crate signs requests, reads credentials from each
//! cloud's environment variables, retries 5xx and throttling responses
//! with backoff, and does multipart uploads; this module maps the store
//! trait onto it (config.rs: URLs, options and the builders).
//!
//! The crate is async. The stores of a process share one small tokio
//! runtime and the engine's threads `block_on` it: the engine stays
//! synchronous, and a batch of reads (`get_many`) becomes one future with
//! up to `max_concurrency` requests in flight, which is what hides the
//! latency of a network round trip. A store opened again with the same
//! configuration (every `open_zarr()` of a URL) reuses the client built
//! the first time, with its open connections: building one (a new HTTP
//! client with its TLS roots) and connecting cost more than the few
//! metadata requests of an open.
//!
//! Keys are paths below a prefix in one bucket (container for Azure).

use super::*;
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store as os;
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, ObjectStore as _, ObjectStoreExt as _, PutMode, PutOptions, PutPayload,
};
use std::sync::Arc;

mod config;
mod refused;
#[cfg(test)]
mod tests;

use config::*;
pub use config::{cloud_of_url, Cloud, ObjectOptions};

#[derive(Clone)]
pub struct ObjectStore {
    cloud: Cloud,
    /// The bucket (S3, GCS) or container (Azure).
    bucket: String,
    /// "" or the path of the store root in the bucket, without a final "/".
    prefix: String,
    /// The process's client (its own, also in a forked child).
    inner: Arc<crate::runtime::ProcessClient>,
    /// The process's runtime (its own, also in a forked child).
    runtime: crate::runtime::IoRuntime,
    read_only: bool,
    options: ObjectOptions,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the builder's settings: they may hold secrets.
        f.debug_struct("ObjectStore")
            .field("url", &self.url())
            .field("read_only", &self.read_only)
            .field("options", &self.options)
            .finish()
    }
}

impl ObjectStore {
    /// Open the store at `url` (see [`cloud_of_url`]). `options` are the
    /// builder settings of the cloud by their `object_store` names (with or
    /// without the `aws_`/`google_`/`azure_` prefix) plus this store's own
    /// (`max_concurrency`, `multipart_threshold`, `part_size`,
    /// `max_retries`, `retry_timeout` in seconds); they win over the
    /// environment. `anonymous`: `Some(true)` sends unsigned requests,
    /// `Some(false)` always signs, `None` decides from the environment
    /// (`AWS_NO_SIGN_REQUEST`, then whether any credentials are set).
    /// No request is made here.
    pub fn open(
        url: &str,
        options: &[(String, String)],
        read_only: bool,
        anonymous: Option<bool>,
    ) -> Result<ObjectStore> {
        let bad_url = |why: &str| {
            ZarrError::Unsupported(format!("'{url}' is not an object store URL: {why}"))
        };
        let parsed = url::Url::parse(url).map_err(|e| bad_url(&e.to_string()))?;
        let (scheme, path) =
            os::ObjectStoreScheme::parse(&parsed).map_err(|e| bad_url(&e.to_string()))?;
        let cloud = match scheme {
            os::ObjectStoreScheme::AmazonS3 => Cloud::S3,
            os::ObjectStoreScheme::GoogleCloudStorage => Cloud::Gcs,
            os::ObjectStoreScheme::MicrosoftAzure => Cloud::Azure,
            _ => return Err(bad_url("use s3://, gs://, az:// or abfs://")),
        };
        let (own, rest) = split_options(cloud, options)?;
        let anonymous = match anonymous {
            Some(a) => a,
            None => anonymous_by_default(cloud, &rest, &|k| std::env::var(k).ok()),
        };
        let retry = own.retry_config();
        // Started here, so that a failure to start it is an error of the open.
        io_runtime()?;
        let mut settings = own.timeout_settings(&rest);
        settings.extend(builder_settings(cloud, rest));
        // Everything the client depends on: two opens with equal recipes
        // share one. The environment is part of it because the builders
        // read credentials, region and endpoint from it.
        let mut recipe: crate::runtime::ClientRecipe = vec![
            ("cloud".into(), cloud.name().into()),
            ("url".into(), url.to_string()),
            ("anonymous".into(), anonymous.to_string()),
            ("retry".into(), format!("{:?}", own.retry)),
        ];
        recipe.extend(
            settings
                .iter()
                .map(|(k, v)| (format!("set:{k}"), v.clone())),
        );
        recipe.extend(
            cloud_env()
                .into_iter()
                .map(|(k, v)| (format!("env:{k}"), v)),
        );
        let url_owned = url.to_string();
        let inner = crate::runtime::object_client(
            recipe,
            Arc::new(move || {
                let (url, s, a, r) = (url_owned.as_str(), &settings, anonymous, retry.clone());
                match cloud {
                    Cloud::S3 => build::<os::aws::AmazonS3Builder>(cloud, url, s, a, r),
                    Cloud::Gcs => build::<os::gcp::GoogleCloudStorageBuilder>(cloud, url, s, a, r),
                    Cloud::Azure => build::<os::azure::MicrosoftAzureBuilder>(cloud, url, s, a, r),
                }
            }),
        )?;
        let bucket = bucket_of_url(&parsed);
        Ok(ObjectStore {
            cloud,
            bucket,
            prefix: path.as_ref().trim_matches('/').to_string(),
            inner,
            runtime: crate::runtime::IoRuntime,
            read_only,
            options: own,
        })
    }

    pub fn cloud(&self) -> Cloud {
        self.cloud
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The path of the store root in its bucket ("" for the bucket root).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn options(&self) -> ObjectOptions {
        self.options
    }

    /// The canonical URL of the store root: `s3://bucket/prefix`.
    pub fn url(&self) -> String {
        let mut u = format!("{}://{}", self.cloud.scheme(), self.bucket);
        if !self.prefix.is_empty() {
            u.push('/');
            u.push_str(&self.prefix);
        }
        u
    }

    /// The object path of a (valid) key.
    fn path(&self, key: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(key)
        } else {
            Path::from(format!("{}/{key}", self.prefix))
        }
    }

    /// The key of an object path below the root.
    fn key_of(&self, path: &Path) -> String {
        let p = path.as_ref();
        if self.prefix.is_empty() {
            return p.to_string();
        }
        p.strip_prefix(&self.prefix)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(p)
            .to_string()
    }

    /// An `object_store` failure as the engine's error, naming the bucket
    /// and the key, so that a user sees what was denied or missing.
    fn error(&self, what: &str, key: &str, e: os::Error) -> ZarrError {
        let full = if self.prefix.is_empty() {
            key.to_string()
        } else if key.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}/{key}", self.prefix)
        };
        let place = format!(
            "{} bucket '{}', key '{}'",
            self.cloud.name(),
            self.bucket,
            full
        );
        match e {
            os::Error::NotFound { .. } => {
                ZarrError::NotFound(format!("cannot {what} {place}: not found ({e})"))
            }
            os::Error::PermissionDenied { .. } | os::Error::Unauthenticated { .. } => {
                ZarrError::PermissionDenied(format!("cannot {what} {place}: access denied ({e})"))
            }
            os::Error::Precondition { .. } | os::Error::AlreadyExists { .. } => {
                ZarrError::Conflict(format!(
                    "cannot {what} {place}: it was changed by another writer ({e})"
                ))
            }
            os::Error::NotSupported { .. } | os::Error::NotImplemented { .. } => {
                ZarrError::Unsupported(format!("cannot {what} {place}: {e}"))
            }
            other => ZarrError::Io(format!("cannot {what} {place}: {other}")),
        }
    }

    fn check_writable(&self, what: &str, key: &str) -> Result<()> {
        if self.read_only {
            return Err(read_only_error(&self.describe(), what, key));
        }
        Ok(())
    }

    async fn get_async(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        // Nobody else holds the value: no copy.
        let got = self.get_growing_async(key, range, 0, None).await?;
        Ok(got.map(Growing::into_vec))
    }

    /// `range` of the value at `key`, received into a [`Growing`] value
    /// that `grew` (if any) hears of (with `at`) each time another
    /// `GROW_STEP` bytes are in.
    async fn get_growing_async(
        &self,
        key: &StoreKey,
        range: ByteRange,
        at: usize,
        grew: Option<&GrewFn>,
    ) -> Result<Option<Arc<Growing>>> {
        let (got, expect_len) = match self.open_get(key, range).await? {
            Opened::Missing => return Ok(None),
            Opened::Empty => return Ok(Some(Growing::whole(Vec::new()))),
            Opened::Body(got, expect_len) => (got, expect_len),
        };
        let size = got.meta.size;
        let len = (got.range.end - got.range.start) as usize;
        // A range past the end is cut short by the server: report it as
        // every store does.
        if expect_len.is_some_and(|n| n != len as u64) {
            resolve_range(key, size, range)?;
        }
        let (value, mut filler) = Growing::with_len(len).ok_or_else(|| {
            ZarrError::Memory(format!(
                "no memory for the {len} bytes of '{key}' in {}",
                self.url()
            ))
        })?;
        let mut body = got.into_stream();
        let mut told = 0;
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(|e| self.error("read", key, e))?;
            if !filler.push(&piece) {
                return Err(self.short_body(key, len, "more"));
            }
            let n = value.filled().len();
            if let Some(grew) = grew.filter(|_| n - told >= GROW_STEP && n < len) {
                grew(at, &value);
                told = n;
            }
        }
        if !value.is_complete() {
            return Err(self.short_body(key, len, "fewer"));
        }
        Ok(Some(value))
    }

    fn short_body(&self, key: &str, len: usize, which: &str) -> ZarrError {
        ZarrError::Io(format!(
            "the answer for '{key}' in {} had {which} bytes than the {len} it announced",
            self.url()
        ))
    }

    /// The answer to a read of `range` of `key`, before its body: missing,
    /// empty (answered without a body), or to be read (with the length
    /// the range asks for, when it says).
    async fn open_get(&self, key: &StoreKey, range: ByteRange) -> Result<Opened> {
        let path = self.path(key);
        let (want, expect_len) = match range {
            ByteRange::All => (None, None),
            // object_store refuses empty ranges; they are answered by a
            // HEAD, which still says whether the value exists and is long
            // enough.
            ByteRange::Range { length: 0, .. } | ByteRange::Suffix(0) => {
                return match self.size_async(key).await? {
                    None => Ok(Opened::Missing),
                    Some(len) => {
                        resolve_range(key, len, range)?;
                        Ok(Opened::Empty)
                    }
                };
            }
            ByteRange::Range { offset, length } => (
                Some(GetRange::Bounded(offset..offset.saturating_add(length))),
                Some(length),
            ),
            ByteRange::From(offset) => (Some(GetRange::Offset(offset)), None),
            // Azure Blob Storage has no suffix ranges ("bytes=-n"): the
            // size comes first, from a HEAD, then the range from it: one
            // more request per shard index on Azure.
            ByteRange::Suffix(n) if self.cloud == Cloud::Azure => {
                let Some(size) = self.size_async(key).await? else {
                    return Ok(Opened::Missing);
                };
                if n > size {
                    resolve_range(key, size, range)?;
                }
                (Some(GetRange::Bounded(size - n..size)), Some(n))
            }
            ByteRange::Suffix(n) => (Some(GetRange::Suffix(n)), Some(n)),
        };
        let opts = GetOptions {
            range: want,
            ..Default::default()
        };
        match self.inner.get_opts(&path, opts).await {
            Ok(r) => Ok(Opened::Body(r, expect_len)),
            Err(os::Error::NotFound { .. }) => Ok(Opened::Missing),
            Err(e) => Err(self.range_error(key, range, e)),
        }
    }

    /// A ranged read the server refused (416, or object_store's own check)
    /// is an out-of-bounds range; everything else keeps its kind.
    fn range_error(&self, key: &str, range: ByteRange, e: os::Error) -> ZarrError {
        let text = e.to_string();
        if range != ByteRange::All
            && (text.contains("416") || text.contains("Range") || text.contains("range"))
            && !matches!(
                e,
                os::Error::PermissionDenied { .. }
                    | os::Error::Unauthenticated { .. }
                    | os::Error::NotSupported { .. }
            )
        {
            return ZarrError::CorruptChunk(format!(
                "byte range {range:?} is past the end of '{key}' in {}",
                self.url()
            ));
        }
        self.error("read", key, e)
    }

    async fn size_async(&self, key: &StoreKey) -> Result<Option<u64>> {
        match self.inner.head(&self.path(key)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(os::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error("look up", key, e)),
        }
    }

    async fn put_async(&self, key: &str, parts: &[&[u8]], mode: PutMode) -> Result<Option<String>> {
        let path = self.path(key);
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total >= self.options.multipart_threshold && matches!(mode, PutMode::Overwrite) {
            let upload = self
                .inner
                .put_multipart(&path)
                .await
                .map_err(|e| self.error("start the upload of", key, e))?;
            let w = os::WriteMultipart::new_with_chunk_size(upload, self.options.part_size);
            let mut guard = AbortUnfinished(Some(w), self.runtime);
            for p in parts {
                let Some(w) = guard.0.as_mut() else { break };
                // Bounds the parts in memory at once to the concurrency.
                if let Err(e) = w
                    .wait_for_capacity(self.options.max_concurrency.min(8))
                    .await
                {
                    // No upload is left behind, nor its parts billed.
                    if let Some(w) = guard.0.take() {
                        let _ = w.abort().await;
                    }
                    return Err(self.error("upload", key, e));
                }
                w.write(p);
            }
            // finish() aborts the upload itself when it fails.
            let finished = match guard.0.take() {
                Some(w) => w.finish().await,
                None => Err(os::Error::Generic {
                    store: "zarr",
                    source: "the upload was already ended".into(),
                }),
            };
            let r = finished.map_err(|e| self.error("upload", key, e))?;
            return Ok(r.e_tag);
        }
        let payload: PutPayload = parts.iter().map(|p| Bytes::copy_from_slice(p)).collect();
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let r = self
            .inner
            .put_opts(&path, payload, opts)
            .await
            .map_err(|e| self.error("write", key, e))?;
        Ok(r.e_tag)
    }

    /// Every key below `prefix` (a valid prefix), unsorted.
    async fn list_async(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        // object_store lists whole path segments; a prefix that ends inside
        // a segment ("a/b" for "a/bc") is listed from its folder and cut.
        let folder = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let base = if folder.is_empty() {
            if self.prefix.is_empty() {
                None
            } else {
                Some(Path::from(self.prefix.as_str()))
            }
        } else {
            Some(self.path(folder))
        };
        let metas: Vec<os::ObjectMeta> = self
            .inner
            .list(base.as_ref())
            .try_collect()
            .await
            .map_err(|e| self.error("list", prefix, e))?;
        Ok(metas
            .iter()
            .map(|m| self.key_of(&m.location))
            .filter(|k| k.starts_with(prefix.as_str()))
            .collect())
    }
}

/// The tokio runtime of this process's object stores (`crate::runtime`).
pub(crate) fn io_runtime() -> Result<&'static tokio::runtime::Runtime> {
    crate::runtime::io_runtime()
}

/// A request's task, cancelled when its read stops waiting for it (an
/// error elsewhere, an interrupt): no request goes on after its read ended.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

/// A multipart upload that is aborted if its write stops before it is
/// finished (an interrupt drops the write's future): an upload left open
/// keeps its parts in the bucket, billed and listed, until a lifecycle rule
/// removes it.
struct AbortUnfinished(Option<os::WriteMultipart>, crate::runtime::IoRuntime);

impl Drop for AbortUnfinished {
    fn drop(&mut self) {
        if let Some(w) = self.0.take() {
            self.1.spawn(async move {
                let _ = w.abort().await;
            });
        }
    }
}

/// See `ObjectStore::open_get`.
// One per request, never stored: a box would cost an allocation per read
// (the size comes from object_store's "fs" feature, which icechunk turns on).
#[allow(clippy::large_enum_variant)]
enum Opened {
    Missing,
    Empty,
    Body(os::GetResult, Option<u64>),
}

/// How many more bytes of a value the engine hears of at a time: about a
/// compressed inner chunk, few enough wake-ups of the engine's threads.
const GROW_STEP: usize = 256 << 10;

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = std::result::Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The environment variables a cloud's builder or its HTTP client may read
/// (credentials, endpoints, proxies, certificates).
fn cloud_env() -> Vec<(String, String)> {
    const PREFIXES: [&str; 6] = ["AWS_", "GOOGLE_", "AZURE_", "HTTP", "NO_PROXY", "SSL_"];
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            PREFIXES.iter().any(|p| upper.starts_with(p))
        })
        .collect();
    env.sort();
    env
}

impl Store for ObjectStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        crate::store::wait::block_on(self.runtime, self.get_async(key, range))
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &StoreKey, parts: &[&[u8]]) -> Result<()> {
        self.check_writable("write", key)?;
        crate::store::wait::block_on(self.runtime, self.put_async(key, parts, PutMode::Overwrite))
            .map(|_| ())
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        self.check_writable("erase", key)?;
        crate::store::wait::block_on(self.runtime, async {
            match self.inner.delete(&self.path(key)).await {
                Ok(()) | Err(os::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.error("erase", key, e)),
            }
        })
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        self.check_writable("erase prefix", prefix)?;
        crate::store::wait::block_on(self.runtime, async {
            let keys = self.list_async(prefix).await?;
            let paths: Vec<os::Result<Path>> = keys.iter().map(|k| Ok(self.path(k))).collect();
            let mut done = self.inner.delete_stream(stream::iter(paths).boxed());
            while let Some(r) = done.next().await {
                match r {
                    Ok(_) | Err(os::Error::NotFound { .. }) => {}
                    Err(e) => return Err(self.error("erase", prefix, e)),
                }
            }
            Ok(())
        })
    }

    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix(&StorePrefix::root())
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        let mut keys = crate::store::wait::block_on(self.runtime, self.list_async(prefix))?;
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        let dir = prefix.dir().into_owned();
        let base = match dir.strip_suffix('/') {
            Some(d) => Some(self.path(d)),
            None if self.prefix.is_empty() => None,
            None => Some(Path::from(self.prefix.as_str())),
        };
        let listed = crate::store::wait::block_on(self.runtime, async {
            (self.inner.list_with_delimiter(base.as_ref()).await)
                .map_err(|e| self.error("list", &dir, e))
        })?;
        let mut out = DirListing {
            keys: listed
                .objects
                .iter()
                .map(|m| self.key_of(&m.location))
                .filter_map(|k| k.strip_prefix(&dir).map(str::to_string))
                .collect(),
            prefixes: listed
                .common_prefixes
                .iter()
                .map(|p| self.key_of(p))
                .filter_map(|k| k.strip_prefix(&dir).map(|s| format!("{s}/")))
                .collect(),
        };
        out.keys.sort();
        out.prefixes.sort();
        Ok(out)
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        crate::store::wait::block_on(self.runtime, self.size_async(key))
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn describe(&self) -> String {
        format!("{} store at {}", self.cloud.name(), self.url())
    }

    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let all = crate::store::wait::block_on(self.runtime, async {
            Ok(
                stream::iter(requests.iter().map(|(k, r)| self.get_async(k, *r)))
                    .buffered(self.options.max_concurrency)
                    .collect::<Vec<_>>()
                    .await,
            )
        });
        all.unwrap_or_else(|e| requests.iter().map(|_| Err(e.clone())).collect())
    }

    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        Some(self)
    }

    fn as_streamed(&self) -> Option<&dyn StreamedReads> {
        Some(self)
    }

    fn as_versioned(&self) -> Option<&dyn VersionedWrites> {
        Some(self)
    }
}

impl BatchedReads for ObjectStore {
    fn get_each(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
    ) {
        // Nobody else holds a value handed over whole: no copy.
        self.get_each_growing(requests, in_flight, Arc::new(|_, _| {}), &mut |i, got| {
            arrived(i, got.map(|v| v.map(Growing::into_vec)))
        })
    }
}

impl StreamedReads for ObjectStore {
    fn get_each_growing(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        grew: GrewFn,
        arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
    ) {
        let in_flight = in_flight.clamp(1, self.options.max_concurrency);
        // Each request is a task of the runtime, on the worker threads
        // where hyper's connection tasks receive the bodies: a body's
        // pieces are gathered there (and `grew` called there), and only
        // whole values cross to this thread. Gathered here, every piece
        // woke this thread from another one (a futex wake and a task
        // switch per piece).
        let me = Arc::new(self.clone());
        // On the fetching thread, not R's: the read that waits for these
        // values is the one that answers an interrupt (engine/fetch.rs),
        // and ends this wait, with its requests, when it stops.
        let _ = crate::store::wait::block_on(self.runtime, async {
            let mut got = stream::iter(requests.iter().enumerate().map(|(i, (k, r))| {
                let (me, key, range, grew) = (Arc::clone(&me), k.clone(), *r, Arc::clone(&grew));
                let task = self
                    .runtime
                    .spawn(async move { me.get_growing_async(&key, range, i, Some(&grew)).await });
                async move { (i, AbortOnDrop(task).await) }
            }))
            .buffer_unordered(in_flight);
            while let Some((i, value)) = got.next().await {
                let value = match value {
                    Ok(v) => v,
                    // A panic in a request reaches the fetching thread, as
                    // it did when the request ran there.
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    Err(e) => Err(ZarrError::Io(format!("a read was cancelled: {e}"))),
                };
                if !arrived(i, value) {
                    break;
                }
            }
            Ok(())
        });
    }
}

impl VersionedWrites for ObjectStore {
    /// The value at `key` and its version tag (ETag or generation), for a
    /// later [`ObjectStore::set_if_version`].
    fn get_versioned(&self, key: &StoreKey) -> Result<Option<(Vec<u8>, Option<String>)>> {
        crate::store::wait::block_on(self.runtime, async {
            match self.inner.get(&self.path(key)).await {
                Ok(r) => {
                    let tag = r.meta.e_tag.clone();
                    let bytes = r.bytes().await.map_err(|e| self.error("read", key, e))?;
                    Ok(Some((bytes.into(), tag)))
                }
                Err(os::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.error("read", key, e)),
            }
        })
    }

    /// Write `value` at `key` only if the value there is still the one of
    /// version `tag` (`None`: only if there is none yet). Another writer's
    /// change in between is a `Conflict` error, not a lost update. Returns
    /// the new version tag.
    fn set_if_version(
        &self,
        key: &StoreKey,
        value: &[u8],
        tag: Option<&str>,
    ) -> Result<Option<String>> {
        self.check_writable("write", key)?;
        let mode = match tag {
            None => PutMode::Create,
            Some(t) => PutMode::Update(os::UpdateVersion {
                e_tag: Some(t.to_string()),
                version: None,
            }),
        };
        crate::store::wait::block_on(self.runtime, async {
            match self.put_async(key, &[value], mode).await {
                Err(ZarrError::Conflict(msg)) => self.own_write_or(key, value, msg).await,
                other => other,
            }
        })
    }
}

impl ObjectStore {
    /// After a conditional write was refused: a write whose answer was
    /// lost (the connection dropped after the server applied it) is tried
    /// again by object_store with the same condition, which the value it
    /// wrote itself now fails. When the value there is the one this write
    /// wrote, the write is done (its version tag is returned); otherwise
    /// another writer changed it and the refusal (`msg`) stands.
    async fn own_write_or(
        &self,
        key: &StoreKey,
        value: &[u8],
        msg: String,
    ) -> Result<Option<String>> {
        if let Ok(r) = self.inner.get(&self.path(key)).await {
            let tag = r.meta.e_tag.clone();
            if let Ok(now) = r.bytes().await {
                if now.as_ref() == value {
                    return Ok(tag);
                }
            }
        }
        Err(ZarrError::Conflict(msg))
    }
}
