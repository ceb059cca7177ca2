//! `numcodecs.bz2` (bytes -> bytes; the name numcodecs gives it in Zarr
//! v3): numcodecs' `BZ2`, a bzip2 stream (Python's `bz2.compress`).
//! Configuration: `level`, an integer 1 to 9.

use super::level::level_codec_spec;
use super::limited::read_limited;
use super::registry::{CodecSpec, Kind, Param};
use crate::error::{Result, ZarrError};
use std::io::Write;

pub static SPEC: CodecSpec = level_codec_spec!(
    "numcodecs.bz2",
    "bz2",
    Param::required("level", Kind::Int(1, 9)),
    1,
    1,
);

fn compress(level: i64, input: &[u8]) -> Result<Vec<u8>> {
    let fail = |e: std::io::Error| ZarrError::Codec(format!("bz2: compression failed: {e}"));
    let mut enc = bzip2::write::BzEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        bzip2::Compression::new(level as u32),
    );
    enc.write_all(input).map_err(fail)?;
    enc.finish().map_err(fail)
}

fn decompress(input: &[u8], decoded_len: Option<usize>) -> Result<Vec<u8>> {
    if !input.starts_with(b"BZh") {
        return Err(ZarrError::Codec(format!(
            "bz2: data is not a bzip2 stream (starts with {:02x?})",
            &input[..input.len().min(4)]
        )));
    }
    // Python's bz2.decompress reads streams back to back.
    let reader = bzip2::read::MultiBzDecoder::new(input);
    read_limited("bz2", reader, decoded_len, input.len())
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{built, ctx, stepped_doubles as doubles, unhex};
    use super::super::Warnings;
    use super::*;
    use serde_json::json;

    #[test]
    fn bz2_round_trips_and_reads_numcodecs() {
        let w = Warnings::default();
        let c = built(&SPEC, json!({"level": 9})).unwrap();
        let data = doubles();
        let enc = c.encode(data.clone()).unwrap();
        assert!(enc.len() < data.len() / 2);
        assert!(
            c.decode(enc.clone(), ctx(&w).decode_to(Some(data.len())))
                .unwrap()
                == data
        );
        assert!(c.decode(enc.clone(), ctx(&w).decode_to(None)).unwrap() == data);
        // numcodecs.BZ2(level=9).encode(b"hello zarr\n") (numcodecs 0.16).
        let known = unhex(
            "425a6839314159265359ba060ddc00000251800010400022449010200031064c414c0f280963ed5e177245385090ba060ddc",
        );
        assert_eq!(
            c.decode(known, ctx(&w).decode_to(Some(11))).unwrap(),
            b"hello zarr\n"
        );
        for bad in [
            vec![],
            b"BZh9garbage".to_vec(),
            enc[..enc.len() / 2].to_vec(),
        ] {
            let e = c.decode(bad, ctx(&w).decode_to(None)).unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("bz2"), "{}", e.message());
        }
        let e = c.decode(enc, ctx(&w).decode_to(Some(10))).unwrap_err();
        assert!(e.message().contains("10"), "{}", e.message());
        for v in [json!({}), json!({"level": 0}), json!({"level": 10})] {
            assert_eq!(built(&SPEC, v).unwrap_err().kind(), "metadata");
        }
        assert_eq!(
            c.to_json(),
            json!({"name": "numcodecs.bz2", "configuration": {"level": 9}})
        );
    }
}
