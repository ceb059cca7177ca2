//! The Icechunk store against a repository made here with the icechunk
//! crate: writes into a session, commits, refs, byte ranges and listings.

use super::*;
use crate::store::tests::TempDir;
use crate::store::{Listing, Writes};

const GROUP: &[u8] = br#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;
const ARRAY: &[u8] = br#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
"fill_value":0,"codecs":[{"name":"bytes"}],"attributes":{}}"#;

fn key(k: &str) -> StoreKey {
    StoreKey::new(k).unwrap()
}

fn prefix(p: &str) -> StorePrefix {
    StorePrefix::new(p).unwrap()
}

/// A new, empty repository in `dir`.
fn new_repo(dir: &TempDir) -> String {
    let path = dir.str("repo");
    let rt = crate::store::object::io_runtime().unwrap();
    rt.block_on(async {
        let storage = icechunk::new_local_filesystem_storage(std::path::Path::new(&path))
            .await
            .unwrap();
        Repository::create(storage).execute().await.unwrap();
    });
    path
}

fn branch(b: &str) -> Version {
    Version::Branch(b.to_string())
}

#[test]
fn writes_commit_and_read_back_at_each_ref() {
    let dir = TempDir::new("icechunk");
    let path = new_repo(&dir);
    let w = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    w.set(&key("zarr.json"), GROUP).unwrap();
    w.set(&key("a/zarr.json"), ARRAY).unwrap();
    w.set(&key("a/c/0"), &[1, 2]).unwrap();
    w.set(&key("a/c/1"), &[3, 4]).unwrap();
    assert!(w.has_changes().unwrap());
    let first = w.commit("first", Rebase::None).unwrap();
    assert_eq!(w.snapshot().unwrap(), first);
    assert!(!w.has_changes().unwrap());
    w.set(&key("a/c/1"), &[7, 8]).unwrap();
    w.erase(&key("a/c/0")).unwrap();
    let second = w.commit("second", Rebase::None).unwrap();
    w.create_tag("t1", Some(&first)).unwrap();

    let r = IcechunkStore::open(&path, branch("main"), true, None, &[], &[]).unwrap();
    assert_eq!(
        r.get(&key("a/c/1"), ByteRange::All).unwrap(),
        Some(vec![7, 8])
    );
    assert_eq!(r.get(&key("a/c/0"), ByteRange::All).unwrap(), None);
    assert_eq!(r.size(&key("a/c/1")).unwrap(), Some(2));
    let t = IcechunkStore::open(&path, Version::Tag("t1".into()), true, None, &[], &[]).unwrap();
    assert_eq!(
        t.get(&key("a/c/0"), ByteRange::All).unwrap(),
        Some(vec![1, 2])
    );
    let range = ByteRange::Range {
        offset: 1,
        length: 1,
    };
    assert_eq!(t.get(&key("a/c/1"), range).unwrap(), Some(vec![4]));
    assert_eq!(
        t.get(&key("a/c/1"), ByteRange::Suffix(1)).unwrap(),
        Some(vec![4])
    );
    assert_eq!(
        t.get(&key("a/c/1"), ByteRange::From(1)).unwrap(),
        Some(vec![4])
    );
    assert_eq!(
        t.list().unwrap(),
        vec!["a/c/0", "a/c/1", "a/zarr.json", "zarr.json"]
    );
    let root = t.list_dir(&prefix("")).unwrap();
    assert_eq!(root.keys, vec!["zarr.json"]);
    assert_eq!(root.prefixes, vec!["a/"]);
    let a = t.list_dir(&prefix("a/")).unwrap();
    assert_eq!(a.keys, vec!["a/zarr.json"]);
    assert_eq!(a.prefixes, vec!["a/c/"]);
    assert!(t.exists(&key("a/zarr.json")).unwrap());
    assert!(!t.exists(&key("b/zarr.json")).unwrap());
    assert!(t.as_writable().is_none());
    assert!(matches!(
        crate::store::writable(&t, "write", "a/c/0"),
        Err(ZarrError::ReadOnly(_))
    ));

    let history = r.history(None).unwrap();
    let ids: Vec<&str> = history.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(&ids[..2], &[second.as_str(), first.as_str()]);
    assert_eq!(history[0].message, "second");
    assert_eq!(history[0].parent.as_deref(), Some(first.as_str()));
    assert_eq!(r.tags().unwrap(), vec![("t1".to_string(), first.clone())]);
    assert_eq!(r.branches().unwrap(), vec![("main".to_string(), second)]);
}

#[test]
fn a_second_writer_conflicts_and_rebases_when_asked() {
    let dir = TempDir::new("icechunk-conflict");
    let path = new_repo(&dir);
    let w = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    w.set(&key("zarr.json"), GROUP).unwrap();
    w.set(&key("a/zarr.json"), ARRAY).unwrap();
    w.commit("setup", Rebase::None).unwrap();
    let one = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    let two = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    one.set(&key("a/c/0"), &[1, 1]).unwrap();
    two.set(&key("a/c/1"), &[2, 2]).unwrap();
    one.commit("one", Rebase::None).unwrap();
    match two.commit("two", Rebase::None) {
        Err(ZarrError::Conflict(m)) => assert!(m.contains("rebase = \"detect\""), "{m}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    two.commit("two", Rebase::Detect).unwrap();
    let r = IcechunkStore::open(&path, branch("main"), true, None, &[], &[]).unwrap();
    assert_eq!(
        r.get(&key("a/c/0"), ByteRange::All).unwrap(),
        Some(vec![1, 1])
    );
    assert_eq!(
        r.get(&key("a/c/1"), ByteRange::All).unwrap(),
        Some(vec![2, 2])
    );
}

#[test]
fn missing_repositories_and_refs_are_named() {
    let dir = TempDir::new("icechunk-missing");
    let missing = dir.str("nothing");
    match IcechunkStore::open(&missing, branch("main"), true, None, &[], &[]) {
        Err(ZarrError::NotFound(m)) => assert!(m.contains("nothing"), "{m}"),
        other => panic!("expected NotFound, got {:?}", other.map(|_| ())),
    }
    let path = new_repo(&dir);
    let err = IcechunkStore::open(&path, branch("nope"), true, None, &[], &[])
        .map(|_| ())
        .unwrap_err();
    assert!(err.message().contains("nope"), "{err:?}");
    let err = IcechunkStore::open(&path, Version::Tag("v1".into()), false, None, &[], &[])
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, ZarrError::Unsupported(_)), "{err:?}");
}

#[test]
fn chunk_keys_name_their_array_and_coordinates() {
    let of = |k: &str| native::chunk_of_key(k).map(|(p, c)| (p.to_string(), c.0));
    assert_eq!(of("a/b/c/0/12"), Some(("/a/b".into(), vec![0, 12])));
    assert_eq!(of("c/3"), Some(("/".into(), vec![3])));
    assert_eq!(of("abc/c/1"), Some(("/abc".into(), vec![1])));
    assert_eq!(of("c/c/2"), Some(("/c".into(), vec![2])));
    assert_eq!(of("a/zarr.json"), None);
    assert_eq!(of("zarr.json"), None);
    assert_eq!(of("a/c/x"), None);
    assert_eq!(of("a/c/-1"), None);
    assert_eq!(of("a/.zarray"), None);
    assert_eq!(of("a/c"), None);
    assert_eq!(of("a/c/c/1"), Some(("/a/c".into(), vec![1])));
}

/// Chunks above icechunk's inline limit (512 bytes) are files of the
/// repository, read from them (native.rs): whole, by ranges, uncommitted
/// and committed, and missing ones as None; a truncated file is an error
/// naming the key.
#[test]
fn stored_chunks_of_a_local_repository_read_from_their_files() {
    let dir = TempDir::new("icechunk-native");
    let path = new_repo(&dir);
    let big: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let array = String::from_utf8(ARRAY.to_vec())
        .unwrap()
        .replace("\"shape\":[4]", "\"shape\":[16384]")
        .replace("\"chunk_shape\":[2]", "\"chunk_shape\":[4096]");
    let w = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    assert!(w.as_batched().is_none());
    w.set(&key("zarr.json"), GROUP).unwrap();
    w.set(&key("a/zarr.json"), array.as_bytes()).unwrap();
    w.set(&key("a/c/1"), &big).unwrap();
    // before the commit: the session's own chunk
    assert_eq!(
        w.get(&key("a/c/1"), ByteRange::All).unwrap(),
        Some(big.clone())
    );
    w.commit("big", Rebase::None).unwrap();
    let files: Vec<_> = std::fs::read_dir(format!("{path}/chunks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);

    let r = IcechunkStore::open(&path, branch("main"), true, None, &[], &[]).unwrap();
    let get = |k: &str, range| r.get(&key(k), range).unwrap();
    assert_eq!(get("a/c/1", ByteRange::All), Some(big.clone()));
    let range = ByteRange::Range {
        offset: 1000,
        length: 24,
    };
    assert_eq!(get("a/c/1", range), Some(big[1000..1024].to_vec()));
    assert_eq!(
        get("a/c/1", ByteRange::Suffix(5)),
        Some(big[4091..].to_vec())
    );
    assert_eq!(
        get("a/c/1", ByteRange::From(4000)),
        Some(big[4000..].to_vec())
    );
    assert_eq!(get("a/c/0", ByteRange::All), None);
    assert_eq!(get("a/c/3", ByteRange::All), None);
    // out of the grid: no chunk; an array that is not there: icechunk's
    // own answer, an error naming the key
    assert_eq!(get("a/c/9", ByteRange::All), None);
    match r.get(&key("b/c/0"), ByteRange::All) {
        Err(ZarrError::Io(m)) => assert!(m.contains("b/c/0"), "{m}"),
        other => panic!("expected an error, got {other:?}"),
    }
    let past = ByteRange::Range {
        offset: 4090,
        length: 10,
    };
    assert!(matches!(
        r.get(&key("a/c/1"), past),
        Err(ZarrError::CorruptChunk(_))
    ));

    std::fs::write(&files[0], &big[..100]).unwrap();
    match r.get(&key("a/c/1"), ByteRange::All) {
        Err(ZarrError::CorruptChunk(m)) => assert!(m.contains("a/c/1"), "{m}"),
        other => panic!("expected a corrupt chunk, got {other:?}"),
    }
}

#[test]
fn a_repository_on_a_web_server_is_opened_read_only_only() {
    let err = IcechunkStore::open(
        "http://127.0.0.1:9/repo",
        branch("main"),
        false,
        None,
        &[],
        &[],
    )
    .map(|_| ())
    .unwrap_err();
    match err {
        ZarrError::ReadOnly(m) => assert!(m.contains("http://127.0.0.1:9/repo"), "{m}"),
        other => panic!("expected ReadOnly, got {other:?}"),
    }
}

#[test]
fn a_read_only_session_refuses_writes_made_on_it_straight() {
    let dir = TempDir::new("icechunk_read_only");
    let path = new_repo(&dir);
    let w = IcechunkStore::open(&path, branch("main"), false, None, &[], &[]).unwrap();
    w.set(&key("zarr.json"), GROUP).unwrap();
    w.commit("group", Rebase::None).unwrap();
    let r = IcechunkStore::open(&path, branch("main"), true, None, &[], &[]).unwrap();
    let name = r.describe();
    for (got, what) in [
        (r.set(&key("a/zarr.json"), ARRAY), "write 'a/zarr.json'"),
        (r.erase(&key("zarr.json")), "erase 'zarr.json'"),
        (r.erase_prefix(&prefix("")), "erase prefix ''"),
    ] {
        let e = got.unwrap_err();
        assert_eq!(e.kind(), "read_only");
        assert_eq!(e.to_string(), format!("cannot {what}: {name} is read-only"));
    }
    assert!(!r.has_changes().unwrap());
    assert_eq!(
        r.get(&key("zarr.json"), ByteRange::All).unwrap().unwrap(),
        GROUP
    );
}
