//! Bit rounding, lossy: each element keeps `keepbits` significant bits,
//! rounded half to even on the bits (Klöwer et al. 2021), so that a
//! compressor after it finds long runs; reading returns the stored values.
//! Two names with one algorithm:
//!
//! - `numcodecs.bitround` (Zarr v2 id `bitround`): numcodecs' `BitRound`,
//!   for float16, float32 and float64, `keepbits` 0 to the mantissa's bits
//!   (10, 23 or 52); the rounding wraps as numcodecs' integer steps do.
//! - `bitround` (zarr-extensions codecs/bitround): the same for floats
//!   (and each part of a complex number), and integers too, which keep
//!   `keepbits` bits from their highest set bit (the rounding saturates
//!   instead of wrapping to 0). `keepbits` is at least 1; more than a
//!   type has leaves its elements as they are.
//!
//! Both are array -> array codecs before `bytes`, on little-endian
//! elements (the engine's `bytes` codec hands them on in the array's
//! byte order).

use super::registry::{CodecSpec, Kind, Param};
use super::v2::{int_member, members, V2Config};
use super::{BytesToBytes, DecodeTo, Mode};
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
    build: Some(|cfg, dtype| Ok(Box::new(BitRound::numcodecs(cfg, dtype)?))),
};

pub const REGISTRY_NAME: &str = "bitround";

pub static REGISTRY_SPEC: CodecSpec = CodecSpec {
    name: REGISTRY_NAME,
    v2: None,
    mode: Mode::ArrayToArray,
    params: &[Param::required("keepbits", Kind::Int(1, 64))],
    defaults: Some(|dtype, _| {
        let bits = mantissa_bits(dtype).unwrap_or(8 * dtype.size().max(1) as u32);
        super::config(&[("keepbits", (bits / 2).max(1).into())])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(BitRound::registry(cfg, dtype)?))),
};

/// The mantissa bits of a float type; None for other types.
fn mantissa_bits(dtype: DataType) -> Option<u32> {
    match dtype {
        DataType::Float16 => Some(10),
        DataType::Float32 | DataType::Complex64 => Some(23),
        DataType::Float64 | DataType::Complex128 => Some(52),
        _ => None,
    }
}

#[derive(Debug)]
pub struct BitRound {
    /// The registry's codec (else numcodecs').
    registry: bool,
    keepbits: u32,
    /// The bytes of each rounded part: an element, or half a complex one.
    size: usize,
    /// The mantissa bits of a float part; None for integers, rounded from
    /// their highest set bit.
    mantissa: Option<u32>,
}

impl BitRound {
    /// numcodecs' codec: floats only, `keepbits` up to the mantissa's.
    pub fn numcodecs(config: &Map<String, Value>, array: DataType) -> Result<BitRound> {
        let keepbits = SPEC.int(config, "keepbits")? as u32;
        let bits = mantissa_bits(array)
            .filter(|_| !matches!(array, DataType::Complex64 | DataType::Complex128))
            .ok_or_else(|| {
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
            registry: false,
            keepbits,
            size: array.size(),
            mantissa: Some(bits),
        })
    }

    /// The registry's codec: floats, complex numbers and integers.
    pub fn registry(config: &Map<String, Value>, array: DataType) -> Result<BitRound> {
        let keepbits = REGISTRY_SPEC.int(config, "keepbits")? as u32;
        use DataType::*;
        let (size, mantissa) = match array {
            Complex64 | Complex128 => (array.size() / 2, mantissa_bits(array)),
            Float16 | Float32 | Float64 => (array.size(), mantissa_bits(array)),
            Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => (array.size(), None),
            _ => {
                return Err(ZarrError::Unsupported(format!(
                    "codec '{REGISTRY_NAME}' is for numeric arrays, not {}",
                    array.name()
                )))
            }
        };
        Ok(BitRound {
            registry: true,
            keepbits,
            size,
            mantissa,
        })
    }

    /// One part's bits rounded.
    fn round(&self, u: u64) -> u64 {
        let width = 8 * self.size as u32;
        let all = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let bits = match self.mantissa {
            Some(m) => m,
            None => 64 - u.leading_zeros(),
        };
        if self.keepbits >= bits {
            return u;
        }
        let drop = bits - self.keepbits;
        let mask = (all >> drop) << drop & all;
        let step = ((u >> drop) & 1) + (1u64 << (drop - 1)) - 1;
        match self.mantissa {
            // numcodecs' steps, which wrap (only a NaN can).
            Some(_) => u.wrapping_add(step) & mask,
            None => u.saturating_add(step).min(all) & mask,
        }
    }
}

impl BytesToBytes for BitRound {
    fn spec(&self) -> &'static CodecSpec {
        if self.registry {
            &REGISTRY_SPEC
        } else {
            &SPEC
        }
    }

    fn configuration(&self) -> Map<String, Value> {
        super::config(&[("keepbits", self.keepbits.into())])
    }

    // `%` rather than is_multiple_of (Rust 1.87) keeps older toolchains working.
    #[allow(clippy::manual_is_multiple_of)]
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        if input.len() % self.size != 0 {
            return Err(ZarrError::Codec(format!(
                "{}: {} bytes are not a whole number of {}-byte elements",
                self.spec().name,
                input.len(),
                self.size
            )));
        }
        if self.mantissa.is_some_and(|m| self.keepbits >= m) {
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

    fn decode_slice(&self, input: &[u8], _to: DecodeTo) -> Result<Vec<u8>> {
        Ok(input.to_vec())
    }

    fn decode(&self, input: Vec<u8>, _to: DecodeTo) -> Result<Vec<u8>> {
        Ok(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn registry(keepbits: u32, dtype: DataType) -> BitRound {
        let cfg = json!({ "keepbits": keepbits });
        BitRound::registry(cfg.as_object().unwrap(), dtype).unwrap()
    }

    #[test]
    fn integers_round_from_their_highest_set_bit_and_saturate() {
        let b = registry(2, DataType::UInt8);
        let got: Vec<u64> = [0u64, 1, 3, 5, 6, 7, 200, 255]
            .iter()
            .map(|&u| b.round(u))
            .collect();
        assert_eq!(got, vec![0, 1, 3, 4, 6, 8, 192, 192]);
        let b = registry(10, DataType::UInt64);
        assert_eq!(b.round(u64::MAX), u64::MAX << 54);
    }

    #[test]
    fn floats_round_as_numcodecs_does() {
        let cfg = json!({ "keepbits": 7 });
        let ours = registry(7, DataType::Float32);
        let theirs = BitRound::numcodecs(cfg.as_object().unwrap(), DataType::Float32).unwrap();
        for x in [1.234_567_f32, -8.765_432, 98_765.43, 0.0, f32::MAX] {
            let u = u64::from(x.to_bits());
            assert_eq!(ours.round(u), theirs.round(u), "{x}");
        }
        // More bits than the mantissa's leave floats as they are.
        assert_eq!(
            registry(40, DataType::Float32).round(0x3f9e_0652),
            0x3f9e_0652
        );
    }
}
