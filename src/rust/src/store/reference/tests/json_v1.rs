//! Version 1 reference sets: the spec's example, templates and generators.

use super::*;

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
    assert_eq!(s.list_str().unwrap(), v0.list_str().unwrap());
    assert_eq!(get(&s, "key0").unwrap(), b"data");
    assert_eq!(s.size_str("gen_key0").unwrap(), Some(1000));
    assert!(s.as_batched().is_some(), "http targets prefer batches");
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
    assert_eq!(s.list_str().unwrap(), vec![".zgroup", "a"]);
}
