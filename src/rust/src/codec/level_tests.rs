//! What every integer-member compressor (gzip, zlib, bz2, lz4) must do,
//! checked from one table: round trips at each value of its member,
//! numcodecs' (or CPython's) output read back, bad streams and overlong
//! output refused as codec errors, bad configurations as metadata errors.
//! Each codec's file keeps the checks of its own format.

use super::super::test_util::{assert_decodes, built, ctx, stepped_doubles, unhex};
use super::super::{bz2, gzip, lz4, zlib};
use super::super::{BytesToBytes, Warnings};
use super::CodecSpec;
use serde_json::{json, Value};

struct Case {
    spec: &'static CodecSpec,
    /// The member's values to round-trip; all but `stored` compress.
    values: &'static [i64],
    /// A value that stores the data as it is (level 0).
    stored: Option<i64>,
    /// Another implementation's stream (hex) and what it holds.
    known: (&'static str, &'static [u8]),
    /// Streams that are not the format, besides the empty one.
    garbage: &'static [&'static [u8]],
    /// Values of the member numcodecs refuses (JSON).
    refused: &'static str,
    /// The name the codec's decoding errors give.
    short: &'static str,
}

const HELLO: &[u8] = b"hello zarr\n";

fn cases() -> [Case; 4] {
    [
        Case {
            spec: &gzip::SPEC,
            values: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            stored: Some(0),
            // gzip.compress(b"hello zarr\n", mtime=0) from CPython 3.12.
            known: (
                "1f8b0800000000000203cb48cdc9c957a84a2c2ae2020087d14e6b0b000000",
                HELLO,
            ),
            garbage: &[
                &[0x1f],
                b"not compressed at all",
                &[0x1f, 0x8b, 0x08, 0, 0, 0, 0xff],
            ],
            refused: r#"[null, 10, -1, 1.5, "1"]"#,
            short: "gzip",
        },
        Case {
            spec: &zlib::SPEC,
            values: &[-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            stored: Some(0),
            // numcodecs.Zlib(level=1).encode(b"hello zarr\n") (numcodecs 0.16).
            known: ("7801cb48cdc9c957a84a2c2ae20200199403fe", HELLO),
            garbage: &[
                &[0x78],
                b"not compressed",
                &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0],
            ],
            refused: r#"[10, -2, 1.5, "1"]"#,
            short: "zlib",
        },
        Case {
            spec: &bz2::SPEC,
            values: &[1, 5, 9],
            stored: None,
            // numcodecs.BZ2(level=9).encode(b"hello zarr\n") (numcodecs 0.16).
            known: (
                "425a6839314159265359ba060ddc00000251800010400022449010200031064c414c0f280963ed5e177245385090ba060ddc",
                HELLO,
            ),
            garbage: &[b"BZh9garbage"],
            refused: "[0, 10]",
            short: "bz2",
        },
        Case {
            spec: &lz4::SPEC,
            values: &[1, 10, 100],
            stored: None,
            // numcodecs.LZ4().encode(b"hello zarr hello zarr hello zarr\n") (numcodecs 0.16).
            known: (
                "21000000bd68656c6c6f207a617272200b00507a6172720a",
                b"hello zarr hello zarr hello zarr\n",
            ),
            garbage: &[&[1, 0, 0]],
            refused: r#"["fast"]"#,
            short: "lz4",
        },
    ]
}

/// The codec of `case` with its member at `value`.
fn codec(case: &Case, value: i64) -> Box<dyn BytesToBytes> {
    built(case.spec, json!({ case.spec.params[0].key: value })).unwrap()
}

#[test]
fn each_value_round_trips_with_and_without_the_expected_size() {
    let w = Warnings::default();
    let data = stepped_doubles();
    for case in cases() {
        for &value in case.values {
            let what = format!("{} {value}", case.spec.name);
            let c = codec(&case, value);
            let enc = c.encode(data.clone()).unwrap();
            if case.stored != Some(value) {
                assert!(enc.len() < data.len() / 2, "{what}: {} bytes", enc.len());
            }
            assert_decodes(&*c, &enc, &data, &what);
            let empty = c.encode(Vec::new()).unwrap();
            let dec = c.decode(empty, ctx(&w).decode_to(Some(0))).unwrap();
            assert_eq!(dec, Vec::<u8>::new(), "{what}");
            assert_eq!(
                c.to_json(),
                json!({"name": case.spec.name, "configuration": {case.spec.params[0].key: value}})
            );
        }
    }
}

#[test]
fn streams_of_other_implementations_decode() {
    for case in cases() {
        let (hex, plain) = case.known;
        assert_decodes(&*codec(&case, case.values[0]), &unhex(hex), plain, "");
    }
}

#[test]
fn garbage_and_cut_streams_are_codec_errors_naming_the_codec() {
    let w = Warnings::default();
    let data = stepped_doubles();
    for case in cases() {
        let c = codec(&case, case.values[case.values.len() - 1]);
        let enc = c.encode(data.clone()).unwrap();
        let n = enc.len();
        let cut = [n - 1, n - 4, n / 2, 3].map(|at| enc[..at].to_vec());
        let garbage = case.garbage.iter().map(|g| g.to_vec());
        for bad in cut.into_iter().chain(garbage).chain([vec![]]) {
            for len in [Some(data.len()), None] {
                let e = c.decode(bad.clone(), ctx(&w).decode_to(len)).unwrap_err();
                assert_eq!(e.kind(), "codec", "{} {bad:?}", case.spec.name);
                assert!(e.message().contains(case.short), "{}", e.message());
            }
        }
    }
}

#[test]
fn output_beyond_the_expected_size_is_refused() {
    let w = Warnings::default();
    for case in cases() {
        let c = codec(&case, case.values[0]);
        let enc = c.encode(stepped_doubles()).unwrap();
        let e = c.decode(enc, ctx(&w).decode_to(Some(1000))).unwrap_err();
        assert_eq!(e.kind(), "codec", "{}", case.spec.name);
        assert!(e.message().contains("1000"), "{}", e.message());
    }
}

#[test]
fn configurations_numcodecs_refuses_are_metadata_errors() {
    for case in cases() {
        let key = case.spec.params[0].key;
        let values: Vec<Value> = serde_json::from_str(case.refused).unwrap();
        let mut refused: Vec<Value> = values.iter().map(|v| json!({ key: v })).collect();
        // A required member may not be left out.
        if case.spec.params[0].absent.is_none() {
            refused.push(json!({}));
        }
        for cfg in refused {
            let e = built(case.spec, cfg.clone()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{} {cfg}", case.spec.name);
            assert!(e.message().contains(case.spec.name), "{}", e.message());
        }
    }
}
