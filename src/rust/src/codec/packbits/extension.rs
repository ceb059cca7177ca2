//! `packbits` (zarr-extensions codecs/packbits), an array -> bytes codec.
//! Configuration: `padding_encoding` ("none", the default, "first_byte" or
//! "last_byte": where a byte counting the padding bits goes), `first_bit`
//! (default 0) and `last_bit` (default the last bit of an element, or of
//! each part of a complex number).
//!
//! Each element's bits `first_bit` to `last_bit`, taken from its
//! little-endian bytes, follow each other from the lowest bit of the
//! first byte up; the last byte is padded with zero bits. Decoding shifts
//! them back to `first_bit`, extends the sign of signed integers and
//! zeroes the other bits. Data types: bool (1 bit), the integers, float16,
//! float32, float64, complex64 and complex128 (each part packed as an
//! element of its float type). The registry's list has no float16, which
//! zarrs packs as 16 bits, and so does this codec.
//!
//! It takes the place of `bytes` and receives the elements little endian
//! (see the chain's numcodecs serializers). Chunks are written as the
//! specification says; zarrs (0.23) writes them byte for byte the same,
//! except that it leaves out the padding byte when every bit of whole
//! bytes is kept, and reading takes both.

use super::super::registry::{CodecSpec, Kind, Lit, Param};
use super::super::{BytesToBytes, DecodeTo, Mode};
use super::bools::{self, BitOrder};
use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

pub const REGISTRY_NAME: &str = "packbits";

const PADDINGS: [&str; 3] = ["none", "first_byte", "last_byte"];

pub static REGISTRY_SPEC: CodecSpec = CodecSpec {
    name: REGISTRY_NAME,
    v2: None,
    mode: Mode::ArrayToBytes,
    params: &[
        Param::optional(
            "padding_encoding",
            Kind::Choice(&PADDINGS),
            Lit::Str("none"),
        ),
        Param::optional("first_bit", Kind::Int(0, 63), Lit::Int(0)),
        // The last bit of the data type's part.
        Param::optional("last_bit", Kind::Int(0, 63), Lit::Null),
    ],
    defaults: Some(|dtype, _| {
        let last = part_of(dtype).map_or(0, |p| p.bits - 1);
        super::super::config(&[
            ("padding_encoding", "none".into()),
            ("first_bit", 0.into()),
            ("last_bit", last.into()),
        ])
    }),
    build: Some(|cfg, dtype| Ok(Box::new(BitPacking::new(cfg, dtype)?))),
};

/// Where the byte that counts the padding bits goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    None,
    FirstByte,
    LastByte,
}

/// What the codec packs of a data type: parts (an element, or half of a
/// complex one) of `bytes` bytes and `bits` bits.
#[derive(Debug, Clone, Copy)]
struct Part {
    bytes: usize,
    bits: u32,
    signed: bool,
}

fn part_of(dtype: DataType) -> Option<Part> {
    use DataType::*;
    let bytes = match dtype {
        Bool => {
            return Some(Part {
                bytes: 1,
                bits: 1,
                signed: false,
            })
        }
        Complex64 | Complex128 => dtype.size() / 2,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32
        | Float64 => dtype.size(),
        String | Record(_) => return None,
    };
    Some(Part {
        bytes,
        bits: 8 * bytes as u32,
        signed: dtype.is_signed(),
    })
}

#[derive(Debug)]
pub struct BitPacking {
    padding: Padding,
    first_bit: u32,
    last_bit: u32,
    part: Part,
    /// Parts per element: 2 for complex numbers.
    parts: usize,
}

fn bad(why: String) -> ZarrError {
    ZarrError::Metadata(format!("codec '{REGISTRY_NAME}': {why}"))
}

impl BitPacking {
    pub fn new(config: &Map<String, Value>, dtype: DataType) -> Result<BitPacking> {
        let part = part_of(dtype).ok_or_else(|| {
            ZarrError::Unsupported(format!(
                "codec '{REGISTRY_NAME}' is for booleans, integers, floats and complex numbers, not {}",
                dtype.name()
            ))
        })?;
        let padding = match REGISTRY_SPEC.text(config, "padding_encoding")?.as_str() {
            "first_byte" => Padding::FirstByte,
            "last_byte" => Padding::LastByte,
            _ => Padding::None,
        };
        let first_bit = REGISTRY_SPEC.int(config, "first_bit")? as u32;
        let last_bit = match REGISTRY_SPEC.param("last_bit").get(REGISTRY_NAME, config)? {
            Value::Null => part.bits - 1,
            _ => REGISTRY_SPEC.int(config, "last_bit")? as u32,
        };
        if last_bit >= part.bits {
            return Err(bad(format!(
                "last_bit {last_bit} is past the {} bits of {}",
                part.bits,
                dtype.name()
            )));
        }
        if last_bit < first_bit {
            return Err(bad(format!(
                "last_bit {last_bit} is less than first_bit {first_bit}"
            )));
        }
        let parts = if matches!(dtype, DataType::Complex64 | DataType::Complex128) {
            2
        } else {
            1
        };
        Ok(BitPacking {
            padding,
            first_bit,
            last_bit,
            part,
            parts,
        })
    }

    /// Bits kept of each part.
    fn kept(&self) -> u32 {
        self.last_bit - self.first_bit + 1
    }

    /// Bits of the packed elements of `n` parts, and the bytes they fill.
    fn packed_size(&self, parts: usize) -> Result<(usize, usize)> {
        let bits = parts
            .checked_mul(self.kept() as usize)
            .ok_or_else(|| ZarrError::Codec(format!("{REGISTRY_NAME}: {parts} parts overflow")))?;
        Ok((bits, bits.div_ceil(8)))
    }

    fn padding_bytes(&self) -> usize {
        usize::from(self.padding != Padding::None)
    }

    /// Whether every bit of every part is kept, whole bytes: the packed
    /// bytes are the elements themselves.
    fn is_plain(&self) -> bool {
        self.kept() == self.part.bits && self.part.bits.is_multiple_of(8)
    }

    /// The number of elements in `input` when no shape says it: from the
    /// padding byte, or from its length when only one count fits.
    fn elements_in(&self, input: &[u8]) -> Result<usize> {
        let per_element = self.kept() as usize * self.parts;
        let (bits, exact) = match self.padding {
            Padding::None => (input.len() * 8, false),
            Padding::FirstByte | Padding::LastByte => {
                let pad = match self.padding {
                    Padding::FirstByte => input.first(),
                    _ => input.last(),
                }
                .copied()
                .ok_or_else(|| ZarrError::Codec(format!("{REGISTRY_NAME}: no bytes to decode")))?;
                let bits = ((input.len() - 1) * 8).checked_sub(pad as usize);
                match bits {
                    Some(bits) if pad < 8 => (bits, true),
                    _ => {
                        return Err(ZarrError::Codec(format!(
                            "{REGISTRY_NAME}: {pad} padding bits in {} bytes",
                            input.len()
                        )))
                    }
                }
            }
        };
        let n = bits / per_element;
        // With no padding byte, fewer elements may fill the same bytes.
        let fewer = n > 0 && ((n - 1) * per_element).div_ceil(8) == input.len();
        if (exact && n * per_element != bits) || (!exact && fewer) {
            return Err(ZarrError::Codec(format!(
                "{REGISTRY_NAME}: {} bytes do not say how many elements they hold: give the chunk's shape",
                input.len()
            )));
        }
        Ok(n)
    }

    fn decode_elements(&self, input: &[u8], n: usize) -> Result<Vec<u8>> {
        let parts = n
            .checked_mul(self.parts)
            .ok_or_else(|| ZarrError::Codec(format!("{REGISTRY_NAME}: {n} elements overflow")))?;
        let (bits, len) = self.packed_size(parts)?;
        // zarrs writes whole elements as `bytes` does, without the padding
        // byte (which could only say 0).
        if self.is_plain() && input.len() == len {
            return Ok(input.to_vec());
        }
        let expected = len + self.padding_bytes();
        if input.len() != expected {
            return Err(ZarrError::Codec(format!(
                "{REGISTRY_NAME}: {} bytes, expected {expected} for {n} elements",
                input.len()
            )));
        }
        let pad = (len * 8 - bits) as u8;
        let packed = match self.padding {
            Padding::None => input,
            Padding::FirstByte => &input[1..],
            Padding::LastByte => &input[..len],
        };
        let stored = match self.padding {
            Padding::None => pad,
            Padding::FirstByte => input[0],
            Padding::LastByte => input[len],
        };
        if stored != pad {
            return Err(ZarrError::Codec(format!(
                "{REGISTRY_NAME}: the padding byte says {stored} bits, expected {pad}"
            )));
        }
        if self.part.bits == 1 {
            return Ok(bools::unpack(packed, parts, BitOrder::LsbFirst));
        }
        if self.is_plain() {
            return Ok(packed.to_vec());
        }
        let mut out = vec![0u8; parts * self.part.bytes];
        unpack_parts(packed, &mut out, self);
        Ok(out)
    }
}

/// Each part's kept bits appended to `out`, from the lowest bit up.
fn pack_parts(input: &[u8], c: &BitPacking, out: &mut Vec<u8>) {
    match c.part.bytes {
        1 => pack_sized::<1>(input, c, out),
        2 => pack_sized::<2>(input, c, out),
        4 => pack_sized::<4>(input, c, out),
        _ => pack_sized::<8>(input, c, out),
    }
}

/// `pack_parts` of parts of `B` bytes (a constant, so that reading one is
/// a load, not a call to copy).
fn pack_sized<const B: usize>(input: &[u8], c: &BitPacking, out: &mut Vec<u8>) {
    let kept = c.kept();
    let mask = u64::MAX >> (64 - kept);
    let mut acc: u128 = 0;
    let mut filled = 0u32;
    for p in input.chunks_exact(B) {
        let mut word = [0u8; 8];
        word[..B].copy_from_slice(p);
        let v = (u64::from_le_bytes(word) >> c.first_bit) & mask;
        acc |= u128::from(v) << filled;
        filled += kept;
        if filled >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            filled -= 64;
        }
    }
    out.extend_from_slice(&(acc as u64).to_le_bytes()[..filled.div_ceil(8) as usize]);
}

/// The parts of `out` from the kept bits in `packed`, which holds enough.
fn unpack_parts(packed: &[u8], out: &mut [u8], c: &BitPacking) {
    match c.part.bytes {
        1 => unpack_sized::<1>(packed, out, c),
        2 => unpack_sized::<2>(packed, out, c),
        4 => unpack_sized::<4>(packed, out, c),
        _ => unpack_sized::<8>(packed, out, c),
    }
}

fn unpack_sized<const B: usize>(packed: &[u8], out: &mut [u8], c: &BitPacking) {
    let kept = c.kept();
    let mask = u64::MAX >> (64 - kept);
    // The bits above `last_bit` a negative part sets.
    let sign_bit = 1u64 << c.last_bit;
    let extension = if c.part.signed && c.last_bit + 1 < c.part.bits {
        u64::MAX << (c.last_bit + 1)
    } else {
        0
    };
    let mut acc: u128 = 0;
    let mut filled = 0u32;
    let mut at = 0;
    for p in out.chunks_exact_mut(B) {
        if filled < kept {
            if let Some(w) = packed.get(at..at + 8) {
                acc |= u128::from(u64::from_le_bytes(w.try_into().unwrap())) << filled;
                filled += 64;
                at += 8;
            } else {
                while filled < kept {
                    acc |= u128::from(packed[at]) << filled;
                    filled += 8;
                    at += 1;
                }
            }
        }
        let mut v = ((acc as u64) & mask) << c.first_bit;
        acc >>= kept;
        filled -= kept;
        if v & sign_bit != 0 {
            v |= extension;
        }
        p.copy_from_slice(&v.to_le_bytes()[..B]);
    }
}

impl BytesToBytes for BitPacking {
    fn spec(&self) -> &'static CodecSpec {
        &REGISTRY_SPEC
    }

    fn configuration(&self) -> Map<String, Value> {
        let padding = match self.padding {
            Padding::None => "none",
            Padding::FirstByte => "first_byte",
            Padding::LastByte => "last_byte",
        };
        super::super::config(&[
            ("padding_encoding", padding.into()),
            ("first_bit", self.first_bit.into()),
            ("last_bit", self.last_bit.into()),
        ])
    }

    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        let size = self.part.bytes;
        if !input.len().is_multiple_of(size) {
            return Err(ZarrError::Codec(format!(
                "{REGISTRY_NAME}: {} bytes are no whole number of {size}-byte parts",
                input.len()
            )));
        }
        let parts = input.len() / size;
        let (bits, len) = self.packed_size(parts)?;
        let pad = (len * 8 - bits) as u8;
        let mut out = Vec::with_capacity(len + self.padding_bytes());
        if self.padding == Padding::FirstByte {
            out.push(pad);
        }
        if self.part.bits == 1 {
            bools::pack(&input, BitOrder::LsbFirst, &mut out);
        } else if self.is_plain() {
            if self.padding == Padding::None {
                return Ok(input);
            }
            out.extend_from_slice(&input);
        } else {
            pack_parts(&input, self, &mut out);
        }
        if self.padding == Padding::LastByte {
            out.push(pad);
        }
        Ok(out)
    }

    fn decode_slice(&self, input: &[u8], to: DecodeTo) -> Result<Vec<u8>> {
        let size = self.part.bytes * self.parts;
        let n = match to.len {
            Some(len) if len % size == 0 => len / size,
            Some(len) => {
                return Err(ZarrError::Codec(format!(
                    "{REGISTRY_NAME}: {len} bytes are no whole number of {size}-byte elements"
                )))
            }
            None => self.elements_in(input)?,
        };
        self.decode_elements(input, n)
    }

    fn decode_shaped(&self, input: &[u8], shape: &[usize], _to: DecodeTo) -> Result<Vec<u8>> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                ZarrError::Codec(format!("{REGISTRY_NAME}: the chunk shape overflows"))
            })?;
        self.decode_elements(input, n)
    }
}
