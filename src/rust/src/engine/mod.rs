//! The read/write engine: plan the chunks a selection touches, then fetch,
//! decode and scatter them in parallel straight into a buffer R allocated
//! (or gather, encode and store them for a write).
//!
//! This file opens arrays, names their keys and holds what every path
//! shares; each path has a file of its own:
//!
//! - `plan`: which chunks a selection touches, the copy spans of each, how
//!   inner chunks group into shards, and which fast path applies;
//! - `read`: reads of unsharded arrays (whole chunks, straight into R
//!   memory, or byte ranges of uncompressed chunks);
//! - `write`: writes of unsharded arrays, and of partly covered shards;
//! - `shard`: reads of sharded arrays inner chunk by inner chunk, and
//!   writes of shards the selection covers whole;
//! - `strings`: reads and writes of string arrays;
//! - `resize`, `promote`: shape changes, with the stored chunks renamed,
//!   erased or rewritten to follow.

mod fetch;
mod plan;
mod promote;
mod read;
mod resize;
mod shard;
mod shard_stream;
mod strings;
mod timing;
mod write;

pub use fetch::{fetches_taken_over, StartedFetch};
pub use resize::{reshaped, ResizeRequest, Resized};
pub use strings::StringRead;

use crate::cf::Cf;
use crate::codec::{CodecChain, CodecContext, Warnings};
use crate::convert::{Materialize, NaRule};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::grid::ChunkGrid;
use crate::metadata::{self, ArrayMetadata, NodeMetadata};
use crate::store::{writable, ByteRange, Store, StoreKey, Writes};
use std::sync::Arc;

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
    /// Where each chunk starts and how long it is (`meta.grid()`).
    pub grid: ChunkGrid,
    /// CF decoding of reads and encoding of writes (`cf/`), when it was
    /// asked for and the array is a CF variable; its missing values then
    /// replace the fill value's.
    pub cf: Option<Cf>,
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
        // Every later size of a chunk (elements, bytes) is computed without
        // checks from here on: one that overflows is refused now.
        let chunk_bytes = meta
            .chunk_shape
            .iter()
            .map(|&c| usize::try_from(c).ok())
            .chain([Some(meta.data_type.size().max(1))])
            .try_fold(1usize, |acc, d| d.and_then(|d| acc.checked_mul(d)))
            .filter(|&n| n <= isize::MAX as usize);
        if chunk_bytes.is_none() {
            return Err(ZarrError::Metadata(format!(
                "{what}: a chunk of shape {:?} has more bytes than memory can address",
                meta.chunk_shape
            )));
        }
        let grid = meta.grid();
        if let Some(sh) = chain.sharding() {
            // Every shard shape of the grid must hold whole inner chunks:
            // each dimension's longest, and each of its other lengths in
            // turn.
            let longest: Vec<usize> = meta.chunk_shape.iter().map(|&c| c as usize).collect();
            for (d, axis) in grid.axes.iter().enumerate() {
                for len in axis.lengths() {
                    let mut shard = longest.clone();
                    shard[d] = len as usize;
                    sh.grid(&chain.encoded_shape(&shard))
                        .map_err(|e| e.context(&what))?;
                }
            }
        }
        if !grid.is_regular() && meta.data_type == DataType::String {
            return Err(ZarrError::Unsupported(format!(
                "{what}: string arrays with a rectilinear chunk grid are not supported"
            )));
        }
        Ok(Array {
            store,
            path,
            meta,
            chain,
            grid,
            cf: None,
        })
    }

    /// Decode reads the CF way (see `cf/`) from now on, if the array is
    /// a CF variable.
    pub fn with_cf(mut self) -> Result<Array> {
        self.cf = Cf::of(&self.meta, &self.path).map_err(|e| e.context(&self.what()))?;
        Ok(self)
    }

    /// The CF decoding that changes elements, if any.
    pub fn active_cf(&self) -> Option<&Cf> {
        self.cf
            .as_ref()
            .filter(|c| c.active() && !c.is_zarr_rule(&self.meta))
    }

    /// The CF encoding of writes: that of every CF variable of a numeric
    /// type whose decoding is not the Zarr rule, active or not (one with
    /// no missing value refuses NA).
    pub fn write_cf(&self) -> Option<&Cf> {
        let numeric = !matches!(
            self.meta.data_type,
            DataType::Bool | DataType::Complex64 | DataType::Complex128 | DataType::String
        );
        self.cf
            .as_ref()
            .filter(|c| numeric && !c.is_zarr_rule(&self.meta))
    }

    /// Whether elements equal to the fill value read as NA: not in a CF
    /// variable, where the CF attributes say what is missing, unless they
    /// say the same.
    pub fn fill_marks_na(&self) -> bool {
        self.meta.fill_marks_na && self.cf.as_ref().is_none_or(|c| c.is_zarr_rule(&self.meta))
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
            let key = StoreKey::from_checked(if arr.path.is_empty() {
                name.to_string()
            } else {
                format!("{}/{name}", arr.path)
            });
            writable(&*arr.store, "write", &key)?.set(&key, &text)?;
        }
        Ok(arr)
    }

    pub fn what(&self) -> String {
        format!("array '/{}'", self.path)
    }

    /// The store's writes; a read-only store is refused naming the array.
    pub(super) fn writes(&self) -> Result<&dyn Writes> {
        self.store
            .as_writable()
            .ok_or_else(|| ZarrError::ReadOnly(format!("{}: the store is read-only", self.what())))
    }

    /// The store key of chunk `idx`: the array's checked path and the
    /// encoding's digits and separators, valid by construction.
    pub fn chunk_key(&self, idx: &[u64]) -> StoreKey {
        // Room for the path, "/c" and up to 20 digits and a separator per
        // dimension: one allocation per chunk.
        let mut key = String::with_capacity(self.path.len() + 2 + 21 * idx.len());
        if !self.path.is_empty() {
            key.push_str(&self.path);
            key.push('/');
        }
        self.meta.chunk_key_encoding.push_key(idx, &mut key);
        StoreKey::from_checked(key)
    }

    fn chunk_shape(&self) -> Vec<usize> {
        self.meta.chunk_shape.iter().map(|&c| c as usize).collect()
    }

    /// The shape of chunk `idx` and the strides of its decoded elements:
    /// one for all chunks of a regular grid (`regular`, made once per
    /// read or write), each its own in a rectilinear one.
    fn chunk_layout<'a>(
        &self,
        idx: &[u64],
        regular: &'a (Vec<usize>, Vec<usize>),
    ) -> std::borrow::Cow<'a, (Vec<usize>, Vec<usize>)> {
        if self.grid.is_regular() {
            return std::borrow::Cow::Borrowed(regular);
        }
        let shape = self.grid.chunk_shape(idx);
        let strides = self.chain.stored_strides(&shape);
        std::borrow::Cow::Owned((shape, strides))
    }

    /// The plan of `sel` over this array's chunks.
    fn plan(&self, sel: &crate::selection::Selection) -> Vec<Vec<crate::selection::DimChunk>> {
        sel.plan_grid(&self.grid)
    }

    /// The sharding codec the engine reads inner chunk by inner chunk
    /// (shards of a rectilinear grid too, each with its own index).
    fn partial_sharding(&self) -> Option<&crate::codec::sharding::Sharding> {
        self.chain.partial_sharding()
    }

    /// The sharding codec the engine writes inner chunk by inner chunk:
    /// not in a rectilinear grid, whose shards are written whole.
    fn partial_sharding_writes(&self) -> Option<&crate::codec::sharding::Sharding> {
        self.partial_sharding().filter(|_| self.grid.is_regular())
    }

    /// The element rules of this array's reads and writes.
    fn materialize(&self) -> Materialize<'_> {
        Materialize {
            dtype: self.meta.data_type,
            fill: &self.meta.fill_value.bytes,
            na: NaRule::of(self.fill_marks_na()),
            cf: self
                .active_cf()
                .map(|c| c as &dyn crate::convert::ElementTransform),
        }
    }

    /// The element rules of this array's writes (CF-encoding).
    fn write_materialize(&self) -> Materialize<'_> {
        Materialize {
            cf: self
                .write_cf()
                .map(|c| c as &dyn crate::convert::ElementTransform),
            ..self.materialize()
        }
    }

    fn chunk_what(&self, key: &str) -> String {
        format!("{} chunk '{key}'", self.what())
    }
    /// Decode one chunk's stored bytes; `raw` None (not stored) stays None.
    fn decode_chunk(
        &self,
        key: &str,
        shape: &[usize],
        raw: Option<Vec<u8>>,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Option<Vec<u8>>> {
        let Some(raw) = raw else { return Ok(None) };
        let what = self.chunk_what(key);
        let ctx = opts.context(warnings, &what);
        self.chain.decode(raw, shape, &ctx).map(Some)
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
        self.decode_chunk(&key, &self.grid.chunk_shape(idx), raw, opts, warnings)
    }
}

#[cfg(test)]
mod tests;
