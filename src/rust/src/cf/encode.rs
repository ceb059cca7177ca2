//! CF encoding of writes through a decoded array, the inverse of the
//! decoding: R's NA (and NaN, which R's `is.na()` counts as missing)
//! becomes the first missing value, values are packed with the inverse of
//! `scale_factor`/`add_offset` (times: seconds since 1970 -> the stored
//! units) and rounded half to even into integer types, as numpy's
//! `around` that xarray uses. The engine's gather applies it while it
//! copies R's vector into a chunk, so encoding costs no pass of its own;
//! `check_writable` refuses beforehand what the encoding cannot hold.

use super::{Cf, CfKind, RValue};
use crate::convert::{check_writable, strided_copy, ElementWrite, RBuf, RBufPtr, Span};
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

/// The bounds of values a type holds, for the range check of packed writes:
/// (lowest, highest) held, as doubles.
fn held_bounds(dtype: DataType) -> (f64, f64) {
    match dtype {
        DataType::Float64 => (f64::NEG_INFINITY, f64::INFINITY),
        DataType::Float32 => (-(f32::MAX as f64), f32::MAX as f64),
        DataType::Float16 => (-65504.0, 65504.0),
        _ => {
            let (lo, hi) = int_bounds(dtype);
            (lo, hi - 1.0)
        }
    }
}

#[cfg(test)]
pub(super) fn tests_held_bounds(dtype: DataType) -> (f64, f64) {
    held_bounds(dtype)
}

/// Copies R's values of type `S` into chunk elements of type `T`, with
/// `na` where R has NA (the NA test of `S`, shared by every arm) and
/// `store(v)` elsewhere.
///
/// # Safety
/// As `convert::strided_copy`.
unsafe fn gather<S: RValue, T: Copy + 'static>(
    src: &RBufPtr,
    dst: *mut u8,
    dst_strides: &[usize],
    spans: &[Vec<Span>],
    na: T,
    store: impl Fn(S) -> T,
) {
    strided_copy(
        src.ptr as *const S,
        &src.strides,
        dst as *mut T,
        dst_strides,
        spans,
        &move |v: S| if v.is_na() { na } else { store(v) },
    )
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

    #[cfg(test)]
    pub(super) fn tests_exact(&self, dtype: DataType, x: f64) -> bool {
        holds(dtype, self.pack(x, is_integer(dtype)))
    }

    /// The open interval of R values whose packed form `dtype` surely
    /// holds, worked out once per write, so that the check compares each
    /// value instead of packing it (which the gather does). Values outside
    /// are packed and checked exactly. The bounds keep a margin of one
    /// stored step plus eight times the rounding error of packing, so
    /// that no value inside packs out of range; an unusable scale or
    /// offset gives an empty interval.
    fn safe_range(&self, dtype: DataType) -> (f64, f64) {
        let (lo, hi) = held_bounds(dtype);
        let (scale, offset) = (self.scale, self.offset);
        if !(scale.is_finite() && scale != 0.0 && offset.is_finite()) {
            return (f64::INFINITY, f64::NEG_INFINITY);
        }
        if dtype == DataType::Float64 {
            return (lo, hi);
        }
        let error = 8.0 * f64::EPSILON * (offset.abs() / scale.abs() + hi.abs().max(lo.abs()));
        let (margin, width) = if is_integer(dtype) {
            (1.0 + error, hi - lo)
        } else {
            // halfway to the largest finite value: no rounding reaches it
            (hi * 0.5, hi - lo)
        };
        if 2.0 * margin >= width {
            return (f64::INFINITY, f64::NEG_INFINITY);
        }
        let a = (lo + margin) * scale + offset;
        let b = (hi - margin) * scale + offset;
        (a.min(b), a.max(b))
    }

    /// The first R value of `xs` this encoding cannot store in `dtype`:
    /// `Some(None)` for an NA without a missing value to take it,
    /// `Some(Some(x))` for a value whose packed form `dtype` cannot hold.
    fn first_unwritable<S: RValue>(&self, xs: &[S], dtype: DataType) -> Option<Option<f64>> {
        let has_marker = self.na_stored(dtype).is_some();
        let packs = self.packs();
        let integer = is_integer(dtype);
        let (lo, hi) = self.safe_range(dtype);
        for &v in xs {
            if v.is_na() {
                if !has_marker {
                    return Some(None);
                }
            } else if packs {
                let x = v.value();
                let surely_held = x > lo && x < hi;
                if !(surely_held || holds(dtype, self.pack(x, integer))) {
                    return Some(Some(x));
                }
            }
        }
        None
    }

    /// Refuse, before anything is written, R data that this encoding
    /// cannot store in `dtype`: NA where there is no missing value,
    /// values whose packed form the type cannot hold, and what the type
    /// refuses anyway (complex data, fractions of an unpacked integer).
    pub fn check_writable(&self, data: &RBuf, dtype: DataType, what: &str) -> Result<()> {
        if matches!(data, RBuf::Complex(_)) || !self.packs() {
            check_writable(data, dtype, what)?;
        }
        if !self.packs() && self.na_stored(dtype).is_some() {
            return Ok(());
        }
        let bad = match data {
            RBuf::Logical(x) | RBuf::Integer(x) => self.first_unwritable(x, dtype),
            RBuf::Double(x) => self.first_unwritable(x, dtype),
            RBuf::Integer64(x) => self.first_unwritable(x, dtype),
            RBuf::Complex(_) | RBuf::Raw { .. } => None,
        };
        match bad {
            None => Ok(()),
            Some(None) => Err(ZarrError::Type(format!(
                "{what}: NA cannot be written: the CF variable has no _FillValue or missing_value that {} holds",
                dtype.name()
            ))),
            Some(Some(x)) => Err(ZarrError::Type(format!(
                "{what}: value {x} encodes to {}, which {} cannot hold",
                self.pack(x, is_integer(dtype)),
                dtype.name()
            ))),
        }
    }
}

impl ElementWrite for Cf {
    fn check(&self, data: &RBuf, dtype: DataType, what: &str) -> Result<()> {
        self.check_writable(data, dtype, what)
    }

    /// R buffer -> chunk elements of `dtype` (native endian), encoded:
    /// the CF gather, run by the engine's write in place of the plain
    /// one. Values must have passed `check_writable` first.
    ///
    /// # Safety
    /// As `convert::strided_copy`: `src` is an R buffer covering every
    /// element `spans` reaches, `dst` a chunk buffer of `dtype` elements
    /// with `dst_strides`.
    unsafe fn write_from(
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
                let g = (src, dst, dst_strides, spans, m);
                match src.rtype {
                    RType::Logical | RType::Integer if packs => {
                        gather(g.0, g.1, g.2, g.3, g.4, move |v: i32| pack(v as f64))
                    }
                    RType::Logical | RType::Integer => {
                        gather(g.0, g.1, g.2, g.3, g.4, move |v: i32| from(v as f64))
                    }
                    RType::Double if packs => gather(g.0, g.1, g.2, g.3, g.4, pack),
                    RType::Double => gather(g.0, g.1, g.2, g.3, g.4, from),
                    RType::Integer64 if packs => {
                        gather(g.0, g.1, g.2, g.3, g.4, move |v: i64| pack(v as f64))
                    }
                    RType::Integer64 => gather(g.0, g.1, g.2, g.3, g.4, from_i64),
                    r => unreachable!("{r:?} data is refused before a CF write"),
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
