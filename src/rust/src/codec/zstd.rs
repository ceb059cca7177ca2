//! `zstd` codec (zarr-extensions codecs-zstd.md): bytes -> bytes.
//! Configuration: `level`, an integer from -131072 to 22 (0 = zstd's
//! default), and `checksum`, a boolean (optional, default false) asking the
//! writer to store a content checksum in each frame.
//!
//! Reading takes a one-shot path when the output size is known (the common
//! case: the chain hands us the chunk size) and falls back to streaming,
//! which copes with frames that omit their content size, with several frames
//! back to back, and tells a checksum mismatch apart from other damage so it
//! can follow `strict_checksums` like the crc32c codec does.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::v2::{int_member, members, V2Config};
use super::{config, BytesToBytes, DecodeTo, Mode};
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use zstd::zstd_safe::{self, CParameter, DCtx, InBuffer, OutBuffer};

pub const NAME: &str = "zstd";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "zstd",
        from_v2: |cfg, typesize, _| {
            *typesize = 1;
            let checksum = cfg.get("checksum").filter(|c| !c.is_null());
            Ok(json!({"name": NAME, "configuration": {
                "level": int_member(cfg, "level", 0),
                "checksum": checksum.cloned().unwrap_or(Value::Bool(false))}}))
        },
        to_v2: |cfg| {
            // Older numcodecs take no 'checksum': written only when set.
            let mut out = members(cfg, &["level"]);
            if cfg.get("checksum") == Some(&Value::Bool(true)) {
                out.insert("checksum".into(), Value::Bool(true));
            }
            out
        },
        filter: false,
    }),
    mode: Mode::BytesToBytes,
    // The level range of the spec (zstd's own minimum is -(1 << 17)).
    params: &[
        Param::required("level", Kind::Int(-131_072, 22)),
        Param::optional("checksum", Kind::Bool, Lit::Bool(false)),
    ],
    defaults: Some(|_, _| config(&[("level", 1.into()), ("checksum", false.into())])),
    build: Some(|cfg, _| Ok(Box::new(Zstd::from_config(cfg)?))),
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zstd {
    pub level: i32,
    pub checksum: bool,
}

impl Zstd {
    pub fn from_config(config: &Map<String, Value>) -> Result<Zstd> {
        let level = SPEC.int(config, "level")? as i32;
        let checksum = SPEC.flag(config, "checksum")?;
        Ok(Zstd { level, checksum })
    }
}

fn codec_error(doing: &str, code: zstd_safe::ErrorCode) -> ZarrError {
    ZarrError::Codec(format!(
        "zstd: {doing}: {}",
        zstd_safe::get_error_name(code)
    ))
}

fn is_checksum_mismatch(code: zstd_safe::ErrorCode) -> bool {
    // SAFETY: ZSTD_getErrorCode only classifies the integer it is given.
    let kind = unsafe { zstd_safe::zstd_sys::ZSTD_getErrorCode(code) };
    kind == zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_checksum_wrong
}

thread_local! {
    // Contexts are reused per thread: creating one costs about as much as
    // decoding a small chunk (it allocates and clears its tables).
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
}

/// The most `n` bytes of zstd frames can decode to. Every block has a
/// 3-byte header and at least one byte of content (an RLE block), and
/// gives at most 128 KiB. A frame header that claims more is lying; the
/// claim must not size an allocation (fuzz_regressions.rs has the case of
/// 13 bytes asking for 2.9 GB).
fn max_decoded(n: usize) -> usize {
    (n / 4 + 1).saturating_mul(128 << 10)
}

/// One-shot decompression into `out` (whose capacity is the expected size)
/// with this thread's context; false on any failure, which the streaming
/// path then explains.
fn fast_decompress(input: &[u8], out: &mut Vec<u8>) -> bool {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = match slot.as_mut() {
            Some(d) => d,
            None => match zstd::bulk::Decompressor::new() {
                Ok(d) => slot.insert(d),
                Err(_) => return false,
            },
        };
        d.decompress_to_buffer(input, out).is_ok()
    })
}

/// Streams one frame onto the end of `out`. Returns false when the frame's
/// content checksum did not match (zstd then hands back none of the data).
fn stream_frame(frame: &[u8], out: &mut Vec<u8>, limit: Option<usize>) -> Result<bool> {
    let mut dctx = DCtx::try_create()
        .ok_or_else(|| ZarrError::Codec("zstd: cannot create a decompression context".into()))?;
    let mut input = InBuffer::around(frame);
    loop {
        if out.len() == out.capacity() {
            // One byte beyond the expected size is enough to tell "too long".
            let max = limit.map_or(usize::MAX, |n| n.saturating_add(1));
            if out.len() >= max {
                return Err(ZarrError::Codec(format!(
                    "zstd: data decompresses to more than the expected {} bytes",
                    max - 1
                )));
            }
            let grow = out.capacity().max(1 << 16).min(max - out.len());
            out.try_reserve(grow).map_err(|_| {
                ZarrError::Memory(format!(
                    "zstd: cannot allocate {grow} more bytes for the output"
                ))
            })?;
        }
        let before = (input.pos(), out.len());
        let res = {
            let pos = out.len();
            let mut output = OutBuffer::around_pos(out, pos);
            dctx.decompress_stream(&mut output, &mut input)
        };
        match res {
            Ok(0) => return Ok(true),
            Ok(_) => {
                let stalled = (input.pos(), out.len()) == before || input.pos() == frame.len();
                if stalled && out.len() < out.capacity() {
                    return Err(ZarrError::Codec("zstd: the frame is truncated".into()));
                }
            }
            Err(code) if is_checksum_mismatch(code) => return Ok(false),
            Err(code) => return Err(codec_error("cannot decompress", code)),
        }
    }
}

/// The same frame with its content checksum removed: the header flag
/// cleared and the 4 trailing checksum bytes dropped. Only for the standard
/// frame format (legacy and skippable frames have no such flag).
fn without_checksum(frame: &[u8]) -> Option<Vec<u8>> {
    const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    const CHECKSUM_FLAG: u8 = 0x04;
    if frame.len() < MAGIC.len() + 1 + 4 || frame[..4] != MAGIC || frame[4] & CHECKSUM_FLAG == 0 {
        return None;
    }
    let mut v = frame[..frame.len() - 4].to_vec();
    v[4] &= !CHECKSUM_FLAG;
    Some(v)
}

/// Decodes one frame onto `out`; false when its checksum did not match, in
/// which case `out` still gets the frame's data, decoded without the check,
/// so that a lenient reader can go on with a warning.
fn decode_frame(frame: &[u8], out: &mut Vec<u8>, limit: Option<usize>) -> Result<bool> {
    let start = out.len();
    if stream_frame(frame, out, limit)? {
        return Ok(true);
    }
    out.truncate(start);
    let unchecked = without_checksum(frame).ok_or_else(|| {
        ZarrError::Codec("zstd: checksum mismatch in a frame that cannot be read unchecked".into())
    })?;
    stream_frame(&unchecked, out, limit)?;
    Ok(false)
}

/// The slow, thorough path: frame by frame. Returns the data and how many
/// frames failed their checksum.
fn stream_decode(input: &[u8], limit: Option<usize>) -> Result<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    match limit {
        Some(n) => out = crate::error::try_buffer(n, "zstd")?,
        None => {
            // A header can claim any size; a failed reservation of a bogus
            // one just means growing as we go.
            if let Ok(Some(size)) = zstd_safe::get_frame_content_size(input) {
                if let Ok(s) = usize::try_from(size) {
                    let _ = out.try_reserve_exact(s.min(max_decoded(input.len())));
                }
            }
        }
    }
    let mut bad_frames = 0;
    let mut rest = input;
    while !rest.is_empty() {
        let len = zstd_safe::find_frame_compressed_size(rest)
            .map_err(|code| codec_error("not a complete zstd frame", code))?
            .min(rest.len());
        if len == 0 {
            return Err(ZarrError::Codec("zstd: empty frame".into()));
        }
        let (frame, tail) = rest.split_at(len);
        if !decode_frame(frame, &mut out, limit)? {
            bad_frames += 1;
        }
        rest = tail;
    }
    Ok((out, bad_frames))
}

impl Zstd {
    /// Compress `input` into `out` (its contents replaced, its memory
    /// reused when large enough).
    fn compress_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let fail = |e: std::io::Error| ZarrError::Codec(format!("zstd: compression failed: {e}"));
        COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let c = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::new(self.level).map_err(fail)?),
            };
            c.set_compression_level(self.level).map_err(fail)?;
            c.set_parameter(CParameter::ChecksumFlag(self.checksum))
                .map_err(fail)?;
            out.clear();
            out.reserve(zstd_safe::compress_bound(input.len()));
            // The one-shot compressor records the content size in the frame
            // header, which lets other readers allocate once too.
            c.compress_to_buffer(input, out).map_err(fail)?;
            Ok(())
        })
    }
}

impl BytesToBytes for Zstd {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        config(&[
            ("level", self.level.into()),
            ("checksum", self.checksum.into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.compress_into(&input, &mut out)?;
        Ok(out)
    }

    fn encode_into(&self, input: &[u8], out: &mut Vec<u8>) -> Option<Result<()>> {
        Some(self.compress_into(input, out))
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        if input.is_empty() {
            return Err(ZarrError::Codec(
                "zstd: no data (an empty chunk is not a zstd frame)".into(),
            ));
        }
        // Fast path. Any failure is retried by the streaming decoder, which
        // then reports what exactly is wrong.
        let size = match to.len {
            Some(n) => Some(n),
            None => match zstd_safe::get_frame_content_size(input) {
                Ok(Some(size)) => usize::try_from(size)
                    .ok()
                    .filter(|&s| s <= max_decoded(input.len())),
                _ => None,
            },
        };
        if let Some(size) = size {
            let mut out = Vec::new();
            if out.try_reserve_exact(size).is_ok() && fast_decompress(input, &mut out) {
                return Ok(out);
            }
        }
        let (out, bad_frames) = stream_decode(input, to.len)?;
        if bad_frames > 0 {
            to.ctx.mismatch(format!(
                "zstd checksum mismatch in {}: {bad_frames} frame(s) do not match their stored content checksum",
                to.ctx.what
            ))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "zstd_tests.rs"]
mod tests;
