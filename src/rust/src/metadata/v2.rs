//! Zarr v2 documents (v2-v2.0.rst): `.zarray`, `.zgroup`, `.zattrs`, and the
//! consolidated `.zmetadata` that zarr-python writes.
//!
//! A v2 array is held as the same `ArrayMetadata` as a v3 one, with its
//! layout and numcodecs configuration turned into a v3-style codec list:
//!
//!   [transpose (reversed order) if order "F"]
//!   + bytes (endian from the dtype string); for strings `vlen-utf8`
//!     (dtype "|O", the object codec first of the filters) or
//!     `numpy.fixed_string` (dtypes "<U5", ">U5", "|S5")
//!   + filters, in order, as bytes -> bytes codecs
//!   + the compressor
//!
//! Filters act on the chunk's memory (numcodecs flattens it in memory
//! order), which is what the `bytes` codec outputs, so putting them after
//! `bytes` gives the same stored bytes. Compressors with a v3 codec of the
//! same bytes map to it (gzip, zstd, blosc, crc32c); zlib, lz4, bz2 and the
//! delta filter map to the `numcodecs.*` codecs of this crate. `fill_value:
//! null` reads as zero bytes with `fill_marks_na` false; the fill value of
//! an `S` dtype is base64, as numcodecs writes it. `_ARRAY_DIMENSIONS`
//! in `.zattrs` (the xarray convention) gives the dimension names.

use super::*;
use crate::codec::fixed_string::FixedString;
use crate::codec::{ArrayToBytes, CodecChain, Endian};

/// Store keys of the v2 documents, relative to a node's prefix.
pub const ZARRAY: &str = ".zarray";
pub const ZGROUP: &str = ".zgroup";
pub const ZATTRS: &str = ".zattrs";
pub const ZMETADATA: &str = ".zmetadata";
/// The attribute xarray keeps dimension names in.
pub const ARRAY_DIMENSIONS: &str = "_ARRAY_DIMENSIONS";

const ARRAY_MEMBERS: [&str; 9] = [
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

fn require<'a>(obj: &'a Map<String, Value>, member: &str, doc: &str) -> Result<&'a Value> {
    obj.get(member)
        .ok_or_else(|| malformed(format!("{doc}: missing required member '{member}'")))
}

fn json_object(bytes: &[u8], doc: &str) -> Result<Map<String, Value>> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| malformed(format!("{doc} is not UTF-8: {e}")))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| malformed(format!("{doc} is not valid JSON: {e}")))?;
    match v {
        Value::Object(o) => Ok(o),
        _ => Err(malformed(format!("{doc} must hold a JSON object"))),
    }
}

fn check_zarr_format(obj: &Map<String, Value>, doc: &str) -> Result<()> {
    match require(obj, "zarr_format", doc)? {
        v if v.as_u64() == Some(2) => Ok(()),
        v => Err(malformed(format!("{doc}: zarr_format must be 2, got {v}"))),
    }
}

/// The fixed-width string codec of a NumPy `U` or `S` type string; None
/// for other dtypes.
fn fixed_string_of(v: &Value) -> Option<Result<FixedString>> {
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
    let mut chars = s.chars();
    let (order, kind) = match (chars.next(), chars.next()) {
        (Some(o), Some(k)) => (o, k),
        _ => return Err(unknown()),
    };
    if !matches!(order, '<' | '>' | '|' | '=') {
        return Err(unknown());
    }
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
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unknown());
    }
    let size: usize = digits.parse().map_err(|_| unknown())?;
    let dt = match (kind, size) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('f', 12 | 16) | ('c', 24 | 32) => {
            return Err(ZarrError::Unsupported(format!(
                "extended-precision data type '{s}' is not supported"
            )))
        }
        _ => return Err(unknown()),
    };
    let endian = match (size, order) {
        (1, _) => None,
        (_, '<') => Some(Endian::Little),
        (_, '>') => Some(Endian::Big),
        (_, '=') => Some(Endian::native()),
        _ => {
            return Err(malformed(format!(
                ".zarray: dtype '{s}': byte order '|' is only for one-byte types"
            )))
        }
    };
    Ok((dt, endian))
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
fn fill_value(v: &Value, dt: DataType) -> Result<(FillValue, bool)> {
    if v.is_null() {
        return Ok((FillValue::zero(dt), false));
    }
    let err = match FillValue::parse(v, dt) {
        Ok(f) => return Ok((f, true)),
        Err(e) => e,
    };
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
fn fixed_string_fill(v: &Value, f: &FixedString) -> Result<(FillValue, bool)> {
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
fn fill_to_json(meta: &ArrayMetadata, fixed: Option<&FixedString>) -> Value {
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

fn int_member(cfg: &Map<String, Value>, key: &str, default: i64) -> Value {
    cfg.get(key)
        .filter(|v| !v.is_null())
        .cloned()
        .unwrap_or_else(|| Value::from(default))
}

/// One numcodecs configuration (`{"id": ..., ...}`, the compressor or a
/// filter) -> a codec entry of the chain. `typesize` is the item size of
/// the buffer this codec receives (numcodecs gives it to blosc) and is
/// updated to that of its output.
fn codec_from_numcodecs(v: &Value, typesize: &mut usize, role: &str) -> Result<Value> {
    let cfg = v.as_object().ok_or_else(|| {
        malformed(format!(
            ".zarray: a {role} must be an object with an 'id', got {v}"
        ))
    })?;
    let id = match cfg.get("id") {
        Some(Value::String(s)) => s.as_str(),
        _ => return Err(malformed(format!(".zarray: {role} {v} has no string 'id'"))),
    };
    let out = match id {
        "zlib" => json!({"name": "numcodecs.zlib", "configuration": {
            "level": int_member(cfg, "level", 1)}}),
        "gzip" => json!({"name": "gzip", "configuration": {
            "level": int_member(cfg, "level", 1)}}),
        "zstd" => json!({"name": "zstd", "configuration": {
            "level": int_member(cfg, "level", 0),
            "checksum": cfg.get("checksum").filter(|c| !c.is_null()).cloned().unwrap_or(Value::Bool(false))}}),
        "blosc" => {
            let typesize = match cfg.get("typesize") {
                Some(t) if !t.is_null() => t.clone(),
                _ => Value::from(*typesize),
            };
            // numcodecs' AUTOSHUFFLE (-1) picks by item size.
            let shuffle = match cfg.get("shuffle").and_then(Value::as_i64) {
                None if cfg.get("shuffle").is_some_and(|s| !s.is_null()) => cfg["shuffle"].clone(),
                None | Some(1) => Value::from("shuffle"),
                Some(0) => Value::from("noshuffle"),
                Some(2) => Value::from("bitshuffle"),
                Some(-1) if typesize.as_u64() == Some(1) => Value::from("bitshuffle"),
                Some(-1) => Value::from("shuffle"),
                Some(other) => {
                    return Err(malformed(format!(
                        ".zarray: blosc shuffle must be -1, 0, 1 or 2, not {other}"
                    )))
                }
            };
            json!({"name": "blosc", "configuration": {
                "cname": cfg.get("cname").filter(|c| !c.is_null()).cloned().unwrap_or_else(|| Value::from("lz4")),
                "clevel": int_member(cfg, "clevel", 5),
                "shuffle": shuffle,
                "typesize": typesize,
                "blocksize": int_member(cfg, "blocksize", 0)}})
        }
        "lz4" => json!({"name": "numcodecs.lz4", "configuration": {
            "acceleration": int_member(cfg, "acceleration", 1)}}),
        "bz2" => json!({"name": "numcodecs.bz2", "configuration": {
            "level": int_member(cfg, "level", 1)}}),
        "shuffle" => {
            // A filter: the bytes it hands on keep their element structure.
            let es = int_member(cfg, "elementsize", *typesize as i64);
            return Ok(json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": es}}));
        }
        "crc32c" => match cfg.get("location") {
            None | Some(Value::Null) => json!({"name": "crc32c"}),
            Some(Value::String(l)) if l == "end" => json!({"name": "crc32c"}),
            Some(l) => {
                return Err(ZarrError::Unsupported(format!(
                    "unsupported {role} 'crc32c' with location {l} (only \"end\")"
                )))
            }
        },
        "delta" => {
            let dtype = cfg.get("dtype").cloned().unwrap_or(Value::Null);
            let astype = match cfg.get("astype") {
                Some(a) if !a.is_null() => a.clone(),
                _ => dtype.clone(),
            };
            let codec = json!({"name": "numcodecs.delta", "configuration": {
                "dtype": dtype, "astype": astype}});
            // The item size of what delta hands on.
            if let Ok((adt, _)) = parse_dtype(&astype) {
                *typesize = adt.size();
            }
            return Ok(codec);
        }
        _ => return Err(ZarrError::Unsupported(format!("unsupported {role} '{id}'"))),
    };
    // Compressors hand on plain bytes.
    *typesize = 1;
    Ok(out)
}

/// A codec entry of the chain -> its numcodecs configuration.
fn codec_to_numcodecs(v: &Value) -> Result<Value> {
    let name = v.get("name").and_then(Value::as_str).unwrap_or("?");
    let empty = Map::new();
    let cfg = v
        .get("configuration")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let get = |k: &str| cfg.get(k).cloned().unwrap_or(Value::Null);
    Ok(match name {
        "numcodecs.zlib" => json!({"id": "zlib", "level": get("level")}),
        "gzip" => json!({"id": "gzip", "level": get("level")}),
        "zstd" => {
            // Older numcodecs take no 'checksum': write it only when set.
            if cfg.get("checksum") == Some(&Value::Bool(true)) {
                json!({"id": "zstd", "level": get("level"), "checksum": true})
            } else {
                json!({"id": "zstd", "level": get("level")})
            }
        }
        "blosc" => {
            let shuffle = match cfg.get("shuffle").and_then(Value::as_str) {
                Some("noshuffle") => 0,
                Some("bitshuffle") => 2,
                _ => 1,
            };
            json!({"id": "blosc", "cname": get("cname"), "clevel": get("clevel"),
                   "shuffle": shuffle, "blocksize": get("blocksize")})
        }
        "numcodecs.lz4" => json!({"id": "lz4", "acceleration": get("acceleration")}),
        "numcodecs.bz2" => json!({"id": "bz2", "level": get("level")}),
        "numcodecs.shuffle" => json!({"id": "shuffle", "elementsize": get("elementsize")}),
        "crc32c" => json!({"id": "crc32c"}),
        "numcodecs.delta" => {
            json!({"id": "delta", "dtype": get("dtype"), "astype": get("astype")})
        }
        other => {
            return Err(ZarrError::Unsupported(format!(
                "codec '{other}' cannot be written to Zarr v2 metadata"
            )))
        }
    })
}

fn dimension_names(attrs: &Map<String, Value>, rank: usize) -> Option<Vec<Option<String>>> {
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

fn attributes(zattrs: Option<&Value>) -> Result<Map<String, Value>> {
    match zattrs {
        None => Ok(Map::new()),
        Some(Value::Object(o)) => Ok(o.clone()),
        Some(v) => Err(malformed(format!(
            ".zattrs must hold a JSON object, got {v}"
        ))),
    }
}

/// An array from its parsed `.zarray` document and `.zattrs` (if any), as
/// found in a `.zmetadata` entry.
pub fn array_from_json(zarray: &Value, zattrs: Option<&Value>) -> Result<ArrayMetadata> {
    let obj = zarray
        .as_object()
        .ok_or_else(|| malformed(".zarray must hold a JSON object"))?;
    check_zarr_format(obj, ".zarray")?;
    let shape = u64_list(require(obj, "shape", ".zarray")?, ".zarray: shape")?;
    let chunk_shape = u64_list(require(obj, "chunks", ".zarray")?, ".zarray: chunks")?;
    check_chunk_shape(&chunk_shape, &shape, ".zarray: chunks")?;
    let dtype = require(obj, "dtype", ".zarray")?;
    let (data_type, endian) = parse_dtype(dtype)?;
    let fixed = fixed_string_of(dtype).transpose()?;
    let fill = require(obj, "fill_value", ".zarray")?;
    let (fill_value, fill_marks_na) = match &fixed {
        Some(f) => fixed_string_fill(fill, f)?,
        None => fill_value(fill, data_type)?,
    };
    let ndim = shape.len();
    let mut codecs = Vec::new();
    match require(obj, "order", ".zarray")? {
        Value::String(s) if s == "C" => {}
        Value::String(s) if s == "F" => {
            let rev: Vec<usize> = (0..ndim).rev().collect();
            codecs.push(crate::codec::transpose::to_json(&rev));
        }
        v => {
            return Err(malformed(format!(
                ".zarray: order must be \"C\" or \"F\", got {v}"
            )))
        }
    }
    let mut typesize = data_type.size();
    let mut filters: Vec<&Value> = match obj.get("filters") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.iter().collect(),
        Some(v) => {
            return Err(malformed(format!(
                ".zarray: filters must be an array or null, got {v}"
            )))
        }
    };
    if let Some(f) = &fixed {
        codecs.push(f.to_json());
        typesize = f.item_size();
    } else if data_type == DataType::String {
        // The object codec turns the strings into bytes: it is the chain's
        // array -> bytes codec.
        match filters
            .first()
            .and_then(|f| f.get("id"))
            .and_then(Value::as_str)
        {
            Some("vlen-utf8") => {
                filters.remove(0);
                codecs.push(json!({"name": "vlen-utf8", "configuration": {}}));
            }
            _ => {
                return Err(ZarrError::Unsupported(
                    "Zarr v2 object arrays are supported with the 'vlen-utf8' codec only".into(),
                ))
            }
        }
    } else {
        codecs.push(crate::codec::bytes::to_json(endian));
    }
    for f in filters {
        codecs.push(codec_from_numcodecs(f, &mut typesize, "filter")?);
    }
    match obj.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => codecs.push(codec_from_numcodecs(c, &mut typesize, "compressor")?),
    }
    // Validate every configuration now, and keep the canonical entries.
    let chain = CodecChain::from_json(&codecs, data_type, &fill_value.bytes, ndim)
        .map_err(|e| e.context(".zarray"))?;
    let codecs = chain.to_json();
    let chunk_key_encoding = match obj.get("dimension_separator") {
        None | Some(Value::Null) => ChunkKeyEncoding::V2 { separator: '.' },
        Some(Value::String(s)) if s == "." => ChunkKeyEncoding::V2 { separator: '.' },
        Some(Value::String(s)) if s == "/" => ChunkKeyEncoding::V2 { separator: '/' },
        Some(v) => {
            return Err(malformed(format!(
                ".zarray: dimension_separator must be \".\" or \"/\", got {v}"
            )))
        }
    };
    // The spec says other members should be ignored; keep them to write back.
    let extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !ARRAY_MEMBERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let attributes = attributes(zattrs)?;
    Ok(ArrayMetadata {
        dimension_names: dimension_names(&attributes, ndim),
        attributes,
        shape,
        data_type,
        chunk_shape,
        chunk_key_encoding,
        fill_value,
        codecs,
        storage_transformers: Vec::new(),
        extra,
        zarr_format: 2,
        fill_marks_na,
    })
}

/// Parse a `.zarray` document and, if the node has one, its `.zattrs`.
pub fn parse_array(zarray: &[u8], zattrs: Option<&[u8]>) -> Result<ArrayMetadata> {
    let doc = Value::Object(json_object(zarray, ".zarray")?);
    let attrs = zattrs
        .map(|b| json_object(b, ".zattrs").map(Value::Object))
        .transpose()?;
    array_from_json(&doc, attrs.as_ref())
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

/// The `.zarray` and `.zattrs` documents of an array.
pub fn array_to_json(meta: &ArrayMetadata) -> Result<(Value, Value)> {
    meta.validate()?;
    if !meta.storage_transformers.is_empty() {
        return Err(ZarrError::Unsupported(
            "storage transformers cannot be written to Zarr v2 metadata".into(),
        ));
    }
    let separator = match meta.chunk_key_encoding {
        ChunkKeyEncoding::V2 { separator } => separator,
        ChunkKeyEncoding::Default { .. } => {
            return Err(ZarrError::Unsupported(
                "chunk key encoding 'default' cannot be written to Zarr v2 metadata (use 'v2')"
                    .into(),
            ))
        }
    };
    let ndim = meta.shape.len();
    let chain = CodecChain::from_json(&meta.codecs, meta.data_type, &meta.fill_value.bytes, ndim)?;
    let order = match chain.order() {
        None => "C",
        Some(o) if o.iter().rev().copied().eq(0..ndim) => "F",
        Some(o) if o.iter().copied().eq(0..ndim) => "C",
        Some(o) => {
            return Err(ZarrError::Unsupported(format!(
                "transpose order {o:?} cannot be written to Zarr v2 metadata (only C or F order)"
            )))
        }
    };
    let dtype = match &chain.array_to_bytes {
        ArrayToBytes::Bytes { endian } => dtype_string(meta.data_type, *endian)?,
        ArrayToBytes::VlenUtf8 => dtype_string(meta.data_type, None)?,
        ArrayToBytes::FixedString(f) => f.numpy_dtype(),
        ArrayToBytes::Sharding(_) => {
            return Err(ZarrError::Unsupported(
                "codec 'sharding_indexed' cannot be written to Zarr v2 metadata".into(),
            ))
        }
    };
    // The last bytes -> bytes codec is the compressor (unless it is a
    // filter such as delta); the ones before it are filters.
    let mut filters: Vec<Value> = chain
        .bytes_to_bytes
        .iter()
        .map(|c| codec_to_numcodecs(&c.to_json()))
        .collect::<Result<_>>()?;
    let compressor = match filters.last() {
        Some(c) if c["id"] != "delta" && c["id"] != "shuffle" => {
            filters.pop().expect("a last element")
        }
        _ => Value::Null,
    };
    if let ArrayToBytes::VlenUtf8 = chain.array_to_bytes {
        filters.insert(0, json!({"id": "vlen-utf8"}));
    }
    let filters = if filters.is_empty() {
        Value::Null
    } else {
        Value::Array(filters)
    };
    let mut zarray = Map::new();
    zarray.insert("shape".into(), json!(meta.shape));
    zarray.insert("chunks".into(), json!(meta.chunk_shape));
    zarray.insert("dtype".into(), dtype.into());
    zarray.insert(
        "fill_value".into(),
        fill_to_json(meta, chain.fixed_string()),
    );
    zarray.insert("order".into(), order.into());
    zarray.insert("filters".into(), filters);
    zarray.insert("dimension_separator".into(), separator.to_string().into());
    zarray.insert("compressor".into(), compressor);
    zarray.insert("zarr_format".into(), 2.into());
    for (k, v) in &meta.extra {
        zarray.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut zattrs = meta.attributes.clone();
    if let Some(names) = &meta.dimension_names {
        zattrs.insert(ARRAY_DIMENSIONS.into(), json!(names));
    }
    Ok((Value::Object(zarray), Value::Object(zattrs)))
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
    let mut obj = json_object(zmetadata, ".zmetadata")?;
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
    match obj.remove("metadata") {
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(malformed(".zmetadata: metadata must be an object")),
        None => Err(malformed(".zmetadata: missing required member 'metadata'")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{error_naming, files_named, with, without, FIXTURES};
    use super::*;
    use crate::codec::{CodecContext, Warnings};
    use std::path::Path;

    fn zarray() -> Value {
        json!({"shape": [10, 7], "chunks": [3, 7], "dtype": "<i4", "fill_value": -1,
               "order": "C", "filters": null, "dimension_separator": ".",
               "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2})
    }

    fn p(doc: &Value) -> Result<ArrayMetadata> {
        parse_array(doc.to_string().as_bytes(), None)
    }

    fn fails(doc: &Value, what: &str) -> &'static str {
        error_naming(p(doc), doc, what)
    }

    fn round_trips(a: &ArrayMetadata) -> Value {
        let (za, zt) = array_to_json(a).unwrap();
        let back = parse_array(za.to_string().as_bytes(), Some(zt.to_string().as_bytes())).unwrap();
        assert_eq!(&back, a, "{za}");
        za
    }

    fn codecs_of(doc: &Value) -> Value {
        Value::Array(p(doc).unwrap().codecs)
    }

    #[test]
    fn v2_parses_a_plain_array() {
        let a = p(&zarray()).unwrap();
        assert_eq!(a.zarr_format, 2);
        assert_eq!(a.shape, vec![10, 7]);
        assert_eq!(a.chunk_shape, vec![3, 7]);
        assert_eq!(a.data_type, DataType::Int32);
        assert_eq!(a.fill_value.bytes, (-1i32).to_ne_bytes());
        assert!(a.fill_marks_na);
        assert_eq!(
            a.chunk_key_encoding,
            ChunkKeyEncoding::V2 { separator: '.' }
        );
        assert_eq!(
            Value::Array(a.codecs.clone()),
            json!([{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "numcodecs.zlib", "configuration": {"level": 1}}])
        );
        assert!(a.attributes.is_empty() && a.dimension_names.is_none() && a.extra.is_empty());
        a.validate().unwrap();
        let za = round_trips(&a);
        assert_eq!(za, zarray());
        // Member order as zarr-python writes it.
        let keys: Vec<&str> = za.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "shape",
                "chunks",
                "dtype",
                "fill_value",
                "order",
                "filters",
                "dimension_separator",
                "compressor",
                "zarr_format"
            ]
        );
    }

    #[test]
    fn v2_dtypes_and_byte_order() {
        for (s, dt, endian) in [
            ("|b1", DataType::Bool, None),
            ("|i1", DataType::Int8, None),
            ("<i1", DataType::Int8, None),
            ("<i2", DataType::Int16, Some(Endian::Little)),
            (">i4", DataType::Int32, Some(Endian::Big)),
            ("<i8", DataType::Int64, Some(Endian::Little)),
            ("|u1", DataType::UInt8, None),
            (">u2", DataType::UInt16, Some(Endian::Big)),
            ("<u4", DataType::UInt32, Some(Endian::Little)),
            ("<u8", DataType::UInt64, Some(Endian::Little)),
            ("<f2", DataType::Float16, Some(Endian::Little)),
            (">f4", DataType::Float32, Some(Endian::Big)),
            ("<f8", DataType::Float64, Some(Endian::Little)),
            ("<c8", DataType::Complex64, Some(Endian::Little)),
            (">c16", DataType::Complex128, Some(Endian::Big)),
        ] {
            assert_eq!(parse_dtype(&json!(s)).unwrap(), (dt, endian), "{s}");
            let canonical = if dt.size() == 1 {
                format!("|{}", &s[1..])
            } else {
                s.to_string()
            };
            assert_eq!(dtype_string(dt, endian).unwrap(), canonical);
            let a = p(&with(
                with(zarray(), "dtype", json!(s)),
                "fill_value",
                json!(null),
            ))
            .unwrap();
            assert_eq!(a.data_type, dt);
            let bytes =
                json!({"name": "bytes", "configuration": {"endian": endian.map(Endian::name)}});
            let bytes = if endian.is_none() {
                json!({"name": "bytes"})
            } else {
                bytes
            };
            assert_eq!(a.codecs[0], bytes, "{s}");
            let za = round_trips(&a);
            assert_eq!(za["dtype"], json!(canonical));
        }
        for s in [
            "<x9", "<i3", "i4", "<i", "<f1", "|i4", "<b2", "", "<u16", "<i4x", "<c4",
        ] {
            let e = parse_dtype(&json!(s)).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{s}");
            assert!(e.message().contains(&format!("'{s}'")), "{}", e.message());
        }
        assert_eq!(parse_dtype(&json!("|O")).unwrap(), (DataType::String, None));
        assert_eq!(
            parse_dtype(&json!("<U10")).unwrap(),
            (DataType::String, Some(Endian::Little))
        );
        assert_eq!(
            parse_dtype(&json!(">U1")).unwrap(),
            (DataType::String, Some(Endian::Big))
        );
        assert_eq!(
            parse_dtype(&json!("|S12")).unwrap(),
            (DataType::String, None)
        );
        for s in ["<U0", "|S", "<Ux"] {
            let e = parse_dtype(&json!(s)).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{s}");
            assert!(e.message().contains(s), "{}", e.message());
        }
        assert_eq!(parse_dtype(&json!("<O")).unwrap_err().kind(), "unsupported");
        for (v, what) in [
            (json!("<M8[ns]"), "<M8[ns]"),
            (json!("<m8[s]"), "<m8[s]"),
            (json!("|V8"), "|V8"),
            (json!("<f16"), "<f16"),
            (json!("<c32"), "<c32"),
            (json!([["r", "|u1"], ["g", "|u1"]]), "structured"),
        ] {
            let e = parse_dtype(&v).unwrap_err();
            assert_eq!(e.kind(), "unsupported", "{v}");
            assert!(e.message().contains(what), "{}", e.message());
        }
        assert_eq!(parse_dtype(&json!(4)).unwrap_err().kind(), "metadata");
        // Object arrays need the vlen-utf8 object codec.
        let doc = with(
            with(zarray(), "dtype", json!("|O")),
            "fill_value",
            json!(""),
        );
        assert_eq!(
            fails(&with(doc.clone(), "filters", Value::Null), "vlen-utf8"),
            "unsupported"
        );
        let ok = with(doc, "filters", json!([{"id": "vlen-utf8"}]));
        let meta = parse_array(ok.to_string().as_bytes(), None).unwrap();
        assert_eq!(meta.data_type, DataType::String);
        assert_eq!(
            array_to_json(&meta).unwrap().0["filters"],
            json!([{"id": "vlen-utf8"}])
        );
    }

    fn fixed(dtype: &str, fill: Value) -> Value {
        with(
            with(with(zarray(), "dtype", json!(dtype)), "fill_value", fill),
            "chunks",
            json!([10, 7]),
        )
    }

    #[test]
    fn v2_fixed_width_strings_parse_and_write_back() {
        // zarr-python's defaults: fill "" and a compressor, in F order too.
        for order in ["C", "F"] {
            let doc = with(fixed("<U5", json!("")), "order", json!(order));
            let a = p(&doc).unwrap();
            assert_eq!(a.data_type, DataType::String);
            assert!(a.fill_marks_na && a.fill_value.bytes.is_empty());
            let codecs: Vec<&str> = a
                .codecs
                .iter()
                .map(|c| c["name"].as_str().unwrap())
                .collect();
            let want = if order == "F" {
                vec!["transpose", "numpy.fixed_string", "numcodecs.zlib"]
            } else {
                vec!["numpy.fixed_string", "numcodecs.zlib"]
            };
            assert_eq!(codecs, want);
            assert_eq!(
                a.codecs[codecs.len() - 2],
                json!({"name": "numpy.fixed_string", "configuration": {"dtype": "<U5"}})
            );
            assert_eq!(round_trips(&a), doc);
        }
        // Big-endian U with a non-ASCII fill, written back as text.
        let doc = fixed(">U3", json!("h\u{e9}"));
        let a = p(&doc).unwrap();
        assert_eq!(a.fill_value.bytes, "h\u{e9}".as_bytes());
        assert_eq!(round_trips(&a), doc);
        // S fill values are base64, as numcodecs writes them.
        let doc = fixed("|S5", json!("YWI="));
        let a = p(&doc).unwrap();
        assert_eq!(a.fill_value.bytes, b"ab");
        assert_eq!(round_trips(&a), doc);
        assert_eq!(
            round_trips(&p(&fixed("|S5", json!(""))).unwrap()),
            fixed("|S5", json!(""))
        );
        // A null fill: no missing-value marker, and null again when written.
        let a = p(&fixed("<U5", Value::Null)).unwrap();
        assert!(!a.fill_marks_na);
        assert_eq!(round_trips(&a)["fill_value"], Value::Null);
        for (doc, what) in [
            (fixed("|S5", json!("not base64!")), "base64"),
            (fixed("|S5", json!("/w==")), "UTF-8"),
            (fixed("<U5", json!(0)), "a string or null"),
            (fixed("<U2", json!("abc")), "3 characters"),
            (fixed("|S2", json!("w6nDqQ==")), "4 UTF-8 bytes"),
        ] {
            assert_eq!(fails(&doc, what), "metadata", "{doc}");
        }
    }

    /// Chunks as NumPy lays them out (`tobytes` of the arrays, checked with
    /// NumPy 2.4) decode through the chain v2 metadata maps to, and encode
    /// back to the same bytes.
    #[test]
    fn v2_fixed_width_string_chunks_match_numpy() {
        let w = Warnings::default();
        let ctx = CodecContext {
            strict_checksums: false,
            warnings: &w,
            what: "t",
        };
        let hex = |h: &str| -> Vec<u8> {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        };
        // np.array([["ab", "\u{e9}"], ["", "xyz"]], dtype=">U3"), order "F".
        let doc = with(
            with(
                with(
                    with(fixed(">U3", json!("")), "shape", json!([2, 2])),
                    "chunks",
                    json!([2, 2]),
                ),
                "order",
                json!("F"),
            ),
            "compressor",
            Value::Null,
        );
        let raw = hex("000000610000006200000000000000000000000000000000000000e9000000000000000000000078000000790000007a");
        let a = p(&doc).unwrap();
        let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
        let strings = chain.decode_strings(raw.clone(), &[2, 2], &ctx).unwrap();
        // Laid out with the chain's strides: [i, j] at i + 2 j.
        assert_eq!(chain.stored_strides(&[2, 2]), vec![1, 2]);
        assert_eq!(strings, ["ab", "", "\u{e9}", "xyz"]);
        assert_eq!(chain.encode_strings(&strings, &[2, 2]).unwrap(), raw);
        // The same as |S4 in C order (UTF-8 bytes), zlib-compressed.
        let doc = with(
            with(fixed("|S4", json!("")), "shape", json!([2, 2])),
            "chunks",
            json!([2, 2]),
        );
        let raw = hex("61620000c3a900000000000078797a77");
        let a = p(&doc).unwrap();
        let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
        let enc = chain
            .encode_strings(&["ab", "\u{e9}", "", "xyzw"], &[2, 2])
            .unwrap();
        let z = crate::codec::zlib::Zlib { level: 1 };
        assert_eq!(
            crate::codec::BytesToBytes::decode(&z, enc.clone(), None, &ctx).unwrap(),
            raw
        );
        assert_eq!(
            chain.decode_strings(enc, &[2, 2], &ctx).unwrap(),
            ["ab", "\u{e9}", "", "xyzw"]
        );
    }

    #[test]
    fn v2_order_f_is_a_reversed_transpose() {
        let a = p(&with(zarray(), "order", json!("F"))).unwrap();
        assert_eq!(
            a.codecs[0],
            json!({"name": "transpose", "configuration": {"order": [1, 0]}})
        );
        let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
        assert_eq!(chain.stored_strides(&[3, 7]), vec![1, 3]);
        assert_eq!(round_trips(&a)["order"], json!("F"));
        // 3-d and 1-d and 0-d.
        let doc = with(
            with(
                with(zarray(), "shape", json!([4, 5, 6])),
                "chunks",
                json!([2, 2, 3]),
            ),
            "order",
            json!("F"),
        );
        let a = p(&doc).unwrap();
        assert_eq!(a.codecs[0]["configuration"]["order"], json!([2, 1, 0]));
        round_trips(&a);
        for (shape, chunks) in [(json!([5]), json!([2])), (json!([]), json!([]))] {
            let doc = with(
                with(with(zarray(), "shape", shape), "chunks", chunks),
                "order",
                json!("F"),
            );
            assert_eq!(round_trips(&p(&doc).unwrap())["order"], json!("F"));
        }
        // Other permutations have no v2 spelling.
        let mut a = p(&zarray()).unwrap();
        a.shape = vec![4, 5, 6];
        a.chunk_shape = vec![2, 2, 3];
        a.codecs.insert(
            0,
            json!({"name": "transpose", "configuration": {"order": [1, 2, 0]}}),
        );
        let e = array_to_json(&a).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.message().contains("[1, 2, 0]"), "{}", e.message());
        a.codecs[0] = json!({"name": "transpose", "configuration": {"order": [0, 1, 2]}});
        assert_eq!(array_to_json(&a).unwrap().0["order"], json!("C"));
    }

    #[test]
    fn v2_compressors_map_to_codecs() {
        let comp = |c: Value| codecs_of(&with(zarray(), "compressor", c))[1].clone();
        assert_eq!(
            comp(json!({"id": "gzip", "level": 5})),
            json!({"name": "gzip", "configuration": {"level": 5}})
        );
        assert_eq!(
            comp(json!({"id": "zstd", "level": 1})),
            json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}})
        );
        assert_eq!(
            comp(json!({"id": "zstd", "level": 3, "checksum": true})),
            json!({"name": "zstd", "configuration": {"level": 3, "checksum": true}})
        );
        assert_eq!(
            comp(json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})),
            json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                   "shuffle": "shuffle", "typesize": 4, "blocksize": 0}})
        );
        assert_eq!(
            comp(
                json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0})
            )["configuration"]["shuffle"],
            json!("bitshuffle")
        );
        assert_eq!(
            comp(
                json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 0, "blocksize": 0})
            )["configuration"]["shuffle"],
            json!("noshuffle")
        );
        // AUTOSHUFFLE: bit shuffle for one-byte items, byte shuffle otherwise.
        assert_eq!(
            comp(
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0})
            )["configuration"]["shuffle"],
            json!("shuffle")
        );
        let doc = with(
            with(
                with(zarray(), "dtype", json!("|u1")),
                "fill_value",
                json!(0),
            ),
            "compressor",
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}),
        );
        let c = &p(&doc).unwrap().codecs[1]["configuration"];
        assert_eq!(
            (c["shuffle"].clone(), c["typesize"].clone()),
            (json!("bitshuffle"), json!(1))
        );
        assert_eq!(
            comp(json!({"id": "lz4", "acceleration": 1})),
            json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}})
        );
        assert_eq!(
            comp(json!({"id": "bz2", "level": 9})),
            json!({"name": "numcodecs.bz2", "configuration": {"level": 9}})
        );
        assert_eq!(comp(json!({"id": "crc32c"})), json!({"name": "crc32c"}));
        assert_eq!(
            comp(json!({"id": "crc32c", "location": "end"})),
            json!({"name": "crc32c"})
        );
        // numcodecs' defaults fill in absent members.
        assert_eq!(
            comp(json!({"id": "zlib"}))["configuration"]["level"],
            json!(1)
        );
        // Every one writes back as numcodecs wrote it.
        for c in [
            json!({"id": "zlib", "level": 5}),
            json!({"id": "gzip", "level": 5}),
            json!({"id": "zstd", "level": 1}),
            json!({"id": "zstd", "level": 1, "checksum": true}),
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
            json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
            json!({"id": "lz4", "acceleration": 1}),
            json!({"id": "bz2", "level": 9}),
            json!({"id": "crc32c"}),
        ] {
            let a = p(&with(zarray(), "compressor", c.clone())).unwrap();
            assert_eq!(round_trips(&a)["compressor"], c);
        }
        let a = p(&with(zarray(), "compressor", json!(null))).unwrap();
        assert_eq!(a.codecs.len(), 1);
        assert_eq!(round_trips(&a)["compressor"], json!(null));
        assert_eq!(p(&without(zarray(), "compressor")).unwrap(), a);
    }

    #[test]
    fn v2_bad_and_unsupported_compressors() {
        for c in [
            json!({"id": "lzma"}),
            json!({"id": "snappy", "level": 1}),
            json!({"id": "crc32"}),
        ] {
            let id = c["id"].as_str().unwrap().to_string();
            let e = p(&with(zarray(), "compressor", c)).unwrap_err();
            assert_eq!(e.kind(), "unsupported");
            assert_eq!(e.message(), format!("unsupported compressor '{id}'"));
        }
        let e = p(&with(
            zarray(),
            "compressor",
            json!({"id": "crc32c", "location": "start"}),
        ))
        .unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        for c in [
            json!("zlib"),
            json!({"level": 1}),
            json!({"id": 3}),
            json!({"id": "zlib", "level": 12}),
            json!({"id": "gzip", "level": "high"}),
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 7}),
            json!({"id": "blosc", "cname": "nope", "clevel": 5, "shuffle": 1}),
        ] {
            let e = p(&with(zarray(), "compressor", c.clone())).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{c}");
        }
    }

    #[test]
    fn v2_filters() {
        let f = json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}]);
        let doc = with(zarray(), "filters", f.clone());
        assert_eq!(
            codecs_of(&doc),
            json!([{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}},
                   {"name": "numcodecs.zlib", "configuration": {"level": 1}}])
        );
        let za = round_trips(&p(&doc).unwrap());
        assert_eq!(za["filters"], f);
        assert_eq!(za["compressor"], json!({"id": "zlib", "level": 1}));
        // astype defaults to dtype; blosc after delta sees astype's item size.
        let doc = with(
            with(
                zarray(),
                "filters",
                json!([{"id": "delta", "dtype": "<i4", "astype": "<i2"}]),
            ),
            "compressor",
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        );
        assert_eq!(codecs_of(&doc)[2]["configuration"]["typesize"], json!(2));
        let doc = with(
            zarray(),
            "filters",
            json!([{"id": "delta", "dtype": "<i4"}]),
        );
        assert_eq!(codecs_of(&doc)[1]["configuration"]["astype"], json!("<i4"));
        // Filters only, no compressor.
        let doc = with(
            with(zarray(), "filters", f.clone()),
            "compressor",
            json!(null),
        );
        let za = round_trips(&p(&doc).unwrap());
        assert_eq!(
            (za["filters"].clone(), za["compressor"].clone()),
            (f, json!(null))
        );
        // A compressor used as a filter stays a filter.
        let doc = with(zarray(), "filters", json!([{"id": "gzip", "level": 1}]));
        let za = round_trips(&p(&doc).unwrap());
        assert_eq!(za["filters"], json!([{"id": "gzip", "level": 1}]));
        // [] is no filters.
        assert_eq!(
            p(&with(zarray(), "filters", json!([]))).unwrap(),
            p(&zarray()).unwrap()
        );
        for (f, kind, what) in [
            (
                json!([{"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8"}]),
                "unsupported",
                "unsupported filter 'fixedscaleoffset'",
            ),
            (
                json!([{"id": "vlen-utf8"}]),
                "unsupported",
                "unsupported filter 'vlen-utf8'",
            ),
            (
                json!([{"id": "delta", "dtype": "<f8"}]),
                "unsupported",
                "delta",
            ),
            (json!([{"id": "delta"}]), "metadata", "dtype"),
            (
                json!({"id": "delta", "dtype": "<i4"}),
                "metadata",
                "filters",
            ),
            (json!([5]), "metadata", "filter"),
        ] {
            assert_eq!(
                fails(&with(zarray(), "filters", f.clone()), what),
                kind,
                "{f}"
            );
        }
    }

    #[test]
    fn v2_fill_values() {
        let fill = |dtype: &str, v: Value| {
            p(&with(
                with(zarray(), "dtype", json!(dtype)),
                "fill_value",
                v,
            ))
        };
        let a = fill("<i4", json!(null)).unwrap();
        assert!(!a.fill_marks_na);
        assert_eq!(a.fill_value.bytes, vec![0; 4]);
        assert_eq!(round_trips(&a)["fill_value"], json!(null));
        let a = fill("<f8", json!("NaN")).unwrap();
        assert!(a.fill_marks_na && a.fill_value.as_f64(DataType::Float64).unwrap().is_nan());
        assert_eq!(round_trips(&a)["fill_value"], json!("NaN"));
        for (dt, v) in [
            ("<f4", json!("Infinity")),
            ("<f2", json!("-Infinity")),
            ("<f8", json!(0.5)),
            ("<c16", json!([1.5, "NaN"])),
            ("<c8", json!([0.0, 0.0])),
            ("|b1", json!(true)),
            ("<u8", json!(u64::MAX)),
            ("<i8", json!(i64::MIN)),
        ] {
            let a = fill(dt, v.clone()).unwrap();
            assert_eq!(round_trips(&a)["fill_value"], v, "{dt}");
        }
        // What older writers wrote.
        assert_eq!(
            fill("<i2", json!(-3.0)).unwrap().fill_value.bytes,
            (-3i16).to_ne_bytes()
        );
        assert_eq!(fill("|b1", json!(1)).unwrap().fill_value.bytes, vec![1]);
        assert_eq!(fill("|b1", json!(0)).unwrap().fill_value.bytes, vec![0]);
        assert_eq!(
            fill("<c8", json!(2.0)).unwrap().fill_value.bytes,
            [2f32.to_ne_bytes(), 0f32.to_ne_bytes()].concat()
        );
        // A NaN payload has no v2 spelling: it is written as "NaN".
        let mut a = fill("<f4", json!(0.0)).unwrap();
        a.fill_value.bytes = 0x7fc0_0001u32.to_ne_bytes().to_vec();
        assert_eq!(array_to_json(&a).unwrap().0["fill_value"], json!("NaN"));
        for (dt, v) in [
            ("<i4", json!(1.5)),
            ("<i4", json!("x")),
            ("|u1", json!(-1)),
            ("|u1", json!(256.0)),
            ("|b1", json!(2)),
            ("<f8", json!("nan")),
            ("<c8", json!([1, 2, 3])),
        ] {
            let e = fill(dt, v.clone()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{dt} {v}");
            assert!(e.message().contains("fill_value"), "{}", e.message());
        }
    }

    #[test]
    fn v2_separators_attributes_and_dimension_names() {
        let a = p(&with(zarray(), "dimension_separator", json!("/"))).unwrap();
        assert_eq!(
            a.chunk_key_encoding,
            ChunkKeyEncoding::V2 { separator: '/' }
        );
        assert_eq!(a.chunk_key_encoding.key(&[1, 2]), "1/2");
        assert_eq!(round_trips(&a)["dimension_separator"], json!("/"));
        let a = p(&without(zarray(), "dimension_separator")).unwrap();
        assert_eq!(
            a.chunk_key_encoding,
            ChunkKeyEncoding::V2 { separator: '.' }
        );
        assert_eq!(
            p(&with(zarray(), "dimension_separator", json!(null))).unwrap(),
            a
        );
        assert_eq!(
            fails(
                &with(zarray(), "dimension_separator", json!("-")),
                "dimension_separator"
            ),
            "metadata"
        );

        let attrs = json!({"units": "m", "_ARRAY_DIMENSIONS": ["y", "x"]});
        let a = parse_array(
            zarray().to_string().as_bytes(),
            Some(attrs.to_string().as_bytes()),
        )
        .unwrap();
        assert_eq!(
            a.dimension_names,
            Some(vec![Some("y".into()), Some("x".into())])
        );
        assert_eq!(Value::Object(a.attributes.clone()), attrs);
        let (_, zt) = array_to_json(&a).unwrap();
        assert_eq!(zt, attrs);
        round_trips(&a);
        // Set in code: written into .zattrs.
        let mut b = p(&zarray()).unwrap();
        b.dimension_names = Some(vec![Some("t".into()), None]);
        let (_, zt) = array_to_json(&b).unwrap();
        assert_eq!(zt, json!({"_ARRAY_DIMENSIONS": ["t", null]}));
        // A malformed _ARRAY_DIMENSIONS is only an attribute.
        for bad in [json!(["y"]), json!("y"), json!(["y", 1])] {
            let attrs = json!({"_ARRAY_DIMENSIONS": bad});
            let a = parse_array(
                zarray().to_string().as_bytes(),
                Some(attrs.to_string().as_bytes()),
            )
            .unwrap();
            assert!(a.dimension_names.is_none());
            assert_eq!(a.attributes["_ARRAY_DIMENSIONS"], bad);
        }
        for bad in [&b"[1]"[..], b"{", b"\"x\"", b"{\"a\": \"\xff\"}"] {
            let e = parse_array(zarray().to_string().as_bytes(), Some(bad)).unwrap_err();
            assert_eq!(e.kind(), "metadata");
            assert!(e.message().contains(".zattrs"), "{}", e.message());
        }
        // Unknown .zarray members are kept and written back.
        let a = p(&with(zarray(), "my_note", json!({"k": 1}))).unwrap();
        assert_eq!(a.extra["my_note"], json!({"k": 1}));
        assert_eq!(round_trips(&a)["my_note"], json!({"k": 1}));
    }

    #[test]
    fn v2_malformed_arrays_name_the_problem() {
        for m in [
            "zarr_format",
            "shape",
            "chunks",
            "dtype",
            "fill_value",
            "order",
        ] {
            assert_eq!(fails(&without(zarray(), m), m), "metadata", "{m}");
        }
        for (m, v) in [
            ("zarr_format", json!(3)),
            ("zarr_format", json!("2")),
            ("shape", json!([10, -7])),
            ("shape", json!(10)),
            ("chunks", json!([3])),
            ("chunks", json!([3, 0])),
            ("chunks", json!([3, 7.5])),
            ("dtype", json!("<x9")),
            ("order", json!("K")),
            ("order", json!(null)),
            ("filters", json!("delta")),
            ("compressor", json!([{"id": "zlib"}])),
        ] {
            let what = if m == "dtype" { "<x9" } else { m };
            let e = fails(&with(zarray(), m, v.clone()), what);
            assert_eq!(e, "metadata", "{m}: {v}");
        }
        for bad in [
            &b""[..],
            b"[2]",
            b"{\"zarr_format\": 2,",
            b"{\"a\": \"\xff\"}",
        ] {
            let e = parse_array(bad, None).unwrap_err();
            assert_eq!(e.kind(), "metadata");
            assert!(e.message().contains(".zarray"), "{}", e.message());
        }
    }

    #[test]
    fn v2_writing_refuses_what_v2_cannot_say() {
        let a = p(&zarray()).unwrap();
        let mut b = a.clone();
        b.chunk_key_encoding = ChunkKeyEncoding::Default { separator: '/' };
        assert_eq!(array_to_json(&b).unwrap_err().kind(), "unsupported");
        let mut b = a.clone();
        b.storage_transformers = vec![json!({"name": "x", "must_understand": false})];
        assert_eq!(array_to_json(&b).unwrap_err().kind(), "unsupported");
        let mut b = a.clone();
        b.codecs = vec![json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 7], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}})];
        let e = array_to_json(&b).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.message().contains("sharding"), "{}", e.message());
        // Several compressors: the last is the compressor, the others filters.
        let mut b = a.clone();
        b.codecs.push(json!({"name": "crc32c"}));
        let (za, _) = array_to_json(&b).unwrap();
        assert_eq!(za["filters"], json!([{"id": "zlib", "level": 1}]));
        assert_eq!(za["compressor"], json!({"id": "crc32c"}));
        round_trips(&p(&za).unwrap());
        // A v3 array with v3 defaults converts once its keys are v2 keys.
        let mut m = ArrayMetadata::new(vec![4, 4], DataType::Float32, vec![2, 2]);
        m.codecs
            .push(json!({"name": "zstd", "configuration": {"level": 0, "checksum": false}}));
        assert_eq!(array_to_json(&m).unwrap_err().kind(), "unsupported");
        m.chunk_key_encoding = ChunkKeyEncoding::V2 { separator: '/' };
        m.zarr_format = 2;
        let (za, zt) = array_to_json(&m).unwrap();
        assert_eq!(
            za,
            json!({"shape": [4, 4], "chunks": [2, 2], "dtype": "<f4", "fill_value": 0.0,
            "order": "C", "filters": null, "dimension_separator": "/",
            "compressor": {"id": "zstd", "level": 0}, "zarr_format": 2})
        );
        assert_eq!(zt, json!({}));
        round_trips(&m);
    }

    #[test]
    fn v2_groups() {
        let g = parse_group(br#"{"zarr_format": 2}"#, Some(br#"{"title": "t"}"#)).unwrap();
        assert_eq!(g.attributes["title"], json!("t"));
        assert!(g.extra.is_empty());
        assert_eq!(
            group_to_json(&g),
            (json!({"zarr_format": 2}), json!({"title": "t"}))
        );
        let g = parse_group(br#"{"zarr_format": 2}"#, None).unwrap();
        assert_eq!(
            g,
            GroupMetadata {
                zarr_format: 2,
                ..Default::default()
            }
        );
        // zarr-python 3 writes this into .zmetadata entries.
        let doc = br#"{"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": false, "kind": "inline"}}"#;
        assert_eq!(
            parse_group(doc, None).unwrap(),
            GroupMetadata {
                zarr_format: 2,
                ..Default::default()
            }
        );
        let g = parse_group(br#"{"zarr_format": 2, "x": 1}"#, None).unwrap();
        assert_eq!(group_to_json(&g).0, json!({"zarr_format": 2, "x": 1}));
        for (doc, what) in [
            (&br#"{}"#[..], "zarr_format"),
            (br#"{"zarr_format": 3}"#, "zarr_format"),
            (br#"[2]"#, ".zgroup"),
            (br#"{"zarr_format": 2"#, ".zgroup"),
        ] {
            let e = parse_group(doc, None).unwrap_err();
            assert_eq!(e.kind(), "metadata");
            assert!(e.message().contains(what), "{}", e.message());
        }
        let e = parse_group(br#"{"zarr_format": 2}"#, Some(b"[]")).unwrap_err();
        assert!(e.message().contains(".zattrs"), "{}", e.message());
    }

    #[test]
    fn v2_consolidated() {
        let doc = json!({"zarr_consolidated_format": 1, "metadata": {
            ".zgroup": {"zarr_format": 2}, "a/.zarray": zarray(), "a/.zattrs": {"k": 1}}});
        let m = parse_consolidated(doc.to_string().as_bytes()).unwrap();
        assert_eq!(m.len(), 3);
        let a = array_from_json(&m["a/.zarray"], m.get("a/.zattrs")).unwrap();
        assert_eq!(a.attributes["k"], json!(1));
        let g = group_from_json(&m[".zgroup"], m.get(".zattrs")).unwrap();
        assert_eq!(
            g,
            GroupMetadata {
                zarr_format: 2,
                ..Default::default()
            }
        );
        for (doc, kind, what) in [
            (
                json!({"metadata": {}}),
                "metadata",
                "zarr_consolidated_format",
            ),
            (
                json!({"zarr_consolidated_format": 2, "metadata": {}}),
                "unsupported",
                "zarr_consolidated_format",
            ),
            (
                json!({"zarr_consolidated_format": 1}),
                "metadata",
                "metadata",
            ),
            (
                json!({"zarr_consolidated_format": 1, "metadata": []}),
                "metadata",
                "metadata",
            ),
            (json!([]), "metadata", ".zmetadata"),
        ] {
            let e = parse_consolidated(doc.to_string().as_bytes()).unwrap_err();
            assert_eq!(e.kind(), kind, "{doc}");
            assert!(e.message().contains(what), "{}", e.message());
        }
    }

    /// End to end: a chain built from parsed v2 metadata decodes a chunk
    /// that numcodecs' Delta + Zlib wrote (checked with numcodecs 0.16).
    #[test]
    fn v2_delta_zlib_chunk_decodes() {
        let doc = with(
            with(with(zarray(), "shape", json!([4])), "chunks", json!([4])),
            "filters",
            json!([{"id": "delta", "dtype": "<i4"}]),
        );
        let a = p(&doc).unwrap();
        let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 1).unwrap();
        let values: Vec<u8> = [10i32, 12, 9, -4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let enc = chain.encode(values.clone(), &[4]).unwrap();
        let w = Warnings::default();
        let ctx = CodecContext {
            strict_checksums: false,
            warnings: &w,
            what: "t",
        };
        assert_eq!(chain.decode(enc.clone(), &[4], &ctx).unwrap(), values);
        // Delta then zlib: the zlib stream holds 10, 2, -3, -13.
        let w2 = Warnings::default();
        let ctx2 = CodecContext {
            strict_checksums: false,
            warnings: &w2,
            what: "t",
        };
        let z = crate::codec::zlib::Zlib { level: 1 };
        let raw = crate::codec::BytesToBytes::decode(&z, enc, None, &ctx2).unwrap();
        let diffs: Vec<i32> = raw
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(diffs, vec![10, 2, -3, -13]);
    }

    // ------------------------------------------------------------ fixtures

    fn read_opt(path: &Path) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
    }

    /// Native-endian bytes of one element -> the manifest's JSON encoding.
    fn element_json(bytes: &[u8], dt: DataType) -> Value {
        FillValue {
            bytes: bytes.to_vec(),
        }
        .to_json(dt)
    }

    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                    x == y
                } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                    x == y
                } else {
                    x.as_f64() == y.as_f64()
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
            }
            _ => a == b,
        }
    }

    /// Decode every stored chunk of one fixture array with the chain its
    /// metadata maps to, and compare every element inside the array with
    /// the manifest. Returns the number of chunks decoded.
    fn check_chunks(store: &Path, entry: &Value, meta: &ArrayMetadata) -> usize {
        let path = entry["path"].as_str().unwrap();
        let what = format!("{}/{path}", store.display());
        let values = entry["values"].as_array().unwrap();
        let dt = meta.data_type;
        let size = dt.size();
        let shape: Vec<usize> = meta.shape.iter().map(|&s| s as usize).collect();
        let chunk: Vec<usize> = meta.chunk_shape.iter().map(|&s| s as usize).collect();
        let ndim = shape.len();
        let chain = CodecChain::from_json(&meta.codecs, dt, &meta.fill_value.bytes, ndim).unwrap();
        let strides = chain.stored_strides(&chunk);
        let sep = meta.chunk_key_encoding.separator();
        let w = Warnings::default();
        let ctx = CodecContext {
            strict_checksums: true,
            warnings: &w,
            what: &what,
        };
        let keys = entry["chunk_keys"].as_array().unwrap();
        for key in keys {
            let key = key.as_str().unwrap();
            let idx: Vec<u64> = if ndim == 0 {
                vec![]
            } else {
                key.split(sep).map(|s| s.parse().unwrap()).collect()
            };
            assert_eq!(meta.chunk_key_encoding.key(&idx), key, "{what}");
            let raw = std::fs::read(store.join(path).join(key)).unwrap();
            let (decoded, strings) = if dt == DataType::String {
                let s = chain
                    .decode_strings(raw, &chunk, &ctx)
                    .unwrap_or_else(|e| panic!("{what} {key}: {e}"));
                (Vec::new(), s)
            } else {
                let d = chain
                    .decode(raw, &chunk, &ctx)
                    .unwrap_or_else(|e| panic!("{what} {key}: {e}"));
                assert_eq!(d.len(), chunk.iter().product::<usize>() * size);
                (d, Vec::new())
            };
            // Every element of the chunk that lies inside the array.
            let n: usize = chunk.iter().product();
            for local in 0..n {
                let mut rem = local;
                let mut pos = vec![0usize; ndim];
                for d in (0..ndim).rev() {
                    pos[d] = rem % chunk[d];
                    rem /= chunk[d];
                }
                let global: Vec<usize> = (0..ndim)
                    .map(|d| idx[d] as usize * chunk[d] + pos[d])
                    .collect();
                if (0..ndim).any(|d| global[d] >= shape[d]) {
                    continue;
                }
                let flat = (0..ndim).fold(0, |acc, d| acc * shape[d] + global[d]);
                let at: usize = (0..ndim).map(|d| pos[d] * strides[d]).sum::<usize>();
                let got = if dt == DataType::String {
                    Value::String(strings[at].clone())
                } else {
                    element_json(&decoded[at * size..(at + 1) * size], dt)
                };
                assert!(
                    same(&got, &values[flat]),
                    "{what} chunk {key} at {global:?}: got {got}, expected {}",
                    values[flat]
                );
            }
        }
        assert!(w.take().is_empty(), "{what}");
        keys.len()
    }

    #[test]
    fn v2_zarr_python_fixtures_parse_decode_and_round_trip() {
        let root = Path::new(FIXTURES).join("v2");
        if !root.is_dir() {
            println!(
                "note: {} is absent; skipping the v2 fixtures",
                root.display()
            );
            return;
        }
        let manifest: Value = serde_json::from_slice(
            &std::fs::read(Path::new(FIXTURES).join("manifest.json")).unwrap(),
        )
        .unwrap();
        let entries: Vec<&Value> = manifest["arrays"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["zarr_format"] == 2)
            .collect();
        let mut files = Vec::new();
        files_named(&root, ZARRAY, &mut files);
        let (mut numeric, mut strings, mut chunks, mut exact) = (0, 0, 0, 0);
        for f in &files {
            let dir = f.parent().unwrap();
            let zattrs = read_opt(&dir.join(ZATTRS));
            let meta = parse_array(&std::fs::read(f).unwrap(), zattrs.as_deref())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if meta.data_type == DataType::String {
                strings += 1;
            } else {
                numeric += 1;
            }
            round_trips(&meta);
            // What we write is what zarr-python wrote.
            let doc: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            assert_eq!(array_to_json(&meta).unwrap().0, doc, "{}", f.display());
            // Find the manifest entry of this array.
            let rel = dir
                .strip_prefix(Path::new(FIXTURES))
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let entry = entries
                .iter()
                .find(|e| {
                    let p = e["path"].as_str().unwrap();
                    let full = if p.is_empty() {
                        e["store"].as_str().unwrap().to_string()
                    } else {
                        format!("{}/{p}", e["store"].as_str().unwrap())
                    };
                    full == rel
                })
                .unwrap_or_else(|| panic!("{rel} is not in the manifest"));
            assert_eq!(json!(meta.shape), entry["shape"]);
            assert_eq!(json!(meta.chunk_shape), entry["chunks"]);
            assert_eq!(meta.data_type.name(), entry["dtype"].as_str().unwrap());
            if entry["fill_value"].is_null() {
                assert!(!meta.fill_marks_na, "{rel}");
            } else {
                assert!(meta.fill_marks_na, "{rel}");
                assert!(
                    same(
                        &meta.fill_value.to_json(meta.data_type),
                        &entry["fill_value"]
                    ),
                    "{rel}"
                );
            }
            let store = Path::new(FIXTURES).join(entry["store"].as_str().unwrap());
            chunks += check_chunks(&store, entry, &meta);
            exact += 1;
        }
        let expected_strings = entries.iter().filter(|e| e["dtype"] == "string").count();
        println!("v2 fixtures: {numeric} numeric and {strings} string arrays parsed and decoded exactly ({chunks} chunks)");
        assert_eq!(strings, expected_strings);
        assert_eq!(numeric + strings, entries.len());
        assert_eq!(exact, numeric + strings);
        assert!(numeric > 0);

        // Groups, and the consolidated metadata of arrays.zarr, agree with the files.
        let mut groups = Vec::new();
        files_named(&root, ZGROUP, &mut groups);
        for f in &groups {
            let zattrs = read_opt(&f.parent().unwrap().join(ZATTRS));
            let g = parse_group(&std::fs::read(f).unwrap(), zattrs.as_deref()).unwrap();
            let (zg, zt) = group_to_json(&g);
            assert_eq!(zg, json!({"zarr_format": 2}));
            assert_eq!(
                parse_group(zg.to_string().as_bytes(), Some(zt.to_string().as_bytes())).unwrap(),
                g
            );
        }
        for e in manifest["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["zarr_format"] == 2)
        {
            let dir = Path::new(FIXTURES)
                .join(e["store"].as_str().unwrap())
                .join(e["path"].as_str().unwrap());
            let g = parse_group(
                &std::fs::read(dir.join(ZGROUP)).unwrap(),
                read_opt(&dir.join(ZATTRS)).as_deref(),
            )
            .unwrap();
            assert_eq!(Value::Object(g.attributes), e["attributes"]);
        }
        let store = root.join("arrays.zarr");
        let m = parse_consolidated(&std::fs::read(store.join(ZMETADATA)).unwrap()).unwrap();
        let (mut arrays, mut groups) = (0, 0);
        for (key, doc) in &m {
            let (node, name) = match key.rsplit_once('/') {
                Some((n, k)) => (n.to_string(), k),
                None => (String::new(), key.as_str()),
            };
            let attrs_key = if node.is_empty() {
                ZATTRS.to_string()
            } else {
                format!("{node}/{ZATTRS}")
            };
            let on_disk = |f: &str| std::fs::read(store.join(&node).join(f)).unwrap();
            match name {
                ZARRAY => {
                    let from_disk = parse_array(
                        &on_disk(ZARRAY),
                        read_opt(&store.join(&node).join(ZATTRS)).as_deref(),
                    );
                    match array_from_json(doc, m.get(&attrs_key)) {
                        Ok(a) => assert_eq!(a, from_disk.unwrap(), "{key}"),
                        Err(e) => assert_eq!(e, from_disk.unwrap_err()),
                    }
                    arrays += 1;
                }
                ZGROUP => {
                    let g = group_from_json(doc, m.get(&attrs_key)).unwrap();
                    let from_disk = parse_group(
                        &on_disk(ZGROUP),
                        read_opt(&store.join(&node).join(ZATTRS)).as_deref(),
                    )
                    .unwrap();
                    assert_eq!(g, from_disk, "{key}");
                    groups += 1;
                }
                ZATTRS => {}
                other => panic!("unexpected consolidated key {other}"),
            }
        }
        println!(
            "arrays.zarr/.zmetadata: {arrays} arrays and {groups} groups agree with their files"
        );
        assert!(arrays > 0 && groups > 0);
    }
}
