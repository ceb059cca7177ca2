//! Chunk keys: the one place that writes a chunk's grid coordinates as its
//! store key and reads a key back, for the two encodings of the Zarr specs
//! ("default": "c" then the indices, "v2": the indices alone; each with "/"
//! or "." between them). Metadata, the Parquet reference reader and resize
//! (through the R bindings) all use it, so they cannot disagree on a key.

use crate::error::{Result, ZarrError};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// "c" then the indices joined by the separator; 0-d arrays use "c".
    Default { separator: char },
    /// indices joined by the separator; 0-d arrays use "0".
    V2 { separator: char },
}

impl ChunkKeyEncoding {
    /// The encoding called `name` with `separator` (each encoding's own
    /// default when `None`).
    pub fn from_name(name: &str, separator: Option<&str>) -> Result<ChunkKeyEncoding> {
        let default_separator = match name {
            "default" => '/',
            "v2" => '.',
            _ => {
                return Err(ZarrError::Unsupported(format!(
                    "chunk key encoding '{name}' is not supported"
                )))
            }
        };
        let separator = match separator {
            None => default_separator,
            Some("/") => '/',
            Some(".") => '.',
            Some(s) => {
                return Err(ZarrError::Metadata(format!(
                    "chunk_key_encoding: separator must be \"/\" or \".\", got \"{s}\""
                )))
            }
        };
        Ok(match name {
            "default" => ChunkKeyEncoding::Default { separator },
            _ => ChunkKeyEncoding::V2 { separator },
        })
    }

    /// The key of chunk `idx`, relative to the array's prefix.
    pub fn key(&self, idx: &[u64]) -> String {
        let mut key = String::new();
        self.push_key(idx, &mut key);
        key
    }

    /// `key` appended to `out`: the engine builds each chunk's store key
    /// (array path, then this) in one allocation.
    pub fn push_key(&self, idx: &[u64], out: &mut String) {
        use std::fmt::Write;
        match *self {
            ChunkKeyEncoding::Default { separator } => {
                out.push('c');
                for i in idx {
                    out.push(separator);
                    let _ = write!(out, "{i}");
                }
            }
            ChunkKeyEncoding::V2 { separator } => {
                if idx.is_empty() {
                    out.push('0');
                }
                for (k, i) in idx.iter().enumerate() {
                    if k > 0 {
                        out.push(separator);
                    }
                    let _ = write!(out, "{i}");
                }
            }
        }
    }

    /// The grid coordinates of the chunk of an `ndim`-dimensional array
    /// whose key is `key`; `None` when `key` is not such a chunk key.
    /// Only keys as `key()` writes them are taken (plain decimal indices,
    /// no leading zeros), so that `key(parse(k)) == k` and no other stored
    /// entry is ever taken for a chunk.
    pub fn parse(&self, key: &str, ndim: usize) -> Option<Vec<u64>> {
        let (rest, separator) = match *self {
            ChunkKeyEncoding::Default { separator } => {
                let rest = key.strip_prefix('c')?;
                if ndim == 0 {
                    return rest.is_empty().then(Vec::new);
                }
                (rest.strip_prefix(separator)?, separator)
            }
            ChunkKeyEncoding::V2 { separator } => {
                if ndim == 0 {
                    return (key == "0").then(Vec::new);
                }
                (key, separator)
            }
        };
        let mut idx = Vec::with_capacity(ndim);
        for p in rest.split(separator) {
            let canonical = !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'));
            if !canonical || idx.len() == ndim {
                return None;
            }
            idx.push(p.parse().ok()?);
        }
        (idx.len() == ndim).then_some(idx)
    }

    pub fn name(&self) -> &'static str {
        match self {
            ChunkKeyEncoding::Default { .. } => "default",
            ChunkKeyEncoding::V2 { .. } => "v2",
        }
    }

    pub fn separator(&self) -> char {
        match *self {
            ChunkKeyEncoding::Default { separator } | ChunkKeyEncoding::V2 { separator } => {
                separator
            }
        }
    }

    /// The `chunk_key_encoding` member, separator always written out.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name(), "configuration": {"separator": self.separator().to_string()}})
    }
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        ChunkKeyEncoding::Default { separator: '/' }
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkKeyEncoding::{self, Default, V2};

    const ALL: [ChunkKeyEncoding; 4] = [
        Default { separator: '/' },
        Default { separator: '.' },
        V2 { separator: '/' },
        V2 { separator: '.' },
    ];

    #[test]
    fn keys_of_each_encoding_and_back() {
        // (encoding, chunk indices, key): the key is written and parsed back.
        let cases: [(ChunkKeyEncoding, &[u64], &str); 10] = [
            (ALL[0], &[1, 23, 45], "c/1/23/45"),
            (ALL[1], &[1, 23, 45], "c.1.23.45"),
            (ALL[0], &[0], "c/0"),
            (ALL[0], &[], "c"),
            (ALL[1], &[], "c"),
            (ALL[3], &[1, 23, 45], "1.23.45"),
            (ALL[2], &[1, 23, 45], "1/23/45"),
            (ALL[3], &[7], "7"),
            (ALL[3], &[], "0"),
            (ALL[2], &[], "0"),
        ];
        for (enc, idx, key) in cases {
            assert_eq!(enc.key(idx), key, "{enc:?}");
            assert_eq!(enc.parse(key, idx.len()), Some(idx.to_vec()), "{enc:?}");
        }
    }

    #[test]
    fn keys_that_are_not_chunk_keys_parse_to_none() {
        let slash = Default { separator: '/' };
        let dot = V2 { separator: '.' };
        for k in [
            "zarr.json",
            "c",
            "c/",
            "c/1/",
            "c//1",
            "c/1/2/3",
            "c/01/2",
            "c/1.2",
            "c/-1/2",
            "c/+1/2",
            "c/1/x",
            "d/1/2",
            "c1/2",
            "c/1/2 ",
            "c/18446744073709551616/0",
        ] {
            assert_eq!(slash.parse(k, 2), None, "{k}");
        }
        // A 0-d key is no key of a 1-d array and the other way round.
        assert_eq!(slash.parse("c", 1), None);
        assert_eq!(slash.parse("c/0", 0), None);
        assert_eq!(dot.parse("0", 1), Some(vec![0]));
        assert_eq!(dot.parse("1", 0), None);
        assert_eq!(dot.parse("0.0", 0), None);
        for k in [
            ".zarray", ".zattrs", "1", "1.", ".1", "1..2", "1/2", "01.2", "1.2.3", "c.1.2",
        ] {
            assert_eq!(dot.parse(k, 2), None, "{k}");
        }
        // The separator is the encoding's own.
        assert_eq!(V2 { separator: '/' }.parse("1.2", 2), None);
        assert_eq!(Default { separator: '.' }.parse("c/1/2", 2), None);
    }

    #[test]
    fn keys_round_trip_for_every_encoding() {
        let grids: [&[u64]; 6] = [
            &[],
            &[0],
            &[9],
            &[10, 0],
            &[1, 23, 450],
            &[u64::MAX, 0, 7, 100],
        ];
        for enc in ALL {
            for idx in grids {
                let key = enc.key(idx);
                assert_eq!(
                    enc.parse(&key, idx.len()).as_deref(),
                    Some(idx),
                    "{enc:?} {key}"
                );
                let mut out = String::from("a/b/");
                enc.push_key(idx, &mut out);
                assert_eq!(out, format!("a/b/{key}"));
            }
        }
    }

    #[test]
    fn encodings_by_name() {
        let by = ChunkKeyEncoding::from_name;
        assert_eq!(by("default", None).unwrap(), Default { separator: '/' });
        assert_eq!(by("v2", None).unwrap(), V2 { separator: '.' });
        assert_eq!(
            by("default", Some(".")).unwrap(),
            Default { separator: '.' }
        );
        assert_eq!(by("v2", Some("/")).unwrap(), V2 { separator: '/' });
        assert_eq!(by("v3", None).unwrap_err().kind(), "unsupported");
        let e = by("default", Some("-")).unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(e.message().contains("got \"-\""), "{}", e.message());
        for enc in ALL {
            let j = enc.to_json();
            let sep = j["configuration"]["separator"].as_str();
            assert_eq!(by(j["name"].as_str().unwrap(), sep).unwrap(), enc);
        }
    }
}
