//! What a new array needs in its attributes so that `xarray.open_zarr()`
//! shows missing the same elements that reads here show as NA.
//!
//! In Zarr v2 xarray takes the array's fill value as its mask, so nothing
//! is needed. In v3 it ignores the fill value and masks only through CF
//! attributes: `_FillValue` for numbers (decoded by xarray's own rules:
//! integers as JSON numbers, floating point as base64 of a little-endian
//! float64), and for strings `missing_value`, since xarray 2026.9 refuses
//! to open a v3 string variable whose `_FillValue` is text, while it
//! compares `missing_value` with the elements as they are.

use super::Cf;
use crate::dtype::DataType;
use crate::error::Result;
use crate::fill::NA_TEXT;
use crate::metadata::ArrayMetadata;
use serde_json::{Map, Value};

/// The attributes to add to the new array `meta` at `path` (its name
/// decides whether its dimension names are this package's defaults): empty
/// when R reads no element as missing by its fill value, when the caller
/// set a CF missing value of their own, in v2, and for data types xarray
/// reads unmasked (bool, complex, zarr-python's NumPy types).
pub fn missing_attributes(meta: &ArrayMetadata, path: &str) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    let attrs = &meta.attributes;
    let own = attrs.contains_key("_FillValue") || attrs.contains_key("missing_value");
    let numpy_type = meta
        .extra
        .contains_key(crate::metadata::numpy_types::WRITTEN);
    if meta.zarr_format != 3 || own || numpy_type || !meta.fill_marks_na {
        return Ok(out);
    }
    let dtype = meta.data_type;
    // What R reads as NA: under the Zarr rule the fill value; in a CF
    // variable whatever `Cf` marks (a fill of 0 there is a number).
    let cf = Cf::of(meta, path)?;
    let fill_is_na = |x: f64| match &cf {
        None => true,
        Some(cf) if cf.is_zarr_rule(meta) => true,
        Some(cf) => cf.is_missing(x),
    };
    let value = match dtype {
        // Of string fill values only this package's marker reads as NA
        // (any other is text to R, zarr-python and xarray alike); it keeps
        // the Zarr rule in `Cf::of` whatever the attributes say, so R reads
        // it as NA with `missing_value` too.
        DataType::String if meta.fill_value.bytes == NA_TEXT.as_bytes() => {
            Some(meta.fill_value.to_json(dtype))
        }
        DataType::Bool | DataType::Complex64 | DataType::Complex128 | DataType::String => None,
        // A NaN fill needs no attribute: xarray shows those elements as NaN
        // without one (and R-CF's zarr, which writes none, keeps the same
        // attributes).
        DataType::Float16 | DataType::Float32 | DataType::Float64 => meta
            .fill_value
            .as_f64(dtype)
            .filter(|&x| fill_is_na(x) && !x.is_nan())
            .map(|x| {
                use base64::Engine as _;
                Value::from(base64::engine::general_purpose::STANDARD.encode(x.to_le_bytes()))
            }),
        // Integers exactly (int64 and uint64 may not fit a double).
        _ => meta
            .fill_value
            .as_f64(dtype)
            .filter(|&x| fill_is_na(x))
            .map(|_| meta.fill_value.to_json(dtype)),
    };
    if let Some(v) = value {
        let key = if dtype == DataType::String {
            "missing_value"
        } else {
            "_FillValue"
        };
        out.insert(key.into(), v);
    }
    Ok(out)
}
