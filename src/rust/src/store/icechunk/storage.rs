//! Where a repository is: a local folder, an object store bucket with
//! the options `zarr_objectstore` takes, or a web server.

use super::*;

/// The value of the first of `keys` in `options` (names as
/// `zarr_objectstore` takes them, any case), else of the first of `env`
/// set in the environment.
fn setting(options: &[(String, String)], keys: &[&str], env: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| {
            options
                .iter()
                .find(|(o, _)| o.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.clone())
        })
        .or_else(|| env.iter().find_map(|e| std::env::var(e).ok()))
        .filter(|v| !v.is_empty())
}

fn truthy(v: Option<String>) -> bool {
    v.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// The bucket (container) and prefix of an object store URL.
fn bucket_and_prefix(location: &str) -> Result<(String, Option<String>)> {
    let url = url::Url::parse(location)
        .map_err(|e| ZarrError::InvalidKey(format!("'{location}' is not a URL: {e}")))?;
    let mut bucket = url.host_str().unwrap_or("").to_string();
    let mut path = url.path().trim_matches('/').to_string();
    // az://container/path and abfs://container@account.dfs.core.windows.net/path
    if let Some((container, _)) = bucket.split_once('@') {
        bucket = container.to_string();
    } else if url.username() != "" {
        bucket = url.username().to_string();
    }
    if bucket.is_empty() {
        let (b, rest) = path.split_once('/').unwrap_or((&path, ""));
        (bucket, path) = (b.to_string(), rest.to_string());
    }
    Ok((bucket, (!path.is_empty()).then_some(path)))
}

/// The Azure storage account of a repository: the option or environment
/// variable that names it, the account of an
/// abfs://container@account.dfs.core.windows.net URL, or the emulator's
/// one account when the emulator is asked for (as object_store's Azure
/// builder takes them, which `open_zarr()` uses).
fn azure_account(location: &str, options: &[(String, String)]) -> Option<String> {
    let opt = |keys: &[&str], env: &[&str]| setting(options, keys, env);
    opt(
        &["azure_storage_account_name", "account_name"],
        &["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"],
    )
    .or_else(|| {
        let url = url::Url::parse(location).ok()?;
        let host = url.host_str()?;
        let (_, at) = host
            .split_once('@')
            .or_else(|| (!url.username().is_empty()).then_some((url.username(), host)))?;
        at.split('.')
            .next()
            .filter(|a| !a.is_empty())
            .map(String::from)
    })
    .or_else(|| {
        let emulator = opt(
            &["azure_storage_use_emulator", "use_emulator"],
            &["AZURE_STORAGE_USE_EMULATOR"],
        );
        truthy(emulator).then(|| "devstoreaccount1".to_string())
    })
}

/// The folder of a repository on the local file system (a path or a
/// file:// URL); None for a repository elsewhere.
pub(super) fn local_folder(location: &str) -> Option<std::path::PathBuf> {
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("file://") {
        return Some(location["file://".len()..].into());
    }
    (!location.contains("://")).then(|| location.into())
}

/// The icechunk storage of a repository location: a local folder (or
/// file:// URL), an S3, GCS or Azure URL with `options` as
/// `zarr_objectstore` takes them (and the same environment variables), or
/// an http(s):// URL (read-only).
pub(super) async fn storage_of(
    location: &str,
    options: &[(String, String)],
) -> Result<Arc<dyn icechunk::Storage + Send + Sync>> {
    use icechunk::storage::{S3Credentials, S3Options, S3StaticCredentials};
    let fail = |e: icechunk::StorageError| {
        ic_error(
            &format!("cannot open the Icechunk repository at '{location}'"),
            e,
        )
    };
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return icechunk::storage::new_http_storage(location, None, None).map_err(fail);
    }
    let opt = |keys: &[&str], env: &[&str]| setting(options, keys, env);
    match crate::store::object::cloud_of_url(location) {
        None if location.contains("://") && !lower.starts_with("file://") => {
            Err(ZarrError::Unsupported(format!(
                "cannot open an Icechunk repository at '{location}': use a folder, \
                 an s3://, gs://, az:// or http(s):// URL"
            )))
        }
        None => {
            let path = local_folder(location).unwrap_or_default();
            icechunk::new_local_filesystem_storage(&path)
                .await
                .map_err(fail)
        }
        Some(crate::store::object::Cloud::S3) => {
            let (bucket, prefix) = bucket_and_prefix(location)?;
            let anonymous = truthy(opt(
                &["aws_skip_signature", "skip_signature"],
                &["AWS_SKIP_SIGNATURE"],
            ));
            let mut config = S3Options::default();
            config.region = opt(
                &["aws_region", "region"],
                &["AWS_REGION", "AWS_DEFAULT_REGION"],
            );
            config.endpoint_url = opt(
                &[
                    "aws_endpoint",
                    "aws_endpoint_url",
                    "endpoint",
                    "endpoint_url",
                ],
                &["AWS_ENDPOINT_URL", "AWS_ENDPOINT"],
            );
            config.anonymous = anonymous;
            config.allow_http = truthy(opt(&["aws_allow_http", "allow_http"], &["AWS_ALLOW_HTTP"]));
            config.force_path_style = !truthy(opt(
                &[
                    "aws_virtual_hosted_style_request",
                    "virtual_hosted_style_request",
                ],
                &[],
            ));
            config.requester_pays = truthy(opt(&["aws_request_payer", "request_payer"], &[]));
            let key = opt(&["aws_access_key_id", "access_key_id"], &[]);
            let secret = opt(&["aws_secret_access_key", "secret_access_key"], &[]);
            let credentials = match (key, secret) {
                _ if anonymous => S3Credentials::Anonymous,
                (Some(access_key_id), Some(secret_access_key)) => {
                    S3Credentials::Static(S3StaticCredentials {
                        access_key_id,
                        secret_access_key,
                        session_token: opt(&["aws_session_token", "token", "session_token"], &[]),
                        expires_after: None,
                    })
                }
                _ => S3Credentials::FromEnv,
            };
            icechunk::storage::new_s3_object_store_storage(
                config,
                bucket,
                prefix,
                Some(credentials),
                Vec::new(),
                Vec::new(),
            )
            .await
            .map_err(fail)
        }
        Some(crate::store::object::Cloud::Gcs) => {
            let (bucket, prefix) = bucket_and_prefix(location)?;
            let config: HashMap<String, String> = options.iter().cloned().collect();
            let credentials = if truthy(opt(&["google_skip_signature", "skip_signature"], &[])) {
                icechunk::storage::GcsCredentials::Anonymous
            } else {
                icechunk::storage::GcsCredentials::FromEnv
            };
            icechunk::storage::new_gcs_storage(
                bucket,
                prefix,
                Some(credentials),
                Some(config),
                Vec::new(),
                Vec::new(),
            )
            .map_err(fail)
        }
        Some(crate::store::object::Cloud::Azure) => {
            let (container, prefix) = bucket_and_prefix(location)?;
            let account = azure_account(location, options).ok_or_else(|| {
                ZarrError::Unsupported(format!(
                    "cannot open the Icechunk repository at '{location}': no Azure storage \
                     account (option azure_storage_account_name, AZURE_STORAGE_ACCOUNT_NAME, \
                     an abfs://container@account... URL or the emulator's \
                     AZURE_STORAGE_USE_EMULATOR)"
                ))
            })?;
            let config: HashMap<String, String> = options.iter().cloned().collect();
            icechunk::storage::new_azure_blob_storage(
                account,
                container,
                prefix,
                Some(icechunk::storage::AzureCredentials::FromEnv),
                Some(config),
            )
            .await
            .map_err(fail)
        }
    }
}
