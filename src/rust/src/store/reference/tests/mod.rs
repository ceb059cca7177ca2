//! Tests of reference stores: JSON versions 0 and 1 (the examples of
//! references-spec.rst), local and HTTP targets, errors, and the lazy
//! Parquet layout (written here with the parquet crate's writer).

use super::*;
use crate::store::test_server::{self, Mode, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::AtomicU64;

/// A fresh folder under the system temp folder, removed on drop.
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("zarr-ref-test-{}-{n}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(super) fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    fn str(&self) -> String {
        self.0.to_str().unwrap().to_string()
    }

    pub(super) fn write(&self, rel: &str, data: &[u8]) -> String {
        let p = self.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, data).unwrap();
        p.to_str().unwrap().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn store(doc: Value, base: &str) -> RefStore {
    RefStore::from_json(doc.to_string().as_bytes(), base).unwrap()
}

fn get(s: &RefStore, key: &str) -> Option<Vec<u8>> {
    s.get(key, ByteRange::All)
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
    assert_eq!(s.get("text", range(1, 2)).unwrap().unwrap(), b"at");
    assert_eq!(
        s.get("text", ByteRange::Suffix(3)).unwrap().unwrap(),
        b"ata"
    );
    assert_eq!(s.get("text", ByteRange::From(4)).unwrap().unwrap(), b"");
    let e = kind(s.get("text", range(2, 3)), "corrupt_chunk");
    assert!(e.message().contains("'text'"), "{e}");
    assert!(s.exists("bin").unwrap());
    assert!(!s.exists("nope").unwrap());
    assert_eq!(s.size("bin").unwrap(), Some(4));
    assert_eq!(s.size("nope").unwrap(), None);
    assert!(!s.prefers_batches());
    assert!(s.read_only());
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
        s.get("part", range(10, 5)).unwrap().unwrap(),
        &data()[110..115]
    );
    assert_eq!(
        s.get("part", ByteRange::From(45)).unwrap().unwrap(),
        &data()[145..150]
    );
    assert_eq!(
        s.get("part", ByteRange::Suffix(2)).unwrap().unwrap(),
        &data()[148..150]
    );
    assert_eq!(
        s.get("whole", ByteRange::Suffix(2)).unwrap().unwrap(),
        &data()[998..]
    );
    assert_eq!(s.get("whole", range(5, 3)).unwrap().unwrap(), &data()[5..8]);
    // A range past the end of the reference (not of the file) is refused.
    let e = kind(s.get("part", range(45, 10)), "corrupt_chunk");
    assert!(e.message().contains("'part'"), "{e}");
    kind(s.get("whole", ByteRange::Suffix(1001)), "corrupt_chunk");
    assert_eq!(s.size("part").unwrap(), Some(50));
    assert_eq!(s.size("whole").unwrap(), Some(1000));
    let many = s.get_many(&[
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
    assert_eq!(s.size("x/0").unwrap(), Some(73825960));
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
    let e = kind(s.get("a", ByteRange::All), "unsupported");
    assert!(
        e.message()
            .contains("protocol not supported yet: hdfs://h/f"),
        "{e}"
    );
    assert!(e.message().contains("'a'"), "{e}");
    kind(s.size("a"), "unsupported");
    let e = kind(s.get("b", ByteRange::All), "unsupported");
    assert!(e.message().contains("memory://x"), "{e}");
}

// --- version 1 ---------------------------------------------------------

/// The version 1 example of references-spec.rst, verbatim.
const SPEC_V1_EXAMPLE: &str = r#"{
    "version": 1,
    "templates": {
        "u": "server.domain/path",
        "f": "{{c}}"
    },
    "gen": [
        {
            "key": "gen_key{{i}}",
            "url": "http://{{u}}_{{i}}",
            "offset": "{{(i + 1) * 1000}}",
            "length": "1000",
            "dimensions":
              {
                "i": {"stop":  5}
              }
        }
    ],
    "refs": {
      "key0": "data",
      "key1": ["http://target_url", 10000, 100],
      "key2": ["http://{{u}}", 10000, 100],
      "key3": ["http://{{f(c='text')}}", 10000, 100]
    }
}"#;

/// The version 0 set the spec says it evaluates to.
const SPEC_V0_EXPANSION: &str = r#"{
  "key0": "data",
  "key1": ["http://target_url", 10000, 100],
  "key2": ["http://server.domain/path", 10000, 100],
  "key3": ["http://text", 10000, 100],
  "gen_key0": ["http://server.domain/path_0", 1000, 1000],
  "gen_key1": ["http://server.domain/path_1", 2000, 1000],
  "gen_key2": ["http://server.domain/path_2", 3000, 1000],
  "gen_key3": ["http://server.domain/path_3", 4000, 1000],
  "gen_key4": ["http://server.domain/path_4", 5000, 1000]
}"#;

#[test]
fn reference_v1_spec_example_expands_to_the_spec_version_0_set() {
    let s = RefStore::from_json(SPEC_V1_EXAMPLE.as_bytes(), "").unwrap();
    let want: Value = serde_json::from_str(SPEC_V0_EXPANSION).unwrap();
    assert_eq!(s.expanded_json().unwrap(), want);
    // ...and that version 0 set is read as the same references.
    let v0 = RefStore::from_json(SPEC_V0_EXPANSION.as_bytes(), "").unwrap();
    assert_eq!(v0.expanded_json().unwrap(), want);
    assert_eq!(s.list().unwrap(), v0.list().unwrap());
    assert_eq!(get(&s, "key0").unwrap(), b"data");
    assert_eq!(s.size("gen_key0").unwrap(), Some(1000));
    assert!(s.prefers_batches(), "http targets prefer batches");
}

#[test]
fn reference_v1_templates_arithmetic_and_calls() {
    let s = store(
        json!({
            "version": 1,
            "templates": {
                "root": "/data",
                "n": 7,
                "name": "{{stem}}_{{'%02d' | format(k)}}.bin",
                "nested": "{{root}}/{{x}}",
            },
            "gen": [{
                "key": "g/{{i * 2 + 1}}",
                "url": "{{name(stem='part', k=i)}}",
                "offset": "{{ (i + n) * 10 - 3 }}",
                "length": "{{ i | int + 1 }}",
                "dimensions": {"i": [0, 1, 2]}
            }],
            "refs": {
                "a": ["{{nested(x='f.nc')}}", 1, 2],
                "b": ["{{root}}/{{ 'x' ~ (n * 6) }}"],
                "c": ["no/template"],
            }
        }),
        "/base",
    );
    let got = s.expanded_json().unwrap();
    assert_eq!(
        got,
        json!({
            "a": ["/data/f.nc", 1, 2],
            "b": ["/data/x42"],
            "c": ["no/template"],
            "g/1": ["part_00.bin", 67, 1],
            "g/3": ["part_01.bin", 77, 2],
            "g/5": ["part_02.bin", 87, 3],
        })
    );
    // Relative gen URLs are relative to the base.
    let Ref::Target { target, .. } = s.resolve("g/1").unwrap().unwrap() else {
        panic!("not a target")
    };
    assert!(
        matches!(&target.kind, TargetKind::Local(p) if p == Path::new("/base/part_00.bin")),
        "{target:?}"
    );
}

#[test]
fn reference_v1_gen_ranges_lists_and_cartesian_products() {
    let s = store(
        json!({
            "version": 1,
            "gen": [
                {
                    "key": "a/{{t}}.{{y}}",
                    "url": "http://h/{{t}}/{{y}}.nc",
                    "offset": "{{ y * 100 }}",
                    "length": 100,
                    "dimensions": {
                        "t": ["jan", "feb"],
                        "y": {"start": 2, "stop": 8, "step": 3}
                    }
                },
                {
                    "key": "b/{{i}}",
                    "url": "http://h/b{{i}}",
                    "dimensions": {"i": {"start": 3, "stop": 0, "step": -1}}
                },
                {
                    "key": "none/{{i}}",
                    "url": "x",
                    "dimensions": {"i": {"start": 5, "stop": 5}}
                },
                {
                    "key": "refs-wins",
                    "url": "http://h/gen",
                    "dimensions": {}
                }
            ],
            "refs": {"refs-wins": "inline"}
        }),
        "",
    );
    let got = s.expanded_json().unwrap();
    assert_eq!(
        got,
        json!({
            "a/feb.2": ["http://h/feb/2.nc", 200, 100],
            "a/feb.5": ["http://h/feb/5.nc", 500, 100],
            "a/jan.2": ["http://h/jan/2.nc", 200, 100],
            "a/jan.5": ["http://h/jan/5.nc", 500, 100],
            "b/1": ["http://h/b1"],
            "b/2": ["http://h/b2"],
            "b/3": ["http://h/b3"],
            // gen entries are added after refs, as fsspec does.
            "refs-wins": ["http://h/gen"],
        })
    );
}

#[test]
fn reference_bare_refs_object_is_version_1() {
    let s = store(
        json!({"refs": {"a": "x", ".zgroup": {"zarr_format": 2}}}),
        "",
    );
    assert_eq!(s.list().unwrap(), vec![".zgroup", "a"]);
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
    let s = RefStore::from_json(bytes.as_bytes(), &dir.str()).unwrap();
    assert_eq!(get(&s, "rel").unwrap(), &data()[1..3]);
    assert_eq!(get(&s, "dot").unwrap(), &data()[3..4]);
    assert_eq!(get(&s, "abs").unwrap(), &data()[5..6]);
    assert_eq!(get(&s, "url").unwrap(), &data()[6..7]);
    assert_eq!(get(&s, "url-host").unwrap(), &data()[7..8]);
    assert_eq!(get(&s, "url-plain").unwrap(), &data()[8..9]);
    kind(s.get("up", ByteRange::All), "not_found");
    // ...as the reference file itself, or a file:// URL of the folder.
    let json_file = dir.write("sub/refs.json", bytes.as_bytes());
    let s = RefStore::from_json(bytes.as_bytes(), &json_file).unwrap();
    kind(s.get("rel", ByteRange::All), "not_found");
    assert_eq!(get(&s, "up").unwrap(), &data()[4..5]);
    let s = RefStore::from_json(bytes.as_bytes(), &format!("file://{}", dir.str())).unwrap();
    assert_eq!(get(&s, "rel").unwrap(), &data()[1..3]);
    // A file URL with a remote host is not supported.
    let s = store(json!({"k": ["file://server/share/x"]}), "");
    let e = kind(s.get("k", ByteRange::All), "unsupported");
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
    assert!(s.prefers_batches());
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
        let e = kind(s.get(key, ByteRange::All), "not_found");
        assert!(e.message().contains(&format!("'{key}'")), "{e}");
        assert!(e.message().contains("gone.nc"), "{e}");
    }
    // The key exists; its whole-file size needs the file.
    assert!(s.exists("x/1").unwrap());
    kind(s.size("x/1"), "not_found");
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
        let e = kind(s.get(key, ByteRange::All), "corrupt_chunk");
        assert!(e.message().contains(&format!("'{key}'")), "{e}");
        assert!(e.message().contains("short.bin"), "{e}");
        // Even a range within the reference is refused.
        kind(s.get(key, range(0, 1)), "corrupt_chunk");
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
    assert_eq!(s.list().unwrap().len(), 10);
    assert_eq!(
        s.list_prefix("a/").unwrap(),
        [
            "a/.zgroup",
            "a/b/.zarray",
            "a/b/0.0",
            "a/b/0.1",
            "a/c/.zarray"
        ]
    );
    assert_eq!(
        s.list_prefix("a/b").unwrap(),
        ["a/b/.zarray", "a/b/0.0", "a/b/0.1"]
    );
    assert_eq!(s.list_prefix("q/").unwrap(), Vec::<String>::new());
    let root = s.list_dir("").unwrap();
    assert_eq!(root.keys, [".zgroup", "a.txt", "a0"]);
    assert_eq!(root.prefixes, ["a/", "z/"]);
    let a = s.list_dir("a").unwrap();
    assert_eq!(a.keys, ["a/.zgroup"]);
    assert_eq!(a.prefixes, ["a/b/", "a/c/"]);
    let z = s.list_dir("z/c/").unwrap();
    assert_eq!(z.keys, Vec::<String>::new());
    assert_eq!(z.prefixes, ["z/c/0/"]);
    kind(s.list_dir("../"), "invalid_key");
    kind(s.get("a//b", ByteRange::All), "invalid_key");
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
    let e = kind(RefStore::open("s3://bucket/refs.json"), "unsupported");
    assert!(e.message().contains("s3://bucket/refs.json"), "{e}");
}

// --- http targets ------------------------------------------------------

/// The test server, serving `files` (absolute paths) from the origin,
/// each answer `delay_ms` late.
fn serve(files: Vec<(&'static str, Vec<u8>)>, delay_ms: u64) -> Server {
    let files: Vec<(&str, Vec<u8>)> = files
        .into_iter()
        .map(|(k, v)| (k.trim_start_matches('/'), v))
        .collect();
    let mode = Mode {
        delay_ms,
        ..Mode::default()
    };
    test_server::serve("", &files, mode)
}

#[test]
fn reference_http_targets_use_range_requests() {
    let server = serve(vec![("/dir/f.bin", data()), ("/dir/a b.bin", data())], 0);
    let u = &server.url;
    let s = store(
        json!({
            "part": [format!("{u}/dir/f.bin"), 100, 10],
            "whole": [format!("{u}/dir/f.bin")],
            "space": [format!("{u}/dir/a%20b.bin"), 1, 1],
            "rel": ["f.bin", 5, 2],
            "gone": [format!("{u}/dir/missing.bin"), 0, 1],
            "past": [format!("{u}/dir/f.bin"), 2000, 10],
        }),
        &format!("{u}/dir/refs.json"),
    );
    assert!(s.prefers_batches());
    assert_eq!(get(&s, "part").unwrap(), &data()[100..110]);
    assert_eq!(
        s.get("part", range(2, 3)).unwrap().unwrap(),
        &data()[102..105]
    );
    assert_eq!(get(&s, "whole").unwrap(), data());
    assert_eq!(get(&s, "space").unwrap(), &data()[1..2]);
    assert_eq!(get(&s, "rel").unwrap(), &data()[5..7]);
    assert_eq!(s.size("whole").unwrap(), Some(1000));
    let e = kind(s.get("gone", ByteRange::All), "not_found");
    assert!(e.message().contains("'gone'"), "{e}");
    assert!(e.message().contains("missing.bin"), "{e}");
    let e = kind(s.get("past", ByteRange::All), "corrupt_chunk");
    assert!(e.message().contains("'past'"), "{e}");
    let reqs = server.stats.lock().unwrap().log();
    assert!(
        reqs.contains(&("/dir/f.bin".into(), Some("bytes=100-109".into()))),
        "{reqs:?}"
    );
    assert!(
        reqs.contains(&("/dir/f.bin".into(), Some("bytes=102-104".into()))),
        "{reqs:?}"
    );
    assert!(reqs.contains(&("/dir/a%20b.bin".into(), Some("bytes=1-1".into()))));
    // One HTTP store per origin.
    assert_eq!(s.http.stores.lock().unwrap().len(), 1);
}

#[test]
fn reference_open_reads_a_json_file_over_http() {
    let doc = json!({"version": 1, "refs": {"k": ["f.bin", 3, 4], ".zgroup": {"zarr_format": 2}}});
    let server = serve(
        vec![
            ("/v/refs.json", doc.to_string().into_bytes()),
            ("/v/f.bin", data()),
        ],
        0,
    );
    let s = RefStore::open(&format!("{}/v/refs.json", server.url)).unwrap();
    assert_eq!(get(&s, "k").unwrap(), &data()[3..7]);
    assert_eq!(s.list().unwrap(), [".zgroup", "k"]);
    kind(
        RefStore::open(&format!("{}/v/none.json", server.url)),
        "not_found",
    );
}

#[test]
fn reference_http_get_many_is_concurrent_and_ordered() {
    let server = serve(vec![("/f.bin", data())], 100);
    let refs: serde_json::Map<String, Value> = (0..16)
        .map(|i| {
            (
                format!("c/{i}"),
                json!([format!("{}/f.bin", server.url), i * 10, 10]),
            )
        })
        .collect();
    let s = store(Value::Object(refs), "");
    let requests: Vec<(String, ByteRange)> = (0..16)
        .rev()
        .map(|i| (format!("c/{i}"), ByteRange::All))
        .chain(std::iter::once(("c/none".to_string(), ByteRange::All)))
        .collect();
    let start = std::time::Instant::now();
    let got = s.get_many(&requests);
    let took = start.elapsed();
    for (j, r) in got.iter().take(16).enumerate() {
        let i = 15 - j;
        assert_eq!(
            r.as_ref().unwrap().as_deref(),
            Some(&data()[i * 10..i * 10 + 10])
        );
    }
    assert_eq!(got[16].as_ref().unwrap(), &None);
    assert!(
        server.stats.lock().unwrap().max_in_flight > 1,
        "requests were not concurrent"
    );
    assert!(took.as_millis() < 16 * 100, "took {took:?}");
}

// --- Parquet references ------------------------------------------------

mod pq {
    use super::*;
    use ::parquet::basic::{Compression, ZstdLevel};
    use ::parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
    use ::parquet::file::properties::WriterProperties;
    use ::parquet::file::writer::SerializedFileWriter;
    use ::parquet::schema::parser::parse_message_type;

    /// One row: path, offset, size, raw (all None: a missing key).
    pub type Row<'a> = (Option<&'a str>, i64, i64, Option<&'a [u8]>);

    const SCHEMA: &str = "message schema {
        OPTIONAL BYTE_ARRAY path (UTF8);
        REQUIRED INT64 offset;
        REQUIRED INT64 size;
        OPTIONAL BYTE_ARRAY raw;
    }";

    fn props(compression: Compression) -> Arc<WriterProperties> {
        Arc::new(
            WriterProperties::builder()
                .set_compression(compression)
                .set_dictionary_enabled(true)
                .set_max_row_group_row_count(Some(3))
                .build(),
        )
    }

    fn bytes_col(vals: impl Iterator<Item = Option<Vec<u8>>>) -> (Vec<ByteArray>, Vec<i16>) {
        let mut values = Vec::new();
        let mut defs = Vec::new();
        for v in vals {
            match v {
                Some(v) => {
                    values.push(ByteArray::from(v));
                    defs.push(1);
                }
                None => defs.push(0),
            }
        }
        (values, defs)
    }

    /// Write `rows` to `path` in the layout of fsspec's LazyReferenceMapper
    /// (row groups of 3 rows, so several are read).
    pub fn write_refs(path: &Path, rows: &[Row], compression: Compression) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let schema = Arc::new(parse_message_type(SCHEMA).unwrap());
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props(compression)).unwrap();
        for chunk in rows.chunks(3) {
            let mut rg = w.next_row_group().unwrap();
            let mut i = 0;
            while let Some(mut col) = rg.next_column().unwrap() {
                match i {
                    0 => {
                        let (v, d) =
                            bytes_col(chunk.iter().map(|r| r.0.map(|s| s.as_bytes().to_vec())));
                        col.typed::<ByteArrayType>()
                            .write_batch(&v, Some(&d), None)
                            .unwrap();
                    }
                    1 | 2 => {
                        let v: Vec<i64> = chunk
                            .iter()
                            .map(|r| if i == 1 { r.1 } else { r.2 })
                            .collect();
                        col.typed::<Int64Type>()
                            .write_batch(&v, None, None)
                            .unwrap();
                    }
                    _ => {
                        let (v, d) = bytes_col(chunk.iter().map(|r| r.3.map(|b| b.to_vec())));
                        col.typed::<ByteArrayType>()
                            .write_batch(&v, Some(&d), None)
                            .unwrap();
                    }
                }
                col.close().unwrap();
                i += 1;
            }
            rg.close().unwrap();
        }
        w.close().unwrap();
    }

    /// A file with other columns: name (string) and offset (int32).
    pub fn write_wrong(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let schema = Arc::new(
            parse_message_type(
                "message schema { REQUIRED BYTE_ARRAY name (UTF8); REQUIRED INT32 offset; }",
            )
            .unwrap(),
        );
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props(Compression::SNAPPY)).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut i = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            if i == 0 {
                col.typed::<ByteArrayType>()
                    .write_batch(&[ByteArray::from("x")], None, None)
                    .unwrap();
            } else {
                col.typed::<Int32Type>()
                    .write_batch(&[1], None, None)
                    .unwrap();
            }
            col.close().unwrap();
            i += 1;
        }
        rg.close().unwrap();
        w.close().unwrap();
    }

    /// The other column types fsspec's readers accept: a required path
    /// and 32-bit offsets and sizes, no raw column.
    pub fn write_int32_refs(path: &Path, rows: &[(&str, i32, i32)]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let schema = Arc::new(
            parse_message_type(
                "message schema { REQUIRED BYTE_ARRAY path (UTF8); \
                 REQUIRED INT32 offset; REQUIRED INT32 size; }",
            )
            .unwrap(),
        );
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props(Compression::SNAPPY)).unwrap();
        for chunk in rows.chunks(3) {
            let mut rg = w.next_row_group().unwrap();
            let mut i = 0;
            while let Some(mut col) = rg.next_column().unwrap() {
                if i == 0 {
                    let v: Vec<ByteArray> = chunk.iter().map(|r| ByteArray::from(r.0)).collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, None, None)
                        .unwrap();
                } else {
                    let v: Vec<i32> = chunk
                        .iter()
                        .map(|r| if i == 1 { r.1 } else { r.2 })
                        .collect();
                    col.typed::<Int32Type>()
                        .write_batch(&v, None, None)
                        .unwrap();
                }
                col.close().unwrap();
                i += 1;
            }
            rg.close().unwrap();
        }
        w.close().unwrap();
    }

    /// What pyarrow writes for fsspec when no row has inline data: optional
    /// int64 offsets and sizes, and "raw" of the Null logical type (int32).
    pub fn write_pyarrow_style(path: &Path, rows: &[(Option<&str>, i64, i64)]) {
        use ::parquet::basic::{LogicalType, Repetition, Type as Physical};
        use ::parquet::schema::types::Type;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let field = |name: &str, t: Physical, logical: Option<LogicalType>| {
            Arc::new(
                Type::primitive_type_builder(name, t)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(logical)
                    .build()
                    .unwrap(),
            )
        };
        let schema = Type::group_type_builder("schema")
            .with_fields(vec![
                field("path", Physical::BYTE_ARRAY, Some(LogicalType::String)),
                field("offset", Physical::INT64, None),
                field("size", Physical::INT64, None),
                field("raw", Physical::INT32, Some(LogicalType::Unknown)),
            ])
            .build()
            .unwrap();
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, Arc::new(schema), props(zstd())).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut i = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            let all = vec![1i16; rows.len()];
            match i {
                0 => {
                    let (v, d) = bytes_col(rows.iter().map(|r| r.0.map(|s| s.as_bytes().to_vec())));
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, Some(&d), None)
                        .unwrap();
                }
                1 | 2 => {
                    let v: Vec<i64> = rows
                        .iter()
                        .map(|r| if i == 1 { r.1 } else { r.2 })
                        .collect();
                    col.typed::<Int64Type>()
                        .write_batch(&v, Some(&all), None)
                        .unwrap();
                }
                _ => {
                    let none = vec![0i16; rows.len()];
                    col.typed::<Int32Type>()
                        .write_batch(&[], Some(&none), None)
                        .unwrap();
                }
            }
            col.close().unwrap();
            i += 1;
        }
        rg.close().unwrap();
        w.close().unwrap();
    }

    pub fn zstd() -> Compression {
        Compression::ZSTD(ZstdLevel::default())
    }

    pub fn snappy() -> Compression {
        Compression::SNAPPY
    }
}

/// A Parquet reference folder "refs.parq" beside "data.bin": array "x"
/// (shape [10], chunks [2]: 5 chunks, record_size 2, so 3 files) and the
/// group "deep" with array "deep/y" (shape [2, 3], chunks [1, 2]: 2 x 2
/// chunks, "/" separated, one file).
fn parquet_set(dir: &TempDir) -> String {
    let data_file = dir.write("data.bin", &data());
    let root = dir.join("refs.parq");
    let zmeta = json!({
        "record_size": 2,
        "metadata": {
            ".zgroup": {"zarr_format": 2},
            "x/.zarray": {"shape": [10], "chunks": [2], "dtype": "<u1", "zarr_format": 2},
            "x/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
            "deep/.zgroup": "{\"zarr_format\": 2}",
            "deep/y/.zarray": {"shape": [2, 3], "chunks": [1, 2], "dimension_separator": "/"},
        }
    });
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(".zmetadata"), zmeta.to_string()).unwrap();
    // x: chunk 0 a byte range, 1 inline, 2 whole file (relative path),
    // 3 missing, 4 a byte range (padding row 5 is empty).
    pq::write_refs(
        &root.join("x/refs.0.parq"),
        &[(Some(&data_file), 10, 2, None), (None, 0, 0, Some(b"raw!"))],
        pq::zstd(),
    );
    pq::write_refs(
        &root.join("x/refs.1.parq"),
        &[(Some("data.bin"), 0, 0, None), (None, 0, 0, None)],
        pq::snappy(),
    );
    pq::write_refs(
        &root.join("x/refs.2.parq"),
        &[(Some(&data_file), 500, 3, None), (None, 0, 0, None)],
        pq::zstd(),
    );
    // deep/y: chunks (0,0) (0,1) (1,0) (1,1) -> rows 0..4 of refs.0..1
    // with record_size 2: (0,*) in refs.0, (1,*) in refs.1 (missing file).
    pq::write_refs(
        &root.join("deep/y/refs.0.parq"),
        &[
            (Some(&data_file), 0, 1, None),
            (Some(&format!("file://{data_file}")), 1, 1, None),
        ],
        pq::zstd(),
    );
    root.to_str().unwrap().to_string()
}

#[test]
fn reference_parquet_reads_only_the_files_it_needs() {
    let dir = TempDir::new("parquet-lazy");
    let root = parquet_set(&dir);
    let s = RefStore::from_parquet_dir(&root).unwrap();
    // Metadata needs no reference file.
    let zarray: Value = serde_json::from_slice(&get(&s, "x/.zarray").unwrap()).unwrap();
    assert_eq!(zarray["shape"], json!([10]));
    assert_eq!(get(&s, "deep/.zgroup").unwrap(), b"{\"zarr_format\": 2}");
    assert_eq!(s.reference_files_opened(), 0);
    assert!(s.cached_reference_files().is_empty());
    // Chunk 4 is row 0 of refs.2.parq: only that file is read.
    assert_eq!(get(&s, "x/4").unwrap(), &data()[500..503]);
    assert_eq!(s.cached_reference_files(), ["x/refs.2.parq"]);
    assert_eq!(s.reference_files_opened(), 1);
    assert_eq!(get(&s, "x/4").unwrap(), &data()[500..503]);
    assert_eq!(s.reference_files_opened(), 1, "the file was read again");
    assert_eq!(
        s.get("x/4", range(1, 2)).unwrap().unwrap(),
        &data()[501..503]
    );
    // Chunks 0 and 1 in refs.0.parq: a range and inline data.
    assert_eq!(get(&s, "x/0").unwrap(), &data()[10..12]);
    assert_eq!(get(&s, "x/1").unwrap(), b"raw!");
    assert_eq!(
        s.cached_reference_files(),
        ["x/refs.0.parq", "x/refs.2.parq"]
    );
    // Chunk 2: size 0 is the whole file, relative to the folder beside
    // the reference folder; chunk 3 is an empty row.
    assert_eq!(get(&s, "x/2").unwrap(), data());
    assert_eq!(get(&s, "x/3"), None);
    assert!(!s.exists("x/3").unwrap());
    assert_eq!(s.size("x/2").unwrap(), Some(1000));
    // Not chunks of the grid.
    for key in [
        "x/5",
        "x/01",
        "x/0.0",
        "x/a",
        "y/0",
        "deep/y/0.0",
        "deep/y/0",
    ] {
        assert_eq!(get(&s, key), None, "{key}");
    }
    assert_eq!(s.reference_files_opened(), 3);
    // "/"-separated chunk keys of a nested array; a missing file has no keys.
    assert_eq!(get(&s, "deep/y/0/0").unwrap(), &data()[0..1]);
    assert_eq!(get(&s, "deep/y/0/1").unwrap(), &data()[1..2]);
    assert_eq!(get(&s, "deep/y/1/0"), None);
    assert_eq!(
        s.cached_reference_files(),
        [
            "deep/y/refs.0.parq",
            "deep/y/refs.1.parq",
            "x/refs.0.parq",
            "x/refs.1.parq",
            "x/refs.2.parq"
        ]
    );
    assert!(!s.prefers_batches());
    crate::store::tests::check_read_only(&s, "x/1", b"raw!");
}

#[test]
fn reference_parquet_lists_keys_and_folders() {
    let dir = TempDir::new("parquet-list");
    let root = parquet_set(&dir);
    let s = RefStore::from_parquet_dir(&format!("file://{root}")).unwrap();
    let root_dir = s.list_dir("").unwrap();
    assert_eq!(root_dir.keys, [".zgroup"]);
    assert_eq!(root_dir.prefixes, ["deep/", "x/"]);
    // Listing a group reads no reference file.
    let deep = s.list_dir("deep/").unwrap();
    assert_eq!(deep.keys, ["deep/.zgroup"]);
    assert_eq!(deep.prefixes, ["deep/y/"]);
    assert_eq!(s.reference_files_opened(), 0);
    let x = s.list_dir("x").unwrap();
    assert_eq!(
        x.keys,
        ["x/.zarray", "x/.zattrs", "x/0", "x/1", "x/2", "x/4"]
    );
    assert!(x.prefixes.is_empty());
    let y = s.list_dir("deep/y/").unwrap();
    assert_eq!(y.keys, ["deep/y/.zarray"]);
    assert_eq!(y.prefixes, ["deep/y/0/"]);
    let y0 = s.list_dir("deep/y/0/").unwrap();
    assert_eq!(y0.keys, ["deep/y/0/0", "deep/y/0/1"]);
    assert_eq!(
        s.list_prefix("deep/").unwrap(),
        ["deep/.zgroup", "deep/y/.zarray", "deep/y/0/0", "deep/y/0/1"]
    );
    assert_eq!(s.list().unwrap().len(), 5 + 4 + 2);
    let expanded = s.expanded_json().unwrap();
    assert_eq!(expanded["x/1"], json!("raw!"));
    assert_eq!(expanded["x/2"], json!(["data.bin"]));
    assert_eq!(expanded["x/4"][1], json!(500));
    assert!(s.describe().contains("refs.parq"), "{}", s.describe());
    // open() of a folder is the Parquet layout.
    let opened = RefStore::open(&root).unwrap();
    assert_eq!(get(&opened, "x/1").unwrap(), b"raw!");
}

#[test]
fn reference_parquet_v3_arrays_and_root_arrays() {
    let dir = TempDir::new("parquet-v3");
    let file = dir.write("d.bin", &data());
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    let zmeta = json!({
        "record_size": 100,
        "metadata": {
            "zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [4],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}},
            "s/zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
                "chunk_key_encoding": {"name": "v2"}},
        }
    });
    std::fs::write(root.join(".zmetadata"), zmeta.to_string()).unwrap();
    pq::write_refs(
        &root.join("refs.0.parq"),
        &[(Some(&file), 0, 2, None), (Some(&file), 2, 2, None)],
        pq::zstd(),
    );
    pq::write_refs(
        &root.join("s/refs.0.parq"),
        &[(None, 0, 0, Some(b"s"))],
        pq::snappy(),
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    assert_eq!(get(&s, "c/1").unwrap(), &data()[2..4]);
    assert_eq!(get(&s, "c/2"), None);
    assert_eq!(get(&s, "c.1"), None);
    assert_eq!(get(&s, "s/0").unwrap(), b"s");
    assert_eq!(s.list_dir("").unwrap().prefixes, ["c/", "s/"]);
    assert_eq!(s.list_prefix("c/").unwrap(), ["c/0", "c/1"]);
}

#[test]
fn reference_parquet_errors() {
    let dir = TempDir::new("parquet-errors");
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    // No .zmetadata.
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "not_found",
    );
    assert!(e.message().contains(".zmetadata"), "{e}");
    // Bad .zmetadata.
    std::fs::write(root.join(".zmetadata"), "{").unwrap();
    kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    std::fs::write(root.join(".zmetadata"), r#"{"metadata": {}}"#).unwrap();
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    assert!(e.message().contains("record_size"), "{e}");
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"chunks": [1]}}}"#,
    )
    .unwrap();
    let e = kind(
        RefStore::from_parquet_dir(root.to_str().unwrap()),
        "metadata",
    );
    assert!(e.message().contains("a/.zarray"), "{e}");
    // Wrong columns, and a file that is no Parquet file.
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [4], "chunks": [1]},
            "b/.zarray": {"shape": [4], "chunks": [1]}}}"#,
    )
    .unwrap();
    pq::write_wrong(&root.join("a/refs.0.parq"));
    std::fs::create_dir_all(root.join("b")).unwrap();
    std::fs::write(root.join("b/refs.0.parq"), b"not parquet").unwrap();
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    let e = kind(s.get("a/0", ByteRange::All), "metadata");
    assert!(e.message().contains("a/refs.0.parq"), "{e}");
    assert!(e.message().contains("wrong columns"), "{e}");
    assert!(e.message().contains("name"), "{e}");
    let e = kind(s.get("b/0", ByteRange::All), "metadata");
    assert!(e.message().contains("b/refs.0.parq"), "{e}");
    // A remote folder is not supported.
    kind(
        RefStore::from_parquet_dir("https://example.org/refs.parq"),
        "unsupported",
    );
}

#[test]
fn reference_parquet_prefers_batches_for_http_targets() {
    let dir = TempDir::new("parquet-http");
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {"a/.zarray": {"shape": [2], "chunks": [1]}}}"#,
    )
    .unwrap();
    pq::write_refs(
        &root.join("a/refs.0.parq"),
        &[(Some("https://example.org/f.nc"), 0, 4, None)],
        pq::zstd(),
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    assert_eq!(s.reference_files_opened(), 0);
    assert!(s.prefers_batches());
    assert_eq!(s.cached_reference_files(), ["a/refs.0.parq"]);
    assert_eq!(s.size("a/0").unwrap(), Some(4));
}

#[test]
fn reference_parquet_rows_across_row_groups_nulls_and_int32_columns() {
    let dir = TempDir::new("parquet-rows");
    let a = dir.write("a.bin", &data());
    dir.write("d.bin", &data()[500..]);
    let root = dir.join("r");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join(".zmetadata"),
        json!({"record_size": 10, "metadata": {
            "m/.zarray": {"shape": [12], "chunks": [1]},
            "n/.zarray": {"shape": [2, 2], "chunks": [1, 1]},
        }})
        .to_string(),
    )
    .unwrap();
    let rows: Vec<pq::Row> = vec![
        (Some(&a), 0, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, Some(b"r2")),
        (Some("d.bin"), 3, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, Some(b"")),
        (Some(&a), 6, 1, None),
        (Some(&a), 7, 1, None),
        (None, 0, 0, None),
        (None, 0, 0, None),
    ];
    pq::write_refs(&root.join("m/refs.0.parq"), &rows, pq::zstd());
    pq::write_pyarrow_style(
        &root.join("m/refs.1.parq"),
        &[(Some("d.bin"), 1, 2), (None, 0, 0)],
    );
    pq::write_int32_refs(
        &root.join("n/refs.0.parq"),
        &[(&a, 10, 1), ("d.bin", 0, 0), (&a, 12, 1), (&a, 13, 2)],
    );
    let s = RefStore::from_parquet_dir(root.to_str().unwrap()).unwrap();
    let want: Vec<Option<Vec<u8>>> = vec![
        Some(data()[0..1].to_vec()),
        None,
        Some(b"r2".to_vec()),
        Some(data()[503..504].to_vec()),
        None,
        Some(Vec::new()),
        Some(data()[6..7].to_vec()),
        Some(data()[7..8].to_vec()),
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&get(&s, &format!("m/{i}")), w, "m/{i}");
    }
    assert_eq!(get(&s, "m/10").unwrap(), &data()[501..503]);
    assert_eq!(get(&s, "m/11"), None);
    assert_eq!(get(&s, "n/0.0").unwrap(), &data()[10..11]);
    assert_eq!(get(&s, "n/0.1").unwrap(), &data()[500..]);
    assert_eq!(get(&s, "n/1.1").unwrap(), &data()[13..15]);
    assert_eq!(s.reference_files_opened(), 3);
    assert_eq!(
        s.list_prefix("m/").unwrap(),
        [
            "m/.zarray",
            "m/0",
            "m/10",
            "m/2",
            "m/3",
            "m/5",
            "m/6",
            "m/7"
        ]
    );
}
