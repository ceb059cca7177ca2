//! Reading a decompressor to its end with a ceiling on the output. The
//! deflate and bzip2 codecs share this so that a corrupt or hostile chunk
//! cannot make any of them inflate without bound, and so that they all
//! report the same kinds of failure in the same words.

use crate::error::{Result, ZarrError};
use std::io::Read;

/// All that `reader` gives, named `codec` in errors. With a known
/// `decoded_len`, at most one byte past it is read: enough to tell that
/// the stream is longer than it may be, which is then a codec error.
pub(super) fn read_limited(
    codec: &str,
    reader: impl Read,
    decoded_len: Option<usize>,
    input_len: usize,
) -> Result<Vec<u8>> {
    let res = match decoded_len {
        Some(n) => {
            let mut out = crate::error::try_buffer(n, codec)?;
            reader.take(n as u64 + 1).read_to_end(&mut out).map(|_| out)
        }
        None => {
            // These formats rarely shrink numeric data more than a few
            // times; the guess only saves a few early reallocations.
            let mut out = Vec::with_capacity(input_len.saturating_mul(4));
            let mut reader = reader;
            reader.read_to_end(&mut out).map(|_| out)
        }
    };
    let out = res.map_err(|e| ZarrError::Codec(format!("{codec}: cannot decompress: {e}")))?;
    if let Some(n) = decoded_len {
        if out.len() > n {
            return Err(ZarrError::Codec(format!(
                "{codec}: data decompresses to more than the expected {n} bytes"
            )));
        }
    }
    Ok(out)
}

/// RFC 1950 header: method 8 (deflate), window <= 32 KiB, and the 16-bit
/// header a multiple of 31. A gzip stream never passes this
/// (0x1f8b % 31 != 0), so the gzip codec can use it to tell the two apart.
pub(super) fn is_zlib(data: &[u8]) -> bool {
    match data {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}
