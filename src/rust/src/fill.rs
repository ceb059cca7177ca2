// placeholder: filled in by the metadata work
use crate::dtype::DataType;
use crate::error::Result;
use serde_json::Value;

/// A fill value as the native-endian bytes of one element of its data type.
#[derive(Debug, Clone, PartialEq)]
pub struct FillValue {
    pub bytes: Vec<u8>,
}

impl FillValue {
    /// Parse any JSON form v3-core.rst allows for `dtype`.
    pub fn parse(_json: &Value, _dtype: DataType) -> Result<FillValue> { todo!() }
    /// The canonical JSON form (numbers; "NaN"/"Infinity"/"-Infinity"; [re, im]; booleans).
    pub fn to_json(&self, _dtype: DataType) -> Value { todo!() }
    /// All-zero bytes: false, 0, 0.0, 0+0i.
    pub fn zero(dtype: DataType) -> FillValue { FillValue { bytes: vec![0; dtype.size()] } }
}
