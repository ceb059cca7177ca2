//! Bindings of the node documents a store handle keeps (`node.rs`): R asks
//! for a node's document, a group's children or an array's engine here and
//! never keeps a copy of its own.

use super::array::{array_value, attach_metadata, decoded};
use super::*;

fn node_path(path: &str) -> Result<String> {
    crate::engine::normalize_path(path)
}

/// The store handle and the document (R form JSON text, None when there is
/// no node) of the node at `path`: what both document bindings start from,
/// a bad path named as the node it was meant to be.
fn node_document<'a>(h: &'a Robj, path: &str) -> Result<(&'a StoreHandle, Option<String>)> {
    let h = handle_of(h)?;
    let what = format!("node '/{}'", path.trim_matches('/'));
    let path = node_path(path).map_err(|e| e.context(&what))?;
    let doc = h.nodes.document(h.store.as_ref(), &path)?;
    Ok((h, doc))
}

/// The document of the node at `path` in R form (JSON text), or NULL when
/// there is none; a node of consolidated metadata that cannot be read
/// raises its error.
/// @noRd
#[extendr]
fn rz_node_document(h: Robj, path: &str) -> Robj {
    guard(|| {
        let (h, doc) = node_document(&h, path)?;
        let out = match doc {
            Some(t) => t.into(),
            None => ().into(),
        };
        Ok(with_warnings_of(out, "metadata", h.nodes.take_warnings()))
    })
}

/// `rz_node_document` parsed into R lists as `jsonlite::fromJSON(text,
/// simplifyVector = FALSE, bigint_as_char = TRUE)` would, so that opening
/// a node needs no JSON parser in R (nor loading one). A document with a
/// NUL character in a string stays text, for R's parser to refuse.
///
/// With `held`, the document this handle holds for the node (see
/// `NodeDocs::held`), read only when it has none: what a node object
/// shows. It comes as `list(text, meta)`, or TRUE when its text is
/// `known` (the text whose R form the node object has at hand: a node
/// keeps the list it wrote, with R's types, as long as the handle holds
/// the text that list was written as). Without `held`, the store's
/// document read again (opening a node).
/// @noRd
#[extendr]
fn rz_node_metadata(h: Robj, path: &str, held: bool, known: &str) -> Robj {
    guard(|| {
        if !held {
            let (h, doc) = node_document(&h, path)?;
            let out = doc.map_or_else(|| Ok(().into()), |t| r_document(&t))?;
            return Ok(with_warnings_of(out, "metadata", h.nodes.take_warnings()));
        }
        let h = handle_of(&h)?;
        let what = format!("node '/{}'", path.trim_matches('/'));
        let p = node_path(path).map_err(|e| e.context(&what))?;
        let out = match h.nodes.held(h.store.as_ref(), &p)? {
            None => ().into(),
            Some(t) if t == known => true.into(),
            Some(t) => {
                let meta = r_document(&t)?;
                list!(text = t, meta = meta).into()
            }
        };
        Ok(with_warnings_of(out, "metadata", h.nodes.take_warnings()))
    })
}

/// A document's text as R lists (see `rz_node_metadata`).
fn r_document(t: &str) -> Result<Robj> {
    Ok(if t.contains("\\u0000") {
        t.into()
    } else {
        json_value(&serde_json::from_str(t)?)
    })
}

/// A JSON value as jsonlite's parser gives it without simplification:
/// objects are named lists, arrays lists, integers R integers where they
/// fit (not -2^31, R's NA), doubles beyond, and text past 2^53 (where a
/// double loses digits); an integer outside 64 bits is a double.
fn json_value(v: &serde_json::Value) -> Robj {
    // SAFETY: on R's thread (a .Call); json_sexp leaves nothing protected
    // and its strings hold no NUL (the caller checked), so R raises no
    // error past Rust frames.
    unsafe { Robj::from_sexp(json_sexp(v)) }
}

/// `json_value` with R's C API directly: extendr's wrappers cost several
/// times jsonlite's parse for every value they make.
unsafe fn json_sexp(v: &serde_json::Value) -> extendr_ffi::SEXP {
    use extendr_ffi::*;
    use serde_json::Value;
    const EXACT: i64 = 1 << 53;
    let text = |s: &str| Rf_mkCharLenCE(s.as_ptr().cast(), s.len() as i32, cetype_t::CE_UTF8);
    let string = |s: &str| {
        let out = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, 1));
        SET_STRING_ELT(out, 0, text(s));
        Rf_unprotect(1);
        out
    };
    let real = |x: f64| {
        let out = Rf_allocVector(SEXPTYPE::REALSXP, 1);
        *REAL(out) = x;
        out
    };
    match v {
        Value::Null => R_NilValue,
        Value::Bool(b) => {
            let out = Rf_allocVector(SEXPTYPE::LGLSXP, 1);
            *LOGICAL(out) = *b as i32;
            out
        }
        Value::String(s) => string(s),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i == i64::MIN => real(i as f64),
            Some(i) if !(-EXACT..=EXACT).contains(&i) => string(&i.to_string()),
            Some(i) if i > i32::MAX as i64 || i < -(i32::MAX as i64) => real(i as f64),
            Some(i) => {
                let out = Rf_allocVector(SEXPTYPE::INTSXP, 1);
                *INTEGER(out) = i as i32;
                out
            }
            None => real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::Array(a) => {
            let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, a.len() as isize));
            for (i, x) in a.iter().enumerate() {
                SET_VECTOR_ELT(out, i as isize, json_sexp(x));
            }
            Rf_unprotect(1);
            out
        }
        Value::Object(m) => {
            let out = Rf_protect(Rf_allocVector(SEXPTYPE::VECSXP, m.len() as isize));
            let names = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, m.len() as isize));
            for (i, (k, x)) in m.iter().enumerate() {
                SET_STRING_ELT(names, i as isize, text(k));
                SET_VECTOR_ELT(out, i as isize, json_sexp(x));
            }
            Rf_setAttrib(out, R_NamesSymbol, names);
            Rf_unprotect(2);
            out
        }
    }
}

/// The paths of the nodes directly below `path` from consolidated
/// metadata, sorted; NULL when the root has none (the store is listed).
/// @noRd
#[extendr]
fn rz_node_children(h: Robj, path: &str) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        Ok(match h.nodes.children(&node_path(path)?) {
            Some(paths) => strings(paths),
            None => ().into(),
        })
    })
}

/// The engine of the array at `path`: from the document this handle read
/// or wrote last, else from the store. CF-decoding when `decode` says so.
/// @noRd
#[extendr]
fn rz_node_array(h: Robj, path: &str, decode: bool) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        let path = node_path(path)?;
        let store = Arc::clone(&h.store);
        let a = match h.nodes.array_document(&path) {
            Some(text) => attach_metadata(store, &path, &text)?,
            None => Array::open(store, &path)?,
        };
        Ok(array_value(decoded(a, decode)?))
    })
}

/// The document an array at `path` would be opened from without reading
/// the store (R form JSON text), or NULL.
/// @noRd
#[extendr]
fn rz_node_array_document(h: Robj, path: &str) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        Ok(match h.nodes.array_document(&node_path(path)?) {
            Some(t) => t.into(),
            None => ().into(),
        })
    })
}

/// Record the document (R form JSON text) just written for the node at `path`.
/// @noRd
#[extendr]
fn rz_node_put(h: Robj, path: &str, json: &str) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        h.nodes.put(&node_path(path)?, json)?;
        Ok(().into())
    })
}

/// Move the folder `from` of a local store to `to` (file system paths R
/// checked) in one rename, the documents below the prefixes `from_prefix`
/// and `to_prefix` forgotten; FALSE when the rename failed.
/// @noRd
#[extendr]
fn rz_node_rename_folder(
    h: Robj,
    from: &str,
    to: &str,
    from_prefix: &str,
    to_prefix: &str,
) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        let done = h.rename_folder(
            std::path::Path::new(from),
            std::path::Path::new(to),
            &crate::store::StorePrefix::new(from_prefix)?,
            &crate::store::StorePrefix::new(to_prefix)?,
        )?;
        Ok(done.into())
    })
}

/// The count of changes of the documents the handle holds (a double): R
/// keeps what it derived from a node's document while this stays.
/// @noRd
#[extendr]
fn rz_node_generation(h: Robj) -> Robj {
    guard(|| Ok((handle_of(&h)?.nodes.generation() as f64).into()))
}

/// The Zarr version of the store's root (3 until a root is read); with
/// `version` 2 or 3, first set it (a new store's format).
/// @noRd
#[extendr]
fn rz_node_version(h: Robj, version: i32) -> Robj {
    guard(|| {
        let h = handle_of(&h)?;
        if version == 2 || version == 3 {
            h.nodes.set_version(version as u8);
        }
        Ok((h.nodes.version().unwrap_or(3) as i32).into())
    })
}

/// The version tags of the document keys read since the last call:
/// list(keys, tags), a tag NA where the key was absent or has none.
/// @noRd
#[extendr]
fn rz_node_take_tags(h: Robj) -> Robj {
    guard(|| {
        let (keys, tags): (Vec<String>, Vec<Option<String>>) =
            handle_of(&h)?.nodes.take_tags().into_iter().unzip();
        let tags: Strings = tags
            .into_iter()
            .map(|t| t.map_or_else(Rstr::na, Rstr::from))
            .collect();
        Ok(list!(keys = strings(keys), tags = tags).into())
    })
}

extendr_module! {
    mod node;
    fn rz_node_document;
    fn rz_node_metadata;
    fn rz_node_children;
    fn rz_node_array;
    fn rz_node_array_document;
    fn rz_node_put;
    fn rz_node_rename_folder;
    fn rz_node_version;
    fn rz_node_generation;
    fn rz_node_take_tags;
}
