//! Benchmark support (bench/codecs.R): the CPU time of the engine's decode
//! of one chunk, the step of an array read that numcodecs' `decode` does,
//! so that the two are timed on the same work: stored bytes in memory to
//! decoded elements in memory, on one thread.

use super::{Array, IoOptions};
use crate::codec::Warnings;
use crate::error::{Result, ZarrError};
use crate::store::ByteRange;

impl Array {
    /// The seconds of each of `reps` decodes of the chunk at `idx` (CPU
    /// time of the calling thread where the platform has it, else elapsed
    /// time), each as an array read decodes a fetched chunk: its stored
    /// bytes, fetched once, are copied off the clock before each decode,
    /// and the decoded buffer is dropped on it (numcodecs' result is freed
    /// within its timing too).
    pub fn decode_seconds(&self, idx: &[u64], reps: usize) -> Result<Vec<f64>> {
        let grid = self.grid.grid_shape(&self.meta.shape);
        if idx.len() != grid.len() || idx.iter().zip(&grid).any(|(i, n)| i >= n) {
            return Err(ZarrError::Argument(format!(
                "{}: no chunk at {idx:?} in a grid of {grid:?} chunks",
                self.what()
            )));
        }
        let key = self.chunk_key(idx);
        let what = self.chunk_what(&key);
        let raw = self
            .store
            .get(&key, ByteRange::All)
            .map_err(|e| e.context(&what))?
            .ok_or_else(|| ZarrError::Argument(format!("{what} is not stored")))?;
        let shape = self.grid.chunk_shape(idx);
        let warnings = Warnings::default();
        let mut seconds = Vec::with_capacity(reps);
        for _ in 0..reps {
            let input = raw.clone();
            let start = cpu_seconds();
            let decoded =
                self.decode_chunk(&key, &shape, Some(input), IoOptions::default(), &warnings)?;
            drop(decoded);
            seconds.push(cpu_seconds() - start);
        }
        Ok(seconds)
    }
}

/// The calling thread's CPU seconds (Python's `time.thread_time()`).
#[cfg(unix)]
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        return elapsed_seconds();
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(not(unix))]
fn cpu_seconds() -> f64 {
    elapsed_seconds()
}

/// Seconds since the first call, for platforms without a thread CPU clock.
fn elapsed_seconds() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use crate::convert::RBuf;
    use crate::engine::{Array, IoOptions};
    use crate::metadata::{self, NodeMetadata};
    use crate::selection::Selection;
    use crate::store::{MemoryStore, Store};
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn decode_seconds_times_each_decode_of_a_stored_chunk_only() {
        let doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": [6], "data_type": "float64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "gzip", "configuration": {"level": 1}}]
        });
        let NodeMetadata::Array(meta) = metadata::v3::parse(doc.to_string().as_bytes()).unwrap()
        else {
            unreachable!()
        };
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(false));
        let a = Array::create(store, "a", meta).unwrap();
        let data = [1.5, 2.0, 3.0, 4.0];
        let sel = Selection::all(&[4]);
        a.write(&sel, &RBuf::Double(&data), IoOptions::default())
            .unwrap();
        let t = a.decode_seconds(&[0], 3).unwrap();
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|s| s.is_finite() && *s >= 0.0), "{t:?}");
        assert_eq!(a.decode_seconds(&[2], 1).unwrap_err().kind(), "argument");
        let err = a.decode_seconds(&[1], 1).unwrap_err();
        assert_eq!(err.kind(), "argument");
        assert!(
            err.message().contains("chunk 'a/c/1' is not stored"),
            "{}",
            err.message()
        );
    }
}
