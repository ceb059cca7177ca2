//! Tests of the engine, one file per path: reads and writes of plain
//! chunks here; `shard`, `strings`, and `straight` (chunks read and written
//! straight between R memory and the store, and byte ranges of chunks).

mod resize;
mod shard;
mod shard_stream;
mod straight;
mod strings;

use super::*;
use crate::convert::{self, is_na_real, RBuf, RBufMut, NA_INTEGER};
use crate::dtype::RType;
use crate::selection::DimSelection;
use crate::selection::Selection;
use crate::store::{MemoryStore, StrKeys};
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

fn sharded(location: &str) -> Value {
    json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": location}}])
}

/// Every stored key and its bytes, in key order.
fn stored(store: &Arc<dyn Store>, prefix: &str) -> Vec<(String, Vec<u8>)> {
    store
        .list_prefix_str(prefix)
        .unwrap()
        .into_iter()
        .map(|k| {
            let v = store.get_str(&k, ByteRange::All).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

/// A 10 x 7 array in chunks of rows 3, 3, 3, 1 and columns 4, 3.
fn rectilinear(dtype: &str, fill: Value, codecs: Value) -> Value {
    let mut d = doc(dtype, &[10, 7], &[1, 1], fill, codecs);
    d["chunk_grid"] = json!({"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[3, 3], 1], [4, 3]]}});
    d
}

#[test]
fn rectilinear_grids_store_each_chunk_in_its_own_shape() {
    for codecs in [f_order(2), c_order(), sharded("end")] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        // Shards of 3, 3, 3, 1 rows and 4, 3 columns hold whole inner
        // chunks of 1 x 1 only.
        let codecs = match codecs.pointer("/0/name") {
            Some(Value::String(n)) if n == "sharding_indexed" => {
                let mut c = codecs.clone();
                c[0]["configuration"]["chunk_shape"] = json!([1, 1]);
                c
            }
            _ => codecs,
        };
        let a = Array::create(
            store.clone(),
            "r",
            meta(rectilinear("int32", json!(-1), codecs)),
        )
        .unwrap();
        let data: Vec<i32> = (0..70).collect();
        a.write(&Selection::all(&[10, 7]), &RBuf::Integer(&data), opts(2))
            .unwrap();
        let keys: Vec<String> = stored(&store, "r/c").into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 8, "{keys:?}");
        let mut out = vec![0i32; 70];
        a.read(
            &Selection::all(&[10, 7]),
            &mut RBufMut::Integer(&mut out),
            opts(2),
        )
        .unwrap();
        assert_eq!(out, data);
        // Rows 3..9 and columns 4..6 (0-based) cross every row border.
        let mut out = vec![0i32; 18];
        a.read(
            &range_sel(&[(2, 6), (4, 3)]),
            &mut RBufMut::Integer(&mut out),
            opts(1),
        )
        .unwrap();
        let want: Vec<i32> = (4..7)
            .flat_map(|j| (2..8).map(move |i| i + 10 * j))
            .collect();
        assert_eq!(out, want);
        // Chunk (3, 1) is row 9 and columns 4..6; erasing it reads the fill.
        store.erase_str("r/c/3/1").unwrap();
        let mut out = vec![0i32; 3];
        a.read(
            &range_sel(&[(9, 1), (4, 3)]),
            &mut RBufMut::Integer(&mut out),
            opts(1),
        )
        .unwrap();
        assert_eq!(out, vec![NA_INTEGER; 3]);
    }
}

#[test]
fn rectilinear_shards_are_read_inner_chunk_by_inner_chunk() {
    // Shards of 4, 4, 2, 2 rows and 4, 4 columns, inner chunks of 2 x 2
    // compressed: a read decodes only the inner chunks it needs, so a
    // corrupt one elsewhere in the same shard is no error until a read
    // needs it.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
    let mut d = doc(
        "int32",
        &[12, 8],
        &[1, 1],
        json!(-1),
        json!([
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "gzip", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_location": "end"}}]),
    );
    d["chunk_grid"] = json!({"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[4, 2], [2, 2]], [4, 4]]}});
    let a = Array::create(store.clone(), "s", meta(d)).unwrap();
    let data: Vec<i32> = (0..96).collect();
    a.write(&Selection::all(&[12, 8]), &RBuf::Integer(&data), opts(2))
        .unwrap();
    // Shard (2, 1): rows 8..10, columns 4..8, inner chunks (0, 0) and
    // (0, 1); spoil the bytes of the second (index entry 1).
    let key = StoreKey::from_checked("s/c/2/1".into());
    let mut shard = store.get(&key, ByteRange::All).unwrap().unwrap();
    let entry = shard.len() - 32 + 16;
    let at =
        |i: usize| u64::from_le_bytes(shard[entry + i..entry + i + 8].try_into().unwrap()) as usize;
    let (offset, len) = (at(0), at(8));
    shard[offset..offset + len].fill(0xff);
    store.set_str("s/c/2/1", &shard).unwrap();
    let read = |ranges: &[(u64, u64)]| {
        let n: u64 = ranges.iter().map(|r| r.1).product();
        let mut out = vec![0i32; n as usize];
        a.read(&range_sel(ranges), &mut RBufMut::Integer(&mut out), opts(2))
            .map(|_| out)
    };
    // Rows 8..10, columns 4..6: inner chunk (0, 0) of that shard only.
    let want: Vec<i32> = (4..6)
        .flat_map(|j| (8..10).map(move |i| i + 12 * j))
        .collect();
    assert_eq!(read(&[(8, 2), (4, 2)]).unwrap(), want);
    let err = read(&[(8, 2), (4, 4)]).unwrap_err();
    assert!(err.message().contains("s/c/2/1"), "{}", err.message());
    // The other shards read whole.
    let want: Vec<i32> = (0..8)
        .flat_map(|j| (0..8).map(move |i| i + 12 * j))
        .collect();
    assert_eq!(read(&[(0, 8), (0, 8)]).unwrap(), want);
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
    let raw = store.get_str("c/0/0", ByteRange::All).unwrap().unwrap();
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
    assert!(store.exists_str("a/c/0/0").unwrap());
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
    assert!(!store.exists_str("a/c/0/0").unwrap());
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
    assert!(store.exists_str("z/c").unwrap());
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
    store.set_str("e/c/1", b"not gzip at all").unwrap();
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
    store.set_str("t/c/0", &[0u8; 20]).unwrap();
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
