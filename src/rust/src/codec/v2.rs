//! A codec in Zarr v2 metadata: its numcodecs `id` and how its numcodecs
//! configuration maps to its zarr.json entry and back. Each codec declares
//! this in its own file (`CodecSpec::v2`); metadata/v2 finds codecs by id
//! in the registry and names none itself.

use crate::dtype::numpy::TypeStr;
use crate::error::Result;
use serde_json::{json, Map, Value};

pub struct V2Config {
    /// numcodecs' `id` for the codec.
    pub id: &'static str,
    /// A numcodecs configuration (a compressor or filter, `role` in
    /// errors) -> the codec's zarr.json entry. `typesize` is the item size
    /// of the buffer the codec receives (numcodecs hands it to blosc); it
    /// is set to that of the codec's output.
    pub from_v2: fn(cfg: &Map<String, Value>, typesize: &mut usize, role: &str) -> Result<Value>,
    /// The codec's zarr.json configuration -> the members of its numcodecs
    /// configuration besides `id`.
    pub to_v2: fn(cfg: &Map<String, Value>) -> Map<String, Value>,
    /// Whether numcodecs has it among the filters (its output keeps the
    /// element structure), not as the compressor.
    pub filter: bool,
}

/// The integer member `key` of a numcodecs configuration, `default` when
/// it is absent or null.
pub(crate) fn int_member(cfg: &Map<String, Value>, key: &str, default: i64) -> Value {
    cfg.get(key)
        .filter(|v| !v.is_null())
        .cloned()
        .unwrap_or_else(|| Value::from(default))
}

/// The entry of compressor `name` whose one configuration member is the
/// integer `key` (`default` when absent); it hands on plain bytes.
pub(crate) fn int_compressor(
    name: &str,
    cfg: &Map<String, Value>,
    key: &str,
    default: i64,
    typesize: &mut usize,
) -> Result<Value> {
    *typesize = 1;
    let mut config = Map::new();
    config.insert(key.to_string(), int_member(cfg, key, default));
    Ok(json!({"name": name, "configuration": config}))
}

/// The `V2Config` of a codec whose numcodecs members are its declared ones
/// (`SPEC.params`, with `SPEC` the codec's spec), carried over as they are
/// both ways; `output` is what `entry` takes: None for a codec that hands
/// on plain bytes.
macro_rules! v2_carried {
    ($id:literal, filter: $filter:literal, output: $output:expr) => {
        Some($crate::codec::v2::V2Config {
            id: $id,
            from_v2: |cfg, typesize, _| {
                let keys = SPEC.members();
                Ok($crate::codec::v2::entry(
                    SPEC.name, cfg, &keys, $output, typesize,
                ))
            },
            to_v2: |cfg| $crate::codec::v2::members(cfg, &SPEC.members()),
            filter: $filter,
        })
    };
}
pub(crate) use v2_carried;

/// The members `keys` of a zarr.json configuration (null when absent), in
/// that order.
pub(crate) fn members(cfg: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .map(|k| (k.to_string(), cfg.get(*k).cloned().unwrap_or(Value::Null)))
        .collect()
}

/// The zarr.json entry of codec `name` from a numcodecs configuration: the
/// members `keys` it has. With `output` = (member, fallback), the codec's
/// output elements are of the type string `member` (`fallback`'s, written
/// in, when absent) and `typesize` becomes their size; without, the codec
/// hands on plain bytes (a compressor).
pub(crate) fn entry(
    name: &str,
    cfg: &Map<String, Value>,
    keys: &[&str],
    output: Option<(&str, &str)>,
    typesize: &mut usize,
) -> Value {
    let mut config: Map<String, Value> = keys
        .iter()
        .filter_map(|k| cfg.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    match output {
        Some((member, fallback)) => {
            if config.get(member).is_none_or(Value::is_null) {
                let v = config.get(fallback).cloned().unwrap_or(Value::Null);
                config.insert(member.into(), v);
            }
            if let Some(size) = config[member]
                .as_str()
                .and_then(TypeStr::split)
                .and_then(|t| t.size)
            {
                *typesize = size;
            }
        }
        None => *typesize = 1,
    }
    json!({"name": name, "configuration": config})
}
