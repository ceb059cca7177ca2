//! Records of named fields: the `struct` data type of Zarr v3
//! (zarr-extensions data-types/struct, and `structured`, its legacy name
//! whose fields may be `[name, data_type]` pairs) and NumPy's structured
//! dtypes in a Zarr v2 `.zarray` (`[["a", "<i4"], ["b", "<f8", [2]]]`).
//!
//! Fields are packed without padding, in declaration order. A nested
//! struct is flattened here into its leaves, named "outer.inner": the
//! bytes are the same, and R gets one column per leaf. A field may be a
//! NumPy sub-array (a shape after its type, v2 only), a number or bool, a
//! fixed-length byte string (`null_terminated_bytes`, NumPy `S`) or UTF-32
//! string (`fixed_length_utf32`, NumPy `U`); datetime64 and timedelta64
//! fields are int64 whose `time` says their unit (R reads them as times
//! through the CF decoding of `cf/`). Anything else is refused, naming the
//! field.

use super::numpy::{TimeType, TypeStr};
use super::{DataType, Endian};
use crate::error::{Result, ZarrError};
use serde_json::{json, Value};

/// What one element of a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A number or bool of a core data type.
    Number(DataType),
    /// NumPy `S<n>`: n bytes, NUL-padded (UTF-8 text for R).
    Bytes(usize),
    /// NumPy `U<n>`: n UTF-32 code units, NUL-padded.
    Utf32(usize),
}

impl FieldKind {
    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            FieldKind::Number(d) => d.size(),
            FieldKind::Bytes(n) => n,
            FieldKind::Utf32(n) => 4 * n,
        }
    }
}

/// One leaf field of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The name, with the names of the structs it is nested in before it
    /// ("point.x").
    pub name: String,
    pub kind: FieldKind,
    /// A NumPy sub-array's shape (C order); empty for a scalar field.
    pub shape: Vec<usize>,
    /// Where the field starts in a record.
    pub offset: usize,
    /// The byte order of a v2 field's type string; None where the array's
    /// `bytes` codec says it (v3).
    pub endian: Option<Endian>,
    /// Where the field's fill value sits in the struct's fill value
    /// object: the names from the outermost struct down.
    pub path: Vec<String>,
    /// The datetime64/timedelta64 type of an int64 field that is one.
    pub time: Option<TimeType>,
}

impl Field {
    /// Elements of the field in one record (1 unless it is a sub-array).
    pub fn count(&self) -> usize {
        self.shape.iter().product()
    }

    /// Bytes of the field in one record.
    pub fn size(&self) -> usize {
        self.count() * self.kind.size()
    }

    /// The byte order of the field's elements: its own, else the
    /// machine's (metadata gives every field of an array one).
    pub fn order(&self) -> Endian {
        self.endian.unwrap_or(Endian::native())
    }
}

/// A record type: its leaf fields and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructType {
    pub fields: Vec<Field>,
    pub size: usize,
}

/// Records no larger than this: a record is copied as one element.
const MAX_RECORD: usize = 1 << 24;

fn bad(msg: String) -> ZarrError {
    ZarrError::Metadata(format!("data_type: {msg}"))
}

fn refused(field: &str, what: &str) -> ZarrError {
    ZarrError::Unsupported(format!(
        "data_type: struct field '{field}' is of {what}, which this package does not read"
    ))
}

impl StructType {
    /// The engine's data type of these records.
    pub fn data_type(&self) -> DataType {
        DataType::Record(self.size as u32)
    }

    /// A v3 `struct` (or `structured`) data type's configuration.
    pub fn from_v3(config: Option<&Value>) -> Result<StructType> {
        let mut b = Builder::default();
        b.v3_fields(config, &[])?;
        b.finish()
    }

    /// A Zarr v2 `.zarray`'s dtype list.
    pub fn from_v2(dtype: &Value) -> Result<StructType> {
        let mut b = Builder::default();
        b.v2_fields(dtype, &[])?;
        b.finish()
    }

    /// The field at `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

#[derive(Default)]
struct Builder {
    fields: Vec<Field>,
    size: usize,
}

impl Builder {
    fn finish(self) -> Result<StructType> {
        if self.fields.is_empty() {
            return Err(bad("a struct needs at least one field".into()));
        }
        Ok(StructType {
            fields: self.fields,
            size: self.size,
        })
    }

    fn push(
        &mut self,
        path: &[String],
        kind: FieldKind,
        shape: Vec<usize>,
        endian: Option<Endian>,
        time: Option<TimeType>,
    ) -> Result<()> {
        let name = path.join(".");
        if self.fields.iter().any(|f| f.name == name) {
            return Err(bad(format!("struct field names must be unique: '{name}'")));
        }
        let field = Field {
            name,
            kind,
            shape,
            offset: self.size,
            endian,
            path: path.to_vec(),
            time,
        };
        let size = field
            .shape
            .iter()
            .try_fold(kind.size(), |acc, &n| acc.checked_mul(n))
            .and_then(|n| n.checked_add(self.size))
            .filter(|&n| n <= MAX_RECORD)
            .ok_or_else(|| {
                bad(format!(
                    "struct records larger than {MAX_RECORD} bytes (at field '{}')",
                    field.name
                ))
            })?;
        self.size = size;
        self.fields.push(field);
        Ok(())
    }

    /// The names of a new field below `outer`, refusing empty names.
    fn path(outer: &[String], name: Option<&str>) -> Result<Vec<String>> {
        match name {
            Some(n) if !n.is_empty() => {
                let mut p = outer.to_vec();
                p.push(n.to_string());
                Ok(p)
            }
            _ => Err(bad(format!(
                "every struct field needs a non-empty name{}",
                if outer.is_empty() {
                    String::new()
                } else {
                    format!(" (in '{}')", outer.join("."))
                }
            ))),
        }
    }

    fn v3_fields(&mut self, config: Option<&Value>, outer: &[String]) -> Result<()> {
        let Some(Value::Array(fields)) = config.and_then(|c| c.get("fields")) else {
            return Err(bad(
                "struct needs a configuration with a 'fields' array".into()
            ));
        };
        if fields.is_empty() {
            return Err(bad("a struct needs at least one field".into()));
        }
        for f in fields {
            // `structured` wrote fields as [name, data_type] pairs.
            let (name, dt) = match f {
                Value::Object(o) => (o.get("name").and_then(Value::as_str), o.get("data_type")),
                Value::Array(pair) if pair.len() == 2 => (pair[0].as_str(), pair.get(1)),
                other => return Err(bad(format!("struct field {other} is not an object"))),
            };
            let path = Builder::path(outer, name)?;
            let dt = dt.ok_or_else(|| {
                bad(format!(
                    "struct field '{}' has no data_type",
                    path.join(".")
                ))
            })?;
            self.v3_field(&path, dt)?;
        }
        Ok(())
    }

    fn v3_field(&mut self, path: &[String], dt: &Value) -> Result<()> {
        let what = path.join(".");
        let (name, config) = match dt {
            Value::String(s) => (s.as_str(), None),
            Value::Object(o) => (
                o.get("name").and_then(Value::as_str).unwrap_or(""),
                o.get("configuration"),
            ),
            other => return Err(bad(format!("struct field '{what}': data_type {other}"))),
        };
        let length = || -> Result<usize> {
            config
                .and_then(|c| c.get("length_bytes"))
                .and_then(Value::as_u64)
                .filter(|&n| n > 0 && n <= MAX_RECORD as u64)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    bad(format!(
                        "struct field '{what}': {name} needs a positive length_bytes"
                    ))
                })
        };
        let kind = match name {
            "struct" | "structured" => return self.v3_fields(config, path),
            "null_terminated_bytes" => FieldKind::Bytes(length()?),
            "fixed_length_utf32" => {
                let n = length()?;
                if n % 4 != 0 {
                    return Err(bad(format!(
                        "struct field '{what}': fixed_length_utf32 length_bytes must be a multiple of 4, not {n}"
                    )));
                }
                FieldKind::Utf32(n / 4)
            }
            "numpy.datetime64" | "numpy.timedelta64" => {
                let time = TimeType::from_v3(name, config)
                    .expect("a time type")
                    .map_err(|e| bad(format!("struct field '{what}': {e}")))?;
                return self.push(
                    path,
                    FieldKind::Number(DataType::Int64),
                    Vec::new(),
                    None,
                    Some(time),
                );
            }
            "string" => return Err(refused(&what, "variable-length type 'string'")),
            n => match DataType::parse(n) {
                Ok(d) => FieldKind::Number(d),
                Err(_) => return Err(refused(&what, &format!("data type '{n}'"))),
            },
        };
        self.push(path, kind, Vec::new(), None, None)
    }

    fn v2_fields(&mut self, dtype: &Value, outer: &[String]) -> Result<()> {
        let Value::Array(fields) = dtype else {
            return Err(bad(format!("a structured dtype is a list, got {dtype}")));
        };
        if fields.is_empty() {
            return Err(bad("a structured dtype needs at least one field".into()));
        }
        for f in fields {
            let parts = f.as_array().filter(|p| (2..=3).contains(&p.len()));
            let Some(parts) = parts else {
                return Err(bad(format!(
                    "a structured dtype's field is [name, dtype] or [name, dtype, shape], got {f}"
                )));
            };
            let path = Builder::path(outer, parts[0].as_str())?;
            let what = path.join(".");
            let shape = match parts.get(2) {
                None => Vec::new(),
                Some(Value::Array(s)) => s
                    .iter()
                    .map(|n| n.as_u64().map(|n| n as usize))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        bad(format!(
                            "field '{what}': shape {} is not a list of counts",
                            parts[2]
                        ))
                    })?,
                Some(other) => {
                    return Err(bad(format!(
                        "field '{what}': shape {other} is not a list of counts"
                    )))
                }
            };
            match &parts[1] {
                Value::Array(_) if shape.is_empty() => self.v2_fields(&parts[1], &path)?,
                Value::Array(_) => return Err(refused(&what, "an array of structs")),
                Value::String(s) => {
                    let (kind, endian, time) = v2_kind(s, &what)?;
                    self.push(&path, kind, shape, endian, time)?;
                }
                other => return Err(bad(format!("field '{what}': dtype {other}"))),
            }
        }
        Ok(())
    }
}

/// A NumPy type string of a field -> its kind, byte order and time type.
fn v2_kind(s: &str, what: &str) -> Result<(FieldKind, Option<Endian>, Option<TimeType>)> {
    if let Some(time) = TimeType::from_typestr(s) {
        let (time, endian) = time.map_err(|e| bad(format!("field '{what}': {e}")))?;
        return Ok((FieldKind::Number(DataType::Int64), Some(endian), Some(time)));
    }
    let t = TypeStr::split(s).ok_or_else(|| bad(format!("field '{what}': dtype '{s}'")))?;
    let size = t.size.filter(|&n| n > 0 && n <= MAX_RECORD);
    Ok(match (t.kind, size) {
        ('S', Some(n)) => (FieldKind::Bytes(n), None, None),
        ('U', Some(n)) => (FieldKind::Utf32(n), Some(t.endian()), None),
        _ => match t.data_type() {
            Some(d) => (FieldKind::Number(d), Some(t.endian()), None),
            None => return Err(refused(what, &format!("NumPy type '{s}'"))),
        },
    })
}

/// NumPy's type string of a field stored in byte order `endian`.
pub fn numpy_field_type(f: &Field, endian: Endian) -> String {
    let o = match endian {
        Endian::Little => '<',
        Endian::Big => '>',
    };
    if let Some(t) = &f.time {
        return t.typestr(endian);
    }
    match f.kind {
        FieldKind::Number(d) => {
            super::numpy::typestr(d, endian).expect("a number has a type string")
        }
        FieldKind::Bytes(n) => format!("|S{n}"),
        FieldKind::Utf32(n) => format!("{o}U{n}"),
    }
}

/// The v3 data type of one leaf field.
fn v3_field_type(f: &Field) -> Value {
    if let Some(t) = &f.time {
        return t.v3_json();
    }
    match f.kind {
        FieldKind::Number(d) => Value::from(d.name()),
        FieldKind::Bytes(n) => {
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": n}})
        }
        FieldKind::Utf32(n) => {
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 4 * n}})
        }
    }
}

/// A new struct type of flat fields (as R writes them), in v3 form.
pub fn v3_json(fields: &[Field]) -> Value {
    let list: Vec<Value> = fields
        .iter()
        .map(|f| json!({"name": f.name, "data_type": v3_field_type(f)}))
        .collect();
    json!({"name": "struct", "configuration": {"fields": list}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_fields_pack_without_padding_and_nested_structs_flatten() {
        let cfg = json!({"fields": [
            {"name": "id", "data_type": "int32"},
            {"name": "flags", "data_type": "uint8"},
            {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": {"name": "float32"}}]}}},
            {"name": "s", "data_type": {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}},
            {"name": "u", "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}}]});
        let t = StructType::from_v3(Some(&cfg)).unwrap();
        let got: Vec<(&str, usize, usize)> = t
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset, f.size()))
            .collect();
        assert_eq!(
            got,
            [
                ("id", 0, 4),
                ("flags", 4, 1),
                ("p.x", 5, 4),
                ("p.y", 9, 4),
                ("s", 13, 3),
                ("u", 16, 8)
            ]
        );
        assert_eq!(t.size, 24);
        assert_eq!(t.data_type(), DataType::Record(24));
        assert_eq!(t.field("p.y").unwrap().path, ["p", "y"]);
        // the legacy pair form
        let legacy = json!({"fields": [["x", "float32"], ["y", "int16"]]});
        assert_eq!(StructType::from_v3(Some(&legacy)).unwrap().size, 6);
    }

    #[test]
    fn v2_lists_keep_each_fields_byte_order_and_sub_array_shape() {
        let dt = json!([
            ["a", "<i4"],
            ["b", ">f8", [2, 3]],
            ["c", "|b1"],
            ["s", "|S3"],
            ["u", ">U2"],
            ["t", "<M8[s]"],
            ["n", [["x", "<f4"]]]
        ]);
        let t = StructType::from_v2(&dt).unwrap();
        let b = t.field("b").unwrap();
        assert_eq!((b.offset, b.size(), b.count()), (4, 48, 6));
        assert_eq!(b.endian, Some(Endian::Big));
        assert_eq!(t.field("u").unwrap().kind, FieldKind::Utf32(2));
        let time = t.field("t").unwrap();
        assert_eq!(time.kind, FieldKind::Number(DataType::Int64));
        let unit = time.time.as_ref().map(|t| (t.delta, t.unit.as_str()));
        assert_eq!(unit, Some((false, "s")));
        assert_eq!(numpy_field_type(time, Endian::Big), ">M8[s]");
        assert_eq!(t.field("n.x").unwrap().offset, 4 + 48 + 1 + 3 + 8 + 8);
        assert_eq!(t.size, 76);
        assert_eq!(numpy_field_type(b, Endian::Big), ">f8");
        assert_eq!(numpy_field_type(t.field("s").unwrap(), Endian::Big), "|S3");
    }

    #[test]
    fn what_cannot_be_read_is_refused_naming_the_field() {
        let e = StructType::from_v3(Some(&json!({"fields": [
            {"name": "a", "data_type": "int8"}, {"name": "txt", "data_type": "string"}]})))
        .unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.to_string().contains("'txt'"), "{e}");
        let e = StructType::from_v2(&json!([["o", "|O"]])).unwrap_err();
        assert!(
            e.kind() == "unsupported" && e.to_string().contains("'o'"),
            "{e}"
        );
        for bad in [
            json!({"fields": []}),
            json!({"fields": [{"name": "", "data_type": "int8"}]}),
            json!({"fields": [{"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}]}),
            json!({}),
        ] {
            let e = StructType::from_v3(Some(&bad)).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{bad}");
        }
        let e = StructType::from_v2(&json!([["t", "<M8[fortnight]"]])).unwrap_err();
        assert!(
            e.kind() == "metadata" && e.to_string().contains("'t'"),
            "{e}"
        );
        let e = StructType::from_v3(Some(&json!({"fields": [
            {"name": "d", "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "s"}}}]})))
        .unwrap_err();
        assert!(
            e.kind() == "metadata" && e.to_string().contains("'d'"),
            "{e}"
        );
        let huge = json!([["a", "<f8", [1 << 20, 1 << 20]]]);
        assert_eq!(StructType::from_v2(&huge).unwrap_err().kind(), "metadata");
    }
}
