//! The form in which R holds node metadata (zarr.json members for both
//! formats) and its canonical text, with the stand-in of a node this
//! reader cannot represent.

use super::*;

/// The form in which R holds metadata of either format: the members of
/// zarr.json, with `zarr_format` 2 for v2 nodes, where a null fill value
/// means "no missing-value marker".
pub fn parse_r_form(bytes: &[u8]) -> Result<NodeMetadata> {
    parse_r_form_value(&serde_json::from_slice(bytes)?)
}

/// `parse_r_form` of a document already parsed as JSON.
pub fn parse_r_form_value(doc: &Value) -> Result<NodeMetadata> {
    let v2 = doc.get("zarr_format").and_then(Value::as_u64) == Some(2);
    if !v2 {
        return v3::parse_value(doc);
    }
    let mut doc = doc.clone();
    let obj = doc
        .as_object_mut()
        .ok_or_else(|| ZarrError::Metadata("metadata must be a JSON object".into()))?;
    obj.insert("zarr_format".into(), 3.into());
    // Other members of a v2 document are kept but mean nothing (v2 has no
    // must_understand): they must not make the v3 parser refuse the node.
    let v2_extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !v3::known_member(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    obj.retain(|k, _| v3::known_member(k));
    let null_fill = obj.get("fill_value").is_some_and(Value::is_null);
    if null_fill {
        // Any valid fill parses; the bytes are zero below.
        let struct_type = obj.get("data_type").is_some_and(|d| {
            d.is_array()
                || matches!(
                    d.get("name").and_then(Value::as_str),
                    Some("struct" | "structured")
                )
        });
        let any_fill = match obj.get("data_type").and_then(Value::as_str) {
            _ if struct_type => Value::Null,
            Some("bool") => Value::from(false),
            Some("string") => Value::from(""),
            Some("complex64" | "complex128") => json!([0, 0]),
            _ => Value::from(0),
        };
        obj.insert("fill_value".into(), any_fill);
    }
    let mut node = v3::parse_value(&doc)?;
    match &mut node {
        NodeMetadata::Array(a) => {
            a.zarr_format = 2;
            // (a struct's data type as written stays)
            a.extra.retain(|k, _| k == numpy_types::WRITTEN);
            a.extra.extend(v2_extra);
            if null_fill {
                a.fill_value = FillValue::zero(a.data_type);
                a.fill_marks_na = false;
            }
        }
        NodeMetadata::Group(g) => {
            g.zarr_format = 2;
            g.extra = v2_extra;
        }
    }
    Ok(node)
}

/// The R form of a node (see `parse_r_form`).
pub fn r_form(node: &NodeMetadata) -> Value {
    let mut doc = v3::to_json(node);
    if node.zarr_format() == 2 {
        doc["zarr_format"] = 2.into();
        if let NodeMetadata::Array(a) = node {
            if !a.fill_marks_na {
                doc["fill_value"] = Value::Null;
            }
        }
    }
    doc
}

/// The member of an R-form document that marks a node this reader cannot
/// represent; R raises the error it holds when the node is opened.
pub const UNREADABLE: &str = "unreadable";

/// The R-form stand-in for a node document that failed to parse: its
/// node type (array unless it says group) and the error's kind and text.
pub fn unreadable(doc: &Value, e: &ZarrError) -> Value {
    let node_type = match doc.get("node_type").and_then(Value::as_str) {
        Some("group") => "group",
        _ => "array",
    };
    let zarr_format = match doc.get("zarr_format").and_then(Value::as_u64) {
        Some(2) => 2,
        _ => 3,
    };
    json!({
        "zarr_format": zarr_format,
        "node_type": node_type,
        UNREADABLE: {"kind": e.kind(), "message": e.to_string()}
    })
}

/// The canonical R form of a node document (see `parse_r_form`), with the
/// documents of consolidated metadata (`consolidated_metadata.metadata`)
/// canonical too. With `int64_as_text`, fill values of int64 and uint64
/// arrays are decimal strings: R's JSON parser cannot hold every 64-bit
/// integer as a number, and the parsers here accept that form back.
pub fn canonical(bytes: &[u8], int64_as_text: bool) -> Result<(NodeMetadata, Value)> {
    canonical_value(&serde_json::from_slice(bytes)?, int64_as_text)
}

/// `canonical` of a document already parsed as JSON.
pub fn canonical_value(form: &Value, int64_as_text: bool) -> Result<(NodeMetadata, Value)> {
    let node = parse_r_form_value(form)?;
    let mut doc = r_form(&node);
    if let (true, NodeMetadata::Array(a)) = (int64_as_text, &node) {
        // ("NaT", the fill of a numpy.datetime64 array, stays as it is.)
        if a.fill_marks_na
            && matches!(a.data_type, DataType::Int64 | DataType::UInt64)
            && doc["fill_value"].is_number()
        {
            doc["fill_value"] = Value::String(doc["fill_value"].to_string());
        }
    }
    if let Some(Value::Object(entries)) = doc.pointer_mut("/consolidated_metadata/metadata") {
        for (path, entry) in entries.iter_mut() {
            *entry = match canonical_value(entry, int64_as_text) {
                Ok((_, canon)) => canon,
                // One node this reader cannot represent must not hide the
                // others: it stays listed, and opening it raises this error.
                Err(e) => unreadable(
                    entry,
                    &e.context(&format!("consolidated metadata of '{path}'")),
                ),
            };
        }
    }
    Ok((node, doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consolidated_metadata_keeps_an_unreadable_entry_as_a_marker() {
        let good = json!({"zarr_format": 3, "node_type": "group", "attributes": {}});
        let bad = json!({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "bfloat16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes"}]});
        let root = json!({"zarr_format": 3, "node_type": "group", "attributes": {},
            "consolidated_metadata": {"kind": "inline", "must_understand": false,
                "metadata": {"g": good, "bad": bad}}});
        let (_, doc) = canonical(root.to_string().as_bytes(), true).unwrap();
        let entries = &doc["consolidated_metadata"]["metadata"];
        assert_eq!(entries["g"]["node_type"], "group");
        assert!(entries["g"].get(UNREADABLE).is_none());
        let marker = &entries["bad"][UNREADABLE];
        assert_eq!(entries["bad"]["node_type"], "array");
        assert_eq!(marker["kind"], "unsupported");
        let msg = marker["message"].as_str().unwrap();
        assert!(msg.contains("'bad'") && msg.contains("bfloat16"), "{msg}");
    }

    #[test]
    fn the_r_form_of_v2_string_arrays_round_trips_with_a_null_fill() {
        for dtype in ["|O", "<U4", "|S4"] {
            let filters = if dtype == "|O" {
                json!([{"id": "vlen-utf8"}])
            } else {
                Value::Null
            };
            let zarray = json!({"shape": [3], "chunks": [2], "dtype": dtype, "fill_value": null,
                "order": "C", "filters": filters, "dimension_separator": ".",
                "compressor": null, "zarr_format": 2});
            let node =
                NodeMetadata::Array(v2::parse_array(zarray.to_string().as_bytes(), None).unwrap());
            let form = r_form(&node);
            assert_eq!(form["fill_value"], Value::Null, "{dtype}");
            let back = parse_r_form(form.to_string().as_bytes()).unwrap();
            assert_eq!(back, node, "{dtype}");
            let docs = documents(&back).unwrap();
            let written: Value = serde_json::from_slice(&docs[0].1).unwrap();
            assert_eq!(written, zarray, "{dtype}");
        }
    }
}
