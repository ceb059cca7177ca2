// placeholder: filled in by the codec work
use super::{BytesToBytes, CodecContext};
use crate::error::Result;
use serde_json::{Map, Value};
#[derive(Debug)]
pub struct Blosc { pub cname: String, pub clevel: u8, pub shuffle: u8, pub typesize: usize, pub blocksize: usize }
impl Blosc { pub fn from_config(_c: &Map<String, Value>, _d: crate::dtype::DataType) -> Result<Blosc> { todo!() } }
impl BytesToBytes for Blosc {
    fn name(&self) -> &'static str { "blosc" }
    fn encode(&self, _i: Vec<u8>) -> Result<Vec<u8>> { todo!() }
    fn decode(&self, _i: Vec<u8>, _n: Option<usize>, _c: &CodecContext) -> Result<Vec<u8>> { todo!() }
    fn to_json(&self) -> Value { todo!() }
}
