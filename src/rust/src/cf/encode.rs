//! CF encoding of writes through a decoded array, the inverse of the
//! decoding: R's NA (and NaN, which R's `is.na()` counts as missing)
//! becomes the first missing value, values are packed with the inverse of
//! `scale_factor`/`add_offset` (times: seconds since 1970 -> the stored
//! units) and rounded half to even into integer types, as numpy's
//! `around` that xarray uses. The engine's gather applies it while it
//! copies R's vector into a chunk, so encoding costs no pass of its own;
//! `check_writable` refuses beforehand what the encoding cannot hold.

use super::{Cf, CfKind};
use crate::convert::{check_writable, strided_copy, RBuf, RBufPtr, Span};
use crate::convert::{NA_INTEGER, NA_INTEGER64};
use crate::dtype::{DataType, RType};
use crate::error::{Result, ZarrError};
use crate::fill::{f16_to_f64, f64_to_f16};

fn is_integer(dtype: DataType) -> bool {
    !matches!(
        dtype,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

/// The values an integer type holds, as doubles (the 64-bit bounds
/// round up to 2^63 and 2^64, which are not held: compared with `<`).
fn int_bounds(dtype: DataType) -> (f64, f64) {
    match dtype {
        DataType::Int8 => (i8::MIN as f64, i8::MAX as f64 + 1.0),
        DataType::Int16 => (i16::MIN as f64, i16::MAX as f64 + 1.0),
        DataType::Int32 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        DataType::Int64 => (i64::MIN as f64, 9223372036854775808.0),
        DataType::UInt8 => (0.0, u8::MAX as f64 + 1.0),
        DataType::UInt16 => (0.0, u16::MAX as f64 + 1.0),
        DataType::UInt32 => (0.0, u32::MAX as f64 + 1.0),
        DataType::UInt64 => (0.0, 18446744073709551616.0),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

/// Whether `dtype` holds the (already rounded) double `y` without it
/// becoming infinite or wrapping.
fn holds(dtype: DataType, y: f64) -> bool {
    match dtype {
        DataType::Float64 => true,
        DataType::Float32 => !y.is_finite() || (y as f32).is_finite(),
        DataType::Float16 => !y.is_finite() || f16_to_f64(f64_to_f16(y)).is_finite(),
        _ => {
            let (lo, hi) = int_bounds(dtype);
            y >= lo && y < hi
        }
    }
}

impl Cf {
    /// Whether a write packs values (scale and offset, or a time unit);
    /// otherwise only NA is replaced. xarray's booleans are never packed.
    fn packs(&self) -> bool {
        self.transforms && self.kind != CfKind::Bool
    }

    /// The stored value that R's NA becomes in an array of `dtype`: the
    /// first missing value the type holds, else NaT where it marks NA.
    fn na_stored(&self, dtype: DataType) -> Option<f64> {
        let held = |m: &f64| !(is_integer(dtype) && m.is_nan()) && holds(dtype, *m);
        self.missing
            .iter()
            .copied()
            .find(held)
            .or_else(|| (self.nat && dtype == DataType::Int64).then_some(i64::MIN as f64))
    }

    /// A value as stored: packed, and rounded for an integer type (as
    /// `write_from` packs it).
    fn pack(&self, x: f64, integer: bool) -> f64 {
        let y = (x - self.offset) / self.scale;
        if integer {
            y.round_ties_even()
        } else {
            y
        }
    }

    /// Refuse, before anything is written, R data that this encoding
    /// cannot store in `dtype`: NA where there is no missing value,
    /// values whose packed form the type cannot hold, and what the type
    /// refuses anyway (complex data, fractions of an unpacked integer).
    pub fn check_writable(&self, data: &RBuf, dtype: DataType, what: &str) -> Result<()> {
        if matches!(data, RBuf::Complex(_)) || !self.packs() {
            check_writable(data, dtype, what)?;
        }
        let values: Box<dyn Iterator<Item = Option<f64>> + '_> = match data {
            RBuf::Logical(x) | RBuf::Integer(x) => {
                Box::new(x.iter().map(|&v| (v != NA_INTEGER).then_some(v as f64)))
            }
            RBuf::Double(x) => Box::new(x.iter().map(|&v| (!v.is_nan()).then_some(v))),
            RBuf::Integer64(x) => {
                Box::new(x.iter().map(|&v| (v != NA_INTEGER64).then_some(v as f64)))
            }
            RBuf::Complex(_) => return Ok(()),
        };
        let (packs, integer) = (self.packs(), is_integer(dtype));
        let has_marker = self.na_stored(dtype).is_some();
        if !packs && has_marker {
            return Ok(());
        }
        for v in values {
            match v {
                None if !has_marker => {
                    return Err(ZarrError::Type(format!(
                        "{what}: NA cannot be written: the CF variable has no _FillValue or missing_value that {} holds",
                        dtype.name()
                    )))
                }
                Some(x) if packs => {
                    let y = self.pack(x, integer);
                    if !holds(dtype, y) {
                        return Err(ZarrError::Type(format!(
                            "{what}: value {x} encodes to {y}, which {} cannot hold",
                            dtype.name()
                        )));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// R buffer -> chunk elements of `dtype` (native endian), encoded:
    /// the CF gather, run by the engine's write in place of the plain
    /// one. Values must have passed `check_writable` first.
    ///
    /// # Safety
    /// As `convert::strided_copy`: `src` is an R buffer covering every
    /// element `spans` reaches, `dst` a chunk buffer of `dtype` elements
    /// with `dst_strides`.
    pub unsafe fn write_from(
        &self,
        dtype: DataType,
        src: &RBufPtr,
        dst: *mut u8,
        dst_strides: &[usize],
        spans: &[Vec<Span>],
    ) {
        // (checked: NA occurs only where there is a missing value)
        let marker = self.na_stored(dtype).unwrap_or(0.0);
        let packs = self.packs();
        let ss = &src.strides;
        macro_rules! run {
            ($s:ty, $t:ty, $f:expr) => {
                strided_copy(
                    src.ptr as *const $s,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &$f,
                )
            };
        }
        // `$from` stores a double, `$from_i64` an integer64 exactly; the
        // closures own copies of what they use, so the NA test becomes a
        // select and the loops vectorise.
        macro_rules! to {
            ($t:ty, $integer:expr, $from:expr, $from_i64:expr) => {{
                let (from, from_i64) = ($from, $from_i64);
                let m: $t = from(marker);
                let (offset, scale) = (self.offset, self.scale);
                let pack = move |x: f64| {
                    let y = (x - offset) / scale;
                    from(if $integer { y.round_ties_even() } else { y })
                };
                match (src.rtype, packs) {
                    (RType::Logical | RType::Integer, true) => {
                        run!(i32, $t, move |v: i32| if v == NA_INTEGER {
                            m
                        } else {
                            pack(v as f64)
                        })
                    }
                    (RType::Double, true) => {
                        run!(f64, $t, move |v: f64| if v.is_nan() { m } else { pack(v) })
                    }
                    (RType::Integer64, true) => {
                        run!(i64, $t, move |v: i64| if v == NA_INTEGER64 {
                            m
                        } else {
                            pack(v as f64)
                        })
                    }
                    (RType::Logical | RType::Integer, false) => {
                        run!(i32, $t, move |v: i32| if v == NA_INTEGER {
                            m
                        } else {
                            from(v as f64)
                        })
                    }
                    (RType::Double, false) => {
                        run!(f64, $t, move |v: f64| if v.is_nan() { m } else { from(v) })
                    }
                    (RType::Integer64, false) => {
                        run!(i64, $t, move |v: i64| if v == NA_INTEGER64 {
                            m
                        } else {
                            from_i64(v)
                        })
                    }
                    (r, _) => unreachable!("{r:?} data is refused before a CF write"),
                }
            }};
        }
        macro_rules! int {
            ($t:ty) => {
                to!($t, true, |x: f64| x as $t, |v: i64| v as $t)
            };
        }
        match dtype {
            DataType::Int8 => int!(i8),
            DataType::Int16 => int!(i16),
            DataType::Int32 => int!(i32),
            DataType::Int64 => int!(i64),
            DataType::UInt8 => int!(u8),
            DataType::UInt16 => int!(u16),
            DataType::UInt32 => int!(u32),
            DataType::UInt64 => int!(u64),
            DataType::Float16 => to!(u16, false, f64_to_f16, |v: i64| f64_to_f16(v as f64)),
            DataType::Float32 => to!(f32, false, |x: f64| x as f32, |v: i64| v as f32),
            DataType::Float64 => to!(f64, false, |x: f64| x, |v: i64| v as f64),
            d => unreachable!("CF encoding of {}", d.name()),
        }
    }
}
