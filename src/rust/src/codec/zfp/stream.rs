//! zfp's streams of one chunk: the field a chunk is, the stream's
//! parameters, and compressing and decompressing it (with zfpy's header).

use super::{Params, Zfp, NAME, ZFP_NAME};
use crate::error::{Result, ZarrError};
use serde_json::Value;
use zfp_rs::{
    ZfpBitStream, ZfpBitStreamOps, ZfpBitStreamRef, ZfpConfig, ZfpDimensionality, ZfpField,
    ZfpFieldMut, ZfpHeaderMask, ZfpScalar, ZfpScalarType, ZfpStreamAlignment,
};

impl Zfp {
    pub(super) fn label(&self) -> &'static str {
        if self.zfpy.is_some() {
            NAME
        } else {
            ZFP_NAME
        }
    }

    pub(super) fn err(&self, why: String) -> ZarrError {
        ZarrError::Codec(format!("{}: {why}", self.label()))
    }

    /// zfp's field dimensions (fastest first) of a C-order chunk.
    pub(super) fn field_dims(&self, shape: &[usize]) -> Result<([usize; 4], ZfpDimensionality)> {
        if shape.len() > 4 {
            return Err(ZarrError::Unsupported(format!(
                "codec '{}' compresses chunks of 1 to 4 dimensions, not {}",
                self.label(),
                shape.len()
            )));
        }
        let mut dims = [0usize; 4];
        for (d, &n) in dims.iter_mut().zip(shape.iter().rev()) {
            *d = n;
        }
        if shape.is_empty() {
            dims[0] = 1;
        }
        if dims.iter().take(shape.len().max(1)).any(|&n| n == 0) {
            return Err(self.err(format!("a chunk of shape {shape:?} has no elements")));
        }
        let dimensionality = match shape.len() {
            0 | 1 => ZfpDimensionality::D1,
            2 => ZfpDimensionality::D2,
            3 => ZfpDimensionality::D3,
            _ => ZfpDimensionality::D4,
        };
        Ok((dims, dimensionality))
    }

    /// zfp's parameters for a chunk of `dims` dimensions.
    pub(super) fn stream_config(&self, dims: ZfpDimensionality) -> Result<ZfpConfig> {
        Ok(match self.params {
            Params::Reversible => ZfpConfig::reversible(),
            Params::Precision(p) => ZfpConfig::fixed_precision(p),
            Params::Accuracy(t) => ZfpConfig::fixed_accuracy(t),
            Params::Rate(rate) if self.zfpy.is_some() => {
                // zfpy sets the rate for no scalar type, so C raises no
                // float's budget to its block header: the bits are
                // n * rate rounded. Budgets below the header (where the C
                // library's output is undefined) are refused.
                let n = (1u64 << (2 * dims as u32)) as f64;
                let bits = (n * rate + 0.5).floor();
                let header = match self.scalar {
                    ZfpScalarType::F32 => 9.0,
                    ZfpScalarType::F64 => 12.0,
                    _ => 1.0,
                };
                if !(header..=f64::from(zfp_rs::ZFP_MAX_BITS)).contains(&bits) {
                    return Err(ZarrError::Metadata(format!(
                        "codec '{NAME}': rate {rate} gives {bits} bits per block of {} dimensions, \
                         outside {header} to {}",
                        dims as u32,
                        zfp_rs::ZFP_MAX_BITS
                    )));
                }
                let bits = bits as u32;
                ZfpConfig::expert(bits, bits, zfp_rs::ZFP_MAX_PREC, zfp_rs::ZFP_MIN_EXP)
                    .map_err(|e| self.err(e.to_string()))?
            }
            Params::Rate(rate) => {
                ZfpConfig::fixed_rate(rate, self.scalar, dims, ZfpStreamAlignment::Unaligned)
                    .map_err(|e| {
                        ZarrError::Metadata(format!("codec '{ZFP_NAME}': rate {rate}: {e}"))
                    })?
            }
            Params::Expert {
                minbits,
                maxbits,
                maxprec,
                minexp,
            } if self.zfpy.is_none() => ZfpConfig::expert(minbits, maxbits, maxprec, minexp)
                .map_err(|e| self.err(e.to_string()))?,
            Params::Expert { .. } => {
                return Err(ZarrError::Unsupported(format!(
                    "codec '{NAME}': numcodecs writes modes 2 (fixed rate), 3 (fixed precision) \
                     and 4 (fixed accuracy), not {}",
                    self.zfpy
                        .as_ref()
                        .and_then(|c| c.get("mode"))
                        .unwrap_or(&Value::Null)
                )))
            }
        })
    }

    pub(super) fn compress<T: ZfpScalar>(&self, data: &[T], shape: &[usize]) -> Result<Vec<u8>> {
        let (dims, dimensionality) = self.field_dims(shape)?;
        let config = self.stream_config(dimensionality)?;
        let field = ZfpField::new(data, dims).map_err(|e| self.err(e.to_string()))?;
        let capacity = config
            .maximum_size(self.scalar, dims)
            .ok_or_else(|| self.err(format!("a chunk of shape {shape:?} is too large")))?;
        let mut stream = ZfpBitStream::new(capacity).map_err(|e| self.err(e.to_string()))?;
        if self.zfpy.is_some() {
            stream
                .write_header(&config, &field.metadata(), ZfpHeaderMask::FULL)
                .map_err(|e| self.err(e.to_string()))?;
        }
        let size = stream
            .compress(&config, &field)
            .map_err(|e| self.err(e.to_string()))?;
        Ok(stream.as_bytes()[..size].to_vec())
    }

    /// The number of elements zfpy's header says the stream holds.
    pub(super) fn header_count(&self, input: &[u8]) -> Result<usize> {
        let head = &input[..input.len().min(32)];
        let mut s = ZfpBitStream::from_bytes(head).map_err(|e| self.err(e.to_string()))?;
        let header = s
            .read_header(ZfpHeaderMask::FULL)
            .map_err(|e| self.err(format!("bad header: {e}")))?;
        header
            .metadata
            .and_then(|m| {
                m.dims
                    .iter()
                    .filter(|&&d| d > 0)
                    .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            })
            .ok_or_else(|| self.err("bad header".into()))
    }

    pub(super) fn decompress<T: ZfpScalar>(
        &self,
        input: &[u8],
        shape: &[usize],
        out: &mut [T],
    ) -> Result<()> {
        match ZfpBitStreamRef::from_bytes(input) {
            Some(mut s) => self.decompress_from(&mut s, shape, out),
            // Not 8-byte aligned: zfp reads whole words.
            None => {
                let mut s = ZfpBitStream::from_bytes(input).map_err(|e| self.err(e.to_string()))?;
                self.decompress_from(&mut s, shape, out)
            }
        }
    }

    pub(super) fn decompress_from<T: ZfpScalar, S: ZfpBitStreamOps + ?Sized>(
        &self,
        stream: &mut S,
        shape: &[usize],
        out: &mut [T],
    ) -> Result<()> {
        let n = out.len();
        let (dims, config) = if self.zfpy.is_some() {
            // Everything from the header, as zfpy reads it; the elements
            // must be the chunk's.
            let header = stream
                .read_header(ZfpHeaderMask::FULL)
                .map_err(|e| self.err(format!("bad header: {e}")))?;
            let (Some(meta), Some(config)) = (header.metadata, header.config) else {
                return Err(self.err("bad header".into()));
            };
            if meta.scalar_type != self.scalar {
                return Err(self.err(format!(
                    "the stream holds {} values, the array {}",
                    meta.scalar_type,
                    self.dtype.name()
                )));
            }
            let count = meta
                .dims
                .iter()
                .filter(|&&d| d > 0)
                .try_fold(1usize, |acc, &d| acc.checked_mul(d));
            if count != Some(n) {
                return Err(self.err(format!(
                    "the stream holds a field of {:?} values, the chunk {n}",
                    meta.dims
                )));
            }
            (meta.dims, config)
        } else {
            let (dims, dimensionality) = self.field_dims(shape)?;
            (dims, self.stream_config(dimensionality)?)
        };
        let mut field = ZfpFieldMut::new(out, dims).map_err(|e| self.err(e.to_string()))?;
        stream
            .decompress(&config, &mut field)
            .map_err(|e| self.err(format!("cannot decompress: {e}")))?;
        Ok(())
    }
}
