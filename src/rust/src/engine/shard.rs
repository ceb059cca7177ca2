//! Sharded arrays: reads inner chunk by inner chunk (only the byte ranges
//! the selection needs, after each touched shard's index), and writes of
//! shards the selection covers whole, encoded straight from R memory.

use super::fetch::{fetch_pipelined, in_flight_for, StartedFetch};
use super::plan::{
    cartesian, chunk_index, group_by_shard, inner_write_spans, position_in_shard, Chunk, ShardGrid,
    BATCH,
};
use super::read::ReadInto;
use super::{Array, IoOptions};
use crate::codec::sharding::{Buffers, Sharding};
use crate::codec::Warnings;
use crate::convert::{RBufPtr, Span};
use crate::error::{Result, ZarrError};
use crate::pool::{collect_tasks, run_tasks};
use crate::selection::{DimChunk, Selection};
use crate::store::{get_pinned, ByteRange, StoreKey};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Reads of one shard before a shard that keeps changing is an error.
const SHARD_READ_ATTEMPTS: usize = 3;

impl Array {
    /// Read a sharded array one inner chunk at a time: fetch each touched
    /// shard's index, then only the byte ranges of the inner chunks the
    /// selection needs (the whole shard when it needs most of them).
    pub(super) fn read_sharded(
        &self,
        sel: &Selection,
        sh: &Sharding,
        to: ReadInto,
        started: Option<StartedFetch>,
    ) -> Result<()> {
        let (opts, warnings) = (to.opts, to.warnings);
        let inner: Vec<u64> = sh.inner_shape.iter().map(|&n| n as u64).collect();
        let grid = self.shard_grid(sh);
        let plan = sel.plan(&inner);
        let chunks = cartesian(&plan);
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        if self.store.as_batched().is_none() {
            return self.read_sharded_local(&chunks, sh, &grid, to);
        }
        let (whole, ranged) = split_groups(&chunks, &grid);
        if self.store.as_streamed().is_some() {
            self.read_shards_streamed(&whole, sh, &grid, to, started)?;
        } else {
            self.read_whole_shards(&whole, sh, &grid, to, started)?;
        }
        // Shards needed in part: each one's index, then the byte ranges of
        // its inner chunks, a shard per task, in rounds of up to BATCH
        // inner chunks (to bound memory), each decoded in parallel.
        for round in shard_rounds(&ranged) {
            let fetched = collect_tasks(round, opts.threads, |group| {
                let part = self.shard_part(sh, &grid, group);
                self.fetch_inner_chunks(&part, opts, warnings)
            })?;
            let jobs: Vec<InnerFetch> = fetched.into_iter().flatten().collect();
            run_tasks(&jobs, opts.threads, |job| {
                self.decode_inner(sh, job, &inner_strides, to)
            })?;
        }
        Ok(())
    }

    /// Shards needed (mostly) whole: one request each, all in flight at
    /// once within the fetch budget, each decoded as soon as it is in by
    /// the thread that takes it (a read of one shard spreads its inner
    /// chunks over all threads).
    fn read_whole_shards(
        &self,
        whole: &[ShardGroup],
        sh: &Sharding,
        grid: &ShardGrid,
        to: ReadInto,
        started: Option<StartedFetch>,
    ) -> Result<()> {
        let (opts, warnings) = (to.opts, to.warnings);
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        let requests = self.whole_shard_requests(whole);
        fetch_pipelined(
            &self.store,
            &requests,
            self.shard_in_flight(sh, grid),
            opts.threads,
            started,
            |i, got| {
                let part = self.shard_part(sh, grid, &whole[i]);
                let got = got.map_err(|e| e.context(&part.what))?;
                let jobs = self.split_whole_shard(&part, got, opts, warnings)?;
                run_tasks(&jobs, crate::pool::threads(), |job| {
                    self.decode_inner(sh, job, &inner_strides, to)
                })
            },
        )
    }

    /// Requests of the shards of `whole`, each whole.
    pub(super) fn whole_shard_requests(&self, whole: &[ShardGroup]) -> Vec<(StoreKey, ByteRange)> {
        whole
            .iter()
            .map(|(sidx, _)| (self.chunk_key(sidx), ByteRange::All))
            .collect()
    }

    /// Where the inner chunks of this array fall among its shards.
    pub(super) fn shard_grid<'a>(&'a self, sh: &Sharding) -> ShardGrid<'a> {
        ShardGrid::new(&self.grid.axes, &sh.inner_shape)
    }

    /// How many whole shards a read keeps in flight.
    pub(super) fn shard_in_flight(&self, sh: &Sharding, grid: &ShardGrid) -> usize {
        let per_shard: usize = grid.largest().iter().product();
        in_flight_for(
            per_shard * sh.inner_shape.iter().product::<usize>() * self.meta.data_type.size(),
        )
    }

    /// The shard of `group` as one read sees it.
    pub(super) fn shard_part<'a, 'p>(
        &self,
        sh: &'a Sharding,
        grid: &ShardGrid,
        group: &'a ShardGroup<'p>,
    ) -> ShardPart<'a, 'p> {
        let key = self.chunk_key(&group.0);
        let what = self.chunk_what(&key);
        let (grid, origin) = grid.box_of(&group.0);
        ShardPart {
            sh,
            grid,
            origin,
            key,
            what,
            cs: &group.1,
        }
    }

    /// Decode one fetched inner chunk (or take the fill value, when it is
    /// not stored) and scatter it into `dst`.
    pub(super) fn decode_inner(
        &self,
        sh: &Sharding,
        job: &InnerFetch,
        inner_strides: &[usize],
        to: ReadInto,
    ) -> Result<()> {
        let (dst, opts, warnings, lossy) = (to.dst, to.opts, to.warnings, to.lossy);
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
                Some(match b {
                    Stored::Own(v) => sh.inner.decode(v, &sh.inner_shape, &ctx)?,
                    Stored::Part(shard, range) => {
                        sh.inner
                            .decode_slice(&shard[range], &sh.inner_shape, &ctx)?
                    }
                    Stored::Growing(shard, range) => {
                        sh.inner
                            .decode_slice(&shard.filled()[range], &sh.inner_shape, &ctx)?
                    }
                })
            }
        };
        self.scatter(data.as_deref(), inner_strides, job.chunk, dst, lossy);
        Ok(())
    }

    /// The inner chunks `part.cs` of a shard fetched whole (None: the
    /// shard is missing), each with its stored bytes.
    pub(super) fn split_whole_shard<'p>(
        &self,
        part: &ShardPart<'_, 'p>,
        got: Option<Vec<u8>>,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let (sh, grid, what) = (part.sh, part.grid.as_slice(), part.what.as_str());
        let Some(data) = got else {
            return Ok(part.cs.iter().map(|c| part.job(c, None)).collect());
        };
        let ctx = opts.context(warnings, what);
        let entries = sh.decode_index(sh.index_of(&data, grid, what)?.to_vec(), grid, &ctx)?;
        // The inner chunks decode from the shard's buffer, shared by their
        // tasks: copied out one by one, they were the whole shard again.
        let data = std::sync::Arc::new(data);
        part.cs
            .iter()
            .map(|c| {
                let bytes = match entries[part.position(c)] {
                    None => None,
                    Some(e) => {
                        // Checks that the entry lies inside the shard.
                        let len = sh.inner_bytes(&data, e, what)?.len();
                        let start = e.0 as usize;
                        Some(Stored::Part(data.clone(), start..start + len))
                    }
                };
                Ok(part.job_of(c, bytes))
            })
            .collect()
    }

    /// `read_sharded` on a store without latency: all touched shard
    /// indexes first, then each task reads its inner chunk's byte range
    /// itself, decodes and scatters it. No shard is held in memory, and the
    /// stored bytes are copied once.
    fn read_sharded_local(
        &self,
        chunks: &[Chunk],
        sh: &Sharding,
        shards: &ShardGrid,
        to: ReadInto,
    ) -> Result<()> {
        let (dst, opts, warnings, lossy) = (to.dst, to.opts, to.warnings, to.lossy);
        let groups = group_by_shard(chunks, shards);
        // Each shard's index and inner chunks are read from one version of
        // it (`get_pinned`): a shard rewritten meanwhile may hold another
        // inner chunk at the offsets of the old index.
        let indexes = collect_tasks(&groups, opts.threads, |(sidx, _)| {
            let key = self.chunk_key(sidx);
            let what = self.chunk_what(&key);
            let ctx = opts.context(warnings, &what);
            let (grid, origin) = shards.box_of(sidx);
            let index = get_pinned(&*self.store, &key, sh.index_range(&grid)?)
                .map_err(|e| e.context(&what))?;
            let entries = match index {
                Some((bytes, pinned)) => Some((sh.decode_index(bytes, &grid, &ctx)?, pinned)),
                None => None,
            };
            Ok((key, entries, grid, origin))
        })?;
        let mut jobs = Vec::with_capacity(chunks.len());
        for ((_, cs), (key, entries, grid, origin)) in groups.iter().zip(&indexes) {
            for c in cs {
                let entry = entries.as_ref().and_then(|(e, pinned)| {
                    e[position_in_shard(c, grid, origin)].map(|entry| (entry, pinned.as_ref()))
                });
                jobs.push((*c, key.as_str(), entry));
            }
        }
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        run_tasks(&jobs, opts.threads, |&(c, key, entry)| {
            let data = match entry {
                None => None,
                Some(((offset, length), pinned)) => {
                    let what = format!(
                        "{} (inner chunk {:?})",
                        self.chunk_what(key),
                        chunk_index(c)
                    );
                    let bytes = pinned
                        .get(ByteRange::Range { offset, length })
                        .map_err(|e| e.context(&what))?;
                    let ctx = opts.context(warnings, &what);
                    Some(sh.inner.decode(bytes, &sh.inner_shape, &ctx)?)
                }
            };
            self.scatter(data.as_deref(), &inner_strides, c, dst, lossy);
            Ok(())
        })
    }

    /// The stored bytes of the inner chunks a read needs from a shard it
    /// needs only in part (None for those not stored, or when the shard is
    /// missing): its index, then their byte ranges. The index and the
    /// inner chunks come from one version of the shard: a shard replaced
    /// between the two reads (a store that can tell gives a `Conflict`) is
    /// read again, up to `SHARD_READ_ATTEMPTS` times.
    fn fetch_inner_chunks<'p>(
        &self,
        part: &ShardPart<'_, 'p>,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let mut attempt = 1;
        loop {
            match self.fetch_inner_once(part, opts, warnings) {
                Err(ZarrError::Conflict(_)) if attempt < SHARD_READ_ATTEMPTS => attempt += 1,
                Err(ZarrError::Conflict(why)) => {
                    return Err(ZarrError::Conflict(format!(
                        "{}: the shard changed while it was read, {attempt} times ({why})",
                        part.what
                    )))
                }
                other => return other,
            }
        }
    }

    /// One attempt of `fetch_inner_chunks`.
    fn fetch_inner_once<'p>(
        &self,
        part: &ShardPart<'_, 'p>,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let (sh, grid, what) = (part.sh, part.grid.as_slice(), part.what.as_str());
        let ctx = opts.context(warnings, what);
        let Some((index_bytes, pinned)) =
            get_pinned(&*self.store, &part.key, sh.index_range(grid)?)
                .map_err(|e| e.context(what))?
        else {
            return Ok(part.cs.iter().map(|c| part.job(c, None)).collect());
        };
        let entries = sh.decode_index(index_bytes, grid, &ctx)?;
        let mut out = Vec::with_capacity(part.cs.len());
        let mut ranged = Vec::new();
        let mut ranges = Vec::new();
        for c in part.cs {
            match entries[part.position(c)] {
                None => out.push(part.job(c, None)),
                Some((offset, length)) => {
                    ranged.push(*c);
                    ranges.push(ByteRange::Range { offset, length });
                }
            }
        }
        for (c, got) in ranged.into_iter().zip(pinned.get_many(&ranges)) {
            // A changed shard stays a Conflict, for the caller to retry.
            let bytes = got.map_err(|e| match e {
                ZarrError::Conflict(_) => e,
                e => e.context(what),
            })?;
            out.push(part.job(c, Some(bytes)));
        }
        Ok(out)
    }
    /// Shards `shards`, each covered whole by the write, encoded straight
    /// from the R buffer `src`: every inner chunk of every shard is a task
    /// of one run, and the task that encodes a shard's last inner chunk
    /// stores the shard (or erases it, when it holds only the fill value).
    /// With a task per shard, the last shards ran one per thread: 16
    /// shards on 2 threads left a thread idle for half a shard, and 3
    /// shards left one idle for a whole shard.
    pub(super) fn write_shards(
        &self,
        sh: &Sharding,
        shards: &[Chunk],
        src: &RBufPtr,
        threads: usize,
    ) -> Result<()> {
        let (grid, positions) = sh.inner_positions(&self.chunk_shape())?;
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        let buffers = Buffers::default();
        // A shard's key, its encoded inner chunks as they come, and how
        // many are still to come.
        struct Pending {
            key: StoreKey,
            slots: Vec<Mutex<Option<Vec<u8>>>>,
            left: AtomicUsize,
        }
        let pending: Vec<Pending> = shards
            .iter()
            .map(|c| Pending {
                key: self.chunk_key(&chunk_index(c)),
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
            let store = self.writes()?;
            match sh.assemble_stored(encoded, &grid).map_err(in_shard)? {
                Some(parts) => {
                    let stored = store.set_parts(&shard.key, &parts.parts());
                    buffers.give_all(parts.into_buffers());
                    stored
                }
                None => store.erase(&shard.key),
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
        let spans: Vec<Vec<Span>> = inner_write_spans(c, idx, &sh.inner_shape);
        let covered: usize = spans
            .iter()
            .map(|runs| runs.iter().map(|r| r.len).sum::<usize>())
            .product();
        if covered < inner_n {
            // Past the array's edge: those elements hold the fill value.
            for e in buf.chunks_exact_mut(fill.len()) {
                e.copy_from_slice(fill);
            }
        }
        // SAFETY: spans stay inside the inner chunk and inside `src`.
        unsafe {
            self.write_materialize()
                .write_from(src, buf.as_mut_ptr(), inner_strides, &spans)
        };
    }
}

/// The inner chunks a read needs from one shard, by the shard's index.
pub(super) type ShardGroup<'p> = (Vec<u64>, Vec<&'p Vec<&'p DimChunk>>);

/// The shards `chunks` (inner chunks of a read) fall in, split into
/// those the read needs most of (fetched whole) and the others (fetched
/// by ranges after their index).
pub(super) fn split_groups<'p>(
    chunks: &'p [Vec<&'p DimChunk>],
    shards: &ShardGrid,
) -> (Vec<ShardGroup<'p>>, Vec<ShardGroup<'p>>) {
    group_by_shard(chunks, shards)
        .into_iter()
        .partition(|(sidx, cs)| cs.len() * 2 > shards.box_of(sidx).0.iter().product())
}

/// One shard of a read: its codec, inner chunk grid and the grid index of
/// its first inner chunk, key, name for errors, and the inner chunks the
/// read needs from it.
pub(super) struct ShardPart<'a, 'p> {
    pub(super) sh: &'a Sharding,
    pub(super) grid: Vec<usize>,
    origin: Vec<u64>,
    key: StoreKey,
    pub(super) what: String,
    pub(super) cs: &'a [&'p Vec<&'p DimChunk>],
}

impl<'p> ShardPart<'_, 'p> {
    /// The index entry of inner chunk `c` of this shard.
    pub(super) fn position(&self, c: &[&DimChunk]) -> usize {
        position_in_shard(c, &self.grid, &self.origin)
    }

    fn job(&self, chunk: &'p Vec<&'p DimChunk>, bytes: Option<Vec<u8>>) -> InnerFetch<'p> {
        self.job_of(chunk, bytes.map(Stored::Own))
    }

    pub(super) fn job_of(
        &self,
        chunk: &'p Vec<&'p DimChunk>,
        bytes: Option<Stored>,
    ) -> InnerFetch<'p> {
        InnerFetch {
            chunk,
            bytes: Mutex::new(bytes),
            key: self.key.clone(),
        }
    }
}

/// `groups` cut into rounds of at most BATCH inner chunks (at least one
/// shard each), in order.
fn shard_rounds<'g, 'p>(groups: &'g [ShardGroup<'p>]) -> Vec<&'g [ShardGroup<'p>]> {
    let mut rounds = Vec::new();
    let (mut start, mut n) = (0, 0);
    for (i, (_, cs)) in groups.iter().enumerate() {
        if i > start && n + cs.len() > BATCH {
            rounds.push(&groups[start..i]);
            (start, n) = (i, 0);
        }
        n += cs.len();
    }
    if start < groups.len() {
        rounds.push(&groups[start..]);
    }
    rounds
}

/// The stored bytes of an inner chunk: its own (a ranged read), or a
/// range of the whole shard's (fetched whole, or arriving).
pub(super) enum Stored {
    Own(Vec<u8>),
    Part(std::sync::Arc<Vec<u8>>, std::ops::Range<usize>),
    Growing(
        std::sync::Arc<crate::store::Growing>,
        std::ops::Range<usize>,
    ),
}

/// An inner chunk of a shard as fetched: the part of the selection it
/// holds, its stored bytes (None when not stored) and its shard's key.
pub(super) struct InnerFetch<'p> {
    chunk: &'p Vec<&'p DimChunk>,
    // Taken (not cloned) by the task that decodes it.
    bytes: std::sync::Mutex<Option<Stored>>,
    key: StoreKey,
}

impl InnerFetch<'_> {
    fn position(&self) -> Vec<u64> {
        chunk_index(self.chunk)
    }
}
