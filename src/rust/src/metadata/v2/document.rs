//! The Zarr v2 documents themselves: reading JSON objects and their
//! members, NumPy type strings, v2 fill values, `.zattrs`, `.zgroup` and
//! the consolidated `.zmetadata`.

use super::*;
use crate::codec::fixed_string::FixedString;
use crate::dtype::numpy::TypeStr;

pub(crate) const ARRAY_MEMBERS: [&str; 9] = [
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
];

pub(super) fn require<'a>(
    obj: &'a Map<String, Value>,
    member: &str,
    doc: &str,
) -> Result<&'a Value> {
    obj.get(member)
        .ok_or_else(|| malformed(format!("{doc}: missing required member '{member}'")))
}

pub(super) fn json_object(bytes: &[u8], doc: &str) -> Result<Map<String, Value>> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| malformed(format!("{doc} is not UTF-8: {e}")))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| malformed(format!("{doc} is not valid JSON: {e}")))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err(malformed(format!("{doc} must hold a JSON object"))),
    }
}

pub(super) fn check_zarr_format(obj: &Map<String, Value>, doc: &str) -> Result<()> {
    match require(obj, "zarr_format", doc)? {
        v if v.as_u64() == Some(2) => Ok(()),
        v => Err(malformed(format!("{doc}: zarr_format must be 2, got {v}"))),
    }
}

/// The fixed-width string codec of a NumPy `U` or `S` type string; None
/// for other dtypes.
pub(super) fn fixed_string_of(v: &Value) -> Option<Result<FixedString>> {
    FixedString::parse_numpy(v.as_str()?).map(|r| r.map_err(|e| e.context(".zarray")))
}

/// A NumPy type string ("<i4", ">f8", "|b1", "<U5") -> the data type and
/// the byte order of its elements (None for one-byte types and `|S`).
pub fn parse_dtype(v: &Value) -> Result<(DataType, Option<Endian>)> {
    if let Some(f) = fixed_string_of(v) {
        return Ok((DataType::String, f?.utf32));
    }
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(_) => {
            return Err(ZarrError::Unsupported(format!(
                "structured data types in Zarr v2 are not supported ({v})"
            )))
        }
        _ => {
            return Err(malformed(format!(
                ".zarray: dtype must be a string such as \"<f8\", got {v}"
            )))
        }
    };
    let unknown = || malformed(format!(".zarray: unknown dtype '{s}'"));
    // Zarr v2 type strings always start with their byte order; the kinds
    // refused come first, as "<M8[ns]" is no plain type string.
    let mut head = s.chars();
    let kind = match (head.next(), head.next()) {
        (Some('<' | '>' | '|' | '='), Some(k)) => k,
        _ => return Err(unknown()),
    };
    match kind {
        // Python objects: strings, with the vlen-utf8 object codec.
        'O' if s == "|O" => return Ok((DataType::String, None)),
        'O' => {
            return Err(ZarrError::Unsupported(format!(
                "object dtype '{s}' is not supported (only \"|O\" strings)"
            )))
        }
        'M' | 'm' => {
            return Err(ZarrError::Unsupported(format!(
                "datetime and timedelta data types in Zarr v2 are not supported ('{s}')"
            )))
        }
        'V' => {
            return Err(ZarrError::Unsupported(format!(
                "raw (void) data types in Zarr v2 are not supported ('{s}')"
            )))
        }
        _ => {}
    }
    let t = TypeStr::split(s).ok_or_else(unknown)?;
    let dt = match (t.kind, t.size) {
        (_, None) => return Err(unknown()),
        ('f', Some(12 | 16)) | ('c', Some(24 | 32)) => {
            return Err(ZarrError::Unsupported(format!(
                "extended-precision data type '{s}' is not supported"
            )))
        }
        _ => t.data_type().ok_or_else(unknown)?,
    };
    if dt.size() == 1 {
        return Ok((dt, None));
    }
    if t.order == Some('|') {
        return Err(malformed(format!(
            ".zarray: dtype '{s}': byte order '|' is only for one-byte types"
        )));
    }
    Ok((dt, Some(t.endian())))
}

/// The NumPy type string of `dt` stored with `endian` (ignored for
/// one-byte types, which are written with "|").
pub fn dtype_string(dt: DataType, endian: Option<Endian>) -> Result<String> {
    let (kind, size) = match dt {
        DataType::Bool => ('b', 1),
        DataType::Int8 => ('i', 1),
        DataType::Int16 => ('i', 2),
        DataType::Int32 => ('i', 4),
        DataType::Int64 => ('i', 8),
        DataType::UInt8 => ('u', 1),
        DataType::UInt16 => ('u', 2),
        DataType::UInt32 => ('u', 4),
        DataType::UInt64 => ('u', 8),
        DataType::Float16 => ('f', 2),
        DataType::Float32 => ('f', 4),
        DataType::Float64 => ('f', 8),
        DataType::Complex64 => ('c', 8),
        DataType::Complex128 => ('c', 16),
        DataType::String => return Ok("|O".into()),
        // A list, written from the struct's fields (structs.rs).
        DataType::Record(_) => {
            return Err(ZarrError::Unsupported(
                "a struct's dtype is a list of its fields".into(),
            ))
        }
    };
    let order = match (size, endian) {
        (1, _) => '|',
        (_, Some(Endian::Big)) => '>',
        (_, Some(Endian::Little)) => '<',
        (_, None) => {
            return Err(malformed(format!(
                "the bytes codec of a {} array has no endian",
                dt.name()
            )))
        }
    };
    Ok(format!("{order}{kind}{size}"))
}

/// A v2 fill_value: the spec's forms, plus what older writers produced
/// (integral floats such as 0.0 for integer types, 0/1 for booleans, a
/// bare number for complex types). `null` gives zero bytes and `false`:
/// the array has no missing-value marker.
pub(super) fn fill_value(v: &Value, dt: DataType) -> Result<(FillValue, bool)> {
    if v.is_null() {
        return Ok((FillValue::zero(dt), false));
    }
    let err = match FillValue::parse(v, dt) {
        Ok(f) => return Ok((f, true)),
        Err(e) => e,
    };
    // zarr-python 2 writes 0 as the fill value of object (string) arrays:
    // no string equals it, so it marks nothing.
    if dt == DataType::String && v.as_f64() == Some(0.0) {
        return Ok((FillValue::zero(dt), false));
    }
    let lenient = match (dt, v) {
        (DataType::Bool, Value::Number(n)) => match n.as_f64() {
            Some(0.0) => Some(Value::Bool(false)),
            Some(1.0) => Some(Value::Bool(true)),
            _ => None,
        },
        (DataType::Complex64 | DataType::Complex128, Value::Number(_) | Value::String(_)) => {
            Some(json!([v, 0.0]))
        }
        (_, Value::Number(n)) if n.is_f64() => {
            let x = n.as_f64().expect("a float");
            if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 {
                Some(json!(x as i64))
            } else {
                None
            }
        }
        _ => None,
    };
    match lenient.map(|l| FillValue::parse(&l, dt)) {
        Some(Ok(f)) => Ok((f, true)),
        _ => Err(err),
    }
}

/// The fill value of a fixed-width string array: the text for `U`, and
/// base64 of the bytes for `S`, as numcodecs writes it. Trailing NULs are
/// padding, as in the elements.
pub(super) fn fixed_string_fill(v: &Value, f: &FixedString) -> Result<(FillValue, bool)> {
    use base64::Engine as _;
    let bad = |want: &str| {
        malformed(format!(
            ".zarray: fill_value {v} is not valid for dtype {}: expected {want}",
            f.numpy_dtype()
        ))
    };
    let text = match (v, f.utf32) {
        (Value::Null, _) => return Ok((FillValue { bytes: Vec::new() }, false)),
        (Value::String(s), Some(_)) => s.clone(),
        (Value::String(s), None) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| bad("the base64 encoding of the bytes"))?;
            String::from_utf8(bytes).map_err(|_| bad("base64 of UTF-8 text"))?
        }
        _ => return Err(bad("a string or null")),
    };
    let bytes = text.trim_end_matches('\0').as_bytes().to_vec();
    Ok((FillValue { bytes }, true))
}

/// The JSON of a fill value as v2 writes it: NaN payloads collapse to
/// "NaN", the only NaN v2 can spell; `S` strings are base64.
pub(super) fn fill_to_json(meta: &ArrayMetadata, fixed: Option<&FixedString>) -> Value {
    if !meta.fill_marks_na {
        return Value::Null;
    }
    if let Some(FixedString { utf32: None, .. }) = fixed {
        use base64::Engine as _;
        return base64::engine::general_purpose::STANDARD
            .encode(&meta.fill_value.bytes)
            .into();
    }
    fn plain(v: Value) -> Value {
        match v {
            Value::String(s) if s.starts_with("0x") => Value::from("NaN"),
            Value::Array(a) => Value::Array(a.into_iter().map(plain).collect()),
            other => other,
        }
    }
    plain(meta.fill_value.to_json(meta.data_type))
}

pub(super) fn dimension_names(
    attrs: &Map<String, Value>,
    rank: usize,
) -> Option<Vec<Option<String>>> {
    let list = attrs.get(ARRAY_DIMENSIONS)?.as_array()?;
    if list.len() != rank {
        return None;
    }
    list.iter()
        .map(|n| match n {
            Value::String(s) => Some(Some(s.clone())),
            Value::Null => Some(None),
            _ => None,
        })
        .collect()
}

pub(super) fn attributes(zattrs: Option<&Value>) -> Result<Map<String, Value>> {
    match zattrs {
        None => Ok(Map::new()),
        Some(Value::Object(o)) => {
            super::strict::refuse_nul(o, ".zattrs")?;
            Ok(o.clone())
        }
        Some(v) => Err(malformed(format!(
            ".zattrs must hold a JSON object, got {v}"
        ))),
    }
}

/// A group from its parsed `.zgroup` document and `.zattrs` (if any).
pub fn group_from_json(zgroup: &Value, zattrs: Option<&Value>) -> Result<GroupMetadata> {
    let obj = zgroup
        .as_object()
        .ok_or_else(|| malformed(".zgroup must hold a JSON object"))?;
    check_zarr_format(obj, ".zgroup")?;
    // zarr-python 3 puts an empty "consolidated_metadata" in the .zgroup
    // entries of .zmetadata; it means nothing in v2.
    let extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| *k != "zarr_format" && *k != "consolidated_metadata")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(GroupMetadata {
        attributes: attributes(zattrs)?,
        extra,
        zarr_format: 2,
    })
}

/// Parse a `.zgroup` document and, if the node has one, its `.zattrs`.
pub fn parse_group(zgroup: &[u8], zattrs: Option<&[u8]>) -> Result<GroupMetadata> {
    let doc = Value::Object(json_object(zgroup, ".zgroup")?);
    let attrs = zattrs
        .map(|b| json_object(b, ".zattrs").map(Value::Object))
        .transpose()?;
    group_from_json(&doc, attrs.as_ref())
}

/// The `.zgroup` and `.zattrs` documents of a group.
pub fn group_to_json(meta: &GroupMetadata) -> (Value, Value) {
    let mut zgroup = Map::new();
    zgroup.insert("zarr_format".into(), 2.into());
    for (k, v) in &meta.extra {
        zgroup.entry(k.clone()).or_insert_with(|| v.clone());
    }
    (
        Value::Object(zgroup),
        Value::Object(meta.attributes.clone()),
    )
}

/// The `metadata` map of a `.zmetadata` document: store keys relative to
/// the consolidated root ("a/b/.zarray", ".zattrs", ...) -> documents.
pub fn parse_consolidated(zmetadata: &[u8]) -> Result<Map<String, Value>> {
    consolidated_metadata(&json_object(zmetadata, ".zmetadata")?).cloned()
}

/// The `metadata` object of a parsed `.zmetadata` document, once its
/// format is checked.
pub fn consolidated_metadata(obj: &Map<String, Value>) -> Result<&Map<String, Value>> {
    match obj.get("zarr_consolidated_format") {
        None => {
            return Err(malformed(
                ".zmetadata: missing required member 'zarr_consolidated_format'",
            ))
        }
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => {
            return Err(ZarrError::Unsupported(format!(
                ".zmetadata: zarr_consolidated_format {v} is not supported (only 1)"
            )))
        }
    }
    match obj.get("metadata") {
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(malformed(".zmetadata: metadata must be an object")),
        None => Err(malformed(".zmetadata: missing required member 'metadata'")),
    }
}
