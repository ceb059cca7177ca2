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
    use super::super::test_util::{built, ctx, stepped_doubles as doubles, unhex};
    use super::super::{BytesToBytes, Warnings};
    use super::*;
    use serde_json::json;

    fn zlib(level: i64) -> Box<dyn BytesToBytes> {
        built(&SPEC, json!({ "level": level })).unwrap()
    }

    #[test]
    fn zlib_round_trips_at_every_level() {
        let w = Warnings::default();
        let data = doubles();
        for level in -1..=9 {
            let c = zlib(level);
            let enc = c.encode(data.clone()).unwrap();
            assert!(is_zlib(&enc), "level {level}");
            if level != 0 {
                assert!(enc.len() < data.len() / 2, "level {level}");
            }
            assert!(
                c.decode(enc.clone(), ctx(&w).decode_to(Some(data.len())))
                    .unwrap()
                    == data
            );
            assert!(c.decode(enc, ctx(&w).decode_to(None)).unwrap() == data);
        }
        let enc = zlib(1).encode(Vec::new()).unwrap();
        assert!(zlib(1)
            .decode(enc, ctx(&w).decode_to(Some(0)))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn zlib_decodes_numcodecs_output() {
        // numcodecs.Zlib(level=1).encode(b"hello zarr\n") (numcodecs 0.16).
        let known = unhex("7801cb48cdc9c957a84a2c2ae20200199403fe");
        let w = Warnings::default();
        assert_eq!(
            zlib(5)
                .decode(known.clone(), ctx(&w).decode_to(Some(11)))
                .unwrap(),
            b"hello zarr\n"
        );
        assert_eq!(
            zlib(5).decode(known, ctx(&w).decode_to(None)).unwrap(),
            b"hello zarr\n"
        );
        // Level 1 writes the same stream as Python's zlib at level 1.
        let enc = zlib(1).encode(b"hello zarr\n".to_vec()).unwrap();
        assert_eq!(&enc[..2], &[0x78, 0x01]);
    }

    #[test]
    fn zlib_refuses_garbage_truncation_and_overlong_output() {
        let w = Warnings::default();
        for garbage in [
            vec![],
            vec![0x78],
            b"not compressed".to_vec(),
            vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0],
        ] {
            let e = zlib(1)
                .decode(garbage, ctx(&w).decode_to(Some(8)))
                .unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("zlib"), "{}", e.message());
        }
        let data = doubles();
        let enc = zlib(6).encode(data.clone()).unwrap();
        for cut in [enc.len() - 1, enc.len() - 4, enc.len() / 2, 3] {
            for hint in [Some(data.len()), None] {
                let e = zlib(6)
                    .decode(enc[..cut].to_vec(), ctx(&w).decode_to(hint))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "cut at {cut}");
            }
        }
        let mut bad = enc.clone();
        let n = bad.len();
        bad[n - 2] ^= 0xff; // inside the Adler-32
        assert_eq!(
            zlib(6)
                .decode(bad, ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
        let e = zlib(6)
            .decode(enc, ctx(&w).decode_to(Some(100)))
            .unwrap_err();
        assert!(e.message().contains("100"), "{}", e.message());
    }

    #[test]
    fn zlib_configs() {
        for cfg in [
            json!({}),
            json!({"level": 10}),
            json!({"level": -2}),
            json!({"level": 1.5}),
            json!({"level": "1"}),
        ] {
            let e = built(&SPEC, cfg.clone()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{cfg}");
            assert!(e.message().contains("numcodecs.zlib"), "{}", e.message());
        }
        assert_eq!(
            zlib(-1).to_json(),
            json!({"name": "numcodecs.zlib", "configuration": {"level": -1}})
        );
    }
}
