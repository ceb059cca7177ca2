//! The numeric elements of numcodecs' filters (`delta`, `fixedscaleoffset`,
//! `quantize`, `astype`, `bitround`): an element type from a NumPy type
//! string, its values read and written in its byte order, and NumPy's
//! arithmetic and casts on them, so that a filter gives numcodecs' bytes.
//!
//! NumPy computes in the array's own float type (a Python number next to
//! an array takes the array's type), float16 through float32, rounds with
//! `rint` (half to even), and casts integers by wrapping and floats to
//! integers by truncation. A float that does not fit the integer type
//! (NaN, infinities, out of range) has no defined result in NumPy (C's
//! cast); here it is an error instead of an arbitrary value.

use crate::dtype::numpy::TypeStr;
use crate::dtype::{DataType, Endian};
use crate::error::{Result, ZarrError};
use crate::fill::{f16_to_f64, f64_to_f16};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    UInt,
    Float,
}

/// One element type: integer or float, its size and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elem {
    pub kind: Kind,
    pub size: usize,
    pub big: bool,
}

/// A value on its way through a filter: an integer, or a float held in a
/// double (exactly, for float16 and float32 values).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }
}

/// An arithmetic operation of NumPy's.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    fn f64(self, a: f64, b: f64) -> f64 {
        self.on(a, b)
    }

    fn f32(self, a: f32, b: f32) -> f32 {
        self.on(a, b)
    }

    #[inline(always)]
    fn on<
        T: std::ops::Add<Output = T>
            + std::ops::Sub<Output = T>
            + std::ops::Mul<Output = T>
            + std::ops::Div<Output = T>,
    >(
        self,
        a: T,
        b: T,
    ) -> T {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
        }
    }
}

impl Elem {
    /// float64, NumPy's type of a Python float next to an integer array.
    pub const F64: Elem = Elem {
        kind: Kind::Float,
        size: 8,
        big: false,
    };

    /// The element type of the type string `s`, member `member` of codec
    /// `codec`'s configuration: integers of 1, 2, 4 or 8 bytes and floats
    /// of 2, 4 or 8. numcodecs writes "i2" (no byte order) for the
    /// machine's order, as NumPy reads it.
    pub fn parse(s: &str, codec: &str, member: &str) -> Result<Elem> {
        let bad = || {
            ZarrError::Metadata(format!(
                "codec '{codec}': {member} '{s}' is not a NumPy integer or float type string such as \"<i4\""
            ))
        };
        let t = TypeStr::split(s).ok_or_else(bad)?;
        let size = t.size.ok_or_else(bad)?;
        let big = size > 1 && t.endian() == Endian::Big;
        let kind = match t.kind {
            'i' => Kind::Int,
            'u' => Kind::UInt,
            'f' => Kind::Float,
            'b' | 'c' | 'M' | 'm' => {
                return Err(ZarrError::Unsupported(format!(
                    "codec '{codec}' on {member} '{s}' is not supported (only integers and floats)"
                )))
            }
            _ => return Err(bad()),
        };
        let ok = match kind {
            Kind::Float => matches!(size, 2 | 4 | 8),
            _ => matches!(size, 1 | 2 | 4 | 8),
        };
        if !ok {
            return Err(bad());
        }
        Ok(Elem { kind, size, big })
    }

    /// The element type of an array of `dtype`, little endian; None for
    /// types that are not integers or floats.
    pub fn of(dtype: DataType) -> Option<Elem> {
        let kind = match dtype {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Kind::Int,
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => Kind::UInt,
            DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
            _ => return None,
        };
        Some(Elem {
            kind,
            size: dtype.size(),
            big: false,
        })
    }

    /// Whether this type holds the elements of an array of `dtype` (byte
    /// order aside).
    pub fn describes(self, dtype: DataType) -> bool {
        Elem::of(dtype).is_some_and(|e| (e.kind, e.size) == (self.kind, self.size))
    }

    pub fn typestr(self) -> String {
        let order = match (self.size, self.big) {
            (1, _) => '|',
            (_, true) => '>',
            _ => '<',
        };
        let kind = match self.kind {
            Kind::Int => 'i',
            Kind::UInt => 'u',
            Kind::Float => 'f',
        };
        format!("{order}{kind}{}", self.size)
    }

    /// The element's bits, as an unsigned number.
    pub fn bits(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        if self.big {
            a[8 - self.size..].copy_from_slice(&b[..self.size]);
            u64::from_be_bytes(a)
        } else {
            a[..self.size].copy_from_slice(&b[..self.size]);
            u64::from_le_bytes(a)
        }
    }

    pub fn put_bits(self, v: u64, out: &mut Vec<u8>) {
        if self.big {
            out.extend_from_slice(&v.to_be_bytes()[8 - self.size..]);
        } else {
            out.extend_from_slice(&v.to_le_bytes()[..self.size]);
        }
    }

    /// `v` reduced to this integer type (two's complement wrap-around).
    pub fn wrap(self, v: i128) -> i128 {
        let bits = 8 * self.size as u32;
        let m = v & ((1i128 << bits) - 1);
        if self.kind == Kind::Int && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    }

    pub fn read_int(self, b: &[u8]) -> i128 {
        self.wrap(self.bits(b) as i128)
    }

    pub fn write_int(self, v: i128, out: &mut Vec<u8>) {
        self.put_bits(self.wrap(v) as u64, out)
    }

    pub fn read_float(self, b: &[u8]) -> f64 {
        let bits = self.bits(b);
        match self.size {
            2 => f16_to_f64(bits as u16),
            4 => f32::from_bits(bits as u32) as f64,
            _ => f64::from_bits(bits),
        }
    }

    /// `x` rounded to this float type.
    pub fn round(self, x: f64) -> f64 {
        match self.size {
            2 => f16_to_f64(f64_to_f16(x)),
            4 => x as f32 as f64,
            _ => x,
        }
    }

    pub fn write_float(self, x: f64, out: &mut Vec<u8>) {
        let bits = match self.size {
            2 => f64_to_f16(x) as u64,
            4 => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        };
        self.put_bits(bits, out)
    }

    /// `a + b` (or `a - b`) in this float type: exact in a double for
    /// float16 and float32 operands, then rounded once.
    pub fn add(self, a: f64, b: f64) -> f64 {
        match self.size {
            4 => (a as f32 + b as f32) as f64,
            8 => a + b,
            _ => self.round(a + b),
        }
    }

    /// `a op b` in this float type, as NumPy computes it (float16 in
    /// float32, rounded to float16 after each operation).
    pub fn arith(self, op: Op, a: f64, b: f64) -> f64 {
        match self.size {
            8 => op.f64(a, b),
            4 => op.f32(a as f32, b as f32) as f64,
            _ => self.round(op.f32(a as f32, b as f32) as f64),
        }
    }

    /// The element of `b` as a value.
    pub fn read(self, b: &[u8]) -> Num {
        match self.kind {
            Kind::Float => Num::Float(self.read_float(b)),
            _ => Num::Int(self.read_int(b)),
        }
    }

    /// `v` cast to this type as NumPy's `astype` casts it; None for a
    /// float that no integer of this type holds (NaN, infinite, out of
    /// range after truncation).
    pub fn cast(self, v: Num) -> Option<Num> {
        match (self.kind, v) {
            (Kind::Float, Num::Int(i)) => Some(Num::Float(match self.size {
                4 => i as f32 as f64,
                _ => self.round(i as f64),
            })),
            (Kind::Float, Num::Float(x)) => Some(Num::Float(self.round(x))),
            (_, Num::Int(i)) => Some(Num::Int(self.wrap(i))),
            (_, Num::Float(x)) => {
                let t = x.trunc();
                let bits = 8 * self.size as i32;
                let (lo, hi) = match self.kind {
                    Kind::Int => (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1)),
                    _ => (0.0, 2f64.powi(bits)),
                };
                (t >= lo && t < hi).then_some(Num::Int(t as i128))
            }
        }
    }

    /// `v`, a value of this type, appended in its byte order.
    pub fn write(self, v: Num, out: &mut Vec<u8>) {
        match v {
            Num::Int(i) => self.write_int(i, out),
            Num::Float(x) => self.write_float(x, out),
        }
    }

    /// Every element of `input` as a double (integers rounded to the
    /// nearest double, as NumPy converts them), in one typed loop.
    pub fn read_floats(self, input: &[u8]) -> Vec<f64> {
        macro_rules! each {
            ($t:ty, $n:literal, $conv:expr) => {
                input
                    .chunks_exact($n)
                    .map(|c| {
                        let b: [u8; $n] = c.try_into().expect("element size");
                        let v = if self.big {
                            <$t>::from_be_bytes(b)
                        } else {
                            <$t>::from_le_bytes(b)
                        };
                        $conv(v)
                    })
                    .collect()
            };
        }
        match (self.kind, self.size) {
            (Kind::Float, 8) => each!(f64, 8, |v| v),
            (Kind::Float, 4) => each!(f32, 4, f64::from),
            (Kind::Float, _) => each!(u16, 2, f16_to_f64),
            (Kind::Int, 1) => each!(i8, 1, f64::from),
            (Kind::Int, 2) => each!(i16, 2, f64::from),
            (Kind::Int, 4) => each!(i32, 4, f64::from),
            (Kind::Int, _) => each!(i64, 8, |v| v as f64),
            (Kind::UInt, 1) => each!(u8, 1, f64::from),
            (Kind::UInt, 2) => each!(u16, 2, f64::from),
            (Kind::UInt, 4) => each!(u32, 4, f64::from),
            (Kind::UInt, _) => each!(u64, 8, |v| v as f64),
        }
    }

    /// `values` cast to this type (`cast`) and appended; an error naming
    /// `codec` for a value the type cannot hold.
    pub fn write_floats(self, values: &[f64], codec: &str, out: &mut Vec<u8>) -> Result<()> {
        out.reserve(values.len() * self.size);
        if self.kind == Kind::Float {
            for &x in values {
                self.write_float(x, out);
            }
            return Ok(());
        }
        for &x in values {
            match self.cast(Num::Float(x)) {
                Some(Num::Int(i)) => self.write_int(i, out),
                _ => return Err(unfit(codec, Num::Float(x), self)),
            }
        }
        Ok(())
    }

    /// The number of elements of this type in `len` bytes (a buffer
    /// named `what` of codec `codec`), an error if they do not fill it.
    // `%` rather than is_multiple_of (Rust 1.87) keeps older toolchains working.
    #[allow(clippy::manual_is_multiple_of)]
    pub fn count(self, len: usize, codec: &str, what: &str) -> Result<usize> {
        if len % self.size != 0 {
            return Err(ZarrError::Codec(format!(
                "{codec}: {len} {what} bytes are not a whole number of {} elements",
                self.typestr()
            )));
        }
        Ok(len / self.size)
    }
}

/// A filter's configuration for new arrays of `dtype`: `members`, then
/// each member of `typed` holding the array's type string, little endian.
pub fn typed_config(
    dtype: DataType,
    members: &[(&str, serde_json::Value)],
    typed: &[&str],
) -> serde_json::Map<String, serde_json::Value> {
    let t = crate::dtype::numpy::typestr(dtype, Endian::Little).unwrap_or_default();
    let mut cfg = super::config(members);
    for k in typed {
        cfg.insert(k.to_string(), t.clone().into());
    }
    cfg
}

/// The type string member `member` of a filter's configuration, if given.
pub fn text_member<'a>(
    config: &'a serde_json::Map<String, serde_json::Value>,
    codec: &str,
    member: &str,
) -> Result<Option<&'a str>> {
    use serde_json::Value;
    match config.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(ZarrError::Metadata(format!(
            "codec '{codec}': {member} must be a type string, not {v}"
        ))),
    }
}

/// The element type named by member `member` (required), which must hold
/// the elements of an array of `array` when `array` is given.
pub fn elem_member(
    config: &serde_json::Map<String, serde_json::Value>,
    codec: &str,
    member: &str,
    array: Option<DataType>,
) -> Result<Elem> {
    let s = text_member(config, codec, member)?.ok_or_else(|| {
        ZarrError::Metadata(format!("codec '{codec}': configuration has no '{member}'"))
    })?;
    let e = Elem::parse(s, codec, member)?;
    if let Some(dt) = array {
        if !e.describes(dt) {
            return Err(ZarrError::Unsupported(format!(
                "codec '{codec}' with {member} {} on an array of {} is not supported",
                e.typestr(),
                dt.name()
            )));
        }
    }
    Ok(e)
}

/// A value of type `to` that a filter cannot write: an error naming it.
pub fn unfit(codec: &str, v: Num, to: Elem) -> ZarrError {
    let shown = match v {
        Num::Int(i) => i.to_string(),
        Num::Float(x) => x.to_string(),
    };
    ZarrError::Codec(format!(
        "{codec}: the value {shown} does not fit in {}",
        to.typestr()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_numpy() {
        let u1 = Elem::parse("|u1", "t", "dtype").unwrap();
        let i2 = Elem::parse(">i2", "t", "dtype").unwrap();
        let f2 = Elem::parse("<f2", "t", "dtype").unwrap();
        assert_eq!(u1.cast(Num::Float(255.9)), Some(Num::Int(255)));
        assert_eq!(u1.cast(Num::Float(-0.9)), Some(Num::Int(0)));
        assert_eq!(u1.cast(Num::Float(256.0)), None);
        assert_eq!(u1.cast(Num::Float(f64::NAN)), None);
        assert_eq!(u1.cast(Num::Int(257)), Some(Num::Int(1)));
        assert_eq!(i2.cast(Num::Float(-32768.5)), Some(Num::Int(-32768)));
        assert_eq!(i2.cast(Num::Int(40000)), Some(Num::Int(40000 - 65536)));
        assert_eq!(
            f2.cast(Num::Float(1.0 / 3.0)),
            Some(Num::Float(0.333251953125))
        );
        assert_eq!(f2.cast(Num::Int(70000)), Some(Num::Float(f64::INFINITY)));
        // float16 arithmetic rounds once per operation, through float32.
        assert_eq!(f2.arith(Op::Div, 1.0, 3.0), 0.333251953125);
        let mut out = Vec::new();
        i2.write(Num::Int(-2), &mut out);
        assert_eq!(out, [0xff, 0xfe]);
        assert_eq!(i2.read(&out), Num::Int(-2));
        assert_eq!(i2.count(3, "t", "input").unwrap_err().kind(), "codec");
    }
}
