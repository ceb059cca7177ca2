//! R bindings: the only module that knows about R. It converts R vectors
//! to slices and back, keeps stores and arrays behind external pointers,
//! and turns `ZarrError` into a value the R side raises as a classed
//! condition (`zarr_error_<kind>`). Nothing here holds logic of its own.

use crate::codec::{bytes_codec_from_json, CodecContext, Endian, Warnings};
use crate::convert::{decode_elements, encode_elements, RBuf, RBufMut};
use crate::dtype::{DataType, RType};
use crate::engine::{Array, IoOptions};
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
use crate::metadata::{self, ArrayMetadata, NodeMetadata};
use crate::selection::{DimSelection, Selection};
use crate::store::{ByteRange, FsStore, MemoryStore, Store};
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// A store shared by every array and group opened from it.
pub struct StoreHandle(pub Arc<dyn Store>);
/// An open array.
pub struct ArrayHandle(pub Arc<Array>);

/// Run `f`, turning an error or a panic into a `zarr_rust_error` value
/// (class, kind, message) that `zarr_call()` in R/errors.R raises. Errors
/// never go through extendr's own error path, which is unclassed and
/// treats `%` as a format character.
fn guard(f: impl FnOnce() -> Result<Robj>) -> Robj {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => error_value(e.kind(), e.message()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            error_value(
                "internal",
                &format!("internal error in the zarr engine: {msg}"),
            )
        }
    }
}

fn error_value(kind: &str, message: &str) -> Robj {
    let mut v = list!(kind = kind, message = message).into_robj();
    v.set_class(["zarr_rust_error"])
        .expect("setting a class on a new list");
    v
}

fn with_warnings(mut v: Robj, warnings: Vec<String>) -> Robj {
    if !warnings.is_empty() {
        v.set_attrib("zarr_warnings", warnings)
            .expect("setting an attribute on a new value");
    }
    v
}

fn store_of(h: &Robj) -> Result<Arc<dyn Store>> {
    let p: &ExternalPtr<StoreHandle> = h
        .try_into()
        .map_err(|_| ZarrError::Type("expected a store handle".into()))?;
    Ok(Arc::clone(
        &p.try_addr()
            .map_err(|_| ZarrError::Type("the store handle is no longer valid".into()))?
            .0,
    ))
}

fn array_of(h: &Robj) -> Result<Arc<Array>> {
    let p: &ExternalPtr<ArrayHandle> = h
        .try_into()
        .map_err(|_| ZarrError::Type("expected an array handle".into()))?;
    Ok(Arc::clone(
        &p.try_addr()
            .map_err(|_| ZarrError::Type("the array handle is no longer valid".into()))?
            .0,
    ))
}

fn store_value(s: Arc<dyn Store>) -> Robj {
    ExternalPtr::new(StoreHandle(s)).into()
}

fn strings(v: Vec<String>) -> Robj {
    Strings::from_values(v).into()
}

// ---------------------------------------------------------------- stores

/// @noRd
#[extendr]
fn rz_store_local(root: &str, read_only: bool, create: bool, fsync: bool, atomic: bool) -> Robj {
    let options = crate::store::fs::FsWriteOptions {
        fsync,
        atomic_new: atomic,
    };
    guard(|| {
        Ok(store_value(Arc::new(FsStore::open_with(
            root, read_only, create, options,
        )?)))
    })
}

/// A read-only store of fsspec references: a JSON file (v0 or v1), or a
/// folder of Parquet references.
/// @noRd
#[extendr]
fn rz_store_reference(location: &str, local_root: &str, max_keys: f64) -> Robj {
    let limits = crate::store::reference::RefLimits {
        max_keys: max_keys as u64,
        local_root: (!local_root.is_empty()).then(|| local_root.into()),
        ..Default::default()
    };
    guard(|| {
        Ok(store_value(Arc::new(crate::store::RefStore::open_with(
            location, limits,
        )?)))
    })
}

/// @noRd
#[extendr]
fn rz_store_memory(read_only: bool) -> Robj {
    guard(|| Ok(store_value(Arc::new(MemoryStore::new(read_only)))))
}

/// A read-only store over HTTP(S) at `url`.
/// @noRd
#[extendr]
fn rz_store_http(url: &str) -> Robj {
    guard(|| Ok(store_value(Arc::new(crate::store::HttpStore::open(url)?))))
}

/// `offset`/`length` are negative when absent; `suffix` asks for the last
/// `length` bytes.
/// @noRd
#[extendr]
fn rz_store_get(h: Robj, key: &str, offset: f64, length: f64, suffix: bool) -> Robj {
    guard(|| {
        let range = match (offset < 0.0, length < 0.0, suffix) {
            (_, false, true) => ByteRange::Suffix(length as u64),
            (true, true, _) => ByteRange::All,
            (false, true, _) => ByteRange::From(offset as u64),
            (o, false, false) => ByteRange::Range {
                offset: if o { 0 } else { offset as u64 },
                length: length as u64,
            },
        };
        Ok(match store_of(&h)?.get(key, range)? {
            Some(v) => Raw::from_bytes(&v).into(),
            None => ().into(),
        })
    })
}

/// @noRd
#[extendr]
fn rz_store_set(h: Robj, key: &str, value: Raw) -> Robj {
    guard(|| {
        store_of(&h)?.set(key, value.as_slice())?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_erase(h: Robj, key: &str) -> Robj {
    guard(|| {
        store_of(&h)?.erase(key)?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_erase_prefix(h: Robj, prefix: &str) -> Robj {
    guard(|| {
        store_of(&h)?.erase_prefix(prefix)?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_list(h: Robj) -> Robj {
    guard(|| Ok(strings(store_of(&h)?.list()?)))
}

/// @noRd
#[extendr]
fn rz_store_list_prefix(h: Robj, prefix: &str) -> Robj {
    guard(|| Ok(strings(store_of(&h)?.list_prefix(prefix)?)))
}

/// @noRd
#[extendr]
fn rz_store_list_dir(h: Robj, prefix: &str) -> Robj {
    guard(|| {
        let d = store_of(&h)?.list_dir(prefix)?;
        Ok(list!(keys = strings(d.keys), prefixes = strings(d.prefixes)).into())
    })
}

/// @noRd
#[extendr]
fn rz_store_exists(h: Robj, key: &str) -> Robj {
    guard(|| Ok(store_of(&h)?.exists(key)?.into()))
}

/// @noRd
#[extendr]
fn rz_store_size(h: Robj, key: &str) -> Robj {
    guard(|| {
        Ok(match store_of(&h)?.size(key)? {
            Some(n) => (n as f64).into(),
            None => Rfloat::na().into(),
        })
    })
}

/// @noRd
#[extendr]
fn rz_store_info(h: Robj) -> Robj {
    guard(|| {
        let s = store_of(&h)?;
        Ok(list!(
            read_only = s.read_only(),
            partial_reads = s.supports_partial_reads(),
            description = s.describe()
        )
        .into())
    })
}

// ---------------------------------------------------------------- metadata

/// Parse and re-serialise a zarr.json document: validates it (and its
/// codec chain when `check_codecs`) and gives the canonical form. With
/// `for_r`, 64-bit integer fill values are given as decimal strings, since
/// R's JSON parser cannot hold all of them as numbers (the parser here
/// takes them back in that form).
/// @noRd
#[extendr]
fn rz_metadata_normalize(json: &str, check_codecs: bool, for_r: bool) -> Robj {
    guard(|| {
        let (node, doc) = metadata::canonical(json.as_bytes(), for_r)?;
        if let (true, NodeMetadata::Array(m)) = (check_codecs, &node) {
            crate::codec::CodecChain::from_json(
                &m.codecs,
                m.data_type,
                &m.fill_value.bytes,
                m.shape.len(),
            )?;
        }
        Ok(serde_json::to_string_pretty(&doc)
            .map_err(ZarrError::from)?
            .into())
    })
}

/// The documents that store a node given in R form: a character vector
/// named by key ("zarr.json", or ".zarray"/".zgroup" and ".zattrs").
/// @noRd
#[extendr]
fn rz_metadata_documents(json: &str) -> Robj {
    guard(|| {
        let node = metadata::parse_r_form(json.as_bytes())?;
        if let NodeMetadata::Array(m) = &node {
            crate::codec::CodecChain::from_json(
                &m.codecs,
                m.data_type,
                &m.fill_value.bytes,
                m.shape.len(),
            )?;
        }
        let docs = metadata::documents(&node)?;
        let texts: Vec<String> = docs
            .iter()
            .map(|(_, t)| String::from_utf8_lossy(t).into_owned())
            .collect();
        let mut v: Robj = strings(texts);
        v.set_names(docs.iter().map(|(n, _)| *n))
            .map_err(|e| ZarrError::Type(e.to_string()))?;
        Ok(v)
    })
}

/// The metadata of the node at `path`, v3 or v2, in R form (JSON text),
/// or NULL when there is no node.
/// @noRd
#[extendr]
fn rz_node_metadata(store: Robj, path: &str) -> Robj {
    guard(|| {
        let store = store_of(&store)?;
        let path = crate::engine::normalize_path(path)?;
        Ok(match metadata::read_node(store.as_ref(), &path)? {
            None => ().into(),
            Some(node) => {
                let text = serde_json::to_vec(&metadata::r_form(&node))?;
                let (_, doc) = metadata::canonical(&text, true)?;
                serde_json::to_string(&doc).map_err(ZarrError::from)?.into()
            }
        })
    })
}

/// Zarr v2 consolidated metadata (.zmetadata text) as a named list of
/// node documents in R form (JSON text), named by node path.
/// @noRd
#[extendr]
fn rz_consolidated_v2(text: &str) -> Robj {
    guard(|| {
        let nodes = metadata::v2_consolidated_nodes(text.as_bytes())?;
        let mut paths = Vec::new();
        let mut docs = Vec::new();
        for (path, node) in &nodes {
            let t = serde_json::to_vec(&metadata::r_form(node))?;
            let (_, doc) = metadata::canonical(&t, true)?;
            paths.push(path.clone());
            docs.push(serde_json::to_string(&doc).map_err(ZarrError::from)?);
        }
        named_strings(docs, paths)
    })
}

/// A character vector of `values` named by `names`.
fn named_strings(values: Vec<String>, names: Vec<String>) -> Result<Robj> {
    let mut v: Robj = strings(values);
    v.set_names(names)
        .map_err(|e| ZarrError::Type(e.to_string()))?;
    Ok(v)
}

/// .zmetadata text for nodes given as R-form JSON texts named by path.
/// @noRd
#[extendr]
fn rz_consolidate_v2(paths: Vec<String>, docs: Vec<String>) -> Robj {
    guard(|| {
        let nodes = paths
            .into_iter()
            .zip(docs)
            .map(|(p, d)| Ok((p, metadata::parse_r_form(d.as_bytes())?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(
            String::from_utf8_lossy(&metadata::v2_consolidated_document(&nodes)?)
                .into_owned()
                .into(),
        )
    })
}

// ---------------------------------------------------------------- arrays

fn array_value(a: Array) -> Robj {
    ExternalPtr::new(ArrayHandle(Arc::new(a))).into()
}

/// @noRd
#[extendr]
fn rz_array_open(store: Robj, path: &str) -> Robj {
    guard(|| Ok(array_value(Array::open(store_of(&store)?, path)?)))
}

/// The array at `path` from its R-form metadata `json` (as
/// rz_node_metadata gave it), without reading the store.
/// @noRd
#[extendr]
fn rz_array_attach(store: Robj, path: &str, json: &str) -> Robj {
    guard(|| {
        let what = format!("array '/{}'", path.trim_start_matches('/'));
        let meta = array_metadata(json).map_err(|e| e.context(&what))?;
        Ok(array_value(Array::with_metadata(
            store_of(&store)?,
            path,
            meta,
        )?))
    })
}

/// The node documents of a canonical root document's consolidated
/// metadata (as rz_node_metadata gives it), as JSON texts named by path;
/// NULL when it has none.
/// @noRd
#[extendr]
fn rz_consolidated_v3(text: &str) -> Robj {
    guard(|| {
        let doc: serde_json::Value = serde_json::from_str(text)?;
        let Some(serde_json::Value::Object(entries)) =
            doc.pointer("/consolidated_metadata/metadata")
        else {
            return Ok(().into());
        };
        let mut paths = Vec::with_capacity(entries.len());
        let mut docs = Vec::with_capacity(entries.len());
        for (path, entry) in entries {
            paths.push(path.clone());
            docs.push(serde_json::to_string(entry)?);
        }
        named_strings(docs, paths)
    })
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
fn array_metadata(json: &str) -> Result<ArrayMetadata> {
    match metadata::parse_r_form(json.as_bytes())? {
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
        let doc = metadata::r_form(&NodeMetadata::Array(a.meta.clone()));
        Ok(serde_json::to_string_pretty(&doc)
            .map_err(ZarrError::from)?
            .into())
    })
}

fn alloc_r_vector(rtype: RType, n: usize) -> Robj {
    let sexptype = match rtype {
        RType::Logical => SEXPTYPE::LGLSXP,
        RType::Integer => SEXPTYPE::INTSXP,
        RType::Double | RType::Integer64 => SEXPTYPE::REALSXP,
        RType::Complex => SEXPTYPE::CPLXSXP,
        RType::Character => SEXPTYPE::STRSXP,
    };
    let mut v =
        alloc_large(sexptype, n, rtype.size()).unwrap_or_else(|| Robj::alloc_vector(sexptype, n));
    if rtype == RType::Integer64 {
        v.set_class(["integer64"])
            .expect("setting a class on a new vector");
    }
    v
}

/// R's custom allocator (R_ext/Rallocators.h; "Custom allocators" in
/// Writing R Extensions), which extendr does not bind.
#[repr(C)]
struct RAllocator {
    mem_alloc: unsafe extern "C" fn(*mut RAllocator, usize) -> *mut std::ffi::c_void,
    mem_free: unsafe extern "C" fn(*mut RAllocator, *mut std::ffi::c_void),
    res: *mut std::ffi::c_void,
    data: *mut std::ffi::c_void,
}

// SEXP is an opaque pointer to R; its pointee is never touched from Rust.
#[allow(improper_ctypes)]
extern "C" {
    fn Rf_allocVector3(t: SEXPTYPE, n: isize, allocator: *mut RAllocator) -> extendr_ffi::SEXP;
}

/// A block taken before R asks for it, so that a refusal falls back to
/// R's own allocation instead of an R error unwinding through Rust.
struct Reserved {
    ptr: *mut u8,
    len: usize,
}

unsafe extern "C" fn block_alloc(a: *mut RAllocator, size: usize) -> *mut std::ffi::c_void {
    // SAFETY: `data` points to the Reserved of alloc_large, alive for the
    // whole Rf_allocVector3 call that calls this.
    let reserved = unsafe { &mut *((*a).data as *mut Reserved) };
    if size > reserved.len {
        return std::ptr::null_mut();
    }
    std::mem::replace(&mut reserved.ptr, std::ptr::null_mut()) as *mut std::ffi::c_void
}

unsafe extern "C" fn block_free(_: *mut RAllocator, ptr: *mut std::ffi::c_void) {
    #[cfg(target_os = "linux")]
    // SAFETY: R hands back the pointer block_alloc gave it, once.
    unsafe {
        crate::pages::blocks::give(ptr as *mut u8)
    }
    #[cfg(not(target_os = "linux"))]
    let _ = ptr;
}

/// A numeric vector of `n` elements of `elt_size` bytes in memory of
/// pages::blocks (reused across reads), or None where that does not apply:
/// small vectors, strings, other systems, no memory. The contents are
/// left as they are: the caller writes every element.
fn alloc_large(sexptype: SEXPTYPE, n: usize, elt_size: usize) -> Option<Robj> {
    let bytes = n.checked_mul(elt_size)?;
    if sexptype == SEXPTYPE::STRSXP || bytes < crate::pages::MIN_ADVISED_BYTES {
        return None;
    }
    // R asks for its vector header and a copy of the allocator on top of
    // the data; 256 bytes is more than both.
    let len = bytes.checked_add(256)?;
    #[cfg(target_os = "linux")]
    let ptr = crate::pages::blocks::take(len);
    #[cfg(not(target_os = "linux"))]
    let ptr: *mut u8 = std::ptr::null_mut();
    if ptr.is_null() {
        return None;
    }
    let mut reserved = Reserved { ptr, len };
    let mut allocator = RAllocator {
        mem_alloc: block_alloc,
        mem_free: block_free,
        res: std::ptr::null_mut(),
        data: &mut reserved as *mut Reserved as *mut std::ffi::c_void,
    };
    // SAFETY: R copies the allocator into the block, so a local one may
    // go; the vector is protected by from_sexp before anything else can
    // allocate. block_alloc hands R the reserved block, which fits.
    unsafe {
        let sexp = Rf_allocVector3(sexptype, n as isize, &mut allocator);
        Some(Robj::from_sexp(sexp))
    }
}

/// Run `f` on the memory of `v`, a vector made by `alloc_r_vector(rtype, ..)`.
fn with_r_buffer<T>(
    v: &mut Robj,
    rtype: RType,
    f: impl FnOnce(&mut RBufMut) -> Result<T>,
) -> Result<T> {
    // SAFETY: `v` was allocated with the vector type matching `rtype`.
    let mut buf = unsafe {
        match rtype {
            RType::Logical => RBufMut::Logical(v.as_typed_slice_raw_mut::<i32>()),
            RType::Integer => RBufMut::Integer(v.as_typed_slice_raw_mut::<i32>()),
            RType::Double => RBufMut::Double(v.as_typed_slice_raw_mut::<f64>()),
            RType::Integer64 => RBufMut::Integer64(v.as_typed_slice_raw_mut::<i64>()),
            RType::Complex => RBufMut::Complex(v.as_typed_slice_raw_mut::<[f64; 2]>()),
            RType::Character => {
                return Err(ZarrError::Type("strings have no numeric buffer".into()))
            }
        }
    };
    f(&mut buf)
}

/// The slice of an R vector of data to write.
fn r_data<'a>(data: &'a Robj, what: &str) -> Result<RBuf<'a>> {
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
fn selection_of(sel: &Robj, shape: &[u64]) -> Result<Selection> {
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

fn io_options(threads: i32, strict: bool) -> IoOptions {
    IoOptions {
        threads: threads.max(1) as usize,
        strict_checksums: strict,
    }
}

/// Read a selection into a new R vector (with `dim` for 2 or more
/// dimensions; class integer64 when asked for and needed).
/// @noRd
#[extendr]
fn rz_array_read(
    h: Robj,
    sel: Robj,
    bit64: bool,
    threads: i32,
    strict: bool,
    as_array: bool,
    dim_names: Robj,
) -> Robj {
    guard(|| {
        let a = array_of(&h)?;
        let sel = selection_of(&sel, &a.meta.shape)?;
        sel.check(&a.meta.shape, &a.what())?;
        let rtype = a.meta.data_type.r_type(bit64);
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
            let mut out = alloc_r_vector(rtype, sel.num_elements());
            let warnings = with_r_buffer(&mut out, rtype, |buf| {
                a.read(&sel, buf, io_options(threads, strict))
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

// ---------------------------------------------------------------- codecs

fn dtype_and_fill(dtype: &str, fill_json: &str) -> Result<(DataType, FillValue)> {
    let dtype = DataType::parse(dtype)?;
    let fill = serde_json::from_str(fill_json).map_err(ZarrError::from)?;
    Ok((dtype, FillValue::parse(&fill, dtype)?))
}

/// The `bytes` codec on R data in memory order: NA -> fill, then the byte
/// order of `endian` ("little", "big" or "" for one-byte types).
/// @noRd
#[extendr]
fn rz_bytes_encode(data: Robj, dtype: &str, fill_json: &str, endian: &str) -> Robj {
    guard(|| {
        let (dtype, fill) = dtype_and_fill(dtype, fill_json)?;
        let mut bytes = encode_elements(
            &r_data(&data, "codec 'bytes'")?,
            dtype,
            &fill.bytes,
            "codec 'bytes'",
        )?;
        if endian_swaps(endian)? {
            crate::codec::bytes::swap_bytes(&mut bytes, dtype.swap_unit());
        }
        Ok(Raw::from_bytes(&bytes).into())
    })
}

/// The inverse of `rz_bytes_encode`: a vector of the data type's R type.
/// @noRd
#[extendr]
fn rz_bytes_decode(data: Raw, dtype: &str, fill_json: &str, endian: &str, bit64: bool) -> Robj {
    guard(|| {
        let (dtype, fill) = dtype_and_fill(dtype, fill_json)?;
        let mut bytes = data.as_slice().to_vec();
        if endian_swaps(endian)? {
            crate::codec::bytes::swap_bytes(&mut bytes, dtype.swap_unit());
        }
        let rtype = dtype.r_type(bit64);
        let mut out = alloc_r_vector(rtype, bytes.len() / dtype.size());
        let w = with_r_buffer(&mut out, rtype, |buf| {
            decode_elements(&bytes, dtype, &fill.bytes, buf, "codec 'bytes'")
        })?;
        Ok(with_warnings(out, w))
    })
}

fn endian_swaps(endian: &str) -> Result<bool> {
    Ok(match endian {
        "" => false,
        "little" => Endian::native() != Endian::Little,
        "big" => Endian::native() != Endian::Big,
        other => {
            return Err(ZarrError::Codec(format!(
                "endian must be \"little\" or \"big\", not '{other}'"
            )))
        }
    })
}

/// Encode a raw vector with one bytes -> bytes codec, given as its JSON entry.
/// @noRd
#[extendr]
fn rz_codec_encode(codec_json: &str, dtype: &str, data: Raw) -> Robj {
    guard(|| {
        let codec =
            bytes_codec_from_json(&serde_json::from_str(codec_json)?, DataType::parse(dtype)?)?;
        Ok(Raw::from_bytes(&codec.encode(data.as_slice().to_vec())?).into())
    })
}

/// Decode a raw vector with one bytes -> bytes codec.
/// @noRd
#[extendr]
fn rz_codec_decode(codec_json: &str, dtype: &str, data: Raw, strict: bool) -> Robj {
    guard(|| {
        let codec =
            bytes_codec_from_json(&serde_json::from_str(codec_json)?, DataType::parse(dtype)?)?;
        let warnings = Warnings::default();
        let what = format!("codec '{}'", codec.name());
        let ctx = CodecContext {
            strict_checksums: strict,
            warnings: &warnings,
            what: &what,
        };
        let out = codec
            .decode(data.as_slice().to_vec(), None, &ctx)
            .map_err(|e| e.into_corrupt())?;
        Ok(with_warnings(Raw::from_bytes(&out).into(), warnings.take()))
    })
}

extendr_module! {
    mod zarr;
    fn rz_store_local;
    fn rz_store_memory;
    fn rz_store_reference;
    fn rz_store_http;
    fn rz_store_get;
    fn rz_store_set;
    fn rz_store_erase;
    fn rz_store_erase_prefix;
    fn rz_store_list;
    fn rz_store_list_prefix;
    fn rz_store_list_dir;
    fn rz_store_exists;
    fn rz_store_size;
    fn rz_store_info;
    fn rz_metadata_normalize;
    fn rz_metadata_documents;
    fn rz_node_metadata;
    fn rz_consolidated_v2;
    fn rz_consolidate_v2;
    fn rz_array_open;
    fn rz_array_attach;
    fn rz_consolidated_v3;
    fn rz_array_create;
    fn rz_array_metadata;
    fn rz_array_read;
    fn rz_array_write;
    fn rz_bytes_encode;
    fn rz_bytes_decode;
    fn rz_codec_encode;
    fn rz_codec_decode;
}
