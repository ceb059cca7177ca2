//! The suite's writes: erasing keys and prefixes, concurrent writers, and
//! a read-only store's refusals.

use super::*;

pub fn check_erase(store: &dyn Store) {
    set_all(store, &["a/b", "a/bc", "a/b.json", "x"]);
    store.erase_str("a/b").unwrap();
    assert_eq!(get(store, "a/b"), None);
    assert!(!store.exists_str("a/b").unwrap());
    assert_eq!(
        store.list_str().unwrap(),
        strings(&["a/b.json", "a/bc", "x"])
    );
    // Erasing what is not there is not an error, twice over.
    store.erase_str("a/b").unwrap();
    store.erase_str("never/was").unwrap();
    store.erase_str("x").unwrap();
    assert_eq!(store.list_str().unwrap(), strings(&["a/b.json", "a/bc"]));
    // A key can be written again after it was erased.
    set(store, "a/b", b"again");
    assert_eq!(get(store, "a/b").unwrap(), b"again");
    clear(store);
}

pub fn check_erase_prefix(store: &dyn Store) {
    let keys = [
        "a/b",
        "a/c/d",
        "a/c/e",
        "a/c.json",
        "ab",
        "a.json",
        "b/x",
        "zarr.json",
    ];
    set_all(store, &keys);
    store.erase_prefix_str("a/c/").unwrap();
    assert_eq!(
        store.list_str().unwrap(),
        sorted(&["a/b", "a/c.json", "ab", "a.json", "b/x", "zarr.json"])
    );
    // "a/" is not "a": "ab" and "a.json" stay.
    store.erase_prefix_str("a/").unwrap();
    assert_eq!(
        store.list_str().unwrap(),
        sorted(&["ab", "a.json", "b/x", "zarr.json"])
    );
    store.erase_prefix_str("missing/").unwrap();
    store.erase_prefix_str("a/").unwrap();
    // A prefix without "/" is a plain string prefix.
    set_all(store, &["a/b", "a/c/d"]);
    store.erase_prefix_str("a").unwrap();
    assert_eq!(store.list_str().unwrap(), sorted(&["b/x", "zarr.json"]));
    // A prefix below a key is empty: nothing goes.
    store.erase_prefix_str("zarr.json/").unwrap();
    assert_eq!(store.list_str().unwrap(), sorted(&["b/x", "zarr.json"]));
    store.erase_prefix_str("").unwrap();
    assert_eq!(store.list_str().unwrap(), Vec::<String>::new());
    // The store still works after being emptied.
    set(store, "after/clear", b"1");
    assert_eq!(get(store, "after/clear").unwrap(), b"1");
    clear(store);
}

/// Several threads write their own keys and one shared key: every value
/// ends up complete, the shared key holds one writer's whole value.
pub fn check_concurrent_writes(store: &dyn Store) {
    const THREADS: u8 = 8;
    const ROUNDS: usize = 25;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let value = vec![t; 10_000 + t as usize];
                for i in 0..ROUNDS {
                    set(store, "shared", &value);
                    set(store, &format!("t{t}/{i}"), &value);
                    let got = get(store, "shared").expect("the shared key vanished");
                    let first = got[0];
                    assert_eq!(got, vec![first; 10_000 + first as usize], "torn value");
                }
            });
        }
    });
    let got = get(store, "shared").unwrap();
    assert_eq!(got, vec![got[0]; 10_000 + got[0] as usize]);
    assert_eq!(
        store.list_str().unwrap().len(),
        THREADS as usize * ROUNDS + 1
    );
    for t in 0..THREADS {
        assert_eq!(
            get(store, &format!("t{t}/{}", ROUNDS - 1)).unwrap(),
            vec![t; 10_000 + t as usize]
        );
    }
    clear(store);
}

/// `store` is read-only and holds `key` with `value`: reads work, every
/// write is refused and changes nothing.
pub fn check_read_only(store: &dyn Store, key: &str, value: &[u8]) {
    assert!(store.as_writable().is_none());
    assert_eq!(get(store, key).unwrap(), value);
    let before = store.list_str().unwrap();
    let e = assert_kind(store.set_str(key, b"changed"), "read_only", "set");
    assert!(
        e.message().contains(key),
        "message does not name the key: {e}"
    );
    assert_kind(store.set_str("new/key", b"x"), "read_only", "set new");
    assert_kind(store.erase_str(key), "read_only", "erase");
    assert_kind(store.erase_str("not/there"), "read_only", "erase missing");
    assert_kind(store.erase_prefix_str(""), "read_only", "erase_prefix all");
    assert_kind(store.erase_prefix_str("a/"), "read_only", "erase_prefix");
    // Keys are still checked first.
    assert_kind(store.set_str("../x", b"x"), "invalid_key", "set bad key");
    assert_eq!(get(store, key).unwrap(), value);
    assert_eq!(store.list_str().unwrap(), before);
    assert!(store.exists_str(key).unwrap());
    assert_eq!(store.size_str(key).unwrap(), Some(value.len() as u64));
}
