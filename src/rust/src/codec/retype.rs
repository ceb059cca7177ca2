//! What numcodecs' filters that store an array's elements as elements of
//! another type share (fixedscaleoffset, quantize, astype): the two type
//! members of their configuration (NumPy type strings), how a Zarr v2
//! filter entry and a new array's configuration fill them, and the element
//! counts each pass checks before it computes. Each filter keeps only its
//! own members and arithmetic.

use super::numeric::{elem_member, text_member, typed_config, Elem};
use super::registry::{Kind, Lit, Param};
use super::typed::cast;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The names of a filter's two type members.
#[derive(PartialEq, Eq)]
pub struct TypeMembers {
    /// The filter's name in Zarr v3 metadata.
    codec: &'static str,
    /// The array's elements (numcodecs' `dtype`, `decode_dtype`).
    array: &'static str,
    /// The stored elements (`astype`, `encode_dtype`).
    stored: &'static str,
    /// Whether the stored type may be left out, meaning the array's.
    optional: bool,
}

impl TypeMembers {
    /// Filter `codec`'s members `array` and `stored`, which may be left
    /// out (then it is the array's type).
    pub const fn optional(codec: &'static str, array: &'static str, stored: &'static str) -> Self {
        TypeMembers {
            codec,
            array,
            stored,
            optional: true,
        }
    }

    /// Filter `codec`'s members `array` and `stored`, both required.
    pub const fn required(codec: &'static str, array: &'static str, stored: &'static str) -> Self {
        TypeMembers {
            codec,
            array,
            stored,
            optional: false,
        }
    }

    /// The declaration of the array's type member, which takes `what`.
    pub const fn array_param(&self, what: &'static str) -> Param {
        Param::required(self.array, Kind::Other(what))
    }

    /// The declaration of the stored type member, which takes `what`.
    pub const fn stored_param(&self, what: &'static str) -> Param {
        if self.optional {
            Param::optional(self.stored, Kind::Other(what), Lit::Null)
        } else {
            Param::required(self.stored, Kind::Other(what))
        }
    }

    /// The name messages use: numcodecs' id.
    fn short(&self) -> &'static str {
        self.codec.strip_prefix("numcodecs.").unwrap_or(self.codec)
    }

    /// The two element types `config` names; the array's must hold the
    /// elements of `dtype`.
    pub fn parse(&'static self, config: &Map<String, Value>, dtype: DataType) -> Result<Retype> {
        let array = elem_member(config, self.codec, self.array, Some(dtype))?;
        let stored = if self.optional {
            match text_member(config, self.codec, self.stored)? {
                Some(s) => Elem::parse(s, self.codec, self.stored)?,
                None => array,
            }
        } else {
            elem_member(config, self.codec, self.stored, None)?
        };
        Ok(Retype {
            members: self,
            array,
            stored,
        })
    }

    /// A new array's configuration: `plain`, and both types the array's,
    /// in the order of `keys` (the filter's declared members).
    pub fn defaults(
        &self,
        dtype: DataType,
        plain: &[(&str, Value)],
        keys: &[&str],
    ) -> Map<String, Value> {
        ordered(typed_config(dtype, plain, &[self.array, self.stored]), keys)
    }

    /// What a Zarr v2 entry's output elements are (see `v2::entry`): the
    /// stored type, or the array's where that may be left out.
    pub const fn v2_output(&self) -> Option<(&'static str, &'static str)> {
        let fallback = if self.optional {
            self.array
        } else {
            self.stored
        };
        Some((self.stored, fallback))
    }
}

/// The `CodecSpec` of a filter that stores the array's elements as
/// another type (numcodecs' id `$id`, built by `$codec::from_config`), of
/// the calling file's `NAME` and `TYPES`: its members `$params` (the type
/// members among them declared by `TYPES`), and `$new` the values of its
/// other members in a new array's configuration, whose types are the
/// array's.
macro_rules! retype_spec {
    ($id:literal, $codec:ty, $params:expr, $new:expr $(,)?) => {
        $crate::codec::registry::CodecSpec {
            name: NAME,
            v2: $crate::codec::v2::v2_carried!($id, filter: true, output: TYPES.v2_output()),
            mode: $crate::codec::Mode::ArrayToArray,
            params: $params,
            defaults: Some(|dtype, _| TYPES.defaults(dtype, &$new, &SPEC.members())),
            build: Some(|cfg, dtype| Ok(Box::new(<$codec>::from_config(cfg, dtype)?))),
        }
    };
}
pub(crate) use retype_spec;

/// A filter's two element types, as configured.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Retype {
    members: &'static TypeMembers,
    /// The array's elements: what encoding takes and decoding gives.
    pub array: Elem,
    /// The stored elements.
    pub stored: Elem,
}

impl std::fmt::Debug for Retype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.array.typestr(), self.stored.typestr())
    }
}

impl Retype {
    /// The number of array elements in `input`, which encoding takes.
    pub fn encoded(&self, input: &[u8]) -> Result<usize> {
        self.array.count(input.len(), self.members.short(), "input")
    }

    /// The number of stored elements in `input`, which decoding takes; they
    /// must make the `decoded_len` bytes expected.
    pub fn decoded(&self, input: &[u8], decoded_len: Option<usize>) -> Result<usize> {
        let n = self
            .stored
            .count(input.len(), self.members.short(), "encoded")?;
        let bytes = n * self.array.size;
        match decoded_len {
            Some(len) if len != bytes => Err(ZarrError::Codec(format!(
                "{}: {n} encoded elements give {bytes} bytes, expected {len}",
                self.members.short()
            ))),
            _ => Ok(n),
        }
    }

    /// Decoding that casts the stored elements back to the array's type
    /// (`len`: the bytes expected, when known): the typed cast where there
    /// is one, else `general`. Stored in the array's own type, the input
    /// is the decoded elements, and owned bytes are handed back unchanged.
    pub fn cast_back(
        &self,
        input: Cow<'_, [u8]>,
        len: Option<usize>,
        general: impl FnOnce(&[u8]) -> Result<Vec<u8>>,
    ) -> Result<Vec<u8>> {
        self.decoded(&input, len)?;
        if self.stored == self.array {
            return Ok(input.into_owned());
        }
        match cast(self.stored, self.array, &input)? {
            Some(out) => Ok(out),
            None => general(&input),
        }
    }

    /// Encoding through doubles, in one typed pass: the array's elements
    /// as f64, `f` applied to each, written as the stored type.
    pub fn encode_floats(&self, input: &[u8], f: impl Fn(f64) -> f64) -> Result<Vec<u8>> {
        let n = self.encoded(input)?;
        self.pass(self.array, self.stored, input, n, f)
    }

    /// Decoding through doubles: the stored elements as f64, `f` applied to
    /// each, written as the array's type.
    pub fn decode_floats(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
        f: impl Fn(f64) -> f64,
    ) -> Result<Vec<u8>> {
        let n = self.decoded(input, decoded_len)?;
        self.pass(self.stored, self.array, input, n, f)
    }

    fn pass(
        &self,
        from: Elem,
        to: Elem,
        input: &[u8],
        n: usize,
        f: impl Fn(f64) -> f64,
    ) -> Result<Vec<u8>> {
        let mut v = from.read_floats(input);
        for x in v.iter_mut() {
            *x = f(*x);
        }
        let mut out = Vec::with_capacity(n * to.size);
        to.write_floats(&v, self.members.short(), &mut out)?;
        Ok(out)
    }

    /// The filter's configuration: `plain` and both types, in the order of
    /// `keys` (its declared members).
    pub fn configuration(&self, plain: &[(&str, Value)], keys: &[&str]) -> Map<String, Value> {
        let mut all = super::config(plain);
        all.insert(self.members.array.into(), self.array.typestr().into());
        all.insert(self.members.stored.into(), self.stored.typestr().into());
        ordered(all, keys)
    }
}

/// The members of `all` in the order of `keys`.
fn ordered(mut all: Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| Some((k.to_string(), all.remove(*k)?)))
        .collect()
}
