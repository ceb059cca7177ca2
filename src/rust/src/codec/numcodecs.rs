//! Compressors of numcodecs that Zarr v2 arrays use and that have no Zarr
//! v3 core codec: `numcodecs.lz4` and `numcodecs.bz2` (bytes -> bytes; the
//! names numcodecs gives them in Zarr v3). `numcodecs.zlib` is in `zlib`.
//!
//! * `numcodecs.lz4`: numcodecs' `LZ4`, a 4-byte little-endian size of the
//!   decoded data then one LZ4 block (not the LZ4 frame format).
//!   Configuration: `acceleration`, an integer (kept and written back; the
//!   pure Rust encoder used here has a single speed).
//! * `numcodecs.bz2`: numcodecs' `BZ2`, a bzip2 stream (Python's
//!   `bz2.compress`). Configuration: `level`, an integer 1 to 9.

use super::limited::read_limited;
use super::v2::{int_compressor_spec, int_member, members, V2Config};
use super::{config, CodecSpec, Mode};
use super::{config_level, BytesToBytes, CodecContext};
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};
use std::io::Write;

pub const LZ4_NAME: &str = "numcodecs.lz4";
pub const BZ2_NAME: &str = "numcodecs.bz2";
pub const SHUFFLE_NAME: &str = "numcodecs.shuffle";

pub const LZ4_SPEC: CodecSpec =
    int_compressor_spec!(LZ4_NAME, "lz4", "acceleration", 1, "integer", 1);

pub const BZ2_SPEC: CodecSpec =
    int_compressor_spec!(BZ2_NAME, "bz2", "level", 1, "integer 1 to 9", 1);

/// `elementsize` the size of the array's element (1 for strings).
pub const SHUFFLE_SPEC: CodecSpec = CodecSpec {
    name: SHUFFLE_NAME,
    v2: Some(V2Config {
        id: "shuffle",
        // The bytes it hands on keep their element structure: `typesize`
        // stays.
        from_v2: |cfg, typesize, _| {
            let es = int_member(cfg, "elementsize", *typesize as i64);
            Ok(json!({"name": SHUFFLE_NAME, "configuration": {"elementsize": es}}))
        },
        to_v2: |cfg| members(cfg, &["elementsize"]),
        filter: true,
    }),
    mode: Mode::BytesToBytes,
    schema: &[("elementsize", "integer >= 1")],
    defaults: Some(|dtype, _| config(&[("elementsize", dtype.size().max(1).into())])),
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lz4 {
    pub acceleration: i64,
}

impl Lz4 {
    pub fn from_config(config: &Map<String, Value>) -> Result<Lz4> {
        match config.get("acceleration") {
            // numcodecs' default.
            None | Some(Value::Null) => Ok(Lz4 { acceleration: 1 }),
            Some(v) => match v.as_i64() {
                Some(a) => Ok(Lz4 { acceleration: a }),
                None => Err(ZarrError::Metadata(format!(
                    "codec 'numcodecs.lz4': acceleration must be an integer, not {v}"
                ))),
            },
        }
    }
}

/// The largest output an LZ4 block of `n` bytes can give: each byte of a
/// block expands to at most 255 (a match length run), plus the literals.
fn lz4_max_decoded(n: usize) -> usize {
    n.saturating_mul(255).saturating_add(16)
}

impl BytesToBytes for Lz4 {
    fn name(&self) -> &'static str {
        "numcodecs.lz4"
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        if u32::try_from(input.len()).is_err() {
            return Err(ZarrError::Codec(format!(
                "lz4: {} bytes is too large for numcodecs' 4-byte size header",
                input.len()
            )));
        }
        Ok(lz4_flex::block::compress_prepend_size(&input))
    }

    fn decode(
        &self,
        input: Vec<u8>,
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        if input.len() < 4 {
            return Err(ZarrError::Codec(format!(
                "lz4: {} bytes is too short for numcodecs' 4-byte size header",
                input.len()
            )));
        }
        let size = u32::from_le_bytes([input[0], input[1], input[2], input[3]]) as usize;
        if let Some(n) = decoded_len {
            if size != n {
                return Err(ZarrError::Codec(format!(
                    "lz4: the header gives {size} decoded bytes, expected {n}"
                )));
            }
        }
        if size > lz4_max_decoded(input.len() - 4) {
            return Err(ZarrError::Codec(format!(
                "lz4: the header gives {size} decoded bytes, more than {} compressed bytes can hold",
                input.len() - 4
            )));
        }
        let mut out = vec![0u8; size];
        let got = lz4_flex::block::decompress_into(&input[4..], &mut out)
            .map_err(|e| ZarrError::Codec(format!("lz4: cannot decompress: {e}")))?;
        if got != size {
            return Err(ZarrError::Codec(format!(
                "lz4: decompressed to {got} bytes, the header gives {size}"
            )));
        }
        Ok(out)
    }

    fn to_json(&self) -> Value {
        json!({"name": "numcodecs.lz4", "configuration": {"acceleration": self.acceleration}})
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bz2 {
    pub level: u32,
}

impl Bz2 {
    pub fn from_config(config: &Map<String, Value>) -> Result<Bz2> {
        let level = config_level(config, "numcodecs.bz2", 1, 9)?;
        Ok(Bz2 {
            level: level as u32,
        })
    }
}

impl BytesToBytes for Bz2 {
    fn name(&self) -> &'static str {
        "numcodecs.bz2"
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let fail = |e: std::io::Error| ZarrError::Codec(format!("bz2: compression failed: {e}"));
        let mut enc = bzip2::write::BzEncoder::new(
            Vec::with_capacity(input.len() / 2 + 64),
            bzip2::Compression::new(self.level),
        );
        enc.write_all(&input).map_err(fail)?;
        enc.finish().map_err(fail)
    }

    fn decode(
        &self,
        input: Vec<u8>,
        decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        if !input.starts_with(b"BZh") {
            return Err(ZarrError::Codec(format!(
                "bz2: data is not a bzip2 stream (starts with {:02x?})",
                &input[..input.len().min(4)]
            )));
        }
        // Python's bz2.decompress reads streams back to back.
        let reader = bzip2::read::MultiBzDecoder::new(&input[..]);
        read_limited("bz2", reader, decoded_len, input.len())
    }

    fn to_json(&self) -> Value {
        json!({"name": "numcodecs.bz2", "configuration": {"level": self.level}})
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ctx, stepped_doubles as doubles, unhex};
    use super::super::Warnings;
    use super::*;

    fn cfg(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn lz4_round_trips_and_reads_numcodecs() {
        let w = Warnings::default();
        let c = Lz4::from_config(&cfg(json!({"acceleration": 1}))).unwrap();
        let data = doubles();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(&enc[..4], &(data.len() as u32).to_le_bytes());
        assert!(enc.len() < data.len() / 2);
        assert!(c.decode(enc.clone(), Some(data.len()), &ctx(&w)).unwrap() == data);
        assert!(c.decode(enc, None, &ctx(&w)).unwrap() == data);
        // numcodecs.LZ4().encode(b"hello zarr hello zarr hello zarr\n") (numcodecs 0.16).
        let known = unhex("21000000bd68656c6c6f207a617272200b00507a6172720a");
        assert_eq!(
            c.decode(known, None, &ctx(&w)).unwrap(),
            b"hello zarr hello zarr hello zarr\n"
        );
        let enc = c.encode(Vec::new()).unwrap();
        assert!(c.decode(enc, Some(0), &ctx(&w)).unwrap().is_empty());
    }

    #[test]
    fn lz4_refuses_bad_input() {
        let w = Warnings::default();
        let c = Lz4::from_config(&Map::new()).unwrap();
        assert_eq!(c.acceleration, 1);
        let enc = c.encode(doubles()).unwrap();
        for bad in [
            vec![],
            vec![1, 0, 0],
            // a size far beyond what the block can hold
            [&[0xff, 0xff, 0xff, 0x7f][..], &enc[4..]].concat(),
            enc[..enc.len() / 2].to_vec(),
        ] {
            let e = c.decode(bad, None, &ctx(&w)).unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("lz4"), "{}", e.message());
        }
        let e = c.decode(enc, Some(8), &ctx(&w)).unwrap_err();
        assert!(e.message().contains("expected 8"), "{}", e.message());
        let e = Lz4::from_config(&cfg(json!({"acceleration": "fast"}))).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert_eq!(
            Lz4 { acceleration: 3 }.to_json(),
            json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 3}})
        );
    }

    #[test]
    fn bz2_round_trips_and_reads_numcodecs() {
        let w = Warnings::default();
        let c = Bz2::from_config(&cfg(json!({"level": 9}))).unwrap();
        let data = doubles();
        let enc = c.encode(data.clone()).unwrap();
        assert!(enc.len() < data.len() / 2);
        assert!(c.decode(enc.clone(), Some(data.len()), &ctx(&w)).unwrap() == data);
        assert!(c.decode(enc.clone(), None, &ctx(&w)).unwrap() == data);
        // numcodecs.BZ2(level=9).encode(b"hello zarr\n") (numcodecs 0.16).
        let known = unhex(
            "425a6839314159265359ba060ddc00000251800010400022449010200031064c414c0f280963ed5e177245385090ba060ddc",
        );
        assert_eq!(
            c.decode(known, Some(11), &ctx(&w)).unwrap(),
            b"hello zarr\n"
        );
        for bad in [
            vec![],
            b"BZh9garbage".to_vec(),
            enc[..enc.len() / 2].to_vec(),
        ] {
            let e = c.decode(bad, None, &ctx(&w)).unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("bz2"), "{}", e.message());
        }
        let e = c.decode(enc, Some(10), &ctx(&w)).unwrap_err();
        assert!(e.message().contains("10"), "{}", e.message());
        for v in [json!({}), json!({"level": 0}), json!({"level": 10})] {
            assert_eq!(Bz2::from_config(&cfg(v)).unwrap_err().kind(), "metadata");
        }
        assert_eq!(
            c.to_json(),
            json!({"name": "numcodecs.bz2", "configuration": {"level": 9}})
        );
    }
}

/// numcodecs `Shuffle` (Zarr v2 filter; HDF5's shuffle, which netCDF4
/// turns on with zlib): byte `j` of element `i` moves to position
/// `j * n + i`, so equal bytes of neighbouring elements sit together.
/// Configuration: `elementsize`. Trailing bytes that do not fill an
/// element stay where they are.
#[derive(Debug)]
pub struct Shuffle {
    pub elementsize: usize,
}

impl Shuffle {
    pub fn from_config(config: &Map<String, Value>) -> Result<Shuffle> {
        let elementsize = config
            .get("elementsize")
            .and_then(Value::as_u64)
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                ZarrError::Metadata(
                    "codec 'numcodecs.shuffle': elementsize must be a positive integer".into(),
                )
            })?;
        Ok(Shuffle {
            elementsize: elementsize as usize,
        })
    }

    fn permute(&self, input: &[u8], unshuffle: bool) -> Vec<u8> {
        let es = self.elementsize;
        let n = input.len() / es;
        let mut out = input.to_vec();
        for i in 0..n {
            for j in 0..es {
                let (a, b) = (i * es + j, j * n + i);
                if unshuffle {
                    out[a] = input[b];
                } else {
                    out[b] = input[a];
                }
            }
        }
        out
    }
}

impl BytesToBytes for Shuffle {
    fn name(&self) -> &'static str {
        "numcodecs.shuffle"
    }
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        Ok(self.permute(&input, false))
    }
    fn decode(
        &self,
        input: Vec<u8>,
        _decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        Ok(self.permute(&input, true))
    }
    fn to_json(&self) -> Value {
        serde_json::json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": self.elementsize}})
    }
}

#[cfg(test)]
mod shuffle_tests {
    use super::*;
    use crate::codec::Warnings;

    #[test]
    fn shuffle_groups_bytes_of_elements_and_back() {
        let s = Shuffle { elementsize: 4 };
        let data: Vec<u8> = (0..10).collect(); // two elements and 2 trailing bytes
        let enc = s.encode(data.clone()).unwrap();
        assert_eq!(enc, vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 9]);
        let w = Warnings::default();
        let ctx = CodecContext {
            strict_checksums: false,
            warnings: &w,
            what: "c",
        };
        assert_eq!(s.decode(enc, None, &ctx).unwrap(), data);
    }
}
