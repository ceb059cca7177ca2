//! Checks of R data before a write: values the array's type cannot hold
//! are refused before anything is written.

use super::na::{NA_INTEGER, NA_INTEGER64};
use super::RBuf;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::{f16_to_f64, f64_to_f16};

fn int_range(dtype: DataType) -> Option<(f64, f64)> {
    Some(match dtype {
        DataType::Int8 => (i8::MIN as f64, i8::MAX as f64),
        DataType::Int16 => (i16::MIN as f64, i16::MAX as f64),
        DataType::Int32 => (i32::MIN as f64, i32::MAX as f64),
        DataType::Int64 => (i64::MIN as f64, 9223372036854775807.0),
        DataType::UInt8 => (0.0, u8::MAX as f64),
        DataType::UInt16 => (0.0, u16::MAX as f64),
        DataType::UInt32 => (0.0, u32::MAX as f64),
        DataType::UInt64 => (0.0, 18446744073709551615.0),
        _ => return None,
    })
}

/// Refuse data that the array's type cannot hold, before anything is
/// written: values out of range, fractions for integer types, complex data
/// for a real type. `what` names the array.
pub fn check_writable(data: &RBuf, dtype: DataType, what: &str) -> Result<()> {
    let bad = |v: String| {
        Err(ZarrError::Type(format!(
            "{what}: value {v} cannot be stored as {}",
            dtype.name()
        )))
    };
    if let (DataType::Record(n), RBuf::Raw { size, .. }) = (dtype, data) {
        if *size == n as usize {
            return Ok(());
        }
    }
    if matches!(dtype, DataType::Record(_)) || matches!(data, RBuf::Raw { .. }) {
        return Err(ZarrError::Type(format!(
            "{what}: a struct array is written from a data.frame or a list of its fields, and only it"
        )));
    }
    let is_complex = matches!(dtype, DataType::Complex64 | DataType::Complex128);
    if let RBuf::Complex(x) = data {
        if !is_complex {
            return Err(ZarrError::Type(format!(
                "{what}: complex data cannot be written to an array of type {}",
                dtype.name()
            )));
        }
        if dtype == DataType::Complex64 {
            for v in x.iter() {
                for p in v {
                    if p.is_finite() && (*p as f32).is_infinite() {
                        return bad(p.to_string());
                    }
                }
            }
        }
        return Ok(());
    }
    if let Some((lo, hi)) = int_range(dtype) {
        match data {
            RBuf::Integer(x) | RBuf::Logical(x) => {
                if let Some(v) = x
                    .iter()
                    .find(|&&v| v != NA_INTEGER && ((v as f64) < lo || (v as f64) > hi))
                {
                    return bad(v.to_string());
                }
            }
            RBuf::Double(x) => {
                // hi of the 64-bit types rounds up to 2^63 / 2^64, which do not fit.
                let hi_excl = matches!(dtype, DataType::Int64 | DataType::UInt64);
                if let Some(v) = x.iter().find(|&&v| {
                    !v.is_nan()
                        && (v.fract() != 0.0
                            || v < lo
                            || v > hi
                            || (hi_excl && v >= hi)
                            || v.is_infinite())
                }) {
                    return bad(v.to_string());
                }
            }
            RBuf::Integer64(x) => {
                let ok = |v: i64| match dtype {
                    DataType::Int64 => true,
                    DataType::UInt64 | DataType::UInt32 | DataType::UInt16 | DataType::UInt8 => {
                        v >= 0 && (v as f64) <= hi
                    }
                    _ => (v as f64) >= lo && (v as f64) <= hi,
                };
                if let Some(v) = x.iter().find(|&&v| v != NA_INTEGER64 && !ok(v)) {
                    return bad(v.to_string());
                }
            }
            RBuf::Complex(_) | RBuf::Raw { .. } => unreachable!(),
        }
        return Ok(());
    }
    let max = match dtype {
        DataType::Float16 => 65504.0,
        DataType::Float32 => f32::MAX as f64,
        _ => return Ok(()),
    };
    if let RBuf::Double(x) = data {
        // Rounding to the nearest representable value is expected; turning a
        // finite number into infinity is not.
        if let Some(v) = x.iter().find(|&&v| {
            v.is_finite() && v.abs() > max && {
                let r = if dtype == DataType::Float16 {
                    f16_to_f64(f64_to_f16(v))
                } else {
                    v as f32 as f64
                };
                r.is_infinite()
            }
        }) {
            return bad(v.to_string());
        }
    }
    Ok(())
}
