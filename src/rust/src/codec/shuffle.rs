//! `numcodecs.shuffle` (bytes -> bytes; a Zarr v2 filter): numcodecs'
//! `Shuffle`, HDF5's shuffle, which netCDF4 turns on with zlib: byte `j` of
//! element `i` moves to position `j * n + i`, so equal bytes of
//! neighbouring elements sit together. Configuration: `elementsize`, the
//! size of the array's element by default (1 for strings). Trailing bytes
//! that do not fill an element stay where they are.

use super::registry::{CodecSpec, Kind, Param};
use super::v2::{int_member, members, V2Config};
use super::{config, BytesToBytes, DecodeTo, Mode};
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

    /// The bytes of `input` grouped by their place in an element (shuffle)
    /// or back (unshuffle); bytes after the last whole element stay as
    /// they are. Typed for the common element sizes, whose byte positions
    /// are then known to the compiler.
    fn permute(&self, input: &[u8], unshuffle: bool) -> Vec<u8> {
        match (self.elementsize, unshuffle) {
            (2, true) => unshuffle_typed::<2>(input),
            (4, true) => unshuffle_typed::<4>(input),
            (8, true) => unshuffle_typed::<8>(input),
            (2, false) => shuffle_typed::<2>(input),
            (4, false) => shuffle_typed::<4>(input),
            (8, false) => shuffle_typed::<8>(input),
            _ => permute_general(self.elementsize, input, unshuffle),
        }
    }
}

/// `Shuffle::permute` for any element size, byte by byte.
fn permute_general(es: usize, input: &[u8], unshuffle: bool) -> Vec<u8> {
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

/// Element `i`'s byte `j` from byte `i` of stream `j`, for the elements of
/// `ES` bytes, each byte written once.
fn unshuffle_typed<const ES: usize>(input: &[u8]) -> Vec<u8> {
    let n = input.len() / ES;
    let mut out = Vec::with_capacity(input.len());
    let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
    let src = input.as_ptr();
    // Indexed loads and stores, which the compiler vectorises.
    for i in 0..n {
        for j in 0..ES {
            // SAFETY: i < n and j < ES: j * n + i and i * ES + j are below
            // n * ES <= input.len(), the capacity of `out`.
            unsafe { *dst.add(i * ES + j) = *src.add(j * n + i) };
        }
    }
    // SAFETY: the n * ES bytes were written above.
    unsafe { out.set_len(n * ES) };
    out.extend_from_slice(&input[n * ES..]);
    out
}

/// The inverse of `unshuffle_typed`.
fn shuffle_typed<const ES: usize>(input: &[u8]) -> Vec<u8> {
    let n = input.len() / ES;
    let mut out = input.to_vec();
    if n == 0 {
        return out;
    }
    let mut streams: Vec<&mut [u8]> = out.chunks_exact_mut(n).take(ES).collect();
    for (i, e) in input[..n * ES].chunks_exact(ES).enumerate() {
        for (b, s) in e.iter().zip(streams.iter_mut()) {
            s[i] = *b;
        }
    }
    out
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

    fn decode_slice(&self, input: &[u8], _to: DecodeTo) -> Result<Vec<u8>> {
        Ok(self.permute(input, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::test_util::ctx;
    use crate::codec::Warnings;

    #[test]
    fn shuffle_groups_bytes_of_elements_and_back() {
        let s = Shuffle { elementsize: 4 };
        let data: Vec<u8> = (0..10).collect(); // two elements and 2 trailing bytes
        let enc = s.encode(data.clone()).unwrap();
        assert_eq!(enc, vec![0, 4, 1, 5, 2, 6, 3, 7, 8, 9]);
        let w = Warnings::default();
        assert_eq!(s.decode(enc, ctx(&w).decode_to(None)).unwrap(), data);
    }

    #[test]
    fn typed_shuffles_give_the_bytes_of_the_general_one() {
        let w = Warnings::default();
        for es in [2, 4, 8] {
            let s = Shuffle { elementsize: es };
            for len in [0, 1, es - 1, es, 3 * es + 1, 1000 * es + es - 1] {
                let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
                let enc = s.encode(data.clone()).unwrap();
                assert_eq!(enc, permute_general(es, &data, false), "{es} {len}");
                let dec = s.decode_slice(&enc, ctx(&w).decode_to(None)).unwrap();
                assert_eq!(dec, permute_general(es, &enc, true), "{es} {len}");
                assert_eq!(dec, data);
            }
        }
    }
}
