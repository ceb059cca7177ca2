//! Bindings of chunk keys (`crate::key`): resize() and promote() in R
//! name and find stored chunks through the engine's encoder.

use super::*;
use crate::key::ChunkKeyEncoding;

fn encoding_of(name: &str, separator: &str) -> Result<ChunkKeyEncoding> {
    ChunkKeyEncoding::from_name(name, Some(separator))
}

/// The keys of the `n` chunks at the 0-based grid indices `index`, `ndim`
/// numbers per chunk (a row-major matrix's elements).
/// @noRd
#[extendr]
fn rz_chunk_keys(index: &[f64], n: i32, ndim: i32, name: &str, separator: &str) -> Robj {
    guard(|| {
        let enc = encoding_of(name, separator)?;
        let ndim = usize::try_from(ndim).map_err(|_| ZarrError::Type("ndim < 0".into()))?;
        let idx = index
            .iter()
            .map(|&x| {
                // Exactly representable whole numbers only.
                if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) {
                    Ok(x as u64)
                } else {
                    Err(ZarrError::Type(format!("invalid chunk index {x}")))
                }
            })
            .collect::<Result<Vec<u64>>>()?;
        let rows = usize::try_from(n).map_err(|_| ZarrError::Type("n < 0".into()))?;
        if idx.len() != rows * ndim {
            return Err(ZarrError::Type(format!(
                "{} indices for {rows} chunks of {ndim} dimensions",
                idx.len()
            )));
        }
        Ok(strings(
            (0..rows)
                .map(|r| enc.key(&idx[r * ndim..(r + 1) * ndim]))
                .collect(),
        ))
    })
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
    fn rz_chunk_keys;
    fn rz_chunk_key_index;
}
