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
