//! `gzip` codec (zarr-specs v3-codecs-gzip.rst): bytes -> bytes.
//! Configuration: `level`, an integer 0..=9 (required).
//!
//! Writes a gzip stream (RFC 1952). Reads gzip, including several members
//! back to back as gzip tools allow, and also zlib-wrapped deflate (RFC 1950)
//! because some writers put that under the name `gzip`.

use super::level::level_codec_spec;
use super::limited::{is_zlib, read_limited};
use super::registry::{CodecSpec, Kind, Param};
use crate::error::{Result, ZarrError};
use flate2::bufread::{MultiGzDecoder, ZlibDecoder};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

/// New arrays get level 6, zlib's own default (and R-CF's).
pub static SPEC: CodecSpec = level_codec_spec!(
    "gzip",
    "gzip",
    Param::required("level", Kind::Int(0, 9)),
    1,
    6,
);

fn compress(level: i64, input: &[u8]) -> Result<Vec<u8>> {
    let fail = |e: std::io::Error| ZarrError::Codec(format!("gzip: compression failed: {e}"));
    // Header, trailer and stored-block overhead are small; half the input
    // is a typical compressed size for numeric chunks.
    let mut enc = GzEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        Compression::new(level as u32),
    );
    enc.write_all(input).map_err(fail)?;
    enc.finish().map_err(fail)
}

fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

fn decompress(input: &[u8], decoded_len: Option<usize>) -> Result<Vec<u8>> {
    if is_gzip(input) {
        read_limited("gzip", MultiGzDecoder::new(input), decoded_len, input.len())
    } else if is_zlib(input) {
        read_limited("gzip", ZlibDecoder::new(input), decoded_len, input.len())
    } else {
        Err(ZarrError::Codec(format!(
            "gzip: data is neither a gzip nor a zlib stream (starts with {:02x?})",
            &input[..input.len().min(4)]
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{built, ctx, stepped_doubles as doubles, unhex};
    use super::super::{BytesToBytes, Warnings};
    use super::*;
    use flate2::write::ZlibEncoder;
    use serde_json::json;

    fn gzip(level: u64) -> Box<dyn BytesToBytes> {
        built(&SPEC, json!({ "level": level })).unwrap()
    }

    #[test]
    fn round_trips_at_every_level() {
        let w = Warnings::default();
        let data = doubles();
        for level in 0..=9 {
            let c = gzip(level);
            let enc = c.encode(data.clone()).unwrap();
            assert!(is_gzip(&enc), "level {level} did not write a gzip header");
            if level > 0 {
                assert!(
                    enc.len() < data.len() / 2,
                    "level {level} gave {} bytes",
                    enc.len()
                );
            }
            assert!(
                c.decode(enc.clone(), ctx(&w).decode_to(Some(data.len())))
                    .unwrap()
                    == data,
                "level {level}"
            );
            assert!(
                c.decode(enc, ctx(&w).decode_to(None)).unwrap() == data,
                "level {level}"
            );
        }
    }

    #[test]
    fn round_trips_empty_input() {
        let w = Warnings::default();
        let enc = gzip(5).encode(Vec::new()).unwrap();
        assert_eq!(
            gzip(5).decode(enc, ctx(&w).decode_to(Some(0))).unwrap(),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn decodes_bytes_written_by_python_gzip() {
        // gzip.compress(b"hello zarr\n", mtime=0) from CPython 3.12.
        let known = unhex("1f8b0800000000000203cb48cdc9c957a84a2c2ae2020087d14e6b0b000000");
        let w = Warnings::default();
        assert_eq!(
            gzip(1).decode(known, ctx(&w).decode_to(Some(11))).unwrap(),
            b"hello zarr\n"
        );
    }

    #[test]
    fn decodes_concatenated_members() {
        let w = Warnings::default();
        let mut enc = gzip(6).encode(b"first ".to_vec()).unwrap();
        enc.extend(gzip(1).encode(b"second".to_vec()).unwrap());
        assert_eq!(
            gzip(6).decode(enc, ctx(&w).decode_to(None)).unwrap(),
            b"first second"
        );
    }

    #[test]
    fn decodes_zlib_wrapped_data_leniently() {
        let w = Warnings::default();
        let data = doubles();
        let mut z = ZlibEncoder::new(Vec::new(), Compression::new(6));
        z.write_all(&data).unwrap();
        let enc = z.finish().unwrap();
        assert!(is_zlib(&enc));
        assert!(
            gzip(6)
                .decode(enc.clone(), ctx(&w).decode_to(Some(data.len())))
                .unwrap()
                == data
        );
        assert!(gzip(6).decode(enc, ctx(&w).decode_to(None)).unwrap() == data);
        // zlib.compress(b"hello zarr\n") from CPython 3.12.
        let known = unhex("789ccb48cdc9c957a84a2c2ae20200199403fe");
        assert_eq!(
            gzip(6).decode(known, ctx(&w).decode_to(None)).unwrap(),
            b"hello zarr\n"
        );
    }

    #[test]
    fn garbage_is_a_codec_error() {
        let w = Warnings::default();
        for garbage in [
            vec![],
            vec![0x1f],
            b"not compressed at all".to_vec(),
            vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0xff],
        ] {
            let e = gzip(1)
                .decode(garbage.clone(), ctx(&w).decode_to(Some(8)))
                .unwrap_err();
            assert_eq!(e.kind(), "codec", "{garbage:?}");
            assert!(e.message().contains("gzip"));
        }
        // A valid header followed by noise.
        let mut enc = gzip(1).encode(doubles()).unwrap();
        for b in enc.iter_mut().skip(10) {
            *b = b.wrapping_mul(31).wrapping_add(7);
        }
        assert_eq!(
            gzip(1)
                .decode(enc, ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
    }

    #[test]
    fn truncated_streams_are_codec_errors() {
        let w = Warnings::default();
        let data = doubles();
        let enc = gzip(9).encode(data.clone()).unwrap();
        for cut in [
            enc.len() - 1,
            enc.len() - 4,
            enc.len() - 8,
            enc.len() / 2,
            12,
        ] {
            for hint in [Some(data.len()), None] {
                let e = gzip(9)
                    .decode(enc[..cut].to_vec(), ctx(&w).decode_to(hint))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "cut at {cut}");
            }
        }
        let mut z = ZlibEncoder::new(Vec::new(), Compression::new(6));
        z.write_all(&data).unwrap();
        let enc = z.finish().unwrap();
        for cut in [enc.len() - 1, enc.len() - 4, enc.len() / 2] {
            for hint in [Some(data.len()), None] {
                let e = gzip(9)
                    .decode(enc[..cut].to_vec(), ctx(&w).decode_to(hint))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "zlib cut at {cut}");
            }
        }
    }

    #[test]
    fn a_corrupt_trailer_is_detected() {
        let w = Warnings::default();
        let mut enc = gzip(5).encode(doubles()).unwrap();
        let n = enc.len();
        enc[n - 6] ^= 0xff; // inside the CRC-32
        assert_eq!(
            gzip(5)
                .decode(enc, ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
    }

    #[test]
    fn output_beyond_the_expected_size_is_refused() {
        let w = Warnings::default();
        let enc = gzip(9).encode(vec![0u8; 1 << 20]).unwrap();
        let e = gzip(9)
            .decode(enc, ctx(&w).decode_to(Some(1000)))
            .unwrap_err();
        assert_eq!(e.kind(), "codec");
        assert!(e.message().contains("1000"));
    }

    #[test]
    fn invalid_configs_are_refused() {
        for cfg in [
            json!({}),
            json!({"level": null}),
            json!({"level": 10}),
            json!({"level": -1}),
            json!({"level": 1.5}),
            json!({"level": "1"}),
        ] {
            let e = built(&SPEC, cfg.clone()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{cfg}");
            assert!(e.message().contains("gzip"), "{}", e.message());
        }
    }

    #[test]
    fn writes_its_level() {
        assert_eq!(
            gzip(7).to_json(),
            json!({"name": "gzip", "configuration": {"level": 7}})
        );
    }
}
