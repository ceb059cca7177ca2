//! `numcodecs.zlib`: bytes -> bytes, the zlib stream (RFC 1950) that
//! numcodecs' `Zlib` compressor writes (Python's `zlib.compress`). It is
//! the usual compressor of Zarr v2 arrays, so v2 metadata maps its
//! `{"id": "zlib", "level": L}` to `{"name": "numcodecs.zlib",
//! "configuration": {"level": L}}` (the name numcodecs gives it in Zarr v3).
//! Configuration: `level`, an integer from -1 (zlib's default, 6) to 9.

use super::level::level_codec_spec;
use super::limited::{is_zlib, read_limited};
use super::registry::{CodecSpec, Kind, Param};
use crate::error::{Result, ZarrError};
use flate2::bufread::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::Write;

pub static SPEC: CodecSpec = level_codec_spec!(
    "numcodecs.zlib",
    "zlib",
    Param::required("level", Kind::Int(-1, 9)),
    1,
    1,
);

fn compress(level: i64, input: &[u8]) -> Result<Vec<u8>> {
    let fail = |e: std::io::Error| ZarrError::Codec(format!("zlib: compression failed: {e}"));
    let compression = if level < 0 {
        Compression::default()
    } else {
        Compression::new(level as u32)
    };
    let mut enc = ZlibEncoder::new(Vec::with_capacity(input.len() / 2 + 64), compression);
    enc.write_all(input).map_err(fail)?;
    enc.finish().map_err(fail)
}

fn decompress(input: &[u8], decoded_len: Option<usize>) -> Result<Vec<u8>> {
    if !is_zlib(input) {
        return Err(ZarrError::Codec(format!(
            "zlib: data is not a zlib stream (starts with {:02x?})",
            &input[..input.len().min(4)]
        )));
    }
    read_limited("zlib", ZlibDecoder::new(input), decoded_len, input.len())
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{built, ctx, stepped_doubles as doubles};
    use super::super::Warnings;
    use super::*;
    use serde_json::json;

    // The rest: level_tests.rs.
    #[test]
    fn zlib_writes_python_streams_and_checks_their_adler32() {
        let w = Warnings::default();
        for level in -1..=9 {
            let c = built(&SPEC, json!({ "level": level })).unwrap();
            assert!(is_zlib(&c.encode(doubles()).unwrap()), "level {level}");
        }
        // Level 1 writes the same stream as Python's zlib at level 1.
        let c = built(&SPEC, json!({"level": 1})).unwrap();
        let enc = c.encode(b"hello zarr\n".to_vec()).unwrap();
        assert_eq!(&enc[..2], &[0x78, 0x01]);
        let mut bad = c.encode(doubles()).unwrap();
        let n = bad.len();
        bad[n - 2] ^= 0xff; // inside the Adler-32
        let e = c.decode(bad, ctx(&w).decode_to(None)).unwrap_err();
        assert_eq!(e.kind(), "codec");
    }
}
