//! CF decoding of reads: each stored element as R holds it decoded, run
//! by the engine's scatter in place of the plain materializer.

use super::{Cf, RValue};
use crate::convert::{strided_copy, ElementRead, RBufPtr, Span};
use crate::dtype::{DataType, RType};
use crate::fill::f16_to_f64;

/// Copies stored elements of type `T` into R's vector of type `R`: R's NA
/// where `missing(v)`, `convert(v)` elsewhere.
///
/// # Safety
/// As `convert::strided_copy`.
unsafe fn scatter<T: Copy + 'static, R: RValue>(
    src: *const u8,
    src_strides: &[usize],
    dst: &RBufPtr,
    spans: &[Vec<Span>],
    missing: impl Fn(T) -> bool,
    convert: impl Fn(T) -> R,
) {
    strided_copy(
        src as *const T,
        src_strides,
        dst.ptr as *mut R,
        &dst.strides,
        spans,
        &move |v: T| if missing(v) { R::NA } else { convert(v) },
    )
}

impl Cf {
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
}

impl ElementRead for Cf {
    /// Decoded chunk elements of `dtype` at `src` -> the R buffer `dst` (of
    /// `r_type`), over `spans`: the CF materializer, run by the engine's
    /// scatter in place of the plain one, so decoding costs no pass of its
    /// own.
    ///
    /// # Safety
    /// As `convert::strided_copy`.
    unsafe fn read_into(
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
        // Each arm says which stored values are missing and how the others
        // convert; `scatter` writes the R type's NA for the first.
        let (src, ss) = (src, src_strides);
        macro_rules! to_double {
            ($t:ty) => {
                scatter(
                    src,
                    ss,
                    dst,
                    spans,
                    move |v: $t| missing(v as f64),
                    move |v: $t| v as f64 * scale + offset,
                )
            };
        }
        macro_rules! to_integer {
            ($t:ty, $r:ty) => {
                scatter(
                    src,
                    ss,
                    dst,
                    spans,
                    move |v: $t| missing(v as f64),
                    |v: $t| v as $r,
                )
            };
        }
        macro_rules! to_logical {
            ($t:ty) => {
                scatter(
                    src,
                    ss,
                    dst,
                    spans,
                    move |v: $t| missing(v as f64),
                    |v: $t| (v != 0) as i32,
                )
            };
        }
        use DataType::*;
        match (dst.rtype, dtype) {
            (RType::Double, Int64) => scatter(
                src,
                ss,
                dst,
                spans,
                move |v: i64| (nat && v == i64::MIN) || missing(v as f64),
                move |v: i64| v as f64 * scale + offset,
            ),
            (RType::Double, Int8) => to_double!(i8),
            (RType::Double, Int16) => to_double!(i16),
            (RType::Double, Int32) => to_double!(i32),
            (RType::Double, UInt8) => to_double!(u8),
            (RType::Double, UInt16) => to_double!(u16),
            (RType::Double, UInt32) => to_double!(u32),
            (RType::Double, UInt64) => to_double!(u64),
            (RType::Double, Float32) => to_double!(f32),
            (RType::Double, Float64) => to_double!(f64),
            (RType::Double, Float16) => scatter(
                src,
                ss,
                dst,
                spans,
                move |v: u16| missing(f16_to_f64(v)),
                move |v: u16| f16_to_f64(v) * scale + offset,
            ),
            (RType::Integer, Int8) => to_integer!(i8, i32),
            (RType::Integer, Int16) => to_integer!(i16, i32),
            (RType::Integer, Int32) => to_integer!(i32, i32),
            (RType::Integer, UInt8) => to_integer!(u8, i32),
            (RType::Integer, UInt16) => to_integer!(u16, i32),
            (RType::Integer64, Int64) => to_integer!(i64, i64),
            (RType::Integer64, UInt32) => to_integer!(u32, i64),
            (RType::Integer64, UInt64) => scatter(
                src,
                ss,
                dst,
                spans,
                move |v: u64| missing(v as f64) || v > i64::MAX as u64,
                |v: u64| v as i64,
            ),
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
