//! Chunk grids: where each chunk of an array starts and how long it is
//! along each dimension. The regular grid (v3-chunk-grids-regular-grid.rst)
//! has one chunk shape; the rectilinear grid (zarr-extensions
//! chunk-grids/rectilinear) lists each dimension's edge lengths, as one
//! integer (a regular step), explicit lengths or run-length pairs
//! `[length, count]`. Edges are kept as runs, never expanded one by one: a
//! document of a few bytes may declare billions of chunks.

use crate::error::{Result, ZarrError};
use serde_json::{json, Value};

/// `count` chunks of `len` elements, the first of them chunk `first`,
/// starting at element `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    len: u64,
    count: u64,
    first: u64,
    start: u64,
}

/// The chunks of one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Axis {
    /// Chunks of one length, as many as the extent needs.
    Regular(u64),
    /// Chunks of the lengths of these runs, in order.
    Edges(Vec<Run>),
}

impl Axis {
    /// The chunk holding element `i`.
    pub fn chunk_of(&self, i: u64) -> u64 {
        match self {
            Axis::Regular(n) => i / n,
            Axis::Edges(runs) => {
                let r = &runs[runs.partition_point(|r| r.start <= i).max(1) - 1];
                r.first + (i - r.start) / r.len
            }
        }
    }

    /// The run holding chunk `c` (the last run past the end).
    fn run_of(runs: &[Run], c: u64) -> &Run {
        &runs[runs.partition_point(|r| r.first <= c).max(1) - 1]
    }

    /// The first element of chunk `c`.
    pub fn start(&self, c: u64) -> u64 {
        match self {
            Axis::Regular(n) => c * n,
            Axis::Edges(runs) => {
                let r = Axis::run_of(runs, c);
                r.start + (c - r.first) * r.len
            }
        }
    }

    /// The length of chunk `c` (stored length: an edge chunk may reach
    /// past the array).
    pub fn len(&self, c: u64) -> u64 {
        match self {
            Axis::Regular(n) => *n,
            Axis::Edges(runs) => Axis::run_of(runs, c).len,
        }
    }

    /// The longest chunk.
    pub fn longest(&self) -> u64 {
        match self {
            Axis::Regular(n) => *n,
            Axis::Edges(runs) => runs.iter().map(|r| r.len).max().unwrap_or(1),
        }
    }

    /// The chunks that hold elements of an extent `n`.
    pub fn chunks_in(&self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.chunk_of(n - 1) + 1
        }
    }

    /// Whether a chunk starts at element `i` (or `i` is 0).
    pub fn is_boundary(&self, i: u64) -> bool {
        self.start(self.chunk_of(i)) == i
    }

    /// The distinct chunk lengths.
    pub fn lengths(&self) -> Vec<u64> {
        let mut v: Vec<u64> = match self {
            Axis::Regular(n) => vec![*n],
            Axis::Edges(runs) => runs.iter().map(|r| r.len).collect(),
        };
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The elements all chunks cover (None for a regular axis, unbounded).
    fn covered(&self) -> Option<u64> {
        match self {
            Axis::Regular(_) => None,
            Axis::Edges(runs) => runs.last().map(|r| r.start + r.len * r.count),
        }
    }

    /// Chunks of `runs`' (length, count) pairs; None when a length or a
    /// count is 0 or the sum of all lengths does not fit in 64 bits.
    fn from_runs(pairs: &[(u64, u64)]) -> Option<Axis> {
        let mut runs: Vec<Run> = Vec::new();
        let (mut first, mut start) = (0u64, 0u64);
        for &(len, count) in pairs {
            if len == 0 || count == 0 {
                return None;
            }
            match runs.last_mut() {
                Some(r) if r.len == len => r.count += count,
                _ => runs.push(Run {
                    len,
                    count,
                    first,
                    start,
                }),
            }
            first = first.checked_add(count)?;
            start = start.checked_add(len.checked_mul(count)?)?;
        }
        Some(Axis::Edges(runs))
    }

    /// The JSON of this dimension's edges: the integer of a regular axis,
    /// else a list with `[length, count]` for each run of more than one.
    fn to_json(&self) -> Value {
        match self {
            Axis::Regular(n) => json!(n),
            Axis::Edges(runs) => Value::Array(
                runs.iter()
                    .map(|r| match r.count {
                        1 => json!(r.len),
                        n => json!([r.len, n]),
                    })
                    .collect(),
            ),
        }
    }
}

/// A chunk grid: one `Axis` per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkGrid {
    pub axes: Vec<Axis>,
}

impl ChunkGrid {
    /// The regular grid of `chunk_shape`.
    pub fn regular(chunk_shape: &[u64]) -> ChunkGrid {
        ChunkGrid {
            axes: chunk_shape.iter().map(|&n| Axis::Regular(n)).collect(),
        }
    }

    /// Whether every chunk has one shape (an edge chunk aside).
    pub fn is_regular(&self) -> bool {
        self.axes.iter().all(|a| matches!(a, Axis::Regular(_)))
    }

    /// The shape of chunk `idx` as stored.
    pub fn chunk_shape(&self, idx: &[u64]) -> Vec<usize> {
        self.axes
            .iter()
            .zip(idx)
            .map(|(a, &c)| a.len(c) as usize)
            .collect()
    }

    /// Each dimension's longest chunk: the chunk shape of a regular grid.
    pub fn longest(&self) -> Vec<u64> {
        self.axes.iter().map(Axis::longest).collect()
    }

    /// The number of chunks along each dimension of an array of `shape`.
    pub fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        self.axes
            .iter()
            .zip(shape)
            .map(|(a, &n)| a.chunks_in(n))
            .collect()
    }

    /// This grid for an array grown to `shape`: a dimension whose chunks
    /// cover less gains one chunk of the missing length, as zarr-python
    /// 3.4 grows a rectilinear grid. Edges are never taken away: chunks
    /// past a smaller extent stay declared (the spec allows it), so that a
    /// shrink and a regrowth keep the chunks' places.
    pub fn grown_to(&self, shape: &[u64]) -> ChunkGrid {
        let axes = self
            .axes
            .iter()
            .zip(shape)
            .map(|(a, &n)| match (a, a.covered()) {
                (Axis::Edges(runs), Some(sum)) if sum < n => {
                    let mut runs = runs.clone();
                    let (len, first) = (n - sum, runs.iter().map(|r| r.count).sum());
                    match runs.last_mut() {
                        Some(r) if r.len == len => r.count += 1,
                        _ => runs.push(Run {
                            len,
                            count: 1,
                            first,
                            start: sum,
                        }),
                    }
                    Axis::Edges(runs)
                }
                _ => a.clone(),
            })
            .collect();
        ChunkGrid { axes }
    }

    /// Refuse a grid whose chunks do not cover `shape`; `label` names it.
    pub fn check_covers(&self, shape: &[u64], label: &str) -> Result<()> {
        if self.axes.len() != shape.len() {
            return Err(ZarrError::Metadata(format!(
                "{label} has {} dimensions but shape {shape:?} has {}",
                self.axes.len(),
                shape.len()
            )));
        }
        for (d, (a, &n)) in self.axes.iter().zip(shape).enumerate() {
            if let Some(sum) = a.covered().filter(|&s| s < n) {
                return Err(ZarrError::Metadata(format!(
                    "{label}: the chunks of dimension {} cover {sum} elements, fewer than its extent {n}",
                    d + 1
                )));
            }
        }
        Ok(())
    }

    /// The rectilinear grid of a `configuration` object (`kind` "inline"
    /// and `chunk_shapes`) for an array of `shape`.
    pub fn parse_rectilinear(config: Option<&Value>, shape: &[u64]) -> Result<ChunkGrid> {
        let bad = |msg: String| ZarrError::Metadata(format!("chunk_grid (rectilinear): {msg}"));
        let config = config.ok_or_else(|| bad("configuration is required".into()))?;
        match config.get("kind") {
            Some(Value::String(k)) if k == "inline" => {}
            Some(Value::String(k)) => {
                return Err(ZarrError::Unsupported(format!(
                    "chunk_grid (rectilinear): kind '{k}' is not supported"
                )))
            }
            _ => return Err(bad("configuration.kind must be \"inline\"".into())),
        }
        let dims = config
            .get("chunk_shapes")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("configuration.chunk_shapes must be an array".into()))?;
        let positive = |v: &Value| v.as_u64().filter(|&n| n > 0);
        let axes = dims
            .iter()
            .enumerate()
            .map(|(d, v)| {
                let wrong = || {
                    bad(format!(
                        "dimension {}: {v} is not a positive integer or a list of positive integers and [length, count] pairs",
                        d + 1
                    ))
                };
                if let Some(n) = positive(v) {
                    return Ok(Axis::Regular(n));
                }
                let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(wrong)?;
                let pairs = items
                    .iter()
                    .map(|e| match (positive(e), e.as_array().map(Vec::as_slice)) {
                        (Some(n), _) => Some((n, 1)),
                        (None, Some([len, count])) => Some((positive(len)?, positive(count)?)),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(wrong)?;
                Axis::from_runs(&pairs).ok_or_else(|| {
                    bad(format!(
                        "dimension {}: the chunk lengths sum past 2^64",
                        d + 1
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let grid = ChunkGrid { axes };
        grid.check_covers(shape, "chunk_grid (rectilinear): chunk_shapes")?;
        Ok(grid)
    }

    /// The `chunk_grid` member of a rectilinear grid.
    pub fn rectilinear_json(&self) -> Value {
        let shapes: Vec<Value> = self.axes.iter().map(Axis::to_json).collect();
        json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(shapes: Value, shape: &[u64]) -> Result<ChunkGrid> {
        let config = json!({"kind": "inline", "chunk_shapes": shapes});
        ChunkGrid::parse_rectilinear(Some(&config), shape)
    }

    #[test]
    fn rectilinear_forms_of_the_spec_expand_to_their_edges() {
        // The example of the extension's README.
        let g = grid(
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]),
            &[6; 5],
        )
        .unwrap();
        let edges = |d: usize, n: u64| -> Vec<u64> { (0..n).map(|c| g.axes[d].len(c)).collect() };
        assert_eq!(edges(0, 2), [4, 4]);
        assert_eq!(edges(1, 3), [1, 2, 3]);
        assert_eq!(edges(2, 2), [4, 4]);
        assert_eq!(edges(3, 4), [1, 1, 1, 3]);
        assert_eq!(edges(4, 3), [4, 4, 4]);
        assert_eq!(g.grid_shape(&[6; 5]), [2, 3, 2, 4, 2]);
        assert_eq!(g.longest(), [4, 3, 4, 3, 4]);
        assert!(!g.is_regular());
        // Element 4 of [1, 1, 1, 3] is in chunk 3, which starts at 3.
        assert_eq!(g.axes[3].chunk_of(4), 3);
        assert_eq!(g.axes[3].start(3), 3);
        assert_eq!(g.axes[1].chunk_of(2), 1);
        assert_eq!(g.axes[1].chunk_of(3), 2);
        assert_eq!(g.chunk_shape(&[1, 2, 0, 3, 2]), [4, 3, 4, 3, 4]);
    }

    #[test]
    fn rectilinear_json_writes_runs_and_reads_back() {
        let shapes = json!([[[3, 3], 1], [4, 3], 5, [[2, 4]]]);
        let g = grid(shapes.clone(), &[10, 7, 12, 8]).unwrap();
        assert_eq!(
            g.rectilinear_json()["configuration"]["chunk_shapes"],
            shapes
        );
        // Neighbouring runs of one length merge.
        let g = grid(json!([[2, 2, [2, 3], 1]]), &[9]).unwrap();
        assert_eq!(
            g.rectilinear_json()["configuration"]["chunk_shapes"],
            json!([[[2, 5], 1]])
        );
    }

    #[test]
    fn rectilinear_huge_runs_stay_runs() {
        let g = grid(json!([[[1, 1u64 << 40], 7]]), &[1 << 40]).unwrap();
        assert_eq!(g.axes[0].chunk_of((1 << 40) - 1), (1 << 40) - 1);
        assert_eq!(g.grid_shape(&[1 << 40]), [1 << 40]);
        assert_eq!(g.axes[0].len(1 << 40), 7);
    }

    #[test]
    fn rectilinear_growth_adds_one_chunk_as_zarr_python_does() {
        // zarr-python 3.4: [[3, 2], 4] over 10 grown to 14 gives
        // [[3, 2], [4, 2]], then to 16 one more chunk of 2.
        let g = grid(json!([[[3, 2], 4], [4, 3]]), &[10, 7]).unwrap();
        let g14 = g.grown_to(&[14, 7]);
        assert_eq!(
            g14.rectilinear_json()["configuration"]["chunk_shapes"],
            json!([[[3, 2], [4, 2]], [4, 3]])
        );
        let g16 = g14.grown_to(&[16, 9]);
        assert_eq!(
            g16.rectilinear_json()["configuration"]["chunk_shapes"],
            json!([[[3, 2], [4, 2], 2], [4, 3, 2]])
        );
        assert_eq!(g16.axes[0].start(4), 14);
        assert_eq!(g16.grid_shape(&[16, 9]), vec![5, 3]);
        // A smaller extent keeps every edge.
        assert_eq!(g16.grown_to(&[5, 7]), g16);
        assert!(g16.axes[0].is_boundary(6) && !g16.axes[0].is_boundary(5));
        assert!(Axis::Regular(4).is_boundary(8) && !Axis::Regular(4).is_boundary(9));
    }

    #[test]
    fn rectilinear_bad_documents_are_metadata_errors() {
        for (shapes, shape) in [
            (json!([[3, 3]]), vec![7u64]),
            (json!([[0, 3]]), vec![3]),
            (json!([0]), vec![3]),
            (json!([[[3, 0]]]), vec![3]),
            (json!([[[3, 1, 1]]]), vec![3]),
            (json!([[]]), vec![3]),
            (json!(["3"]), vec![3]),
            (json!([3]), vec![3, 3]),
            (json!([[[u64::MAX, 2]]]), vec![3]),
        ] {
            let e = grid(shapes.clone(), &shape).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{shapes}: {e}");
            assert!(e.message().contains("rectilinear"), "{e}");
        }
        let config = json!({"kind": "external", "chunk_shapes": [3]});
        let e = ChunkGrid::parse_rectilinear(Some(&config), &[3]).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        let e = ChunkGrid::parse_rectilinear(None, &[3]).unwrap_err();
        assert_eq!(e.kind(), "metadata");
    }
}
