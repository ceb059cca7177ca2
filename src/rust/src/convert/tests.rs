use super::na::scan_for_write_plain;
use super::*;
use crate::layout::{map_in_place, map_run};

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
        NaRule::Fill,
        &mut RBufMut::Integer(&mut out),
        "x",
    )
    .unwrap();
    assert_eq!(out, vec![5, NA_INTEGER, -3]);
    let e = decode_elements(
        &bytes[..5],
        DataType::Int16,
        &fill,
        NaRule::Fill,
        &mut RBufMut::Integer(&mut out),
        "x",
    )
    .unwrap_err();
    assert_eq!(e.kind(), "corrupt_chunk");
    // Without a missing-value marker the fill value reads as itself.
    decode_elements(
        &bytes,
        DataType::Int16,
        &fill,
        NaRule::Never,
        &mut RBufMut::Integer(&mut out),
        "x",
    )
    .unwrap();
    assert_eq!(out, vec![5, -1, -3]);
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
    let (got, back) = copy_there_and_back(&src, &ss, &ds, want.len(), &spans, |v| v + 1, |v| v * 2);
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
            Materialize {
                dtype: DataType::Float64,
                fill: &f64::NAN.to_ne_bytes(),
                na: NaRule::Fill,
                cf: None,
            }
            .read_into(src.as_ptr(), &[1, 5, 35], &p, &spans, &lossy)
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
        Materialize {
            dtype: DataType::Float64,
            fill: &0f64.to_ne_bytes(),
            na: NaRule::Fill,
            cf: None,
        }
        .read_into(src.as_ptr(), &[1], &p, &spans, &lossy)
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
        Materialize {
            dtype: DataType::UInt64,
            fill: &0u64.to_ne_bytes(),
            na: NaRule::Fill,
            cf: None,
        }
        .read_into(
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
        Materialize {
            dtype: DataType::Int16,
            fill: &(-9i16).to_ne_bytes(),
            na: NaRule::Fill,
            cf: None,
        }
        .write_from(&src, dst.as_mut_ptr(), &[1], &to_spans(&[vec![(0, 0, 3)]]))
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

#[test]
fn widening_reads_mark_na_by_the_fill_rule() {
    // float32 -> double and int16 -> integer, each with its fill value
    // read as NA, a NaN fill (every NaN is NA), and no NA rule at all.
    let read = |dtype: DataType, src: &[u8], fill: &[u8], na: NaRule, out: &mut RBufMut| {
        let n = out.len();
        let p = RBufPtr::from_mut(out, &[n]);
        let m = Materialize {
            dtype,
            fill,
            na,
            cf: None,
        };
        // SAFETY: one run of n elements inside both buffers.
        unsafe {
            m.read_into(
                src.as_ptr(),
                &[1],
                &p,
                &to_spans(&[vec![(0, 0, n)]]),
                &Lossy::default(),
            )
        };
    };
    let f32s: Vec<u8> = [1.5f32, -2.0, f32::NAN, 7.25, 1e20]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let mut out = vec![0f64; 5];
    read(
        DataType::Float32,
        &f32s,
        &f32::NAN.to_ne_bytes(),
        NaRule::Fill,
        &mut RBufMut::Double(&mut out),
    );
    assert_eq!(
        (out[0], out[1], out[3], out[4]),
        (1.5, -2.0, 7.25, 1e20f32 as f64)
    );
    assert!(is_na_real(out[2]));
    read(
        DataType::Float32,
        &f32s,
        &1e20f32.to_ne_bytes(),
        NaRule::Fill,
        &mut RBufMut::Double(&mut out),
    );
    assert!(is_na_real(out[4]) && out[2].is_nan() && !is_na_real(out[2]));
    assert_eq!(out[3], 7.25);
    read(
        DataType::Float32,
        &f32s,
        &1e20f32.to_ne_bytes(),
        NaRule::Never,
        &mut RBufMut::Double(&mut out),
    );
    assert_eq!(out[4], 1e20f32 as f64);
    assert!(!is_na_real(out[2]));

    let i16s: Vec<u8> = [3i16, -32768, 0, 32767]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let mut ints = vec![0i32; 4];
    read(
        DataType::Int16,
        &i16s,
        &0i16.to_ne_bytes(),
        NaRule::Fill,
        &mut RBufMut::Integer(&mut ints),
    );
    assert_eq!(ints, [3, -32768, NA_INTEGER, 32767]);
    read(
        DataType::Int16,
        &i16s,
        &0i16.to_ne_bytes(),
        NaRule::Never,
        &mut RBufMut::Integer(&mut ints),
    );
    assert_eq!(ints, [3, -32768, 0, 32767]);

    let u32s: Vec<u8> = [u32::MAX, 9].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut dbl = vec![0f64; 2];
    read(
        DataType::UInt32,
        &u32s,
        &9u32.to_ne_bytes(),
        NaRule::Fill,
        &mut RBufMut::Double(&mut dbl),
    );
    assert_eq!(dbl[0], u32::MAX as f64);
    assert!(is_na_real(dbl[1]));
}
