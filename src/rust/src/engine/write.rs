//! Writes of numeric and logical arrays: each touched chunk gathered from
//! R memory (merged into the stored chunk when the selection covers only
//! part of it), encoded and stored, or erased when it holds nothing but
//! the fill value. Shards covered whole go to `shard`.

use super::plan::{cartesian, chunk_columns, chunk_index, write_spans};
use super::{Array, IoOptions};
use crate::codec::Warnings;
use crate::convert::{self, check_writable, RBuf, RBufPtr, Span};
use crate::error::{try_buffer, try_repeat, Result, ZarrError};
use crate::pool::run_tasks;
use crate::selection::{DimChunk, Selection};
use crate::store::StoreKey;
use crate::words;

/// An interrupt stops a write between chunks, never inside one, and every
/// store replaces a chunk (or shard) whole: say so, since the caller must
/// know that the array now mixes old and new chunks but none is torn.
pub(super) fn stopped_write(e: ZarrError) -> ZarrError {
    match e {
        ZarrError::Interrupted(m) => ZarrError::Interrupted(format!(
            "{m}; the write stopped part way: each chunk holds either its old or its new values"
        )),
        other => other,
    }
}

impl Array {
    /// Refuse a write to a read-only store, out of bounds, or with the
    /// wrong number of values; false when there is nothing to write.
    pub(super) fn check_write(&self, sel: &Selection, n_values: usize) -> Result<bool> {
        let what = self.what();
        self.writes()?;
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
        match self.write_cf() {
            Some(cf) => cf.check_writable(data, self.meta.data_type, &what)?,
            None => check_writable(data, self.meta.data_type, &what)?,
        }
        let src = RBufPtr::from_ref(data, &sel.shape());
        let plan = self.plan(sel);
        let chunks = cartesian(&plan);
        let cshape = self.chunk_shape();
        let strides = self.chain.stored_strides(&cshape);
        let regular = (cshape, strides);
        let m = self.write_materialize();
        let fill = &self.meta.fill_value.bytes;
        let warnings = Warnings::default();
        let straight = self.stores_as_r(src.rtype, &regular.1);
        let sharding = self.partial_sharding_writes();
        // Shards written whole are encoded inner chunk by inner chunk, all
        // shards' inner chunks in one run of tasks (`write_shards`).
        let (whole, chunks): (Vec<_>, Vec<_>) = match sharding {
            Some(_) => chunks.into_iter().partition(|c| {
                let idx = chunk_index(c);
                self.covers_chunk(c, &idx)
            }),
            None => (vec![], chunks),
        };
        if let (Some(sh), false) = (sharding, whole.is_empty()) {
            self.write_shards(sh, &whole, &src, opts.threads)
                .map_err(stopped_write)?;
        }
        let task = |c: &Vec<&DimChunk>| -> Result<()> {
            let idx = chunk_index(c);
            let key = self.chunk_key(&idx);
            let covered = self.covers_chunk(c, &idx);
            let layout = self.chunk_layout(&idx, &regular);
            let (cshape, strides) = (&layout.0, &layout.1);
            if straight && covered && self.write_chunk_straight(c, cshape, &key, &src)? {
                return Ok(());
            }
            let spans: Vec<Vec<Span>> = write_spans(c);
            let chunk_bytes = cshape.iter().product::<usize>() * fill.len();
            let buf = if covered && self.inside_array(&idx) {
                // Every element is about to be written: no fill pass first.
                let mut buf: Vec<u8> = try_buffer(chunk_bytes, &self.chunk_what(&key))?;
                // SAFETY: spans stay inside the chunk and inside `data`, and
                // cover the whole chunk, so all `chunk_bytes` are written
                // before the length is set.
                unsafe {
                    m.write_from(&src, buf.as_mut_ptr(), strides, &spans);
                    buf.set_len(chunk_bytes);
                }
                buf
            } else {
                let old = if covered {
                    None
                } else {
                    self.load_chunk(&idx, opts, &warnings)?
                };
                let mut buf = match old {
                    Some(b) => b,
                    None => try_repeat(fill, cshape.iter().product(), &self.chunk_what(&key))?,
                };
                // SAFETY: spans stay inside the chunk and inside `data`; each
                // task owns its chunk buffer.
                unsafe { m.write_from(&src, buf.as_mut_ptr(), strides, &spans) };
                buf
            };
            let what = self.chunk_what(&key);
            if buf.chunks_exact(fill.len()).all(|e| e == fill.as_slice()) {
                self.writes()?.erase(&key).map_err(|e| e.context(&what))
            } else {
                let enc = self
                    .chain
                    .encode(buf, cshape)
                    .map_err(|e| e.context(&what))?;
                self.writes()?.set(&key, &enc).map_err(|e| e.context(&what))
            }
        };
        run_tasks(&chunks, opts.threads, task).map_err(stopped_write)?;
        Ok(warnings.take())
    }
    /// Store chunk `c`, which the selection covers whole, straight from
    /// its columns in `src` (one part per column), when `stores_as_r`
    /// holds and no element needs converting: an NA would have to become
    /// the fill value. A chunk of nothing but the fill value is erased, as
    /// on the usual path. Returns false when the usual path must do it.
    fn write_chunk_straight(
        &self,
        c: &[&DimChunk],
        shape: &[usize],
        key: &StoreKey,
        src: &RBufPtr,
    ) -> Result<bool> {
        let Some(columns) = chunk_columns(c, shape, &src.strides) else {
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
        let store = self.writes()?;
        if all_fill {
            store.erase(key)
        } else {
            store.set_parts(key, &parts)
        }
        .map_err(|e| e.context(&what))?;
        Ok(true)
    }
}
