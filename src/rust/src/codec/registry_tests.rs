//! Every codec declared once: names, v2 ids, modes and defaults of
//! `REGISTRY`, checked against each other and against what the chains build.

use super::*;
use crate::dtype::ALL_DATA_TYPES;

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
            let Some(defaults) = s.defaults else { continue };
            let made = bytes_to_bytes(s.name, &defaults(dtype, 2), dtype);
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
