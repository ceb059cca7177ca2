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

use super::{CodecChain, CodecContext};
use crate::convert::copy_elements;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::pool::{self, collect_tasks, run_tasks};
use crate::store::ByteRange;
use serde_json::{json, Map, Value};

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
        let spans: Vec<Vec<(usize, usize, usize)>> =
            self.inner_shape.iter().map(|&n| vec![(0, 0, n)]).collect();
        let dst = SharedMut(out.as_mut_ptr());
        run_tasks(&jobs, pool::threads(), |(idx, entry)| -> Result<()> {
            let bytes = self.inner_bytes(data, *entry, ctx.what)?.to_vec();
            let decoded = self.inner.decode(bytes, &self.inner_shape, ctx)?;
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
        let spans: Vec<Vec<(usize, usize, usize)>> =
            self.inner_shape.iter().map(|&n| vec![(0, 0, n)]).collect();
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

/// Byte buffers handed back and forth between the shards one writer
/// encodes. A shard keeps its encoded inner chunks until it is stored;
/// allocated and freed afresh for each shard, those megabytes went back
/// to the system (the allocator trims its heap) and came back as new
/// pages every time: a 128 MiB write of sixteen shards spent 12% longer
/// than one of 256 plain chunks, and as long once the buffers were kept.
#[derive(Default)]
pub struct Buffers(std::sync::Mutex<Vec<Vec<u8>>>);

impl Buffers {
    /// A buffer (empty, or holding old bytes) to reuse.
    pub fn take(&self) -> Vec<u8> {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        free.pop().unwrap_or_default()
    }

    pub fn give(&self, buf: Vec<u8>) {
        if buf.capacity() > 0 {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        }
    }

    pub fn give_all(&self, bufs: impl IntoIterator<Item = Vec<u8>>) {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        free.extend(bufs.into_iter().filter(|b| b.capacity() > 0));
    }
}

/// An encoded shard as its pieces: the stored inner chunks in order and
/// the index, which goes before or after them.
pub struct ShardParts {
    index: Vec<u8>,
    index_at_end: bool,
    chunks: Vec<Vec<u8>>,
}

impl ShardParts {
    /// The pieces in stored order (for `Store::set_parts`).
    pub fn parts(&self) -> Vec<&[u8]> {
        let mut out: Vec<&[u8]> = Vec::with_capacity(self.chunks.len() + 1);
        if !self.index_at_end {
            out.push(&self.index);
        }
        out.extend(self.chunks.iter().map(Vec::as_slice));
        if self.index_at_end {
            out.push(&self.index);
        }
        out
    }

    /// The buffers of the pieces, for reuse (`Buffers::give_all`).
    pub fn into_buffers(self) -> impl Iterator<Item = Vec<u8>> {
        self.chunks.into_iter().chain(std::iter::once(self.index))
    }

    /// The shard's bytes.
    pub fn concat(&self) -> Vec<u8> {
        self.parts().concat()
    }
}

/// The offset of each element of a block of `shape`, visited in C order,
/// in a buffer with `strides`, plus `base`.
fn offsets(shape: &[usize], strides: &[usize], base: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(shape.iter().product());
    for_each_index(shape, |_, idx| {
        out.push(base + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>())
    });
    out
}

impl Sharding {
    /// The first element of inner chunk `idx` in a shard with `strides`.
    fn inner_base(&self, idx: &[usize], strides: &[usize]) -> usize {
        idx.iter()
            .zip(&self.inner_shape)
            .zip(strides)
            .map(|((p, n), s)| p * n * s)
            .sum()
    }

    fn fill_string(&self) -> Result<String> {
        String::from_utf8(self.inner.fill().to_vec()).map_err(|_| {
            ZarrError::Metadata("the fill value of a string array is not UTF-8".into())
        })
    }

    /// A whole shard of strings -> its strings in C order of `shard_shape`.
    /// Inner chunks are decoded in parallel; missing ones read as the fill
    /// value.
    pub fn decode_shard_strings(
        &self,
        data: &[u8],
        shard_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<String>> {
        let jobs = self.stored_inner_chunks(data, shard_shape, ctx)?;
        let decoded: Vec<Vec<String>> = collect_tasks(&jobs, pool::threads(), |(_, entry)| {
            let bytes = self.inner_bytes(data, *entry, ctx.what)?.to_vec();
            self.inner.decode_strings(bytes, &self.inner_shape, ctx)
        })?;
        let n: usize = shard_shape.iter().product();
        let mut out = vec![self.fill_string()?; n];
        let out_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        // Where each element of an inner chunk (in C order) is in its buffer.
        let src = offsets(&self.inner_shape, &inner_strides, 0);
        for ((idx, _), mut strings) in jobs.iter().zip(decoded) {
            let base = self.inner_base(idx, &out_strides);
            for (&from, to) in src
                .iter()
                .zip(offsets(&self.inner_shape, &out_strides, base))
            {
                out[to] = std::mem::take(&mut strings[from]);
            }
        }
        Ok(out)
    }

    /// Strings in C order of `shard_shape` -> a whole shard. Inner chunks
    /// are encoded in parallel; those equal to the fill value everywhere
    /// are not stored.
    pub fn encode_shard_strings<S: AsRef<str> + Sync>(
        &self,
        items: &[S],
        shard_shape: &[usize],
    ) -> Result<Vec<u8>> {
        let (grid, positions) = self.inner_positions(shard_shape)?;
        let fill = self.fill_string()?;
        let n: usize = shard_shape.iter().product();
        if items.len() != n {
            return Err(ZarrError::Type(format!(
                "{} strings for a shard of {n} elements",
                items.len()
            )));
        }
        let data_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        let dst = offsets(&self.inner_shape, &inner_strides, 0);
        let inner_n: usize = self.inner_shape.iter().product();
        let encoded: Vec<Option<Vec<u8>>> = collect_tasks(
            &positions,
            pool::threads(),
            |idx| -> Result<Option<Vec<u8>>> {
                let base = self.inner_base(idx, &data_strides);
                let mut buf: Vec<&str> = vec![""; inner_n];
                for (&to, from) in dst
                    .iter()
                    .zip(offsets(&self.inner_shape, &data_strides, base))
                {
                    buf[to] = items[from].as_ref();
                }
                if buf.iter().all(|s| *s == fill) {
                    return Ok(None);
                }
                self.inner.encode_strings(&buf, &self.inner_shape).map(Some)
            },
        )?;
        Ok(self.assemble(encoded, &grid)?.concat())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Warnings;

    fn sharding(config: Value, dtype: DataType, ndim: usize) -> Sharding {
        let fill = vec![0u8; dtype.size()];
        Sharding::from_config(config.as_object().unwrap(), dtype, &fill, ndim).unwrap()
    }

    fn config(location: &str, inner: Value) -> Value {
        json!({"chunk_shape": [2, 3], "codecs": inner,
               "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
               "index_location": location})
    }

    fn ctx(w: &Warnings) -> CodecContext<'_> {
        CodecContext {
            strict_checksums: false,
            warnings: w,
            what: "shard 'c/0/0'",
        }
    }

    fn shard_data() -> Vec<u8> {
        // 4 x 6 int32 in C order; the inner chunk at (1, 1) is all zero (fill)
        let mut v: Vec<i32> = (1..=24).collect();
        for r in 2..4 {
            for c in 3..6 {
                v[r * 6 + c] = 0;
            }
        }
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn shards_round_trip_with_the_index_at_either_end() {
        let w = Warnings::default();
        for location in ["start", "end"] {
            let s = sharding(
                config(
                    location,
                    json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]),
                ),
                DataType::Int32,
                2,
            );
            let data = shard_data();
            let enc = s.encode_shard(&data, &[4, 6]).unwrap();
            let entries = s.read_index(&enc, &[2, 2], &ctx(&w)).unwrap();
            assert_eq!(
                entries.iter().filter(|e| e.is_none()).count(),
                1,
                "the fill chunk is not stored"
            );
            assert!(entries[3].is_none());
            assert_eq!(s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap(), data);
            assert_eq!(s.index_len(&[2, 2]).unwrap(), 16 * 4 + 4);
        }
    }

    #[test]
    fn shards_encoded_with_shared_buffers_match_fresh_ones() {
        // One Buffers for shard after shard, as a writer uses it: the
        // buffers come back holding other shards' bytes.
        let inner = [
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
            json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]),
        ];
        for codecs in inner {
            let s = sharding(config("end", codecs.clone()), DataType::Int32, 2);
            let buffers = Buffers::default();
            let shards: Vec<Vec<u8>> = vec![
                shard_data(),
                (100..124i32).flat_map(|x| x.to_ne_bytes()).collect(),
                vec![0u8; 24 * 4],
                shard_data().iter().rev().copied().collect(),
            ];
            for data in &shards {
                let fresh = s.encode_shard(data, &[4, 6]).unwrap();
                let shared = s
                    .encode_shard_with(&[4, 6], &buffers, |idx, buf| {
                        // inner chunk (r, c) of 2 x 3 elements, C order
                        for (k, e) in buf.chunks_exact_mut(4).enumerate() {
                            let (r, c) = (idx[0] * 2 + k / 3, idx[1] * 3 + k % 3);
                            let at = (r * 6 + c) * 4;
                            e.copy_from_slice(&data[at..at + 4]);
                        }
                    })
                    .unwrap();
                match shared {
                    Some(parts) => {
                        assert_eq!(parts.concat(), fresh, "{codecs}");
                        buffers.give_all(parts.into_buffers());
                    }
                    None => assert!(data.iter().all(|&b| b == 0), "{codecs}"),
                }
            }
        }
    }

    #[test]
    fn a_bad_index_checksum_is_an_error_even_when_checksums_only_warn() {
        let w = Warnings::default();
        let s = sharding(
            config(
                "end",
                json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            ),
            DataType::Int32,
            2,
        );
        let mut enc = s.encode_shard(&shard_data(), &[4, 6]).unwrap();
        let n = enc.len();
        enc[n - 10] ^= 0xff;
        let e = s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap_err();
        assert_eq!(e.kind(), "checksum");
        assert!(e.message().contains("shard index"));
    }

    #[test]
    fn an_index_pointing_past_the_end_is_a_corrupt_chunk() {
        let w = Warnings::default();
        let s = sharding(
            config(
                "start",
                json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            ),
            DataType::Int32,
            2,
        );
        let entries = vec![Some((1000u64, 24u64)), None, None, None];
        let mut shard = s.encode_index(&entries, &[2, 2]).unwrap();
        shard.extend_from_slice(&[0u8; 24]);
        let e = s.decode_shard(&shard, &[4, 6], &ctx(&w)).unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains("past the end"), "{}", e.message());
        let e = s.decode_shard(&[0u8; 10], &[4, 6], &ctx(&w)).unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
    }

    #[test]
    fn an_inner_shape_that_does_not_divide_the_shard_is_refused() {
        let s = sharding(
            config(
                "end",
                json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            ),
            DataType::Int32,
            2,
        );
        assert_eq!(s.grid(&[4, 7]).unwrap_err().kind(), "metadata");
    }

    fn hex(h: &str) -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    fn string_sharding(config: Value, fill: &str) -> Sharding {
        Sharding::from_config(
            config.as_object().unwrap(),
            DataType::String,
            fill.as_bytes(),
            2,
        )
        .unwrap()
    }

    /// A 4 x 6 shard of strings in C order; the inner chunk at (1, 1) is
    /// all fill ("").
    fn shard_strings() -> Vec<String> {
        let mut v: Vec<String> = (0..24).map(|i| format!("s{i}\u{e9}")).collect();
        v[0] = String::new();
        for r in 2..4 {
            for c in 3..6 {
                v[r * 6 + c] = String::new();
            }
        }
        v
    }

    #[test]
    fn a_shard_of_strings_written_by_zarr_python_decodes_and_encodes_the_same() {
        // zarr-python 3.1.6: shape (2, 4), shards (2, 4), chunks (1, 2),
        // fill "-", no compressor. Inner chunk (0, 1) is all fill: missing.
        let data = hex(concat!(
            "02000000010000006102000000c3a9020000000000000002000000787902000000",
            "010000007a010000002d00000000000000000f00000000000000ffffffffffffffff",
            "ffffffffffffffff0f000000000000000e000000000000001d000000000000000e0000",
            "0000000000ac76b981"
        ));
        let s = string_sharding(
            json!({"chunk_shape": [1, 2], "codecs": [{"name": "vlen-utf8", "configuration": {}}],
                   "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                   "index_location": "end"}),
            "-",
        );
        let w = Warnings::default();
        let strings = s.decode_shard_strings(&data, &[2, 4], &ctx(&w)).unwrap();
        assert_eq!(strings, ["a", "\u{e9}", "-", "-", "", "xy", "z", "-"]);
        assert_eq!(s.encode_shard_strings(&strings, &[2, 4]).unwrap(), data);
    }

    #[test]
    fn shards_of_strings_round_trip_and_skip_fill_inner_chunks() {
        let w = Warnings::default();
        let vlen = json!({"name": "vlen-utf8", "configuration": {}});
        let inners = [
            json!([vlen]),
            json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, vlen,
                   {"name": "gzip", "configuration": {"level": 1}}]),
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [1, 3], "codecs": [vlen],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
        ];
        for location in ["start", "end"] {
            for inner in &inners {
                let s = string_sharding(config(location, inner.clone()), "");
                let data = shard_strings();
                let enc = s.encode_shard_strings(&data, &[4, 6]).unwrap();
                let entries = s.read_index(&enc, &[2, 2], &ctx(&w)).unwrap();
                let missing: Vec<usize> = (0..4).filter(|&i| entries[i].is_none()).collect();
                assert_eq!(missing, [3], "{location} {inner}");
                assert_eq!(
                    s.decode_shard_strings(&enc, &[4, 6], &ctx(&w)).unwrap(),
                    data,
                    "{location} {inner}"
                );
            }
        }
        // A shard with no inner chunk stored reads as the fill value.
        let s = string_sharding(config("end", json!([vlen])), "fill");
        let empty = s.encode_shard_strings(&vec!["fill"; 24], &[4, 6]).unwrap();
        assert_eq!(empty.len(), s.index_len(&[2, 2]).unwrap());
        assert_eq!(
            s.decode_shard_strings(&empty, &[4, 6], &ctx(&w)).unwrap(),
            vec!["fill"; 24]
        );
    }

    #[test]
    fn a_corrupt_inner_chunk_of_strings_names_the_shard() {
        let w = Warnings::default();
        let s = string_sharding(
            config("end", json!([{"name": "vlen-utf8", "configuration": {}}])),
            "",
        );
        let mut enc = s.encode_shard_strings(&shard_strings(), &[4, 6]).unwrap();
        enc[0] = 99; // the string count of the first inner chunk
        let e = s.decode_shard_strings(&enc, &[4, 6], &ctx(&w)).unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains("shard 'c/0/0'"), "{}", e.message());
        let e = s.encode_shard_strings(&["x"; 5], &[4, 6]).unwrap_err();
        assert_eq!(e.kind(), "type");
    }

    #[test]
    fn nested_shards_round_trip() {
        let w = Warnings::default();
        let inner = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 3],
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]);
        let s = sharding(config("end", inner), DataType::Int32, 2);
        let data = shard_data();
        let enc = s.encode_shard(&data, &[4, 6]).unwrap();
        assert_eq!(s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap(), data);
    }
}
