//! numcodecs' filters (`fixedscaleoffset`, `quantize`, `bitround`,
//! `packbits`, `astype`) against the bytes numcodecs 0.17 gives with
//! NumPy 2: `codec.encode(input)` and `codec.decode(encoded)`.

use super::test_util::{ctx, unhex};
use super::{spec, CodecChain, Warnings};
use crate::dtype::DataType;
use serde_json::{json, Value};

struct V {
    codec: &'static str,
    config: &'static str,
    array: DataType,
    input: &'static str,
    encoded: &'static str,
    decoded: &'static str,
    /// False where numcodecs stores a value its type cannot hold (999.5
    /// is -5 before the cast to uint8, which NumPy wraps to 251): the
    /// engine refuses to write it.
    encodes: bool,
}

const VECTORS: &[V] = &[
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 10, "offset": 1000, "dtype": "<f8", "astype": "|u1"}"#,
        array: DataType::Float64,
        input: "0000000000408f406666666666408f403333333333418f400000000000428f4000000000003c8f400000000000548f400000000000488f40",
        encoded: "00000102fb190a",
        decoded: "0000000000408f400000000000408f40cdcccccccc408f409a99999999418f4066666666660490400000000000548f400000000000488f40",
        encodes: false,
    },
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 0.1, "offset": 999.5, "dtype": "<f8", "astype": "<i2"}"#,
        array: DataType::Float64,
        input: "0000000000408f406666666666408f403333333333418f400000000000428f4000000000003c8f400000000000548f400000000000488f40",
        encoded: "0000000000000000000000000000",
        decoded: "00000000003c8f4000000000003c8f4000000000003c8f4000000000003c8f4000000000003c8f4000000000003c8f4000000000003c8f40",
        encodes: true,
    },
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 3.3, "offset": -4.1, "dtype": "<f4", "astype": "<u2"}"#,
        array: DataType::Float32,
        input: "0000c03f00001040000048c0cdcccc3d6666f64000002040",
        encoded: "1200150003000e0027001600",
        decoded: "bf61ad3f6bdf1040db374cc0a9d7113e58fbf64044442440",
        encodes: true,
    },
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 2, "offset": 3, "dtype": "<i4", "astype": "<i2"}"#,
        array: DataType::Int32,
        input: "64000000c8000000d4feffffff7f00000080ffff05000000",
        encoded: "c2008a01a2fdf8fffaff0400",
        decoded: "64000000c8000000d4feffffffffffff0000000005000000",
        encodes: true,
    },
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 0.25, "offset": 0.5, "dtype": "<i4", "astype": "<f4"}"#,
        array: DataType::Int32,
        input: "64000000c8000000d4feffffff7f00000080ffff05000000",
        encoded: "0000c84100004842000096c200000046000000c60000803f",
        decoded: "64000000c8000000d5feffff008000000180ffff04000000",
        encodes: true,
    },
    V {
        codec: "numcodecs.fixedscaleoffset",
        config: r#"{"scale": 1.7, "offset": 0.1, "dtype": "<f2", "astype": "|i1"}"#,
        array: DataType::Float16,
        input: "662e66321554cdbe",
        encoded: "00006ffd",
        decoded: "662e662e1654a9be",
        encodes: true,
    },
    V {
        codec: "numcodecs.quantize",
        config: r#"{"digits": 3, "dtype": "<f8", "astype": "<f8"}"#,
        array: DataType::Float64,
        input: "9a9999999999b93f555555555555d53f555555555555e53fd42b6519e23816c095d626e80b2e113ec976be9f0c24fe40000000000000f87f000000000000f07f",
        encoded: "000000000080b93f000000000050d53f000000000058e53f00000000003916c00000000000000000000000a00c24fe40000000000000f87f000000000000f07f",
        decoded: "000000000080b93f000000000050d53f000000000058e53f00000000003916c00000000000000000000000a00c24fe40000000000000f87f000000000000f07f",
        encodes: true,
    },
    V {
        codec: "numcodecs.quantize",
        config: r#"{"digits": 1, "dtype": "<f8", "astype": "<f4"}"#,
        array: DataType::Float64,
        input: "9a9999999999b93f555555555555d53f555555555555e53fd42b6519e23816c095d626e80b2e113ec976be9f0c24fe40000000000000f87f000000000000f07f",
        encoded: "0000003e0000a03e0000303f0000b2c0000000006820f1470000c07f0000807f",
        decoded: "000000000000c03f000000000000d43f000000000000e63f00000000004016c00000000000000000000000000d24fe40000000000000f87f000000000000f07f",
        encodes: true,
    },
    V {
        codec: "numcodecs.quantize",
        config: r#"{"digits": 5, "dtype": "<f4", "astype": "<f4"}"#,
        array: DataType::Float32,
        input: "cdcccc3dabaaaa3eabaa2a3f11c7b1c05f7089306520f1470000c07f0000807f",
        encoded: "00cccc3d00abaa3e80aa2a3f10c7b1c0000000006520f1470000c07f0000807f",
        decoded: "00cccc3d00abaa3e80aa2a3f10c7b1c0000000006520f1470000c07f0000807f",
        encodes: true,
    },
    V {
        codec: "numcodecs.quantize",
        config: r#"{"digits": 2, "dtype": "<f2", "astype": "<f2"}"#,
        array: DataType::Float16,
        input: "662e553566c1537b",
        encoded: "802e603568c1007c",
        decoded: "802e603568c1007c",
        encodes: true,
    },
    V {
        codec: "numcodecs.bitround",
        config: r#"{"keepbits": 10}"#,
        array: DataType::Float64,
        input: "9a9999999999b93f555555555555d53f555555555555e53fd42b6519e23816c095d626e80b2e113ec976be9f0c24fe40000000000000f87f000000000000f07f",
        encoded: "000000000098b93f000000000054d53f000000000054e53f00000000003816c0000000000030113e000000000024fe40000000000000f87f000000000000f07f",
        decoded: "000000000098b93f000000000054d53f000000000054e53f00000000003816c0000000000030113e000000000024fe40000000000000f87f000000000000f07f",
        encodes: true,
    },
    V {
        codec: "numcodecs.bitround",
        config: r#"{"keepbits": 3}"#,
        array: DataType::Float32,
        input: "cdcccc3dabaaaa3eabaa2a3f11c7b1c05f7089306520f1470000c07f0000807f",
        encoded: "0000d03d0000b03e0000303f0000b0c0000090300000f0470000c07f0000807f",
        decoded: "0000d03d0000b03e0000303f0000b0c0000090300000f0470000c07f0000807f",
        encodes: true,
    },
    V {
        codec: "numcodecs.bitround",
        config: r#"{"keepbits": 0}"#,
        array: DataType::Float16,
        input: "662e553566c1003e007e",
        encoded: "0030003400c000400080",
        decoded: "0030003400c000400080",
        encodes: true,
    },
    V {
        codec: "numcodecs.packbits",
        config: r#"{}"#,
        array: DataType::Bool,
        input: "0100010100000001010100",
        encoded: "05b1c0",
        decoded: "0100010100000001010100",
        encodes: true,
    },
    V {
        codec: "numcodecs.packbits",
        config: r#"{}"#,
        array: DataType::Bool,
        input: "0100010100000001",
        encoded: "00b1",
        decoded: "0100010100000001",
        encodes: true,
    },
    V {
        codec: "numcodecs.astype",
        config: r#"{"encode_dtype": "<f4", "decode_dtype": "<f8"}"#,
        array: DataType::Float64,
        input: "9a9999999999b93fa55cc3f129633d4800000000000004c0555555555555d53f",
        encoded: "cdcccc3d0000807f000020c0abaaaa3e",
        decoded: "000000a09999b93f000000000000f07f00000000000004c0000000605555d53f",
        encodes: true,
    },
    V {
        codec: "numcodecs.astype",
        config: r#"{"encode_dtype": "<i2", "decode_dtype": "<f8"}"#,
        array: DataType::Float64,
        input: "cdccccccccccec3f666666666666febf0000000000c87240666666661600e0c0",
        encoded: "0000ffff2c010080",
        decoded: "0000000000000000000000000000f0bf0000000000c07240000000000000e0c0",
        encodes: true,
    },
    V {
        codec: "numcodecs.astype",
        config: r#"{"encode_dtype": "|u1", "decode_dtype": "<i4"}"#,
        array: DataType::Int32,
        input: "01000000ff00000000010000ffffffff",
        encoded: "01ff00ff",
        decoded: "01000000ff00000000000000ff000000",
        encodes: true,
    },
    V {
        codec: "numcodecs.astype",
        config: r#"{"encode_dtype": "<f2", "decode_dtype": ">i2"}"#,
        array: DataType::Int16,
        input: "00010801fffd",
        encoded: "003c006800c2",
        decoded: "00010800fffd",
        encodes: true,
    },
];

#[test]
fn filters_give_numcodecs_bytes_both_ways() {
    let w = Warnings::default();
    for v in VECTORS {
        let cfg: Value = serde_json::from_str(v.config).unwrap();
        let c = spec(v.codec)
            .unwrap()
            .build_bytes(cfg.as_object().unwrap(), v.array)
            .unwrap();
        let (input, encoded, decoded) = (unhex(v.input), unhex(v.encoded), unhex(v.decoded));
        let what = format!("{} {}", v.codec, v.config);
        match c.encode(input.clone()) {
            Ok(got) => {
                assert!(v.encodes, "{what}");
                assert_eq!(got, encoded, "{what}");
            }
            Err(e) => {
                assert!(!v.encodes, "{what}: {}", e.message());
                assert_eq!(e.kind(), "codec");
                assert!(e.message().contains("-5"), "{}", e.message());
            }
        }
        let got = c
            .decode(encoded.clone(), ctx(&w).decode_to(Some(decoded.len())))
            .unwrap();
        assert_eq!(got, decoded, "{what}");
        assert_eq!(
            c.decode(encoded, ctx(&w).decode_to(None)).unwrap(),
            decoded,
            "{what}"
        );
        // The configuration written back builds the same codec.
        let again = spec(v.codec)
            .unwrap()
            .build_bytes(&c.configuration(), v.array)
            .unwrap();
        assert_eq!(again.configuration(), c.configuration(), "{what}");
    }
}

#[test]
fn filters_refuse_what_they_cannot_do() {
    let build = |name: &str, cfg: Value, dt: DataType| {
        spec(name)
            .unwrap()
            .build_bytes(cfg.as_object().unwrap(), dt)
            .map(|_| ())
            .unwrap_err()
    };
    for (name, cfg, dt, kind) in [
        (
            "numcodecs.fixedscaleoffset",
            json!({"scale": 1, "dtype": "<f8"}),
            DataType::Float64,
            "metadata",
        ),
        (
            "numcodecs.fixedscaleoffset",
            json!({"offset": "a", "scale": 1, "dtype": "<f8"}),
            DataType::Float64,
            "metadata",
        ),
        (
            "numcodecs.fixedscaleoffset",
            json!({"offset": 0, "scale": 1, "dtype": "<f4"}),
            DataType::Float64,
            "unsupported",
        ),
        (
            "numcodecs.fixedscaleoffset",
            json!({"offset": 300, "scale": 1, "dtype": "|u1"}),
            DataType::UInt8,
            "metadata",
        ),
        (
            "numcodecs.quantize",
            json!({"digits": 2, "dtype": "<i4"}),
            DataType::Int32,
            "unsupported",
        ),
        (
            "numcodecs.quantize",
            json!({"dtype": "<f8"}),
            DataType::Float64,
            "metadata",
        ),
        (
            "numcodecs.bitround",
            json!({"keepbits": 24}),
            DataType::Float32,
            "metadata",
        ),
        (
            "numcodecs.bitround",
            json!({"keepbits": 3}),
            DataType::Int32,
            "unsupported",
        ),
        (
            "numcodecs.packbits",
            json!({}),
            DataType::UInt8,
            "unsupported",
        ),
        (
            "numcodecs.astype",
            json!({"encode_dtype": "<f4"}),
            DataType::Float64,
            "metadata",
        ),
        (
            "numcodecs.astype",
            json!({"encode_dtype": "<f4", "decode_dtype": "<c16"}),
            DataType::Complex128,
            "unsupported",
        ),
    ] {
        let e = build(name, cfg.clone(), dt);
        assert_eq!(e.kind(), kind, "{name} {cfg}: {}", e.message());
        assert!(e.message().contains(name), "{}", e.message());
    }
    let w = Warnings::default();
    let astype = spec("numcodecs.astype")
        .unwrap()
        .build_bytes(
            json!({"encode_dtype": "|u1", "decode_dtype": "<f8"})
                .as_object()
                .unwrap(),
            DataType::Float64,
        )
        .unwrap();
    let e = astype.encode(f64::NAN.to_le_bytes().to_vec()).unwrap_err();
    assert!(e.message().contains("NaN"), "{}", e.message());
    assert_eq!(
        astype
            .decode(vec![1, 2], ctx(&w).decode_to(Some(8)))
            .unwrap_err()
            .kind(),
        "codec"
    );
    let packbits = spec("numcodecs.packbits")
        .unwrap()
        .build_bytes(&Default::default(), DataType::Bool)
        .unwrap();
    for bad in [vec![], vec![8, 0], vec![3]] {
        assert_eq!(
            packbits
                .decode(bad, ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
    }
}

#[test]
fn zarr_python_3_places_the_filters_before_bytes() {
    // As zarr-python 3.4 writes them: the filter before `bytes`, which has
    // no byte order for the one-byte elements it receives.
    let codecs = json!([
        {"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}},
        {"name": "bytes", "configuration": {}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": false}}
    ]);
    let list = codecs.as_array().unwrap();
    let chain = CodecChain::from_json(list, DataType::Float64, &[0; 8], 1).unwrap();
    let names: Vec<&str> = chain.bytes_to_bytes.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["numcodecs.fixedscaleoffset", "zstd"]);
    let back = chain.to_json();
    assert_eq!(back[0]["name"], "numcodecs.fixedscaleoffset");
    assert_eq!(
        back[1],
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    );
    let data: Vec<u8> = [1000.0f64, 1000.1, 1025.5]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    let w = Warnings::default();
    let stored = chain.encode(data, &[3]).unwrap();
    let got = chain.decode(stored, &[3], &ctx(&w)).unwrap();
    let want: Vec<u8> = [1000.0f64, 1000.1, 1025.5]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    assert_eq!(got, want);
    // After `bytes` (the form Zarr v2 metadata converts to) it reads too.
    let v2_form = json!([back[1], back[0], back[2]]);
    let again =
        CodecChain::from_json(v2_form.as_array().unwrap(), DataType::Float64, &[0; 8], 1).unwrap();
    assert_eq!(again.to_json(), back);
    for (codecs, why) in [
        (
            json!([back[0], {"name": "transpose", "configuration": {"order": [0]}}, back[1]]),
            "transpose",
        ),
        (
            json!([back[0], {"name": "bytes", "configuration": {"endian": "big"}}]),
            "big-endian",
        ),
        (
            json!([{"name": "numcodecs.bitround", "configuration": {"keepbits": 3}}, {"name": "bytes", "configuration": {"endian": "big"}}]),
            "big-endian",
        ),
    ] {
        let e = CodecChain::from_json(codecs.as_array().unwrap(), DataType::Float64, &[0; 8], 1)
            .unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.message().contains(why), "{}", e.message());
    }
    let e = CodecChain::from_json(
        json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "numcodecs.bitround", "configuration": {"keepbits": 3}}]).as_array().unwrap(),
        DataType::Float64,
        &[0; 8],
        1,
    )
    .unwrap_err();
    assert!(e.message().contains("big-endian"), "{}", e.message());
}
