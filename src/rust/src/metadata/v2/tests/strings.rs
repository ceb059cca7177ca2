//! Fixed-width string arrays of Zarr v2 (NumPy's `U` and `S` dtypes):
//! their documents, fill values and chunks as NumPy lays them out.

use super::*;

fn fixed(dtype: &str, fill: Value) -> Value {
    with(
        with(with(zarray(), "dtype", json!(dtype)), "fill_value", fill),
        "chunks",
        json!([10, 7]),
    )
}

#[test]
fn v2_fixed_width_strings_parse_and_write_back() {
    // zarr-python's defaults: fill "" and a compressor, in F order too.
    for order in ["C", "F"] {
        let doc = with(fixed("<U5", json!("")), "order", json!(order));
        let a = p(&doc).unwrap();
        assert_eq!(a.data_type, DataType::String);
        assert!(a.fill_marks_na && a.fill_value.bytes.is_empty());
        let codecs: Vec<&str> = a
            .codecs
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let want = if order == "F" {
            vec!["transpose", "numpy.fixed_string", "numcodecs.zlib"]
        } else {
            vec!["numpy.fixed_string", "numcodecs.zlib"]
        };
        assert_eq!(codecs, want);
        assert_eq!(
            a.codecs[codecs.len() - 2],
            json!({"name": "numpy.fixed_string", "configuration": {"dtype": "<U5"}})
        );
        assert_eq!(round_trips(&a), doc);
    }
    // Big-endian U with a non-ASCII fill, written back as text.
    let doc = fixed(">U3", json!("h\u{e9}"));
    let a = p(&doc).unwrap();
    assert_eq!(a.fill_value.bytes, "h\u{e9}".as_bytes());
    assert_eq!(round_trips(&a), doc);
    // S fill values are base64, as numcodecs writes them.
    let doc = fixed("|S5", json!("YWI="));
    let a = p(&doc).unwrap();
    assert_eq!(a.fill_value.bytes, b"ab");
    assert_eq!(round_trips(&a), doc);
    assert_eq!(
        round_trips(&p(&fixed("|S5", json!(""))).unwrap()),
        fixed("|S5", json!(""))
    );
    // A null fill: no missing-value marker, and null again when written.
    let a = p(&fixed("<U5", Value::Null)).unwrap();
    assert!(!a.fill_marks_na);
    assert_eq!(round_trips(&a)["fill_value"], Value::Null);
    for (doc, what) in [
        (fixed("|S5", json!("not base64!")), "base64"),
        (fixed("|S5", json!("/w==")), "UTF-8"),
        (fixed("<U5", json!(0)), "a string or null"),
        (fixed("<U2", json!("abc")), "3 characters"),
        (fixed("|S2", json!("w6nDqQ==")), "4 UTF-8 bytes"),
    ] {
        assert_eq!(fails(&doc, what), "metadata", "{doc}");
    }
}

/// Chunks as NumPy lays them out (`tobytes` of the arrays, checked with
/// NumPy 2.4) decode through the chain v2 metadata maps to, and encode
/// back to the same bytes.
#[test]
fn v2_fixed_width_string_chunks_match_numpy() {
    let w = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: false,
        warnings: &w,
        what: "t",
    };
    let hex = |h: &str| -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    };
    // np.array([["ab", "\u{e9}"], ["", "xyz"]], dtype=">U3"), order "F".
    let doc = with(
        with(
            with(
                with(fixed(">U3", json!("")), "shape", json!([2, 2])),
                "chunks",
                json!([2, 2]),
            ),
            "order",
            json!("F"),
        ),
        "compressor",
        Value::Null,
    );
    let raw = hex("000000610000006200000000000000000000000000000000000000e9000000000000000000000078000000790000007a");
    let a = p(&doc).unwrap();
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
    let strings = chain.decode_strings(raw.clone(), &[2, 2], &ctx).unwrap();
    // Laid out with the chain's strides: [i, j] at i + 2 j.
    assert_eq!(chain.stored_strides(&[2, 2]), vec![1, 2]);
    assert_eq!(strings, ["ab", "", "\u{e9}", "xyz"]);
    assert_eq!(chain.encode_strings(&strings, &[2, 2]).unwrap(), raw);
    // The same as |S4 in C order (UTF-8 bytes), zlib-compressed.
    let doc = with(
        with(fixed("|S4", json!("")), "shape", json!([2, 2])),
        "chunks",
        json!([2, 2]),
    );
    let raw = hex("61620000c3a900000000000078797a77");
    let a = p(&doc).unwrap();
    let chain = CodecChain::from_json(&a.codecs, a.data_type, &a.fill_value.bytes, 2).unwrap();
    let enc = chain
        .encode_strings(&["ab", "\u{e9}", "", "xyzw"], &[2, 2])
        .unwrap();
    let z = crate::codec::bytes_codec_from_json(
        &serde_json::json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
        crate::dtype::DataType::UInt8,
    )
    .unwrap();
    assert_eq!(z.decode(enc.clone(), ctx.decode_to(None)).unwrap(), raw);
    assert_eq!(
        chain.decode_strings(enc, &[2, 2], &ctx).unwrap(),
        ["ab", "\u{e9}", "", "xyzw"]
    );
}
