//! Tests of Zarr v2 metadata: documents, dtypes, fill values, codec
//! mapping both ways, consolidated metadata, and the zarr-python fixtures.

use super::*;
use crate::codec::{CodecChain, CodecContext, Warnings};
use crate::metadata::test_util::{error_naming, files_named, with, without, FIXTURES};
use std::path::Path;

mod codecs;
mod fixtures;
mod strings;

fn zarray() -> Value {
    json!({"shape": [10, 7], "chunks": [3, 7], "dtype": "<i4", "fill_value": -1,
           "order": "C", "filters": null, "dimension_separator": ".",
           "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2})
}

fn p(doc: &Value) -> Result<ArrayMetadata> {
    parse_array(doc.to_string().as_bytes(), None)
}

fn fails(doc: &Value, what: &str) -> &'static str {
    error_naming(p(doc), doc, what)
}

fn round_trips(a: &ArrayMetadata) -> Value {
    let (za, zt) = array_to_json(a).unwrap();
    let back = parse_array(za.to_string().as_bytes(), Some(zt.to_string().as_bytes())).unwrap();
    assert_eq!(&back, a, "{za}");
    za
}

fn codecs_of(doc: &Value) -> Value {
    Value::Array(p(doc).unwrap().codecs)
}

#[test]
fn v2_parses_a_plain_array() {
    let a = p(&zarray()).unwrap();
    assert_eq!(a.zarr_format, 2);
    assert_eq!(a.shape, vec![10, 7]);
    assert_eq!(a.chunk_shape, vec![3, 7]);
    assert_eq!(a.data_type, DataType::Int32);
    assert_eq!(a.fill_value.bytes, (-1i32).to_ne_bytes());
    assert!(a.fill_marks_na);
    assert_eq!(
        a.chunk_key_encoding,
        ChunkKeyEncoding::V2 { separator: '.' }
    );
    assert_eq!(
        Value::Array(a.codecs.clone()),
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "numcodecs.zlib", "configuration": {"level": 1}}])
    );
    assert!(a.attributes.is_empty() && a.dimension_names.is_none() && a.extra.is_empty());
    a.validate().unwrap();
    let za = round_trips(&a);
    assert_eq!(za, zarray());
    // Member order as zarr-python writes it.
    let keys: Vec<&str> = za.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "shape",
            "chunks",
            "dtype",
            "fill_value",
            "order",
            "filters",
            "dimension_separator",
            "compressor",
            "zarr_format"
        ]
    );
}

#[test]
fn v2_dtypes_and_byte_order() {
    for (s, dt, endian) in [
        ("|b1", DataType::Bool, None),
        ("|i1", DataType::Int8, None),
        ("<i1", DataType::Int8, None),
        ("<i2", DataType::Int16, Some(Endian::Little)),
        (">i4", DataType::Int32, Some(Endian::Big)),
        ("<i8", DataType::Int64, Some(Endian::Little)),
        ("|u1", DataType::UInt8, None),
        (">u2", DataType::UInt16, Some(Endian::Big)),
        ("<u4", DataType::UInt32, Some(Endian::Little)),
        ("<u8", DataType::UInt64, Some(Endian::Little)),
        ("<f2", DataType::Float16, Some(Endian::Little)),
        (">f4", DataType::Float32, Some(Endian::Big)),
        ("<f8", DataType::Float64, Some(Endian::Little)),
        ("<c8", DataType::Complex64, Some(Endian::Little)),
        (">c16", DataType::Complex128, Some(Endian::Big)),
    ] {
        assert_eq!(parse_dtype(&json!(s)).unwrap(), (dt, endian), "{s}");
        let canonical = if dt.size() == 1 {
            format!("|{}", &s[1..])
        } else {
            s.to_string()
        };
        assert_eq!(dtype_string(dt, endian).unwrap(), canonical);
        let a = p(&with(
            with(zarray(), "dtype", json!(s)),
            "fill_value",
            json!(null),
        ))
        .unwrap();
        assert_eq!(a.data_type, dt);
        let bytes = json!({"name": "bytes", "configuration": {"endian": endian.map(Endian::name)}});
        let bytes = if endian.is_none() {
            json!({"name": "bytes"})
        } else {
            bytes
        };
        assert_eq!(a.codecs[0], bytes, "{s}");
        let za = round_trips(&a);
        assert_eq!(za["dtype"], json!(canonical));
    }
    for s in [
        "<x9", "<i3", "i4", "<i", "<f1", "|i4", "<b2", "", "<u16", "<i4x", "<c4",
    ] {
        let e = parse_dtype(&json!(s)).unwrap_err();
        assert_eq!(e.kind(), "metadata", "{s}");
        assert!(e.message().contains(&format!("'{s}'")), "{}", e.message());
    }
    assert_eq!(parse_dtype(&json!("|O")).unwrap(), (DataType::String, None));
    assert_eq!(
        parse_dtype(&json!("<U10")).unwrap(),
        (DataType::String, Some(Endian::Little))
    );
    assert_eq!(
        parse_dtype(&json!(">U1")).unwrap(),
        (DataType::String, Some(Endian::Big))
    );
    assert_eq!(
        parse_dtype(&json!("|S12")).unwrap(),
        (DataType::String, None)
    );
    for s in ["<U0", "|S", "<Ux"] {
        let e = parse_dtype(&json!(s)).unwrap_err();
        assert_eq!(e.kind(), "metadata", "{s}");
        assert!(e.message().contains(s), "{}", e.message());
    }
    assert_eq!(parse_dtype(&json!("<O")).unwrap_err().kind(), "unsupported");
    for (v, what) in [
        (json!("<M8[ns]"), "<M8[ns]"),
        (json!("<m8[s]"), "<m8[s]"),
        (json!("|V8"), "|V8"),
        (json!("<f16"), "<f16"),
        (json!("<c32"), "<c32"),
        (json!([["r", "|u1"], ["g", "|u1"]]), "structured"),
    ] {
        let e = parse_dtype(&v).unwrap_err();
        assert_eq!(e.kind(), "unsupported", "{v}");
        assert!(e.message().contains(what), "{}", e.message());
    }
    assert_eq!(parse_dtype(&json!(4)).unwrap_err().kind(), "metadata");
    // Object arrays need the vlen-utf8 object codec.
    let doc = with(
        with(zarray(), "dtype", json!("|O")),
        "fill_value",
        json!(""),
    );
    assert_eq!(
        fails(&with(doc.clone(), "filters", Value::Null), "vlen-utf8"),
        "unsupported"
    );
    let ok = with(doc, "filters", json!([{"id": "vlen-utf8"}]));
    let meta = parse_array(ok.to_string().as_bytes(), None).unwrap();
    assert_eq!(meta.data_type, DataType::String);
    assert_eq!(
        array_to_json(&meta).unwrap().0["filters"],
        json!([{"id": "vlen-utf8"}])
    );
}

#[test]
fn v2_order_f_is_a_reversed_transpose() {
    let a = p(&with(zarray(), "order", json!("F"))).unwrap();
    assert_eq!(
        a.codecs[0],
        json!({"name": "transpose", "configuration": {"order": [1, 0]}})
    );
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
    assert_eq!(chain.stored_strides(&[3, 7]), vec![1, 3]);
    assert_eq!(round_trips(&a)["order"], json!("F"));
    // 3-d and 1-d and 0-d.
    let doc = with(
        with(
            with(zarray(), "shape", json!([4, 5, 6])),
            "chunks",
            json!([2, 2, 3]),
        ),
        "order",
        json!("F"),
    );
    let a = p(&doc).unwrap();
    assert_eq!(a.codecs[0]["configuration"]["order"], json!([2, 1, 0]));
    round_trips(&a);
    for (shape, chunks) in [(json!([5]), json!([2])), (json!([]), json!([]))] {
        let doc = with(
            with(with(zarray(), "shape", shape), "chunks", chunks),
            "order",
            json!("F"),
        );
        assert_eq!(round_trips(&p(&doc).unwrap())["order"], json!("F"));
    }
    // Other permutations have no v2 spelling.
    let mut a = p(&zarray()).unwrap();
    a.shape = vec![4, 5, 6];
    a.chunk_shape = vec![2, 2, 3];
    a.codecs.insert(
        0,
        json!({"name": "transpose", "configuration": {"order": [1, 2, 0]}}),
    );
    let e = array_to_json(&a).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("[1, 2, 0]"), "{}", e.message());
    a.codecs[0] = json!({"name": "transpose", "configuration": {"order": [0, 1, 2]}});
    assert_eq!(array_to_json(&a).unwrap().0["order"], json!("C"));
}

#[test]
fn v2_fill_values() {
    let fill = |dtype: &str, v: Value| {
        p(&with(
            with(zarray(), "dtype", json!(dtype)),
            "fill_value",
            v,
        ))
    };
    let a = fill("<i4", json!(null)).unwrap();
    assert!(!a.fill_marks_na);
    assert_eq!(a.fill_value.bytes, vec![0; 4]);
    assert_eq!(round_trips(&a)["fill_value"], json!(null));
    let a = fill("<f8", json!("NaN")).unwrap();
    assert!(a.fill_marks_na && a.fill_value.as_f64(DataType::Float64).unwrap().is_nan());
    assert_eq!(round_trips(&a)["fill_value"], json!("NaN"));
    for (dt, v) in [
        ("<f4", json!("Infinity")),
        ("<f2", json!("-Infinity")),
        ("<f8", json!(0.5)),
        ("<c16", json!([1.5, "NaN"])),
        ("<c8", json!([0.0, 0.0])),
        ("|b1", json!(true)),
        ("<u8", json!(u64::MAX)),
        ("<i8", json!(i64::MIN)),
    ] {
        let a = fill(dt, v.clone()).unwrap();
        assert_eq!(round_trips(&a)["fill_value"], v, "{dt}");
    }
    // What older writers wrote.
    assert_eq!(
        fill("<i2", json!(-3.0)).unwrap().fill_value.bytes,
        (-3i16).to_ne_bytes()
    );
    assert_eq!(fill("|b1", json!(1)).unwrap().fill_value.bytes, vec![1]);
    assert_eq!(fill("|b1", json!(0)).unwrap().fill_value.bytes, vec![0]);
    assert_eq!(
        fill("<c8", json!(2.0)).unwrap().fill_value.bytes,
        [2f32.to_ne_bytes(), 0f32.to_ne_bytes()].concat()
    );
    // A NaN payload has no v2 spelling: it is written as "NaN".
    let mut a = fill("<f4", json!(0.0)).unwrap();
    a.fill_value.bytes = 0x7fc0_0001u32.to_ne_bytes().to_vec();
    assert_eq!(array_to_json(&a).unwrap().0["fill_value"], json!("NaN"));
    for (dt, v) in [
        ("<i4", json!(1.5)),
        ("<i4", json!("x")),
        ("|u1", json!(-1)),
        ("|u1", json!(256.0)),
        ("|b1", json!(2)),
        ("<f8", json!("nan")),
        ("<c8", json!([1, 2, 3])),
    ] {
        let e = fill(dt, v.clone()).unwrap_err();
        assert_eq!(e.kind(), "metadata", "{dt} {v}");
        assert!(e.message().contains("fill_value"), "{}", e.message());
    }
}

#[test]
fn v2_separators_attributes_and_dimension_names() {
    let a = p(&with(zarray(), "dimension_separator", json!("/"))).unwrap();
    assert_eq!(
        a.chunk_key_encoding,
        ChunkKeyEncoding::V2 { separator: '/' }
    );
    assert_eq!(a.chunk_key_encoding.key(&[1, 2]), "1/2");
    assert_eq!(round_trips(&a)["dimension_separator"], json!("/"));
    let a = p(&without(zarray(), "dimension_separator")).unwrap();
    assert_eq!(
        a.chunk_key_encoding,
        ChunkKeyEncoding::V2 { separator: '.' }
    );
    assert_eq!(
        p(&with(zarray(), "dimension_separator", json!(null))).unwrap(),
        a
    );
    assert_eq!(
        fails(
            &with(zarray(), "dimension_separator", json!("-")),
            "dimension_separator"
        ),
        "metadata"
    );

    let attrs = json!({"units": "m", "_ARRAY_DIMENSIONS": ["y", "x"]});
    let a = parse_array(
        zarray().to_string().as_bytes(),
        Some(attrs.to_string().as_bytes()),
    )
    .unwrap();
    assert_eq!(
        a.dimension_names,
        Some(vec![Some("y".into()), Some("x".into())])
    );
    assert_eq!(Value::Object(a.attributes.clone()), attrs);
    let (_, zt) = array_to_json(&a).unwrap();
    assert_eq!(zt, attrs);
    round_trips(&a);
    // Set in code: written into .zattrs.
    let mut b = p(&zarray()).unwrap();
    b.dimension_names = Some(vec![Some("t".into()), None]);
    let (_, zt) = array_to_json(&b).unwrap();
    assert_eq!(zt, json!({"_ARRAY_DIMENSIONS": ["t", null]}));
    // A malformed _ARRAY_DIMENSIONS is only an attribute.
    for bad in [json!(["y"]), json!("y"), json!(["y", 1])] {
        let attrs = json!({"_ARRAY_DIMENSIONS": bad});
        let a = parse_array(
            zarray().to_string().as_bytes(),
            Some(attrs.to_string().as_bytes()),
        )
        .unwrap();
        assert!(a.dimension_names.is_none());
        assert_eq!(a.attributes["_ARRAY_DIMENSIONS"], bad);
    }
    for bad in [&b"[1]"[..], b"{", b"\"x\"", b"{\"a\": \"\xff\"}"] {
        let e = parse_array(zarray().to_string().as_bytes(), Some(bad)).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.message().contains(".zattrs"), "{}", e.message());
    }
    // Unknown .zarray members are kept and written back.
    let a = p(&with(zarray(), "my_note", json!({"k": 1}))).unwrap();
    assert_eq!(a.extra["my_note"], json!({"k": 1}));
    assert_eq!(round_trips(&a)["my_note"], json!({"k": 1}));
}

#[test]
fn v2_malformed_arrays_name_the_problem() {
    for m in [
        "zarr_format",
        "shape",
        "chunks",
        "dtype",
        "fill_value",
        "order",
    ] {
        assert_eq!(fails(&without(zarray(), m), m), "metadata", "{m}");
    }
    for (m, v) in [
        ("zarr_format", json!(3)),
        ("zarr_format", json!("2")),
        ("shape", json!([10, -7])),
        ("shape", json!(10)),
        ("chunks", json!([3])),
        ("chunks", json!([3, 0])),
        ("chunks", json!([3, 7.5])),
        ("dtype", json!("<x9")),
        ("order", json!("K")),
        ("order", json!(null)),
        ("filters", json!("delta")),
        ("compressor", json!([{"id": "zlib"}])),
    ] {
        let what = if m == "dtype" { "<x9" } else { m };
        let e = fails(&with(zarray(), m, v.clone()), what);
        assert_eq!(e, "metadata", "{m}: {v}");
    }
    for bad in [
        &b""[..],
        b"[2]",
        b"{\"zarr_format\": 2,",
        b"{\"a\": \"\xff\"}",
    ] {
        let e = parse_array(bad, None).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.message().contains(".zarray"), "{}", e.message());
    }
}

#[test]
fn v2_writing_refuses_what_v2_cannot_say() {
    let a = p(&zarray()).unwrap();
    let mut b = a.clone();
    b.chunk_key_encoding = ChunkKeyEncoding::Default { separator: '/' };
    assert_eq!(array_to_json(&b).unwrap_err().kind(), "unsupported");
    let mut b = a.clone();
    b.storage_transformers = vec![json!({"name": "x", "must_understand": false})];
    assert_eq!(array_to_json(&b).unwrap_err().kind(), "unsupported");
    let mut b = a.clone();
    b.codecs = vec![json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 7], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}})];
    let e = array_to_json(&b).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("sharding"), "{}", e.message());
    // A value codec is refused, not dropped.
    let mut b = a.clone();
    b.codecs.insert(
        0,
        json!({"name": "scale_offset", "configuration": {"scale": 2}}),
    );
    let e = array_to_json(&b).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("'scale_offset'"), "{}", e.message());
    // Several compressors: the last is the compressor, the others filters.
    let mut b = a.clone();
    b.codecs.push(json!({"name": "crc32c"}));
    let (za, _) = array_to_json(&b).unwrap();
    assert_eq!(za["filters"], json!([{"id": "zlib", "level": 1}]));
    assert_eq!(za["compressor"], json!({"id": "crc32c"}));
    round_trips(&p(&za).unwrap());
    // A v3 array with v3 defaults converts once its keys are v2 keys.
    let mut m = ArrayMetadata::new(vec![4, 4], DataType::Float32, vec![2, 2]);
    m.codecs
        .push(json!({"name": "zstd", "configuration": {"level": 0, "checksum": false}}));
    assert_eq!(array_to_json(&m).unwrap_err().kind(), "unsupported");
    m.chunk_key_encoding = ChunkKeyEncoding::V2 { separator: '/' };
    m.zarr_format = 2;
    let (za, zt) = array_to_json(&m).unwrap();
    assert_eq!(
        za,
        json!({"shape": [4, 4], "chunks": [2, 2], "dtype": "<f4", "fill_value": 0.0,
        "order": "C", "filters": null, "dimension_separator": "/",
        "compressor": {"id": "zstd", "level": 0}, "zarr_format": 2})
    );
    assert_eq!(zt, json!({}));
    round_trips(&m);
}

#[test]
fn v2_groups() {
    let g = parse_group(br#"{"zarr_format": 2}"#, Some(br#"{"title": "t"}"#)).unwrap();
    assert_eq!(g.attributes["title"], json!("t"));
    assert!(g.extra.is_empty());
    assert_eq!(
        group_to_json(&g),
        (json!({"zarr_format": 2}), json!({"title": "t"}))
    );
    let g = parse_group(br#"{"zarr_format": 2}"#, None).unwrap();
    assert_eq!(
        g,
        GroupMetadata {
            zarr_format: 2,
            ..Default::default()
        }
    );
    // zarr-python 3 writes this into .zmetadata entries.
    let doc = br#"{"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": false, "kind": "inline"}}"#;
    assert_eq!(
        parse_group(doc, None).unwrap(),
        GroupMetadata {
            zarr_format: 2,
            ..Default::default()
        }
    );
    let g = parse_group(br#"{"zarr_format": 2, "x": 1}"#, None).unwrap();
    assert_eq!(group_to_json(&g).0, json!({"zarr_format": 2, "x": 1}));
    for (doc, what) in [
        (&br#"{}"#[..], "zarr_format"),
        (br#"{"zarr_format": 3}"#, "zarr_format"),
        (br#"[2]"#, ".zgroup"),
        (br#"{"zarr_format": 2"#, ".zgroup"),
    ] {
        let e = parse_group(doc, None).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.message().contains(what), "{}", e.message());
    }
    let e = parse_group(br#"{"zarr_format": 2}"#, Some(b"[]")).unwrap_err();
    assert!(e.message().contains(".zattrs"), "{}", e.message());
}

#[test]
fn v2_consolidated() {
    let doc = json!({"zarr_consolidated_format": 1, "metadata": {
        ".zgroup": {"zarr_format": 2}, "a/.zarray": zarray(), "a/.zattrs": {"k": 1}}});
    let m = parse_consolidated(doc.to_string().as_bytes()).unwrap();
    assert_eq!(m.len(), 3);
    let a = array_from_json(&m["a/.zarray"], m.get("a/.zattrs")).unwrap();
    assert_eq!(a.attributes["k"], json!(1));
    let g = group_from_json(&m[".zgroup"], m.get(".zattrs")).unwrap();
    assert_eq!(
        g,
        GroupMetadata {
            zarr_format: 2,
            ..Default::default()
        }
    );
    for (doc, kind, what) in [
        (
            json!({"metadata": {}}),
            "metadata",
            "zarr_consolidated_format",
        ),
        (
            json!({"zarr_consolidated_format": 2, "metadata": {}}),
            "unsupported",
            "zarr_consolidated_format",
        ),
        (
            json!({"zarr_consolidated_format": 1}),
            "metadata",
            "metadata",
        ),
        (
            json!({"zarr_consolidated_format": 1, "metadata": []}),
            "metadata",
            "metadata",
        ),
        (json!([]), "metadata", ".zmetadata"),
    ] {
        let e = parse_consolidated(doc.to_string().as_bytes()).unwrap_err();
        assert_eq!(e.kind(), kind, "{doc}");
        assert!(e.message().contains(what), "{}", e.message());
    }
}

#[test]
fn object_arrays_as_xarray_and_zarr_python_2_write_them() {
    // blosc after the vlen-utf8 filter (xarray's default for v2 strings),
    // and zarr-python 2's fill value of 0.
    let doc = with(
        with(
            with(with(zarray(), "dtype", json!("|O")), "fill_value", json!(0)),
            "filters",
            json!([{"id": "vlen-utf8"}]),
        ),
        "compressor",
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
    );
    let meta = parse_array(doc.to_string().as_bytes(), None).unwrap();
    assert_eq!(meta.data_type, DataType::String);
    assert!(!meta.fill_marks_na);
    let blosc = meta.codecs.iter().find(|c| c["name"] == "blosc").unwrap();
    assert_eq!(blosc["configuration"]["typesize"], json!(1));
}

#[test]
fn complex_arrays_with_a_null_fill_value_reach_r_and_back() {
    let doc = with(
        with(zarray(), "dtype", json!("<c16")),
        "fill_value",
        Value::Null,
    );
    let meta = parse_array(doc.to_string().as_bytes(), None).unwrap();
    let text = serde_json::to_vec(&crate::metadata::r_form(&NodeMetadata::Array(meta))).unwrap();
    let (node, _) = crate::metadata::canonical(&text, true).unwrap();
    let NodeMetadata::Array(back) = node else {
        panic!("not an array")
    };
    assert!(!back.fill_marks_na);
    assert_eq!(back.data_type, DataType::Complex128);
}
