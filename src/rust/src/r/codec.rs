//! Bindings of single codecs on R data: `bytes`, and bytes -> bytes codecs.

use super::array::r_data;
use super::*;

fn dtype_and_fill(dtype: &str, fill_json: &str) -> Result<(DataType, FillValue)> {
    let dtype = DataType::parse(dtype)?;
    let fill = serde_json::from_str(fill_json).map_err(ZarrError::from)?;
    Ok((dtype, FillValue::parse(&fill, dtype)?))
}

/// The `bytes` codec on R data in memory order: NA -> fill, then the byte
/// order of `endian` ("little", "big" or "" for one-byte types).
/// @noRd
#[extendr]
fn rz_bytes_encode(data: Robj, dtype: &str, fill_json: &str, endian: &str) -> Robj {
    guard(|| {
        let (dtype, fill) = dtype_and_fill(dtype, fill_json)?;
        let mut bytes = encode_elements(
            &r_data(&data, "codec 'bytes'")?,
            dtype,
            &fill.bytes,
            "codec 'bytes'",
        )?;
        if endian_swaps(endian)? {
            crate::codec::bytes::swap_bytes(&mut bytes, dtype.swap_unit());
        }
        Ok(Raw::from_bytes(&bytes).into())
    })
}

/// The inverse of `rz_bytes_encode`: a vector of the data type's R type.
/// @noRd
#[extendr]
fn rz_bytes_decode(data: Raw, dtype: &str, fill_json: &str, endian: &str, bit64: bool) -> Robj {
    guard(|| {
        let (dtype, fill) = dtype_and_fill(dtype, fill_json)?;
        let mut bytes = data.as_slice().to_vec();
        if endian_swaps(endian)? {
            crate::codec::bytes::swap_bytes(&mut bytes, dtype.swap_unit());
        }
        let rtype = dtype.r_type(bit64);
        let mut out = alloc_r_vector(rtype, bytes.len() / dtype.size());
        let w = with_r_buffer(&mut out, rtype, |buf| {
            decode_elements(
                &bytes,
                dtype,
                &fill.bytes,
                NaRule::Fill,
                buf,
                "codec 'bytes'",
            )
        })?;
        Ok(with_warnings(out, w))
    })
}

fn endian_swaps(endian: &str) -> Result<bool> {
    Ok(match endian {
        "" => false,
        "little" => Endian::native() != Endian::Little,
        "big" => Endian::native() != Endian::Big,
        other => {
            return Err(ZarrError::Codec(format!(
                "endian must be \"little\" or \"big\", not '{other}'"
            )))
        }
    })
}

/// Encode a raw vector with one bytes -> bytes codec, given as its JSON entry.
/// @noRd
#[extendr]
fn rz_codec_encode(codec_json: &str, dtype: &str, data: Raw, shape: Robj) -> Robj {
    guard(|| {
        let codec =
            bytes_codec_from_json(&serde_json::from_str(codec_json)?, DataType::parse(dtype)?)?;
        let input = data.as_slice().to_vec();
        let out = match chunk_shape(&shape)? {
            Some(shape) => codec.encode_shaped(input, &shape)?,
            None => codec.encode(input)?,
        };
        Ok(Raw::from_bytes(&out).into())
    })
}

/// The chunk shape an R caller gave a codec (NULL: none), for the codecs
/// that compress fields (zfp) rather than lines of bytes. R gives it in its
/// own order (first dimension fastest); the codecs take the C order of the
/// chunk's elements, the reverse.
fn chunk_shape(shape: &Robj) -> Result<Option<Vec<usize>>> {
    if shape.is_null() {
        return Ok(None);
    }
    let bad = || ZarrError::Argument("shape must be NULL or whole numbers >= 0".into());
    let values: Vec<f64> = match (shape.as_real_vector(), shape.as_integer_vector()) {
        (Some(v), _) => v,
        (None, Some(v)) => v.iter().map(|&i| f64::from(i)).collect(),
        _ => return Err(bad()),
    };
    values
        .iter()
        .map(|&v| {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(bad())
            }
        })
        .rev()
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Decode a raw vector with one bytes -> bytes codec.
/// @noRd
#[extendr]
fn rz_codec_decode(codec_json: &str, dtype: &str, data: Raw, strict: bool, shape: Robj) -> Robj {
    guard(|| {
        let codec =
            bytes_codec_from_json(&serde_json::from_str(codec_json)?, DataType::parse(dtype)?)?;
        let warnings = Warnings::default();
        let what = format!("codec '{}'", codec.name());
        let to = CodecContext {
            strict_checksums: strict,
            warnings: &warnings,
            what: &what,
        }
        .decode_to(None);
        let out = match chunk_shape(&shape)? {
            Some(shape) => codec.decode_shaped(data.as_slice(), &shape, to),
            None => codec.decode(data.as_slice().to_vec(), to),
        }
        .map_err(|e| e.into_corrupt())?;
        Ok(with_warnings(Raw::from_bytes(&out).into(), warnings.take()))
    })
}

extendr_module! {
    mod codec;
    fn rz_bytes_encode;
    fn rz_bytes_decode;
    fn rz_codec_encode;
    fn rz_codec_decode;
}
