//! Node metadata of Zarr v3 (v3-core.rst, "Metadata"), with the regular chunk
//! grid (v3-chunk-grids-regular-grid.rst) and the `default` and `v2` chunk key
//! encodings (v3-chunk-key-encodings-default.rst, -v2.rst). The JSON side
//! lives in `v3`.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
use serde_json::{json, Map, Value};

pub mod v2;
pub mod v3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// "c" then the indices joined by the separator; 0-d arrays use "c".
    Default { separator: char },
    /// indices joined by the separator; 0-d arrays use "0".
    V2 { separator: char },
}

impl ChunkKeyEncoding {
    /// The key of chunk `idx`, relative to the array's prefix.
    pub fn key(&self, idx: &[u64]) -> String {
        match *self {
            ChunkKeyEncoding::Default { separator } => {
                let mut key = String::from("c");
                for i in idx {
                    key.push(separator);
                    key.push_str(&i.to_string());
                }
                key
            }
            ChunkKeyEncoding::V2 { separator } => {
                if idx.is_empty() {
                    return "0".to_string();
                }
                let parts: Vec<String> = idx.iter().map(u64::to_string).collect();
                parts.join(&separator.to_string())
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ChunkKeyEncoding::Default { .. } => "default",
            ChunkKeyEncoding::V2 { .. } => "v2",
        }
    }

    pub fn separator(&self) -> char {
        match *self {
            ChunkKeyEncoding::Default { separator } | ChunkKeyEncoding::V2 { separator } => {
                separator
            }
        }
    }

    /// The `chunk_key_encoding` member, separator always written out.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name(), "configuration": {"separator": self.separator().to_string()}})
    }
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        ChunkKeyEncoding::Default { separator: '/' }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadata {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    pub chunk_shape: Vec<u64>,
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
        if self.fill_value.bytes.len() != self.data_type.size() {
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

    /// Chunks along each dimension: ceil(shape / chunk_shape).
    pub fn grid_shape(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.chunk_shape)
            .map(|(&n, &c)| n.div_ceil(c))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadata {
    pub attributes: Map<String, Value>,
    pub extra: Map<String, Value>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_default_chunk_keys() {
        let slash = ChunkKeyEncoding::Default { separator: '/' };
        let dot = ChunkKeyEncoding::Default { separator: '.' };
        assert_eq!(slash.key(&[1, 23, 45]), "c/1/23/45");
        assert_eq!(dot.key(&[1, 23, 45]), "c.1.23.45");
        assert_eq!(slash.key(&[0]), "c/0");
        assert_eq!(slash.key(&[]), "c");
        assert_eq!(dot.key(&[]), "c");
    }

    #[test]
    fn metadata_v2_chunk_keys() {
        let dot = ChunkKeyEncoding::V2 { separator: '.' };
        let slash = ChunkKeyEncoding::V2 { separator: '/' };
        assert_eq!(dot.key(&[1, 23, 45]), "1.23.45");
        assert_eq!(slash.key(&[1, 23, 45]), "1/23/45");
        assert_eq!(dot.key(&[7]), "7");
        assert_eq!(dot.key(&[]), "0");
        assert_eq!(slash.key(&[]), "0");
    }

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
