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
//! Values are then unpacked (`x * scale_factor + add_offset`, a double),
//! times ("hours since 1990-01-01", standard calendars) become seconds
//! since 1970 for POSIXct, xarray's timedeltas (`dtype: timedelta64[..]`)
//! seconds for difftime, and xarray's booleans (int8 with `dtype: bool`)
//! logicals. NaT (the smallest int64) of times and timedeltas is missing.
//! Other arrays keep the Zarr rule (elements equal to the fill value are
//! missing). The engine applies `Cf` to each element as it scatters a
//! chunk into R's vector, and its inverse as it gathers one for a write.

mod encode;

use crate::convert::{na_real, strided_copy, RBufPtr, Span, NA_INTEGER, NA_INTEGER64};
use crate::dtype::{DataType, RType};
use crate::error::{Result, ZarrError};
use crate::metadata::ArrayMetadata;
use serde_json::{Map, Value};

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

fn bad(name: &str, msg: String) -> ZarrError {
    ZarrError::Metadata(format!("CF attribute '{name}': {msg}"))
}

/// Seconds in one of CF's time units (UDUNITS spellings xarray accepts).
fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "days" | "day" | "d" => 86400.0,
        "hours" | "hour" | "hr" | "h" => 3600.0,
        "minutes" | "minute" | "min" => 60.0,
        "seconds" | "second" | "sec" | "s" => 1.0,
        "milliseconds" | "millisecond" | "msec" | "ms" => 1e-3,
        "microseconds" | "microsecond" | "usec" | "us" => 1e-6,
        "nanoseconds" | "nanosecond" | "nsec" | "ns" => 1e-9,
        _ => return None,
    })
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The reference date of "<unit> since <date>" in seconds since 1970:
/// "1990-01-01", "1990-1-1 6:00", "1990-01-01T00:00:00.5Z", with an
/// optional UTC offset ("+05:30", " -3") or "UTC".
fn parse_reference(text: &str) -> Option<f64> {
    let t = text.trim();
    let (date, rest) = match t.find([' ', 'T']) {
        Some(i) => (&t[..i], t[i + 1..].trim()),
        None => (t, ""),
    };
    let neg = date.starts_with('-');
    let mut parts = date.trim_start_matches('-').split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map_or(Some(1), |p| p.parse().ok())?;
    let d: i64 = parts.next().map_or(Some(1), |p| p.parse().ok())?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if neg { -y } else { y };
    let mut secs = days_from_civil(y, m, d) as f64 * 86400.0;
    let rest = rest.trim_end_matches('Z').trim();
    let rest = rest.strip_suffix("UTC").unwrap_or(rest).trim();
    if rest.is_empty() {
        return Some(secs);
    }
    // Time of day, then an optional offset from UTC.
    let split = rest[1..].find(['+', '-', ' ']).map(|i| i + 1);
    let (clock, zone) = match split {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let mut hms = clock.split(':');
    let h: f64 = hms.next()?.parse().ok()?;
    let mi: f64 = hms.next().map_or(Some(0.0), |p| p.parse().ok())?;
    let s: f64 = hms.next().map_or(Some(0.0), |p| p.parse().ok())?;
    secs += h * 3600.0 + mi * 60.0 + s;
    if !zone.is_empty() {
        let sign = if zone.starts_with('-') { -1.0 } else { 1.0 };
        let z = zone.trim_start_matches(['+', '-']);
        let (zh, zm) = match z.split_once(':') {
            Some((a, b)) => (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?),
            None if z.len() == 4 => (z[..2].parse().ok()?, z[2..].parse().ok()?),
            None => (z.parse().ok()?, 0.0),
        };
        secs -= sign * (zh * 3600.0 + zm * 60.0);
    }
    Some(secs)
}

/// "<unit> since <date>" -> (unit, seconds per unit, reference in
/// seconds since 1970); None when `units` is not of that form.
pub fn parse_time_units(units: &str) -> Option<(String, f64, f64)> {
    let (unit, date) = units.split_once(" since ")?;
    let unit = unit.trim();
    Some((
        unit.to_string(),
        unit_seconds(unit)?,
        parse_reference(date)?,
    ))
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

fn numbers(v: &Value, dtype: DataType, name: &str) -> Result<Vec<f64>> {
    match v {
        Value::Array(list) => list
            .iter()
            .map(|x| attribute_number(x, dtype, name))
            .collect(),
        Value::Null => Ok(Vec::new()),
        x => Ok(vec![attribute_number(x, dtype, name)?]),
    }
}

fn scalar(attrs: &Map<String, Value>, name: &str, dtype: DataType) -> Result<Option<f64>> {
    match attrs.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) if a.len() == 1 => attribute_number(&a[0], dtype, name).map(Some),
        Some(v) => attribute_number(v, dtype, name).map(Some),
    }
}

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
    let prefix = if name.is_empty() {
        "dim_".to_string()
    } else {
        format!("{name}_dim_")
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
    let kind = match dt.get("name")?.as_str()? {
        "numpy.datetime64" => CfKind::Time,
        "numpy.timedelta64" => CfKind::Timedelta,
        _ => return None,
    };
    let unit = dt.pointer("/configuration/unit")?.as_str()?.to_string();
    let factor = dt.pointer("/configuration/scale_factor")?.as_f64()?;
    let step = match unit.as_str() {
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
        // Years and months have no fixed length; "generic" no unit.
        _ => None,
    };
    Some((kind, unit, step.map(|s| s * factor)))
}

impl Cf {
    /// How to decode the array at `path`, or None when it is not a CF
    /// variable (or holds strings, which CF leaves alone).
    pub fn of(meta: &ArrayMetadata, path: &str) -> Result<Option<Cf>> {
        let dtype = meta.data_type;
        // Strings keep a fill value of their own as NA (this package's
        // U+2400); the empty one that zarr-python and xarray write is text.
        // Complex numbers likewise keep a fill value other than 0.
        let own_fill = match dtype {
            DataType::String => !meta.fill_value.bytes.is_empty(),
            DataType::Complex64 | DataType::Complex128 => {
                meta.fill_value.bytes.iter().any(|&b| b != 0)
            }
            _ => false,
        };
        if !is_cf_variable(meta, path) || own_fill {
            return Ok(None);
        }
        let attrs = &meta.attributes;
        let mut cf = Cf {
            kind: CfKind::Number,
            missing: Vec::new(),
            nat: false,
            scale: 1.0,
            offset: 0.0,
            transforms: false,
            units: attrs.get("units").and_then(Value::as_str).map(String::from),
            time_unit: None,
            note: None,
        };
        // CF leaves strings, complex numbers and booleans as they are (the
        // Zarr fill value marks nothing in them either).
        if matches!(
            dtype,
            DataType::String | DataType::Complex64 | DataType::Complex128 | DataType::Bool
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
        let cf_missing = attrs.contains_key("_FillValue") || attrs.contains_key("missing_value");
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
        if let Some((kind, unit, step)) = numpy_time(meta) {
            match step {
                Some(s) => {
                    (cf.kind, cf.scale, cf.offset) = (kind, s, 0.0);
                    (cf.transforms, cf.nat, cf.time_unit) = (true, true, Some(unit));
                }
                None => {
                    cf.note = Some(format!(
                        "numpy.datetime64 unit '{unit}' has no fixed length: the values are the stored numbers"
                    ))
                }
            }
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

    /// Whether decoding changes any element (else the stored values are
    /// read as they are, with no NA at all).
    pub fn active(&self) -> bool {
        self.transforms || self.nat || !self.missing.is_empty() || self.kind == CfKind::Bool
    }

    /// Whether decoding gives what the Zarr rule gives (the fill value,
    /// and it alone, is missing; values unchanged), as in the arrays
    /// `as_zarr()` writes: then the engine's plain paths read and write them.
    pub fn is_zarr_rule(&self, meta: &ArrayMetadata) -> bool {
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

    /// Whether a stored value (as a double) is missing.
    #[inline]
    pub fn is_missing(&self, x: f64) -> bool {
        self.missing
            .iter()
            .any(|&m| m == x || (m.is_nan() && x.is_nan()))
    }

    /// A stored value as R holds it decoded: the unpacked double (or
    /// seconds), R's NA where it is missing.
    #[inline]
    pub fn decode(&self, x: f64) -> f64 {
        if self.is_missing(x) {
            crate::convert::na_real()
        } else {
            x * self.scale + self.offset
        }
    }

    /// Decoded chunk elements of `dtype` at `src` -> the R buffer `dst` (of
    /// `r_type`), over `spans`: the CF materializer, run by the engine's
    /// scatter in place of the plain one, so decoding costs no pass of its
    /// own.
    ///
    /// # Safety
    /// As `convert::strided_copy`.
    pub unsafe fn read_into(
        &self,
        dtype: DataType,
        src: *const u8,
        src_strides: &[usize],
        dst: &RBufPtr,
        spans: &[Vec<Span>],
    ) {
        let (scale, offset, nat) = (self.scale, self.offset, self.nat);
        // One or two missing values are the common case: tested without a loop.
        let has = !self.missing.is_empty();
        let (m0, m1) = match self.missing.as_slice() {
            [] => (0.0, 0.0),
            [a] => (*a, *a),
            [a, b, ..] => (*a, *b),
        };
        let many = self.missing.len() > 2;
        let nan_missing = self.missing.iter().any(|m| m.is_nan());
        let missing = move |x: f64| {
            has && (x == m0
                || x == m1
                || (nan_missing && x.is_nan())
                || (many && self.missing.contains(&x)))
        };
        macro_rules! run {
            ($t:ty, $r:ty, $f:expr) => {
                strided_copy(
                    src as *const $t,
                    src_strides,
                    dst.ptr as *mut $r,
                    &dst.strides,
                    spans,
                    &$f,
                )
            };
        }
        macro_rules! to_double {
            ($t:ty) => {
                run!($t, f64, |v: $t| {
                    let x = v as f64;
                    if missing(x) {
                        na_real()
                    } else {
                        x * scale + offset
                    }
                })
            };
        }
        macro_rules! to_integer {
            ($t:ty) => {
                run!($t, i32, |v: $t| if missing(v as f64) {
                    NA_INTEGER
                } else {
                    v as i32
                })
            };
        }
        macro_rules! to_logical {
            ($t:ty) => {
                run!($t, i32, |v: $t| if missing(v as f64) {
                    NA_INTEGER
                } else {
                    (v != 0) as i32
                })
            };
        }
        use DataType::*;
        match (dst.rtype, dtype) {
            (RType::Double, Int64) => run!(i64, f64, |v: i64| {
                let x = v as f64;
                if (nat && v == i64::MIN) || missing(x) {
                    na_real()
                } else {
                    x * scale + offset
                }
            }),
            (RType::Double, Int8) => to_double!(i8),
            (RType::Double, Int16) => to_double!(i16),
            (RType::Double, Int32) => to_double!(i32),
            (RType::Double, UInt8) => to_double!(u8),
            (RType::Double, UInt16) => to_double!(u16),
            (RType::Double, UInt32) => to_double!(u32),
            (RType::Double, UInt64) => to_double!(u64),
            (RType::Double, Float32) => to_double!(f32),
            (RType::Double, Float64) => to_double!(f64),
            (RType::Double, Float16) => run!(u16, f64, |v: u16| {
                let x = crate::fill::f16_to_f64(v);
                if missing(x) {
                    na_real()
                } else {
                    x * scale + offset
                }
            }),
            (RType::Integer, Int8) => to_integer!(i8),
            (RType::Integer, Int16) => to_integer!(i16),
            (RType::Integer, Int32) => to_integer!(i32),
            (RType::Integer, UInt8) => to_integer!(u8),
            (RType::Integer, UInt16) => to_integer!(u16),
            (RType::Integer64, Int64) => run!(i64, i64, |v: i64| if missing(v as f64) {
                NA_INTEGER64
            } else {
                v
            }),
            (RType::Integer64, UInt32) => run!(u32, i64, |v: u32| if missing(v as f64) {
                NA_INTEGER64
            } else {
                v as i64
            }),
            (RType::Integer64, UInt64) => run!(u64, i64, |v: u64| if missing(v as f64)
                || v > i64::MAX as u64
            {
                NA_INTEGER64
            } else {
                v as i64
            }),
            (RType::Logical, Bool | UInt8) => to_logical!(u8),
            (RType::Logical, Int8) => to_logical!(i8),
            (RType::Logical, Int16) => to_logical!(i16),
            (RType::Logical, UInt16) => to_logical!(u16),
            (RType::Logical, Int32) => to_logical!(i32),
            (RType::Logical, UInt32) => to_logical!(u32),
            (RType::Logical, Int64) => to_logical!(i64),
            (RType::Logical, UInt64) => to_logical!(u64),
            (r, d) => unreachable!("CF decoding of {} into {r:?}", d.name()),
        }
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{v3, NodeMetadata};
    use serde_json::json;

    /// The CF decoding of an array named "v".
    fn of(a: &ArrayMetadata) -> Result<Option<Cf>> {
        Cf::of(a, "v")
    }

    fn array(data_type: &str, fill: Value, attrs: Value, dims: bool) -> ArrayMetadata {
        let mut doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": attrs
        });
        if dims {
            doc["dimension_names"] = json!(["x"]);
        }
        match v3::parse(doc.to_string().as_bytes()).unwrap() {
            NodeMetadata::Array(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn arrays_without_cf_attributes_or_dimension_names_keep_the_zarr_rule() {
        let a = array("int32", json!(0), json!({"units": "m", "note": 1}), false);
        assert_eq!(of(&a).unwrap(), None);
    }

    #[test]
    fn default_dimension_names_alone_keep_the_zarr_rule() {
        let mut a = array("int32", json!(0), json!({}), false);
        a.dimension_names = Some(vec![Some("v_dim_0".into())]);
        assert_eq!(of(&a).unwrap(), None);
        assert_eq!(Cf::of(&a, "g/v").unwrap(), None);
        // another array's defaults, or the root's, are names of their own
        assert!(Cf::of(&a, "w").unwrap().is_some());
        a.dimension_names = Some(vec![Some("dim_0".into())]);
        assert_eq!(Cf::of(&a, "").unwrap(), None);
        assert!(of(&a).unwrap().is_some());
    }

    #[test]
    fn a_zero_fill_value_of_v3_marks_nothing_in_a_cf_variable() {
        // xarray's int coordinate (depth, lon, count): no attributes, fill 0.
        let a = array("int32", json!(0), json!({}), true);
        let cf = of(&a).unwrap().unwrap();
        assert!(cf.missing.is_empty() && !cf.transforms);
        assert!(!cf.is_missing(0.0));
    }

    #[test]
    fn fill_value_attributes_in_xarray_forms_mark_missing_values() {
        // float32 1e20 as xarray writes it into v3 attributes: base64.
        let a = array(
            "float32",
            json!("NaN"),
            json!({"_FillValue": "AAAAgB2vFUQ="}),
            true,
        );
        let cf = of(&a).unwrap().unwrap();
        assert_eq!(cf.missing, vec![1e20f32 as f64]);
        assert!(
            cf.decode(1e20f32 as f64).is_nan()
                && crate::convert::is_na_real(cf.decode(1e20f32 as f64))
        );
        assert_eq!(cf.decode(0.0), 0.0);
        let a = array(
            "float64",
            json!(0),
            json!({"_FillValue": "NaN", "missing_value": [-999, -998]}),
            false,
        );
        let cf = of(&a).unwrap().unwrap();
        assert!(cf.is_missing(f64::NAN) && cf.is_missing(-998.0) && !cf.is_missing(0.0));
        let a = array("int16", json!(0), json!({"_FillValue": "%%"}), false);
        let e = of(&a).unwrap_err();
        assert!(e.to_string().contains("_FillValue"), "{e}");
    }

    #[test]
    fn packed_values_unpack_and_a_value_equal_to_add_offset_is_not_missing() {
        let attrs = json!({"scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767});
        let cf = of(&array("int16", json!(0), attrs, true))
            .unwrap()
            .unwrap();
        assert!(cf.transforms);
        assert_eq!(cf.decode(0.0), 273.15);
        assert_eq!(cf.decode(685.0), 685.0 * 0.01 + 273.15);
        assert!(crate::convert::is_na_real(cf.decode(-32767.0)));
    }

    #[test]
    fn times_since_a_date_become_seconds_since_1970() {
        let attrs =
            json!({"units": "hours since 1990-01-01 00:00:00", "calendar": "proleptic_gregorian"});
        let cf = of(&array("int64", json!(0), attrs, true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.kind, CfKind::Time);
        assert!(cf.nat);
        assert_eq!(cf.decode(0.0), 631152000.0);
        assert_eq!(cf.decode(6.0), 631152000.0 + 6.0 * 3600.0);
        for (text, secs) in [
            ("days since 1970-01-01", 0.0),
            ("days since 1970-1-2", 86400.0),
            ("seconds since 2000-01-01T12:00:00Z", 946728000.0),
            ("minutes since 1970-01-01 01:00:00+01:00", 0.0),
            ("days since 1969-12-31 00:00:00.5", -86399.5),
            ("days since 0001-01-01", -62135596800.0),
        ] {
            assert_eq!(parse_time_units(text).map(|t| t.2), Some(secs), "{text}");
        }
        assert_eq!(parse_time_units("meters"), None);
        assert_eq!(parse_time_units("fortnights since 1970-01-01"), None);
    }

    #[test]
    fn other_calendars_stay_numbers_with_a_note() {
        let attrs = json!({"units": "days since 2000-01-01", "calendar": "noleap"});
        let cf = of(&array("int32", json!(0), attrs, true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.kind, CfKind::Number);
        assert!(cf.note.as_deref().unwrap().contains("noleap"));
        assert_eq!(cf.decode(3.0), 3.0);
    }

    #[test]
    fn a_v3_fill_value_other_than_zero_marks_na_without_cf_missing_values() {
        let cf = of(&array("int16", json!(-32768), json!({}), true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.missing, vec![-32768.0]);
        let attrs = json!({"_FillValue": -1});
        let cf = of(&array("int16", json!(-32768), attrs, true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.missing, vec![-1.0]);
    }

    #[test]
    fn strings_keep_a_fill_value_of_their_own_as_na() {
        let a = array("string", json!("\u{2400}"), json!({}), true);
        assert_eq!(of(&a).unwrap(), None);
        let a = array("string", json!(""), json!({}), true);
        assert!(!of(&a).unwrap().unwrap().active());
    }

    #[test]
    fn xarray_timedeltas_and_booleans() {
        let attrs = json!({"units": "hours", "dtype": "timedelta64[ns]"});
        let cf = of(&array("int64", json!(0), attrs, true))
            .unwrap()
            .unwrap();
        assert_eq!((cf.kind, cf.decode(2.0)), (CfKind::Timedelta, 7200.0));
        let cf = of(&array("int8", json!(0), json!({"dtype": "bool"}), true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.kind, CfKind::Bool);
    }

    #[test]
    fn false_true_flags_read_as_logical_and_int8_missing_values_stay_signed() {
        let attrs =
            json!({"flag_values": [0, 1], "flag_meanings": "false true", "_FillValue": -128});
        let cf = of(&array("int8", json!(-128), attrs, true))
            .unwrap()
            .unwrap();
        assert_eq!((cf.kind, cf.missing.clone()), (CfKind::Bool, vec![-128.0]));
        let other = json!({"flag_values": [0, 1], "flag_meanings": "low high"});
        let cf = of(&array("int8", json!(-128), other, true))
            .unwrap()
            .unwrap();
        assert_eq!(cf.kind, CfKind::Number);
    }

    #[test]
    fn a_fill_value_attribute_equal_to_the_zarr_fill_is_the_zarr_rule() {
        // as as_zarr() writes them: the engine then takes its plain paths
        let a = array(
            "int32",
            json!(-2147483648i64),
            json!({"_FillValue": -2147483648i64}),
            true,
        );
        assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
        let a = array(
            "float64",
            json!("NaN"),
            json!({"_FillValue": "AAAAAAAA+H8="}),
            true,
        );
        assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
        let a = array(
            "int64",
            json!(-9223372036854775808i64),
            json!({"_FillValue": "-9223372036854775808"}),
            true,
        );
        assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
        let a = array(
            "int32",
            json!(-2147483648i64),
            json!({"_FillValue": -1}),
            true,
        );
        assert!(!of(&a).unwrap().unwrap().is_zarr_rule(&a));
        let a = array(
            "int16",
            json!(-1),
            json!({"_FillValue": -1, "scale_factor": 2}),
            true,
        );
        assert!(!of(&a).unwrap().unwrap().is_zarr_rule(&a));
    }

    #[test]
    fn numpy_datetime64_arrays_are_times() {
        let doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [2],
            "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "NaT",
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
        });
        let NodeMetadata::Array(a) = v3::parse(doc.to_string().as_bytes()).unwrap() else {
            unreachable!()
        };
        let cf = of(&a).unwrap().unwrap();
        assert_eq!((cf.kind, cf.nat), (CfKind::Time, true));
        assert_eq!(cf.decode(100.0), 1.0);
    }
}
