//! Object stores: Amazon S3 and S3-compatible servers (MinIO, Ceph, R2,
//! moto), Google Cloud Storage and Azure Blob Storage, through Apache
//! Arrow's `object_store` crate, the engine zarrs, obstore, polars and
//! delta-rs share. The crate signs requests, reads credentials from each
//! cloud's environment variables, retries 5xx and throttling responses
//! with backoff, and does multipart uploads; this file maps the store
//! trait onto it.
//!
//! The crate is async. The store owns one small tokio runtime and the
//! engine's threads `block_on` it: the engine stays synchronous, and a
//! batch of reads (`get_many`) becomes one future with up to
//! `max_concurrency` requests in flight, which is what hides the latency
//! of a network round trip.
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
use std::collections::HashMap;
use std::sync::{Arc, Once};
use std::time::Duration;

/// Which cloud a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    S3,
    Gcs,
    Azure,
}

impl Cloud {
    fn scheme(self) -> &'static str {
        match self {
            Cloud::S3 => "s3",
            Cloud::Gcs => "gs",
            Cloud::Azure => "az",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Cloud::S3 => "S3",
            Cloud::Gcs => "GCS",
            Cloud::Azure => "Azure",
        }
    }
}

/// Settings of an [`ObjectStore`] that are not the cloud's own (those go to
/// the `object_store` builder by their names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectOptions {
    /// The most requests a batch read has in flight. 64 requests of
    /// 1 MiB each keep a 1 Gbit/s link with 20 ms round trips busy
    /// (64 MiB per 20 ms would even allow 25 Gbit/s): latency, not
    /// bandwidth, is what the engine has to hide.
    pub max_concurrency: usize,
    /// Values at least this long are uploaded in parts (a large shard).
    pub multipart_threshold: usize,
    /// The size of each part of a multipart upload.
    pub part_size: usize,
    /// Retries of a failed request (5xx, throttling, lost connections).
    pub max_retries: usize,
    /// The longest time spent retrying one request.
    pub retry_timeout: Duration,
}

impl Default for ObjectOptions {
    fn default() -> Self {
        ObjectOptions {
            max_concurrency: 64,
            multipart_threshold: 64 << 20,
            part_size: 16 << 20,
            max_retries: 10,
            retry_timeout: Duration::from_secs(180),
        }
    }
}

/// The option names this file reads itself; every other name goes to the
/// cloud's builder.
const OWN_OPTIONS: [&str; 5] = [
    "max_concurrency",
    "multipart_threshold",
    "part_size",
    "max_retries",
    "retry_timeout",
];

pub struct ObjectStore {
    cloud: Cloud,
    /// The bucket (S3, GCS) or container (Azure).
    bucket: String,
    /// "" or the path of the store root in the bucket, without a final "/".
    prefix: String,
    inner: Arc<dyn os::ObjectStore>,
    runtime: tokio::runtime::Runtime,
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

/// rustls needs one crypto provider for the process; ring is the one the
/// HTTP store's TLS already links, so no second implementation is built.
fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another library of the process may have installed one already;
        // either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The cloud of a URL and whether the URL names an object store at all:
/// `s3://`, `s3a://`, `gs://`, `az://`, `azure://`, `abfs(s)://`, `adl://`,
/// and the https URLs of S3, R2 and Azure that `object_store` knows.
pub fn cloud_of_url(url: &str) -> Option<Cloud> {
    let parsed = url::Url::parse(url).ok()?;
    match os::ObjectStoreScheme::parse(&parsed).ok()?.0 {
        os::ObjectStoreScheme::AmazonS3 => Some(Cloud::S3),
        os::ObjectStoreScheme::GoogleCloudStorage => Some(Cloud::Gcs),
        os::ObjectStoreScheme::MicrosoftAzure => Some(Cloud::Azure),
        _ => None,
    }
}

/// The bucket (container) a URL names, for messages and `url()`; the
/// builders parse it themselves only when the store is built.
fn bucket_of_url(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or("");
    let first_segment = || {
        url.path_segments()
            .and_then(|mut s| s.next())
            .unwrap_or("")
            .to_string()
    };
    match url.scheme() {
        // abfs://container@account.dfs.core.windows.net/path
        "az" | "azure" | "adl" | "abfs" | "abfss" if !url.username().is_empty() => {
            url.username().to_string()
        }
        "https" | "http" => {
            // bucket.s3.region.amazonaws.com, else the bucket or container
            // is the first segment of the path.
            let mut labels = host.split('.');
            match (labels.next(), labels.next()) {
                (Some(b), Some(s3)) if s3 == "s3" || s3.starts_with("s3-") => b.to_string(),
                _ => first_segment(),
            }
        }
        _ => host.to_string(),
    }
}

fn option_error(cloud: Cloud, msg: String) -> ZarrError {
    ZarrError::Unsupported(format!("{} store: {msg}", cloud.name()))
}

fn parse_number<T: std::str::FromStr>(cloud: Cloud, key: &str, value: &str) -> Result<T> {
    value.trim().parse().map_err(|_| {
        option_error(
            cloud,
            format!("option '{key}' must be a number, not '{value}'"),
        )
    })
}

/// Whether the environment or `options` name a way to sign requests; when
/// none does, a store that was not told otherwise reads anonymously
/// instead of asking an instance metadata service that is not there.
fn has_credentials(cloud: Cloud, options: &[(String, String)]) -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let opt = |names: &[&str]| {
        options
            .iter()
            .any(|(k, _)| names.contains(&k.to_ascii_lowercase().as_str()))
    };
    match cloud {
        Cloud::S3 => {
            env("AWS_ACCESS_KEY_ID")
                || env("AWS_WEB_IDENTITY_TOKEN_FILE")
                || env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                || env("AWS_CONTAINER_CREDENTIALS_FULL_URI")
                || opt(&["aws_access_key_id", "access_key_id"])
        }
        // GCS and Azure have default credential chains (gcloud's
        // application default credentials, managed identities) that
        // object_store follows; leave them on.
        Cloud::Gcs | Cloud::Azure => true,
    }
}

/// The builder settings of an Azure connection string
/// (`AccountName=...;AccountKey=...;BlobEndpoint=...`), the form the Azure
/// CLI and SDKs read from `AZURE_STORAGE_CONNECTION_STRING`; object_store
/// does not read it. Unknown fields (queue and table endpoints) are left
/// out; a value may hold '=' (base64 keys end in it).
fn azure_connection_string(cs: &str) -> Vec<(String, String)> {
    let mut fields = HashMap::new();
    for part in cs.split(';') {
        if let Some((k, v)) = part.split_once('=') {
            fields.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut out = Vec::new();
    let mut put = |k: &str, v: &str| out.push((k.to_string(), v.to_string()));
    if fields
        .get("usedevelopmentstorage")
        .is_some_and(|v| truthy(v))
    {
        put("use_emulator", "true");
    }
    if let Some(v) = fields.get("accountname") {
        put("account_name", v);
    }
    if let Some(v) = fields.get("accountkey") {
        put("access_key", v);
    }
    if let Some(v) = fields.get("sharedaccesssignature") {
        put("sas_key", v);
    }
    let endpoint = match (fields.get("blobendpoint"), fields.get("accountname")) {
        (Some(e), _) => Some(e.trim_end_matches('/').to_string()),
        (None, Some(account)) => {
            let protocol = fields.get("defaultendpointsprotocol");
            let suffix = fields.get("endpointsuffix");
            (protocol.is_some() || suffix.is_some()).then(|| {
                format!(
                    "{}://{account}.blob.{}",
                    protocol.map_or("https", String::as_str),
                    suffix.map_or("core.windows.net", String::as_str)
                )
            })
        }
        (None, None) => None,
    };
    if let Some(e) = endpoint {
        if e.to_ascii_lowercase().starts_with("http://") {
            put("allow_http", "true");
        }
        put("endpoint", &e);
    }
    out
}

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
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
        let mut own = ObjectOptions::default();
        let mut rest = Vec::new();
        for (k, v) in options {
            match k.to_ascii_lowercase().as_str() {
                "max_concurrency" => own.max_concurrency = parse_number(cloud, k, v)?,
                "multipart_threshold" => own.multipart_threshold = parse_number(cloud, k, v)?,
                "part_size" => own.part_size = parse_number(cloud, k, v)?,
                "max_retries" => own.max_retries = parse_number(cloud, k, v)?,
                "retry_timeout" => {
                    let secs: f64 = parse_number(cloud, k, v)?;
                    if !(secs.is_finite() && secs >= 0.0) {
                        return Err(option_error(cloud, format!("option '{k}' must be >= 0")));
                    }
                    own.retry_timeout = Duration::from_secs_f64(secs);
                }
                _ => rest.push((k.to_ascii_lowercase(), v.clone())),
            }
        }
        own.max_concurrency = own.max_concurrency.max(1);
        // S3 refuses parts under 5 MiB but the last.
        own.part_size = own.part_size.max(5 << 20);
        let anonymous = match anonymous {
            Some(a) => a,
            None => {
                std::env::var("AWS_NO_SIGN_REQUEST").is_ok_and(|v| truthy(&v)) && cloud == Cloud::S3
                    || !has_credentials(cloud, &rest)
            }
        };
        let retry = os::RetryConfig {
            max_retries: own.max_retries,
            retry_timeout: own.retry_timeout,
            ..Default::default()
        };
        install_crypto_provider();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zarr-object-store")
            .enable_all()
            .build()
            .map_err(|e| ZarrError::Io(format!("cannot start the I/O runtime of {url}: {e}")))?;
        let _guard = runtime.enter();
        let unknown = |k: &str| {
            option_error(
                cloud,
                format!(
                    "unknown option '{k}' (known here: the object_store configuration keys and {})",
                    OWN_OPTIONS.join(", ")
                ),
            )
        };
        let build_error = |e: os::Error| {
            ZarrError::Unsupported(format!("cannot open {} store '{url}': {e}", cloud.name()))
        };
        let bucket = bucket_of_url(&parsed);
        let inner: Arc<dyn os::ObjectStore> = match cloud {
            Cloud::S3 => {
                use os::aws::{AmazonS3Builder, AmazonS3ConfigKey as K};
                let mut b = AmazonS3Builder::from_env().with_url(url);
                for (k, v) in &rest {
                    let key: K = k.parse().map_err(|_| unknown(k))?;
                    b = b.with_config(key, v);
                }
                if anonymous {
                    b = b.with_config(K::SkipSignature, "true");
                }
                Arc::new(b.with_retry(retry).build().map_err(build_error)?)
            }
            Cloud::Gcs => {
                use os::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey as K};
                let mut b = GoogleCloudStorageBuilder::from_env().with_url(url);
                for (k, v) in &rest {
                    let key: K = k.parse().map_err(|_| unknown(k))?;
                    b = b.with_config(key, v);
                }
                if anonymous {
                    b = b.with_config(K::SkipSignature, "true");
                }
                Arc::new(b.with_retry(retry).build().map_err(build_error)?)
            }
            Cloud::Azure => {
                use os::azure::{AzureConfigKey as K, MicrosoftAzureBuilder};
                let mut b = MicrosoftAzureBuilder::from_env().with_url(url);
                // A connection string stands for the account variables when
                // those are not set.
                let env_set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
                if !env_set("AZURE_STORAGE_ACCOUNT_NAME") && !env_set("AZURE_STORAGE_USE_EMULATOR")
                {
                    if let Ok(cs) = std::env::var("AZURE_STORAGE_CONNECTION_STRING") {
                        for (k, v) in azure_connection_string(&cs) {
                            let key: K = k.parse().map_err(|_| unknown(&k))?;
                            b = b.with_config(key, v);
                        }
                    }
                }
                for (k, v) in &rest {
                    let key: K = k.parse().map_err(|_| unknown(k))?;
                    b = b.with_config(key, v);
                }
                if anonymous {
                    b = b.with_config(K::SkipSignature, "true");
                }
                Arc::new(b.with_retry(retry).build().map_err(build_error)?)
            }
        };
        drop(_guard);
        Ok(ObjectStore {
            cloud,
            bucket,
            prefix: path.as_ref().trim_matches('/').to_string(),
            inner,
            runtime,
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
            return Err(read_only_error(self, what, key));
        }
        Ok(())
    }

    async fn get_async(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let path = self.path(key);
        let (want, expect_len) = match range {
            ByteRange::All => (None, None),
            // object_store refuses empty ranges; they are answered by a
            // HEAD, which still says whether the value exists and is long
            // enough.
            ByteRange::Range { length: 0, .. } | ByteRange::Suffix(0) => {
                return match self.size_async(key).await? {
                    None => Ok(None),
                    Some(len) => {
                        resolve_range(key, len, range)?;
                        Ok(Some(Vec::new()))
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
                    return Ok(None);
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
        let got = match self.inner.get_opts(&path, opts).await {
            Ok(r) => r,
            Err(os::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.range_error(key, range, e)),
        };
        let size = got.meta.size;
        let bytes: Bytes = got.bytes().await.map_err(|e| self.error("read", key, e))?;
        // A range past the end is cut short by the server: report it as
        // every store does.
        if let Some(n) = expect_len {
            if bytes.len() as u64 != n {
                resolve_range(key, size, range)?;
            }
        }
        Ok(Some(bytes.into()))
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

    async fn size_async(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
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
            let mut w = os::WriteMultipart::new_with_chunk_size(upload, self.options.part_size);
            for p in parts {
                // Bounds the parts in memory at once to the concurrency.
                w.wait_for_capacity(self.options.max_concurrency.min(8))
                    .await
                    .map_err(|e| self.error("upload", key, e))?;
                w.write(p);
            }
            let r = w.finish().await.map_err(|e| self.error("upload", key, e))?;
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
    async fn list_async(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
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
            .filter(|k| k.starts_with(prefix))
            .collect())
    }
}

impl Store for ObjectStore {
    fn get(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        self.runtime.block_on(self.get_async(key, range))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        validate_key(key)?;
        self.check_writable("write", key)?;
        self.runtime
            .block_on(self.put_async(key, parts, PutMode::Overwrite))
            .map(|_| ())
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.check_writable("erase", key)?;
        self.runtime.block_on(async {
            match self.inner.delete(&self.path(key)).await {
                Ok(()) | Err(os::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.error("erase", key, e)),
            }
        })
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        self.check_writable("erase prefix", prefix)?;
        self.runtime.block_on(async {
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
        self.list_prefix("")
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys = self.runtime.block_on(self.list_async(prefix))?;
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let dir = dir_prefix(prefix)?;
        let base = match dir.strip_suffix('/') {
            Some(d) => Some(self.path(d)),
            None if self.prefix.is_empty() => None,
            None => Some(Path::from(self.prefix.as_str())),
        };
        let listed = self
            .runtime
            .block_on(self.inner.list_with_delimiter(base.as_ref()))
            .map_err(|e| self.error("list", &dir, e))?;
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

    fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        self.runtime.block_on(self.size_async(key))
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn describe(&self) -> String {
        format!("{} store at {}", self.cloud.name(), self.url())
    }

    fn get_many(&self, requests: &[(String, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        self.runtime.block_on(
            stream::iter(requests.iter().map(|(k, r)| self.get_async(k, *r)))
                .buffered(self.options.max_concurrency)
                .collect(),
        )
    }

    fn prefers_batches(&self) -> bool {
        true
    }

    fn supports_conditional_writes(&self) -> bool {
        true
    }

    /// The value at `key` and its version tag (ETag or generation), for a
    /// later [`ObjectStore::set_if_version`].
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Option<String>)>> {
        validate_key(key)?;
        self.runtime.block_on(async {
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
    fn set_if_version(&self, key: &str, value: &[u8], tag: Option<&str>) -> Result<Option<String>> {
        validate_key(key)?;
        self.check_writable("write", key)?;
        let mode = match tag {
            None => PutMode::Create,
            Some(t) => PutMode::Update(os::UpdateVersion {
                e_tag: Some(t.to_string()),
                version: None,
            }),
        };
        self.runtime.block_on(self.put_async(key, &[value], mode))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn urls_of_each_cloud_are_recognised() {
        assert_eq!(cloud_of_url("s3://bkt/a/b.zarr"), Some(Cloud::S3));
        assert_eq!(cloud_of_url("s3a://bkt/a"), Some(Cloud::S3));
        assert_eq!(
            cloud_of_url("https://bkt.s3.eu-west-1.amazonaws.com/a.zarr"),
            Some(Cloud::S3)
        );
        assert_eq!(cloud_of_url("gs://bkt/a"), Some(Cloud::Gcs));
        assert_eq!(cloud_of_url("az://container/a"), Some(Cloud::Azure));
        assert_eq!(
            cloud_of_url("abfs://container@acct.dfs.core.windows.net/a"),
            Some(Cloud::Azure)
        );
        assert_eq!(cloud_of_url("https://example.org/a.zarr"), None);
        assert_eq!(cloud_of_url("data/a.zarr"), None);
    }

    #[test]
    fn open_takes_bucket_and_prefix_from_the_url() {
        let s = ObjectStore::open(
            "s3://bkt/data/x.zarr/",
            &opts(&[("region", "eu-west-1")]),
            true,
            Some(true),
        )
        .unwrap();
        assert_eq!(s.bucket(), "bkt");
        assert_eq!(s.prefix(), "data/x.zarr");
        assert_eq!(s.url(), "s3://bkt/data/x.zarr");
        assert_eq!(s.describe(), "S3 store at s3://bkt/data/x.zarr");
        assert_eq!(s.path("c/0/1").as_ref(), "data/x.zarr/c/0/1");
        assert_eq!(s.key_of(&Path::from("data/x.zarr/c/0/1")), "c/0/1");

        let v = ObjectStore::open(
            "https://bkt2.s3.us-west-2.amazonaws.com/y.zarr",
            &[],
            true,
            Some(true),
        )
        .unwrap();
        assert_eq!((v.bucket(), v.prefix()), ("bkt2", "y.zarr"));

        let g = ObjectStore::open("gs://gbkt/z", &[], true, Some(true)).unwrap();
        assert_eq!(
            (g.cloud(), g.bucket(), g.prefix()),
            (Cloud::Gcs, "gbkt", "z")
        );
        let a = ObjectStore::open(
            "az://cont/p/q",
            &opts(&[("account_name", "acct")]),
            true,
            Some(true),
        )
        .unwrap();
        assert_eq!(
            (a.cloud(), a.bucket(), a.prefix()),
            (Cloud::Azure, "cont", "p/q")
        );
        assert_eq!(a.url(), "az://cont/p/q");
    }

    #[test]
    fn own_options_are_read_and_bad_ones_refused() {
        let s = ObjectStore::open(
            "s3://bkt",
            &opts(&[
                ("max_concurrency", "7"),
                ("retry_timeout", "2.5"),
                ("part_size", "1"),
            ]),
            true,
            Some(true),
        )
        .unwrap();
        assert_eq!(s.options().max_concurrency, 7);
        assert_eq!(s.options().retry_timeout, Duration::from_millis(2500));
        assert_eq!(s.options().part_size, 5 << 20);
        assert_eq!(s.prefix(), "");

        let e = ObjectStore::open("s3://bkt", &opts(&[("no_such_option", "1")]), true, None)
            .unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.message().contains("no_such_option"), "{e}");
        let e = ObjectStore::open("s3://bkt", &opts(&[("max_retries", "many")]), true, None)
            .unwrap_err();
        assert!(e.message().contains("max_retries"), "{e}");
        let e = ObjectStore::open("https://example.org/a", &[], true, None).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
    }

    #[test]
    fn azure_connection_strings_become_builder_settings() {
        let key = "a2V5PT0=";
        let got = azure_connection_string(&format!(
            "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey={key};\
             BlobEndpoint=http://127.0.0.1:10000/acct/;QueueEndpoint=http://q"
        ));
        assert_eq!(
            got,
            opts(&[
                ("account_name", "acct"),
                ("access_key", key),
                ("allow_http", "true"),
                ("endpoint", "http://127.0.0.1:10000/acct"),
            ])
        );
        let got = azure_connection_string(
            "AccountName=a;SharedAccessSignature=sv=1&sig=x;EndpointSuffix=core.chinacloudapi.cn",
        );
        assert_eq!(
            got,
            opts(&[
                ("account_name", "a"),
                ("sas_key", "sv=1&sig=x"),
                ("endpoint", "https://a.blob.core.chinacloudapi.cn"),
            ])
        );
        assert_eq!(
            azure_connection_string("UseDevelopmentStorage=true"),
            opts(&[("use_emulator", "true")])
        );
        assert!(azure_connection_string("").is_empty());
    }

    #[test]
    fn writes_to_a_read_only_store_are_refused_before_any_request() {
        let s = ObjectStore::open("s3://bkt/p", &[], true, Some(true)).unwrap();
        let e = s.set("a", b"x").unwrap_err();
        assert_eq!(e.kind(), "read_only");
        assert!(e.message().contains("s3://bkt/p"), "{e}");
        assert_eq!(s.erase("a").unwrap_err().kind(), "read_only");
        assert_eq!(
            s.set_if_version("a", b"x", None).unwrap_err().kind(),
            "read_only"
        );
        assert_eq!(
            s.get("../a", ByteRange::All).unwrap_err().kind(),
            "invalid_key"
        );
    }

    #[test]
    fn errors_name_bucket_and_key_and_keep_their_kind() {
        let s = ObjectStore::open("s3://bkt/root", &[], false, Some(true)).unwrap();
        let src = || -> Box<dyn std::error::Error + Send + Sync> { "denied".into() };
        let e = s.error(
            "read",
            "c/0",
            os::Error::PermissionDenied {
                path: "root/c/0".into(),
                source: src(),
            },
        );
        assert_eq!(e.kind(), "permission_denied");
        assert!(e.message().contains("bucket 'bkt', key 'root/c/0'"), "{e}");
        let e = s.error(
            "write",
            "zarr.json",
            os::Error::Precondition {
                path: "root/zarr.json".into(),
                source: src(),
            },
        );
        assert_eq!(e.kind(), "conflict");
        let e = s.error(
            "read",
            "k",
            os::Error::Generic {
                store: "S3",
                source: src(),
            },
        );
        assert_eq!(e.kind(), "io");
        assert!(e.message().contains("key 'root/k'"), "{e}");
    }
}
