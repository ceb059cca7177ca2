//! Zarr v2 arrays <-> the v3-style `ArrayMetadata`: a `.zarray`'s
//! layout, dtype, filters and compressor become a v3 codec list (and back),
//! each numcodecs configuration mapped to its codec.

use super::document::*;
use super::*;
use crate::codec::v2::V2Config;
use crate::codec::{self, vlen, ArrayToBytes, CodecChain};
use crate::metadata::numpy_types::WRITTEN;

/// One numcodecs configuration (`{"id": ..., ...}`, the compressor or a
/// filter) -> a codec entry of the chain, by the codec that has that id.
/// `typesize` is the item size of the buffer this codec receives
/// (numcodecs gives it to blosc) and is updated to that of its output.
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
    // Only codecs the engine builds on bytes are filters or compressors;
    // the object codec (vlen-utf8) has its own place.
    let conv = codec::spec_of_v2_id(id)
        .filter(|s| s.build.is_some())
        .and_then(|s| s.v2.as_ref());
    match conv {
        Some(c) => (c.from_v2)(cfg, typesize, role),
        None => Err(ZarrError::Unsupported(format!("unsupported {role} '{id}'"))),
    }
}

/// The numcodecs conversion of the codec whose id is `id`.
fn v2_config(id: &str) -> Option<&'static V2Config> {
    codec::spec_of_v2_id(id).and_then(|s| s.v2.as_ref())
}

/// A codec entry of the chain -> its numcodecs configuration.
fn codec_to_numcodecs(v: &Value) -> Result<Value> {
    let name = v.get("name").and_then(Value::as_str).unwrap_or("?");
    let empty = Map::new();
    let cfg = v
        .get("configuration")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let Some(conv) = codec::spec(name).and_then(|s| s.v2.as_ref()) else {
        return Err(ZarrError::Unsupported(format!(
            "codec '{name}' cannot be written to Zarr v2 metadata"
        )));
    };
    let mut out = Map::new();
    out.insert("id".into(), conv.id.into());
    out.extend((conv.to_v2)(cfg));
    Ok(Value::Object(out))
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
    let fill = require(obj, "fill_value", ".zarray")?;
    // A NumPy structured dtype (a list of fields): records, whose fields
    // carry their own byte order.
    let structured = match dtype {
        Value::Array(_) => Some(
            super::super::structs::map_v2(dtype, fill).map_err(|e| e.context(".zarray: dtype"))?,
        ),
        _ => None,
    };
    let (data_type, endian) = match &structured {
        Some((t, _)) => (t.data_type(), None),
        None => parse_dtype(dtype)?,
    };
    let fixed = fixed_string_of(dtype).transpose()?;
    let (fill_value, fill_marks_na) = match (&fixed, &structured) {
        (_, Some((_, Some(f)))) => (f.clone(), true),
        (_, Some((t, None))) => (FillValue::zero(t.data_type()), false),
        (Some(f), None) => fixed_string_fill(fill, f)?,
        (None, None) => fill_value(fill, data_type)?,
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
    // An object array's filter hands blosc bytes: an item size of 1.
    let mut typesize = data_type.size().max(1);
    let mut filters: Vec<&Value> = match obj.get("filters") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.iter().collect(),
        Some(v) => {
            return Err(malformed(format!(
                ".zarray: filters must be an array or null, got {v}"
            )))
        }
    };
    let categorize = crate::codec::categorize::SPEC
        .v2
        .as_ref()
        .expect("categorize has a v2 id");
    let first_id = filters
        .first()
        .and_then(|f| f.get("id"))
        .and_then(Value::as_str);
    if data_type == DataType::String && first_id == Some(categorize.id) {
        // numcodecs' categorize turns the strings (object or `<U`) into
        // their labels' positions: the chain's array -> bytes codec.
        let f = filters.remove(0).as_object().cloned().unwrap_or_default();
        codecs.push((categorize.from_v2)(&f, &mut typesize, "filter")?);
    } else if let Some(f) = &fixed {
        codecs.push(f.to_json());
        typesize = f.item_size();
    } else if data_type == DataType::String {
        // The object codec turns the strings into bytes: it is the chain's
        // array -> bytes codec.
        let object_codec = vlen::SPEC.v2.as_ref().expect("vlen-utf8 has a v2 id");
        match filters
            .first()
            .and_then(|f| f.as_object().map(|o| (o, o.get("id"))))
        {
            Some((f, Some(Value::String(id)))) if id == object_codec.id => {
                codecs.push((object_codec.from_v2)(f, &mut typesize, "filter")?);
                filters.remove(0);
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
    let mut extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !ARRAY_MEMBERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if structured.is_some() {
        extra.insert(WRITTEN.into(), dtype.clone());
    }
    let attributes = attributes(zattrs)?;
    Ok(ArrayMetadata {
        dimension_names: dimension_names(&attributes, ndim),
        attributes,
        shape,
        data_type,
        chunk_shape,
        rectilinear: None,
        chunk_key_encoding,
        fill_value,
        codecs,
        storage_transformers: Vec::new(),
        extra,
        zarr_format: 2,
        fill_marks_na,
    })
}

/// The dtype list of a struct array: as read, or made from the v3 fields
/// with the `bytes` codec's byte order.
fn structured_dtype(meta: &ArrayMetadata, endian: Option<crate::dtype::Endian>) -> Result<Value> {
    if let Some(list @ Value::Array(_)) = meta.extra.get(WRITTEN) {
        return Ok(list.clone());
    }
    let t = super::super::structs::layout(meta)?
        .ok_or_else(|| malformed("a struct array without its fields"))?;
    let list: Vec<Value> = t
        .fields
        .iter()
        .map(|f| {
            let e = f.endian.or(endian).unwrap_or(crate::dtype::Endian::Little);
            let ty = crate::dtype::structs::numpy_field_type(f, e);
            if f.shape.is_empty() {
                json!([f.name, ty])
            } else {
                json!([f.name, ty, f.shape])
            }
        })
        .collect();
    Ok(Value::Array(list))
}

/// Parse a `.zarray` document and, if the node has one, its `.zattrs`.
pub fn parse_array(zarray: &[u8], zattrs: Option<&[u8]>) -> Result<ArrayMetadata> {
    parse_array_value(&zarray_document(zarray)?, zattrs)
}

/// The bytes of a `.zarray` document as JSON, refused as `parse_array`
/// refuses them (not UTF-8, not JSON, not an object).
pub fn zarray_document(zarray: &[u8]) -> Result<Value> {
    Ok(Value::Object(json_object(zarray, ".zarray")?))
}

/// `parse_array` of a `.zarray` document already parsed by
/// `zarray_document`, for a caller that looks at it again.
pub fn parse_array_value(zarray: &Value, zattrs: Option<&[u8]>) -> Result<ArrayMetadata> {
    let attrs = zattrs
        .map(|b| json_object(b, ".zattrs").map(Value::Object))
        .transpose()?;
    array_from_json(zarray, attrs.as_ref())
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
    // Zarr v2 has no place for them: dropping one would change the data.
    if let Some(name) = chain.value_codec_names().first() {
        return Err(ZarrError::Unsupported(format!(
            "codec '{name}' cannot be written to Zarr v2 metadata"
        )));
    }
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
        ArrayToBytes::Bytes { endian } if matches!(meta.data_type, DataType::Record(_)) => {
            structured_dtype(meta, *endian)?
        }
        ArrayToBytes::Bytes { endian } => dtype_string(meta.data_type, *endian)?.into(),
        ArrayToBytes::VlenUtf8 => dtype_string(meta.data_type, None)?.into(),
        ArrayToBytes::FixedString(f) => f.numpy_dtype().into(),
        ArrayToBytes::Categorize(c) => c.numpy_dtype().into(),
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
    let is_filter = |c: &Value| {
        c["id"]
            .as_str()
            .and_then(v2_config)
            .is_some_and(|conv| conv.filter)
    };
    let compressor = match filters.last() {
        Some(c) if !is_filter(c) => filters.pop().expect("a last element"),
        _ => Value::Null,
    };
    match &chain.array_to_bytes {
        ArrayToBytes::VlenUtf8 => filters.insert(0, json!({"id": vlen::SPEC.v2_id()})),
        ArrayToBytes::Categorize(c) => filters.insert(0, codec_to_numcodecs(&c.to_json())?),
        _ => {}
    }
    let filters = if filters.is_empty() {
        Value::Null
    } else {
        Value::Array(filters)
    };
    let mut zarray = Map::new();
    zarray.insert("shape".into(), json!(meta.shape));
    zarray.insert("chunks".into(), json!(meta.chunk_shape));
    zarray.insert("dtype".into(), dtype);
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
        if k == WRITTEN && matches!(meta.data_type, DataType::Record(_)) {
            continue;
        }
        zarray.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut zattrs = meta.attributes.clone();
    if let Some(names) = &meta.dimension_names {
        zattrs.insert(ARRAY_DIMENSIONS.into(), json!(names));
    }
    Ok((Value::Object(zarray), Value::Object(zattrs)))
}
