//! Reference stores ("virtual Zarr"): a read-only store whose values are
//! references into other files, in the fsspec reference format
//! (references-spec.rst). A value is inline data, a whole file or a byte
//! range of a file; the files are local (plain paths, `file://` URLs, paths
//! relative to the reference file) or http(s) URLs, read through
//! [`HttpStore`] with range requests.
//!
//! Two sources of references:
//! - JSON (`json` module): version 0 (a plain key -> value map) and version 1
//!   (`refs`, Jinja `templates` and `gen` generators, expanded on load).
//! - Parquet (`parquet` module): the folder layout of fsspec's
//!   `LazyReferenceMapper`: `.zmetadata` holds the metadata documents and
//!   per array folder `refs.N.parq` files hold the chunk references; those
//!   files are read only when a chunk in them is asked for, and cached.
//!
//! `target` resolves and reads the files references point into; `remote`
//! holds the stores of network targets.

use super::fs::{file_url_parts, local_path, percent_decode};
use super::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

mod json;
#[cfg(test)]
mod limits_tests;
mod parquet;
mod remote;
mod store;
mod target;
#[cfg(test)]
mod tests;

use remote::HttpPool;
use target::*;

/// The most references of one `get_many` batch fetched at once over HTTP.
const MAX_CONCURRENCY: usize = 16;

/// What a reference set from an untrusted source may make this store do.
/// A small file can ask for a great deal: `gen` multiplies keys, and a
/// target may be any local file.
#[derive(Debug, Clone, PartialEq)]
pub struct RefLimits {
    /// The most keys a JSON set may hold once `gen` is expanded.
    pub max_keys: u64,
    /// The longest the expansion of `templates` and `gen` may take.
    pub max_seconds: f64,
    /// When set, local targets must lie in this folder (links resolved);
    /// others fail to read with `InvalidKey`. None: any local file.
    pub local_root: Option<PathBuf>,
    /// How the stores of network targets connect and retry.
    pub network: crate::store::http::HttpOptions,
}

impl Default for RefLimits {
    fn default() -> Self {
        RefLimits {
            // About a gigabyte of references in memory.
            max_keys: 10_000_000,
            max_seconds: 60.0,
            local_root: None,
            network: crate::store::http::HttpOptions::default(),
        }
    }
}

/// Where the references are.
enum Source {
    /// Every reference in memory (JSON).
    Json { base: Base },
    /// Metadata in memory, chunk references in Parquet files.
    Parquet(Box<parquet::LazyRefs>),
}

/// A read-only store of fsspec references (JSON versions 0 and 1, or the
/// Parquet layout).
pub struct RefStore {
    /// Every reference of a JSON set; the metadata documents of a Parquet
    /// set.
    refs: BTreeMap<String, Ref>,
    source: Source,
    /// Shared with a remote Parquet folder, which fetches its files
    /// through it.
    http: Arc<HttpPool>,
    /// Whether a target is an http(s) URL (for Parquet sets: of the
    /// reference files read so far).
    any_http: AtomicBool,
}

impl std::fmt::Debug for RefStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefStore")
            .field("description", &self.describe())
            .finish()
    }
}

impl RefStore {
    /// A store of the references in a JSON reference set (version 0 or 1);
    /// `base` is where relative target paths start: the folder of the
    /// reference file, the file itself, or its URL.
    pub fn from_json(bytes: &[u8], base: &str) -> Result<RefStore> {
        Self::from_json_with(bytes, base, RefLimits::default())
    }

    /// `from_json` within `limits`.
    pub fn from_json_with(bytes: &[u8], base: &str, limits: RefLimits) -> Result<RefStore> {
        let pool = HttpPool::new(limits.network);
        let mut targets = Targets::new(Base::new(base)?, limits)?;
        let refs = json::parse(bytes, &mut targets)?;
        Ok(RefStore {
            refs,
            any_http: AtomicBool::new(targets.any_http),
            source: Source::Json { base: targets.base },
            http: Arc::new(pool),
        })
    }

    /// A store of the references in a Parquet reference folder (a path or
    /// `file://` URL) holding `.zmetadata` and `<array>/refs.N.parq` files.
    /// Relative target paths start at the folder that holds it.
    pub fn from_parquet_dir(path: &str) -> Result<RefStore> {
        Self::from_parquet_dir_with(path, RefLimits::default())
    }

    /// `from_parquet_dir` within `limits`.
    pub fn from_parquet_dir_with(path: &str, limits: RefLimits) -> Result<RefStore> {
        let pool = HttpPool::new(limits.network);
        let (lazy, refs) = parquet::LazyRefs::open(path, limits)?;
        Ok(RefStore {
            refs,
            any_http: AtomicBool::new(false),
            source: Source::Parquet(Box::new(lazy)),
            http: Arc::new(pool),
        })
    }

    /// The Parquet reference folder at `url` (http(s) or an object store),
    /// whose `.zmetadata` was fetched through `pool` as `zmetadata`.
    fn from_remote_parquet(
        url: &str,
        pool: Arc<HttpPool>,
        zmetadata: &[u8],
        limits: RefLimits,
    ) -> Result<RefStore> {
        let (lazy, refs) =
            parquet::LazyRefs::open_remote(url, Arc::clone(&pool), zmetadata, limits)?;
        Ok(RefStore {
            refs,
            any_http: AtomicBool::new(false),
            source: Source::Parquet(Box::new(lazy)),
            http: pool,
        })
    }

    /// Open the references at `location`: a Parquet reference folder, or a
    /// JSON reference file (possibly gzip or zstd compressed) given as a
    /// path, `file://` URL or http(s) URL.
    pub fn open(location: &str) -> Result<RefStore> {
        Self::open_with(location, RefLimits::default())
    }

    /// `open` within `limits`.
    pub fn open_with(location: &str, limits: RefLimits) -> Result<RefStore> {
        let scheme = url_scheme(location).map(|s| s.to_ascii_lowercase());
        match scheme.as_deref() {
            // A set on a web server or in an object store (s3://...), read
            // through the pool that then serves its targets: a Parquet
            // folder when `<url>/.zmetadata` exists (asked first unless
            // the name says JSON), else a JSON file.
            Some(s)
                if s == "http"
                    || s == "https"
                    || super::object::cloud_of_url(location).is_some() =>
            {
                let pool = Arc::new(HttpPool::new(limits.network));
                let (path, query) = remote::split_http_url(location);
                // A server that hides which keys exist (S3 without list
                // rights) refuses a missing .zmetadata with 403: that
                // error is kept only for when the JSON file is missing too.
                let mut probe_error = None;
                if !is_json_name(path) {
                    let zmeta = format!("{}/.zmetadata{query}", path.trim_end_matches('/'));
                    let (store, key) = pool.locate(&zmeta)?;
                    match store.get(&key, ByteRange::All) {
                        Ok(Some(bytes)) => {
                            return RefStore::from_remote_parquet(location, pool, &bytes, limits)
                        }
                        Ok(None) => {}
                        Err(e) => probe_error = Some(e),
                    }
                }
                let (store, key) = pool.locate(location)?;
                let bytes = match store.get(&key, ByteRange::All) {
                    Ok(Some(bytes)) => bytes,
                    Ok(None) => {
                        return Err(probe_error.unwrap_or_else(|| {
                            ZarrError::NotFound(format!("reference file {location} does not exist"))
                        }))
                    }
                    Err(e) if e.kind() == "not_found" => return Err(probe_error.unwrap_or(e)),
                    Err(e) => return Err(e),
                };
                let mut store =
                    RefStore::from_json_with(&decompress(location, bytes)?, location, limits)?;
                // Keep the connection to the server for the targets.
                store.http = pool;
                Ok(store)
            }
            Some("file") | None => {
                let path = match scheme {
                    Some(_) => file_url_path(location)?,
                    None => match plain_file_url(location) {
                        Some(p) => p?,
                        None => PathBuf::from(location),
                    },
                };
                if path.is_dir() {
                    return RefStore::from_parquet_dir_with(&path.to_string_lossy(), limits);
                }
                let bytes = std::fs::read(&path).map_err(|e| {
                    if e.kind() == ErrorKind::NotFound {
                        ZarrError::NotFound(format!(
                            "reference file '{}' does not exist",
                            path.display()
                        ))
                    } else {
                        ZarrError::Io(format!(
                            "cannot read reference file '{}': {e}",
                            path.display()
                        ))
                    }
                })?;
                let base = path.parent().unwrap_or(Path::new(""));
                RefStore::from_json_with(
                    &decompress(location, bytes)?,
                    &base.to_string_lossy(),
                    limits,
                )
            }
            Some(_) => Err(ZarrError::Unsupported(format!(
                "protocol not supported yet: {location}"
            ))),
        }
    }

    /// The number of references held in memory (for Parquet sets: the
    /// metadata documents).
    pub fn len(&self) -> usize {
        self.refs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }

    /// The reference of `key`, loading its Parquet file if needed.
    fn resolve(&self, key: &str) -> Result<Option<Ref>> {
        if let Some(r) = self.refs.get(key) {
            return Ok(Some(r.clone()));
        }
        match &self.source {
            Source::Json { .. } => Ok(None),
            Source::Parquet(lazy) => {
                let r = lazy.get(key)?;
                if lazy.any_http() {
                    self.any_http.store(true, Ordering::Relaxed);
                }
                Ok(r)
            }
        }
    }

    /// The bytes of `range` of the value of `key`, whose reference is `r`.
    fn read(&self, key: &str, r: &Ref, range: ByteRange) -> Result<Vec<u8>> {
        let (target, offset, length) = match r {
            Ref::Inline(data) => {
                let (start, end) = resolve_range(key, data.len() as u64, range)?;
                return Ok(data[start as usize..end as usize].to_vec());
            }
            Ref::Target {
                target,
                offset,
                length,
            } => (target, *offset, *length),
        };
        // The bytes of the file to read: a range within the reference, or
        // the range of the whole file.
        let file_range = match length {
            Some(len) => {
                let (start, end) = resolve_range(key, len, range)?;
                Some((offset + start, end - start))
            }
            None => None,
        };
        match &target.kind {
            TargetKind::Local(path) => read_local(key, path, offset, length, file_range, range),
            TargetKind::Http(url) => {
                let (store, http_key) = self
                    .http
                    .locate(url)
                    .map_err(|e| e.context(&format!("reference '{key}'")))?;
                let req = match file_range {
                    Some((offset, length)) => ByteRange::Range { offset, length },
                    None => range,
                };
                web_target(key, url, store.get(&http_key, req))
            }
            TargetKind::Unusable(u) => Err(u.error(key)),
        }
    }

    /// Chunk keys of Parquet sets that start with `prefix` (which may
    /// name a folder inside an array, for "/"-separated chunk keys).
    fn lazy_keys(&self, prefix: &str, direct_only: bool) -> Result<Vec<String>> {
        match &self.source {
            Source::Json { .. } => Ok(Vec::new()),
            Source::Parquet(lazy) => {
                let keys = lazy.keys_below(prefix, direct_only)?;
                if lazy.any_http() {
                    self.any_http.store(true, Ordering::Relaxed);
                }
                Ok(keys)
            }
        }
    }

    /// Whether the `get_many` requests go to http(s) targets (those fetch
    /// concurrently).
    fn is_http(r: &Result<Option<Ref>>) -> bool {
        matches!(
            r,
            Ok(Some(Ref::Target { target, .. })) if matches!(target.kind, TargetKind::Http(_))
        )
    }

    /// Every reference as a version 0 reference set: data as strings
    /// ("base64:..." unless UTF-8), targets as `[url]` or
    /// `[url, offset, length]`. Parquet sets read all their files for it.
    pub fn expanded_json(&self) -> Result<serde_json::Value> {
        use base64::Engine as _;
        use serde_json::Value;
        let mut out = serde_json::Map::new();
        for key in self.list()? {
            let Some(r) = self.resolve(&key)? else {
                continue;
            };
            let v = match r {
                Ref::Inline(data) => match std::str::from_utf8(&data) {
                    Ok(s) if !s.starts_with("base64:") => Value::from(s),
                    _ => Value::from(format!(
                        "base64:{}",
                        base64::engine::general_purpose::STANDARD.encode(&data)
                    )),
                },
                Ref::Target {
                    target,
                    offset,
                    length: Some(len),
                } => Value::from(vec![
                    Value::from(target.url.as_str()),
                    Value::from(offset),
                    Value::from(len),
                ]),
                Ref::Target { target, .. } => Value::from(vec![Value::from(target.url.as_str())]),
            };
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }

    /// For tests and diagnostics: the Parquet reference files read and
    /// cached ("<array>/refs.N.parq"), sorted.
    pub fn cached_reference_files(&self) -> Vec<String> {
        match &self.source {
            Source::Json { .. } => Vec::new(),
            Source::Parquet(lazy) => lazy.cached_files(),
        }
    }

    /// For tests and diagnostics: how many Parquet reference files were
    /// opened (a cached file is opened once).
    pub fn reference_files_opened(&self) -> usize {
        match &self.source {
            Source::Json { .. } => 0,
            Source::Parquet(lazy) => lazy.files_opened(),
        }
    }
}

/// Whether the path of a URL names a JSON reference file (".json",
/// possibly compressed), which is then not probed as a Parquet folder.
/// What a reference's web target answered: its value, or an error naming
/// the reference and the URL.
fn web_target<T>(key: &str, url: &str, got: Result<Option<T>>) -> Result<T> {
    match got {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(ZarrError::NotFound(format!(
            "reference '{key}': its target {url} does not exist (HTTP 404)"
        ))),
        Err(e) => Err(e.context(&format!("reference '{key}'"))),
    }
}

fn is_json_name(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    [".json", ".json.gz", ".json.zst"]
        .iter()
        .any(|ext| p.ends_with(ext))
}

/// Decompress a gzip or zstd reference file (by its magic number).
fn decompress(location: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
    let err = |e: std::io::Error| {
        ZarrError::Metadata(format!("cannot decompress reference file {location}: {e}"))
    };
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(err)?;
        return Ok(out);
    }
    if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return zstd::stream::decode_all(&bytes[..]).map_err(err);
    }
    Ok(bytes)
}
