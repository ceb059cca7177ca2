//! Checksums compared with what numcodecs 0.17.1 writes (hex constants
//! from `codec.encode(...)`), and the strict/lenient handling of mismatches.

use super::super::test_util::{built, ctx, ctx_of, unhex, CHUNK};
use super::super::{BytesToBytes, CodecContext, Warnings};
use super::*;

/// numpy.arange(7, dtype="<i2").tobytes() + b"\x05": 15 bytes, odd length.
fn small() -> Vec<u8> {
    let mut d: Vec<u8> = (0..7i16).flat_map(i16::to_le_bytes).collect();
    d.push(5);
    d
}

/// (numpy.arange(1000, dtype="<u2") * 37).tobytes() + b"\xab".
fn odd_words() -> Vec<u8> {
    let mut d: Vec<u8> = (0..1000u16)
        .flat_map(|i| i.wrapping_mul(37).to_le_bytes())
        .collect();
    d.push(0xab);
    d
}

/// (numpy.arange(5000, dtype="<u2") * 65535).tobytes(): large words, many
/// 360-word blocks.
fn large_words() -> Vec<u8> {
    (0..5000u16)
        .flat_map(|i| i.wrapping_mul(65535).to_le_bytes())
        .collect()
}

fn codec(spec: &CodecSpec, cfg: serde_json::Value) -> Box<dyn BytesToBytes> {
    built(spec, cfg).unwrap()
}

fn tail(v: &[u8]) -> String {
    v[v.len() - 4..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn head(v: &[u8]) -> String {
    v[..4].iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn crc32_and_adler32_match_numcodecs_at_start_and_end() {
    let w = Warnings::default();
    let cases = [
        (
            &CRC32,
            "start",
            "387cec23000001000200030004000500060005",
            "b2a942b9",
        ),
        (
            &CRC32,
            "end",
            "000001000200030004000500060005387cec23",
            "b2a942b9",
        ),
        (
            &ADLER32,
            "start",
            "1b009900000001000200030004000500060005",
            "4609c132",
        ),
        (
            &ADLER32,
            "end",
            "0000010002000300040005000600051b009900",
            "4609c132",
        ),
    ];
    for (spec, at, known, big) in cases {
        let c = codec(spec, json!({ "location": at }));
        assert_eq!(
            c.encode(small()).unwrap(),
            unhex(known),
            "{} {at}",
            spec.name
        );
        let enc = c.encode(odd_words()).unwrap();
        let sum = if at == "start" {
            head(&enc)
        } else {
            tail(&enc)
        };
        assert_eq!(sum, big, "{} {at}", spec.name);
        assert_eq!(
            c.decode(unhex(known), ctx(&w).decode_to(Some(15))).unwrap(),
            small()
        );
        assert!(c.decode(enc, ctx(&w).decode_to(None)).unwrap() == odd_words());
    }
    // Without a location, numcodecs puts these in front.
    assert_eq!(
        codec(&CRC32, json!({})).encode(small()).unwrap(),
        unhex(cases[0].2)
    );
    // Empty input: crc32 0, adler32 1.
    assert_eq!(codec(&CRC32, json!({})).encode(vec![]).unwrap(), vec![0; 4]);
    assert_eq!(
        codec(&ADLER32, json!({})).encode(vec![]).unwrap(),
        vec![1, 0, 0, 0]
    );
    assert!(w.take().is_empty());
}

#[test]
fn fletcher32_matches_numcodecs() {
    let w = Warnings::default();
    let c = codec(&FLETCHER32, json!({}));
    let known = unhex("000001000200030004000500060005001a0052");
    assert_eq!(c.encode(small()).unwrap(), known);
    assert_eq!(c.decode(known, ctx(&w).decode_to(None)).unwrap(), small());
    assert_eq!(tail(&c.encode(odd_words()).unwrap()), "03213846");
    assert_eq!(tail(&c.encode(large_words()).unwrap()), "606c6c3e");
    assert!(w.take().is_empty());
}

#[test]
fn jenkins_lookup3_matches_numcodecs() {
    let w = Warnings::default();
    let plain = codec(&JENKINS_LOOKUP3, json!({"initval": 0, "prefix": null}));
    let seeded = codec(&JENKINS_LOOKUP3, json!({ "initval": 1230 }));
    let known = unhex("0000010002000300040005000600055b79a113");
    assert_eq!(plain.encode(small()).unwrap(), known);
    assert_eq!(
        plain.decode(known, ctx(&w).decode_to(None)).unwrap(),
        small()
    );
    assert_eq!(
        seeded.encode(small()).unwrap(),
        unhex("00000100020003000400050006000584a3ac4c")
    );
    assert_eq!(tail(&plain.encode(odd_words()).unwrap()), "691776e4");
    assert_eq!(tail(&seeded.encode(odd_words()).unwrap()), "84195c02");
    assert_eq!(tail(&plain.encode(large_words()).unwrap()), "353ef2da");
    assert_eq!(tail(&seeded.encode(large_words()).unwrap()), "cb8036b5");
    // Lengths 0, 12 and 24: no block, one tail of 12, a block and a tail.
    assert_eq!(plain.encode(vec![]).unwrap(), unhex("efbeadde"));
    let twelve: Vec<u8> = (0..12).collect();
    assert_eq!(tail(&plain.encode(twelve).unwrap()), "93a54a5e");
    let more: Vec<u8> = (0..24).collect();
    assert_eq!(tail(&plain.encode(more).unwrap()), "53dd0a9c");
    // HDF5's check values (numcodecs' own tests use them too).
    let four = b"Four score and seven years ago";
    assert_eq!(lookup3(four, 0), 0x1777_0551);
    assert_eq!(lookup3(four, 1), 0xCD62_8161);
    assert_eq!(lookup3(b"", 0xDEAD_BEEF), 0xBD5B_7DDE);
    assert!(w.take().is_empty());
}

fn strict(w: &Warnings) -> CodecContext<'_> {
    ctx_of(w, true)
}

#[test]
fn a_mismatch_warns_by_default_and_is_an_error_when_strict() {
    for spec in [&CRC32, &ADLER32, &FLETCHER32, &JENKINS_LOOKUP3] {
        let c = codec(
            spec,
            (spec.defaults.unwrap())(crate::dtype::DataType::UInt8, 1).into(),
        );
        let mut enc = c.encode(small()).unwrap();
        let at = if spec.name.ends_with("32") && spec.name != "numcodecs.fletcher32" {
            6
        } else {
            2
        };
        enc[at] ^= 0x10;
        let w = Warnings::default();
        let mut flipped = small();
        flipped[2] ^= 0x10;
        assert_eq!(
            c.decode(enc.clone(), ctx(&w).decode_to(None)).unwrap(),
            flipped
        );
        let msgs = w.take();
        assert_eq!(msgs.len(), 1, "{}", spec.name);
        assert!(
            msgs[0].contains(spec.name) && msgs[0].contains(CHUNK),
            "{}",
            msgs[0]
        );
        let e = c.decode(enc, strict(&w).decode_to(None)).unwrap_err();
        assert_eq!(e.kind(), "checksum");
        assert!(e.message().contains(CHUNK), "{}", e.message());
        assert!(w.take().is_empty());
        let e = c
            .decode(vec![1, 2, 3], ctx(&w).decode_to(None))
            .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains(spec.name));
    }
}

#[test]
fn configurations_read_and_write_as_numcodecs_has_them() {
    assert_eq!(
        codec(&CRC32, json!({})).configuration(),
        super::super::config(&[("location", "start".into())])
    );
    assert_eq!(codec(&FLETCHER32, json!({})).configuration(), Map::new());
    // zarr-python refuses numcodecs.* entries without a configuration.
    assert_eq!(
        codec(&FLETCHER32, json!({})).to_json(),
        json!({"name": "numcodecs.fletcher32", "configuration": {}})
    );
    let e = built(&JENKINS_LOOKUP3, json!({"prefix": "abc"})).unwrap_err();
    assert!(e.message().contains("prefix"), "{}", e.message());
    let e = built(&CRC32, json!({"location": "middle"})).unwrap_err();
    assert!(e.message().contains("location"), "{}", e.message());
    let e = built(&JENKINS_LOOKUP3, json!({"initval": -1})).unwrap_err();
    assert!(e.message().contains("initval"), "{}", e.message());
    // Zarr v2 entries.
    let v2 = CRC32.v2.as_ref().unwrap();
    let mut ts = 8;
    let cfg = json!({"id": "crc32", "location": "end"});
    let entry = (v2.from_v2)(cfg.as_object().unwrap(), &mut ts, "compressor").unwrap();
    assert_eq!(
        entry,
        json!({"name": "numcodecs.crc32", "configuration": {"location": "end"}})
    );
    assert_eq!(ts, 1);
    let j = JENKINS_LOOKUP3.v2.as_ref().unwrap();
    let back = (j.to_v2)(json!({"initval": 5}).as_object().unwrap());
    assert_eq!(Value::from(back), json!({"initval": 5, "prefix": null}));
}
