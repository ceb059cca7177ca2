//! `numcodecs.zlib`: bytes -> bytes, the zlib stream (RFC 1950) that
//! numcodecs' `Zlib` compressor writes (Python's `zlib.compress`). It is
//! the usual compressor of Zarr v2 arrays, so v2 metadata maps its
//! `{"id": "zlib", "level": L}` to `{"name": "numcodecs.zlib",
//! "configuration": {"level": L}}` (the name numcodecs gives it in Zarr v3).
//! Configuration: `level`, an integer from -1 (zlib's default, 6) to 9.

use super::limited::{is_zlib, read_limited};
use super::v2::int_compressor_spec;
use super::CodecSpec;
use super::{config_level, BytesToBytes, CodecContext};
use crate::error::{Result, ZarrError};
use flate2::bufread::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde_json::{json, Map, Value};
use std::io::Write;

pub const NAME: &str = "numcodecs.zlib";

pub const SPEC: CodecSpec = int_compressor_spec!(NAME, "zlib", "level", 1, "integer -1 to 9", 1);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zlib {
    /// -1 (zlib's default) or 0..=9.
    pub level: i32,
}

impl Zlib {
    pub fn from_config(config: &Map<String, Value>) -> Result<Zlib> {
        let level = config_level(config, "numcodecs.zlib", -1, 9)?;
        Ok(Zlib {
            level: level as i32,
        })
    }

    fn compression(&self) -> Compression {
        if self.level < 0 {
            Compression::default()
        } else {
            Compression::new(self.level as u32)
        }
    }
}

impl BytesToBytes for Zlib {
    fn name(&self) -> &'static str {
        "numcodecs.zlib"
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let fail = |e: std::io::Error| ZarrError::Codec(format!("zlib: compression failed: {e}"));
        let mut enc =
            ZlibEncoder::new(Vec::with_capacity(input.len() / 2 + 64), self.compression());
        enc.write_all(&input).map_err(fail)?;
        enc.finish().map_err(fail)
    }

    fn decode(
        &self,
        input: Vec<u8>,
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        if !is_zlib(&input) {
            return Err(ZarrError::Codec(format!(
                "zlib: data is not a zlib stream (starts with {:02x?})",
                &input[..input.len().min(4)]
            )));
        }
        read_limited(
            "zlib",
            ZlibDecoder::new(&input[..]),
            decoded_len,
            input.len(),
        )
    }

    fn to_json(&self) -> Value {
        json!({"name": "numcodecs.zlib", "configuration": {"level": self.level}})
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ctx, stepped_doubles as doubles, unhex};
    use super::super::Warnings;
    use super::*;

    fn zlib(level: i64) -> Zlib {
        Zlib::from_config(json!({ "level": level }).as_object().unwrap()).unwrap()
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
            assert!(c.decode(enc.clone(), Some(data.len()), &ctx(&w)).unwrap() == data);
            assert!(c.decode(enc, None, &ctx(&w)).unwrap() == data);
        }
        let enc = zlib(1).encode(Vec::new()).unwrap();
        assert!(zlib(1).decode(enc, Some(0), &ctx(&w)).unwrap().is_empty());
    }

    #[test]
    fn zlib_decodes_numcodecs_output() {
        // numcodecs.Zlib(level=1).encode(b"hello zarr\n") (numcodecs 0.16).
        let known = unhex("7801cb48cdc9c957a84a2c2ae20200199403fe");
        let w = Warnings::default();
        assert_eq!(
            zlib(5).decode(known.clone(), Some(11), &ctx(&w)).unwrap(),
            b"hello zarr\n"
        );
        assert_eq!(
            zlib(5).decode(known, None, &ctx(&w)).unwrap(),
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
            let e = zlib(1).decode(garbage, Some(8), &ctx(&w)).unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("zlib"), "{}", e.message());
        }
        let data = doubles();
        let enc = zlib(6).encode(data.clone()).unwrap();
        for cut in [enc.len() - 1, enc.len() - 4, enc.len() / 2, 3] {
            for hint in [Some(data.len()), None] {
                let e = zlib(6)
                    .decode(enc[..cut].to_vec(), hint, &ctx(&w))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "cut at {cut}");
            }
        }
        let mut bad = enc.clone();
        let n = bad.len();
        bad[n - 2] ^= 0xff; // inside the Adler-32
        assert_eq!(
            zlib(6).decode(bad, None, &ctx(&w)).unwrap_err().kind(),
            "codec"
        );
        let e = zlib(6).decode(enc, Some(100), &ctx(&w)).unwrap_err();
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
            let e = Zlib::from_config(cfg.as_object().unwrap()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{cfg}");
            assert!(e.message().contains("numcodecs.zlib"), "{}", e.message());
        }
        assert_eq!(
            zlib(-1).to_json(),
            json!({"name": "numcodecs.zlib", "configuration": {"level": -1}})
        );
    }
}
