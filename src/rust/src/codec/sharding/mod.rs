//! `sharding_indexed` codec (v3-codecs-sharding-indexed.rst): array -> bytes.
//! Configuration: `chunk_shape` (the inner chunk shape, dividing the shard
//! shape), `codecs` (the inner chunks' chain), `index_codecs` (the chain of
//! the index, a uint64 array of shape [chunks per shard..., 2] holding
//! offset and nbytes of each inner chunk, 2^64-1 twice for a missing one)
//! and `index_location` ("start" or "end", default "end").
//!
//! The engine reads a region of a shard one inner chunk at a time (see
//! `engine.rs`); decode_shard and encode_shard handle whole shards, for
//! writes and for shards nested in shards.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::Mode;
use super::{CodecChain, CodecContext};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::layout::{copy_elements, Span};
use crate::pool::{self, collect_tasks, run_tasks};
use crate::store::ByteRange;
use serde_json::{json, Map, Value};

mod parts;
mod strings;
#[cfg(test)]
mod tests;

pub use parts::{Buffers, ShardParts};

pub const NAME: &str = "sharding_indexed";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToBytes,
    params: &[
        Param::required("chunk_shape", Kind::Other("the inner chunks' shape")),
        Param::required("codecs", Kind::Other("a codec list")),
        Param::required("index_codecs", Kind::Other("a codec list")),
        Param::optional("index_location", Kind::Choice(&["start", "end"]), Lit::Null),
    ],
    defaults: None,
    build: None,
};

/// An index entry of an inner chunk that is not stored.
pub const MISSING: u64 = u64::MAX;

#[derive(Debug)]
pub struct Sharding {
    pub inner_shape: Vec<usize>,
    pub inner: CodecChain,
    index: CodecChain,
    pub index_at_end: bool,
}

/// Where an inner chunk's bytes are in its shard; None when not stored.
pub type IndexEntry = Option<(u64, u64)>;
/// The (offset, nbytes) of an inner chunk that is stored.
type StoredEntry = (u64, u64);

fn positive_ints(v: Option<&Value>, what: &str) -> Result<Vec<usize>> {
    let bad = || {
        ZarrError::Metadata(format!(
            "codec 'sharding_indexed': {what} must be an array of positive integers"
        ))
    };
    let a = v.and_then(Value::as_array).ok_or_else(bad)?;
    a.iter()
        .map(|x| {
            x.as_u64()
                .filter(|&n| n > 0)
                .map(|n| n as usize)
                .ok_or_else(bad)
        })
        .collect()
}

fn codec_list<'a>(config: &'a Map<String, Value>, member: &str) -> Result<&'a [Value]> {
    config
        .get(member)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| {
            ZarrError::Metadata(format!(
                "codec 'sharding_indexed': '{member}' must be a list of codecs"
            ))
        })
}

/// Visit every multi-index of `grid` in C order.
fn for_each_index(grid: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let n: usize = grid.iter().product();
    let mut idx = vec![0usize; grid.len()];
    for i in 0..n {
        f(i, &idx);
        for d in (0..grid.len()).rev() {
            idx[d] += 1;
            if idx[d] < grid[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The spans of a copy of every element of a block of `shape`.
fn whole(shape: &[usize]) -> Vec<Vec<Span>> {
    shape
        .iter()
        .map(|&len| {
            vec![Span {
                src: 0,
                dst: 0,
                len,
            }]
        })
        .collect()
}

fn c_strides(shape: &[usize]) -> Vec<usize> {
    super::transpose::stored_strides(shape, None)
}

/// A pointer that worker threads may share, each writing its own part.
struct SharedMut(*mut u8);
unsafe impl Send for SharedMut {}
unsafe impl Sync for SharedMut {}

impl SharedMut {
    // A method, so closures capture the wrapper and not the bare pointer.
    fn get(&self) -> *mut u8 {
        self.0
    }
}

impl Sharding {
    pub fn from_config(
        config: &Map<String, Value>,
        dtype: DataType,
        fill: &[u8],
        ndim: usize,
    ) -> Result<Sharding> {
        let inner_shape = positive_ints(config.get("chunk_shape"), "chunk_shape")?;
        if inner_shape.len() != ndim {
            return Err(ZarrError::Metadata(format!(
                "codec 'sharding_indexed': chunk_shape has {} dimensions, the array {ndim}",
                inner_shape.len()
            )));
        }
        let inner = CodecChain::from_json(codec_list(config, "codecs")?, dtype, fill, ndim)?;
        let index = CodecChain::from_json(
            codec_list(config, "index_codecs")?,
            DataType::UInt64,
            &[0; 8],
            ndim + 1,
        )?;
        let index_at_end = match config.get("index_location") {
            None => true,
            Some(Value::String(s)) if s == "end" => true,
            Some(Value::String(s)) if s == "start" => false,
            Some(other) => {
                return Err(ZarrError::Metadata(format!(
                    "codec 'sharding_indexed': index_location must be \"start\" or \"end\", not {other}"
                )))
            }
        };
        Ok(Sharding {
            inner_shape,
            inner,
            index,
            index_at_end,
        })
    }

    pub fn to_json(&self) -> Value {
        json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": self.inner_shape,
            "codecs": self.inner.to_json(),
            "index_codecs": self.index.to_json(),
            "index_location": if self.index_at_end { "end" } else { "start" },
        }})
    }

    /// Inner chunks per shard along each dimension.
    pub fn grid(&self, shard_shape: &[usize]) -> Result<Vec<usize>> {
        shard_shape
            .iter()
            .zip(&self.inner_shape)
            .map(|(&s, &i)| {
                if s % i == 0 {
                    Ok(s / i)
                } else {
                    Err(ZarrError::Metadata(format!(
                        "codec 'sharding_indexed': inner chunk shape {:?} does not divide the shard shape {shard_shape:?}",
                        self.inner_shape
                    )))
                }
            })
            .collect()
    }

    fn index_shape(grid: &[usize]) -> Vec<usize> {
        let mut s = grid.to_vec();
        s.push(2);
        s
    }

    /// Encoded size in bytes of the index of `n` inner chunks (the index
    /// codecs may only add a fixed amount, such as a checksum).
    pub fn index_len(&self, grid: &[usize]) -> Result<usize> {
        // Sized from the index of one inner chunk, not by encoding an index
        // of the shard's size: metadata may ask for one of many gigabytes.
        let one = vec![1usize; grid.len()];
        let overhead = self
            .index
            .encode(vec![0u8; 16], &Self::index_shape(&one))?
            .len()
            - 16;
        crate::error::checked_product(grid.iter().copied())
            .and_then(|n| n.checked_mul(16))
            .and_then(|n| n.checked_add(overhead))
            .ok_or_else(|| {
                ZarrError::Metadata(format!(
                    "codec 'sharding_indexed': a shard of {grid:?} inner chunks has an index too large to address"
                ))
            })
    }

    /// The byte range of a shard that holds its index.
    pub fn index_range(&self, grid: &[usize]) -> Result<ByteRange> {
        let len = self.index_len(grid)? as u64;
        Ok(if self.index_at_end {
            ByteRange::Suffix(len)
        } else {
            ByteRange::Range {
                offset: 0,
                length: len,
            }
        })
    }

    /// Decode an index into one entry per inner chunk, in C order of `grid`.
    /// The index is always checked strictly: wrong offsets would read
    /// wrong data.
    pub fn decode_index(
        &self,
        bytes: Vec<u8>,
        grid: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<IndexEntry>> {
        let shape = Self::index_shape(grid);
        let what = format!("{} (shard index)", ctx.what);
        let strict = CodecContext {
            strict_checksums: true,
            warnings: ctx.warnings,
            what: &what,
        };
        let raw = self.index.decode(bytes, &shape, &strict)?;
        let strides = self.index.stored_strides(&shape);
        let nd = grid.len();
        let value = |idx: &[usize], k: usize| {
            let at = idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>() + k * strides[nd];
            u64::from_ne_bytes(raw[8 * at..8 * at + 8].try_into().expect("8 bytes"))
        };
        let mut out = Vec::new();
        out.try_reserve_exact(grid.iter().product())
            .map_err(|_| ZarrError::Memory(format!("{what}: the index does not fit in memory")))?;
        let mut bad = None;
        for_each_index(grid, |_, idx| {
            let (offset, nbytes) = (value(idx, 0), value(idx, 1));
            out.push(match (offset == MISSING, nbytes == MISSING) {
                (true, true) => None,
                (false, false) => Some((offset, nbytes)),
                _ => {
                    bad.get_or_insert_with(|| idx.to_vec());
                    None
                }
            });
        });
        if let Some(idx) = bad {
            return Err(ZarrError::CorruptChunk(format!(
                "{what}: inner chunk {idx:?} has only one of offset and nbytes marked missing"
            )));
        }
        Ok(out)
    }

    fn encode_index(&self, entries: &[IndexEntry], grid: &[usize]) -> Result<Vec<u8>> {
        let shape = Self::index_shape(grid);
        let strides = self.index.stored_strides(&shape);
        let nd = grid.len();
        let mut raw = crate::error::try_filled(16 * entries.len(), 0, "shard index")?;
        for_each_index(grid, |i, idx| {
            let (o, n) = entries[i].unwrap_or((MISSING, MISSING));
            for (k, v) in [(0, o), (1, n)] {
                let at =
                    idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>() + k * strides[nd];
                raw[8 * at..8 * at + 8].copy_from_slice(&v.to_ne_bytes());
            }
        });
        self.index.encode(raw, &shape)
    }

    /// The bytes of inner chunk `entry` in a whole shard `data`.
    pub fn inner_bytes<'a>(
        &self,
        data: &'a [u8],
        entry: (u64, u64),
        what: &str,
    ) -> Result<&'a [u8]> {
        let (offset, nbytes) = entry;
        match offset.checked_add(nbytes) {
            Some(end) if end <= data.len() as u64 => Ok(&data[offset as usize..end as usize]),
            _ => Err(ZarrError::CorruptChunk(format!(
                "{what}: the shard index points past the end of the shard (bytes {offset}..+{nbytes} of {})",
                data.len()
            ))),
        }
    }

    /// The index bytes of a whole shard.
    pub fn index_of<'a>(&self, data: &'a [u8], grid: &[usize], what: &str) -> Result<&'a [u8]> {
        let len = self.index_len(grid)?;
        if data.len() < len {
            return Err(ZarrError::CorruptChunk(format!(
                "{what}: a shard of {} bytes cannot hold its index of {len} bytes",
                data.len()
            )));
        }
        Ok(if self.index_at_end {
            &data[data.len() - len..]
        } else {
            &data[..len]
        })
    }

    fn read_index(
        &self,
        data: &[u8],
        grid: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<IndexEntry>> {
        self.decode_index(self.index_of(data, grid, ctx.what)?.to_vec(), grid, ctx)
    }

    /// The grid position and index entry of each inner chunk a whole shard
    /// stores (missing ones left out), in C order of the grid.
    fn stored_inner_chunks(
        &self,
        data: &[u8],
        shard_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<(Vec<usize>, StoredEntry)>> {
        let grid = self.grid(shard_shape)?;
        let entries = self.read_index(data, &grid, ctx)?;
        let mut jobs = Vec::new();
        for_each_index(&grid, |i, idx| {
            if let Some(e) = entries[i] {
                jobs.push((idx.to_vec(), e));
            }
        });
        Ok(jobs)
    }

    /// The first element of inner chunk `idx` in a shard with `strides`.
    fn inner_base(&self, idx: &[usize], strides: &[usize]) -> usize {
        idx.iter()
            .zip(&self.inner_shape)
            .zip(strides)
            .map(|((p, n), s)| p * n * s)
            .sum()
    }

    /// A whole shard -> its native-endian elements in C order of `shard_shape`.
    pub fn decode_shard(
        &self,
        data: &[u8],
        shard_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let jobs = self.stored_inner_chunks(data, shard_shape, ctx)?;
        let size = self.inner.dtype().size();
        let n_elems: usize = shard_shape.iter().product();
        let mut out = crate::error::try_repeat(self.inner.fill(), n_elems, ctx.what)?;
        let out_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        let spans = whole(&self.inner_shape);
        let dst = SharedMut(out.as_mut_ptr());
        run_tasks(&jobs, pool::threads(), |(idx, entry)| -> Result<()> {
            let bytes = self.inner_bytes(data, *entry, ctx.what)?;
            let decoded = self.inner.decode_slice(bytes, &self.inner_shape, ctx)?;
            let base = self.inner_base(idx, &out_strides);
            // SAFETY: the inner chunk lies inside the shard (the grid divides
            // it exactly) and inner chunks do not overlap.
            unsafe {
                copy_elements(
                    size,
                    decoded.as_ptr(),
                    &inner_strides,
                    dst.get().add(base * size),
                    &out_strides,
                    &spans,
                );
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Native-endian elements in C order of `shard_shape` -> a whole shard.
    /// Inner chunks are encoded in parallel; those equal to the fill value
    /// everywhere are not stored.
    pub fn encode_shard(&self, data: &[u8], shard_shape: &[usize]) -> Result<Vec<u8>> {
        let size = self.inner.dtype().size();
        let data_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        let spans = whole(&self.inner_shape);
        let shard = self.encode_shard_with(shard_shape, &Buffers::default(), |idx, buf| {
            let base = self.inner_base(idx, &data_strides);
            // SAFETY: the inner chunk lies inside the shard buffer.
            unsafe {
                copy_elements(
                    size,
                    data.as_ptr().add(base * size),
                    &data_strides,
                    buf.as_mut_ptr(),
                    &inner_strides,
                    &spans,
                );
            }
        })?;
        match shard {
            Some(shard) => Ok(shard.concat()),
            // Nothing but fill: a shard whose index marks every inner
            // chunk missing.
            None => {
                let grid = self.grid(shard_shape)?;
                self.encode_index(&vec![None; grid.iter().product()], &grid)
            }
        }
    }

    /// A whole shard whose inner chunk at grid position `idx` is written by
    /// `gather(idx, buf)` into `buf` (native-endian elements laid out with
    /// the inner chain's `stored_strides`); `gather` must write every byte,
    /// since `buf` holds an earlier chunk's. Lets a writer fill inner chunks
    /// straight from its source, without assembling the shard first. None
    /// when every inner chunk holds only the fill value (nothing to store).
    /// Buffers come from `buffers`, where the caller puts them back once
    /// the shard is stored (`ShardParts::into_buffers`).
    pub fn encode_shard_with(
        &self,
        shard_shape: &[usize],
        buffers: &Buffers,
        gather: impl Fn(&[usize], &mut [u8]) + Sync,
    ) -> Result<Option<ShardParts>> {
        let (grid, positions) = self.inner_positions(shard_shape)?;
        let encoded: Vec<Option<Vec<u8>>> = collect_tasks(&positions, pool::threads(), |idx| {
            self.encode_inner(idx, buffers, &gather)
        })?;
        self.assemble_stored(encoded, &grid)
    }

    /// The grid of inner chunks of a shard of `shard_shape`, and their
    /// positions in C order (the order of the shard's index).
    pub fn inner_positions(&self, shard_shape: &[usize]) -> Result<(Vec<usize>, Vec<Vec<usize>>)> {
        let grid = self.grid(shard_shape)?;
        let mut positions = Vec::new();
        let n = grid.iter().product::<usize>();
        positions.try_reserve_exact(n).map_err(|_| {
            ZarrError::Memory(format!(
                "a shard of {n} inner chunks does not fit in memory"
            ))
        })?;
        for_each_index(&grid, |_, idx| positions.push(idx.to_vec()));
        Ok((grid, positions))
    }

    /// The inner chunk at grid position `idx`, written by `gather` (as in
    /// `encode_shard_with`), encoded; None when it holds only the fill
    /// value.
    pub fn encode_inner(
        &self,
        idx: &[usize],
        buffers: &Buffers,
        gather: impl Fn(&[usize], &mut [u8]),
    ) -> Result<Option<Vec<u8>>> {
        let size = self.inner.dtype().size();
        let fill = self.inner.fill();
        let inner_n: usize = self.inner_shape.iter().product();
        let mut buf = buffers.take();
        buf.resize(inner_n * size, 0);
        gather(idx, &mut buf);
        if buf.chunks_exact(size).all(|e| e == fill) {
            buffers.give(buf);
            return Ok(None);
        }
        let mut out = buffers.take();
        let done = self
            .inner
            .encode_into(&mut buf, &self.inner_shape, &mut out);
        buffers.give(buf);
        done.map(|()| Some(out))
    }

    /// The encoded inner chunks (None: not stored), in C order of `grid`,
    /// and their index -> the pieces of a whole shard; None when no inner
    /// chunk is stored, so that the shard need not be.
    pub fn assemble_stored(
        &self,
        encoded: Vec<Option<Vec<u8>>>,
        grid: &[usize],
    ) -> Result<Option<ShardParts>> {
        if encoded.iter().all(Option::is_none) {
            return Ok(None);
        }
        self.assemble(encoded, grid).map(Some)
    }

    /// The encoded inner chunks (None: not stored), in C order of `grid`,
    /// and their index -> the pieces of a whole shard.
    fn assemble(&self, encoded: Vec<Option<Vec<u8>>>, grid: &[usize]) -> Result<ShardParts> {
        let index_len = self.index_len(grid)? as u64;
        let mut offset = if self.index_at_end { 0 } else { index_len };
        let mut entries = Vec::with_capacity(encoded.len());
        for e in &encoded {
            entries.push(e.as_ref().map(|b| {
                let entry = (offset, b.len() as u64);
                offset += b.len() as u64;
                entry
            }));
        }
        let index = self.encode_index(&entries, grid)?;
        Ok(ShardParts {
            index,
            index_at_end: self.index_at_end,
            chunks: encoded.into_iter().flatten().collect(),
        })
    }
}
