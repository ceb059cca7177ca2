//! The read/write engine: plan the chunks a selection touches, then fetch,
//! decode and scatter them in parallel straight into a buffer R allocated
//! (or gather, encode and store them for a write).

use crate::codec::sharding::{Buffers, Sharding};
use crate::codec::{CodecChain, CodecContext, Warnings};
use crate::convert::{self, check_writable, Lossy, RBuf, RBufMut, RBufPtr, Span};
use crate::dtype::{DataType, RType};
use crate::error::{Result, ZarrError};
use crate::metadata::{self, ArrayMetadata, NodeMetadata};
use crate::pool::{collect_tasks, run_tasks};
use crate::selection::{DimChunk, Selection};
use crate::store::{ByteRange, Direct, Store};
use crate::words;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How a read or write runs.
#[derive(Debug, Clone, Copy)]
pub struct IoOptions {
    pub threads: usize,
    /// A crc32c mismatch is an error instead of a warning.
    pub strict_checksums: bool,
}

impl IoOptions {
    /// The codec context of one chunk (or shard) named by `what`.
    pub fn context<'a>(&self, warnings: &'a Warnings, what: &'a str) -> CodecContext<'a> {
        CodecContext {
            strict_checksums: self.strict_checksums,
            warnings,
            what,
        }
    }
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            threads: 1,
            strict_checksums: false,
        }
    }
}

/// An open array: its store, where it lives, and its parsed metadata.
pub struct Array {
    pub store: Arc<dyn Store>,
    /// Node path without leading or trailing "/"; "" for the root.
    pub path: String,
    pub meta: ArrayMetadata,
    pub chain: CodecChain,
}

/// The store key of the metadata document of the node at `path`.
pub fn metadata_key(path: &str) -> String {
    if path.is_empty() {
        "zarr.json".to_string()
    } else {
        format!("{path}/zarr.json")
    }
}

/// Normalise a node path ("/a/b/", "a/b") to "a/b"; "/" and "" give "".
pub fn normalize_path(path: &str) -> Result<String> {
    let p = path.trim_matches('/');
    if !p.is_empty() {
        crate::store::validate_key(p).map_err(|_| {
            ZarrError::InvalidKey(format!("invalid node path '{}'", path.escape_debug()))
        })?;
    }
    Ok(p.to_string())
}

impl Array {
    fn from_meta(store: Arc<dyn Store>, path: String, meta: ArrayMetadata) -> Result<Array> {
        let what = format!("array '/{path}'");
        let chain = CodecChain::from_json(
            &meta.codecs,
            meta.data_type,
            &meta.fill_value.bytes,
            meta.shape.len(),
        )
        .map_err(|e| e.context(&what))?;
        if let Some(sh) = chain.sharding() {
            let shard: Vec<usize> = meta.chunk_shape.iter().map(|&c| c as usize).collect();
            sh.grid(&chain.encoded_shape(&shard))
                .map_err(|e| e.context(&what))?;
        }
        Ok(Array {
            store,
            path,
            meta,
            chain,
        })
    }

    /// Open the array whose zarr.json is at `path` in `store`.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Array> {
        let path = normalize_path(path)?;
        let what = format!("array '/{path}'");
        match metadata::read_node(store.as_ref(), &path).map_err(|e| e.context(&what))? {
            Some(NodeMetadata::Array(meta)) => Array::from_meta(store, path, meta),
            Some(NodeMetadata::Group(_)) => Err(ZarrError::Metadata(format!(
                "'/{path}' is a group, not an array"
            ))),
            None => Err(ZarrError::NotFound(format!(
                "{what}: no array metadata at '/{path}'"
            ))),
        }
    }

    /// The array at `path` described by `meta`, a document already read
    /// from the store: the store is not read again, which over HTTP saves
    /// one request per array (two or three for Zarr v2).
    pub fn with_metadata(store: Arc<dyn Store>, path: &str, meta: ArrayMetadata) -> Result<Array> {
        Array::from_meta(store, normalize_path(path)?, meta)
    }

    /// Validate `meta`, write its metadata documents, and open it.
    pub fn create(store: Arc<dyn Store>, path: &str, meta: ArrayMetadata) -> Result<Array> {
        let path = normalize_path(path)?;
        let arr = Array::from_meta(store, path, meta)?;
        for (name, text) in metadata::documents(&NodeMetadata::Array(arr.meta.clone()))? {
            let key = if arr.path.is_empty() {
                name.to_string()
            } else {
                format!("{}/{name}", arr.path)
            };
            arr.store.set(&key, &text)?;
        }
        Ok(arr)
    }

    pub fn what(&self) -> String {
        format!("array '/{}'", self.path)
    }

    pub fn chunk_key(&self, idx: &[u64]) -> String {
        let k = self.meta.chunk_key_encoding.key(idx);
        if self.path.is_empty() {
            k
        } else {
            format!("{}/{}", self.path, k)
        }
    }

    fn chunk_shape(&self) -> Vec<usize> {
        self.meta.chunk_shape.iter().map(|&c| c as usize).collect()
    }

    fn chunk_what(&self, key: &str) -> String {
        format!("{} chunk '{key}'", self.what())
    }

    /// Decode one chunk's stored bytes; `raw` None (not stored) stays None.
    fn decode_chunk(
        &self,
        key: &str,
        raw: Option<Vec<u8>>,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Option<Vec<u8>>> {
        let Some(raw) = raw else { return Ok(None) };
        let what = self.chunk_what(key);
        let ctx = opts.context(warnings, &what);
        self.chain.decode(raw, &self.chunk_shape(), &ctx).map(Some)
    }

    /// Fetch and decode one chunk; None when it is not stored.
    fn load_chunk(
        &self,
        idx: &[u64],
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Option<Vec<u8>>> {
        let key = self.chunk_key(idx);
        let raw = self
            .store
            .get(&key, ByteRange::All)
            .map_err(|e| e.context(&self.chunk_what(&key)))?;
        self.decode_chunk(&key, raw, opts, warnings)
    }

    /// Read `sel` into `out`, a column-major R buffer of `sel.shape()`.
    /// Returns warnings for R to raise.
    pub fn read(&self, sel: &Selection, out: &mut RBufMut, opts: IoOptions) -> Result<Vec<String>> {
        let what = self.what();
        sel.check(&self.meta.shape, &what)?;
        let n = sel.num_elements();
        if out.len() != n {
            return Err(ZarrError::Type(format!(
                "{what}: output buffer has {} elements, the selection {n}",
                out.len()
            )));
        }
        if n == 0 {
            return Ok(vec![]);
        }
        let dst = RBufPtr::from_mut(out, &sel.shape());
        crate::pages::advise_huge_pages(dst.ptr, n * dst.rtype.size());
        let warnings = Warnings::default();
        let lossy = Lossy::default();
        match self.chain.partial_sharding() {
            Some(sh) => self.read_sharded(sel, sh, &dst, opts, &warnings, &lossy)?,
            None => self.read_chunks(sel, &dst, opts, &warnings, &lossy)?,
        }
        let mut w = warnings.take();
        w.extend(lossy.warnings(&what));
        Ok(w)
    }

    /// Scatter a decoded chunk (or the fill value, for None) into `dst`.
    fn scatter(
        &self,
        data: Option<&[u8]>,
        strides: &[usize],
        c: &[&DimChunk],
        dst: &RBufPtr,
        lossy: &Lossy,
    ) {
        self.scatter_from(data, strides, c, None, dst, lossy)
    }

    /// `scatter` of a part of a chunk whose first element is the one at
    /// position `base` of the chunk (a byte range of a stored chunk); None
    /// for a whole chunk.
    fn scatter_from(
        &self,
        data: Option<&[u8]>,
        strides: &[usize],
        c: &[&DimChunk],
        base: Option<&[usize]>,
        dst: &RBufPtr,
        lossy: &Lossy,
    ) {
        let spans: Vec<Vec<Span>> = c
            .iter()
            .enumerate()
            .map(|(k, d)| {
                let b = base.map_or(0, |b| b[k]);
                d.runs
                    .iter()
                    .map(|r| (r.start as usize - b, r.dst, r.len))
                    .collect()
            })
            .collect();
        let fill = &self.meta.fill_value.bytes;
        let zero = vec![0usize; strides.len()];
        // SAFETY: spans stay inside the chunk (plans split at chunk borders)
        // and inside `dst` (the selection was checked); different chunks
        // map to disjoint output elements.
        unsafe {
            match data {
                Some(d) => convert::read_into(
                    self.meta.data_type,
                    fill,
                    self.meta.fill_marks_na,
                    d.as_ptr(),
                    strides,
                    dst,
                    &spans,
                    lossy,
                ),
                None => convert::read_into(
                    self.meta.data_type,
                    fill,
                    self.meta.fill_marks_na,
                    fill.as_ptr(),
                    &zero,
                    dst,
                    &spans,
                    lossy,
                ),
            }
        }
    }

    /// Read whole chunks: fetch, decode, scatter, in parallel. Stores with
    /// latency fetch a batch of chunks concurrently first.
    fn read_chunks(
        &self,
        sel: &Selection,
        dst: &RBufPtr,
        opts: IoOptions,
        warnings: &Warnings,
        lossy: &Lossy,
    ) -> Result<()> {
        let plan = sel.plan(&self.meta.chunk_shape);
        let chunks = cartesian(&plan);
        let strides = self.chain.stored_strides(&self.chunk_shape());
        let index = |c: &Vec<&DimChunk>| c.iter().map(|d| d.chunk).collect::<Vec<u64>>();
        if !self.store.prefers_batches() {
            let direct = self.store.reads_direct() && self.stores_as_r(dst.rtype, &strides);
            let ranged = self.chain.stores_plain_elements() && self.store.supports_partial_reads();
            return run_tasks(&chunks, opts.threads, |c| {
                if direct && self.read_chunk_straight(c, &strides, dst, lossy)? {
                    return Ok(());
                }
                if ranged && self.read_chunk_part(c, &strides, dst, lossy)? {
                    return Ok(());
                }
                let data = self.load_chunk(&index(c), opts, warnings)?;
                self.scatter(data.as_deref(), &strides, c, dst, lossy);
                Ok(())
            });
        }
        for batch in chunks.chunks(BATCH) {
            let keys: Vec<(String, ByteRange)> = batch
                .iter()
                .map(|c| (self.chunk_key(&index(c)), ByteRange::All))
                .collect();
            let fetched = self.store.get_many(&keys);
            let jobs: Vec<_> = batch.iter().zip(keys.iter().zip(fetched)).collect();
            run_tasks(&jobs, opts.threads, |(c, ((key, _), raw))| {
                let raw = raw.clone().map_err(|e| e.context(&self.chunk_what(key)))?;
                let data = self.decode_chunk(key, raw, opts, warnings)?;
                self.scatter(data.as_deref(), &strides, c, dst, lossy);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Whether a stored chunk holds its elements exactly as an R vector of
    /// `rtype` does, column-major: the condition for reading and writing
    /// chunks straight between R memory and the store.
    fn stores_as_r(&self, rtype: RType, strides: &[usize]) -> bool {
        let same_type = matches!(
            (self.meta.data_type, rtype),
            (DataType::Float64, RType::Double) | (DataType::Int32, RType::Integer)
        );
        let shape = self.chunk_shape();
        // Columns shorter than this would make many tiny reads.
        let column_bytes = shape.first().map_or(0, |&n| n * self.meta.data_type.size());
        same_type
            && self.chain.stores_plain_elements()
            && strides == convert::column_major_strides(&shape).as_slice()
            && column_bytes >= MIN_STRAIGHT_COLUMN_BYTES
    }

    /// Read chunk `c` from the store straight into its place in `dst`,
    /// one column of the chunk per buffer, without a copy in between; then
    /// turn fill values into NA where the array asks for it. Only for a
    /// chunk the selection covers whole (so no edge chunk, whose stored
    /// columns run past the array). Returns false when it did not apply:
    /// the caller then reads the chunk the usual way, which overwrites
    /// whatever this left.
    fn read_chunk_straight(
        &self,
        c: &[&DimChunk],
        strides: &[usize],
        dst: &RBufPtr,
        lossy: &Lossy,
    ) -> Result<bool> {
        let shape = self.chunk_shape();
        let Some(columns) = chunk_columns(c, &shape, &dst.strides) else {
            return Ok(false);
        };
        let size = self.meta.data_type.size();
        // SAFETY: the columns lie inside dst (the selection was checked and
        // covers this chunk whole) and belong to this chunk alone, so no
        // other task touches them while these slices live.
        let mut bufs: Vec<std::io::IoSliceMut> = columns
            .iter()
            .map(|&(o, n)| unsafe {
                std::io::IoSliceMut::new(std::slice::from_raw_parts_mut(
                    dst.ptr.add(o * size),
                    n * size,
                ))
            })
            .collect();
        let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
        let key = self.chunk_key(&idx);
        match self
            .store
            .get_direct(&key, &mut bufs)
            .map_err(|e| e.context(&self.chunk_what(&key)))?
        {
            Direct::NotDone => Ok(false),
            Direct::Missing => {
                self.scatter(None, strides, c, dst, lossy);
                Ok(true)
            }
            Direct::Done => {
                if self.meta.fill_marks_na {
                    let fill = &self.meta.fill_value.bytes;
                    for &(o, n) in &columns {
                        // SAFETY: as above; the column was just read.
                        unsafe {
                            convert::fill_to_na_in_place(
                                self.meta.data_type,
                                fill,
                                dst.ptr.add(o * size),
                                n,
                            )
                        };
                    }
                }
                Ok(true)
            }
        }
    }

    /// Read only the bytes of an uncompressed chunk (`stores_plain_elements`)
    /// that the selection needs: the range from its first to its last
    /// selected element, when that is at most half the chunk. A small
    /// region across chunk corners then reads a fraction of each chunk.
    /// Returns false when it did not apply.
    fn read_chunk_part(
        &self,
        c: &[&DimChunk],
        strides: &[usize],
        dst: &RBufPtr,
        lossy: &Lossy,
    ) -> Result<bool> {
        let shape = self.chunk_shape();
        let mut base = Vec::with_capacity(c.len());
        let (mut lo, mut hi) = (0usize, 1usize);
        for ((d, &s), &n) in c.iter().zip(strides).zip(&shape) {
            let first = d.runs.iter().map(|r| r.start as usize).min().unwrap_or(0);
            let last = d
                .runs
                .iter()
                .map(|r| r.start as usize + r.len)
                .max()
                .unwrap_or(n)
                .max(first + 1)
                - 1;
            base.push(first);
            lo += first * s;
            hi += last * s;
        }
        let elements: usize = shape.iter().product();
        if (hi - lo) * 2 > elements {
            return Ok(false);
        }
        let size = self.meta.data_type.size();
        let key = self.chunk_key(&c.iter().map(|d| d.chunk).collect::<Vec<u64>>());
        let what = self.chunk_what(&key);
        let range = ByteRange::Range {
            offset: (lo * size) as u64,
            length: ((hi - lo) * size) as u64,
        };
        // A range past the end of a truncated chunk is a corrupt_chunk
        // error of the store.
        let data = self.store.get(&key, range).map_err(|e| e.context(&what))?;
        if let Some(d) = &data {
            if d.len() != (hi - lo) * size {
                return Err(ZarrError::CorruptChunk(format!(
                    "{what}: shorter than a chunk of {elements} elements of {}",
                    self.meta.data_type.name()
                )));
            }
        }
        self.scatter_from(data.as_deref(), strides, c, Some(&base), dst, lossy);
        Ok(true)
    }

    /// Read a sharded array one inner chunk at a time: fetch each touched
    /// shard's index, then only the byte ranges of the inner chunks the
    /// selection needs (the whole shard when it needs most of them).
    fn read_sharded(
        &self,
        sel: &Selection,
        sh: &Sharding,
        dst: &RBufPtr,
        opts: IoOptions,
        warnings: &Warnings,
        lossy: &Lossy,
    ) -> Result<()> {
        let inner: Vec<u64> = sh.inner_shape.iter().map(|&n| n as u64).collect();
        let grid = sh.grid(&self.chunk_shape())?;
        let plan = sel.plan(&inner);
        let chunks = cartesian(&plan);
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        if !self.store.prefers_batches() {
            return self.read_sharded_local(&chunks, sh, &grid, dst, opts, warnings, lossy);
        }
        // Fetching is per shard (one index each); decoding is per inner
        // chunk, in parallel across all shards of a round.
        for group in group_by_shard(&chunks, &grid).chunks(BATCH) {
            let fetched = collect_tasks(group, opts.threads, |(sidx, cs)| {
                self.fetch_inner_chunks(sh, &grid, sidx, cs, opts, warnings)
            })?;
            let jobs: Vec<InnerFetch> = fetched.into_iter().flatten().collect();
            run_tasks(&jobs, opts.threads, |job| {
                let bytes = job.bytes.lock().unwrap_or_else(|e| e.into_inner()).take();
                let data = match bytes {
                    None => None,
                    Some(b) => {
                        let what = format!(
                            "{} (inner chunk {:?})",
                            self.chunk_what(&job.key),
                            job.position()
                        );
                        let ctx = opts.context(warnings, &what);
                        Some(sh.inner.decode(b, &sh.inner_shape, &ctx)?)
                    }
                };
                self.scatter(data.as_deref(), &inner_strides, job.chunk, dst, lossy);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `read_sharded` on a store without latency: all touched shard
    /// indexes first, then each task reads its inner chunk's byte range
    /// itself, decodes and scatters it. No shard is held in memory, and the
    /// stored bytes are copied once.
    #[allow(clippy::too_many_arguments)]
    fn read_sharded_local(
        &self,
        chunks: &[Vec<&DimChunk>],
        sh: &Sharding,
        grid: &[usize],
        dst: &RBufPtr,
        opts: IoOptions,
        warnings: &Warnings,
        lossy: &Lossy,
    ) -> Result<()> {
        let groups = group_by_shard(chunks, grid);
        let indexes = collect_tasks(&groups, opts.threads, |(sidx, _)| {
            let key = self.chunk_key(sidx);
            let what = self.chunk_what(&key);
            let ctx = opts.context(warnings, &what);
            let index = self
                .store
                .get(&key, sh.index_range(grid)?)
                .map_err(|e| e.context(&what))?;
            let entries = match index {
                Some(bytes) => Some(sh.decode_index(bytes, grid, &ctx)?),
                None => None,
            };
            Ok((key, entries))
        })?;
        let mut jobs = Vec::with_capacity(chunks.len());
        for ((_, cs), (key, entries)) in groups.iter().zip(&indexes) {
            for c in cs {
                let entry = entries.as_ref().and_then(|e| e[position_in_shard(c, grid)]);
                jobs.push((*c, key.as_str(), entry));
            }
        }
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        run_tasks(&jobs, opts.threads, |&(c, key, entry)| {
            let data = match entry {
                None => None,
                Some((offset, length)) => {
                    let what = format!(
                        "{} (inner chunk {:?})",
                        self.chunk_what(key),
                        c.iter().map(|d| d.chunk).collect::<Vec<u64>>()
                    );
                    let bytes = self
                        .store
                        .get(key, ByteRange::Range { offset, length })
                        .map_err(|e| e.context(&what))?
                        .ok_or_else(|| {
                            ZarrError::CorruptChunk(format!(
                                "{what}: the shard disappeared while it was read"
                            ))
                        })?;
                    let ctx = opts.context(warnings, &what);
                    Some(sh.inner.decode(bytes, &sh.inner_shape, &ctx)?)
                }
            };
            self.scatter(data.as_deref(), &inner_strides, c, dst, lossy);
            Ok(())
        })
    }

    /// The stored bytes of the inner chunks `cs` of shard `sidx` (None
    /// for those not stored, or when the shard is missing).
    fn fetch_inner_chunks<'p>(
        &self,
        sh: &Sharding,
        grid: &[usize],
        sidx: &[u64],
        cs: &[&'p Vec<&'p DimChunk>],
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let key = self.chunk_key(sidx);
        let what = self.chunk_what(&key);
        let ctx = opts.context(warnings, &what);
        let job = |chunk, bytes| InnerFetch {
            chunk,
            bytes: std::sync::Mutex::new(bytes),
            key: key.clone(),
        };
        let per_shard: usize = grid.iter().product();
        // Most of the shard is needed: one read of it beats many ranges.
        let whole = if cs.len() * 2 > per_shard {
            self.store
                .get(&key, ByteRange::All)
                .map_err(|e| e.context(&what))?
        } else {
            None
        };
        let index_bytes = match &whole {
            Some(data) => Some(sh.index_of(data, grid, &what)?.to_vec()),
            None if cs.len() * 2 > per_shard => None,
            None => self
                .store
                .get(&key, sh.index_range(grid)?)
                .map_err(|e| e.context(&what))?,
        };
        let Some(index_bytes) = index_bytes else {
            return Ok(cs.iter().map(|c| job(*c, None)).collect());
        };
        let entries = sh.decode_index(index_bytes, grid, &ctx)?;
        let mut out = Vec::with_capacity(cs.len());
        let mut ranges = Vec::new();
        for c in cs {
            match (entries[position_in_shard(c, grid)], &whole) {
                (None, _) => out.push(job(*c, None)),
                (Some(e), Some(data)) => {
                    out.push(job(*c, Some(sh.inner_bytes(data, e, &what)?.to_vec())))
                }
                (Some((offset, length)), None) => {
                    ranges.push((*c, (key.clone(), ByteRange::Range { offset, length })))
                }
            }
        }
        let requests: Vec<(String, ByteRange)> = ranges.iter().map(|(_, r)| r.clone()).collect();
        let got = if self.store.prefers_batches() {
            self.store.get_many(&requests)
        } else {
            requests
                .iter()
                .map(|(k, r)| self.store.get(k, *r))
                .collect()
        };
        for ((c, _), g) in ranges.into_iter().zip(got) {
            let bytes = g.map_err(|e| e.context(&what))?.ok_or_else(|| {
                ZarrError::CorruptChunk(format!("{what}: the shard disappeared while it was read"))
            })?;
            out.push(job(c, Some(bytes)));
        }
        Ok(out)
    }

    /// Refuse a write to a read-only store, out of bounds, or with the
    /// wrong number of values; false when there is nothing to write.
    fn check_write(&self, sel: &Selection, n_values: usize) -> Result<bool> {
        let what = self.what();
        if self.store.read_only() {
            return Err(ZarrError::ReadOnly(format!(
                "{what}: the store is read-only"
            )));
        }
        sel.check(&self.meta.shape, &what)?;
        let n = sel.num_elements();
        if n_values != n {
            return Err(ZarrError::Type(format!(
                "{what}: {n_values} values given for a selection of {n} elements"
            )));
        }
        Ok(n > 0)
    }

    /// Write `data`, a column-major R buffer of `sel.shape()`, into `sel`.
    pub fn write(&self, sel: &Selection, data: &RBuf, opts: IoOptions) -> Result<Vec<String>> {
        let what = self.what();
        if !self.check_write(sel, data.len())? {
            return Ok(vec![]);
        }
        check_writable(data, self.meta.data_type, &what)?;
        let src = RBufPtr::from_ref(data, &sel.shape());
        let plan = sel.plan(&self.meta.chunk_shape);
        let chunks = cartesian(&plan);
        let cshape = self.chunk_shape();
        let strides = self.chain.stored_strides(&cshape);
        let dtype = self.meta.data_type;
        let fill = &self.meta.fill_value.bytes;
        let warnings = Warnings::default();
        let straight = self.stores_as_r(src.rtype, &strides);
        let sharding = self.chain.partial_sharding();
        // Shards written whole are encoded inner chunk by inner chunk, all
        // shards' inner chunks in one run of tasks (`write_shards`).
        let (whole, chunks): (Vec<_>, Vec<_>) = match sharding {
            Some(_) => chunks.into_iter().partition(|c| {
                let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
                self.covers_chunk(c, &idx)
            }),
            None => (vec![], chunks),
        };
        if let (Some(sh), false) = (sharding, whole.is_empty()) {
            self.write_shards(sh, &whole, &src, opts.threads)?;
        }
        let task = |c: &Vec<&DimChunk>| -> Result<()> {
            let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
            let key = self.chunk_key(&idx);
            let covered = self.covers_chunk(c, &idx);
            if straight && covered && self.write_chunk_straight(c, &key, &src)? {
                return Ok(());
            }
            let spans: Vec<Vec<Span>> = c
                .iter()
                .map(|d| {
                    d.runs
                        .iter()
                        .map(|r| (r.dst, r.start as usize, r.len))
                        .collect()
                })
                .collect();
            let chunk_bytes = cshape.iter().product::<usize>() * fill.len();
            let buf = if covered && self.inside_array(&idx) {
                // Every element is about to be written: no fill pass first.
                let mut buf: Vec<u8> = Vec::with_capacity(chunk_bytes);
                // SAFETY: spans stay inside the chunk and inside `data`, and
                // cover the whole chunk, so all `chunk_bytes` are written
                // before the length is set.
                unsafe {
                    convert::write_from(dtype, fill, &src, buf.as_mut_ptr(), &strides, &spans);
                    buf.set_len(chunk_bytes);
                }
                buf
            } else {
                let mut buf = if covered {
                    None
                } else {
                    self.load_chunk(&idx, opts, &warnings)?
                }
                .unwrap_or_else(|| fill.repeat(cshape.iter().product()));
                // SAFETY: spans stay inside the chunk and inside `data`; each
                // task owns its chunk buffer.
                unsafe {
                    convert::write_from(dtype, fill, &src, buf.as_mut_ptr(), &strides, &spans)
                };
                buf
            };
            let what = self.chunk_what(&key);
            if buf.chunks_exact(fill.len()).all(|e| e == fill.as_slice()) {
                self.store.erase(&key).map_err(|e| e.context(&what))
            } else {
                let enc = self
                    .chain
                    .encode(buf, &cshape)
                    .map_err(|e| e.context(&what))?;
                self.store.set(&key, &enc).map_err(|e| e.context(&what))
            }
        };
        run_tasks(&chunks, opts.threads, task)?;
        Ok(warnings.take())
    }

    /// Store chunk `c`, which the selection covers whole, straight from
    /// its columns in `src` (one part per column), when `stores_as_r`
    /// holds and no element needs converting: an NA would have to become
    /// the fill value. A chunk of nothing but the fill value is erased, as
    /// on the usual path. Returns false when the usual path must do it.
    fn write_chunk_straight(&self, c: &[&DimChunk], key: &str, src: &RBufPtr) -> Result<bool> {
        let shape = self.chunk_shape();
        let Some(columns) = chunk_columns(c, &shape, &src.strides) else {
            return Ok(false);
        };
        let size = self.meta.data_type.size();
        let fill = &self.meta.fill_value.bytes;
        // SAFETY: the columns lie inside `src` (the selection was checked
        // against the data's length), which R keeps alive and nobody writes
        // during the call.
        let parts: Vec<&[u8]> = columns
            .iter()
            .map(|&(o, n)| unsafe { std::slice::from_raw_parts(src.ptr.add(o * size), n * size) })
            .collect();
        let mut all_fill = true;
        for (k, p) in parts.iter().enumerate() {
            if let Some(next) = parts.get(k + 1) {
                words::prefetch(next.as_ptr(), next.len());
            }
            let (has_na, fill_only) = convert::scan_for_write(self.meta.data_type, fill, p);
            if has_na {
                return Ok(false);
            }
            all_fill &= fill_only;
        }
        let what = self.chunk_what(key);
        if all_fill {
            self.store.erase(key)
        } else {
            self.store.set_parts(key, &parts)
        }
        .map_err(|e| e.context(&what))?;
        Ok(true)
    }

    /// Shards `shards`, each covered whole by the write, encoded straight
    /// from the R buffer `src`: every inner chunk of every shard is a task
    /// of one run, and the task that encodes a shard's last inner chunk
    /// stores the shard (or erases it, when it holds only the fill value).
    /// With a task per shard, the last shards ran one per thread: 16
    /// shards on 2 threads left a thread idle for half a shard, and 3
    /// shards left one idle for a whole shard.
    fn write_shards(
        &self,
        sh: &Sharding,
        shards: &[Vec<&DimChunk>],
        src: &RBufPtr,
        threads: usize,
    ) -> Result<()> {
        let (grid, positions) = sh.inner_positions(&self.chunk_shape())?;
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        let buffers = Buffers::default();
        // A shard's key, its encoded inner chunks as they come, and how
        // many are still to come.
        struct Pending {
            key: String,
            slots: Vec<Mutex<Option<Vec<u8>>>>,
            left: AtomicUsize,
        }
        let pending: Vec<Pending> = shards
            .iter()
            .map(|c| Pending {
                key: self.chunk_key(&c.iter().map(|d| d.chunk).collect::<Vec<u64>>()),
                slots: positions.iter().map(|_| Mutex::new(None)).collect(),
                left: AtomicUsize::new(positions.len()),
            })
            .collect();
        let jobs: Vec<(usize, usize)> = (0..shards.len())
            .flat_map(|s| (0..positions.len()).map(move |p| (s, p)))
            .collect();
        run_tasks(&jobs, threads, |&(s, p)| {
            let shard = &pending[s];
            let in_shard = |e: ZarrError| e.context(&self.chunk_what(&shard.key));
            let enc = sh
                .encode_inner(&positions[p], &buffers, |at, buf| {
                    self.gather_inner(sh, &inner_strides, &shards[s], src, at, buf)
                })
                .map_err(in_shard)?;
            *shard.slots[p].lock().unwrap_or_else(|e| e.into_inner()) = enc;
            if shard.left.fetch_sub(1, Ordering::AcqRel) != 1 {
                return Ok(());
            }
            let encoded: Vec<Option<Vec<u8>>> = shard
                .slots
                .iter()
                .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).take())
                .collect();
            match sh.assemble_stored(encoded, &grid).map_err(in_shard)? {
                Some(parts) => {
                    let stored = self.store.set_parts(&shard.key, &parts.parts());
                    buffers.give_all(parts.into_buffers());
                    stored
                }
                None => self.store.erase(&shard.key),
            }
            .map_err(in_shard)
        })
    }

    /// Write the inner chunk at grid position `idx` of shard `c` (which
    /// the write covers whole) from `src` into `buf`, laid out as the inner
    /// chain stores it (`inner_strides`).
    fn gather_inner(
        &self,
        sh: &Sharding,
        inner_strides: &[usize],
        c: &[&DimChunk],
        src: &RBufPtr,
        idx: &[usize],
        buf: &mut [u8],
    ) {
        let inner_n: usize = sh.inner_shape.iter().product();
        let fill = &self.meta.fill_value.bytes;
        // This inner chunk's part of each dimension's runs, with chunk
        // positions made relative to the inner chunk.
        let spans: Vec<Vec<Span>> = c
            .iter()
            .zip(idx.iter().zip(&sh.inner_shape))
            .map(|(d, (&p, &n))| {
                let (lo, hi) = (p * n, (p + 1) * n);
                d.runs
                    .iter()
                    .filter_map(|r| {
                        let start = r.start as usize;
                        let (s, e) = (start.max(lo), (start + r.len).min(hi));
                        (s < e).then(|| (r.dst + (s - start), s - lo, e - s))
                    })
                    .collect()
            })
            .collect();
        let covered: usize = spans
            .iter()
            .map(|runs| runs.iter().map(|r| r.2).sum::<usize>())
            .product();
        if covered < inner_n {
            // Past the array's edge: those elements hold the fill value.
            for e in buf.chunks_exact_mut(fill.len()) {
                e.copy_from_slice(fill);
            }
        }
        // SAFETY: spans stay inside the inner chunk and inside `src`.
        unsafe {
            convert::write_from(
                self.meta.data_type,
                fill,
                src,
                buf.as_mut_ptr(),
                inner_strides,
                &spans,
            )
        };
    }

    fn fill_string(&self) -> Result<String> {
        String::from_utf8(self.meta.fill_value.bytes.clone()).map_err(|_| {
            ZarrError::Metadata(format!("{}: the fill value is not UTF-8", self.what()))
        })
    }

    /// Read `sel` of a string array. Decoding runs in parallel; the result
    /// refers into the decoded chunks, and the bindings make the R strings.
    pub fn read_strings(
        &self,
        sel: &Selection,
        opts: IoOptions,
    ) -> Result<(StringRead, Vec<String>)> {
        let what = self.what();
        sel.check(&self.meta.shape, &what)?;
        let n = sel.num_elements();
        let mut read = StringRead {
            chunks: Vec::new(),
            which: vec![0; n],
            elem: vec![0; n],
            fill: self.fill_string()?,
            // Fixed-width strings have no NA: "" (all NULs) is just "".
            marks_na: self.meta.fill_marks_na && self.chain.fixed_string().is_none(),
        };
        if n == 0 {
            return Ok((read, vec![]));
        }
        let plan = sel.plan(&self.meta.chunk_shape);
        let chunks: Vec<(usize, Vec<&DimChunk>)> =
            cartesian(&plan).into_iter().enumerate().collect();
        let cshape = self.chunk_shape();
        let strides = self.chain.stored_strides(&cshape);
        let out_strides = convert::column_major_strides(&sel.shape());
        let iota: Vec<u32> = (0..cshape.iter().product::<usize>() as u32).collect();
        let zero = vec![0usize; cshape.len()];
        let (which, elem) = (
            SendPtr(read.which.as_mut_ptr()),
            SendPtr(read.elem.as_mut_ptr()),
        );
        let warnings = Warnings::default();
        read.chunks = collect_tasks(&chunks, opts.threads, |(k, c)| {
            let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
            let key = self.chunk_key(&idx);
            let what = self.chunk_what(&key);
            let decoded = match self
                .store
                .get(&key, ByteRange::All)
                .map_err(|e| e.context(&what))?
            {
                None => None,
                Some(raw) => {
                    let ctx = opts.context(&warnings, &what);
                    let strings = self.chain.decode_strings(raw, &cshape, &ctx)?;
                    // R strings cannot hold NUL, which UTF-8 allows.
                    if let Some(i) = strings.iter().position(|s| s.contains('\0')) {
                        return Err(ZarrError::Unsupported(format!(
                            "{what}: string {i} contains a NUL character, which R strings cannot hold"
                        )));
                    }
                    Some(strings)
                }
            };
            let spans: Vec<Vec<Span>> = c
                .iter()
                .map(|d| {
                    d.runs
                        .iter()
                        .map(|r| (r.start as usize, r.dst, r.len))
                        .collect()
                })
                .collect();
            let k = *k as u32;
            // SAFETY: as in `scatter`: disjoint output elements per chunk.
            unsafe {
                convert::strided_copy(
                    iota.as_ptr(),
                    &strides,
                    elem.get(),
                    &out_strides,
                    &spans,
                    &|v| v,
                );
                convert::strided_copy(
                    &k as *const u32,
                    &zero,
                    which.get(),
                    &out_strides,
                    &spans,
                    &|v| v,
                );
            }
            Ok(decoded)
        })?;
        Ok((read, warnings.take()))
    }

    /// Write strings (None = NA, written as the fill value), laid out
    /// column-major in the selection's shape.
    pub fn write_strings(
        &self,
        sel: &Selection,
        data: &[Option<&str>],
        opts: IoOptions,
    ) -> Result<Vec<String>> {
        if !self.check_write(sel, data.len())? {
            return Ok(vec![]);
        }
        if let Some(f) = self.chain.fixed_string() {
            // Refused before anything is written, and never cut short.
            let what = self.what();
            for (i, v) in data.iter().enumerate() {
                match v {
                    None => {
                        return Err(ZarrError::Type(format!(
                            "{what}: value {} is NA, which a fixed-width string array (dtype {}) cannot hold",
                            i + 1,
                            f.numpy_dtype()
                        )))
                    }
                    Some(s) => {
                        if let Some(why) = f.refusal(s) {
                            return Err(ZarrError::Type(format!("{what}: value {}: {why}", i + 1)));
                        }
                    }
                }
            }
        }
        let fill = self.fill_string()?;
        let plan = sel.plan(&self.meta.chunk_shape);
        let chunks = cartesian(&plan);
        let cshape = self.chunk_shape();
        let cn: usize = cshape.iter().product();
        let strides = self.chain.stored_strides(&cshape);
        let data_strides = convert::column_major_strides(&sel.shape());
        let iota: Vec<usize> = (0..data.len()).collect();
        let warnings = Warnings::default();
        run_tasks(&chunks, opts.threads, |c| {
            let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
            let key = self.chunk_key(&idx);
            let what = self.chunk_what(&key);
            let mut buf = match self.covers_chunk(c, &idx) {
                true => None,
                false => match self
                    .store
                    .get(&key, ByteRange::All)
                    .map_err(|e| e.context(&what))?
                {
                    None => None,
                    Some(raw) => {
                        let ctx = opts.context(&warnings, &what);
                        Some(self.chain.decode_strings(raw, &cshape, &ctx)?)
                    }
                },
            }
            .unwrap_or_else(|| vec![fill.clone(); cn]);
            // Which data element lands on each chunk element (MAX: none).
            let mut source = vec![usize::MAX; cn];
            let spans: Vec<Vec<Span>> = c
                .iter()
                .map(|d| {
                    d.runs
                        .iter()
                        .map(|r| (r.dst, r.start as usize, r.len))
                        .collect()
                })
                .collect();
            // SAFETY: spans stay inside the data and the chunk.
            unsafe {
                convert::strided_copy(
                    iota.as_ptr(),
                    &data_strides,
                    source.as_mut_ptr(),
                    &strides,
                    &spans,
                    &|v| v,
                )
            };
            for (b, &i) in buf.iter_mut().zip(&source) {
                if i != usize::MAX {
                    *b = data[i].unwrap_or(&fill).to_owned();
                }
            }
            if buf.iter().all(|s| *s == fill) {
                self.store.erase(&key).map_err(|e| e.context(&what))
            } else {
                let enc = self
                    .chain
                    .encode_strings(&buf, &cshape)
                    .map_err(|e| e.context(&what))?;
                self.store.set(&key, &enc).map_err(|e| e.context(&what))
            }
        })?;
        Ok(warnings.take())
    }

    /// Whether the selection covers every element of the chunk that lies
    /// inside the array (so the old chunk need not be read).
    /// Whether chunk `idx` lies wholly inside the array (not an edge chunk
    /// that reaches past its shape).
    fn inside_array(&self, idx: &[u64]) -> bool {
        idx.iter()
            .zip(self.meta.shape.iter().zip(&self.meta.chunk_shape))
            .all(|(&i, (&n, &cs))| (i + 1) * cs <= n)
    }

    fn covers_chunk(&self, c: &[&DimChunk], idx: &[u64]) -> bool {
        c.iter()
            .zip(idx)
            .zip(self.meta.shape.iter().zip(&self.meta.chunk_shape))
            .all(|((dc, &i), (&n, &cs))| {
                let extent = (n - i * cs).min(cs) as usize;
                let mut seen = vec![false; extent];
                for r in &dc.runs {
                    seen[r.start as usize..r.start as usize + r.len].fill(true);
                }
                seen.iter().all(|&b| b)
            })
    }
}

/// Every combination of one chunk per dimension.
///
/// The first dimension varies fastest, as R's memory does: the thread pool
/// splits this list into contiguous parts, so threads then write distant
/// parts of the R result instead of contending for the same pages.
fn cartesian(plan: &[Vec<DimChunk>]) -> Vec<Vec<&DimChunk>> {
    let total: usize = plan.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(total);
    for mut i in 0..total {
        let mut combo = Vec::with_capacity(plan.len());
        for dim in plan {
            combo.push(&dim[i % dim.len()]);
            i /= dim.len();
        }
        out.push(combo);
    }
    out
}

/// Strings read from an array: output element `i` is element `elem[i]`
/// of decoded chunk `which[i]` (the fill value where that chunk is missing).
pub struct StringRead {
    chunks: Vec<Option<Vec<String>>>,
    which: Vec<u32>,
    elem: Vec<u32>,
    fill: String,
    marks_na: bool,
}

impl StringRead {
    pub fn len(&self) -> usize {
        self.which.len()
    }

    pub fn is_empty(&self) -> bool {
        self.which.is_empty()
    }

    /// Element `i`, or None where it is NA (equal to the fill value).
    pub fn get(&self, i: usize) -> Option<&str> {
        let s = match &self.chunks[self.which[i] as usize] {
            Some(c) => c[self.elem[i] as usize].as_str(),
            None => self.fill.as_str(),
        };
        if self.marks_na && s == self.fill {
            None
        } else {
            Some(s)
        }
    }
}

/// A pointer into a buffer that worker threads fill at disjoint places.
struct SendPtr<T>(*mut T);
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    // A method, so closures capture the wrapper and not the bare pointer.
    fn get(&self) -> *mut T {
        self.0
    }
}

/// An inner chunk of a shard as fetched: the part of the selection it
/// holds, its stored bytes (None when not stored) and its shard's key.
struct InnerFetch<'p> {
    chunk: &'p Vec<&'p DimChunk>,
    // Taken (not cloned) by the task that decodes it.
    bytes: std::sync::Mutex<Option<Vec<u8>>>,
    key: String,
}

impl InnerFetch<'_> {
    fn position(&self) -> Vec<u64> {
        self.chunk.iter().map(|d| d.chunk).collect()
    }
}

/// The index entry of inner chunk `c` in its shard (C order of `grid`).
fn position_in_shard(c: &[&DimChunk], grid: &[usize]) -> usize {
    c.iter().zip(grid).fold(0usize, |acc, (d, &g)| {
        acc * g + (d.chunk % g as u64) as usize
    })
}

/// Inner chunks grouped by the shard holding them, in first-seen order.
fn group_by_shard<'p>(
    chunks: &'p [Vec<&'p DimChunk>],
    grid: &[usize],
) -> Vec<(Vec<u64>, Vec<&'p Vec<&'p DimChunk>>)> {
    let mut groups: Vec<(Vec<u64>, Vec<&Vec<&DimChunk>>)> = Vec::new();
    let mut slot_of: std::collections::HashMap<Vec<u64>, usize> = std::collections::HashMap::new();
    for c in chunks {
        let sidx: Vec<u64> = c
            .iter()
            .zip(grid)
            .map(|(d, &g)| d.chunk / g as u64)
            .collect();
        let slot = *slot_of.entry(sidx.clone()).or_insert_with(|| {
            groups.push((sidx, Vec::new()));
            groups.len() - 1
        });
        groups[slot].1.push(c);
    }
    groups
}

/// Chunks (or shards) handled per round on stores that fetch in batches:
/// enough requests in flight to hide latency, few enough to bound memory.
const BATCH: usize = 64;

/// Chunks read straight into R memory (`read_chunk_straight`) need
/// columns of at least this many bytes, and at most this many columns:
/// past those, one read per column costs more than the copy it saves.
const MIN_STRAIGHT_COLUMN_BYTES: usize = 256;
const MAX_STRAIGHT_COLUMNS: usize = 1 << 16;

/// The columns of chunk `c` (of `shape`, stored column-major) in a
/// column-major R buffer with `strides`, in stored order, as (element
/// offset, elements); neighbours in the buffer merge into one. None unless
/// the selection covers the chunk whole (which also rules out edge chunks,
/// whose stored columns run past the array) and the columns are few.
fn chunk_columns(
    c: &[&DimChunk],
    shape: &[usize],
    strides: &[usize],
) -> Option<Vec<(usize, usize)>> {
    let whole = c
        .iter()
        .zip(shape)
        .all(|(d, &n)| d.runs.len() == 1 && d.runs[0].start == 0 && d.runs[0].len == n);
    if !whole || shape.is_empty() {
        return None;
    }
    let outer = &shape[1..];
    let count: usize = outer.iter().product();
    if count > MAX_STRAIGHT_COLUMNS {
        return None;
    }
    let mut columns: Vec<(usize, usize)> = Vec::new();
    let mut pos = vec![0usize; outer.len()];
    for _ in 0..count {
        let mut off = c[0].runs[0].dst * strides[0];
        for (k, &p) in pos.iter().enumerate() {
            off += (c[k + 1].runs[0].dst + p) * strides[k + 1];
        }
        match columns.last_mut() {
            Some((o, n)) if *o + *n == off => *n += shape[0],
            _ => columns.push((off, shape[0])),
        }
        for (k, p) in pos.iter_mut().enumerate() {
            *p += 1;
            if *p < outer[k] {
                break;
            }
            *p = 0;
        }
    }
    Some(columns)
}

#[cfg(test)]
mod tests;
