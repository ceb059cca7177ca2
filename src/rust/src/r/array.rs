//! Bindings of arrays: open, attach, create, metadata, read and write.

use super::*;
use crate::dtype::structs::FieldKind;

pub(super) fn array_value(a: Array) -> Robj {
    ExternalPtr::new(ArrayHandle(Arc::new(a))).into()
}

/// The array, CF-decoded (`cf/`) when `decode` says so.
pub(super) fn decoded(a: Array, decode: bool) -> Result<Array> {
    if decode {
        a.with_cf()
    } else {
        Ok(a)
    }
}

/// @noRd
#[extendr]
fn rz_array_open(store: Robj, path: &str, decode: bool) -> Robj {
    guard(|| {
        Ok(array_value(decoded(
            Array::open(store_of(&store)?, path)?,
            decode,
        )?))
    })
}

/// How reads of the array are CF-decoded: NULL when they are not (not a
/// CF variable, or opened with decode = FALSE), else a list of `kind`
/// ("number", "time", "timedelta", "bool"), `active` (whether any element
/// changes), `units`, `time_unit`, `note`, `missing` (numbers, or the
/// strings of a string array) and `zarr_rule` (whether it decodes as the
/// Zarr rule would).
/// @noRd
#[extendr]
fn rz_array_cf(h: Robj) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let Some(cf) = &a.cf else {
            return Ok(().into());
        };
        let kind = match cf.kind {
            crate::cf::CfKind::Number => "number",
            crate::cf::CfKind::Time => "time",
            crate::cf::CfKind::Timedelta => "timedelta",
            crate::cf::CfKind::Bool => "bool",
        };
        let text = |s: &Option<String>| -> Robj {
            match s {
                Some(s) => s.as_str().into(),
                None => ().into(),
            }
        };
        // (a string array's missing values are strings)
        let missing: Robj = match a.meta.data_type {
            crate::dtype::DataType::String => cf.missing_text.clone().into(),
            _ => cf.missing.clone().into(),
        };
        Ok(list!(
            kind = kind,
            active = cf.active(),
            units = text(&cf.units),
            time_unit = text(&cf.time_unit),
            note = text(&cf.note),
            scale = cf.scale,
            offset = cf.offset,
            missing = missing,
            nat = cf.nat,
            zarr_rule = cf.is_zarr_rule(&a.meta)
        )
        .into())
    })
}

/// The array at `path` from its R-form metadata `json` (as
/// rz_node_metadata gave it), without reading the store.
/// @noRd
#[extendr]
fn rz_array_attach(store: Robj, path: &str, json: &str, decode: bool) -> Robj {
    guard(|| {
        let a = attach_metadata(store_of(&store)?, path, json)?;
        Ok(array_value(decoded(a, decode)?))
    })
}

/// The array at `path` in `store` from its R-form metadata `json`.
pub(super) fn attach_metadata(store: Arc<dyn Store>, path: &str, json: &str) -> Result<Array> {
    let what = format!("array '/{}'", path.trim_start_matches('/'));
    let meta = array_metadata(json).map_err(|e| e.context(&what))?;
    Array::with_metadata(store, path, meta)
}

/// @noRd
#[extendr]
fn rz_array_create(store: Robj, path: &str, json: &str) -> Robj {
    guard(|| {
        let meta = array_metadata(json)?;
        Ok(array_value(Array::create(store_of(&store)?, path, meta)?))
    })
}

/// Array metadata in R form (JSON text); a group's is refused.
pub(super) fn array_metadata(json: &str) -> Result<ArrayMetadata> {
    match crate::metadata::parse_r_form(json.as_bytes())? {
        NodeMetadata::Array(m) => Ok(m),
        NodeMetadata::Group(_) => Err(ZarrError::Metadata(
            "expected array metadata, got a group".into(),
        )),
    }
}

/// The array's metadata in R form (JSON text).
/// @noRd
#[extendr]
fn rz_array_metadata(h: Robj) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let doc = crate::metadata::r_form(&NodeMetadata::Array(a.meta.clone()));
        Ok(serde_json::to_string_pretty(&doc)
            .map_err(ZarrError::from)?
            .into())
    })
}

/// The slice of an R vector of data to write.
pub(super) fn r_data<'a>(data: &'a Robj, what: &str) -> Result<RBuf<'a>> {
    // SAFETY: each arm matches the vector's own type; the slice lives as
    // long as `data`, which the caller keeps alive for the call.
    unsafe {
        Ok(match data.rtype() {
            Rtype::Logicals => RBuf::Logical(data.as_typed_slice_raw::<i32>()),
            Rtype::Integers => RBuf::Integer(data.as_typed_slice_raw::<i32>()),
            Rtype::Doubles if data.inherits("integer64") => {
                RBuf::Integer64(data.as_typed_slice_raw::<i64>())
            }
            Rtype::Doubles => RBuf::Double(data.as_typed_slice_raw::<f64>()),
            Rtype::Complexes => RBuf::Complex(data.as_typed_slice_raw::<[f64; 2]>()),
            other => {
                return Err(ZarrError::Type(format!(
                    "{what}: data of R type {other:?} cannot be written"
                )))
            }
        })
    }
}

/// One entry per dimension: a numeric vector of 0-based indices, or one
/// with attribute `zarr_range` holding c(start, count).
pub(super) fn selection_of(sel: &Robj, shape: &[u64]) -> Result<Selection> {
    if sel.is_null() {
        return Ok(Selection::all(shape));
    }
    let list: List = sel
        .try_into()
        .map_err(|_| ZarrError::Selection("the selection must be a list".into()))?;
    let mut dims = Vec::with_capacity(list.len());
    for (d, item) in list.values().enumerate() {
        let nums: Vec<f64> = if let Some(x) = item.as_real_slice() {
            x.to_vec()
        } else if let Some(x) = item.as_integer_slice() {
            x.iter().map(|&v| v as f64).collect()
        } else {
            return Err(ZarrError::Selection(format!(
                "selection for dimension {} must be numeric",
                d + 1
            )));
        };
        if nums
            .iter()
            .any(|v| !v.is_finite() || *v < 0.0 || v.fract() != 0.0)
        {
            return Err(ZarrError::Selection(format!(
                "selection for dimension {} has a missing, negative or fractional index",
                d + 1
            )));
        }
        if item.get_attrib("zarr_range").is_some() {
            if nums.len() != 2 {
                return Err(ZarrError::Selection(
                    "a range selection is c(start, count)".into(),
                ));
            }
            dims.push(DimSelection::range(nums[0] as u64, nums[1] as u64));
        } else {
            let idx: Vec<u64> = nums.iter().map(|&v| v as u64).collect();
            dims.push(DimSelection::indices(&idx));
        }
    }
    Ok(Selection { dims })
}

/// R's longest vector (R_XLEN_T_MAX) and longest array extent (an `int`).
const R_MAX_LENGTH: usize = 1 << 52;
const R_MAX_EXTENT: usize = i32::MAX as usize;

/// The selection `sel` of a read of `a` into one R result: within the
/// array's shape, and of a size R can hold.
pub(super) fn read_selection(a: &Array, sel: &Robj) -> Result<Selection> {
    let sel = selection_of(sel, &a.meta.shape)?;
    sel.check(&a.meta.shape, &a.what())?;
    check_r_result(&sel, &a.what())?;
    Ok(sel)
}

/// Refuse a read whose result R cannot hold, before anything is allocated.
fn check_r_result(sel: &Selection, what: &str) -> Result<()> {
    let shape = sel.shape();
    let n = sel.num_elements();
    if n > R_MAX_LENGTH || (shape.len() >= 2 && shape.iter().any(|&d| d > R_MAX_EXTENT)) {
        return Err(ZarrError::Selection(format!(
            "{what}: a result of {} elements is more than an R vector or array can hold",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" x ")
        )));
    }
    Ok(())
}

pub(super) fn io_options(threads: i32, strict: bool) -> IoOptions {
    IoOptions {
        threads: threads.max(1) as usize,
        strict_checksums: strict,
    }
}

/// The R type a read of `a` returns, with or without bit64.
fn result_rtype(a: &Array, bit64: bool) -> RType {
    match a.active_cf() {
        Some(cf) => cf.r_type(a.meta.data_type, bit64),
        None => a.meta.data_type.r_type(bit64),
    }
}

/// Whether reads of the array return integer64 where bit64 is used: R
/// loads bit64 for those reads only (loading it took a first read of a
/// float64 array 40-60 ms of CPU).
/// @noRd
#[extendr]
fn rz_array_integer64(h: Robj) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        if let Some(t) = crate::metadata::structs::layout(&a.meta)? {
            return Ok(Robj::from(t.fields.iter().any(
                |f| matches!(f.kind, FieldKind::Number(d) if d.r_type(true) == RType::Integer64),
            )));
        }
        Ok(Robj::from(result_rtype(&a, true) == RType::Integer64))
    })
}

/// Read a selection into a new R vector (with `dim` for 2 or more
/// dimensions; class integer64 when asked for and needed), or a struct
/// array's named list of fields, its time fields decoded when `decode`.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn rz_array_read(
    h: Robj,
    sel: Robj,
    bit64: bool,
    threads: i32,
    strict: bool,
    as_array: bool,
    dim_names: Robj,
    decode: bool,
) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let sel = read_selection(&a, &sel)?;
        if let Some(t) = crate::metadata::structs::layout(&a.meta)? {
            let opts = io_options(threads, strict);
            return super::structs::read(&a, &t, &sel, opts, bit64, as_array, &dim_names, decode);
        }
        let rtype = result_rtype(&a, bit64);
        let (mut out, warnings) = if rtype == RType::Character {
            // Decoded in parallel; the R strings are made here, on R's thread.
            let (read, warnings) = a.read_strings(&sel, io_options(threads, strict))?;
            let strings: Strings = (0..read.len())
                .map(|i| match read.get(i) {
                    Some(s) => Rstr::from(s),
                    None => Rstr::na(),
                })
                .collect();
            (strings.into_robj(), warnings)
        } else {
            // A result that makes R collect first (alloc_r_vector) sends
            // its requests before: the collection then runs while they
            // wait for the network.
            let started = if collects_before(rtype, sel.num_elements()) {
                a.start_read(&sel)?
            } else {
                None
            };
            let mut out = alloc_r_vector(rtype, sel.num_elements());
            let warnings = with_r_buffer(&mut out, rtype, |buf| {
                a.read_started(&sel, buf, io_options(threads, strict), started)
            })?;
            (out, warnings)
        };
        // The result gets its attributes here: set later in R, they would
        // make R copy the whole vector.
        let shape: Vec<i32> = sel.shape().iter().map(|&v| v as i32).collect();
        if shape.len() >= 2 || (as_array && !shape.is_empty()) {
            out.set_attrib("dim", shape)
                .map_err(|e| ZarrError::Type(e.to_string()))?;
            if let Some(names) = dim_names.as_str_vector() {
                let mut dn = List::from_values(names.iter().map(|_| ()));
                dn.set_names(names)
                    .map_err(|e| ZarrError::Type(e.to_string()))?;
                out.set_attrib("dimnames", dn)
                    .map_err(|e| ZarrError::Type(e.to_string()))?;
            }
        }
        Ok(with_warnings(out, warnings))
    })
}

/// Write `data` (laid out column-major in the selection's shape).
/// @noRd
#[extendr]
fn rz_array_write(h: Robj, sel: Robj, data: Robj, threads: i32, strict: bool) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let sel = selection_of(&sel, &a.meta.shape)?;
        if let Some(t) = crate::metadata::structs::layout(&a.meta)? {
            let w = super::structs::write(&a, &t, &sel, &data, io_options(threads, strict), true)?;
            return Ok(with_warnings(().into(), w));
        }
        let w = match (a.meta.data_type, data.rtype()) {
            (DataType::String, Rtype::Strings) => {
                // The R side passes UTF-8 (enc2utf8).
                let strings: Strings = data
                    .try_into()
                    .map_err(|_| ZarrError::Type("expected strings".into()))?;
                let values: Vec<Option<&str>> = strings
                    .iter()
                    .map(|s| if s.is_na() { None } else { Some(s.as_ref()) })
                    .collect();
                a.write_strings(&sel, &values, io_options(threads, strict))?
            }
            (DataType::String, other) | (_, other @ Rtype::Strings) => {
                return Err(ZarrError::Type(format!(
                    "{}: data of R type {other:?} cannot be written to an array of type {}",
                    a.what(),
                    a.meta.data_type.name()
                )))
            }
            _ => a.write(
                &sel,
                &r_data(&data, &a.what())?,
                io_options(threads, strict),
            )?,
        };
        Ok(with_warnings(().into(), w))
    })
}

/// Benchmark support (bench/codecs.R): the seconds of CPU time of each of
/// `reps` decodes of the stored chunk at grid position `chunk` (0-based,
/// one number per dimension) by the engine's decode of an array read
/// (`Array::decode_seconds`).
/// @noRd
#[extendr]
fn rz_array_decode_seconds(h: Robj, chunk: &[f64], reps: i32) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let bad = || {
            ZarrError::Argument(format!(
                "chunk must be {} whole numbers >= 0 and reps a number >= 1",
                a.meta.shape.len()
            ))
        };
        if chunk.len() != a.meta.shape.len() || reps < 1 {
            return Err(bad());
        }
        let idx = chunk
            .iter()
            .map(|&c| (c >= 0.0 && c.fract() == 0.0 && c < u64::MAX as f64).then_some(c as u64))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(bad)?;
        Ok(a.decode_seconds(&idx, reps as usize)?.into())
    })
}

extendr_module! {
    mod array;
    fn rz_array_decode_seconds;
    fn rz_array_open;
    fn rz_array_cf;
    fn rz_array_attach;
    fn rz_array_create;
    fn rz_array_metadata;
    fn rz_array_read;
    fn rz_array_integer64;
    fn rz_array_write;
}
