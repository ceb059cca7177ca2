//! String arrays: variable-length (sharded too) and fixed-width.

use super::*;

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
        // (the package's own string fill value: the one that reads as NA)
        meta(doc("string", &[5, 7], &[4, 4], json!("\u{2400}"), codecs)),
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
    assert!(!store.exists_str("t/c/0/1").unwrap());
    // One inner chunk of shard (0, 0) becomes NA: the shard stays, smaller.
    let before = store
        .get_str("t/c/0/0", ByteRange::All)
        .unwrap()
        .unwrap()
        .len();
    a.write_strings(&range_sel(&[(2, 2), (0, 2)]), &[None; 4], opts(1))
        .unwrap();
    for (i, j) in [(2, 0), (3, 0), (2, 1), (3, 1)] {
        want[i + 5 * j] = None;
    }
    let after = store
        .get_str("t/c/0/0", ByteRange::All)
        .unwrap()
        .unwrap()
        .len();
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
        let stored = store.list_prefix_str("f/").unwrap();
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
        assert_eq!(store.list_prefix_str("f/").unwrap(), stored);
        // Writing "" everywhere erases the chunks (all fill).
        a.write_strings(&all, &[Some(""); 6], opts(1)).unwrap();
        assert_eq!(
            store.list_prefix_str("f/").unwrap(),
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
