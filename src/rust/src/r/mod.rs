//! R bindings: the only module that knows about R. It converts R vectors
//! to slices and back, keeps stores and arrays behind external pointers,
//! and turns `ZarrError` into a value the R side raises as a classed
//! condition (`zarr_error_<kind>`). Nothing here holds logic of its own.

use crate::codec::{bytes_codec_from_json, CodecContext, Warnings};
use crate::convert::{decode_elements, encode_elements, NaRule, RBuf, RBufMut};
use crate::dtype::Endian;
use crate::dtype::{DataType, RType};
use crate::engine::{Array, IoOptions};
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
use crate::metadata::{ArrayMetadata, NodeMetadata};
use crate::selection::{DimSelection, Selection};
use crate::store::{ByteRange, FsStore, MemoryStore, Store};
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use std::sync::Arc;

/// A store shared by every array and group opened from it, with the node
/// documents read or written through it (`node.rs`).
pub type StoreHandle = crate::node::NodeStore;
/// An open array.
pub struct ArrayHandle(pub Arc<Array>);

/// Run `f`, turning an error or a panic into a `zarr_rust_error` value
/// (class, kind, message) that `zarr_call()` in R/errors.R raises. Errors
/// never go through extendr's own error path, which is unclassed and
/// treats `%` as a format character.
///
/// While `f` runs, the engine asks `interrupt_pending` from this thread
/// (R's) whether to stop.
fn guard(f: impl FnOnce() -> Result<Robj>) -> Robj {
    let run = || crate::pool::with_interrupt_check(interrupt_pending, f);
    // Caught quietly: the message goes into the R error, not to stderr.
    match crate::panics::catch(run) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => error_value(e.kind(), e.message()),
        Err(p) => {
            let msg = crate::panics::message(&*p).unwrap_or_else(|| "unknown panic".into());
            error_value(
                "internal",
                &format!("internal error in the zarr engine: {msg}"),
            )
        }
    }
}

type Sexp = extendr_ffi::SEXP;

// SEXP is an opaque pointer to R; its pointee is never touched from Rust.
#[allow(improper_ctypes)]
extern "C" {
    fn R_tryCatch(
        body: extern "C" fn(*mut std::ffi::c_void) -> Sexp,
        bdata: *mut std::ffi::c_void,
        conds: Sexp,
        handler: extern "C" fn(Sexp, *mut std::ffi::c_void) -> Sexp,
        hdata: *mut std::ffi::c_void,
        finally: Option<extern "C" fn(*mut std::ffi::c_void)>,
        fdata: *mut std::ffi::c_void,
    ) -> Sexp;
    fn R_CheckUserInterrupt();
}

extern "C" fn check_user_interrupt(_: *mut std::ffi::c_void) -> Sexp {
    // SAFETY: called on R's thread, inside R_tryCatch, which catches the
    // jump an interrupt or a time limit makes.
    unsafe {
        R_CheckUserInterrupt();
        extendr_ffi::R_NilValue
    }
}

extern "C" fn caught(cond: Sexp, _: *mut std::ffi::c_void) -> Sexp {
    cond
}

/// Whether R has a Ctrl-C or an expired `setTimeLimit()` pending. R's
/// check jumps out when it does; run inside R_tryCatch (for conditions of
/// class interrupt and error, as a time limit is), the jump stops there
/// instead of skipping the engine's Rust frames, nothing is printed, and
/// the engine then cleans up and returns an `interrupted` error. The same
/// periodic call reports progress (`done` of `total` chunks).
fn interrupt_pending(done: usize, total: usize) -> bool {
    if progress::report(done, total) {
        return true;
    }
    let conds: Robj = Strings::from_values(["interrupt", "error"]).into();
    // SAFETY: only ever called from the thread that entered `guard`, R's;
    // `conds` stays protected (alive) for the call.
    unsafe {
        let got = R_tryCatch(
            check_user_interrupt,
            std::ptr::null_mut(),
            conds.get(),
            caught,
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        );
        matches!(extendr_ffi::Rf_isNull(got), extendr_ffi::Rboolean::FALSE)
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

/// `with_warnings` for warnings of one kind: R raises them with the class
/// `zarr_warning_<kind>` as well as `zarr_warning`.
fn with_warnings_of(v: Robj, kind: &str, warnings: Vec<String>) -> Robj {
    if warnings.is_empty() {
        return v;
    }
    let mut v = with_warnings(v, warnings);
    v.set_attrib("zarr_warning_kind", kind)
        .expect("setting an attribute on a new value");
    v
}

fn handle_of(h: &Robj) -> Result<&StoreHandle> {
    let p: &ExternalPtr<StoreHandle> = h
        .try_into()
        .map_err(|_| ZarrError::Type("expected a store handle".into()))?;
    p.try_addr()
        .map_err(|_| ZarrError::Type("the store handle is no longer valid".into()))
}

fn store_of(h: &Robj) -> Result<Arc<dyn Store>> {
    Ok(Arc::clone(&handle_of(h)?.store))
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
    ExternalPtr::new(StoreHandle::new(s)).into()
}

fn strings(v: Vec<String>) -> Robj {
    Strings::from_values(v).into()
}

mod alloc;
mod array;
mod cf;
mod codec;
mod icechunk;
mod key;
mod metadata;
mod node;
mod progress;
mod registry;
mod resize;
mod store;
mod structs;

use alloc::{alloc_r_vector, collects_before, with_r_buffer};

extendr_module! {
    mod zarr;
    use alloc;
    use store;
    use metadata;
    use node;
    use registry;
    use array;
    use cf;
    use codec;
    use icechunk;
    use key;
    use progress;
    use resize;
    use structs;
}
