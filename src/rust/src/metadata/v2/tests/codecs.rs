//! numcodecs compressors and filters of Zarr v2 documents, mapped to
//! codecs and back.

use super::*;

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
        json!({"id": "imagecodecs_jpeg2k"}),
        json!({"id": "snappy", "level": 1}),
        json!({"id": "no_such_codec"}),
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
        json!([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}},
               {"name": "bytes", "configuration": {"endian": "little"}},
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
    assert_eq!(codecs_of(&doc)[0]["configuration"]["astype"], json!("<i4"));
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
            json!([{"id": "imagecodecs_jpeg2k", "level": 1}]),
            "unsupported",
            "unsupported filter 'imagecodecs_jpeg2k'",
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
    let z = crate::codec::bytes_codec_from_json(
        &serde_json::json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
        crate::dtype::DataType::UInt8,
    )
    .unwrap();
    let raw = z.decode(enc, ctx2.decode_to(None)).unwrap();
    let diffs: Vec<i32> = raw
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(diffs, vec![10, 2, -3, -13]);
}
