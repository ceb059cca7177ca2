//! Reference sets from untrusted sources: bounded `gen` expansion and
//! local targets confined to a folder.

use super::tests::{kind, TempDir};
use super::*;

/// The 400-byte reference set whose `gen` asks for 1e8 keys: refused
/// before any of them is made.
const HUGE_GEN: &str = r#"{"version": 1, "refs": {".zgroup": "{\"zarr_format\": 2}"},
  "gen": [{"key": "a/{{i}}", "url": "data.bin", "offset": "{{i * 4}}", "length": "4",
           "dimensions": {"i": {"stop": 100000000}}}]}"#;

#[test]
fn reference_gen_of_1e8_keys_is_a_metadata_error_before_any_is_made() {
    let t = std::time::Instant::now();
    let e = kind(RefStore::from_json(HUGE_GEN.as_bytes(), ""), "metadata");
    assert!(e.message().contains("100000000 values"), "{e}");
    assert!(e.message().contains("10000000 keys"), "{e}");
    assert!(
        t.elapsed().as_secs() < 5,
        "the refusal took {:?}",
        t.elapsed()
    );
}

#[test]
fn reference_key_limit_counts_refs_and_every_gen_entry() {
    let doc = r#"{"version": 1, "refs": {"x": "base64:AA==", "y": "base64:AA=="},
      "gen": [{"key": "a/{{i}}", "url": "u", "dimensions": {"i": {"stop": 3}}},
              {"key": "b/{{i}}", "url": "u", "dimensions": {"i": [1, 2, 3]}}]}"#;
    let limits = |max_keys| RefLimits {
        max_keys,
        ..RefLimits::default()
    };
    let s = RefStore::from_json_with(doc.as_bytes(), "", limits(8)).unwrap();
    assert_eq!(s.len(), 8);
    let e = kind(
        RefStore::from_json_with(doc.as_bytes(), "", limits(7)),
        "metadata",
    );
    assert!(e.message().contains("gen entry 1"), "{e}");
}

#[test]
fn reference_gen_expansion_stops_at_its_time_limit() {
    let doc = r#"{"version": 1, "gen": [{"key": "a/{{i}}", "url": "u",
      "dimensions": {"i": {"stop": 200000}}}]}"#;
    let limits = RefLimits {
        max_seconds: 0.0,
        ..RefLimits::default()
    };
    let e = kind(
        RefStore::from_json_with(doc.as_bytes(), "", limits),
        "metadata",
    );
    assert!(e.message().contains("seconds"), "{e}");
}

#[test]
fn reference_local_targets_outside_the_confining_folder_are_invalid_keys() {
    let dir = TempDir::new("confined");
    dir.write("data/inside.bin", b"inside");
    dir.write("secret", b"outside");
    let doc = serde_json::json!({
        "version": 1,
        "refs": {
            "in": ["inside.bin"],
            "up": ["../secret"],
            "abs": [dir.join("secret").to_str().unwrap()],
            "url": [format!("file://{}", dir.join("secret").display())],
        }
    });
    let base = dir.join("data");
    let limits = RefLimits {
        local_root: Some(base.clone()),
        ..RefLimits::default()
    };
    let s = RefStore::from_json_with(doc.to_string().as_bytes(), base.to_str().unwrap(), limits)
        .unwrap();
    assert_eq!(s.get_str("in", ByteRange::All).unwrap().unwrap(), b"inside");
    for key in ["up", "abs", "url"] {
        let e = kind(s.get_str(key, ByteRange::All), "invalid_key");
        assert!(e.message().contains("confined"), "{key}: {e}");
        assert!(e.message().contains(key), "{key}: {e}");
    }
    #[cfg(unix)]
    {
        // A link inside the folder to a file outside it is outside.
        std::os::unix::fs::symlink(dir.join("secret"), dir.join("data/link")).unwrap();
        let doc = r#"{"version": 1, "refs": {"l": ["link"]}}"#;
        let limits = RefLimits {
            local_root: Some(base.clone()),
            ..RefLimits::default()
        };
        let s = RefStore::from_json_with(doc.as_bytes(), base.to_str().unwrap(), limits).unwrap();
        kind(s.get_str("l", ByteRange::All), "invalid_key");
    }
    // Without the option every local file is readable, as documented.
    let s = RefStore::from_json(doc.to_string().as_bytes(), base.to_str().unwrap()).unwrap();
    assert_eq!(
        s.get_str("up", ByteRange::All).unwrap().unwrap(),
        b"outside"
    );
}
