//! `numcodecs.categorize` (Zarr v2 id `categorize`): numcodecs' `Categorize`
//! filter of Zarr v2 string arrays (object `|O` or NumPy `<U` dtypes), each
//! string stored as its 1-based position in `labels` as `astype` (0: not a
//! label, which reads as ""). It turns strings into bytes, so the engine
//! has it as the array -> bytes codec of such arrays, in place of
//! `vlen-utf8` (or `numpy.fixed_string`). Configuration: `labels` (strings),
//! `dtype` (the array's NumPy type string, written back to .zarray) and
//! `astype` (an integer type string, "|u1" by default). A string that is
//! not a label (nor "") is refused when written, where numcodecs would
//! store 0 and lose it.

use super::numeric::{Elem, Kind as ElemKind, Num};
use super::registry::{CodecSpec, Kind, Lit, Param};
use super::v2::v2_carried;
use super::Mode;
use crate::error::{Result, ZarrError};
use serde_json::{json, Map, Value};

pub const NAME: &str = "numcodecs.categorize";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    v2: v2_carried!("categorize", filter: true, output: None),
    mode: Mode::ArrayToBytes,
    params: &[
        Param::required("labels", Kind::Other("a list of strings")),
        Param::optional(
            "dtype",
            Kind::Other("\"|O\" or a NumPy unicode type string such as \"<U5\""),
            Lit::Null,
        ),
        Param::optional(
            "astype",
            Kind::Other("a NumPy integer type string (absent: \"|u1\")"),
            Lit::Null,
        ),
    ],
    defaults: Some(|_, _| {
        super::config(&[
            ("labels", json!([])),
            ("dtype", "|O".into()),
            ("astype", "|u1".into()),
        ])
    }),
    build: None,
};

#[derive(Debug)]
pub struct Categorize {
    labels: Vec<String>,
    dtype: String,
    astype: Elem,
}

fn bad(why: String) -> ZarrError {
    ZarrError::Metadata(format!("codec '{NAME}': {why}"))
}

impl Categorize {
    pub fn from_config(config: &Map<String, Value>) -> Result<Categorize> {
        let labels = match config.get("labels") {
            Some(Value::Array(l)) => l
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("labels must all be strings".into()))?,
            _ => return Err(bad("labels must be a list of strings".into())),
        };
        let dtype = match config.get("dtype") {
            None | Some(Value::Null) => "|O".to_string(),
            Some(Value::String(s))
                if s == "|O"
                    || crate::dtype::numpy::TypeStr::split(s).is_some_and(|t| t.kind == 'U') =>
            {
                s.clone()
            }
            Some(v) => {
                return Err(bad(format!(
                    "dtype must be \"|O\" or a \"<U\" type string, not {v}"
                )))
            }
        };
        let astype = match config.get("astype") {
            None | Some(Value::Null) => Elem::parse("|u1", NAME, "astype")?,
            Some(Value::String(s)) => Elem::parse(s, NAME, "astype")?,
            Some(v) => return Err(bad(format!("astype must be a type string, not {v}"))),
        };
        if astype.kind == ElemKind::Float {
            return Err(bad(format!(
                "astype must be an integer type, not {}",
                astype.typestr()
            )));
        }
        if astype.cast(Num::Int(labels.len() as i128)) != Some(Num::Int(labels.len() as i128)) {
            return Err(bad(format!(
                "{} labels do not fit in astype {}",
                labels.len(),
                astype.typestr()
            )));
        }
        Ok(Categorize {
            labels,
            dtype,
            astype,
        })
    }

    /// The array's NumPy dtype, as .zarray has it.
    pub fn numpy_dtype(&self) -> &str {
        &self.dtype
    }

    pub fn to_json(&self) -> Value {
        json!({"name": NAME, "configuration": {
            "labels": self.labels, "dtype": self.dtype, "astype": self.astype.typestr()
        }})
    }

    /// A chunk of `n` strings.
    pub fn decode(&self, data: &[u8], n: usize, what: &str) -> Result<Vec<String>> {
        let size = self.astype.size;
        if data.len() != n * size {
            return Err(ZarrError::CorruptChunk(format!(
                "{what}: categorize: {} bytes for {n} labels of {}",
                data.len(),
                self.astype.typestr()
            )));
        }
        Ok(data
            .chunks_exact(size)
            .map(|b| {
                let k = self.astype.read_int(b);
                if k >= 1 && k <= self.labels.len() as i128 {
                    self.labels[k as usize - 1].clone()
                } else {
                    String::new()
                }
            })
            .collect())
    }

    pub fn encode<S: AsRef<str>>(&self, items: &[S]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(items.len() * self.astype.size);
        for s in items {
            let s = s.as_ref();
            let k = match self.labels.iter().position(|l| l == s) {
                Some(i) => i + 1,
                None if s.is_empty() => 0,
                None => {
                    return Err(ZarrError::Type(format!(
                        "categorize: \"{s}\" is not one of the {} labels",
                        self.labels.len()
                    )))
                }
            };
            self.astype.write_int(k as i128, &mut out);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categorize_reads_and_writes_numcodecs_labels() {
        // numcodecs.Categorize(["a", "bb", "ccc"], dtype=object, astype="<u2")
        // .encode(["bb", "a", "x", "ccc", ""]) (numcodecs 0.17).
        let cfg = json!({"labels": ["a", "bb", "ccc"], "dtype": "|O", "astype": "<u2"});
        let c = Categorize::from_config(cfg.as_object().unwrap()).unwrap();
        let stored = [2u8, 0, 1, 0, 0, 0, 3, 0, 0, 0];
        assert_eq!(
            c.decode(&stored, 5, "c").unwrap(),
            ["bb", "a", "", "ccc", ""]
        );
        assert_eq!(
            c.encode(&["bb", "a", "", "ccc", ""]).unwrap()[..4],
            stored[..4]
        );
        let e = c.encode(&["x"]).unwrap_err();
        assert!(e.message().contains("\"x\""), "{}", e.message());
        assert_eq!(
            c.decode(&stored[..9], 5, "c").unwrap_err().kind(),
            "corrupt_chunk"
        );
        assert_eq!(c.to_json()["configuration"], cfg);
        for bad in [
            json!({}),
            json!({"labels": [1]}),
            json!({"labels": ["a"], "dtype": "<i4"}),
            json!({"labels": ["a"], "astype": "<f4"}),
            json!({"labels": vec!["a"; 300]}),
        ] {
            let e = Categorize::from_config(bad.as_object().unwrap()).unwrap_err();
            assert!(e.message().contains(NAME), "{}", e.message());
        }
    }
}
