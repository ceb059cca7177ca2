//! Fill values of the core data types: v3-data-types.rst, "Permitted fill
//! values", and the `fill_value` member of v3-core.rst.
//!
//! A fill value is held as the native-endian bytes of one element so the
//! engine can compare and copy it without knowing its type.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Number, Value};

/// A fill value as the native-endian bytes of one element of its data type.
#[derive(Debug, Clone, PartialEq)]
pub struct FillValue {
    pub bytes: Vec<u8>,
}

/// The IEEE binary formats a float fill can take.
#[derive(Clone, Copy)]
enum Float {
    F16,
    F32,
    F64,
}

impl Float {
    fn bits(self) -> u32 {
        match self {
            Float::F16 => 16,
            Float::F32 => 32,
            Float::F64 => 64,
        }
    }

    /// The one NaN the string "NaN" denotes: positive, only the mantissa's
    /// top bit set.
    fn canonical_nan(self) -> u64 {
        match self {
            Float::F16 => 0x7e00,
            Float::F32 => 0x7fc0_0000,
            Float::F64 => 0x7ff8_0000_0000_0000,
        }
    }

    fn infinity(self, negative: bool) -> u64 {
        let (pos, sign) = match self {
            Float::F16 => (0x7c00, 1 << 15),
            Float::F32 => (0x7f80_0000, 1 << 31),
            Float::F64 => (0x7ff0_0000_0000_0000, 1 << 63),
        };
        if negative {
            pos | sign
        } else {
            pos
        }
    }

    /// Bits of `x` rounded to this format (round half to even).
    fn round(self, x: f64) -> u64 {
        match self {
            Float::F16 => f64_to_f16(x) as u64,
            Float::F32 => (x as f32).to_bits() as u64,
            Float::F64 => x.to_bits(),
        }
    }

    /// The exact value of a bit pattern of this format.
    fn value(self, bits: u64) -> f64 {
        match self {
            Float::F16 => f16_to_f64(bits as u16),
            Float::F32 => f32::from_bits(bits as u32) as f64,
            Float::F64 => f64::from_bits(bits),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Float::F16 => "float16",
            Float::F32 => "float32",
            Float::F64 => "float64",
        }
    }
}

fn bad(dtype: DataType, json: &Value, want: &str) -> ZarrError {
    ZarrError::Metadata(format!(
        "fill_value {json} is not valid for data type {}: expected {want}",
        dtype.name()
    ))
}

/// The bits of a float fill in any form the spec allows.
fn parse_float(json: &Value, f: Float, dtype: DataType) -> Result<u64> {
    match json {
        Value::Number(n) => {
            // Integers go straight to the target format: via f64 a large
            // integer would be rounded twice.
            if let Some(i) = n.as_i64() {
                Ok(match f {
                    Float::F32 => (i as f32).to_bits() as u64,
                    _ => f.round(i as f64),
                })
            } else if let Some(u) = n.as_u64() {
                Ok(match f {
                    Float::F32 => (u as f32).to_bits() as u64,
                    _ => f.round(u as f64),
                })
            } else {
                let x = n.as_f64().ok_or_else(|| bad(dtype, json, "a number"))?;
                Ok(f.round(x))
            }
        }
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(f.canonical_nan()),
            "Infinity" => Ok(f.infinity(false)),
            "-Infinity" => Ok(f.infinity(true)),
            _ => {
                let digits = (f.bits() / 4) as usize;
                let hex = s
                    .strip_prefix("0x")
                    .filter(|h| h.len() == digits && h.bytes().all(|b| b.is_ascii_hexdigit()));
                match hex {
                    Some(h) => Ok(u64::from_str_radix(h, 16).expect("checked hex digits")),
                    None => Err(bad(
                        dtype,
                        json,
                        &format!(
                            "a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x\" and {digits} hex digits for {}",
                            f.name()
                        ),
                    )),
                }
            }
        },
        _ => Err(bad(dtype, json, "a number or a string")),
    }
}

/// The canonical JSON of a float bit pattern: a number when finite, the
/// named strings for infinities and the canonical NaN, and hex for any other
/// NaN so its payload and sign survive a round trip.
fn float_to_json(bits: u64, f: Float) -> Value {
    let x = f.value(bits);
    if x.is_nan() {
        if bits == f.canonical_nan() {
            Value::from("NaN")
        } else {
            Value::from(format!(
                "0x{:0width$x}",
                bits,
                width = (f.bits() / 4) as usize
            ))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        // The exact value, as zarr-python writes it (0.1f32 is written as
        // 0.10000000149011612): any reader gets the same bits back, with no
        // double rounding through a shorter decimal.
        Value::Number(Number::from_f64(x).expect("finite"))
    }
}

fn take<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

fn float_of(dtype: DataType) -> Option<Float> {
    match dtype {
        DataType::Float16 => Some(Float::F16),
        DataType::Float32 | DataType::Complex64 => Some(Float::F32),
        DataType::Float64 | DataType::Complex128 => Some(Float::F64),
        _ => None,
    }
}

/// Native-endian bytes of a float bit pattern in its own width.
fn float_bytes(bits: u64, f: Float) -> Vec<u8> {
    match f {
        Float::F16 => (bits as u16).to_ne_bytes().to_vec(),
        Float::F32 => (bits as u32).to_ne_bytes().to_vec(),
        Float::F64 => bits.to_ne_bytes().to_vec(),
    }
}

fn float_bits(bytes: &[u8], f: Float) -> u64 {
    match f {
        Float::F16 => u16::from_ne_bytes(take(bytes)) as u64,
        Float::F32 => u32::from_ne_bytes(take(bytes)) as u64,
        Float::F64 => u64::from_ne_bytes(take(bytes)),
    }
}

/// An integer fill value, exactly. Besides JSON integers, 64-bit types
/// (`text_ok`) accept a string of decimal digits: R's JSON tools cannot hold
/// every 64-bit value as a number, so the R side passes those as text. A
/// narrower type has no such excuse, and a string there is a wrong type.
fn int_of(json: &Value, text_ok: bool) -> Option<i128> {
    if let Some(i) = json.as_i64() {
        return Some(i as i128);
    }
    if let Some(u) = json.as_u64() {
        return Some(u as i128);
    }
    let s = json.as_str().filter(|_| text_ok)?;
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i128>().ok()
}

impl FillValue {
    /// Parse any JSON form v3-core.rst allows for `dtype`.
    pub fn parse(json: &Value, dtype: DataType) -> Result<FillValue> {
        // Integers must be read with as_i64/as_u64: through f64 int64 and
        // uint64 values beyond 2^53 would silently change.
        macro_rules! signed {
            ($t:ty) => {{
                let v = int_of(json, std::mem::size_of::<$t>() == 8)
                    .and_then(|i| <$t>::try_from(i).ok())
                    .ok_or_else(|| {
                        bad(
                            dtype,
                            json,
                            &format!("an integer in [{}, {}]", <$t>::MIN, <$t>::MAX),
                        )
                    })?;
                v.to_ne_bytes().to_vec()
            }};
        }
        macro_rules! unsigned {
            ($t:ty) => {{
                let v = int_of(json, std::mem::size_of::<$t>() == 8)
                    .and_then(|i| <$t>::try_from(i).ok())
                    .ok_or_else(|| {
                        bad(dtype, json, &format!("an integer in [0, {}]", <$t>::MAX))
                    })?;
                v.to_ne_bytes().to_vec()
            }};
        }
        let bytes = match dtype {
            // A string fill value is its UTF-8 bytes.
            DataType::String => json
                .as_str()
                .ok_or_else(|| bad(dtype, json, "a string"))?
                .as_bytes()
                .to_vec(),
            DataType::Bool => vec![json
                .as_bool()
                .ok_or_else(|| bad(dtype, json, "true or false"))?
                as u8],
            DataType::Int8 => signed!(i8),
            DataType::Int16 => signed!(i16),
            DataType::Int32 => signed!(i32),
            DataType::Int64 => signed!(i64),
            DataType::UInt8 => unsigned!(u8),
            DataType::UInt16 => unsigned!(u16),
            DataType::UInt32 => unsigned!(u32),
            DataType::UInt64 => unsigned!(u64),
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                float_bytes(parse_float(json, f, dtype)?, f)
            }
            DataType::Complex64 | DataType::Complex128 => {
                let f = float_of(dtype).expect("complex type");
                match json.as_array().map(Vec::as_slice) {
                    Some([re, im]) => {
                        let mut b = float_bytes(parse_float(re, f, dtype)?, f);
                        b.extend(float_bytes(parse_float(im, f, dtype)?, f));
                        b
                    }
                    _ => return Err(bad(dtype, json, "a two-element array [real, imaginary]")),
                }
            }
        };
        Ok(FillValue { bytes })
    }

    /// The canonical JSON form (numbers; "NaN"/"Infinity"/"-Infinity"; [re, im]; booleans).
    pub fn to_json(&self, dtype: DataType) -> Value {
        let b = &self.bytes;
        match dtype {
            DataType::String => Value::String(String::from_utf8_lossy(b).into_owned()),
            DataType::Bool => Value::Bool(b[0] != 0),
            DataType::Int8 => i8::from_ne_bytes(take(b)).into(),
            DataType::Int16 => i16::from_ne_bytes(take(b)).into(),
            DataType::Int32 => i32::from_ne_bytes(take(b)).into(),
            DataType::Int64 => i64::from_ne_bytes(take(b)).into(),
            DataType::UInt8 => u8::from_ne_bytes(take(b)).into(),
            DataType::UInt16 => u16::from_ne_bytes(take(b)).into(),
            DataType::UInt32 => u32::from_ne_bytes(take(b)).into(),
            DataType::UInt64 => u64::from_ne_bytes(take(b)).into(),
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                float_to_json(float_bits(b, f), f)
            }
            DataType::Complex64 | DataType::Complex128 => {
                let f = float_of(dtype).expect("complex type");
                let half = dtype.size() / 2;
                Value::Array(vec![
                    float_to_json(float_bits(b, f), f),
                    float_to_json(float_bits(&b[half..], f), f),
                ])
            }
        }
    }

    /// All-zero bytes: false, 0, 0.0, 0+0i.
    pub fn zero(dtype: DataType) -> FillValue {
        FillValue {
            bytes: vec![0; dtype.size()],
        }
    }

    /// The value as a double, for real data types: exact for floats and for
    /// integers up to 2^53, rounded beyond. `None` for complex types.
    pub fn as_f64(&self, dtype: DataType) -> Option<f64> {
        let b = &self.bytes;
        Some(match dtype {
            DataType::Bool => (b[0] != 0) as u8 as f64,
            DataType::Int8 => i8::from_ne_bytes(take(b)) as f64,
            DataType::Int16 => i16::from_ne_bytes(take(b)) as f64,
            DataType::Int32 => i32::from_ne_bytes(take(b)) as f64,
            DataType::Int64 => i64::from_ne_bytes(take(b)) as f64,
            DataType::UInt8 => b[0] as f64,
            DataType::UInt16 => u16::from_ne_bytes(take(b)) as f64,
            DataType::UInt32 => u32::from_ne_bytes(take(b)) as f64,
            DataType::UInt64 => u64::from_ne_bytes(take(b)) as f64,
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = float_of(dtype).expect("float type");
                f.value(float_bits(b, f))
            }
            DataType::Complex64 | DataType::Complex128 | DataType::String => return None,
        })
    }
}

/// The exact value of IEEE 754 half-precision bits. NaN payloads are kept
/// (shifted into the top of the double's mantissa).
pub fn f16_to_f64(bits: u16) -> f64 {
    let negative = bits & 0x8000 != 0;
    let exp = ((bits >> 10) & 0x1f) as u64;
    let man = (bits & 0x3ff) as u64;
    let sign = (negative as u64) << 63;
    match exp {
        // Subnormal (or zero): man * 2^-24, exact in a double.
        0 => {
            let v = man as f64 * f64::powi(2.0, -24);
            if negative {
                -v
            } else {
                v
            }
        }
        0x1f => f64::from_bits(sign | (0x7ff << 52) | (man << 42)),
        _ => f64::from_bits(sign | ((exp + 1023 - 15) << 52) | (man << 42)),
    }
}

/// `x` rounded to IEEE 754 half precision, round half to even, straight from
/// the double (going through f32 would round twice). Overflow gives
/// infinity; NaN stays NaN with the top payload bits (so every half survives
/// f16 -> f64 -> f16), setting the quiet bit only when those bits are all
/// zero, since a zero payload would mean infinity.
pub fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let man = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        if man == 0 {
            return sign | 0x7c00;
        }
        let payload = (man >> 42) as u16;
        return sign | 0x7c00 | if payload == 0 { 0x0200 } else { payload };
    }
    if exp == 0 {
        // Zero or a double subnormal: far below half the smallest half subnormal.
        return sign;
    }
    let e = exp - 1023;
    if e > 15 {
        return sign | 0x7c00;
    }
    // The half's magnitude bits before rounding and how many low bits of
    // the 53-bit significand are dropped.
    let sig = man | (1 << 52);
    let (kept, shift) = if e >= -14 {
        (((e + 15) as u64) << 10 | (man >> 42), 42u32)
    } else {
        // Subnormal half: the value in units of 2^-24 is sig * 2^(e + 24 - 52).
        let shift = (28 - e) as u32;
        if shift > 53 {
            return sign;
        }
        (sig >> shift, shift)
    };
    let rest = sig & ((1u64 << shift) - 1);
    let halfway = 1u64 << (shift - 1);
    // A carry out of the mantissa moves to the next exponent (or to
    // infinity), which is the correctly rounded result.
    let rounded = if rest > halfway || (rest == halfway && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    sign | rounded as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_strings_are_exact_integer_fills() {
        let f = FillValue::parse(&json!("-9223372036854775808"), DataType::Int64).unwrap();
        assert_eq!(f.bytes, i64::MIN.to_ne_bytes().to_vec());
        let f = FillValue::parse(&json!("18446744073709551615"), DataType::UInt64).unwrap();
        assert_eq!(f.to_json(DataType::UInt64), json!(18446744073709551615u64));
        assert!(FillValue::parse(&json!("18446744073709551616"), DataType::UInt64).is_err());
        assert!(FillValue::parse(&json!("1.5"), DataType::Int32).is_err());
        assert!(FillValue::parse(&json!("NaN"), DataType::Int32).is_err());
    }

    #[test]
    fn a_digit_string_is_the_wrong_type_below_64_bits() {
        for d in [
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
        ] {
            let e = FillValue::parse(&json!("3"), d).unwrap_err();
            assert_eq!(e.kind(), "metadata");
            assert!(e.message().contains("fill_value \"3\""), "{}", e.message());
            assert_eq!(FillValue::parse(&json!(3), d).unwrap().bytes[0], 3);
        }
        let f = FillValue::parse(&json!("3"), DataType::Int64).unwrap();
        assert_eq!(f.bytes, 3i64.to_ne_bytes());
    }
    use crate::dtype::ALL_DATA_TYPES;
    use serde_json::json;

    fn fill(v: Value, d: DataType) -> FillValue {
        FillValue::parse(&v, d).unwrap_or_else(|e| panic!("{v} for {}: {e}", d.name()))
    }

    fn err(v: Value, d: DataType) -> ZarrError {
        FillValue::parse(&v, d).expect_err(&format!("{v} for {} should fail", d.name()))
    }

    /// Parse, check the bytes, and check the canonical form.
    fn check(v: Value, d: DataType, bytes: Vec<u8>, canonical: Value) {
        let f = fill(v.clone(), d);
        assert_eq!(f.bytes, bytes, "{v} for {}", d.name());
        assert_eq!(f.to_json(d), canonical, "{v} for {}", d.name());
        assert_eq!(fill(canonical, d), f);
    }

    #[test]
    fn fill_bool() {
        check(json!(true), DataType::Bool, vec![1], json!(true));
        check(json!(false), DataType::Bool, vec![0], json!(false));
        assert_eq!(err(json!(1), DataType::Bool).kind(), "metadata");
    }

    #[test]
    fn fill_integers_cover_the_full_range() {
        check(json!(-128), DataType::Int8, vec![0x80], json!(-128));
        check(json!(127), DataType::Int8, vec![0x7f], json!(127));
        check(
            json!(-32768),
            DataType::Int16,
            (-32768i16).to_ne_bytes().to_vec(),
            json!(-32768),
        );
        check(
            json!(-9999),
            DataType::Int32,
            (-9999i32).to_ne_bytes().to_vec(),
            json!(-9999),
        );
        check(
            json!(i64::MIN),
            DataType::Int64,
            i64::MIN.to_ne_bytes().to_vec(),
            json!(i64::MIN),
        );
        check(
            json!(i64::MAX),
            DataType::Int64,
            i64::MAX.to_ne_bytes().to_vec(),
            json!(i64::MAX),
        );
        check(json!(255), DataType::UInt8, vec![255], json!(255));
        check(
            json!(65535),
            DataType::UInt16,
            65535u16.to_ne_bytes().to_vec(),
            json!(65535),
        );
        check(
            json!(u32::MAX),
            DataType::UInt32,
            u32::MAX.to_ne_bytes().to_vec(),
            json!(u32::MAX),
        );
        check(
            json!(u64::MAX),
            DataType::UInt64,
            u64::MAX.to_ne_bytes().to_vec(),
            json!(u64::MAX),
        );
        // The text form, as zarr-python writes it, must not go through f64.
        let v: Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(fill(v, DataType::UInt64).bytes, u64::MAX.to_ne_bytes());
        let v: Value = serde_json::from_str("-9223372036854775807").unwrap();
        assert_eq!(fill(v, DataType::Int64).bytes, (i64::MIN + 1).to_ne_bytes());
        check(json!(0), DataType::Int64, vec![0; 8], json!(0));
    }

    #[test]
    fn fill_integers_out_of_range_or_wrong_type_are_refused() {
        for (v, d) in [
            (json!(128), DataType::Int8),
            (json!(-129), DataType::Int8),
            (json!(256), DataType::UInt8),
            (json!(-1), DataType::UInt8),
            (json!(-1), DataType::UInt64),
            (json!(65536), DataType::UInt16),
            (json!(2147483648i64), DataType::Int32),
            (json!(u64::MAX), DataType::Int64),
            (json!("NaN"), DataType::Int32),
            (json!(1.0), DataType::Int32),
            (json!(1.5), DataType::Int64),
            (json!(1e3), DataType::UInt64),
            (json!(null), DataType::Int16),
            (json!(true), DataType::UInt8),
            (json!([1]), DataType::Int8),
        ] {
            let e = err(v, d);
            assert_eq!(e.kind(), "metadata");
            assert!(e.message().contains(d.name()), "{}", e.message());
        }
    }

    #[test]
    fn fill_floats_numbers_and_special_strings() {
        let f64b = |x: f64| x.to_ne_bytes().to_vec();
        let f32b = |x: f32| x.to_ne_bytes().to_vec();
        check(json!(42.5), DataType::Float64, f64b(42.5), json!(42.5));
        check(json!(0.1), DataType::Float64, f64b(0.1), json!(0.1));
        check(json!(3), DataType::Float64, f64b(3.0), json!(3.0));
        check(json!(-0.0), DataType::Float64, f64b(-0.0), json!(-0.0));
        check(json!(-0.0), DataType::Float32, f32b(-0.0), json!(-0.0));
        check(
            json!(-0.0),
            DataType::Float16,
            0x8000u16.to_ne_bytes().to_vec(),
            json!(-0.0),
        );
        check(
            json!("NaN"),
            DataType::Float64,
            f64b(f64::from_bits(0x7ff8_0000_0000_0000)),
            json!("NaN"),
        );
        check(
            json!("NaN"),
            DataType::Float32,
            0x7fc0_0000u32.to_ne_bytes().to_vec(),
            json!("NaN"),
        );
        check(
            json!("NaN"),
            DataType::Float16,
            0x7e00u16.to_ne_bytes().to_vec(),
            json!("NaN"),
        );
        check(
            json!("Infinity"),
            DataType::Float64,
            f64b(f64::INFINITY),
            json!("Infinity"),
        );
        check(
            json!("-Infinity"),
            DataType::Float32,
            f32b(f32::NEG_INFINITY),
            json!("-Infinity"),
        );
        check(
            json!("-Infinity"),
            DataType::Float16,
            0xfc00u16.to_ne_bytes().to_vec(),
            json!("-Infinity"),
        );
        // float16 and float32 values are written exactly.
        check(
            json!(0.1),
            DataType::Float32,
            f32b(0.1),
            json!(0.10000000149011612),
        );
        check(
            json!(16777217),
            DataType::Float32,
            f32b(16777216.0),
            json!(16777216.0),
        );
        // float16: 0.1 is 0x2e66; 65504 is the largest finite; 65520 rounds to infinity.
        check(
            json!(0.1),
            DataType::Float16,
            0x2e66u16.to_ne_bytes().to_vec(),
            json!(0.0999755859375),
        );
        check(
            json!(65504),
            DataType::Float16,
            0x7bffu16.to_ne_bytes().to_vec(),
            json!(65504.0),
        );
        check(
            json!(65520),
            DataType::Float16,
            0x7c00u16.to_ne_bytes().to_vec(),
            json!("Infinity"),
        );
        check(
            json!(1e300),
            DataType::Float32,
            f32b(f32::INFINITY),
            json!("Infinity"),
        );
    }

    #[test]
    fn fill_floats_hex_bit_patterns() {
        check(
            json!("0x7fc00000"),
            DataType::Float32,
            0x7fc0_0000u32.to_ne_bytes().to_vec(),
            json!("NaN"),
        );
        check(
            json!("0x3c00"),
            DataType::Float16,
            0x3c00u16.to_ne_bytes().to_vec(),
            json!(1.0),
        );
        check(
            json!("0x7E00"),
            DataType::Float16,
            0x7e00u16.to_ne_bytes().to_vec(),
            json!("NaN"),
        );
        check(
            json!("0x3ff0000000000000"),
            DataType::Float64,
            1f64.to_ne_bytes().to_vec(),
            json!(1.0),
        );
        // NaNs other than the canonical one keep their bits through hex.
        check(
            json!("0x7e01"),
            DataType::Float16,
            0x7e01u16.to_ne_bytes().to_vec(),
            json!("0x7e01"),
        );
        check(
            json!("0xffc00000"),
            DataType::Float32,
            0xffc0_0000u32.to_ne_bytes().to_vec(),
            json!("0xffc00000"),
        );
        check(
            json!("0x7ff0000000000001"),
            DataType::Float64,
            0x7ff0_0000_0000_0001u64.to_ne_bytes().to_vec(),
            json!("0x7ff0000000000001"),
        );
        for (v, d) in [
            (json!("0x7fc0"), DataType::Float32),
            (json!("0x7fc000000"), DataType::Float32),
            (json!("0x3c00"), DataType::Float64),
            (json!("0xzzzz"), DataType::Float16),
            (json!("0x+c00"), DataType::Float16),
            (json!("nan"), DataType::Float64),
            (json!("inf"), DataType::Float64),
            (json!("1.5"), DataType::Float64),
            (json!(null), DataType::Float64),
            (json!(true), DataType::Float32),
        ] {
            assert_eq!(err(v, d).kind(), "metadata");
        }
    }

    #[test]
    fn fill_complex() {
        let c128 = |re: f64, im: f64| [re.to_ne_bytes(), im.to_ne_bytes()].concat();
        let c64 = |re: f32, im: f32| [re.to_ne_bytes(), im.to_ne_bytes()].concat();
        check(
            json!([1.5, -2.0]),
            DataType::Complex128,
            c128(1.5, -2.0),
            json!([1.5, -2.0]),
        );
        check(
            json!([1, 2]),
            DataType::Complex64,
            c64(1.0, 2.0),
            json!([1.0, 2.0]),
        );
        check(
            json!([0.5, -0.0]),
            DataType::Complex64,
            c64(0.5, -0.0),
            json!([0.5, -0.0]),
        );
        check(
            json!(["-Infinity", "NaN"]),
            DataType::Complex128,
            c128(f64::NEG_INFINITY, f64::from_bits(0x7ff8_0000_0000_0000)),
            json!(["-Infinity", "NaN"]),
        );
        check(
            json!([0, "0x7fc00000"]),
            DataType::Complex64,
            c64(0.0, f32::from_bits(0x7fc0_0000)),
            json!([0.0, "NaN"]),
        );
        for v in [
            json!([1.0]),
            json!([1.0, 2.0, 3.0]),
            json!(1.0),
            json!({"re": 1}),
            json!(["x", 0]),
        ] {
            assert_eq!(err(v, DataType::Complex128).kind(), "metadata");
        }
    }

    #[test]
    fn fill_zero_is_the_canonical_zero_of_every_type() {
        for d in ALL_DATA_TYPES {
            let z = FillValue::zero(d);
            assert_eq!(z.bytes.len(), d.size());
            let j = z.to_json(d);
            assert_eq!(fill(j, d), z, "{}", d.name());
        }
        assert_eq!(
            FillValue::zero(DataType::Bool).to_json(DataType::Bool),
            json!(false)
        );
        assert_eq!(
            FillValue::zero(DataType::Complex64).to_json(DataType::Complex64),
            json!([0.0, 0.0])
        );
        assert_eq!(
            FillValue::zero(DataType::UInt64).to_json(DataType::UInt64),
            json!(0)
        );
    }

    #[test]
    fn fill_as_f64() {
        assert_eq!(
            fill(json!(-7), DataType::Int16).as_f64(DataType::Int16),
            Some(-7.0)
        );
        assert_eq!(
            fill(json!("0x3c00"), DataType::Float16).as_f64(DataType::Float16),
            Some(1.0)
        );
        assert!(fill(json!("NaN"), DataType::Float32)
            .as_f64(DataType::Float32)
            .unwrap()
            .is_nan());
        assert_eq!(
            fill(json!([1, 2]), DataType::Complex64).as_f64(DataType::Complex64),
            None
        );
    }

    #[test]
    fn fill_f16_conversions() {
        // (bits, value) pairs that are exact both ways.
        for (bits, v) in [
            (0x0000u16, 0.0),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333251953125),
            (0x7bff, 65504.0),
            (0x0400, 6.103515625e-5),       // smallest normal
            (0x03ff, 6.097555160522461e-5), // largest subnormal
            (0x0001, 5.960464477539063e-8), // smallest subnormal
            (0x8001, -5.960464477539063e-8),
            (0x7c00, f64::INFINITY),
            (0xfc00, f64::NEG_INFINITY),
        ] {
            assert_eq!(f16_to_f64(bits), v, "{bits:#06x}");
            assert_eq!(f64_to_f16(v), bits, "{v}");
        }
        assert_eq!(f16_to_f64(0x8000).to_bits(), (-0.0f64).to_bits());
        assert_eq!(f64_to_f16(-0.0), 0x8000);
        // Every half survives the round trip, NaN payloads included.
        for bits in 0..=u16::MAX {
            assert_eq!(f64_to_f16(f16_to_f64(bits)), bits, "{bits:#06x}");
        }
        // Round half to even: 1 + 2^-11 is halfway between 1 and the next half.
        assert_eq!(f64_to_f16(1.0 + f64::powi(2.0, -11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * f64::powi(2.0, -11)), 0x3c02);
        assert_eq!(
            f64_to_f16(1.0 + f64::powi(2.0, -11) + f64::powi(2.0, -40)),
            0x3c01
        );
        // Halfway in the subnormal range, and below half the smallest subnormal.
        assert_eq!(f64_to_f16(f64::powi(2.0, -25)), 0x0000);
        assert_eq!(f64_to_f16(1.5 * f64::powi(2.0, -24)), 0x0002);
        assert_eq!(f64_to_f16(f64::powi(2.0, -25) * 1.0000001), 0x0001);
        assert_eq!(f64_to_f16(f64::powi(2.0, -26)), 0x0000);
        assert_eq!(f64_to_f16(-1e-300), 0x8000);
        assert_eq!(f64_to_f16(f64::MIN_POSITIVE / 4.0), 0x0000);
        // Rounding up from the largest subnormal gives the smallest normal.
        assert_eq!(f64_to_f16(6.1e-5), 0x03ff);
        assert_eq!(f64_to_f16(6.102e-5), 0x0400);
        // Overflow: 65519.99 rounds to 65504, 65520 (halfway, odd) to infinity.
        assert_eq!(f64_to_f16(65519.99), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(-1e10), 0xfc00);
        assert!(f16_to_f64(f64_to_f16(f64::NAN)).is_nan());
        assert_eq!(
            f64_to_f16(f64::from_bits(0x7ff0_0000_0000_0001)) & 0x7c00,
            0x7c00
        );
        assert_ne!(f64_to_f16(f64::from_bits(0x7ff0_0000_0000_0001)), 0x7c00);
    }
}
