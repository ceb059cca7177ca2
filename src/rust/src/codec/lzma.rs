//! `numcodecs.lzma` (bytes -> bytes; Zarr v2 id `lzma`): numcodecs'
//! `LZMA`, Python's `lzma.compress` and `lzma.decompress` through liblzma
//! itself (the `liblzma` crate, built from its sources).
//!
//! Configuration, numcodecs' members and their meaning in Python's `lzma`
//! module: `format` 1 (xz, the default), 2 (lzma-alone), 3 (raw: needs
//! `filters`) or 0 (either of the first two, when reading); `check` -1
//! (CRC-64 for xz), 0 (none), 1 (CRC-32), 4 (CRC-64) or 10 (SHA-256);
//! `preset` null (6) or 0 to 9, optionally with `PRESET_EXTREME` (2^31)
//! added; `filters` null or a list of filter objects, each with an `id`
//! (LZMA1 2^62 + 1, LZMA2 33, delta 3, the branch filters x86 4, PowerPC 5,
//! IA-64 6, ARM 7, ARM-Thumb 8, SPARC 9) and its options (`preset`,
//! `dict_size`, `lc`, `lp`, `pb`, `mode`, `nice_len`, `mf`, `depth`;
//! `dist`; `start_offset`). xz and lzma-alone streams carry their filters,
//! so those read whatever filters wrote them, as numcodecs does.

use super::limited::read_limited;
use super::registry::{absent_config, param, CodecSpec, Kind, Lit, Param};
use super::v2::v2_carried;
use super::{BytesToBytes, DecodeTo, Mode};
use crate::error::{Result, ZarrError};
use liblzma::stream::{self as xz, Check, Filters, LzmaOptions, Stream};
use serde_json::{Map, Value};
use std::io::Read;

pub const NAME: &str = "numcodecs.lzma";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: v2_carried!("lzma", filter: false, output: None),
    mode: Mode::BytesToBytes,
    params: &[
        Param::optional("format", Kind::Int(0, 3), Lit::Int(1)),
        // -1: the format's default.
        Param::optional("check", Kind::Among(&[-1, 0, 1, 4, 10]), Lit::Int(-1)),
        Param::optional(
            "preset",
            Kind::Other("null or 0 to 9, optionally plus 2147483648 (extreme)"),
            Lit::Null,
        ),
        Param::optional(
            "filters",
            Kind::Other("null or a list of liblzma filter objects"),
            Lit::Null,
        ),
    ],
    // numcodecs' defaults: xz with CRC-64 at preset 6.
    defaults: Some(|_, _| absent_config(SPEC.params)),
    build: Some(|cfg, _| Ok(Box::new(Lzma::from_config(cfg)?))),
};

const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;
const BCJ: [u64; 6] = [4, 5, 6, 7, 8, 9];

fn bad(why: String) -> ZarrError {
    ZarrError::Metadata(format!("codec '{NAME}': {why}"))
}

fn to_io(e: xz::Error) -> ZarrError {
    ZarrError::Codec(format!("lzma: {e}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Auto,
    Xz,
    Alone,
    Raw,
}

#[derive(Debug)]
pub struct Lzma {
    format: Format,
    check: i64,
    preset: Option<u32>,
    /// The configured filter objects, as written.
    filters: Option<Vec<Value>>,
}

/// A preset: 0 to 9, optionally with the extreme flag.
fn parse_preset(v: &Value, what: &str) -> Result<u32> {
    let p = v
        .as_u64()
        .filter(|p| p & !u64::from(xz::PRESET_EXTREME) <= 9)
        .ok_or_else(|| {
            bad(format!(
                "{what} must be 0 to 9 (plus 2147483648 for extreme), not {v}"
            ))
        })?;
    Ok(p as u32)
}

const U32: i64 = u32::MAX as i64;

/// The options of the LZMA1 and LZMA2 filter objects (absent: the preset's).
const LZMA_OPTIONS: &[Param] = &[
    Param::optional(
        "preset",
        Kind::Other("0 to 9, optionally plus 2147483648"),
        Lit::Null,
    ),
    Param::optional("dict_size", Kind::Int(4096, U32), Lit::Null),
    Param::optional("lc", Kind::Int(0, 4), Lit::Null),
    Param::optional("lp", Kind::Int(0, 4), Lit::Null),
    Param::optional("pb", Kind::Int(0, 4), Lit::Null),
    // 1 fast, 2 normal.
    Param::optional("mode", Kind::Int(1, 2), Lit::Null),
    Param::optional("nice_len", Kind::Int(2, 273), Lit::Null),
    Param::optional(
        "mf",
        Kind::Among(&[0x03, 0x04, 0x12, 0x13, 0x14]),
        Lit::Null,
    ),
    Param::optional("depth", Kind::Int(0, U32), Lit::Null),
];

/// The option of the delta filter object.
const DELTA_OPTIONS: &[Param] = &[Param::optional("dist", Kind::Int(1, 256), Lit::Int(1))];

/// The option of the branch (BCJ) filter objects.
const BCJ_OPTIONS: &[Param] = &[Param::optional(
    "start_offset",
    Kind::Int(0, U32),
    Lit::Int(0),
)];

/// Option `key` of filter object `f` as `table` declares it (None: absent
/// with no default).
fn option(f: &Map<String, Value>, table: &[Param], key: &str) -> Result<Option<u64>> {
    Ok(param(table, NAME, key).get(NAME, f)?.as_u64())
}

/// The LZMA1/LZMA2 options of a filter object, as Python builds them: the
/// preset's, then each option given.
fn lzma_options(f: &Map<String, Value>) -> Result<LzmaOptions> {
    let preset = match f.get("preset") {
        Some(v) => parse_preset(v, "filter option preset")?,
        None => xz::PRESET_DEFAULT,
    };
    let mut o = LzmaOptions::new_preset(preset).map_err(to_io)?;
    let opt = |key| option(f, LZMA_OPTIONS, key);
    if let Some(x) = opt("dict_size")? {
        o.dict_size(x as u32);
    }
    if let Some(x) = opt("lc")? {
        o.literal_context_bits(x as u32);
    }
    if let Some(x) = opt("lp")? {
        o.literal_position_bits(x as u32);
    }
    if let Some(x) = opt("pb")? {
        o.position_bits(x as u32);
    }
    if let Some(x) = opt("mode")? {
        o.mode(if x == 1 {
            xz::Mode::Fast
        } else {
            xz::Mode::Normal
        });
    }
    if let Some(x) = opt("nice_len")? {
        o.nice_len(x as u32);
    }
    if let Some(x) = opt("mf")? {
        o.match_finder(match x {
            0x03 => xz::MatchFinder::HashChain3,
            0x04 => xz::MatchFinder::HashChain4,
            0x12 => xz::MatchFinder::BinaryTree2,
            0x13 => xz::MatchFinder::BinaryTree3,
            _ => xz::MatchFinder::BinaryTree4,
        });
    }
    if let Some(x) = opt("depth")? {
        o.depth(x as u32);
    }
    Ok(o)
}

/// Only the options a filter of this kind takes.
fn check_keys(f: &Map<String, Value>, table: &[Param]) -> Result<()> {
    let allowed = || table.iter().map(|p| p.key);
    match f.keys().find(|k| *k != "id" && !allowed().any(|a| a == *k)) {
        Some(k) => Err(bad(format!(
            "filter option '{k}' is not one of {:?}",
            allowed().collect::<Vec<_>>()
        ))),
        None => Ok(()),
    }
}

/// A chain of filter objects as liblzma's filters (at most four).
fn filter_chain(list: &[Value]) -> Result<Filters> {
    if list.is_empty() || list.len() > 4 {
        return Err(bad(format!(
            "filters must list 1 to 4 filters, not {}",
            list.len()
        )));
    }
    let mut out = Filters::new();
    for v in list {
        let f = v
            .as_object()
            .ok_or_else(|| bad(format!("a filter must be an object, not {v}")))?;
        let id = f
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(format!("filter {v} has no integer 'id'")))?;
        match id {
            FILTER_LZMA1 | FILTER_LZMA2 => {
                check_keys(f, LZMA_OPTIONS)?;
                let o = lzma_options(f)?;
                if id == FILTER_LZMA1 {
                    out.lzma1(&o);
                } else {
                    out.lzma2(&o);
                }
            }
            FILTER_DELTA => {
                check_keys(f, DELTA_OPTIONS)?;
                let dist = option(f, DELTA_OPTIONS, "dist")?.unwrap_or(1);
                out.delta_properties(&[(dist - 1) as u8]).map_err(to_io)?;
            }
            _ if BCJ.contains(&id) => {
                check_keys(f, BCJ_OPTIONS)?;
                let start = option(f, BCJ_OPTIONS, "start_offset")?.unwrap_or(0) as u32;
                let props = start.to_le_bytes();
                let props: &[u8] = if start == 0 { &[] } else { &props };
                match id {
                    4 => out.x86_properties(props),
                    5 => out.powerpc_properties(props),
                    6 => out.ia64_properties(props),
                    7 => out.arm_properties(props),
                    8 => out.arm_thumb_properties(props),
                    _ => out.sparc_properties(props),
                }
                .map_err(to_io)?;
            }
            _ => return Err(bad(format!("filter id {id} is not supported"))),
        }
    }
    Ok(out)
}

impl Lzma {
    pub fn from_config(config: &Map<String, Value>) -> Result<Lzma> {
        let format = match SPEC.int(config, "format")? {
            0 => Format::Auto,
            1 => Format::Xz,
            2 => Format::Alone,
            _ => Format::Raw,
        };
        let check = SPEC.int(config, "check")?;
        let preset = match config.get("preset") {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_preset(v, "preset")?),
        };
        let filters = match config.get("filters") {
            None | Some(Value::Null) => None,
            Some(Value::Array(list)) => {
                filter_chain(list)?;
                Some(list.clone())
            }
            Some(v) => return Err(bad(format!("filters must be a list or null, not {v}"))),
        };
        if preset.is_some() && filters.is_some() {
            return Err(bad("give a preset or filters, not both".into()));
        }
        if format == Format::Raw && filters.is_none() {
            return Err(bad("format 3 (raw) needs filters".into()));
        }
        if matches!(format, Format::Alone | Format::Raw) && !matches!(check, -1 | 0) {
            return Err(bad(format!(
                "check {check} is only possible with format 1 (xz)"
            )));
        }
        Ok(Lzma {
            format,
            check,
            preset,
            filters,
        })
    }

    fn filters(&self) -> Result<Option<Filters>> {
        self.filters.as_deref().map(filter_chain).transpose()
    }

    fn encoder(&self) -> Result<Stream> {
        let preset = self.preset.unwrap_or(xz::PRESET_DEFAULT);
        let check = match self.check {
            0 => Check::None,
            1 => Check::Crc32,
            10 => Check::Sha256,
            _ => Check::Crc64,
        };
        match (self.format, self.filters()?) {
            (Format::Xz, None) => Stream::new_easy_encoder(preset, check),
            (Format::Xz, Some(f)) => Stream::new_stream_encoder(&f, check),
            (Format::Alone, None) => {
                Stream::new_lzma_encoder(&LzmaOptions::new_preset(preset).map_err(to_io)?)
            }
            (Format::Alone, Some(_)) => {
                // Python takes the one LZMA1 filter's options.
                let list = self.filters.as_deref().unwrap_or_default();
                let opts = match list {
                    [Value::Object(f)]
                        if f.get("id").and_then(Value::as_u64) == Some(FILTER_LZMA1) =>
                    {
                        lzma_options(f)?
                    }
                    _ => {
                        return Err(ZarrError::Codec(
                            "lzma: format 2 (lzma-alone) takes one LZMA1 filter".into(),
                        ))
                    }
                };
                Stream::new_lzma_encoder(&opts)
            }
            (Format::Raw, Some(f)) => Stream::new_raw_encoder(&f),
            _ => {
                return Err(ZarrError::Codec(
                    "lzma: format 0 (auto) only reads; write with format 1, 2 or 3".into(),
                ))
            }
        }
        .map_err(to_io)
    }

    fn decoder(&self) -> Result<Stream> {
        let flags = xz::CONCATENATED;
        match self.format {
            Format::Auto => Stream::new_auto_decoder(u64::MAX, flags),
            Format::Xz => Stream::new_stream_decoder(u64::MAX, flags),
            Format::Alone => Stream::new_lzma_decoder(u64::MAX),
            Format::Raw => match self.filters()? {
                Some(f) => Stream::new_raw_decoder(&f),
                None => return Err(ZarrError::Codec("lzma: raw data needs filters".into())),
            },
        }
        .map_err(to_io)
    }
}

impl BytesToBytes for Lzma {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        let format = match self.format {
            Format::Auto => 0,
            Format::Xz => 1,
            Format::Alone => 2,
            Format::Raw => 3,
        };
        super::config(&[
            ("format", format.into()),
            ("check", self.check.into()),
            ("preset", self.preset.map_or(Value::Null, Value::from)),
            (
                "filters",
                self.filters.clone().map_or(Value::Null, Value::Array),
            ),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(input.len() / 2 + 128);
        liblzma::read::XzEncoder::new_stream(&input[..], self.encoder()?)
            .read_to_end(&mut out)
            .map_err(|e| ZarrError::Codec(format!("lzma: compression failed: {e}")))?;
        Ok(out)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let reader = liblzma::read::XzDecoder::new_stream(input, self.decoder()?);
        read_limited("lzma", reader, to.len, input.len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{assert_decodes, built, ctx, stepped_doubles, unhex};
    use super::super::Warnings;
    use super::*;
    use serde_json::json;

    /// `numcodecs.LZMA(**config).encode(b"hello zarr\n")` (numcodecs 0.17,
    /// Python 3.13's liblzma).
    const NUMCODECS: [(&str, &str); 4] = [
        (
            "{}",
            "fd377a585a000004e6d6b4460200210116000000742fe5a301000a68656c6c6f207a6172720a000091cb62b25ab9efa70001230bc21bfd091fb6f37d010000000004595a",
        ),
        (
            r#"{"preset": 1, "check": 0}"#,
            "fd377a585a000000ff12d9410200210110000000a8708e8601000a68656c6c6f207a6172720a000000011b0b39a7621e06729e7a010000000000595a",
        ),
        (
            r#"{"format": 2, "preset": 9}"#,
            "5d00000004ffffffffffffffff00341949ee8de91858762774d2197fffffcde80000",
        ),
        (
            r#"{"format": 3, "filters": [{"id": 3, "dist": 4}, {"id": 33, "preset": 1}]}"#,
            "01000a68656c6c07bb0ef503529000",
        ),
    ];

    #[test]
    fn lzma_reads_what_numcodecs_writes_and_writes_the_same() {
        let w = Warnings::default();
        for (cfg, hex) in NUMCODECS {
            let c = built(&SPEC, serde_json::from_str(cfg).unwrap()).unwrap();
            let known = unhex(hex);
            assert_eq!(
                c.decode(known.clone(), ctx(&w).decode_to(Some(11)))
                    .unwrap(),
                b"hello zarr\n",
                "{cfg}"
            );
            assert_eq!(c.encode(b"hello zarr\n".to_vec()).unwrap(), known, "{cfg}");
        }
        // Format 0 reads both xz and lzma-alone streams.
        let auto = built(&SPEC, json!({"format": 0})).unwrap();
        for (_, hex) in &NUMCODECS[..3] {
            assert_eq!(
                auto.decode(unhex(hex), ctx(&w).decode_to(None)).unwrap(),
                b"hello zarr\n"
            );
        }
        assert_eq!(auto.encode(vec![1]).unwrap_err().kind(), "codec");
    }

    #[test]
    fn lzma_round_trips_and_refuses_bad_streams_and_configs() {
        let w = Warnings::default();
        let data = stepped_doubles();
        for cfg in [
            json!({}),
            json!({"check": 10, "preset": 2147483657u64}),
            json!({"format": 2}),
            json!({"format": 1, "filters": [{"id": 3, "dist": 8}, {"id": 33, "dict_size": 65536, "lc": 0, "lp": 3, "pb": 3}]}),
        ] {
            let c = built(&SPEC, cfg.clone()).unwrap();
            let enc = c.encode(data.clone()).unwrap();
            assert!(enc.len() < data.len() / 10, "{cfg}");
            assert_decodes(&*c, &enc, &data, "");
            let e = c
                .decode(enc.clone(), ctx(&w).decode_to(Some(100)))
                .unwrap_err();
            assert!(e.message().contains("100"), "{}", e.message());
            let e = c
                .decode(enc[..enc.len() / 2].to_vec(), ctx(&w).decode_to(None))
                .unwrap_err();
            assert_eq!(e.kind(), "codec");
            assert!(e.message().contains("lzma"), "{}", e.message());
        }
        let c = built(&SPEC, json!({})).unwrap();
        assert_eq!(
            c.to_json(),
            json!({"name": NAME, "configuration": {"format": 1, "check": -1, "preset": null, "filters": null}})
        );
        assert_eq!(
            c.decode(b"garbage".to_vec(), ctx(&w).decode_to(None))
                .unwrap_err()
                .kind(),
            "codec"
        );
        for v in [
            json!({"format": 4}),
            json!({"check": 2}),
            json!({"preset": 10}),
            json!({"preset": 1, "filters": [{"id": 33}]}),
            json!({"format": 3}),
            json!({"format": 2, "check": 4}),
            json!({"filters": []}),
            json!({"filters": [{"id": 99}]}),
            json!({"filters": [{"id": 33, "dist": 2}]}),
            json!({"filters": [{"id": 3, "dist": 300}]}),
            json!({"filters": "x"}),
        ] {
            let e = built(&SPEC, v.clone()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{v}");
            assert!(e.message().contains(NAME), "{}", e.message());
        }
    }
}
