//! The codec registry: each codec's declaration (`CodecSpec`), made once in
//! the codec's own file, and the one list of them. Everything else that
//! needs to know a codec — the chain parser, Zarr v2 metadata, strict mode,
//! the defaults of new arrays and R's codec classes — asks the registry.

use super::{BytesToBytes, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

/// What a configuration member takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An integer from the first to the second number.
    Int(i64, i64),
    /// One of these integers.
    Among(&'static [i64]),
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// Checked by the codec when it is built (codec lists, shapes, type
    /// strings, choices that also take numbers); the text says what it is.
    Other(&'static str),
}

/// A value a declaration can hold (serde_json's `Value` is not `const`).
#[derive(Debug, Clone, Copy)]
pub enum Lit {
    Int(i64),
    Bool(bool),
    Str(&'static str),
    /// The codec decides, from the data type (blosc's `typesize`).
    Null,
}

impl From<Lit> for Value {
    fn from(l: Lit) -> Value {
        match l {
            Lit::Int(i) => i.into(),
            Lit::Bool(b) => b.into(),
            Lit::Str(s) => s.into(),
            Lit::Null => Value::Null,
        }
    }
}

/// One member of a codec's configuration.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    pub kind: Kind,
    /// The value a configuration without the member means; None when the
    /// member is required.
    pub absent: Option<Lit>,
}

impl Param {
    pub const fn required(key: &'static str, kind: Kind) -> Param {
        Param {
            key,
            kind,
            absent: None,
        }
    }

    pub const fn optional(key: &'static str, kind: Kind, absent: Lit) -> Param {
        Param {
            key,
            kind,
            absent: Some(absent),
        }
    }

    /// What the member takes, in words.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Int(i64::MIN, i64::MAX) => "an integer".into(),
            Kind::Int(lo, i64::MAX) => format!("an integer >= {lo}"),
            Kind::Int(lo, hi) => format!("an integer from {lo} to {hi}"),
            Kind::Among(c) => {
                let shown: Vec<String> = c.iter().map(i64::to_string).collect();
                format!("one of {}", shown.join(", "))
            }
            Kind::Bool => "true or false".into(),
            Kind::Choice(c) => {
                let quoted: Vec<String> = c.iter().map(|s| format!("\"{s}\"")).collect();
                format!("one of {}", quoted.join(", "))
            }
            Kind::Other(text) => text.into(),
        }
    }

    /// The member's value in `config`, checked against its kind (`Other`
    /// is the codec's to check); `absent` when it is missing or null.
    pub fn get(&self, codec: &str, config: &Map<String, Value>) -> Result<Value> {
        let bad = |why: String| Err(ZarrError::Metadata(format!("codec '{codec}': {why}")));
        let v = match config.get(self.key) {
            None | Some(Value::Null) => {
                return match self.absent {
                    Some(l) => Ok(l.into()),
                    None => bad(format!(
                        "configuration has no '{}' ({})",
                        self.key,
                        self.describe()
                    )),
                }
            }
            Some(v) => v,
        };
        let ok = match self.kind {
            Kind::Int(lo, hi) => v.as_i64().is_some_and(|i| (lo..=hi).contains(&i)),
            Kind::Among(c) => v.as_i64().is_some_and(|i| c.contains(&i)),
            Kind::Bool => v.is_boolean(),
            Kind::Choice(c) => v.as_str().is_some_and(|s| c.contains(&s)),
            Kind::Other(_) => true,
        };
        if ok {
            Ok(v.clone())
        } else {
            bad(format!("{} must be {}, not {v}", self.key, self.describe()))
        }
    }
}

/// The declaration of member `key` in `params`. Codecs only ask for members
/// they declare, so a missing one is a mistake in this crate.
pub fn param<'a>(params: &'a [Param], codec: &str, key: &str) -> &'a Param {
    params
        .iter()
        .find(|p| p.key == key)
        .unwrap_or_else(|| panic!("codec '{codec}' declares no member '{key}'"))
}

/// The configuration `params` mean when none of them is given: each
/// optional member's absent value (required ones left out).
pub fn absent_config(params: &[Param]) -> Map<String, Value> {
    params
        .iter()
        .filter_map(|p| Some((p.key.to_string(), p.absent?.into())))
        .collect()
}

/// Builds a bytes -> bytes codec from its configuration, for chunks of a
/// data type (some codecs work on elements: blosc's shuffle, delta).
pub type BuildFn = fn(&Map<String, Value>, DataType) -> Result<Box<dyn BytesToBytes>>;

/// A codec's default configuration for an array's data type and number of
/// dimensions.
pub type DefaultConfig = fn(DataType, usize) -> Map<String, Value>;

/// A codec's identity, declared once in its own file: its name in Zarr v3
/// metadata, numcodecs' `id` for it in Zarr v2 metadata (if it has one),
/// its mode, its configuration members, the configuration a new array of a
/// data type and number of dimensions gets when none is given (None: it
/// has to be configured), and how to build it (bytes -> bytes codecs; the
/// chain parser builds the others, which shape the chain itself).
pub struct CodecSpec {
    pub name: &'static str,
    pub v2: Option<super::v2::V2Config>,
    pub mode: Mode,
    pub params: &'static [Param],
    pub defaults: Option<DefaultConfig>,
    pub build: Option<BuildFn>,
}

impl CodecSpec {
    /// numcodecs' `id` for the codec, if Zarr v2 has it.
    pub fn v2_id(&self) -> Option<&'static str> {
        self.v2.as_ref().map(|v| v.id)
    }

    /// The declaration of member `key`. Codecs only ask for members they
    /// declare, so a missing one is a mistake in this crate.
    pub fn param(&self, key: &str) -> &Param {
        param(self.params, self.name, key)
    }

    /// The integer member `key` of `config`, checked against its declaration.
    pub fn int(&self, config: &Map<String, Value>, key: &str) -> Result<i64> {
        self.member(config, key, Value::as_i64, "an integer")
    }

    /// The text member `key` of `config`, checked against its declaration
    /// (its absent value when missing).
    pub fn text(&self, config: &Map<String, Value>, key: &str) -> Result<String> {
        self.member(config, key, |v| v.as_str().map(str::to_string), "text")
    }

    /// The boolean member `key` of `config`, checked against its declaration.
    pub fn flag(&self, config: &Map<String, Value>, key: &str) -> Result<bool> {
        self.member(config, key, Value::as_bool, "true or false")
    }

    /// Member `key` of `config` as `read` takes it, or the error saying it
    /// must be `kind`.
    fn member<T>(
        &self,
        config: &Map<String, Value>,
        key: &str,
        read: impl Fn(&Value) -> Option<T>,
        kind: &str,
    ) -> Result<T> {
        let v = self.param(key).get(self.name, config)?;
        read(&v).ok_or_else(|| {
            ZarrError::Metadata(format!(
                "codec '{}': {key} must be {kind}, not {v}",
                self.name
            ))
        })
    }

    /// The names of the configuration members, as zarr.json has them.
    pub fn members(&self) -> Vec<&'static str> {
        self.params.iter().map(|p| p.key).collect()
    }

    /// A bytes -> bytes codec built from `config`; an error for codecs of
    /// the other modes, which only a chain can place.
    pub fn build_bytes(
        &self,
        config: &Map<String, Value>,
        dtype: DataType,
    ) -> Result<Box<dyn BytesToBytes>> {
        match self.build {
            Some(build) => build(config, dtype),
            None => Err(ZarrError::Unsupported(format!(
                "'{}' is not a bytes -> bytes codec",
                self.name
            ))),
        }
    }

    /// `config` completed with the defaults for `dtype` and `ndim` and
    /// checked as the engine checks it when it reads metadata: what R's
    /// codec classes hold. Bytes -> bytes codecs are built, and give back
    /// their configuration as they write it.
    pub fn configure(
        &self,
        config: &Map<String, Value>,
        dtype: DataType,
        ndim: usize,
    ) -> Result<Map<String, Value>> {
        let mut full = self.defaults.map(|d| d(dtype, ndim)).unwrap_or_default();
        for (k, v) in config {
            if !v.is_null() {
                full.insert(k.clone(), v.clone());
            }
        }
        for p in self.params {
            p.get(self.name, &full)?;
        }
        if self.build.is_some() {
            let codec = self.build_bytes(&full, dtype)?;
            return Ok(codec.configuration());
        }
        Ok(full)
    }
}

/// Every codec the engine reads and writes, in chain order. A new codec is
/// its file and one line here.
pub static REGISTRY: &[&CodecSpec] = &[
    &super::transpose::SPEC,
    &super::scale_offset::SPEC,
    &super::cast_value::SPEC,
    &super::bytes::SPEC,
    &super::vlen::SPEC,
    &super::fixed_string::SPEC,
    &super::categorize::SPEC,
    &super::sharding::SPEC,
    &super::gzip::SPEC,
    &super::zstd::SPEC,
    &super::blosc::SPEC,
    &super::crc32c::SPEC,
    &super::zlib::SPEC,
    &super::lz4::SPEC,
    &super::bz2::SPEC,
    &super::lzma::SPEC,
    &super::shuffle::SPEC,
    &super::delta::SPEC,
    &super::fixedscaleoffset::SPEC,
    &super::quantize::SPEC,
    &super::bitround::SPEC,
    &super::bitround::REGISTRY_SPEC,
    &super::packbits::SPEC,
    &super::packbits::REGISTRY_SPEC,
    &super::astype::SPEC,
    &super::pcodec::SPEC,
    &super::zfp::SPEC,
    &super::zfp::ZFP_SPEC,
    &super::checksum32::CRC32,
    &super::checksum32::ADLER32,
    &super::checksum32::FLETCHER32,
    &super::checksum32::JENKINS_LOOKUP3,
];

/// The codec named `name` in Zarr v3 metadata.
pub fn spec(name: &str) -> Option<&'static CodecSpec> {
    REGISTRY.iter().copied().find(|s| s.name == name)
}

/// The codec whose numcodecs `id` (Zarr v2 metadata) is `id`.
pub fn spec_of_v2_id(id: &str) -> Option<&'static CodecSpec> {
    REGISTRY.iter().copied().find(|s| s.v2_id() == Some(id))
}

/// The codec zarr-python names `numcodecs.<id>` in Zarr v3 metadata when
/// the registry has it under another name (`numcodecs.gzip` is `gzip`,
/// `numcodecs.blosc` is `blosc`): numcodecs' configuration members are its
/// Zarr v2 ones, so the codec's `from_v2` reads them (numcodecs' defaults
/// for absent members, blosc's integer shuffles). Returns its spec and
/// configuration; None for other names. Written back, it has the
/// registry's name, which zarr-python reads too.
pub fn numcodecs_alias(
    name: &str,
    config: &Map<String, Value>,
    dtype: DataType,
) -> Result<Option<(&'static CodecSpec, Map<String, Value>)>> {
    let Some(s) = alias_spec(name) else {
        return Ok(None);
    };
    let Some(v2) = s.v2.as_ref() else {
        return Ok(None);
    };
    // What a codec right after `bytes` receives: elements of the data type.
    let mut typesize = dtype.size().max(1);
    let entry = (v2.from_v2)(config, &mut typesize, "codec")?;
    let config = entry
        .get("configuration")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    Ok(Some((s, config)))
}

/// The spec `numcodecs.<id>` stands for, when it is not that spec's name.
fn alias_spec(name: &str) -> Option<&'static CodecSpec> {
    let id = name.strip_prefix("numcodecs.")?;
    spec_of_v2_id(id).filter(|s| s.name != name && s.mode == super::Mode::BytesToBytes)
}

/// The configuration members the codec named `name` reads; None for a name
/// that is no codec here. A member not listed is ignored when the codec is
/// built, and `metadata::strict` tells the reader so.
pub fn configuration_members(name: &str) -> Option<Vec<&'static str>> {
    spec(name)
        .or_else(|| alias_spec(name))
        .map(CodecSpec::members)
}
