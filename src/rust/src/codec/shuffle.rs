//! `numcodecs.shuffle` (bytes -> bytes; a Zarr v2 filter): numcodecs'
//! `Shuffle`, HDF5's shuffle, which netCDF4 turns on with zlib: byte `j` of
//! element `i` moves to position `j * n + i`, so equal bytes of
//! neighbouring elements sit together. Configuration: `elementsize`, the
//! size of the array's element by default (1 for strings). Trailing bytes
//! that do not fill an element stay where they are.

use super::registry::{CodecSpec, Kind, Param};
use super::v2::{int_member, members, V2Config};
use super::{config, BytesToBytes, CodecContext, Mode};
use crate::error::Result;
use serde_json::{json, Map, Value};

pub static SPEC: CodecSpec = CodecSpec {
    name: "numcodecs.shuffle",
    v2: Some(V2Config {
        id: "shuffle",
        // The bytes it hands on keep their element structure: `typesize`
        // stays.
        from_v2: |cfg, typesize, _| {
            let es = int_member(cfg, "elementsize", *typesize as i64);
            Ok(json!({"name": SPEC.name, "configuration": {"elementsize": es}}))
        },
        to_v2: |cfg| members(cfg, &["elementsize"]),
        filter: true,
    }),
    mode: Mode::BytesToBytes,
    params: &[Param::required("elementsize", Kind::Int(1, i64::MAX))],
    defaults: Some(|dtype, _| config(&[("elementsize", dtype.size().max(1).into())])),
    build: Some(|cfg, _| Ok(Box::new(Shuffle::from_config(cfg)?))),
};

#[derive(Debug)]
pub struct Shuffle {
    pub elementsize: usize,
}

impl Shuffle {
    pub fn from_config(config: &Map<String, Value>) -> Result<Shuffle> {
        let elementsize = SPEC.int(config, "elementsize")? as usize;
        Ok(Shuffle { elementsize })
    }

    fn permute(&self, input: &[u8], unshuffle: bool) -> Vec<u8> {
        let es = self.elementsize;
        let n = input.len() / es;
        let mut out = input.to_vec();
        for i in 0..n {
            for j in 0..es {
                let (a, b) = (i * es + j, j * n + i);
                if unshuffle {
                    out[a] = input[b];
                } else {
                    out[b] = input[a];
                }
            }
        }
        out
    }
}

impl BytesToBytes for Shuffle {
    fn spec(&self) -> &'static CodecSpec {
        &SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        config(&[("elementsize", self.elementsize.into())])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        Ok(self.permute(&input, false))
    }

    fn decode_slice(
        &self,
        input: &[u8],
        _decoded_len: Option<usize>,
        _ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        Ok(self.permute(input, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Warnings;

    #[test]
    fn shuffle_groups_bytes_of_elements_and_back() {
        let s = Shuffle { elementsize: 4 };
        let data: Vec<u8> = (0..10).collect(); // two elements and 2 trailing bytes
        let enc = s.encode(data.clone()).unwrap();
        assert_eq!(enc, vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 9]);
        let w = Warnings::default();
        let ctx = CodecContext {
            strict_checksums: false,
            warnings: &w,
            what: "c",
        };
        assert_eq!(s.decode(enc, None, &ctx).unwrap(), data);
    }
}
