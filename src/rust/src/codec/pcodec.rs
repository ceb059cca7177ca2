//! `numcodecs.pcodec` (Zarr v2 id `pcodec`): numcodecs' `PCodec`, the
//! numbers of a chunk in pco's standalone format (the `pco` crate, the
//! reference implementation, whose Python binding numcodecs calls).
//!
//! zarr-python 3 has it as the array -> bytes codec, in place of `bytes`;
//! Zarr v2 as the compressor. The engine runs it on the little-endian
//! elements a `bytes` codec gives, so it reads and writes both. Types:
//! (u)int16/32/64 and float16/32/64 (pco refuses 8-bit types unless told,
//! as numcodecs does not). Configuration, numcodecs' members: `level` 0 to
//! 12 (8), `mode_spec` "auto" or "classic", `delta_spec` "auto", "no_op",
//! "none", "try_consecutive" or "try_lookback", `paging_spec`
//! "equal_pages_up_to", `delta_encoding_order` (0 to 7 or null) and
//! `equal_pages_up_to` (262144).

use super::registry::{absent_config, CodecSpec, Kind, Lit, Param};
use super::v2::v2_carried;
use super::{BytesToBytes, DecodeTo, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use pco::data_types::Number;
use pco::standalone::{simple_compress, simple_decompress, simple_decompress_into_uninit};
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde_json::{Map, Value};
use std::mem::MaybeUninit;

pub const NAME: &str = "numcodecs.pcodec";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: v2_carried!("pcodec", filter: false, output: None),
    mode: Mode::ArrayToBytes,
    // numcodecs' members; their defaults are those of new arrays.
    params: &[
        Param::optional("level", Kind::Int(0, 12), Lit::Int(8)),
        Param::optional(
            "mode_spec",
            Kind::Choice(&["auto", "classic"]),
            Lit::Str("auto"),
        ),
        Param::optional(
            "delta_spec",
            Kind::Choice(&["auto", "no_op", "none", "try_consecutive", "try_lookback"]),
            Lit::Str("auto"),
        ),
        Param::optional(
            "paging_spec",
            Kind::Choice(&["equal_pages_up_to"]),
            Lit::Str("equal_pages_up_to"),
        ),
        Param::optional("delta_encoding_order", Kind::Int(0, 7), Lit::Null),
        Param::optional(
            "equal_pages_up_to",
            Kind::Int(1, i64::MAX),
            Lit::Int(262_144),
        ),
    ],
    defaults: Some(|_, _| absent_config(SPEC.params)),
    build: Some(|cfg, dtype| Ok(Box::new(Pcodec::from_config(cfg, dtype)?))),
};

#[derive(Debug)]
pub struct Pcodec {
    dtype: DataType,
    level: i64,
    classic: bool,
    delta_spec: String,
    delta_encoding_order: Option<u64>,
    equal_pages_up_to: i64,
}

impl Pcodec {
    pub fn from_config(config: &Map<String, Value>, dtype: DataType) -> Result<Pcodec> {
        use DataType as D;
        if !matches!(
            dtype,
            D::Int16
                | D::Int32
                | D::Int64
                | D::UInt16
                | D::UInt32
                | D::UInt64
                | D::Float16
                | D::Float32
                | D::Float64
        ) {
            return Err(ZarrError::Unsupported(format!(
                "codec '{NAME}' is for 16-, 32- and 64-bit integers and floats, not {}",
                dtype.name()
            )));
        }
        let delta_encoding_order = SPEC
            .param("delta_encoding_order")
            .get(NAME, config)?
            .as_u64();
        let delta_spec = SPEC.text(config, "delta_spec")?;
        // numcodecs' own rule: an order goes with "try_consecutive" (or
        // "auto", which it then means).
        if delta_encoding_order.is_some()
            && !matches!(delta_spec.as_str(), "auto" | "try_consecutive")
        {
            return Err(ZarrError::Metadata(format!(
                "codec '{NAME}': delta_encoding_order goes with delta_spec \"try_consecutive\", not \"{delta_spec}\""
            )));
        }
        SPEC.text(config, "paging_spec")?;
        Ok(Pcodec {
            dtype,
            level: SPEC.int(config, "level")?,
            classic: SPEC.text(config, "mode_spec")? == "classic",
            delta_spec,
            delta_encoding_order,
            equal_pages_up_to: SPEC.int(config, "equal_pages_up_to")?,
        })
    }

    fn chunk_config(&self) -> ChunkConfig {
        let delta = match (self.delta_spec.as_str(), self.delta_encoding_order) {
            ("auto" | "try_consecutive", Some(o)) => DeltaSpec::TryConsecutive(o as usize),
            ("try_consecutive", None) => DeltaSpec::TryConsecutive(0),
            ("no_op" | "none", _) => DeltaSpec::NoOp,
            ("try_lookback", _) => DeltaSpec::TryLookback,
            _ => DeltaSpec::Auto,
        };
        ChunkConfig::default()
            .with_compression_level(self.level as usize)
            .with_mode_spec(if self.classic {
                ModeSpec::Classic
            } else {
                ModeSpec::Auto
            })
            .with_delta_spec(delta)
            .with_paging_spec(PagingSpec::EqualPagesUpTo(self.equal_pages_up_to as usize))
    }
}

fn pco_error(what: &str, e: pco::errors::PcoError) -> ZarrError {
    ZarrError::Codec(format!("pcodec: {what}: {e}"))
}

/// `$body` with `$t` the Rust type of the data type's elements.
macro_rules! with_type {
    ($dtype:expr, $t:ident, $body:expr) => {
        with_type!(@each $dtype, $t, $body, [
            Int16 i16, Int32 i32, Int64 i64, UInt16 u16, UInt32 u32, UInt64 u64,
            Float16 half::f16, Float32 f32
        ], f64)
    };
    (@each $dtype:expr, $t:ident, $body:expr, [$($v:ident $ty:ty),*], $last:ty) => {
        match $dtype {
            $(DataType::$v => {
                type $t = $ty;
                $body
            })*
            _ => {
                type $t = $last;
                $body
            }
        }
    };
}

impl BytesToBytes for Pcodec {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        super::config(&[
            ("level", self.level.into()),
            (
                "mode_spec",
                if self.classic { "classic" } else { "auto" }.into(),
            ),
            ("delta_spec", self.delta_spec.clone().into()),
            ("paging_spec", "equal_pages_up_to".into()),
            (
                "delta_encoding_order",
                self.delta_encoding_order.map_or(Value::Null, Value::from),
            ),
            ("equal_pages_up_to", self.equal_pages_up_to.into()),
        ])
    }

    // `%` rather than is_multiple_of (Rust 1.87) keeps older toolchains working.
    #[allow(clippy::manual_is_multiple_of)]
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let size = self.dtype.size();
        if input.len() % size != 0 {
            return Err(ZarrError::Codec(format!(
                "pcodec: {} bytes are not a whole number of {} elements",
                input.len(),
                self.dtype.name()
            )));
        }
        let config = self.chunk_config();
        with_type!(self.dtype, T, {
            let nums: Vec<T> = input
                .chunks_exact(size)
                .map(|c| T::from_le_bytes(c.try_into().expect("element size")))
                .collect();
            simple_compress(&nums, &config).map_err(|e| pco_error("cannot compress", e))
        })
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let out: Vec<u8> = with_type!(self.dtype, T, {
            if let Some(n) = to.len {
                if let Some(out) = decode_sized::<T>(input, n)? {
                    return Ok(out);
                }
            }
            let nums: Vec<T> =
                simple_decompress(input).map_err(|e| pco_error("cannot decompress", e))?;
            nums.iter().flat_map(|x| x.to_le_bytes()).collect()
        });
        if let Some(n) = to.len {
            if out.len() != n {
                return Err(ZarrError::Codec(format!(
                    "pcodec: {} bytes decoded, expected {n}",
                    out.len()
                )));
            }
        }
        Ok(out)
    }
}

/// Decoding straight into the `n` bytes the chunk's elements take: pco
/// writes its numbers where they stay, so the output is allocated once
/// and never copied. None where the allocation is not aligned for `T` (or
/// `n` is not a whole number of them): the caller then collects them.
fn decode_sized<T: Number>(input: &[u8], n: usize) -> Result<Option<Vec<u8>>> {
    let size = std::mem::size_of::<T>();
    let count = n / size;
    let mut out = crate::error::try_buffer(n, "pcodec")?;
    let spare = &mut out.spare_capacity_mut()[..n];
    // SAFETY: the bytes are left uninitialised (MaybeUninit), and
    // align_to_mut hands out only whole, aligned elements.
    let (pre, mid, post) = unsafe { spare.align_to_mut::<MaybeUninit<T>>() };
    if !pre.is_empty() || !post.is_empty() || mid.len() != count {
        return Ok(None);
    }
    let done =
        simple_decompress_into_uninit(input, mid).map_err(|e| pco_error("cannot decompress", e))?;
    if !done.finished || done.n_processed != count {
        let got = if done.finished {
            format!("{}", done.n_processed * size)
        } else {
            "more".into()
        };
        return Err(ZarrError::Codec(format!(
            "pcodec: {got} bytes decoded, expected {n}"
        )));
    }
    // SAFETY: pco initialised the `count` elements it reports, `n` bytes.
    unsafe { out.set_len(n) };
    // pco wrote them in the machine's order; chunks hold little endian.
    if cfg!(target_endian = "big") {
        super::bytes::swap_bytes(&mut out, size);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ctx, unhex};
    use super::super::{CodecChain, Warnings};
    use super::*;
    use serde_json::json;

    /// `PCodec(**config).encode(x)` (numcodecs 0.17, pcodec 1.1), `x` of
    /// each type: arange(10) * 7 - 20 for integers, arange(10) / 3 for
    /// floats.
    const NUMCODECS: [(DataType, &str, &str, &str); 4] = [
        (
            DataType::Int32,
            "{}",
            "ecfffffff3fffffffaffffff01000000080000000f000000160000001d000000240000002b000000",
            "70636f210300830204010309000071000000100101800000004000020003000000008f24491200",
        ),
        (
            DataType::Float64,
            r#"{"level": 3, "mode_spec": "classic", "delta_spec": "no_op"}"#,
            "0000000000000000555555555555d53f555555555555e53f000000000000f03f555555555555f53fabaaaaaaaaaafa3f0000000000000040abaaaaaaaaaa024055555555555505400000000000000840",
            "70636f21030083020401060900000010000000000000000000fc010000000000000080aaaaaaaaaaaaea5f555555555555f90f000000000000fe57555555555555ff5b5555555555d5ff010000000000000057555555555505805555555555550540000000000000042000",
        ),
        (
            DataType::UInt16,
            r#"{"delta_encoding_order": 1}"#,
            "ecfff3fffaff010008000f0016001d0024002b00",
            "70636f2103008302040107090000710010310200bc6d0107000208000400088f24260852010000",
        ),
        (
            DataType::Float16,
            r#"{"level": 12, "delta_spec": "try_lookback", "equal_pages_up_to": 4}"#,
            "000055355539003c553dab3e0040ab4055410042",
            "70636f2103008302040109030000001000000080008055b555b900bc0902000000100000008055bdabbe00c009020000001000000080abc055c100c200",
        ),
    ];

    #[test]
    fn pcodec_gives_numcodecs_bytes_both_ways() {
        let w = Warnings::default();
        for (dtype, cfg, data, encoded) in NUMCODECS {
            let cfg: Value = serde_json::from_str(cfg).unwrap();
            let c = Pcodec::from_config(cfg.as_object().unwrap(), dtype).unwrap();
            let (data, encoded) = (unhex(data), unhex(encoded));
            assert_eq!(c.encode(data.clone()).unwrap(), encoded, "{cfg}");
            assert_eq!(
                c.decode(encoded.clone(), ctx(&w).decode_to(Some(data.len())))
                    .unwrap(),
                data
            );
            assert_eq!(
                c.decode(encoded.clone(), ctx(&w).decode_to(None)).unwrap(),
                data
            );
            // Decoded straight into a chunk of the expected size, which a
            // stream of fewer or more elements does not fill exactly.
            let size = dtype.size();
            for (n, got) in [(data.len() - size, "more"), (data.len() + 300 * size, "")] {
                let e = c
                    .decode(encoded.clone(), ctx(&w).decode_to(Some(n)))
                    .unwrap_err();
                let want = if got.is_empty() {
                    format!("pcodec: {} bytes decoded, expected {n}", data.len())
                } else {
                    format!("pcodec: more bytes decoded, expected {n}")
                };
                assert_eq!((e.kind(), e.message()), ("codec", want.as_str()));
            }
        }
        let c = Pcodec::from_config(&Map::new(), DataType::Int32).unwrap();
        assert_eq!(
            Value::Object(c.configuration()),
            json!({"level": 8, "mode_spec": "auto", "delta_spec": "auto", "paging_spec": "equal_pages_up_to",
                   "delta_encoding_order": null, "equal_pages_up_to": 262144})
        );
        // Another type's stream, a short one, garbage.
        let f64s = unhex(NUMCODECS[1].3);
        for bad in [f64s.clone(), f64s[..20].to_vec(), b"pco!garbage".to_vec()] {
            let e = c.decode(bad, ctx(&w).decode_to(None)).unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("pcodec"), "{}", e.message());
        }
        for (cfg, dtype) in [
            (json!({"level": 13}), DataType::Int32),
            (
                json!({"delta_spec": "no_op", "delta_encoding_order": 2}),
                DataType::Int32,
            ),
            (json!({"mode_spec": "try_float_mult"}), DataType::Int32),
            (json!({}), DataType::UInt8),
        ] {
            let e = Pcodec::from_config(cfg.as_object().unwrap(), dtype).unwrap_err();
            assert!(e.message().contains(NAME), "{}", e.message());
        }
    }

    #[test]
    fn pcodec_takes_the_place_of_bytes() {
        // zarr-python 3 writes it as the array -> bytes codec.
        let v3 = json!([{"name": NAME, "configuration": {"level": 8}}]);
        let chain =
            CodecChain::from_json(v3.as_array().unwrap(), DataType::Int32, &[0; 4], 1).unwrap();
        let back = chain.to_json();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0]["name"], NAME);
        // Zarr v2 metadata converts to `bytes` then the compressor.
        let v2 = json!([{"name": "bytes", "configuration": {"endian": "little"}}, back[0]]);
        let again =
            CodecChain::from_json(v2.as_array().unwrap(), DataType::Int32, &[0; 4], 1).unwrap();
        assert_eq!(again.to_json(), back);
        let w = Warnings::default();
        let data: Vec<u8> = (0..100i32).flat_map(|i| (i * i).to_ne_bytes()).collect();
        let stored = chain.encode(data.clone(), &[100]).unwrap();
        assert_eq!(chain.decode(stored, &[100], &ctx(&w)).unwrap(), data);
        let big = json!([{"name": "bytes", "configuration": {"endian": "big"}}, back[0]]);
        let e = CodecChain::from_json(big.as_array().unwrap(), DataType::Int32, &[0; 4], 1)
            .unwrap_err();
        assert!(e.message().contains("place of 'bytes'"), "{}", e.message());
    }
}
