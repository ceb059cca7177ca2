//! `numcodecs.delta`: numcodecs' `Delta` filter of Zarr v2, which
//! zarr-python 3 writes as an array -> array codec before `bytes`; the
//! engine runs it on the elements right after the `bytes` codec.
//!
//! numcodecs views the chunk's memory as `dtype`, flattens it in memory
//! order and stores the first element then the differences of neighbours,
//! cast to `astype`. The `bytes` codec's output is that memory (the
//! elements in stored order, in the array's byte order), so the same step
//! on its output gives the same bytes, whatever the array's `order`.
//! Configuration: `dtype` and `astype`, NumPy type strings of integer or
//! floating-point types ("<i4", ">f8", "|u1"; `astype` defaults to
//! `dtype`). Integers wrap like NumPy's; floats are rounded to `dtype` at
//! each step of the running sum, as `numpy.cumsum(enc, out=dec)` does.

use super::numeric::Kind;
use super::registry::CodecSpec;
use super::retype::{retype_spec, Retype, TypeMembers};
use super::{BytesToBytes, DecodeTo};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

pub const NAME: &str = "numcodecs.delta";

static TYPES: TypeMembers = TypeMembers::optional(NAME, "dtype", "astype");

// New arrays: differences in the array's own type, little endian.
pub static SPEC: CodecSpec = retype_spec!(
    "delta",
    Delta,
    &[
        TYPES.array_param("a NumPy type string such as \"<i4\""),
        TYPES.stored_param("a NumPy type string (absent: dtype)"),
    ],
    [],
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta(Retype);

impl Delta {
    /// The codec of an array of `array_dtype`, whose elements `dtype` must describe.
    pub fn from_config(config: &Map<String, Value>, array_dtype: DataType) -> Result<Delta> {
        let types = TYPES.parse(config, array_dtype)?;
        if (types.array.kind == Kind::Float) != (types.stored.kind == Kind::Float) {
            return Err(ZarrError::Unsupported(format!(
                "codec '{NAME}' from {types:?} (between integers and floats) is not supported"
            )));
        }
        Ok(Delta(types))
    }
}

impl BytesToBytes for Delta {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        self.0.configuration(&[], &SPEC.members())
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let (d, a) = (self.0.array, self.0.stored);
        let n = self.0.encoded(&input)?;
        let mut out = Vec::with_capacity(n * a.size);
        let elems = input.chunks_exact(d.size);
        if d.kind == Kind::Float {
            let mut prev: Option<f64> = None;
            for b in elems {
                let x = d.read_float(b);
                let diff = match prev {
                    None => x,
                    Some(p) => d.add(x, -p),
                };
                a.write_float(diff, &mut out);
                prev = Some(x);
            }
        } else {
            let mut prev = None;
            for b in elems {
                let x = d.read_int(b);
                let diff = match prev {
                    None => {
                        // NumPy refuses to store an out-of-range first value.
                        if a.wrap(x) != x {
                            return Err(ZarrError::Codec(format!(
                                "delta: the first value {x} does not fit in {}",
                                a.typestr()
                            )));
                        }
                        x
                    }
                    Some(p) => d.wrap(x - p),
                };
                a.write_int(diff, &mut out);
                prev = Some(x);
            }
        }
        Ok(out)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        self.decode(input.to_vec(), to)
    }

    // The same integer type is summed in place, in the buffer it came in.
    fn decode(&self, input: Vec<u8>, to: DecodeTo) -> Result<Vec<u8>> {
        let (d, a) = (self.0.array, self.0.stored);
        let n = self.0.decoded(&input, to.len)?;
        // Fast path for the common case: the same integer type, little-endian.
        if d == a && d.kind != Kind::Float && !d.big && d.size == 4 {
            let mut out = input;
            let mut acc = 0u32;
            for c in out.chunks_exact_mut(4) {
                acc = acc.wrapping_add(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                c.copy_from_slice(&acc.to_le_bytes());
            }
            return Ok(out);
        }
        let mut out = Vec::with_capacity(n * d.size);
        let elems = input.chunks_exact(a.size);
        if d.kind == Kind::Float {
            let mut acc: Option<f64> = None;
            for b in elems {
                let x = d.round(a.read_float(b));
                let v = match acc {
                    None => x,
                    Some(p) => d.add(p, x),
                };
                d.write_float(v, &mut out);
                acc = Some(v);
            }
        } else {
            let mut acc = 0i128;
            for b in elems {
                acc = d.wrap(acc + a.read_int(b));
                d.write_int(acc, &mut out);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ctx, unhex};
    use super::super::Warnings;
    use super::*;
    use serde_json::json;

    fn delta(dtype: &str, astype: &str, array: DataType) -> Delta {
        let cfg = json!({"dtype": dtype, "astype": astype});
        Delta::from_config(cfg.as_object().unwrap(), array).unwrap()
    }

    /// (dtype, astype, array type, input, encoded, decoded) from numcodecs
    /// 0.16 with NumPy 2: `Delta(dtype, astype).encode(input)` and the
    /// decode of that.
    const VECTORS: [(&str, &str, DataType, &str, &str, &str); 8] = [
        (
            "<i4",
            "<i4",
            DataType::Int32,
            "010000000500000003000000ffffff7f0000008000000000",
            "0100000004000000fefffffffcffff7f0100000000000080",
            "010000000500000003000000ffffff7f0000008000000000",
        ),
        (
            "<i4",
            "<i1",
            DataType::Int32,
            "010000000500000003000000ffffff7f0000008000000000",
            "0104fefc0100",
            "010000000500000003000000ffffffff0000000000000000",
        ),
        (
            ">i2",
            ">i2",
            DataType::Int16,
            "000afffd7fff8000",
            "000afff380020001",
            "000afffd7fff8000",
        ),
        (
            "<f8",
            "<f4",
            DataType::Float64,
            "000000000000e03f000000000000d03f000000205fa0024200000000000008c0",
            "0000003f000080bef9021550f90215d0",
            "000000000000e03f000000000000d03f000002205fa00242000000000000d03f",
        ),
        ("|u1", "|u1", DataType::UInt8, "fa0307", "fa0904", "fa0307"),
        (
            "<u8",
            "<u8",
            DataType::UInt64,
            "ffffffffffffffff00000000000000000500000000000000",
            "ffffffffffffffff01000000000000000500000000000000",
            "ffffffffffffffff00000000000000000500000000000000",
        ),
        (
            ">f4",
            ">f4",
            DataType::Float32,
            "3fc00000c01000007149f2ca3dcccccd",
            "3fc00000c07000007149f2caf149f2ca",
            "3fc00000c01000007149f2ca00000000",
        ),
        (
            "<f2",
            "<f2",
            DataType::Float16,
            "003e80c04056662e",
            "003e80c364563ed6",
            "003e80c040560030",
        ),
    ];

    #[test]
    fn delta_matches_numcodecs() {
        let w = Warnings::default();
        for (dt, at, array, input, encoded, decoded) in VECTORS {
            let c = delta(dt, at, array);
            let (input, encoded, decoded) = (unhex(input), unhex(encoded), unhex(decoded));
            assert_eq!(c.encode(input.clone()).unwrap(), encoded, "{dt} -> {at}");
            assert_eq!(
                c.decode(encoded.clone(), ctx(&w).decode_to(Some(decoded.len())))
                    .unwrap(),
                decoded,
                "{dt} <- {at}"
            );
            assert_eq!(c.decode(encoded, ctx(&w).decode_to(None)).unwrap(), decoded);
        }
    }

    #[test]
    fn delta_round_trips_long_runs() {
        let w = Warnings::default();
        let c = delta("<i4", "<i4", DataType::Int32);
        let data: Vec<u8> = (0..1000i32)
            .flat_map(|i| (i * i - 7000).to_le_bytes())
            .collect();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(c.decode(enc, ctx(&w).decode_to(None)).unwrap(), data);
        let c = delta(">i8", ">i8", DataType::Int64);
        let data: Vec<u8> = [i64::MIN, i64::MAX, 0, -1, i64::MIN]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(c.decode(enc, ctx(&w).decode_to(None)).unwrap(), data);
        assert!(c.encode(Vec::new()).unwrap().is_empty());
    }

    #[test]
    fn delta_refuses_bad_configs_and_lengths() {
        let w = Warnings::default();
        let cfg = |v: Value| v.as_object().unwrap().clone();
        for (v, kind) in [
            (json!({}), "metadata"),
            (json!({"dtype": 4}), "metadata"),
            (json!({"dtype": "<x4"}), "metadata"),
            (json!({"dtype": "<i3"}), "metadata"),
            (json!({"dtype": "<i4", "astype": "<f4"}), "unsupported"),
            (json!({"dtype": "<i8"}), "unsupported"),
            (json!({"dtype": "<c8"}), "unsupported"),
        ] {
            let e = Delta::from_config(&cfg(v.clone()), DataType::Int32).unwrap_err();
            assert_eq!(e.kind(), kind, "{v}");
            assert!(e.message().contains("delta"), "{}", e.message());
        }
        // numcodecs writes type strings without a byte order ("i2"): the
        // machine's, which is how NumPy reads them.
        let native = Delta::from_config(&cfg(json!({"dtype": "i4"})), DataType::Int32).unwrap();
        let order = if cfg!(target_endian = "big") {
            ">"
        } else {
            "<"
        };
        assert_eq!(native.configuration()["dtype"], format!("{order}i4"));
        let c = delta("<i4", "<i2", DataType::Int32);
        assert_eq!(
            c.to_json(),
            json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}})
        );
        assert_eq!(c.encode(vec![0; 5]).unwrap_err().kind(), "codec");
        assert_eq!(
            c.decode(vec![0; 3], ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
        assert_eq!(
            c.decode(vec![0; 4], ctx(&w).decode_to(Some(4)))
                .unwrap_err()
                .kind(),
            "codec"
        );
        // A first value that does not fit in astype.
        let e = c.encode(100_000i32.to_le_bytes().to_vec()).unwrap_err();
        assert!(e.message().contains("100000"), "{}", e.message());
        // Bool arrays have no delta.
        let e = Delta::from_config(&cfg(json!({"dtype": "|b1"})), DataType::Bool).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
    }
}
