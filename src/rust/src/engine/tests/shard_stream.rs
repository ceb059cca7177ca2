//! Whole shards read from a store that hands values over while they
//! arrive (engine/shard_stream.rs): exact whatever the pieces and the
//! order of the answers, and a shard rewritten between its index and its
//! body reads as the body says.

use super::*;
use crate::store::{BatchedReads, ByteRange, GrewFn, Growing, StoreKey, StreamedReads};
use shard::sharded_files;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Ranged requests (shard indexes) are answered from `early`, whole
/// values from `late` (the same files, or a later version of them), each
/// body in pieces of `piece` bytes with `grew` told of each.
struct Streaming {
    early: MemoryStore,
    late: MemoryStore,
    piece: usize,
    bodies_first: bool,
    requests: AtomicUsize,
}

fn memory(files: &[(String, Vec<u8>)]) -> MemoryStore {
    let m = MemoryStore::new(false);
    for (k, v) in files {
        m.set_str(k, v).unwrap();
    }
    m
}

impl Streaming {
    fn new(early: &[(String, Vec<u8>)], late: &[(String, Vec<u8>)], piece: usize) -> Streaming {
        Streaming {
            early: memory(early),
            late: memory(late),
            piece,
            bodies_first: false,
            requests: AtomicUsize::new(0),
        }
    }
}

impl Store for Streaming {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        match range {
            ByteRange::All => self.late.get(key, range),
            _ => self.early.get(key, range),
        }
    }
    fn exists(&self, key: &StoreKey) -> Result<bool> {
        self.late.exists(key)
    }
    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        self.late.size(key)
    }
    fn describe(&self) -> String {
        "streaming test store".into()
    }
    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        Some(self)
    }
    fn as_streamed(&self) -> Option<&dyn StreamedReads> {
        Some(self)
    }
}

impl BatchedReads for Streaming {}

impl StreamedReads for Streaming {
    fn get_each_growing(
        &self,
        requests: &[(StoreKey, ByteRange)],
        _in_flight: usize,
        grew: GrewFn,
        arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
    ) {
        let mut order: Vec<usize> = (0..requests.len()).collect();
        if self.bodies_first {
            order.sort_by_key(|&i| (requests[i].1 != ByteRange::All, i));
        }
        for i in order {
            let (key, range) = &requests[i];
            let got = match self.get(key, *range) {
                Ok(Some(v)) => {
                    let (value, mut filler) = Growing::with_len(v.len()).unwrap();
                    for piece in v.chunks(self.piece) {
                        assert!(filler.push(piece));
                        if !value.is_complete() {
                            grew(i, &value);
                        }
                    }
                    Ok(Some(value))
                }
                other => other.map(|v| v.map(Growing::whole)),
            };
            if !arrived(i, got) {
                return;
            }
        }
    }
}

/// All of array "s" of `sharded_files`, read from `store` with `threads`.
fn read_all(store: Streaming, threads: usize) -> (Result<Vec<i32>>, usize) {
    let store = Arc::new(store);
    let a = Array::open(store.clone(), "s").unwrap();
    let before = store.requests.load(Ordering::SeqCst);
    let mut out = vec![0i32; 96];
    let got = a
        .read(
            &Selection::all(&[8, 12]),
            &mut RBufMut::Integer(&mut out),
            opts(threads),
        )
        .map(|_| out);
    (got, store.requests.load(Ordering::SeqCst) - before)
}

#[test]
fn whole_shards_read_exactly_whatever_the_pieces_and_the_order() {
    let files = sharded_files(0);
    let want: Vec<i32> = (0..96).collect();
    for piece in [1, 7, 100, 1 << 20] {
        for bodies_first in [false, true] {
            for threads in [1, 2] {
                let mut store = Streaming::new(&files, &files, piece);
                store.bodies_first = bodies_first;
                let (got, requests) = read_all(store, threads);
                assert_eq!(got.unwrap(), want, "pieces of {piece}, {bodies_first}");
                // Each of the 4 shards' index, then the whole shard.
                assert_eq!(requests, 8);
            }
        }
    }
}

#[test]
fn a_shard_rewritten_between_its_index_and_its_body_reads_as_its_body() {
    let old = sharded_files(0);
    let new = sharded_files(1000);
    let want: Vec<i32> = (1000..1096).collect();
    for piece in [5, 1 << 20] {
        for bodies_first in [false, true] {
            let mut store = Streaming::new(&old, &new, piece);
            store.bodies_first = bodies_first;
            assert_eq!(read_all(store, 2).0.unwrap(), want);
        }
    }
}

#[test]
fn a_shard_gone_or_new_between_its_index_and_its_body_reads_as_its_body() {
    let files = sharded_files(0);
    let without = |key: &str| -> Vec<(String, Vec<u8>)> {
        files.iter().filter(|(k, _)| k != key).cloned().collect()
    };
    // Shard (1, 1) holds rows 4..8 and columns 6..12 of the 8 x 12
    // result (R's order); a missing shard reads as NA.
    let in_last_shard = |i: usize| i % 8 >= 4 && i / 8 >= 6;
    let want_gone: Vec<i32> = (0..96)
        .map(|i| {
            if in_last_shard(i) {
                NA_INTEGER
            } else {
                i as i32
            }
        })
        .collect();
    let gone = Streaming::new(&files, &without("s/c/1/1"), 3);
    assert_eq!(read_all(gone, 2).0.unwrap(), want_gone);
    let new = Streaming::new(&without("s/c/1/1"), &files, 3);
    assert_eq!(read_all(new, 2).0.unwrap(), (0..96).collect::<Vec<i32>>());
}

#[test]
fn a_streamed_read_takes_over_its_started_fetch() {
    let files = sharded_files(0);
    let store = Arc::new(Streaming::new(&files, &files, 10));
    let a = Array::open(store.clone(), "s").unwrap();
    let before = store.requests.load(Ordering::SeqCst);
    let taken = crate::engine::fetches_taken_over();
    let all = Selection::all(&[8, 12]);
    let started = a.start_read(&all).unwrap();
    assert!(started.is_some());
    let mut out = vec![0i32; 96];
    a.read_started(&all, &mut RBufMut::Integer(&mut out), opts(2), started)
        .unwrap();
    assert_eq!(out, (0..96).collect::<Vec<i32>>());
    // Sent once: by the started fetch, which the read took over.
    assert_eq!(store.requests.load(Ordering::SeqCst) - before, 8);
    assert!(crate::engine::fetches_taken_over() > taken);
}
