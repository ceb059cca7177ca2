//! Materializers: decoded chunk elements -> R vectors, one per R type,
//! each applying the element rules of a `Materialize` on the way.

use super::na::{fill_f64, float_read, na_real, part_matches, NA_INTEGER, NA_INTEGER64};
use super::RBufPtr;
use crate::dtype::{DataType, RType};
use crate::fill::f16_to_f64;
use crate::layout::{copy_elements, copy_same, strided_copy, Span};
use crate::words::Mark;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What stands for a missing value in an array's stored elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NaRule {
    /// An element equal to the fill value (numeric equality; with a NaN
    /// fill, every NaN) reads as NA, except for bool.
    Fill,
    /// No element reads as NA: the array has no missing-value marker (a
    /// Zarr v2 `fill_value: null`).
    Never,
}

impl NaRule {
    /// The rule of an array whose metadata says `fill_marks_na`.
    pub fn of(fill_marks_na: bool) -> NaRule {
        if fill_marks_na {
            NaRule::Fill
        } else {
            NaRule::Never
        }
    }
}

/// The element rules of a read or write, fixed for the whole call: the
/// stored type, its fill value (native endian) and the missing-value rule.
/// On write NA always becomes the fill value (FALSE for bool).
///
/// Per-element transforms between stored values and R values belong here
/// as fields (CF `scale_factor`/`add_offset`, `_FillValue` and
/// `missing_value`, units of time), each materializer choosing its
/// closure from them once per chunk, outside the copy loop.
#[derive(Debug, Clone, Copy)]
pub struct Materialize<'a> {
    pub dtype: DataType,
    pub fill: &'a [u8],
    pub na: NaRule,
    /// CF decoding of reads and encoding of writes (`cf/`): when set, it
    /// converts each element in place of the rules above.
    pub cf: Option<&'a dyn ElementTransform>,
}

/// A conversion of each element between stored values and R values that
/// takes the place of `Materialize`'s NA rules: the layers above this one
/// (CF decoding) implement its two halves, so conversion needs to know
/// none of them.
pub trait ElementTransform: ElementRead + ElementWrite {}

impl<T: ElementRead + ElementWrite> ElementTransform for T {}

/// The read half of an `ElementTransform`.
pub trait ElementRead: Sync + std::fmt::Debug {
    /// Decoded chunk elements -> the R buffer, as `Materialize::read_into`.
    ///
    /// # Safety
    /// As `Materialize::read_into`.
    unsafe fn read_into(
        &self,
        dtype: DataType,
        src: *const u8,
        src_strides: &[usize],
        dst: &RBufPtr,
        spans: &[Vec<Span>],
    );
}

/// The write half of an `ElementTransform`.
pub trait ElementWrite: Sync + std::fmt::Debug {
    /// Refuse, before anything is written, R data that `write_from`
    /// cannot store in elements of `dtype` (`what` names the data).
    fn check(&self, data: &super::RBuf, dtype: DataType, what: &str) -> crate::error::Result<()>;

    /// The R buffer -> chunk elements, as `Materialize::write_from`.
    ///
    /// # Safety
    /// As `Materialize::write_from`.
    unsafe fn write_from(
        &self,
        dtype: DataType,
        src: &RBufPtr,
        dst: *mut u8,
        dst_strides: &[usize],
        spans: &[Vec<Span>],
    );
}

/// Counts of values that could not be represented exactly on read.
#[derive(Default)]
pub struct Lossy {
    pub inexact_double: AtomicUsize,
    pub overflow_integer64: AtomicUsize,
}

impl Lossy {
    pub fn warnings(&self, what: &str) -> Vec<String> {
        let mut w = Vec::new();
        let n = self.inexact_double.load(Ordering::Relaxed);
        if n > 0 {
            w.push(format!(
                "{what}: {n} value(s) beyond 2^53 cannot be represented exactly as double; install the bit64 package to read them as integer64"
            ));
        }
        let n = self.overflow_integer64.load(Ordering::Relaxed);
        if n > 0 {
            w.push(format!(
                "{what}: {n} value(s) that integer64 cannot hold (above 2^63-1, or -2^63, its NA) were read as NA"
            ));
        }
        w
    }
}

impl Materialize<'_> {
    /// Decoded chunk elements (native endian, `dtype`) at `src` with
    /// `src_strides` -> the R buffer `dst`, over `spans`. Counts values R
    /// cannot hold exactly in `lossy`.
    ///
    /// # Safety
    /// As `strided_copy`: `src` holds every element `spans` reaches with
    /// `src_strides`, `dst` is an R buffer of the matching type.
    pub unsafe fn read_into(
        &self,
        src: *const u8,
        src_strides: &[usize],
        dst: &RBufPtr,
        spans: &[Vec<Span>],
        lossy: &Lossy,
    ) {
        if let DataType::Record(n) = self.dtype {
            // Whole records, as stored (no CF encoding applies to them);
            // the struct conversion splits them.
            return copy_elements(n as usize, src, src_strides, dst.ptr, &dst.strides, spans);
        }
        if let Some(cf) = self.cf {
            return cf.read_into(self.dtype, src, src_strides, dst, spans);
        }
        let c = ChunkRead {
            dtype: self.dtype,
            fill: self.fill,
            mark_na: self.na == NaRule::Fill,
            src,
            src_strides,
            dst,
            spans,
            lossy,
        };
        use DataType::*;
        match (self.dtype, dst.rtype) {
            (Bool, _) => c.logical(),
            (Int8 | Int16 | Int32 | UInt8 | UInt16, _) => c.integer(),
            (Int64 | UInt32 | UInt64, RType::Integer64) => c.integer64(),
            (Int64 | UInt32 | UInt64 | Float16 | Float32 | Float64, _) => c.double(),
            (Complex64 | Complex128, _) => c.complex(),
            (String, _) => unreachable!("strings take the string path"),
            (Record(_), _) => unreachable!("records are copied above"),
        }
    }
}

/// One chunk's read into R: the element rules, and the copy.
#[derive(Clone, Copy)]
struct ChunkRead<'a> {
    dtype: DataType,
    fill: &'a [u8],
    mark_na: bool,
    src: *const u8,
    src_strides: &'a [usize],
    dst: &'a RBufPtr,
    spans: &'a [Vec<Span>],
    lossy: &'a Lossy,
}

impl ChunkRead<'_> {
    /// bool -> logical.
    unsafe fn logical(self) {
        let ChunkRead {
            dtype,
            src,
            src_strides,
            dst,
            spans,
            ..
        } = self;
        match dtype {
            DataType::Bool => strided_copy(
                src,
                src_strides,
                dst.ptr as *mut i32,
                &dst.strides,
                spans,
                &|v: u8| (v != 0) as i32,
            ),
            _ => unreachable!("{} is not read as logical", dtype.name()),
        }
    }

    /// Integers of at most 32 bits that R's integer holds -> integer.
    unsafe fn integer(self) {
        let ChunkRead {
            dtype,
            fill,
            mark_na,
            src,
            src_strides,
            dst,
            spans,
            ..
        } = self;
        // One loop per case (NA marked or not), each without a branch on
        // the case inside, so that the widening vectorises.
        macro_rules! int_to_i32 {
            ($t:ty) => {{
                let fv = le_from!($t, fill);
                let (s, d) = (src as *const $t, dst.ptr as *mut i32);
                if mark_na {
                    strided_copy(s, src_strides, d, &dst.strides, spans, &move |v: $t| {
                        if v == fv {
                            NA_INTEGER
                        } else {
                            v as i32
                        }
                    })
                } else {
                    strided_copy(s, src_strides, d, &dst.strides, spans, &|v: $t| v as i32)
                }
            }};
        }
        match dtype {
            DataType::Int8 => int_to_i32!(i8),
            DataType::Int16 => int_to_i32!(i16),
            DataType::Int32 => int_to_i32!(i32),
            DataType::UInt8 => int_to_i32!(u8),
            DataType::UInt16 => int_to_i32!(u16),
            _ => unreachable!("{} is not read as integer", dtype.name()),
        }
    }

    /// 64-bit integers and uint32 -> integer64 (bit64).
    unsafe fn integer64(self) {
        let ChunkRead {
            dtype,
            fill,
            mark_na,
            src,
            src_strides,
            dst,
            spans,
            lossy,
        } = self;
        macro_rules! to_i64 {
            ($t:ty, $overflow:expr) => {{
                let fv = le_from!($t, fill);
                strided_copy(
                    src as *const $t,
                    src_strides,
                    dst.ptr as *mut i64,
                    &dst.strides,
                    spans,
                    &|v: $t| {
                        if mark_na && v == fv {
                            NA_INTEGER64
                        } else if $overflow(v) {
                            lossy.overflow_integer64.fetch_add(1, Ordering::Relaxed);
                            NA_INTEGER64
                        } else {
                            v as i64
                        }
                    },
                )
            }};
        }
        match dtype {
            // i64::MIN is integer64's NA: a stored value that is not the fill
            // value reads as NA too, with a warning.
            DataType::Int64 => to_i64!(i64, |v: i64| v == i64::MIN),
            DataType::UInt32 => to_i64!(u32, |_v: u32| false),
            DataType::UInt64 => to_i64!(u64, |v: u64| v > i64::MAX as u64),
            _ => unreachable!("{} is not read as integer64", dtype.name()),
        }
    }

    /// Floats, and 64-bit integers and uint32 without bit64 -> double.
    unsafe fn double(self) {
        let ChunkRead {
            dtype,
            fill,
            mark_na,
            src,
            src_strides,
            dst,
            spans,
            lossy,
        } = self;
        macro_rules! big_to_f64 {
            ($t:ty, $inexact:expr) => {{
                let fv = le_from!($t, fill);
                strided_copy(
                    src as *const $t,
                    src_strides,
                    dst.ptr as *mut f64,
                    &dst.strides,
                    spans,
                    &|v: $t| {
                        if mark_na && v == fv {
                            na_real()
                        } else {
                            if $inexact(v) {
                                lossy.inexact_double.fetch_add(1, Ordering::Relaxed);
                            }
                            v as f64
                        }
                    },
                )
            }};
        }
        const LIM: u64 = 1 << 53;
        match dtype {
            DataType::Int64 => big_to_f64!(i64, |v: i64| v.unsigned_abs() > LIM),
            DataType::UInt32 => {
                // Every uint32 is exact as a double: no count to keep, and
                // one branch-free loop per case.
                let fv = le_from!(u32, fill);
                let na = na_real();
                let (s, d, ds) = (src as *const u32, dst.ptr as *mut f64, &dst.strides);
                if mark_na {
                    copy_same(
                        dst.stream,
                        s,
                        src_strides,
                        d,
                        ds,
                        spans,
                        None,
                        &move |v: u32| {
                            if v == fv {
                                na
                            } else {
                                v as f64
                            }
                        },
                    )
                } else {
                    copy_same(dst.stream, s, src_strides, d, ds, spans, None, &|v: u32| {
                        v as f64
                    })
                }
            }
            DataType::UInt64 => big_to_f64!(u64, |v: u64| v > LIM),
            DataType::Float16 => {
                let fv = fill_f64(dtype, fill);
                let nan = fv.is_nan();
                copy_same(
                    dst.stream,
                    src as *const u16,
                    src_strides,
                    dst.ptr as *mut f64,
                    &dst.strides,
                    spans,
                    None,
                    &|v: u16| float_read(f16_to_f64(v), fv, nan, mark_na),
                )
            }
            DataType::Float32 => {
                // As float64 below: one branch-free loop per case. The
                // fill is compared as stored, in float32.
                let fv = le_from!(f32, fill);
                let na = na_real();
                let (s, d, ds) = (src as *const f32, dst.ptr as *mut f64, &dst.strides);
                if !mark_na {
                    copy_same(dst.stream, s, src_strides, d, ds, spans, None, &|v: f32| {
                        v as f64
                    })
                } else if fv.is_nan() {
                    copy_same(
                        dst.stream,
                        s,
                        src_strides,
                        d,
                        ds,
                        spans,
                        None,
                        &move |v: f32| {
                            if v.is_nan() {
                                na
                            } else {
                                v as f64
                            }
                        },
                    )
                } else {
                    copy_same(
                        dst.stream,
                        s,
                        src_strides,
                        d,
                        ds,
                        spans,
                        None,
                        &move |v: f32| {
                            if v == fv {
                                na
                            } else {
                                v as f64
                            }
                        },
                    )
                }
            }
            DataType::Float64 => {
                // One loop per case, each without a branch on the case inside,
                // so that it vectorises: this is the copy of every full read.
                // A transposing copy (a C-order chunk) applies the same
                // rule in registers as it moves the words (`Mark`).
                let fv = fill_f64(dtype, fill);
                let na = na_real();
                let (s, d, ds) = (src as *const f64, dst.ptr as *mut f64, &dst.strides);
                let (keep, nan, eq) = (
                    Some(Mark::Keep),
                    Some(Mark::Nan { na: na.to_bits() }),
                    Some(Mark::Fill {
                        fill: fv,
                        na: na.to_bits(),
                    }),
                );
                if !mark_na {
                    copy_same(dst.stream, s, src_strides, d, ds, spans, keep, &|v: f64| v)
                } else if fv.is_nan() {
                    copy_same(
                        dst.stream,
                        s,
                        src_strides,
                        d,
                        ds,
                        spans,
                        nan,
                        &move |v: f64| {
                            if v.is_nan() {
                                na
                            } else {
                                v
                            }
                        },
                    )
                } else {
                    copy_same(
                        dst.stream,
                        s,
                        src_strides,
                        d,
                        ds,
                        spans,
                        eq,
                        &move |v: f64| {
                            if v == fv {
                                na
                            } else {
                                v
                            }
                        },
                    )
                }
            }
            _ => unreachable!("{} is not read as double", dtype.name()),
        }
    }

    /// complex64, complex128 -> complex.
    unsafe fn complex(self) {
        let ChunkRead {
            dtype,
            fill,
            mark_na,
            src,
            src_strides,
            dst,
            spans,
            ..
        } = self;
        match dtype {
            DataType::Complex64 => {
                let (fr, fi) = (le_from!(f32, fill) as f64, le_from!(f32, &fill[4..]) as f64);
                strided_copy(
                    src as *const [f32; 2],
                    src_strides,
                    dst.ptr as *mut [f64; 2],
                    &dst.strides,
                    spans,
                    &|v: [f32; 2]| {
                        let (r, i) = (v[0] as f64, v[1] as f64);
                        if mark_na && part_matches(r, fr) && part_matches(i, fi) {
                            [na_real(), na_real()]
                        } else {
                            [r, i]
                        }
                    },
                )
            }
            DataType::Complex128 => {
                let (fr, fi) = (le_from!(f64, fill), le_from!(f64, &fill[8..]));
                strided_copy(
                    src as *const [f64; 2],
                    src_strides,
                    dst.ptr as *mut [f64; 2],
                    &dst.strides,
                    spans,
                    &|v: [f64; 2]| {
                        if mark_na && part_matches(v[0], fr) && part_matches(v[1], fi) {
                            [na_real(), na_real()]
                        } else {
                            v
                        }
                    },
                )
            }
            _ => unreachable!("{} is not read as complex", dtype.name()),
        }
    }
}
