//! `numcodecs.lz4` (bytes -> bytes; the name numcodecs gives it in Zarr
//! v3): numcodecs' `LZ4`, a 4-byte little-endian size of the decoded data
//! then one LZ4 block (not the LZ4 frame format). Configuration:
//! `acceleration`, an integer (kept and written back; the pure Rust
//! encoder used here has a single speed). Decoding runs the LZ4 C library
//! (lz4-sys, which blosc links anyway), numcodecs' own decoder.

use super::level::level_codec_spec;
use super::registry::{CodecSpec, Kind, Lit, Param};
use crate::error::{Result, ZarrError};
use std::ffi::c_int;

pub static SPEC: CodecSpec = level_codec_spec!(
    "numcodecs.lz4",
    "lz4",
    // numcodecs' default when absent.
    Param::optional("acceleration", Kind::Int(i64::MIN, i64::MAX), Lit::Int(1)),
    1,
    1,
);

/// The largest output an LZ4 block of `n` bytes can give: each byte of a
/// block expands to at most 255 (a match length run), plus the literals.
fn lz4_max_decoded(n: usize) -> usize {
    n.saturating_mul(255).saturating_add(16)
}

fn compress(_acceleration: i64, input: &[u8]) -> Result<Vec<u8>> {
    if u32::try_from(input.len()).is_err() {
        return Err(ZarrError::Codec(format!(
            "lz4: {} bytes is too large for numcodecs' 4-byte size header",
            input.len()
        )));
    }
    Ok(lz4_flex::block::compress_prepend_size(input))
}

fn decompress(input: &[u8], decoded_len: Option<usize>) -> Result<Vec<u8>> {
    if input.len() < 4 {
        return Err(ZarrError::Codec(format!(
            "lz4: {} bytes is too short for numcodecs' 4-byte size header",
            input.len()
        )));
    }
    let size = u32::from_le_bytes([input[0], input[1], input[2], input[3]]) as usize;
    if let Some(n) = decoded_len {
        if size != n {
            return Err(ZarrError::Codec(format!(
                "lz4: the header gives {size} decoded bytes, expected {n}"
            )));
        }
    }
    if size > lz4_max_decoded(input.len() - 4) {
        return Err(ZarrError::Codec(format!(
            "lz4: the header gives {size} decoded bytes, more than {} compressed bytes can hold",
            input.len() - 4
        )));
    }
    let src = &input[4..];
    let (Ok(src_len), Ok(cap)) = (c_int::try_from(src.len()), c_int::try_from(size)) else {
        return Err(ZarrError::Codec(format!(
            "lz4: {} compressed bytes or {size} decoded bytes are over LZ4's limit",
            src.len()
        )));
    };
    let mut out = crate::error::try_buffer(size, "lz4")?;
    // SAFETY: LZ4_decompress_safe reads at most `src_len` bytes of `src`
    // and writes at most `cap` bytes, the capacity of `out`, whatever the
    // input holds (it is the decoder for untrusted data).
    let got = unsafe {
        lz4_sys::LZ4_decompress_safe(src.as_ptr().cast(), out.as_mut_ptr().cast(), src_len, cap)
    };
    let Ok(got) = usize::try_from(got) else {
        return Err(ZarrError::Codec(
            "lz4: cannot decompress: the data is corrupt".into(),
        ));
    };
    // SAFETY: LZ4 wrote `got` bytes, at most the capacity.
    unsafe { out.set_len(got) };
    if got != size {
        return Err(ZarrError::Codec(format!(
            "lz4: decompressed to {got} bytes, the header gives {size}"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{built, ctx, stepped_doubles as doubles};
    use super::super::Warnings;
    use super::*;
    use serde_json::json;

    // The rest: level_tests.rs.
    #[test]
    fn lz4_writes_and_checks_numcodecs_size_header() {
        let w = Warnings::default();
        let c = built(&SPEC, json!({})).unwrap();
        assert_eq!(c.configuration()["acceleration"], 1);
        let data = doubles();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(&enc[..4], &(data.len() as u32).to_le_bytes());
        // a size far beyond what the block can hold
        let huge = [&[0xff, 0xff, 0xff, 0x7f][..], &enc[4..]].concat();
        let e = c.decode(huge, ctx(&w).decode_to(None)).unwrap_err();
        assert!(e.message().contains("more than"), "{}", e.message());
        let e = c.decode(enc, ctx(&w).decode_to(Some(8))).unwrap_err();
        assert!(e.message().contains("expected 8"), "{}", e.message());
    }
}
