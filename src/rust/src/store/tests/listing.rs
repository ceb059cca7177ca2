//! The suite's listings: every key, keys below a prefix, one level.

use super::*;

/// Keys whose sorted order is byte order, not path order: "a-b" and "a.b"
/// sort before "a/...", "B" before "a".
const TREE: &[&str] = &[
    "zarr.json",
    "a/c/1/0",
    "B",
    "a/zarr.json",
    "a/c/0/1",
    "a-b",
    "a/b/zarr.json",
    "ab",
    "a/c/0/0",
    "a.b",
];

/// The keys of `TREE` below "a/", in byte order.
const BELOW_A: &[&str] = &[
    "a/b/zarr.json",
    "a/c/0/0",
    "a/c/0/1",
    "a/c/1/0",
    "a/zarr.json",
];

pub fn check_list(store: &dyn Store) {
    assert_eq!(store.list_str().unwrap(), Vec::<String>::new());
    set_all(store, TREE);
    let all = store.list_str().unwrap();
    assert_eq!(all, sorted(TREE));
    let mut want = strings(&["B", "a-b", "a.b"]);
    want.extend(strings(BELOW_A));
    want.extend(strings(&["ab", "zarr.json"]));
    assert_eq!(all, want);
    assert_eq!(store.list_prefix_str("").unwrap(), all);
    assert_eq!(store.list_prefix_str("a/").unwrap(), strings(BELOW_A));
    for (prefix, want) in [
        ("a/c/0/", &["a/c/0/0", "a/c/0/1"][..]),
        ("missing/", &[]),
        ("ab/", &[]),
        ("zarr.json/", &[]),
        // Without a trailing "/" a prefix matches the start of a name.
        ("a/c/0", &["a/c/0/0", "a/c/0/1"]),
    ] {
        let got = store.list_prefix_str(prefix).unwrap();
        assert_eq!(got, strings(want), "list_prefix({prefix:?})");
    }
    let mut want = strings(&["a-b", "a.b"]);
    want.extend(strings(BELOW_A));
    want.push("ab".into());
    assert_eq!(store.list_prefix_str("a").unwrap(), want);
    clear(store);
}

pub fn check_list_dir(store: &dyn Store) {
    assert_eq!(store.list_dir_str("").unwrap(), DirListing::default());
    set_all(store, TREE);
    assert_eq!(
        store.list_dir_str("").unwrap(),
        listing(&["B", "a-b", "a.b", "ab", "zarr.json"], &["a/"])
    );
    assert_eq!(
        store.list_dir_str("a/").unwrap(),
        listing(&["a/zarr.json"], &["a/b/", "a/c/"])
    );
    assert_eq!(
        store.list_dir_str("a/c/").unwrap(),
        listing(&[], &["a/c/0/", "a/c/1/"])
    );
    assert_eq!(
        store.list_dir_str("a/c/0/").unwrap(),
        listing(&["a/c/0/0", "a/c/0/1"], &[])
    );
    assert_eq!(
        store.list_dir_str("a/b/").unwrap(),
        listing(&["a/b/zarr.json"], &[])
    );
    assert_eq!(
        store.list_dir_str("missing/").unwrap(),
        DirListing::default()
    );
    assert_eq!(store.list_dir_str("a.b/").unwrap(), DirListing::default());
    // "a" names the same folder as "a/".
    assert_eq!(
        store.list_dir_str("a").unwrap(),
        store.list_dir_str("a/").unwrap()
    );
    clear(store);
}
