//! `numcodecs.fixedscaleoffset` (Zarr v2 id `fixedscaleoffset`): numcodecs'
//! `FixedScaleOffset` filter, `round((x - offset) * scale)` stored as
//! `astype`, and `stored / scale + offset` read back as `dtype`.
//!
//! zarr-python 3 has it as an array -> array codec before `bytes`; the
//! engine runs it on the elements right after `bytes` (numeric.rs), which
//! gives the same bytes. Configuration: `offset` and `scale` (numbers),
//! `dtype` (the array's elements, a NumPy type string) and `astype` (the
//! stored elements; `dtype` when absent).
//!
//! The arithmetic is NumPy's with numcodecs' Python numbers: float arrays
//! compute in their own type; integer arrays with an integer `offset`
//! subtract in their own type (wrapping), and with an integer `scale` too
//! multiply there, otherwise in float64; reading divides integers in
//! float64 and floats in their own type. A value that does not fit
//! `astype` (or `dtype` when read) is an error, where numcodecs would
//! store an arbitrary one.

use super::numeric::{elem_member, text_member, typed_config, unfit, Elem, Kind, Num, Op};
use super::registry::{CodecSpec, Kind as ParamKind, Lit, Param};
use super::v2::{entry, members, V2Config};
use super::{BytesToBytes, CodecContext, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

pub const NAME: &str = "numcodecs.fixedscaleoffset";

const KEYS: [&str; 4] = ["offset", "scale", "dtype", "astype"];

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "fixedscaleoffset",
        from_v2: |cfg, typesize, _| {
            Ok(entry(NAME, cfg, &KEYS, Some(("astype", "dtype")), typesize))
        },
        to_v2: |cfg| members(cfg, &KEYS),
        filter: true,
    }),
    mode: Mode::ArrayToArray,
    params: &[
        Param::required("offset", ParamKind::Other("a number")),
        Param::required("scale", ParamKind::Other("a number")),
        Param::required(
            "dtype",
            ParamKind::Other("a NumPy type string such as \"<f8\""),
        ),
        Param::optional(
            "astype",
            ParamKind::Other("a NumPy type string (absent: dtype)"),
            Lit::Null,
        ),
    ],
    // New arrays: no change of scale, stored in the array's own type.
    defaults: Some(|dtype, _| {
        let plain = [("offset", 0.into()), ("scale", 1.into())];
        typed_config(dtype, &plain, &["dtype", "astype"])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(FixedScaleOffset::from_config(cfg, dtype)?))),
};

#[derive(Debug)]
pub struct FixedScaleOffset {
    /// As configured (an integer or a float), to write back unchanged.
    offset: Value,
    scale: Value,
    dtype: Elem,
    astype: Elem,
}

/// A number member: Int when JSON holds an integer (Python's int).
fn number(config: &Map<String, Value>, key: &str) -> Result<(Value, Num)> {
    let v = config.get(key).filter(|v| !v.is_null()).ok_or_else(|| {
        ZarrError::Metadata(format!("codec '{NAME}': configuration has no '{key}'"))
    })?;
    let n = match (v.as_i64(), v.as_u64(), v.as_f64()) {
        (Some(i), _, _) => Num::Int(i.into()),
        (_, Some(u), _) => Num::Int(u.into()),
        (_, _, Some(x)) => Num::Float(x),
        _ => {
            return Err(ZarrError::Metadata(format!(
                "codec '{NAME}': {key} must be a number, not {v}"
            )))
        }
    };
    Ok((v.clone(), n))
}

impl FixedScaleOffset {
    pub fn from_config(config: &Map<String, Value>, array: DataType) -> Result<FixedScaleOffset> {
        let (offset, off) = number(config, "offset")?;
        let (scale, sc) = number(config, "scale")?;
        let dtype = elem_member(config, NAME, "dtype", Some(array))?;
        let astype = match text_member(config, NAME, "astype")? {
            Some(s) => Elem::parse(s, NAME, "astype")?,
            None => dtype,
        };
        // NumPy refuses a Python integer its integer array cannot hold.
        if dtype.kind != Kind::Float {
            for (key, n) in [("offset", off), ("scale", sc)] {
                if let Num::Int(i) = n {
                    if dtype.wrap(i) != i {
                        return Err(ZarrError::Metadata(format!(
                            "codec '{NAME}': {key} {i} does not fit in dtype {}",
                            dtype.typestr()
                        )));
                    }
                }
            }
        }
        Ok(FixedScaleOffset {
            offset,
            scale,
            dtype,
            astype,
        })
    }

    fn num(v: &Value) -> Num {
        match v.as_i64() {
            Some(i) => Num::Int(i.into()),
            None => Num::Float(v.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// `a op b` with NumPy's types: `a` an element of type `t` (or a
    /// float64 intermediate when `t` is None), `b` a Python number.
    fn step(t: Option<Elem>, a: Num, op: Op, b: Num) -> (Option<Elem>, Num) {
        match (t, a, b) {
            (Some(e), Num::Int(x), Num::Int(y))
                if e.kind != Kind::Float && !matches!(op, Op::Div) =>
            {
                let r = match op {
                    Op::Add => x + y,
                    Op::Sub => x - y,
                    _ => x * y,
                };
                (Some(e), Num::Int(e.wrap(r)))
            }
            (Some(e), _, _) if e.kind == Kind::Float => (
                Some(e),
                Num::Float(e.arith(op, a.as_f64(), e.round(b.as_f64()))),
            ),
            _ => (
                None,
                Num::Float(Elem::F64.arith(op, a.as_f64(), b.as_f64())),
            ),
        }
    }
}

impl BytesToBytes for FixedScaleOffset {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        super::config(&[
            ("offset", self.offset.clone()),
            ("scale", self.scale.clone()),
            ("dtype", self.dtype.typestr().into()),
            ("astype", self.astype.typestr().into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let (d, a) = (self.dtype, self.astype);
        let n = d.count(input.len(), "fixedscaleoffset", "input")?;
        let (off, sc) = (Self::num(&self.offset), Self::num(&self.scale));
        let mut out = Vec::with_capacity(n * a.size);
        if d.kind == Kind::Float {
            // All in the array's float type: one typed pass each way.
            let (o, s) = (d.round(off.as_f64()), d.round(sc.as_f64()));
            let mut v = d.read_floats(&input);
            for x in v.iter_mut() {
                *x = d
                    .arith(Op::Mul, d.arith(Op::Sub, *x, o), s)
                    .round_ties_even();
            }
            a.write_floats(&v, "fixedscaleoffset", &mut out)?;
            return Ok(out);
        }
        for b in input.chunks_exact(d.size) {
            let (t, v) = Self::step(Some(d), d.read(b), Op::Sub, off);
            let (_, v) = Self::step(t, v, Op::Mul, sc);
            let v = match v {
                Num::Float(x) => Num::Float(x.round_ties_even()),
                i => i,
            };
            let w = a.cast(v).ok_or_else(|| unfit("fixedscaleoffset", v, a))?;
            a.write(w, &mut out);
        }
        Ok(out)
    }

    fn decode_slice(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let (d, a) = (self.dtype, self.astype);
        let n = a.count(input.len(), "fixedscaleoffset", "encoded")?;
        check_decoded_len("fixedscaleoffset", n, d, decoded_len)?;
        let (off, sc) = (Self::num(&self.offset), Self::num(&self.scale));
        let mut out = Vec::with_capacity(n * d.size);
        // True division: in the stored float type, or float64 for integers.
        let t = if a.kind == Kind::Float { a } else { Elem::F64 };
        let (o, s) = (t.round(off.as_f64()), t.round(sc.as_f64()));
        let mut v = a.read_floats(input);
        for x in v.iter_mut() {
            *x = t.arith(Op::Add, t.arith(Op::Div, *x, s), o);
        }
        d.write_floats(&v, "fixedscaleoffset", &mut out)?;
        Ok(out)
    }
}

/// `n` decoded elements of `d` must make the `decoded_len` bytes expected.
pub(super) fn check_decoded_len(
    codec: &str,
    n: usize,
    d: Elem,
    decoded_len: Option<usize>,
) -> Result<()> {
    match decoded_len {
        Some(len) if len != n * d.size => Err(ZarrError::Codec(format!(
            "{codec}: {n} encoded elements give {} bytes, expected {len}",
            n * d.size
        ))),
        _ => Ok(()),
    }
}
