//! NumPy type strings ("<i4", ">f8", "|b1", "<U5", "i2"): the one parser
//! of them, for Zarr v2's `dtype`, numcodecs' filter configurations
//! (delta's `dtype`/`astype`) and the fixed-width string codec.

use super::endian::Endian;
use super::DataType;

/// A NumPy type string split into its parts: the byte-order character
/// (`<`, `>`, `|` or `=`; None when the string has none, as numcodecs
/// writes "i2"), the kind character (`b`, `i`, `u`, `f`, `c`, `U`, `S`,
/// `O`, `M`, ...) and the number after it (item size, or characters for
/// `U`; None when absent, as in "|O").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeStr {
    pub order: Option<char>,
    pub kind: char,
    pub size: Option<usize>,
}

impl TypeStr {
    /// The parts of `s`; None when it is not of the form of a type string.
    pub fn split(s: &str) -> Option<TypeStr> {
        let mut chars = s.chars().peekable();
        let order = match chars.peek() {
            Some(&c @ ('<' | '>' | '|' | '=')) => {
                chars.next();
                Some(c)
            }
            _ => None,
        };
        let kind = chars.next().filter(char::is_ascii_alphabetic)?;
        let digits: String = chars.collect();
        let size = match digits.as_str() {
            "" => None,
            d if d.bytes().all(|b| b.is_ascii_digit()) => Some(d.parse().ok()?),
            _ => return None,
        };
        Some(TypeStr { order, kind, size })
    }

    /// The byte order of elements of several bytes: `<` and `>` say it,
    /// `=`, `|` and no character mean the machine's (as NumPy reads them).
    pub fn endian(&self) -> Endian {
        match self.order {
            Some('<') => Endian::Little,
            Some('>') => Endian::Big,
            _ => Endian::native(),
        }
    }

    /// The Zarr data type of a numeric or boolean type string; None for
    /// any other kind or size.
    pub fn data_type(&self) -> Option<DataType> {
        use DataType as D;
        Some(match (self.kind, self.size?) {
            ('b', 1) => D::Bool,
            ('i', 1) => D::Int8,
            ('i', 2) => D::Int16,
            ('i', 4) => D::Int32,
            ('i', 8) => D::Int64,
            ('u', 1) => D::UInt8,
            ('u', 2) => D::UInt16,
            ('u', 4) => D::UInt32,
            ('u', 8) => D::UInt64,
            ('f', 2) => D::Float16,
            ('f', 4) => D::Float32,
            ('f', 8) => D::Float64,
            ('c', 8) => D::Complex64,
            ('c', 16) => D::Complex128,
            _ => return None,
        })
    }
}

/// NumPy's type string of a numeric or boolean data type stored in byte
/// order `endian` ("|" for one-byte types); None for strings.
pub fn typestr(dtype: DataType, endian: Endian) -> Option<String> {
    use DataType as D;
    let kind = match dtype {
        D::Bool => 'b',
        D::Int8 | D::Int16 | D::Int32 | D::Int64 => 'i',
        D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => 'u',
        D::Float16 | D::Float32 | D::Float64 => 'f',
        D::Complex64 | D::Complex128 => 'c',
        D::String | D::Record(_) => return None,
    };
    let order = match (dtype.size(), endian) {
        (1, _) => '|',
        (_, Endian::Little) => '<',
        (_, Endian::Big) => '>',
    };
    Some(format!("{order}{kind}{}", dtype.size()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_every_form_numpy_and_numcodecs_write() {
        let t = |o, k, s| {
            Some(TypeStr {
                order: o,
                kind: k,
                size: s,
            })
        };
        assert_eq!(TypeStr::split("<i4"), t(Some('<'), 'i', Some(4)));
        assert_eq!(TypeStr::split(">f8"), t(Some('>'), 'f', Some(8)));
        assert_eq!(TypeStr::split("|O"), t(Some('|'), 'O', None));
        assert_eq!(TypeStr::split("i2"), t(None, 'i', Some(2)));
        assert_eq!(TypeStr::split("<U12"), t(Some('<'), 'U', Some(12)));
        for bad in ["", "<", "<4", "<i4x", "<i-4", "!i4", "<i 4"] {
            assert_eq!(TypeStr::split(bad), None, "{bad}");
        }
    }

    #[test]
    fn numeric_type_strings_round_trip_through_data_types() {
        for dt in crate::dtype::ALL_DATA_TYPES {
            let Some(s) = typestr(dt, Endian::Big) else {
                assert_eq!(dt, DataType::String);
                continue;
            };
            let t = TypeStr::split(&s).unwrap();
            assert_eq!(t.data_type(), Some(dt), "{s}");
            if dt.size() > 1 {
                assert_eq!(t.endian(), Endian::Big, "{s}");
            }
        }
        assert_eq!(TypeStr::split("i2").unwrap().endian(), Endian::native());
        assert_eq!(TypeStr::split("<f16").unwrap().data_type(), None);
    }
}
