//! Every codec's decode on hostile bytes (the sharding codec has its own
//! target, shard_index). Byte 0 picks a codec chain: its low 4 bits the
//! chain of the table below, its high 4 bits a variant of the chain's
//! configuration; byte 1 the number of elements of the chunk (1 to 256);
//! the rest is the stored chunk. Decoding may fail, never panic, hang or
//! read out of bounds; a chunk that decodes has the size its shape says,
//! and encodes to a chunk that decodes to the same values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use zarr::codec::{bytes_codec_from_json, CodecChain, CodecContext, Warnings};
use zarr::dtype::DataType;

/// (data type, codecs) of chain `selector`: strings decode with
/// decode_strings, the others with decode.
fn chain(selector: u8) -> (DataType, Value) {
    let v = (selector >> 4) as usize;
    let endian = if v & 1 == 0 { "little" } else { "big" };
    let bytes = json!({"name": "bytes", "configuration": {"endian": endian}});
    let after = |dtype: DataType, codec: Value| (dtype, json!([bytes, codec]));
    let blosc = |cname: &str, shuffle: &str, typesize: usize| {
        json!({"name": "blosc", "configuration": {"cname": cname, "clevel": 5,
            "shuffle": shuffle, "typesize": typesize, "blocksize": 0}})
    };
    match selector % 16 {
        0 => after(
            DataType::Float64,
            json!({"name": "gzip", "configuration": {"level": 1}}),
        ),
        1 => after(
            DataType::Int32,
            json!({"name": "zstd", "configuration": {"level": 1, "checksum": v & 2 == 0}}),
        ),
        2 => after(DataType::Int32, blosc("lz4", "shuffle", 4)),
        3 => after(DataType::Float64, blosc("zstd", "bitshuffle", 8)),
        4 => after(DataType::UInt8, blosc("blosclz", "noshuffle", 1)),
        5 => {
            let dtype = [DataType::Int16, DataType::Bool, DataType::Complex128][v % 3];
            after(dtype, json!({"name": "crc32c"}))
        }
        6 => after(
            DataType::Int32,
            json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
        ),
        7 => after(
            DataType::Int64,
            json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}),
        ),
        8 => after(
            DataType::Float32,
            json!({"name": "numcodecs.bz2", "configuration": {"level": 1}}),
        ),
        9 => after(
            DataType::Int32,
            json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 1 + v % 8}}),
        ),
        10 => {
            let (dtype, from, to) = [
                (DataType::Int32, "<i4", "<i2"),
                (DataType::Float64, "<f8", "<f4"),
                (DataType::Int64, ">i8", ">i8"),
                (DataType::UInt8, "|u1", "|u1"),
                (DataType::Float16, "<f2", "<f2"),
                (DataType::UInt16, "<u2", "<i1"),
            ][v % 6];
            after(
                dtype,
                json!({"name": "numcodecs.delta", "configuration": {"dtype": from, "astype": to}}),
            )
        }
        11 => (
            DataType::String,
            if v & 1 == 0 {
                json!([{"name": "vlen-utf8"},
                       {"name": "zstd", "configuration": {"level": 0, "checksum": false}}])
            } else {
                json!([{"name": "vlen-utf8"}])
            },
        ),
        12 => (
            DataType::String,
            json!([{"name": "numpy.fixed_string",
                    "configuration": {"dtype": format!("{}U{}", ["<", ">"][v & 1], 1 + v / 2)}}]),
        ),
        13 => (
            DataType::String,
            json!([{"name": "numpy.fixed_string", "configuration": {"dtype": format!("|S{}", 1 + v)}}]),
        ),
        14 => (
            DataType::Int32,
            json!([{"name": "transpose", "configuration": {"order": [0]}}, bytes]),
        ),
        _ => after(DataType::Complex64, blosc("lz4hc", "shuffle", 8)),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (dtype, codecs) = chain(data[0]);
    let n = 1 + data[1] as usize;
    let input = data[2..].to_vec();
    let codecs = codecs.as_array().expect("a list").clone();
    let fill = if dtype == DataType::String {
        Vec::new()
    } else {
        vec![0; dtype.size()]
    };
    let chain = CodecChain::from_json(&codecs, dtype, &fill, 1).expect("a valid chain");
    let warnings = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: data[1] & 1 == 0,
        warnings: &warnings,
        what: "fuzz",
    };
    // Delta to a narrower type loses bits on the way back.
    let lossless = data[0] % 16 != 10;
    if dtype == DataType::String {
        if let Ok(s) = chain.decode_strings(input.clone(), &[n], &ctx) {
            assert_eq!(s.len(), n);
            let again = chain
                .encode_strings(&s, &[n])
                .expect("decoded strings encode");
            let back = chain
                .decode_strings(again, &[n], &ctx)
                .expect("encoded strings decode");
            assert_eq!(back, s);
        }
    } else if let Ok(d) = chain.decode(input.clone(), &[n], &ctx) {
        assert_eq!(d.len(), n * dtype.size());
        if lossless {
            let again = chain
                .encode(d.clone(), &[n])
                .expect("a decoded chunk encodes");
            let back = chain
                .decode(again, &[n], &ctx)
                .expect("an encoded chunk decodes");
            assert_eq!(back, d);
        }
    }
    // The bytes -> bytes codec alone, without a size hint.
    if let Some(last) = codecs.last().filter(|c| c["name"] != "bytes") {
        if let Ok(codec) = bytes_codec_from_json(last, dtype) {
            let _ = codec.decode(input, None, &ctx);
        }
    }
});
