//! NumPy's fixed-width strings, the `<U<n>` / `>U<n>` and `|S<n>` dtypes of
//! Zarr v2 (v2-v2.0.rst, "Data type encoding"), as an array -> bytes codec
//! of the `string` data type. An element is n UTF-32 code units (`U`, in
//! the dtype's byte order) or n bytes (`S`), padded at the end with NULs.
//! As in NumPy, trailing NULs are padding, not text: an all-NUL element is
//! "". `S` bytes are read and written as UTF-8, which is what zarr-python
//! stores when it is given Python `str` values.
//!
//! Configuration: `dtype`, the NumPy type string ("<U5", ">U5", "|S12").
//! The codec exists for Zarr v2 metadata; Zarr v3 has no spelling for it.

use super::registry::{CodecSpec, Kind, Param};
use super::Mode;
use crate::dtype::fixed_text::{decode_bytes, decode_utf32, encode_utf32};
use crate::dtype::numpy::TypeStr;
use crate::dtype::Endian;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: None,
    mode: Mode::ArrayToBytes,
    params: &[Param::required(
        "dtype",
        Kind::Other("a NumPy type string such as \"<U5\" or \"|S5\""),
    )],
    defaults: None,
    build: None,
};

/// The codec's name in a codec list.
pub const NAME: &str = "numpy.fixed_string";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedString {
    /// The byte order of the code units of a `U` dtype; None for `S`.
    pub utf32: Option<Endian>,
    /// Code points (`U`) or bytes (`S`) per element.
    pub width: usize,
}

impl FixedString {
    /// A NumPy type string of kind `U` or `S` -> the codec; None when the
    /// string is of another kind, an error when it is malformed.
    pub fn parse_numpy(s: &str) -> Option<Result<FixedString>> {
        let mut head = s.chars();
        let (order, kind) = (head.next()?, head.next()?);
        if !matches!(order, '<' | '>' | '|' | '=') || !matches!(kind, 'U' | 'S') {
            return None;
        }
        // A string type whose width does not parse is still one, and wrong.
        let t = TypeStr::split(s);
        // An element must fit in memory many times over; the bound also
        // keeps width * 4 from overflowing.
        let width = match t.and_then(|t| t.size) {
            Some(w) if (1..=1 << 24).contains(&w) => w,
            _ => {
                return Some(Err(ZarrError::Metadata(format!(
                    "dtype '{s}': a fixed-width string needs a width from 1 to {}",
                    1 << 24
                ))))
            }
        };
        // NumPy reads "|" and "=" as the machine's order.
        let utf32 = t.filter(|t| t.kind == 'U').map(|t| t.endian());
        Some(Ok(FixedString { utf32, width }))
    }

    pub fn from_config(config: &Map<String, Value>) -> Result<FixedString> {
        let dtype = config.get("dtype");
        match dtype.and_then(Value::as_str).and_then(FixedString::parse_numpy) {
            Some(parsed) => parsed.map_err(|e| e.context(&format!("codec '{NAME}'"))),
            None => Err(ZarrError::Metadata(format!(
                "codec '{NAME}': dtype must be a NumPy fixed-width string type such as \"<U5\" or \"|S5\", got {}",
                dtype.unwrap_or(&Value::Null)
            ))),
        }
    }

    /// The NumPy type string, with an explicit byte order for `U`.
    pub fn numpy_dtype(&self) -> String {
        match self.utf32 {
            Some(Endian::Little) => format!("<U{}", self.width),
            Some(Endian::Big) => format!(">U{}", self.width),
            None => format!("|S{}", self.width),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({"name": NAME, "configuration": {"dtype": self.numpy_dtype()}})
    }

    /// Bytes per element.
    pub fn item_size(&self) -> usize {
        match self.utf32 {
            Some(_) => 4 * self.width,
            None => self.width,
        }
    }

    /// The length of `s` in the unit the width counts.
    pub fn length(&self, s: &str) -> usize {
        match self.utf32 {
            Some(_) => s.chars().count(),
            None => s.len(),
        }
    }

    fn unit(&self) -> &'static str {
        match self.utf32 {
            Some(_) => "characters",
            None => "UTF-8 bytes",
        }
    }

    /// Why `s` cannot be stored in an element, if it cannot.
    pub fn refusal(&self, s: &str) -> Option<String> {
        let n = self.length(s);
        if n > self.width {
            let shown: String = s.chars().take(20).collect();
            let more = if shown.len() < s.len() { "..." } else { "" };
            Some(format!(
                "the string \"{}{more}\" has {n} {}, more than the {} of dtype {}",
                shown.escape_debug(),
                self.unit(),
                self.width,
                self.numpy_dtype()
            ))
        } else {
            None
        }
    }

    /// Decode a chunk of `n` elements.
    pub fn decode(&self, data: &[u8], n: usize, what: &str) -> Result<Vec<String>> {
        let size = self.item_size();
        if data.len() != n * size {
            return Err(ZarrError::CorruptChunk(format!(
                "{what}: decoded to {} bytes, expected {} ({n} elements of {})",
                data.len(),
                n * size,
                self.numpy_dtype()
            )));
        }
        let mut out = Vec::with_capacity(n);
        for (i, elem) in data.chunks_exact(size.max(1)).enumerate() {
            out.push(match self.utf32 {
                Some(endian) => decode_utf32(elem, endian).map_err(|cp| {
                    ZarrError::CorruptChunk(format!(
                        "{what}: element {i} holds 0x{cp:X}, which is not a Unicode scalar value ({})",
                        self.numpy_dtype()
                    ))
                })?,
                // Bytes that are not UTF-8 are valid NumPy data, but not
                // text an R string can be made of here.
                None => decode_bytes(elem)
                    .map_err(|e| {
                        ZarrError::Unsupported(format!(
                            "{what}: element {i} of dtype {} is not UTF-8 text ({e}); only UTF-8 bytes can be read as strings",
                            self.numpy_dtype()
                        ))
                    })?
                    .to_owned(),
            });
        }
        Ok(out)
    }

    /// Encode strings, in C order of the chunk. A string that does not fit
    /// is an error, never cut short.
    pub fn encode<S: AsRef<str>>(&self, items: &[S]) -> Result<Vec<u8>> {
        let size = self.item_size();
        let mut out = vec![0u8; items.len() * size];
        for (s, elem) in items.iter().zip(out.chunks_exact_mut(size.max(1))) {
            let s = s.as_ref();
            if let Some(why) = self.refusal(s) {
                return Err(ZarrError::Type(why));
            }
            match self.utf32 {
                Some(endian) => encode_utf32(s, endian, elem),
                None => elem[..s.len()].copy_from_slice(s.as_bytes()),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(dtype: &str) -> FixedString {
        FixedString::parse_numpy(dtype).unwrap().unwrap()
    }

    #[test]
    fn numpy_dtypes_parse_and_print_back() {
        assert_eq!(
            fs("<U5"),
            FixedString {
                utf32: Some(Endian::Little),
                width: 5
            }
        );
        assert_eq!(fs(">U12").utf32, Some(Endian::Big));
        assert_eq!(fs("=U3").utf32, Some(Endian::native()));
        assert_eq!(
            fs("|S7"),
            FixedString {
                utf32: None,
                width: 7
            }
        );
        for s in ["<U5", ">U12", "|S7"] {
            assert_eq!(fs(s).numpy_dtype(), s);
        }
        // S has no byte order: any order character reads as |S.
        assert_eq!(fs("<S4").numpy_dtype(), "|S4");
        assert_eq!(fs("<U5").item_size(), 20);
        assert_eq!(fs("|S5").item_size(), 5);
        for s in ["<i4", "|O", "|b1", "U5", "<"] {
            assert!(FixedString::parse_numpy(s).is_none(), "{s}");
        }
        for s in ["<U0", "|S", "<Ux", "<U5 ", "|S99999999999999999999"] {
            let e = FixedString::parse_numpy(s).unwrap().unwrap_err();
            assert_eq!(e.kind(), "metadata", "{s}");
            assert!(e.message().contains(s), "{}", e.message());
        }
    }

    #[test]
    fn utf32_elements_round_trip_in_both_byte_orders() {
        let items = ["ab", "", "\u{e9}\u{65e5}", "xyzwv", "\u{1f389}"];
        for (dtype, endian) in [("<U5", Endian::Little), (">U5", Endian::Big)] {
            let f = fs(dtype);
            let enc = f.encode(&items).unwrap();
            assert_eq!(enc.len(), 5 * 20);
            // "a" as the first code unit, then NUL padding.
            let a = match endian {
                Endian::Little => [b'a', 0, 0, 0],
                Endian::Big => [0, 0, 0, b'a'],
            };
            assert_eq!(&enc[..4], &a);
            assert!(enc[8..20].iter().all(|&b| b == 0));
            assert_eq!(f.decode(&enc, 5, "c").unwrap(), items);
        }
    }

    #[test]
    fn bytes_elements_are_utf8_and_lose_trailing_nuls_only() {
        let f = fs("|S5");
        let enc = f.encode(&["ab", "", "\u{e9}", "xyzwv"]).unwrap();
        assert_eq!(
            enc,
            b"ab\0\0\0\0\0\0\0\0\xc3\xa9\0\0\0xyzwv".to_vec(),
            "NumPy's layout"
        );
        assert_eq!(
            f.decode(&enc, 4, "c").unwrap(),
            ["ab", "", "\u{e9}", "xyzwv"]
        );
        // A NUL inside the text stays (the engine refuses it for R).
        assert_eq!(f.decode(b"a\0b\0\0", 1, "c").unwrap(), ["a\0b"]);
    }

    #[test]
    fn strings_too_long_are_refused_never_cut() {
        let e = fs("<U3").encode(&["abcd"]).unwrap_err();
        assert_eq!(e.kind(), "type");
        assert!(
            e.message().contains("4 characters") && e.message().contains("<U3"),
            "{}",
            e.message()
        );
        // U counts code points; S counts UTF-8 bytes.
        assert!(fs("<U3").encode(&["\u{e9}\u{e9}\u{e9}"]).is_ok());
        let e = fs("|S3").encode(&["\u{e9}\u{e9}"]).unwrap_err();
        assert!(e.message().contains("4 UTF-8 bytes"), "{}", e.message());
        assert_eq!(fs("|S3").refusal("abc"), None);
    }

    #[test]
    fn bad_elements_are_classed_errors_naming_the_chunk() {
        let what = "array '/s' chunk 's/0'";
        let e = fs("<U2").decode(&[0u8; 15], 2, what).unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains(what) && e.message().contains("16"));
        // A surrogate and a value above U+10FFFF.
        for cp in [0xD800u32, 0x110000] {
            let mut data = (b'a' as u32).to_le_bytes().to_vec();
            data.extend(cp.to_le_bytes());
            let e = fs("<U2").decode(&data, 1, what).unwrap_err();
            assert_eq!(e.kind(), "corrupt_chunk");
            assert!(
                e.message().contains(what) && e.message().contains(&format!("{cp:X}")),
                "{}",
                e.message()
            );
        }
        let e = fs("|S2").decode(&[0xff, 0xfe], 1, what).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.message().contains(what) && e.message().contains("UTF-8"));
    }

    #[test]
    fn the_configuration_is_the_numpy_dtype() {
        let cfg = json!({"dtype": ">U4"});
        let f = FixedString::from_config(cfg.as_object().unwrap()).unwrap();
        assert_eq!(
            f.to_json(),
            json!({"name": NAME, "configuration": {"dtype": ">U4"}})
        );
        for bad in [json!({}), json!({"dtype": "<i4"}), json!({"dtype": "<U0"})] {
            let e = FixedString::from_config(bad.as_object().unwrap()).unwrap_err();
            assert_eq!(e.kind(), "metadata", "{bad}");
            assert!(e.message().contains(NAME), "{}", e.message());
        }
    }
}
