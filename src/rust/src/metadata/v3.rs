//! zarr.json documents (v3-core.rst: "Array metadata", "Group metadata",
//! "Additional fields" and "Extensions"/must_understand), with the regular
//! chunk grid and the default and v2 chunk key encodings.

use super::*;

/// Members every node may have; with the array ones below, anything else is
/// an extension and subject to the must_understand rule.
const NODE_MEMBERS: [&str; 3] = ["zarr_format", "node_type", "attributes"];
const ARRAY_MEMBERS: [&str; 8] = [
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "dimension_names",
    "storage_transformers",
];

/// Whether `member` is a member of zarr.json that this module reads.
pub(crate) fn known_member(member: &str) -> bool {
    NODE_MEMBERS.contains(&member) || ARRAY_MEMBERS.contains(&member)
}

fn require<'a>(obj: &'a Map<String, Value>, member: &str) -> Result<&'a Value> {
    obj.get(member)
        .ok_or_else(|| malformed(format!("missing required member '{member}'")))
}

/// Whether an extension object says readers that do not know it may ignore
/// it; an absent must_understand means true.
fn may_ignore(v: &Value) -> bool {
    v.get("must_understand") == Some(&Value::Bool(false))
}

/// The name and configuration of an extension definition: an object with a
/// string `name` and an optional object `configuration`, or a short-hand
/// name string.
fn extension<'a>(v: &'a Value, member: &str) -> Result<(&'a str, Option<&'a Map<String, Value>>)> {
    match v {
        Value::String(s) => Ok((s, None)),
        Value::Object(o) => {
            let name = match o.get("name") {
                Some(Value::String(s)) => s.as_str(),
                _ => return Err(malformed(format!("{member} must have a string 'name'"))),
            };
            match o.get("configuration") {
                None => Ok((name, None)),
                Some(Value::Object(c)) => Ok((name, Some(c))),
                Some(_) => Err(malformed(format!(
                    "{member}: 'configuration' must be an object"
                ))),
            }
        }
        _ => Err(malformed(format!(
            "{member} must be an object or a name string"
        ))),
    }
}

fn attributes(obj: &Map<String, Value>) -> Result<Map<String, Value>> {
    match obj.get("attributes") {
        None => Ok(Map::new()),
        Some(Value::Object(a)) => {
            strict::refuse_nul(a, "zarr.json")?;
            Ok(a.clone())
        }
        Some(_) => Err(malformed("attributes must be an object")),
    }
}

/// Members this reader does not know. The spec requires refusing a node
/// with any of them unless it says `"must_understand": false`.
fn extra_members(
    obj: &Map<String, Value>,
    known: &[&str],
    group: bool,
) -> Result<Map<String, Value>> {
    let mut extra = Map::new();
    for (k, v) in obj {
        if known.contains(&k.as_str()) {
            continue;
        }
        // zarr-python 3.0.0 to 3.1.3 wrote this null into every group.
        if group && k == "consolidated_metadata" && v.is_null() {
            continue;
        }
        if !may_ignore(v) {
            return Err(ZarrError::Unsupported(format!(
                "metadata member '{k}' is not supported (it does not set \"must_understand\": false)"
            )));
        }
        extra.insert(k.clone(), v.clone());
    }
    Ok(extra)
}

/// The data type, fill value and codecs the engine works with: a core data
/// type as written, or the core form of one of zarr-python's NumPy types
/// (`numpy_types`), whose document as written is then kept in `extra`.
fn data_type(
    obj: &Map<String, Value>,
    codecs: Vec<Value>,
    extra: &mut Map<String, Value>,
) -> Result<(DataType, FillValue, Vec<Value>)> {
    let v = require(obj, "data_type")?;
    let fill = require(obj, "fill_value")?;
    // Extension data types are objects; a core type written as one is
    // still the core type.
    let (name, config) = match v {
        Value::String(_) | Value::Object(_) => extension(v, "data_type")?,
        _ => {
            return Err(malformed(format!(
                "data_type must be a string or an object, got {v}"
            )))
        }
    };
    if let Some(m) = numpy_types::map(name, config, fill, &codecs)? {
        extra.insert(numpy_types::WRITTEN.into(), v.clone());
        let fill_value = FillValue::parse(&m.fill_value, m.data_type)?;
        return Ok((m.data_type, fill_value, m.codecs));
    }
    let data_type = DataType::parse(name)?;
    Ok((data_type, FillValue::parse(fill, data_type)?, codecs))
}

fn chunk_shape(v: &Value, shape: &[u64]) -> Result<Vec<u64>> {
    let (name, config) = extension(v, "chunk_grid")?;
    if name != "regular" {
        return Err(ZarrError::Unsupported(format!(
            "chunk grid '{name}' is not supported"
        )));
    }
    let cs = config
        .and_then(|c| c.get("chunk_shape"))
        .ok_or_else(|| malformed("chunk_grid: the regular grid needs configuration.chunk_shape"))?;
    let cs = u64_list(cs, "chunk_grid: chunk_shape")?;
    check_chunk_shape(&cs, shape, "chunk_grid: chunk_shape")?;
    Ok(cs)
}

fn chunk_key_encoding(v: &Value) -> Result<ChunkKeyEncoding> {
    let (name, config) = extension(v, "chunk_key_encoding")?;
    let separator = match config.and_then(|c| c.get("separator")) {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(s) => {
            return Err(malformed(format!(
                "chunk_key_encoding: separator must be \"/\" or \".\", got {s}"
            )));
        }
    };
    ChunkKeyEncoding::from_name(name, separator)
}

fn dimension_names(v: Option<&Value>, rank: usize) -> Result<Option<Vec<Option<String>>>> {
    let want = || malformed("dimension_names must be an array of strings or nulls");
    // An explicit null reads as absent: dimensions are then unnamed, which
    // is what a writer of null meant.
    let list = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(want()),
    };
    let names = list
        .iter()
        .map(|n| match n {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            _ => Err(want()),
        })
        .collect::<Result<Vec<_>>>()?;
    if names.len() != rank {
        return Err(malformed(format!(
            "dimension_names has {} entries but shape has {rank}",
            names.len()
        )));
    }
    Ok(Some(names))
}

fn storage_transformers(v: Option<&Value>) -> Result<Vec<Value>> {
    let list = match v {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(malformed("storage_transformers must be an array")),
    };
    for t in list {
        if !may_ignore(t) {
            let name = extension(t, "storage_transformers")
                .map(|(n, _)| n)
                .unwrap_or("?");
            return Err(ZarrError::Unsupported(format!(
                "storage transformer '{name}' is not supported"
            )));
        }
    }
    Ok(list.clone())
}

fn parse_array(obj: &Map<String, Value>) -> Result<ArrayMetadata> {
    let known: Vec<&str> = NODE_MEMBERS.iter().chain(&ARRAY_MEMBERS).copied().collect();
    // Unknown extensions first: one that must be understood may change what
    // the known members mean, so it is the real reason not to open the node.
    let mut extra = extra_members(obj, &known, false)?;
    let shape = u64_list(require(obj, "shape")?, "shape")?;
    let chunk_shape = chunk_shape(require(obj, "chunk_grid")?, &shape)?;
    let chunk_key_encoding = chunk_key_encoding(require(obj, "chunk_key_encoding")?)?;
    let codecs = match require(obj, "codecs")? {
        Value::Array(c) if !c.is_empty() => c.clone(),
        Value::Array(_) => {
            return Err(malformed(
                "codecs must not be empty: an array -> bytes codec is required",
            ))
        }
        _ => return Err(malformed("codecs must be an array")),
    };
    let (data_type, fill_value, codecs) = data_type(obj, codecs, &mut extra)?;
    Ok(ArrayMetadata {
        dimension_names: dimension_names(obj.get("dimension_names"), shape.len())?,
        storage_transformers: storage_transformers(obj.get("storage_transformers"))?,
        attributes: attributes(obj)?,
        shape,
        data_type,
        chunk_shape,
        chunk_key_encoding,
        fill_value,
        codecs,
        extra,
        zarr_format: 3,
        fill_marks_na: true,
    })
}

fn parse_group(obj: &Map<String, Value>) -> Result<GroupMetadata> {
    let extra = extra_members(obj, &NODE_MEMBERS, true)?;
    Ok(GroupMetadata {
        attributes: attributes(obj)?,
        extra,
        zarr_format: 3,
    })
}

/// Parse a zarr.json document.
pub fn parse(bytes: &[u8]) -> Result<NodeMetadata> {
    parse_value(&document(bytes)?)
}

/// The bytes of a zarr.json document as JSON, refused as `parse` refuses
/// them (not UTF-8, not JSON): for a caller that looks at the document
/// again after `parse_value`.
pub fn document(bytes: &[u8]) -> Result<Value> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| malformed(format!("zarr.json is not UTF-8: {e}")))?;
    Ok(serde_json::from_str(text)?)
}

/// `parse` of a document already parsed as JSON: a caller holding the
/// value (R-form documents, consolidated entries) saves a serialisation
/// and a parse, which for a root with 1,000 consolidated arrays is most of
/// its open.
pub fn parse_value(doc: &Value) -> Result<NodeMetadata> {
    let obj = doc
        .as_object()
        .ok_or_else(|| malformed("zarr.json must hold a JSON object"))?;
    match require(obj, "zarr_format")? {
        v if v.as_u64() == Some(3) => {}
        v => {
            return Err(malformed(format!(
                "zarr_format must be 3 in zarr.json, got {v}"
            )))
        }
    }
    match require(obj, "node_type")? {
        Value::String(s) if s == "array" => parse_array(obj).map(NodeMetadata::Array),
        Value::String(s) if s == "group" => parse_group(obj).map(NodeMetadata::Group),
        v => Err(malformed(format!(
            "node_type must be \"array\" or \"group\", got {v}"
        ))),
    }
}

/// Serialise as zarr.json (pretty-printed JSON).
pub fn to_json(node: &NodeMetadata) -> Value {
    let mut m = Map::new();
    m.insert("zarr_format".into(), 3.into());
    let extra = match node {
        NodeMetadata::Array(a) => {
            m.insert("node_type".into(), "array".into());
            m.insert("shape".into(), json!(a.shape));
            let fill = a.fill_value.to_json(a.data_type);
            let (data_type, fill, codecs) = numpy_types::restore(a, &fill)
                .unwrap_or_else(|| (a.data_type.name().into(), fill, a.codecs.clone()));
            m.insert("data_type".into(), data_type);
            m.insert(
                "chunk_grid".into(),
                json!({"name": "regular", "configuration": {"chunk_shape": a.chunk_shape}}),
            );
            m.insert("chunk_key_encoding".into(), a.chunk_key_encoding.to_json());
            m.insert("fill_value".into(), fill);
            m.insert("codecs".into(), Value::Array(codecs));
            m.insert("attributes".into(), Value::Object(a.attributes.clone()));
            if let Some(names) = &a.dimension_names {
                m.insert("dimension_names".into(), json!(names));
            }
            if !a.storage_transformers.is_empty() {
                m.insert(
                    "storage_transformers".into(),
                    Value::Array(a.storage_transformers.clone()),
                );
            }
            &a.extra
        }
        NodeMetadata::Group(g) => {
            m.insert("node_type".into(), "group".into());
            m.insert("attributes".into(), Value::Object(g.attributes.clone()));
            &g.extra
        }
    };
    // Core members win over an extra of the same name (only possible for
    // metadata built in code).
    for (k, v) in extra {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{error_naming, files_named, with, without, FIXTURES};
    use super::*;
    use std::path::Path;

    fn array_doc() -> Value {
        json!({
            "zarr_format": 3, "node_type": "array", "shape": [10, 7], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 7]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": -1, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"a": 1}
        })
    }

    fn p(doc: &Value) -> Result<NodeMetadata> {
        parse(doc.to_string().as_bytes())
    }

    fn array(doc: &Value) -> ArrayMetadata {
        match p(doc).unwrap() {
            NodeMetadata::Array(a) => a,
            g => panic!("not an array: {g:?}"),
        }
    }

    /// The error's kind, checking its message names `what`.
    fn fails(doc: &Value, what: &str) -> &'static str {
        error_naming(p(doc), doc, what)
    }

    fn round_trips(node: &NodeMetadata) {
        let text = serde_json::to_string_pretty(&to_json(node)).unwrap();
        assert_eq!(&parse(text.as_bytes()).unwrap(), node, "{text}");
    }

    #[test]
    fn metadata_parses_a_full_array() {
        let doc = with(array_doc(), "dimension_names", json!(["y", null]));
        let a = array(&doc);
        assert_eq!(a.shape, vec![10, 7]);
        assert_eq!(a.data_type, DataType::Int32);
        assert_eq!(a.chunk_shape, vec![3, 7]);
        assert_eq!(
            a.chunk_key_encoding,
            ChunkKeyEncoding::Default { separator: '/' }
        );
        assert_eq!(a.fill_value.bytes, (-1i32).to_ne_bytes());
        assert_eq!(a.codecs.len(), 1);
        assert_eq!(a.attributes["a"], json!(1));
        assert_eq!(a.dimension_names, Some(vec![Some("y".into()), None]));
        assert!(a.storage_transformers.is_empty() && a.extra.is_empty());
        round_trips(&NodeMetadata::Array(a));
    }

    #[test]
    fn metadata_to_json_writes_members_in_conventional_order() {
        let doc = with(array_doc(), "dimension_names", json!(["y", "x"]));
        let doc = with(
            doc,
            "storage_transformers",
            json!([{"name": "t", "must_understand": false}]),
        );
        let doc = with(doc, "ext", json!({"must_understand": false, "v": 1}));
        // Written by zarr-python in another order.
        let mut shuffled = Map::new();
        for (k, v) in doc.as_object().unwrap().iter().rev() {
            shuffled.insert(k.clone(), v.clone());
        }
        let out = to_json(&p(&Value::Object(shuffled)).unwrap());
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "zarr_format",
                "node_type",
                "shape",
                "data_type",
                "chunk_grid",
                "chunk_key_encoding",
                "fill_value",
                "codecs",
                "attributes",
                "dimension_names",
                "storage_transformers",
                "ext"
            ]
        );
        assert_eq!(out["fill_value"], json!(-1));
        // Absent optional members stay absent; attributes are always written.
        let out = to_json(&p(&without(array_doc(), "attributes")).unwrap());
        assert_eq!(out["attributes"], json!({}));
        assert!(out.get("dimension_names").is_none() && out.get("storage_transformers").is_none());
    }

    #[test]
    fn metadata_groups_keep_attributes_and_consolidated_metadata() {
        let cm = json!({"kind": "inline", "must_understand": false, "metadata": {
            "x": {"zarr_format": 3, "node_type": "group", "attributes": {}}}});
        let doc = json!({"zarr_format": 3, "node_type": "group", "attributes": {"t": "x"}, "consolidated_metadata": cm});
        let NodeMetadata::Group(g) = p(&doc).unwrap() else {
            panic!()
        };
        assert_eq!(g.attributes["t"], json!("x"));
        assert_eq!(g.extra["consolidated_metadata"], cm);
        let out = to_json(&NodeMetadata::Group(g.clone()));
        assert_eq!(out, doc);
        round_trips(&NodeMetadata::Group(g));
        // zarr-python 3.0 wrote null here; it reads as absent.
        let doc = json!({"zarr_format": 3, "node_type": "group", "consolidated_metadata": null});
        assert_eq!(
            p(&doc).unwrap(),
            NodeMetadata::Group(GroupMetadata {
                zarr_format: 3,
                ..Default::default()
            })
        );
        let doc = json!({"zarr_format": 3, "node_type": "group"});
        assert_eq!(
            to_json(&p(&doc).unwrap()),
            json!({"zarr_format": 3, "node_type": "group", "attributes": {}})
        );
    }

    #[test]
    fn metadata_must_understand() {
        let ok = json!({"must_understand": false, "anything": [1, 2]});
        let a = array(&with(array_doc(), "my_ext", ok.clone()));
        assert_eq!(a.extra["my_ext"], ok);
        assert_eq!(to_json(&NodeMetadata::Array(a.clone()))["my_ext"], ok);
        round_trips(&NodeMetadata::Array(a));
        for v in [
            json!({"name": "x"}),
            json!({"must_understand": true}),
            json!({"must_understand": "false"}),
            json!(false),
            json!(null),
            json!("x"),
        ] {
            assert_eq!(
                fails(&with(array_doc(), "my_ext", v), "my_ext"),
                "unsupported"
            );
        }
        let g = json!({"zarr_format": 3, "node_type": "group", "my_ext": {"a": 1}});
        assert_eq!(fails(&g, "my_ext"), "unsupported");
        // Array members in a group are unknown there.
        let g = json!({"zarr_format": 3, "node_type": "group", "shape": [1]});
        assert_eq!(fails(&g, "shape"), "unsupported");
        // An unknown extension is reported even if it makes other members odd.
        let doc = with(
            with(array_doc(), "my_ext", json!({})),
            "shape",
            json!([-1, 7]),
        );
        assert_eq!(fails(&doc, "my_ext"), "unsupported");
    }

    #[test]
    fn metadata_storage_transformers() {
        let t = json!([{"name": "cache", "must_understand": false, "configuration": {}}]);
        let a = array(&with(array_doc(), "storage_transformers", t.clone()));
        assert_eq!(Value::Array(a.storage_transformers.clone()), t);
        round_trips(&NodeMetadata::Array(a));
        assert!(array(&with(array_doc(), "storage_transformers", json!([])))
            .storage_transformers
            .is_empty());
        for t in [
            json!([{"name": "cache"}]),
            json!(["cache"]),
            json!([{"name": "cache", "must_understand": true}]),
        ] {
            assert_eq!(
                fails(&with(array_doc(), "storage_transformers", t), "cache"),
                "unsupported"
            );
        }
        assert_eq!(
            fails(
                &with(array_doc(), "storage_transformers", json!({})),
                "storage_transformers"
            ),
            "metadata"
        );
    }

    #[test]
    fn metadata_missing_required_members() {
        for m in [
            "zarr_format",
            "node_type",
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_key_encoding",
            "fill_value",
            "codecs",
        ] {
            assert_eq!(fails(&without(array_doc(), m), m), "metadata", "{m}");
        }
        let g = json!({"zarr_format": 3});
        assert_eq!(fails(&g, "node_type"), "metadata");
    }

    #[test]
    fn metadata_wrong_types_name_the_member() {
        for (m, v) in [
            ("zarr_format", json!(2)),
            ("zarr_format", json!("3")),
            ("node_type", json!("dataset")),
            ("node_type", json!(1)),
            ("shape", json!([10, -7])),
            ("shape", json!([10, 7.5])),
            ("shape", json!(10)),
            ("data_type", json!(5)),
            ("data_type", json!({"configuration": {}})),
            ("chunk_grid", json!(["regular"])),
            ("chunk_grid", json!("regular")),
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": []}),
            ),
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": {"chunk_shape": [3, 0]}}),
            ),
            (
                "chunk_grid",
                json!({"name": "regular", "configuration": {"chunk_shape": "3"}}),
            ),
            (
                "chunk_key_encoding",
                json!({"name": "default", "configuration": {"separator": "-"}}),
            ),
            (
                "chunk_key_encoding",
                json!({"name": "v2", "configuration": {"separator": 1}}),
            ),
            ("chunk_key_encoding", json!(3)),
            ("fill_value", json!("x")),
            ("fill_value", json!(2147483648i64)),
            ("codecs", json!([])),
            ("codecs", json!({"name": "bytes"})),
            ("attributes", json!([1])),
            ("dimension_names", json!(["y"])),
            ("dimension_names", json!(["y", 1])),
            ("dimension_names", json!("y")),
        ] {
            assert_eq!(
                fails(&with(array_doc(), m, v.clone()), m),
                "metadata",
                "{m}: {v}"
            );
        }
    }

    #[test]
    fn metadata_rank_mismatch_between_shape_and_chunk_shape() {
        let grid = |cs: Value| json!({"name": "regular", "configuration": {"chunk_shape": cs}});
        for cs in [json!([3]), json!([3, 7, 1]), json!([])] {
            let e = fails(&with(array_doc(), "chunk_grid", grid(cs)), "chunk_shape");
            assert_eq!(e, "metadata");
        }
        // 0-d arrays have an empty chunk_shape.
        let doc = with(
            with(array_doc(), "shape", json!([])),
            "chunk_grid",
            grid(json!([])),
        );
        let a = array(&doc);
        assert!(a.shape.is_empty() && a.chunk_shape.is_empty());
        assert_eq!(a.chunk_key_encoding.key(&[]), "c");
    }

    #[test]
    fn metadata_unsupported_features_name_themselves() {
        assert_eq!(
            fails(
                &with(array_doc(), "data_type", json!("bfloat16")),
                "bfloat16"
            ),
            "unsupported"
        );
        let dt = json!({"name": "numpy.datetime32", "configuration": {"unit": "ns"}});
        assert_eq!(
            fails(&with(array_doc(), "data_type", dt), "numpy.datetime32"),
            "unsupported"
        );
        let grid = json!({"name": "rectilinear", "configuration": {}});
        assert_eq!(
            fails(&with(array_doc(), "chunk_grid", grid), "rectilinear"),
            "unsupported"
        );
        let cke = json!({"name": "hashed", "configuration": {}});
        assert_eq!(
            fails(&with(array_doc(), "chunk_key_encoding", cke), "hashed"),
            "unsupported"
        );
        // A core type given as an extension object is the core type.
        let a = array(&with(array_doc(), "data_type", json!({"name": "int32"})));
        assert_eq!(a.data_type, DataType::Int32);
    }

    #[test]
    fn metadata_chunk_key_encoding_defaults() {
        let cke = |v: Value| array(&with(array_doc(), "chunk_key_encoding", v)).chunk_key_encoding;
        assert_eq!(
            cke(json!({"name": "default"})),
            ChunkKeyEncoding::Default { separator: '/' }
        );
        assert_eq!(
            cke(json!("default")),
            ChunkKeyEncoding::Default { separator: '/' }
        );
        assert_eq!(
            cke(json!({"name": "v2"})),
            ChunkKeyEncoding::V2 { separator: '.' }
        );
        assert_eq!(cke(json!("v2")), ChunkKeyEncoding::V2 { separator: '.' });
        assert_eq!(
            cke(json!({"name": "v2", "configuration": {}})),
            ChunkKeyEncoding::V2 { separator: '.' }
        );
        assert_eq!(
            cke(json!({"name": "v2", "configuration": {"separator": "/"}})),
            ChunkKeyEncoding::V2 { separator: '/' }
        );
        assert_eq!(
            cke(json!({"name": "default", "configuration": {"separator": "."}})),
            ChunkKeyEncoding::Default { separator: '.' }
        );
        // The separator is always written out.
        assert_eq!(
            ChunkKeyEncoding::V2 { separator: '.' }.to_json(),
            json!({"name": "v2", "configuration": {"separator": "."}})
        );
    }

    #[test]
    fn metadata_fill_values_in_documents() {
        let doc = with(
            with(array_doc(), "data_type", json!("uint64")),
            "fill_value",
            json!(u64::MAX),
        );
        let a = array(&doc);
        assert_eq!(a.fill_value.bytes, u64::MAX.to_ne_bytes());
        let text = serde_json::to_string(&to_json(&NodeMetadata::Array(a))).unwrap();
        assert!(
            text.contains("\"fill_value\":18446744073709551615"),
            "{text}"
        );
        let doc = with(
            with(array_doc(), "data_type", json!("float16")),
            "fill_value",
            json!("NaN"),
        );
        assert_eq!(to_json(&p(&doc).unwrap())["fill_value"], json!("NaN"));
        let doc = with(
            with(array_doc(), "data_type", json!("complex64")),
            "fill_value",
            json!([1, 2, 3]),
        );
        assert_eq!(fails(&doc, "fill_value"), "metadata");
    }

    #[test]
    fn metadata_bad_documents() {
        assert_eq!(
            parse(b"{\"zarr_format\": 3,").unwrap_err().kind(),
            "metadata"
        );
        assert_eq!(parse(b"").unwrap_err().kind(), "metadata");
        assert_eq!(parse(b"[3]").unwrap_err().kind(), "metadata");
        let e = parse(
            b"{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {\"a\": \"\xff\"}}",
        )
        .unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.message().contains("UTF-8"), "{}", e.message());
    }

    /// Parse one document written by zarr-python; `false` if it is an array
    /// of the "string" data type, which is refused as unsupported for now.
    fn check_fixture(bytes: &[u8], what: &str) -> bool {
        let doc: Value = serde_json::from_slice(bytes).unwrap();
        let node = parse(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        round_trips(&node);
        // What we write keeps every member zarr-python wrote, except an empty
        // storage_transformers list and zarr-python 3.0's null consolidated_metadata.
        let out = to_json(&node);
        for (k, v) in doc.as_object().unwrap() {
            let dropped = (k == "storage_transformers" && *v == json!([]))
                || (k == "consolidated_metadata" && v.is_null());
            if !dropped {
                assert!(out.get(k).is_some(), "{what}: {k} was dropped");
            }
        }
        if let NodeMetadata::Array(a) = &node {
            assert_eq!(out["fill_value"], doc["fill_value"], "{what}");
            if a.data_type != DataType::String {
                assert_eq!(a.fill_value.bytes.len(), a.data_type.size());
            }
        }
        true
    }

    #[test]
    fn metadata_zarr_python_fixtures_parse_and_round_trip() {
        let root = Path::new(FIXTURES).join("v3");
        if !root.is_dir() {
            println!(
                "note: {} is absent; skipping the zarr-python fixture round trip",
                root.display()
            );
            return;
        }
        let mut files = Vec::new();
        files_named(&root, "zarr.json", &mut files);
        let (mut parsed, mut embedded) = (0, 0);
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let doc: Value = serde_json::from_slice(&bytes).unwrap();
            check_fixture(&bytes, &f.display().to_string());
            parsed += 1;
            // Consolidated metadata holds whole documents of the nodes below.
            if let Some(nodes) = doc
                .pointer("/consolidated_metadata/metadata")
                .and_then(Value::as_object)
            {
                for (name, node) in nodes {
                    check_fixture(
                        node.to_string().as_bytes(),
                        &format!("{} -> {name}", f.display()),
                    );
                    embedded += 1;
                }
            }
        }
        println!("{parsed} zarr.json parsed, {embedded} consolidated entries");
        assert!(parsed > 0);
    }
}
