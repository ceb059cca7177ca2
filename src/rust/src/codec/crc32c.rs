//! `crc32c` codec (zarr-specs v3-codecs-crc32c.rst): bytes -> bytes.
//! Configuration: none. The encoded form is the input followed by its
//! CRC-32C (Castagnoli, RFC 3720) as a little-endian u32.
//!
//! A mismatch is only an error under `strict_checksums`: by default the
//! reader warns and still returns the data, so one flipped bit does not make
//! a whole array unreadable.

use super::checksum32::Checksum32;
use super::registry::CodecSpec;
use super::v2::V2Config;
use super::{config, Mode};
use crate::error::ZarrError;
use serde_json::{json, Map, Value};

pub const NAME: &str = "crc32c";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "crc32c",
        from_v2: |cfg, typesize, role| {
            *typesize = 1;
            match cfg.get("location") {
                None | Some(Value::Null) => Ok(json!({"name": NAME})),
                Some(Value::String(l)) if l == "end" => Ok(json!({"name": NAME})),
                Some(l) => Err(ZarrError::Unsupported(format!(
                    "unsupported {role} 'crc32c' with location {l} (only \"end\")"
                ))),
            }
        },
        to_v2: |_| Map::new(),
        filter: false,
    }),
    mode: Mode::BytesToBytes,
    params: &[],
    defaults: Some(|_, _| config(&[])),
    // The spec defines no configuration members; any given are ignored so
    // that metadata from writers that add their own stays readable.
    build: Some(|_, _| Ok(Box::new(Checksum32::crc32c()))),
};

#[cfg(test)]
mod tests {
    use super::super::test_util::{ctx_of as ctx, CHUNK};
    use super::super::{BytesToBytes, Warnings};
    use super::*;

    fn codec() -> Checksum32 {
        Checksum32::crc32c()
    }

    #[test]
    fn check_value_of_the_standard_test_vector() {
        // "123456789" is the check input of the CRC catalogue; CRC-32C gives 0xE3069283.
        let enc = codec().encode(b"123456789".to_vec()).unwrap();
        assert_eq!(&enc[..9], b"123456789");
        assert_eq!(&enc[9..], &0xE306_9283u32.to_le_bytes());
        assert_eq!(&enc[9..], &[0x83, 0x92, 0x06, 0xE3]);
    }

    #[test]
    fn known_bytes_from_rfc3720_decode() {
        // RFC 3720 B.4: 32 bytes of zeros have CRC-32C 0x8A9136AA (stored little-endian).
        let mut stored = vec![0u8; 32];
        stored.extend_from_slice(&[0xAA, 0x36, 0x91, 0x8A]);
        let w = Warnings::default();
        let dec = codec()
            .decode(stored, ctx(&w, true).decode_to(Some(32)))
            .unwrap();
        assert_eq!(dec, vec![0u8; 32]);
        // ... and 32 bytes of 0xFF have 0x62A8AB43.
        let mut stored = vec![0xFFu8; 32];
        stored.extend_from_slice(&0x62A8_AB43u32.to_le_bytes());
        assert_eq!(
            codec()
                .decode(stored, ctx(&w, true).decode_to(None))
                .unwrap(),
            vec![0xFFu8; 32]
        );
        assert!(w.take().is_empty());
    }

    #[test]
    fn round_trips_realistic_and_empty_data() {
        let w = Warnings::default();
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (f64::from(i) * 0.37).sin().to_le_bytes())
            .collect();
        let enc = codec().encode(data.clone()).unwrap();
        assert_eq!(enc.len(), data.len() + 4);
        assert!(
            codec()
                .decode(enc, ctx(&w, true).decode_to(Some(data.len())))
                .unwrap()
                == data
        );

        let enc = codec().encode(Vec::new()).unwrap();
        assert_eq!(enc, vec![0, 0, 0, 0]);
        assert_eq!(
            codec()
                .decode(enc, ctx(&w, true).decode_to(Some(0)))
                .unwrap(),
            Vec::<u8>::new()
        );
        assert!(w.take().is_empty());
    }

    #[test]
    fn mismatch_is_a_warning_by_default() {
        let w = Warnings::default();
        let mut enc = codec().encode(b"123456789".to_vec()).unwrap();
        enc[0] = b'0';
        let dec = codec().decode(enc, ctx(&w, false).decode_to(None)).unwrap();
        assert_eq!(dec, b"023456789");
        let msgs = w.take();
        assert_eq!(msgs.len(), 1);
        assert!(msgs[0].contains(CHUNK), "{}", msgs[0]);
        assert!(msgs[0].contains("0xE3069283"), "{}", msgs[0]);
        assert!(msgs[0].contains("crc32c"), "{}", msgs[0]);
    }

    #[test]
    fn mismatch_is_an_error_when_strict() {
        let w = Warnings::default();
        let mut enc = codec().encode(b"123456789".to_vec()).unwrap();
        let last = enc.len() - 1;
        enc[last] ^= 0x01;
        let e = codec()
            .decode(enc, ctx(&w, true).decode_to(None))
            .unwrap_err();
        assert_eq!(e.kind(), "checksum");
        assert!(e.message().contains(CHUNK));
        assert!(e.message().contains("stored 0xE2069283"), "{}", e.message());
        assert!(
            e.message().contains("computed 0xE3069283"),
            "{}",
            e.message()
        );
        assert!(w.take().is_empty());
    }

    #[test]
    fn input_shorter_than_the_checksum_is_a_corrupt_chunk() {
        let w = Warnings::default();
        for n in 0..4 {
            let e = codec()
                .decode(vec![0u8; n], ctx(&w, false).decode_to(None))
                .unwrap_err();
            assert_eq!(e.kind(), "corrupt_chunk");
            assert!(e.message().contains("crc32c"));
        }
    }

    #[test]
    fn writes_its_name_only() {
        assert_eq!(codec().to_json(), json!({"name": "crc32c"}));
        assert_eq!(codec().name(), "crc32c");
    }
}
