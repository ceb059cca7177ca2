//! Orthogonal selections: per dimension an ordered list of 0-based indices,
//! kept as runs of consecutive indices so that ranges cost nothing and any
//! R index vector (out of order, repeated) still works.

use crate::error::{Result, ZarrError};
use crate::grid::{Axis, ChunkGrid};

/// `len` consecutive indices starting at `start`, landing at output
/// positions `dst..dst + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub start: u64,
    pub dst: usize,
    pub len: usize,
}

/// The selection along one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimSelection {
    pub runs: Vec<Run>,
    pub len: usize,
}

impl DimSelection {
    pub fn range(start: u64, len: u64) -> DimSelection {
        let len = len as usize;
        let runs = if len == 0 {
            vec![]
        } else {
            vec![Run { start, dst: 0, len }]
        };
        DimSelection { runs, len }
    }

    pub fn indices(idx: &[u64]) -> DimSelection {
        let mut runs: Vec<Run> = Vec::new();
        for (pos, &i) in idx.iter().enumerate() {
            match runs.last_mut() {
                Some(r) if r.start + r.len as u64 == i => r.len += 1,
                _ => runs.push(Run {
                    start: i,
                    dst: pos,
                    len: 1,
                }),
            }
        }
        DimSelection {
            runs,
            len: idx.len(),
        }
    }

    fn max_index(&self) -> Option<u64> {
        self.runs.iter().map(|r| r.start + r.len as u64 - 1).max()
    }
}

/// A selection of the whole array or part of it, one entry per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub dims: Vec<DimSelection>,
}

/// One chunk along one dimension and the runs of the selection inside it,
/// with `start` made relative to the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimChunk {
    pub chunk: u64,
    pub runs: Vec<Run>,
}

impl Selection {
    pub fn all(shape: &[u64]) -> Selection {
        Selection {
            dims: shape.iter().map(|&n| DimSelection::range(0, n)).collect(),
        }
    }

    /// Shape of the result (R's dim of what a read returns).
    pub fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.len).collect()
    }

    /// The number of elements selected; `check` has made sure it fits.
    pub fn num_elements(&self) -> usize {
        crate::error::checked_product(self.dims.iter().map(|d| d.len)).unwrap_or(usize::MAX)
    }

    /// Check rank and bounds against the array shape; `what` names the array.
    pub fn check(&self, shape: &[u64], what: &str) -> Result<()> {
        if self.dims.len() != shape.len() {
            return Err(ZarrError::Selection(format!(
                "{what}: the selection has {} dimensions but the array has {}",
                self.dims.len(),
                shape.len()
            )));
        }
        for (d, (sel, &n)) in self.dims.iter().zip(shape).enumerate() {
            if let Some(m) = sel.max_index() {
                if m >= n {
                    return Err(ZarrError::Selection(format!(
                        "{what}: index {} is out of bounds for dimension {} of extent {n}",
                        m + 1,
                        d + 1
                    )));
                }
            }
        }
        // A count that wraps would read a few elements where billions were
        // asked for, and planning it would walk every chunk of the array.
        if crate::error::checked_product(self.dims.iter().map(|d| d.len)).is_none() {
            return Err(ZarrError::Selection(format!(
                "{what}: the selection of {} elements is too large to hold",
                self.dims
                    .iter()
                    .map(|d| d.len.to_string())
                    .collect::<Vec<_>>()
                    .join(" x ")
            )));
        }
        Ok(())
    }

    /// For each dimension, the chunks the selection touches and the runs in
    /// each, split at chunk borders.
    pub fn plan(&self, chunk_shape: &[u64]) -> Vec<Vec<DimChunk>> {
        self.plan_grid(&ChunkGrid::regular(chunk_shape))
    }

    /// `plan` over the chunks of `grid`, regular or rectilinear.
    pub fn plan_grid(&self, grid: &ChunkGrid) -> Vec<Vec<DimChunk>> {
        self.dims
            .iter()
            .zip(&grid.axes)
            .map(|(sel, axis)| split_dim(sel, axis))
            .collect()
    }
}

fn split_dim(sel: &DimSelection, axis: &Axis) -> Vec<DimChunk> {
    let mut out: Vec<DimChunk> = Vec::new();
    let mut push = |chunk: u64, run: Run| {
        // Index vectors may revisit a chunk; group runs by chunk.
        if let Some(dc) = out.iter_mut().rev().find(|dc| dc.chunk == chunk) {
            dc.runs.push(run);
        } else {
            out.push(DimChunk {
                chunk,
                runs: vec![run],
            });
        }
    };
    for r in &sel.runs {
        let mut start = r.start;
        let mut dst = r.dst;
        let mut left = r.len as u64;
        while left > 0 {
            let (chunk, off, cs) = match *axis {
                Axis::Regular(cs) => (start / cs, start % cs, cs),
                _ => {
                    let chunk = axis.chunk_of(start);
                    (chunk, start - axis.start(chunk), axis.len(chunk))
                }
            };
            let take = left.min(cs - off);
            push(
                chunk,
                Run {
                    start: off,
                    dst,
                    len: take as usize,
                },
            );
            start += take;
            dst += take as usize;
            left -= take;
        }
    }
    out.sort_by_key(|dc| dc.chunk);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_compress_into_runs() {
        let d = DimSelection::indices(&[3, 4, 5, 9, 2, 2]);
        assert_eq!(
            d.runs,
            vec![
                Run {
                    start: 3,
                    dst: 0,
                    len: 3
                },
                Run {
                    start: 9,
                    dst: 3,
                    len: 1
                },
                Run {
                    start: 2,
                    dst: 4,
                    len: 1
                },
                Run {
                    start: 2,
                    dst: 5,
                    len: 1
                }
            ]
        );
        assert_eq!(d.len, 6);
    }

    #[test]
    fn plan_splits_runs_at_chunk_borders() {
        let s = Selection {
            dims: vec![DimSelection::range(3, 6)],
        };
        let p = s.plan(&[4]);
        assert_eq!(p[0].len(), 3);
        assert_eq!(
            p[0][0],
            DimChunk {
                chunk: 0,
                runs: vec![Run {
                    start: 3,
                    dst: 0,
                    len: 1
                }]
            }
        );
        assert_eq!(
            p[0][1],
            DimChunk {
                chunk: 1,
                runs: vec![Run {
                    start: 0,
                    dst: 1,
                    len: 4
                }]
            }
        );
        assert_eq!(
            p[0][2],
            DimChunk {
                chunk: 2,
                runs: vec![Run {
                    start: 0,
                    dst: 5,
                    len: 1
                }]
            }
        );
        assert_eq!(
            p[0].iter()
                .map(|c| c.runs.iter().map(|r| r.len).sum::<usize>())
                .sum::<usize>(),
            6
        );
    }

    #[test]
    fn revisited_chunks_are_grouped() {
        let s = Selection {
            dims: vec![DimSelection::indices(&[0, 9, 1])],
        };
        let p = s.plan(&[4]);
        assert_eq!(p[0].iter().map(|c| c.chunk).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(p[0][0].runs.len(), 2);
    }

    #[test]
    fn rectilinear_plans_split_at_each_chunks_own_border() {
        let config = serde_json::json!({"kind": "inline", "chunk_shapes": [[[3, 3], 1]]});
        let grid = ChunkGrid::parse_rectilinear(Some(&config), &[10]).unwrap();
        let s = Selection {
            dims: vec![DimSelection::range(2, 8)],
        };
        let p = s.plan_grid(&grid);
        let got: Vec<(u64, u64, usize, usize)> = p[0]
            .iter()
            .flat_map(|c| c.runs.iter().map(move |r| (c.chunk, r.start, r.dst, r.len)))
            .collect();
        assert_eq!(
            got,
            vec![(0, 2, 0, 1), (1, 0, 1, 3), (2, 0, 4, 3), (3, 0, 7, 1)]
        );
    }

    #[test]
    fn bounds_and_rank_are_checked() {
        let s = Selection {
            dims: vec![DimSelection::range(0, 5)],
        };
        assert!(s.check(&[5], "a").is_ok());
        let e = s.check(&[4], "array '/x'").unwrap_err();
        assert_eq!(e.kind(), "selection");
        assert!(e.message().contains("array '/x'"));
        assert!(s.check(&[5, 5], "a").is_err());
        let huge = Selection::all(&[1 << 32, 1 << 32]);
        let e = huge.check(&[1 << 32, 1 << 32], "array '/h'").unwrap_err();
        assert_eq!(e.kind(), "selection");
        assert!(e.message().contains("array '/h'"), "{}", e.message());
        assert!(Selection {
            dims: vec![DimSelection::range(0, 0)]
        }
        .check(&[0], "a")
        .is_ok());
    }
}
