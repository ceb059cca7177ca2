//! Zarr v2 arrays <-> the v3-style `ArrayMetadata`: a `.zarray`'s
//! layout, dtype, filters and compressor become a v3 codec list (and back),
//! each numcodecs configuration mapped to its codec.

use super::document::*;
use super::*;
use crate::codec::{ArrayToBytes, CodecChain};

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
