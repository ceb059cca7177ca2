//! Tests of fill values: every data type, the special float forms, and
//! half-precision conversions.

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
