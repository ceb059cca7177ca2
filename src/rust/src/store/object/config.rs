//! The configuration of an object store: which cloud a URL names, this
//! package's own options, and the settings handed to the `object_store`
//! builder of each cloud (from the environment, an Azure connection
//! string, and the user's `options`).

use super::*;
use crate::store::retry::{RetryPolicy, INITIAL_BACKOFF, MAX_BACKOFF};
use std::collections::HashMap;
use std::time::Duration;

/// Which cloud a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    S3,
    Gcs,
    Azure,
}

impl Cloud {
    pub(super) fn scheme(self) -> &'static str {
        match self {
            Cloud::S3 => "s3",
            Cloud::Gcs => "gs",
            Cloud::Azure => "az",
        }
    }

    pub(super) fn name(self) -> &'static str {
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
    /// When a failed request is tried again (5xx, throttling, lost
    /// connections, bodies cut short, timeouts): the policy of the HTTP
    /// store, run by object_store's retry loop.
    pub retry: RetryPolicy,
    /// Limit on resolving the host name and opening a connection.
    pub connect_timeout: Duration,
    /// Limit on each wait for the server (object_store's `read_timeout`).
    pub request_timeout: Duration,
}

impl Default for ObjectOptions {
    fn default() -> Self {
        ObjectOptions {
            max_concurrency: 64,
            multipart_threshold: 64 << 20,
            part_size: 16 << 20,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
        }
    }
}

impl ObjectOptions {
    /// The retry policy as object_store's configuration.
    pub(super) fn retry_config(&self) -> os::RetryConfig {
        os::RetryConfig {
            max_retries: self.retry.max_retries,
            retry_timeout: self.retry.retry_timeout,
            backoff: os::BackoffConfig {
                init_backoff: INITIAL_BACKOFF,
                max_backoff: MAX_BACKOFF,
                base: 2.0,
            },
        }
    }

    /// The timeouts as builder settings, unless `rest` (the user's builder
    /// settings) names them itself.
    pub(super) fn timeout_settings(&self, rest: &[(String, String)]) -> Vec<(String, String)> {
        let given = |k: &str| rest.iter().any(|(name, _)| name == k);
        let mut out = Vec::new();
        for (k, d) in [
            ("connect_timeout", self.connect_timeout),
            ("read_timeout", self.request_timeout),
        ] {
            if !given(k) {
                out.push((k.to_string(), format!("{}ms", d.as_millis().max(1))));
            }
        }
        out
    }
}

/// The option names this file reads itself; every other name goes to the
/// cloud's builder.
pub(super) const OWN_OPTIONS: [&str; 7] = [
    "max_concurrency",
    "multipart_threshold",
    "part_size",
    "max_retries",
    "retry_timeout",
    "connect_timeout",
    "request_timeout",
];

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
pub(super) fn bucket_of_url(url: &url::Url) -> String {
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

pub(super) fn option_error(cloud: Cloud, msg: String) -> ZarrError {
    ZarrError::Unsupported(format!("{} store: {msg}", cloud.name()))
}

pub(super) fn parse_number<T: std::str::FromStr>(
    cloud: Cloud,
    key: &str,
    value: &str,
) -> Result<T> {
    value.trim().parse().map_err(|_| {
        option_error(
            cloud,
            format!("option '{key}' must be a number, not '{value}'"),
        )
    })
}

/// A duration given in seconds (a number >= 0).
fn parse_seconds(cloud: Cloud, key: &str, value: &str) -> Result<Duration> {
    let secs: f64 = parse_number(cloud, key, value)?;
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(option_error(
            cloud,
            format!("option '{key}' must be a number of seconds >= 0"),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Whether the environment or `options` name a way to sign requests; when
/// none does, a store that was not told otherwise reads anonymously
/// instead of asking an instance metadata service that is not there.
/// `env` looks a variable up (the process environment, or a test's).
pub(super) fn has_credentials(
    cloud: Cloud,
    options: &[(String, String)],
    env: &dyn Fn(&str) -> Option<String>,
) -> bool {
    let env = |k: &str| env(k).is_some_and(|v| !v.is_empty());
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

/// Whether a store opened without an explicit `anonymous` sends unsigned
/// requests: for S3 when `AWS_NO_SIGN_REQUEST` is true (as the AWS CLI
/// reads it), for any cloud when no credentials are found.
pub(super) fn anonymous_by_default(
    cloud: Cloud,
    options: &[(String, String)],
    env: &dyn Fn(&str) -> Option<String>,
) -> bool {
    cloud == Cloud::S3 && env("AWS_NO_SIGN_REQUEST").is_some_and(|v| truthy(&v))
        || !has_credentials(cloud, options, env)
}

/// The builder settings of an Azure connection string
/// (`AccountName=...;AccountKey=...;BlobEndpoint=...`), the form the Azure
/// CLI and SDKs read from `AZURE_STORAGE_CONNECTION_STRING`; object_store
/// does not read it. Unknown fields (queue and table endpoints) are left
/// out; a value may hold '=' (base64 keys end in it).
pub(super) fn azure_connection_string(cs: &str) -> Vec<(String, String)> {
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

pub(super) fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// This store's own options taken out of `options` (names compared
/// without case), and the rest, lower-cased, for the builder.
pub(super) fn split_options(
    cloud: Cloud,
    options: &[(String, String)],
) -> Result<(ObjectOptions, Vec<(String, String)>)> {
    let mut own = ObjectOptions::default();
    let mut rest = Vec::new();
    for (k, v) in options {
        match k.to_ascii_lowercase().as_str() {
            "max_concurrency" => own.max_concurrency = parse_number(cloud, k, v)?,
            "multipart_threshold" => own.multipart_threshold = parse_number(cloud, k, v)?,
            "part_size" => own.part_size = parse_number(cloud, k, v)?,
            "max_retries" => own.retry.max_retries = parse_number(cloud, k, v)?,
            "retry_timeout" => own.retry.retry_timeout = parse_seconds(cloud, k, v)?,
            "connect_timeout" => own.connect_timeout = parse_seconds(cloud, k, v)?,
            "request_timeout" => own.request_timeout = parse_seconds(cloud, k, v)?,
            _ => rest.push((k.to_ascii_lowercase(), v.clone())),
        }
    }
    own.max_concurrency = own.max_concurrency.max(1);
    // S3 refuses parts under 5 MiB but the last.
    own.part_size = own.part_size.max(5 << 20);
    Ok((own, rest))
}

/// The settings for the builder on top of what it reads from the
/// environment itself: for Azure, an `AZURE_STORAGE_CONNECTION_STRING`
/// stands for the account variables when those are not set; the user's
/// options come last and win.
pub(super) fn builder_settings(cloud: Cloud, rest: Vec<(String, String)>) -> Vec<(String, String)> {
    let env_set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if cloud != Cloud::Azure
        || env_set("AZURE_STORAGE_ACCOUNT_NAME")
        || env_set("AZURE_STORAGE_USE_EMULATOR")
    {
        return rest;
    }
    match std::env::var("AZURE_STORAGE_CONNECTION_STRING") {
        Ok(cs) => azure_connection_string(&cs)
            .into_iter()
            .chain(rest)
            .collect(),
        Err(_) => rest,
    }
}

/// What the builders of the three clouds share, so that one function
/// configures any of them.
pub(super) trait CloudBuilder: Sized {
    type Key: std::str::FromStr;
    const SKIP_SIGNATURE: Self::Key;
    fn from_env_url(url: &str) -> Self;
    fn set(self, key: Self::Key, value: &str) -> Self;
    fn finish(self, retry: os::RetryConfig) -> os::Result<Arc<dyn os::ObjectStore>>;
}

macro_rules! cloud_builder {
    ($builder:ty, $key:ty) => {
        impl CloudBuilder for $builder {
            type Key = $key;
            const SKIP_SIGNATURE: $key = <$key>::SkipSignature;
            fn from_env_url(url: &str) -> Self {
                <$builder>::from_env().with_url(url)
            }
            fn set(self, key: $key, value: &str) -> Self {
                self.with_config(key, value)
            }
            fn finish(self, retry: os::RetryConfig) -> os::Result<Arc<dyn os::ObjectStore>> {
                let built = self
                    .with_retry(retry)
                    .with_http_connector(super::refused::RefusalLimit)
                    .build()?;
                Ok(Arc::new(built))
            }
        }
    };
}

cloud_builder!(os::aws::AmazonS3Builder, os::aws::AmazonS3ConfigKey);
cloud_builder!(os::gcp::GoogleCloudStorageBuilder, os::gcp::GoogleConfigKey);
cloud_builder!(os::azure::MicrosoftAzureBuilder, os::azure::AzureConfigKey);

/// The `object_store` client of `cloud` for `url`: the environment, then
/// `settings` (by their `object_store` names), then unsigned requests if
/// `anonymous`. Must run inside the store's tokio runtime.
pub(super) fn build<B: CloudBuilder>(
    cloud: Cloud,
    url: &str,
    settings: &[(String, String)],
    anonymous: bool,
    retry: os::RetryConfig,
) -> Result<Arc<dyn os::ObjectStore>> {
    let mut b = B::from_env_url(url);
    for (k, v) in settings {
        let key: B::Key = k.parse().map_err(|_| {
            option_error(
                cloud,
                format!(
                    "unknown option '{k}' (known here: the object_store configuration keys and {})",
                    OWN_OPTIONS.join(", ")
                ),
            )
        })?;
        b = b.set(key, v);
    }
    if anonymous {
        b = b.set(B::SKIP_SIGNATURE, "true");
    }
    b.finish(retry).map_err(|e| {
        ZarrError::Unsupported(format!("cannot open {} store '{url}': {e}", cloud.name()))
    })
}
