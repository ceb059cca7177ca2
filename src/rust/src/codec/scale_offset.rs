//! `scale_offset` codec (zarr-extensions codecs/scale_offset): array ->
//! array, `(x - offset) * scale` on encode and `x / scale + offset` on
//! decode, in the arithmetic of the array's data type. Configuration:
//! `offset` and `scale`, scalars written as fill values of that type
//! (absent: 0 and 1). A result the type cannot hold is an error: integer
//! overflow, and an integer division with a remainder; floats follow IEEE
//! 754 (per operation, half precision rounded after each step).

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::value::{self, failure, int_range, Num};
use super::Mode;
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "scale_offset";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToArray,
    params: &[
        Param::optional(
            "offset",
            Kind::Other("a number of the array's data type"),
            Lit::Null,
        ),
        Param::optional(
            "scale",
            Kind::Other("a number of the array's data type, not 0"),
            Lit::Null,
        ),
    ],
    defaults: Some(|_, _| Map::new()),
    build: None,
};

#[derive(Debug, Clone)]
pub struct ScaleOffset {
    dtype: DataType,
    offset: Num,
    scale: Num,
    /// The members as given, written back unchanged.
    config: Map<String, Value>,
}

impl ScaleOffset {
    /// The codec for elements of `dtype`.
    pub fn from_config(config: &Map<String, Value>, dtype: DataType) -> Result<ScaleOffset> {
        let bad = |why: String| Err(ZarrError::Metadata(format!("codec '{NAME}': {why}")));
        if !value::is_numeric(dtype) {
            return bad(format!(
                "data type {} is not an integer or float type",
                dtype.name()
            ));
        }
        if let Some(k) = config.keys().find(|k| *k != "offset" && *k != "scale") {
            return bad(format!("unknown configuration member '{k}'"));
        }
        let member = |key: &str, default: i64| match config.get(key) {
            None | Some(Value::Null) => Ok(value::parse_scalar(&json!(default), dtype)?),
            Some(v) => value::parse_scalar(v, dtype).map_err(|_| {
                ZarrError::Metadata(format!(
                    "codec '{NAME}': {key} {v} is not a value of data type {}",
                    dtype.name()
                ))
            }),
        };
        let offset = member("offset", 0)?;
        let scale = member("scale", 1)?;
        if scale.same(Num::Int(0)) {
            return bad("scale must not be 0".into());
        }
        let config = config
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(ScaleOffset {
            dtype,
            offset,
            scale,
            config,
        })
    }

    pub fn to_json(&self) -> Value {
        if self.config.is_empty() {
            return json!({"name": NAME});
        }
        json!({"name": NAME, "configuration": self.config})
    }

    fn out_of_range(&self, x: i128) -> ZarrError {
        let (lo, hi) = int_range(self.dtype);
        failure(
            NAME,
            format!(
                "{x} is outside the range of {} [{lo}, {hi}]",
                self.dtype.name()
            ),
        )
    }

    fn encode_one(&self, x: Num) -> Result<Num> {
        match (x, self.offset, self.scale) {
            (Num::Int(x), Num::Int(o), Num::Int(s)) => {
                let (lo, hi) = int_range(self.dtype);
                let r = x
                    .checked_sub(o)
                    .and_then(|d| d.checked_mul(s))
                    .filter(|r| (lo..=hi).contains(r))
                    .ok_or_else(|| self.out_of_range(x.saturating_sub(o).saturating_mul(s)))?;
                Ok(Num::Int(r))
            }
            (Num::Float(x), Num::Float(o), Num::Float(s)) => Ok(Num::Float(match self.dtype {
                DataType::Float32 => ((x as f32 - o as f32) * s as f32) as f64,
                DataType::Float64 => (x - o) * s,
                d => value::nearest_float(value::nearest_float(x - o, d) * s, d),
            })),
            _ => unreachable!("scalars are parsed in the codec's data type"),
        }
    }

    fn decode_one(&self, x: Num) -> Result<Num> {
        match (x, self.offset, self.scale) {
            (Num::Int(x), Num::Int(o), Num::Int(s)) => {
                if x % s != 0 {
                    return Err(failure(
                        NAME,
                        format!("{x} / {s} is not a whole number of {}", self.dtype.name()),
                    ));
                }
                let r = x / s + o;
                let (lo, hi) = int_range(self.dtype);
                if !(lo..=hi).contains(&r) {
                    return Err(self.out_of_range(r));
                }
                Ok(Num::Int(r))
            }
            (Num::Float(x), Num::Float(o), Num::Float(s)) => Ok(Num::Float(match self.dtype {
                DataType::Float32 => (x as f32 / s as f32 + o as f32) as f64,
                DataType::Float64 => x / s + o,
                d => value::nearest_float(value::nearest_float(x / s, d) + o, d),
            })),
            _ => unreachable!("scalars are parsed in the codec's data type"),
        }
    }

    fn map(&self, data: &mut [u8], f: impl Fn(&Self, Num) -> Result<Num>) -> Result<()> {
        let size = self.dtype.size();
        for e in data.chunks_exact_mut(size) {
            let v = f(self, value::get(self.dtype, e))?;
            value::put(self.dtype, v, e);
        }
        Ok(())
    }

    /// Encode native-endian elements in place.
    pub fn encode(&self, data: &mut [u8]) -> Result<()> {
        self.map(data, Self::encode_one)
    }

    /// Decode native-endian elements in place.
    pub fn decode(&self, data: &mut [u8]) -> Result<()> {
        self.map(data, Self::decode_one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(cfg: Value, d: DataType) -> Result<ScaleOffset> {
        ScaleOffset::from_config(cfg.as_object().unwrap(), d)
    }

    fn elements<T: Copy>(v: &[T]) -> Vec<u8> {
        let n = std::mem::size_of_val(v);
        // SAFETY: plain numbers, read as their bytes.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, n) }.to_vec()
    }

    #[test]
    fn floats_compute_in_their_own_precision() {
        let c = codec(json!({"offset": 5, "scale": 0.1}), DataType::Float32).unwrap();
        let mut b = elements(&[5.0f32, 15.0, 6.5]);
        c.encode(&mut b).unwrap();
        let want = [0.0f32, 10.0 * 0.1f32, 1.5 * 0.1f32];
        assert_eq!(b, elements(&want));
        c.decode(&mut b).unwrap();
        let back = [0.0f32 / 0.1 + 5.0, want[1] / 0.1 + 5.0, want[2] / 0.1 + 5.0];
        assert_eq!(b, elements(&back));
    }

    #[test]
    fn integer_overflow_and_remainders_are_errors() {
        let c = codec(json!({"offset": 1000}), DataType::UInt16).unwrap();
        let mut b = elements(&[1000u16, 1255]);
        c.encode(&mut b).unwrap();
        assert_eq!(b, elements(&[0u16, 255]));
        let mut low = elements(&[999u16]);
        assert_eq!(c.encode(&mut low).unwrap_err().kind(), "codec");
        let c = codec(json!({"scale": 3}), DataType::Int8).unwrap();
        let mut b = elements(&[7i8]);
        assert_eq!(c.decode(&mut b).unwrap_err().kind(), "codec");
        let mut b = elements(&[42i8, 43]);
        assert!(c.encode(&mut b).is_err(), "43 * 3 overflows int8");
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(codec(json!({"scale": 0}), DataType::Float64).is_err());
        assert!(codec(json!({"scale": 0.5}), DataType::Int32).is_err());
        assert!(codec(json!({"other": 1}), DataType::Int32).is_err());
        assert!(codec(json!({}), DataType::Bool).is_err());
        let c = codec(json!({}), DataType::Int32).unwrap();
        assert_eq!(c.to_json(), json!({"name": "scale_offset"}));
    }
}
