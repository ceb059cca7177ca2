//! Codec chains: parsing, ordering, and the round trip of each mode.

use super::test_util::ctx;
use super::*;
use crate::dtype::DataType;
use serde_json::json;

#[test]
fn every_compressor_round_trips_through_a_chain() {
    let w = Warnings::default();
    let data: Vec<u8> = (0..4000u32)
        .flat_map(|i| (i as f64 / 3.0).to_le_bytes())
        .collect();
    let chains = [
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 5}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": true}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}]),
    ];
    for c in chains {
        let chain =
            CodecChain::from_json(c.as_array().unwrap(), DataType::Float64, &[0; 8], 1).unwrap();
        let enc = chain.encode(data.clone(), &[data.len() / 8]).unwrap();
        // encode_into gives the same bytes, whatever its buffers held
        let mut input = data.clone();
        let mut out = vec![7u8; 3 * data.len()];
        chain
            .encode_into(&mut input, &[data.len() / 8], &mut out)
            .unwrap();
        assert_eq!(out, enc, "chain {c}");
        // and again with the buffers it left behind
        input.clear();
        input.extend_from_slice(&data);
        let mut out2 = std::mem::take(&mut out);
        out2.truncate(5);
        chain
            .encode_into(&mut input, &[data.len() / 8], &mut out2)
            .unwrap();
        assert_eq!(out2, enc, "chain {c}, buffers reused");
        assert_eq!(
            chain.decode(enc, &[data.len() / 8], &ctx(&w)).unwrap(),
            data,
            "chain {c}"
        );
    }
}

#[test]
fn unknown_and_misplaced_codecs_are_refused() {
    let e = CodecChain::from_json(
        &[json!({"name": "bytes"}), json!({"name": "lzma"})],
        DataType::Int8,
        &[0],
        1,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("lzma"));
    let e = CodecChain::from_json(
        &[json!({"name": "gzip", "configuration": {"level": 1}})],
        DataType::Int8,
        &[0],
        1,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "metadata");
    let e = CodecChain::from_json(&[], DataType::Int8, &[0], 1).unwrap_err();
    assert_eq!(e.kind(), "metadata");
}

#[test]
fn a_wrong_length_after_decoding_is_a_corrupt_chunk() {
    let w = Warnings::default();
    let chain = CodecChain::from_json(
        &[json!({"name": "bytes", "configuration": {"endian": "little"}})],
        DataType::Int32,
        &[0; 4],
        1,
    )
    .unwrap();
    let e = chain.decode(vec![0u8; 7], &[2], &ctx(&w)).unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    assert!(e.message().contains(super::test_util::CHUNK));
}

#[test]
fn strings_go_through_transpose_and_sharding_and_are_read_whole() {
    let w = Warnings::default();
    let c = json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
                   {"name": "sharding_indexed", "configuration": {
                       "chunk_shape": [3, 1],
                       "codecs": [{"name": "vlen-utf8", "configuration": {}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
                       "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                       "index_location": "end"}}]);
    let chain = CodecChain::from_json(c.as_array().unwrap(), DataType::String, b"", 2).unwrap();
    assert!(chain.partial_sharding().is_none(), "strings are read whole");
    assert!(chain.sharding().is_some() && chain.fixed_string().is_none());
    // A 2 x 6 chunk, stored (after the transpose) as 6 x 2 in shards of 3 x 1.
    let items: Vec<String> = (0..12).map(|i| format!("\u{65e5}{i}")).collect();
    let enc = chain.encode_strings(&items, &[2, 6]).unwrap();
    assert_eq!(chain.decode_strings(enc, &[2, 6], &ctx(&w)).unwrap(), items);
    let numeric = CodecChain::from_json(
        &[json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}})],
        DataType::Int32,
        &[0; 4],
        1,
    )
    .unwrap();
    assert!(numeric.partial_sharding().is_some());
}

#[test]
fn fixed_width_strings_are_a_string_codec_whose_fill_must_fit() {
    let w = Warnings::default();
    let codecs = [
        json!({"name": "numpy.fixed_string", "configuration": {"dtype": "<U3"}}),
        json!({"name": "gzip", "configuration": {"level": 1}}),
    ];
    let chain = CodecChain::from_json(&codecs, DataType::String, b"", 1).unwrap();
    assert_eq!(chain.fixed_string().unwrap().width, 3);
    assert_eq!(Value::Array(chain.to_json()), Value::Array(codecs.to_vec()));
    let enc = chain.encode_strings(&["abc", "", "\u{e9}"], &[3]).unwrap();
    assert_eq!(
        chain.decode_strings(enc, &[3], &ctx(&w)).unwrap(),
        ["abc", "", "\u{e9}"]
    );
    assert_eq!(
        chain.encode_strings(&["abcd"], &[1]).unwrap_err().kind(),
        "type"
    );
    let e = CodecChain::from_json(&codecs, DataType::String, b"long", 1).unwrap_err();
    assert_eq!(e.kind(), "metadata");
    assert!(e.message().contains("fill value"), "{}", e.message());
    let e = CodecChain::from_json(&codecs[..1], DataType::Int32, &[0; 4], 1).unwrap_err();
    assert_eq!(e.kind(), "metadata");
    let e =
        CodecChain::from_json(&[json!({"name": "bytes"})], DataType::String, b"", 1).unwrap_err();
    assert!(
        e.message().contains("numpy.fixed_string"),
        "{}",
        e.message()
    );
}

#[test]
fn transposes_compose_and_write_back_unchanged() {
    let c = json!([{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}]);
    let chain = CodecChain::from_json(c.as_array().unwrap(), DataType::Int32, &[0; 4], 3).unwrap();
    assert_eq!(chain.order(), Some(vec![1, 2, 0]));
    assert_eq!(Value::Array(chain.to_json()), c);
}
