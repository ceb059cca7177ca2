//! Codec chains (v3-core.rst "Codecs"). Codecs are sorted by what they take
//! and give: array -> array (`transpose`), array -> bytes (`bytes`), and
//! bytes -> bytes (`gzip`, `zstd`, `blosc`, `crc32c`). The engine never
//! permutes element data for `transpose`: it reads the composed order as
//! strides (see `transpose::stored_strides`) and scatters straight into R's
//! column-major buffer.

use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};
use std::sync::Mutex;

pub mod astype;
pub mod bitround;
pub mod blosc;
pub mod bytes;
pub mod bz2;
pub mod cast_value;
pub mod categorize;
mod chain;
pub mod checksum32;
pub mod crc32c;
pub mod delta;
pub mod fixed_string;
pub mod fixedscaleoffset;
pub mod gzip;
pub mod level;
mod limited;
pub mod lz4;
pub mod lzma;
pub mod numeric;
pub mod packbits;
pub mod pcodec;
pub mod quantize;
pub mod registry;
pub mod retype;
pub mod scale_offset;
pub mod sharding;
pub mod shuffle;
#[cfg(test)]
mod test_util;
pub mod transpose;
pub mod typed;
pub mod v2;
pub mod value;
pub mod vlen;
pub mod zfp;
pub mod zlib;
pub mod zstd;

#[cfg(test)]
use chain::bytes_to_bytes;
pub use chain::{bytes_codec_from_json, ArrayToBytes, CodecChain, ValueCodec};
pub use registry::{configuration_members, spec, spec_of_v2_id, CodecSpec, REGISTRY};

/// What a codec takes and gives, which fixes its place in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::ArrayToArray => "array -> array",
            Mode::ArrayToBytes => "array -> bytes",
            Mode::BytesToBytes => "bytes -> bytes",
        }
    }
}

/// A configuration object from its members.
pub(crate) fn config(members: &[(&str, Value)]) -> Map<String, Value> {
    members
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Warnings raised while decoding in worker threads, handed to R afterwards.
#[derive(Debug, Default)]
pub struct Warnings(Mutex<Vec<String>>);

impl Warnings {
    pub fn push(&self, msg: String) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// What a decode may need besides its input.
#[derive(Clone, Copy)]
pub struct CodecContext<'a> {
    /// A checksum mismatch is an error (true) or a warning (false, the default).
    pub strict_checksums: bool,
    pub warnings: &'a Warnings,
    /// Names the chunk in messages, e.g. "array '/t' chunk 'c/0/1'".
    pub what: &'a str,
}

impl<'a> CodecContext<'a> {
    /// A checksum mismatch, described by `msg`: an error under
    /// `strict_checksums`, else a warning (the data is still returned).
    pub fn mismatch(&self, msg: String) -> Result<()> {
        if self.strict_checksums {
            return Err(ZarrError::Checksum(msg));
        }
        self.warnings.push(msg);
        Ok(())
    }

    /// What a codec that must give `len` bytes (when known) is told.
    pub fn decode_to(self, len: Option<usize>) -> DecodeTo<'a> {
        DecodeTo { len, ctx: self }
    }
}

/// What one codec's decode is told besides its input.
#[derive(Clone, Copy)]
pub struct DecodeTo<'a> {
    /// The size the output must have, known when the codec is the first
    /// after array -> bytes (lets decompressors allocate once).
    pub len: Option<usize>,
    pub ctx: CodecContext<'a>,
}

pub trait BytesToBytes: Send + Sync + std::fmt::Debug {
    /// The codec's declaration in the registry.
    fn spec(&self) -> &'static CodecSpec;
    fn name(&self) -> &'static str {
        self.spec().name
    }
    /// The configuration as the codec writes it to zarr.json.
    fn configuration(&self) -> Map<String, Value>;
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>>;
    /// `encode` into `out`, whose memory is reused (its contents are
    /// replaced); None where the codec cannot, and `encode` must be used.
    fn encode_into(&self, _input: &[u8], _out: &mut Vec<u8>) -> Option<Result<()>> {
        None
    }
    /// Decode `input` to `to.len` bytes when that is known. The bytes may
    /// belong to a larger buffer (an inner chunk in a shard fetched whole),
    /// so codecs read them where they are.
    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>>;
    /// `decode_slice` of bytes the codec may keep: a codec whose output is
    /// its input cut short (crc32c) gives back the same buffer.
    fn decode(&self, input: Vec<u8>, to: DecodeTo) -> Result<Vec<u8>> {
        self.decode_slice(&input, to)
    }
    /// `encode` of the elements of a chunk of `shape` (C order, after the
    /// transposes): array -> bytes codecs that compress fields (zfp)
    /// need it; the others ignore it.
    fn encode_shaped(&self, input: Vec<u8>, _shape: &[usize]) -> Result<Vec<u8>> {
        self.encode(input)
    }
    /// `decode_slice` into the elements of a chunk of `shape`.
    fn decode_shaped(&self, input: &[u8], _shape: &[usize], to: DecodeTo) -> Result<Vec<u8>> {
        self.decode_slice(input, to)
    }
    /// Whether the codec reads its input's elements as little endian
    /// whatever the array's byte order (bitround, whose configuration has
    /// no type string to say it).
    fn little_endian_input(&self) -> bool {
        false
    }
    /// The `{"name": ..., "configuration": ...}` entry of zarr.json (a
    /// codec without members writes its name alone, as zarr-python does).
    fn to_json(&self) -> Value {
        let cfg = self.configuration();
        let mut entry = Map::new();
        entry.insert("name".into(), self.name().into());
        // zarr-python's numcodecs.* codecs refuse an entry without one.
        if !cfg.is_empty() || self.name().starts_with("numcodecs.") {
            entry.insert("configuration".into(), Value::Object(cfg));
        }
        Value::Object(entry)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod registry_tests;

#[cfg(test)]
mod filters_tests;
