use super::*;
use crate::convert::{na_real, ElementWrite, RBuf, RBufPtr, Span, NA_INTEGER64};
use crate::error::ZarrError;
use crate::metadata::{v3, NodeMetadata};
use serde_json::json;

/// The CF decoding of an array named "v".
fn of(a: &ArrayMetadata) -> Result<Option<Cf>> {
    Cf::of(a, "v")
}

fn array(data_type: &str, fill: Value, attrs: Value, dims: bool) -> ArrayMetadata {
    let mut doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": attrs
    });
    if dims {
        doc["dimension_names"] = json!(["x"]);
    }
    match v3::parse(doc.to_string().as_bytes()).unwrap() {
        NodeMetadata::Array(a) => a,
        _ => unreachable!(),
    }
}

#[test]
fn arrays_without_cf_attributes_or_dimension_names_keep_the_zarr_rule() {
    let a = array("int32", json!(0), json!({"units": "m", "note": 1}), false);
    assert_eq!(of(&a).unwrap(), None);
}

#[test]
fn default_dimension_names_alone_keep_the_zarr_rule() {
    let mut a = array("int32", json!(0), json!({}), false);
    a.dimension_names = Some(vec![Some("v_dim_0".into())]);
    assert_eq!(of(&a).unwrap(), None);
    assert_eq!(Cf::of(&a, "g/v").unwrap(), None);
    // another array's defaults, or the root's, are names of their own
    assert!(Cf::of(&a, "w").unwrap().is_some());
    a.dimension_names = Some(vec![Some("dim_0".into())]);
    assert_eq!(Cf::of(&a, "").unwrap(), None);
    // the root of a store opened at the array's URL: its name is lost
    a.dimension_names = Some(vec![Some("x_dim_0".into())]);
    assert_eq!(Cf::of(&a, "").unwrap(), None);
    a.dimension_names = Some(vec![Some("x_dim_1".into())]);
    assert!(Cf::of(&a, "").unwrap().is_some());
    assert!(of(&a).unwrap().is_some());
}

#[test]
fn a_zero_fill_value_of_v3_marks_nothing_in_a_cf_variable() {
    // xarray's int coordinate (depth, lon, count): no attributes, fill 0.
    let a = array("int32", json!(0), json!({}), true);
    let cf = of(&a).unwrap().unwrap();
    assert!(cf.missing.is_empty() && !cf.transforms);
    assert!(!cf.is_missing(0.0));
}

#[test]
fn fill_value_attributes_in_xarray_forms_mark_missing_values() {
    // float32 1e20 as xarray writes it into v3 attributes: base64.
    let a = array(
        "float32",
        json!("NaN"),
        json!({"_FillValue": "AAAAgB2vFUQ="}),
        true,
    );
    let cf = of(&a).unwrap().unwrap();
    assert_eq!(cf.missing, vec![1e20f32 as f64]);
    assert!(
        cf.decode(1e20f32 as f64).is_nan() && crate::convert::is_na_real(cf.decode(1e20f32 as f64))
    );
    assert_eq!(cf.decode(0.0), 0.0);
    let a = array(
        "float64",
        json!(0),
        json!({"_FillValue": "NaN", "missing_value": [-999, -998]}),
        false,
    );
    let cf = of(&a).unwrap().unwrap();
    assert!(cf.is_missing(f64::NAN) && cf.is_missing(-998.0) && !cf.is_missing(0.0));
    let a = array("int16", json!(0), json!({"_FillValue": "%%"}), false);
    let e = of(&a).unwrap_err();
    assert!(e.to_string().contains("_FillValue"), "{e}");
}

#[test]
fn packed_values_unpack_and_a_value_equal_to_add_offset_is_not_missing() {
    let attrs = json!({"scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767});
    let cf = of(&array("int16", json!(0), attrs, true)).unwrap().unwrap();
    assert!(cf.transforms);
    assert_eq!(cf.decode(0.0), 273.15);
    assert_eq!(cf.decode(685.0), 685.0 * 0.01 + 273.15);
    assert!(crate::convert::is_na_real(cf.decode(-32767.0)));
}

#[test]
fn times_since_a_date_become_seconds_since_1970() {
    let attrs =
        json!({"units": "hours since 1990-01-01 00:00:00", "calendar": "proleptic_gregorian"});
    let cf = of(&array("int64", json!(0), attrs, true)).unwrap().unwrap();
    assert_eq!(cf.kind, CfKind::Time);
    assert!(cf.nat);
    assert_eq!(cf.decode(0.0), 631152000.0);
    assert_eq!(cf.decode(6.0), 631152000.0 + 6.0 * 3600.0);
    for (text, secs) in [
        ("days since 1970-01-01", 0.0),
        ("days since 1970-1-2", 86400.0),
        ("seconds since 2000-01-01T12:00:00Z", 946728000.0),
        ("minutes since 1970-01-01 01:00:00+01:00", 0.0),
        ("days since 1969-12-31 00:00:00.5", -86399.5),
        ("days since 0001-01-01", -62135596800.0),
    ] {
        assert_eq!(parse_time_units(text).map(|t| t.2), Some(secs), "{text}");
    }
    assert_eq!(parse_time_units("meters"), None);
    assert_eq!(parse_time_units("fortnights since 1970-01-01"), None);
}

#[test]
fn other_calendars_stay_numbers_with_a_note() {
    let attrs = json!({"units": "days since 2000-01-01", "calendar": "noleap"});
    let cf = of(&array("int32", json!(0), attrs, true)).unwrap().unwrap();
    assert_eq!(cf.kind, CfKind::Number);
    assert!(cf.note.as_deref().unwrap().contains("noleap"));
    assert_eq!(cf.decode(3.0), 3.0);
}

#[test]
fn a_v3_fill_value_other_than_zero_marks_na_without_cf_missing_values() {
    let cf = of(&array("int16", json!(-32768), json!({}), true))
        .unwrap()
        .unwrap();
    assert_eq!(cf.missing, vec![-32768.0]);
    let attrs = json!({"_FillValue": -1});
    let cf = of(&array("int16", json!(-32768), attrs, true))
        .unwrap()
        .unwrap();
    assert_eq!(cf.missing, vec![-1.0]);
}

#[test]
fn strings_keep_a_fill_value_of_their_own_as_na() {
    let a = array("string", json!("\u{2400}"), json!({}), true);
    assert_eq!(of(&a).unwrap(), None);
    let a = array("string", json!(""), json!({}), true);
    assert!(!of(&a).unwrap().unwrap().active());
}

#[test]
fn string_missing_values_mark_na_as_xarray_masks_them() {
    let text = |a: &ArrayMetadata| of(a).unwrap().map(|c| c.missing_text);
    // v3: the attributes, not the fill value (xarray masks no v3 fill)
    let a = array("string", json!(""), json!({"missing_value": "N/A"}), true);
    assert_eq!(text(&a), Some(vec!["N/A".to_string()]));
    assert!(of(&a).unwrap().unwrap().active());
    let a = array("string", json!("zz"), json!({"missing_value": "N/A"}), true);
    assert_eq!(text(&a), Some(vec!["N/A".to_string()]));
    let a = array(
        "string",
        json!(""),
        json!({"_FillValue": "-", "missing_value": ["N/A", "-", 0]}),
        false,
    );
    assert_eq!(text(&a), Some(vec!["-".to_string(), "N/A".to_string()]));
    // v2: the fill value is xarray's _FillValue, "" too; the attribute
    // of that name counts only where the fill value is null
    let mut a = array("string", json!(""), json!({"_FillValue": "x"}), true);
    a.zarr_format = 2;
    assert_eq!(text(&a), Some(vec![String::new()]));
    a.fill_marks_na = false;
    assert_eq!(text(&a), Some(vec!["x".to_string()]));
    // this package's arrays: the marker is the fill value, the Zarr rule
    let a = array(
        "string",
        json!("\u{2400}"),
        json!({"missing_value": "\u{2400}"}),
        true,
    );
    let cf = of(&a).unwrap().unwrap();
    assert!(cf.is_zarr_rule(&a));
    assert_eq!(cf.missing_text, vec!["\u{2400}".to_string()]);
    let a = array("string", json!(""), json!({"missing_value": "N/A"}), true);
    assert!(!of(&a).unwrap().unwrap().is_zarr_rule(&a));
}

#[test]
fn xarray_timedeltas_and_booleans() {
    let attrs = json!({"units": "hours", "dtype": "timedelta64[ns]"});
    let cf = of(&array("int64", json!(0), attrs, true)).unwrap().unwrap();
    assert_eq!((cf.kind, cf.decode(2.0)), (CfKind::Timedelta, 7200.0));
    let cf = of(&array("int8", json!(0), json!({"dtype": "bool"}), true))
        .unwrap()
        .unwrap();
    assert_eq!(cf.kind, CfKind::Bool);
}

#[test]
fn false_true_flags_read_as_logical_and_int8_missing_values_stay_signed() {
    let attrs = json!({"flag_values": [0, 1], "flag_meanings": "false true", "_FillValue": -128});
    let cf = of(&array("int8", json!(-128), attrs, true))
        .unwrap()
        .unwrap();
    assert_eq!((cf.kind, cf.missing.clone()), (CfKind::Bool, vec![-128.0]));
    let other = json!({"flag_values": [0, 1], "flag_meanings": "low high"});
    let cf = of(&array("int8", json!(-128), other, true))
        .unwrap()
        .unwrap();
    assert_eq!(cf.kind, CfKind::Number);
}

#[test]
fn a_fill_value_attribute_equal_to_the_zarr_fill_is_the_zarr_rule() {
    // as as_zarr() writes them: the engine then takes its plain paths
    let a = array(
        "int32",
        json!(-2147483648i64),
        json!({"_FillValue": -2147483648i64}),
        true,
    );
    assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
    let a = array(
        "float64",
        json!("NaN"),
        json!({"_FillValue": "AAAAAAAA+H8="}),
        true,
    );
    assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
    let a = array(
        "int64",
        json!(-9223372036854775808i64),
        json!({"_FillValue": "-9223372036854775808"}),
        true,
    );
    assert!(of(&a).unwrap().unwrap().is_zarr_rule(&a));
    let a = array(
        "int32",
        json!(-2147483648i64),
        json!({"_FillValue": -1}),
        true,
    );
    assert!(!of(&a).unwrap().unwrap().is_zarr_rule(&a));
    let a = array(
        "int16",
        json!(-1),
        json!({"_FillValue": -1, "scale_factor": 2}),
        true,
    );
    assert!(!of(&a).unwrap().unwrap().is_zarr_rule(&a));
}

#[test]
fn numpy_datetime64_arrays_are_times() {
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [2],
        "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "NaT",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
    });
    let NodeMetadata::Array(a) = v3::parse(doc.to_string().as_bytes()).unwrap() else {
        unreachable!()
    };
    let cf = of(&a).unwrap().unwrap();
    assert_eq!((cf.kind, cf.nat), (CfKind::Time, true));
    assert_eq!(cf.decode(100.0), 1.0);
}

// Encoding of writes (encode.rs).

fn cf(missing: Vec<f64>, scale: f64, offset: f64) -> Cf {
    Cf {
        kind: CfKind::Number,
        missing,
        missing_text: Vec::new(),
        nat: false,
        scale,
        offset,
        transforms: scale != 1.0 || offset != 0.0,
        units: None,
        time_unit: None,
        note: None,
    }
}

/// R doubles -> stored elements of `T` through `cf`, checked first.
fn encode<T: Copy + Default>(cf: &Cf, dtype: DataType, x: &[f64]) -> Result<Vec<T>> {
    let data = RBuf::Double(x);
    cf.check_writable(&data, dtype, "array '/v'")?;
    let mut out = vec![T::default(); x.len()];
    let src = RBufPtr::from_ref(&data, &[x.len()]);
    let spans = [vec![Span {
        src: 0,
        dst: 0,
        len: x.len(),
    }]];
    // SAFETY: one run of x.len() elements in both buffers.
    unsafe { cf.write_from(dtype, &src, out.as_mut_ptr() as *mut u8, &[1], &spans) };
    Ok(out)
}

#[test]
fn packed_writes_round_half_to_even_and_na_becomes_the_fill_value() {
    let c = cf(vec![-32767.0], 0.01, 273.15);
    let out: Vec<i16> = encode(&c, DataType::Int16, &[273.15, 280.0, na_real(), f64::NAN]).unwrap();
    assert_eq!(out, vec![0, 685, -32767, -32767]);
    let half = cf(vec![-1.0], 2.0, 0.0);
    let out: Vec<i8> = encode(&half, DataType::Int8, &[1.0, 3.0, 5.0, -1.0]).unwrap();
    assert_eq!(out, vec![0, 2, 2, -0]);
}

#[test]
fn values_the_encoding_cannot_hold_are_refused() {
    let c = cf(vec![-32767.0], 0.01, 273.15);
    let e = encode::<i16>(&c, DataType::Int16, &[1e6]).unwrap_err();
    assert!(
        matches!(e, ZarrError::Type(_)) && e.to_string().contains("int16"),
        "{e}"
    );
    let none = cf(vec![], 1.0, 0.0);
    let e = encode::<i32>(&none, DataType::Int32, &[1.0, na_real()]).unwrap_err();
    assert!(e.to_string().contains("no _FillValue"), "{e}");
    // a NaN missing value is no marker for integers
    let nan = cf(vec![f64::NAN], 0.5, 0.0);
    assert!(encode::<i16>(&nan, DataType::Int16, &[na_real()]).is_err());
    let e = encode::<i32>(&none, DataType::Int32, &[1.5]).unwrap_err();
    assert!(e.to_string().contains("1.5"), "{e}");
}

#[test]
fn unpacked_writes_replace_na_and_nan_and_keep_values_exact() {
    let c = cf(vec![1e20], 1.0, 0.0);
    let out: Vec<f32> = encode(&c, DataType::Float32, &[1.5, na_real(), f64::NAN]).unwrap();
    assert_eq!(out, vec![1.5, 1e20, 1e20]);
    let big = cf(vec![-1.0], 1.0, 0.0);
    let data = [i64::MAX - 1, NA_INTEGER64];
    let buf = RBuf::Integer64(&data);
    big.check_writable(&buf, DataType::Int64, "v").unwrap();
    let mut out = [0i64; 2];
    let src = RBufPtr::from_ref(&buf, &[2]);
    let spans = [vec![Span {
        src: 0,
        dst: 0,
        len: 2,
    }]];
    // SAFETY: two elements in both buffers.
    unsafe {
        big.write_from(
            DataType::Int64,
            &src,
            out.as_mut_ptr() as *mut u8,
            &[1],
            &spans,
        )
    };
    assert_eq!(out, [i64::MAX - 1, -1]);
}

#[test]
fn times_without_a_missing_value_write_nat() {
    let mut t = cf(vec![], 3600.0, 631152000.0);
    t.kind = CfKind::Time;
    t.nat = true;
    let out: Vec<i64> = encode(&t, DataType::Int64, &[631152000.0 + 7200.0, na_real()]).unwrap();
    assert_eq!(out, vec![2, i64::MIN]);
}

#[test]
fn struct_time_fields_decode_as_arrays_of_their_type() {
    let (t, _) = TimeType::from_typestr("<M8[ns]").unwrap().unwrap();
    // zarr-python's default fill, 0, is 1970-01-01 and no NA; NaT is
    let zero = Cf::time_field(&t, Some(0));
    assert_eq!(
        (zero.kind, zero.nat, zero.scale),
        (CfKind::Time, true, 1e-9)
    );
    assert_eq!(zero.decode(1.5e9), 1.5);
    assert!(zero.decode(0.0) == 0.0 && zero.decode(i64::MIN as f64).is_nan());
    let out: Vec<i64> = encode(&zero, DataType::Int64, &[2.0, na_real()]).unwrap();
    assert_eq!(out, vec![2_000_000_000, i64::MIN]);
    // a fill value of its own marks NA, and NA is written as it
    let (d, _) = TimeType::from_typestr(">m8[10s]").unwrap().unwrap();
    let own = Cf::time_field(&d, Some(7));
    assert_eq!(own.kind, CfKind::Timedelta);
    assert!(own.decode(7.0).is_nan() && own.decode(8.0) == 80.0);
    let out: Vec<i64> = encode(&own, DataType::Int64, &[na_real(), 30.0]).unwrap();
    assert_eq!(out, vec![7, 3]);
    // years have no length in seconds: counts, with a note
    let (y, _) = TimeType::from_typestr("<M8[Y]").unwrap().unwrap();
    let years = Cf::time_field(&y, None);
    assert!(!years.transforms && years.note.is_some());
    assert_eq!(years.r_type(DataType::Int64, true), RType::Integer64);
}

#[test]
fn the_range_check_refuses_exactly_the_values_whose_packed_form_is_not_held() {
    // Values around each edge of the stored type, for scales of both signs,
    // an offset much larger than the scale, and 64-bit types: each write is
    // accepted exactly when the value packs (rounded) into the type.
    let cases = [
        (DataType::Int16, 0.01, 273.15),
        (DataType::Int16, -0.5, 3.0),
        (DataType::UInt8, 2.0, -100.0),
        (DataType::Int8, 1e-3, 1e6),
        (DataType::Int64, 1.0, 0.0),
        (DataType::UInt64, 0.5, 1.0),
        (DataType::Float32, 1e30, 0.0),
        (DataType::Float16, 0.01, 0.0),
    ];
    for (dtype, scale, offset) in cases {
        let c = cf(vec![0.0], scale, offset);
        let (lo, hi) = super::encode::tests_held_bounds(dtype);
        let mut xs = Vec::new();
        for edge in [lo, hi] {
            for k in -3..=3 {
                let y = edge
                    + k as f64 * 0.25 * edge.abs().max(1.0) * f64::EPSILON * 4.0
                    + k as f64 * 0.5;
                xs.push(y * scale + offset);
            }
        }
        xs.extend((0..=200).map(|i| (lo + (hi - lo) * i as f64 / 200.0) * scale + offset));
        xs.extend([offset, f64::INFINITY, f64::NEG_INFINITY, 0.0, -1e300, 1e300]);
        for x in xs {
            // the check before the range: every value packed
            let held = c.tests_exact(dtype, x);
            let ok = c.check_writable(&RBuf::Double(&[x]), dtype, "v").is_ok();
            assert_eq!(
                ok,
                held,
                "{} scale {scale} offset {offset}: {x}",
                dtype.name()
            );
        }
    }
}

/// The attributes `missing_attributes` gives the new array "v" of `a`.
fn for_xarray(a: &ArrayMetadata) -> Value {
    Value::Object(missing_attributes(a, "v").unwrap())
}

#[test]
fn new_v3_arrays_get_the_marker_xarray_masks_with_where_r_reads_the_fill_as_na() {
    // the Zarr rule (no CF attributes): the fill is NA, in xarray's forms
    let a = array("int64", json!(-9223372036854775808i64), json!({}), false);
    assert_eq!(
        for_xarray(&a),
        json!({"_FillValue": -9223372036854775808i64})
    );
    let a = array("uint64", json!(18446744073709551615u64), json!({}), false);
    assert_eq!(
        for_xarray(&a),
        json!({"_FillValue": 18446744073709551615u64})
    );
    let a = array("float32", json!(-9999.0), json!({}), false);
    assert_eq!(for_xarray(&a), json!({"_FillValue": "AAAAAICHw8A="}));
    // a NaN fill needs none: xarray shows NaN as NaN
    let a = array("float32", json!("NaN"), json!({}), false);
    assert_eq!(for_xarray(&a), json!({}));
    // a v3 string fill value other than the marker is text, in R too
    let a = array("string", json!("missing"), json!({}), true);
    assert_eq!(for_xarray(&a), json!({}));
    let a = array("int16", json!(0), json!({}), false);
    assert_eq!(for_xarray(&a), json!({"_FillValue": 0}));
    // strings: missing_value, as xarray refuses a text _FillValue in v3
    let a = array("string", json!("\u{2400}"), json!({}), true);
    assert_eq!(for_xarray(&a), json!({"missing_value": "\u{2400}"}));
}

#[test]
fn no_marker_where_r_reads_the_fill_as_a_value_or_the_caller_chose_one() {
    // a CF variable whose fill is 0 (zarr-python's default): 0 is a number
    let a = array("int32", json!(0), json!({}), true);
    assert_eq!(for_xarray(&a), json!({}));
    let a = array(
        "float64",
        json!(0.0),
        json!({"units": "hours since 1990-01-01"}),
        false,
    );
    assert_eq!(for_xarray(&a), json!({}));
    let a = array("int16", json!(-1), json!({"missing_value": -9}), true);
    assert_eq!(for_xarray(&a), json!({}));
    let a = array(
        "string",
        json!("\u{2400}"),
        json!({"_FillValue": "x"}),
        true,
    );
    assert_eq!(for_xarray(&a), json!({}));
    // "" is text; bool and complex have no CF mask
    for (dtype, fill) in [
        ("string", json!("")),
        ("bool", json!(false)),
        ("complex64", json!([1, 0])),
    ] {
        assert_eq!(
            for_xarray(&array(dtype, fill, json!({}), false)),
            json!({}),
            "{dtype}"
        );
    }
    // Zarr v2: xarray masks the fill value itself
    let mut a = array("int32", json!(-1), json!({}), false);
    a.zarr_format = 2;
    assert_eq!(for_xarray(&a), json!({}));
}
