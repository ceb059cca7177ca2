//! Zarr v2 documents: `.zarray` (with byte 0 choosing whether the rest is
//! split at the first NUL into `.zarray` and `.zattrs`), `.zgroup` and the
//! consolidated `.zmetadata`. An array that parses writes back to v2
//! documents that parse to the same array.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::metadata::{self, v2, NodeMetadata};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (doc, attrs) = match (mode & 1, rest.iter().position(|&b| b == 0)) {
        (1, Some(i)) => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    match mode >> 1 & 3 {
        0 | 1 => {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(doc) {
                let mut out = Vec::new();
                metadata::strict::unknown_members_zarray(&v, "", &mut out);
            }
            let Ok(a) = v2::parse_array(doc, attrs) else {
                return;
            };
            let node = NodeMetadata::Array(a.clone());
            let docs = metadata::documents(&node).expect("a parsed array writes");
            let back = v2::parse_array(&docs[0].1, Some(&docs[1].1)).expect("written v2 parses");
            assert_eq!(back, a);
            let _ =
                metadata::canonical(&serde_json::to_vec(&metadata::r_form(&node)).unwrap(), true);
        }
        2 => {
            let _ = v2::parse_group(doc, attrs);
        }
        _ => {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(doc) {
                let _ = metadata::strict::unknown_members_zmetadata(&v);
            }
            if let Ok(nodes) = metadata::v2_consolidated_nodes(doc) {
                let _ = metadata::v2_consolidated_document(&nodes);
            }
        }
    }
});
