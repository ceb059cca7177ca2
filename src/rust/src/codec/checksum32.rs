//! numcodecs' 32-bit checksum codecs, bytes -> bytes: `crc32` (zlib's
//! CRC-32), `adler32`, `fletcher32` (HDF5's and netCDF's variant, over
//! big-endian 16-bit words) and `jenkins_lookup3` (HDF5's use of Bob
//! Jenkins' `hashlittle`). Zarr v2 ids are those names; Zarr v3 metadata
//! has them as `numcodecs.<id>`.
//!
//! Each stores its input and the checksum as a little-endian u32: crc32
//! and adler32 in front by default (`location`: "start" or "end"),
//! fletcher32 and jenkins_lookup3 always behind. jenkins_lookup3 takes a
//! seed, `initval`; numcodecs' `prefix` (bytes hashed before the data)
//! cannot be written in JSON by numcodecs itself and is refused unless null.
//!
//! zarr's `crc32c` (declared in crc32c.rs) is built here too. A mismatch
//! follows `strict_checksums`: a warning by default, an error when strict.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::v2::{members, V2Config};
use super::{BytesToBytes, CodecContext, DecodeTo, Mode};
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

const LEN: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algo {
    /// zarr's own `crc32c` (its spec is in crc32c.rs).
    Crc32c,
    Crc32,
    Adler32,
    Fletcher32,
    Jenkins,
}

const LOCATION: Param = Param::optional("location", Kind::Choice(&["start", "end"]), Lit::Null);
const INITVAL: Param = Param::optional("initval", Kind::Int(0, u32::MAX as i64), Lit::Int(0));
const PREFIX: Param = Param::optional(
    "prefix",
    Kind::Other("null (a prefix is not supported)"),
    Lit::Null,
);

/// The spec of one checksum: zarr.json name, numcodecs id, members and
/// the algorithm; new arrays get the members' numcodecs defaults.
macro_rules! checksum_spec {
    ($name:literal, $id:literal, [$($param:expr),*], $algo:expr) => {
        CodecSpec {
            name: $name,
            v2: Some(V2Config {
                id: $id,
                from_v2: |cfg, typesize, _| {
                    *typesize = 1;
                    let keys: &[&str] = &[$($param.key),*];
                    let config: Map<String, Value> = keys
                        .iter()
                        .filter_map(|k| cfg.get(*k).filter(|v| !v.is_null()).map(|v| (k.to_string(), v.clone())))
                        .collect();
                    Ok(json!({"name": $name, "configuration": config}))
                },
                to_v2: |cfg| members(cfg, &[$($param.key),*]),
                filter: false,
            }),
            mode: Mode::BytesToBytes,
            params: &[$($param),*],
            defaults: Some(|_, _| Checksum32::defaults($algo)),
            build: Some(|cfg, _| Ok(Box::new(Checksum32::new($algo, cfg)?))),
        }
    };
}

pub static CRC32: CodecSpec = checksum_spec!("numcodecs.crc32", "crc32", [LOCATION], Algo::Crc32);
pub static ADLER32: CodecSpec =
    checksum_spec!("numcodecs.adler32", "adler32", [LOCATION], Algo::Adler32);
pub static FLETCHER32: CodecSpec =
    checksum_spec!("numcodecs.fletcher32", "fletcher32", [], Algo::Fletcher32);
pub static JENKINS_LOOKUP3: CodecSpec = checksum_spec!(
    "numcodecs.jenkins_lookup3",
    "jenkins_lookup3",
    [INITVAL, PREFIX],
    Algo::Jenkins
);

impl Algo {
    fn spec(self) -> &'static CodecSpec {
        match self {
            Algo::Crc32c => &super::crc32c::SPEC,
            Algo::Crc32 => &CRC32,
            Algo::Adler32 => &ADLER32,
            Algo::Fletcher32 => &FLETCHER32,
            Algo::Jenkins => &JENKINS_LOOKUP3,
        }
    }

    /// Whether the checksum can sit in front (numcodecs' `Checksum32`
    /// subclasses), and does unless told otherwise.
    fn has_location(self) -> bool {
        matches!(self, Algo::Crc32 | Algo::Adler32)
    }
}

/// One configured checksum codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum32 {
    algo: Algo,
    at_start: bool,
    initval: u32,
}

impl Checksum32 {
    /// The `crc32c` codec: CRC-32C (Castagnoli) behind the data.
    pub fn crc32c() -> Checksum32 {
        Checksum32 {
            algo: Algo::Crc32c,
            at_start: false,
            initval: 0,
        }
    }

    fn defaults(algo: Algo) -> Map<String, Value> {
        Checksum32 {
            algo,
            at_start: algo.has_location(),
            initval: 0,
        }
        .configuration()
    }

    fn new(algo: Algo, cfg: &Map<String, Value>) -> Result<Checksum32> {
        let spec = algo.spec();
        let mut c = Checksum32 {
            algo,
            at_start: false,
            initval: 0,
        };
        if algo.has_location() {
            c.at_start = spec.param("location").get(spec.name, cfg)? != "end";
        }
        if algo == Algo::Jenkins {
            c.initval = spec.int(cfg, "initval")? as u32;
            if !PREFIX.get(spec.name, cfg)?.is_null() {
                return Err(ZarrError::Unsupported(format!(
                    "codec '{}': a prefix is not supported (only null)",
                    spec.name
                )));
            }
        }
        Ok(c)
    }

    fn checksum(&self, data: &[u8]) -> u32 {
        match self.algo {
            Algo::Crc32c => crc32c::crc32c(data),
            Algo::Crc32 => crc32fast::hash(data),
            Algo::Adler32 => adler2::adler32_slice(data),
            Algo::Fletcher32 => fletcher32(data),
            Algo::Jenkins => lookup3(data, self.initval),
        }
    }
}

impl BytesToBytes for Checksum32 {
    fn spec(&self) -> &'static CodecSpec {
        self.algo.spec()
    }

    fn configuration(&self) -> Map<String, Value> {
        let mut m = Map::new();
        if self.algo.has_location() {
            let at = if self.at_start { "start" } else { "end" };
            m.insert("location".into(), at.into());
        }
        if self.algo == Algo::Jenkins {
            m.insert("initval".into(), self.initval.into());
        }
        m
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let sum = self.checksum(&input).to_le_bytes();
        if self.at_start {
            let mut out = Vec::with_capacity(input.len() + LEN);
            out.extend_from_slice(&sum);
            out.extend_from_slice(&input);
            Ok(out)
        } else {
            let mut out = input;
            out.extend_from_slice(&sum);
            Ok(out)
        }
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let name = self.algo.spec().name;
        let data = checked_data(name, input, self.at_start, |d| self.checksum(d), &to.ctx)?;
        Ok(input[data].to_vec())
    }

    fn decode(&self, input: Vec<u8>, to: DecodeTo) -> Result<Vec<u8>> {
        let name = self.algo.spec().name;
        let data = checked_data(name, &input, self.at_start, |d| self.checksum(d), &to.ctx)?;
        // Cutting the checksum off in place keeps the chunk buffer.
        let mut out = input;
        out.truncate(data.end);
        out.drain(..data.start);
        Ok(out)
    }
}

/// Where the data lies in `input`, once the checksum stored at its start
/// (`at_start`) or end is checked against `sum` of the data: a mismatch
/// follows `strict_checksums` (`CodecContext::mismatch`).
pub(crate) fn checked_data(
    name: &str,
    input: &[u8],
    at_start: bool,
    sum: impl Fn(&[u8]) -> u32,
    ctx: &CodecContext,
) -> Result<std::ops::Range<usize>> {
    if input.len() < LEN {
        return Err(ZarrError::CorruptChunk(format!(
            "{name}: {} has {} bytes, too short to hold a 4-byte checksum",
            ctx.what,
            input.len()
        )));
    }
    let (sum_at, data) = if at_start {
        (0, LEN..input.len())
    } else {
        (input.len() - LEN, 0..input.len() - LEN)
    };
    let mut stored = [0u8; LEN];
    stored.copy_from_slice(&input[sum_at..sum_at + LEN]);
    let stored = u32::from_le_bytes(stored);
    let computed = sum(&input[data.clone()]);
    if stored != computed {
        ctx.mismatch(format!(
            "{name} checksum mismatch in {}: stored 0x{stored:08X}, computed 0x{computed:08X}",
            ctx.what
        ))?;
    }
    Ok(data)
}

/// HDF5's Fletcher-32: sums of big-endian 16-bit words (an odd last byte
/// is the high byte of a word), folded every 360 words so they never
/// overflow.
fn fletcher32(data: &[u8]) -> u32 {
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let even = data.len() & !1;
    for block in data[..even].chunks(720) {
        for w in block.chunks_exact(2) {
            sum1 += u32::from(u16::from_be_bytes([w[0], w[1]]));
            sum2 += sum1;
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if let Some(&b) = data.get(even) {
        sum1 += u32::from(b) << 8;
        sum2 += sum1;
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    (fold(sum2) << 16) | fold(sum1)
}

/// Bob Jenkins' lookup3 `hashlittle` of `data` seeded with `initval`, as
/// HDF5 computes it (bytes read little-endian, 12 at a time).
fn lookup3(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beefu32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    // a, b, c of lookup3.c
    let mut s = [init; 3];
    if data.is_empty() {
        return init;
    }
    let add_words = |s: &mut [u32; 3], k: &[u8]| {
        for (i, w) in k.chunks_exact(4).enumerate() {
            s[i] = s[i].wrapping_add(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
    };
    let mut rest = data;
    while rest.len() > 12 {
        add_words(&mut s, &rest[..12]);
        // mix(): a -= c, a ^= rot(c, 4), c += b; then the same on (b, a, c)
        // and (c, b, a), twice over.
        for (i, r) in [4, 6, 8, 16, 19, 4].into_iter().enumerate() {
            let (x, p, q) = (i % 3, (i + 2) % 3, (i + 1) % 3);
            s[x] = s[x].wrapping_sub(s[p]) ^ s[p].rotate_left(r);
            s[p] = s[p].wrapping_add(s[q]);
        }
        rest = &rest[12..];
    }
    // The last 1 to 12 bytes, zero-padded, then final(): c ^= b,
    // c -= rot(b, 14); the same on (a, c), (b, a), ...
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    add_words(&mut s, &tail);
    for (i, r) in [14, 11, 25, 16, 4, 14, 24].into_iter().enumerate() {
        let t = [2, 0, 1][i % 3];
        let src = (t + 2) % 3;
        s[t] = (s[t] ^ s[src]).wrapping_sub(s[src].rotate_left(r));
    }
    s[2]
}

#[cfg(test)]
#[path = "checksum32_tests.rs"]
mod tests;
