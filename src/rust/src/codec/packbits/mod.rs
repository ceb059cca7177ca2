//! Packing values into fewer bits, under two names:
//!
//! - `numcodecs.packbits` (Zarr v2 id `packbits`): numcodecs' `PackBits`,
//!   booleans eight to a byte (the first in the highest bit, as NumPy's
//!   `packbits`), behind one byte that counts the padding bits of the
//!   last. For bool arrays; no configuration. zarr-python 3 has it as an
//!   array -> array codec (bool -> uint8) before `bytes`.
//! - `packbits` (zarr-extensions codecs/packbits): an array -> bytes codec
//!   that keeps bits `first_bit` to `last_bit` of each element (of each
//!   part of a complex number), packed from the lowest bit up, with the
//!   count of padding bits in a first or last byte or nowhere
//!   (`padding_encoding`); see extension.rs.
//!
//! Both pack booleans with bools.rs, a word at a time.

use super::registry::CodecSpec;
use super::v2::V2Config;
use super::{BytesToBytes, DecodeTo, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use bools::BitOrder;
use serde_json::{json, Map, Value};

mod bools;
mod extension;
#[cfg(test)]
mod tests;

pub use extension::{BitPacking, REGISTRY_NAME, REGISTRY_SPEC};

pub const NAME: &str = "numcodecs.packbits";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "packbits",
        from_v2: |_, typesize, _| {
            *typesize = 1;
            Ok(json!({"name": NAME, "configuration": {}}))
        },
        to_v2: |_| Map::new(),
        filter: true,
    }),
    mode: Mode::ArrayToArray,
    params: &[],
    defaults: Some(|_, _| Map::new()),
    build: Some(|_, dtype| {
        if dtype != DataType::Bool {
            return Err(ZarrError::Unsupported(format!(
                "codec '{NAME}' is for bool arrays, not {}",
                dtype.name()
            )));
        }
        Ok(Box::new(PackBits))
    }),
};

#[derive(Debug)]
pub struct PackBits;

impl BytesToBytes for PackBits {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        Map::new()
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let padding = (8 - input.len() % 8) % 8;
        let mut out = Vec::with_capacity(input.len() / 8 + 2);
        out.push(padding as u8);
        bools::pack(&input, BitOrder::MsbFirst, &mut out);
        Ok(out)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let (&padding, packed) = input
            .split_first()
            .ok_or_else(|| ZarrError::Codec("packbits: no bytes to decode".into()))?;
        let n = (packed.len() * 8).checked_sub(padding as usize);
        let n = match n {
            Some(n) if padding < 8 && (padding == 0 || !packed.is_empty()) => n,
            _ => {
                return Err(ZarrError::Codec(format!(
                    "packbits: {padding} padding bits in {} packed bytes",
                    packed.len()
                )))
            }
        };
        if let Some(len) = to.len {
            if len != n {
                return Err(ZarrError::Codec(format!(
                    "packbits: {n} booleans, expected {len}"
                )));
            }
        }
        Ok(bools::unpack(packed, n, BitOrder::MsbFirst))
    }
}
