//! zfp against numcodecs' `ZFPY` (numcodecs 0.17, zfpy 1.0.1) and the
//! registry's `zfp`.

use super::super::test_util::{ctx, unhex};
use super::super::{CodecChain, Warnings};
use super::*;
use serde_json::json;
use zfp_rs::{ZfpBitStream, ZfpDimensionality, ZfpFieldMut, ZfpHeaderMask};

/// `ZFPY(**config)` of `x`: its type, C-order shape, configuration, `x`,
/// `encode(x)` and `decode(encode(x))`. Floats are sin(0.37 i) * 100,
/// integers 7919 i - 300.
/// (type, shape, configuration, data, encoded, decoded).
type Case = (
    DataType,
    &'static [usize],
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const NUMCODECS: [Case; 4] = [
    (
        DataType::Float64,
        &[3, 5],
        r#"{"mode": 4, "tolerance": 0.01}"#,
        "0000000000000000d6eb8c72ad14424089467d5071db504053a603ba78645640f40cfa2ca3e55840ebdde44a29085840726ba5de04ea5340f708b47fc4334a40dc8986b3430f32409235974ebeba32c0960a0811e77d4ac0a2f7b674440454c0057676b7091458c0dee137ee88e158c02fdd3df5f15056c0",
        "7a667005470000200000c0ca0d288040148a40959a35624569700ba00d024b844d2c328b8c57b823013cfde2723071df5adf80040551884a440200858044252840884814221084a840002a1100000000",
        "00000000000018bf00000000bf1442400000008084db5040000000807d64564000000000a6e55840000000802b085840000000800eea534000000000bb334a4000000000220f324000000000b8ba32c000000000f77d4ac0000000803e0454c0000000800d1458c00000008098e158c000000000f25056c0",
    ),
    (
        DataType::Float32,
        &[2, 3, 4],
        r#"{"mode": 2, "rate": 8}"#,
        "000000006ca510428bdb8642c623b342192dc7424a41c04227509f42249e51421e7a9041f2d595c139ef53c22422a0c24ea0c0c2470cc7c29087b2c215d985c2f7190ec26d742e3f282f134266dc8742dbbdb3428d4bc742fedfbf42457c9e42",
        "7a6670053a0020001000f01f0d09600000002080214000800480024002181028040110010d038400c40ca878207024000010e12030c8000420a3016010a10140c7004600c0006008928f470400000000",
        "000090be006011420070864200b0b34200b0c7420030c04200309f420060534200c08c41004092c100a055c20090a0c20070c0c20070c6c20070b1c2007086c200e00dc20000683f00201542005088420050b4420050c7420050c04200509e42",
    ),
    (
        DataType::Int32,
        &[7],
        r#"{"mode": 3, "precision": 20}"#,
        "d4feffffc31d0000b23c0000a15b0000907a00007f9900006eb80000",
        "7a667005600000000000308100007601002cc50900000000",
        "0000000000200000004000000060000000740000009c000000c40000",
    ),
    (
        DataType::Int64,
        &[2, 2, 2, 3],
        "{}",
        "d4feffffffffffffc31d000000000000b23c000000000000a15b000000000000907a0000000000007f990000000000006eb80000000000005dd70000000000004cf60000000000003b150100000000002a3401000000000019530100000000000872010000000000f790010000000000e6af010000000000d5ce010000000000c4ed010000000000b30c020000000000a22b020000000000914a02000000000080690200000000006f880200000000005ea70200000000004dc6020000000000",
        "7a6670052d000110000100883f000000000008c100c700c6010d0090020c00200b0800401060000018c0000070400100da80010074010700a8010c0040071400200d1800401770008018c0000074400100528001006400010008000000000000",
        "d4feffffffffffffc31d000000000000b23c000000000000a15b000000000000907a0000000000007f990000000000006eb80000000000005dd70000000000004cf60000000000003b150100000000002a3401000000000019530100000000000872010000000000f790010000000000e6af010000000000d5ce010000000000c4ed010000000000b30c020000000000a22b020000000000914a02000000000080690200000000006f880200000000005ea70200000000004dc6020000000000",
    ),
];

#[test]
fn zfpy_gives_numcodecs_bytes_both_ways() {
    let w = Warnings::default();
    for (dtype, shape, cfg, data, encoded, decoded) in NUMCODECS {
        let cfg: Value = serde_json::from_str(cfg).unwrap();
        let c = Zfp::zfpy(cfg.as_object().unwrap(), dtype).unwrap();
        let (data, encoded, decoded) = (unhex(data), unhex(encoded), unhex(decoded));
        assert_eq!(
            c.encode_shaped(data.clone(), shape).unwrap(),
            encoded,
            "{cfg}"
        );
        assert_eq!(
            c.decode_shaped(&encoded, shape, ctx(&w).decode_to(None))
                .unwrap(),
            decoded,
            "{cfg}"
        );
        // The header alone says how many elements there are.
        assert_eq!(c.decode(encoded, ctx(&w).decode_to(None)).unwrap(), decoded);
    }
}

#[test]
fn zfpy_refuses_bad_streams_types_and_modes() {
    let w = Warnings::default();
    let f64s = unhex(NUMCODECS[0].4);
    let mut garbage = f64s.clone();
    garbage[0] = b'Z';
    for (bad, dtype, why) in [
        (f64s.clone(), DataType::Float32, "holds double values"),
        (f64s[..24].to_vec(), DataType::Float64, "cannot decompress"),
        (garbage, DataType::Float64, "bad header"),
    ] {
        let c = Zfp::zfpy(&Map::new(), dtype).unwrap();
        let e = c
            .decode_shaped(&bad, &[3, 5], ctx(&w).decode_to(None))
            .unwrap_err();
        assert_eq!(e.kind(), "codec");
        assert!(
            e.message().contains(NAME) && e.message().contains(why),
            "{}",
            e.message()
        );
    }
    let c = Zfp::zfpy(&Map::new(), DataType::Float64).unwrap();
    let e = c
        .decode_shaped(&f64s, &[4, 5], ctx(&w).decode_to(None))
        .unwrap_err();
    assert!(e.message().contains("the chunk 20"), "{}", e.message());
    for (cfg, dtype, why) in [
        (json!({}), DataType::Int16, "not int16"),
        (json!({"mode": 6}), DataType::Float64, "mode must be"),
        (
            json!({"tolerance": "x"}),
            DataType::Float64,
            "tolerance must be a number",
        ),
    ] {
        let e = Zfp::zfpy(cfg.as_object().unwrap(), dtype).unwrap_err();
        assert!(
            e.message().contains(NAME) && e.message().contains(why),
            "{}",
            e.message()
        );
    }
    // Read, not written: modes numcodecs cannot write, rates below a
    // block's header, more than four dimensions.
    let data = vec![0u8; 8 * 6];
    for (cfg, shape, why) in [
        (json!({"mode": 5}), &[6][..], "numcodecs writes modes"),
        (json!({"mode": 2, "rate": 0.75}), &[6], "3 bits per block"),
        (json!({}), &[1, 1, 1, 1, 6], "1 to 4 dimensions"),
    ] {
        let c = Zfp::zfpy(cfg.as_object().unwrap(), DataType::Float64).unwrap();
        let e = c.encode_shaped(data.clone(), shape).unwrap_err();
        assert!(e.message().contains(why), "{}", e.message());
    }
}

#[test]
fn zfpy_is_a_serializer_with_its_numcodecs_configuration() {
    let v3 = json!([{"name": NAME, "configuration": {"mode": 2, "rate": 16}}]);
    let chain =
        CodecChain::from_json(v3.as_array().unwrap(), DataType::Float64, &[0; 8], 2).unwrap();
    assert_eq!(
        Value::Array(chain.to_json()),
        json!([{"name": NAME, "configuration": {"mode": 2, "tolerance": -1, "rate": 16, "precision": -1}}])
    );
    // A chunk of 5 x 3 in column-major order (transpose) is the field of
    // its stored shape, 3 x 5 in C order: zfpy's header says so.
    let t = json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, v3[0]]);
    let chain =
        CodecChain::from_json(t.as_array().unwrap(), DataType::Float64, &[0; 8], 2).unwrap();
    let data: Vec<u8> = (0..15)
        .flat_map(|i| (f64::from(i) * 0.37).sin().to_ne_bytes())
        .collect();
    let stored = chain.encode(data.clone(), &[5, 3]).unwrap();
    let mut s = ZfpBitStream::from_bytes(&stored).unwrap();
    let header = s.read_header(ZfpHeaderMask::FULL).unwrap();
    assert_eq!(header.metadata.unwrap().dims, [5, 3, 0, 0]);
    let w = Warnings::default();
    let back = chain.decode(stored, &[5, 3], &ctx(&w)).unwrap();
    // 16 bits a value: close, not equal.
    assert_eq!(back.len(), data.len());
    assert_ne!(back, data);
}

#[test]
fn zfp_of_the_registry_has_no_header_and_its_modes() {
    let w = Warnings::default();
    let data: Vec<f64> = (0..60)
        .map(|i| (f64::from(i) * 0.37).sin() * 100.0)
        .collect();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let shape = [3usize, 4, 5];
    for (cfg, lossless) in [
        (json!({"mode": "reversible"}), true),
        (json!({"mode": "fixed_rate", "rate": 10.5}), false),
        (json!({"mode": "fixed_precision", "precision": 19}), false),
        (json!({"mode": "fixed_accuracy", "tolerance": 0.05}), false),
        (
            json!({"mode": "expert", "minbits": 1, "maxbits": 13, "maxprec": 19, "minexp": -2}),
            false,
        ),
    ] {
        let c = Zfp::registry(cfg.as_object().unwrap(), DataType::Float64).unwrap();
        assert_eq!(Value::Object(c.configuration()), cfg);
        let stored = c.encode_shaped(bytes.clone(), &shape).unwrap();
        assert_ne!(&stored[..3], b"zfp", "{cfg}");
        let back = c
            .decode_shaped(&stored, &shape, ctx(&w).decode_to(None))
            .unwrap();
        assert_eq!(back == bytes, lossless, "{cfg}");
        // zfp's own decoder of the same stream and parameters agrees.
        let config = c.stream_config(ZfpDimensionality::D3).unwrap();
        let mut out = vec![0f64; 60];
        let mut field = ZfpFieldMut::new(&mut out, [5usize, 4, 3]).unwrap();
        let mut s = ZfpBitStream::from_bytes(&stored).unwrap();
        s.decompress(&config, &mut field).unwrap();
        let want: Vec<u8> = out.iter().flat_map(|x| x.to_ne_bytes()).collect();
        assert_eq!(back, want, "{cfg}");
        if let Some(tol) = cfg.get("tolerance").and_then(Value::as_f64) {
            assert!(out.iter().zip(&data).all(|(a, b)| (a - b).abs() <= tol));
        }
    }
    for (cfg, why) in [
        (json!({}), "has no 'mode'"),
        (json!({"mode": "fixed_rate"}), "needs 'rate'"),
        (json!({"mode": "fixed_precision"}), "has no 'precision'"),
        (
            json!({"mode": "fixed_accuracy", "tolerance": -1}),
            "tolerance must be >= 0",
        ),
        (
            json!({"mode": "expert", "minbits": 20, "maxbits": 13, "maxprec": 19, "minexp": -2}),
            "minbits <= maxbits",
        ),
    ] {
        let e = Zfp::registry(cfg.as_object().unwrap(), DataType::Float64).unwrap_err();
        assert!(
            e.message().contains("'zfp'") && e.message().contains(why),
            "{}",
            e.message()
        );
    }
    let c = Zfp::registry(
        json!({"mode": "reversible"}).as_object().unwrap(),
        DataType::Int32,
    )
    .unwrap();
    let e = c
        .decode(vec![0; 8], ctx(&w).decode_to(Some(4)))
        .unwrap_err();
    assert!(e.message().contains("shape"), "{}", e.message());
}
