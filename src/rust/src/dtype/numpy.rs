//! NumPy type strings ("<i4", ">f8", "|b1", "<U5", "i2"): the one parser
//! of them, for Zarr v2's `dtype`, numcodecs' filter configurations
//! (delta's `dtype`/`astype`) and the fixed-width string codec; and the
//! datetime64/timedelta64 types, in both their spellings ("<M8[10s]" and
//! zarr-python's `numpy.datetime64` with `unit` and `scale_factor`).

use super::endian::Endian;
use super::DataType;
use serde_json::{json, Value};

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

/// The units of NumPy's datetime64 and timedelta64 (zarr-extensions
/// data-types/numpy.datetime64); "generic" is a count without a unit.
pub const TIME_UNITS: [&str; 15] = [
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic",
];

/// A NumPy datetime64 or timedelta64 type: int64 counts of `scale_factor`
/// `unit`s (since 1970-01-01T00:00 UTC for a datetime), -2^63 being NaT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeType {
    /// timedelta64 rather than datetime64.
    pub delta: bool,
    pub unit: String,
    pub scale_factor: u32,
}

impl TimeType {
    /// The zarr-python name of the type.
    pub fn name(&self) -> &'static str {
        if self.delta {
            "numpy.timedelta64"
        } else {
            "numpy.datetime64"
        }
    }

    /// A v3 data type of `name` with its `configuration`: None when the
    /// name is none of the two; an error saying what is wrong with the
    /// configuration.
    pub fn from_v3(name: &str, config: Option<&Value>) -> Option<Result<TimeType, String>> {
        let delta = match name {
            "numpy.datetime64" => false,
            "numpy.timedelta64" => true,
            _ => return None,
        };
        let unit = config.and_then(|c| c.get("unit")).and_then(Value::as_str);
        let Some(unit) = unit.filter(|u| TIME_UNITS.contains(u)) else {
            return Some(Err(format!(
                "{name} needs a unit, one of {}",
                TIME_UNITS.join(", ")
            )));
        };
        let factor = config
            .and_then(|c| c.get("scale_factor"))
            .and_then(Value::as_u64);
        let Some(scale_factor) = factor.filter(|s| (1..=i32::MAX as u64).contains(s)) else {
            return Some(Err(format!(
                "{name} needs a scale_factor from 1 to 2147483647"
            )));
        };
        Some(Ok(TimeType {
            delta,
            unit: unit.to_string(),
            scale_factor: scale_factor as u32,
        }))
    }

    /// A NumPy type string of kind `M` or `m` ("<M8[ns]", ">m8[10s]",
    /// "<M8" for the generic unit) and its byte order: None when `s` is
    /// of another kind, an error when its unit is not NumPy's.
    pub fn from_typestr(s: &str) -> Option<Result<(TimeType, Endian), String>> {
        let (base, unit) = match s.split_once('[') {
            Some((b, u)) => (b, Some(u)),
            None => (s, None),
        };
        let t = TypeStr::split(base).filter(|t| matches!(t.kind, 'M' | 'm'))?;
        let bad = || {
            Err(format!(
                "'{s}' is not a datetime64 or timedelta64 type string"
            ))
        };
        if t.size.is_some_and(|n| n != 8) {
            return Some(bad());
        }
        let (scale_factor, unit) = match unit.map(|u| u.strip_suffix(']')) {
            None => (1, "generic"),
            Some(None) => return Some(bad()),
            Some(Some(u)) => {
                let digits = u.len() - u.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let factor = match &u[..digits] {
                    "" => Some(1),
                    d => d
                        .parse::<u32>()
                        .ok()
                        .filter(|&f| f >= 1 && f <= i32::MAX as u32),
                };
                match (factor, &u[digits..]) {
                    (Some(f), unit) if TIME_UNITS.contains(&unit) && unit != "generic" => (f, unit),
                    _ => return Some(bad()),
                }
            }
        };
        Some(Ok((
            TimeType {
                delta: t.kind == 'm',
                unit: unit.to_string(),
                scale_factor,
            },
            t.endian(),
        )))
    }

    /// NumPy's type string of the type stored in byte order `endian`.
    pub fn typestr(&self, endian: Endian) -> String {
        let o = match endian {
            Endian::Little => '<',
            Endian::Big => '>',
        };
        let kind = if self.delta { 'm' } else { 'M' };
        match (self.unit.as_str(), self.scale_factor) {
            ("generic", _) => format!("{o}{kind}8"),
            (u, 1) => format!("{o}{kind}8[{u}]"),
            (u, f) => format!("{o}{kind}8[{f}{u}]"),
        }
    }

    /// The type as zarr-python writes it into zarr.json.
    pub fn v3_json(&self) -> Value {
        json!({"name": self.name(), "configuration": {"unit": self.unit, "scale_factor": self.scale_factor}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_types_read_and_write_both_spellings() {
        let (t, e) = TimeType::from_typestr(">m8[10s]").unwrap().unwrap();
        assert_eq!(
            (t.delta, t.unit.as_str(), t.scale_factor, e),
            (true, "s", 10, Endian::Big)
        );
        assert_eq!(t.typestr(Endian::Little), "<m8[10s]");
        assert_eq!(
            t.v3_json(),
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}})
        );
        let back = TimeType::from_v3(t.name(), t.v3_json().get("configuration")).unwrap();
        assert_eq!(back.unwrap(), t);
        let (g, _) = TimeType::from_typestr("<M8").unwrap().unwrap();
        assert_eq!(
            (g.unit.as_str(), g.typestr(Endian::Little)),
            ("generic", "<M8".into())
        );
        let (ns, _) = TimeType::from_typestr("<M8[ns]").unwrap().unwrap();
        assert_eq!(ns.typestr(Endian::Big), ">M8[ns]");
        assert!(TimeType::from_typestr("<i8").is_none());
        assert!(TimeType::from_v3("int64", None).is_none());
        for bad in [
            "<M8[fortnight]",
            "<M8[0s]",
            "<M8[s",
            "<M4[s]",
            "<M8[generic]",
        ] {
            assert!(TimeType::from_typestr(bad).unwrap().is_err(), "{bad}");
        }
        for cfg in [
            json!({"unit": "s"}),
            json!({"unit": "x", "scale_factor": 1}),
            json!({"unit": "s", "scale_factor": 0}),
        ] {
            assert!(
                TimeType::from_v3("numpy.datetime64", Some(&cfg))
                    .unwrap()
                    .is_err(),
                "{cfg}"
            );
        }
    }

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
