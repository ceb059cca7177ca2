// placeholder: filled in by the metadata work
use super::*;
/// Parse a zarr.json document.
pub fn parse(_bytes: &[u8]) -> Result<NodeMetadata> { todo!() }
/// Serialise as zarr.json (pretty-printed JSON).
pub fn to_json(_node: &NodeMetadata) -> Value { todo!() }
