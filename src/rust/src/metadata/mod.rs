// placeholder: filled in by the metadata work
use crate::dtype::DataType;
use crate::error::Result;
use crate::fill::FillValue;
use serde_json::{Map, Value};

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
    pub fn key(&self, _idx: &[u64]) -> String { todo!() }
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
