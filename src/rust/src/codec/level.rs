//! The compressors whose configuration is one integer (`gzip`,
//! `numcodecs.zlib`, `numcodecs.bz2`, `numcodecs.lz4`): one codec type for
//! all of them. Each one's file declares its spec with `level_codec_spec!`
//! and gives the two functions that differ, compress and decompress.

use super::registry::CodecSpec;
use super::{BytesToBytes, DecodeTo};
use crate::error::Result;
use serde_json::{Map, Value};

/// What tells the compressors apart.
pub struct Ops {
    /// `input` compressed with the member's value (a level, or lz4's
    /// acceleration).
    pub compress: fn(value: i64, input: &[u8]) -> Result<Vec<u8>>,
    /// `input` decompressed; `decoded_len`, when known, is the exact size
    /// the output must have (see `BytesToBytes::decode`).
    pub decompress: fn(input: &[u8], decoded_len: Option<usize>) -> Result<Vec<u8>>,
}

/// A compressor of a spec whose one member is an integer, with its value.
pub struct LevelCodec {
    spec: &'static CodecSpec,
    ops: &'static Ops,
    value: i64,
}

impl std::fmt::Debug for LevelCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.spec.name, self.value)
    }
}

impl LevelCodec {
    /// The codec of `spec` from `config`, its member checked against the
    /// spec's declaration.
    pub fn new(
        spec: &'static CodecSpec,
        ops: &'static Ops,
        config: &Map<String, Value>,
    ) -> Result<LevelCodec> {
        let value = spec.int(config, spec.params[0].key)?;
        Ok(LevelCodec { spec, ops, value })
    }

    /// The configured value (level or acceleration).
    pub fn value(&self) -> i64 {
        self.value
    }
}

impl BytesToBytes for LevelCodec {
    fn spec(&self) -> &'static CodecSpec {
        self.spec
    }

    fn configuration(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(self.spec.params[0].key.into(), self.value.into());
        m
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        (self.ops.compress)(self.value, &input)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        (self.ops.decompress)(input, to.len)
    }
}

/// The `CodecSpec` of a compressor whose one configuration member is an
/// integer: its zarr.json name, numcodecs `id`, the member (a `Param`),
/// the member's value when a v2 configuration omits it, the value new
/// arrays get. The calling file's `compress` and `decompress` functions
/// are its `Ops`.
macro_rules! level_codec_spec {
    ($name:expr, $id:literal, $param:expr, $v2_default:literal, $default:literal $(,)?) => {
        $crate::codec::registry::CodecSpec {
            name: $name,
            v2: Some($crate::codec::v2::V2Config {
                id: $id,
                from_v2: |cfg, typesize, _| {
                    $crate::codec::v2::int_compressor($name, cfg, $param.key, $v2_default, typesize)
                },
                to_v2: |cfg| $crate::codec::v2::members(cfg, &[$param.key]),
                filter: false,
            }),
            mode: $crate::codec::Mode::BytesToBytes,
            params: &[$param],
            defaults: Some(|_, _| $crate::codec::config(&[($param.key, $default.into())])),
            build: Some(|cfg, _| {
                // The calling file's own two functions.
                static OPS: $crate::codec::level::Ops = $crate::codec::level::Ops {
                    compress,
                    decompress,
                };
                let c = $crate::codec::level::LevelCodec::new(&SPEC, &OPS, cfg)?;
                Ok(Box::new(c))
            }),
        }
    };
}
pub(crate) use level_codec_spec;

#[cfg(test)]
#[path = "level_tests.rs"]
mod tests;
