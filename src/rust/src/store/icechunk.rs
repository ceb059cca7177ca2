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

mod native;
mod storage;
mod store;
#[cfg(test)]
mod tests;
mod versions;

use storage::{local_folder, storage_of};

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
    /// The chunks folder of a repository on the local file system, whose
    /// stored chunks are read from their files (native.rs).
    chunks: Option<std::path::PathBuf>,
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
        let web = ["http://", "https://"].iter().any(|s| {
            location
                .get(..s.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(s))
        });
        if web && !read_only {
            return Err(ZarrError::ReadOnly(format!(
                "cannot write to {described}: a repository on a web server is read-only \
                 (open it with read_only = TRUE)"
            )));
        }
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
            chunks: local_folder(location).map(|p| p.join(icechunk::format::CHUNKS_FILE_PATH)),
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

    async fn get_async(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        if let Some(chunks) = &self.chunks {
            if let native::Native::Read(v) = self.get_native(chunks, key, range).await? {
                return Ok(v);
            }
        }
        self.answer(key, self.store.get(key, &ic_range(range)).await)
    }

    /// What icechunk's `get` of `key` gave, as the `Store` trait says it.
    fn answer(
        &self,
        key: &str,
        got: std::result::Result<bytes::Bytes, icechunk::store::StoreError>,
    ) -> Result<Option<Vec<u8>>> {
        match got {
            // no copy when icechunk holds the only reference to the bytes
            Ok(b) => Ok(Some(Vec::from(b))),
            Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(None),
            Err(e) => Err(ic_error(
                &format!("cannot read '{key}' of {}", self.describe()),
                e,
            )),
        }
    }

    fn listed(&self, prefix: &str, e: impl std::fmt::Display) -> ZarrError {
        ic_error(&format!("cannot list '{prefix}' of {}", self.describe()), e)
    }
}

fn ic_range(range: ByteRange) -> icechunk::format::ByteRange {
    match range {
        ByteRange::All => icechunk::format::ByteRange::ALL,
        ByteRange::Range { offset, length } => {
            icechunk::format::ByteRange::Bounded(offset..offset.saturating_add(length))
        }
        ByteRange::From(o) => icechunk::format::ByteRange::From(o),
        ByteRange::Suffix(n) => icechunk::format::ByteRange::Last(n),
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
