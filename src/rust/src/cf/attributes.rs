//! Numbers in CF attributes, in the forms xarray stores them: JSON
//! numbers, "NaN" and infinities as text, 64-bit integers as decimal text,
//! and (v3) base64 of the value's little-endian bytes; and the strings of
//! a string array's markers.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

fn bad(name: &str, msg: String) -> ZarrError {
    ZarrError::Metadata(format!("CF attribute '{name}': {msg}"))
}

/// A stored number of an attribute as a double: a JSON number, "NaN",
/// "Infinity", "-Infinity", or (v3, as xarray writes floating-point
/// fill values) base64 of the value's little-endian bytes.
fn attribute_number(v: &Value, dtype: DataType, name: &str) -> Result<f64> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| bad(name, format!("{v} is not a number"))),
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            // A 64-bit integer kept as decimal text, as R's JSON parser
            // gives them back (never base64, which has no '-').
            t if t.starts_with('-')
                && t[1..].bytes().all(|b| b.is_ascii_digit())
                && t.len() > 1 =>
            {
                t.parse::<f64>()
                    .map_err(|_| bad(name, format!("{v} is not a number")))
            }
            _ => {
                use base64::Engine as _;
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|_| bad(name, format!("{v} is neither a number nor base64")))?;
                bytes_number(&raw, dtype)
                    .ok_or_else(|| bad(name, format!("{v} does not hold one {}", dtype.name())))
            }
        },
        _ => Err(bad(name, format!("{v} is not a number"))),
    }
}

fn bytes_number(b: &[u8], dtype: DataType) -> Option<f64> {
    // xarray writes a floating-point fill as the bytes of a float64,
    // whatever the array's width.
    let dtype = match (dtype, b.len()) {
        (DataType::Float16 | DataType::Float32, 8) => DataType::Float64,
        _ => dtype,
    };
    macro_rules! le {
        ($t:ty) => {
            <$t>::from_le_bytes(b.try_into().ok()?) as f64
        };
    }
    Some(match dtype {
        DataType::Float64 => le!(f64),
        DataType::Float32 => le!(f32),
        DataType::Float16 => crate::fill::f16_to_f64(u16::from_le_bytes(b.try_into().ok()?)),
        DataType::Int8 => le!(i8),
        DataType::Int16 => le!(i16),
        DataType::Int32 => le!(i32),
        DataType::Int64 => le!(i64),
        DataType::UInt8 => le!(u8),
        DataType::UInt16 => le!(u16),
        DataType::UInt32 => le!(u32),
        DataType::UInt64 => le!(u64),
        _ => return None,
    })
}

pub(super) fn numbers(v: &Value, dtype: DataType, name: &str) -> Result<Vec<f64>> {
    match v {
        Value::Array(list) => list
            .iter()
            .map(|x| attribute_number(x, dtype, name))
            .collect(),
        Value::Null => Ok(Vec::new()),
        x => Ok(vec![attribute_number(x, dtype, name)?]),
    }
}

/// The strings of a marker attribute of a string array: one string or a
/// list of them; members that are not text mark nothing.
pub(super) fn texts(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

pub(super) fn scalar(
    attrs: &Map<String, Value>,
    name: &str,
    dtype: DataType,
) -> Result<Option<f64>> {
    match attrs.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) if a.len() == 1 => attribute_number(&a[0], dtype, name).map(Some),
        Some(v) => attribute_number(v, dtype, name).map(Some),
    }
}
