//! promote(): a dimension of extent 1 inserted into an array, in two
//! steps around the store of the new metadata (see `resize.rs`).
//! `promote_begin` moves every chunk to a prefix of its own (with "/" keys
//! an old chunk's file may stand where a new key needs a folder);
//! `promote_finish` moves them to their keys of one more dimension. A
//! dimension of extent 1 anywhere leaves the bytes of a chunk as they are:
//! chunks are renamed, never rewritten.

use super::resize::Journal;
use super::{Array, IoOptions};
use crate::error::{Result, ZarrError};
use crate::metadata::ArrayMetadata;
use crate::pool::interrupted_error;
use crate::store::StoreKey;
use serde_json::Value;

/// Where promote() parks the chunks between its two steps.
const PROMOTE_AWAY: &str = "__promote/";

impl Array {
    /// The metadata of this array with a dimension of extent 1 inserted
    /// before dimension `at` (0-based); refuses sharded arrays, as R-CF's
    /// zarr does. Its new dimension has no name (`null`).
    pub fn promote_plan(&self, at: usize) -> Result<ArrayMetadata> {
        let what = self.what();
        self.check_reshapable()?;
        if self.chain.sharding().is_some() {
            return Err(ZarrError::Unsupported(format!(
                "{what}: promote() is not supported for sharded arrays"
            )));
        }
        let nd = self.meta.shape.len();
        if at > nd {
            return Err(ZarrError::Argument(format!(
                "{what}: `dimension` must be between 1 and {} for an array of {nd} dimension{}",
                nd + 1,
                if nd != 1 { "s" } else { "" }
            )));
        }
        let mut meta = self.meta.clone();
        meta.shape.insert(at, 1);
        meta.chunk_shape.insert(at, 1);
        if let Some(names) = meta.dimension_names.as_mut() {
            names.insert(at, None);
        }
        meta.codecs = meta
            .codecs
            .iter()
            .map(|c| promote_codec(c, at, nd))
            .collect();
        meta.validate().map_err(|e| e.context(&what))?;
        Ok(meta)
    }

    /// The first step of promote(): the new metadata to store, every chunk
    /// moved aside (moved back if that fails or is interrupted).
    pub fn promote_begin(&self, at: usize, opts: IoOptions) -> Result<ArrayMetadata> {
        let meta = self.promote_plan(at)?;
        // The chain of the new shape builds before anything moves.
        Array::with_metadata(self.store.clone(), &self.path, meta.clone())?;
        let nd = self.meta.shape.len();
        let moves: Vec<(StoreKey, StoreKey)> = self
            .stored_chunks("", nd)?
            .iter()
            .map(|idx| {
                Ok((
                    self.chunk_key_in("", idx)?,
                    self.chunk_key_in(PROMOTE_AWAY, idx)?,
                ))
            })
            .collect::<Result<_>>()?;
        let journal = Journal::default();
        match self.move_all(&moves, &journal, opts.threads) {
            Ok(()) => Ok(meta),
            Err(e) => Err(journal.undo(self, e)),
        }
    }

    /// The last step of promote() on the array opened with its new
    /// metadata: the parked chunks move to their keys, with grid index 0
    /// along the new dimension `at`. An interrupt does not stop it half
    /// way (the chunks left aside would read as missing): the rest is
    /// moved one by one, and the interrupt reported after.
    pub fn promote_finish(&self, at: usize, opts: IoOptions) -> Result<()> {
        let nd = self.meta.shape.len();
        if at >= nd {
            return Err(ZarrError::Argument(format!(
                "{}: dimension {} is not one of its {nd}",
                self.what(),
                at + 1
            )));
        }
        let moves = self.parked_moves(at, nd)?;
        let journal = Journal::default();
        match self.move_all(&moves, &journal, opts.threads) {
            Err(ZarrError::Interrupted(_)) => {
                for (from, to) in self.parked_moves(at, nd)? {
                    self.move_key(&from, &to)?;
                }
                Err(interrupted_error())
            }
            other => other,
        }
    }

    fn parked_moves(&self, at: usize, nd: usize) -> Result<Vec<(StoreKey, StoreKey)>> {
        self.stored_chunks(PROMOTE_AWAY, nd - 1)?
            .into_iter()
            .map(|old| {
                let mut new = old.clone();
                new.insert(at, 0);
                Ok((
                    self.chunk_key_in(PROMOTE_AWAY, &old)?,
                    self.chunk_key_in("", &new)?,
                ))
            })
            .collect()
    }

    /// Undo `promote_begin` on this array (opened with its old metadata)
    /// when the new metadata could not be stored.
    pub fn promote_undo(&self) -> Result<()> {
        let nd = self.meta.shape.len();
        for idx in self.stored_chunks(PROMOTE_AWAY, nd)? {
            self.move_key(
                &self.chunk_key_in(PROMOTE_AWAY, &idx)?,
                &self.chunk_key_in("", &idx)?,
            )?;
        }
        Ok(())
    }
}

/// A codec of a chunk of `nd` dimensions for a chunk with a dimension of
/// extent 1 inserted before `at`: a transpose keeps R's order (reversed)
/// if it had it, and otherwise puts the new dimension last; other codecs
/// do not depend on the rank. A dimension of extent 1 anywhere leaves the
/// bytes of a chunk as they are.
fn promote_codec(codec: &Value, at: usize, nd: usize) -> Value {
    if codec.get("name").and_then(Value::as_str) != Some("transpose") {
        return codec.clone();
    }
    let Some(order) = codec
        .pointer("/configuration/order")
        .and_then(Value::as_array)
        .and_then(|o| o.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
    else {
        return codec.clone();
    };
    let reversed: Vec<u64> = (0..nd as u64).rev().collect();
    let new: Vec<u64> = if order == reversed {
        (0..=nd as u64).rev().collect()
    } else {
        let at = at as u64;
        order
            .iter()
            .map(|&o| if o >= at { o + 1 } else { o })
            .chain([at])
            .collect()
    };
    let mut out = codec.clone();
    out["configuration"]["order"] = serde_json::json!(new);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promoted_transpose_keeps_r_order_or_puts_the_new_dimension_last() {
        let t = |o: Value| serde_json::json!({"name": "transpose", "configuration": {"order": o}});
        let r = promote_codec(&t(serde_json::json!([1, 0])), 1, 2);
        assert_eq!(r, t(serde_json::json!([2, 1, 0])));
        let c = promote_codec(&t(serde_json::json!([0, 1])), 1, 2);
        assert_eq!(c, t(serde_json::json!([0, 2, 1])));
        let b = serde_json::json!({"name": "bytes"});
        assert_eq!(promote_codec(&b, 0, 2), b);
    }
}
