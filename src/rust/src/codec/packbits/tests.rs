//! Both packbits codecs: the registry's against values worked out by hand
//! from its specification and against a bit-by-bit reading of it; the
//! word-at-a-time booleans against the byte-by-byte packing they replace.

use super::bools::{self, BitOrder};
use super::{REGISTRY_SPEC, SPEC};
use crate::codec::test_util::{ctx, unhex};
use crate::codec::{BytesToBytes, Warnings};
use crate::dtype::DataType;
use serde_json::json;

fn codec(cfg: serde_json::Value, dtype: DataType) -> Box<dyn BytesToBytes> {
    REGISTRY_SPEC
        .build_bytes(cfg.as_object().unwrap(), dtype)
        .unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Encodes `input` to `packed` and decodes `packed` (as a chunk of `n`
/// elements) to `decoded`, all in hex.
fn check(c: &dyn BytesToBytes, n: usize, input: &str, packed: &str, decoded: &str) {
    let w = Warnings::default();
    assert_eq!(hex(&c.encode(unhex(input)).unwrap()), packed, "{c:?}");
    let got = c
        .decode_shaped(&unhex(packed), &[n], ctx(&w).decode_to(None))
        .unwrap();
    assert_eq!(hex(&got), decoded, "{c:?}");
}

#[test]
fn four_bits_of_uint8_pack_two_to_a_byte_with_each_padding_encoding() {
    // 1, 2, 3, 15, 0: nibbles from the low one up, 4 bits of padding.
    let input = "0102030f00";
    for (padding, packed) in [
        ("none", "21f300"),
        ("first_byte", "0421f300"),
        ("last_byte", "21f30004"),
    ] {
        let c = codec(
            json!({"padding_encoding": padding, "last_bit": 3}),
            DataType::UInt8,
        );
        check(c.as_ref(), 5, input, packed, input);
    }
}

#[test]
fn three_bits_of_int8_extend_their_sign_and_of_uint8_do_not() {
    // -1, 3, -4, 2 as 111 011 100 010 from the lowest bit: 0x1f, 0x05.
    let c = codec(json!({"first_bit": 0, "last_bit": 2}), DataType::Int8);
    check(c.as_ref(), 4, "ff03fc02", "1f05", "ff03fc02");
    let u = codec(json!({"last_bit": 2}), DataType::UInt8);
    check(u.as_ref(), 4, "ff03fc02", "1f05", "07030402");
}

#[test]
fn bits_after_first_bit_shift_back_and_extend_the_sign_to_all_sixteen_bits() {
    // int16 bits 1 to 4. Chunk [2, -2, 6]: 0001 1111 0011 -> f1 03, 4
    // padding bits. Chunk [-16, 30]: 1000 1111 -> f8; 30 (0x001e) keeps
    // 1111, whose top bit is the sign: it reads as -2 (0xfffe).
    let c = codec(
        json!({"padding_encoding": "last_byte", "first_bit": 1, "last_bit": 4}),
        DataType::Int16,
    );
    check(c.as_ref(), 3, "0200feff0600", "f10304", "0200feff0600");
    check(c.as_ref(), 2, "f0ff1e00", "f800", "f0fffeff");
    // The bit below first_bit reads as 0: 3 -> 2, -1 -> -2.
    check(c.as_ref(), 2, "0300ffff", "f100", "0200feff");
}

#[test]
fn booleans_pack_from_the_lowest_bit() {
    // 1 0 1 1 0 0 0 1 | 1 1: 0b10001101, 0b11, 6 padding bits.
    let c = codec(json!({"padding_encoding": "first_byte"}), DataType::Bool);
    check(
        c.as_ref(),
        10,
        "01000101000000010101",
        "068d03",
        "01000101000000010101",
    );
}

#[test]
fn complex_numbers_pack_each_part_and_unkept_bits_read_as_zero() {
    // The upper 16 bits of each float32 part: 1 + 2i -> 3f80, 4000;
    // -1.5 + 0.1i -> bfc0, 3dcc (0.1f32 is 0x3dcccccd: it reads back as
    // 0x3dcc0000). Floats are not sign-extended.
    let c = codec(
        json!({"first_bit": 16, "last_bit": 31}),
        DataType::Complex64,
    );
    let input: Vec<u8> = [1.0f32, 2.0, -1.5, 0.1]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let w = Warnings::default();
    let packed = c.encode(input).unwrap();
    assert_eq!(hex(&packed), "803f0040c0bfcc3d");
    let back = c
        .decode_shaped(&packed, &[2], ctx(&w).decode_to(None))
        .unwrap();
    let parts: Vec<u32> = back
        .chunks(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(parts, [0x3f80_0000, 0x4000_0000, 0xbfc0_0000, 0x3dcc_0000]);
}

#[test]
fn all_bits_of_whole_bytes_are_the_elements_little_endian() {
    let c = codec(json!({"padding_encoding": "last_byte"}), DataType::Float64);
    let input = hex(&1.5f64.to_le_bytes());
    check(c.as_ref(), 1, &input, &format!("{input}00"), &input);
    assert_eq!(
        serde_json::Value::from(c.configuration()),
        json!({"padding_encoding": "last_byte", "first_bit": 0, "last_bit": 63})
    );
    // As zarrs writes them: without the padding byte.
    let w = Warnings::default();
    let bare = c
        .decode_shaped(&unhex(&input), &[1], ctx(&w).decode_to(None))
        .unwrap();
    assert_eq!(hex(&bare), input);
}

/// The specification read bit by bit: element part `i`'s kept bit `j` is
/// bit `i * kept + j` of the packed sequence, bit `b` of which is bit
/// `b % 8` of byte `b / 8`.
fn reference_pack(input: &[u8], part: usize, first: usize, kept: usize) -> Vec<u8> {
    let parts = input.len() / part;
    let mut out = vec![0u8; (parts * kept).div_ceil(8)];
    for i in 0..parts {
        for j in 0..kept {
            let bit = first + j;
            let v = (input[i * part + bit / 8] >> (bit % 8)) & 1;
            let at = i * kept + j;
            out[at / 8] |= v << (at % 8);
        }
    }
    out
}

fn reference_unpack(
    packed: &[u8],
    parts: usize,
    part: usize,
    first: usize,
    kept: usize,
    signed: bool,
) -> Vec<u8> {
    let mut out = vec![0u8; parts * part];
    for i in 0..parts {
        let mut top = 0;
        for j in 0..kept {
            let at = i * kept + j;
            top = (packed[at / 8] >> (at % 8)) & 1;
            let bit = first + j;
            out[i * part + bit / 8] |= top << (bit % 8);
        }
        if signed && top == 1 {
            for bit in first + kept..8 * part {
                out[i * part + bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    out
}

#[test]
fn every_bit_range_of_every_type_packs_as_the_specification_reads() {
    use DataType::*;
    let w = Warnings::default();
    let types = [
        Int8, UInt8, Int16, UInt16, Float16, Int32, UInt32, Float32, Int64, UInt64, Float64,
        Complex64, Complex128,
    ];
    for dtype in types {
        let parts_per = if matches!(dtype, Complex64 | Complex128) {
            2
        } else {
            1
        };
        let part = dtype.size() / parts_per;
        let bits = 8 * part;
        for (first, last) in [
            (0, bits - 1),
            (0, 2),
            (3, bits - 1),
            (1, bits / 2 + 3),
            (bits - 1, bits - 1),
        ] {
            for n in [0usize, 1, 7, 13, 33] {
                let input: Vec<u8> = (0..n * dtype.size())
                    .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0])
                    .collect();
                let c = codec(json!({"first_bit": first, "last_bit": last}), dtype);
                let kept = last - first + 1;
                let want = reference_pack(&input, part, first, kept);
                let packed = c.encode(input.clone()).unwrap();
                assert_eq!(packed, want, "{} {first}..{last} n {n}", dtype.name());
                let back = c
                    .decode_shaped(&packed, &[n], ctx(&w).decode_to(None))
                    .unwrap();
                let signed = dtype.is_signed();
                let want = reference_unpack(&packed, n * parts_per, part, first, kept, signed);
                assert_eq!(back, want, "{} {first}..{last} n {n}", dtype.name());
            }
        }
    }
}

#[test]
fn the_element_count_comes_from_the_shape_the_padding_byte_or_a_length_only_one_count_fills() {
    let w = Warnings::default();
    let c = codec(
        json!({"padding_encoding": "first_byte", "last_bit": 2}),
        DataType::UInt8,
    );
    let packed = c.encode(vec![1, 2, 3, 4, 5]).unwrap();
    assert_eq!(
        c.decode(packed, ctx(&w).decode_to(None)).unwrap(),
        vec![1, 2, 3, 4, 5]
    );
    // 5 x 3 bits fill 2 bytes, and so would 4: without a padding byte only
    // the shape says which.
    let none = codec(json!({"last_bit": 2}), DataType::UInt8);
    let packed = none.encode(vec![1, 2, 3, 4, 5]).unwrap();
    let e = none
        .decode(packed.clone(), ctx(&w).decode_to(None))
        .unwrap_err();
    assert!(e.message().contains("shape"), "{}", e.message());
    assert_eq!(
        none.decode_shaped(&packed, &[5], ctx(&w).decode_to(None))
            .unwrap(),
        vec![1, 2, 3, 4, 5]
    );
    let whole = codec(json!({"last_bit": 11}), DataType::UInt16);
    let packed = whole.encode(vec![1, 0, 2, 0]).unwrap();
    assert_eq!(packed.len(), 3);
    assert_eq!(
        whole.decode(packed, ctx(&w).decode_to(None)).unwrap(),
        vec![1, 0, 2, 0]
    );
}

#[test]
fn a_chunk_of_the_wrong_length_or_padding_is_corrupt() {
    let w = Warnings::default();
    let c = codec(
        json!({"padding_encoding": "last_byte", "last_bit": 3}),
        DataType::UInt8,
    );
    for bad in ["21f3", "21f30003", "21f3000400", ""] {
        let e = c
            .decode_shaped(&unhex(bad), &[5], ctx(&w).decode_to(None))
            .unwrap_err();
        assert_eq!(e.kind(), "codec", "{bad}: {}", e.message());
        assert!(e.message().contains("packbits"), "{}", e.message());
    }
    let first = codec(json!({"padding_encoding": "first_byte"}), DataType::Bool);
    for bad in ["", "08", "0901", "0800"] {
        let e = first
            .decode(unhex(bad), ctx(&w).decode_to(None))
            .unwrap_err();
        assert_eq!(e.kind(), "codec", "{bad}: {}", e.message());
    }
}

#[test]
fn bit_ranges_outside_the_type_and_other_types_are_refused() {
    let build = |cfg: serde_json::Value, dtype| {
        REGISTRY_SPEC
            .build_bytes(cfg.as_object().unwrap(), dtype)
            .unwrap_err()
    };
    for (cfg, dtype, kind, words) in [
        (
            json!({"last_bit": 8}),
            DataType::UInt8,
            "metadata",
            "past the 8 bits",
        ),
        (
            json!({"first_bit": 5, "last_bit": 4}),
            DataType::Int32,
            "metadata",
            "less than",
        ),
        (
            json!({"first_bit": 1}),
            DataType::Bool,
            "metadata",
            "less than",
        ),
        (
            json!({"first_bit": -1}),
            DataType::Int32,
            "metadata",
            "first_bit",
        ),
        (
            json!({"padding_encoding": "start_byte"}),
            DataType::Int32,
            "metadata",
            "padding_encoding",
        ),
        (json!({}), DataType::String, "unsupported", "string"),
        (json!({}), DataType::Record(3), "unsupported", "packbits"),
    ] {
        let e = build(cfg.clone(), dtype);
        assert_eq!(e.kind(), kind, "{cfg}: {}", e.message());
        assert!(e.message().contains("packbits"), "{}", e.message());
        assert!(e.message().contains(words), "{cfg}: {}", e.message());
    }
}

/// numcodecs' packing as the codec did it before, one boolean at a time.
fn bytewise_pack(input: &[u8]) -> Vec<u8> {
    input
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | (u8::from(b != 0) << (7 - i)))
        })
        .collect()
}

#[test]
fn word_at_a_time_booleans_are_bit_for_bit_the_bytewise_ones() {
    for order in [BitOrder::MsbFirst, BitOrder::LsbFirst] {
        for b in 0..=255u8 {
            let bits: Vec<u8> = (0..8)
                .map(|i| match order {
                    BitOrder::MsbFirst => (b >> (7 - i)) & 1,
                    BitOrder::LsbFirst => (b >> i) & 1,
                })
                .collect();
            assert_eq!(bools::unpack(&[b], 8, order), bits);
            // Any byte but zero is true.
            let loud: Vec<u8> = bits.iter().map(|&x| x * (0x80 | b)).collect();
            let mut out = Vec::new();
            bools::pack(&loud, order, &mut out);
            assert_eq!(out, [b], "{order:?}");
        }
    }
    for n in 0..70usize {
        let input: Vec<u8> = (0..n)
            .map(|i| u8::from(i % 3 == 0 || i % 7 == 2) * (i as u8 | 1))
            .collect();
        let mut out = Vec::new();
        bools::pack(&input, BitOrder::MsbFirst, &mut out);
        assert_eq!(out, bytewise_pack(&input), "n {n}");
        let back: Vec<u8> = (0..n).map(|i| (out[i / 8] >> (7 - i % 8)) & 1).collect();
        assert_eq!(bools::unpack(&out, n, BitOrder::MsbFirst), back, "n {n}");
    }
    let w = Warnings::default();
    let numcodecs = SPEC
        .build_bytes(&Default::default(), DataType::Bool)
        .unwrap();
    let input: Vec<u8> = (0..1001u32)
        .map(|i| u8::from(i.count_ones() % 2 == 1))
        .collect();
    let packed = numcodecs.encode(input.clone()).unwrap();
    assert_eq!(packed[0], 7);
    assert_eq!(packed[1..], bytewise_pack(&input)[..]);
    assert_eq!(
        numcodecs
            .decode(packed, ctx(&w).decode_to(Some(1001)))
            .unwrap(),
        input
    );
}
