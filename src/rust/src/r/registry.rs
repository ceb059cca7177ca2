//! Bindings of what the engine knows about codecs and data types, so that
//! R builds its tables from the codec files (`codec/*.rs`) and `dtype.rs`
//! instead of repeating them.

use super::*;
use crate::codec::REGISTRY;
use crate::dtype::ALL_DATA_TYPES;

/// Every codec: its v3 `name`, `mode` ("array -> bytes", ...), numcodecs'
/// `v2_id` (NA when Zarr v2 has none) and whether the engine runs it on a
/// chunk's bytes alone (`on_bytes`: bytes -> bytes codecs and numcodecs'
/// array -> array filters), in chain order.
/// @noRd
#[extendr]
fn rz_codec_registry() -> Robj {
    guard(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        let modes: Vec<&str> = REGISTRY.iter().map(|s| s.mode.label()).collect();
        let v2: Vec<Option<&str>> = REGISTRY.iter().map(|s| s.v2_id()).collect();
        let v2 = Strings::from_values(v2.into_iter().map(|v| match v {
            Some(s) => Rstr::from(s),
            None => Rstr::na(),
        }));
        let on_bytes: Vec<bool> = REGISTRY.iter().map(|s| s.build.is_some()).collect();
        Ok(list!(name = names, mode = modes, v2_id = v2, on_bytes = on_bytes).into())
    })
}

/// The configuration (JSON text) codec `name` gets by default for an array
/// of `dtype` with `ndim` dimensions; NULL for a codec without defaults or
/// that the engine does not know.
/// @noRd
#[extendr]
fn rz_codec_defaults(name: &str, dtype: &str, ndim: i32) -> Robj {
    guard(|| {
        let dtype = DataType::parse(dtype)?;
        let Some(defaults) = crate::codec::spec(name).and_then(|s| s.defaults) else {
            return Ok(().into());
        };
        let cfg = defaults(dtype, ndim.max(0) as usize);
        Ok(serde_json::to_string(&cfg)?.into())
    })
}

/// `config_json` (a JSON object) completed with codec `name`'s defaults
/// for `dtype` and `ndim` and checked by the engine, as JSON text: the
/// configuration R's codec classes hold. Errors are the engine's, naming
/// the codec and the member.
/// @noRd
#[extendr]
fn rz_codec_configure(name: &str, config_json: &str, dtype: &str, ndim: i32) -> Robj {
    guard(|| {
        let dtype = DataType::parse(dtype)?;
        let spec = crate::codec::spec(name)
            .ok_or_else(|| ZarrError::Unsupported(format!("unknown codec '{name}'")))?;
        let config: serde_json::Map<String, serde_json::Value> =
            match serde_json::from_str(config_json)? {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
        let cfg = spec.configure(&config, dtype, ndim.max(0) as usize)?;
        Ok(serde_json::to_string(&cfg)?.into())
    })
}

/// The data types: name, R type (with bit64), signedness, size in bytes
/// (NA for strings) and the smallest and largest value (NA where none).
/// @noRd
#[extendr]
fn rz_data_types() -> Robj {
    guard(|| {
        let types = ALL_DATA_TYPES;
        let rtype = |d: DataType| match d.r_type(true) {
            RType::Logical => "logical",
            RType::Integer => "integer",
            RType::Double => "double",
            RType::Complex => "complex",
            RType::Integer64 => "integer64",
            RType::Character => "character",
            RType::Raw => "raw",
        };
        let size = |d: DataType| match d.size() {
            0 => Rint::na(),
            n => Rint::from(n as i32),
        };
        let (min, max): (Vec<Rfloat>, Vec<Rfloat>) = types.iter().map(|&d| range(d)).unzip();
        Ok(list!(
            data_type = types.iter().map(|d| d.name()).collect::<Vec<_>>(),
            Rtype = types.iter().map(|&d| rtype(d)).collect::<Vec<_>>(),
            signed = types.iter().map(|d| d.is_signed()).collect::<Vec<_>>(),
            size = Integers::from_values(types.iter().map(|&d| size(d))),
            min = Doubles::from_values(min),
            max = Doubles::from_values(max)
        )
        .into())
    })
}

/// The smallest and largest value of a data type, as doubles.
fn range(d: DataType) -> (Rfloat, Rfloat) {
    use DataType as D;
    let r = |lo: f64, hi: f64| (Rfloat::from(lo), Rfloat::from(hi));
    match d {
        D::Bool => r(0.0, 1.0),
        D::Int8 => r(i8::MIN as f64, i8::MAX as f64),
        D::Int16 => r(i16::MIN as f64, i16::MAX as f64),
        D::Int32 => r(i32::MIN as f64, i32::MAX as f64),
        D::Int64 => r(i64::MIN as f64, i64::MAX as f64),
        D::UInt8 => r(0.0, u8::MAX as f64),
        D::UInt16 => r(0.0, u16::MAX as f64),
        D::UInt32 => r(0.0, u32::MAX as f64),
        D::UInt64 => r(0.0, u64::MAX as f64),
        D::Float16 | D::Float32 | D::Float64 => r(f64::NEG_INFINITY, f64::INFINITY),
        D::Complex64 | D::Complex128 | D::String | D::Record(_) => (Rfloat::na(), Rfloat::na()),
    }
}

extendr_module! {
    mod registry;
    fn rz_codec_registry;
    fn rz_codec_defaults;
    fn rz_codec_configure;
    fn rz_data_types;
}
