use super::*;
use crate::convert::{is_na_real, NA_INTEGER};
use crate::selection::DimSelection;
use crate::store::MemoryStore;
use serde_json::{json, Value};

fn meta(doc: Value) -> ArrayMetadata {
    match crate::metadata::v3::parse(doc.to_string().as_bytes()).unwrap() {
        NodeMetadata::Array(m) => m,
        _ => unreachable!(),
    }
}

fn doc(dtype: &str, shape: &[u64], chunks: &[u64], fill: Value, codecs: Value) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": {}
    })
}

fn f_order(nd: usize) -> Value {
    json!([{"name": "transpose", "configuration": {"order": (0..nd).rev().collect::<Vec<_>>()}},
           {"name": "bytes", "configuration": {"endian": "little"}},
           {"name": "zstd", "configuration": {"level": 1, "checksum": false}}])
}

fn c_order() -> Value {
    json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}])
}

fn opts(threads: usize) -> IoOptions {
    IoOptions {
        threads,
        strict_checksums: false,
    }
}

fn range_sel(ranges: &[(u64, u64)]) -> Selection {
    Selection {
        dims: ranges
            .iter()
            .map(|&(s, n)| DimSelection::range(s, n))
            .collect(),
    }
}

#[test]
fn a_3d_array_round_trips_in_both_storage_orders() {
    for codecs in [f_order(3), c_order()] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = Array::create(
            store,
            "/g/x",
            meta(doc("float64", &[7, 5, 3], &[3, 2, 2], json!(-1.0), codecs)),
        )
        .unwrap();
        let data: Vec<f64> = (0..105).map(|i| i as f64 * 0.5).collect();
        let sel = Selection::all(&a.meta.shape);
        a.write(&sel, &RBuf::Double(&data), opts(2)).unwrap();
        let mut out = vec![0f64; 105];
        a.read(&sel, &mut RBufMut::Double(&mut out), opts(2))
            .unwrap();
        assert_eq!(out, data);
        // a sub-block, column-major: element (i, j, k) of the array is data[i + 7j + 35k]
        let sub = range_sel(&[(2, 3), (1, 3), (1, 2)]);
        let mut out = vec![0f64; 18];
        a.read(&sub, &mut RBufMut::Double(&mut out), opts(1))
            .unwrap();
        let mut expect = vec![];
        for k in 1..3 {
            for j in 1..4 {
                for i in 2..5 {
                    expect.push(data[i + 7 * j + 35 * k]);
                }
            }
        }
        assert_eq!(out, expect);
    }
}

#[test]
fn c_order_chunks_hold_row_major_bytes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    let a = Array::create(
        store.clone(),
        "",
        meta(doc("int32", &[2, 3], &[2, 3], json!(0), codecs)),
    )
    .unwrap();
    // R matrix(1:6, 2, 3) is [[1,3,5],[2,4,6]]
    a.write(
        &Selection::all(&[2, 3]),
        &RBuf::Integer(&[1, 2, 3, 4, 5, 6]),
        opts(1),
    )
    .unwrap();
    let raw = store.get("c/0/0", ByteRange::All).unwrap().unwrap();
    let vals: Vec<i32> = raw
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(vals, vec![1, 3, 5, 2, 4, 6]);
}

#[test]
fn missing_chunks_read_as_na_and_fill_chunks_are_erased() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "a",
        meta(doc("int16", &[4, 4], &[2, 2], json!(-9), f_order(2))),
    )
    .unwrap();
    let mut out = vec![0i32; 16];
    a.read(
        &Selection::all(&[4, 4]),
        &mut RBufMut::Integer(&mut out),
        opts(2),
    )
    .unwrap();
    assert!(out.iter().all(|&v| v == NA_INTEGER));
    a.write(&range_sel(&[(0, 1), (0, 1)]), &RBuf::Integer(&[5]), opts(1))
        .unwrap();
    assert!(store.exists("a/c/0/0").unwrap());
    a.read(
        &Selection::all(&[4, 4]),
        &mut RBufMut::Integer(&mut out),
        opts(1),
    )
    .unwrap();
    assert_eq!(out[0], 5);
    assert!(out[1..].iter().all(|&v| v == NA_INTEGER));
    // writing NA back makes the chunk all-fill: it is erased
    a.write(
        &range_sel(&[(0, 1), (0, 1)]),
        &RBuf::Integer(&[NA_INTEGER]),
        opts(1),
    )
    .unwrap();
    assert!(!store.exists("a/c/0/0").unwrap());
}

#[test]
fn partial_writes_keep_the_rest_of_the_chunk() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store,
        "p",
        meta(doc("float32", &[5, 5], &[3, 3], json!("NaN"), c_order())),
    )
    .unwrap();
    let all: Vec<f64> = (0..25).map(|i| i as f64).collect();
    a.write(&Selection::all(&[5, 5]), &RBuf::Double(&all), opts(2))
        .unwrap();
    a.write(
        &range_sel(&[(1, 3), (2, 2)]),
        &RBuf::Double(&[-1.0; 6]),
        opts(2),
    )
    .unwrap();
    let mut out = vec![0f64; 25];
    a.read(
        &Selection::all(&[5, 5]),
        &mut RBufMut::Double(&mut out),
        opts(2),
    )
    .unwrap();
    for j in 0..5 {
        for i in 0..5 {
            let expect = if (1..4).contains(&i) && (2..4).contains(&j) {
                -1.0
            } else {
                (i + 5 * j) as f64
            };
            assert_eq!(out[i + 5 * j], expect, "element ({i}, {j})");
        }
    }
}

#[test]
fn index_selections_may_repeat_and_reorder() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store,
        "i",
        meta(doc("int32", &[10], &[3], json!(0), f_order(1))),
    )
    .unwrap();
    let data: Vec<i32> = (1..=10).collect();
    a.write(&Selection::all(&[10]), &RBuf::Integer(&data), opts(1))
        .unwrap();
    let sel = Selection {
        dims: vec![DimSelection::indices(&[9, 0, 4, 4, 5, 6, 2])],
    };
    let mut out = vec![0i32; 7];
    a.read(&sel, &mut RBufMut::Integer(&mut out), opts(2))
        .unwrap();
    assert_eq!(out, vec![10, 1, 5, 5, 6, 7, 3]);
}

#[test]
fn zero_d_arrays_use_key_c() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "z",
        meta(doc("float64", &[], &[], json!(0.0), c_order())),
    )
    .unwrap();
    a.write(&Selection::all(&[]), &RBuf::Double(&[3.25]), opts(1))
        .unwrap();
    assert!(store.exists("z/c").unwrap());
    let mut out = vec![0f64; 1];
    a.read(
        &Selection::all(&[]),
        &mut RBufMut::Double(&mut out),
        opts(1),
    )
    .unwrap();
    assert_eq!(out, vec![3.25]);
}

#[test]
fn na_writes_the_fill_and_reads_back_as_na() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store,
        "n",
        meta(doc("float64", &[3], &[3], json!("NaN"), f_order(1))),
    )
    .unwrap();
    a.write(
        &Selection::all(&[3]),
        &RBuf::Double(&[1.0, convert::na_real(), f64::NAN]),
        opts(1),
    )
    .unwrap();
    let mut out = vec![0f64; 3];
    a.read(
        &Selection::all(&[3]),
        &mut RBufMut::Double(&mut out),
        opts(1),
    )
    .unwrap();
    assert_eq!(out[0], 1.0);
    // with a NaN fill every NaN reads as NA
    assert!(is_na_real(out[1]) && is_na_real(out[2]));
}

#[test]
fn bad_input_gives_classed_errors_naming_the_array_or_chunk() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store.clone(),
        "e",
        meta(doc("int32", &[4], &[2], json!(0), c_order())),
    )
    .unwrap();
    let e = a
        .read(
            &range_sel(&[(3, 2)]),
            &mut RBufMut::Integer(&mut [0; 2]),
            opts(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "selection");
    assert!(e.message().contains("array '/e'"));
    store.set("e/c/1", b"not gzip at all").unwrap();
    let e = a
        .read(
            &Selection::all(&[4]),
            &mut RBufMut::Integer(&mut [0; 4]),
            opts(2),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    assert!(e.message().contains("e/c/1"), "{}", e.message());
    let e = a
        .write(
            &Selection::all(&[4]),
            &RBuf::Double(&[1.0, 2.0, 3.5, 4.0]),
            opts(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "type");
    let ro: Arc<dyn Store> = Arc::new(MemoryStore::new(true));
    let e = Array::open(ro, "e").err().unwrap();
    assert_eq!(e.kind(), "not_found");
}

#[test]
fn a_truncated_chunk_is_corrupt() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    let a = Array::create(
        store.clone(),
        "t",
        meta(doc("float64", &[4], &[4], json!(0.0), codecs)),
    )
    .unwrap();
    store.set("t/c/0", &[0u8; 20]).unwrap();
    let e = a
        .read(
            &Selection::all(&[4]),
            &mut RBufMut::Double(&mut [0.0; 4]),
            opts(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    assert!(e.message().contains("t/c/0"));
}

#[test]
fn many_chunks_in_parallel_match_a_serial_read() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let a = Array::create(
        store,
        "big",
        meta(doc("uint16", &[100, 90], &[7, 11], json!(0), f_order(2))),
    )
    .unwrap();
    let data: Vec<i32> = (0..9000).map(|i| (i * 7 % 65535) + 1).collect();
    a.write(&Selection::all(&[100, 90]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    let mut p = vec![0i32; 9000];
    let mut s = vec![0i32; 9000];
    a.read(
        &Selection::all(&[100, 90]),
        &mut RBufMut::Integer(&mut p),
        opts(2),
    )
    .unwrap();
    a.read(
        &Selection::all(&[100, 90]),
        &mut RBufMut::Integer(&mut s),
        opts(1),
    )
    .unwrap();
    assert_eq!(p, data);
    assert_eq!(s, data);
}

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

fn sharded(location: &str) -> Value {
    json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": location}}])
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
        assert_eq!(store.list_prefix("s/c/").unwrap().len(), 9);
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
    store.set("f/c/1/0", b"stale").unwrap();
    a.write(&Selection::all(&[8, 12]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    assert_eq!(
        store.list_prefix("f/c/").unwrap(),
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
    let shard = store.get("f/c/0/0", ByteRange::All).unwrap().unwrap();
    let alone = store.get("f/c/0/1", ByteRange::All).unwrap().unwrap();
    assert!(shard.len() < alone.len());
}

/// Every stored key and its bytes, in key order.
fn stored(store: &Arc<dyn Store>, prefix: &str) -> Vec<(String, Vec<u8>)> {
    store
        .list_prefix(prefix)
        .unwrap()
        .into_iter()
        .map(|k| {
            let v = store.get(&k, ByteRange::All).unwrap().unwrap();
            (k, v)
        })
        .collect()
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
        store.list_prefix("m/c/").unwrap(),
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
    let mut shard = store.get("b/c/0/0", ByteRange::All).unwrap().unwrap();
    let n = shard.len();
    shard[n - 8] ^= 1;
    store.set("b/c/0/0", &shard).unwrap();
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

/// All strings of a read, NA as None.
fn strings_of(a: &Array, sel: &Selection) -> Vec<Option<String>> {
    let (read, _) = a.read_strings(sel, opts(2)).unwrap();
    (0..read.len())
        .map(|i| read.get(i).map(str::to_owned))
        .collect()
}

#[test]
fn sharded_string_arrays_round_trip_with_partial_writes_and_holes() {
    let codecs = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2],
        "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                   {"name": "vlen-utf8", "configuration": {}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    // 5 x 7 in shards of 4 x 4 (partial shards at the edges).
    let a = Array::create(
        store.clone(),
        "t",
        meta(doc("string", &[5, 7], &[4, 4], json!("NA"), codecs)),
    )
    .unwrap();
    assert!(a.chain.partial_sharding().is_none());
    let all = Selection::all(&[5, 7]);
    // Column-major; element (i, j) is "i,j\u{e9}", with "" kept apart from NA.
    let mut want: Vec<Option<String>> = (0..35)
        .map(|k| Some(format!("{},{}\u{e9}", k % 5, k / 5)))
        .collect();
    want[6] = Some(String::new());
    let values: Vec<Option<&str>> = want.iter().map(|s| s.as_deref()).collect();
    a.write_strings(&all, &values, opts(2)).unwrap();
    assert_eq!(strings_of(&a, &all), want);
    // Rows 0..4 of columns 4..8 (shard (0, 1)) become NA: that shard goes.
    let na = vec![None; 12];
    a.write_strings(&range_sel(&[(0, 4), (4, 3)]), &na, opts(1))
        .unwrap();
    for j in 4..7 {
        for i in 0..4 {
            want[i + 5 * j] = None;
        }
    }
    assert!(!store.exists("t/c/0/1").unwrap());
    // One inner chunk of shard (0, 0) becomes NA: the shard stays, smaller.
    let before = store.get("t/c/0/0", ByteRange::All).unwrap().unwrap().len();
    a.write_strings(&range_sel(&[(2, 2), (0, 2)]), &[None; 4], opts(1))
        .unwrap();
    for (i, j) in [(2, 0), (3, 0), (2, 1), (3, 1)] {
        want[i + 5 * j] = None;
    }
    let after = store.get("t/c/0/0", ByteRange::All).unwrap().unwrap().len();
    assert!(after < before, "{after} < {before}");
    // A partial write into a shard keeps the rest of it.
    a.write_strings(
        &range_sel(&[(4, 1), (1, 2)]),
        &[Some("x"), Some("y")],
        opts(2),
    )
    .unwrap();
    want[4 + 5] = Some("x".into());
    want[4 + 10] = Some("y".into());
    assert_eq!(strings_of(&a, &all), want);
    // A region across shards, reopened from the store.
    let b = Array::open(store, "t").unwrap();
    let sub = range_sel(&[(1, 4), (2, 4)]);
    let got = strings_of(&b, &sub);
    let expect: Vec<Option<String>> = (2..6)
        .flat_map(|j| (1..5).map(move |i| (i, j)))
        .map(|(i, j)| want[i + 5 * j].clone())
        .collect();
    assert_eq!(got, expect);
}

/// A Zarr v2 array of `dtype` ("<U3", "|S3") in `order`, created from its .zarray.
fn fixed_width_array(store: &Arc<dyn Store>, dtype: &str, order: &str) -> Array {
    let zarray = json!({"shape": [3, 2], "chunks": [2, 2], "dtype": dtype, "fill_value": "",
        "order": order, "filters": null, "dimension_separator": ".",
        "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2});
    let m = crate::metadata::v2::parse_array(zarray.to_string().as_bytes(), None).unwrap();
    Array::create(store.clone(), "f", m).unwrap()
}

#[test]
fn fixed_width_strings_read_empty_as_empty_and_refuse_na_and_long_values() {
    for (dtype, order) in [("<U3", "F"), (">U3", "C"), ("|S3", "C")] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = fixed_width_array(&store, dtype, order);
        let all = Selection::all(&[3, 2]);
        // A missing chunk reads as the fill value "", not NA.
        assert_eq!(strings_of(&a, &all), vec![Some(String::new()); 6]);
        let values = [
            Some("ab"),
            Some(""),
            Some("\u{e9}"),
            Some("xyz"),
            Some("c"),
            Some(""),
        ];
        a.write_strings(&all, &values, opts(2)).unwrap();
        let got = strings_of(&a, &all);
        assert_eq!(got, values.map(|v| v.map(str::to_owned)), "{dtype}");
        let stored = store.list_prefix("f/").unwrap();
        // NA and a value too long are refused before anything is written.
        let e = a
            .write_strings(
                &all,
                &[Some("a"), None, Some("b"), Some("c"), Some("d"), Some("e")],
                opts(1),
            )
            .unwrap_err();
        assert_eq!(e.kind(), "type");
        assert!(
            e.message().contains("array '/f'") && e.message().contains("NA"),
            "{}",
            e.message()
        );
        let long = if dtype.contains('U') {
            "abcd"
        } else {
            "\u{e9}\u{e9}"
        };
        let e = a
            .write_strings(&range_sel(&[(2, 1), (1, 1)]), &[Some(long)], opts(1))
            .unwrap_err();
        assert_eq!(e.kind(), "type");
        assert!(
            e.message().contains("array '/f'") && e.message().contains(dtype),
            "{}",
            e.message()
        );
        assert_eq!(strings_of(&a, &all), got);
        assert_eq!(store.list_prefix("f/").unwrap(), stored);
        // Writing "" everywhere erases the chunks (all fill).
        a.write_strings(&all, &[Some(""); 6], opts(1)).unwrap();
        assert_eq!(
            store.list_prefix("f/").unwrap(),
            vec!["f/.zarray".to_string(), "f/.zattrs".to_string()]
        );
    }
}

#[test]
fn fixed_width_strings_cannot_be_written_to_zarr_v3() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let mut m = fixed_width_array(&store, "<U3", "C").meta;
    m.zarr_format = 3;
    m.chunk_key_encoding = crate::metadata::ChunkKeyEncoding::default();
    let e = Array::create(store, "v3", m).err().unwrap();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("<U3"), "{}", e.message());
}

fn plain_f_order(nd: usize) -> Value {
    json!([{"name": "transpose", "configuration": {"order": (0..nd).rev().collect::<Vec<_>>()}},
           {"name": "bytes", "configuration": {"endian": "little"}}])
}

/// The types and fill values that chunks read and write straight between
/// R memory and the store: a NaN fill, a number fill, an integer fill.
fn straight_cases() -> [(&'static str, Value); 3] {
    [
        ("float64", json!("NaN")),
        ("float64", json!(-1.0)),
        ("int32", json!(-7)),
    ]
}

/// A fresh folder for a file store, removed at the end of the test.
struct Folder(std::path::PathBuf);

impl Folder {
    fn new(tag: &str) -> Folder {
        let p = std::env::temp_dir().join(format!("zarr-engine-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Folder(p)
    }
    fn store(&self) -> Arc<dyn Store> {
        Arc::new(crate::store::FsStore::open(self.0.to_str().unwrap(), false, true).unwrap())
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn plain_chunks_read_straight_into_the_result_match_the_copying_path() {
    // The file store reads uncompressed column-major chunks straight into
    // the result; the memory store goes through decode and scatter. Edge
    // chunks, a missing chunk, fill values and NA must agree.
    let folder = Folder::new("straight");
    let shape = [70u64, 50, 3];
    let n: usize = 70 * 50 * 3;
    let sels = [
        Selection::all(&shape),
        range_sel(&[(0, 64), (16, 32), (0, 2)]),
        range_sel(&[(5, 60), (3, 40), (1, 2)]),
        range_sel(&[(0, 70), (0, 50), (2, 1)]),
    ];
    for (k, (dtype, fill)) in straight_cases().into_iter().enumerate() {
        let name = format!("a{k}");
        let md = || {
            meta(doc(
                dtype,
                &shape,
                &[64, 16, 2],
                fill.clone(),
                plain_f_order(3),
            ))
        };
        let on_disk = Array::create(folder.store(), &name, md()).unwrap();
        let in_memory = Array::create(Arc::new(MemoryStore::new(false)), &name, md()).unwrap();
        let sel = Selection::all(&shape);
        let rtype = if dtype == "int32" {
            RType::Integer
        } else {
            RType::Double
        };
        let strides = on_disk.chain.stored_strides(&on_disk.chunk_shape());
        assert!(on_disk.stores_as_r(rtype, &strides), "{dtype}");
        if dtype == "int32" {
            let mut data: Vec<i32> = (0..n as i32).map(|i| i * 3 - 500).collect();
            data[7] = NA_INTEGER;
            data[100] = -7;
            for a in [&on_disk, &in_memory] {
                a.write(&sel, &RBuf::Integer(&data), opts(2)).unwrap();
                a.store.erase(&a.chunk_key(&[1, 1, 0])).unwrap();
            }
            for s in &sels {
                let mut x = vec![0i32; s.num_elements()];
                let mut y = vec![1i32; s.num_elements()];
                on_disk
                    .read(s, &mut RBufMut::Integer(&mut x), opts(2))
                    .unwrap();
                in_memory
                    .read(s, &mut RBufMut::Integer(&mut y), opts(2))
                    .unwrap();
                assert_eq!(x, y, "{dtype} {s:?}");
            }
        } else {
            let mut data: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
            data[7] = convert::na_real();
            data[8] = f64::NAN;
            data[100] = -1.0;
            for a in [&on_disk, &in_memory] {
                a.write(&sel, &RBuf::Double(&data), opts(2)).unwrap();
                a.store.erase(&a.chunk_key(&[1, 1, 0])).unwrap();
            }
            for s in &sels {
                let mut x = vec![0f64; s.num_elements()];
                let mut y = vec![1f64; s.num_elements()];
                on_disk
                    .read(s, &mut RBufMut::Double(&mut x), opts(2))
                    .unwrap();
                in_memory
                    .read(s, &mut RBufMut::Double(&mut y), opts(2))
                    .unwrap();
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&x), bits(&y), "{dtype} {fill} {s:?}");
            }
        }
    }
}

#[test]
fn a_plain_chunk_of_the_wrong_length_on_disk_is_corrupt() {
    let folder = Folder::new("straight-bad");
    let store = folder.store();
    let a = Array::create(
        store.clone(),
        "t",
        meta(doc(
            "float64",
            &[64, 2],
            &[32, 2],
            json!(0.0),
            plain_f_order(2),
        )),
    )
    .unwrap();
    for len in [20usize, 32 * 2 * 8 + 8] {
        store.set("t/c/0/0", &vec![0u8; len]).unwrap();
        let e = a
            .read(
                &Selection::all(&[64, 2]),
                &mut RBufMut::Double(&mut [0.0; 128]),
                opts(1),
            )
            .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains("t/c/0/0"), "{}", e.message());
    }
}

#[test]
fn plain_chunks_written_straight_from_the_data_hold_the_expected_bytes() {
    // Whole interior chunks go from the data to the store without a copy.
    // NA (in either of R's bit patterns) must still become the fill value,
    // chunks of fill must not be stored, and edge and partly written
    // chunks take the usual path: compare every chunk with bytes built
    // here element by element.
    let folder = Folder::new("straight-write");
    let shape = [140usize, 70];
    let chunk = [64usize, 32];
    let n = shape[0] * shape[1];
    for (k, (dtype, fill)) in straight_cases().into_iter().enumerate() {
        let name = format!("w{k}");
        let md = meta(doc(
            dtype,
            &[140, 70],
            &[64, 32],
            fill.clone(),
            plain_f_order(2),
        ));
        let a = Array::create(folder.store(), &name, md).unwrap();
        let sel = Selection::all(&[140, 70]);
        let part = range_sel(&[(64, 64), (0, 32)]);
        // Element values as stored, NA already turned into the fill.
        let (stored, fill_bytes): (Vec<Vec<u8>>, Vec<u8>) = if dtype == "int32" {
            let mut data: Vec<i32> = (0..n as i32).map(|i| i - 900).collect();
            data[140 * 40 + 5] = NA_INTEGER; // chunk (0, 1)
            data[..32].fill(-7);
            a.write(&sel, &RBuf::Integer(&data), opts(2)).unwrap();
            a.write(&part, &RBuf::Integer(&[-7; 64 * 32]), opts(1))
                .unwrap();
            data[140 * 40 + 5] = -7;
            for c in 0..32 {
                data[64 + 140 * c..128 + 140 * c].fill(-7);
            }
            (
                data.iter().map(|v| v.to_le_bytes().to_vec()).collect(),
                (-7i32).to_le_bytes().to_vec(),
            )
        } else {
            let f = if k == 0 { f64::NAN } else { -1.0 };
            let mut data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
            data[140 * 40 + 5] = convert::na_real(); // chunk (0, 1)
            data[140 * 40 + 6] = f64::from_bits(0x7FF8_0000_0000_07A2); // NA after arithmetic
            data[140 * 40 + 7] = f64::NAN;
            a.write(&sel, &RBuf::Double(&data), opts(2)).unwrap();
            a.write(&part, &RBuf::Double(&[f; 64 * 32]), opts(1))
                .unwrap();
            data[140 * 40 + 5] = f;
            data[140 * 40 + 6] = f;
            for c in 0..32 {
                data[64 + 140 * c..128 + 140 * c].fill(f);
            }
            (
                data.iter().map(|v| v.to_le_bytes().to_vec()).collect(),
                f.to_le_bytes().to_vec(),
            )
        };
        for i in 0..3 {
            for j in 0..3 {
                let mut expect = Vec::new();
                for c in 0..chunk[1] {
                    for r in 0..chunk[0] {
                        let (row, col) = (i * chunk[0] + r, j * chunk[1] + c);
                        if row < shape[0] && col < shape[1] {
                            expect.extend_from_slice(&stored[row + shape[0] * col]);
                        } else {
                            expect.extend_from_slice(&fill_bytes);
                        }
                    }
                }
                let key = a.chunk_key(&[i as u64, j as u64]);
                let got = a.store.get(&key, ByteRange::All).unwrap();
                if expect
                    .chunks_exact(fill_bytes.len())
                    .all(|e| e == fill_bytes.as_slice())
                {
                    assert_eq!(got, None, "{dtype} {fill}: chunk {key} holds only the fill");
                } else {
                    assert_eq!(got, Some(expect), "{dtype} {fill}: chunk {key}");
                }
            }
        }
    }
}

#[test]
fn regions_of_uncompressed_chunks_read_only_the_bytes_they_need() {
    // Both storage orders, a type that needs converting, and a store that
    // serves byte ranges (memory) against one whose chunks are compressed.
    for (codecs, tag) in [
        (plain_f_order(2), "F"),
        (
            json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            "C",
        ),
    ] {
        let plain = Array::create(
            Arc::new(MemoryStore::new(false)),
            "p",
            meta(doc("int16", &[100, 90], &[40, 30], json!(-5), codecs)),
        )
        .unwrap();
        let packed = Array::create(
            Arc::new(MemoryStore::new(false)),
            "z",
            meta(doc("int16", &[100, 90], &[40, 30], json!(-5), f_order(2))),
        )
        .unwrap();
        let data: Vec<i32> = (0..9000).map(|i| (i % 3000) - 5).collect();
        for a in [&plain, &packed] {
            a.write(&Selection::all(&[100, 90]), &RBuf::Integer(&data), opts(2))
                .unwrap();
            a.store.erase(&a.chunk_key(&[2, 2])).unwrap();
        }
        for sel in [
            range_sel(&[(35, 10), (25, 10)]),
            range_sel(&[(0, 3), (0, 90)]),
            range_sel(&[(85, 15), (70, 20)]),
            range_sel(&[(39, 2), (29, 2)]),
        ] {
            let mut x = vec![0i32; sel.num_elements()];
            let mut y = vec![1i32; sel.num_elements()];
            plain
                .read(&sel, &mut RBufMut::Integer(&mut x), opts(2))
                .unwrap();
            packed
                .read(&sel, &mut RBufMut::Integer(&mut y), opts(2))
                .unwrap();
            assert_eq!(x, y, "{tag} {sel:?}");
        }
        // A truncated chunk is corrupt, whichever part is read.
        plain
            .store
            .set(&plain.chunk_key(&[0, 0]), &[0u8; 100])
            .unwrap();
        let e = plain
            .read(
                &range_sel(&[(35, 5), (25, 5)]),
                &mut RBufMut::Integer(&mut [0; 25]),
                opts(1),
            )
            .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk", "{tag}: {}", e.message());
        assert!(e.message().contains("p/c/0/0"), "{}", e.message());
    }
}
