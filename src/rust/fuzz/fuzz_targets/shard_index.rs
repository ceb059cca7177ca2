//! The sharding_indexed codec on hostile shards: the index (at either end,
//! with or without its crc32c), the inner chunks it points to, and whole
//! shard decodes of numbers and of strings. Byte 0 picks the layout, byte 1
//! the inner chunk shape and the grid; the rest is the shard.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use zarr::codec::sharding::Sharding;
use zarr::codec::{CodecContext, Warnings};
use zarr::dtype::DataType;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (flags, shape) = (data[0], data[1]);
    let shard = &data[2..];
    let strings = flags & 8 != 0;
    let dtype = if strings {
        DataType::String
    } else {
        DataType::Int16
    };
    let mut index_codecs = vec![json!({"name": "bytes", "configuration": {"endian": "little"}})];
    if flags & 2 != 0 {
        index_codecs.push(json!({"name": "crc32c"}));
    }
    let mut inner = vec![if strings {
        json!({"name": "vlen-utf8"})
    } else {
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    }];
    if flags & 4 != 0 {
        inner.push(json!({"name": "gzip", "configuration": {"level": 1}}));
    }
    let inner_shape = [1 + (shape & 3) as usize, 1 + (shape >> 2 & 3) as usize];
    let grid = [1 + (shape >> 4 & 3) as usize, 1 + (shape >> 6) as usize];
    let config = json!({
        "chunk_shape": inner_shape,
        "codecs": inner,
        "index_codecs": index_codecs,
        "index_location": if flags & 1 != 0 { "start" } else { "end" },
    });
    let fill: &[u8] = if strings { b"" } else { &[0, 0] };
    let s = Sharding::from_config(config.as_object().unwrap(), dtype, fill, 2)
        .expect("a valid configuration");
    let shard_shape = [inner_shape[0] * grid[0], inner_shape[1] * grid[1]];
    let warnings = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: flags & 16 == 0,
        warnings: &warnings,
        what: "fuzz",
    };
    let g = s.grid(&shard_shape).expect("the grid divides the shard");
    if let Ok(index) = s.index_of(shard, &g, "fuzz") {
        if let Ok(entries) = s.decode_index(index.to_vec(), &g, &ctx) {
            assert_eq!(entries.len(), g[0] * g[1]);
            for e in entries.into_iter().flatten() {
                let _ = s.inner_bytes(shard, e, "fuzz");
            }
        }
    }
    let n = shard_shape[0] * shard_shape[1];
    if strings {
        if let Ok(v) = s.decode_shard_strings(shard, &shard_shape, &ctx) {
            assert_eq!(v.len(), n);
        }
    } else if let Ok(v) = s.decode_shard(shard, &shard_shape, &ctx) {
        assert_eq!(v.len(), 2 * n);
    }
});
