// placeholder: filled in by the codec work
use super::{BytesToBytes, CodecContext};
use crate::error::Result;
use serde_json::{Map, Value};
#[derive(Debug)]
pub struct Gzip { pub level: u32 }
impl Gzip { pub fn from_config(_c: &Map<String, Value>) -> Result<Gzip> { todo!() } }
impl BytesToBytes for Gzip {
    fn name(&self) -> &'static str { "gzip" }
    fn encode(&self, _i: Vec<u8>) -> Result<Vec<u8>> { todo!() }
    fn decode(&self, _i: Vec<u8>, _n: Option<usize>, _c: &CodecContext) -> Result<Vec<u8>> { todo!() }
    fn to_json(&self) -> Value { todo!() }
}
