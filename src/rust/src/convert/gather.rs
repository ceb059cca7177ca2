//! Gathers: R vectors -> stored chunk elements, NA becoming the fill value.

use super::materialize::Materialize;
use super::na::{is_na_real, NA_INTEGER, NA_INTEGER64};
use super::RBufPtr;
use crate::dtype::{DataType, RType};
use crate::fill::f64_to_f16;
use crate::layout::{copy_elements, strided_copy, Span};

impl Materialize<'_> {
    /// R buffer -> chunk elements (native endian), CF-encoded where `cf`
    /// is set. Values must have passed `check_writable` (`Cf::check_writable`)
    /// first, so every conversion here is exact or NA.
    ///
    /// # Safety
    /// As `strided_copy`: `src` is an R buffer covering every element `spans`
    /// reaches, `dst` a chunk buffer of `dtype` elements with `dst_strides`.
    pub unsafe fn write_from(
        &self,
        src: &RBufPtr,
        dst: *mut u8,
        dst_strides: &[usize],
        spans: &[Vec<Span>],
    ) {
        let Materialize { dtype, fill, .. } = *self;
        let ss = &src.strides;
        if let DataType::Record(n) = dtype {
            // Whole records, as the struct conversion packed them (no CF
            // encoding applies to them).
            return copy_elements(n as usize, src.ptr, ss, dst, dst_strides, spans);
        }
        if let Some(cf) = self.cf {
            return cf.write_from(dtype, src, dst, dst_strides, spans);
        }
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
                    RType::Complex | RType::Character | RType::Raw => {
                        unreachable!(
                            "complex data for an integer array is refused by check_writable"
                        )
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
                    RType::Complex | RType::Character | RType::Raw => {
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
                    RType::Character | RType::Raw => {
                        unreachable!("character and raw data take their own paths")
                    }
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
            DataType::Record(_) => unreachable!("records are copied above"),
        }
    }
}
