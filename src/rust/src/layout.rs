//! The strided N-d copy kernel every read and write goes through: spans
//! of elements copied between two strided buffers through a per-element
//! function, with tiled transposes, word transposes and streaming stores
//! where the layout allows.

use crate::words::{self, Mark};

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
    /// `(src, dst, len)`, the short form the kernel's tests write.
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
    strided_copy_marked(src, src_strides, dst, dst_strides, spans, f, None)
}

/// `strided_copy` where `mark`, when given, does to 8-byte words what `f`
/// does to elements: a transposing copy then applies it in registers as
/// it moves the words, instead of running `f` over what it wrote.
///
/// # Safety
/// As `strided_copy`; `mark` must agree with `f` on every element.
pub unsafe fn strided_copy_marked<S: Copy + 'static, D: Copy + 'static>(
    src: *const S,
    src_strides: &[usize],
    dst: *mut D,
    dst_strides: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
    mark: Option<Mark>,
) {
    let nd = spans.len();
    if nd == 0 {
        dst.write_unaligned(f(src.read_unaligned()));
        return;
    }
    if let Some(j) = transpose_partner(src_strides, dst_strides) {
        // The walk's order of dimensions is free: with the other side's
        // contiguous dimension moved next to dimension 0, `copy_tiles`
        // gets the two contiguous dimensions (a C-order chunk of a 3-d
        // array against R's column-major one: time against longitude,
        // not time against latitude, each of whose elements is a cache
        // line of its own).
        let (mut ss, mut ds) = (src_strides.to_vec(), dst_strides.to_vec());
        let mut sp = spans.to_vec();
        ss.swap(1, j);
        ds.swap(1, j);
        sp.swap(1, j);
        copy_dim(nd - 1, false, src, &ss, dst, &ds, &sp, f, mark);
        return;
    }
    copy_dim(
        nd - 1,
        false,
        src,
        src_strides,
        dst,
        dst_strides,
        spans,
        f,
        mark,
    );
}

/// For a copy in which exactly one side is contiguous along dimension 0:
/// the dimension beyond 1 along which the other side is contiguous, if
/// there is one.
fn transpose_partner(ss: &[usize], ds: &[usize]) -> Option<usize> {
    if ss.len() < 3 || (ss[0] == 1) == (ds[0] == 1) {
        return None;
    }
    let other = if ss[0] == 1 { ds } else { ss };
    (2..other.len()).find(|&j| other[j] == 1 && other[1] != 1)
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
    mark: Option<Mark>,
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
        copy_tiles(src, ss, dst, ds, spans, f, mark);
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
                mark,
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
    mark: Option<Mark>,
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
                copy_words(sp, ss, dp, ds, len0, len1, f, mark);
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
pub unsafe fn stream_copy<S: Copy + 'static, D: Copy + 'static>(
    src: *const S,
    ss: &[usize],
    dst: *mut D,
    ds: &[usize],
    spans: &[Vec<Span>],
    f: &impl Fn(S) -> D,
) -> bool {
    if std::mem::size_of::<D>() != 8
        || spans.is_empty()
        || ss[0] != 1
        || ds[0] != 1
        || !src.is_aligned()
    {
        return false;
    }
    copy_dim(spans.len() - 1, true, src, ss, dst, ds, spans, f, None);
    // Before the caller's thread reports the chunk done.
    words::stream_fence();
    true
}

/// `strided_copy` with streaming stores where `stream` asks for them and
/// `stream_copy` applies: between buffers of one 8-byte type, and for the
/// widening conversions into R's double (float32, float16, integers); a
/// `mark` as `strided_copy_marked` takes it.
///
/// # Safety
/// As `stream_copy`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_same<S: Copy + 'static, D: Copy + 'static>(
    stream: bool,
    src: *const S,
    ss: &[usize],
    dst: *mut D,
    ds: &[usize],
    spans: &[Vec<Span>],
    mark: Option<Mark>,
    f: &impl Fn(S) -> D,
) {
    if !(stream && stream_copy(src, ss, dst, ds, spans, f)) {
        strided_copy_marked(src, ss, dst, ds, spans, f, mark)
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
/// columns or rows of the block, still in cache) then get `f` in place;
/// with a `mark`, the words get it as they move and `f` does not run.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn copy_words<S: Copy, D: Copy>(
    sp: *const S,
    ss: &[usize],
    dp: *mut D,
    ds: &[usize],
    len0: usize,
    len1: usize,
    f: &impl Fn(S) -> D,
    mark: Option<Mark>,
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
        words::transpose_marked(
            sp.add(c0) as *const u64,
            sstep,
            dp.add(c0 * dstep) as *mut u64,
            dstep,
            long,
            c1 - c0,
            mark.unwrap_or(Mark::Keep),
        );
        if mark.is_some() {
            continue;
        }
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
pub(crate) unsafe fn map_in_place<S: Copy, D: Copy>(xs: &mut [S], f: &impl Fn(S) -> D) {
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
pub(crate) fn map_run<S: Copy, D: Copy>(src: &[S], dst: &mut [D], f: &impl Fn(S) -> D) {
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
    mark: Option<Mark>,
) {
    copy_dim(d, stream, src, ss, dst, ds, spans, f, mark)
}

/// Copy elements of `size` bytes unchanged between strided buffers (see
/// `strided_copy`).
///
/// # Safety
/// As `strided_copy`.
pub unsafe fn copy_elements(
    size: usize,
    src: *const u8,
    src_strides: &[usize],
    dst: *mut u8,
    dst_strides: &[usize],
    spans: &[Vec<Span>],
) {
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
        // Records of other sizes: their bytes, one more dimension.
        n => {
            let widen =
                |s: &[usize]| -> Vec<usize> { s.iter().map(|&x| x * n).chain([1]).collect() };
            let mut spans = spans.to_vec();
            spans.push(vec![Span {
                src: 0,
                dst: 0,
                len: n,
            }]);
            strided_copy(
                src,
                &widen(src_strides),
                dst,
                &widen(dst_strides),
                &spans,
                &|v: u8| v,
            )
        }
    }
}
