//! `numcodecs.bitround` (Zarr v2 id `bitround`): numcodecs' `BitRound`,
//! lossy: each float keeps `keepbits` bits of its mantissa, rounded half to
//! even on the bits (Klöwer et al. 2021), so that a compressor after it
//! finds long runs; reading returns the stored floats. The array's float
//! type (float16, float32 or float64) says the element size; the elements
//! must be little endian (numcodecs does not say the byte order, and the
//! engine's `bytes` codec hands them on in the array's). zarr-python 3 has
//! it as an array -> array codec before `bytes`. Configuration:
//! `keepbits`, 0 to the mantissa's bits (10, 23 or 52).

use super::registry::{CodecSpec, Kind, Param};
use super::v2::{int_member, members, V2Config};
use super::{BytesToBytes, CodecContext, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "numcodecs.bitround";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "bitround",
        from_v2: |cfg, _, _| {
            let keepbits = int_member(cfg, "keepbits", -1);
            Ok(json!({"name": NAME, "configuration": {"keepbits": keepbits}}))
        },
        to_v2: |cfg| members(cfg, &["keepbits"]),
        filter: true,
    }),
    mode: Mode::ArrayToArray,
    params: &[Param::required("keepbits", Kind::Int(0, 52))],
    // New arrays: half of the mantissa (float32: 11 bits, ~3 decimal digits).
    defaults: Some(|dtype, _| {
        let bits = mantissa_bits(dtype).unwrap_or(52);
        super::config(&[("keepbits", (bits / 2).into())])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(BitRound::from_config(cfg, dtype)?))),
};

/// The mantissa bits of a float type; None for other types.
fn mantissa_bits(dtype: DataType) -> Option<u32> {
    match dtype {
        DataType::Float16 => Some(10),
        DataType::Float32 => Some(23),
        DataType::Float64 => Some(52),
        _ => None,
    }
}

#[derive(Debug)]
pub struct BitRound {
    keepbits: u32,
    /// Element size in bytes and mantissa bits.
    size: usize,
    bits: u32,
}

impl BitRound {
    pub fn from_config(config: &Map<String, Value>, array: DataType) -> Result<BitRound> {
        let keepbits = SPEC.int(config, "keepbits")? as u32;
        let bits = mantissa_bits(array).ok_or_else(|| {
            ZarrError::Unsupported(format!(
                "codec '{NAME}' is for float16, float32 and float64 arrays, not {}",
                array.name()
            ))
        })?;
        if keepbits > bits {
            return Err(ZarrError::Metadata(format!(
                "codec '{NAME}': keepbits {keepbits} is more than the {bits} mantissa bits of {}",
                array.name()
            )));
        }
        Ok(BitRound {
            keepbits,
            size: array.size(),
            bits,
        })
    }

    /// One element's bits rounded: numcodecs' integer steps, which wrap.
    fn round(&self, u: u64) -> u64 {
        let drop = self.bits - self.keepbits;
        let width = 8 * self.size as u32;
        let all = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mask = (all >> drop) << drop & all;
        let half = (1u64 << (drop - 1)) - 1;
        u.wrapping_add(((u >> drop) & 1) + half) & mask
    }
}

impl BytesToBytes for BitRound {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        super::config(&[("keepbits", self.keepbits.into())])
    }

    // `%` rather than is_multiple_of (Rust 1.87) keeps older toolchains working.
    #[allow(clippy::manual_is_multiple_of)]
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        if input.len() % self.size != 0 {
            return Err(ZarrError::Codec(format!(
                "bitround: {} bytes are not a whole number of {}-byte floats",
                input.len(),
                self.size
            )));
        }
        if self.keepbits == self.bits {
            return Ok(input);
        }
        let mut out = input;
        for c in out.chunks_exact_mut(self.size) {
            let mut a = [0u8; 8];
            a[..self.size].copy_from_slice(c);
            let r = self.round(u64::from_le_bytes(a));
            c.copy_from_slice(&r.to_le_bytes()[..self.size]);
        }
        Ok(out)
    }

    fn little_endian_input(&self) -> bool {
        true
    }

    fn decode_slice(
        &self,
        input: &[u8],
        _decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        Ok(input.to_vec())
    }

    fn decode(
        &self,
        input: Vec<u8>,
        _decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        Ok(input)
    }
}
