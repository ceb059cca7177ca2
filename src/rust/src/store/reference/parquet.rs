//! Parquet reference sets: the folder layout of fsspec's
//! `LazyReferenceMapper` (references-spec.rst, "Parquet references").
//!
//! The folder is local or remote (an http(s) URL or an object store
//! URL, read through the store's pool of network stores).
//!
//! `.zmetadata` holds `metadata` (every metadata document, by key) and
//! `record_size`. The chunk references of the array at `<path>` are
//! numbered in C order of its chunk grid; number `n` is row
//! `n % record_size` of `<path>/refs.<n / record_size>.parq`, whose columns
//! are `path`, `offset`, `size` and `raw`. A file is read only when one of
//! its chunks is asked for, and kept in a small cache.

use super::remote::HttpPool;
use super::{Base, Ref, Targets};
use crate::error::{Result, ZarrError};
use crate::key::ChunkKeyEncoding;
use crate::store::{fetch_concurrently, validate_key, ByteRange};
use parquet::basic::Type as PhysicalType;
use parquet::column::reader::get_typed_column_reader;
use parquet::data_type::{ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::reader::{ChunkReader, FileReader, RowGroupReader, SerializedFileReader};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

mod rows;

/// How many reference files stay in memory (fsspec keeps 128 too).
const CACHE_FILES: usize = 128;

/// The chunk grid of one array and how its chunk keys are written.
#[derive(Debug, Clone)]
struct Grid {
    /// Chunks along each dimension.
    chunks: Vec<u64>,
    /// The number of chunks.
    total: u64,
    encoding: ChunkKeyEncoding,
}

impl Grid {
    fn new(shape: &[u64], chunk_shape: &[u64], encoding: ChunkKeyEncoding) -> Grid {
        let chunks: Vec<u64> = shape
            .iter()
            .zip(chunk_shape)
            .map(|(&s, &c)| if c == 0 { 0 } else { s.div_ceil(c) })
            .collect();
        let total = chunks
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .unwrap_or(u64::MAX);
        Grid {
            chunks,
            total,
            encoding,
        }
    }

    /// The C-order number of the chunk whose key (below the array) is
    /// `s`, if it is a chunk of the grid.
    fn number(&self, s: &str) -> Option<u64> {
        let idx = self.encoding.parse(s, self.chunks.len())?;
        let mut n: u64 = 0;
        for (&i, &count) in idx.iter().zip(&self.chunks) {
            if i >= count {
                return None;
            }
            n = n * count + i;
        }
        Some(n)
    }

    /// The key (below the array) of chunk number `n`.
    fn key(&self, mut n: u64) -> String {
        let mut idx = vec![0u64; self.chunks.len()];
        for (d, &count) in self.chunks.iter().enumerate().rev() {
            idx[d] = n % count;
            n /= count;
        }
        self.encoding.key(&idx)
    }
}

/// The rows of one reference file; `None` for keys that do not exist.
type Rows = Vec<Option<Ref>>;

#[derive(Default)]
struct Cache {
    files: HashMap<(String, u64), (Arc<Rows>, u64)>,
    tick: u64,
}

/// Where the reference folder is.
enum Root {
    Local(PathBuf),
    /// The folder's URL without a final "/" and its query ("" or
    /// "?..."), which every file's URL keeps (a signed URL's, say); the
    /// files are fetched through the pool that also serves the targets
    /// (one client per bucket).
    Remote {
        url: String,
        query: String,
        pool: Arc<HttpPool>,
    },
}

pub(super) struct LazyRefs {
    root: Root,
    record_size: u64,
    /// Array path ("" for a root array) -> chunk grid.
    arrays: HashMap<String, Grid>,
    cache: Mutex<Cache>,
    opened: AtomicUsize,
    targets: Mutex<Targets>,
    any_http: AtomicBool,
    sampled: AtomicBool,
}

fn meta_err(msg: String) -> ZarrError {
    ZarrError::Metadata(msg)
}

impl LazyRefs {
    /// Read `.zmetadata` of the folder `path`; the metadata documents are
    /// returned as inline references.
    pub(super) fn open(
        path: &str,
        limits: super::RefLimits,
    ) -> Result<(LazyRefs, BTreeMap<String, Ref>)> {
        let root = match super::url_scheme(path) {
            Some(s) if s.eq_ignore_ascii_case("file") => super::file_url_path(path)?,
            Some(_) => {
                return Err(ZarrError::Unsupported(format!(
                    "Parquet references are read from local folders or URLs, not {path}"
                )))
            }
            None => match super::plain_file_url(path) {
                Some(p) => p?,
                None => PathBuf::from(path),
            },
        };
        let root = std::path::absolute(&root).map_err(|e| {
            ZarrError::Io(format!(
                "cannot resolve the reference folder '{}': {e}",
                root.display()
            ))
        })?;
        let zmeta_path = root.join(".zmetadata");
        let bytes = match std::fs::read(&zmeta_path) {
            Ok(b) => b,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Err(ZarrError::NotFound(format!(
                    "'{}' is no Parquet reference folder: it has no .zmetadata",
                    root.display()
                )))
            }
            Err(e) => {
                return Err(ZarrError::Io(format!(
                    "cannot read '{}': {e}",
                    zmeta_path.display()
                )))
            }
        };
        let where_ = zmeta_path.display().to_string();
        // Relative target paths start beside the folder, as they would
        // beside a JSON reference file.
        let base = Base::Local(root.parent().unwrap_or(&root).to_path_buf());
        Self::from_zmetadata(Root::Local(root), &bytes, &where_, base, limits)
    }

    /// The reference folder at `url` (http(s) or an object store), whose
    /// `.zmetadata` the caller fetched through `pool` as `bytes`. Its
    /// reference files are fetched through `pool` when first needed.
    pub(super) fn open_remote(
        url: &str,
        pool: Arc<HttpPool>,
        bytes: &[u8],
        limits: super::RefLimits,
    ) -> Result<(LazyRefs, BTreeMap<String, Ref>)> {
        let (location, query) = super::remote::split_http_url(url);
        let url = location.trim_end_matches('/').to_string();
        let where_ = format!("{url}/.zmetadata");
        // The folder's URL as a file name: relative targets start in the
        // folder holding it.
        let base = Base::new(&url)?;
        let root = Root::Remote {
            url,
            query: query.to_string(),
            pool,
        };
        Self::from_zmetadata(root, bytes, &where_, base, limits)
    }

    fn from_zmetadata(
        root: Root,
        bytes: &[u8],
        where_: &str,
        base: Base,
        limits: super::RefLimits,
    ) -> Result<(LazyRefs, BTreeMap<String, Ref>)> {
        let doc: Value = serde_json::from_slice(bytes)
            .map_err(|e| meta_err(format!("invalid JSON in '{where_}': {e}")))?;
        let record_size = doc
            .get("record_size")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                meta_err(format!("'{where_}' needs a positive integer 'record_size'"))
            })?;
        let Some(Value::Object(metadata)) = doc.get("metadata") else {
            return Err(meta_err(format!(
                "'{where_}' needs 'metadata', a JSON object of the metadata documents"
            )));
        };
        let mut refs = BTreeMap::new();
        let mut arrays = HashMap::new();
        for (key, value) in metadata {
            validate_key(key)
                .map_err(|e| meta_err(format!("invalid key in '{where_}': {}", e.message())))?;
            let bytes: Arc<[u8]> = match value {
                Value::String(s) => s.as_bytes().into(),
                other => serde_json::to_vec(other)?.into(),
            };
            let doc = match value {
                Value::String(s) => serde_json::from_str(s).ok(),
                other => Some(other.clone()),
            };
            if let Some(found) = doc.as_ref().and_then(|d| array_grid(key, d)) {
                let (field, grid) = found?;
                arrays.insert(field, grid);
            }
            refs.insert(key.clone(), Ref::Inline(bytes));
        }
        Ok((
            LazyRefs {
                root,
                record_size,
                arrays,
                cache: Mutex::new(Cache::default()),
                opened: AtomicUsize::new(0),
                targets: Mutex::new(Targets::new(base, limits)?),
                any_http: AtomicBool::new(false),
                sampled: AtomicBool::new(false),
            },
            refs,
        ))
    }

    pub(super) fn root_display(&self) -> String {
        match &self.root {
            Root::Local(p) => p.display().to_string(),
            Root::Remote { url, .. } => url.clone(),
        }
    }

    pub(super) fn any_http(&self) -> bool {
        self.any_http.load(Ordering::Relaxed)
    }

    pub(super) fn files_opened(&self) -> usize {
        self.opened.load(Ordering::Relaxed)
    }

    pub(super) fn cached_files(&self) -> Vec<String> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<String> = cache
            .files
            .keys()
            .map(|(field, rec)| file_name(field, *rec))
            .collect();
        out.sort();
        out
    }

    /// Whether a target is http(s), reading the first reference file of
    /// the first array if no file has been read yet.
    pub(super) fn sample_any_http(&self) -> bool {
        if !self.sampled.swap(true, Ordering::Relaxed) && self.files_opened() == 0 {
            let mut fields: Vec<&String> = self
                .arrays
                .iter()
                .filter(|(_, g)| g.total > 0)
                .map(|(f, _)| f)
                .collect();
            fields.sort();
            if let Some(field) = fields.first() {
                let _ = self.load(field, 0);
            }
        }
        self.any_http()
    }

    /// The array and chunk number of a chunk key.
    fn locate<'k>(&self, key: &'k str) -> Option<(&'k str, &Grid, u64)> {
        if let Some(g) = self.arrays.get("") {
            if let Some(n) = g.number(key) {
                return Some(("", g, n));
            }
        }
        for (i, _) in key.match_indices('/').rev() {
            if let Some(g) = self.arrays.get(&key[..i]) {
                if let Some(n) = g.number(&key[i + 1..]) {
                    return Some((&key[..i], g, n));
                }
            }
        }
        None
    }

    /// The reference of a chunk key, `None` if it is no chunk or its row
    /// is empty.
    pub(super) fn get(&self, key: &str) -> Result<Option<Ref>> {
        let Some((field, _, n)) = self.locate(key) else {
            return Ok(None);
        };
        let rows = self.load(field, n / self.record_size)?;
        Ok(rows.get((n % self.record_size) as usize).cloned().flatten())
    }

    /// The chunk keys (that exist) of the arrays under or around `prefix`:
    /// of the arrays at or below it, or only of the array it is in or at
    /// (`direct_only`, for list_dir: deeper arrays show as folders anyway).
    pub(super) fn keys_below(&self, prefix: &str, direct_only: bool) -> Result<Vec<String>> {
        let mut fields: Vec<&String> = self
            .arrays
            .keys()
            .filter(|f| {
                let dir = folder(f);
                prefix.starts_with(&dir) || (!direct_only && dir.starts_with(prefix))
            })
            .collect();
        fields.sort();
        let mut out = Vec::new();
        for field in fields {
            let grid = &self.arrays[field];
            let dir = folder(field);
            let records = grid.total.div_ceil(self.record_size);
            for rec in 0..records {
                let rows = self.load(field, rec)?;
                for (i, r) in rows.iter().enumerate() {
                    let n = rec * self.record_size + i as u64;
                    if r.is_none() || n >= grid.total {
                        continue;
                    }
                    let key = format!("{dir}{}", grid.key(n));
                    if key.starts_with(prefix) {
                        out.push(key);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Read the reference files that the chunk keys `keys` need and the
    /// cache lacks, all at once, when they are remote: resolved one key
    /// after another, a read of many chunks waited a round trip per file.
    /// A file that fails is left for the key's own lookup to report.
    pub(super) fn load_for(&self, keys: &[&str]) {
        if !matches!(self.root, Root::Remote { .. }) {
            return;
        }
        let mut want: Vec<(String, u64)> = keys
            .iter()
            .filter_map(|k| self.locate(k))
            .map(|(field, _, n)| (field.to_string(), n / self.record_size))
            .collect();
        want.sort();
        want.dedup();
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            want.retain(|id| !cache.files.contains_key(id));
        }
        // More than the cache holds would push each other out.
        want.truncate(CACHE_FILES);
        if want.len() < 2 {
            return;
        }
        let workers = want.len().min(super::MAX_CONCURRENCY);
        fetch_concurrently(want.len(), workers, |i| self.load(&want[i].0, want[i].1));
    }

    /// The rows of `<field>/refs.<record>.parq`, from the cache or read now.
    fn load(&self, field: &str, record: u64) -> Result<Arc<Rows>> {
        let id = (field.to_string(), record);
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.tick += 1;
            let tick = cache.tick;
            if let Some((rows, used)) = cache.files.get_mut(&id) {
                *used = tick;
                return Ok(Arc::clone(rows));
            }
        }
        let rows = Arc::new(self.read_file_caught(field, record)?);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.tick += 1;
        let tick = cache.tick;
        if cache.files.len() >= CACHE_FILES && !cache.files.contains_key(&id) {
            let oldest = cache
                .files
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                cache.files.remove(&k);
            }
        }
        let entry = cache.files.entry(id).or_insert((rows, tick));
        entry.1 = tick;
        Ok(Arc::clone(&entry.0))
    }

    /// `read_file`, with a panic of the Parquet decoder taken as the file's
    /// error: on some malformed pages (a data page whose dictionary page is
    /// missing, found by fuzzing) it asserts instead of returning an error.
    fn read_file_caught(&self, field: &str, record: u64) -> Result<Rows> {
        let read = crate::panics::catch(|| self.read_file(field, record));
        read.unwrap_or_else(|p| {
            let why = crate::panics::message(&*p).unwrap_or_else(|| "the decoder stopped".into());
            Err(meta_err(format!(
                "cannot read the Parquet reference file '{}': malformed ({why})",
                self.file_display(field, record)
            )))
        })
    }

    /// The path or URL of `<field>/refs.<record>.parq`, for messages.
    fn file_display(&self, field: &str, record: u64) -> String {
        match &self.root {
            Root::Local(root) => self.local_file(root, field, record).display().to_string(),
            Root::Remote { url, .. } => format!("{url}/{}", file_name(field, record)),
        }
    }

    fn local_file(&self, root: &Path, field: &str, record: u64) -> PathBuf {
        let mut path = root.to_path_buf();
        for seg in field.split('/').filter(|s| !s.is_empty()) {
            path.push(seg);
        }
        path.push(format!("refs.{record}.parq"));
        path
    }

    /// Read one reference file, from the folder or over the network; a
    /// missing file has no references.
    fn read_file(&self, field: &str, record: u64) -> Result<Rows> {
        let shown = self.file_display(field, record);
        match &self.root {
            Root::Local(root) => {
                let path = self.local_file(root, field, record);
                match File::open(&path) {
                    Ok(f) => self.read_rows(f, &shown),
                    Err(e)
                        if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) =>
                    {
                        Ok(Vec::new())
                    }
                    Err(e) => Err(ZarrError::Io(format!(
                        "cannot read the reference file '{shown}': {e}"
                    ))),
                }
            }
            Root::Remote { pool, query, url } => {
                // The folder names are store keys, which may hold "%" or
                // characters a URL escapes: escaped here, so that locating
                // the URL decodes them back to the same names.
                let file = format!(
                    "{url}/{}{query}",
                    crate::store::escape::path(&file_name(field, record))
                );
                let (store, key) = pool.locate(&file)?;
                match store.get(&key, ByteRange::All) {
                    Ok(Some(bytes)) => self.read_rows(bytes::Bytes::from(bytes), &shown),
                    Ok(None) => Ok(Vec::new()),
                    Err(e) => Err(e.context(&format!("reference file {shown}"))),
                }
            }
        }
    }
}

/// "" or "<field>/".
fn folder(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}/")
    }
}

fn file_name(field: &str, record: u64) -> String {
    format!("{}refs.{record}.parq", folder(field))
}

/// The array path and chunk grid of a metadata document, if it is the
/// `.zarray` of a Zarr v2 array or the `zarr.json` of a v3 array with a
/// regular grid.
fn array_grid(key: &str, doc: &Value) -> Option<Result<(String, Grid)>> {
    let (field, name) = match key.rfind('/') {
        Some(i) => (&key[..i], &key[i + 1..]),
        None => ("", key),
    };
    let dims = |v: Option<&Value>, what: &str| -> Result<Vec<u64>> {
        v.and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>())
            .ok_or_else(|| meta_err(format!("'{key}' has no valid '{what}'")))
    };
    let grid = match name {
        ".zarray" => (|| {
            let shape = dims(doc.get("shape"), "shape")?;
            let chunks = dims(doc.get("chunks"), "chunks")?;
            let separator = match doc.get("dimension_separator").and_then(Value::as_str) {
                Some("/") => '/',
                _ => '.',
            };
            Ok(Grid::new(
                &shape,
                &chunks,
                ChunkKeyEncoding::V2 { separator },
            ))
        })(),
        "zarr.json" if doc.get("node_type").and_then(Value::as_str) == Some("array") => {
            let grid = doc.get("chunk_grid")?;
            if grid.get("name").and_then(Value::as_str) != Some("regular") {
                return None;
            }
            // As the metadata reads it; an encoding it does not know
            // leaves the array without chunks here (reading it fails).
            let encoding = match doc.get("chunk_key_encoding") {
                None => Ok(ChunkKeyEncoding::default()),
                Some(e) => {
                    let name = e.get("name").or(Some(e)).and_then(Value::as_str);
                    let sep = e
                        .get("configuration")
                        .and_then(|c| c.get("separator"))
                        .and_then(Value::as_str);
                    ChunkKeyEncoding::from_name(name.unwrap_or(""), sep)
                }
            }
            .ok()?;
            (|| {
                let shape = dims(doc.get("shape"), "shape")?;
                let chunks = dims(
                    grid.get("configuration").and_then(|c| c.get("chunk_shape")),
                    "chunk_grid.configuration.chunk_shape",
                )?;
                Ok(Grid::new(&shape, &chunks, encoding))
            })()
        }
        _ => return None,
    };
    Some(grid.map(|g| (field.to_string(), g)))
}
