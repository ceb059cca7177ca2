//! The read/write engine: plan the chunks a selection touches, then fetch,
//! decode and scatter them in parallel straight into a buffer R allocated
//! (or gather, encode and store them for a write).

use crate::codec::{CodecChain, CodecContext, Warnings};
use crate::convert::{self, check_writable, Lossy, RBuf, RBufMut, RBufPtr, Span};
use crate::error::{Result, ZarrError};
use crate::metadata::{v3, ArrayMetadata, NodeMetadata};
use crate::pool;
use crate::selection::{DimChunk, Selection};
use crate::store::{ByteRange, Store};
use rayon::prelude::*;
use std::sync::Arc;

/// How a read or write runs.
#[derive(Debug, Clone, Copy)]
pub struct IoOptions {
    pub threads: usize,
    /// A crc32c mismatch is an error instead of a warning.
    pub strict_checksums: bool,
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
        let chain = CodecChain::from_json(&meta.codecs, meta.data_type, meta.shape.len())
            .map_err(|e| e.context(&what))?;
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
        let key = metadata_key(&path);
        let bytes = store
            .get(&key, ByteRange::All)?
            .ok_or_else(|| ZarrError::NotFound(format!("{what}: no metadata document '{key}'")))?;
        match v3::parse(&bytes).map_err(|e| e.context(&format!("{what} ('{key}')")))? {
            NodeMetadata::Array(meta) => Array::from_meta(store, path, meta),
            NodeMetadata::Group(_) => Err(ZarrError::Metadata(format!(
                "'/{path}' is a group, not an array"
            ))),
        }
    }

    /// Validate `meta`, write its zarr.json, and open it.
    pub fn create(store: Arc<dyn Store>, path: &str, meta: ArrayMetadata) -> Result<Array> {
        let path = normalize_path(path)?;
        let arr = Array::from_meta(store, path, meta)?;
        let doc = v3::to_json(&NodeMetadata::Array(arr.meta.clone()));
        let text = serde_json::to_vec_pretty(&doc).map_err(ZarrError::from)?;
        arr.store.set(&metadata_key(&arr.path), &text)?;
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

    fn chunk_bytes(&self) -> usize {
        self.chunk_shape().iter().product::<usize>() * self.meta.data_type.size()
    }

    /// Fetch and decode one chunk; None when it is not stored.
    fn load_chunk(
        &self,
        idx: &[u64],
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Option<Vec<u8>>> {
        let key = self.chunk_key(idx);
        let what = format!("{} chunk '{key}'", self.what());
        let raw = match self
            .store
            .get(&key, ByteRange::All)
            .map_err(|e| e.context(&what))?
        {
            Some(r) => r,
            None => return Ok(None),
        };
        let ctx = CodecContext {
            strict_checksums: opts.strict_checksums,
            warnings,
            what: &what,
        };
        self.chain.decode(raw, self.chunk_bytes(), &ctx).map(Some)
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
        let plan = sel.plan(&self.meta.chunk_shape);
        let chunks = cartesian(&plan);
        let strides = self.chain.stored_strides(&self.chunk_shape());
        let zero_strides = vec![0usize; strides.len()];
        let fill = &self.meta.fill_value.bytes;
        let dtype = self.meta.data_type;
        let warnings = Warnings::default();
        let lossy = Lossy::default();
        let task = |c: &Vec<&DimChunk>| -> Result<()> {
            let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
            let spans: Vec<Vec<Span>> = c
                .iter()
                .map(|d| {
                    d.runs
                        .iter()
                        .map(|r| (r.start as usize, r.dst, r.len))
                        .collect()
                })
                .collect();
            match self.load_chunk(&idx, opts, &warnings)? {
                // SAFETY: spans stay inside the chunk (plan splits at chunk
                // borders) and inside `out` (checked selection); chunks map
                // to disjoint output elements.
                Some(data) => unsafe {
                    convert::read_into(dtype, fill, data.as_ptr(), &strides, &dst, &spans, &lossy)
                },
                None => unsafe {
                    convert::read_into(
                        dtype,
                        fill,
                        fill.as_ptr(),
                        &zero_strides,
                        &dst,
                        &spans,
                        &lossy,
                    )
                },
            }
            Ok(())
        };
        run_tasks(&chunks, opts.threads, task)?;
        let mut w = warnings.take();
        w.extend(lossy.warnings(&what));
        Ok(w)
    }

    /// Write `data`, a column-major R buffer of `sel.shape()`, into `sel`.
    pub fn write(&self, sel: &Selection, data: &RBuf, opts: IoOptions) -> Result<Vec<String>> {
        let what = self.what();
        if self.store.read_only() {
            return Err(ZarrError::ReadOnly(format!(
                "{what}: the store is read-only"
            )));
        }
        sel.check(&self.meta.shape, &what)?;
        let n = sel.num_elements();
        if data.len() != n {
            return Err(ZarrError::Type(format!(
                "{what}: {} values given for a selection of {n} elements",
                data.len()
            )));
        }
        if n == 0 {
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
        let task = |c: &Vec<&DimChunk>| -> Result<()> {
            let idx: Vec<u64> = c.iter().map(|d| d.chunk).collect();
            let key = self.chunk_key(&idx);
            let mut buf = if self.covers_chunk(c, &idx) {
                None
            } else {
                self.load_chunk(&idx, opts, &warnings)?
            }
            .unwrap_or_else(|| fill.repeat(cshape.iter().product()));
            let spans: Vec<Vec<Span>> = c
                .iter()
                .map(|d| {
                    d.runs
                        .iter()
                        .map(|r| (r.dst, r.start as usize, r.len))
                        .collect()
                })
                .collect();
            // SAFETY: spans stay inside the chunk and inside `data`; each
            // task owns its chunk buffer.
            unsafe { convert::write_from(dtype, fill, &src, buf.as_mut_ptr(), &strides, &spans) };
            let what = format!("{what} chunk '{key}'");
            if buf.chunks_exact(fill.len()).all(|e| e == fill.as_slice()) {
                self.store.erase(&key).map_err(|e| e.context(&what))
            } else {
                let enc = self.chain.encode(buf).map_err(|e| e.context(&what))?;
                self.store.set(&key, &enc).map_err(|e| e.context(&what))
            }
        };
        run_tasks(&chunks, opts.threads, task)?;
        Ok(warnings.take())
    }

    /// Whether the selection covers every element of the chunk that lies
    /// inside the array (so the old chunk need not be read).
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
fn cartesian(plan: &[Vec<DimChunk>]) -> Vec<Vec<&DimChunk>> {
    let mut out: Vec<Vec<&DimChunk>> = vec![vec![]];
    for dim in plan {
        let mut next = Vec::with_capacity(out.len() * dim.len());
        for prefix in &out {
            for dc in dim {
                let mut v = prefix.clone();
                v.push(dc);
                next.push(v);
            }
        }
        out = next;
    }
    out
}

fn run_tasks<T: Sync>(
    items: &[T],
    threads: usize,
    task: impl Fn(&T) -> Result<()> + Sync + Send,
) -> Result<()> {
    if threads <= 1 || items.len() <= 1 {
        return items.iter().try_for_each(task);
    }
    pool::pool(threads).install(|| items.par_iter().try_for_each(task))
}

#[cfg(test)]
mod tests;
