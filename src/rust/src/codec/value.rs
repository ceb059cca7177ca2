//! Element values for the array -> array codecs that compute on them
//! (`scale_offset`, `cast_value`): an element of an integer or float data
//! type read exactly (every integer fits an i128, every float an f64), and
//! the rounding of a value to a float or integer format in one of the
//! directions the `cast_value` specification names.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::{f16_to_f64, f64_to_f16, FillValue};
use serde_json::Value;

/// One element's exact value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// Numeric equality, with NaN equal to NaN (scalar maps match NaN).
    pub fn same(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Num::Int(a), Num::Float(b)) | (Num::Float(b), Num::Int(a)) => {
                b.is_finite() && b.fract() == 0.0 && b.abs() < 2f64.powi(120) && b as i128 == a
            }
        }
    }
}

/// The directions a value is rounded in when its target cannot hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    TowardsZero,
    TowardsPositive,
    TowardsNegative,
    NearestAway,
}

impl Rounding {
    pub const NAMES: [&'static str; 5] = [
        "nearest-even",
        "towards-zero",
        "towards-positive",
        "towards-negative",
        "nearest-away",
    ];

    pub fn parse(s: &str) -> Option<Rounding> {
        let all = [
            Rounding::NearestEven,
            Rounding::TowardsZero,
            Rounding::TowardsPositive,
            Rounding::TowardsNegative,
            Rounding::NearestAway,
        ];
        Self::NAMES.iter().position(|n| *n == s).map(|i| all[i])
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// `x` rounded to a whole number.
    pub fn to_integer(self, x: f64) -> f64 {
        match self {
            Rounding::NearestEven => x.round_ties_even(),
            Rounding::TowardsZero => x.trunc(),
            Rounding::TowardsPositive => x.ceil(),
            Rounding::TowardsNegative => x.floor(),
            Rounding::NearestAway => x.round(),
        }
    }
}

/// Whether the codecs that compute on values take the data type.
pub fn is_numeric(d: DataType) -> bool {
    is_integer(d) || is_float(d)
}

pub fn is_integer(d: DataType) -> bool {
    matches!(
        d,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

pub fn is_float(d: DataType) -> bool {
    matches!(d, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// The smallest and largest value of an integer type.
pub fn int_range(d: DataType) -> (i128, i128) {
    match d {
        DataType::Int8 => (i8::MIN as i128, i8::MAX as i128),
        DataType::Int16 => (i16::MIN as i128, i16::MAX as i128),
        DataType::Int32 => (i32::MIN as i128, i32::MAX as i128),
        DataType::Int64 => (i64::MIN as i128, i64::MAX as i128),
        DataType::UInt8 => (0, u8::MAX as i128),
        DataType::UInt16 => (0, u16::MAX as i128),
        DataType::UInt32 => (0, u32::MAX as i128),
        DataType::UInt64 => (0, u64::MAX as i128),
        _ => (0, -1),
    }
}

/// The largest finite value of a float type.
pub fn max_finite(d: DataType) -> f64 {
    match d {
        DataType::Float16 => 65504.0,
        DataType::Float32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// The element of type `d` in the native-endian bytes `b`.
pub fn get(d: DataType, b: &[u8]) -> Num {
    match d {
        DataType::Int8 => Num::Int(b[0] as i8 as i128),
        DataType::Int16 => Num::Int(i16::from_ne_bytes(arr(b)) as i128),
        DataType::Int32 => Num::Int(i32::from_ne_bytes(arr(b)) as i128),
        DataType::Int64 => Num::Int(i64::from_ne_bytes(arr(b)) as i128),
        DataType::UInt8 => Num::Int(b[0] as i128),
        DataType::UInt16 => Num::Int(u16::from_ne_bytes(arr(b)) as i128),
        DataType::UInt32 => Num::Int(u32::from_ne_bytes(arr(b)) as i128),
        DataType::UInt64 => Num::Int(u64::from_ne_bytes(arr(b)) as i128),
        DataType::Float16 => Num::Float(f16_to_f64(u16::from_ne_bytes(arr(b)))),
        DataType::Float32 => Num::Float(f32::from_ne_bytes(arr(b)) as f64),
        _ => Num::Float(f64::from_ne_bytes(arr(b))),
    }
}

/// Write `v` as an element of type `d` into `out`. The value must be one
/// the type holds exactly (an integer in range, a float of its format).
pub fn put(d: DataType, v: Num, out: &mut [u8]) {
    let i = match v {
        Num::Int(i) => i,
        Num::Float(f) => f as i128,
    };
    let f = match v {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    };
    match d {
        DataType::Int8 | DataType::UInt8 => out[0] = i as u8,
        DataType::Int16 | DataType::UInt16 => out.copy_from_slice(&(i as u16).to_ne_bytes()),
        DataType::Int32 | DataType::UInt32 => out.copy_from_slice(&(i as u32).to_ne_bytes()),
        DataType::Int64 | DataType::UInt64 => out.copy_from_slice(&(i as u64).to_ne_bytes()),
        DataType::Float16 => out.copy_from_slice(&f64_to_f16(f).to_ne_bytes()),
        DataType::Float32 => out.copy_from_slice(&(f as f32).to_ne_bytes()),
        _ => out.copy_from_slice(&f.to_ne_bytes()),
    }
}

/// A scalar of a codec's configuration, written as a fill value of `d` is
/// (numbers, "NaN", "Infinity", hexadecimal bit patterns).
pub fn parse_scalar(json: &Value, d: DataType) -> Result<Num> {
    let fill = FillValue::parse(json, d)?;
    Ok(get(d, &fill.bytes))
}

/// The JSON form of a scalar of `d`.
pub fn scalar_json(v: Num, d: DataType) -> Value {
    let mut b = vec![0u8; d.size()];
    put(d, v, &mut b);
    FillValue { bytes: b }.to_json(d)
}

/// `x` rounded to the nearest value of float type `d`, ties to even (the
/// result may be infinite).
pub fn nearest_float(x: f64, d: DataType) -> f64 {
    match d {
        DataType::Float16 => f16_to_f64(f64_to_f16(x)),
        DataType::Float32 => x as f32 as f64,
        _ => x,
    }
}

fn next_float(x: f64, d: DataType, up: bool) -> f64 {
    match d {
        DataType::Float16 => {
            // Half bits order like the values they hold within one sign.
            let b = f64_to_f16(x);
            let positive_side = (b & 0x8000 == 0) == up;
            let n = if b & 0x7fff == 0 {
                if up {
                    0x0001
                } else {
                    0x8001
                }
            } else if positive_side {
                b + 1
            } else {
                b - 1
            };
            f16_to_f64(n)
        }
        DataType::Float32 => {
            let f = x as f32;
            (if up { f.next_up() } else { f.next_down() }) as f64
        }
        _ => {
            if up {
                x.next_up()
            } else {
                x.next_down()
            }
        }
    }
}

/// The value of float type `d` that `x` rounds to in direction `mode`.
/// `x` is finite and within the type's finite range.
pub fn round_float(x: f64, d: DataType, mode: Rounding) -> f64 {
    let n = nearest_float(x, d);
    if n == x {
        return n;
    }
    let (lo, hi) = if n < x {
        (n, next_float(n, d, true))
    } else {
        (next_float(n, d, false), n)
    };
    pick(x, lo, hi, n, mode)
}

fn pick(x: f64, lo: f64, hi: f64, nearest: f64, mode: Rounding) -> f64 {
    match mode {
        Rounding::NearestEven => nearest,
        Rounding::TowardsZero => {
            if x > 0.0 {
                lo
            } else {
                hi
            }
        }
        Rounding::TowardsPositive => hi,
        Rounding::TowardsNegative => lo,
        Rounding::NearestAway => {
            // Neighbours of a narrower format: their midpoint is exact in f64.
            let mid = lo + (hi - lo) / 2.0;
            if x == mid {
                if x > 0.0 {
                    hi
                } else {
                    lo
                }
            } else {
                nearest
            }
        }
    }
}

/// The integer `x` as a value of float type `d`, rounded in direction
/// `mode`; None when it lies beyond the type's finite range.
pub fn int_to_float(x: i128, d: DataType, mode: Rounding) -> Option<f64> {
    if (x.unsigned_abs() as f64) > max_finite(d) {
        return None;
    }
    // Rust's integer -> float conversion rounds to nearest, ties to even.
    let n = match d {
        DataType::Float32 => x as f32 as f64,
        // Integers beyond f64's exact range are beyond half's finite range.
        DataType::Float16 => nearest_float(x as f64, d),
        _ => x as f64,
    };
    if n.is_infinite() {
        return None;
    }
    let exact = n as i128;
    if exact == x {
        return Some(n);
    }
    let (lo, hi) = if exact < x {
        (n, next_float(n, d, true))
    } else {
        (next_float(n, d, false), n)
    };
    let v = match mode {
        Rounding::NearestAway => {
            let (l, h) = (lo as i128, hi as i128);
            if 2 * x == l + h {
                if x > 0 {
                    hi
                } else {
                    lo
                }
            } else {
                n
            }
        }
        Rounding::TowardsZero if x < 0 => hi,
        Rounding::TowardsZero => lo,
        _ => pick(x as f64, lo, hi, n, mode),
    };
    if v.is_infinite() {
        None
    } else {
        Some(v)
    }
}

/// The whole number `x` (finite) modulo 2^bits, as an integer below 2^bits.
pub fn float_mod_pow2(x: f64, bits: u32) -> i128 {
    let m = 1i128 << bits;
    if x.abs() < 2f64.powi(100) {
        return (x as i128).rem_euclid(m);
    }
    // |x| >= 2^100 is a multiple of 2^(100 - 52): of 2^64 too.
    0
}

/// The integer `x` wrapped into type `d`'s range, two's complement.
pub fn wrap_int(x: i128, d: DataType) -> i128 {
    let bits = (d.size() * 8) as u32;
    let (lo, _) = int_range(d);
    let r = x.rem_euclid(1i128 << bits);
    if lo < 0 && r >= 1i128 << (bits - 1) {
        r - (1i128 << bits)
    } else {
        r
    }
}

/// An error of a codec that computes on values.
pub fn failure(codec: &str, why: String) -> ZarrError {
    ZarrError::Codec(format!("codec '{codec}': {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_rounding_follows_each_direction() {
        let d = DataType::Float32;
        let x = 0.1f64;
        assert_eq!(round_float(x, d, Rounding::NearestEven), 0.1f32 as f64);
        assert_eq!(
            round_float(x, d, Rounding::TowardsZero),
            0.099_999_994_039_535_52
        );
        assert_eq!(
            round_float(x, d, Rounding::TowardsPositive),
            0.100_000_001_490_116_12
        );
        assert_eq!(
            round_float(-x, d, Rounding::TowardsZero),
            -0.099_999_994_039_535_52
        );
        assert_eq!(
            round_float(-x, d, Rounding::TowardsNegative),
            -0.100_000_001_490_116_12
        );
        // 1 + 2^-24 lies halfway between two floats.
        let tie = 1.0 + 2f64.powi(-24);
        assert_eq!(round_float(tie, d, Rounding::NearestEven), 1.0);
        assert_eq!(
            round_float(tie, d, Rounding::NearestAway),
            1.0 + 2f64.powi(-23)
        );
        assert_eq!(
            round_float(1.0 / 3.0, DataType::Float16, Rounding::TowardsPositive),
            f16_to_f64(0x3556)
        );
        assert_eq!(
            round_float(1.0 / 3.0, DataType::Float16, Rounding::TowardsZero),
            f16_to_f64(0x3555)
        );
    }

    #[test]
    fn integers_round_to_floats_exactly() {
        let big = (1i128 << 53) + 1;
        assert_eq!(
            int_to_float(big, DataType::Float64, Rounding::NearestEven),
            Some(2f64.powi(53))
        );
        assert_eq!(
            int_to_float(big, DataType::Float64, Rounding::TowardsPositive),
            Some(2f64.powi(53) + 2.0)
        );
        assert_eq!(
            int_to_float(big, DataType::Float64, Rounding::NearestAway),
            Some(2f64.powi(53) + 2.0)
        );
        assert_eq!(
            int_to_float(-big, DataType::Float64, Rounding::TowardsZero),
            Some(-(2f64.powi(53)))
        );
        assert_eq!(
            int_to_float(70000, DataType::Float16, Rounding::NearestEven),
            None
        );
        assert_eq!(
            int_to_float(2049, DataType::Float16, Rounding::TowardsPositive),
            Some(2050.0)
        );
    }

    #[test]
    fn wrapping_is_twos_complement() {
        assert_eq!(wrap_int(32768, DataType::Int16), -32768);
        assert_eq!(wrap_int(32769, DataType::Int16), -32767);
        assert_eq!(wrap_int(-32769, DataType::Int16), 32767);
        assert_eq!(wrap_int(-5, DataType::UInt8), 251);
        assert_eq!(float_mod_pow2(1e20, 64), 7_766_279_631_452_241_920);
        assert_eq!(float_mod_pow2(-1.0, 8), 255);
    }

    #[test]
    fn elements_read_and_write_exactly() {
        for (d, v) in [
            (DataType::UInt64, Num::Int(u64::MAX as i128)),
            (DataType::Int8, Num::Int(-128)),
            (DataType::Float16, Num::Float(-0.5)),
            (DataType::Float32, Num::Float(0.1f32 as f64)),
        ] {
            let mut b = vec![0u8; d.size()];
            put(d, v, &mut b);
            assert_eq!(get(d, &b), v);
        }
        assert!(Num::Float(f64::NAN).same(Num::Float(f64::NAN)));
        assert!(Num::Int(3).same(Num::Float(3.0)));
    }
}
