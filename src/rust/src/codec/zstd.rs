// placeholder: filled in by the codec work
use super::{BytesToBytes, CodecContext};
use crate::error::Result;
use serde_json::{Map, Value};
#[derive(Debug)]
pub struct Zstd { pub level: i32, pub checksum: bool }
impl Zstd { pub fn from_config(_c: &Map<String, Value>) -> Result<Zstd> { todo!() } }
impl BytesToBytes for Zstd {
    fn name(&self) -> &'static str { "zstd" }
    fn encode(&self, _i: Vec<u8>) -> Result<Vec<u8>> { todo!() }
    fn decode(&self, _i: Vec<u8>, _n: Option<usize>, _c: &CodecContext) -> Result<Vec<u8>> { todo!() }
    fn to_json(&self) -> Value { todo!() }
}
