//! zfp, the compressor of floating-point and integer arrays
//! (<https://zfp.readthedocs.io>), on the `zfp-rs` crate (pure Rust, the
//! C library's streams bit for bit), under two names:
//!
//! - `numcodecs.zfpy` (Zarr v2 id `zfpy`): numcodecs' `ZFPY`, which writes
//!   zfp's full header (magic, type and dimensions, mode) before the
//!   stream. Configuration, numcodecs' members: `mode` (zfpy's numbers: 2
//!   fixed rate, 3 fixed precision, 4 fixed accuracy), `tolerance`, `rate`
//!   and `precision` (-1 when unset). The mode picks its member; a member
//!   below 0 means reversible (lossless) compression, which is what
//!   numcodecs' `ZFPY()` writes (mode 4, tolerance -1). A chunk decodes
//!   from its header alone, as zfpy reads it.
//! - `zfp` (zarr-extensions codecs/zfp): the stream without a header, the
//!   configuration saying how it was made: `mode` "reversible",
//!   "fixed_rate" (`rate`), "fixed_precision" (`precision`),
//!   "fixed_accuracy" (`tolerance`) or "expert" (`minbits`, `maxbits`,
//!   `maxprec`, `minexp`).
//!
//! Both are array -> bytes codecs, in place of `bytes` (zarr-python 3) or
//! right after it (Zarr v2's compressor), on int32, int64, float32 and
//! float64 chunks of 1 to 4 dimensions (a 0-d chunk is one element). zfp's
//! fields list the fastest dimension first, so a C-order chunk of shape
//! (a, b, c) is the field (c, b, a), as zfpy makes it.

use super::registry::{CodecSpec, Kind, Lit, Param};

mod stream;
use super::v2::{entry, members, V2Config};
use super::{BytesToBytes, DecodeTo, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};
use zfp_rs::{ZfpConfig, ZfpScalarType};

pub const NAME: &str = "numcodecs.zfpy";
pub const ZFP_NAME: &str = "zfp";

const KEYS: [&str; 4] = ["mode", "tolerance", "rate", "precision"];

/// zfpy's numbers of the modes numcodecs can write.
const FIXED_RATE: i64 = 2;
const FIXED_PRECISION: i64 = 3;
const FIXED_ACCURACY: i64 = 4;

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: Some(V2Config {
        id: "zfpy",
        from_v2: |cfg, typesize, _| Ok(entry(NAME, cfg, &KEYS, None, typesize)),
        to_v2: |cfg| members(cfg, &KEYS),
        filter: false,
    }),
    mode: Mode::ArrayToBytes,
    params: &[
        // zfpy also numbers 0 (null), 1 (expert) and 5 (reversible), which
        // numcodecs reads (the header says how) but cannot write.
        Param::optional("mode", Kind::Int(0, 5), Lit::Int(FIXED_ACCURACY)),
        Param::optional("tolerance", Kind::Other("a number"), Lit::Int(-1)),
        Param::optional("rate", Kind::Other("a number"), Lit::Int(-1)),
        Param::optional("precision", Kind::Int(i64::MIN, i64::MAX), Lit::Int(-1)),
    ],
    defaults: Some(|_, _| {
        super::config(&[
            ("mode", FIXED_ACCURACY.into()),
            ("tolerance", (-1).into()),
            ("rate", (-1).into()),
            ("precision", (-1).into()),
        ])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(Zfp::zfpy(cfg, dtype)?))),
};

pub static ZFP_SPEC: CodecSpec = CodecSpec {
    name: ZFP_NAME,
    v2: None,
    mode: Mode::ArrayToBytes,
    params: &[
        Param::optional(
            "mode",
            Kind::Choice(&[
                "reversible",
                "fixed_rate",
                "fixed_precision",
                "fixed_accuracy",
                "expert",
            ]),
            Lit::Null,
        ),
        Param::optional("rate", Kind::Other("a number > 0"), Lit::Null),
        Param::optional("precision", Kind::Int(1, 64), Lit::Null),
        Param::optional("tolerance", Kind::Other("a number >= 0"), Lit::Null),
        Param::optional("minbits", Kind::Int(0, i64::MAX), Lit::Null),
        Param::optional("maxbits", Kind::Int(0, i64::MAX), Lit::Null),
        Param::optional("maxprec", Kind::Int(0, i64::MAX), Lit::Null),
        Param::optional("minexp", Kind::Int(i64::MIN, i64::MAX), Lit::Null),
    ],
    defaults: Some(|_, _| super::config(&[("mode", "reversible".into())])),
    build: Some(|cfg, dtype| Ok(Box::new(Zfp::registry(cfg, dtype)?))),
};

/// How a chunk is compressed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Params {
    Reversible,
    /// Bits per element; the bits per block follow from the chunk's
    /// dimensions.
    Rate(f64),
    Precision(u32),
    Accuracy(f64),
    Expert {
        minbits: u32,
        maxbits: u32,
        maxprec: u32,
        minexp: i32,
    },
}

#[derive(Debug)]
pub struct Zfp {
    dtype: DataType,
    scalar: ZfpScalarType,
    params: Params,
    /// numcodecs.zfpy: its configuration (written back as read) and the
    /// header before each stream. None: the registry's `zfp`.
    zfpy: Option<Map<String, Value>>,
}

fn bad(codec: &str, why: String) -> ZarrError {
    ZarrError::Metadata(format!("codec '{codec}': {why}"))
}

fn scalar_of(codec: &str, dtype: DataType) -> Result<ZfpScalarType> {
    match dtype {
        DataType::Int32 => Ok(ZfpScalarType::I32),
        DataType::Int64 => Ok(ZfpScalarType::I64),
        DataType::Float32 => Ok(ZfpScalarType::F32),
        DataType::Float64 => Ok(ZfpScalarType::F64),
        _ => Err(ZarrError::Unsupported(format!(
            "codec '{codec}' is for int32, int64, float32 and float64, not {}",
            dtype.name()
        ))),
    }
}

fn number(spec: &CodecSpec, config: &Map<String, Value>, key: &str) -> Result<Option<f64>> {
    let v = spec.param(key).get(spec.name, config)?;
    if v.is_null() {
        return Ok(None);
    }
    v.as_f64()
        .filter(|x| x.is_finite())
        .map(Some)
        .ok_or_else(|| bad(spec.name, format!("{key} must be a number, not {v}")))
}

fn whole(spec: &CodecSpec, config: &Map<String, Value>, key: &str) -> Result<i64> {
    let v = spec.param(key).get(spec.name, config)?;
    v.as_i64().ok_or_else(|| {
        bad(
            spec.name,
            format!(
                "configuration has no '{key}' ({})",
                spec.param(key).describe()
            ),
        )
    })
}

fn u32_of(spec: &CodecSpec, config: &Map<String, Value>, key: &str) -> Result<u32> {
    let i = whole(spec, config, key)?;
    u32::try_from(i).map_err(|_| bad(spec.name, format!("{key} is out of range: {i}")))
}

impl Zfp {
    /// numcodecs' `ZFPY` from its configuration.
    pub fn zfpy(config: &Map<String, Value>, dtype: DataType) -> Result<Zfp> {
        let scalar = scalar_of(NAME, dtype)?;
        let mode = SPEC.int(config, "mode")?;
        let tolerance = number(&SPEC, config, "tolerance")?.unwrap_or(-1.0);
        let rate = number(&SPEC, config, "rate")?.unwrap_or(-1.0);
        let precision = SPEC.int(config, "precision")?;
        // numcodecs hands zfpy the mode's member alone, and zfpy compresses
        // reversibly when it is negative.
        let params = match mode {
            FIXED_ACCURACY if tolerance >= 0.0 => Params::Accuracy(tolerance),
            FIXED_RATE if rate >= 0.0 => Params::Rate(rate),
            FIXED_PRECISION if precision >= 0 => Params::Precision(
                u32::try_from(precision)
                    .map_err(|_| bad(NAME, format!("precision is out of range: {precision}")))?,
            ),
            FIXED_ACCURACY | FIXED_RATE | FIXED_PRECISION => Params::Reversible,
            // Read only: the header says how a chunk was made.
            _ => Params::Expert {
                minbits: 0,
                maxbits: 0,
                maxprec: 0,
                minexp: 0,
            },
        };
        let mut written = Map::new();
        for k in KEYS {
            let v = SPEC.param(k).get(NAME, config)?;
            written.insert(k.into(), v);
        }
        Ok(Zfp {
            dtype,
            scalar,
            params,
            zfpy: Some(written),
        })
    }

    /// The registry's `zfp` from its configuration.
    pub fn registry(config: &Map<String, Value>, dtype: DataType) -> Result<Zfp> {
        let scalar = scalar_of(ZFP_NAME, dtype)?;
        let s = &ZFP_SPEC;
        // Every member is checked, also those the mode does not read.
        for p in s.params {
            p.get(ZFP_NAME, config)?;
        }
        number(s, config, "rate")?;
        number(s, config, "tolerance")?;
        let mode = s.param("mode").get(ZFP_NAME, config)?;
        let need = |key: &str| -> Result<f64> {
            number(s, config, key)?.ok_or_else(|| {
                bad(
                    ZFP_NAME,
                    format!("mode \"{}\" needs '{key}'", mode.as_str().unwrap_or("")),
                )
            })
        };
        let params = match mode.as_str() {
            Some("reversible") => Params::Reversible,
            Some("fixed_rate") => {
                let rate = need("rate")?;
                if rate <= 0.0 {
                    return Err(bad(ZFP_NAME, format!("rate must be > 0, not {rate}")));
                }
                Params::Rate(rate)
            }
            Some("fixed_precision") => Params::Precision(u32_of(s, config, "precision")?),
            Some("fixed_accuracy") => {
                let tolerance = need("tolerance")?;
                if tolerance < 0.0 {
                    return Err(bad(
                        ZFP_NAME,
                        format!("tolerance must be >= 0, not {tolerance}"),
                    ));
                }
                Params::Accuracy(tolerance)
            }
            Some("expert") => {
                let minexp = whole(s, config, "minexp")?;
                let p = Params::Expert {
                    minbits: u32_of(s, config, "minbits")?,
                    maxbits: u32_of(s, config, "maxbits")?,
                    maxprec: u32_of(s, config, "maxprec")?,
                    minexp: i32::try_from(minexp)
                        .map_err(|_| bad(ZFP_NAME, format!("minexp is out of range: {minexp}")))?,
                };
                if let Params::Expert {
                    minbits,
                    maxbits,
                    maxprec,
                    minexp,
                } = p
                {
                    ZfpConfig::expert(minbits, maxbits, maxprec, minexp).map_err(|_| {
                        bad(
                            ZFP_NAME,
                            format!(
                                "expert parameters need minbits <= maxbits and maxprec from 1 to 64 \
                                 (minbits {minbits}, maxbits {maxbits}, maxprec {maxprec})"
                            ),
                        )
                    })?;
                }
                p
            }
            _ => {
                return Err(bad(
                    ZFP_NAME,
                    format!(
                        "configuration has no 'mode' ({})",
                        s.param("mode").describe()
                    ),
                ))
            }
        };
        Ok(Zfp {
            dtype,
            scalar,
            params,
            zfpy: None,
        })
    }
}

/// `$body` with `$t` the Rust type of the elements of a zfp scalar type.
macro_rules! with_scalar {
    ($scalar:expr, $t:ident, $body:expr) => {
        with_scalar!(@each $scalar, $t, $body, [I32 i32, I64 i64, F32 f32, F64 f64])
    };
    (@each $scalar:expr, $t:ident, $body:expr, [$($v:ident $ty:ty),*]) => {
        match $scalar {
            $(ZfpScalarType::$v => {
                type $t = $ty;
                $body
            })*
        }
    };
}

impl BytesToBytes for Zfp {
    fn spec(&self) -> &'static CodecSpec {
        if self.zfpy.is_some() {
            &SPEC
        } else {
            &ZFP_SPEC
        }
    }

    fn configuration(&self) -> Map<String, Value> {
        if let Some(c) = &self.zfpy {
            return c.clone();
        }
        let mode = |m: &str| ("mode", Value::from(m));
        match self.params {
            Params::Reversible => super::config(&[mode("reversible")]),
            Params::Rate(r) => super::config(&[mode("fixed_rate"), ("rate", r.into())]),
            Params::Precision(p) => {
                super::config(&[mode("fixed_precision"), ("precision", p.into())])
            }
            Params::Accuracy(t) => {
                super::config(&[mode("fixed_accuracy"), ("tolerance", t.into())])
            }
            Params::Expert {
                minbits,
                maxbits,
                maxprec,
                minexp,
            } => super::config(&[
                mode("expert"),
                ("minbits", minbits.into()),
                ("maxbits", maxbits.into()),
                ("maxprec", maxprec.into()),
                ("minexp", minexp.into()),
            ]),
        }
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        // Without a shape, the chunk is a line of elements.
        let n = input.len() / self.dtype.size().max(1);
        self.encode_shaped(input, &[n])
    }

    fn encode_shaped(&self, input: Vec<u8>, shape: &[usize]) -> Result<Vec<u8>> {
        let size = self.dtype.size();
        let n: usize = shape.iter().product();
        if input.len() != n * size {
            return Err(self.err(format!(
                "{} bytes are not a chunk of shape {shape:?} of {}",
                input.len(),
                self.dtype.name()
            )));
        }
        with_scalar!(self.scalar, T, {
            // SAFETY: every bit pattern is a valid value of these types.
            let (pre, mid, post) = unsafe { input.align_to::<T>() };
            if pre.is_empty() && post.is_empty() {
                self.compress(mid, shape)
            } else {
                let copy: Vec<T> = input
                    .chunks_exact(size)
                    .map(|c| T::from_ne_bytes(c.try_into().expect("element size")))
                    .collect();
                self.compress(&copy, shape)
            }
        })
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        // zfpy's header gives the number of elements; the registry's zfp
        // needs the chunk's shape (`decode_shaped`).
        if self.zfpy.is_none() {
            return Err(self.err("decoding needs the chunk's shape".into()));
        }
        let n = match to.len {
            Some(len) => len / self.dtype.size(),
            None => self.header_count(input)?,
        };
        self.decode_shaped(input, &[n], to)
    }

    fn decode_shaped(&self, input: &[u8], shape: &[usize], _to: DecodeTo) -> Result<Vec<u8>> {
        let size = self.dtype.size();
        let n: usize = shape.iter().product();
        let len = n
            .checked_mul(size)
            .ok_or_else(|| self.err(format!("a chunk of shape {shape:?} is too large")))?;
        let mut out: Vec<u8> = Vec::new();
        out.try_reserve_exact(len)
            .map_err(|_| self.err(format!("cannot allocate {len} bytes")))?;
        out.resize(len, 0);
        with_scalar!(self.scalar, T, {
            // SAFETY: every bit pattern is a valid value of these types.
            let (pre, mid, post) = unsafe { out.align_to_mut::<T>() };
            if pre.is_empty() && post.is_empty() {
                self.decompress(input, shape, mid)?;
            } else {
                let mut typed = vec![T::default(); n];
                self.decompress(input, shape, &mut typed)?;
                for (o, v) in out.chunks_exact_mut(size).zip(&typed) {
                    o.copy_from_slice(&v.to_ne_bytes());
                }
            }
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
