//! resize() and promote() in the engine: chunks renamed, parked, cleared
//! and erased, and a run that stops part way undone.

use super::*;
use crate::engine::ResizeRequest;
use crate::store::{Listing, StorePrefix, Writes};
use std::time::Duration;

/// A memory store whose writes take a while, so that an interrupt check
/// comes due while a resize runs.
struct Slow(MemoryStore);

impl Store for Slow {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        self.0.get(key, range)
    }
    fn exists(&self, key: &StoreKey) -> Result<bool> {
        self.0.exists(key)
    }
    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        self.0.size(key)
    }
    fn describe(&self) -> String {
        "slow memory store".into()
    }
    fn as_writable(&self) -> Option<&dyn Writes> {
        Some(self)
    }
    fn as_listable(&self) -> Option<&dyn Listing> {
        self.0.as_listable()
    }
}

impl Writes for Slow {
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        std::thread::sleep(Duration::from_millis(3));
        self.0.set(key, value)
    }
    fn erase(&self, key: &StoreKey) -> Result<()> {
        self.0.erase(key)
    }
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        self.0.erase_prefix(prefix)
    }
}

/// A 1-d int32 array "a" of `n` elements 1..=n in chunks of `chunk`.
fn vector(store: Arc<dyn Store>, n: u64, chunk: u64, codecs: Value) -> Array {
    let a = Array::create(
        store,
        "a",
        meta(doc("int32", &[n], &[chunk], json!(-1), codecs)),
    )
    .unwrap();
    let data: Vec<i32> = (1..=n as i32).collect();
    a.write(&Selection::all(&[n]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    a
}

fn read_all(a: &Array) -> Vec<i32> {
    let n = a.meta.shape.iter().product::<u64>() as usize;
    let mut out = vec![0i32; n];
    a.read(
        &Selection::all(&a.meta.shape),
        &mut RBufMut::Integer(&mut out),
        opts(2),
    )
    .unwrap();
    out
}

/// The array at `a`'s place with metadata `meta`, as after R stored it.
fn reopened(a: &Array, meta: ArrayMetadata) -> Array {
    Array::with_metadata(a.store.clone(), &a.path, meta).unwrap()
}

fn low(n: i64) -> ResizeRequest {
    ResizeRequest {
        low: vec![n],
        ..Default::default()
    }
}

const NA: i32 = convert::NA_INTEGER;

#[test]
fn a_low_end_move_renames_chunks_in_parallel_and_keeps_every_value() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = vector(store.clone(), 10, 2, c_order());
    let before = stored(&store, "a/c/");
    let r = a.resize_begin(&low(4), opts(3)).unwrap().unwrap();
    assert_eq!(r.shift, vec![2]);
    assert_eq!(r.meta.shape, vec![14]);
    let b = reopened(&a, r.meta);
    b.resize_finish(opts(3)).unwrap();
    let mut want = vec![NA; 4];
    want.extend(1..=10);
    assert_eq!(read_all(&b), want);
    // The same bytes, two chunks along.
    let after = stored(&store, "a/c/");
    let renamed: Vec<(String, Vec<u8>)> = before
        .into_iter()
        .map(|(k, v)| {
            let i: u64 = k.rsplit('/').next().unwrap().parse().unwrap();
            (format!("a/c/{}", i + 2), v)
        })
        .collect();
    assert_eq!(after, renamed);
}

#[test]
fn a_shrink_of_the_low_end_parks_chunks_until_finish_or_undo() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = vector(store.clone(), 8, 2, c_order());
    let before = stored(&store, "a/");
    let r = a.resize_begin(&low(-4), opts(2)).unwrap().unwrap();
    assert_eq!(r.meta.shape, vec![4]);
    assert_eq!(store.list_prefix_str("a/__resize/").unwrap().len(), 2);
    // The metadata could not be stored: everything goes back.
    a.resize_undo(&r.shift).unwrap();
    assert_eq!(stored(&store, "a/"), before);
    assert_eq!(read_all(&a), (1..=8).collect::<Vec<_>>());
    let r = a.resize_begin(&low(-4), opts(2)).unwrap().unwrap();
    let b = reopened(&a, r.meta);
    b.resize_finish(opts(2)).unwrap();
    assert_eq!(read_all(&b), vec![5, 6, 7, 8]);
    assert!(store.list_prefix_str("a/__resize/").unwrap().is_empty());
}

#[test]
fn an_interrupted_low_end_move_is_undone_and_the_array_reads_as_before() {
    fn yes(_: usize, _: usize) -> bool {
        true
    }
    let store: Arc<dyn Store> = Arc::new(Slow(MemoryStore::new(false)));
    let a = vector(store.clone(), 60, 1, c_order());
    let before = stored(&store, "a/");
    let e =
        crate::pool::with_interrupt_check(yes, || a.resize_begin(&low(1), opts(1))).unwrap_err();
    assert_eq!(e.kind(), "interrupted");
    assert_eq!(stored(&store, "a/"), before);
    assert_eq!(read_all(&a), (1..=60).collect::<Vec<_>>());
}

#[test]
fn growth_clears_the_cut_off_part_of_edge_chunks_in_either_storage_order() {
    for codecs in [f_order(2), c_order()] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = Array::create(
            store.clone(),
            "m",
            meta(doc("int32", &[6, 4], &[4, 3], json!(-1), codecs)),
        )
        .unwrap();
        let data: Vec<i32> = (1..=24).collect();
        a.write(&Selection::all(&[6, 4]), &RBuf::Integer(&data), opts(2))
            .unwrap();
        let shrink = ResizeRequest {
            new_shape: Some(vec![5, 2]),
            ..Default::default()
        };
        let r = a.resize_begin(&shrink, opts(2)).unwrap().unwrap();
        let b = reopened(&a, r.meta);
        b.resize_finish(opts(2)).unwrap();
        let grow = ResizeRequest {
            new_shape: Some(vec![6, 4]),
            ..Default::default()
        };
        let r = b.resize_begin(&grow, opts(2)).unwrap().unwrap();
        let c = reopened(&b, r.meta);
        c.resize_finish(opts(2)).unwrap();
        // column-major: (i, j) is element i + 6 j, value i + 6 j + 1
        let want: Vec<i32> = (0..24)
            .map(|k| if k % 6 < 5 && k / 6 < 2 { k + 1 } else { NA })
            .collect();
        assert_eq!(read_all(&c), want);
    }
}

#[test]
fn a_chunk_left_with_nothing_but_fill_is_erased() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = vector(store.clone(), 6, 4, c_order());
    a.write(&range_sel(&[(4, 1)]), &RBuf::Integer(&[NA]), opts(1))
        .unwrap();
    let shrink = ResizeRequest {
        new_shape: Some(vec![5]),
        ..Default::default()
    };
    let r = a.resize_begin(&shrink, opts(1)).unwrap().unwrap();
    let b = reopened(&a, r.meta);
    b.resize_finish(opts(1)).unwrap();
    assert!(store.get_str("a/c/1", ByteRange::All).unwrap().is_some());
    let grow = ResizeRequest {
        new_shape: Some(vec![8]),
        ..Default::default()
    };
    b.resize_begin(&grow, opts(1)).unwrap().unwrap();
    assert!(store.get_str("a/c/1", ByteRange::All).unwrap().is_none());
}

#[test]
fn promote_parks_the_chunks_then_gives_them_keys_of_one_more_dimension() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = vector(store.clone(), 4, 2, f_order(1));
    let before = stored(&store, "a/c/");
    let meta = a.promote_begin(1, opts(2)).unwrap();
    assert_eq!(meta.shape, vec![4, 1]);
    assert_eq!(meta.chunk_shape, vec![2, 1]);
    assert_eq!(meta.codecs[0]["configuration"]["order"], json!([1, 0]));
    assert!(stored(&store, "a/c/").is_empty());
    let b = reopened(&a, meta);
    b.promote_finish(1, opts(2)).unwrap();
    let after = stored(&store, "a/c/");
    let keys: Vec<&str> = after.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, vec!["a/c/0/0", "a/c/1/0"]);
    assert_eq!(
        after.iter().map(|(_, v)| v).collect::<Vec<_>>(),
        before.iter().map(|(_, v)| v).collect::<Vec<_>>()
    );
    assert_eq!(read_all(&b), vec![1, 2, 3, 4]);
    // An undo brings parked chunks back to their old keys.
    let c = vector(store.clone(), 4, 2, c_order());
    let before = stored(&store, "a/");
    c.promote_begin(0, opts(2)).unwrap();
    c.promote_undo().unwrap();
    assert_eq!(stored(&store, "a/"), before);
}

#[test]
fn resize_refuses_what_it_cannot_do_before_anything_changes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = vector(store.clone(), 4, 2, c_order());
    let e = a
        .resize_begin(
            &ResizeRequest {
                high: vec![-4],
                ..Default::default()
            },
            opts(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "argument");
    assert!(e.message().contains("non-positive extent (0)"), "{e:?}");
    assert!(a.resize_begin(&low(0), opts(1)).unwrap().is_none());
    let e = a.promote_begin(2, opts(1)).unwrap_err();
    assert!(e.message().contains("between 1 and 2"), "{e:?}");
}
