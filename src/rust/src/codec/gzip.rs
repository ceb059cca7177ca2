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
    use super::super::test_util::{assert_decodes, built, ctx, stepped_doubles as doubles, unhex};
    use super::super::{BytesToBytes, Warnings};
    use super::*;
    use flate2::write::ZlibEncoder;
    use serde_json::json;

    // The rest: level_tests.rs.
    fn gzip(level: u64) -> Box<dyn BytesToBytes> {
        built(&SPEC, json!({ "level": level })).unwrap()
    }

    fn zlib_wrapped(data: &[u8]) -> Vec<u8> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::new(6));
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn every_level_writes_a_gzip_header() {
        for level in 0..=9 {
            let enc = gzip(level).encode(doubles()).unwrap();
            assert!(is_gzip(&enc), "level {level} did not write a gzip header");
        }
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
        let enc = zlib_wrapped(&data);
        assert!(is_zlib(&enc));
        assert_decodes(&*gzip(6), &enc, &data, "");
        // zlib.compress(b"hello zarr\n") from CPython 3.12.
        let known = unhex("789ccb48cdc9c957a84a2c2ae20200199403fe");
        assert_decodes(&*gzip(6), &known, b"hello zarr\n", "");
        let n = enc.len();
        for cut in [n - 1, n - 4, n / 2] {
            for len in [Some(data.len()), None] {
                let e = gzip(9)
                    .decode(enc[..cut].to_vec(), ctx(&w).decode_to(len))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "zlib cut at {cut}");
            }
        }
    }

    #[test]
    fn noise_after_a_header_and_a_corrupt_trailer_are_codec_errors() {
        let w = Warnings::default();
        let mut noisy = gzip(1).encode(doubles()).unwrap();
        for b in noisy.iter_mut().skip(10) {
            *b = b.wrapping_mul(31).wrapping_add(7);
        }
        let mut trailer = gzip(5).encode(doubles()).unwrap();
        let n = trailer.len();
        trailer[n - 6] ^= 0xff; // inside the CRC-32
        for bad in [noisy, trailer] {
            let e = gzip(5).decode(bad, ctx(&w).decode_to(None)).unwrap_err();
            assert_eq!(e.kind(), "codec");
        }
    }
}
