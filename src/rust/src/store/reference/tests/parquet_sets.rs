//! Parquet reference folders (fsspec's lazy layout, written here with the
//! parquet crate's writer): lazy reads, listings, v3 arrays, errors and
//! row groups.

use super::*;

use super::parquet_writer as pq;

/// A Parquet reference folder "refs.parq" beside "data.bin": array "x"
/// (shape [10], chunks [2]: 5 chunks, record_size 2, so 3 files) and the
/// group "deep" with array "deep/y" (shape [2, 3], chunks [1, 2]: 2 x 2
/// chunks, "/" separated, one file).
fn parquet_set(dir: &TempDir) -> String {
    let data_file = dir.write("data.bin", &data());
    let root = dir.join("refs.parq");
    let zmeta = json!({
        "record_size": 2,
        "metadata": {
            ".zgroup": {"zarr_format": 2},
            "x/.zarray": {"shape": [10], "chunks": [2], "dtype": "<u1", "zarr_format": 2},
            "x/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
            "deep/.zgroup": "{\"zarr_format\": 2}",
            "deep/y/.zarray": {"shape": [2, 3], "chunks": [1, 2], "dimension_separator": "/"},
        }
    });
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(".zmetadata"), zmeta.to_string()).unwrap();
    // x: chunk 0 a byte range, 1 inline, 2 whole file (relative path),
    // 3 missing, 4 a byte range (padding row 5 is empty).
    pq::write_refs(
        &root.join("x/refs.0.parq"),
        &[(Some(&data_file), 10, 2, None), (None, 0, 0, Some(b"raw!"))],
        pq::zstd(),
    );
    pq::write_refs(
        &root.join("x/refs.1.parq"),
        &[(Some("data.bin"), 0, 0, None), (None, 0, 0, None)],
        pq::snappy(),
    );
    pq::write_refs(
        &root.join("x/refs.2.parq"),
        &[(Some(&data_file), 500, 3, None), (None, 0, 0, None)],
        pq::zstd(),
    );
    // deep/y: chunks (0,0) (0,1) (1,0) (1,1) -> rows 0..4 of refs.0..1
    // with record_size 2: (0,*) in refs.0, (1,*) in refs.1 (missing file).
    pq::write_refs(
        &root.join("deep/y/refs.0.parq"),
        &[
            (Some(&data_file), 0, 1, None),
            (Some(&format!("file://{data_file}")), 1, 1, None),
        ],
        pq::zstd(),
    );
    root.to_str().unwrap().to_string()
}

#[test]
fn reference_parquet_reads_only_the_files_it_needs() {
    let dir = TempDir::new("parquet-lazy");
    let root = parquet_set(&dir);
    let s = RefStore::from_parquet_dir(&root).unwrap();
    // Metadata needs no reference file.
    let zarray: Value = serde_json::from_slice(&get(&s, "x/.zarray").unwrap()).unwrap();
    assert_eq!(zarray["shape"], json!([10]));
    assert_eq!(get(&s, "deep/.zgroup").unwrap(), b"{\"zarr_format\": 2}");
    assert_eq!(s.reference_files_opened(), 0);
    assert!(s.cached_reference_files().is_empty());
    // Chunk 4 is row 0 of refs.2.parq: only that file is read.
    assert_eq!(get(&s, "x/4").unwrap(), &data()[500..503]);
    assert_eq!(s.cached_reference_files(), ["x/refs.2.parq"]);
    assert_eq!(s.reference_files_opened(), 1);
    assert_eq!(get(&s, "x/4").unwrap(), &data()[500..503]);
    assert_eq!(s.reference_files_opened(), 1, "the file was read again");
    assert_eq!(
        s.get_str("x/4", range(1, 2)).unwrap().unwrap(),
        &data()[501..503]
    );
    // Chunks 0 and 1 in refs.0.parq: a range and inline data.
    assert_eq!(get(&s, "x/0").unwrap(), &data()[10..12]);
    assert_eq!(get(&s, "x/1").unwrap(), b"raw!");
    assert_eq!(
        s.cached_reference_files(),
        ["x/refs.0.parq", "x/refs.2.parq"]
    );
    // Chunk 2: size 0 is the whole file, relative to the folder beside
    // the reference folder; chunk 3 is an empty row.
    assert_eq!(get(&s, "x/2").unwrap(), data());
    assert_eq!(get(&s, "x/3"), None);
    assert!(!s.exists_str("x/3").unwrap());
    assert_eq!(s.size_str("x/2").unwrap(), Some(1000));
    // Not chunks of the grid.
    for key in [
        "x/5",
        "x/01",
        "x/0.0",
        "x/a",
        "y/0",
        "deep/y/0.0",
        "deep/y/0",
    ] {
        assert_eq!(get(&s, key), None, "{key}");
    }
    assert_eq!(s.reference_files_opened(), 3);
    // "/"-separated chunk keys of a nested array; a missing file has no keys.
    assert_eq!(get(&s, "deep/y/0/0").unwrap(), &data()[0..1]);
    assert_eq!(get(&s, "deep/y/0/1").unwrap(), &data()[1..2]);
    assert_eq!(get(&s, "deep/y/1/0"), None);
    assert_eq!(
        s.cached_reference_files(),
        [
            "deep/y/refs.0.parq",
            "deep/y/refs.1.parq",
            "x/refs.0.parq",
            "x/refs.1.parq",
            "x/refs.2.parq"
        ]
    );
    assert!(s.as_batched().is_none());
    crate::store::tests::check_read_only(&s, "x/1", b"raw!");
}

#[test]
fn reference_parquet_lists_keys_and_folders() {
    let dir = TempDir::new("parquet-list");
    let root = parquet_set(&dir);
    let s = RefStore::from_parquet_dir(&format!("file://{root}")).unwrap();
    let root_dir = s.list_dir_str("").unwrap();
    assert_eq!(root_dir.keys, [".zgroup"]);
    assert_eq!(root_dir.prefixes, ["deep/", "x/"]);
    // Listing a group reads no reference file.
    let deep = s.list_dir_str("deep/").unwrap();
    assert_eq!(deep.keys, ["deep/.zgroup"]);
    assert_eq!(deep.prefixes, ["deep/y/"]);
    assert_eq!(s.reference_files_opened(), 0);
    let x = s.list_dir_str("x").unwrap();
    assert_eq!(
        x.keys,
        ["x/.zarray", "x/.zattrs", "x/0", "x/1", "x/2", "x/4"]
    );
    assert!(x.prefixes.is_empty());
    let y = s.list_dir_str("deep/y/").unwrap();
    assert_eq!(y.keys, ["deep/y/.zarray"]);
    assert_eq!(y.prefixes, ["deep/y/0/"]);
    let y0 = s.list_dir_str("deep/y/0/").unwrap();
    assert_eq!(y0.keys, ["deep/y/0/0", "deep/y/0/1"]);
    assert_eq!(
        s.list_prefix_str("deep/").unwrap(),
        ["deep/.zgroup", "deep/y/.zarray", "deep/y/0/0", "deep/y/0/1"]
    );
    assert_eq!(s.list().unwrap().len(), 5 + 4 + 2);
    let expanded = s.expanded_json().unwrap();
    assert_eq!(expanded["x/1"], json!("raw!"));
    assert_eq!(expanded["x/2"], json!(["data.bin"]));
    assert_eq!(expanded["x/4"][1], json!(500));
    assert!(s.describe().contains("refs.parq"), "{}", s.describe());
    // open() of a folder is the Parquet layout.
    let opened = RefStore::open(&root).unwrap();
    assert_eq!(get(&opened, "x/1").unwrap(), b"raw!");
}

#[test]
fn reference_parquet_v3_arrays_and_root_arrays() {
    let dir = TempDir::new("parquet-v3");
    let file = dir.write("d.bin", &data());
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    let zmeta = json!({
        "record_size": 100,
        "metadata": {
            "zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [4],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}},
            "s/zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
                "chunk_key_encoding": {"name": "v2"}},
        }
    });
    std::fs::write(root.join(".zmetadata"), zmeta.to_string()).unwrap();
    pq::write_refs(
        &root.join("refs.0.parq"),
        &[(Some(&file), 0, 2, None), (Some(&file), 2, 2, None)],
        pq::zstd(),
    );
    pq::write_refs(
        &root.join("s/refs.0.parq"),
        &[(None, 0, 0, Some(b"s"))],
        pq::snappy(),
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    assert_eq!(get(&s, "c/1").unwrap(), &data()[2..4]);
    assert_eq!(get(&s, "c/2"), None);
    assert_eq!(get(&s, "c.1"), None);
    assert_eq!(get(&s, "s/0").unwrap(), b"s");
    assert_eq!(s.list_dir_str("").unwrap().prefixes, ["c/", "s/"]);
    assert_eq!(s.list_prefix_str("c/").unwrap(), ["c/0", "c/1"]);
}

#[test]
fn reference_parquet_errors() {
    let dir = TempDir::new("parquet-errors");
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    // No .zmetadata.
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "not_found",
    );
    assert!(e.message().contains(".zmetadata"), "{e}");
    // Bad .zmetadata.
    std::fs::write(root.join(".zmetadata"), "{").unwrap();
    kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    std::fs::write(root.join(".zmetadata"), r#"{"metadata": {}}"#).unwrap();
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    assert!(e.message().contains("record_size"), "{e}");
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"chunks": [1]}}}"#,
    )
    .unwrap();
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    assert!(e.message().contains("a/.zarray"), "{e}");
    // Wrong columns, and a file that is no Parquet file.
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [4], "chunks": [1]},
            "b/.zarray": {"shape": [4], "chunks": [1]}}}"#,
    )
    .unwrap();
    pq::write_wrong(&root.join("a/refs.0.parq"));
    std::fs::create_dir_all(root.join("b")).unwrap();
    std::fs::write(root.join("b/refs.0.parq"), b"not parquet").unwrap();
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    let e = kind(s.get_str("a/0", ByteRange::All), "metadata");
    assert!(e.message().contains("a/refs.0.parq"), "{e}");
    assert!(e.message().contains("wrong columns"), "{e}");
    assert!(e.message().contains("name"), "{e}");
    let e = kind(s.get_str("b/0", ByteRange::All), "metadata");
    assert!(e.message().contains("b/refs.0.parq"), "{e}");
    // A remote folder is not supported.
    kind(
        RefStore::from_parquet_dir("https://example.org/refs.parq"),
        "unsupported",
    );
}

#[test]
fn reference_parquet_prefers_batches_for_http_targets() {
    let dir = TempDir::new("parquet-http");
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [2], "chunks": [1]}}}"#,
    )
    .unwrap();
    pq::write_refs(
        &root.join("a/refs.0.parq"),
        &[(Some("https://example.org/f.nc"), 0, 4, None)],
        pq::zstd(),
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    assert_eq!(s.reference_files_opened(), 0);
    assert!(s.as_batched().is_some());
    assert_eq!(s.cached_reference_files(), ["a/refs.0.parq"]);
    assert_eq!(s.size_str("a/0").unwrap(), Some(4));
}

#[test]
fn reference_parquet_rows_across_row_groups_nulls_and_int32_columns() {
    let dir = TempDir::new("parquet-rows");
    let a = dir.write("a.bin", &data());
    dir.write("d.bin", &data()[500..]);
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join(".zmetadata"),
        json!({"record_size": 10, "metadata": {
            "m/.zarray": {"shape": [12], "chunks": [1]},
            "n/.zarray": {"shape": [2, 2], "chunks": [1, 1]},
        }})
        .to_string(),
    )
    .unwrap();
    let rows: Vec<pq::Row> = vec![
        (Some(&a), 0, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, Some(b"r2")),
        (Some("d.bin"), 3, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, Some(b"")),
        (Some(&a), 6, 1, None),
        (Some(&a), 7, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, None),
    ];
    pq::write_refs(&root.join("m/refs.0.parq"), &rows, pq::zstd());
    pq::write_pyarrow_style(
        &root.join("m/refs.1.parq"),
        &[(Some("d.bin"), 1, 2), (None, 0, 0)],
    );
    pq::write_int32_refs(
        &root.join("n/refs.0.parq"),
        &[(&a, 10, 1), ("d.bin", 0, 0), (&a, 12, 1), (&a, 13, 2)],
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    let want: Vec<Option<Vec<u8>>> = vec![
        Some(data()[0..1].to_vec()),
        None,
        Some(b"r2".to_vec()),
        Some(data()[503..504].to_vec()),
        None,
        Some(Vec::new()),
        Some(data()[6..7].to_vec()),
        Some(data()[7..8].to_vec()),
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&get(&s, &format!("m/{i}")), w, "m/{i}");
    }
    assert_eq!(get(&s, "m/10").unwrap(), &data()[501..503]);
    assert_eq!(get(&s, "m/11"), None);
    assert_eq!(get(&s, "n/0.0").unwrap(), &data()[10..11]);
    assert_eq!(get(&s, "n/0.1").unwrap(), &data()[500..]);
    assert_eq!(get(&s, "n/1.1").unwrap(), &data()[13..15]);
    assert_eq!(s.reference_files_opened(), 3);
    assert_eq!(
        s.list_prefix_str("m/").unwrap(),
        [
            "m/.zarray",
            "m/0",
            "m/10",
            "m/2",
            "m/3",
            "m/5",
            "m/6",
            "m/7"
        ]
    );
}

#[test]
fn reference_parquet_over_http_fetches_the_files_a_batch_needs_at_once_and_escapes_folders() {
    // An array folder named "a%41b": sent unescaped, the request would ask
    // for "aAb" and find nothing, and the chunks would read as missing.
    let dir = TempDir::new("parquet-remote");
    let root = dir.join("refs.parq");
    std::fs::create_dir_all(&root).unwrap();
    let zmeta = json!({
        "record_size": 1,
        "metadata": {"a%41b/.zarray": {"shape": [4], "chunks": [1], "dtype": "|u1", "zarr_format": 2}}
    });
    std::fs::write(root.join(".zmetadata"), zmeta.to_string()).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = vec![(
        "refs.parq/.zmetadata".into(),
        zmeta.to_string().into_bytes(),
    )];
    for n in 0..4u8 {
        let path = root.join(format!("a%41b/refs.{n}.parq"));
        let value = [b'v', b'0' + n];
        pq::write_refs(&path, &[(None, 0, 0, Some(&value[..]))], pq::zstd());
        files.push((
            format!("refs.parq/a%41b/refs.{n}.parq"),
            std::fs::read(&path).unwrap(),
        ));
    }
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let server = test_server::serve(
        "",
        &files,
        Mode {
            delay_ms: 100,
            ..Mode::default()
        },
    );
    let s = RefStore::open(&format!("{}/refs.parq", server.url)).unwrap();
    let keys: Vec<(StoreKey, ByteRange)> = (0..4)
        .map(|n| (StoreKey::new(format!("a%41b/{n}")).unwrap(), ByteRange::All))
        .collect();
    let got: Vec<Option<Vec<u8>>> = s.get_many(&keys).into_iter().map(|r| r.unwrap()).collect();
    let want: Vec<Option<Vec<u8>>> = (0..4u8).map(|n| Some(vec![b'v', b'0' + n])).collect();
    assert_eq!(got, want);
    let stats = server.stats.lock().unwrap();
    let parq: Vec<&String> = stats
        .paths
        .iter()
        .filter(|p| p.ends_with(".parq"))
        .collect();
    assert_eq!(parq.len(), 4, "{:?}", stats.paths);
    assert!(
        parq.iter().all(|p| p.contains("/refs.parq/a%2541b/refs.")),
        "{parq:?}"
    );
    // The four files were in flight together, not one after another.
    assert!(stats.max_in_flight >= 2, "{}", stats.max_in_flight);
}
