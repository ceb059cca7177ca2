//! Planning a read or write: the chunks a selection touches, each chunk's
//! copy spans, how inner chunks group into shards, and which fast path a
//! chunk may take.

use super::Array;
use crate::convert::{self, Span};
use crate::dtype::{DataType, RType};
use crate::grid::Axis;
use crate::selection::DimChunk;

/// One chunk of a plan: the part of the selection in each dimension.
pub(super) type Chunk<'p> = Vec<&'p DimChunk>;

/// The grid index of chunk `c`: its chunk number along each dimension.
pub(super) fn chunk_index(c: &[&DimChunk]) -> Vec<u64> {
    c.iter().map(|d| d.chunk).collect()
}

/// The spans of a read: from chunk `c`'s elements to the selection's
/// buffer. With `base`, the chunk's data starts at its element `base[k]`
/// along dimension `k` (a byte range of the stored chunk).
pub(super) fn read_spans(c: &[&DimChunk], base: Option<&[usize]>) -> Vec<Vec<Span>> {
    c.iter()
        .enumerate()
        .map(|(k, d)| {
            let b = base.map_or(0, |b| b[k]);
            d.runs
                .iter()
                .map(|r| Span {
                    src: r.start as usize - b,
                    dst: r.dst,
                    len: r.len,
                })
                .collect()
        })
        .collect()
}

/// The spans of a write: from the selection's data to chunk `c`.
pub(super) fn write_spans(c: &[&DimChunk]) -> Vec<Vec<Span>> {
    c.iter()
        .map(|d| {
            d.runs
                .iter()
                .map(|r| Span {
                    src: r.dst,
                    dst: r.start as usize,
                    len: r.len,
                })
                .collect()
        })
        .collect()
}

/// The spans of a write into the inner chunk at grid position `idx` of
/// shard `c`: this inner chunk's part of each dimension's runs, with chunk
/// positions made relative to the inner chunk.
pub(super) fn inner_write_spans(
    c: &[&DimChunk],
    idx: &[usize],
    inner_shape: &[usize],
) -> Vec<Vec<Span>> {
    c.iter()
        .zip(idx.iter().zip(inner_shape))
        .map(|(d, (&p, &n))| {
            let (lo, hi) = (p * n, (p + 1) * n);
            d.runs
                .iter()
                .filter_map(|r| {
                    let start = r.start as usize;
                    let (s, e) = (start.max(lo), (start + r.len).min(hi));
                    (s < e).then(|| Span {
                        src: r.dst + (s - start),
                        dst: s - lo,
                        len: e - s,
                    })
                })
                .collect()
        })
        .collect()
}

impl Array {
    /// Whether a stored chunk holds its elements exactly as an R vector of
    /// `rtype` does, column-major: the condition for reading and writing
    /// chunks straight between R memory and the store.
    pub(super) fn stores_as_r(&self, rtype: RType, strides: &[usize]) -> bool {
        let same_type = matches!(
            (self.meta.data_type, rtype),
            (DataType::Float64, RType::Double) | (DataType::Int32, RType::Integer)
        );
        let shape = self.chunk_shape();
        // Columns shorter than this would make many tiny reads.
        let column_bytes = shape.first().map_or(0, |&n| n * self.meta.data_type.size());
        same_type
            && self.active_cf().is_none()
            && self.chain.stores_plain_elements()
            && strides == convert::column_major_strides(&shape).as_slice()
            && column_bytes >= MIN_STRAIGHT_COLUMN_BYTES
    }

    /// Whether chunk `idx` lies wholly inside the array (not an edge chunk
    /// that reaches past its shape).
    pub(super) fn inside_array(&self, idx: &[u64]) -> bool {
        idx.iter()
            .zip(self.meta.shape.iter().zip(&self.grid.axes))
            .all(|(&i, (&n, a))| a.start(i) + a.len(i) <= n)
    }

    /// Whether the selection covers every element of the chunk that lies
    /// inside the array (so the old chunk need not be read).
    pub(super) fn covers_chunk(&self, c: &[&DimChunk], idx: &[u64]) -> bool {
        c.iter()
            .zip(idx)
            .zip(self.meta.shape.iter().zip(&self.grid.axes))
            .all(|((dc, &i), (&n, a))| {
                // Sorted runs, not a flag per element: a chunk of a huge
                // chunk shape must not cost memory of its size.
                let extent = (n - a.start(i)).min(a.len(i));
                let mut runs: Vec<(u64, u64)> = dc
                    .runs
                    .iter()
                    .map(|r| (r.start, r.start + r.len as u64))
                    .collect();
                runs.sort_unstable();
                let mut covered = 0u64;
                for (s, e) in runs {
                    if s > covered {
                        return false;
                    }
                    covered = covered.max(e);
                }
                covered >= extent
            })
    }
}

/// Every combination of one chunk per dimension.
///
/// The first dimension varies fastest, as R's memory does: the thread pool
/// splits this list into contiguous parts, so threads then write distant
/// parts of the R result instead of contending for the same pages.
pub(super) fn cartesian(plan: &[Vec<DimChunk>]) -> Vec<Chunk<'_>> {
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

/// Where the inner chunks of a sharded array fall among its shards. Every
/// shard holds whole inner chunks, so the inner chunks tile the array in
/// one regular grid, and a shard is a box of them: of one shape in a
/// regular chunk grid, of its own in a rectilinear one.
pub(super) struct ShardGrid<'a> {
    shards: &'a [Axis],
    inner: Vec<u64>,
}

impl<'a> ShardGrid<'a> {
    pub(super) fn new(shards: &'a [Axis], inner_shape: &[usize]) -> ShardGrid<'a> {
        ShardGrid {
            shards,
            inner: inner_shape.iter().map(|&n| n as u64).collect(),
        }
    }

    /// The shard holding inner chunk `c`.
    pub(super) fn shard_of(&self, c: &[&DimChunk]) -> Vec<u64> {
        c.iter()
            .zip(self.shards.iter().zip(&self.inner))
            .map(|(d, (a, &n))| a.chunk_of(d.chunk * n))
            .collect()
    }

    /// The inner chunks along each dimension of shard `sidx`, and the grid
    /// index of its first.
    pub(super) fn box_of(&self, sidx: &[u64]) -> (Vec<usize>, Vec<u64>) {
        sidx.iter()
            .zip(self.shards.iter().zip(&self.inner))
            .map(|(&s, (a, &n))| ((a.len(s) / n) as usize, a.start(s) / n))
            .unzip()
    }

    /// The inner chunks along each dimension of the largest shard.
    pub(super) fn largest(&self) -> Vec<usize> {
        self.shards
            .iter()
            .zip(&self.inner)
            .map(|(a, &n)| (a.longest() / n) as usize)
            .collect()
    }
}

/// The index entry of inner chunk `c` in the shard whose first inner chunk
/// is `origin` and which holds `grid` of them (C order of `grid`).
pub(super) fn position_in_shard(c: &[&DimChunk], grid: &[usize], origin: &[u64]) -> usize {
    c.iter()
        .zip(grid.iter().zip(origin))
        .fold(0usize, |acc, (d, (&g, &o))| {
            acc * g + (d.chunk - o) as usize
        })
}

/// Inner chunks grouped by the shard holding them, in first-seen order.
pub(super) fn group_by_shard<'p>(
    chunks: &'p [Vec<&'p DimChunk>],
    shards: &ShardGrid,
) -> Vec<(Vec<u64>, Vec<&'p Vec<&'p DimChunk>>)> {
    let mut groups: Vec<(Vec<u64>, Vec<&Vec<&DimChunk>>)> = Vec::new();
    let mut slot_of: std::collections::HashMap<Vec<u64>, usize> = std::collections::HashMap::new();
    for c in chunks {
        let sidx = shards.shard_of(c);
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
pub(super) const BATCH: usize = 64;

/// Chunks read straight into R memory (`read_chunk_straight`) need
/// columns of at least this many bytes, and at most this many columns:
/// past those, one read per column costs more than the copy it saves.
pub(super) const MIN_STRAIGHT_COLUMN_BYTES: usize = 256;
const MAX_STRAIGHT_COLUMNS: usize = 1 << 16;

/// The columns of chunk `c` (of `shape`, stored column-major) in a
/// column-major R buffer with `strides`, in stored order, as (element
/// offset, elements); neighbours in the buffer merge into one. None unless
/// the selection covers the chunk whole (which also rules out edge chunks,
/// whose stored columns run past the array) and the columns are few.
pub(super) fn chunk_columns(
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
    // The first column's offset, then the next one's by a step along the
    // outer dimensions (an odometer): no sum over the dimensions per
    // column, and the list sized once.
    let mut off: usize = c.iter().zip(strides).map(|(d, &s)| d.runs[0].dst * s).sum();
    let mut columns: Vec<(usize, usize)> = Vec::with_capacity(count);
    let mut pos = vec![0usize; outer.len()];
    for _ in 0..count {
        match columns.last_mut() {
            Some((o, n)) if *o + *n == off => *n += shape[0],
            _ => columns.push((off, shape[0])),
        }
        for (k, p) in pos.iter_mut().enumerate() {
            *p += 1;
            off += strides[k + 1];
            if *p < outer[k] {
                break;
            }
            off -= outer[k] * strides[k + 1];
            *p = 0;
        }
    }
    Some(columns)
}
