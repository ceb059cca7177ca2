//! The zarr-python fixtures: every v2 array parses, decodes to the values
//! of the manifest and writes back the same documents.

use super::*;

fn read_opt(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// Native-endian bytes of one element -> the manifest's JSON encoding.
fn element_json(bytes: &[u8], dt: DataType) -> Value {
    FillValue {
        bytes: bytes.to_vec(),
    }
    .to_json(dt)
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

/// Decode every stored chunk of one fixture array with the chain its
/// metadata maps to, and compare every element inside the array with
/// the manifest. Returns the number of chunks decoded.
fn check_chunks(store: &Path, entry: &Value, meta: &ArrayMetadata) -> usize {
    let path = entry["path"].as_str().unwrap();
    let what = format!("{}/{path}", store.display());
    let values = entry["values"].as_array().unwrap();
    let dt = meta.data_type;
    let size = dt.size();
    let shape: Vec<usize> = meta.shape.iter().map(|&s| s as usize).collect();
    let chunk: Vec<usize> = meta.chunk_shape.iter().map(|&s| s as usize).collect();
    let ndim = shape.len();
    let chain = CodecChain::from_json(&meta.codecs, dt, &meta.fill_value.bytes, ndim).unwrap();
    let strides = chain.stored_strides(&chunk);
    let sep = meta.chunk_key_encoding.separator();
    let w = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: true,
        warnings: &w,
        what: &what,
    };
    let keys = entry["chunk_keys"].as_array().unwrap();
    for key in keys {
        let key = key.as_str().unwrap();
        let idx: Vec<u64> = if ndim == 0 {
            vec![]
        } else {
            key.split(sep).map(|s| s.parse().unwrap()).collect()
        };
        assert_eq!(meta.chunk_key_encoding.key(&idx), key, "{what}");
        let raw = std::fs::read(store.join(path).join(key)).unwrap();
        let (decoded, strings) = if dt == DataType::String {
            let s = chain
                .decode_strings(raw, &chunk, &ctx)
                .unwrap_or_else(|e| panic!("{what} {key}: {e}"));
            (Vec::new(), s)
        } else {
            let d = chain
                .decode(raw, &chunk, &ctx)
                .unwrap_or_else(|e| panic!("{what} {key}: {e}"));
            assert_eq!(d.len(), chunk.iter().product::<usize>() * size);
            (d, Vec::new())
        };
        // Every element of the chunk that lies inside the array.
        let n: usize = chunk.iter().product();
        for local in 0..n {
            let mut rem = local;
            let mut pos = vec![0usize; ndim];
            for d in (0..ndim).rev() {
                pos[d] = rem % chunk[d];
                rem /= chunk[d];
            }
            let global: Vec<usize> = (0..ndim)
                .map(|d| idx[d] as usize * chunk[d] + pos[d])
                .collect();
            if (0..ndim).any(|d| global[d] >= shape[d]) {
                continue;
            }
            let flat = (0..ndim).fold(0, |acc, d| acc * shape[d] + global[d]);
            let at: usize = (0..ndim).map(|d| pos[d] * strides[d]).sum::<usize>();
            let got = if dt == DataType::String {
                Value::String(strings[at].clone())
            } else {
                element_json(&decoded[at * size..(at + 1) * size], dt)
            };
            assert!(
                same(&got, &values[flat]),
                "{what} chunk {key} at {global:?}: got {got}, expected {}",
                values[flat]
            );
        }
    }
    assert!(w.take().is_empty(), "{what}");
    keys.len()
}

#[test]
fn v2_zarr_python_fixtures_parse_decode_and_round_trip() {
    let root = Path::new(FIXTURES).join("v2");
    if !root.is_dir() {
        println!(
            "note: {} is absent; skipping the v2 fixtures",
            root.display()
        );
        return;
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(Path::new(FIXTURES).join("manifest.json")).unwrap())
            .unwrap();
    let entries: Vec<&Value> = manifest["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["zarr_format"] == 2)
        .collect();
    let mut files = Vec::new();
    files_named(&root, ZARRAY, &mut files);
    let (mut numeric, mut strings, mut chunks, mut exact) = (0, 0, 0, 0);
    for f in &files {
        let dir = f.parent().unwrap();
        let zattrs = read_opt(&dir.join(ZATTRS));
        let meta = parse_array(&std::fs::read(f).unwrap(), zattrs.as_deref())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if meta.data_type == DataType::String {
            strings += 1;
        } else {
            numeric += 1;
        }
        round_trips(&meta);
        // What we write is what zarr-python wrote.
        let doc: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        assert_eq!(array_to_json(&meta).unwrap().0, doc, "{}", f.display());
        // Find the manifest entry of this array.
        let rel = dir
            .strip_prefix(Path::new(FIXTURES))
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let entry = entries
            .iter()
            .find(|e| {
                let p = e["path"].as_str().unwrap();
                let full = if p.is_empty() {
                    e["store"].as_str().unwrap().to_string()
                } else {
                    format!("{}/{p}", e["store"].as_str().unwrap())
                };
                full == rel
            })
            .unwrap_or_else(|| panic!("{rel} is not in the manifest"));
        assert_eq!(json!(meta.shape), entry["shape"]);
        assert_eq!(json!(meta.chunk_shape), entry["chunks"]);
        assert_eq!(meta.data_type.name(), entry["dtype"].as_str().unwrap());
        if entry["fill_value"].is_null() {
            assert!(!meta.fill_marks_na, "{rel}");
        } else {
            assert!(meta.fill_marks_na, "{rel}");
            assert!(
                same(
                    &meta.fill_value.to_json(meta.data_type),
                    &entry["fill_value"]
                ),
                "{rel}"
            );
        }
        let store = Path::new(FIXTURES).join(entry["store"].as_str().unwrap());
        chunks += check_chunks(&store, entry, &meta);
        exact += 1;
    }
    let expected_strings = entries.iter().filter(|e| e["dtype"] == "string").count();
    println!("v2 fixtures: {numeric} numeric and {strings} string arrays parsed and decoded exactly ({chunks} chunks)");
    assert_eq!(strings, expected_strings);
    assert_eq!(numeric + strings, entries.len());
    assert_eq!(exact, numeric + strings);
    assert!(numeric > 0);

    // Groups, and the consolidated metadata of arrays.zarr, agree with the files.
    let mut groups = Vec::new();
    files_named(&root, ZGROUP, &mut groups);
    for f in &groups {
        let zattrs = read_opt(&f.parent().unwrap().join(ZATTRS));
        let g = parse_group(&std::fs::read(f).unwrap(), zattrs.as_deref()).unwrap();
        let (zg, zt) = group_to_json(&g);
        assert_eq!(zg, json!({"zarr_format": 2}));
        assert_eq!(
            parse_group(zg.to_string().as_bytes(), Some(zt.to_string().as_bytes())).unwrap(),
            g
        );
    }
    for e in manifest["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["zarr_format"] == 2)
    {
        let dir = Path::new(FIXTURES)
            .join(e["store"].as_str().unwrap())
            .join(e["path"].as_str().unwrap());
        let g = parse_group(
            &std::fs::read(dir.join(ZGROUP)).unwrap(),
            read_opt(&dir.join(ZATTRS)).as_deref(),
        )
        .unwrap();
        assert_eq!(Value::Object(g.attributes), e["attributes"]);
    }
    let store = root.join("arrays.zarr");
    let m = parse_consolidated(&std::fs::read(store.join(ZMETADATA)).unwrap()).unwrap();
    let (mut arrays, mut groups) = (0, 0);
    for (key, doc) in &m {
        let (node, name) = match key.rsplit_once('/') {
            Some((n, k)) => (n.to_string(), k),
            None => (String::new(), key.as_str()),
        };
        let attrs_key = if node.is_empty() {
            ZATTRS.to_string()
        } else {
            format!("{node}/{ZATTRS}")
        };
        let on_disk = |f: &str| std::fs::read(store.join(&node).join(f)).unwrap();
        match name {
            ZARRAY => {
                let from_disk = parse_array(
                    &on_disk(ZARRAY),
                    read_opt(&store.join(&node).join(ZATTRS)).as_deref(),
                );
                match array_from_json(doc, m.get(&attrs_key)) {
                    Ok(a) => assert_eq!(a, from_disk.unwrap(), "{key}"),
                    Err(e) => assert_eq!(e, from_disk.unwrap_err()),
                }
                arrays += 1;
            }
            ZGROUP => {
                let g = group_from_json(doc, m.get(&attrs_key)).unwrap();
                let from_disk = parse_group(
                    &on_disk(ZGROUP),
                    read_opt(&store.join(&node).join(ZATTRS)).as_deref(),
                )
                .unwrap();
                assert_eq!(g, from_disk, "{key}");
                groups += 1;
            }
            ZATTRS => {}
            other => panic!("unexpected consolidated key {other}"),
        }
    }
    println!("arrays.zarr/.zmetadata: {arrays} arrays and {groups} groups agree with their files");
    assert!(arrays > 0 && groups > 0);
}
