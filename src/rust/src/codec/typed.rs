//! Typed loops for numcodecs' filters that change an element's type
//! (`fixedscaleoffset`, `astype`, `quantize`): one loop per pair of
//! element types, monomorphised, reading, computing and writing each
//! element in one pass, as NumPy's typed loops do. They give the bytes of
//! the general path of numeric.rs (values through doubles or `Num`, one
//! element at a time, with a type dispatch per element), which stays for
//! what they leave out: float16 and big-endian elements, and a value the
//! target type cannot hold, which that path reports.

use super::numeric::{Elem, Kind};
use crate::error::Result;
use crate::pages::try_chunk_buffer;
use std::mem::MaybeUninit;

/// A little-endian element type of the typed loops.
pub trait Prim: Copy {
    const SIZE: usize;
    const FLOAT: bool;
    /// The element in the `SIZE` bytes at `p`.
    ///
    /// # Safety
    /// `p` must be readable for `SIZE` bytes.
    unsafe fn load(p: *const u8) -> Self;
    /// The element written into the `SIZE` bytes at `p`.
    ///
    /// # Safety
    /// `p` must be writable for `SIZE` bytes.
    unsafe fn store(self, p: *mut u8);
    /// The value as NumPy converts it to float64 (integers to the nearest
    /// double).
    fn to_f64(self) -> f64;
    /// `x` as NumPy's `astype` casts a float64 into this type (floats
    /// round to nearest, integers truncate), and whether the type holds it:
    /// for integers false for NaN, infinities and what is out of range once
    /// truncated, whose NumPy result is undefined.
    fn from_f64(x: f64) -> (Self, bool);
    /// An integer's value (a float's is never asked for).
    fn to_i128(self) -> i128;
    /// `v` as NumPy casts an integer: wrapped into an integer type, to the
    /// nearest value of a float one.
    fn from_i128(v: i128) -> Self;
}

/// The members every `Prim` has alike: little-endian loads and stores,
/// and the widening to a double.
macro_rules! prim_common {
    ($t:ty) => {
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller's promise; unaligned reads allowed.
            <$t>::from_le_bytes(unsafe {
                p.cast::<[u8; std::mem::size_of::<$t>()]>().read_unaligned()
            })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut u8) {
            // SAFETY: the caller's promise; unaligned writes allowed.
            unsafe {
                p.cast::<[u8; std::mem::size_of::<$t>()]>()
                    .write_unaligned(self.to_le_bytes())
            }
        }
        #[inline(always)]
        fn to_f64(self) -> f64 {
            self as f64
        }
        #[inline(always)]
        fn to_i128(self) -> i128 {
            self as i128
        }
        #[inline(always)]
        fn from_i128(v: i128) -> Self {
            v as $t
        }
    };
}

macro_rules! int_prim {
    ($($t:ty),*) => {$(
        impl Prim for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const FLOAT: bool = false;
            prim_common!($t);
            #[inline(always)]
            fn from_f64(x: f64) -> (Self, bool) {
                // The bounds are powers of two, exact in a double (MAX
                // rounds up to one for 64 bits, where adding 1 changes
                // nothing); `as` truncates what is in range (and saturates
                // the rest, which is then reported as not held).
                let t = x.trunc();
                let fits = t >= <$t>::MIN as f64 && t < <$t>::MAX as f64 + 1.0;
                (x as $t, fits)
            }
        }
    )*};
}

int_prim!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_prim {
    ($($t:ty),*) => {$(
        impl Prim for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const FLOAT: bool = true;
            prim_common!($t);
            #[inline(always)]
            fn from_f64(x: f64) -> (Self, bool) {
                (x as $t, true)
            }
        }
    )*};
}

float_prim!(f32, f64);

/// What a filter does to one element, for any pair of element types.
pub trait Conv {
    /// `x` converted into `D`, and whether `D` holds the result.
    fn apply<S: Prim, D: Prim>(&self, x: S) -> (D, bool);
}

/// NumPy's `astype`: floats, and integers of up to 4 bytes into floats,
/// through float64; other integers by their exact value (wrapped into
/// integers, rounded once into floats).
pub struct Cast;

impl Conv for Cast {
    #[inline(always)]
    fn apply<S: Prim, D: Prim>(&self, x: S) -> (D, bool) {
        if S::FLOAT || (D::FLOAT && S::SIZE <= 4) {
            D::from_f64(x.to_f64())
        } else {
            (D::from_i128(x.to_i128()), true)
        }
    }
}

/// Each element in `S` converted by `conv` and written as `D` into `out`
/// (as many elements, each written once); false if an element's result
/// does not fit `D`.
#[inline(always)]
fn each<S: Prim, D: Prim, C: Conv>(input: &[u8], out: &mut [MaybeUninit<u8>], conv: &C) -> bool {
    let n = input.len() / S::SIZE;
    assert!(out.len() >= n * D::SIZE, "the output holds every element");
    let (src, dst) = (input.as_ptr(), out.as_mut_ptr().cast::<u8>());
    let mut ok = true;
    // Indexed loads and stores, which the compiler vectorises.
    for i in 0..n {
        // SAFETY: element `i` lies within both buffers (checked above).
        let (v, fits) = conv.apply::<S, D>(unsafe { S::load(src.add(i * S::SIZE)) });
        // Collected, not branched on, so that the loop stays vectorisable.
        ok &= fits;
        // SAFETY: as above.
        unsafe { v.store(dst.add(i * D::SIZE)) };
    }
    ok
}

/// `each` compiled for the baseline target.
#[inline(never)]
fn each_plain<S: Prim, D: Prim, C: Conv>(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    conv: &C,
) -> bool {
    each::<S, D, C>(input, out, conv)
}

/// `each` compiled with AVX2 (the same IEEE arithmetic, wider vectors),
/// for machines that have it, as NumPy picks its loops at run time.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn each_avx2<S: Prim, D: Prim, C: Conv>(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    conv: &C,
) -> bool {
    each::<S, D, C>(input, out, conv)
}

/// `each` with the widest vectors the CPU has.
#[inline(always)]
fn each_best<S: Prim, D: Prim, C: Conv>(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    conv: &C,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { each_avx2::<S, D, C>(input, out, conv) };
    }
    each_plain::<S, D, C>(input, out, conv)
}

/// The type behind `$e` (an `Elem`) as `$t` in `$body`; None for the types
/// without typed loops (float16, big-endian elements).
macro_rules! with_prim {
    ($e:expr, $t:ident, $body:expr) => {
        with_prim!(@arms $e, $t, $body;
            Int 1 i8, Int 2 i16, Int 4 i32, Int 8 i64,
            UInt 1 u8, UInt 2 u16, UInt 4 u32, UInt 8 u64,
            Float 4 f32, Float 8 f64)
    };
    (@arms $e:expr, $t:ident, $body:expr; $($kind:ident $size:literal $ty:ty),*) => {
        match ($e.kind, $e.size, $e.big) {
            (_, _, true) => None,
            $((Kind::$kind, $size, _) => {
                type $t = $ty;
                $body
            })*
            _ => None,
        }
    };
}

/// The elements of `input` (of type `from`; a whole number of them)
/// converted by `conv` into elements of `to`, in a typed loop. None where
/// there is none for the two types, or where an element does not fit
/// `to`: the general path then gives the bytes or the error naming it.
/// The same type on both sides, under `Cast`, is a copy.
pub fn convert<C: Conv>(from: Elem, to: Elem, input: &[u8], conv: &C) -> Result<Option<Vec<u8>>> {
    let bytes = input.len() / from.size * to.size;
    let mut out = try_chunk_buffer(bytes, "a filter's output")?;
    let spare = &mut out.spare_capacity_mut()[..bytes];
    let done: Option<bool> = with_prim!(
        from,
        S,
        with_prim!(to, D, Some(each_best::<S, D, C>(input, spare, conv)))
    );
    if done != Some(true) {
        return Ok(None);
    }
    // SAFETY: `each` wrote every byte of the `bytes` taken.
    unsafe { out.set_len(bytes) };
    Ok(Some(out))
}

/// `convert` with the loops compiled for the baseline target only, which
/// the tests compare with the ones chosen at run time.
#[cfg(test)]
pub(crate) fn convert_plain<C: Conv>(
    from: Elem,
    to: Elem,
    input: &[u8],
    conv: &C,
) -> Option<Vec<u8>> {
    let bytes = input.len() / from.size * to.size;
    let mut out = Vec::with_capacity(bytes);
    let spare = &mut out.spare_capacity_mut()[..bytes];
    let done: Option<bool> = with_prim!(
        from,
        S,
        with_prim!(to, D, Some(each_plain::<S, D, C>(input, spare, conv)))
    );
    if done != Some(true) {
        return None;
    }
    // SAFETY: `each_plain` wrote every byte of the `bytes` taken.
    unsafe { out.set_len(bytes) };
    Some(out)
}

/// `convert` under `Cast`, which for one type on both sides copies.
pub fn cast(from: Elem, to: Elem, input: &[u8]) -> Result<Option<Vec<u8>>> {
    if from == to {
        return Ok(Some(input.to_vec()));
    }
    convert(from, to, input, &Cast)
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
