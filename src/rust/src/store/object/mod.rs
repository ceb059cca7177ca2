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
mod list;
mod read;
mod refused;
#[cfg(test)]
mod tests;
mod write;

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

    async fn size_async(&self, key: &StoreKey) -> Result<Option<u64>> {
        match self.inner.head(&self.path(key)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(os::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error("look up", key, e)),
        }
    }
}

/// The tokio runtime of this process's object stores (`crate::runtime`).
pub(crate) fn io_runtime() -> Result<&'static tokio::runtime::Runtime> {
    crate::runtime::io_runtime()
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

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        crate::store::wait::block_on(self.runtime, self.size_async(key))
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

    fn as_writable(&self) -> Option<&dyn Writes> {
        (!self.read_only).then_some(self as &dyn Writes)
    }

    fn as_listable(&self) -> Option<&dyn Listing> {
        Some(self)
    }

    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        Some(self)
    }

    fn as_streamed(&self) -> Option<&dyn StreamedReads> {
        Some(self)
    }

    fn as_versioned(&self) -> Option<&dyn VersionedWrites> {
        (!self.read_only).then_some(self as &dyn VersionedWrites)
    }
}
