//! `bytes` codec (v3-codecs-bytes.rst): array -> bytes, elements laid out
//! in the chunk's stored order with the configured byte order.
//! Configuration: `endian`, "little" or "big"; may be absent for types of
//! one byte. Complex numbers swap their two parts separately.

use super::registry::{CodecSpec, Kind, Lit, Param};
use super::{config, Mode};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "bytes";

/// Little endian for types of more than one byte; none for the others.
pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToBytes,
    // Absent only for one-byte types.
    params: &[Param::optional(
        "endian",
        Kind::Choice(&["little", "big"]),
        Lit::Null,
    )],
    defaults: Some(|dtype, _| {
        if dtype.size() > 1 {
            config(&[("endian", "little".into())])
        } else {
            config(&[])
        }
    }),
    build: None,
};

pub use crate::dtype::Endian;

pub fn parse_endian(config: &Map<String, Value>, dtype: DataType) -> Result<Option<Endian>> {
    match config.get("endian") {
        None | Some(Value::Null) => {
            // Records: each field has its byte order (metadata/structs.rs).
            if dtype.size() == 1 || matches!(dtype, DataType::Record(_)) {
                Ok(None)
            } else {
                Err(ZarrError::Metadata(format!(
                    "codec 'bytes' needs an 'endian' for data type '{}'",
                    dtype.name()
                )))
            }
        }
        Some(Value::String(s)) if s == "little" => Ok(Some(Endian::Little)),
        Some(Value::String(s)) if s == "big" => Ok(Some(Endian::Big)),
        Some(other) => Err(ZarrError::Metadata(format!(
            "codec 'bytes': endian must be \"little\" or \"big\", not {other}"
        ))),
    }
}

pub fn to_json(endian: Option<Endian>) -> Value {
    match endian {
        Some(e) => json!({"name": "bytes", "configuration": {"endian": e.name()}}),
        None => json!({"name": "bytes"}),
    }
}

/// Reverse the bytes of every `unit`-byte group of `buf` in place.
pub fn swap_bytes(buf: &mut [u8], unit: usize) {
    match unit {
        0 | 1 => {}
        2 => buf.chunks_exact_mut(2).for_each(|c| c.swap(0, 1)),
        4 => buf.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => buf.chunks_exact_mut(8).for_each(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
        }),
        n => buf.chunks_exact_mut(n).for_each(|c| c.reverse()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endian_is_required_except_for_single_bytes() {
        let empty = Map::new();
        assert_eq!(parse_endian(&empty, DataType::UInt8).unwrap(), None);
        assert_eq!(
            parse_endian(&empty, DataType::Int16).unwrap_err().kind(),
            "metadata"
        );
        let mut big = Map::new();
        big.insert("endian".into(), json!("big"));
        assert_eq!(
            parse_endian(&big, DataType::Float64).unwrap(),
            Some(Endian::Big)
        );
        big.insert("endian".into(), json!("middle"));
        assert!(parse_endian(&big, DataType::Float64).is_err());
    }

    #[test]
    fn swap_reverses_each_unit() {
        let mut b = vec![1, 2, 3, 4, 5, 6, 7, 8];
        swap_bytes(&mut b, 4);
        assert_eq!(b, vec![4, 3, 2, 1, 8, 7, 6, 5]);
        swap_bytes(&mut b, 8);
        assert_eq!(b, vec![5, 6, 7, 8, 1, 2, 3, 4]);
        let mut c = vec![1, 2, 3];
        swap_bytes(&mut c, 3);
        assert_eq!(c, vec![3, 2, 1]);
    }
}
