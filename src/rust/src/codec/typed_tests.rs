//! The typed loops against the general path of numeric.rs, element by
//! element, for every pair of element types (float16 and big-endian ones
//! included, which must fall back): the same bytes, NaN payloads and
//! rounding included, and no result where the general path refuses a value.

use super::super::astype::AsType;
use super::super::fixedscaleoffset::{DivAdd, FixedScaleOffset};
use super::super::numeric::{Elem, Kind, Num};
use super::super::test_util::ctx;
use super::super::{BytesToBytes, Warnings};
use super::*;
use crate::dtype::DataType;
use serde_json::json;

const TYPES: [(&str, DataType); 13] = [
    ("|i1", DataType::Int8),
    ("<i2", DataType::Int16),
    ("<i4", DataType::Int32),
    ("<i8", DataType::Int64),
    ("|u1", DataType::UInt8),
    ("<u2", DataType::UInt16),
    ("<u4", DataType::UInt32),
    ("<u8", DataType::UInt64),
    ("<f4", DataType::Float32),
    ("<f8", DataType::Float64),
    ("<f2", DataType::Float16),
    (">i4", DataType::Int32),
    (">f8", DataType::Float64),
];

const INTS: [i128; 25] = [
    0,
    1,
    -1,
    2,
    7,
    100,
    127,
    128,
    255,
    256,
    -128,
    -129,
    32767,
    32768,
    65535,
    -32768,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    (1 << 32) - 1,
    (1 << 53) + 1,
    i64::MAX as i128,
    i64::MIN as i128,
    u64::MAX as i128,
    12_345_678_901_234_567,
];

fn floats() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -2.5,
        -0.99,
        0.499_999_999_999_999_94,
        1.0 / 3.0,
        127.9,
        128.0,
        -128.9,
        255.5,
        256.0,
        32767.7,
        -32768.9,
        65535.99,
        2_147_483_647.5,
        -2_147_483_648.9,
        4_294_967_295.9,
        9_223_372_036_854_775_808.0,
        18_446_744_073_709_551_616.0,
        -9.3e18,
        1e30,
        3.402_823_5e38,
        1e300,
        f64::MIN_POSITIVE,
        5e-324,
        1e-40,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::INFINITY,
        f64::NEG_INFINITY,
    ]
}

/// Each test value written as one element of `e`, one buffer each.
fn elements(e: Elem) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for &i in &INTS {
        let mut b = Vec::new();
        match e.kind {
            Kind::Float => e.write(Num::Float(i as f64), &mut b),
            _ => e.write(Num::Int(e.wrap(i)), &mut b),
        }
        out.push(b);
    }
    if e.kind == Kind::Float {
        for x in floats() {
            let mut b = Vec::new();
            e.write_float(x, &mut b);
            out.push(b);
        }
    }
    out
}

fn elem(s: &str) -> Elem {
    Elem::parse(s, "t", "dtype").unwrap()
}

/// Whether a typed loop covers the type.
fn typed(e: Elem) -> bool {
    !e.big && (e.kind != Kind::Float || e.size != 2)
}

#[test]
fn astype_decodes_every_pair_of_types_as_the_general_path_does() {
    let w = Warnings::default();
    let mut checked = 0;
    for (stored, _) in TYPES {
        for (array, dt) in TYPES {
            let cfg = json!({"encode_dtype": stored, "decode_dtype": array});
            let codec = AsType::from_config(cfg.as_object().unwrap(), dt).unwrap();
            let (from, to) = (elem(stored), elem(array));
            let all: Vec<Vec<u8>> = elements(from);
            for input in all.iter().chain([&all.concat()]) {
                let want = codec.decode_general(input, None);
                let got = codec.decode_slice(input, ctx(&w).decode_to(None));
                match (&want, &got) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{stored} -> {array} {input:?}"),
                    (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
                    _ => panic!("{stored} -> {array} {input:?}: {want:?} against {got:?}"),
                }
                if typed(from) && typed(to) {
                    let t = cast(from, to, input).unwrap();
                    if from != to {
                        assert_eq!(convert_plain(from, to, input, &Cast), t);
                    }
                    assert_eq!(t, want.ok(), "{stored} -> {array} {input:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 2000, "{checked}");
}

#[test]
fn fixedscaleoffset_decodes_every_pair_of_types_as_the_general_path_does() {
    let w = Warnings::default();
    let mut checked = 0;
    let scales = [
        json!({"scale": 10, "offset": 1000}),
        json!({"scale": 0.1, "offset": -3.5}),
        json!({"scale": 3, "offset": 0}),
        json!({"scale": 1e-3, "offset": 2.5e9}),
        json!({"scale": 0.3, "offset": 0.7}),
    ];
    for (stored, _) in TYPES {
        for (array, dt) in TYPES {
            for so in &scales {
                let mut cfg = so.clone();
                cfg["dtype"] = array.into();
                cfg["astype"] = stored.into();
                let Ok(codec) = FixedScaleOffset::from_config(cfg.as_object().unwrap(), dt) else {
                    // (an integer offset or scale the integer type cannot hold)
                    continue;
                };
                let (from, to) = (elem(stored), elem(array));
                let all = elements(from);
                for input in all.iter().chain([&all.concat()]) {
                    let want = codec.decode_general(input, None);
                    let got = codec.decode_slice(input, ctx(&w).decode_to(None));
                    match (&want, &got) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{cfg} {input:?}"),
                        (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
                        _ => panic!("{cfg} {input:?}: {want:?} against {got:?}"),
                    }
                    if typed(from) && typed(to) {
                        let conv = DivAdd::of(&codec);
                        let t = convert(from, to, input, &conv).unwrap();
                        assert_eq!(convert_plain(from, to, input, &conv), t);
                        assert_eq!(t, want.ok(), "{cfg} {input:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 8000, "{checked}");
}

#[test]
fn typed_casts_keep_numpys_edge_values() {
    let (f8, f4, u1, i8_) = (elem("<f8"), elem("<f4"), elem("|u1"), elem("<i8"));
    // A signalling NaN of float64 becomes a quiet one in float32, as C's
    // cast (NumPy's) makes it.
    let snan = 0x7ff0_0000_0000_0001u64.to_le_bytes();
    let got = cast(f8, f4, &snan).unwrap().unwrap();
    assert!(f32::from_le_bytes(got[..].try_into().unwrap()).is_nan());
    // Half way between two floats: to even.
    let x = 1.0 + f64::from(f32::EPSILON) / 2.0;
    let got = cast(f8, f4, &x.to_le_bytes()).unwrap().unwrap();
    assert_eq!(got, 1.0f32.to_le_bytes());
    // Truncation towards zero; out of range is left to the general path.
    let got = cast(
        f8,
        u1,
        &[255.9f64.to_le_bytes(), (-0.9f64).to_le_bytes()].concat(),
    );
    assert_eq!(got.unwrap(), Some(vec![255, 0]));
    assert_eq!(cast(f8, u1, &256.0f64.to_le_bytes()).unwrap(), None);
    assert_eq!(cast(f8, u1, &f64::NAN.to_le_bytes()).unwrap(), None);
    // 64-bit integers round once into float32, not through float64.
    let v: i64 = (1 << 60) + (1 << 36) + 1;
    let got = cast(i8_, f4, &v.to_le_bytes()).unwrap().unwrap();
    assert_eq!(got, (v as f32).to_le_bytes());
    assert_ne!(v as f32, v as f64 as f32);
    // Integers wrap.
    let got = cast(elem("<i4"), elem("<i2"), &70_000i32.to_le_bytes());
    assert_eq!(
        got.unwrap(),
        Some((70_000i32 as i16).to_le_bytes().to_vec())
    );
}
