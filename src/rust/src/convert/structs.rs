//! Struct records <-> one column per field, in R's order. The engine reads
//! and writes whole records (`DataType::Record`); this splits them into
//! each field's elements and packs them back. A field's column holds the
//! selected records column-major; a sub-array field's holds the records
//! for each of its elements in turn (R's dims: the selection's, then the
//! field's), while a record stores its sub-array in C order.

use super::materialize::{ElementTransform, NaRule};
use super::{decode_elements_with, encode_elements, encode_elements_with, RBuf, RBufMut};
use crate::dtype::fixed_text::{decode_bytes, decode_utf32, encode_utf32};
use crate::dtype::structs::{Field, FieldKind};
use crate::error::{Result, ZarrError};
use crate::metadata::structs::to_order;

/// For each element of a sub-array of `shape` in C order, its position
/// in column-major order.
fn c_to_column_major(shape: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut c| {
            let (mut pos, mut stride) = (0, 1);
            let mut idx = vec![0; shape.len()];
            for (d, &len) in shape.iter().enumerate().rev() {
                idx[d] = c % len;
                c /= len;
            }
            for (d, &len) in shape.iter().enumerate() {
                pos += idx[d] * stride;
                stride *= len;
            }
            pos
        })
        .collect()
}

/// The stored bytes of each element of field `f` in `records` (records of
/// `record` bytes), in the column's order.
fn field_units(records: &[u8], record: usize, f: &Field) -> Vec<u8> {
    let count = records.len().checked_div(record).unwrap_or(0);
    let es = f.kind.size();
    let perm = c_to_column_major(&f.shape);
    let mut out = vec![0u8; count * perm.len() * es];
    for (r, rec) in records.chunks_exact(record).enumerate() {
        for (j, &p) in perm.iter().enumerate() {
            let at = (p * count + r) * es;
            let from = f.offset + j * es;
            out[at..at + es].copy_from_slice(&rec[from..from + es]);
        }
    }
    out
}

/// The inverse of `field_units`.
fn set_field_units(records: &mut [u8], record: usize, f: &Field, units: &[u8]) {
    let count = records.len() / record;
    let es = f.kind.size();
    let perm = c_to_column_major(&f.shape);
    for (r, rec) in records.chunks_exact_mut(record).enumerate() {
        for (j, &p) in perm.iter().enumerate() {
            let at = (p * count + r) * es;
            let to = f.offset + j * es;
            rec[to..to + es].copy_from_slice(&units[at..at + es]);
        }
    }
}

/// The field's fill value, native endian (numbers only).
fn native_fill(f: &Field, fill: &[u8]) -> Vec<u8> {
    let mut b = fill[f.offset..f.offset + f.kind.size()].to_vec();
    if let FieldKind::Number(d) = f.kind {
        to_order(&mut b, d, f.order());
    }
    b
}

/// How a numeric field's values become R's: elements equal to the
/// field's fill value are NA when `marks_na`, or `cf` (of the layers
/// above: the times of datetime64 fields) converts each one.
#[derive(Clone, Copy)]
pub struct FieldRules<'a> {
    pub marks_na: bool,
    pub cf: Option<&'a dyn ElementTransform>,
}

/// Numeric field `f` of `records` -> `out` (as many elements as the
/// column has, of the R type `rules` read into). Returns warnings about
/// inexact values.
pub fn read_number_field(
    records: &[u8],
    record: usize,
    f: &Field,
    fill: &[u8],
    rules: FieldRules,
    out: &mut RBufMut,
    what: &str,
) -> Result<Vec<String>> {
    let FieldKind::Number(d) = f.kind else {
        return Err(ZarrError::Type(format!(
            "{what}: field '{}' is text",
            f.name
        )));
    };
    let mut units = field_units(records, record, f);
    to_order(&mut units, d, f.order());
    let n = units.len() / d.size();
    if out.len() != n {
        return Err(ZarrError::Type(format!(
            "{what}: field '{}' has {n} elements, the buffer {}",
            f.name,
            out.len()
        )));
    }
    decode_elements_with(
        &units,
        d,
        &native_fill(f, fill),
        NaRule::of(rules.marks_na),
        rules.cf,
        out,
        &format!("{what}, field '{}'", f.name),
    )
}

/// Text field `f` of `records`, in the column's order, by the rules of
/// `dtype::fixed_text` (as the fixed-width string codec reads): trailing
/// NULs are padding, `S` bytes must be UTF-8 and `U` code units Unicode
/// scalar values, else the error names the field and the element.
pub fn read_text_field(
    records: &[u8],
    record: usize,
    f: &Field,
    what: &str,
) -> Result<Vec<String>> {
    let units = field_units(records, record, f);
    let size = f.kind.size();
    let text = |(i, elem): (usize, &[u8])| {
        match f.kind {
        FieldKind::Bytes(_) => decode_bytes(elem).map(str::to_owned).map_err(|e| {
            ZarrError::Unsupported(format!(
                "{what}: element {i} of field '{}' is not UTF-8 text ({e}); only UTF-8 bytes can be read as strings",
                f.name
            ))
        }),
        FieldKind::Utf32(_) => decode_utf32(elem, f.order()).map_err(|cp| {
            ZarrError::CorruptChunk(format!(
                "{what}: element {i} of field '{}' holds 0x{cp:X}, which is not a Unicode scalar value",
                f.name
            ))
        }),
        FieldKind::Number(_) => Err(ZarrError::Type(format!(
            "{what}: field '{}' holds numbers, not text",
            f.name
        ))),
    }
    };
    units
        .chunks_exact(size.max(1))
        .enumerate()
        .map(text)
        .collect()
}

/// Numeric R data -> field `f` of `records` (NA becomes the field's fill
/// value, or `cf` stores each value; values the field's type cannot hold
/// are refused).
pub fn write_number_field(
    records: &mut [u8],
    record: usize,
    f: &Field,
    fill: &[u8],
    cf: Option<&dyn ElementTransform>,
    data: &RBuf,
    what: &str,
) -> Result<()> {
    let FieldKind::Number(d) = f.kind else {
        return Err(ZarrError::Type(format!(
            "{what}: field '{}' holds text, not numbers",
            f.name
        )));
    };
    let want = (records.len() / record) * f.count();
    if data.len() != want {
        return Err(ZarrError::Type(format!(
            "{what}: field '{}' needs {want} values, got {}",
            f.name,
            data.len()
        )));
    }
    let what = format!("{what}, field '{}'", f.name);
    let mut units = match cf {
        Some(cf) => encode_elements_with(data, d, cf, &what)?,
        None => encode_elements(data, d, &native_fill(f, fill), &what)?,
    };
    to_order(&mut units, d, f.order());
    set_field_units(records, record, f, &units);
    Ok(())
}

/// Text -> field `f` of `records`; NA is written as "" (NumPy's strings
/// have no missing value). Text longer than the field is refused.
pub fn write_text_field(
    records: &mut [u8],
    record: usize,
    f: &Field,
    data: &[Option<&str>],
    what: &str,
) -> Result<()> {
    let want = (records.len() / record) * f.count();
    if data.len() != want {
        return Err(ZarrError::Type(format!(
            "{what}: field '{}' needs {want} values, got {}",
            f.name,
            data.len()
        )));
    }
    let es = f.kind.size();
    let mut units = vec![0u8; want * es];
    for (s, out) in data.iter().zip(units.chunks_exact_mut(es)) {
        let s = s.unwrap_or("");
        let too_long = |n: usize, unit: &str| {
            ZarrError::Type(format!(
                "{what}: \"{s}\" does not fit field '{}' of {n} {unit}",
                f.name
            ))
        };
        match f.kind {
            FieldKind::Bytes(n) => {
                if s.len() > n {
                    return Err(too_long(n, "bytes"));
                }
                out[..s.len()].copy_from_slice(s.as_bytes());
            }
            FieldKind::Utf32(n) => {
                if s.chars().count() > n {
                    return Err(too_long(n, "characters"));
                }
                encode_utf32(s, f.order(), out);
            }
            FieldKind::Number(_) => {
                return Err(ZarrError::Type(format!(
                    "{what}: field '{}' holds numbers, not text",
                    f.name
                )))
            }
        }
    }
    set_field_units(records, record, f, &units);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::structs::StructType;
    use crate::dtype::DataType;
    use crate::dtype::Endian;
    use serde_json::json;

    const PLAIN: FieldRules = FieldRules {
        marks_na: false,
        cf: None,
    };

    #[test]
    fn sub_arrays_come_out_column_major_after_the_records() {
        assert_eq!(c_to_column_major(&[2, 3]), [0, 2, 4, 1, 3, 5]);
        assert_eq!(c_to_column_major(&[]), [0]);
        let mut t = StructType::from_v2(&json!([["a", "|u1"], ["m", "|i1", [2, 3]]])).unwrap();
        t.fields
            .iter_mut()
            .for_each(|f| f.endian = Some(Endian::Little));
        // two records: a = 10, 20; m = [[1,2,3],[4,5,6]] and its negation
        let records: Vec<u8> = [10i8, 1, 2, 3, 4, 5, 6, 20, -1, -2, -3, -4, -5, -6]
            .iter()
            .map(|&v| v as u8)
            .collect();
        let m = t.field("m").unwrap();
        let mut out = vec![0i32; 12];
        let w = read_number_field(
            &records,
            7,
            m,
            &[0; 7],
            PLAIN,
            &mut RBufMut::Integer(&mut out),
            "x",
        )
        .unwrap();
        assert!(w.is_empty());
        // R dims c(2, 2, 3): [record, row, column]
        assert_eq!(out, [1, -1, 4, -4, 2, -2, 5, -5, 3, -3, 6, -6]);
        let mut back = vec![0u8; 14];
        let a: Vec<i32> = vec![10, 20];
        write_number_field(
            &mut back,
            7,
            t.field("a").unwrap(),
            &[0; 7],
            None,
            &RBuf::Integer(&a),
            "x",
        )
        .unwrap();
        write_number_field(&mut back, 7, m, &[0; 7], None, &RBuf::Integer(&out), "x").unwrap();
        assert_eq!(back, records);
    }

    #[test]
    fn numbers_swap_to_their_fields_byte_order_and_fill_reads_as_na() {
        let mut t = StructType::from_v2(&json!([["a", ">i4"], ["b", "<f8"]])).unwrap();
        t.fields.iter_mut().for_each(|f| {
            f.endian.get_or_insert(Endian::Little);
        });
        let mut fill = vec![0u8; 12];
        fill[..4].copy_from_slice(&(-1i32).to_be_bytes());
        let mut records = vec![0u8; 24];
        let a = [5, crate::convert::NA_INTEGER];
        write_number_field(
            &mut records,
            12,
            t.field("a").unwrap(),
            &fill,
            None,
            &RBuf::Integer(&a),
            "x",
        )
        .unwrap();
        assert_eq!(&records[..4], &5i32.to_be_bytes());
        assert_eq!(&records[12..16], &(-1i32).to_be_bytes());
        let mut out = vec![0i32; 2];
        read_number_field(
            &records,
            12,
            t.field("a").unwrap(),
            &fill,
            FieldRules {
                marks_na: true,
                cf: None,
            },
            &mut RBufMut::Integer(&mut out),
            "x",
        )
        .unwrap();
        assert_eq!(out, a);
        let too_big = [1e10];
        let e = write_number_field(
            &mut records[..12],
            12,
            t.field("a").unwrap(),
            &fill,
            None,
            &RBuf::Double(&too_big),
            "arr",
        )
        .unwrap_err();
        assert!(e.to_string().contains("field 'a'"), "{e}");
        assert_eq!(t.data_type(), DataType::Record(12));
    }

    #[test]
    fn text_fields_drop_their_padding_and_refuse_what_does_not_fit() {
        let mut t = StructType::from_v2(&json!([["s", "|S3"], ["u", ">U2"]])).unwrap();
        t.fields.iter_mut().for_each(|f| {
            f.endian.get_or_insert(Endian::Little);
        });
        let mut records = vec![0u8; 2 * 11];
        let (s, u) = (t.field("s").unwrap(), t.field("u").unwrap());
        write_text_field(&mut records, 11, s, &[Some("ab"), None], "x").unwrap();
        write_text_field(&mut records, 11, u, &[Some("\u{e9}t"), Some("")], "x").unwrap();
        assert_eq!(&records[..3], b"ab\0");
        assert_eq!(&records[3..11], &[0, 0, 0, 0xe9, 0, 0, 0, b't']);
        assert_eq!(read_text_field(&records, 11, s, "x").unwrap(), ["ab", ""]);
        assert_eq!(
            read_text_field(&records, 11, u, "x").unwrap(),
            ["\u{e9}t", ""]
        );
        let e = write_text_field(&mut records, 11, s, &[Some("abcd"), None], "arr").unwrap_err();
        assert!(e.to_string().contains("field 's'"), "{e}");
    }

    #[test]
    fn text_fields_that_are_not_text_are_errors_naming_the_field_and_element() {
        let mut t = StructType::from_v2(&json!([["s", "|S2"], ["u", ">U2"]])).unwrap();
        t.fields.iter_mut().for_each(|f| {
            f.endian.get_or_insert(Endian::Little);
        });
        let (s, u) = (t.field("s").unwrap(), t.field("u").unwrap());
        // Two records; the second's s is not UTF-8, its u a surrogate
        // after a NUL that is text, not padding.
        let mut records = vec![0u8; 2 * 10];
        write_text_field(&mut records, 10, s, &[Some("ok"), None], "x").unwrap();
        write_text_field(&mut records, 10, u, &[Some("a\0"), Some("b")], "x").unwrap();
        assert_eq!(read_text_field(&records, 10, u, "x").unwrap(), ["a", "b"]);
        records[10..12].copy_from_slice(&[0xff, 0xfe]);
        records[12..16].copy_from_slice(&0u32.to_be_bytes());
        records[16..20].copy_from_slice(&0xD800u32.to_be_bytes());
        let e = read_text_field(&records, 10, s, "array '/r'").unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(
            e.message().contains("array '/r'") && e.message().contains("element 1 of field 's'"),
            "{e}"
        );
        let e = read_text_field(&records, 10, u, "array '/r'").unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(
            e.message().contains("element 1 of field 'u' holds 0xD800"),
            "{e}"
        );
        // A NUL inside the text stays, as NumPy reads it.
        write_text_field(&mut records, 10, u, &[Some("\0e"), Some("c")], "x").unwrap();
        assert_eq!(read_text_field(&records, 10, u, "x").unwrap(), ["\0e", "c"]);
    }
}
