//! Running a codec chain on one chunk: stored bytes to elements (or
//! strings) and back.

use super::{ArrayToBytes, CodecChain};
use crate::codec::{bytes, vlen, BytesToBytes, CodecContext, Mode};
use crate::dtype::{DataType, Endian};
use crate::error::{Result, ZarrError};
use std::borrow::Cow;

impl CodecChain {
    /// Stored bytes of one chunk of `chunk_shape` -> its native-endian
    /// elements, laid out with `stored_strides(chunk_shape)`.
    pub fn decode(
        &self,
        data: Vec<u8>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_stored(Cow::Owned(data), chunk_shape, ctx)
    }

    /// `decode` of stored bytes inside a larger buffer, copied only where
    /// a codec needs its own (see `BytesToBytes::decode_slice`).
    pub fn decode_slice(
        &self,
        data: &[u8],
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_stored(Cow::Borrowed(data), chunk_shape, ctx)
    }

    fn decode_stored(
        &self,
        data: Cow<'_, [u8]>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let stored = self.decode_to_stored(data, chunk_shape, ctx)?;
        let mut data = stored;
        for c in self.values.iter().rev() {
            data = c.decode(data).map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?;
        }
        Ok(data)
    }

    /// Stored bytes -> the elements the array -> array codecs decode.
    fn decode_to_stored(
        &self,
        data: Cow<'_, [u8]>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let decoded_len = chunk_shape.iter().product::<usize>() * self.stored_dtype.size();
        let mut data = data;
        for (i, c) in self.bytes_to_bytes.iter().enumerate().rev() {
            let to = ctx.decode_to(match (&self.array_to_bytes, i) {
                (ArrayToBytes::Bytes { .. }, 0) => Some(decoded_len),
                _ => None,
            });
            let decoded = match data {
                // A serializer of numcodecs' decodes elements of the
                // chunk's shape.
                d if c.spec().mode == Mode::ArrayToBytes => {
                    c.decode_shaped(&d, &self.encoded_shape(chunk_shape), to)
                }
                Cow::Owned(v) => c.decode(v, to),
                Cow::Borrowed(b) => c.decode_slice(b, to),
            };
            data = Cow::Owned(decoded.map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?);
        }
        let mut data = data.into_owned();
        match &self.array_to_bytes {
            ArrayToBytes::Bytes { endian } => {
                if data.len() != decoded_len {
                    return Err(ZarrError::CorruptChunk(format!(
                        "{}: decoded to {} bytes, expected {} ({} elements of {})",
                        ctx.what,
                        data.len(),
                        decoded_len,
                        decoded_len / self.stored_dtype.size(),
                        self.stored_dtype.name()
                    )));
                }
                if endian.is_some_and(|e| e != Endian::native()) {
                    bytes::swap_bytes(&mut data, self.stored_dtype.swap_unit());
                }
                Ok(data)
            }
            ArrayToBytes::Sharding(s) => {
                s.decode_shard(&data, &self.encoded_shape(chunk_shape), ctx)
            }
            ArrayToBytes::VlenUtf8 | ArrayToBytes::FixedString(_) | ArrayToBytes::Categorize(_) => {
                Err(ZarrError::Type(format!(
                    "{}: strings decode with decode_strings",
                    ctx.what
                )))
            }
        }
    }

    /// Stored bytes of one chunk of strings -> the strings, laid out with
    /// `stored_strides(chunk_shape)`.
    pub fn decode_strings(
        &self,
        data: Vec<u8>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<String>> {
        let mut data = data;
        for c in self.bytes_to_bytes.iter().rev() {
            data = c.decode(data, ctx.decode_to(None)).map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?;
        }
        let n = chunk_shape.iter().product();
        match &self.array_to_bytes {
            ArrayToBytes::VlenUtf8 => vlen::decode(&data, n, ctx.what),
            ArrayToBytes::FixedString(f) => f.decode(&data, n, ctx.what),
            ArrayToBytes::Categorize(c) => c.decode(&data, n, ctx.what),
            ArrayToBytes::Sharding(s) if self.dtype == DataType::String => {
                s.decode_shard_strings(&data, &self.encoded_shape(chunk_shape), ctx)
            }
            _ => Err(ZarrError::Unsupported(format!(
                "{}: this codec chain does not hold strings",
                ctx.what
            ))),
        }
    }

    /// Strings of one chunk of `chunk_shape` (laid out with
    /// `stored_strides`) -> stored bytes.
    pub fn encode_strings<S: AsRef<str> + Sync>(
        &self,
        items: &[S],
        chunk_shape: &[usize],
    ) -> Result<Vec<u8>> {
        let mut data = match &self.array_to_bytes {
            ArrayToBytes::VlenUtf8 => vlen::encode(items)?,
            ArrayToBytes::FixedString(f) => f.encode(items)?,
            ArrayToBytes::Categorize(c) => c.encode(items)?,
            ArrayToBytes::Sharding(s) if self.dtype == DataType::String => {
                s.encode_shard_strings(items, &self.encoded_shape(chunk_shape))?
            }
            _ => {
                return Err(ZarrError::Unsupported(
                    "this codec chain does not hold strings".into(),
                ))
            }
        };
        for c in &self.bytes_to_bytes {
            data = c.encode(data)?;
        }
        Ok(data)
    }

    /// `encode` of `data` into `out`, reusing the memory of both: the
    /// stored bytes replace `out`'s contents, and `data` is left holding
    /// some buffer its caller may fill again (it may be `out`'s old one).
    /// A chunk writer that keeps its buffers thus allocates nothing per
    /// chunk where the last codec can write into a given buffer (zstd).
    pub fn encode_into(
        &self,
        data: &mut Vec<u8>,
        chunk_shape: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        for c in &self.values {
            *data = c.encode(std::mem::take(data))?;
        }
        match &self.array_to_bytes {
            ArrayToBytes::Bytes { endian } => {
                if endian.is_some_and(|e| e != Endian::native()) {
                    bytes::swap_bytes(data, self.stored_dtype.swap_unit());
                }
            }
            ArrayToBytes::Sharding(s) => {
                *data = s.encode_shard(data, &self.encoded_shape(chunk_shape))?;
            }
            ArrayToBytes::VlenUtf8 | ArrayToBytes::FixedString(_) | ArrayToBytes::Categorize(_) => {
                return Err(ZarrError::Type("strings encode with encode_strings".into()))
            }
        }
        let Some((last, rest)) = self.bytes_to_bytes.split_last() else {
            std::mem::swap(data, out);
            return Ok(());
        };
        let shaped = |c: &dyn BytesToBytes, data: Vec<u8>| {
            if c.spec().mode == Mode::ArrayToBytes {
                c.encode_shaped(data, &self.encoded_shape(chunk_shape))
            } else {
                c.encode(data)
            }
        };
        for c in rest {
            *data = shaped(c.as_ref(), std::mem::take(data))?;
        }
        if last.spec().mode == Mode::ArrayToBytes {
            *out = shaped(last.as_ref(), std::mem::take(data))?;
            return Ok(());
        }
        match last.encode_into(data, out) {
            Some(done) => done,
            None => {
                *out = last.encode(std::mem::take(data))?;
                Ok(())
            }
        }
    }

    /// Native-endian elements of one chunk (laid out with `stored_strides`)
    /// -> stored bytes.
    pub fn encode(&self, mut data: Vec<u8>, chunk_shape: &[usize]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(&mut data, chunk_shape, &mut out)?;
        Ok(out)
    }
}
