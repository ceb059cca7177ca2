//! JSON reference sets (fsspec/kerchunk, versions 0 and 1: Jinja
//! `templates`, `gen` expansion, inline and base64 values), within the
//! limits an untrusted set gets: few keys, a short expansion time, and
//! local targets confined to an empty folder. Every key of a set that
//! parses is listed and read, except targets on the network: a fuzzer must
//! not reach it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use zarr::store::reference::{RefLimits, RefStore};
use zarr::store::{ByteRange, Store, StoreKey};

fuzz_target!(|data: &[u8]| {
    let root = std::env::temp_dir().join("zarr-fuzz-empty");
    let _ = std::fs::create_dir_all(&root);
    let base = root.to_string_lossy().into_owned();
    let limits = RefLimits {
        max_keys: 100_000,
        max_seconds: 1.0,
        local_root: Some(root),
    };
    let Ok(store) = RefStore::from_json_with(data, &base, limits) else {
        return;
    };
    let keys = store.list().expect("listing a parsed set");
    assert_eq!(keys.len(), store.len());
    let expanded = store.expanded_json().expect("a parsed set writes back");
    for key in &keys {
        // A key the store boundary refuses never reaches a store.
        let Ok(skey) = StoreKey::new(key.as_str()) else {
            continue;
        };
        match &expanded[key.as_str()] {
            Value::String(_) => {
                store
                    .get(&skey, ByteRange::All)
                    .expect("an inline value reads");
            }
            Value::Array(a) => {
                let url = a[0].as_str().expect("a target URL").to_ascii_lowercase();
                if url.contains("://") && !url.starts_with("file://") {
                    continue;
                }
                // Local targets lie in an empty folder or are refused.
                for range in [ByteRange::All, ByteRange::Suffix(3)] {
                    if let Ok(Some(v)) = store.get(&skey, range) {
                        panic!("{key}: {} bytes read from outside the folder", v.len());
                    }
                }
            }
            other => panic!("{key}: expanded to {other}"),
        }
    }
    // Its version 0 form holds the same references (a key "version" reads
    // as the set's version there).
    if !keys.iter().any(|k| k == "version") {
        let again = serde_json::to_vec(&expanded).unwrap();
        let back = RefStore::from_json(&again, &base).expect("the expanded set parses");
        assert_eq!(back.list().unwrap(), keys);
    }
});
