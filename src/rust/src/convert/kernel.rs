//! Element conversion between stored Zarr types and R vectors, and the
//! strided N-d copy kernel every read and write goes through.
//!
//! Missing values follow ARCHITECTURE.md: on read an element equal to the
//! fill value (numeric equality; with a NaN fill every NaN) becomes NA, except
//! for bool; on write NA becomes the fill value (FALSE for bool).

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::{f16_to_f64, f64_to_f16};
use crate::words;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const NA_INTEGER: i32 = i32::MIN;
pub const NA_INTEGER64: i64 = i64::MIN;
/// R's NA_real_: a NaN whose low word is 1954.
pub const NA_REAL_BITS: u64 = 0x7FF0_0000_0000_07A2;

pub fn na_real() -> f64 {
    f64::from_bits(NA_REAL_BITS)
}

/// R's `R_IsNA`: NA, as opposed to any other NaN. A NaN whose low word is
/// 1954 is one whose exponent bits are all set and whose low word is 1954
/// (that makes the mantissa non-zero); said on the bits alone, the test
/// vectorises into integer compares, which made the NA pass of a C-order
/// write's gather 40% cheaper than with a floating-point NaN test.
#[inline(always)]
pub fn is_na_real(x: f64) -> bool {
    const EXPONENT: u64 = 0x7FF0_0000_0000_0000;
    let b = x.to_bits();
    (b & EXPONENT == EXPONENT) & (b & 0xFFFF_FFFF == 1954)
}

/// A destination or source R buffer of one of the R vector types.
pub enum RBufMut<'a> {
    Logical(&'a mut [i32]),
    Integer(&'a mut [i32]),
    Double(&'a mut [f64]),
    Complex(&'a mut [[f64; 2]]),
    Integer64(&'a mut [i64]),
}

#[derive(Clone, Copy)]
pub enum RBuf<'a> {
    Logical(&'a [i32]),
    Integer(&'a [i32]),
    Double(&'a [f64]),
    Complex(&'a [[f64; 2]]),
    Integer64(&'a [i64]),
}

impl RBuf<'_> {
    pub fn len(&self) -> usize {
        match self {
            RBuf::Logical(x) | RBuf::Integer(x) => x.len(),
            RBuf::Double(x) => x.len(),
            RBuf::Complex(x) => x.len(),
            RBuf::Integer64(x) => x.len(),
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
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

/// A run of `len` consecutive elements along one dimension of a copy:
/// source positions `src..src + len` go to destination positions
/// `dst..dst + len` (in elements along that dimension, not in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub src: usize,
    pub dst: usize,
    pub len: usize,
}

impl From<(usize, usize, usize)> for Span {
    /// `(src, dst, len)`, as codec/sharding.rs still spells its spans.
    fn from((src, dst, len): (usize, usize, usize)) -> Span {
        Span { src, dst, len }
    }
}

/// Copy `f(src[..])` into `dst[..]` over the N-d index sets `spans`. Strides
/// are in elements; a source stride of 0 broadcasts (used for fill values).
///
/// # Safety
/// Every index reached must be in bounds of both buffers, the buffers must
/// not overlap, and no other thread may write the destination elements
/// reached.
pub unsafe fn strided_copy<S: Copy + 'static, D: Copy + 'static>(
    src: *const S,
    src_strides: &[usize],
    dst: *mut D,
    dst_strides: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
) {
    let nd = spans.len();
    if nd == 0 {
        dst.write_unaligned(f(src.read_unaligned()));
        return;
    }
    copy_dim(nd - 1, false, src, src_strides, dst, dst_strides, spans, f);
}

/// The walk of `strided_copy` over dimensions `d` down to 0. With `stream`,
/// runs into 8-byte elements that are contiguous and aligned on both sides
/// go out by `stream_run`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn copy_dim<S: Copy + 'static, D: Copy + 'static>(
    d: usize,
    stream: bool,
    src: *const S,
    ss: &[usize],
    dst: *mut D,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
) {
    if d == 0 {
        let (s0, d0) = (ss[0], ds[0]);
        for &Span {
            src: a,
            dst: b,
            len,
        } in &spans[0]
        {
            let sp = src.add(a * s0);
            let dp = dst.add(b * d0);
            let streamed = stream && std::mem::size_of::<D>() == 8;
            if streamed && s0 == 1 && d0 == 1 && sp.is_aligned() && dp.is_aligned() {
                stream_run(sp, dp, len, f);
            } else if s0 == 1 && d0 == 1 && sp.is_aligned() && dp.is_aligned() {
                map_run(
                    std::slice::from_raw_parts(sp, len),
                    std::slice::from_raw_parts_mut(dp, len),
                    f,
                );
            } else if s0 == 1 && d0 == 1 {
                for k in 0..len {
                    dp.add(k).write_unaligned(f(sp.add(k).read_unaligned()));
                }
            } else {
                for k in 0..len {
                    dp.add(k * d0)
                        .write_unaligned(f(sp.add(k * s0).read_unaligned()));
                }
            }
        }
        return;
    }
    if d == 1 && (ss[0] == 1) != (ds[0] == 1) {
        copy_tiles(src, ss, dst, ds, spans, f);
        return;
    }
    // The source run of the next column, fetched while this one is copied
    // (see `words::prefetch`): for a 2-d walk with one contiguous source
    // run per column, such as a chunk gathered from R's array.
    let ahead = d == 1 && ss[0] == 1 && spans[0].len() == 1;
    for &Span {
        src: a,
        dst: b,
        len,
    } in &spans[d]
    {
        for k in 0..len {
            if ahead {
                let Span {
                    src: a0, len: n0, ..
                } = spans[0][0];
                let next = src.wrapping_add((a + k + 1) * ss[1] + a0);
                words::prefetch(next as *const u8, n0 * std::mem::size_of::<S>());
            }
            copy_dim_outer(
                d - 1,
                stream,
                src.add((a + k) * ss[d]),
                ss,
                dst.add((b + k) * ds[d]),
                ds,
                spans,
                f,
            );
        }
    }
}

/// Side of the square tiles of a transposing copy: 16 x 16 elements keep
/// the 16 cache lines of each side in L1 while the other side is walked.
const TILE: usize = 16;

/// The two innermost dimensions of a copy in which one side is contiguous
/// along dimension 0 and the other is not (a C-order chunk against R's
/// column-major array): copied tile by tile, so that neither side's
/// accesses stride through memory a whole row or column at a time.
///
/// When both sides hold the same 8-byte type (float64 or int64 read into
/// or written from R) and each is contiguous along its own dimension, the
/// words are first moved as they are (`copy_words`, four by four) and `f`
/// then runs over whole destination runs in place, where the loop
/// vectorises.
#[inline(always)]
unsafe fn copy_tiles<S: Copy + 'static, D: Copy + 'static>(
    src: *const S,
    ss: &[usize],
    dst: *mut D,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
) {
    use std::any::TypeId;
    let words = std::mem::size_of::<S>() == 8
        && TypeId::of::<S>() == TypeId::of::<D>()
        && ((ss[1] == 1 && ds[0] == 1) || (ss[0] == 1 && ds[1] == 1))
        && src.is_aligned()
        && dst.is_aligned();
    for &Span {
        src: a1,
        dst: b1,
        len: len1,
    } in &spans[1]
    {
        for &Span {
            src: a0,
            dst: b0,
            len: len0,
        } in &spans[0]
        {
            let sp = src.add(a1 * ss[1] + a0 * ss[0]);
            let dp = dst.add(b1 * ds[1] + b0 * ds[0]);
            if words {
                copy_words(sp, ss, dp, ds, len0, len1, f);
                continue;
            }
            for j0 in (0..len1).step_by(TILE) {
                let j1 = (j0 + TILE).min(len1);
                for i0 in (0..len0).step_by(TILE) {
                    let i1 = (i0 + TILE).min(len0);
                    for j in j0..j1 {
                        let (sj, dj) = (sp.add(j * ss[1]), dp.add(j * ds[1]));
                        for i in i0..i1 {
                            dj.add(i * ds[0])
                                .write_unaligned(f(sj.add(i * ss[0]).read_unaligned()));
                        }
                    }
                }
            }
        }
    }
}

/// `strided_copy` of 8-byte elements of one type that writes the
/// destination with streaming stores, for a destination far larger than
/// the cache, where dimension 0 is contiguous on both sides: each run
/// along it passes through `f` into a small buffer in L1 and is streamed
/// out from there. Returns false, having copied nothing, for other layouts
/// and for a misaligned source. (A transposing copy, of a C-order chunk,
/// gained nothing from streaming its columns out of an L1 buffer: the
/// extra pass cost what the streaming saved.)
///
/// # Safety
/// As `strided_copy`; `dst` must be aligned.
pub unsafe fn stream_copy<T: Copy + 'static>(
    src: *const T,
    ss: &[usize],
    dst: *mut T,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(T) -> T,
) -> bool {
    if std::mem::size_of::<T>() != 8
        || spans.is_empty()
        || ss[0] != 1
        || ds[0] != 1
        || !src.is_aligned()
    {
        return false;
    }
    copy_dim(spans.len() - 1, true, src, ss, dst, ds, spans, f);
    // Before the caller's thread reports the chunk done.
    words::stream_fence();
    true
}

/// `strided_copy` between buffers of one type, with streaming stores where
/// `stream` asks for them and `stream_copy` applies.
///
/// # Safety
/// As `stream_copy`.
unsafe fn copy_same<T: Copy + 'static>(
    stream: bool,
    src: *const T,
    ss: &[usize],
    dst: *mut T,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(T) -> T,
) {
    if !(stream && stream_copy(src, ss, dst, ds, spans, f)) {
        strided_copy(src, ss, dst, ds, spans, f)
    }
}

/// `dst[k] = f(src[k])` for `n` elements into 8-byte ones, through a
/// buffer of 64 elements at a time so that `map_run` still vectorises `f`.
#[inline(always)]
unsafe fn stream_run<S: Copy, D: Copy>(src: *const S, dst: *mut D, n: usize, f: &impl Fn(S) -> D) {
    debug_assert_eq!(std::mem::size_of::<D>(), 8);
    const BLOCK: usize = 64;
    let mut tmp = [0u64; BLOCK];
    let mut k = 0;
    while k < n {
        let m = (n - k).min(BLOCK);
        let t = std::slice::from_raw_parts_mut(tmp.as_mut_ptr() as *mut D, m);
        map_run(std::slice::from_raw_parts(src.add(k), m), t, f);
        words::stream_words(tmp.as_ptr(), dst.add(k) as *mut u64, m);
        k += m;
    }
}

/// `copy_tiles` of one `len0 x len1` block of 8-byte elements of one type
/// whose source is contiguous along one dimension and whose destination
/// along the other: the words are moved in strips `TILE` wide along the
/// source's contiguous dimension, each strip's destination runs (whole
/// columns or rows of the block, still in cache) then get `f` in place.
#[inline(always)]
unsafe fn copy_words<S: Copy, D: Copy>(
    sp: *const S,
    ss: &[usize],
    dp: *mut D,
    ds: &[usize],
    len0: usize,
    len1: usize,
    f: &impl Fn(S) -> D,
) {
    // (extent along the destination's contiguous dimension, extent along
    // the source's, source row step, destination row step)
    let (long, wide, sstep, dstep) = if ss[1] == 1 {
        (len0, len1, ss[0], ds[1])
    } else {
        (len1, len0, ss[1], ds[0])
    };
    for c0 in (0..wide).step_by(TILE) {
        let c1 = (c0 + TILE).min(wide);
        words::transpose_words(
            sp.add(c0) as *const u64,
            sstep,
            dp.add(c0 * dstep) as *mut u64,
            dstep,
            long,
            c1 - c0,
        );
        for c in c0..c1 {
            // The caller checked that S and D are one type.
            map_in_place(
                std::slice::from_raw_parts_mut(dp.add(c * dstep) as *mut S, long),
                f,
            );
        }
    }
}

/// `x = f(x)` over a run whose elements are of `f`'s source type `S`.
/// Not inlined, so that the loop vectorises as `map_run`'s does.
///
/// # Safety
/// `S` and `D` must be the same type.
/// Where the CPU has AVX2 (detected at run time) the loop is compiled for
/// it: the gather of a C-order float64 write, transpose and NA pass over
/// 128 MiB on one thread, took 19.1 ms with the SSE2 loop and 14.4 ms.
unsafe fn map_in_place<S: Copy, D: Copy>(xs: &mut [S], f: &impl Fn(S) -> D) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return map_in_place_avx2(xs, f);
    }
    map_in_place_plain(xs, f)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn map_in_place_avx2<S: Copy, D: Copy>(xs: &mut [S], f: &impl Fn(S) -> D) {
    map_in_place_plain(xs, f)
}

#[inline(always)]
unsafe fn map_in_place_plain<S: Copy, D: Copy>(xs: &mut [S], f: &impl Fn(S) -> D) {
    debug_assert_eq!(std::mem::size_of::<S>(), std::mem::size_of::<D>());
    for x in xs.iter_mut() {
        let v = f(*x);
        *x = std::mem::transmute_copy::<D, S>(&v);
    }
}

/// `dst[k] = f(src[k])`, compiled for AVX2 where the CPU has it (as
/// `map_in_place`). A function of its own because its slice
/// arguments tell the compiler that the stores change neither the source
/// nor what `f` captured, so the loop vectorises; as a loop over raw
/// pointers it reloaded `f`'s captures for every element and stayed scalar.
/// Not inlined: the guarantees hold at a call's boundary.
fn map_run<S: Copy, D: Copy>(src: &[S], dst: &mut [D], f: &impl Fn(S) -> D) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { map_run_avx2(src, dst, f) };
    }
    map_run_plain(src, dst, f)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn map_run_avx2<S: Copy, D: Copy>(src: &[S], dst: &mut [D], f: &impl Fn(S) -> D) {
    map_run_plain(src, dst, f)
}

#[inline(always)]
fn map_run_plain<S: Copy, D: Copy>(src: &[S], dst: &mut [D], f: &impl Fn(S) -> D) {
    for (o, &v) in dst.iter_mut().zip(src) {
        *o = f(v);
    }
}

// Not inlined, to keep the recursion from blowing up code size.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_dim_outer<S: Copy + 'static, D: Copy + 'static>(
    d: usize,
    stream: bool,
    src: *const S,
    ss: &[usize],
    dst: *mut D,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
) {
    copy_dim(d, stream, src, ss, dst, ds, spans, f)
}

/// Copy elements of `size` bytes unchanged between strided buffers (see
/// `strided_copy`). `spans` may also be `(src, dst, len)` triples, as
/// codec/sharding.rs gives them: those become `Span`s once per call.
///
/// # Safety
/// As `strided_copy`.
pub unsafe fn copy_elements<R: Copy + Into<Span> + 'static>(
    size: usize,
    src: *const u8,
    src_strides: &[usize],
    dst: *mut u8,
    dst_strides: &[usize],
    spans: &[Vec<R>],
) {
    let owned: Vec<Vec<Span>>;
    let spans: &[Vec<Span>] = if std::any::TypeId::of::<R>() == std::any::TypeId::of::<Span>() {
        // SAFETY: R is Span.
        &*(spans as *const [Vec<R>] as *const [Vec<Span>])
    } else {
        owned = spans
            .iter()
            .map(|d| d.iter().map(|&r| r.into()).collect())
            .collect();
        &owned
    };
    macro_rules! by {
        ($n:expr) => {
            strided_copy(
                src as *const [u8; $n],
                src_strides,
                dst as *mut [u8; $n],
                dst_strides,
                spans,
                &|v: [u8; $n]| v,
            )
        };
    }
    match size {
        1 => by!(1),
        2 => by!(2),
        4 => by!(4),
        8 => by!(8),
        16 => by!(16),
        n => unreachable!("no data type has elements of {n} bytes"),
    }
}

macro_rules! le_from {
    ($t:ty, $b:expr) => {{
        let mut a = [0u8; std::mem::size_of::<$t>()];
        a.copy_from_slice(&$b[..std::mem::size_of::<$t>()]);
        <$t>::from_ne_bytes(a)
    }};
}

fn fill_f64(dtype: DataType, fill: &[u8]) -> f64 {
    match dtype {
        DataType::Float16 => f16_to_f64(le_from!(u16, fill)),
        DataType::Float32 => le_from!(f32, fill) as f64,
        _ => le_from!(f64, fill),
    }
}

#[inline(always)]
fn float_read(v: f64, fill: f64, fill_nan: bool, mark_na: bool) -> f64 {
    if mark_na && ((fill_nan && v.is_nan()) || v == fill) {
        na_real()
    } else {
        v
    }
}

/// Turn the fill values among `n` elements at `ptr`, read as they are
/// stored (an R double or integer vector's memory), into R's NA: what
/// `read_into` does on the way for float64 and int32. Other types are
/// never stored straight into R memory and are left alone.
///
/// # Safety
/// `ptr` points to `n` elements of `dtype`, writable, owned by the caller.
pub unsafe fn fill_to_na_in_place(dtype: DataType, fill: &[u8], ptr: *mut u8, n: usize) {
    match dtype {
        DataType::Float64 => {
            let fv = fill_f64(dtype, fill);
            let nan = fv.is_nan();
            let xs = std::slice::from_raw_parts_mut(ptr as *mut f64, n);
            let na = na_real();
            // Written back either way: the branch-free loop vectorises, and
            // the lines were just written by the read.
            if nan {
                for x in xs.iter_mut() {
                    *x = if x.is_nan() { na } else { *x };
                }
            } else {
                for x in xs.iter_mut() {
                    *x = if *x == fv { na } else { *x };
                }
            }
        }
        DataType::Int32 => {
            let fv = le_from!(i32, fill);
            let xs = std::slice::from_raw_parts_mut(ptr as *mut i32, n);
            for x in xs.iter_mut() {
                *x = if *x == fv { NA_INTEGER } else { *x };
            }
        }
        _ => {}
    }
}

/// For a column of R memory about to be stored as it is (float64 from
/// double, int32 from integer): whether it holds an NA (which `write_from`
/// would turn into the fill value), and whether every element is the fill
/// value bit for bit (the chunk need not be stored). Compiled for AVX2
/// where the CPU has it: 128 MiB scanned in 2 KiB columns, prefetched,
/// took 14.9 ms on one thread with the SSE2 loop and 12.4 ms.
pub fn scan_for_write(dtype: DataType, fill: &[u8], bytes: &[u8]) -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { scan_for_write_avx2(dtype, fill, bytes) };
    }
    scan_for_write_plain(dtype, fill, bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_for_write_avx2(dtype: DataType, fill: &[u8], bytes: &[u8]) -> (bool, bool) {
    scan_for_write_plain(dtype, fill, bytes)
}

#[inline(always)]
fn scan_for_write_plain(dtype: DataType, fill: &[u8], bytes: &[u8]) -> (bool, bool) {
    match dtype {
        DataType::Float64 => {
            let fv = le_from!(u64, fill);
            let (mut na, mut all) = (false, true);
            for b in bytes.chunks_exact(8) {
                let v = le_from!(u64, b);
                na |= is_na_real(f64::from_bits(v));
                all &= v == fv;
            }
            (na, all)
        }
        DataType::Int32 => {
            let fv = le_from!(i32, fill);
            let (mut na, mut all) = (false, true);
            for b in bytes.chunks_exact(4) {
                let v = le_from!(i32, b);
                na |= v == NA_INTEGER;
                all &= v == fv;
            }
            (na, all)
        }
        // Never stored straight: say "convert" so the usual path runs.
        _ => (true, false),
    }
}

#[inline(always)]
fn part_matches(v: f64, fill: f64) -> bool {
    (fill.is_nan() && v.is_nan()) || v == fill
}

/// Decoded chunk elements (native endian, `dtype`) -> R buffer.
///
/// # Safety
/// As `strided_copy`: `src` holds every element `spans` reaches with
/// `src_strides`, `dst` is an R buffer of the matching type.
#[allow(clippy::too_many_arguments)]
pub unsafe fn read_into(
    dtype: DataType,
    fill: &[u8],
    mark_na: bool,
    src: *const u8,
    src_strides: &[usize],
    dst: &RBufPtr,
    spans: &[Vec<Span>],
    lossy: &Lossy,
) {
    macro_rules! int_to_i32 {
        ($t:ty) => {{
            let fv = le_from!($t, fill);
            strided_copy(
                src as *const $t,
                src_strides,
                dst.ptr as *mut i32,
                &dst.strides,
                spans,
                &|v: $t| {
                    if mark_na && v == fv {
                        NA_INTEGER
                    } else {
                        v as i32
                    }
                },
            )
        }};
    }
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
    match (dtype, dst.rtype) {
        (DataType::Bool, _) => strided_copy(
            src,
            src_strides,
            dst.ptr as *mut i32,
            &dst.strides,
            spans,
            &|v: u8| (v != 0) as i32,
        ),
        (DataType::Int8, _) => int_to_i32!(i8),
        (DataType::Int16, _) => int_to_i32!(i16),
        (DataType::Int32, _) => int_to_i32!(i32),
        (DataType::UInt8, _) => int_to_i32!(u8),
        (DataType::UInt16, _) => int_to_i32!(u16),
        // i64::MIN is integer64's NA: a stored value that is not the fill
        // value reads as NA too, with a warning.
        (DataType::Int64, RType::Integer64) => to_i64!(i64, |v: i64| v == i64::MIN),
        (DataType::UInt32, RType::Integer64) => to_i64!(u32, |_v: u32| false),
        (DataType::UInt64, RType::Integer64) => to_i64!(u64, |v: u64| v > i64::MAX as u64),
        (DataType::Int64, _) => big_to_f64!(i64, |v: i64| v.unsigned_abs() > LIM),
        (DataType::UInt32, _) => big_to_f64!(u32, |_v: u32| false),
        (DataType::UInt64, _) => big_to_f64!(u64, |v: u64| v > LIM),
        (DataType::Float16, _) => {
            let fv = fill_f64(dtype, fill);
            let nan = fv.is_nan();
            strided_copy(
                src as *const u16,
                src_strides,
                dst.ptr as *mut f64,
                &dst.strides,
                spans,
                &|v: u16| float_read(f16_to_f64(v), fv, nan, mark_na),
            )
        }
        (DataType::Float32, _) => {
            let fv = fill_f64(dtype, fill);
            let nan = fv.is_nan();
            strided_copy(
                src as *const f32,
                src_strides,
                dst.ptr as *mut f64,
                &dst.strides,
                spans,
                &|v: f32| float_read(v as f64, fv, nan, mark_na),
            )
        }
        (DataType::Float64, _) => {
            // One loop per case, each without a branch on the case inside,
            // so that it vectorises: this is the copy of every full read.
            let fv = fill_f64(dtype, fill);
            let na = na_real();
            let (s, d, ds) = (src as *const f64, dst.ptr as *mut f64, &dst.strides);
            if !mark_na {
                copy_same(dst.stream, s, src_strides, d, ds, spans, &|v: f64| v)
            } else if fv.is_nan() {
                copy_same(dst.stream, s, src_strides, d, ds, spans, &move |v: f64| {
                    if v.is_nan() {
                        na
                    } else {
                        v
                    }
                })
            } else {
                copy_same(dst.stream, s, src_strides, d, ds, spans, &move |v: f64| {
                    if v == fv {
                        na
                    } else {
                        v
                    }
                })
            }
        }
        (DataType::Complex64, _) => {
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
        (DataType::Complex128, _) => {
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
        (DataType::String, _) => unreachable!("strings take the string path"),
    }
}

use crate::dtype::RType;

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

/// R buffer -> chunk elements (native endian). Values must have passed
/// `check_writable` first, so every conversion here is exact or NA.
///
/// # Safety
/// As `strided_copy`: `src` is an R buffer covering every element `spans`
/// reaches, `dst` a chunk buffer of `dtype` elements with `dst_strides`.
pub unsafe fn write_from(
    dtype: DataType,
    fill: &[u8],
    src: &RBufPtr,
    dst: *mut u8,
    dst_strides: &[usize],
    spans: &[Vec<Span>],
) {
    let ss = &src.strides;
    // The closures below are `move`: holding the fill value itself rather
    // than a reference to it lets the compiler load it unconditionally, so
    // that the NA test becomes a select and the loops vectorise.
    macro_rules! ints {
        ($t:ty) => {{
            let fv = le_from!($t, fill);
            match src.rtype {
                RType::Logical | RType::Integer => strided_copy(
                    src.ptr as *const i32,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: i32| {
                        if v == NA_INTEGER {
                            fv
                        } else {
                            v as $t
                        }
                    },
                ),
                RType::Double => strided_copy(
                    src.ptr as *const f64,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: f64| {
                        if v.is_nan() {
                            fv
                        } else {
                            v as $t
                        }
                    },
                ),
                RType::Integer64 => strided_copy(
                    src.ptr as *const i64,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: i64| {
                        if v == NA_INTEGER64 {
                            fv
                        } else {
                            v as $t
                        }
                    },
                ),
                RType::Complex | RType::Character => {
                    unreachable!("complex data for an integer array is refused by check_writable")
                }
            }
        }};
    }
    macro_rules! floats {
        ($t:ty, $conv:expr) => {{
            let fv = le_from!($t, fill);
            let conv = $conv;
            match src.rtype {
                RType::Logical | RType::Integer => strided_copy(
                    src.ptr as *const i32,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: i32| {
                        if v == NA_INTEGER {
                            fv
                        } else {
                            conv(v as f64)
                        }
                    },
                ),
                RType::Double => strided_copy(
                    src.ptr as *const f64,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: f64| {
                        if is_na_real(v) {
                            fv
                        } else {
                            conv(v)
                        }
                    },
                ),
                RType::Integer64 => strided_copy(
                    src.ptr as *const i64,
                    ss,
                    dst as *mut $t,
                    dst_strides,
                    spans,
                    &move |v: i64| {
                        if v == NA_INTEGER64 {
                            fv
                        } else {
                            conv(v as f64)
                        }
                    },
                ),
                RType::Complex | RType::Character => {
                    unreachable!("complex data for a real array is refused by check_writable")
                }
            }
        }};
    }
    macro_rules! complexes {
        ($t:ty) => {{
            let n = std::mem::size_of::<$t>();
            let fv: [$t; 2] = [le_from!($t, fill), le_from!($t, &fill[n..])];
            match src.rtype {
                RType::Complex => strided_copy(
                    src.ptr as *const [f64; 2],
                    ss,
                    dst as *mut [$t; 2],
                    dst_strides,
                    spans,
                    &move |v: [f64; 2]| {
                        if is_na_real(v[0]) || is_na_real(v[1]) {
                            fv
                        } else {
                            [v[0] as $t, v[1] as $t]
                        }
                    },
                ),
                RType::Double => strided_copy(
                    src.ptr as *const f64,
                    ss,
                    dst as *mut [$t; 2],
                    dst_strides,
                    spans,
                    &move |v: f64| {
                        if is_na_real(v) {
                            fv
                        } else {
                            [v as $t, 0.0]
                        }
                    },
                ),
                RType::Logical | RType::Integer => strided_copy(
                    src.ptr as *const i32,
                    ss,
                    dst as *mut [$t; 2],
                    dst_strides,
                    spans,
                    &move |v: i32| {
                        if v == NA_INTEGER {
                            fv
                        } else {
                            [v as $t, 0.0]
                        }
                    },
                ),
                RType::Integer64 => strided_copy(
                    src.ptr as *const i64,
                    ss,
                    dst as *mut [$t; 2],
                    dst_strides,
                    spans,
                    &move |v: i64| {
                        if v == NA_INTEGER64 {
                            fv
                        } else {
                            [v as $t, 0.0]
                        }
                    },
                ),
                RType::Character => unreachable!("character data takes the string path"),
            }
        }};
    }
    match dtype {
        DataType::Bool => match src.rtype {
            RType::Double => strided_copy(
                src.ptr as *const f64,
                ss,
                dst,
                dst_strides,
                spans,
                &move |v: f64| (!v.is_nan() && v != 0.0) as u8,
            ),
            RType::Integer64 => strided_copy(
                src.ptr as *const i64,
                ss,
                dst,
                dst_strides,
                spans,
                &move |v: i64| (v != NA_INTEGER64 && v != 0) as u8,
            ),
            _ => strided_copy(
                src.ptr as *const i32,
                ss,
                dst,
                dst_strides,
                spans,
                &move |v: i32| (v != NA_INTEGER && v != 0) as u8,
            ),
        },
        DataType::Int8 => ints!(i8),
        DataType::Int16 => ints!(i16),
        DataType::Int32 => ints!(i32),
        DataType::Int64 => ints!(i64),
        DataType::UInt8 => ints!(u8),
        DataType::UInt16 => ints!(u16),
        DataType::UInt32 => ints!(u32),
        DataType::UInt64 => ints!(u64),
        DataType::Float16 => floats!(u16, f64_to_f16),
        DataType::Float32 => floats!(f32, |v: f64| v as f32),
        DataType::Float64 => floats!(f64, |v: f64| v),
        DataType::Complex64 => complexes!(f32),
        DataType::Complex128 => complexes!(f64),
        DataType::String => unreachable!("strings take the string path"),
    }
}

/// R values, in their memory order, -> native-endian elements of `dtype`
/// (NA becomes the fill value). `what` names the data in errors.
pub fn encode_elements(data: &RBuf, dtype: DataType, fill: &[u8], what: &str) -> Result<Vec<u8>> {
    check_writable(data, dtype, what)?;
    let n = data.len();
    let mut out = vec![0u8; n * dtype.size()];
    let src = RBufPtr::from_ref(data, &[n]);
    // SAFETY: one run of n elements, inside both buffers.
    unsafe {
        write_from(
            dtype,
            fill,
            &src,
            out.as_mut_ptr(),
            &[1],
            &[vec![Span {
                src: 0,
                dst: 0,
                len: n,
            }]],
        )
    };
    Ok(out)
}

/// Native-endian elements of `dtype` -> an R buffer of as many elements
/// (the fill value becomes NA). Returns warnings about inexact values.
pub fn decode_elements(
    bytes: &[u8],
    dtype: DataType,
    fill: &[u8],
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
    // SAFETY: one run of n elements; the length was checked above.
    unsafe {
        read_into(
            dtype,
            fill,
            true,
            bytes.as_ptr(),
            &[1],
            &dst,
            &[vec![Span {
                src: 0,
                dst: 0,
                len: n,
            }]],
            &lossy,
        )
    };
    Ok(lossy.warnings(what))
}

fn int_range(dtype: DataType) -> Option<(f64, f64)> {
    Some(match dtype {
        DataType::Int8 => (i8::MIN as f64, i8::MAX as f64),
        DataType::Int16 => (i16::MIN as f64, i16::MAX as f64),
        DataType::Int32 => (i32::MIN as f64, i32::MAX as f64),
        DataType::Int64 => (i64::MIN as f64, 9223372036854775807.0),
        DataType::UInt8 => (0.0, u8::MAX as f64),
        DataType::UInt16 => (0.0, u16::MAX as f64),
        DataType::UInt32 => (0.0, u32::MAX as f64),
        DataType::UInt64 => (0.0, 18446744073709551615.0),
        _ => return None,
    })
}

/// Refuse data that the array's type cannot hold, before anything is
/// written: values out of range, fractions for integer types, complex data
/// for a real type. `what` names the array.
pub fn check_writable(data: &RBuf, dtype: DataType, what: &str) -> Result<()> {
    let bad = |v: String| {
        Err(ZarrError::Type(format!(
            "{what}: value {v} cannot be stored as {}",
            dtype.name()
        )))
    };
    let is_complex = matches!(dtype, DataType::Complex64 | DataType::Complex128);
    if let RBuf::Complex(x) = data {
        if !is_complex {
            return Err(ZarrError::Type(format!(
                "{what}: complex data cannot be written to an array of type {}",
                dtype.name()
            )));
        }
        if dtype == DataType::Complex64 {
            for v in x.iter() {
                for p in v {
                    if p.is_finite() && (*p as f32).is_infinite() {
                        return bad(p.to_string());
                    }
                }
            }
        }
        return Ok(());
    }
    if let Some((lo, hi)) = int_range(dtype) {
        match data {
            RBuf::Integer(x) | RBuf::Logical(x) => {
                if let Some(v) = x
                    .iter()
                    .find(|&&v| v != NA_INTEGER && ((v as f64) < lo || (v as f64) > hi))
                {
                    return bad(v.to_string());
                }
            }
            RBuf::Double(x) => {
                // hi of the 64-bit types rounds up to 2^63 / 2^64, which do not fit.
                let hi_excl = matches!(dtype, DataType::Int64 | DataType::UInt64);
                if let Some(v) = x.iter().find(|&&v| {
                    !v.is_nan()
                        && (v.fract() != 0.0
                            || v < lo
                            || v > hi
                            || (hi_excl && v >= hi)
                            || v.is_infinite())
                }) {
                    return bad(v.to_string());
                }
            }
            RBuf::Integer64(x) => {
                let ok = |v: i64| match dtype {
                    DataType::Int64 => true,
                    DataType::UInt64 | DataType::UInt32 | DataType::UInt16 | DataType::UInt8 => {
                        v >= 0 && (v as f64) <= hi
                    }
                    _ => (v as f64) >= lo && (v as f64) <= hi,
                };
                if let Some(v) = x.iter().find(|&&v| v != NA_INTEGER64 && !ok(v)) {
                    return bad(v.to_string());
                }
            }
            RBuf::Complex(_) => unreachable!(),
        }
        return Ok(());
    }
    let max = match dtype {
        DataType::Float16 => 65504.0,
        DataType::Float32 => f32::MAX as f64,
        _ => return Ok(()),
    };
    if let RBuf::Double(x) = data {
        // Rounding to the nearest representable value is expected; turning a
        // finite number into infinity is not.
        if let Some(v) = x.iter().find(|&&v| {
            v.is_finite() && v.abs() > max && {
                let r = if dtype == DataType::Float16 {
                    f16_to_f64(f64_to_f16(v))
                } else {
                    v as f32 as f64
                };
                r.is_infinite()
            }
        }) {
            return bad(v.to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans from `(src, dst, len)` triples, one list per dimension.
    fn to_spans(runs: &[Vec<(usize, usize, usize)>]) -> Vec<Vec<Span>> {
        runs.iter()
            .map(|d| d.iter().map(|&r| Span::from(r)).collect())
            .collect()
    }

    #[test]
    fn elements_round_trip_with_na_as_fill() {
        let fill = (-1i16).to_ne_bytes();
        let bytes = encode_elements(
            &RBuf::Integer(&[5, NA_INTEGER, -3]),
            DataType::Int16,
            &fill,
            "x",
        )
        .unwrap();
        assert_eq!(bytes.len(), 6);
        let mut out = vec![0i32; 3];
        decode_elements(
            &bytes,
            DataType::Int16,
            &fill,
            &mut RBufMut::Integer(&mut out),
            "x",
        )
        .unwrap();
        assert_eq!(out, vec![5, NA_INTEGER, -3]);
        let e = decode_elements(
            &bytes[..5],
            DataType::Int16,
            &fill,
            &mut RBufMut::Integer(&mut out),
            "x",
        )
        .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
    }

    #[test]
    fn na_real_is_recognised_but_other_nans_are_not() {
        assert!(is_na_real(na_real()));
        assert!(!is_na_real(f64::NAN));
        assert!(!is_na_real(1.0));
        // R's R_IsNA: any NaN whose low word is 1954, whatever its sign
        // and quiet bit; nothing else, however its low word reads.
        let cases = [
            (0x7FF0_0000_0000_07A2u64, true),
            (0xFFF0_0000_0000_07A2, true),
            (0x7FF8_0000_0000_07A2, true),
            (0x7FF0_0001_0000_07A2, true),
            (0x3FF0_0000_0000_07A2, false),
            (0x7FE0_0000_0000_07A2, false),
            (0x7FF0_0000_0000_0000, false),
            (0xFFF0_0000_0000_0000, false),
            (0x7FF0_0000_0000_07A3, false),
            (0x7FF0_0000_0001_07A2, false),
        ];
        for (bits, na) in cases {
            let x = f64::from_bits(bits);
            assert_eq!(is_na_real(x), na, "{bits:#018x}");
            assert_eq!(na, x.is_nan() && bits & 0xFFFF_FFFF == 1954, "{bits:#018x}");
        }
    }

    /// The loops that run compiled for AVX2 where the CPU has it give what
    /// their plain versions give, for every length around the vector width
    /// and NA at every position class.
    #[test]
    fn vector_loops_match_their_plain_versions() {
        let fill = 0.5f64;
        let to_chunk = move |v: f64| if is_na_real(v) { fill } else { v };
        for n in 0..70usize {
            let xs: Vec<f64> = (0..n)
                .map(|k| match k % 7 {
                    3 => na_real(),
                    5 => f64::NAN,
                    _ => k as f64 * 1.25,
                })
                .collect();
            let want: Vec<u64> = xs.iter().map(|&v| to_chunk(v).to_bits()).collect();
            let mut out = vec![0f64; n];
            map_run(&xs, &mut out, &to_chunk);
            assert_eq!(out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);
            let mut inplace = xs.clone();
            // SAFETY: source and destination types are both f64.
            unsafe { map_in_place(&mut inplace, &to_chunk) };
            assert_eq!(
                inplace.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want
            );

            let bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
            let fb = fill.to_le_bytes();
            let has_na = xs.iter().any(|&v| is_na_real(v));
            assert_eq!(
                scan_for_write(DataType::Float64, &fb, &bytes),
                (has_na, n == 0),
                "{n} doubles"
            );
            assert_eq!(
                scan_for_write(DataType::Float64, &fb, &bytes),
                scan_for_write_plain(DataType::Float64, &fb, &bytes)
            );
            let fills: Vec<u8> = fb.repeat(n);
            assert_eq!(
                scan_for_write(DataType::Float64, &fb, &fills),
                (false, true)
            );
            let ints: Vec<u8> = (0..n as i32)
                .map(|k| if k % 9 == 4 { NA_INTEGER } else { 3 })
                .flat_map(|v| v.to_le_bytes())
                .collect();
            assert_eq!(
                scan_for_write(DataType::Int32, &3i32.to_le_bytes(), &ints),
                (n > 4, n <= 4),
                "{n} integers"
            );
        }
    }

    #[test]
    fn strided_copy_transposes_a_c_order_chunk() {
        // a 2 x 3 chunk stored in C order: [[0,1,2],[3,4,5]]
        let src: Vec<i32> = vec![0, 1, 2, 3, 4, 5];
        let mut dst = vec![0i32; 6];
        let runs = vec![vec![(0, 0, 2)], vec![(0, 0, 3)]];
        let spans = to_spans(&runs);
        unsafe {
            strided_copy(
                src.as_ptr(),
                &[3, 1],
                dst.as_mut_ptr(),
                &[1, 2],
                &spans,
                &|v| v,
            )
        };
        assert_eq!(dst, vec![0, 3, 1, 4, 2, 5]);
    }

    /// `strided_copy` of `src` (strides `ss`) into a zeroed buffer of `n`
    /// elements (strides `ds`) with `f`, then of that back into a zeroed
    /// buffer like `src` with `g` over the same spans reversed.
    fn copy_there_and_back<T: Copy + Default + 'static>(
        src: &[T],
        ss: &[usize],
        ds: &[usize],
        n: usize,
        spans: &[Vec<Span>],
        f: impl Fn(T) -> T,
        g: impl Fn(T) -> T,
    ) -> (Vec<T>, Vec<T>) {
        let mut got = vec![T::default(); n];
        let mut back = vec![T::default(); src.len()];
        let back_spans: Vec<Vec<Span>> = spans
            .iter()
            .map(|d| {
                d.iter()
                    .map(|s| Span {
                        src: s.dst,
                        dst: s.src,
                        len: s.len,
                    })
                    .collect()
            })
            .collect();
        // SAFETY: the callers' spans lie inside both buffers.
        unsafe {
            strided_copy(src.as_ptr(), ss, got.as_mut_ptr(), ds, spans, &f);
            strided_copy(got.as_ptr(), ds, back.as_mut_ptr(), ss, &back_spans, &g);
        }
        (got, back)
    }

    #[test]
    fn word_transposes_match_element_by_element_copies() {
        // 2-d copies of 8-byte elements take the word-transposing path
        // (each side contiguous along its own dimension); `f` must run
        // exactly once per element, in both directions, for runs that
        // start and end inside tiles and blocks of four.
        let shape = [37usize, 45];
        let src: Vec<u64> = (0..(shape[0] * shape[1]) as u64).map(|v| v * 3).collect();
        let ss = [shape[1], 1];
        let out_shape = [41usize, 50];
        let ds = [1, out_shape[0]];
        let runs = vec![vec![(0, 2, 5), (9, 10, 28)], vec![(1, 0, 17), (19, 21, 26)]];
        let spans = to_spans(&runs);
        let mut want = vec![0u64; out_shape[0] * out_shape[1]];
        for &(a1, b1, n1) in &runs[1] {
            for j in 0..n1 {
                for &(a0, b0, n0) in &runs[0] {
                    for i in 0..n0 {
                        want[(b0 + i) * ds[0] + (b1 + j) * ds[1]] =
                            src[(a0 + i) * ss[0] + (a1 + j) * ss[1]] + 1;
                    }
                }
            }
        }
        let (got, back) =
            copy_there_and_back(&src, &ss, &ds, want.len(), &spans, |v| v + 1, |v| v * 2);
        assert_eq!(got, want);
        for &(a1, _, n1) in &runs[1] {
            for j in 0..n1 {
                for &(a0, _, n0) in &runs[0] {
                    for i in 0..n0 {
                        let k = (a0 + i) * ss[0] + (a1 + j) * ss[1];
                        assert_eq!(back[k], (src[k] + 1) * 2);
                    }
                }
            }
        }
    }

    #[test]
    fn tiled_transposes_match_element_by_element_copies() {
        // A 37 x 21 x 3 C-order chunk, with runs that start and end inside
        // tiles, into a column-major 40 x 30 x 3 output.
        let shape = [37usize, 21, 3];
        let src: Vec<u32> = (0..shape.iter().product::<usize>() as u32).collect();
        let ss = [shape[1] * shape[2], shape[2], 1];
        let out_shape = [40usize, 30, 3];
        let ds = [1, out_shape[0], out_shape[0] * out_shape[1]];
        let runs = vec![
            vec![(0, 2, 5), (9, 10, 28)],
            vec![(1, 0, 17), (19, 20, 2)],
            vec![(0, 0, 3)],
        ];
        let spans = to_spans(&runs);
        let mut want = vec![0u32; out_shape.iter().product()];
        for &(a2, b2, n2) in &runs[2] {
            for k in 0..n2 {
                for &(a1, b1, n1) in &runs[1] {
                    for j in 0..n1 {
                        for &(a0, b0, n0) in &runs[0] {
                            for i in 0..n0 {
                                want[(b0 + i) * ds[0] + (b1 + j) * ds[1] + (b2 + k) * ds[2]] =
                                    src[(a0 + i) * ss[0] + (a1 + j) * ss[1] + (a2 + k) * ss[2]] + 1;
                            }
                        }
                    }
                }
            }
        }
        let (got, back) = copy_there_and_back(&src, &ss, &ds, want.len(), &spans, |v| v + 1, |v| v);
        assert_eq!(got, want);
        // back: column-major source, C-order destination
        for (i, (&b, &s0)) in back.iter().zip(&src).enumerate() {
            let (r, c) = (i / ss[0], (i / ss[1]) % shape[1]);
            let selected = runs[0].iter().any(|&(a, _, n)| (a..a + n).contains(&r))
                && runs[1].iter().any(|&(a, _, n)| (a..a + n).contains(&c));
            assert_eq!(b, if selected { s0 + 1 } else { 0 }, "element {i}");
        }
    }

    #[test]
    fn zero_stride_broadcasts_a_fill() {
        let fill = [7i32];
        let mut dst = vec![0i32; 4];
        let runs = vec![vec![(0, 1, 1)], vec![(0, 0, 2)]];
        let spans = to_spans(&runs);
        unsafe {
            strided_copy(
                fill.as_ptr(),
                &[0, 0],
                dst.as_mut_ptr(),
                &[1, 2],
                &spans,
                &|v| v,
            )
        };
        assert_eq!(dst, vec![0, 7, 0, 7]);
    }

    /// A float64 chunk read into an R buffer with and without streaming
    /// stores: the same values, NaN -> NA included, for runs of odd and
    /// even lengths at odd and even destination offsets, over three
    /// dimensions; a source not contiguous along dimension 0 is refused.
    #[test]
    fn streamed_reads_match_plain_reads() {
        let lossy = Lossy::default();
        let chunk = [5usize, 7, 3];
        let n: usize = chunk.iter().product();
        let src: Vec<u8> = (0..n)
            .map(|k| if k % 9 == 4 { f64::NAN } else { k as f64 * 0.5 })
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let shape = [9usize, 8, 4];
        let runs = vec![
            vec![(0, 1, 2), (3, 5, 2)],
            vec![(1, 0, 5), (6, 7, 1)],
            vec![(0, 1, 3)],
        ];
        let spans = to_spans(&runs);
        let read = |stream: bool| {
            let mut out = vec![-1f64; shape.iter().product()];
            let mut buf = RBufMut::Double(&mut out);
            let mut p = RBufPtr::from_mut(&mut buf, &shape);
            assert!(!p.stream, "a small buffer is not streamed by default");
            p.stream = stream;
            unsafe {
                read_into(
                    DataType::Float64,
                    &f64::NAN.to_ne_bytes(),
                    true,
                    src.as_ptr(),
                    &[1, 5, 35],
                    &p,
                    &spans,
                    &lossy,
                )
            };
            out
        };
        let (plain, streamed) = (read(false), read(true));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&plain), bits(&streamed));
        // The definition, element by element.
        let mut want = vec![(-1f64).to_bits(); plain.len()];
        let each = |d: usize| {
            runs[d]
                .iter()
                .flat_map(|&(a, b, l)| (0..l).map(move |k| (a + k, b + k)))
        };
        for (a2, b2) in each(2) {
            for (a1, b1) in each(1) {
                for (a0, b0) in each(0) {
                    let k = a0 + 5 * a1 + 35 * a2;
                    let v = if k % 9 == 4 {
                        na_real()
                    } else {
                        k as f64 * 0.5
                    };
                    want[b0 + 9 * b1 + 72 * b2] = v.to_bits();
                }
            }
        }
        assert_eq!(bits(&streamed), want);
        let mut out = vec![0f64; 4];
        let f = |v: f64| v;
        let s = [1.0f64, 2.0, 3.0, 4.0];
        // SAFETY: the spans stay inside both buffers.
        let done = unsafe {
            stream_copy(
                s.as_ptr(),
                &[2, 1],
                out.as_mut_ptr(),
                &[1, 2],
                &to_spans(&[vec![(0, 0, 2)], vec![(0, 0, 2)]]),
                &f,
            )
        };
        assert!(!done && out == [0.0; 4]);
    }

    #[test]
    fn fill_values_read_as_na() {
        let lossy = Lossy::default();
        let src: Vec<u8> = [1.5f64, 0.0, -0.0, f64::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut out = vec![0f64; 4];
        let mut buf = RBufMut::Double(&mut out);
        let p = RBufPtr::from_mut(&mut buf, &[4]);
        let runs = vec![vec![(0, 0, 4)]];
        let spans = to_spans(&runs);
        unsafe {
            read_into(
                DataType::Float64,
                &0f64.to_ne_bytes(),
                true,
                src.as_ptr(),
                &[1],
                &p,
                &spans,
                &lossy,
            )
        };
        assert_eq!(out[0], 1.5);
        assert!(is_na_real(out[1]) && is_na_real(out[2]));
        assert!(out[3].is_nan() && !is_na_real(out[3]));
    }

    #[test]
    fn uint64_above_i64_max_reads_as_na_with_a_warning() {
        let lossy = Lossy::default();
        let src: Vec<u8> = [5u64, u64::MAX]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut out = vec![0i64; 2];
        let mut buf = RBufMut::Integer64(&mut out);
        let p = RBufPtr::from_mut(&mut buf, &[2]);
        unsafe {
            read_into(
                DataType::UInt64,
                &0u64.to_ne_bytes(),
                true,
                src.as_ptr(),
                &[1],
                &p,
                &to_spans(&[vec![(0, 0, 2)]]),
                &lossy,
            )
        };
        assert_eq!(out, vec![5, NA_INTEGER64]);
        assert_eq!(lossy.warnings("x").len(), 1);
    }

    #[test]
    fn writes_map_na_to_fill_and_check_ranges() {
        let data = [1, NA_INTEGER, 3];
        let src = RBufPtr::from_ref(&RBuf::Integer(&data), &[3]);
        let mut dst = vec![0u8; 6];
        unsafe {
            write_from(
                DataType::Int16,
                &(-9i16).to_ne_bytes(),
                &src,
                dst.as_mut_ptr(),
                &[1],
                &to_spans(&[vec![(0, 0, 3)]]),
            )
        };
        let vals: Vec<i16> = dst
            .chunks(2)
            .map(|c| i16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(vals, vec![1, -9, 3]);
        assert!(check_writable(&RBuf::Integer(&[300]), DataType::Int8, "a").is_err());
        assert!(check_writable(&RBuf::Double(&[1.5]), DataType::Int32, "a").is_err());
        assert!(check_writable(&RBuf::Double(&[f64::NAN, 2.0]), DataType::UInt8, "a").is_ok());
        assert!(check_writable(&RBuf::Double(&[-1.0]), DataType::UInt64, "a").is_err());
        assert!(check_writable(
            &RBuf::Double(&[18446744073709551616.0]),
            DataType::UInt64,
            "a"
        )
        .is_err());
        assert!(check_writable(&RBuf::Double(&[1e300]), DataType::Float32, "a").is_err());
        assert!(check_writable(&RBuf::Double(&[f64::INFINITY]), DataType::Float32, "a").is_ok());
        assert!(check_writable(&RBuf::Complex(&[[1.0, 2.0]]), DataType::Float64, "a").is_err());
    }
}
