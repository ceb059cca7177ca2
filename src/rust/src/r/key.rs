//! Bindings of chunk keys (`crate::key`): map_blocks() in R finds the
//! stored chunks of an array through the engine's parser.

use super::*;
use crate::key::ChunkKeyEncoding;

fn encoding_of(name: &str, separator: &str) -> Result<ChunkKeyEncoding> {
    ChunkKeyEncoding::from_name(name, Some(separator))
}

/// Which of `keys` are chunk keys of an `ndim`-dimensional array:
/// `list(which, index)`, their 1-based positions and their grid indices
/// (`ndim` numbers per key found, in order).
/// @noRd
#[extendr]
fn rz_chunk_key_index(keys: Vec<String>, ndim: i32, name: &str, separator: &str) -> Robj {
    guard(|| {
        let enc = encoding_of(name, separator)?;
        let ndim = usize::try_from(ndim).map_err(|_| ZarrError::Type("ndim < 0".into()))?;
        let mut which: Vec<i32> = Vec::new();
        let mut index: Vec<f64> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(idx) = enc.parse(k, ndim) {
                which.push(i as i32 + 1);
                index.extend(idx.iter().map(|&g| g as f64));
            }
        }
        Ok(list!(which = which, index = index).into_robj())
    })
}

extendr_module! {
    mod key;
    fn rz_chunk_key_index;
}
