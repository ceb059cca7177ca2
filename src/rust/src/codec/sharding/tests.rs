//! Tests of the sharding codec: round trips, shared buffers, hostile
//! indexes, strings and nested shards.

use super::*;
use crate::codec::Warnings;

fn sharding(config: Value, dtype: DataType, ndim: usize) -> Sharding {
    let fill = vec![0u8; dtype.size()];
    Sharding::from_config(config.as_object().unwrap(), dtype, &fill, ndim).unwrap()
}

fn config(location: &str, inner: Value) -> Value {
    json!({"chunk_shape": [2, 3], "codecs": inner,
           "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
           "index_location": location})
}

fn ctx(w: &Warnings) -> CodecContext<'_> {
    CodecContext {
        strict_checksums: false,
        warnings: w,
        what: "shard 'c/0/0'",
    }
}

/// Shards of 2-d int32 inner chunks stored by `bytes` alone, with the
/// index at `location`.
fn plain_int32(location: &str) -> Sharding {
    let inner = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    sharding(config(location, inner), DataType::Int32, 2)
}

fn shard_data() -> Vec<u8> {
    // 4 x 6 int32 in C order; the inner chunk at (1, 1) is all zero (fill)
    let mut v: Vec<i32> = (1..=24).collect();
    for r in 2..4 {
        for c in 3..6 {
            v[r * 6 + c] = 0;
        }
    }
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn shards_round_trip_with_the_index_at_either_end() {
    let w = Warnings::default();
    for location in ["start", "end"] {
        let s = sharding(
            config(
                location,
                json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]),
            ),
            DataType::Int32,
            2,
        );
        let data = shard_data();
        let enc = s.encode_shard(&data, &[4, 6]).unwrap();
        let entries = s.read_index(&enc, &[2, 2], &ctx(&w)).unwrap();
        assert_eq!(
            entries.iter().filter(|e| e.is_none()).count(),
            1,
            "the fill chunk is not stored"
        );
        assert!(entries[3].is_none());
        assert_eq!(s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap(), data);
        assert_eq!(s.index_len(&[2, 2]).unwrap(), 16 * 4 + 4);
    }
}

#[test]
fn shards_encoded_with_shared_buffers_match_fresh_ones() {
    // One Buffers for shard after shard, as a writer uses it: the
    // buffers come back holding other shards' bytes.
    let inner = [
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]),
    ];
    for codecs in inner {
        let s = sharding(config("end", codecs.clone()), DataType::Int32, 2);
        let buffers = Buffers::default();
        let shards: Vec<Vec<u8>> = vec![
            shard_data(),
            (100..124i32).flat_map(|x| x.to_ne_bytes()).collect(),
            vec![0u8; 24 * 4],
            shard_data().iter().rev().copied().collect(),
        ];
        for data in &shards {
            let fresh = s.encode_shard(data, &[4, 6]).unwrap();
            let shared = s
                .encode_shard_with(&[4, 6], &buffers, |idx, buf| {
                    // inner chunk (r, c) of 2 x 3 elements, C order
                    for (k, e) in buf.chunks_exact_mut(4).enumerate() {
                        let (r, c) = (idx[0] * 2 + k / 3, idx[1] * 3 + k % 3);
                        let at = (r * 6 + c) * 4;
                        e.copy_from_slice(&data[at..at + 4]);
                    }
                })
                .unwrap();
            match shared {
                Some(parts) => {
                    assert_eq!(parts.concat(), fresh, "{codecs}");
                    buffers.give_all(parts.into_buffers());
                }
                None => assert!(data.iter().all(|&b| b == 0), "{codecs}"),
            }
        }
    }
}

#[test]
fn a_bad_index_checksum_is_an_error_even_when_checksums_only_warn() {
    let w = Warnings::default();
    let s = plain_int32("end");
    let mut enc = s.encode_shard(&shard_data(), &[4, 6]).unwrap();
    let n = enc.len();
    enc[n - 10] ^= 0xff;
    let e = s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap_err();
    assert_eq!(e.kind(), "checksum");
    assert!(e.message().contains("shard index"));
}

#[test]
fn an_index_pointing_past_the_end_is_a_corrupt_chunk() {
    let w = Warnings::default();
    let s = plain_int32("start");
    let entries = vec![Some((1000u64, 24u64)), None, None, None];
    let mut shard = s.encode_index(&entries, &[2, 2]).unwrap();
    shard.extend_from_slice(&[0u8; 24]);
    let e = s.decode_shard(&shard, &[4, 6], &ctx(&w)).unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    assert!(e.message().contains("past the end"), "{}", e.message());
    let e = s.decode_shard(&[0u8; 10], &[4, 6], &ctx(&w)).unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
}

#[test]
fn an_inner_shape_that_does_not_divide_the_shard_is_refused() {
    let s = plain_int32("end");
    assert_eq!(s.grid(&[4, 7]).unwrap_err().kind(), "metadata");
}

fn hex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

fn string_sharding(config: Value, fill: &str) -> Sharding {
    Sharding::from_config(
        config.as_object().unwrap(),
        DataType::String,
        fill.as_bytes(),
        2,
    )
    .unwrap()
}

/// A 4 x 6 shard of strings in C order; the inner chunk at (1, 1) is
/// all fill ("").
fn shard_strings() -> Vec<String> {
    let mut v: Vec<String> = (0..24).map(|i| format!("s{i}\u{e9}")).collect();
    v[0] = String::new();
    for r in 2..4 {
        for c in 3..6 {
            v[r * 6 + c] = String::new();
        }
    }
    v
}

#[test]
fn a_shard_of_strings_written_by_zarr_python_decodes_and_encodes_the_same() {
    // zarr-python 3.1.6: shape (2, 4), shards (2, 4), chunks (1, 2),
    // fill "-", no compressor. Inner chunk (0, 1) is all fill: missing.
    let data = hex(concat!(
        "02000000010000006102000000c3a9020000000000000002000000787902000000",
        "010000007a010000002d00000000000000000f00000000000000ffffffffffffffff",
        "ffffffffffffffff0f000000000000000e000000000000001d000000000000000e0000",
        "0000000000ac76b981"
    ));
    let s = string_sharding(
        json!({"chunk_shape": [1, 2], "codecs": [{"name": "vlen-utf8", "configuration": {}}],
               "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
               "index_location": "end"}),
        "-",
    );
    let w = Warnings::default();
    let strings = s.decode_shard_strings(&data, &[2, 4], &ctx(&w)).unwrap();
    assert_eq!(strings, ["a", "\u{e9}", "-", "-", "", "xy", "z", "-"]);
    assert_eq!(s.encode_shard_strings(&strings, &[2, 4]).unwrap(), data);
}

#[test]
fn shards_of_strings_round_trip_and_skip_fill_inner_chunks() {
    let w = Warnings::default();
    let vlen = json!({"name": "vlen-utf8", "configuration": {}});
    let inners = [
        json!([vlen]),
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, vlen,
               {"name": "gzip", "configuration": {"level": 1}}]),
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 3], "codecs": [vlen],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
    ];
    for location in ["start", "end"] {
        for inner in &inners {
            let s = string_sharding(config(location, inner.clone()), "");
            let data = shard_strings();
            let enc = s.encode_shard_strings(&data, &[4, 6]).unwrap();
            let entries = s.read_index(&enc, &[2, 2], &ctx(&w)).unwrap();
            let missing: Vec<usize> = (0..4).filter(|&i| entries[i].is_none()).collect();
            assert_eq!(missing, [3], "{location} {inner}");
            assert_eq!(
                s.decode_shard_strings(&enc, &[4, 6], &ctx(&w)).unwrap(),
                data,
                "{location} {inner}"
            );
        }
    }
    // A shard with no inner chunk stored reads as the fill value.
    let s = string_sharding(config("end", json!([vlen])), "fill");
    let empty = s.encode_shard_strings(&vec!["fill"; 24], &[4, 6]).unwrap();
    assert_eq!(empty.len(), s.index_len(&[2, 2]).unwrap());
    assert_eq!(
        s.decode_shard_strings(&empty, &[4, 6], &ctx(&w)).unwrap(),
        vec!["fill"; 24]
    );
}

#[test]
fn a_corrupt_inner_chunk_of_strings_names_the_shard() {
    let w = Warnings::default();
    let s = string_sharding(
        config("end", json!([{"name": "vlen-utf8", "configuration": {}}])),
        "",
    );
    let mut enc = s.encode_shard_strings(&shard_strings(), &[4, 6]).unwrap();
    enc[0] = 99; // the string count of the first inner chunk
    let e = s.decode_shard_strings(&enc, &[4, 6], &ctx(&w)).unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    assert!(e.message().contains("shard 'c/0/0'"), "{}", e.message());
    let e = s.encode_shard_strings(&["x"; 5], &[4, 6]).unwrap_err();
    assert_eq!(e.kind(), "type");
}

#[test]
fn nested_shards_round_trip() {
    let w = Warnings::default();
    let inner = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 3],
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]);
    let s = sharding(config("end", inner), DataType::Int32, 2);
    let data = shard_data();
    let enc = s.encode_shard(&data, &[4, 6]).unwrap();
    assert_eq!(s.decode_shard(&enc, &[4, 6], &ctx(&w)).unwrap(), data);
}
