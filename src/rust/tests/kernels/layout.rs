//! The copy kernel against a plain element-by-element definition: every
//! element width, one to four dimensions, odd shapes, edge chunks (runs
//! shorter than the chunk), several runs per dimension, C-order and
//! column-major chunks into column-major results and back; and the
//! float64 marks of a transposing copy against the closures they stand
//! for, bit for bit.

use zarr::layout::{copy_elements, strided_copy_marked, Span};
use zarr::words::Mark;

/// A small deterministic generator (no dependency for tests).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Column-major strides of `shape` (R's layout), in elements.
fn f_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in 1..shape.len() {
        s[d] = s[d - 1] * shape[d - 1];
    }
    s
}

/// Row-major strides of `shape` (a C-order chunk), in elements.
fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// One copy's setting: a chunk of `chunk` elements, an output of `out`,
/// and per dimension the runs, disjoint on both sides.
struct Case {
    chunk: Vec<usize>,
    out: Vec<usize>,
    spans: Vec<Vec<Span>>,
}

/// A chunk of 1 to 40 elements a side (17 and more cross the tiles of
/// 16), a selection of one to three runs of it per dimension (an edge
/// chunk's runs stop short of its end), placed in a larger output.
fn random_case(rng: &mut Lcg, nd: usize) -> Case {
    let mut chunk = Vec::new();
    let mut out = Vec::new();
    let mut spans = Vec::new();
    for _ in 0..nd {
        let n = 1 + rng.below(if nd > 2 { 20 } else { 40 });
        let mut runs = Vec::new();
        let (mut a, mut b) = (rng.below(n.min(3)), rng.below(3));
        for _ in 0..1 + rng.below(3) {
            if a >= n {
                break;
            }
            let len = 1 + rng.below(n - a);
            runs.push(Span {
                src: a,
                dst: b,
                len,
            });
            a += len + rng.below(3);
            b += len + rng.below(2);
        }
        chunk.push(n);
        out.push(b + rng.below(3));
        spans.push(runs);
    }
    Case { chunk, out, spans }
}

/// `dst` after copying `src` over `spans` one element at a time with `f`.
fn by_definition<S: Copy, D: Copy>(
    src: &[S],
    ss: &[usize],
    dst: &mut [D],
    ds: &[usize],
    spans: &[Vec<Span>],
    f: impl Fn(S) -> D,
) {
    // Every combination of one element of a run in each dimension.
    let mut pairs: Vec<(usize, usize)> = vec![(0, 0)];
    for (d, runs) in spans.iter().enumerate() {
        let mut next = Vec::new();
        for &(so, d_o) in &pairs {
            for r in runs {
                for k in 0..r.len {
                    next.push((so + (r.src + k) * ss[d], d_o + (r.dst + k) * ds[d]));
                }
            }
        }
        pairs = next;
    }
    for (so, d_o) in pairs {
        dst[d_o] = f(src[so]);
    }
}

/// Elements of `size` bytes, each byte telling its element and position.
fn elements(n: usize, size: usize, salt: u8) -> Vec<u8> {
    (0..n * size)
        .map(|i| ((i / size) as u8).wrapping_mul(31) ^ (i % size) as u8 ^ salt)
        .collect()
}

#[test]
fn copies_match_the_definition_for_every_width_and_rank() {
    let mut rng = Lcg(42);
    for nd in 1..=4 {
        for case in 0..40 {
            let Case { chunk, out, spans } = random_case(&mut rng, nd);
            let c_order = case % 2 == 0;
            let ss = if c_order {
                c_strides(&chunk)
            } else {
                f_strides(&chunk)
            };
            let ds = f_strides(&out);
            let (n_src, n_dst) = (chunk.iter().product(), out.iter().product::<usize>());
            for size in [1usize, 2, 4, 8, 16] {
                let src = elements(n_src, size, 0x5A);
                // Untouched output bytes must stay 0xEE.
                let mut got = vec![0xEEu8; n_dst * size];
                // SAFETY: the runs lie inside both buffers (random_case).
                unsafe {
                    copy_elements(size, src.as_ptr(), &ss, got.as_mut_ptr(), &ds, &spans);
                }
                let (src_e, mut want): (Vec<&[u8]>, Vec<&[u8]>) = (
                    src.chunks(size).collect(),
                    vec![&[0xEEu8; 16][..size]; n_dst],
                );
                by_definition(&src_e, &ss, &mut want, &ds, &spans, |v| v);
                assert_eq!(
                    got,
                    want.concat(),
                    "{size}-byte elements, chunk {chunk:?} ({}), output {out:?}, runs {spans:?}",
                    if c_order { "C" } else { "F" }
                );
                // And back: the result's elements into a chunk-shaped buffer
                // (the gather of a write), over the same runs reversed.
                let back_spans: Vec<Vec<Span>> = spans
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|s| Span {
                                src: s.dst,
                                dst: s.src,
                                len: s.len,
                            })
                            .collect()
                    })
                    .collect();
                let mut back = vec![0xEEu8; n_src * size];
                // SAFETY: as above, the sides swapped.
                unsafe {
                    copy_elements(size, got.as_ptr(), &ds, back.as_mut_ptr(), &ss, &back_spans);
                }
                let mut want_back = vec![&[0xEEu8; 16][..size]; n_src];
                by_definition(
                    &src_e,
                    &ss,
                    &mut want_back,
                    &ss,
                    &spans_in_chunk(&spans),
                    |v| v,
                );
                assert_eq!(
                    back,
                    want_back.concat(),
                    "{size}-byte elements back, chunk {chunk:?}"
                );
            }
        }
    }
}

/// `spans` with each run's destination at its source: the chunk elements
/// a selection covers, in place.
fn spans_in_chunk(spans: &[Vec<Span>]) -> Vec<Vec<Span>> {
    spans
        .iter()
        .map(|r| r.iter().map(|s| Span { dst: s.src, ..*s }).collect())
        .collect()
}

#[test]
fn float64_marks_match_the_closures_they_stand_for() {
    // R's NA is a NaN with payload 1954; other NaNs, -0 and the fill
    // itself are among the values.
    let na = 0x7FF0_0000_0000_07A2u64;
    let specials = [
        f64::NAN.to_bits(),
        0x7FF4_0000_0000_0001,
        (-0.0f64).to_bits(),
        0.0f64.to_bits(),
        2.5f64.to_bits(),
        na,
    ];
    let mut rng = Lcg(7);
    for nd in 2..=4 {
        for case in 0..30 {
            let Case { chunk, out, spans } = random_case(&mut rng, nd);
            let ss = c_strides(&chunk);
            let ds = f_strides(&out);
            let (n_src, n_dst) = (chunk.iter().product(), out.iter().product::<usize>());
            let src: Vec<f64> = (0..n_src)
                .map(|i| {
                    if rng.below(4) == 0 {
                        f64::from_bits(specials[rng.below(specials.len())])
                    } else {
                        i as f64 * 0.5 + case as f64
                    }
                })
                .collect();
            for fill in [0.0f64, 2.5, f64::NAN] {
                let (mark, f): (Mark, Box<dyn Fn(f64) -> f64>) = if fill.is_nan() {
                    (
                        Mark::Nan { na },
                        Box::new(move |v: f64| if v.is_nan() { f64::from_bits(na) } else { v }),
                    )
                } else {
                    (
                        Mark::Fill { fill, na },
                        Box::new(move |v: f64| if v == fill { f64::from_bits(na) } else { v }),
                    )
                };
                for (mark, f) in [(mark, f), (Mark::Keep, Box::new(|v: f64| v) as Box<_>)] {
                    let mut got = vec![f64::from_bits(u64::MAX); n_dst];
                    let mut want = got.clone();
                    // SAFETY: the runs lie inside both buffers.
                    unsafe {
                        strided_copy_marked(
                            src.as_ptr(),
                            &ss,
                            got.as_mut_ptr(),
                            &ds,
                            &spans,
                            &|v: f64| f(v),
                            Some(mark),
                        );
                    }
                    by_definition(&src, &ss, &mut want, &ds, &spans, &f);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "{mark:?}, chunk {chunk:?}, output {out:?}, runs {spans:?}"
                    );
                }
            }
        }
    }
}
