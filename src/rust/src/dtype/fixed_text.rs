//! NumPy's fixed-width text elements, as the `U<n>` and `S<n>` dtypes
//! (and the `fixed_length_utf32` / `null_terminated_bytes` data types of
//! Zarr v3) store them: n UTF-32 code units in a byte order, or n bytes,
//! padded at the end with NULs. As in NumPy, trailing NULs are padding,
//! not text (an all-NUL element is ""), while a NUL inside the text stays.
//!
//! One decoder and one encoder for the fixed-width string codec, struct
//! fields and struct fill values; each caller words its own errors, since
//! only it knows the array, chunk or field.

use super::Endian;

/// `elem` without its trailing NUL bytes (an `S` element's text).
pub fn trim_nuls(elem: &[u8]) -> &[u8] {
    let end = elem.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    &elem[..end]
}

/// An `S` element -> its text: the bytes before the trailing NULs, which
/// must be UTF-8 (what zarr-python stores when given Python `str`).
pub fn decode_bytes(elem: &[u8]) -> Result<&str, std::str::Utf8Error> {
    std::str::from_utf8(trim_nuls(elem))
}

/// A `U` element (code units in `endian`) -> its text without the trailing
/// NULs; the offending code unit when one is not a Unicode scalar value
/// (a surrogate, or above U+10FFFF).
pub fn decode_utf32(elem: &[u8], endian: Endian) -> Result<String, u32> {
    let units = elem.chunks_exact(4).map(|b| {
        let b = [b[0], b[1], b[2], b[3]];
        match endian {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    });
    let n = units.clone().rposition(|u| u != 0).map_or(0, |p| p + 1);
    units.take(n).map(|u| char::from_u32(u).ok_or(u)).collect()
}

/// `s` as code units in `endian` at the start of `elem`, whose remaining
/// bytes are left as they are (zero them first for NUL padding). The
/// caller checks that the text fits (`s.chars().count() <= elem.len() / 4`):
/// characters beyond the element are not written.
pub fn encode_utf32(s: &str, endian: Endian, elem: &mut [u8]) {
    for (c, unit) in s.chars().zip(elem.chunks_exact_mut(4)) {
        let c = u32::from(c);
        unit.copy_from_slice(&match endian {
            Endian::Little => c.to_le_bytes(),
            Endian::Big => c.to_be_bytes(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf32_round_trips_in_both_byte_orders_dropping_only_trailing_nuls() {
        for endian in [Endian::Little, Endian::Big] {
            let mut elem = [0u8; 24];
            encode_utf32("a\0\u{e9}\u{1f389}", endian, &mut elem);
            let a = match endian {
                Endian::Little => [b'a', 0, 0, 0],
                Endian::Big => [0, 0, 0, b'a'],
            };
            assert_eq!(elem[..4], a);
            assert!(elem[16..].iter().all(|&b| b == 0));
            // The NUL inside stays; the padding goes.
            assert_eq!(decode_utf32(&elem, endian).unwrap(), "a\0\u{e9}\u{1f389}");
            assert_eq!(decode_utf32(&[0; 8], endian).unwrap(), "");
        }
        // A code unit whose bytes end in zero is not trimmed as padding.
        let mut elem = [0u8; 8];
        encode_utf32("\u{100}", Endian::Little, &mut elem);
        assert_eq!(elem, [0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_utf32(&elem, Endian::Little).unwrap(), "\u{100}");
    }

    #[test]
    fn utf32_code_units_that_are_not_scalar_values_are_handed_back() {
        for cp in [0xD800u32, 0xDFFF, 0x110000] {
            let mut elem = (b'a' as u32).to_be_bytes().to_vec();
            elem.extend(cp.to_be_bytes());
            assert_eq!(decode_utf32(&elem, Endian::Big), Err(cp));
        }
    }

    #[test]
    fn text_longer_than_the_element_is_not_written_past_it() {
        let mut elem = [0u8; 8];
        encode_utf32("abc", Endian::Little, &mut elem);
        assert_eq!(decode_utf32(&elem, Endian::Little).unwrap(), "ab");
    }

    #[test]
    fn bytes_lose_trailing_nuls_and_must_be_utf8() {
        assert_eq!(trim_nuls(b"ab\0\0"), b"ab");
        assert_eq!(trim_nuls(b"\0\0"), b"");
        assert_eq!(decode_bytes(b"a\0b\0").unwrap(), "a\0b");
        assert_eq!(decode_bytes(b"\xc3\xa9\0").unwrap(), "\u{e9}");
        assert!(decode_bytes(b"\xff\xfe").is_err());
    }
}
