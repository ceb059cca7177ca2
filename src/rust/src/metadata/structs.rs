//! Struct arrays in metadata: the engine holds them as `DataType::Record`
//! with the fill value's stored bytes; the data type as written (the v3
//! `struct`/`structured` object, or a v2 dtype list) is kept in
//! `ArrayMetadata::extra` under `numpy_types::WRITTEN`, and `layout` gives
//! the fields with each one's byte order (a v2 dtype's own, else the
//! `bytes` codec's, little-endian when it has none as the legacy
//! `structured` arrays were written).
//!
//! Fill values: v3 writes an object of per-field values (nested for
//! nested structs; `null_terminated_bytes` fields in base64, as
//! zarr-python does), v2 the record's bytes in base64. Both are read, and
//! also a list of per-field values in field order.

use super::numpy_types::{Mapped, WRITTEN};
use super::ArrayMetadata;
use crate::dtype::fixed_text::{decode_utf32, encode_utf32, trim_nuls};
use crate::dtype::structs::{Field, FieldKind, StructType};
use crate::dtype::{DataType, Endian};
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
use base64::Engine as _;
use serde_json::{Map, Value};

fn bad(msg: String) -> ZarrError {
    ZarrError::Metadata(format!("fill_value: {msg}"))
}

fn base64_bytes(s: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

fn base64_text(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The byte order of the `bytes` codec in `codecs` (also inside a shard's
/// codecs); little-endian when none says it.
fn codec_endian(codecs: &[Value]) -> Endian {
    for c in codecs {
        match c.get("name").and_then(Value::as_str) {
            Some("bytes") => {
                if c.pointer("/configuration/endian").and_then(Value::as_str) == Some("big") {
                    return Endian::Big;
                }
                return Endian::Little;
            }
            Some("sharding_indexed") => {
                if let Some(Value::Array(inner)) = c.pointer("/configuration/codecs") {
                    return codec_endian(inner);
                }
            }
            _ => {}
        }
    }
    Endian::Little
}

/// Give every field without its own byte order the array's.
fn resolve(mut t: StructType, endian: Endian) -> StructType {
    for f in &mut t.fields {
        f.endian.get_or_insert(endian);
    }
    t
}

/// The engine's form of a v3 `struct` data type.
pub fn map_v3(config: Option<&Value>, fill: &Value, codecs: &[Value]) -> Result<Mapped> {
    let t = resolve(StructType::from_v3(config)?, codec_endian(codecs));
    let bytes = fill_bytes(&t, fill)?.unwrap_or_else(|| vec![0; t.size]);
    Ok(Mapped {
        data_type: t.data_type(),
        fill_value: Value::from(base64_text(&bytes)),
        codecs: codecs.to_vec(),
    })
}

/// The engine's form of a v2 dtype list: the layout, the fill value (None
/// for `fill_value: null`, no missing-value marker).
pub fn map_v2(dtype: &Value, fill: &Value) -> Result<(StructType, Option<FillValue>)> {
    let t = resolve(StructType::from_v2(dtype)?, Endian::native());
    let fill = fill_bytes(&t, fill)?.map(|bytes| FillValue { bytes });
    Ok((t, fill))
}

/// The fields of a struct array, each with its byte order; None for an
/// array of another data type.
pub fn layout(a: &ArrayMetadata) -> Result<Option<StructType>> {
    if !matches!(a.data_type, DataType::Record(_)) {
        return Ok(None);
    }
    let written = a.extra.get(WRITTEN);
    let t = match written {
        Some(list @ Value::Array(_)) => resolve(StructType::from_v2(list)?, Endian::native()),
        Some(v) => resolve(
            StructType::from_v3(v.get("configuration"))?,
            codec_endian(&a.codecs),
        ),
        None => {
            return Err(ZarrError::Metadata(
                "a struct array's metadata lost its fields".into(),
            ))
        }
    };
    Ok(Some(t))
}

/// The stored bytes of a struct fill value in any of its forms; None for
/// null.
fn fill_bytes(t: &StructType, fill: &Value) -> Result<Option<Vec<u8>>> {
    let mut out = vec![0u8; t.size];
    match fill {
        Value::Null => return Ok(None),
        Value::String(s) => {
            let b = base64_bytes(s)
                .filter(|b| b.len() == t.size)
                .ok_or_else(|| bad(format!("\"{s}\" is not base64 of {} bytes", t.size)))?;
            return Ok(Some(b));
        }
        Value::Object(_) => {
            for f in &t.fields {
                let mut v = fill;
                for name in &f.path {
                    v = v.get(name).ok_or_else(|| {
                        bad(format!("{fill} has no value for field '{}'", f.name))
                    })?;
                }
                field_fill(f, v, &mut out)?;
            }
        }
        Value::Array(list) if list.len() == t.fields.len() => {
            for (f, v) in t.fields.iter().zip(list) {
                field_fill(f, v, &mut out)?;
            }
        }
        other => {
            return Err(bad(format!(
                "a struct's fill value is an object of its fields' values, got {other}"
            )))
        }
    }
    Ok(Some(out))
}

/// Store one field's fill value `v` into the record `out`.
fn field_fill(f: &Field, v: &Value, out: &mut [u8]) -> Result<()> {
    let what = |want: &str| bad(format!("field '{}' needs {want}, got {v}", f.name));
    let one: Vec<u8> = match f.kind {
        FieldKind::Number(d) => {
            let v = match v {
                // datetime64 fields: NaT is the smallest int64
                Value::String(s) if s == "NaT" && d == DataType::Int64 => Value::from(i64::MIN),
                v => v.clone(),
            };
            let mut b = FillValue::parse(&v, d)
                .map_err(|e| e.context(&format!("field '{}'", f.name)))?
                .bytes;
            to_order(&mut b, d, f.order());
            b
        }
        FieldKind::Bytes(n) => {
            let s = v.as_str().ok_or_else(|| what("base64 text"))?;
            let mut b = base64_bytes(s).ok_or_else(|| what("base64 text"))?;
            if b.len() > n {
                return Err(what(&format!("at most {n} bytes")));
            }
            b.resize(n, 0);
            b
        }
        FieldKind::Utf32(n) => {
            let s = v.as_str().ok_or_else(|| what("a string"))?;
            if s.chars().count() > n {
                return Err(what(&format!("at most {n} characters")));
            }
            let mut b = vec![0; 4 * n];
            encode_utf32(s, f.order(), &mut b);
            b
        }
    };
    // A sub-array field's fill is its one value in every element.
    let size = one.len();
    for i in 0..f.count() {
        out[f.offset + i * size..f.offset + (i + 1) * size].copy_from_slice(&one);
    }
    Ok(())
}

/// Native-endian elements of `d` <-> byte order `endian`, in place (the
/// same swap both ways).
pub fn to_order(bytes: &mut [u8], d: DataType, endian: Endian) {
    let unit = d.swap_unit();
    if endian != Endian::native() && unit > 1 {
        for u in bytes.chunks_exact_mut(unit) {
            u.reverse();
        }
    }
}

/// The v3 fill value object of a record's bytes (nested objects for
/// nested structs); an error naming the field when a text field's bytes
/// are not text (`dtype::fixed_text` rules).
pub fn fill_json(t: &StructType, bytes: &[u8]) -> Result<Value> {
    let mut root = Map::new();
    for f in &t.fields {
        let b = &bytes[f.offset..f.offset + f.kind.size()];
        let v = match f.kind {
            FieldKind::Number(d) => {
                let mut b = b.to_vec();
                to_order(&mut b, d, f.order());
                let nat = f.time.is_some() && b == i64::MIN.to_ne_bytes();
                match nat {
                    true => Value::from("NaT"),
                    false => FillValue { bytes: b }.to_json(d),
                }
            }
            FieldKind::Bytes(_) => Value::from(base64_text(trim_nuls(b))),
            FieldKind::Utf32(_) => Value::from(decode_utf32(b, f.order()).map_err(|cp| {
                bad(format!(
                    "field '{}' holds 0x{cp:X}, which is not a Unicode scalar value",
                    f.name
                ))
            })?),
        };
        let mut at = &mut root;
        let (last, outer) = f.path.split_last().expect("a field has a name");
        for name in outer {
            at = at
                .entry(name.clone())
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("an outer struct's fill is an object");
        }
        at.insert(last.clone(), v);
    }
    Ok(Value::Object(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v3_type() -> Value {
        json!({"fields": [{"name": "a", "data_type": "int32"},
            {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "x", "data_type": "float64"}]}}},
            {"name": "s", "data_type": {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}},
            {"name": "u", "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}},
            {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}}]})
    }

    #[test]
    fn a_v3_fill_object_becomes_the_records_bytes_and_back() {
        let fill = json!({"a": 7, "p": {"x": 1.5}, "s": "YWI=", "u": "hi", "t": "NaT"});
        for (endian, codec) in [
            (
                Endian::Little,
                json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            ),
            (
                Endian::Big,
                json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
            ),
        ] {
            let codecs = codec.as_array().unwrap().clone();
            let m = map_v3(Some(&v3_type()), &fill, &codecs).unwrap();
            assert_eq!(m.data_type, DataType::Record(4 + 8 + 3 + 8 + 8));
            let bytes = base64_bytes(m.fill_value.as_str().unwrap()).unwrap();
            let (a, x) = match endian {
                Endian::Little => (7i32.to_le_bytes(), 1.5f64.to_le_bytes()),
                Endian::Big => (7i32.to_be_bytes(), 1.5f64.to_be_bytes()),
            };
            assert_eq!(&bytes[..4], &a);
            assert_eq!(&bytes[4..12], &x);
            assert_eq!(&bytes[12..15], b"ab\0");
            assert_eq!(bytes[15], if endian == Endian::Little { b'h' } else { 0 });
            let t = resolve(StructType::from_v3(Some(&v3_type())).unwrap(), endian);
            assert_eq!(fill_json(&t, &bytes).unwrap(), fill);
        }
    }

    #[test]
    fn v2_fills_are_base64_null_or_a_list() {
        let dt = json!([["a", "<i4"], ["b", ">f8"]]);
        let (t, fill) = map_v2(&dt, &json!("BwAAAD/4AAAAAAAA")).unwrap();
        let b = fill.unwrap().bytes;
        assert_eq!(fill_json(&t, &b).unwrap(), json!({"a": 7, "b": 1.5}));
        assert_eq!(map_v2(&dt, &Value::Null).unwrap().1, None);
        let (_, listed) = map_v2(&dt, &json!([7, 1.5])).unwrap();
        assert_eq!(listed.unwrap().bytes, b);
        for wrong in [json!("AAAA"), json!({"a": 1}), json!(3), json!([1])] {
            let e = map_v2(&dt, &wrong).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{wrong}");
        }
        let e = map_v2(&dt, &json!({"a": 1, "b": "x"})).unwrap_err();
        assert!(e.to_string().contains("'b'"), "{e}");
    }

    #[test]
    fn text_fill_values_keep_inner_nuls_and_refuse_what_is_not_text() {
        let dt = json!([["u", "<U3"], ["s", "|S3"]]);
        let (t, fill) = map_v2(&dt, &json!(["a\0b", "YQBi"])).unwrap();
        let mut b = fill.unwrap().bytes;
        // NumPy's rule: only trailing NULs are padding.
        assert_eq!(
            fill_json(&t, &b).unwrap(),
            json!({"u": "a\0b", "s": "YQBi"})
        );
        b[4..8].copy_from_slice(&0xDC00u32.to_le_bytes());
        let e = fill_json(&t, &b).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.to_string().contains("field 'u' holds 0xDC00"), "{e}");
    }
}
