//! Bindings of Icechunk repositories. Without the `icechunk` feature (a
//! rustc older than the icechunk crate needs) every function raises
//! `zarr_error_unsupported` saying so.

use super::*;

/// Why a build has no Icechunk: the rustc the icechunk crate needs.
#[cfg(not(feature = "icechunk"))]
fn missing() -> ZarrError {
    ZarrError::Unsupported(
        "this build of zarr has no Icechunk support: the icechunk crate needs rustc >= 1.95, \
         and the package was installed with an older rustc; update Rust (rustup update) and \
         reinstall zarr"
            .into(),
    )
}

#[cfg(feature = "icechunk")]
mod on {
    use super::*;
    use crate::store::icechunk::{IcechunkStore, Rebase, Version};

    /// An open session of a repository, next to its store handle.
    pub struct RepoHandle(pub Arc<IcechunkStore>);

    pub fn repo_of(h: &Robj) -> Result<Arc<IcechunkStore>> {
        let p: &ExternalPtr<RepoHandle> = h
            .try_into()
            .map_err(|_| ZarrError::Type("expected an Icechunk session handle".into()))?;
        Ok(Arc::clone(
            &p.try_addr()
                .map_err(|_| {
                    ZarrError::Type("the Icechunk session handle is no longer valid".into())
                })?
                .0,
        ))
    }

    pub fn version(kind: &str, name: &str) -> Result<Version> {
        Ok(match kind {
            "branch" => Version::Branch(name.into()),
            "tag" => Version::Tag(name.into()),
            "snapshot" => Version::Snapshot(name.into()),
            _ => return Err(ZarrError::Type(format!("unknown kind of version '{kind}'"))),
        })
    }

    pub fn open(
        location: &str,
        kind: &str,
        name: &str,
        read_only: bool,
        new_branch: &str,
        authorized: Vec<String>,
        options: Vec<(String, String)>,
    ) -> Result<Robj> {
        let new_branch = (!new_branch.is_empty()).then_some(new_branch);
        let s = Arc::new(IcechunkStore::open(
            location,
            version(kind, name)?,
            read_only,
            new_branch,
            &authorized,
            &options,
        )?);
        let (branch, at) = match s.version() {
            Version::Branch(b) => (b.clone(), "branch"),
            Version::Tag(t) => (t.clone(), "tag"),
            Version::Snapshot(x) => (x.clone(), "snapshot"),
        };
        let snapshot = s.snapshot()?;
        Ok(list!(
            store = store_value(Arc::clone(&s) as Arc<dyn Store>),
            repo = ExternalPtr::new(RepoHandle(s)),
            kind = at,
            name = branch,
            snapshot = snapshot
        )
        .into())
    }

    pub fn commit(h: &Robj, message: &str, rebase: &str) -> Result<Robj> {
        Ok(repo_of(h)?.commit(message, Rebase::parse(rebase)?)?.into())
    }

    pub fn history(h: &Robj, kind: &str, name: &str) -> Result<Robj> {
        let s = repo_of(h)?;
        let v = if kind.is_empty() {
            None
        } else {
            Some(version(kind, name)?)
        };
        let commits = s.history(v.as_ref())?;
        let id: Vec<String> = commits.iter().map(|c| c.id.clone()).collect();
        let parent: Vec<Option<String>> = commits.iter().map(|c| c.parent.clone()).collect();
        let at: Vec<f64> = commits.iter().map(|c| c.written_at).collect();
        let message: Vec<String> = commits.iter().map(|c| c.message.clone()).collect();
        let parent = Strings::from_values(parent.into_iter().map(|p| match p {
            Some(p) => Rstr::from(p),
            None => Rstr::na(),
        }));
        Ok(list!(id = id, parent = parent, time = at, message = message).into())
    }

    pub fn refs(pairs: Vec<(String, String)>) -> Robj {
        let (name, snapshot): (Vec<String>, Vec<String>) = pairs.into_iter().unzip();
        list!(name = name, snapshot = snapshot).into()
    }

    pub fn info(h: &Robj) -> Result<Robj> {
        let s = repo_of(h)?;
        Ok(list!(snapshot = s.snapshot()?, changed = s.has_changes()?).into())
    }
}

/// Open a session of the repository at `location`: the branch, tag or
/// snapshot `name` (`kind`), read-only or writable (on `new_branch` when
/// not ""), trusting the virtual chunk containers `authorized`.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)] // one per argument of open_icechunk()
fn rz_icechunk_open(
    location: &str,
    kind: &str,
    name: &str,
    read_only: bool,
    new_branch: &str,
    authorized: Strings,
    keys: Strings,
    values: Strings,
) -> Robj {
    let authorized: Vec<String> = authorized.iter().map(|s| String::from(&**s)).collect();
    let options: Vec<(String, String)> = keys
        .iter()
        .zip(values.iter())
        .map(|(k, v)| (String::from(&**k), String::from(&**v)))
        .collect();
    guard(|| {
        #[cfg(feature = "icechunk")]
        return on::open(
            location, kind, name, read_only, new_branch, authorized, options,
        );
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = (
                location, kind, name, read_only, new_branch, authorized, options,
            );
            Err(missing())
        }
    })
}

/// Whether this build reads Icechunk repositories.
/// @noRd
#[extendr]
fn rz_icechunk_available() -> bool {
    cfg!(feature = "icechunk")
}

/// Commit the session's changes; the new snapshot id.
/// @noRd
#[extendr]
fn rz_icechunk_commit(h: Robj, message: &str, rebase: &str) -> Robj {
    guard(|| {
        #[cfg(feature = "icechunk")]
        return on::commit(&h, message, rebase);
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = (h, message, rebase);
            Err(missing())
        }
    })
}

/// The commits from a ref (`kind` "" for the session's snapshot) back.
/// @noRd
#[extendr]
fn rz_icechunk_history(h: Robj, kind: &str, name: &str) -> Robj {
    guard(|| {
        #[cfg(feature = "icechunk")]
        return on::history(&h, kind, name);
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = (h, kind, name);
            Err(missing())
        }
    })
}

/// Branches (`what` "branches") or tags ("tags"): list(name, snapshot).
/// @noRd
#[extendr]
fn rz_icechunk_refs(h: Robj, what: &str) -> Robj {
    guard(|| {
        #[cfg(feature = "icechunk")]
        {
            let s = on::repo_of(&h)?;
            let pairs = if what == "tags" {
                s.tags()?
            } else {
                s.branches()?
            };
            Ok(on::refs(pairs))
        }
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = (h, what);
            Err(missing())
        }
    })
}

/// Tag `snapshot` ("" for the session's) as `name`; the snapshot tagged.
/// @noRd
#[extendr]
fn rz_icechunk_tag(h: Robj, name: &str, snapshot: &str) -> Robj {
    guard(|| {
        #[cfg(feature = "icechunk")]
        {
            let s = on::repo_of(&h)?;
            let at = (!snapshot.is_empty()).then_some(snapshot);
            Ok(s.create_tag(name, at)?.into())
        }
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = (h, name, snapshot);
            Err(missing())
        }
    })
}

/// The session's snapshot and whether it has uncommitted changes.
/// @noRd
#[extendr]
fn rz_icechunk_info(h: Robj) -> Robj {
    guard(|| {
        #[cfg(feature = "icechunk")]
        return on::info(&h);
        #[cfg(not(feature = "icechunk"))]
        {
            let _ = h;
            Err(missing())
        }
    })
}

extendr_module! {
    mod icechunk;
    fn rz_icechunk_open;
    fn rz_icechunk_available;
    fn rz_icechunk_commit;
    fn rz_icechunk_history;
    fn rz_icechunk_refs;
    fn rz_icechunk_tag;
    fn rz_icechunk_info;
}
