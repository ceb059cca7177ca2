//! Whole shards from stores that hand values over while they arrive
//! (object stores): each shard's index is asked for by a request of its
//! own, sent with the one for the whole shard, and each inner chunk is
//! decoded as soon as its bytes are in. Decoded only once a whole shard
//! had arrived, a read over a link of limited bandwidth (where the shards
//! in flight share the link and all end near the end of the transfer)
//! decoded nearly everything after the transfer.
//!
//! The result is the one of decoding each whole shard by its own index:
//! once a shard is in, its index is compared with the one asked for
//! early, and a shard whose index differs (rewritten in between) is
//! decoded again from its own bytes.

use super::fetch::{fetch_streamed, Event, StartedFetch};
use super::plan::ShardGrid;
use super::read::ReadInto;
use super::shard::{InnerFetch, ShardGroup, ShardPart, Stored};
use super::{Array, IoOptions};
use crate::codec::sharding::Sharding;
use crate::codec::Warnings;
use crate::error::Result;
use crate::pool::run_tasks;
use crate::store::{ByteRange, Growing, StoreKey};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

impl Array {
    /// The requests of a streamed read of the shards of `whole`: for each,
    /// its index, then all of it.
    pub(super) fn streamed_shard_requests(
        &self,
        sh: &Sharding,
        grid: &ShardGrid,
        whole: &[ShardGroup],
    ) -> Result<Vec<(StoreKey, ByteRange)>> {
        let mut requests = Vec::with_capacity(2 * whole.len());
        for (sidx, _) in whole {
            let index = sh.index_range(&grid.box_of(sidx).0)?;
            let key = self.chunk_key(sidx);
            requests.extend([(key.clone(), index), (key, ByteRange::All)]);
        }
        Ok(requests)
    }

    /// Read the shards of `whole` (each needed whole or nearly), decoding
    /// each inner chunk as soon as its shard's index and its bytes are in.
    pub(super) fn read_shards_streamed(
        &self,
        whole: &[ShardGroup],
        sh: &Sharding,
        grid: &ShardGrid,
        to: ReadInto,
        started: Option<StartedFetch>,
    ) -> Result<()> {
        let (opts, warnings) = (to.opts, to.warnings);
        let requests = self.streamed_shard_requests(sh, grid, whole)?;
        let inner_strides = sh.inner.stored_strides(&sh.inner_shape);
        let shards: Vec<ShardStream> = whole
            .iter()
            .map(|g| ShardStream::new(self.shard_part(sh, grid, g)))
            .collect();
        // Twice the whole-shard window: half of the requests are indexes,
        // so at most twice the budget's shards are ever in flight.
        let in_flight = 2 * self.shard_in_flight(sh, grid);
        fetch_streamed(
            &self.store,
            &requests,
            in_flight,
            opts.threads,
            started,
            |i, event| {
                let shard = &shards[i / 2];
                let jobs = if i % 2 == 0 {
                    shard.index_event(event, opts, warnings)?
                } else {
                    shard.body_event(self, event, opts, warnings)?
                };
                let done = run_tasks(&jobs, crate::pool::threads(), |job| {
                    self.decode_inner(sh, job, &inner_strides, to)
                });
                shard.busy.fetch_sub(jobs.len(), Ordering::AcqRel);
                done
            },
        )
    }
}

/// One shard of a streamed read.
struct ShardStream<'a, 'p> {
    part: ShardPart<'a, 'p>,
    state: Mutex<StreamState>,
    /// Inner chunks handed out and not yet decoded: a shard decoded again
    /// from its own bytes waits for them, so that no inner chunk of the
    /// first pass lands after the second.
    busy: AtomicUsize,
}

#[derive(Default)]
struct StreamState {
    /// The index as asked for early (its entries are in `todo`).
    index: Option<Vec<u8>>,
    /// The shard's bytes, as far as they are in.
    body: Option<Arc<Growing>>,
    /// Inner chunks (position in `part.cs`, byte range) not yet handed
    /// out, the one that ends first last.
    todo: Vec<(usize, u64, u64)>,
    /// The shard is all in and handed out: later events change nothing.
    finished: bool,
}

impl<'a, 'p> ShardStream<'a, 'p> {
    fn new(part: ShardPart<'a, 'p>) -> Self {
        ShardStream {
            part,
            state: Mutex::new(StreamState::default()),
            busy: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The early index is in: the inner chunks it says are not stored
    /// (the fill value), and those whose bytes are in already.
    fn index_event(
        &self,
        event: Event,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let (sh, grid, what) = (
            self.part.sh,
            self.part.grid.as_slice(),
            self.part.what.as_str(),
        );
        let Event::Done(got) = event else {
            return Ok(Vec::new());
        };
        // A missing index: the shard's own bytes decide (when they come).
        let Some(raw) = got.map_err(|e| e.context(what))? else {
            return Ok(Vec::new());
        };
        let raw = Growing::into_vec(raw);
        let ctx = opts.context(warnings, what);
        let entries = sh.decode_index(raw.clone(), grid, &ctx)?;
        let mut st = self.lock();
        if st.finished {
            return Ok(Vec::new());
        }
        let mut jobs = Vec::new();
        for (k, c) in self.part.cs.iter().enumerate() {
            match entries[self.part.position(c)] {
                None => jobs.push(self.part.job_of(c, None)),
                Some((offset, length)) => st.todo.push((k, offset, length)),
            }
        }
        st.todo
            .sort_unstable_by_key(|&(_, o, l)| std::cmp::Reverse(o.saturating_add(l)));
        st.index = Some(raw);
        self.hand_out(&mut st, jobs)
    }

    /// More of the shard is in, or all of it.
    fn body_event(
        &self,
        array: &Array,
        event: Event,
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Vec<InnerFetch<'p>>> {
        let (sh, grid, what) = (
            self.part.sh,
            self.part.grid.as_slice(),
            self.part.what.as_str(),
        );
        let mut st = self.lock();
        if st.finished {
            return Ok(Vec::new());
        }
        match event {
            Event::Grew(body) => {
                st.body = Some(body);
                self.hand_out(&mut st, Vec::new())
            }
            Event::Done(got) => {
                let got = got.map_err(|e| e.context(what))?;
                let same_index = match (&got, &st.index) {
                    (Some(body), Some(early)) => {
                        sh.index_of(body.filled(), grid, what)? == early.as_slice()
                    }
                    _ => false,
                };
                st.finished = true;
                if same_index {
                    st.body = got;
                    let jobs = self.hand_out(&mut st, Vec::new())?;
                    if let Some(&(_, offset, length)) = st.todo.last() {
                        // Names the entry that points past the end.
                        let body = st.body.as_ref().expect("the shard is in");
                        sh.inner_bytes(body.filled(), (offset, length), what)?;
                    }
                    return Ok(jobs);
                }
                // No early index, or another one: the shard's own bytes
                // (or its absence) decide every inner chunk, once the
                // ones handed out from the early index are written.
                st.body = None;
                drop(st);
                while self.busy.load(Ordering::Acquire) > 0 {
                    if crate::pool::interrupted() {
                        return Err(crate::pool::interrupted_error());
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                let jobs = array.split_whole_shard(
                    &self.part,
                    got.map(Growing::into_vec),
                    opts,
                    warnings,
                )?;
                self.busy.fetch_add(jobs.len(), Ordering::AcqRel);
                Ok(jobs)
            }
        }
    }

    /// `jobs` and the inner chunks whose bytes are in, counted as busy.
    fn hand_out(
        &self,
        st: &mut StreamState,
        mut jobs: Vec<InnerFetch<'p>>,
    ) -> Result<Vec<InnerFetch<'p>>> {
        if let (Some(body), Some(_)) = (&st.body, &st.index) {
            let have = body.filled().len() as u64;
            while let Some(&(k, offset, length)) = st.todo.last() {
                match offset.checked_add(length) {
                    Some(end) if end <= have => {
                        st.todo.pop();
                        let range = offset as usize..end as usize;
                        let bytes = Stored::Growing(Arc::clone(body), range);
                        jobs.push(self.part.job_of(self.part.cs[k], Some(bytes)));
                    }
                    _ => break,
                }
            }
        }
        self.busy.fetch_add(jobs.len(), Ordering::AcqRel);
        Ok(jobs)
    }
}
