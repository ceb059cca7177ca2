//! Icechunk repositories as a store: the icechunk crate keeps the
//! repository (refs, snapshots, manifests, sessions, commits, conflicts)
//! and answers the Zarr keys of one session; this package's engine reads
//! and writes the arrays through it as through any store.
//!
//! icechunk is async on tokio: the store runs its calls on the object
//! stores' runtime, and the engine's threads wait for them with `block_on`
//! as they do for object stores. Reads take the session's read lock only,
//! so the engine's threads read concurrently; writes and commits take the
//! write lock.

use crate::error::{Result, ZarrError};
use crate::store::{ByteRange, DirListing, Store, StoreKey, StorePrefix};
use futures::{StreamExt, TryStreamExt};
use icechunk::config::Credentials;
use icechunk::conflicts::basic_solver::{BasicConflictSolver, VersionSelection};
use icechunk::conflicts::detector::ConflictDetector;
use icechunk::conflicts::ConflictSolver;
use icechunk::format::SnapshotId;
use icechunk::repository::VersionInfo;
use icechunk::session::SessionErrorKind;
use icechunk::store::StoreErrorKind;
use icechunk::Repository;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::runtime::Runtime;

#[cfg(test)]
mod tests;

/// Which snapshot a session starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    Branch(String),
    Tag(String),
    Snapshot(String),
}

/// How `commit` treats a branch that moved on since the session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rebase {
    /// Fail with `ZarrError::Conflict`.
    None,
    /// Rebase when the changes on both sides touch different chunks and
    /// nodes; fail on a conflict.
    Detect,
    /// Rebase, keeping this session's chunk where both wrote one.
    Ours,
    /// Rebase, keeping the branch's chunk where both wrote one.
    Theirs,
}

impl Rebase {
    pub fn parse(name: &str) -> Result<Rebase> {
        Ok(match name {
            "none" => Rebase::None,
            "detect" => Rebase::Detect,
            "ours" => Rebase::Ours,
            "theirs" => Rebase::Theirs,
            _ => {
                return Err(ZarrError::Unsupported(format!(
                    "unknown rebase '{name}': use \"none\", \"detect\", \"ours\" or \"theirs\""
                )))
            }
        })
    }
}

/// One commit of a branch's history.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub id: String,
    pub parent: Option<String>,
    /// Seconds since the epoch (UTC).
    pub written_at: f64,
    pub message: String,
}

/// A session of an Icechunk repository.
pub struct IcechunkStore {
    runtime: &'static Runtime,
    repo: Arc<Repository>,
    store: icechunk::Store,
    location: String,
    /// What the session started from, for messages.
    version: Version,
    read_only: bool,
}

impl std::fmt::Debug for IcechunkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IcechunkStore")
            .field("location", &self.location)
            .field("version", &self.version)
            .field("read_only", &self.read_only)
            .finish()
    }
}

/// An icechunk error as this package's: what was done, and icechunk's
/// message (its chain of causes, without the span trace).
fn ic_error(what: &str, e: impl std::fmt::Display) -> ZarrError {
    let msg = e.to_string();
    let msg = msg.split("\n\n").next().unwrap_or(&msg).trim().to_string();
    ZarrError::Io(format!("{what}: {msg}"))
}

impl IcechunkStore {
    /// Open the repository at `location` at `version` (see `storage_of`
    /// for locations and `options`).
    /// `authorized` lists the virtual chunk containers (URL prefixes) the
    /// caller trusts; chunks of others are refused. A writable session
    /// needs a branch; with `new_branch` that branch is first made at the
    /// snapshot of `version`.
    pub fn open(
        location: &str,
        version: Version,
        read_only: bool,
        new_branch: Option<&str>,
        authorized: &[String],
        options: &[(String, String)],
    ) -> Result<IcechunkStore> {
        let runtime = crate::store::object::io_runtime()?;
        let described = format!("the Icechunk repository at '{location}'");
        let repo = crate::store::wait::block_on(runtime, async {
            let storage = storage_of(location, options).await?;
            let exists = Repository::exists(Arc::clone(&storage), None)
                .await
                .map_err(|e| ic_error(&format!("cannot open {described}"), e))?;
            if !exists {
                return Err(ZarrError::NotFound(format!(
                    "there is no Icechunk repository at '{location}'"
                )));
            }
            let trusted: HashMap<String, Option<Credentials>> =
                authorized.iter().map(|p| (p.clone(), None)).collect();
            let repo = Repository::open(storage)
                .authorize_virtual_chunk_access(trusted)
                .execute()
                .await
                .map_err(|e| ic_error(&format!("cannot open {described}"), e))?;
            Ok(repo)
        })?;
        let repo = Arc::new(repo);
        let (session, version) = crate::store::wait::block_on(runtime, async {
            let start = match &version {
                Version::Branch(b) => VersionInfo::BranchTipRef(b.clone()),
                Version::Tag(t) => VersionInfo::TagRef(t.clone()),
                Version::Snapshot(s) => VersionInfo::SnapshotId(snapshot_id(s)?),
            };
            let missing =
                |e| ic_error(&format!("cannot open {} of {described}", name(&version)), e);
            if read_only {
                let s = repo.readonly_session(&start).await.map_err(missing)?;
                return Ok((s, version.clone()));
            }
            let branch = match (new_branch, &version) {
                (Some(b), _) => {
                    let at = repo.resolve_version(&start).await.map_err(missing)?;
                    repo.create_branch(b, &at).await.map_err(|e| {
                        ic_error(&format!("cannot make the branch '{b}' in {described}"), e)
                    })?;
                    b.to_string()
                }
                (None, Version::Branch(b)) => b.clone(),
                (None, other) => {
                    return Err(ZarrError::Unsupported(format!(
                        "cannot write to {} of {described}: writes go to a branch \
                         (give `branch`, or `new_branch` to start one there)",
                        name(other)
                    )))
                }
            };
            let s = repo.writable_session(&branch).await.map_err(|e| {
                ic_error(
                    &format!("cannot write to the branch '{branch}' of {described}"),
                    e,
                )
            })?;
            Ok((s, Version::Branch(branch)))
        })?;
        let store = crate::store::wait::block_on(runtime, async {
            Ok(icechunk::Store::from_session(Arc::new(tokio::sync::RwLock::new(session))).await)
        })?;
        Ok(IcechunkStore {
            runtime,
            repo,
            store,
            location: location.to_string(),
            version,
            read_only,
        })
    }

    fn wait<T>(&self, fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        crate::store::wait::block_on(self.runtime, fut)
    }

    /// The branch, tag or snapshot the session started from.
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// The snapshot the session is at (after a commit, the new one).
    pub fn snapshot(&self) -> Result<String> {
        let session = self.store.session();
        self.wait(async { Ok(session.read().await.snapshot_id().to_string()) })
    }

    /// Whether the session has changes not yet committed.
    pub fn has_changes(&self) -> Result<bool> {
        let session = self.store.session();
        self.wait(async { Ok(session.read().await.has_uncommitted_changes()) })
    }

    /// Commit the session's changes to its branch; the new snapshot's id.
    pub fn commit(&self, message: &str, rebase: Rebase) -> Result<String> {
        if self.read_only {
            return Err(ZarrError::ReadOnly(format!(
                "cannot commit: the session of {} is read-only (open it with read_only = FALSE)",
                self.describe()
            )));
        }
        let session = self.store.session();
        let detector = ConflictDetector;
        let solver = |pick| BasicConflictSolver {
            on_chunk_conflict: pick,
            ..Default::default()
        };
        let (ours, theirs) = (
            solver(VersionSelection::UseOurs),
            solver(VersionSelection::UseTheirs),
        );
        let chosen: Option<&(dyn ConflictSolver + Send + Sync)> = match rebase {
            Rebase::None => None,
            Rebase::Detect => Some(&detector),
            Rebase::Ours => Some(&ours),
            Rebase::Theirs => Some(&theirs),
        };
        let branch = match &self.version {
            Version::Branch(b) => b.clone(),
            _ => String::new(),
        };
        self.wait(async {
            let mut s = session.write().await;
            let done = {
                let mut commit = s.commit(message);
                if let Some(solver) = chosen {
                    commit = commit.rebase(solver, 5);
                }
                commit.execute().await
            };
            match done {
                // icechunk ends a session at its commit: the next writes go
                // into a new session on the branch.
                Ok(id) => {
                    *s = self.repo.writable_session(&branch).await.map_err(|e| {
                        ic_error(&format!("committed {id}, but cannot go on writing to {}", self.describe()), e)
                    })?;
                    Ok(id.to_string())
                }
                Err(e) => Err(match &e.kind {
                    SessionErrorKind::Conflict {
                        expected_parent,
                        actual_parent,
                    } => ZarrError::Conflict(format!(
                        "cannot commit to the branch '{branch}' of '{}': it moved from snapshot {} to {} \
                         since this session started; commit again with rebase = \"detect\" (rebase \
                         when the changes do not overlap), \"ours\" or \"theirs\" (rebase, keeping \
                         this session's or the branch's chunks where both wrote one)",
                        self.location,
                        show_id(expected_parent),
                        show_id(actual_parent),
                    )),
                    SessionErrorKind::RebaseFailed { snapshot, conflicts } => ZarrError::Conflict(format!(
                        "cannot rebase the commit to the branch '{branch}' of '{}' onto snapshot \
                         {snapshot}: {} conflict(s) ({}); commit with rebase = \"ours\" or \
                         \"theirs\" to choose a side, or discard the session",
                        self.location,
                        conflicts.len(),
                        conflicts
                            .iter()
                            .take(3)
                            .map(|c| format!("{c:?}"))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )),
                    _ => ic_error(&format!("cannot commit to {}", self.describe()), e),
                }),
            }
        })
    }

    /// The commits from `version` back to the repository's first.
    pub fn history(&self, version: Option<&Version>) -> Result<Vec<Commit>> {
        let start = match version {
            Some(v) => version_info(v)?,
            None => VersionInfo::SnapshotId(
                SnapshotId::try_from(self.snapshot()?.as_str())
                    .map_err(|e| ZarrError::Metadata(format!("bad snapshot id: {e}")))?,
            ),
        };
        self.wait(async {
            let what = |e| {
                ic_error(
                    &format!("cannot read the history of {}", self.describe()),
                    e,
                )
            };
            let stream = self.repo.ancestry(&start).await.map_err(what)?;
            let all: Vec<_> = stream.try_collect().await.map_err(what)?;
            Ok(all
                .into_iter()
                .map(|s| Commit {
                    id: s.id.to_string(),
                    parent: s.parent_id.map(|p| p.to_string()),
                    written_at: s.flushed_at.timestamp_micros() as f64 / 1e6,
                    message: s.message,
                })
                .collect())
        })
    }

    /// Every branch and the snapshot at its tip, by name.
    pub fn branches(&self) -> Result<Vec<(String, String)>> {
        self.wait(async {
            let what = |e| {
                ic_error(
                    &format!("cannot list the branches of {}", self.describe()),
                    e,
                )
            };
            let mut out = Vec::new();
            for b in self.repo.list_branches().await.map_err(what)? {
                let at = self.repo.lookup_branch(&b).await.map_err(what)?;
                out.push((b, at.to_string()));
            }
            Ok(out)
        })
    }

    /// Every tag and its snapshot, by name.
    pub fn tags(&self) -> Result<Vec<(String, String)>> {
        self.wait(async {
            let what = |e| ic_error(&format!("cannot list the tags of {}", self.describe()), e);
            let mut out = Vec::new();
            for t in self.repo.list_tags().await.map_err(what)? {
                let at = self.repo.lookup_tag(&t).await.map_err(what)?;
                out.push((t, at.to_string()));
            }
            Ok(out)
        })
    }

    /// Tag the snapshot `snapshot` (default: the session's) as `name`.
    pub fn create_tag(&self, name: &str, snapshot: Option<&str>) -> Result<String> {
        let id = match snapshot {
            Some(s) => s.to_string(),
            None => self.snapshot()?,
        };
        let sid = snapshot_id(&id)?;
        self.wait(async {
            self.repo.create_tag(name, &sid).await.map_err(|e| {
                ic_error(
                    &format!(
                        "cannot tag snapshot {id} as '{name}' in {}",
                        self.describe()
                    ),
                    e,
                )
            })
        })?;
        Ok(id)
    }

    async fn get_async(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        let range = match range {
            ByteRange::All => icechunk::format::ByteRange::ALL,
            ByteRange::Range { offset, length } => {
                icechunk::format::ByteRange::Bounded(offset..offset.saturating_add(length))
            }
            ByteRange::From(o) => icechunk::format::ByteRange::From(o),
            ByteRange::Suffix(n) => icechunk::format::ByteRange::Last(n),
        };
        match self.store.get(key, &range).await {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(None),
            Err(e) => Err(ic_error(
                &format!("cannot read '{key}' of {}", self.describe()),
                e,
            )),
        }
    }

    fn check_writable(&self, what: &str, key: &str) -> Result<()> {
        if self.read_only {
            return Err(crate::store::read_only_error(&self.describe(), what, key));
        }
        Ok(())
    }

    fn listed(&self, prefix: &str, e: impl std::fmt::Display) -> ZarrError {
        ic_error(&format!("cannot list '{prefix}' of {}", self.describe()), e)
    }
}

fn name(v: &Version) -> String {
    match v {
        Version::Branch(b) => format!("the branch '{b}'"),
        Version::Tag(t) => format!("the tag '{t}'"),
        Version::Snapshot(s) => format!("snapshot {s}"),
    }
}

fn show_id(id: &Option<SnapshotId>) -> String {
    id.as_ref()
        .map_or_else(|| "(none)".to_string(), |i| i.to_string())
}

fn snapshot_id(s: &str) -> Result<SnapshotId> {
    SnapshotId::try_from(s)
        .map_err(|e| ZarrError::NotFound(format!("'{s}' is not an Icechunk snapshot id: {e}")))
}

fn version_info(v: &Version) -> Result<VersionInfo> {
    Ok(match v {
        Version::Branch(b) => VersionInfo::BranchTipRef(b.clone()),
        Version::Tag(t) => VersionInfo::TagRef(t.clone()),
        Version::Snapshot(s) => VersionInfo::SnapshotId(snapshot_id(s)?),
    })
}

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

/// The icechunk storage of a repository location: a local folder (or
/// file:// URL), an S3, GCS or Azure URL with `options` as
/// `zarr_objectstore` takes them (and the same environment variables), or
/// an http(s):// URL (read-only).
async fn storage_of(
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
            let path = location.strip_prefix("file://").unwrap_or(location);
            icechunk::new_local_filesystem_storage(std::path::Path::new(path))
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
            let account = opt(
                &["azure_storage_account_name", "account_name"],
                &["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"],
            )
            .ok_or_else(|| {
                ZarrError::Unsupported(format!(
                    "cannot open the Icechunk repository at '{location}': no Azure storage \
                     account (option azure_storage_account_name or AZURE_STORAGE_ACCOUNT_NAME)"
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

impl Store for IcechunkStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        self.wait(self.get_async(key, range))
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        self.check_writable("write", key)?;
        self.wait(async {
            self.store
                .set(key, bytes::Bytes::copy_from_slice(value))
                .await
                .map_err(|e| {
                    ic_error(
                        &format!("cannot write '{}' to {}", &**key, self.describe()),
                        e,
                    )
                })
        })
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        self.check_writable("erase", key)?;
        self.wait(async {
            match self.store.delete(key).await {
                Ok(()) => Ok(()),
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(()),
                Err(e) => Err(ic_error(
                    &format!("cannot erase '{}' of {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        self.check_writable("erase prefix", prefix)?;
        self.wait(async {
            self.store.delete_dir(prefix).await.map_err(|e| {
                ic_error(
                    &format!("cannot erase '{}' of {}", &**prefix, self.describe()),
                    e,
                )
            })
        })
    }

    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix(&StorePrefix::new("")?)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        self.wait(async {
            let stream = self
                .store
                .list_prefix(prefix)
                .await
                .map_err(|e| self.listed(prefix, e))?;
            let mut keys: Vec<String> = stream
                .try_collect()
                .await
                .map_err(|e| self.listed(prefix, e))?;
            keys.retain(|k| k.starts_with(&**prefix));
            keys.sort();
            Ok(keys)
        })
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        self.wait(async {
            let stream = self
                .store
                .list_dir_items(prefix)
                .await
                .map_err(|e| self.listed(prefix, e))?;
            let items: Vec<_> = stream
                .try_collect()
                .await
                .map_err(|e| self.listed(prefix, e))?;
            // icechunk names them relative to the prefix; the Store trait
            // from the root.
            let dir = prefix.dir();
            let mut out = DirListing::default();
            for item in items {
                match item {
                    icechunk::store::ListDirItem::Key(k) => out.keys.push(format!("{dir}{k}")),
                    icechunk::store::ListDirItem::Prefix(p) => out
                        .prefixes
                        .push(format!("{dir}{}/", p.trim_end_matches('/'))),
                }
            }
            out.keys.sort();
            out.prefixes.sort();
            Ok(out)
        })
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        self.wait(async {
            match self.store.exists(key).await {
                Ok(found) => Ok(found),
                // a Zarr v2 key, or a node that is not there
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(false),
                Err(e) => Err(ic_error(
                    &format!("cannot look for '{}' in {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        self.wait(async {
            match self.store.getsize(key).await {
                Ok(n) => Ok(Some(n)),
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(None),
                Err(e) => Err(ic_error(
                    &format!("cannot size '{}' of {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn describe(&self) -> String {
        format!(
            "Icechunk repository at '{}' ({})",
            self.location,
            name(&self.version)
        )
    }

    /// Concurrently: virtual chunks may be on a web server.
    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let all = self.wait(async {
            Ok(
                futures::stream::iter(requests.iter().map(|(k, r)| self.get_async(k, *r)))
                    .buffered(16)
                    .collect::<Vec<_>>()
                    .await,
            )
        });
        match all {
            Ok(v) => v,
            Err(e) => requests.iter().map(|_| Err(e.clone())).collect(),
        }
    }
}
