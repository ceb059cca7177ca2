//! Bindings of resize() and promote() (`engine/resize.rs`): each step on
//! the array at `path` of a store handle, opened from its R-form metadata
//! (`json`); R stores the new metadata between the steps.

use super::array::{attach_metadata, io_options};
use super::*;
use crate::engine::ResizeRequest;

/// The array at `path` from R-form metadata, for a step.
fn array_at(h: &Robj, path: &str, json: &str) -> Result<Array> {
    attach_metadata(store_of(h)?, path, json)
}

/// R-form metadata text, as R parses it (64-bit integers as text).
fn r_form_text(meta: ArrayMetadata) -> Result<String> {
    let form = crate::metadata::r_form(&NodeMetadata::Array(meta));
    let (_, doc) = crate::metadata::canonical_value(&form, true)?;
    Ok(serde_json::to_string(&doc)?)
}

/// Whole numbers (R checked them) as integers.
fn whole(v: &[f64]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// resize()'s first step: NULL when nothing changes, else `list(metadata,
/// shift)`: the R-form text to store and the move of the low end in chunks.
/// `new_shape` is NULL or the shape; `low` and `high` empty for none.
/// @noRd
#[extendr]
fn rz_array_resize(
    h: Robj,
    path: &str,
    json: &str,
    new_shape: Robj,
    low: &[f64],
    high: &[f64],
    threads: i32,
) -> Robj {
    guard(|| {
        let a = array_at(&h, path, json)?;
        let new_shape = new_shape
            .as_real_slice()
            .map(|s| s.iter().map(|&x| x as u64).collect());
        let req = ResizeRequest {
            new_shape,
            low: whole(low),
            high: whole(high),
        };
        Ok(match a.resize_begin(&req, io_options(threads, false))? {
            None => ().into(),
            Some(r) => {
                let shift: Vec<f64> = r.shift.iter().map(|&s| s as f64).collect();
                list!(metadata = r_form_text(r.meta)?, shift = shift).into()
            }
        })
    })
}

/// The R-form text of array metadata `json` with the shape `shape`, its
/// chunk grid grown to cover it (append() writes through a handle on it
/// before storing it).
/// @noRd
#[extendr]
fn rz_array_reshaped(json: &str, shape: &[f64]) -> Robj {
    guard(|| {
        let meta = super::array::array_metadata(json)?;
        let shape = shape.iter().map(|&x| x as u64).collect();
        Ok(r_form_text(crate::engine::reshaped(&meta, shape))?.into())
    })
}

/// resize()'s last step, on the array with its new metadata stored.
/// @noRd
#[extendr]
fn rz_array_resize_finish(h: Robj, path: &str, json: &str, threads: i32) -> Robj {
    guard(|| {
        array_at(&h, path, json)?.resize_finish(io_options(threads, false))?;
        Ok(().into())
    })
}

/// Undo resize()'s first step (`shift` as it returned it) on the array
/// with its old metadata, which could not be replaced.
/// @noRd
#[extendr]
fn rz_array_resize_undo(h: Robj, path: &str, json: &str, shift: &[f64]) -> Robj {
    guard(|| {
        array_at(&h, path, json)?.resize_undo(&whole(shift))?;
        Ok(().into())
    })
}

/// promote()'s first step: the R-form text of the metadata with a
/// dimension inserted before `at` (0-based; its name null).
/// @noRd
#[extendr]
fn rz_array_promote(h: Robj, path: &str, json: &str, at: f64, threads: i32) -> Robj {
    guard(|| {
        let a = array_at(&h, path, json)?;
        let meta = a.promote_begin(at as usize, io_options(threads, false))?;
        Ok(r_form_text(meta)?.into())
    })
}

/// promote()'s last step, on the array with its new metadata stored.
/// @noRd
#[extendr]
fn rz_array_promote_finish(h: Robj, path: &str, json: &str, at: f64, threads: i32) -> Robj {
    guard(|| {
        array_at(&h, path, json)?.promote_finish(at as usize, io_options(threads, false))?;
        Ok(().into())
    })
}

/// Undo promote()'s first step on the array with its old metadata.
/// @noRd
#[extendr]
fn rz_array_promote_undo(h: Robj, path: &str, json: &str) -> Robj {
    guard(|| {
        array_at(&h, path, json)?.promote_undo()?;
        Ok(().into())
    })
}

extendr_module! {
    mod resize;
    fn rz_array_resize;
    fn rz_array_reshaped;
    fn rz_array_resize_finish;
    fn rz_array_resize_undo;
    fn rz_array_promote;
    fn rz_array_promote_finish;
    fn rz_array_promote_undo;
}
