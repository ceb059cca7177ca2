//! zarr.json documents: parsing, the checks of `metadata::strict`, the
//! codec chain they declare, and the R form. A document that parses must
//! write back to one that parses to the same node.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::metadata::{self, v3, NodeMetadata};

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = metadata::strict::unknown_members_v3(&doc);
    }
    let _ = metadata::canonical(data, true);
    let Ok(node) = v3::parse(data) else { return };
    if let NodeMetadata::Array(a) = &node {
        let _ = zarr::codec::CodecChain::from_json(
            &a.codecs,
            a.data_type,
            &a.fill_value.bytes,
            a.shape.len(),
        );
        let _ = a.validate();
    }
    let text = node.to_json_string();
    let back = v3::parse(text.as_bytes()).expect("a written document parses");
    assert_eq!(back, node, "{text}");
    let _ = metadata::documents(&node);
});
