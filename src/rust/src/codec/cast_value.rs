//! `cast_value` codec (zarr-extensions codecs/cast_value): array -> array,
//! each element converted by value to `data_type` on encode and back on
//! decode. Configuration: `data_type` (an integer or float type),
//! `rounding` (absent: "nearest-even"), `out_of_range` ("clamp", "wrap"
//! for integer targets; absent: an error) and `scalar_map` (`encode` and
//! `decode` lists of `[from, to]` pairs, the first match winning). The
//! steps run in the specification's order: the scalar map, an exact
//! value, then rounding followed by the out-of-range rule. NaN and
//! infinities have no integer value: without a map entry they are errors.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::value::{self, failure, int_range, max_finite, Num, Rounding};
use super::Mode;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "cast_value";

const TARGETS: &[&str] = &[
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64",
];

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToArray,
    params: &[
        Param::required("data_type", Kind::Choice(TARGETS)),
        Param::optional("rounding", Kind::Choice(&Rounding::NAMES), Lit::Null),
        Param::optional("out_of_range", Kind::Choice(&["clamp", "wrap"]), Lit::Null),
        Param::optional(
            "scalar_map",
            Kind::Other("a list of `encode` and `decode` pairs [from, to]"),
            Lit::Null,
        ),
    ],
    defaults: Some(|_, _| Map::new()),
    build: None,
};

/// What to do with a value beyond the target's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutOfRange {
    Error,
    Clamp,
    Wrap,
}

/// One direction of the cast.
#[derive(Debug, Clone)]
struct Cast {
    from: DataType,
    to: DataType,
    map: Vec<(Num, Num)>,
}

#[derive(Debug, Clone)]
pub struct CastValue {
    encode: Cast,
    decode: Cast,
    rounding: Rounding,
    out_of_range: OutOfRange,
    config: Map<String, Value>,
}

fn bad<T>(why: String) -> Result<T> {
    Err(ZarrError::Metadata(format!("codec '{NAME}': {why}")))
}

/// The pairs of one direction of a scalar map.
fn map_pairs(
    v: Option<&Value>,
    from: DataType,
    to: DataType,
    dir: &str,
) -> Result<Vec<(Num, Num)>> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(list) = v.as_array() else {
        return bad(format!(
            "scalar_map.{dir} must be a list of [from, to] pairs, not {v}"
        ));
    };
    list.iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([a, b]) => {
                let key = value::parse_scalar(a, from).or_else(|_| {
                    bad(format!(
                        "scalar_map.{dir}: {a} is not a value of {}",
                        from.name()
                    ))
                })?;
                let val = value::parse_scalar(b, to).or_else(|_| {
                    bad(format!(
                        "scalar_map.{dir}: {b} is not a value of {}",
                        to.name()
                    ))
                })?;
                Ok((key, val))
            }
            _ => bad(format!("scalar_map.{dir}: {pair} is not a pair [from, to]")),
        })
        .collect()
}

impl CastValue {
    /// The codec for elements of `dtype`.
    pub fn from_config(config: &Map<String, Value>, dtype: DataType) -> Result<CastValue> {
        for p in SPEC.params {
            p.get(NAME, config)?;
        }
        if let Some(k) = config
            .keys()
            .find(|k| SPEC.params.iter().all(|p| p.key != *k))
        {
            return bad(format!("unknown configuration member '{k}'"));
        }
        if !value::is_numeric(dtype) {
            return bad(format!(
                "data type {} is not an integer or float type",
                dtype.name()
            ));
        }
        let target = DataType::parse(config["data_type"].as_str().unwrap_or_default())?;
        let rounding = match config.get("rounding").and_then(Value::as_str) {
            Some(s) => Rounding::parse(s).expect("checked against the declaration"),
            None => Rounding::NearestEven,
        };
        let out_of_range = match config.get("out_of_range").and_then(Value::as_str) {
            Some("clamp") => OutOfRange::Clamp,
            Some(_) if !value::is_integer(target) => {
                return bad(format!(
                    "out_of_range \"wrap\" needs an integer data_type, not {}",
                    target.name()
                ))
            }
            Some(_) => OutOfRange::Wrap,
            None => OutOfRange::Error,
        };
        let map = config.get("scalar_map").filter(|v| !v.is_null());
        if let Some(m) = map {
            match m.as_object() {
                Some(o) if o.keys().all(|k| k == "encode" || k == "decode") => {}
                _ => {
                    return bad(format!(
                        "scalar_map must be an object with `encode` and `decode` lists, not {m}"
                    ))
                }
            }
        }
        let pairs = |dir: &str, from, to| map_pairs(map.and_then(|m| m.get(dir)), from, to, dir);
        Ok(CastValue {
            encode: Cast {
                from: dtype,
                to: target,
                map: pairs("encode", dtype, target)?,
            },
            decode: Cast {
                from: target,
                to: dtype,
                map: pairs("decode", target, dtype)?,
            },
            rounding,
            out_of_range,
            config: config
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    /// The data type of the encoded elements.
    pub fn target(&self) -> DataType {
        self.encode.to
    }

    pub fn to_json(&self) -> Value {
        json!({"name": NAME, "configuration": self.config})
    }

    fn beyond(&self, c: &Cast, x: Num) -> ZarrError {
        let range = if value::is_integer(c.to) {
            let (lo, hi) = int_range(c.to);
            format!("[{lo}, {hi}]")
        } else {
            let m = max_finite(c.to);
            format!("[{}, {m}]", -m)
        };
        let x = match x {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => f.to_string(),
        };
        failure(
            NAME,
            format!(
                "{x} is outside the range of {} {range} and out_of_range is not set",
                c.to.name()
            ),
        )
    }

    fn cast(&self, c: &Cast, x: Num) -> Result<Num> {
        if let Some((_, v)) = c.map.iter().find(|(k, _)| k.same(x)) {
            return Ok(*v);
        }
        if value::is_integer(c.to) {
            let (lo, hi) = int_range(c.to);
            let i = match x {
                Num::Int(i) => i,
                Num::Float(f) if !f.is_finite() => {
                    return Err(failure(
                        NAME,
                        format!(
                            "{f} has no value in {} and scalar_map does not map it",
                            c.to.name()
                        ),
                    ))
                }
                Num::Float(f) => {
                    let r = self.rounding.to_integer(f);
                    if r.abs() < 2f64.powi(100) {
                        r as i128
                    } else {
                        // Beyond every integer type: only wrap keeps a value.
                        return match self.out_of_range {
                            OutOfRange::Wrap => Ok(Num::Int(value::wrap_int(
                                value::float_mod_pow2(r, (c.to.size() * 8) as u32),
                                c.to,
                            ))),
                            OutOfRange::Clamp => Ok(Num::Int(if r > 0.0 { hi } else { lo })),
                            OutOfRange::Error => Err(self.beyond(c, x)),
                        };
                    }
                }
            };
            if (lo..=hi).contains(&i) {
                return Ok(Num::Int(i));
            }
            return match self.out_of_range {
                OutOfRange::Clamp => Ok(Num::Int(i.clamp(lo, hi))),
                OutOfRange::Wrap => Ok(Num::Int(value::wrap_int(i, c.to))),
                OutOfRange::Error => Err(self.beyond(c, x)),
            };
        }
        let over = |negative: bool| match self.out_of_range {
            OutOfRange::Error => Err(self.beyond(c, x)),
            _ => Ok(Num::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })),
        };
        match x {
            Num::Float(f) if !f.is_finite() => Ok(Num::Float(f)),
            Num::Float(f) if f.abs() > max_finite(c.to) => over(f < 0.0),
            Num::Float(f) => Ok(Num::Float(value::round_float(f, c.to, self.rounding))),
            Num::Int(i) => match value::int_to_float(i, c.to, self.rounding) {
                Some(v) => Ok(Num::Float(v)),
                None => over(i < 0),
            },
        }
    }

    fn run(&self, c: &Cast, data: &[u8]) -> Result<Vec<u8>> {
        let (a, b) = (c.from.size(), c.to.size());
        let mut out = vec![0u8; data.len() / a * b];
        for (i, o) in data.chunks_exact(a).zip(out.chunks_exact_mut(b)) {
            let v = self.cast(c, value::get(c.from, i))?;
            value::put(c.to, v, o);
        }
        Ok(out)
    }

    /// Native-endian elements of the array's type -> of `data_type`.
    pub fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.run(&self.encode, data)
    }

    /// Native-endian elements of `data_type` -> of the array's type.
    pub fn decode(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.run(&self.decode, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(cfg: Value, d: DataType) -> Result<CastValue> {
        CastValue::from_config(cfg.as_object().unwrap(), d)
    }

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn floats_round_then_leave_the_range_as_configured() {
        let enc = |cfg: Value, x: &[f64]| codec(cfg, DataType::Float64).unwrap().encode(&f64s(x));
        assert_eq!(
            enc(json!({"data_type": "int8"}), &[0.5, 1.5, 2.5, -0.5]).unwrap(),
            vec![0u8, 2, 2, 0]
        );
        assert_eq!(
            enc(
                json!({"data_type": "int8", "rounding": "nearest-away"}),
                &[0.5, -2.5]
            )
            .unwrap(),
            vec![1u8, (-3i8) as u8]
        );
        assert!(enc(json!({"data_type": "uint8"}), &[-1.5]).is_err());
        assert_eq!(
            enc(
                json!({"data_type": "uint8", "out_of_range": "clamp"}),
                &[300.0, -1.0, 255.6]
            )
            .unwrap(),
            vec![255u8, 0, 255]
        );
        assert_eq!(
            enc(
                json!({"data_type": "uint8", "out_of_range": "wrap"}),
                &[300.0, -1.0, 255.6]
            )
            .unwrap(),
            vec![44u8, 255, 0]
        );
        assert!(enc(
            json!({"data_type": "uint8", "out_of_range": "clamp"}),
            &[f64::NAN]
        )
        .is_err());
        let mapped = json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]]}});
        assert_eq!(enc(mapped, &[f64::NAN, 3.0]).unwrap(), vec![0u8, 3]);
    }

    #[test]
    fn narrower_floats_overflow_to_errors_or_infinity() {
        let c = codec(json!({"data_type": "float32"}), DataType::Float64).unwrap();
        assert!(c.encode(&f64s(&[1e40])).is_err());
        let c = codec(
            json!({"data_type": "float32", "out_of_range": "clamp"}),
            DataType::Float64,
        )
        .unwrap();
        let out = c.encode(&f64s(&[1e40, -1e40, -0.0])).unwrap();
        let back: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(back[..2], [f32::INFINITY, f32::NEG_INFINITY]);
        assert!(back[2] == 0.0 && back[2].is_sign_negative());
        assert!(codec(
            json!({"data_type": "float32", "out_of_range": "wrap"}),
            DataType::Float64
        )
        .is_err());
    }

    #[test]
    fn a_chain_casts_stores_the_target_type_and_passes_the_fill_on() {
        use crate::codec::test_util::ctx;
        use crate::codec::{CodecChain, Warnings};
        let w = Warnings::default();
        let codecs = json!([
            {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
            {"name": "cast_value", "configuration": {"data_type": "uint16", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
            {"name": "bytes", "configuration": {"endian": "big"}}
        ]);
        let nan = f64::NAN.to_ne_bytes();
        let chain =
            CodecChain::from_json(codecs.as_array().unwrap(), DataType::Float64, &nan, 1).unwrap();
        assert!(!chain.stores_plain_elements());
        assert_eq!(chain.to_json(), codecs.as_array().unwrap().clone());
        let enc = chain.encode(f64s(&[0.0, 90.0, f64::NAN]), &[3]).unwrap();
        assert_eq!(enc, vec![0, 1, 0, 10, 0, 0]);
        let dec = chain.decode(enc, &[3], &ctx(&w)).unwrap();
        assert_eq!(dec[..16], f64s(&[0.0, 90.0])[..]);
        assert!(f64::from_ne_bytes(dec[16..].try_into().unwrap()).is_nan());
        // Sharded: missing inner chunks hold the fill value as stored (0).
        let sharded = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2], "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]);
        let chain =
            CodecChain::from_json(sharded.as_array().unwrap(), DataType::Float64, &nan, 1).unwrap();
        let enc = chain
            .encode(f64s(&[0.0, 90.0, f64::NAN, f64::NAN]), &[4])
            .unwrap();
        let dec = chain.decode(enc, &[4], &ctx(&w)).unwrap();
        assert_eq!(dec[..16], f64s(&[0.0, 90.0])[..]);
        assert!(f64::from_ne_bytes(dec[24..].try_into().unwrap()).is_nan());
        // A NaN fill that uint8 cannot hold without a map is refused.
        let plain = json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, {"name": "bytes"}]);
        let e = CodecChain::from_json(plain.as_array().unwrap(), DataType::Float64, &nan, 1)
            .unwrap_err();
        assert_eq!(e.kind(), "metadata");
    }

    #[test]
    fn decoding_maps_back_to_the_array_type() {
        let c = codec(
            json!({"data_type": "uint8", "scalar_map": {"decode": [[0, "NaN"]]}}),
            DataType::Float64,
        )
        .unwrap();
        let out = c.decode(&[0u8, 255]).unwrap();
        let v: Vec<f64> = out
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert!(v[0].is_nan());
        assert_eq!(v[1], 255.0);
        assert!(codec(json!({"data_type": "bool"}), DataType::Float64).is_err());
        assert!(codec(json!({"data_type": "int8", "extra": 1}), DataType::Float64).is_err());
    }
}
