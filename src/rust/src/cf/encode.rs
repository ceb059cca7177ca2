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
            RBuf::Logical(x) | RBuf::Integer(x) => Box::new(
                x.iter()
                    .map(|&v| (v != NA_INTEGER).then_some(v as f64)),
            ),
            RBuf::Double(x) => Box::new(x.iter().map(|&v| (!v.is_nan()).then_some(v))),
            RBuf::Integer64(x) => Box::new(
                x.iter()
                    .map(|&v| (v != NA_INTEGER64).then_some(v as f64)),
            ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::na_real;

    fn cf(missing: Vec<f64>, scale: f64, offset: f64) -> Cf {
        Cf {
            kind: CfKind::Number,
            missing,
            nat: false,
            scale,
            offset,
            transforms: scale != 1.0 || offset != 0.0,
            units: None,
            time_unit: None,
            note: None,
        }
    }

    /// R doubles -> stored elements of `T` through `cf`, checked first.
    fn encode<T: Copy + Default>(cf: &Cf, dtype: DataType, x: &[f64]) -> Result<Vec<T>> {
        let data = RBuf::Double(x);
        cf.check_writable(&data, dtype, "array '/v'")?;
        let mut out = vec![T::default(); x.len()];
        let src = RBufPtr::from_ref(&data, &[x.len()]);
        let spans = [vec![Span {
            src: 0,
            dst: 0,
            len: x.len(),
        }]];
        // SAFETY: one run of x.len() elements in both buffers.
        unsafe { cf.write_from(dtype, &src, out.as_mut_ptr() as *mut u8, &[1], &spans) };
        Ok(out)
    }

    #[test]
    fn packed_writes_round_half_to_even_and_na_becomes_the_fill_value() {
        let c = cf(vec![-32767.0], 0.01, 273.15);
        let out: Vec<i16> = encode(&c, DataType::Int16, &[273.15, 280.0, na_real(), f64::NAN]).unwrap();
        assert_eq!(out, vec![0, 685, -32767, -32767]);
        let half = cf(vec![-1.0], 2.0, 0.0);
        let out: Vec<i8> = encode(&half, DataType::Int8, &[1.0, 3.0, 5.0, -1.0]).unwrap();
        assert_eq!(out, vec![0, 2, 2, -0]);
    }

    #[test]
    fn values_the_encoding_cannot_hold_are_refused() {
        let c = cf(vec![-32767.0], 0.01, 273.15);
        let e = encode::<i16>(&c, DataType::Int16, &[1e6]).unwrap_err();
        assert!(matches!(e, ZarrError::Type(_)) && e.to_string().contains("int16"), "{e}");
        let none = cf(vec![], 1.0, 0.0);
        let e = encode::<i32>(&none, DataType::Int32, &[1.0, na_real()]).unwrap_err();
        assert!(e.to_string().contains("no _FillValue"), "{e}");
        // a NaN missing value is no marker for integers
        let nan = cf(vec![f64::NAN], 0.5, 0.0);
        assert!(encode::<i16>(&nan, DataType::Int16, &[na_real()]).is_err());
        let e = encode::<i32>(&none, DataType::Int32, &[1.5]).unwrap_err();
        assert!(e.to_string().contains("1.5"), "{e}");
    }

    #[test]
    fn unpacked_writes_replace_na_and_nan_and_keep_values_exact() {
        let c = cf(vec![1e20], 1.0, 0.0);
        let out: Vec<f32> = encode(&c, DataType::Float32, &[1.5, na_real(), f64::NAN]).unwrap();
        assert_eq!(out, vec![1.5, 1e20, 1e20]);
        let big = cf(vec![-1.0], 1.0, 0.0);
        let data = [i64::MAX - 1, NA_INTEGER64];
        let buf = RBuf::Integer64(&data);
        big.check_writable(&buf, DataType::Int64, "v").unwrap();
        let mut out = [0i64; 2];
        let src = RBufPtr::from_ref(&buf, &[2]);
        let spans = [vec![Span { src: 0, dst: 0, len: 2 }]];
        // SAFETY: two elements in both buffers.
        unsafe { big.write_from(DataType::Int64, &src, out.as_mut_ptr() as *mut u8, &[1], &spans) };
        assert_eq!(out, [i64::MAX - 1, -1]);
    }

    #[test]
    fn times_without_a_missing_value_write_nat() {
        let mut t = cf(vec![], 3600.0, 631152000.0);
        t.kind = CfKind::Time;
        t.nat = true;
        let out: Vec<i64> = encode(&t, DataType::Int64, &[631152000.0 + 7200.0, na_real()]).unwrap();
        assert_eq!(out, vec![2, i64::MIN]);
    }
}
