//! CF decoding: the netCDF Climate and Forecast encodings that xarray
//! writes into Zarr attributes, read the way `xarray.open_zarr()` reads
//! them by default.
//!
//! The rule that decides which arrays are decoded (`Cf::of`): an array is
//! a CF variable when it names its dimensions the way xarray does (the
//! `_ARRAY_DIMENSIONS` attribute of v2, `dimension_names` of v3) or carries
//! a CF encoding attribute (`_FillValue`, `missing_value`, `scale_factor`,
//! `add_offset`, `units` of the form "<unit> since <date>", `calendar`, the
//! flags 0 = "false", 1 = "true" of a logical that R wrote). Dimension
//! names that this package gives by default do not count.
//! For such an array the CF attributes, not the Zarr fill value, say what
//! is missing: `_FillValue` and `missing_value`, and for v2, where xarray
//! keeps `_FillValue` in `.zarray`, the Zarr fill value. A v3 fill value
//! marks nothing when either attribute is there, nor when it is 0,
//! zarr-python's default, which would hide every zero.
//! Strings follow the same markers (text ones only; in v2 the fill value,
//! "" too, stands for `_FillValue`); without them a string fill value
//! other than "" (this package's U+2400) keeps the Zarr rule.
//! Values are then unpacked (`x * scale_factor + add_offset`, a double),
//! times ("hours since 1990-01-01", standard calendars) become seconds
//! since 1970 for POSIXct, xarray's timedeltas (`dtype: timedelta64[..]`)
//! seconds for difftime, and xarray's booleans (int8 with `dtype: bool`)
//! logicals. NaT (the smallest int64) of times and timedeltas is missing.
//! Other arrays keep the Zarr rule (elements equal to the fill value are
//! missing). The engine applies `Cf` to each element as it scatters a
//! chunk into R's vector, and its inverse as it gathers one for a write.

//!
//! Files: `attributes` (numbers in attributes), `time` (units of time),
//! `decode` (the scatter's materializer), `encode` (the gather's),
//! `xarray` (the attributes a new array needs for xarray to mask its NA).

mod attributes;
mod decode;
mod encode;
mod time;
mod xarray;

pub use time::parse_time_units;
pub use xarray::missing_attributes;

use crate::dtype::numpy::TimeType;
use crate::dtype::{DataType, RType};
use crate::error::Result;
use crate::metadata::ArrayMetadata;
use attributes::{numbers, scalar, texts};
use serde_json::{Map, Value};
use time::unit_seconds;

/// What a CF variable's stored values become in R.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CfKind {
    /// The stored numbers, with CF's missing values as NA (the R type of
    /// the data type; a double when they are unpacked).
    Number,
    /// Seconds since 1970-01-01 UTC (POSIXct).
    Time,
    /// Seconds (difftime).
    Timedelta,
    /// xarray's booleans (int8 0/1): logical.
    Bool,
}

/// How one CF variable is decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Cf {
    pub kind: CfKind,
    /// Stored values that mean "missing", as doubles (NaN: every NaN).
    pub missing: Vec<f64>,
    /// The strings that mean "missing" in a string array.
    pub missing_text: Vec<String>,
    /// Whether the smallest int64 (NaT) is missing.
    pub nat: bool,
    /// decoded = stored * scale + offset (times: in seconds since 1970).
    pub scale: f64,
    pub offset: f64,
    /// Whether the values are unpacked or converted at all (a double
    /// result); false when CF only says which values are missing.
    pub transforms: bool,
    /// The `units` attribute (for printing), and the unit of a time or
    /// timedelta ("hours").
    pub units: Option<String>,
    pub time_unit: Option<String>,
    /// A note for the user when a CF attribute could not be honoured (a
    /// calendar other than the standard ones): the values stay numbers.
    pub note: Option<String>,
}

const CF_ATTRIBUTES: [&str; 5] = [
    "_FillValue",
    "missing_value",
    "scale_factor",
    "add_offset",
    "calendar",
];

const STANDARD_CALENDARS: [&str; 3] = ["standard", "gregorian", "proleptic_gregorian"];

/// CF flags 0 = "false", 1 = "true": how this package stores a logical
/// with NA (bool has no missing value), read back as logical.
fn false_true_flags(attrs: &Map<String, Value>) -> bool {
    let values = attrs.get("flag_values").and_then(Value::as_array);
    let zero_one = values
        .is_some_and(|v| v.len() == 2 && v[0].as_f64() == Some(0.0) && v[1].as_f64() == Some(1.0));
    zero_one && attrs.get("flag_meanings").and_then(Value::as_str) == Some("false true")
}

/// Whether an array is a CF variable (see the module's documentation);
/// `path` is the array's node path.
pub fn is_cf_variable(meta: &ArrayMetadata, path: &str) -> bool {
    let a = &meta.attributes;
    let named = a.contains_key("_ARRAY_DIMENSIONS")
        || (meta.zarr_format == 3 && meta.dimension_names.is_some());
    CF_ATTRIBUTES.iter().any(|k| a.contains_key(*k))
        || a.get("units")
            .and_then(Value::as_str)
            .is_some_and(|u| u.contains(" since "))
        || (named && !default_dimension_names(meta, path))
        || false_true_flags(a)
        || numpy_time(meta).is_some()
}

/// Whether the dimension names are the ones this package gives an array
/// at `path` that has none of its own ("<name>_dim_<k>", "dim_<k>" at the
/// root; R/cf.R): they serve xarray, and leave the array under the Zarr
/// rule, so that a fill value of 0 still marks NA.
fn default_dimension_names(meta: &ArrayMetadata, path: &str) -> bool {
    let name = path.trim_matches('/').rsplit('/').next().unwrap_or("");
    let first = meta
        .dimension_names
        .as_ref()
        .and_then(|n| n.first().cloned().flatten());
    let prefix = match (name.is_empty(), first) {
        // An array opened as the root of a store (a URL to the array) has
        // lost its name: "<any>_dim_<k>" are defaults there too.
        (true, Some(f)) if f == "dim_0" || f.ends_with("_dim_0") => f[..f.len() - 1].to_string(),
        (true, _) => "dim_".to_string(),
        (false, _) => format!("{name}_dim_"),
    };
    meta.dimension_names.as_ref().is_some_and(|names| {
        names
            .iter()
            .enumerate()
            .all(|(k, n)| n.as_deref() == Some(format!("{prefix}{k}").as_str()))
    })
}

/// zarr-python's numpy.datetime64 / numpy.timedelta64 data types: (kind,
/// unit, seconds per stored step).
fn numpy_time(meta: &ArrayMetadata) -> Option<(CfKind, String, Option<f64>)> {
    let dt = meta.extra.get(crate::metadata::numpy_types::WRITTEN)?;
    let name = dt.get("name")?.as_str()?;
    let t = TimeType::from_v3(name, dt.get("configuration"))?.ok()?;
    Some(time_steps(&t))
}

/// A datetime64/timedelta64 type's kind, unit and seconds per stored
/// step (None for years, months and "generic", which have no fixed
/// length).
fn time_steps(t: &TimeType) -> (CfKind, String, Option<f64>) {
    let kind = if t.delta {
        CfKind::Timedelta
    } else {
        CfKind::Time
    };
    let step = match t.unit.as_str() {
        "W" => Some(7.0 * 86400.0),
        "D" => Some(86400.0),
        "h" => Some(3600.0),
        "m" => Some(60.0),
        "s" => Some(1.0),
        "ms" => Some(1e-3),
        "us" | "μs" => Some(1e-6),
        "ns" => Some(1e-9),
        "ps" => Some(1e-12),
        "fs" => Some(1e-15),
        "as" => Some(1e-18),
        _ => None,
    };
    (
        kind,
        t.unit.clone(),
        step.map(|s| s * t.scale_factor as f64),
    )
}

/// The strings that mark NA in a CF string array, as xarray masks them:
/// the `missing_value` attribute, and `_FillValue`, which in v2 is the
/// fill value of `.zarray` (xarray's attribute of that name counts only
/// where the fill value is null). Markers that are not text mark nothing.
fn missing_strings(meta: &ArrayMetadata) -> Vec<String> {
    let text = |name: &str| texts(meta.attributes.get(name));
    let mut out = if meta.zarr_format == 2 && meta.fill_marks_na {
        String::from_utf8(meta.fill_value.bytes.clone())
            .into_iter()
            .collect()
    } else {
        text("_FillValue")
    };
    for s in text("missing_value") {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl Cf {
    /// How to decode the array at `path`, or None when it is not a CF
    /// variable (or holds strings with a fill value of their own and no CF
    /// missing values).
    pub fn of(meta: &ArrayMetadata, path: &str) -> Result<Option<Cf>> {
        let dtype = meta.data_type;
        let attrs = &meta.attributes;
        let cf_missing = attrs.contains_key("_FillValue") || attrs.contains_key("missing_value");
        // Strings with a fill value of their own keep the Zarr rule (where
        // only this package's marker, `NA_TEXT`, reads as NA) unless CF
        // attributes say what is missing; the empty one that zarr-python
        // and xarray write is text. Complex numbers
        // likewise keep a fill value other than 0.
        let own_fill = match dtype {
            DataType::String => !meta.fill_value.bytes.is_empty() && !cf_missing,
            DataType::Complex64 | DataType::Complex128 => {
                meta.fill_value.bytes.iter().any(|&b| b != 0)
            }
            // Struct records: each field has its own fill value.
            DataType::Record(_) => true,
            _ => false,
        };
        if !is_cf_variable(meta, path) || own_fill {
            return Ok(None);
        }
        let mut cf = Cf::as_stored(attrs.get("units").and_then(Value::as_str).map(String::from));
        if dtype == DataType::String {
            cf.missing_text = missing_strings(meta);
            return Ok(Some(cf));
        }
        // CF leaves complex numbers and booleans as they are (the Zarr
        // fill value marks nothing in them either).
        if matches!(
            dtype,
            DataType::Complex64 | DataType::Complex128 | DataType::Bool
        ) {
            return Ok(Some(cf));
        }
        if let Some(v) = attrs.get("_FillValue") {
            cf.missing.extend(numbers(v, dtype, "_FillValue")?);
        }
        if meta.zarr_format == 2 && meta.fill_marks_na {
            if let Some(f) = meta.fill_value.as_f64(dtype) {
                cf.missing.push(f);
            }
        }
        if let Some(v) = attrs.get("missing_value") {
            cf.missing.extend(numbers(v, dtype, "missing_value")?);
        }
        // Without CF missing values, a v3 fill value other than
        // zarr-python's default (0) still marks NA: that is how an array
        // this package wrote keeps its NA once it has dimension names.
        if meta.zarr_format == 3 && !cf_missing && meta.fill_value.bytes.iter().any(|&b| b != 0) {
            if let Some(f) = meta.fill_value.as_f64(dtype) {
                cf.missing.push(f);
            }
        }
        let scale = scalar(attrs, "scale_factor", DataType::Float64)?;
        let offset = scalar(attrs, "add_offset", DataType::Float64)?;
        if scale.is_some() || offset.is_some() {
            cf.scale = scale.unwrap_or(1.0);
            cf.offset = offset.unwrap_or(0.0);
            cf.transforms = true;
        }
        let integer = !matches!(
            dtype,
            DataType::Float16
                | DataType::Float32
                | DataType::Float64
                | DataType::Complex64
                | DataType::Complex128
                | DataType::Bool
        );
        let xr_dtype = attrs.get("dtype").and_then(Value::as_str).unwrap_or("");
        let calendar = attrs
            .get("calendar")
            .and_then(Value::as_str)
            .map(|c| c.to_ascii_lowercase());
        let time = cf.units.as_deref().and_then(parse_time_units);
        if let Some(steps) = numpy_time(meta) {
            cf.numpy_time(steps);
        } else if let Some((unit, secs, origin)) = time {
            match calendar.as_deref() {
                None => {}
                Some(c) if STANDARD_CALENDARS.contains(&c) => {}
                Some(c) => {
                    cf.note = Some(format!(
                        "calendar '{c}' is not decoded: the values are the stored numbers of '{}'",
                        cf.units.as_deref().unwrap_or("")
                    ));
                    return Ok(Some(cf));
                }
            }
            cf.kind = CfKind::Time;
            cf.scale *= secs;
            cf.offset = cf.offset * secs + origin;
            (cf.transforms, cf.nat, cf.time_unit) = (true, dtype == DataType::Int64, Some(unit));
        } else if xr_dtype.starts_with("timedelta64") {
            if let Some(secs) = cf.units.as_deref().and_then(unit_seconds) {
                cf.kind = CfKind::Timedelta;
                cf.scale *= secs;
                cf.offset *= secs;
                cf.transforms = true;
                cf.nat = dtype == DataType::Int64;
                cf.time_unit = cf.units.clone();
            }
        } else if integer && (xr_dtype == "bool" || false_true_flags(attrs)) {
            cf.kind = CfKind::Bool;
        }
        Ok(Some(cf))
    }

    /// Decode the int64 counts of a numpy.datetime64/timedelta64 type
    /// (`time_steps`) as seconds: since 1970 for times; NaT is missing.
    fn numpy_time(&mut self, (kind, unit, step): (CfKind, String, Option<f64>)) {
        match step {
            Some(s) => {
                (self.kind, self.scale, self.offset) = (kind, s, 0.0);
                (self.transforms, self.nat, self.time_unit) = (true, true, Some(unit));
            }
            None => {
                self.note = Some(format!(
                    "numpy.datetime64 unit '{unit}' has no fixed length: the values are the stored numbers"
                ))
            }
        }
    }

    /// The decoding that reads the stored numbers as they are, none of
    /// them missing; what the attributes add is set on it.
    fn as_stored(units: Option<String>) -> Cf {
        Cf {
            kind: CfKind::Number,
            missing: Vec::new(),
            missing_text: Vec::new(),
            nat: false,
            scale: 1.0,
            offset: 0.0,
            transforms: false,
            units,
            time_unit: None,
            note: None,
        }
    }

    /// How a datetime64/timedelta64 field of a struct array decodes: as
    /// an array of its type does, `fill` (the field's fill value, None
    /// where the array has no missing-value marker) marking NA as a v3
    /// array's fill value does (unless it is 0, zarr-python's default),
    /// and NaT always.
    pub fn time_field(t: &TimeType, fill: Option<i64>) -> Cf {
        let mut cf = Cf::as_stored(None);
        // (the fill value first: NA is written as it, as in an array)
        if let Some(f) = fill.filter(|&f| f != 0 && f != i64::MIN) {
            cf.missing.push(f as f64);
        }
        cf.missing.push(i64::MIN as f64);
        cf.numpy_time(time_steps(t));
        cf
    }

    /// Whether decoding changes any element (else the stored values are
    /// read as they are, with no NA at all).
    pub fn active(&self) -> bool {
        self.transforms
            || self.nat
            || !self.missing.is_empty()
            || !self.missing_text.is_empty()
            || self.kind == CfKind::Bool
    }

    /// Whether decoding gives what the Zarr rule gives (the fill value,
    /// and it alone, is missing; values unchanged), as in the arrays
    /// `as_zarr()` writes: then the engine's plain paths read and write them.
    pub fn is_zarr_rule(&self, meta: &ArrayMetadata) -> bool {
        if meta.data_type == DataType::String {
            return meta.fill_marks_na
                && matches!(self.missing_text.as_slice(), [m] if m.as_bytes() == meta.fill_value.bytes);
        }
        let same = |f: f64| match self.missing.as_slice() {
            [m] => *m == f || (m.is_nan() && f.is_nan()),
            _ => false,
        };
        self.kind == CfKind::Number
            && !self.transforms
            && !self.nat
            && meta.fill_marks_na
            && meta.fill_value.as_f64(meta.data_type).is_some_and(same)
    }

    /// The R type decoded values of `dtype` read into.
    pub fn r_type(&self, dtype: DataType, bit64: bool) -> RType {
        match self.kind {
            CfKind::Bool => RType::Logical,
            _ if self.transforms => RType::Double,
            _ => dtype.r_type(bit64),
        }
    }
}

/// An element of an R vector as CF encodes and decodes it: its NA, the
/// one test for it (NaN too for doubles, as R's `is.na()`), and its value
/// as a double. Shared by every arm of the scatter and the gather.
pub(crate) trait RValue: Copy + 'static {
    const NA: Self;
    fn is_na(self) -> bool;
    fn value(self) -> f64;
}

impl RValue for i32 {
    const NA: i32 = crate::convert::NA_INTEGER;
    #[inline(always)]
    fn is_na(self) -> bool {
        self == Self::NA
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self as f64
    }
}

impl RValue for f64 {
    const NA: f64 = f64::from_bits(crate::convert::NA_REAL_BITS);
    #[inline(always)]
    fn is_na(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
}

impl RValue for i64 {
    const NA: i64 = crate::convert::NA_INTEGER64;
    #[inline(always)]
    fn is_na(self) -> bool {
        self == Self::NA
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self as f64
    }
}

#[cfg(test)]
mod tests;
