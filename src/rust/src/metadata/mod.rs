//! Node metadata of Zarr v3 (v3-core.rst, "Metadata"), with the regular chunk
//! grid (v3-chunk-grids-regular-grid.rst) and the `default` and `v2` chunk key
//! encodings (v3-chunk-key-encodings-default.rst, -v2.rst). The JSON side
//! lives in `v3`.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
pub use crate::grid::ChunkGrid;
use serde_json::{json, Map, Value};

mod documents;
pub mod numpy_types;
mod r_form;
pub mod strict;
pub mod structs;
#[cfg(test)]
mod test_util;
pub mod v2;
pub mod v3;

pub use documents::{
    documents, read_node, read_node_by, read_node_warning, v2_consolidated_document,
    v2_consolidated_each, v2_consolidated_each_doc, v2_consolidated_nodes,
};
pub use r_form::{
    canonical, canonical_value, parse_r_form, parse_r_form_value, r_form, unreadable, UNREADABLE,
};

/// The error of a document that breaks its spec.
fn malformed(msg: impl Into<String>) -> ZarrError {
    ZarrError::Metadata(msg.into())
}

/// A chunk shape must have one positive extent per dimension of `shape`;
/// `label` names the member in messages (".zarray: chunks").
pub(crate) fn check_chunk_shape(chunks: &[u64], shape: &[u64], label: &str) -> Result<()> {
    if chunks.len() != shape.len() {
        return Err(malformed(format!(
            "{label} {chunks:?} has {} dimensions but shape {shape:?} has {}",
            chunks.len(),
            shape.len()
        )));
    }
    if chunks.contains(&0) {
        return Err(malformed(format!(
            "{label} {chunks:?} entries must be greater than 0"
        )));
    }
    Ok(())
}

/// A list of non-negative integers (a shape); `what` names it in errors.
fn u64_list(v: &Value, what: &str) -> Result<Vec<u64>> {
    let want = || {
        malformed(format!(
            "{what} must be an array of non-negative integers, got {v}"
        ))
    };
    v.as_array()
        .ok_or_else(want)?
        .iter()
        .map(|x| x.as_u64().ok_or_else(want))
        .collect()
}

pub use crate::key::ChunkKeyEncoding;

#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadata {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    /// The regular grid's chunk shape; for a rectilinear grid, each
    /// dimension's longest chunk (what a buffer for any chunk must hold).
    pub chunk_shape: Vec<u64>,
    /// The chunk edges of a `rectilinear` chunk grid; None for a regular one.
    pub rectilinear: Option<ChunkGrid>,
    pub chunk_key_encoding: ChunkKeyEncoding,
    pub fill_value: FillValue,
    /// The codecs as written in zarr.json (validated by CodecChain::from_json).
    pub codecs: Vec<Value>,
    pub attributes: Map<String, Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
    pub storage_transformers: Vec<Value>,
    /// Other top-level members (extensions with must_understand false), kept verbatim.
    pub extra: Map<String, Value>,
    /// 3, or 2 for arrays described by .zarray documents.
    pub zarr_format: u8,
    /// Whether elements equal to the fill value read as NA. False only for
    /// Zarr v2 arrays whose fill_value is null (no missing-value marker).
    pub fill_marks_na: bool,
}

impl ArrayMetadata {
    /// An array with the defaults zarr-python uses for a new array: `/`
    /// chunk keys, a zero fill value and a little-endian `bytes` codec.
    pub fn new(shape: Vec<u64>, data_type: DataType, chunk_shape: Vec<u64>) -> ArrayMetadata {
        ArrayMetadata {
            shape,
            data_type,
            chunk_shape,
            rectilinear: None,
            chunk_key_encoding: ChunkKeyEncoding::default(),
            fill_value: FillValue::zero(data_type),
            zarr_format: 3,
            fill_marks_na: true,
            codecs: vec![json!({"name": "bytes", "configuration": {"endian": "little"}})],
            attributes: Map::new(),
            dimension_names: None,
            storage_transformers: Vec::new(),
            extra: Map::new(),
        }
    }

    /// The invariants `v3::parse` guarantees, for metadata built in code
    /// before it is written.
    pub fn validate(&self) -> Result<()> {
        let rank = self.shape.len();
        if self.chunk_shape.len() != rank {
            return Err(ZarrError::Metadata(format!(
                "chunk_grid: chunk_shape has {} dimensions but shape has {rank}",
                self.chunk_shape.len()
            )));
        }
        if self.chunk_shape.contains(&0) {
            return Err(ZarrError::Metadata(
                "chunk_grid: chunk_shape entries must be greater than 0".into(),
            ));
        }
        if let Some(g) = &self.rectilinear {
            g.check_covers(&self.shape, "chunk_grid (rectilinear): chunk_shapes")?;
        }
        if self.data_type != DataType::String
            && self.fill_value.bytes.len() != self.data_type.size()
        {
            return Err(ZarrError::Metadata(format!(
                "fill_value has {} bytes but {} needs {}",
                self.fill_value.bytes.len(),
                self.data_type.name(),
                self.data_type.size()
            )));
        }
        if self.codecs.is_empty() {
            return Err(ZarrError::Metadata("codecs must not be empty".into()));
        }
        if let Some(names) = &self.dimension_names {
            if names.len() != rank {
                return Err(ZarrError::Metadata(format!(
                    "dimension_names has {} entries but shape has {rank}",
                    names.len()
                )));
            }
        }
        Ok(())
    }

    /// Chunks along each dimension: ceil(shape / chunk_shape) for a
    /// regular grid.
    pub fn grid_shape(&self) -> Vec<u64> {
        self.grid().grid_shape(&self.shape)
    }

    /// The chunk grid, regular or rectilinear.
    pub fn grid(&self) -> ChunkGrid {
        match &self.rectilinear {
            Some(g) => g.clone(),
            None => ChunkGrid::regular(&self.chunk_shape),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadata {
    pub attributes: Map<String, Value>,
    pub extra: Map<String, Value>,
    /// 3, or 2 for groups described by .zgroup documents (0 reads as 3).
    pub zarr_format: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeMetadata {
    Array(ArrayMetadata),
    Group(GroupMetadata),
}

impl NodeMetadata {
    pub fn attributes(&self) -> &Map<String, Value> {
        match self {
            NodeMetadata::Array(a) => &a.attributes,
            NodeMetadata::Group(g) => &g.attributes,
        }
    }

    /// The zarr.json document, pretty-printed as zarr-python writes it.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(&v3::to_json(self)).expect("a Value always serialises")
    }
}

impl NodeMetadata {
    pub fn zarr_format(&self) -> u8 {
        match self {
            NodeMetadata::Array(a) => a.zarr_format,
            NodeMetadata::Group(g) if g.zarr_format == 2 => 2,
            NodeMetadata::Group(_) => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_new_is_valid_and_round_trips() {
        let mut m = ArrayMetadata::new(vec![10, 7], DataType::Float32, vec![3, 7]);
        m.validate().unwrap();
        assert_eq!(m.grid_shape(), vec![4, 1]);
        let node = NodeMetadata::Array(m.clone());
        assert_eq!(v3::parse(node.to_json_string().as_bytes()).unwrap(), node);
        m.chunk_shape = vec![3];
        assert_eq!(m.validate().unwrap_err().kind(), "metadata");
        m.chunk_shape = vec![3, 0];
        assert_eq!(m.validate().unwrap_err().kind(), "metadata");
    }
}
