//! Helpers shared by the codecs' unit tests.

use super::{CodecContext, Warnings};

/// A context that only warns on checksum mismatches.
pub fn ctx(w: &Warnings) -> CodecContext<'_> {
    ctx_of(w, false)
}

/// What `ctx_of` names its chunk in messages.
pub const CHUNK: &str = "array '/t' chunk 'c/0'";

/// A context whose checksum mismatches are errors when `strict`.
pub fn ctx_of(w: &Warnings, strict: bool) -> CodecContext<'_> {
    CodecContext {
        strict_checksums: strict,
        warnings: w,
        what: CHUNK,
    }
}

/// Bytes from a hex string, for streams written by other implementations.
pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// 80,000 bytes of little-endian doubles with long runs of equal values,
/// which every compressor shrinks well.
pub fn stepped_doubles() -> Vec<u8> {
    (0..10_000u32)
        .flat_map(|i| (f64::from(i) / 7.0).floor().to_le_bytes())
        .collect()
}

/// The bytes -> bytes codec of `spec` built from the configuration `cfg`
/// (a JSON object) for one-byte elements.
pub fn built(
    spec: &super::registry::CodecSpec,
    cfg: serde_json::Value,
) -> crate::error::Result<Box<dyn super::BytesToBytes>> {
    spec.build_bytes(cfg.as_object().unwrap(), crate::dtype::DataType::UInt8)
}

/// Asserts that `c` decodes `enc` to `want`, told the size to expect and
/// not; `what` names the case in the failure.
pub fn assert_decodes(c: &dyn super::BytesToBytes, enc: &[u8], want: &[u8], what: &str) {
    let w = Warnings::default();
    for len in [Some(want.len()), None] {
        let got = c.decode(enc.to_vec(), ctx(&w).decode_to(len)).unwrap();
        assert!(got == want, "{} {what}: told {len:?}", c.name());
    }
}
