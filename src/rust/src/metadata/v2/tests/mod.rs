//! Tests of Zarr v2 metadata: documents, dtypes, fill values, codec
//! mapping both ways, consolidated metadata, and the zarr-python fixtures.

use super::*;
use crate::codec::{CodecChain, CodecContext, Warnings};
use crate::metadata::test_util::{error_naming, files_named, with, without, FIXTURES};
use std::path::Path;

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

fn fixed(dtype: &str, fill: Value) -> Value {
    with(
        with(with(zarray(), "dtype", json!(dtype)), "fill_value", fill),
        "chunks",
        json!([10, 7]),
    )
}

#[test]
fn v2_fixed_width_strings_parse_and_write_back() {
    // zarr-python's defaults: fill "" and a compressor, in F order too.
    for order in ["C", "F"] {
        let doc = with(fixed("<U5", json!("")), "order", json!(order));
        let a = p(&doc).unwrap();
        assert_eq!(a.data_type, DataType::String);
        assert!(a.fill_marks_na && a.fill_value.bytes.is_empty());
        let codecs: Vec<&str> = a
            .codecs
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let want = if order == "F" {
            vec!["transpose", "numpy.fixed_string", "numcodecs.zlib"]
        } else {
            vec!["numpy.fixed_string", "numcodecs.zlib"]
        };
        assert_eq!(codecs, want);
        assert_eq!(
            a.codecs[codecs.len() - 2],
            json!({"name": "numpy.fixed_string", "configuration": {"dtype": "<U5"}})
        );
        assert_eq!(round_trips(&a), doc);
    }
    // Big-endian U with a non-ASCII fill, written back as text.
    let doc = fixed(">U3", json!("h\u{e9}"));
    let a = p(&doc).unwrap();
    assert_eq!(a.fill_value.bytes, "h\u{e9}".as_bytes());
    assert_eq!(round_trips(&a), doc);
    // S fill values are base64, as numcodecs writes them.
    let doc = fixed("|S5", json!("YWI="));
    let a = p(&doc).unwrap();
    assert_eq!(a.fill_value.bytes, b"ab");
    assert_eq!(round_trips(&a), doc);
    assert_eq!(
        round_trips(&p(&fixed("|S5", json!(""))).unwrap()),
        fixed("|S5", json!(""))
    );
    // A null fill: no missing-value marker, and null again when written.
    let a = p(&fixed("<U5", Value::Null)).unwrap();
    assert!(!a.fill_marks_na);
    assert_eq!(round_trips(&a)["fill_value"], Value::Null);
    for (doc, what) in [
        (fixed("|S5", json!("not base64!")), "base64"),
        (fixed("|S5", json!("/w==")), "UTF-8"),
        (fixed("<U5", json!(0)), "a string or null"),
        (fixed("<U2", json!("abc")), "3 characters"),
        (fixed("|S2", json!("w6nDqQ==")), "4 UTF-8 bytes"),
    ] {
        assert_eq!(fails(&doc, what), "metadata", "{doc}");
    }
}

/// Chunks as NumPy lays them out (`tobytes` of the arrays, checked with
/// NumPy 2.4) decode through the chain v2 metadata maps to, and encode
/// back to the same bytes.
#[test]
fn v2_fixed_width_string_chunks_match_numpy() {
    let w = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: false,
        warnings: &w,
        what: "t",
    };
    let hex = |h: &str| -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    };
    // np.array([["ab", "\u{e9}"], ["", "xyz"]], dtype=">U3"), order "F".
    let doc = with(
        with(
            with(
                with(fixed(">U3", json!("")), "shape", json!([2, 2])),
                "chunks",
                json!([2, 2]),
            ),
            "order",
            json!("F"),
        ),
        "compressor",
        Value::Null,
    );
    let raw = hex("000000610000006200000000000000000000000000000000000000e9000000000000000000000078000000790000007a");
    let a = p(&doc).unwrap();
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
    let strings = chain.decode_strings(raw.clone(), &[2, 2], &ctx).unwrap();
    // Laid out with the chain's strides: [i, j] at i + 2 j.
    assert_eq!(chain.stored_strides(&[2, 2]), vec![1, 2]);
    assert_eq!(strings, ["ab", "", "\u{e9}", "xyz"]);
    assert_eq!(chain.encode_strings(&strings, &[2, 2]).unwrap(), raw);
    // The same as |S4 in C order (UTF-8 bytes), zlib-compressed.
    let doc = with(
        with(fixed("|S4", json!("")), "shape", json!([2, 2])),
        "chunks",
        json!([2, 2]),
    );
    let raw = hex("61620000c3a900000000000078797a77");
    let a = p(&doc).unwrap();
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
    let enc = chain
        .encode_strings(&["ab", "\u{e9}", "", "xyzw"], &[2, 2])
        .unwrap();
    let z = crate::codec::zlib::Zlib { level: 1 };
    assert_eq!(
        crate::codec::BytesToBytes::decode(&z, enc.clone(), None, &ctx).unwrap(),
        raw
    );
    assert_eq!(
        chain.decode_strings(enc, &[2, 2], &ctx).unwrap(),
        ["ab", "\u{e9}", "", "xyzw"]
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
fn v2_compressors_map_to_codecs() {
    let comp = |c: Value| codecs_of(&with(zarray(), "compressor", c))[1].clone();
    assert_eq!(
        comp(json!({"id": "gzip", "level": 5})),
        json!({"name": "gzip", "configuration": {"level": 5}})
    );
    assert_eq!(
        comp(json!({"id": "zstd", "level": 1})),
        json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}})
    );
    assert_eq!(
        comp(json!({"id": "zstd", "level": 3, "checksum": true})),
        json!({"name": "zstd", "configuration": {"level": 3, "checksum": true}})
    );
    assert_eq!(
        comp(json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})),
        json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
               "shuffle": "shuffle", "typesize": 4, "blocksize": 0}})
    );
    assert_eq!(
        comp(json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}))
            ["configuration"]["shuffle"],
        json!("bitshuffle")
    );
    assert_eq!(
        comp(json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 0, "blocksize": 0}))
            ["configuration"]["shuffle"],
        json!("noshuffle")
    );
    // AUTOSHUFFLE: bit shuffle for one-byte items, byte shuffle otherwise.
    assert_eq!(
        comp(json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}))
            ["configuration"]["shuffle"],
        json!("shuffle")
    );
    let doc = with(
        with(
            with(zarray(), "dtype", json!("|u1")),
            "fill_value",
            json!(0),
        ),
        "compressor",
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}),
    );
    let c = &p(&doc).unwrap().codecs[1]["configuration"];
    assert_eq!(
        (c["shuffle"].clone(), c["typesize"].clone()),
        (json!("bitshuffle"), json!(1))
    );
    assert_eq!(
        comp(json!({"id": "lz4", "acceleration": 1})),
        json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}})
    );
    assert_eq!(
        comp(json!({"id": "bz2", "level": 9})),
        json!({"name": "numcodecs.bz2", "configuration": {"level": 9}})
    );
    assert_eq!(comp(json!({"id": "crc32c"})), json!({"name": "crc32c"}));
    assert_eq!(
        comp(json!({"id": "crc32c", "location": "end"})),
        json!({"name": "crc32c"})
    );
    // numcodecs' defaults fill in absent members.
    assert_eq!(
        comp(json!({"id": "zlib"}))["configuration"]["level"],
        json!(1)
    );
    // Every one writes back as numcodecs wrote it.
    for c in [
        json!({"id": "zlib", "level": 5}),
        json!({"id": "gzip", "level": 5}),
        json!({"id": "zstd", "level": 1}),
        json!({"id": "zstd", "level": 1, "checksum": true}),
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
        json!({"id": "lz4", "acceleration": 1}),
        json!({"id": "bz2", "level": 9}),
        json!({"id": "crc32c"}),
    ] {
        let a = p(&with(zarray(), "compressor", c.clone())).unwrap();
        assert_eq!(round_trips(&a)["compressor"], c);
    }
    let a = p(&with(zarray(), "compressor", json!(null))).unwrap();
    assert_eq!(a.codecs.len(), 1);
    assert_eq!(round_trips(&a)["compressor"], json!(null));
    assert_eq!(p(&without(zarray(), "compressor")).unwrap(), a);
}

#[test]
fn v2_bad_and_unsupported_compressors() {
    for c in [
        json!({"id": "lzma"}),
        json!({"id": "snappy", "level": 1}),
        json!({"id": "crc32"}),
    ] {
        let id = c["id"].as_str().unwrap().to_string();
        let e = p(&with(zarray(), "compressor", c)).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert_eq!(e.message(), format!("unsupported compressor '{id}'"));
    }
    let e = p(&with(
        zarray(),
        "compressor",
        json!({"id": "crc32c", "location": "start"}),
    ))
    .unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    for c in [
        json!("zlib"),
        json!({"level": 1}),
        json!({"id": 3}),
        json!({"id": "zlib", "level": 12}),
        json!({"id": "gzip", "level": "high"}),
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 7}),
        json!({"id": "blosc", "cname": "nope", "clevel": 5, "shuffle": 1}),
    ] {
        let e = p(&with(zarray(), "compressor", c.clone())).unwrap_err();
        assert_eq!(e.kind(), "metadata", "{c}");
    }
}

#[test]
fn v2_filters() {
    let f = json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}]);
    let doc = with(zarray(), "filters", f.clone());
    assert_eq!(
        codecs_of(&doc),
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}},
               {"name": "numcodecs.zlib", "configuration": {"level": 1}}])
    );
    let za = round_trips(&p(&doc).unwrap());
    assert_eq!(za["filters"], f);
    assert_eq!(za["compressor"], json!({"id": "zlib", "level": 1}));
    // astype defaults to dtype; blosc after delta sees astype's item size.
    let doc = with(
        with(
            zarray(),
            "filters",
            json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}]),
        ),
        "compressor",
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
    );
    assert_eq!(codecs_of(&doc)[2]["configuration"]["typesize"], json!(2));
    let doc = with(
        zarray(),
        "filters",
        json!([{"id": "delta", "dtype": "<i4"}]),
    );
    assert_eq!(codecs_of(&doc)[1]["configuration"]["astype"], json!("<i4"));
    // Filters only, no compressor.
    let doc = with(
        with(zarray(), "filters", f.clone()),
        "compressor",
        json!(null),
    );
    let za = round_trips(&p(&doc).unwrap());
    assert_eq!(
        (za["filters"].clone(), za["compressor"].clone()),
        (f, json!(null))
    );
    // A compressor used as a filter stays a filter.
    let doc = with(zarray(), "filters", json!([{"id": "gzip", "level": 1}]));
    let za = round_trips(&p(&doc).unwrap());
    assert_eq!(za["filters"], json!([{"id": "gzip", "level": 1}]));
    // [] is no filters.
    assert_eq!(
        p(&with(zarray(), "filters", json!([]))).unwrap(),
        p(&zarray()).unwrap()
    );
    for (f, kind, what) in [
        (
            json!([{"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8"}]),
            "unsupported",
            "unsupported filter 'fixedscaleoffset'",
        ),
        (
            json!([{"id": "vlen-utf8"}]),
            "unsupported",
            "unsupported filter 'vlen-utf8'",
        ),
        (
            json!([{"id": "delta", "dtype": "<f8"}]),
            "unsupported",
            "delta",
        ),
        (json!([{"id": "delta"}]), "metadata", "dtype"),
        (
            json!({"id": "delta", "dtype": "<i4"}),
            "metadata",
            "filters",
        ),
        (json!([5]), "metadata", "filter"),
    ] {
        assert_eq!(
            fails(&with(zarray(), "filters", f.clone()), what),
            kind,
            "{f}"
        );
    }
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

/// End to end: a chain built from parsed v2 metadata decodes a chunk
/// that numcodecs' Delta + Zlib wrote (checked with numcodecs 0.16).
#[test]
fn v2_delta_zlib_chunk_decodes() {
    let doc = with(
        with(with(zarray(), "shape", json!([4])), "chunks", json!([4])),
        "filters",
        json!([{"id": "delta", "dtype": "<i4"}]),
    );
    let a = p(&doc).unwrap();
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 1).unwrap();
    let values: Vec<u8> = [10i32, 12, 9, -4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let enc = chain.encode(values.clone(), &[4]).unwrap();
    let w = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: false,
        warnings: &w,
        what: "t",
    };
    assert_eq!(chain.decode(enc.clone(), &[4], &ctx).unwrap(), values);
    // Delta then zlib: the zlib stream holds 10, 2, -3, -13.
    let w2 = Warnings::default();
    let ctx2 = CodecContext {
        strict_checksums: false,
        warnings: &w2,
        what: "t",
    };
    let z = crate::codec::zlib::Zlib { level: 1 };
    let raw = crate::codec::BytesToBytes::decode(&z, enc, None, &ctx2).unwrap();
    let diffs: Vec<i32> = raw
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(diffs, vec![10, 2, -3, -13]);
}

// ------------------------------------------------------------ fixtures

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
