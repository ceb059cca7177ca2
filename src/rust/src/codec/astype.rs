//! `numcodecs.astype` (Zarr v2 id `astype`): numcodecs' `AsType` filter,
//! the array's elements (`decode_dtype`) stored as `encode_dtype` with
//! NumPy's casts (numeric.rs): integers wrap, floats round to the nearest
//! float of the type and truncate towards zero into integers. A float no
//! integer of the type holds is an error, where NumPy stores an arbitrary
//! value. zarr-python 3 has it as an array -> array codec before `bytes`.
//! Configuration: `encode_dtype` and `decode_dtype`, NumPy type strings.

use super::fixedscaleoffset::check_decoded_len;
use super::numeric::{elem_member, typed_config, unfit, Elem, Kind as ElemKind};
use super::registry::{CodecSpec, Kind, Param};
use super::v2::{entry, members, V2Config};
use super::{BytesToBytes, CodecContext, Mode};
use crate::dtype::DataType;
use crate::error::Result;
use serde_json::{Map, Value};

pub const NAME: &str = "numcodecs.astype";

const KEYS: [&str; 2] = ["encode_dtype", "decode_dtype"];

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "astype",
        from_v2: |cfg, typesize, _| {
            let out = Some(("encode_dtype", "encode_dtype"));
            Ok(entry(NAME, cfg, &KEYS, out, typesize))
        },
        to_v2: |cfg| members(cfg, &KEYS),
        filter: true,
    }),
    mode: Mode::ArrayToArray,
    params: &[
        Param::required(
            "encode_dtype",
            Kind::Other("a NumPy type string such as \"<f4\""),
        ),
        Param::required(
            "decode_dtype",
            Kind::Other("a NumPy type string such as \"<f8\""),
        ),
    ],
    // New arrays: the array's own type (to be narrowed by the caller).
    defaults: Some(|dtype, _| typed_config(dtype, &[], &["encode_dtype", "decode_dtype"])),
    build: Some(|cfg, dtype| Ok(Box::new(AsType::from_config(cfg, dtype)?))),
};

#[derive(Debug)]
pub struct AsType {
    encode: Elem,
    decode: Elem,
}

impl AsType {
    pub fn from_config(config: &Map<String, Value>, array: DataType) -> Result<AsType> {
        Ok(AsType {
            encode: elem_member(config, NAME, "encode_dtype", None)?,
            decode: elem_member(config, NAME, "decode_dtype", Some(array))?,
        })
    }

    fn cast(from: Elem, to: Elem, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(input.len() / from.size * to.size);
        // Through doubles, in typed passes, where that is exact: from
        // floats, or from integers of at most 4 bytes, into floats.
        if from.kind == ElemKind::Float || (to.kind == ElemKind::Float && from.size <= 4) {
            to.write_floats(&from.read_floats(input), "astype", &mut out)?;
            return Ok(out);
        }
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
        super::config(&[
            ("encode_dtype", self.encode.typestr().into()),
            ("decode_dtype", self.decode.typestr().into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        self.decode.count(input.len(), "astype", "input")?;
        AsType::cast(self.decode, self.encode, &input)
    }

    fn decode_slice(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let n = self.encode.count(input.len(), "astype", "encoded")?;
        check_decoded_len("astype", n, self.decode, decoded_len)?;
        AsType::cast(self.encode, self.decode, input)
    }
}
