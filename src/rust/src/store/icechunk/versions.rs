//! The repository's versions: commits of a session, the history of a
//! snapshot, branches and tags.

use super::*;

impl IcechunkStore {
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
}
