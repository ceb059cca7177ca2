//! `numcodecs.quantize` (Zarr v2 id `quantize`): numcodecs' `Quantize`
//! filter, lossy: each float becomes `rint(x * 2^b) / 2^b`, with `b` the
//! fewest bits that keep `digits` decimal digits after the point (computed
//! as numcodecs does), stored as `astype`; reading only casts back to
//! `dtype`. zarr-python 3 has it as an array -> array codec before `bytes`.
//! Configuration: `digits` (an integer), `dtype` and `astype` (NumPy float
//! type strings; `astype` is `dtype` when absent). NumPy computes in
//! `dtype`'s own type, float16 through float32.

use super::numeric::{Kind, Op};
use super::registry::{CodecSpec, Kind as ParamKind, Param};
use super::retype::{retype_spec, Retype, TypeMembers};
use super::{BytesToBytes, DecodeTo};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};
use std::borrow::Cow;

pub const NAME: &str = "numcodecs.quantize";

static TYPES: TypeMembers = TypeMembers::optional(NAME, "dtype", "astype");

// New arrays: the array's type; digits has to be chosen.
pub static SPEC: CodecSpec = retype_spec!(
    "quantize",
    Quantize,
    &[
        Param::required("digits", ParamKind::Int(-300, 300)),
        TYPES.array_param("a NumPy float type string such as \"<f8\""),
        TYPES.stored_param("a NumPy float type string (absent: dtype)"),
    ],
    [],
);

#[derive(Debug)]
pub struct Quantize {
    digits: i64,
    types: Retype,
    /// 2^b, numcodecs' `scale`.
    scale: f64,
}

/// numcodecs' scale for `digits`: the power of two just above 10^digits
/// (1 for digits <= 0 rounded up to a power of ten), by its own steps.
fn scale_of(digits: i64) -> f64 {
    let precision = 10f64.powf(-(digits as f64));
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = 10f64.powf(-exp).log2().ceil();
    2f64.powf(bits)
}

impl Quantize {
    pub fn from_config(config: &Map<String, Value>, array: DataType) -> Result<Quantize> {
        let digits = SPEC.int(config, "digits")?;
        let types = TYPES.parse(config, array)?;
        if types.array.kind != Kind::Float || types.stored.kind != Kind::Float {
            return Err(ZarrError::Unsupported(format!(
                "codec '{NAME}' is for floats, not {types:?}"
            )));
        }
        Ok(Quantize {
            digits,
            types,
            scale: scale_of(digits),
        })
    }
}

impl BytesToBytes for Quantize {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        self.types
            .configuration(&[("digits", self.digits.into())], &SPEC.members())
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let d = self.types.array;
        let s = d.round(self.scale);
        self.types.encode_floats(&input, |x| {
            d.arith(Op::Div, d.arith(Op::Mul, s, x).round_ties_even(), s)
        })
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let general = |b: &[u8]| self.types.decode_floats(b, to.len, |x| x);
        self.types.cast_back(Cow::Borrowed(input), to.len, general)
    }

    fn decode(&self, input: Vec<u8>, to: DecodeTo) -> Result<Vec<u8>> {
        let general = |b: &[u8]| self.types.decode_floats(b, to.len, |x| x);
        self.types.cast_back(Cow::Owned(input), to.len, general)
    }
}
