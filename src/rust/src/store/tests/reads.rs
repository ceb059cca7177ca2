//! The suite's reads: values and ranges of them, missing keys, sizes.

use super::*;

pub fn check_round_trip(store: &dyn Store) {
    set(store, "zarr.json", b"{}");
    assert_eq!(get(store, "zarr.json").unwrap(), b"{}");

    // A shorter value replaces a longer one entirely (no stale tail).
    set(store, "a/b", b"a longer first value");
    set(store, "a/b", b"short");
    assert_eq!(get(store, "a/b").unwrap(), b"short");

    set(store, "empty", b"");
    assert_eq!(get(store, "empty").unwrap(), Vec::<u8>::new());

    let bytes: Vec<u8> = (0..=255).cycle().take(100_000).collect();
    set(store, "g/arr/c/0/1", &bytes);
    assert_eq!(get(store, "g/arr/c/0/1").unwrap(), bytes);

    // A value written in parts is their concatenation, replacing the old.
    store
        .set_parts_str("g/arr/c/0/1", &[b"head", b"", &bytes[..10], b"tail"])
        .unwrap();
    let mut want = b"head".to_vec();
    want.extend_from_slice(&bytes[..10]);
    want.extend_from_slice(b"tail");
    assert_eq!(get(store, "g/arr/c/0/1").unwrap(), want);
    set(store, "g/arr/c/0/1", &bytes);

    // Zarr v2 keys start with "."; keys are case sensitive and Unicode.
    set(store, "g/.zarray", b"v2");
    set(store, "Foo", b"upper");
    set(store, "foo", b"lower");
    set(store, "donn\u{e9}es/\u{3b1}", b"unicode");
    assert_eq!(get(store, "g/.zarray").unwrap(), b"v2");
    assert_eq!(get(store, "donn\u{e9}es/\u{3b1}").unwrap(), b"unicode");
    if store
        .list_str()
        .unwrap()
        .iter()
        .filter(|k| k.eq_ignore_ascii_case("foo"))
        .count()
        == 2
    {
        // Only stores on case-sensitive file systems can hold both.
        assert_eq!(get(store, "Foo").unwrap(), b"upper");
        assert_eq!(get(store, "foo").unwrap(), b"lower");
    }
    clear(store);
}

pub fn check_missing(store: &dyn Store) {
    assert_eq!(get(store, "nothing"), None);
    assert_eq!(get(store, "no/such/key"), None);
    assert_eq!(
        store.get_str("nothing", ByteRange::Suffix(4)).unwrap(),
        None
    );
    assert_eq!(
        store
            .get_str(
                "nothing",
                ByteRange::Range {
                    offset: 100,
                    length: 1
                }
            )
            .unwrap(),
        None
    );
    assert!(!store.exists_str("nothing").unwrap());
    assert_eq!(store.size_str("nothing").unwrap(), None);

    // "d" is only a prefix of "d/x", not a key.
    set(store, "d/x", b"x");
    assert_eq!(get(store, "d"), None);
    assert!(!store.exists_str("d").unwrap());
    assert_eq!(store.size_str("d").unwrap(), None);
    store.erase_str("d").unwrap();
    assert_eq!(
        get(store, "d/x").unwrap(),
        b"x",
        "erasing a prefix-only key removed keys below it"
    );
    // Below an existing key there is nothing.
    assert_eq!(get(store, "d/x/y"), None);
    assert!(!store.exists_str("d/x/y").unwrap());
    assert_eq!(store.size_str("d/x/y").unwrap(), None);
    store.erase_str("d/x/y").unwrap();
    assert_eq!(store.list_prefix_str("d/x/").unwrap(), Vec::<String>::new());
    clear(store);
}

pub fn check_ranges(store: &dyn Store) {
    let value: Vec<u8> = (0..100).collect();
    set(store, "r", &value);
    set(store, "e", b"");
    check_range_reads(store);
    clear(store);
}

/// The byte range reads of a store holding "r" (the bytes 0 to 99) and
/// "e" (empty) but no "missing"; separate from `check_ranges` so that a
/// store that cannot be written (HTTP) can be checked on keys it serves.
pub fn check_range_reads(store: &dyn Store) {
    let value: Vec<u8> = (0..100).collect();
    let ok = |range: ByteRange, want: &[u8]| {
        let got = store
            .get_str("r", range)
            .unwrap_or_else(|e| panic!("{range:?}: {e}"));
        assert_eq!(got.as_deref(), Some(want), "{range:?}");
    };
    ok(ByteRange::All, &value);
    ok(
        ByteRange::Range {
            offset: 10,
            length: 5,
        },
        &value[10..15],
    );
    ok(
        ByteRange::Range {
            offset: 0,
            length: 100,
        },
        &value,
    );
    ok(
        ByteRange::Range {
            offset: 0,
            length: 0,
        },
        &[],
    );
    ok(
        ByteRange::Range {
            offset: 95,
            length: 5,
        },
        &value[95..],
    );
    ok(
        ByteRange::Range {
            offset: 100,
            length: 0,
        },
        &[],
    );
    ok(ByteRange::From(0), &value);
    ok(ByteRange::From(42), &value[42..]);
    ok(ByteRange::From(100), &[]);
    ok(ByteRange::Suffix(0), &[]);
    ok(ByteRange::Suffix(10), &value[90..]);
    ok(ByteRange::Suffix(100), &value);

    for range in [
        ByteRange::Range {
            offset: 96,
            length: 5,
        },
        ByteRange::Range {
            offset: 101,
            length: 0,
        },
        ByteRange::Range {
            offset: u64::MAX,
            length: 2,
        },
        ByteRange::Range {
            offset: 1,
            length: u64::MAX,
        },
        ByteRange::From(101),
        ByteRange::Suffix(101),
    ] {
        let want = resolve_range("r", 100, range).unwrap_err();
        let got = store.get_str("r", range).unwrap_err();
        assert_eq!(got, want, "{range:?}");
        assert!(got.message().contains("'r'"), "{got}");
    }

    assert_eq!(
        store.get_str("e", ByteRange::Suffix(0)).unwrap(),
        Some(vec![])
    );
    assert_eq!(
        store.get_str("e", ByteRange::From(0)).unwrap(),
        Some(vec![])
    );
    assert!(store.get_str("e", ByteRange::Suffix(1)).is_err());
    assert!(store
        .get_str(
            "e",
            ByteRange::Range {
                offset: 0,
                length: 1
            }
        )
        .is_err());
    for range in [
        ByteRange::All,
        ByteRange::From(1),
        ByteRange::Suffix(1),
        ByteRange::Range {
            offset: 0,
            length: 0,
        },
    ] {
        assert_eq!(store.get_str("missing", range).unwrap(), None, "{range:?}");
    }
}

pub fn check_exists_and_size(store: &dyn Store) {
    set(store, "s/zero", b"");
    set(store, "s/five", b"12345");
    set(store, "s/big", &vec![7u8; 123_457]);
    for (key, size) in [("s/zero", 0), ("s/five", 5), ("s/big", 123_457)] {
        assert!(store.exists_str(key).unwrap(), "{key}");
        assert_eq!(store.size_str(key).unwrap(), Some(size), "{key}");
    }
    assert!(!store.exists_str("s/six").unwrap());
    assert_eq!(store.size_str("s/six").unwrap(), None);
    store.erase_str("s/five").unwrap();
    assert!(!store.exists_str("s/five").unwrap());
    assert_eq!(store.size_str("s/five").unwrap(), None);
    clear(store);
}
