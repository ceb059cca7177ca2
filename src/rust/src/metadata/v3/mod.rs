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
        // A v2 array's NumPy structured dtype, in R's form of its metadata.
        Value::Array(_) => {
            let (t, fill) = super::structs::map_v2(v, fill)?;
            extra.insert(numpy_types::WRITTEN.into(), v.clone());
            let fill = fill.unwrap_or(FillValue::zero(t.data_type()));
            return Ok((t.data_type(), fill, codecs));
        }
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

/// The chunk shape of a regular grid, or each dimension's longest chunk
/// and the grid of a rectilinear one.
fn chunk_grid(v: &Value, shape: &[u64]) -> Result<(Vec<u64>, Option<ChunkGrid>)> {
    let (name, config) = extension(v, "chunk_grid")?;
    if name == "rectilinear" {
        let grid = ChunkGrid::parse_rectilinear(v.get("configuration"), shape)?;
        return Ok((grid.longest(), Some(grid)));
    }
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
    Ok((cs, None))
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
    let (chunk_shape, rectilinear) = chunk_grid(require(obj, "chunk_grid")?, &shape)?;
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
        rectilinear,
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
            let grid = match &a.rectilinear {
                Some(g) => g.rectilinear_json(),
                None => json!({"name": "regular", "configuration": {"chunk_shape": a.chunk_shape}}),
            };
            m.insert("chunk_grid".into(), grid);
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
mod tests;
