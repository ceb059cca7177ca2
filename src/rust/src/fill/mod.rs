//! Fill values of the core data types: v3-data-types.rst, "Permitted fill
//! values", and the `fill_value` member of v3-core.rst.
//!
//! A fill value is held as the native-endian bytes of one element so the
//! engine can compare and copy it without knowing its type.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::Value;

mod float;
#[cfg(test)]
mod tests;

pub use float::{f16_to_f64, f64_to_f16};
use float::{float_bits, float_bytes, float_of, float_to_json, parse_float};

/// The fill value this package gives new string arrays (U+2400 SYMBOL FOR
/// NULL): the one string fill that reads as NA, so that NA and "" both
/// round-trip. Any other string fill value is text, as zarr-python and
/// R-CF's zarr read it. (R's `default_fill_value()` repeats it.)
pub const NA_TEXT: &str = "\u{2400}";

/// A fill value as the native-endian bytes of one element of its data type.
#[derive(Debug, Clone, PartialEq)]
pub struct FillValue {
    pub bytes: Vec<u8>,
}

fn bad(dtype: DataType, json: &Value, want: &str) -> ZarrError {
    ZarrError::Metadata(format!(
        "fill_value {json} is not valid for data type {}: expected {want}",
        dtype.name()
    ))
}

fn take<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

/// An integer fill value, exactly. Besides JSON integers, 64-bit types
/// (`text_ok`) accept a string of decimal digits: R's JSON tools cannot hold
/// every 64-bit value as a number, so the R side passes those as text. A
/// narrower type has no such excuse, and a string there is a wrong type.
fn int_of(json: &Value, text_ok: bool) -> Option<i128> {
    if let Some(i) = json.as_i64() {
        return Some(i as i128);
    }
    if let Some(u) = json.as_u64() {
        return Some(u as i128);
    }
    let s = json.as_str().filter(|_| text_ok)?;
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i128>().ok()
}

impl FillValue {
    /// Parse any JSON form v3-core.rst allows for `dtype`.
    pub fn parse(json: &Value, dtype: DataType) -> Result<FillValue> {
        // Integers must be read with as_i64/as_u64: through f64 int64 and
        // uint64 values beyond 2^53 would silently change.
        macro_rules! signed {
            ($t:ty) => {{
                let v = int_of(json, std::mem::size_of::<$t>() == 8)
                    .and_then(|i| <$t>::try_from(i).ok())
                    .ok_or_else(|| {
                        bad(
                            dtype,
                            json,
                            &format!("an integer in [{}, {}]", <$t>::MIN, <$t>::MAX),
                        )
                    })?;
                v.to_ne_bytes().to_vec()
            }};
        }
        macro_rules! unsigned {
            ($t:ty) => {{
                let v = int_of(json, std::mem::size_of::<$t>() == 8)
                    .and_then(|i| <$t>::try_from(i).ok())
                    .ok_or_else(|| {
                        bad(dtype, json, &format!("an integer in [0, {}]", <$t>::MAX))
                    })?;
                v.to_ne_bytes().to_vec()
            }};
        }
        let bytes = match dtype {
            // A record's fill value is its stored bytes, in base64 (the
            // metadata layer turns a struct's per-field form into them).
            DataType::Record(n) => {
                use base64::Engine as _;
                let b = json
                    .as_str()
                    .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                    .ok_or_else(|| bad(dtype, json, "base64 of the record's bytes"))?;
                if b.len() != n as usize {
                    return Err(bad(dtype, json, &format!("base64 of {n} bytes")));
                }
                b
            }
            // A string fill value is its UTF-8 bytes.
            DataType::String => json
                .as_str()
                .ok_or_else(|| bad(dtype, json, "a string"))?
                .as_bytes()
                .to_vec(),
            DataType::Bool => vec![json
                .as_bool()
                .ok_or_else(|| bad(dtype, json, "true or false"))?
                as u8],
            DataType::Int8 => signed!(i8),
            DataType::Int16 => signed!(i16),
            DataType::Int32 => signed!(i32),
            DataType::Int64 => signed!(i64),
            DataType::UInt8 => unsigned!(u8),
            DataType::UInt16 => unsigned!(u16),
            DataType::UInt32 => unsigned!(u32),
            DataType::UInt64 => unsigned!(u64),
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                float_bytes(parse_float(json, f, dtype)?, f)
            }
            DataType::Complex64 | DataType::Complex128 => {
                let f = float_of(dtype).expect("complex type");
                match json.as_array().map(Vec::as_slice) {
                    Some([re, im]) => {
                        let mut b = float_bytes(parse_float(re, f, dtype)?, f);
                        b.extend(float_bytes(parse_float(im, f, dtype)?, f));
                        b
                    }
                    _ => return Err(bad(dtype, json, "a two-element array [real, imaginary]")),
                }
            }
        };
        Ok(FillValue { bytes })
    }

    /// The canonical JSON form (numbers; "NaN"/"Infinity"/"-Infinity"; [re, im]; booleans).
    pub fn to_json(&self, dtype: DataType) -> Value {
        let b = &self.bytes;
        match dtype {
            DataType::String => Value::String(String::from_utf8_lossy(b).into_owned()),
            DataType::Record(_) => {
                use base64::Engine as _;
                Value::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            DataType::Bool => Value::Bool(b[0] != 0),
            DataType::Int8 => i8::from_ne_bytes(take(b)).into(),
            DataType::Int16 => i16::from_ne_bytes(take(b)).into(),
            DataType::Int32 => i32::from_ne_bytes(take(b)).into(),
            DataType::Int64 => i64::from_ne_bytes(take(b)).into(),
            DataType::UInt8 => u8::from_ne_bytes(take(b)).into(),
            DataType::UInt16 => u16::from_ne_bytes(take(b)).into(),
            DataType::UInt32 => u32::from_ne_bytes(take(b)).into(),
            DataType::UInt64 => u64::from_ne_bytes(take(b)).into(),
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                float_to_json(float_bits(b, f), f)
            }
            DataType::Complex64 | DataType::Complex128 => {
                let f = float_of(dtype).expect("complex type");
                let half = dtype.size() / 2;
                Value::Array(vec![
                    float_to_json(float_bits(b, f), f),
                    float_to_json(float_bits(&b[half..], f), f),
                ])
            }
        }
    }

    /// All-zero bytes: false, 0, 0.0, 0+0i.
    pub fn zero(dtype: DataType) -> FillValue {
        FillValue {
            bytes: vec![0; dtype.size()],
        }
    }

    /// The value as a double, for real data types: exact for floats and for
    /// integers up to 2^53, rounded beyond. `None` for complex types.
    pub fn as_f64(&self, dtype: DataType) -> Option<f64> {
        let b = &self.bytes;
        Some(match dtype {
            DataType::Bool => (b[0] != 0) as u8 as f64,
            DataType::Int8 => i8::from_ne_bytes(take(b)) as f64,
            DataType::Int16 => i16::from_ne_bytes(take(b)) as f64,
            DataType::Int32 => i32::from_ne_bytes(take(b)) as f64,
            DataType::Int64 => i64::from_ne_bytes(take(b)) as f64,
            DataType::UInt8 => b[0] as f64,
            DataType::UInt16 => u16::from_ne_bytes(take(b)) as f64,
            DataType::UInt32 => u32::from_ne_bytes(take(b)) as f64,
            DataType::UInt64 => u64::from_ne_bytes(take(b)) as f64,
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                f.value(float_bits(b, f))
            }
            DataType::Complex64 | DataType::Complex128 | DataType::String | DataType::Record(_) => {
                return None
            }
        })
    }
}
