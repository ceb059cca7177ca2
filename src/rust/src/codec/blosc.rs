//! `blosc` codec (zarr-specs v3-codecs-blosc.rst): bytes -> bytes, through
//! c-blosc 1.x (the `blosc-src` crate).
//! Configuration: `cname` (blosclz, lz4, lz4hc, zlib or zstd), `clevel`
//! (0..=9), `shuffle` ("noshuffle", "shuffle", "bitshuffle"; the integers
//! 0, 1, 2 of zarr v2 metadata are accepted too), `typesize` (>= 1; when
//! absent, the size of the array's data type) and `blocksize` (0 = let
//! blosc choose, the default).
//!
//! Only the `*_ctx` entry points are used, each with one internal thread:
//! they keep no global state, so the engine's worker threads can call them
//! at once, and parallelism comes from decoding many chunks, not one.
//! c-blosc trusts the sizes in a buffer's header, so every header is checked
//! against the real buffer length before decompressing. Buffers of zstd
//! blocks are walked here instead (zstd_blocks.rs), to keep one zstd
//! context per thread where c-blosc makes one per block.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::v2::{int_member, members, V2Config};
use super::{config, BytesToBytes, DecodeTo, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use blosc_src::{
    blosc_cbuffer_validate, blosc_compress_ctx, blosc_decompress_ctx, BLOSC_BLOSCLZ_FORMAT,
    BLOSC_LZ4_FORMAT, BLOSC_MAX_BLOCKSIZE, BLOSC_MAX_BUFFERSIZE, BLOSC_MAX_OVERHEAD,
    BLOSC_MEMCPYED, BLOSC_MIN_HEADER_LENGTH, BLOSC_SNAPPY_FORMAT, BLOSC_VERSION_FORMAT,
    BLOSC_ZLIB_FORMAT, BLOSC_ZSTD_FORMAT,
};
use serde_json::{json, Map, Value};
use std::ffi::{c_int, CString};

pub const NAME: &str = "blosc";

/// zstd at level 1, as R-CF's zarr writes: byte shuffle for 2- and 4-byte
/// types and int64, bit shuffle for the other multi-byte types, none for
/// single bytes and strings; `typesize` the element size.
pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "blosc",
        from_v2: blosc_from_v2,
        to_v2: |cfg| {
            let shuffle = match cfg.get("shuffle").and_then(Value::as_str) {
                Some("noshuffle") => 0,
                Some("bitshuffle") => 2,
                _ => 1,
            };
            let mut out = members(cfg, &["cname", "clevel"]);
            out.insert("shuffle".into(), shuffle.into());
            out.extend(members(cfg, &["blocksize"]));
            out
        },
        filter: false,
    }),
    mode: Mode::BytesToBytes,
    params: &[
        Param::required("cname", Kind::Choice(&CNAMES)),
        Param::required("clevel", Kind::Int(0, 9)),
        // Zarr v2's integers 0, 1, 2 are accepted too.
        Param::required(
            "shuffle",
            Kind::Other("one of \"noshuffle\", \"shuffle\", \"bitshuffle\""),
        ),
        // Absent: the size of the array's data type.
        Param::optional("typesize", Kind::Int(1, i64::MAX), Lit::Null),
        // 0: blosc chooses.
        Param::required("blocksize", Kind::Int(0, i64::MAX)),
    ],
    defaults: Some(|dtype, _| {
        use DataType as D;
        let shuffle = match dtype {
            D::Bool | D::Int8 | D::UInt8 | D::String => "noshuffle",
            D::Int16 | D::UInt16 | D::Int32 | D::UInt32 | D::Int64 | D::Float32 => "shuffle",
            _ => "bitshuffle",
        };
        config(&[
            ("cname", "zstd".into()),
            ("clevel", 1.into()),
            ("shuffle", shuffle.into()),
            ("typesize", dtype.size().max(1).into()),
            ("blocksize", 0.into()),
        ])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(Blosc::from_config(cfg, dtype)?))),
};

/// numcodecs' blosc configuration -> the codec's entry: `typesize` from
/// the item size it receives unless given, and numcodecs' integer shuffle
/// codes, AUTOSHUFFLE (-1) picking by item size.
fn blosc_from_v2(cfg: &Map<String, Value>, typesize: &mut usize, _: &str) -> Result<Value> {
    let given = match cfg.get("typesize") {
        Some(t) if !t.is_null() => t.clone(),
        _ => Value::from(*typesize),
    };
    let shuffle = match cfg.get("shuffle").and_then(Value::as_i64) {
        None if cfg.get("shuffle").is_some_and(|s| !s.is_null()) => cfg["shuffle"].clone(),
        None | Some(1) => Value::from("shuffle"),
        Some(0) => Value::from("noshuffle"),
        Some(2) => Value::from("bitshuffle"),
        Some(-1) if given.as_u64() == Some(1) => Value::from("bitshuffle"),
        Some(-1) => Value::from("shuffle"),
        Some(other) => {
            return Err(ZarrError::Metadata(format!(
                ".zarray: blosc shuffle must be -1, 0, 1 or 2, not {other}"
            )))
        }
    };
    let cname = cfg.get("cname").filter(|c| !c.is_null()).cloned();
    *typesize = 1;
    Ok(json!({"name": NAME, "configuration": {
        "cname": cname.unwrap_or_else(|| Value::from("lz4")),
        "clevel": int_member(cfg, "clevel", 5),
        "shuffle": shuffle,
        "typesize": given,
        "blocksize": int_member(cfg, "blocksize", 0)}}))
}

/// The compressors this build of c-blosc has (snappy is left out of it).
const CNAMES: [&str; 5] = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"];
/// Indexed by c-blosc's shuffle codes (BLOSC_NOSHUFFLE = 0, ... = 2).
const SHUFFLES: [&str; 3] = ["noshuffle", "shuffle", "bitshuffle"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blosc {
    pub cname: String,
    pub clevel: u8,
    /// BLOSC_NOSHUFFLE, BLOSC_SHUFFLE or BLOSC_BITSHUFFLE (0, 1, 2).
    pub shuffle: u8,
    pub typesize: usize,
    pub blocksize: usize,
}

impl Blosc {
    pub fn from_config(config: &Map<String, Value>, dtype: DataType) -> Result<Blosc> {
        let bad = |why: String| ZarrError::Metadata(format!("codec 'blosc': {why}"));
        let get = |key: &str| config.get(key).filter(|v| !v.is_null());

        let cname =
            match get("cname") {
                None => {
                    return Err(bad(format!(
                        "configuration has no 'cname' (one of {})",
                        CNAMES.join(", ")
                    )))
                }
                Some(Value::String(s)) if CNAMES.contains(&s.as_str()) => s.clone(),
                Some(Value::String(s)) if s == "snappy" => return Err(ZarrError::Unsupported(
                    "codec 'blosc': cname 'snappy' is valid but this build of blosc has no snappy"
                        .into(),
                )),
                Some(v) => {
                    return Err(bad(format!(
                        "cname must be one of {}, not {v}",
                        CNAMES.join(", ")
                    )))
                }
            };
        let clevel = match get("clevel") {
            None => {
                return Err(bad(
                    "configuration has no 'clevel' (an integer 0 to 9)".into()
                ))
            }
            Some(v) => match v.as_u64() {
                Some(l) if l <= 9 => l as u8,
                _ => {
                    return Err(bad(format!(
                        "clevel must be an integer from 0 to 9, not {v}"
                    )))
                }
            },
        };
        let shuffle = match get("shuffle") {
            None => {
                return Err(bad(
                    "configuration has no 'shuffle' (noshuffle, shuffle or bitshuffle)".into(),
                ))
            }
            Some(Value::String(s)) => match SHUFFLES.iter().position(|m| m == s) {
                Some(i) => i as u8,
                None => {
                    return Err(bad(format!(
                        "shuffle must be one of {}, not '{s}'",
                        SHUFFLES.join(", ")
                    )))
                }
            },
            // zarr v2 wrote 0/1/2; its -1 ("choose by item size") has no v3
            // spelling, and v3 wants the chosen mode recorded, so refuse it.
            Some(v) => match v.as_u64() {
                Some(i) if i <= 2 => i as u8,
                _ => {
                    return Err(bad(format!(
                        "shuffle must be one of {} (or 0, 1, 2), not {v}",
                        SHUFFLES.join(", ")
                    )))
                }
            },
        };
        let typesize = match get("typesize") {
            None => dtype.size().max(1),
            Some(v) => match v.as_u64() {
                Some(t) if t >= 1 => {
                    usize::try_from(t).map_err(|_| bad(format!("typesize {t} is too large")))?
                }
                _ => return Err(bad(format!("typesize must be a positive integer, not {v}"))),
            },
        };
        let blocksize = match get("blocksize") {
            None => 0,
            Some(v) => match v.as_u64() {
                Some(b) => {
                    usize::try_from(b).map_err(|_| bad(format!("blocksize {b} is too large")))?
                }
                None => {
                    return Err(bad(format!(
                        "blocksize must be a non-negative integer, not {v}"
                    )))
                }
            },
        };
        Ok(Blosc {
            cname,
            clevel,
            shuffle,
            typesize,
            blocksize,
        })
    }
}

/// Read a little-endian u32 of the 16-byte header, for error messages.
fn header_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// Checks a compressed buffer before c-blosc reads it. Returns the decoded size.
fn check_header(input: &[u8]) -> Result<usize> {
    let min = BLOSC_MIN_HEADER_LENGTH as usize;
    if input.len() < min {
        return Err(ZarrError::Codec(format!(
            "blosc: {} bytes is too short for a blosc buffer (its header alone is {min} bytes)",
            input.len()
        )));
    }
    let mut nbytes = 0usize;
    // SAFETY: `input` holds at least the 16 header bytes that are read; the
    // call checks that the header's compressed size is `input.len()`.
    let valid =
        unsafe { blosc_cbuffer_validate(input.as_ptr().cast(), input.len(), &mut nbytes) } == 0;
    if !valid {
        let version = input[0];
        if u32::from(version) != BLOSC_VERSION_FORMAT {
            return Err(ZarrError::Codec(format!(
                "blosc: not a blosc buffer, or an unknown format version ({version}, expected {BLOSC_VERSION_FORMAT})"
            )));
        }
        return Err(ZarrError::Codec(format!(
            "blosc: the header gives {} compressed bytes and {} decoded bytes, but the buffer has {} bytes \
             (truncated or not blosc data)",
            header_u32(input, 12),
            header_u32(input, 4),
            input.len()
        )));
    }
    let flags = u32::from(input[2]);
    if flags & BLOSC_MEMCPYED == 0 {
        // c-blosc would refuse these too, but this says why.
        match flags >> 5 {
            BLOSC_BLOSCLZ_FORMAT | BLOSC_LZ4_FORMAT | BLOSC_ZLIB_FORMAT | BLOSC_ZSTD_FORMAT => {}
            BLOSC_SNAPPY_FORMAT => {
                return Err(ZarrError::Unsupported(
                    "blosc: the chunk was compressed with snappy, which this build of blosc lacks"
                        .into(),
                ))
            }
            other => {
                return Err(ZarrError::Codec(format!(
                    "blosc: unknown internal compressor code {other}"
                )))
            }
        }
    }
    Ok(nbytes)
}

impl BytesToBytes for Blosc {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        let shuffle = SHUFFLES.get(usize::from(self.shuffle)).copied();
        config(&[
            ("cname", self.cname.clone().into()),
            ("clevel", self.clevel.into()),
            ("shuffle", shuffle.unwrap_or("noshuffle").into()),
            ("typesize", self.typesize.into()),
            ("blocksize", self.blocksize.into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        if input.len() > BLOSC_MAX_BUFFERSIZE as usize {
            return Err(ZarrError::Codec(format!(
                "blosc: a chunk of {} bytes is over blosc's limit of {BLOSC_MAX_BUFFERSIZE} bytes; use smaller chunks",
                input.len()
            )));
        }
        let cname = CString::new(self.cname.as_str())
            .map_err(|_| ZarrError::Codec(format!("blosc: invalid cname {:?}", self.cname)))?;
        // Blosc's own guarantee: input plus this much always fits.
        let cap = input.len() + BLOSC_MAX_OVERHEAD as usize;
        let mut out: Vec<u8> = Vec::with_capacity(cap);
        // c-blosc narrows blocksize to 32 bits; clamp it the way it would
        // clamp it anyway, rather than let it wrap.
        let blocksize = self.blocksize.min(BLOSC_MAX_BLOCKSIZE as usize);
        // SAFETY: `input` is readable for its length, `out` writable for
        // `cap` bytes, which c-blosc promises not to exceed; `cname` is NUL
        // terminated and outlives the call.
        let n = unsafe {
            blosc_compress_ctx(
                c_int::from(self.clevel),
                c_int::from(self.shuffle),
                self.typesize,
                input.len(),
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                cap,
                cname.as_ptr(),
                blocksize,
                1,
            )
        };
        match usize::try_from(n) {
            Ok(n) if n > 0 && n <= cap => {
                // SAFETY: c-blosc wrote `n` bytes, within the capacity.
                unsafe { out.set_len(n) };
                Ok(out)
            }
            _ => Err(ZarrError::Codec(format!(
                "blosc: compression with {} failed (code {n})",
                self.cname
            ))),
        }
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let nbytes = check_header(input)?;
        if let Some(n) = to.len {
            if nbytes != n {
                return Err(ZarrError::Codec(format!(
                    "blosc: the header gives {nbytes} decoded bytes, expected {n}"
                )));
            }
        }
        if let Some(decoded) = zstd_blocks::decode(input, nbytes) {
            return decoded;
        }
        let mut out: Vec<u8> = Vec::new();
        out.try_reserve_exact(nbytes).map_err(|_| {
            ZarrError::Memory(format!(
                "blosc: cannot allocate {nbytes} bytes for the output"
            ))
        })?;
        // SAFETY: the header was validated against `input.len()`, so c-blosc
        // reads only within `input`; it writes at most `nbytes` bytes, the
        // capacity of `out`.
        let n = unsafe {
            blosc_decompress_ctx(input.as_ptr().cast(), out.as_mut_ptr().cast(), nbytes, 1)
        };
        match usize::try_from(n) {
            Ok(n) if n == nbytes => {
                // SAFETY: c-blosc reported writing exactly `nbytes` bytes.
                unsafe { out.set_len(n) };
                Ok(out)
            }
            _ => Err(ZarrError::Codec(format!(
                "blosc: cannot decompress (code {n}); the data is corrupt"
            ))),
        }
    }
}

mod zstd_blocks;

#[cfg(test)]
mod tests;
