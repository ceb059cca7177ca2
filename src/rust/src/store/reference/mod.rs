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
#[cfg(test)]
mod tests;

/// The most references of one `get_many` batch fetched at once over HTTP.
const MAX_CONCURRENCY: usize = 16;

/// One reference: the value of one key.
#[derive(Debug, Clone)]
pub(crate) enum Ref {
    /// The value itself (a string or "base64:" value, a JSON document).
    Inline(Arc<[u8]>),
    /// `length` bytes at `offset` of a file, or the whole file (`None`).
    Target {
        target: Arc<Target>,
        offset: u64,
        length: Option<u64>,
    },
}

/// A file that references point into, resolved once per distinct URL.
#[derive(Debug)]
pub(crate) struct Target {
    /// The URL or path as the reference set wrote it (after templates).
    url: String,
    kind: TargetKind,
}

#[derive(Debug)]
enum TargetKind {
    Local(PathBuf),
    /// An absolute URL read over the network: http(s), or an object in
    /// S3, GCS or Azure (s3://, gs://, az://, ...).
    Http(String),
    /// A URL this store cannot read; the message says why.
    Unsupported(String),
    /// A local file outside the folder targets are confined to.
    Refused(String),
}

/// Where relative target paths start: the folder (or URL folder) of the
/// reference file.
#[derive(Debug, Clone)]
enum Base {
    Local(PathBuf),
    /// A URL ending in "/".
    Url(String),
}

impl Base {
    /// `base` is a folder, a reference file (its folder is used), a
    /// `file://` URL or the URL of the reference file (or its folder, when
    /// it ends in "/"); "" is the working directory.
    fn new(base: &str) -> Result<Base> {
        if let Some(scheme) = url_scheme(base) {
            if scheme.eq_ignore_ascii_case("file") {
                return Base::local(&file_url_path(base)?);
            }
            let location = base.split(['?', '#']).next().unwrap_or("");
            let after_authority = scheme.len() + 3;
            let dir = match location[after_authority..].find('/') {
                None => format!("{location}/"),
                Some(_) => match location.rfind('/') {
                    Some(i) => location[..=i].to_string(),
                    None => format!("{location}/"),
                },
            };
            return Ok(Base::Url(dir));
        }
        if let Some(path) = plain_file_url(base) {
            return Base::local(&path?);
        }
        Base::local(Path::new(if base.is_empty() { "." } else { base }))
    }

    fn local(path: &Path) -> Result<Base> {
        let abs = std::path::absolute(path).map_err(|e| {
            ZarrError::Io(format!(
                "cannot resolve the reference base '{}': {e}",
                path.display()
            ))
        })?;
        if abs.is_file() {
            if let Some(parent) = abs.parent() {
                return Ok(Base::Local(parent.to_path_buf()));
            }
        }
        Ok(Base::Local(abs))
    }

    fn describe(&self) -> String {
        match self {
            Base::Local(p) => p.display().to_string(),
            Base::Url(u) => u.clone(),
        }
    }
}

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
}

impl Default for RefLimits {
    fn default() -> Self {
        RefLimits {
            // About a gigabyte of references in memory.
            max_keys: 10_000_000,
            max_seconds: 60.0,
            local_root: None,
        }
    }
}

/// The targets of a reference set, one `Target` per distinct URL.
#[derive(Debug)]
pub(crate) struct Targets {
    base: Base,
    map: HashMap<String, Arc<Target>>,
    any_http: bool,
    pub(crate) limits: RefLimits,
    /// `limits.local_root` with its links resolved.
    real_local_root: Option<PathBuf>,
}

impl Targets {
    fn new(base: Base, limits: RefLimits) -> Result<Targets> {
        let real_local_root = match &limits.local_root {
            None => None,
            Some(root) => Some(std::fs::canonicalize(root).map_err(|e| {
                ZarrError::Io(format!(
                    "cannot resolve the folder local targets are confined to, '{}': {e}",
                    root.display()
                ))
            })?),
        };
        Ok(Targets {
            base,
            map: HashMap::new(),
            any_http: false,
            limits,
            real_local_root,
        })
    }

    pub(crate) fn get(&mut self, url: &str) -> Arc<Target> {
        if let Some(t) = self.map.get(url) {
            return Arc::clone(t);
        }
        let mut kind = resolve_target(url, &self.base);
        if let (TargetKind::Local(path), Some(root)) = (&kind, &self.real_local_root) {
            if !inside_folder(path, root) {
                kind = TargetKind::Refused(format!(
                    "its target '{url}' is outside '{}', the folder local targets are confined to",
                    root.display()
                ));
            }
        }
        if matches!(kind, TargetKind::Http(_)) {
            self.any_http = true;
        }
        let t = Arc::new(Target {
            url: url.to_string(),
            kind,
        });
        self.map.insert(url.to_string(), Arc::clone(&t));
        t
    }
}

/// Whether `path` lies in `root` (already resolved): its links resolved
/// when it exists, else its "." and ".." segments.
fn inside_folder(path: &Path, root: &Path) -> bool {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real.starts_with(root);
    }
    let Ok(abs) = std::path::absolute(path) else {
        return false;
    };
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            std::path::Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean.starts_with(root)
}

/// The scheme of `s` if it is a URL "scheme://...": at least two
/// characters, so a Windows drive ("C:/...") is not one.
fn url_scheme(s: &str) -> Option<&str> {
    let i = s.find("://")?;
    let scheme = &s[..i];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    if scheme.len() < 2
        || !first.is_ascii_alphabetic()
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(scheme)
}

/// "file:/path" (no authority), which `url_scheme` does not see.
fn plain_file_url(s: &str) -> Option<Result<PathBuf>> {
    let rest = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("file:"))
        .map(|_| &s[5..])?;
    if rest.starts_with("//") {
        return None;
    }
    Some(decode_file_path(s, rest))
}

/// The local path of a `file://` URL (RFC 8089): an empty host or
/// "localhost", a percent-encoded absolute path.
fn file_url_path(url: &str) -> Result<PathBuf> {
    match file_url_parts(url) {
        Some(Ok(path)) => decode_file_path(url, path),
        Some(Err(host)) => Err(ZarrError::Unsupported(format!(
            "file URL '{url}' names the remote host '{host}'; only local files are supported"
        ))),
        // Not reached: callers have seen the "file" scheme. An empty path
        // gives the invalid-URL error.
        None => decode_file_path(url, ""),
    }
}

fn decode_file_path(url: &str, path: &str) -> Result<PathBuf> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(path)
        .filter(|d| d.starts_with('/') && !d.contains('\0'))
        .ok_or_else(|| {
            ZarrError::Metadata(format!(
                "invalid file URL '{url}': it needs an absolute, well percent-encoded path"
            ))
        })?;
    Ok(local_path(decoded))
}

/// Remove "." and ".." segments from the path of a URL ("http://h/a/../b").
fn remove_dot_segments(url: &str) -> String {
    let Some(scheme) = url_scheme(url) else {
        return url.to_string();
    };
    let start = scheme.len() + 3;
    let (location, tail) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let Some(slash) = location[start..].find('/').map(|i| i + start) else {
        return url.to_string();
    };
    let mut segs: Vec<&str> = Vec::new();
    let parts: Vec<&str> = location[slash + 1..].split('/').collect();
    for (i, seg) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *seg {
            "." => {
                if last {
                    segs.push("");
                }
            }
            ".." => {
                segs.pop();
                if last {
                    segs.push("");
                }
            }
            s => segs.push(s),
        }
    }
    format!("{}/{}{tail}", &location[..slash], segs.join("/"))
}

fn resolve_target(url: &str, base: &Base) -> TargetKind {
    let unsupported = || TargetKind::Unsupported(format!("protocol not supported yet: {url}"));
    if let Some(scheme) = url_scheme(url) {
        let scheme = scheme.to_ascii_lowercase();
        return match scheme.as_str() {
            "http" | "https" => TargetKind::Http(url.to_string()),
            _ if super::object::cloud_of_url(url).is_some() => TargetKind::Http(url.to_string()),
            "file" => match file_url_path(url) {
                Ok(p) => TargetKind::Local(p),
                Err(e) => TargetKind::Unsupported(e.message().to_string()),
            },
            _ => unsupported(),
        };
    }
    if let Some(path) = plain_file_url(url) {
        return match path {
            Ok(p) => TargetKind::Local(p),
            Err(e) => TargetKind::Unsupported(e.message().to_string()),
        };
    }
    let path = Path::new(url);
    if path.is_absolute() || url.starts_with('/') {
        return TargetKind::Local(path.to_path_buf());
    }
    match base {
        Base::Local(dir) => TargetKind::Local(dir.join(path)),
        Base::Url(dir) => {
            let joined = remove_dot_segments(&format!("{dir}{url}"));
            match url_scheme(&joined).map(|s| s.to_ascii_lowercase()) {
                Some(s) if s == "http" || s == "https" => TargetKind::Http(joined),
                _ => TargetKind::Unsupported(format!(
                    "protocol not supported yet: {joined} (the relative path '{url}')"
                )),
            }
        }
    }
}

/// The stores of the network targets: one HTTP store per origin (and
/// query), one object store per bucket, so connections to a server are
/// shared by every file on it.
#[derive(Default)]
struct HttpPool {
    stores: Mutex<HashMap<String, Arc<dyn Store>>>,
}

impl HttpPool {
    fn store(&self, base: &str) -> Result<Arc<dyn Store>> {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = stores.get(base) {
            return Ok(Arc::clone(s));
        }
        // Object stores take their credentials and endpoint from the
        // environment (AWS_*, GOOGLE_*, AZURE_*), as fsspec does for
        // kerchunk's targets.
        let s: Arc<dyn Store> = if super::object::cloud_of_url(base).is_some() {
            Arc::new(super::ObjectStore::open(base, &[], true, None)?)
        } else {
            Arc::new(HttpStore::open(base)?)
        };
        stores.insert(base.to_string(), Arc::clone(&s));
        Ok(s)
    }

    /// The store and its key for the file at `url`.
    fn locate(&self, url: &str) -> Result<(Arc<dyn Store>, String)> {
        let (location, query) = split_http_url(url);
        let scheme_end = location.find("://").map_or(0, |i| i + 3);
        let path_start = location[scheme_end..]
            .find('/')
            .map_or(location.len(), |i| i + scheme_end);
        let (origin, path) = location.split_at(path_start);
        if super::object::cloud_of_url(url).is_some() {
            // The bucket is the store; the object path is the key.
            if let Some(key) = path
                .strip_prefix('/')
                .and_then(percent_decode)
                .filter(|k| validate_key(k).is_ok())
            {
                return Ok((self.store(origin)?, key));
            }
            return Err(ZarrError::Unsupported(format!(
                "cannot request {url}: its path is not supported"
            )));
        }
        // The whole path below the origin as the key...
        if let Some(key) = path
            .strip_prefix('/')
            .and_then(percent_decode)
            .filter(|k| validate_key(k).is_ok())
        {
            return Ok((self.store(&format!("{origin}/{query}"))?, key));
        }
        // ...or, for paths that are no valid key ("a//b"), the folder as the
        // store and the file name as the key.
        if let Some(i) = path.rfind('/') {
            if let Some(key) = percent_decode(&path[i + 1..]).filter(|k| validate_key(k).is_ok()) {
                let base = format!("{origin}{}{query}", &path[..=i]);
                return Ok((self.store(&base)?, key));
            }
        }
        Err(ZarrError::Unsupported(format!(
            "cannot request {url}: its path is not supported"
        )))
    }
}

/// An http(s) URL without its fragment, split into location and query.
fn split_http_url(url: &str) -> (&str, &str) {
    let url = url.split('#').next().unwrap_or("");
    match url.find('?') {
        Some(i) => url.split_at(i),
        None => (url, ""),
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
    http: HttpPool,
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
        let mut targets = Targets::new(Base::new(base)?, limits)?;
        let refs = json::parse(bytes, &mut targets)?;
        Ok(RefStore {
            refs,
            any_http: AtomicBool::new(targets.any_http),
            source: Source::Json { base: targets.base },
            http: HttpPool::default(),
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
        let (lazy, refs) = parquet::LazyRefs::open(path, limits)?;
        Ok(RefStore {
            refs,
            any_http: AtomicBool::new(false),
            source: Source::Parquet(Box::new(lazy)),
            http: HttpPool::default(),
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
            Some("http") | Some("https") => {
                let pool = HttpPool::default();
                let (store, key) = pool.locate(location)?;
                let bytes = store.get(&key, ByteRange::All)?.ok_or_else(|| {
                    ZarrError::NotFound(format!("reference file {location} does not exist"))
                })?;
                let store =
                    RefStore::from_json_with(&decompress(location, bytes)?, location, limits)?;
                // Keep the connection to the server for the targets.
                *store.http.stores.lock().unwrap_or_else(|e| e.into_inner()) =
                    pool.stores.into_inner().unwrap_or_else(|e| e.into_inner());
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
                match store.get(&http_key, req) {
                    Ok(Some(data)) => Ok(data),
                    Ok(None) => Err(ZarrError::NotFound(format!(
                        "reference '{key}': its target {url} does not exist (HTTP 404)"
                    ))),
                    Err(e) => Err(e.context(&format!("reference '{key}'"))),
                }
            }
            TargetKind::Unsupported(why) => {
                Err(ZarrError::Unsupported(format!("reference '{key}': {why}")))
            }
            TargetKind::Refused(why) => {
                Err(ZarrError::InvalidKey(format!("reference '{key}': {why}")))
            }
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

/// Read the bytes of a reference into a local file: `file_range` (offset,
/// length in the file) for byte-range references, `range` of the whole file
/// otherwise. The reference itself must lie within the file.
fn read_local(
    key: &str,
    path: &Path,
    offset: u64,
    length: Option<u64>,
    file_range: Option<(u64, u64)>,
    range: ByteRange,
) -> Result<Vec<u8>> {
    let io_err = |e: std::io::Error| {
        ZarrError::Io(format!(
            "reference '{key}': cannot read its target file '{}': {e}",
            path.display()
        ))
    };
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Err(ZarrError::NotFound(format!(
                "reference '{key}': its target file '{}' does not exist",
                path.display()
            )))
        }
        Err(e) => return Err(io_err(e)),
    };
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(ZarrError::NotFound(format!(
            "reference '{key}': its target '{}' is not a file",
            path.display()
        )));
    }
    let file_len = meta.len();
    let (start, n) = match (length, file_range) {
        (Some(len), Some(fr)) => {
            let end = offset.checked_add(len);
            if end.is_none_or(|end| end > file_len) {
                return Err(ZarrError::CorruptChunk(format!(
                    "reference '{key}' is past the end of its target file '{}': bytes {offset}..{} of a file of {file_len} bytes",
                    path.display(),
                    offset.saturating_add(len)
                )));
            }
            fr
        }
        _ => {
            let (s, e) = resolve_range(key, file_len, range)?;
            (s, e - s)
        }
    };
    let n = usize::try_from(n)
        .map_err(|_| ZarrError::Io(format!("reference '{key}': {n} bytes do not fit in memory")))?;
    let mut buf = vec![0u8; n];
    if n > 0 {
        file.seek(SeekFrom::Start(start)).map_err(io_err)?;
        file.read_exact(&mut buf).map_err(|e| {
            if e.kind() == ErrorKind::UnexpectedEof {
                // The file shrank after its size was read.
                ZarrError::CorruptChunk(format!(
                    "reference '{key}' is past the end of its target file '{}'",
                    path.display()
                ))
            } else {
                io_err(e)
            }
        })?;
    }
    Ok(buf)
}

/// Put the keys directly below `prefix` ("" or ending in "/") of `keys`
/// into `listing`: keys as keys, deeper ones as their first sub-prefix.
fn add_direct<'a>(
    prefix: &str,
    keys: impl Iterator<Item = &'a str>,
    out_keys: &mut BTreeSet<String>,
    out_prefixes: &mut BTreeSet<String>,
) {
    for k in keys {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        match rest.find('/') {
            None => {
                out_keys.insert(k.to_string());
            }
            Some(i) => {
                out_prefixes.insert(k[..prefix.len() + i + 1].to_string());
            }
        }
    }
}

impl Store for RefStore {
    fn get(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        match self.resolve(key)? {
            None => Ok(None),
            Some(r) => self.read(key, &r, range).map(Some),
        }
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        validate_key(key)?;
        Err(read_only_error(self, "write", key))
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        Err(read_only_error(self, "erase", key))
    }

    fn erase_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        Err(read_only_error(self, "erase prefix", prefix))
    }

    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix("")
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        let mut keys: Vec<String> = self
            .refs
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect();
        let lazy = self.lazy_keys(prefix, false)?;
        if !lazy.is_empty() {
            keys.extend(lazy);
            keys.sort_unstable();
            keys.dedup();
        }
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let prefix = dir_prefix(prefix)?;
        let mut keys = BTreeSet::new();
        let mut prefixes = BTreeSet::new();
        // Walk the sorted keys, jumping over each sub-prefix's keys: those
        // of "p/a/" all sort before "p/a0" ('0' follows '/').
        let mut from = prefix.clone();
        loop {
            let next = self
                .refs
                .range::<str, _>((
                    std::ops::Bound::Included(from.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .next();
            let Some((k, _)) = next else { break };
            let Some(rest) = k.strip_prefix(prefix.as_str()) else {
                break;
            };
            match rest.find('/') {
                None => {
                    keys.insert(k.clone());
                    from = format!("{k}\0");
                }
                Some(i) => {
                    let sub = &k[..prefix.len() + i + 1];
                    prefixes.insert(sub.to_string());
                    from = format!("{}0", &sub[..sub.len() - 1]);
                }
            }
        }
        let lazy = self.lazy_keys(&prefix, true)?;
        add_direct(
            &prefix,
            lazy.iter().map(|s| s.as_str()),
            &mut keys,
            &mut prefixes,
        );
        Ok(DirListing {
            keys: keys.into_iter().collect(),
            prefixes: prefixes.into_iter().collect(),
        })
    }

    fn exists(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(self.resolve(key)?.is_some())
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let Some(r) = self.resolve(key)? else {
            return Ok(None);
        };
        let target = match &r {
            Ref::Inline(data) => return Ok(Some(data.len() as u64)),
            Ref::Target {
                length: Some(len), ..
            } => return Ok(Some(*len)),
            Ref::Target { target, .. } => target,
        };
        match &target.kind {
            TargetKind::Local(path) => match std::fs::metadata(path) {
                Ok(m) if m.is_file() => Ok(Some(m.len())),
                Ok(_) => Err(ZarrError::NotFound(format!(
                    "reference '{key}': its target '{}' is not a file",
                    path.display()
                ))),
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                    Err(ZarrError::NotFound(format!(
                        "reference '{key}': its target file '{}' does not exist",
                        path.display()
                    )))
                }
                Err(e) => Err(ZarrError::Io(format!(
                    "reference '{key}': cannot read its target file '{}': {e}",
                    path.display()
                ))),
            },
            TargetKind::Http(url) => {
                let (store, http_key) = self.http.locate(url)?;
                match store.size(&http_key) {
                    Ok(Some(n)) => Ok(Some(n)),
                    Ok(None) => Err(ZarrError::NotFound(format!(
                        "reference '{key}': its target {url} does not exist (HTTP 404)"
                    ))),
                    Err(e) => Err(e.context(&format!("reference '{key}'"))),
                }
            }
            TargetKind::Unsupported(why) => {
                Err(ZarrError::Unsupported(format!("reference '{key}': {why}")))
            }
            TargetKind::Refused(why) => {
                Err(ZarrError::InvalidKey(format!("reference '{key}': {why}")))
            }
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        match &self.source {
            Source::Json { base } => format!(
                "reference store ({} references, relative to {})",
                self.refs.len(),
                base.describe()
            ),
            Source::Parquet(lazy) => format!("Parquet reference store at {}", lazy.root_display()),
        }
    }

    /// References into http(s) files are fetched with up to 16 requests in
    /// flight, on scoped threads; the rest one after another. Results are
    /// in the order of `requests`.
    fn get_many(&self, requests: &[(String, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let resolved: Vec<Result<Option<Ref>>> = requests
            .iter()
            .map(|(k, _)| validate_key(k).and_then(|_| self.resolve(k)))
            .collect();
        let fetch = |i: usize| -> Result<Option<Vec<u8>>> {
            let (key, range) = &requests[i];
            match &resolved[i] {
                Err(e) => Err(e.clone()),
                Ok(None) => Ok(None),
                Ok(Some(r)) => self.read(key, r, *range).map(Some),
            }
        };
        let remote = resolved.iter().filter(|r| Self::is_http(r)).count();
        fetch_concurrently(requests.len(), remote.min(MAX_CONCURRENCY), fetch)
    }

    /// True when a target is an http(s) URL. For Parquet sets, the first
    /// reference file is looked at if none has been read yet.
    fn prefers_batches(&self) -> bool {
        if self.any_http.load(Ordering::Relaxed) {
            return true;
        }
        if let Source::Parquet(lazy) = &self.source {
            if lazy.sample_any_http() {
                self.any_http.store(true, Ordering::Relaxed);
                return true;
            }
        }
        false
    }
}
