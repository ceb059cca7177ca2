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
use crate::metadata::{ArrayMetadata, NodeMetadata};
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

mod alloc;
mod array;
mod codec;
mod metadata;
mod store;

use alloc::{alloc_r_vector, with_r_buffer};

extendr_module! {
    mod zarr;
    use store;
    use metadata;
    use array;
    use codec;
}
