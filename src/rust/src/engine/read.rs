//! Reads of arrays without partial sharding: whole chunks fetched,
//! decoded and scattered in parallel; chunks stored as R holds them read
//! straight into the result; byte ranges of uncompressed chunks.

use super::fetch::{fetch_pipelined, in_flight_for, StartedFetch};
use super::plan::{cartesian, chunk_columns, chunk_index, read_spans};
use super::{Array, IoOptions};
use crate::codec::Warnings;
use crate::convert::{self, Lossy, RBufMut, RBufPtr, Span};
use crate::error::{Result, ZarrError};
use crate::pool::run_tasks;
use crate::selection::{DimChunk, Selection};
use crate::store::{ByteRange, Direct, StoreKey};

/// Where a read puts what it decodes (its result, in R's layout), with
/// its options and what it gathers on the way: the codecs' warnings and
/// the values R cannot hold exactly.
#[derive(Clone, Copy)]
pub(super) struct ReadInto<'a> {
    pub(super) dst: &'a RBufPtr,
    pub(super) opts: IoOptions,
    pub(super) warnings: &'a Warnings,
    pub(super) lossy: &'a Lossy,
}

impl Array {
    /// Read `sel` into `out`, a column-major R buffer of `sel.shape()`.
    /// Returns warnings for R to raise.
    pub fn read(&self, sel: &Selection, out: &mut RBufMut, opts: IoOptions) -> Result<Vec<String>> {
        self.read_started(sel, out, opts, None)
    }

    /// Send the requests of `read(sel)` that fetch whole chunks or shards
    /// now, before the result exists (see `StartedFetch`); None for a
    /// store without latency or a selection that is not in the array.
    pub fn start_read(&self, sel: &Selection) -> Result<Option<StartedFetch>> {
        if self.store.as_batched().is_none() || sel.check(&self.meta.shape, &self.what()).is_err() {
            return Ok(None);
        }
        let streamed = self.store.as_streamed().is_some();
        let (requests, in_flight, streamed) = match self.partial_sharding() {
            // As `read_sharded` will ask for them.
            Some(sh) => {
                let grid = self.shard_grid(sh);
                let inner: Vec<u64> = sh.inner_shape.iter().map(|&n| n as u64).collect();
                let plan = sel.plan(&inner);
                let chunks = cartesian(&plan);
                let (whole, _) = super::shard::split_groups(&chunks, &grid);
                let in_flight = self.shard_in_flight(sh, &grid);
                if streamed {
                    let requests = self.streamed_shard_requests(sh, &grid, &whole)?;
                    (requests, 2 * in_flight, true)
                } else {
                    (self.whole_shard_requests(&whole), in_flight, false)
                }
            }
            None => {
                let plan = self.plan(sel);
                let chunks = cartesian(&plan);
                (self.chunk_requests(&chunks), self.chunk_in_flight(), false)
            }
        };
        if requests.is_empty() {
            return Ok(None);
        }
        let store = std::sync::Arc::clone(&self.store);
        StartedFetch::start(store, requests, in_flight, streamed).map(Some)
    }

    /// `read`, taking over `started` (from `start_read(sel)`) for its
    /// fetch.
    pub fn read_started(
        &self,
        sel: &Selection,
        out: &mut RBufMut,
        opts: IoOptions,
        started: Option<StartedFetch>,
    ) -> Result<Vec<String>> {
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
        let warnings = Warnings::default();
        let lossy = Lossy::default();
        let to = ReadInto {
            dst: &dst,
            opts,
            warnings: &warnings,
            lossy: &lossy,
        };
        match self.partial_sharding() {
            Some(sh) => self.read_sharded(sel, sh, to, started)?,
            None => self.read_chunks(sel, to, started)?,
        }
        let mut w = warnings.take();
        w.extend(lossy.warnings(&what));
        Ok(w)
    }
    /// Scatter a decoded chunk (or the fill value, for None) into `dst`.
    pub(super) fn scatter(
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
        let spans: Vec<Vec<Span>> = read_spans(c, base);
        let m = self.materialize();
        let fill = &self.meta.fill_value.bytes;
        let zero = vec![0usize; strides.len()];
        // SAFETY: spans stay inside the chunk (plans split at chunk borders)
        // and inside `dst` (the selection was checked); different chunks
        // map to disjoint output elements.
        unsafe {
            match data {
                Some(d) => m.read_into(d.as_ptr(), strides, dst, &spans, lossy),
                None => m.read_into(fill.as_ptr(), &zero, dst, &spans, lossy),
            }
        }
    }
    /// Read whole chunks: fetch, decode, scatter, in parallel. Stores with
    /// latency fetch many chunks concurrently, as a pipeline.
    fn read_chunks(
        &self,
        sel: &Selection,
        to: ReadInto,
        started: Option<StartedFetch>,
    ) -> Result<()> {
        let (dst, opts, warnings, lossy) = (to.dst, to.opts, to.warnings, to.lossy);
        let plan = self.plan(sel);
        let chunks = cartesian(&plan);
        let shape = self.chunk_shape();
        let strides = self.chain.stored_strides(&shape);
        let regular = (shape, strides);
        if self.store.as_batched().is_none() {
            let direct =
                self.store.as_direct().is_some() && self.stores_as_r(dst.rtype, &regular.1);
            let ranged = self.chain.stores_plain_elements();
            return run_tasks(&chunks, opts.threads, |c| {
                let idx = chunk_index(c);
                let layout = self.chunk_layout(&idx, &regular);
                let (shape, strides) = (&layout.0, &layout.1);
                if direct && self.read_chunk_straight(c, shape, strides, dst, lossy)? {
                    return Ok(());
                }
                if ranged && self.read_chunk_part(c, shape, strides, dst, lossy)? {
                    return Ok(());
                }
                let data = self.load_chunk(&idx, opts, warnings)?;
                self.scatter(data.as_deref(), strides, c, dst, lossy);
                Ok(())
            });
        }
        // Fetched with many requests in flight, each chunk decoded as soon
        // as it is in (see fetch.rs).
        let requests = self.chunk_requests(&chunks);
        fetch_pipelined(
            &self.store,
            &requests,
            self.chunk_in_flight(),
            opts.threads,
            started,
            |i, raw| {
                let key = &requests[i].0;
                let raw = raw.map_err(|e| e.context(&self.chunk_what(key)))?;
                let layout = self.chunk_layout(&chunk_index(&chunks[i]), &regular);
                let data = self.decode_chunk(key, &layout.0, raw, opts, warnings)?;
                self.scatter(data.as_deref(), &layout.1, &chunks[i], dst, lossy);
                Ok(())
            },
        )
    }

    /// Requests of whole chunks, one per chunk.
    fn chunk_requests(&self, chunks: &[Vec<&DimChunk>]) -> Vec<(StoreKey, ByteRange)> {
        chunks
            .iter()
            .map(|c| (self.chunk_key(&chunk_index(c)), ByteRange::All))
            .collect()
    }

    /// How many chunks a read keeps in flight.
    fn chunk_in_flight(&self) -> usize {
        let shape = self.chunk_shape();
        in_flight_for(shape.iter().product::<usize>() * self.meta.data_type.size())
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
        shape: &[usize],
        strides: &[usize],
        dst: &RBufPtr,
        lossy: &Lossy,
    ) -> Result<bool> {
        let Some(reads) = self.store.as_direct() else {
            return Ok(false);
        };
        let Some(columns) = chunk_columns(c, shape, &dst.strides) else {
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
        let key = self.chunk_key(&chunk_index(c));
        match reads
            .get_direct(&key, &mut bufs)
            .map_err(|e| e.context(&self.chunk_what(&key)))?
        {
            Direct::NotDone => Ok(false),
            Direct::Missing => {
                self.scatter(None, strides, c, dst, lossy);
                Ok(true)
            }
            Direct::Done => {
                if self.fill_marks_na() {
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
        shape: &[usize],
        strides: &[usize],
        dst: &RBufPtr,
        lossy: &Lossy,
    ) -> Result<bool> {
        let mut base = Vec::with_capacity(c.len());
        let (mut lo, mut hi) = (0usize, 1usize);
        for ((d, &s), &n) in c.iter().zip(strides).zip(shape) {
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
        let key = self.chunk_key(&chunk_index(c));
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
}
