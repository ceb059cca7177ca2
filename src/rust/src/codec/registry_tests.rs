//! Every codec declared once: names, v2 ids, modes and defaults of
//! `REGISTRY`, checked against each other and against what the chains build.

use super::*;
use crate::dtype::DataType;
use crate::dtype::ALL_DATA_TYPES;
use serde_json::json;

#[test]
fn every_codec_has_one_name_and_one_v2_id() {
    for (i, a) in REGISTRY.iter().enumerate() {
        for b in &REGISTRY[i + 1..] {
            assert_ne!(a.name, b.name);
            assert!(a.v2_id().is_none() || a.v2_id() != b.v2_id(), "{}", a.name);
        }
        assert!(std::ptr::eq(spec(a.name).unwrap(), *a));
    }
    assert!(spec("lzma").is_none());
}

#[test]
fn default_configurations_make_codecs_the_chain_accepts() {
    for dtype in ALL_DATA_TYPES {
        for s in REGISTRY.iter().filter(|s| s.mode == Mode::BytesToBytes) {
            let defaults = s.defaults.expect("every bytes -> bytes codec has defaults");
            let made = bytes_to_bytes(s.name, &defaults(dtype, 2), dtype);
            // Delta takes differences of numbers only.
            let numeric = !matches!(
                dtype,
                DataType::Bool | DataType::Complex64 | DataType::Complex128 | DataType::String
            );
            if s.name == delta::NAME && !numeric {
                assert!(made.is_err(), "delta for {}", dtype.name());
                continue;
            }
            assert!(
                matches!(made, Ok(Some(_))),
                "{} for {}",
                s.name,
                dtype.name()
            );
        }
        let order = (transpose::SPEC.defaults.unwrap())(dtype, 3);
        assert_eq!(transpose::parse_order(&order, 3).unwrap(), vec![2, 1, 0]);
        let bytes = (bytes::SPEC.defaults.unwrap())(dtype, 1);
        assert_eq!(bytes.contains_key("endian"), dtype.size() > 1);
    }
    let blosc = (blosc::SPEC.defaults.unwrap())(DataType::Float64, 1);
    assert_eq!(blosc["shuffle"], "bitshuffle");
    assert_eq!(blosc["typesize"], 8);
}

/// Members that have no default (the user chooses them), for the tests.
const CHOSEN: [(&str, &str, i64); 1] = [("numcodecs.quantize", "digits", 3)];

/// A data type codec `s` takes (int32 where it can: quantize and bitround
/// take floats, packbits booleans) and its configuration for it: its
/// defaults and the members the user chooses.
fn typed_defaults(s: &CodecSpec) -> (DataType, Map<String, serde_json::Value>) {
    for dtype in [DataType::Int32, DataType::Float64, DataType::Bool] {
        let mut cfg = (s.defaults.unwrap())(dtype, 2);
        for (name, key, v) in CHOSEN {
            if name == s.name {
                cfg.insert(key.into(), v.into());
            }
        }
        if s.build_bytes(&cfg, dtype).is_ok() {
            return (dtype, cfg);
        }
    }
    panic!("{}: no data type builds it from its defaults", s.name)
}

#[test]
fn a_codec_writes_back_the_configuration_it_was_built_from() {
    for s in REGISTRY.iter().filter(|s| s.build.is_some()) {
        let (dtype, cfg) = typed_defaults(s);
        let built = s.build_bytes(&cfg, dtype).unwrap();
        assert_eq!(built.name(), s.name);
        assert_eq!(built.configuration(), cfg, "{}", s.name);
        let chosen: Map<String, serde_json::Value> = CHOSEN
            .iter()
            .filter(|c| c.0 == s.name)
            .map(|c| (c.1.to_string(), c.2.into()))
            .collect();
        assert_eq!(s.configure(&chosen, dtype, 2).unwrap(), cfg);
    }
}

#[test]
fn every_declared_member_is_one_the_codec_reads_and_checks() {
    for s in REGISTRY.iter().filter(|s| s.build.is_some()) {
        let (dtype, cfg) = typed_defaults(s);
        for p in s.params {
            let mut bad = cfg.clone();
            bad.insert(p.key.into(), serde_json::json!({"not": "a value"}));
            let e = s.build_bytes(&bad, dtype).unwrap_err();
            assert!(
                e.message().contains(s.name) && e.message().contains(p.key),
                "{}: {}",
                s.name,
                e.message()
            );
        }
    }
}

#[test]
fn members_without_a_value_take_their_declared_absent_value_or_are_required() {
    for s in REGISTRY.iter() {
        for p in s.params {
            let got = p.get(s.name, &Map::new());
            match p.absent {
                Some(l) => assert_eq!(got.unwrap(), Value::from(l)),
                None => assert!(got.unwrap_err().message().contains(p.key)),
            }
        }
    }
}

#[test]
fn numcodecs_names_of_registry_codecs_read_numcodecs_configurations() {
    let make = |name: &str, cfg: Value, dtype: DataType| {
        bytes_to_bytes(name, cfg.as_object().unwrap(), dtype)
    };
    // zarr-python 3.4 writes numcodecs' members, absent ones meaning
    // numcodecs' defaults (gzip level 1; blosc lz4, 5, shuffle).
    let g = make("numcodecs.gzip", json!({}), DataType::Int16)
        .unwrap()
        .unwrap();
    assert_eq!(g.name(), "gzip");
    assert_eq!(g.configuration()["level"], 1);
    let b = make("numcodecs.blosc", json!({}), DataType::Int16)
        .unwrap()
        .unwrap();
    assert_eq!(
        Value::from(b.configuration()),
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0})
    );
    let auto = json!({"cname": "zstd", "clevel": 3, "shuffle": -1});
    let b = make("numcodecs.blosc", auto.clone(), DataType::Float64)
        .unwrap()
        .unwrap();
    assert_eq!(b.configuration()["shuffle"], "shuffle");
    assert_eq!(b.configuration()["cname"], "zstd");
    let b = make("numcodecs.blosc", auto, DataType::UInt8)
        .unwrap()
        .unwrap();
    assert_eq!(b.configuration()["shuffle"], "bitshuffle");
    let z = make(
        "numcodecs.zstd",
        json!({"level": 2, "checksum": true}),
        DataType::Int32,
    );
    assert_eq!(
        Value::from(z.unwrap().unwrap().configuration()),
        json!({"level": 2, "checksum": true})
    );
    let c = make("numcodecs.crc32c", json!({}), DataType::Int32)
        .unwrap()
        .unwrap();
    assert_eq!(c.name(), "crc32c");
    let e = make(
        "numcodecs.crc32c",
        json!({"location": "start"}),
        DataType::Int32,
    )
    .unwrap_err();
    assert!(e.message().contains("location"), "{}", e.message());
    // Codecs registered under their numcodecs name are no aliases; unknown
    // names stay unknown.
    assert!(
        registry::numcodecs_alias("numcodecs.delta", &Map::new(), DataType::Int32)
            .unwrap()
            .is_none()
    );
    assert!(make("numcodecs.nothing", json!({}), DataType::Int32)
        .unwrap()
        .is_none());
    assert_eq!(configuration_members("numcodecs.gzip"), Some(vec!["level"]));
    assert_eq!(configuration_members("numcodecs.nothing"), None);
}
