//! Element conversion between stored Zarr types and R vectors:
//!
//! - `na`: R's NA markers and the fill value <-> NA mapping;
//! - `materialize`: decoded chunk elements -> R vectors, one materializer
//!   per R type, all taking the element rules of one `Materialize`;
//! - `gather`: R vectors -> chunk elements, by the same rules;
//! - `check`: refusing R data the array's type cannot hold.
//!
//! This file holds the R buffers they work on.

macro_rules! le_from {
    ($t:ty, $b:expr) => {{
        let mut a = [0u8; std::mem::size_of::<$t>()];
        a.copy_from_slice(&$b[..std::mem::size_of::<$t>()]);
        <$t>::from_ne_bytes(a)
    }};
}

mod check;
mod gather;
mod materialize;
mod na;
pub mod structs;

pub use crate::layout::{copy_elements, stream_copy, strided_copy, Span};
pub use check::check_writable;
pub use materialize::{ElementRead, ElementTransform, ElementWrite, Lossy, Materialize, NaRule};
pub use na::{
    fill_to_na_in_place, is_na_real, na_real, scan_for_write, NA_INTEGER, NA_INTEGER64,
    NA_REAL_BITS,
};

use crate::dtype::{DataType, RType};
use crate::error::{Result, ZarrError};

/// A destination or source R buffer of one of the R vector types.
pub enum RBufMut<'a> {
    Logical(&'a mut [i32]),
    Integer(&'a mut [i32]),
    Double(&'a mut [f64]),
    Complex(&'a mut [[f64; 2]]),
    Integer64(&'a mut [i64]),
    /// Whole records of `size` bytes each (`DataType::Record`).
    Raw {
        bytes: &'a mut [u8],
        size: usize,
    },
}

#[derive(Clone, Copy)]
pub enum RBuf<'a> {
    Logical(&'a [i32]),
    Integer(&'a [i32]),
    Double(&'a [f64]),
    Complex(&'a [[f64; 2]]),
    Integer64(&'a [i64]),
    /// Whole records of `size` bytes each (`DataType::Record`).
    Raw {
        bytes: &'a [u8],
        size: usize,
    },
}

impl RBuf<'_> {
    pub fn len(&self) -> usize {
        match self {
            RBuf::Logical(x) | RBuf::Integer(x) => x.len(),
            RBuf::Double(x) => x.len(),
            RBuf::Complex(x) => x.len(),
            RBuf::Integer64(x) => x.len(),
            RBuf::Raw { bytes, size } => bytes.len() / size.max(&1),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RBufMut<'_> {
    pub fn len(&self) -> usize {
        match self {
            RBufMut::Logical(x) | RBufMut::Integer(x) => x.len(),
            RBufMut::Double(x) => x.len(),
            RBufMut::Complex(x) => x.len(),
            RBufMut::Integer64(x) => x.len(),
            RBufMut::Raw { bytes, size } => bytes.len() / (*size).max(1),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Results of at least this size are written with streaming stores where
/// the copy allows: larger than the last-level cache of most machines, so
/// regular stores would only evict what they wrote.
pub const STREAM_MIN_BYTES: usize = 32 << 20;

/// A raw R buffer shared by the worker threads; each writes a disjoint part.
pub struct RBufPtr {
    pub ptr: *mut u8,
    pub rtype: RType,
    pub strides: Vec<usize>,
    /// A result large enough that its writes go to memory anyway: copies
    /// into it may bypass the cache (`words::stream_words`).
    pub stream: bool,
}
unsafe impl Send for RBufPtr {}
unsafe impl Sync for RBufPtr {}

impl RBufPtr {
    pub fn from_mut(buf: &mut RBufMut, shape: &[usize]) -> RBufPtr {
        let (ptr, rtype) = match buf {
            RBufMut::Logical(x) => (x.as_mut_ptr() as *mut u8, RType::Logical),
            RBufMut::Integer(x) => (x.as_mut_ptr() as *mut u8, RType::Integer),
            RBufMut::Double(x) => (x.as_mut_ptr() as *mut u8, RType::Double),
            RBufMut::Complex(x) => (x.as_mut_ptr() as *mut u8, RType::Complex),
            RBufMut::Integer64(x) => (x.as_mut_ptr() as *mut u8, RType::Integer64),
            RBufMut::Raw { bytes, .. } => (bytes.as_mut_ptr(), RType::Raw),
        };
        RBufPtr {
            ptr,
            rtype,
            strides: column_major_strides(shape),
            stream: shape.iter().product::<usize>() * rtype.size() >= STREAM_MIN_BYTES,
        }
    }

    pub fn from_ref(buf: &RBuf, shape: &[usize]) -> RBufPtr {
        let (ptr, rtype) = match buf {
            RBuf::Logical(x) => (x.as_ptr() as *mut u8, RType::Logical),
            RBuf::Integer(x) => (x.as_ptr() as *mut u8, RType::Integer),
            RBuf::Double(x) => (x.as_ptr() as *mut u8, RType::Double),
            RBuf::Complex(x) => (x.as_ptr() as *mut u8, RType::Complex),
            RBuf::Integer64(x) => (x.as_ptr() as *mut u8, RType::Integer64),
            RBuf::Raw { bytes, .. } => (bytes.as_ptr() as *mut u8, RType::Raw),
        };
        RBufPtr {
            ptr,
            rtype,
            strides: column_major_strides(shape),
            // A source: nothing is written into it.
            stream: false,
        }
    }
}

pub fn column_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut acc = 1;
    shape
        .iter()
        .map(|&n| {
            let s = acc;
            acc *= n.max(1);
            s
        })
        .collect()
}

/// One run of `n` elements from the start of one buffer to the start of
/// another, in a one-dimensional copy.
fn one_run(n: usize) -> [Vec<Span>; 1] {
    [vec![Span {
        src: 0,
        dst: 0,
        len: n,
    }]]
}

/// R values, in their memory order, -> native-endian elements of `dtype`
/// (NA becomes the fill value). `what` names the data in errors.
pub fn encode_elements(data: &RBuf, dtype: DataType, fill: &[u8], what: &str) -> Result<Vec<u8>> {
    check_writable(data, dtype, what)?;
    Ok(encode_checked(data, dtype, fill, None))
}

/// `encode_elements` through a transform of the layers above (the CF
/// encoding of a time), which checks the data and stores each value.
pub fn encode_elements_with(
    data: &RBuf,
    dtype: DataType,
    cf: &dyn ElementTransform,
    what: &str,
) -> Result<Vec<u8>> {
    cf.check(data, dtype, what)?;
    Ok(encode_checked(data, dtype, &[], Some(cf)))
}

fn encode_checked(
    data: &RBuf,
    dtype: DataType,
    fill: &[u8],
    cf: Option<&dyn ElementTransform>,
) -> Vec<u8> {
    let n = data.len();
    let mut out = vec![0u8; n * dtype.size()];
    let src = RBufPtr::from_ref(data, &[n]);
    let rules = Materialize {
        dtype,
        fill,
        na: NaRule::Fill,
        cf,
    };
    // SAFETY: one run of n elements, inside both buffers; the data passed
    // the check of whoever converts it.
    unsafe { rules.write_from(&src, out.as_mut_ptr(), &[1], &one_run(n)) };
    out
}

/// Native-endian elements of `dtype` -> an R buffer of as many elements,
/// elements that `na` marks (with `fill`) becoming NA, or each converted
/// by `cf` (whose R type `out` is) when given. Returns warnings about
/// inexact values, naming `what`.
pub fn decode_elements(
    bytes: &[u8],
    dtype: DataType,
    fill: &[u8],
    na: NaRule,
    out: &mut RBufMut,
    what: &str,
) -> Result<Vec<String>> {
    decode_elements_with(bytes, dtype, fill, na, None, out, what)
}

/// `decode_elements`, through `cf` when given.
pub fn decode_elements_with(
    bytes: &[u8],
    dtype: DataType,
    fill: &[u8],
    na: NaRule,
    cf: Option<&dyn ElementTransform>,
    out: &mut RBufMut,
    what: &str,
) -> Result<Vec<String>> {
    let n = out.len();
    if bytes.len() != n * dtype.size() {
        return Err(ZarrError::CorruptChunk(format!(
            "{what}: {} bytes do not hold {n} elements of {}",
            bytes.len(),
            dtype.name()
        )));
    }
    let lossy = Lossy::default();
    let dst = RBufPtr::from_mut(out, &[n]);
    let rules = Materialize {
        dtype,
        fill,
        na,
        cf,
    };
    // SAFETY: one run of n elements; the length was checked above.
    unsafe { rules.read_into(bytes.as_ptr(), &[1], &dst, &one_run(n), &lossy) };
    Ok(lossy.warnings(what))
}

#[cfg(test)]
mod tests;
