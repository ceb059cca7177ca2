//! Transposing blocks of 8-byte words: the data movement of reading a
//! C-order float64 or int64 chunk into R's column-major memory, and of
//! writing one from it. With AVX the words move four by four through
//! registers, where an element-by-element copy needs a load and a store
//! per element: the 128 MiB scatter of a C-order float64 array took 13%
//! less time, and is then bound by the memory. Also the streaming stores
//! with which a column-major chunk's runs go into a result far larger
//! than the cache.

/// What a word transpose does to each word on its way, in registers: a
/// read of float64 that marks missing values needs no pass of its own
/// over the result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// Every word as it is.
    Keep,
    /// Words equal to `fill` as float64 (numeric equality: -0 equals 0,
    /// a NaN equals nothing) become `na`.
    Fill { fill: f64, na: u64 },
    /// Every NaN becomes `na`.
    Nan { na: u64 },
}

impl Mark {
    /// The word `w` becomes.
    #[inline(always)]
    pub fn apply(self, w: u64) -> u64 {
        match self {
            Mark::Keep => w,
            Mark::Fill { fill, na } => {
                if f64::from_bits(w) == fill {
                    na
                } else {
                    w
                }
            }
            Mark::Nan { na } => {
                if f64::from_bits(w).is_nan() {
                    na
                } else {
                    w
                }
            }
        }
    }
}

/// Copy the `rows x cols` block whose row `r` is the `cols` words at
/// `src + r * src_step` into its transpose, whose row `c` is the `rows`
/// words at `dst + c * dst_step`: `dst[c * dst_step + r] = src[r * src_step + c]`.
/// Words are moved bit for bit (NaN payloads such as R's NA included).
///
/// # Safety
/// Both blocks must be in bounds, must not overlap, and no other thread
/// may write the destination words.
pub unsafe fn transpose_words(
    src: *const u64,
    src_step: usize,
    dst: *mut u64,
    dst_step: usize,
    rows: usize,
    cols: usize,
) {
    transpose_marked(src, src_step, dst, dst_step, rows, cols, Mark::Keep)
}

/// `transpose_words` that passes each word through `mark` on its way.
///
/// # Safety
/// As `transpose_words`.
pub unsafe fn transpose_marked(
    src: *const u64,
    src_step: usize,
    dst: *mut u64,
    dst_step: usize,
    rows: usize,
    cols: usize,
    mark: Mark,
) {
    #[cfg(target_arch = "x86_64")]
    if rows >= 4 && cols >= 4 && std::arch::is_x86_feature_detected!("avx") {
        return match mark {
            Mark::Keep => transpose_avx::<KEEP>(src, src_step, dst, dst_step, rows, cols, mark),
            Mark::Fill { .. } => {
                transpose_avx::<FILL>(src, src_step, dst, dst_step, rows, cols, mark)
            }
            Mark::Nan { .. } => {
                transpose_avx::<NAN>(src, src_step, dst, dst_step, rows, cols, mark)
            }
        };
    }
    transpose_scalar(src, src_step, dst, dst_step, 0..rows, 0..cols, mark);
}

/// The kinds of `Mark`, as constants that pick a variant of the AVX loop.
const KEEP: u8 = 0;
const FILL: u8 = 1;
const NAN: u8 = 2;

/// The part `rows x cols` of the block, one word at a time.
unsafe fn transpose_scalar(
    src: *const u64,
    src_step: usize,
    dst: *mut u64,
    dst_step: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    mark: Mark,
) {
    for c in cols {
        for r in rows.clone() {
            dst.add(c * dst_step + r)
                .write_unaligned(mark.apply(src.add(r * src_step + c).read_unaligned()));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_avx<const M: u8>(
    src: *const u64,
    src_step: usize,
    dst: *mut u64,
    dst_step: usize,
    rows: usize,
    cols: usize,
    mark: Mark,
) {
    // Strips of `TILE` (16) columns are the common case: with the width
    // known, the loop over a strip's four blocks is unrolled and the loads
    // of all four go out together. A C-order write's gather of 128 MiB
    // took 16.5 ms with the rolled loop and 13.5 ms unrolled (one thread).
    if cols == 16 {
        transpose_avx_body::<M>(src, src_step, dst, dst_step, rows, 16, mark)
    } else {
        transpose_avx_body::<M>(src, src_step, dst, dst_step, rows, cols, mark)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn transpose_avx_body<const M: u8>(
    src: *const u64,
    src_step: usize,
    dst: *mut u64,
    dst_step: usize,
    rows: usize,
    cols: usize,
    mark: Mark,
) {
    use std::arch::x86_64::{
        __m256d, _mm256_blendv_pd, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_loadu_pd,
        _mm256_permute2f128_pd, _mm256_set1_epi64x, _mm256_set1_pd, _mm256_storeu_pd,
        _mm256_unpackhi_pd, _mm256_unpacklo_pd, _CMP_EQ_OQ, _CMP_UNORD_Q,
    };
    let (fill, na) = match mark {
        Mark::Keep => (0.0, 0),
        Mark::Fill { fill, na } => (fill, na),
        Mark::Nan { na } => (0.0, na),
    };
    let (fill4, na4) = (
        _mm256_set1_pd(fill),
        _mm256_castsi256_pd(_mm256_set1_epi64x(na as i64)),
    );
    // The comparison and blend act on whole registers just transposed,
    // before they are stored: no pass of their own. A blend moves bits,
    // so words that are not marked pass unchanged (NaN payloads too).
    // (A macro, not a closure, so that it is compiled with AVX as this
    // function is.)
    macro_rules! marked {
        ($v:expr) => {{
            let v: __m256d = $v;
            if M == FILL {
                _mm256_blendv_pd(v, na4, _mm256_cmp_pd::<_CMP_EQ_OQ>(v, fill4))
            } else if M == NAN {
                _mm256_blendv_pd(v, na4, _mm256_cmp_pd::<_CMP_UNORD_Q>(v, v))
            } else {
                v
            }
        }};
    }
    let (rows4, cols4) = (rows & !3, cols & !3);
    // The moves, unpacks and lane permutes below never interpret the
    // words as numbers, so every bit pattern passes unchanged.
    for r in (0..rows4).step_by(4) {
        for c in (0..cols4).step_by(4) {
            let s = src.add(r * src_step + c) as *const f64;
            let a = _mm256_loadu_pd(s);
            let b = _mm256_loadu_pd(s.add(src_step));
            let e = _mm256_loadu_pd(s.add(2 * src_step));
            let g = _mm256_loadu_pd(s.add(3 * src_step));
            // t0 = a0 b0 a2 b2, t1 = a1 b1 a3 b3, t2 = e0 g0 e2 g2, t3 = e1 g1 e3 g3
            let t0 = _mm256_unpacklo_pd(a, b);
            let t1 = _mm256_unpackhi_pd(a, b);
            let t2 = _mm256_unpacklo_pd(e, g);
            let t3 = _mm256_unpackhi_pd(e, g);
            let o = dst.add(c * dst_step + r) as *mut f64;
            _mm256_storeu_pd(o, marked!(_mm256_permute2f128_pd::<0x20>(t0, t2)));
            _mm256_storeu_pd(
                o.add(dst_step),
                marked!(_mm256_permute2f128_pd::<0x20>(t1, t3)),
            );
            _mm256_storeu_pd(
                o.add(2 * dst_step),
                marked!(_mm256_permute2f128_pd::<0x31>(t0, t2)),
            );
            _mm256_storeu_pd(
                o.add(3 * dst_step),
                marked!(_mm256_permute2f128_pd::<0x31>(t1, t3)),
            );
        }
    }
    transpose_scalar(src, src_step, dst, dst_step, 0..rows4, cols4..cols, mark);
    transpose_scalar(src, src_step, dst, dst_step, rows4..rows, 0..cols, mark);
}

/// Copy `n` words from `src` to `dst` with streaming (non-temporal)
/// stores, which write whole cache lines to memory without first reading
/// them into the cache. Meant for destinations far larger than the cache:
/// a 128 MiB scatter of 2 KiB runs alone, in a test program, took 4.9 ms
/// on one thread instead of 10.7 (in a zstd read, 4% of its time). The
/// stores are weakly ordered: call `stream_fence` before another thread
/// may read `dst`.
///
/// # Safety
/// Both runs must be in bounds and must not overlap; `dst` must be 8-byte
/// aligned.
// `%` rather than is_multiple_of (Rust 1.87) keeps older toolchains working.
#[allow(clippy::manual_is_multiple_of)]
pub unsafe fn stream_words(src: *const u64, dst: *mut u64, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let mut k = 0;
        // SSE2 streams 16 bytes at a time from a 16-byte aligned address.
        if n > 0 && (dst as usize) % 16 != 0 {
            dst.write(src.read_unaligned());
            k = 1;
        }
        while k + 2 <= n {
            let v = _mm_loadu_si128(src.add(k) as *const __m128i);
            _mm_stream_si128(dst.add(k) as *mut __m128i, v);
            k += 2;
        }
        if k < n {
            dst.add(k).write(src.add(k).read_unaligned());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(src, dst, n);
}

/// Ask for the first `PREFETCH_BYTES` of `len` bytes at `ptr` to be
/// brought into the cache ahead of their use. For the short runs (a
/// chunk's part of one column of R's array) that reads and writes walk
/// one after another, `PREFETCH_BYTES` apart or more: the hardware
/// prefetcher does not follow a jump to a new page and has to learn each
/// run anew, so without this a scan of a 128 MiB array in 2 KiB runs
/// waited on memory for a third of its time. A hint only: it reads
/// nothing, and an address out of bounds is never faulted.
#[inline(always)]
pub fn prefetch(ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let end = len.min(PREFETCH_BYTES);
        let mut o = 0;
        while o < end {
            // SAFETY: a prefetch has no effect that a program can observe
            // but timing, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr.wrapping_add(o) as *const i8) };
            o += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, len);
}

/// How much of a run `prefetch` asks for: past that the hardware
/// prefetcher has caught on to the run.
pub const PREFETCH_BYTES: usize = 4096;

/// Make the stores of `stream_words` visible to other threads in order.
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block shape up to 9 x 9, and around 16 x 16, inside larger strided buffers, against
    /// the definition; the words include NaN payloads that must survive.
    #[test]
    fn transposes_match_the_definition_bit_for_bit() {
        let special = [
            f64::NAN.to_bits(),
            0x7FF0_0000_0000_07A2,
            0x7FF4_0000_0000_0001,
        ];
        // 16 columns take the unrolled path of `transpose_avx`.
        let sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 18];
        for rows in sizes {
            for cols in sizes {
                let (src_step, dst_step) = (cols + 3, rows + 5);
                let src: Vec<u64> = (0..rows * src_step)
                    .map(|k| {
                        if k % 7 == 3 {
                            special[k % 3]
                        } else {
                            k as u64 * 0x0101
                        }
                    })
                    .collect();
                let run = |scalar: bool| {
                    let mut out = vec![u64::MAX; cols * dst_step];
                    let (sp, dp) = (src.as_ptr(), out.as_mut_ptr());
                    // SAFETY: both blocks lie inside their vectors.
                    unsafe {
                        if scalar {
                            transpose_scalar(
                                sp,
                                src_step,
                                dp,
                                dst_step,
                                0..rows,
                                0..cols,
                                Mark::Keep,
                            )
                        } else {
                            transpose_words(sp, src_step, dp, dst_step, rows, cols)
                        }
                    };
                    out
                };
                let (dst, plain) = (run(false), run(true));
                assert_eq!(dst, plain, "{rows}x{cols}: the word-by-word copy differs");
                for c in 0..cols {
                    for r in 0..rows {
                        assert_eq!(
                            dst[c * dst_step + r],
                            src[r * src_step + c],
                            "{rows}x{cols} at {r},{c}"
                        );
                    }
                    // words past the block's rows are left alone
                    for r in rows..dst_step {
                        assert_eq!(dst[c * dst_step + r], u64::MAX);
                    }
                }
            }
        }
    }

    /// A prefetch is a hint: of nothing, of memory that is not mapped, or of
    /// more than it fetches, it neither faults nor changes the memory.
    #[test]
    fn prefetch_never_faults() {
        prefetch(std::ptr::null(), 1 << 20);
        prefetch((usize::MAX - 100) as *const u8, 4096);
        let words = vec![7u64; 600];
        prefetch(words.as_ptr() as *const u8, words.len() * 8);
        prefetch(words.as_ptr().wrapping_add(600) as *const u8, 64);
        assert!(words.iter().all(|&w| w == 7));
    }

    /// Runs of every length up to 40 words at every word offset of a
    /// 16-byte line, NaN payloads included, into a buffer whose other
    /// words must stay as they were.
    #[test]
    fn streamed_runs_match_a_plain_copy() {
        let src: Vec<u64> = (0..48u64)
            .map(|k| {
                if k % 5 == 2 {
                    0x7FF0_0000_0000_07A2
                } else {
                    k * 0x0101
                }
            })
            .collect();
        for off in 0..2 {
            for n in 0..=40 {
                let mut out = vec![u64::MAX; 48];
                // SAFETY: both runs lie inside their vectors.
                unsafe { stream_words(src.as_ptr().add(1), out.as_mut_ptr().add(off), n) };
                stream_fence();
                for (i, &w) in out.iter().enumerate() {
                    let want = if i >= off && i < off + n {
                        src[1 + i - off]
                    } else {
                        u64::MAX
                    };
                    assert_eq!(w, want, "offset {off}, {n} words, word {i}");
                }
            }
        }
    }
}
