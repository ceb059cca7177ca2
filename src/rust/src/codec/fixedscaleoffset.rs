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

use super::numeric::{unfit, Elem, Kind, Num, Op};
use super::registry::{CodecSpec, Kind as ParamKind, Param};
use super::retype::{retype_spec, Retype, TypeMembers};
use super::typed::{convert, Conv, Prim};
use super::{BytesToBytes, DecodeTo};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

pub const NAME: &str = "numcodecs.fixedscaleoffset";

static TYPES: TypeMembers = TypeMembers::optional(NAME, "dtype", "astype");

// New arrays: no change of scale, stored in the array's own type.
pub static SPEC: CodecSpec = retype_spec!(
    "fixedscaleoffset",
    FixedScaleOffset,
    &[
        Param::required("offset", ParamKind::Other("a number")),
        Param::required("scale", ParamKind::Other("a number")),
        TYPES.array_param("a NumPy type string such as \"<f8\""),
        TYPES.stored_param("a NumPy type string (absent: dtype)"),
    ],
    [("offset", 0.into()), ("scale", 1.into())],
);

#[derive(Debug)]
pub struct FixedScaleOffset {
    /// As configured (an integer or a float), to write back unchanged.
    offset: Value,
    scale: Value,
    types: Retype,
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
        let types = TYPES.parse(config, array)?;
        let dtype = types.array;
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
            types,
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
        let plain = [
            ("offset", self.offset.clone()),
            ("scale", self.scale.clone()),
        ];
        self.types.configuration(&plain, &SPEC.members())
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let (d, a) = (self.types.array, self.types.stored);
        let (off, sc) = (Self::num(&self.offset), Self::num(&self.scale));
        if d.kind == Kind::Float {
            // All in the array's float type.
            let (o, s) = (d.round(off.as_f64()), d.round(sc.as_f64()));
            return self.types.encode_floats(&input, |x| {
                d.arith(Op::Mul, d.arith(Op::Sub, x, o), s)
                    .round_ties_even()
            });
        }
        let n = self.types.encoded(&input)?;
        let mut out = Vec::with_capacity(n * a.size);
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

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        self.types.decoded(input, to.len)?;
        let conv = DivAdd::of(self);
        match convert(self.types.stored, self.types.array, input, &conv)? {
            Some(out) => Ok(out),
            None => self.decode_general(input, to.len),
        }
    }
}

impl FixedScaleOffset {
    /// `decode_slice` element by element, for the types the typed loops
    /// leave out; it names a value the array's type cannot hold.
    pub(crate) fn decode_general(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
    ) -> Result<Vec<u8>> {
        let a = self.types.stored;
        let (off, sc) = (Self::num(&self.offset), Self::num(&self.scale));
        // True division: in the stored float type, or float64 for integers.
        let t = if a.kind == Kind::Float { a } else { Elem::F64 };
        let (o, s) = (t.round(off.as_f64()), t.round(sc.as_f64()));
        self.types.decode_floats(input, decoded_len, |x| {
            t.arith(Op::Add, t.arith(Op::Div, x, s), o)
        })
    }
}

/// Decoding's `x / scale + offset`, in float32 for float32 elements and
/// in float64 for the others, as NumPy computes it (float16 elements take
/// the general path).
pub(crate) struct DivAdd {
    scale: f64,
    offset: f64,
}

impl DivAdd {
    pub(crate) fn of(codec: &FixedScaleOffset) -> DivAdd {
        DivAdd {
            scale: FixedScaleOffset::num(&codec.scale).as_f64(),
            offset: FixedScaleOffset::num(&codec.offset).as_f64(),
        }
    }
}

impl Conv for DivAdd {
    #[inline(always)]
    fn apply<S: Prim, D: Prim>(&self, x: S) -> (D, bool) {
        let y = if S::FLOAT && S::SIZE == 4 {
            f64::from(x.to_f64() as f32 / self.scale as f32 + self.offset as f32)
        } else {
            x.to_f64() / self.scale + self.offset
        };
        D::from_f64(y)
    }
}
