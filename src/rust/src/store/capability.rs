//! What a store can do beyond the core [`Store`] trait (reading), each as
//! a trait of its own that a store offers through one of `Store::as_*()`
//! (None: it cannot). A caller asks once and takes the plain path, or
//! refuses, when the answer is None; the functions at the end of this file
//! do that for the callers that want one call whatever the store.
//!
//! Writes are offered by every store that is not read-only (a store
//! opened read-only answers None, so no write can reach it), listings by
//! every store that can enumerate its keys (not HTTP). Beyond those, a
//! store implements a capability only when it really has it: batched
//! reads for stores whose requests wait on a network, streamed values for
//! a store that hands bodies over while they arrive, direct reads for
//! files read straight into the caller's buffers, pinned reads for stores
//! that can read several ranges of one version of a value, versioned
//! writes for stores with a compare-and-swap.

use super::{
    read_only_error, ByteRange, DirListing, GrewFn, Growing, Store, StoreKey, StorePrefix,
};
use crate::error::{Result, ZarrError};
use std::sync::Arc;

/// Changing values: what `Store::as_writable()` offers. A store opened
/// read-only answers None there, and refuses these calls made on it
/// straight (`refuse_if_read_only`); a store that can never write (HTTP,
/// references) does not implement them.
pub trait Writes: Send + Sync {
    /// Store `value` at `key`, replacing what was there.
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()>;
    /// Store the concatenation of `parts` at `key`. Stores that write
    /// files override this to write the parts one after another, without
    /// assembling the value in memory first (a shard and its index).
    fn set_parts(&self, key: &StoreKey, parts: &[&[u8]]) -> Result<()> {
        self.set(key, &parts.concat())
    }
    /// Remove `key`; removing a key that does not exist is not an error.
    fn erase(&self, key: &StoreKey) -> Result<()>;
    /// Remove every key that starts with `prefix`.
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()>;
}

/// Enumerating keys: what `Store::as_listable()` offers.
pub trait Listing: Send + Sync {
    /// Every key in the store, sorted.
    fn list(&self) -> Result<Vec<String>> {
        self.list_prefix(&StorePrefix::root())
    }
    /// Every key that starts with `prefix`, sorted.
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>>;
    /// Keys and prefixes directly below `prefix` ("" or ending in "/").
    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing>;
}

/// Reads that go out together: a store whose every request waits on a
/// network. The engine keeps many requests in flight with `get_each`
/// (and decodes each value as it comes) instead of one `get` per decode
/// task.
pub trait BatchedReads: Store {
    /// Fetch several values with up to `in_flight` requests out at once,
    /// handing each to `arrived` (with its position in `requests`) as it
    /// comes in, on the calling thread; when `arrived` returns false no
    /// further request starts. The default fetches up to 64 at a time
    /// with `get_many` (a window is handed over once all of it is in, and
    /// the next is fetched while it is decoded); stores that can hand
    /// values over one by one as they arrive override it.
    fn get_each(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
    ) {
        get_each_in_windows(self, requests, in_flight, arrived)
    }
}

/// Values handed over while their bytes arrive.
pub trait StreamedReads: Send + Sync {
    /// `get_each`, with each value in a [`Growing`] that `grew` is told
    /// of (from any thread, with the request's position) as its bytes
    /// come in, before `arrived` gets it complete.
    fn get_each_growing(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        grew: GrewFn,
        arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
    );
}

/// Values read straight into the caller's buffers.
pub trait DirectReads: Send + Sync {
    /// Read the whole value at `key` straight into `bufs`, one after
    /// another, if it is exactly as long as they are together. A value of
    /// another length gives `Direct::NotDone`, and the caller reads it
    /// with `get`; the buffers may then hold anything.
    fn get_direct(&self, key: &StoreKey, bufs: &mut [std::io::IoSliceMut<'_>]) -> Result<Direct>;
}

/// The outcome of `DirectReads::get_direct`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// The buffers hold the whole value.
    Done,
    /// There is no value at the key.
    Missing,
    /// Nothing usable was read; read the value with `get`.
    NotDone,
}

/// Several ranges of one version of a value, whatever writers do
/// meanwhile: a shard's inner chunks must come from the shard its index
/// came from.
pub trait PinnedReads: Send + Sync {
    /// `range` of the value at `key`, and a handle that reads more ranges
    /// of that same version. None when there is no value.
    fn get_pinned<'s>(&'s self, key: &StoreKey, range: ByteRange)
        -> Result<Option<PinnedRead<'s>>>;
}

/// What `get_pinned` gives: the first range, and the pinned value.
pub type PinnedRead<'s> = (Vec<u8>, Box<dyn Pinned + 's>);

/// One version of one value (see [`PinnedReads`]).
pub trait Pinned: Send + Sync {
    /// `range` of the pinned value.
    fn get(&self, range: ByteRange) -> Result<Vec<u8>>;
    /// Several ranges of the pinned value, results in their order. Stores
    /// with latency override it to ask for them concurrently.
    fn get_many(&self, ranges: &[ByteRange]) -> Vec<Result<Vec<u8>>> {
        ranges.iter().map(|r| self.get(*r)).collect()
    }
}

/// Writes conditional on the version of the value there (an object
/// store's ETag or generation), so that two processes updating one
/// metadata document cannot lose an update silently. Offered only by a
/// store that also offers `Writes`.
pub trait VersionedWrites: Send + Sync {
    /// The value at `key` and a tag of its version for `set_if_version`.
    fn get_versioned(&self, key: &StoreKey) -> Result<Option<(Vec<u8>, Option<String>)>>;
    /// Write `value` at `key` only if it is still at version `tag` (with
    /// `None`: only if there is no value yet); the loser of a race gets
    /// `ZarrError::Conflict`. Returns the new version tag.
    fn set_if_version(
        &self,
        key: &StoreKey,
        value: &[u8],
        tag: Option<&str>,
    ) -> Result<Option<String>>;
}

/// The writes of `store`; a read-only store's refusal to `what` (write,
/// erase, erase prefix) names the store and `key`.
pub fn writable<'s, S: Store + ?Sized>(
    store: &'s S,
    what: &str,
    key: &str,
) -> Result<&'s dyn Writes> {
    store
        .as_writable()
        .ok_or_else(|| read_only_error(&store.describe(), what, key))
}

/// The refusal of a `Writes` (or `VersionedWrites`) call made straight on
/// a store opened read-only, which `as_writable()` would not have offered:
/// the error `writable()` gives.
pub(crate) fn refuse_if_read_only<S: Store + ?Sized>(
    store: &S,
    read_only: bool,
    what: &str,
    key: &str,
) -> Result<()> {
    if read_only {
        return Err(read_only_error(&store.describe(), what, key));
    }
    Ok(())
}

/// The listings of `store`; a store that cannot list refuses with an
/// error naming it and `prefix`.
pub fn listable<'s, S: Store + ?Sized>(store: &'s S, prefix: &str) -> Result<&'s dyn Listing> {
    store.as_listable().ok_or_else(|| {
        ZarrError::Unsupported(format!(
            "cannot list '{prefix}': listing is not supported by {}",
            store.describe()
        ))
    })
}

/// `get_each` of a store: its own where it batches, else windows of up
/// to 64 values fetched with `get_many`.
fn get_each_in_windows<S: Store + ?Sized>(
    store: &S,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
) {
    let mut at = 0;
    for part in requests.chunks(in_flight.clamp(1, 64)) {
        for got in store.get_many(part) {
            if !arrived(at, got) {
                return;
            }
            at += 1;
        }
    }
}

/// `StreamedReads::get_each_growing` where the store streams; otherwise
/// each value is handed over once it is all there, through the store's
/// batches where it has them.
pub fn get_each_growing<S: Store + ?Sized>(
    store: &S,
    requests: &[(StoreKey, ByteRange)],
    in_flight: usize,
    grew: GrewFn,
    arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
) {
    if let Some(streamed) = store.as_streamed() {
        return streamed.get_each_growing(requests, in_flight, grew, arrived);
    }
    let mut whole =
        |i, got: Result<Option<Vec<u8>>>| arrived(i, got.map(|v| v.map(Growing::whole)));
    match store.as_batched() {
        Some(batched) => batched.get_each(requests, in_flight, &mut whole),
        None => get_each_in_windows(store, requests, in_flight, &mut whole),
    }
}

/// `PinnedReads::get_pinned` where the store can pin a version; otherwise
/// later ranges are read with `get`, from whatever version is there then.
pub fn get_pinned<'s, S: Store + ?Sized>(
    store: &'s S,
    key: &StoreKey,
    range: ByteRange,
) -> Result<Option<PinnedRead<'s>>> {
    if let Some(pinned) = store.as_pinned() {
        return pinned.get_pinned(key, range);
    }
    Ok(store.get(key, range)?.map(|b| {
        (
            b,
            Box::new(Latest {
                store,
                key: key.clone(),
            }) as Box<dyn Pinned>,
        )
    }))
}

/// `VersionedWrites::get_versioned` where the store has versions;
/// otherwise the value with no tag.
pub fn get_versioned<S: Store + ?Sized>(
    store: &S,
    key: &StoreKey,
) -> Result<Option<(Vec<u8>, Option<String>)>> {
    match store.as_versioned() {
        Some(v) => v.get_versioned(key),
        None => Ok(store.get(key, ByteRange::All)?.map(|v| (v, None))),
    }
}

/// `VersionedWrites::set_if_version` where the store has it; otherwise
/// the read-only error of a store that cannot write, or an `Unsupported`
/// error naming the store and the key.
pub fn set_if_version<S: Store + ?Sized>(
    store: &S,
    key: &StoreKey,
    value: &[u8],
    tag: Option<&str>,
) -> Result<Option<String>> {
    writable(store, "write", key)?;
    match store.as_versioned() {
        Some(v) => v.set_if_version(key, value, tag),
        None => Err(ZarrError::Unsupported(format!(
            "{} has no conditional writes (key '{key}')",
            store.describe()
        ))),
    }
}

/// The `Pinned` of a store that cannot pin: whatever version the store
/// holds at each read.
struct Latest<'s, S: Store + ?Sized> {
    store: &'s S,
    key: StoreKey,
}

impl<S: Store + ?Sized> Latest<'_, S> {
    fn found(&self, got: Result<Option<Vec<u8>>>) -> Result<Vec<u8>> {
        got?.ok_or_else(|| {
            ZarrError::CorruptChunk(format!("'{}' disappeared while it was read", self.key))
        })
    }
}

impl<S: Store + ?Sized> Pinned for Latest<'_, S> {
    fn get(&self, range: ByteRange) -> Result<Vec<u8>> {
        self.found(self.store.get(&self.key, range))
    }

    /// The store's own batches, concurrent where the store has latency.
    fn get_many(&self, ranges: &[ByteRange]) -> Vec<Result<Vec<u8>>> {
        let requests: Vec<(StoreKey, ByteRange)> =
            ranges.iter().map(|r| (self.key.clone(), *r)).collect();
        self.store
            .get_many(&requests)
            .into_iter()
            .map(|got| self.found(got))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::TempDir;
    use super::super::*;

    /// The capabilities `store` offers, by name.
    fn offered(store: &dyn Store) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (name, has) in [
            ("writable", store.as_writable().is_some()),
            ("listable", store.as_listable().is_some()),
            ("batched", store.as_batched().is_some()),
            ("streamed", store.as_streamed().is_some()),
            ("direct", store.as_direct().is_some()),
            ("pinned", store.as_pinned().is_some()),
            ("versioned", store.as_versioned().is_some()),
        ] {
            if has {
                out.push(name);
            }
        }
        out
    }

    #[test]
    fn each_store_offers_the_capabilities_it_has_and_no_other() {
        assert_eq!(offered(&MemoryStore::new(false)), ["writable", "listable"]);
        assert_eq!(offered(&MemoryStore::new(true)), ["listable"]);
        let dir = TempDir::new("capabilities");
        let root = dir.0.to_str().unwrap();
        let fs_has: &[&str] = if cfg!(unix) {
            &["writable", "listable", "direct", "pinned"]
        } else {
            &["writable", "listable", "direct"]
        };
        assert_eq!(offered(&FsStore::open(root, false, true).unwrap()), fs_has);
        let read_only = FsStore::open(root, true, false).unwrap();
        assert_eq!(offered(&read_only), fs_has[1..]);
        let http = HttpStore::open("http://127.0.0.1:9/data").unwrap();
        assert_eq!(offered(&http), ["batched", "pinned"]);
        let object = ObjectStore::open("s3://bkt/p", &[], false, Some(true)).unwrap();
        assert_eq!(
            offered(&object),
            ["writable", "listable", "batched", "streamed", "versioned"]
        );
        // Read-only: neither plain nor conditional writes.
        let object = ObjectStore::open("s3://bkt/p", &[], true, Some(true)).unwrap();
        assert_eq!(offered(&object), ["listable", "batched", "streamed"]);
        let local_refs = RefStore::from_json(br#"{"version": 1, "refs": {"a": "x"}}"#, "").unwrap();
        assert_eq!(offered(&local_refs), ["listable"]);
        let remote_refs = RefStore::from_json(
            br#"{"version": 1, "refs": {"a": ["http://127.0.0.1:9/f", 0, 1]}}"#,
            "",
        )
        .unwrap();
        assert_eq!(offered(&remote_refs), ["listable", "batched"]);
    }

    #[test]
    fn a_missing_write_or_listing_is_refused_naming_the_store_and_the_key() {
        let store = MemoryStore::new(true);
        let e = store.set_str("a/c/0", b"x").unwrap_err();
        assert_eq!(e.kind(), "read_only");
        assert_eq!(
            e.to_string(),
            "cannot write 'a/c/0': memory store is read-only"
        );
        let e = store.erase_prefix_str("a/").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot erase prefix 'a/': memory store is read-only"
        );
        let e = set_if_version(&store, &StoreKey::new("k").unwrap(), b"x", None).unwrap_err();
        assert_eq!(e.kind(), "read_only");
        let http = HttpStore::open("http://127.0.0.1:9/data").unwrap();
        let e = http.list_dir_str("a/").unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        let said =
            "cannot list 'a/': listing is not supported by HTTP store at http://127.0.0.1:9/data";
        assert!(e.to_string().starts_with(said), "{e}");
    }

    /// Whether a store type implements `Writes` at all: the inherent
    /// constant where the bound holds, the trait's default otherwise.
    struct Probe<T>(std::marker::PhantomData<T>);
    trait NoWrites {
        const WRITES: bool = false;
    }
    impl<T> NoWrites for Probe<T> {}
    impl<T: Writes> Probe<T> {
        const WRITES: bool = true;
    }

    #[test]
    fn read_only_stores_refuse_writes_made_on_them_straight() {
        let dir = TempDir::new("read_only_direct");
        let root = dir.0.to_str().unwrap();
        let writable = FsStore::open(root, false, true).unwrap();
        writable
            .set(&StoreKey::new("a/k").unwrap(), b"kept")
            .unwrap();
        let fs = FsStore::open(root, true, false).unwrap();
        let memory = MemoryStore::new(true);
        let object = ObjectStore::open("s3://bkt/p", &[], true, Some(true)).unwrap();
        let stores: [&dyn Writes; 3] = [&fs, &memory, &object];
        let named = [fs.describe(), memory.describe(), object.describe()];
        let key = StoreKey::new("a/k").unwrap();
        let prefix = StorePrefix::new("a/").unwrap();
        for (store, name) in stores.iter().zip(&named) {
            let refused = [
                (store.set(&key, b"x"), "write 'a/k'"),
                (store.set_parts(&key, &[b"x", b"y"]), "write 'a/k'"),
                (store.erase(&key), "erase 'a/k'"),
                (store.erase_prefix(&prefix), "erase prefix 'a/'"),
            ];
            for (got, what) in refused {
                let e = got.unwrap_err();
                assert_eq!(e.kind(), "read_only", "{name}");
                assert_eq!(e.to_string(), format!("cannot {what}: {name} is read-only"));
            }
        }
        // Nothing reached the files.
        assert_eq!(fs.get(&key, ByteRange::All).unwrap().unwrap(), b"kept");
        // Conditional writes too, without a request going out.
        let e = VersionedWrites::set_if_version(&object, &key, b"x", None).unwrap_err();
        assert_eq!(e.kind(), "read_only");
        assert!(e.to_string().contains("s3://bkt/p"), "{e}");
        // Stores that can never write do not implement it (checked when
        // the tests compile).
        const {
            assert!(<Probe<FsStore>>::WRITES && <Probe<MemoryStore>>::WRITES);
            assert!(!<Probe<HttpStore>>::WRITES && !<Probe<RefStore>>::WRITES);
        }
    }

    #[test]
    fn stores_without_a_capability_get_the_plain_behaviour() {
        let store = MemoryStore::new(false);
        let key = StoreKey::new("k").unwrap();
        store.set(&key, b"value").unwrap();
        // Versions: the value with no tag; conditional writes refused.
        assert_eq!(
            get_versioned(&store, &key).unwrap(),
            Some((b"value".to_vec(), None))
        );
        let e = set_if_version(&store, &key, b"new", None).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(e.to_string().contains("memory store"), "{e}");
        assert_eq!(store.get(&key, ByteRange::All).unwrap().unwrap(), b"value");
        // Pinned: later ranges read what is there at each read.
        let (first, pinned) = get_pinned(&store, &key, ByteRange::Suffix(2))
            .unwrap()
            .unwrap();
        assert_eq!(first, b"ue");
        store.set(&key, b"VALUE").unwrap();
        assert_eq!(pinned.get(ByteRange::From(3)).unwrap(), b"UE");
        assert!(
            get_pinned(&store, &StoreKey::new("none").unwrap(), ByteRange::All)
                .unwrap()
                .is_none()
        );
        // Growing values: each one whole, in order, through `get_many`.
        let requests = vec![
            (
                key.clone(),
                ByteRange::Range {
                    offset: 1,
                    length: 2,
                },
            ),
            (StoreKey::new("none").unwrap(), ByteRange::All),
        ];
        let mut got = Vec::new();
        get_each_growing(&store, &requests, 4, Arc::new(|_, _| {}), &mut |i, v| {
            let v = v.unwrap().map(Growing::into_vec);
            got.push((i, v));
            true
        });
        assert_eq!(got, [(0, Some(b"AL".to_vec())), (1, None)]);
    }
}
