//! `transpose` codec (v3-codecs-transpose.rst): array -> array.
//! Configuration: `order`, a permutation of 0..ndim; encoded dimension `i`
//! is decoded (logical) dimension `order[i]`. The engine applies it as
//! strides; data is never permuted on its own.

use super::registry::{CodecSpec, Kind, Param};
use super::{config, Mode};
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "transpose";

/// The default order reverses the dimensions: chunks are then stored in
/// R's column-major order and read with a plain copy.
pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToArray,
    params: &[Param::required(
        "order",
        Kind::Other("a permutation of 0 to ndim - 1"),
    )],
    defaults: Some(|_, ndim| config(&[("order", (0..ndim).rev().collect::<Vec<_>>().into())])),
    build: None,
};

pub fn parse_order(config: &Map<String, Value>, ndim: usize) -> Result<Vec<usize>> {
    let bad = |why: String| Err(ZarrError::Metadata(format!("codec 'transpose': {why}")));
    let order = match config.get("order") {
        Some(Value::Array(a)) => a,
        // "C" and "F" were allowed by early drafts of the spec.
        Some(Value::String(s)) if s == "C" => return Ok((0..ndim).collect()),
        Some(Value::String(s)) if s == "F" => return Ok((0..ndim).rev().collect()),
        Some(other) => return bad(format!("order must be an array of integers, not {other}")),
        None => return bad("configuration has no 'order'".into()),
    };
    if order.len() != ndim {
        return bad(format!(
            "order has {} entries but the array has {ndim} dimensions",
            order.len()
        ));
    }
    let mut seen = vec![false; ndim];
    let mut out = Vec::with_capacity(ndim);
    for v in order {
        let i = match v.as_u64() {
            Some(i) if (i as usize) < ndim => i as usize,
            _ => {
                return bad(format!(
                    "order entry {v} is not a dimension index below {ndim}"
                ))
            }
        };
        if seen[i] {
            return bad(format!("order repeats dimension {i}"));
        }
        seen[i] = true;
        out.push(i);
    }
    Ok(out)
}

pub fn to_json(order: &[usize]) -> Value {
    json!({"name": "transpose", "configuration": {"order": order}})
}

/// The order of applying `first` then `second`.
pub fn compose(first: &[usize], second: &[usize]) -> Vec<usize> {
    second.iter().map(|&i| first[i]).collect()
}

/// Element strides of each logical dimension of a chunk stored in C order
/// after the permutation `order` (None = identity, i.e. plain C order).
pub fn stored_strides(chunk_shape: &[usize], order: Option<&[usize]>) -> Vec<usize> {
    let n = chunk_shape.len();
    let identity: Vec<usize> = (0..n).collect();
    let order = order.unwrap_or(&identity);
    let mut strides = vec![0usize; n];
    let mut acc = 1usize;
    for &d in order.iter().rev() {
        strides[d] = acc;
        acc *= chunk_shape[d];
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_order_is_column_major() {
        assert_eq!(stored_strides(&[3, 4, 5], Some(&[2, 1, 0])), vec![1, 3, 12]);
        assert_eq!(stored_strides(&[3, 4, 5], None), vec![20, 5, 1]);
        // encoded dims are (4, 5, 3): logical dim 0 is innermost.
        assert_eq!(stored_strides(&[3, 4, 5], Some(&[1, 2, 0])), vec![1, 15, 3]);
    }

    #[test]
    fn invalid_orders_are_refused() {
        let mk = |v: Value| {
            let mut m = Map::new();
            m.insert("order".into(), v);
            m
        };
        assert!(parse_order(&mk(json!([0, 0])), 2).is_err());
        assert!(parse_order(&mk(json!([0, 2])), 2).is_err());
        assert!(parse_order(&mk(json!([0])), 2).is_err());
        assert_eq!(parse_order(&mk(json!([1, 0])), 2).unwrap(), vec![1, 0]);
    }

    #[test]
    fn composition_applies_first_then_second() {
        // first reverses 3 dims, second swaps the first two encoded dims
        assert_eq!(compose(&[2, 1, 0], &[1, 0, 2]), vec![1, 2, 0]);
    }
}
