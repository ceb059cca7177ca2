//! The NumPy data types zarr-python 3 writes into zarr.json
//! (zarr-extensions, data-types/): `fixed_length_utf32` (NumPy `<U`/`>U`),
//! `null_terminated_bytes` (NumPy `|S`), `numpy.datetime64` and
//! `numpy.timedelta64`.
//!
//! The engine has no data types of its own for them: a fixed-width string
//! array is the `string` data type whose array -> bytes codec is
//! `numpy.fixed_string` (the same codec as v2's `<U5`), and a datetime or
//! timedelta array is `int64` with NaT (-2^63) as its fill value; R makes
//! times of those integers (R/cf.R). The data type as written is kept in
//! `ArrayMetadata::extra` under `data_type` (a core member, so it can be no
//! real extension), and `restore` gives the document back as it was.

use super::ArrayMetadata;
use crate::codec::fixed_string::{FixedString, NAME as FIXED_STRING};
use crate::dtype::DataType;
use crate::dtype::Endian;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

/// The key in `ArrayMetadata::extra` that holds the data type as written.
pub const WRITTEN: &str = "data_type";

const NAT: i64 = i64::MIN;

fn bad(msg: String) -> ZarrError {
    ZarrError::Metadata(format!("data_type: {msg}"))
}

/// What the engine reads an extension data type as: the core data type,
/// the fill value in that type's JSON form and the codecs to build.
pub struct Mapped {
    pub data_type: DataType,
    pub fill_value: Value,
    pub codecs: Vec<Value>,
}

fn length_bytes(config: Option<&Map<String, Value>>, name: &str) -> Result<usize> {
    match config
        .and_then(|c| c.get("length_bytes"))
        .and_then(Value::as_u64)
    {
        Some(n) if (1..=1 << 26).contains(&n) => Ok(n as usize),
        _ => Err(bad(format!(
            "{name} needs a positive integer length_bytes in its configuration"
        ))),
    }
}

/// Replace each `bytes` codec (at the top or inside a shard's codecs) by
/// `numpy.fixed_string` of `dtype`'s kind and width.
fn to_fixed_string(codecs: &[Value], width: usize, utf32: bool) -> Vec<Value> {
    codecs
        .iter()
        .map(|c| match c.get("name").and_then(Value::as_str) {
            Some("bytes") => {
                let order = match c.pointer("/configuration/endian").and_then(Value::as_str) {
                    _ if !utf32 => '|',
                    Some("big") => '>',
                    _ => '<',
                };
                let kind = if utf32 { 'U' } else { 'S' };
                json!({"name": FIXED_STRING, "configuration": {"dtype": format!("{order}{kind}{width}")}})
            }
            Some("sharding_indexed") => {
                let mut c = c.clone();
                if let Some(Value::Array(inner)) = c.pointer_mut("/configuration/codecs") {
                    *inner = to_fixed_string(inner, width, utf32);
                }
                c
            }
            _ => c.clone(),
        })
        .collect()
}

/// The inverse of `to_fixed_string`.
fn to_bytes(codecs: &[Value]) -> Vec<Value> {
    codecs
        .iter()
        .map(|c| match c.get("name").and_then(Value::as_str) {
            Some(FIXED_STRING) => {
                let dtype = c.pointer("/configuration/dtype").and_then(Value::as_str);
                match dtype.and_then(FixedString::parse_numpy) {
                    Some(Ok(FixedString {
                        utf32: Some(Endian::Big),
                        ..
                    })) => json!({"name": "bytes", "configuration": {"endian": "big"}}),
                    Some(Ok(FixedString { utf32: Some(_), .. })) => {
                        json!({"name": "bytes", "configuration": {"endian": "little"}})
                    }
                    _ => json!({"name": "bytes"}),
                }
            }
            Some("sharding_indexed") => {
                let mut c = c.clone();
                if let Some(Value::Array(inner)) = c.pointer_mut("/configuration/codecs") {
                    *inner = to_bytes(inner);
                }
                c
            }
            _ => c.clone(),
        })
        .collect()
}

fn time_unit(config: Option<&Map<String, Value>>, name: &str) -> Result<()> {
    let config = config.map(|c| Value::Object(c.clone()));
    match crate::dtype::numpy::TimeType::from_v3(name, config.as_ref()) {
        Some(Err(e)) => Err(bad(e)),
        _ => Ok(()),
    }
}

/// The core form of an extension data type, or None for a core type.
pub fn map(
    name: &str,
    config: Option<&Map<String, Value>>,
    fill: &Value,
    codecs: &[Value],
) -> Result<Option<Mapped>> {
    let mapped = match name {
        "struct" | "structured" => {
            let config = config.map(|c| Value::Object(c.clone()));
            super::structs::map_v3(config.as_ref(), fill, codecs)?
        }
        "fixed_length_utf32" => {
            let n = length_bytes(config, name)?;
            if n % 4 != 0 {
                return Err(bad(format!(
                    "fixed_length_utf32 length_bytes must be a multiple of 4, not {n}"
                )));
            }
            Mapped {
                data_type: DataType::String,
                fill_value: fill.clone(),
                codecs: to_fixed_string(codecs, n / 4, true),
            }
        }
        "null_terminated_bytes" => {
            let n = length_bytes(config, name)?;
            // zarr-python writes the fill's bytes as base64.
            let fill_value = match fill.as_str() {
                Some(s) => {
                    use base64::Engine as _;
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_err(|e| bad(format!("fill_value {fill} is not base64: {e}")))?;
                    let text = String::from_utf8(raw)
                        .map_err(|_| bad(format!("fill_value {fill} does not hold UTF-8 text")))?;
                    Value::from(text.trim_end_matches('\0'))
                }
                None => {
                    return Err(bad(format!(
                        "null_terminated_bytes needs a string fill_value, got {fill}"
                    )))
                }
            };
            Mapped {
                data_type: DataType::String,
                fill_value,
                codecs: to_fixed_string(codecs, n, false),
            }
        }
        "numpy.datetime64" | "numpy.timedelta64" => {
            time_unit(config, name)?;
            let fill_value = match fill {
                Value::String(s) if s == "NaT" => Value::from(NAT),
                Value::Number(_) => fill.clone(),
                // R's form of a 64-bit fill value
                Value::String(s) if s.parse::<i64>().is_ok() => fill.clone(),
                _ => {
                    return Err(bad(format!(
                        "{name} needs an integer or \"NaT\" fill_value, got {fill}"
                    )))
                }
            };
            Mapped {
                data_type: DataType::Int64,
                fill_value,
                codecs: codecs.to_vec(),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(mapped))
}

/// The data type, fill value and codecs as zarr.json wrote them, for an
/// array read from an extension data type; None for a core one.
pub fn restore(a: &ArrayMetadata, fill: &Value) -> Option<(Value, Value, Vec<Value>)> {
    let written = a.extra.get(WRITTEN)?;
    let name = written.get("name").and_then(Value::as_str).unwrap_or("");
    let fill = match (name, fill) {
        ("null_terminated_bytes", Value::String(s)) => {
            use base64::Engine as _;
            Value::from(base64::engine::general_purpose::STANDARD.encode(s.as_bytes()))
        }
        ("numpy.datetime64" | "numpy.timedelta64", v) if v.as_i64() == Some(NAT) => {
            Value::from("NaT")
        }
        // A struct's fill: the object of its fields' values; the record's
        // bytes in base64 (as v2 writes it, also read) where a text field
        // holds what JSON text cannot.
        _ if matches!(a.data_type, DataType::Record(_)) => super::structs::layout(a)
            .and_then(|t| {
                t.map(|t| super::structs::fill_json(&t, &a.fill_value.bytes))
                    .transpose()
            })
            .ok()
            .flatten()
            .unwrap_or_else(|| fill.clone()),
        (_, v) => v.clone(),
    };
    Some((written.clone(), fill, to_bytes(&a.codecs)))
}

#[cfg(test)]
mod tests {
    use super::super::{v3, NodeMetadata};
    use super::*;
    use crate::codec::CodecChain;

    fn doc(data_type: Value, fill: Value, codecs: Value) -> Value {
        json!({
            "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}, "dimension_names": ["s"]
        })
    }

    fn parse(d: &Value) -> Result<ArrayMetadata> {
        match v3::parse(d.to_string().as_bytes())? {
            NodeMetadata::Array(a) => Ok(a),
            g => panic!("not an array: {g:?}"),
        }
    }

    #[test]
    fn fixed_length_utf32_reads_as_strings_and_writes_back_as_written() {
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]);
        let d = doc(
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}),
            json!(""),
            codecs,
        );
        let a = parse(&d).unwrap();
        assert_eq!(a.data_type, DataType::String);
        assert_eq!(
            a.codecs[0],
            json!({"name": FIXED_STRING, "configuration": {"dtype": "<U2"}})
        );
        let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 1).unwrap();
        assert_eq!(chain.fixed_string().map(|f| f.width), Some(2));
        assert_eq!(v3::to_json(&NodeMetadata::Array(a)), d);
    }

    #[test]
    fn big_endian_utf32_and_sharded_bytes_keep_their_codecs() {
        let inner = json!([{"name": "bytes", "configuration": {"endian": "big"}}]);
        let codecs = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]);
        let d = doc(
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
            json!(""),
            codecs,
        );
        let a = parse(&d).unwrap();
        assert_eq!(
            a.codecs[0].pointer("/configuration/codecs/0/configuration/dtype"),
            Some(&json!(">U3"))
        );
        assert_eq!(v3::to_json(&NodeMetadata::Array(a)), d);
    }

    #[test]
    fn null_terminated_bytes_fill_is_base64() {
        let codecs = json!([{"name": "bytes"}]);
        let d = doc(
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}),
            json!("YWI="),
            codecs,
        );
        let a = parse(&d).unwrap();
        assert_eq!(a.fill_value.bytes, b"ab");
        assert_eq!(
            a.codecs[0],
            json!({"name": FIXED_STRING, "configuration": {"dtype": "|S4"}})
        );
        assert_eq!(v3::to_json(&NodeMetadata::Array(a)), d);
        let e = parse(&doc(
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}),
            json!("%%"),
            json!([{"name": "bytes"}]),
        ))
        .unwrap_err();
        assert!(e.to_string().contains("base64"), "{e}");
    }

    #[test]
    fn datetime64_is_int64_with_nat_as_fill() {
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
        for name in ["numpy.datetime64", "numpy.timedelta64"] {
            let dt = json!({"name": name, "configuration": {"unit": "s", "scale_factor": 1}});
            let d = doc(dt.clone(), json!("NaT"), codecs.clone());
            let a = parse(&d).unwrap();
            assert_eq!(a.data_type, DataType::Int64);
            assert_eq!(a.fill_value.bytes, i64::MIN.to_le_bytes());
            assert_eq!(v3::to_json(&NodeMetadata::Array(a)), d);
            let a = parse(&doc(dt, json!(7), codecs.clone())).unwrap();
            assert_eq!(a.fill_value.bytes, 7i64.to_le_bytes());
        }
    }

    #[test]
    fn bad_configurations_name_the_data_type() {
        let codecs = json!([{"name": "bytes"}]);
        for (dt, what) in [
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}),
                "multiple of 4",
            ),
            (json!({"name": "fixed_length_utf32"}), "length_bytes"),
            (
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 0}}),
                "length_bytes",
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "fortnight", "scale_factor": 1}}),
                "unit",
            ),
            (
                json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 0}}),
                "scale_factor",
            ),
        ] {
            let e = parse(&doc(dt, json!(0), codecs.clone())).unwrap_err();
            assert!(matches!(e, ZarrError::Metadata(_)), "{e:?}");
            assert!(e.to_string().contains(what), "{e} lacks {what}");
        }
    }
}
