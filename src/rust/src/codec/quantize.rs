//! `numcodecs.quantize` (Zarr v2 id `quantize`): numcodecs' `Quantize`
//! filter, lossy: each float becomes `rint(x * 2^b) / 2^b`, with `b` the
//! fewest bits that keep `digits` decimal digits after the point (computed
//! as numcodecs does), stored as `astype`; reading only casts back to
//! `dtype`. zarr-python 3 has it as an array -> array codec before `bytes`.
//! Configuration: `digits` (an integer), `dtype` and `astype` (NumPy float
//! type strings; `astype` is `dtype` when absent). NumPy computes in
//! `dtype`'s own type, float16 through float32.

use super::fixedscaleoffset::check_decoded_len;
use super::numeric::{elem_member, text_member, typed_config, Elem, Kind, Op};
use super::registry::{CodecSpec, Kind as ParamKind, Lit, Param};
use super::v2::{entry, members, V2Config};
use super::{BytesToBytes, CodecContext, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

pub const NAME: &str = "numcodecs.quantize";

const KEYS: [&str; 3] = ["digits", "dtype", "astype"];

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "quantize",
        from_v2: |cfg, typesize, _| {
            Ok(entry(NAME, cfg, &KEYS, Some(("astype", "dtype")), typesize))
        },
        to_v2: |cfg| members(cfg, &KEYS),
        filter: true,
    }),
    mode: Mode::ArrayToArray,
    params: &[
        Param::required("digits", ParamKind::Int(-300, 300)),
        Param::required(
            "dtype",
            ParamKind::Other("a NumPy float type string such as \"<f8\""),
        ),
        Param::optional(
            "astype",
            ParamKind::Other("a NumPy float type string (absent: dtype)"),
            Lit::Null,
        ),
    ],
    // New arrays: the array's type; digits has to be chosen.
    defaults: Some(|dtype, _| typed_config(dtype, &[], &["dtype", "astype"])),
    build: Some(|cfg, dtype| Ok(Box::new(Quantize::from_config(cfg, dtype)?))),
};

#[derive(Debug)]
pub struct Quantize {
    digits: i64,
    dtype: Elem,
    astype: Elem,
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
        let dtype = elem_member(config, NAME, "dtype", Some(array))?;
        let astype = match text_member(config, NAME, "astype")? {
            Some(s) => Elem::parse(s, NAME, "astype")?,
            None => dtype,
        };
        if dtype.kind != Kind::Float || astype.kind != Kind::Float {
            return Err(ZarrError::Unsupported(format!(
                "codec '{NAME}' is for floats, not {} -> {}",
                dtype.typestr(),
                astype.typestr()
            )));
        }
        Ok(Quantize {
            digits,
            dtype,
            astype,
            scale: scale_of(digits),
        })
    }
}

impl BytesToBytes for Quantize {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        super::config(&[
            ("digits", self.digits.into()),
            ("dtype", self.dtype.typestr().into()),
            ("astype", self.astype.typestr().into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let (d, a) = (self.dtype, self.astype);
        let n = d.count(input.len(), "quantize", "input")?;
        let s = d.round(self.scale);
        let mut v = d.read_floats(&input);
        for x in v.iter_mut() {
            *x = d.arith(Op::Div, d.arith(Op::Mul, s, *x).round_ties_even(), s);
        }
        let mut out = Vec::with_capacity(n * a.size);
        a.write_floats(&v, "quantize", &mut out)?;
        Ok(out)
    }

    fn decode_slice(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let (d, a) = (self.dtype, self.astype);
        let n = a.count(input.len(), "quantize", "encoded")?;
        check_decoded_len("quantize", n, d, decoded_len)?;
        let mut out = Vec::with_capacity(n * d.size);
        d.write_floats(&a.read_floats(input), "quantize", &mut out)?;
        Ok(out)
    }

    // Stored in the array's own type, the data are the decoded elements.
    fn decode(
        &self,
        input: Vec<u8>,
        decoded_len: Option<usize>,
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        if self.astype != self.dtype {
            return self.decode_slice(&input, decoded_len, ctx);
        }
        let n = self.dtype.count(input.len(), "quantize", "encoded")?;
        check_decoded_len("quantize", n, self.dtype, decoded_len)?;
        Ok(input)
    }
}
