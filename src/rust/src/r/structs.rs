//! Bindings of struct arrays: a read gives a named list with one column
//! per field (dims: the selection's, then a sub-array field's own), a
//! write takes such a list (`convert::structs` splits and packs records).
//! A datetime64/timedelta64 field converts through the CF decoding of an
//! array of its type (`Cf::time_field`) unless the array was asked for
//! raw values: seconds (since 1970), whose column R makes POSIXct or
//! difftime (`zarr_time` attribute, see R/struct.R).

use super::array::{io_options, r_data, selection_of};
use super::*;
use crate::cf::{Cf, CfKind};
use crate::convert::structs::{
    read_number_field, read_text_field, write_number_field, write_text_field, FieldRules,
};
use crate::dtype::structs::{Field, FieldKind, StructType};

/// The time decoding of field `f` of an array whose stored fill value is
/// `fill` (None when it marks nothing), when it is a datetime64 or
/// timedelta64 field and values are decoded.
fn time_cf(f: &Field, fill: Option<&[u8]>, decode: bool) -> Option<Cf> {
    let t = f.time.as_ref().filter(|_| decode)?;
    let fill = fill.map(|b| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[f.offset..f.offset + 8]);
        crate::metadata::structs::to_order(&mut v, DataType::Int64, f.order());
        i64::from_ne_bytes(v)
    });
    Some(Cf::time_field(t, fill))
}

/// The fields of a struct array: `name`, `kind` ("number", "text", "time"
/// or "timedelta") and `shape` (a sub-array field's, else empty) of each.
/// @noRd
#[extendr]
fn rz_struct_fields(h: Robj) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let t = crate::metadata::structs::layout(&a.meta)?
            .ok_or_else(|| ZarrError::Type(format!("{}: not a struct array", a.what())))?;
        let kind = |f: &Field| match (&f.time, f.kind) {
            (Some(t), _) if t.delta => "timedelta",
            (Some(_), _) => "time",
            (None, FieldKind::Number(_)) => "number",
            (None, _) => "text",
        };
        let shapes: Vec<Robj> = t
            .fields
            .iter()
            .map(|f| {
                f.shape
                    .iter()
                    .map(|&n| n as f64)
                    .collect::<Vec<f64>>()
                    .into()
            })
            .collect();
        Ok(list!(
            name = t.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            kind = t.fields.iter().map(kind).collect::<Vec<_>>(),
            shape = List::from_values(shapes)
        )
        .into())
    })
}

/// Write a named list of fields to a selection of a struct array (see
/// `write`), time fields taking seconds when `decode`.
/// @noRd
#[extendr]
fn rz_struct_write(
    h: Robj,
    sel: Robj,
    data: Robj,
    threads: i32,
    strict: bool,
    decode: bool,
) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let sel = selection_of(&sel, &a.meta.shape)?;
        let t = crate::metadata::structs::layout(&a.meta)?
            .ok_or_else(|| ZarrError::Type(format!("{}: not a struct array", a.what())))?;
        let w = write(&a, &t, &sel, &data, io_options(threads, strict), decode)?;
        Ok(with_warnings(().into(), w))
    })
}

extendr_module! {
    mod structs;
    fn rz_struct_fields;
    fn rz_struct_write;
}

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

#[allow(clippy::too_many_arguments)]
pub(super) fn read(
    a: &Array,
    t: &StructType,
    sel: &Selection,
    opts: IoOptions,
    bit64: bool,
    as_array: bool,
    dim_names: &Robj,
    decode: bool,
) -> Result<Robj> {
    let what = a.what();
    let n = sel.num_elements();
    let (recs, mut warnings) = read_records(a, sel, t.size, opts, &what)?;
    let shape: Vec<i32> = sel.shape().iter().map(|&v| v as i32).collect();
    let fill = &a.meta.fill_value.bytes;
    let marks_na = a.meta.fill_marks_na;
    let mut columns = Vec::with_capacity(t.fields.len());
    for f in &t.fields {
        let cf = time_cf(f, Some(fill.as_slice()).filter(|_| marks_na), decode);
        let mut col = match f.kind {
            FieldKind::Number(d) => {
                let rtype = match &cf {
                    Some(cf) => cf.r_type(d, bit64),
                    None => d.r_type(bit64),
                };
                let rules = FieldRules {
                    marks_na,
                    cf: cf
                        .as_ref()
                        .map(|c| c as &dyn crate::convert::ElementTransform),
                };
                let mut v = alloc_r_vector(rtype, n * f.count());
                let w = with_r_buffer(&mut v, rtype, |buf| {
                    read_number_field(&recs, t.size, f, fill, rules, buf, &what)
                })?;
                warnings.extend(w);
                if let Some(cf) = &cf {
                    warnings.extend(
                        cf.note
                            .iter()
                            .map(|n| format!("{what}, field '{}': {n}", f.name)),
                    );
                    let class = match cf.kind {
                        CfKind::Time => Some("time"),
                        CfKind::Timedelta => Some("timedelta"),
                        _ => None,
                    };
                    if let Some(class) = class {
                        v.set_attrib("zarr_time", class)
                            .map_err(|e| ZarrError::Type(e.to_string()))?;
                    }
                }
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
    decode: bool,
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
    let marks_na = a.meta.fill_marks_na;
    for (name, col) in &given {
        let f = t.field(name).expect("checked above");
        match f.kind {
            FieldKind::Number(_) => {
                let buf = r_data(col, &format!("{what}, field '{name}'"))?;
                let cf = time_cf(f, Some(fill.as_slice()).filter(|_| marks_na), decode);
                let cf = cf
                    .as_ref()
                    .map(|c| c as &dyn crate::convert::ElementTransform);
                write_number_field(&mut recs, t.size, f, fill, cf, &buf, &what)?;
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
