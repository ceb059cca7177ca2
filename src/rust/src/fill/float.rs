//! Float fill values: the forms v3-data-types.rst allows (numbers, "NaN",
//! "Infinity", "-Infinity", "0x" bit patterns) and IEEE half precision,
//! converted exactly.

use super::{bad, take};
use crate::dtype::DataType;
use crate::error::Result;
use serde_json::{Number, Value};

/// The IEEE binary formats a float fill can take.
#[derive(Clone, Copy)]
pub(super) enum Float {
    F16,
    F32,
    F64,
}

impl Float {
    pub(super) fn bits(self) -> u32 {
        match self {
            Float::F16 => 16,
            Float::F32 => 32,
            Float::F64 => 64,
        }
    }

    /// The one NaN the string "NaN" denotes: positive, only the mantissa's
    /// top bit set.
    pub(super) fn canonical_nan(self) -> u64 {
        match self {
            Float::F16 => 0x7e00,
            Float::F32 => 0x7fc0_0000,
            Float::F64 => 0x7ff8_0000_0000_0000,
        }
    }

    pub(super) fn infinity(self, negative: bool) -> u64 {
        let (pos, sign) = match self {
            Float::F16 => (0x7c00, 1 << 15),
            Float::F32 => (0x7f80_0000, 1 << 31),
            Float::F64 => (0x7ff0_0000_0000_0000, 1 << 63),
        };
        if negative {
            pos | sign
        } else {
            pos
        }
    }

    /// Bits of `x` rounded to this format (round half to even).
    pub(super) fn round(self, x: f64) -> u64 {
        match self {
            Float::F16 => f64_to_f16(x) as u64,
            Float::F32 => (x as f32).to_bits() as u64,
            Float::F64 => x.to_bits(),
        }
    }

    /// The exact value of a bit pattern of this format.
    pub(super) fn value(self, bits: u64) -> f64 {
        match self {
            Float::F16 => f16_to_f64(bits as u16),
            Float::F32 => f32::from_bits(bits as u32) as f64,
            Float::F64 => f64::from_bits(bits),
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Float::F16 => "float16",
            Float::F32 => "float32",
            Float::F64 => "float64",
        }
    }
}

/// The bits of a float fill in any form the spec allows.
pub(super) fn parse_float(json: &Value, f: Float, dtype: DataType) -> Result<u64> {
    match json {
        Value::Number(n) => {
            // Integers go straight to the target format: via f64 a large
            // integer would be rounded twice.
            if let Some(i) = n.as_i64() {
                Ok(match f {
                    Float::F32 => (i as f32).to_bits() as u64,
                    _ => f.round(i as f64),
                })
            } else if let Some(u) = n.as_u64() {
                Ok(match f {
                    Float::F32 => (u as f32).to_bits() as u64,
                    _ => f.round(u as f64),
                })
            } else {
                let x = n.as_f64().ok_or_else(|| bad(dtype, json, "a number"))?;
                Ok(f.round(x))
            }
        }
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(f.canonical_nan()),
            "Infinity" => Ok(f.infinity(false)),
            "-Infinity" => Ok(f.infinity(true)),
            _ => {
                let digits = (f.bits() / 4) as usize;
                let hex = s
                    .strip_prefix("0x")
                    .filter(|h| h.len() == digits && h.bytes().all(|b| b.is_ascii_hexdigit()));
                match hex {
                    Some(h) => Ok(u64::from_str_radix(h, 16).expect("checked hex digits")),
                    None => Err(bad(
                        dtype,
                        json,
                        &format!(
                            "a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x\" and {digits} hex digits for {}",
                            f.name()
                        ),
                    )),
                }
            }
        },
        _ => Err(bad(dtype, json, "a number or a string")),
    }
}

/// The canonical JSON of a float bit pattern: a number when finite, the
/// named strings for infinities and the canonical NaN, and hex for any other
/// NaN so its payload and sign survive a round trip.
pub(super) fn float_to_json(bits: u64, f: Float) -> Value {
    let x = f.value(bits);
    if x.is_nan() {
        if bits == f.canonical_nan() {
            Value::from("NaN")
        } else {
            Value::from(format!(
                "0x{:0width$x}",
                bits,
                width = (f.bits() / 4) as usize
            ))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        // The exact value, as zarr-python writes it (0.1f32 is written as
        // 0.10000000149011612): any reader gets the same bits back, with no
        // double rounding through a shorter decimal.
        Value::Number(Number::from_f64(x).expect("finite"))
    }
}

pub(super) fn float_of(dtype: DataType) -> Option<Float> {
    match dtype {
        DataType::Float16 => Some(Float::F16),
        DataType::Float32 | DataType::Complex64 => Some(Float::F32),
        DataType::Float64 | DataType::Complex128 => Some(Float::F64),
        _ => None,
    }
}

/// Native-endian bytes of a float bit pattern in its own width.
pub(super) fn float_bytes(bits: u64, f: Float) -> Vec<u8> {
    match f {
        Float::F16 => (bits as u16).to_ne_bytes().to_vec(),
        Float::F32 => (bits as u32).to_ne_bytes().to_vec(),
        Float::F64 => bits.to_ne_bytes().to_vec(),
    }
}

pub(super) fn float_bits(bytes: &[u8], f: Float) -> u64 {
    match f {
        Float::F16 => u16::from_ne_bytes(take(bytes)) as u64,
        Float::F32 => u32::from_ne_bytes(take(bytes)) as u64,
        Float::F64 => u64::from_ne_bytes(take(bytes)),
    }
}

/// The exact value of IEEE 754 half-precision bits. NaN payloads are kept
/// (shifted into the top of the double's mantissa).
pub fn f16_to_f64(bits: u16) -> f64 {
    let negative = bits & 0x8000 != 0;
    let exp = ((bits >> 10) & 0x1f) as u64;
    let man = (bits & 0x3ff) as u64;
    let sign = (negative as u64) << 63;
    match exp {
        // Subnormal (or zero): man * 2^-24, exact in a double.
        0 => {
            let v = man as f64 * f64::powi(2.0, -24);
            if negative {
                -v
            } else {
                v
            }
        }
        0x1f => f64::from_bits(sign | (0x7ff << 52) | (man << 42)),
        _ => f64::from_bits(sign | ((exp + 1023 - 15) << 52) | (man << 42)),
    }
}

/// `x` rounded to IEEE 754 half precision, round half to even, straight from
/// the double (going through f32 would round twice). Overflow gives
/// infinity; NaN stays NaN with the top payload bits (so every half survives
/// f16 -> f64 -> f16), setting the quiet bit only when those bits are all
/// zero, since a zero payload would mean infinity.
pub fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let man = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        if man == 0 {
            return sign | 0x7c00;
        }
        let payload = (man >> 42) as u16;
        return sign | 0x7c00 | if payload == 0 { 0x0200 } else { payload };
    }
    if exp == 0 {
        // Zero or a double subnormal: far below half the smallest half subnormal.
        return sign;
    }
    let e = exp - 1023;
    if e > 15 {
        return sign | 0x7c00;
    }
    // The half's magnitude bits before rounding and how many low bits of
    // the 53-bit significand are dropped.
    let sig = man | (1 << 52);
    let (kept, shift) = if e >= -14 {
        (((e + 15) as u64) << 10 | (man >> 42), 42u32)
    } else {
        // Subnormal half: the value in units of 2^-24 is sig * 2^(e + 24 - 52).
        let shift = (28 - e) as u32;
        if shift > 53 {
            return sign;
        }
        (sig >> shift, shift)
    };
    let rest = sig & ((1u64 << shift) - 1);
    let halfway = 1u64 << (shift - 1);
    // A carry out of the mantissa moves to the next exponent (or to
    // infinity), which is the correctly rounded result.
    let rounded = if rest > halfway || (rest == halfway && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    sign | rounded as u16
}
