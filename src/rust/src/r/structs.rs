//! Bindings of struct arrays: a read gives a named list with one column
//! per field (dims: the selection's, then a sub-array field's own), a
//! write takes such a list (`convert::structs` splits and packs records).

use super::array::r_data;
use super::*;
use crate::convert::structs::{
    read_number_field, read_text_field, write_number_field, write_text_field,
};
use crate::dtype::structs::{FieldKind, StructType};

/// A buffer for `n` records of `size` bytes, refused as a selection error
/// when it cannot be had.
fn records(n: usize, size: usize, what: &str) -> Result<Vec<u8>> {
    let len = n
        .checked_mul(size)
        .ok_or_else(|| ZarrError::Selection(format!("{what}: {n} records of {size} bytes")))?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        ZarrError::Selection(format!(
            "{what}: {len} bytes for {n} records cannot be allocated"
        ))
    })?;
    v.resize(len, 0);
    Ok(v)
}

/// The stored records of `sel` (`size` bytes each) and the read's warnings.
fn read_records(
    a: &Array,
    sel: &Selection,
    size: usize,
    opts: IoOptions,
    what: &str,
) -> Result<(Vec<u8>, Vec<String>)> {
    let mut recs = records(sel.num_elements(), size, what)?;
    let warnings = a.read(
        sel,
        &mut RBufMut::Raw {
            bytes: &mut recs,
            size,
        },
        opts,
    )?;
    Ok((recs, warnings))
}

pub(super) fn read(
    a: &Array,
    t: &StructType,
    sel: &Selection,
    opts: IoOptions,
    bit64: bool,
    as_array: bool,
    dim_names: &Robj,
) -> Result<Robj> {
    let what = a.what();
    let n = sel.num_elements();
    let (recs, mut warnings) = read_records(a, sel, t.size, opts, &what)?;
    let shape: Vec<i32> = sel.shape().iter().map(|&v| v as i32).collect();
    let fill = &a.meta.fill_value.bytes;
    let mut columns = Vec::with_capacity(t.fields.len());
    for f in &t.fields {
        let mut col = match f.kind {
            FieldKind::Number(d) => {
                let rtype = d.r_type(bit64);
                let mut v = alloc_r_vector(rtype, n * f.count());
                let w = with_r_buffer(&mut v, rtype, |buf| {
                    read_number_field(&recs, t.size, f, fill, a.meta.fill_marks_na, buf, &what)
                })?;
                warnings.extend(w);
                v
            }
            FieldKind::Bytes(_) | FieldKind::Utf32(_) => {
                let text = read_text_field(&recs, t.size, f, &what)?;
                text.iter()
                    .map(|s| Rstr::from(s.as_str()))
                    .collect::<Strings>()
                    .into_robj()
            }
        };
        let dims: Vec<i32> = shape
            .iter()
            .copied()
            .chain(f.shape.iter().map(|&d| d as i32))
            .collect();
        if dims.len() >= 2 || (as_array && !dims.is_empty()) {
            col.set_attrib("dim", dims)
                .map_err(|e| ZarrError::Type(e.to_string()))?;
            if let (Some(names), true) = (dim_names.as_str_vector(), f.shape.is_empty()) {
                let mut dn = List::from_values(names.iter().map(|_| ()));
                dn.set_names(names)
                    .map_err(|e| ZarrError::Type(e.to_string()))?;
                col.set_attrib("dimnames", dn)
                    .map_err(|e| ZarrError::Type(e.to_string()))?;
            }
        }
        columns.push(col);
    }
    let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
    let list =
        List::from_names_and_values(names, columns).map_err(|e| ZarrError::Type(e.to_string()))?;
    Ok(with_warnings(list.into_robj(), warnings))
}

pub(super) fn write(
    a: &Array,
    t: &StructType,
    sel: &Selection,
    data: &Robj,
    opts: IoOptions,
) -> Result<Vec<String>> {
    let what = a.what();
    let list: List = data.try_into().map_err(|_| {
        ZarrError::Type(format!(
            "{what}: a struct array is written from a data.frame or a named list of its fields"
        ))
    })?;
    let given: Vec<(String, Robj)> = list.iter().map(|(name, v)| (name.to_string(), v)).collect();
    for (name, _) in &given {
        if t.field(name).is_none() {
            let fields: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
            return Err(ZarrError::Type(format!(
                "{what}: the struct has no field '{name}' (its fields: {})",
                fields.join(", ")
            )));
        }
    }
    // Fields left out keep what is stored.
    let mut recs = if t
        .fields
        .iter()
        .all(|f| given.iter().any(|(g, _)| *g == f.name))
    {
        records(sel.num_elements(), t.size, &what)?
    } else {
        read_records(a, sel, t.size, opts, &what)?.0
    };
    let fill = &a.meta.fill_value.bytes;
    for (name, col) in &given {
        let f = t.field(name).expect("checked above");
        match f.kind {
            FieldKind::Number(_) => {
                let buf = r_data(col, &format!("{what}, field '{name}'"))?;
                write_number_field(&mut recs, t.size, f, fill, &buf, &what)?;
            }
            FieldKind::Bytes(_) | FieldKind::Utf32(_) => {
                let strings: Strings = col.try_into().map_err(|_| {
                    ZarrError::Type(format!(
                        "{what}: field '{name}' holds text and is written from a character vector"
                    ))
                })?;
                let values: Vec<Option<&str>> = strings
                    .iter()
                    .map(|s| if s.is_na() { None } else { Some(s.as_ref()) })
                    .collect();
                write_text_field(&mut recs, t.size, f, &values, &what)?;
            }
        }
    }
    a.write(
        sel,
        &RBuf::Raw {
            bytes: &recs,
            size: t.size,
        },
        opts,
    )
}
