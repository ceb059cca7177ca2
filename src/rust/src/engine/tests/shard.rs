//! Sharded arrays: reads of any region, whole and partial shard writes,
//! missing shards and inner chunks, bad shard indexes.

use super::*;

/// The whole of an int32 array of `shape`, read with `threads` threads.
fn read_all_ints(a: &Array, shape: &[u64], threads: usize) -> Vec<i32> {
    let mut out = vec![0i32; shape.iter().product::<u64>() as usize];
    a.read(
        &Selection::all(shape),
        &mut RBufMut::Integer(&mut out),
        opts(threads),
    )
    .unwrap();
    out
}

#[test]
fn sharded_arrays_round_trip_and_read_any_region() {
    for location in ["start", "end"] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = Array::create(
            store.clone(),
            "s",
            meta(doc(
                "int32",
                &[9, 13],
                &[4, 6],
                json!(-1),
                sharded(location),
            )),
        )
        .unwrap();
        let data: Vec<i32> = (0..117).collect();
        a.write(&Selection::all(&[9, 13]), &RBuf::Integer(&data), opts(2))
            .unwrap();
        // 3 x 3 shards, edge shards included
        assert_eq!(store.list_prefix_str("s/c/").unwrap().len(), 9);
        for threads in [1, 2] {
            assert_eq!(read_all_ints(&a, &[9, 13], threads), data, "{location}");
            // a small region: partial reads of one inner chunk
            let mut out = vec![0i32; 2];
            a.read(
                &range_sel(&[(5, 1), (7, 2)]),
                &mut RBufMut::Integer(&mut out),
                opts(threads),
            )
            .unwrap();
            assert_eq!(out, vec![5 + 9 * 7, 5 + 9 * 8]);
        }
    }
}

#[test]
fn whole_shards_of_fill_are_not_stored() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "f",
        meta(doc("int32", &[8, 12], &[4, 6], json!(-1), sharded("end"))),
    )
    .unwrap();
    // column-major 8 x 12: columns 0-5 are shard column 0. Shard (0, 0)
    // gets one value, shard (1, 0) stays fill, the right half is data.
    let mut data = vec![-1i32; 96];
    data[0] = 5;
    for (i, v) in data.iter_mut().enumerate().skip(48) {
        *v = i as i32;
    }
    store.set_str("f/c/1/0", b"stale").unwrap();
    a.write(&Selection::all(&[8, 12]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    assert_eq!(
        store.list_prefix_str("f/c/").unwrap(),
        vec!["f/c/0/0", "f/c/0/1", "f/c/1/1"]
    );
    let mut out = vec![0i32; 96];
    a.read(
        &Selection::all(&[8, 12]),
        &mut RBufMut::Integer(&mut out),
        opts(1),
    )
    .unwrap();
    let want: Vec<i32> = data
        .iter()
        .map(|&v| if v == -1 { NA_INTEGER } else { v })
        .collect();
    assert_eq!(out, want);
    // shard (0, 0) holds one inner chunk of its four: the index plus one
    let shard = store.get_str("f/c/0/0", ByteRange::All).unwrap().unwrap();
    let alone = store.get_str("f/c/0/1", ByteRange::All).unwrap().unwrap();
    assert!(shard.len() < alone.len());
}

#[test]
fn shards_store_the_same_bytes_whatever_the_thread_count() {
    // 9 x 13 in shards of 4 x 6 (edge shards included); the second write
    // covers shard rows 0-1 of shard columns 1-2 whole and cuts through
    // shard column 0 and shard row 2, so both ways of writing shards run.
    let mut first: Option<Vec<(String, Vec<u8>)>> = None;
    for threads in [1, 2, 3, 8] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = Array::create(
            store.clone(),
            "s",
            meta(doc("int32", &[9, 13], &[4, 6], json!(-1), sharded("end"))),
        )
        .unwrap();
        let data: Vec<i32> = (0..117).collect();
        a.write(
            &Selection::all(&[9, 13]),
            &RBuf::Integer(&data),
            opts(threads),
        )
        .unwrap();
        // rows 0-7, columns 3-12; column 3 lies in shard column 0.
        let patch: Vec<i32> = (0..80).map(|v| 1000 + v).collect();
        a.write(
            &range_sel(&[(0, 8), (3, 10)]),
            &RBuf::Integer(&patch),
            opts(threads),
        )
        .unwrap();
        let mut want = data.clone();
        for j in 0..10 {
            for i in 0..8 {
                want[i + 9 * (j + 3)] = 1000 + (i + 8 * j) as i32;
            }
        }
        assert_eq!(
            read_all_ints(&a, &[9, 13], threads),
            want,
            "{threads} threads"
        );
        let now = stored(&store, "s/c/");
        assert_eq!(now.len(), 9);
        match &first {
            None => first = Some(now),
            Some(f) => assert!(f == &now, "{threads} threads stored other bytes"),
        }
    }
}

#[test]
fn missing_shards_and_inner_chunks_read_as_na() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "m",
        meta(doc("int16", &[8, 12], &[4, 6], json!(0), sharded("end"))),
    )
    .unwrap();
    // only the element (0, 0): one inner chunk in one shard
    a.write(&range_sel(&[(0, 1), (0, 1)]), &RBuf::Integer(&[7]), opts(1))
        .unwrap();
    assert_eq!(
        store.list_prefix_str("m/c/").unwrap(),
        vec!["m/c/0/0".to_string()]
    );
    let mut out = vec![0i32; 96];
    a.read(
        &Selection::all(&[8, 12]),
        &mut RBufMut::Integer(&mut out),
        opts(2),
    )
    .unwrap();
    assert_eq!(out[0], 7);
    assert!(out[1..].iter().all(|&v| v == NA_INTEGER));
}

#[test]
fn a_bad_shard_index_is_a_classed_error_naming_the_shard() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "b",
        meta(doc("int32", &[4, 6], &[4, 6], json!(0), sharded("end"))),
    )
    .unwrap();
    a.write(
        &Selection::all(&[4, 6]),
        &RBuf::Integer(&(1..=24).collect::<Vec<_>>()),
        opts(1),
    )
    .unwrap();
    let mut shard = store.get_str("b/c/0/0", ByteRange::All).unwrap().unwrap();
    let n = shard.len();
    shard[n - 8] ^= 1;
    store.set_str("b/c/0/0", &shard).unwrap();
    let e = a
        .read(
            &range_sel(&[(0, 1), (0, 1)]),
            &mut RBufMut::Integer(&mut [0]),
            opts(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "checksum");
    assert!(e.message().contains("b/c/0/0"), "{}", e.message());
}

#[test]
fn a_pinned_file_value_keeps_its_version_when_the_file_is_replaced() {
    let dir = std::env::temp_dir().join(format!("zarr-engine-pinned-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = crate::store::FsStore::open(dir.to_str().unwrap(), false, true).unwrap();
    store.set_str("a/c/0", b"old index|old chunk").unwrap();
    let (first, pinned) = store
        .get_pinned_str(
            "a/c/0",
            ByteRange::Range {
                offset: 0,
                length: 9,
            },
        )
        .unwrap()
        .unwrap();
    assert_eq!(first, b"old index");
    // A rewrite with another layout, as a writer makes while we read.
    store
        .set_str("a/c/0", b"new index|new chunk, longer")
        .unwrap();
    let later = pinned
        .get(ByteRange::Range {
            offset: 10,
            length: 9,
        })
        .unwrap();
    assert_eq!(later, b"old chunk");
    assert!(store
        .get_pinned_str("a/c/9", ByteRange::All)
        .unwrap()
        .is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stored keys of a sharded int32 array "s" of shape 8 x 12 (shards
/// 4 x 6, inner chunks 2 x 3) holding `first + i` at element i.
pub(super) fn sharded_files(first: i32) -> Vec<(String, Vec<u8>)> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "s",
        meta(doc("int32", &[8, 12], &[4, 6], json!(-1), sharded("end"))),
    )
    .unwrap();
    let data: Vec<i32> = (0..96).map(|i| first + i).collect();
    a.write(&Selection::all(&[8, 12]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    stored(&store, "")
}

/// Inner chunk (0, 0) of shard (0, 0) read over HTTP from `server`.
fn read_inner_over_http(server: &crate::store::test_server::Server) -> Result<Vec<i32>> {
    let store: Arc<dyn Store> = Arc::new(crate::store::HttpStore::open(&server.url).unwrap());
    let a = Array::open(store, "s")?;
    let mut out = vec![0i32; 6];
    a.read(
        &range_sel(&[(0, 2), (0, 3)]),
        &mut RBufMut::Integer(&mut out),
        opts(2),
    )?;
    Ok(out)
}

#[test]
fn a_shard_replaced_between_index_and_inner_chunk_over_http_is_read_again() {
    use crate::store::test_server::{serve, Mode};
    let old = sharded_files(0);
    let new = sharded_files(1000);
    let files: Vec<(&str, Vec<u8>)> = old.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let server = serve("/d", &files, Mode::default());
    let shard =
        |files: &[(String, Vec<u8>)]| files.iter().find(|f| f.0 == "s/c/0/0").unwrap().1.clone();
    // A writer replaces the shard right after the reader fetched its index.
    server.replace_after("s/c/0/0", 1, shard(&new));
    let got = read_inner_over_http(&server).unwrap();
    // Elements (0..2, 0..3), column-major, of the new version only.
    assert_eq!(got, vec![1000, 1001, 1008, 1009, 1016, 1017]);
    let s = server.stats.lock().unwrap();
    assert_eq!(s.precondition_failed, 1);
    let shard_requests: Vec<_> = s
        .log()
        .into_iter()
        .filter(|(p, _)| p == "/d/s/c/0/0")
        .collect();
    // index, its inner chunk refused (If-Match), index again, inner chunk
    assert_eq!(shard_requests.len(), 4, "{shard_requests:?}");
}

#[test]
fn a_shard_that_keeps_changing_over_http_is_a_conflict_error() {
    use crate::store::test_server::{serve, Mode};
    let old = sharded_files(0);
    let files: Vec<(&str, Vec<u8>)> = old.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let server = serve("/d", &files, Mode::default());
    // A new version after each index request of every attempt.
    for (n, first) in [(1, 1000), (3, 2000), (5, 3000)] {
        let v = sharded_files(first);
        let shard = v.iter().find(|f| f.0 == "s/c/0/0").unwrap().1.clone();
        server.replace_after("s/c/0/0", n, shard);
    }
    let e = read_inner_over_http(&server).unwrap_err();
    assert_eq!(e.kind(), "conflict", "{e}");
    assert!(
        e.message().contains("changed while it was read, 3 times"),
        "{e}"
    );
    assert!(e.message().contains("s/c/0/0"), "{e}");
    assert_eq!(server.stats.lock().unwrap().precondition_failed, 3);
}
