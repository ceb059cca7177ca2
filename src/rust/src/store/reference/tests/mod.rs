//! Tests of reference stores: JSON versions 0 and 1 (the examples of
//! references-spec.rst), local and HTTP targets, errors, and the lazy
//! Parquet layout (written here with the parquet crate's writer).

use super::*;
use crate::store::test_server::{self, Mode, Server};
use serde_json::{json, Value};
use std::io::Write;

mod http_targets;
mod json_v1;
mod parquet_sets;
mod parquet_writer;

pub(super) use crate::store::tests::TempDir;

fn store(doc: Value, base: &str) -> RefStore {
    RefStore::from_json(doc.to_string().as_bytes(), base).unwrap()
}

fn get(s: &RefStore, key: &str) -> Option<Vec<u8>> {
    s.get_str(key, ByteRange::All)
        .unwrap_or_else(|e| panic!("get '{key}': {e}"))
}

fn range(offset: u64, length: u64) -> ByteRange {
    ByteRange::Range { offset, length }
}

pub(super) fn kind<T: std::fmt::Debug>(r: Result<T>, kind: &str) -> ZarrError {
    match r {
        Ok(v) => panic!("expected a {kind} error, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "wrong kind of error: {e}");
            e
        }
    }
}

fn json_err(doc: &str) -> ZarrError {
    kind(RefStore::from_json(doc.as_bytes(), ""), "metadata")
}

fn data() -> Vec<u8> {
    (0..=255u8).cycle().take(1000).collect()
}

// --- version 0 ---------------------------------------------------------

#[test]
fn reference_v0_inline_base64_and_json_documents() {
    let s = store(
        json!({
            ".zgroup": {"zarr_format": 2},
            "a/.zarray": "{\"zarr_format\": 2}",
            "text": "data",
            "bin": "base64:AAEC/w==",
            "unpadded": "base64:AAEC/w",
            "empty": "",
        }),
        "",
    );
    assert_eq!(get(&s, "text").unwrap(), b"data");
    assert_eq!(get(&s, "bin").unwrap(), vec![0, 1, 2, 255]);
    assert_eq!(get(&s, "unpadded").unwrap(), vec![0, 1, 2, 255]);
    assert_eq!(get(&s, "empty").unwrap(), b"");
    assert_eq!(get(&s, "a/.zarray").unwrap(), b"{\"zarr_format\": 2}");
    let doc: Value = serde_json::from_slice(&get(&s, ".zgroup").unwrap()).unwrap();
    assert_eq!(doc, json!({"zarr_format": 2}));
    assert_eq!(get(&s, "missing"), None);
    assert_eq!(get(&s, "text/below"), None);
    // Ranges of inline data.
    assert_eq!(s.get_str("text", range(1, 2)).unwrap().unwrap(), b"at");
    assert_eq!(
        s.get_str("text", ByteRange::Suffix(3)).unwrap().unwrap(),
        b"ata"
    );
    assert_eq!(s.get_str("text", ByteRange::From(4)).unwrap().unwrap(), b"");
    let e = kind(s.get_str("text", range(2, 3)), "corrupt_chunk");
    assert!(e.message().contains("'text'"), "{e}");
    assert!(s.exists_str("bin").unwrap());
    assert!(!s.exists_str("nope").unwrap());
    assert_eq!(s.size_str("bin").unwrap(), Some(4));
    assert_eq!(s.size_str("nope").unwrap(), None);
    assert!(s.as_batched().is_none());
    assert!(s.as_writable().is_none());
}

#[test]
fn reference_v0_whole_files_and_byte_ranges_of_local_files() {
    let dir = TempDir::new("v0-files");
    let file = dir.write("data.bin", &data());
    let s = store(
        json!({
            "whole": [file],
            "part": [file, 100, 50],
            "nulls": [file, null, null],
            "zero": [file, 1000, 0],
            "float": [file, 10.0, 5.0],
        }),
        "",
    );
    assert_eq!(get(&s, "whole").unwrap(), data());
    assert_eq!(get(&s, "nulls").unwrap(), data());
    assert_eq!(get(&s, "part").unwrap(), &data()[100..150]);
    assert_eq!(get(&s, "zero").unwrap(), b"");
    assert_eq!(get(&s, "float").unwrap(), &data()[10..15]);
    // Ranges within a reference are ranges of its bytes.
    assert_eq!(
        s.get_str("part", range(10, 5)).unwrap().unwrap(),
        &data()[110..115]
    );
    assert_eq!(
        s.get_str("part", ByteRange::From(45)).unwrap().unwrap(),
        &data()[145..150]
    );
    assert_eq!(
        s.get_str("part", ByteRange::Suffix(2)).unwrap().unwrap(),
        &data()[148..150]
    );
    assert_eq!(
        s.get_str("whole", ByteRange::Suffix(2)).unwrap().unwrap(),
        &data()[998..]
    );
    assert_eq!(
        s.get_str("whole", range(5, 3)).unwrap().unwrap(),
        &data()[5..8]
    );
    // A range past the end of the reference (not of the file) is refused.
    let e = kind(s.get_str("part", range(45, 10)), "corrupt_chunk");
    assert!(e.message().contains("'part'"), "{e}");
    kind(s.get_str("whole", ByteRange::Suffix(1001)), "corrupt_chunk");
    assert_eq!(s.size_str("part").unwrap(), Some(50));
    assert_eq!(s.size_str("whole").unwrap(), Some(1000));
    let many = s.get_many_str(&[
        ("part".into(), ByteRange::All),
        ("none".into(), ByteRange::All),
        ("whole".into(), range(0, 2)),
        ("../bad".into(), ByteRange::All),
    ]);
    assert_eq!(
        many[0].as_ref().unwrap().as_deref(),
        Some(&data()[100..150])
    );
    assert_eq!(many[1].as_ref().unwrap(), &None);
    assert_eq!(many[2].as_ref().unwrap().as_deref(), Some(&data()[..2]));
    assert_eq!(many[3].as_ref().unwrap_err().kind(), "invalid_key");
}

#[test]
fn reference_v0_spec_example_reads_metadata_and_sends_cloud_targets_to_object_stores() {
    let s = store(
        json!({
          ".zgroup": {"zarr_format": 2},
          ".zattrs": {"Conventions": "UGRID-0.9.0\n"},
          "x/.zattrs": {"_ARRAY_DIMENSIONS": ["node"]},
          "x/.zarray": {"chunks": [9228245], "compressor": null, "dtype": "<f8"},
          "x/0": ["s3://bucket/path/file.nc", 294094376, 73825960]
        }),
        "",
    );
    let zarray: Value = serde_json::from_slice(&get(&s, "x/.zarray").unwrap()).unwrap();
    assert_eq!(zarray["dtype"], "<f8");
    // The size of a byte-range reference is known without the file.
    assert_eq!(s.size_str("x/0").unwrap(), Some(73825960));
    // Cloud targets are read through object stores (tested against a
    // server in R); other protocols are refused by name.
    let base = Base::Local(PathBuf::from("refs"));
    for url in ["s3://bucket/path/file.nc", "gs://b/f", "az://c/f"] {
        assert!(
            matches!(resolve_target(url, &base), TargetKind::Http(ref u) if u == url),
            "{url}"
        );
    }
    let s = store(json!({"a": ["hdfs://h/f"], "b": ["memory://x", 0, 1]}), "");
    let e = kind(s.get_str("a", ByteRange::All), "unsupported");
    assert!(
        e.message()
            .contains("protocol not supported yet: hdfs://h/f"),
        "{e}"
    );
    assert!(e.message().contains("'a'"), "{e}");
    kind(s.size_str("a"), "unsupported");
    let e = kind(s.get_str("b", ByteRange::All), "unsupported");
    assert!(e.message().contains("memory://x"), "{e}");
}

// --- errors of reference sets ------------------------------------------

#[test]
fn reference_invalid_json_and_bad_sets_are_metadata_errors() {
    let e = json_err("{\"a\": ");
    assert!(e.message().contains("invalid reference JSON"), "{e}");
    json_err("[1, 2]");
    let e = json_err(r#"{"version": 2, "refs": {}}"#);
    assert!(e.message().contains("version 2"), "{e}");
    let e = json_err(r#"{"a": 1}"#);
    assert!(e.message().contains("'a'"), "{e}");
    let e = json_err(r#"{"a": ["u", 1]}"#);
    assert!(e.message().contains("'a'"), "{e}");
    let e = json_err(r#"{"a": ["u", -1, 3]}"#);
    assert!(e.message().contains("offset"), "{e}");
    let e = json_err(r#"{"a": [3]}"#);
    assert!(e.message().contains("URL"), "{e}");
    let e = json_err(r#"{"a": "base64:!!"}"#);
    assert!(e.message().contains("base64"), "{e}");
    let e = json_err(r#"{"a/../b": "x"}"#);
    assert!(e.message().contains("a/../b"), "{e}");
    json_err(r#"{"version": 1, "refs": []}"#);
    json_err(r#"{"version": 1, "gen": {}}"#);
    let e = json_err(r#"{"version": 1, "gen": [{"key": "k", "dimensions": {}}]}"#);
    assert!(e.message().contains("'url'"), "{e}");
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k", "url": "u", "offset": "1", "dimensions": {}}]}"#,
    );
    assert!(e.message().contains("'length'"), "{e}");
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k", "url": "u", "dimensions": {"i": {"start": 1}}}]}"#,
    );
    assert!(e.message().contains("'i'"), "{e}");
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k", "url": "u", "dimensions": {"i": {"stop": 3, "step": 0}}}]}"#,
    );
    assert!(e.message().contains("step"), "{e}");
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 100000}, "j": {"stop": 100000}}}]}"#,
    );
    assert!(e.message().contains("more than"), "{e}");
}

#[test]
fn reference_templates_that_do_not_render_are_metadata_errors() {
    // An undefined variable in a gen key names the template and values.
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k{{j}}", "url": "u", "dimensions": {"i": [1]}}]}"#,
    );
    assert!(e.message().contains("k{{j}}"), "{e}");
    assert!(e.message().contains("i=1"), "{e}");
    // A syntax error.
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k{{ (i }}", "url": "u", "dimensions": {"i": [1]}}]}"#,
    );
    assert!(e.message().contains("k{{ (i }}"), "{e}");
    // A URL template of refs names its key.
    let e = json_err(r#"{"version": 1, "templates": {"u": "x"}, "refs": {"a/0": ["{{v}}"]}}"#);
    assert!(e.message().contains("'a/0'"), "{e}");
    assert!(e.message().contains("{{v}}"), "{e}");
    // A call of a template missing its variable.
    let e =
        json_err(r#"{"version": 1, "templates": {"f": "{{c}}"}, "refs": {"k": ["{{f(d=1)}}"]}}"#);
    assert!(e.message().contains("'k'"), "{e}");
    // A template that cannot be parsed names itself.
    let e = json_err(r#"{"version": 1, "templates": {"f": "{{c"}, "refs": {}}"#);
    assert!(e.message().contains("'f'"), "{e}");
    // Offsets must render to integers.
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{i / 2}}", "length": "1", "dimensions": {"i": [1]}}]}"#,
    );
    assert!(e.message().contains("'0.5'"), "{e}");
    assert!(e.message().contains("'k1'"), "{e}");
    // A key that renders to an invalid key.
    let e = json_err(
        r#"{"version": 1, "gen": [{"key": "{{i}}/../x", "url": "u", "dimensions": {"i": [1]}}]}"#,
    );
    assert!(e.message().contains("1/../x"), "{e}");
}

// --- targets: relative paths, file URLs, missing files -----------------

#[test]
fn reference_relative_paths_and_file_urls() {
    let dir = TempDir::new("relative");
    let abs = dir.write("sub/d.bin", &data());
    let refs = json!({
        "rel": ["sub/d.bin", 1, 2],
        "dot": ["./sub/d.bin", 3, 1],
        "up": ["../sub/d.bin", 4, 1],
        "abs": [abs.clone(), 5, 1],
        "url": [format!("file://{abs}"), 6, 1],
        "url-host": [format!("file://localhost{abs}"), 7, 1],
        "url-plain": [format!("file:{abs}"), 8, 1],
    });
    let bytes = refs.to_string();
    // The base as the folder of the reference file...
    let s = RefStore::from_json(bytes.as_bytes(), dir.path().to_str().unwrap()).unwrap();
    assert_eq!(get(&s, "rel").unwrap(), &data()[1..3]);
    assert_eq!(get(&s, "dot").unwrap(), &data()[3..4]);
    assert_eq!(get(&s, "abs").unwrap(), &data()[5..6]);
    assert_eq!(get(&s, "url").unwrap(), &data()[6..7]);
    assert_eq!(get(&s, "url-host").unwrap(), &data()[7..8]);
    assert_eq!(get(&s, "url-plain").unwrap(), &data()[8..9]);
    kind(s.get_str("up", ByteRange::All), "not_found");
    // ...as the reference file itself, or a file:// URL of the folder.
    let json_file = dir.write("sub/refs.json", bytes.as_bytes());
    let s = RefStore::from_json(bytes.as_bytes(), &json_file).unwrap();
    kind(s.get_str("rel", ByteRange::All), "not_found");
    assert_eq!(get(&s, "up").unwrap(), &data()[4..5]);
    let s = RefStore::from_json(
        bytes.as_bytes(),
        &format!("file://{}", dir.path().display()),
    )
    .unwrap();
    assert_eq!(get(&s, "rel").unwrap(), &data()[1..3]);
    // A file URL with a remote host is not supported.
    let s = store(json!({"k": ["file://server/share/x"]}), "");
    let e = kind(s.get_str("k", ByteRange::All), "unsupported");
    assert!(e.message().contains("server"), "{e}");
    // Relative paths below an http base are http URLs.
    let s = store(
        json!({"k": ["../x/y.nc", 0, 1], "l": ["z.nc"]}),
        "https://example.org/refs/r.json?token=1",
    );
    let urls: Vec<String> = ["k", "l"]
        .iter()
        .map(|k| match s.resolve(k).unwrap().unwrap() {
            Ref::Target { target, .. } => match &target.kind {
                TargetKind::Http(u) => u.clone(),
                other => panic!("{other:?}"),
            },
            _ => panic!("inline"),
        })
        .collect();
    assert_eq!(
        urls,
        [
            "https://example.org/x/y.nc",
            "https://example.org/refs/z.nc"
        ]
    );
    assert!(s.as_batched().is_some());
}

#[test]
fn reference_missing_target_file_is_not_found_naming_key_and_file() {
    let dir = TempDir::new("missing");
    let gone = dir.join("gone.nc");
    let s = store(
        json!({"x/0": [gone.to_str().unwrap(), 0, 10], "x/1": [gone.to_str().unwrap()]}),
        "",
    );
    for key in ["x/0", "x/1"] {
        let e = kind(s.get_str(key, ByteRange::All), "not_found");
        assert!(e.message().contains(&format!("'{key}'")), "{e}");
        assert!(e.message().contains("gone.nc"), "{e}");
    }
    // The key exists; its whole-file size needs the file.
    assert!(s.exists_str("x/1").unwrap());
    kind(s.size_str("x/1"), "not_found");
}

#[test]
fn reference_past_the_end_of_the_target_is_a_corrupt_chunk() {
    let dir = TempDir::new("past");
    let file = dir.write("short.bin", &data()[..100]);
    let s = store(
        json!({"c/0": [file, 90, 20], "c/1": [file, 200, 1], "c/2": [file, 90, 10]}),
        "",
    );
    for key in ["c/0", "c/1"] {
        let e = kind(s.get_str(key, ByteRange::All), "corrupt_chunk");
        assert!(e.message().contains(&format!("'{key}'")), "{e}");
        assert!(e.message().contains("short.bin"), "{e}");
        // Even a range within the reference is refused.
        kind(s.get_str(key, range(0, 1)), "corrupt_chunk");
    }
    assert_eq!(get(&s, "c/2").unwrap(), &data()[90..100]);
}

// --- store behaviour ---------------------------------------------------

#[test]
fn reference_store_is_read_only_and_lists_its_keys() {
    let s = store(
        json!({
            ".zgroup": {"zarr_format": 2},
            "a/.zgroup": {"zarr_format": 2},
            "a/b/.zarray": {},
            "a/b/0.0": "x",
            "a/b/0.1": "y",
            "a/c/.zarray": {},
            "a.txt": "dot sorts before slash",
            "a0": "zero sorts after slash",
            "z/zarr.json": {},
            "z/c/0/0": "v3",
        }),
        "",
    );
    crate::store::tests::check_read_only(&s, "a/b/0.0", b"x");
    assert_eq!(s.list_str().unwrap().len(), 10);
    assert_eq!(
        s.list_prefix_str("a/").unwrap(),
        [
            "a/.zgroup",
            "a/b/.zarray",
            "a/b/0.0",
            "a/b/0.1",
            "a/c/.zarray"
        ]
    );
    assert_eq!(
        s.list_prefix_str("a/b").unwrap(),
        ["a/b/.zarray", "a/b/0.0", "a/b/0.1"]
    );
    assert_eq!(s.list_prefix_str("q/").unwrap(), Vec::<String>::new());
    let root = s.list_dir_str("").unwrap();
    assert_eq!(root.keys, [".zgroup", "a.txt", "a0"]);
    assert_eq!(root.prefixes, ["a/", "z/"]);
    let a = s.list_dir_str("a").unwrap();
    assert_eq!(a.keys, ["a/.zgroup"]);
    assert_eq!(a.prefixes, ["a/b/", "a/c/"]);
    let z = s.list_dir_str("z/c/").unwrap();
    assert_eq!(z.keys, Vec::<String>::new());
    assert_eq!(z.prefixes, ["z/c/0/"]);
    kind(s.list_dir_str("../"), "invalid_key");
    kind(s.get_str("a//b", ByteRange::All), "invalid_key");
    assert!(s.describe().contains("10 references"), "{}", s.describe());
}

#[test]
fn reference_open_reads_json_files_compressed_or_not() {
    let dir = TempDir::new("open");
    dir.write("d.bin", &data());
    let doc = json!({"version": 1, "refs": {"k": ["d.bin", 2, 3]}}).to_string();
    let plain = dir.write("refs.json", doc.as_bytes());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(doc.as_bytes()).unwrap();
    let gz = dir.write("refs.json.gz", &gz.finish().unwrap());
    let zst = dir.write(
        "refs.json.zst",
        &zstd::stream::encode_all(doc.as_bytes(), 3).unwrap(),
    );
    for path in [plain.clone(), gz, zst, format!("file://{plain}")] {
        let s = RefStore::open(&path).unwrap();
        assert_eq!(get(&s, "k").unwrap(), &data()[2..5], "{path}");
    }
    kind(
        RefStore::open(&dir.join("nope.json").to_string_lossy()),
        "not_found",
    );
    // s3:// and the other object store URLs are read (tested on moto).
    let e = kind(RefStore::open("hdfs://h/refs.json"), "unsupported");
    assert!(e.message().contains("hdfs://h/refs.json"), "{e}");
}
