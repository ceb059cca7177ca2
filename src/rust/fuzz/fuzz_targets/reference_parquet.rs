//! Parquet reference files (fsspec's LazyReferenceMapper layout): the input
//! is `a/refs.0.parq` of a folder whose `.zmetadata` declares the array `a`
//! of 10 chunks in records of 10. Each reference is listed and read, with
//! local targets confined to an empty folder, so that nothing but inline
//! values may read; targets on the network are not read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;
use zarr::store::reference::{RefLimits, RefStore};
use zarr::store::{ByteRange, Store, StoreKey};

const ZMETADATA: &str = r#"{"record_size": 10, "metadata": {
  ".zgroup": {"zarr_format": 2},
  "a/.zarray": {"zarr_format": 2, "shape": [10], "chunks": [1], "dtype": "<i8",
                "compressor": null, "fill_value": 0, "filters": null, "order": "C"}}}"#;

/// The reference folder of this process, made once.
fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("zarr-fuzz-parquet-{}", std::process::id()));
        let dir = base.join("refs");
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::create_dir_all(base.join("empty")).unwrap();
        std::fs::write(dir.join(".zmetadata"), ZMETADATA).unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = folder();
    std::fs::write(dir.join("a").join("refs.0.parq"), data).unwrap();
    let limits = RefLimits {
        local_root: Some(dir.parent().unwrap().join("empty")),
        ..RefLimits::default()
    };
    let store = RefStore::from_parquet_dir_with(&dir.to_string_lossy(), limits)
        .expect("the .zmetadata is valid");
    let Ok(expanded) = store.expanded_json() else {
        return;
    };
    for (key, value) in expanded.as_object().unwrap() {
        // A key the store boundary refuses never reaches a store.
        let Ok(skey) = StoreKey::new(key.as_str()) else {
            continue;
        };
        match value {
            Value::String(_) => {
                store
                    .get(&skey, ByteRange::All)
                    .expect("an inline value reads");
                let _ = store.get(
                    &skey,
                    ByteRange::Range {
                        offset: 1,
                        length: 2,
                    },
                );
            }
            Value::Array(a) => {
                let url = a[0].as_str().expect("a target URL").to_ascii_lowercase();
                if url.contains("://") && !url.starts_with("file://") {
                    continue;
                }
                if let Ok(Some(v)) = store.get(&skey, ByteRange::All) {
                    panic!("{key}: {} bytes read from outside the folder", v.len());
                }
            }
            other => panic!("{key}: expanded to {other}"),
        }
    }
});
