//! `numcodecs.astype` (Zarr v2 id `astype`): numcodecs' `AsType` filter,
//! the array's elements (`decode_dtype`) stored as `encode_dtype` with
//! NumPy's casts (numeric.rs): integers wrap, floats round to the nearest
//! float of the type and truncate towards zero into integers. A float no
//! integer of the type holds is an error, where NumPy stores an arbitrary
//! value. zarr-python 3 has it as an array -> array codec before `bytes`.
//! Configuration: `encode_dtype` and `decode_dtype`, NumPy type strings.

use super::numeric::{unfit, Elem, Kind as ElemKind};
use super::registry::CodecSpec;
use super::retype::{retype_spec, Retype, TypeMembers};
use super::typed::cast;
use super::{BytesToBytes, DecodeTo};
use crate::dtype::DataType;
use crate::error::Result;
use serde_json::{Map, Value};
use std::borrow::Cow;

pub const NAME: &str = "numcodecs.astype";

static TYPES: TypeMembers = TypeMembers::required(NAME, "decode_dtype", "encode_dtype");

// New arrays: the array's own type (to be narrowed by the caller).
pub static SPEC: CodecSpec = retype_spec!(
    "astype",
    AsType,
    &[
        TYPES.stored_param("a NumPy type string such as \"<f4\""),
        TYPES.array_param("a NumPy type string such as \"<f8\""),
    ],
    [],
);

#[derive(Debug)]
pub struct AsType(Retype);

impl AsType {
    pub fn from_config(config: &Map<String, Value>, array: DataType) -> Result<AsType> {
        Ok(AsType(TYPES.parse(config, array)?))
    }

    /// Through doubles, in typed passes, where that is exact: from floats,
    /// or from integers of at most 4 bytes, into floats.
    fn via_doubles(from: Elem, to: Elem) -> bool {
        from.kind == ElemKind::Float || (to.kind == ElemKind::Float && from.size <= 4)
    }

    /// Element by element, with NumPy's integer casts.
    fn cast(from: Elem, to: Elem, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(input.len() / from.size * to.size);
        for b in input.chunks_exact(from.size) {
            let v = from.read(b);
            to.write(to.cast(v).ok_or_else(|| unfit("astype", v, to))?, &mut out);
        }
        Ok(out)
    }
}

impl BytesToBytes for AsType {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        self.0.configuration(&[], &SPEC.members())
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let t = self.0;
        t.encoded(&input)?;
        if t.array == t.stored {
            return Ok(input);
        }
        if let Some(out) = cast(t.array, t.stored, &input)? {
            return Ok(out);
        }
        if AsType::via_doubles(t.array, t.stored) {
            return t.encode_floats(&input, |x| x);
        }
        AsType::cast(t.array, t.stored, &input)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let general = |b: &[u8]| self.decode_general(b, to.len);
        self.0.cast_back(Cow::Borrowed(input), to.len, general)
    }

    fn decode(&self, input: Vec<u8>, to: DecodeTo) -> Result<Vec<u8>> {
        let general = |b: &[u8]| self.decode_general(b, to.len);
        self.0.cast_back(Cow::Owned(input), to.len, general)
    }
}

impl AsType {
    /// `decode_slice` element by element, for the types the typed loops
    /// leave out; it names a value the array's type cannot hold.
    pub(crate) fn decode_general(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
    ) -> Result<Vec<u8>> {
        let t = self.0;
        if AsType::via_doubles(t.stored, t.array) {
            return t.decode_floats(input, decoded_len, |x| x);
        }
        t.decoded(input, decoded_len)?;
        AsType::cast(t.stored, t.array, input)
    }
}
