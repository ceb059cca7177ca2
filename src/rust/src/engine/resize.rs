//! resize(): an array's shape changes and its stored chunks
//! follow, renamed, erased or rewritten in parallel on the pool.
//!
//! It runs in two steps around the store of the new metadata document,
//! which the caller writes (R does, through the store object, which knows
//! the versions of a store with conditional writes):
//!
//! - `resize_begin` renames the chunks for a move of the low end, erases
//!   those beyond the old data and clears the part of the old edge chunks
//!   that comes into view; it returns the new metadata. Until that is
//!   stored the old shape reads as before: a rename that fails or is
//!   interrupted is undone, and everything else it changes lies outside
//!   the old shape. `resize_undo` reverses it when the metadata cannot be
//!   stored; `resize_finish` erases what fell outside the new shape.
//!
//! promote() works the same way (`promote.rs`).
//!
//! Chunks are named and found through the one chunk-key encoder (`key`).

use super::{Array, IoOptions};
use crate::codec::Warnings;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::metadata::ArrayMetadata;
use crate::pool::{interrupted, interrupted_error, run_tasks};
use crate::store::{listable, ByteRange, StoreKey, StorePrefix};
use std::sync::Mutex;

/// Where chunks that fall off the low end wait until the new metadata is
/// stored (so that an undo can bring them back).
const RESIZE_AWAY: &str = "__resize/";

/// What resize() is asked for, as R-CF's zarr and this package take it:
/// a new shape, or elements to add (remove when negative) at each end.
#[derive(Debug, Clone, Default)]
pub struct ResizeRequest {
    pub new_shape: Option<Vec<u64>>,
    /// Per dimension; empty for none.
    pub low: Vec<i64>,
    /// Per dimension; empty for none (ignored with `new_shape`).
    pub high: Vec<i64>,
}

/// The new metadata of a resize and the move of its low end in chunks.
#[derive(Debug, Clone)]
pub struct Resized {
    pub meta: ArrayMetadata,
    pub shift: Vec<i64>,
}

/// Renames done so far, undone in reverse order when a later step fails.
#[derive(Default)]
pub(super) struct Journal(Mutex<Vec<(StoreKey, StoreKey)>>);

impl Journal {
    fn done(&self, from: StoreKey, to: StoreKey) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((from, to));
    }

    /// Move everything back, one key at a time and without asking for
    /// interrupts (one may be what stopped the work): the first failure
    /// is kept in the error.
    pub(super) fn undo(self, arr: &Array, e: ZarrError) -> ZarrError {
        let moves = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        for (from, to) in moves.into_iter().rev() {
            if let Err(u) = arr.move_key(&to, &from) {
                return ZarrError::Io(format!(
                    "{}; moving chunk '{to}' back to '{from}' failed too, the array may be left with chunks misplaced: {}",
                    e.message(),
                    u.message()
                ));
            }
        }
        e
    }
}

fn joined<T: std::fmt::Display>(v: &[T], sep: &str) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

impl Array {
    /// The prefix of the array's keys: "" for a root array, else "path/".
    pub(super) fn key_prefix(&self) -> String {
        if self.path.is_empty() {
            String::new()
        } else {
            format!("{}/", self.path)
        }
    }

    /// The key of chunk `idx` below `away` (one of the parking prefixes,
    /// or "" for its own key).
    pub(super) fn chunk_key_in(&self, away: &str, idx: &[u64]) -> Result<StoreKey> {
        let mut key = self.key_prefix();
        key.push_str(away);
        self.meta.chunk_key_encoding.push_key(idx, &mut key);
        StoreKey::new(key)
    }

    /// The grid indices of the chunks stored below `away` ("" for the
    /// array's own chunks) as chunks of `ndim` dimensions. Keys that are
    /// not chunk keys are left out, and never touched.
    pub(super) fn stored_chunks(&self, away: &str, ndim: usize) -> Result<Vec<Vec<u64>>> {
        let prefix = format!("{}{away}", self.key_prefix());
        let keys = StorePrefix::new(prefix.clone())
            .and_then(|p| listable(&*self.store, &p)?.list_prefix(&p))
            .map_err(|e| e.context(&self.what()))?;
        let enc = self.meta.chunk_key_encoding;
        Ok(keys
            .iter()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter_map(|rel| enc.parse(rel, ndim))
            .collect())
    }

    /// Move a stored value to another key, byte for byte; false when there
    /// was none.
    pub(super) fn move_key(&self, from: &StoreKey, to: &StoreKey) -> Result<bool> {
        let what = |k: &StoreKey| self.chunk_what(k);
        let Some(value) = self
            .store
            .get(from, ByteRange::All)
            .map_err(|e| e.context(&what(from)))?
        else {
            return Ok(false);
        };
        let store = self.writes()?;
        store.set(to, &value).map_err(|e| e.context(&what(to)))?;
        store.erase(from).map_err(|e| e.context(&what(from)))?;
        Ok(true)
    }

    /// Move each (from, to) pair in parallel, writing the journal.
    pub(super) fn move_all(
        &self,
        moves: &[(StoreKey, StoreKey)],
        journal: &Journal,
        threads: usize,
    ) -> Result<()> {
        run_tasks(moves, threads, |(from, to)| {
            if self.move_key(from, to)? {
                journal.done(from.clone(), to.clone());
            }
            Ok(())
        })
    }

    fn erase_all(&self, keys: &[StoreKey], threads: usize) -> Result<()> {
        let store = self.writes()?;
        run_tasks(keys, threads, |k| {
            store.erase(k).map_err(|e| e.context(&self.chunk_what(k)))
        })
    }

    pub(super) fn check_reshapable(&self) -> Result<()> {
        self.writes().map(|_| ())
    }

    /// The new metadata and low-end move of `req`; None when nothing
    /// changes. Refuses what resize() cannot do, before anything changes.
    pub fn resize_plan(&self, req: &ResizeRequest) -> Result<Option<Resized>> {
        let what = self.what();
        self.check_reshapable()?;
        let shape = &self.meta.shape;
        let nd = shape.len();
        if nd == 0 {
            return Err(ZarrError::Unsupported(format!(
                "{what}: a 0-d array cannot be resized; use promote()"
            )));
        }
        for (v, arg) in [(&req.low, "low"), (&req.high, "high")] {
            if !v.is_empty() && v.len() != nd {
                return Err(ZarrError::Argument(format!(
                    "{what}: `{arg}` must have one element per dimension of the array ({nd})"
                )));
            }
        }
        let chunk = &self.meta.chunk_shape;
        let per_dim = |v: &[i64], d: usize| v.get(d).copied().unwrap_or(0);
        if !self.grid.is_regular() && req.low.iter().any(|&l| l != 0) {
            // The low end moves by whole chunks, and the chunks of a
            // rectilinear grid differ: none is the one to move by.
            return Err(ZarrError::Unsupported(format!(
                "{what}: `low` cannot move the low end of an array with a rectilinear chunk grid; resize its high end"
            )));
        }
        // The low end moves by whole chunks, rounded outward as R-CF's zarr
        // does: growth adds at least what was asked, shrinking removes at
        // most that.
        let shift: Vec<i64> = (0..nd)
            .map(|d| {
                let (low, c) = (per_dim(&req.low, d), chunk[d] as i64);
                if low >= 0 {
                    (low + c - 1) / c
                } else {
                    -((-low) / c)
                }
            })
            .collect();
        let moved: Vec<i64> = (0..nd)
            .map(|d| shape[d] as i64 + shift[d] * chunk[d] as i64)
            .collect();
        let target: Vec<u64> = match &req.new_shape {
            Some(s) => {
                if s.len() != nd {
                    return Err(ZarrError::Argument(format!(
                        "{what}: `new_shape` must have one element per dimension of the array ({nd})"
                    )));
                }
                s.clone()
            }
            None => {
                let t: Vec<i64> = (0..nd).map(|d| moved[d] + per_dim(&req.high, d)).collect();
                // (as in R-CF's zarr, element counts never empty a
                // dimension: new_shape can)
                if t.iter().any(|&x| x < 1) {
                    return Err(ZarrError::Argument(format!(
                        "{what}: resizing would give a non-positive extent ({}): none may be zero or negative",
                        joined(&t, " x ")
                    )));
                }
                t.iter().map(|&x| x as u64).collect()
            }
        };
        if shift.iter().all(|&s| s == 0) && &target == shape {
            return Ok(None);
        }
        if self.chain.sharding().is_some() {
            // Cutting into a shard would rewrite all of it to clear part;
            // R-CF's zarr refuses it too. Whole shards are erased, and
            // growth touches none.
            let axes = &self.grid.axes;
            let cut: Vec<usize> = (0..nd)
                .filter(|&d| (target[d] as i64) < moved[d] && !axes[d].is_boundary(target[d]))
                .collect();
            if !cut.is_empty() {
                let sizes: Vec<u64> = cut
                    .iter()
                    .map(|&d| axes[d].len(axes[d].chunk_of(target[d])))
                    .collect();
                let dims: Vec<usize> = cut.iter().map(|&d| d + 1).collect();
                return Err(ZarrError::Unsupported(format!(
                    "{what}: shrinking a sharded array to an extent that is not a whole number of shards ({} along dimension {}) is not supported",
                    joined(&sizes, ", "),
                    joined(&dims, ", ")
                )));
            }
        }
        Ok(Some(Resized {
            meta: reshaped(&self.meta, target),
            shift,
        }))
    }

    /// The first step of resize() (see the module's notes): returns the
    /// metadata to store, None when nothing changes.
    pub fn resize_begin(&self, req: &ResizeRequest, opts: IoOptions) -> Result<Option<Resized>> {
        let Some(plan) = self.resize_plan(req)? else {
            return Ok(None);
        };
        let journal = Journal::default();
        match self.resize_chunks(&plan, &journal, opts) {
            Ok(()) => Ok(Some(plan)),
            Err(e) => Err(journal.undo(self, e)),
        }
    }

    fn resize_chunks(&self, plan: &Resized, journal: &Journal, opts: IoOptions) -> Result<()> {
        let nd = self.meta.shape.len();
        let chunk = &self.meta.chunk_shape;
        let shift = &plan.shift;
        let target = &plan.meta.shape;
        // Chunks keep their places: a rectilinear grid only gains chunks
        // past its old ones (and its low end never moves).
        let grid: Vec<u64> = plan.meta.grid_shape();
        let axes = &self.grid.axes;
        let mut index = self.stored_chunks("", nd)?;
        if shift.iter().any(|&s| s != 0) {
            index = self.shift_chunks(&index, shift, &grid, journal, opts.threads)?;
        }
        // The old data, in the new coordinates, ends at `data_end`.
        let data_end: Vec<i64> = (0..nd)
            .map(|d| self.meta.shape[d] as i64 + shift[d] * chunk[d] as i64)
            .collect();
        let start = |idx: &[u64], d: usize| axes[d].start(idx[d]) as i64;
        let (stale, live): (Vec<_>, Vec<_>) = index
            .into_iter()
            .partition(|idx| (0..nd).any(|d| start(idx, d) >= data_end[d]));
        let stale: Vec<StoreKey> = stale
            .iter()
            .map(|idx| self.chunk_key_in("", idx))
            .collect::<Result<_>>()?;
        self.erase_all(&stale, opts.threads)?;
        // The rest of the old edge chunks along each dimension that grows
        // past them comes into view: cleared to the fill value, so that
        // values cut off by an earlier shrink never come back.
        let grows: Vec<usize> = (0..nd)
            .filter(|&d| {
                target[d] as i64 > data_end[d]
                    && data_end[d] > 0
                    && !axes[d].is_boundary(data_end[d] as u64)
            })
            .collect();
        if grows.is_empty() {
            return Ok(());
        }
        let edges: Vec<&Vec<u64>> = live
            .iter()
            .filter(|idx| (0..nd).all(|d| idx[d] < grid[d]))
            .filter(|idx| {
                grows
                    .iter()
                    .any(|&d| idx[d] == axes[d].chunk_of(data_end[d] as u64))
            })
            .collect();
        let warnings = Warnings::default();
        run_tasks(&edges, opts.threads, |idx| {
            // Elements at or past `keep[d]` along a growing dimension go.
            let keep: Vec<Option<usize>> = (0..nd)
                .map(|d| {
                    grows.contains(&d).then(|| {
                        let len = axes[d].len(idx[d]) as i64;
                        (data_end[d] - start(idx, d)).clamp(0, len) as usize
                    })
                })
                .collect();
            self.clear_chunk_beyond(idx, &keep, opts, &warnings)
        })
    }

    /// Rename the stored chunks at `index` for a move of `shift` chunks at
    /// the low end; those moved off either end of the new grid go to the
    /// parking prefix. Returns the grid indices of the chunks that remain.
    fn shift_chunks(
        &self,
        index: &[Vec<u64>],
        shift: &[i64],
        grid: &[u64],
        journal: &Journal,
        threads: usize,
    ) -> Result<Vec<Vec<u64>>> {
        let nd = shift.len();
        let mut off = Vec::new();
        // (level, from, to): a chunk's new key is free once the chunk that
        // held it has moved, and that chunk lies further along the shift
        // (its index . shift is higher by |shift|^2), so the chunks move in
        // waves of decreasing index . shift, each wave in parallel.
        let mut moves: Vec<(i128, Vec<u64>, Vec<u64>)> = Vec::new();
        for idx in index {
            let to: Vec<i64> = (0..nd).map(|d| idx[d] as i64 + shift[d]).collect();
            if (0..nd).any(|d| to[d] < 0 || to[d] as u64 >= grid[d]) {
                off.push(idx.clone());
                continue;
            }
            let level = (0..nd).map(|d| idx[d] as i128 * shift[d] as i128).sum();
            moves.push((level, idx.clone(), to.iter().map(|&x| x as u64).collect()));
        }
        let away: Vec<(StoreKey, StoreKey)> = off
            .iter()
            .map(|idx| {
                Ok((
                    self.chunk_key_in("", idx)?,
                    self.chunk_key_in(RESIZE_AWAY, idx)?,
                ))
            })
            .collect::<Result<_>>()?;
        self.move_all(&away, journal, threads)?;
        moves.sort_by_key(|m| std::cmp::Reverse(m.0));
        let mut kept = Vec::with_capacity(moves.len());
        for wave in moves.chunk_by(|a, b| a.0 == b.0) {
            if interrupted() {
                return Err(interrupted_error());
            }
            let pairs: Vec<(StoreKey, StoreKey)> = wave
                .iter()
                .map(|(_, from, to)| Ok((self.chunk_key_in("", from)?, self.chunk_key_in("", to)?)))
                .collect::<Result<_>>()?;
            self.move_all(&pairs, journal, threads)?;
            kept.extend(wave.iter().map(|(_, _, to)| to.clone()));
        }
        Ok(kept)
    }

    /// Set the elements of stored chunk `idx` at or past `keep[d]` along
    /// each dimension that has one to the fill value, rewriting the chunk
    /// only when one of them differs (and erasing it when it then holds
    /// nothing else).
    fn clear_chunk_beyond(
        &self,
        idx: &[u64],
        keep: &[Option<usize>],
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<()> {
        let key = self.chunk_key(idx);
        let what = self.chunk_what(&key);
        let Some(raw) = self
            .store
            .get(&key, ByteRange::All)
            .map_err(|e| e.context(&what))?
        else {
            return Ok(());
        };
        let cshape = self.grid.chunk_shape(idx);
        let strides = self.chain.stored_strides(&cshape);
        let cleared = cleared_offsets(&cshape, &strides, keep);
        let ctx = opts.context(warnings, &what);
        let encoded = if self.meta.data_type == DataType::String {
            let fill = self.fill_string()?;
            let mut elems = self.chain.decode_strings(raw, &cshape, &ctx)?;
            if cleared.iter().all(|&o| elems[o] == fill) {
                return Ok(());
            }
            for &o in &cleared {
                elems[o].clone_from(&fill);
            }
            if elems.iter().all(|s| *s == fill) {
                None
            } else {
                Some(self.chain.encode_strings(&elems, &cshape))
            }
        } else {
            let fill = &self.meta.fill_value.bytes;
            let n = fill.len();
            let mut buf = self.chain.decode(raw, &cshape, &ctx)?;
            let at = |o: usize| o * n..(o + 1) * n;
            if cleared.iter().all(|&o| &buf[at(o)] == fill.as_slice()) {
                return Ok(());
            }
            for &o in &cleared {
                buf[at(o)].copy_from_slice(fill);
            }
            if buf.chunks_exact(n).all(|e| e == fill.as_slice()) {
                None
            } else {
                Some(self.chain.encode(buf, &cshape))
            }
        };
        let store = self.writes()?;
        match encoded {
            None => store.erase(&key),
            Some(enc) => store.set(&key, &enc.map_err(|e| e.context(&what))?),
        }
        .map_err(|e| e.context(&what))
    }

    /// The last step of resize(), once the new metadata is stored: erase
    /// the chunks outside the new shape and those parked by the first.
    pub fn resize_finish(&self, opts: IoOptions) -> Result<()> {
        self.check_reshapable()?;
        let nd = self.meta.shape.len();
        let grid = self.meta.grid_shape();
        let outside: Vec<StoreKey> = self
            .stored_chunks("", nd)?
            .iter()
            .filter(|idx| (0..nd).any(|d| idx[d] >= grid[d]))
            .map(|idx| self.chunk_key_in("", idx))
            .collect::<Result<_>>()?;
        self.erase_all(&outside, opts.threads)?;
        self.erase_away(RESIZE_AWAY)
    }

    fn erase_away(&self, away: &str) -> Result<()> {
        let prefix = StorePrefix::new(format!("{}{away}", self.key_prefix()))?;
        self.writes()?
            .erase_prefix(&prefix)
            .map_err(|e| e.context(&self.what()))
    }

    /// Undo `resize_begin` of `shift` on this array (opened with its old
    /// metadata) when its new metadata could not be stored: the renamed
    /// chunks move back, and the parked ones return. Cleared edges and
    /// erased chunks beyond the old data stay as they are (outside the
    /// old shape, they never showed).
    pub fn resize_undo(&self, shift: &[i64]) -> Result<()> {
        let nd = self.meta.shape.len();
        let back: Vec<i64> = shift.iter().map(|s| -s).collect();
        if shift.len() != nd {
            return Err(ZarrError::Argument(format!(
                "{}: a shift of {} dimensions for an array of {nd}",
                self.what(),
                shift.len()
            )));
        }
        let grid: Vec<u64> = self.meta.grid_shape();
        let index = self.stored_chunks("", nd)?;
        // Chunks past the old grid after the move back are those the move
        // out erased nothing for: they stay where they are.
        let index: Vec<Vec<u64>> = index
            .into_iter()
            .filter(|idx| {
                (0..nd).all(|d| {
                    let to = idx[d] as i64 + back[d];
                    to >= 0 && (to as u64) < grid[d]
                })
            })
            .collect();
        let journal = Journal::default();
        if back.iter().any(|&s| s != 0) {
            self.shift_chunks(&index, &back, &grid, &journal, 1)?;
        }
        for idx in self.stored_chunks(RESIZE_AWAY, nd)? {
            self.move_key(
                &self.chunk_key_in(RESIZE_AWAY, &idx)?,
                &self.chunk_key_in("", &idx)?,
            )?;
        }
        Ok(())
    }
}

/// `meta` with the shape `shape`: a rectilinear grid grows to cover it
/// (`ChunkGrid::grown_to`); a regular one needs no change.
pub fn reshaped(meta: &ArrayMetadata, shape: Vec<u64>) -> ArrayMetadata {
    let mut out = meta.clone();
    if let Some(g) = &meta.rectilinear {
        let grown = g.grown_to(&shape);
        out.chunk_shape = grown.longest();
        out.rectilinear = Some(grown);
    }
    out.shape = shape;
    out
}

/// The offsets (in elements, into a decoded chunk of `shape` laid out with
/// `strides`) of the elements at or past `keep[d]` along some dimension.
fn cleared_offsets(shape: &[usize], strides: &[usize], keep: &[Option<usize>]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::new();
    let mut at = vec![0usize; shape.len()];
    for _ in 0..n {
        if (0..shape.len()).any(|d| keep[d].is_some_and(|k| at[d] >= k)) {
            out.push(at.iter().zip(strides).map(|(i, s)| i * s).sum());
        }
        for d in (0..shape.len()).rev() {
            at[d] += 1;
            if at[d] < shape[d] {
                break;
            }
            at[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleared_offsets_follow_the_stored_layout() {
        // A 2 x 3 chunk in C order (strides 3, 1), rows from 1 cleared.
        assert_eq!(
            cleared_offsets(&[2, 3], &[3, 1], &[Some(1), None]),
            vec![3, 4, 5]
        );
        // The same chunk stored column-major (strides 1, 2).
        assert_eq!(
            cleared_offsets(&[2, 3], &[1, 2], &[Some(1), None]),
            vec![1, 3, 5]
        );
        // Columns from 2, or rows from 1.
        assert_eq!(
            cleared_offsets(&[2, 3], &[3, 1], &[Some(1), Some(2)]),
            vec![2, 3, 4, 5]
        );
    }
}
