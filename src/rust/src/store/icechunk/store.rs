//! The Zarr keys of one session, as a store.

use super::*;
use crate::store::{refuse_if_read_only, BatchedReads, Listing, Writes};

impl Writes for IcechunkStore {
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "write", key)?;
        self.wait(async {
            self.store
                .set(key, bytes::Bytes::copy_from_slice(value))
                .await
                .map_err(|e| {
                    ic_error(
                        &format!("cannot write '{}' to {}", &**key, self.describe()),
                        e,
                    )
                })
        })
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase", key)?;
        self.wait(async {
            match self.store.delete(key).await {
                Ok(()) => Ok(()),
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(()),
                Err(e) => Err(ic_error(
                    &format!("cannot erase '{}' of {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase prefix", prefix)?;
        self.wait(async {
            self.store.delete_dir(prefix).await.map_err(|e| {
                ic_error(
                    &format!("cannot erase '{}' of {}", &**prefix, self.describe()),
                    e,
                )
            })
        })
    }
}

impl Listing for IcechunkStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        self.wait(async {
            let stream = self
                .store
                .list_prefix(prefix)
                .await
                .map_err(|e| self.listed(prefix, e))?;
            let mut keys: Vec<String> = stream
                .try_collect()
                .await
                .map_err(|e| self.listed(prefix, e))?;
            keys.retain(|k| k.starts_with(&**prefix));
            keys.sort();
            Ok(keys)
        })
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        self.wait(async {
            let stream = self
                .store
                .list_dir_items(prefix)
                .await
                .map_err(|e| self.listed(prefix, e))?;
            let items: Vec<_> = stream
                .try_collect()
                .await
                .map_err(|e| self.listed(prefix, e))?;
            // icechunk names them relative to the prefix; the Store trait
            // from the root.
            let dir = prefix.dir();
            let mut out = DirListing::default();
            for item in items {
                match item {
                    icechunk::store::ListDirItem::Key(k) => out.keys.push(format!("{dir}{k}")),
                    icechunk::store::ListDirItem::Prefix(p) => out
                        .prefixes
                        .push(format!("{dir}{}/", p.trim_end_matches('/'))),
                }
            }
            out.keys.sort();
            out.prefixes.sort();
            Ok(out)
        })
    }
}

impl Store for IcechunkStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        self.wait(self.get_async(key, range))
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        self.wait(async {
            match self.store.exists(key).await {
                Ok(found) => Ok(found),
                // a Zarr v2 key, or a node that is not there
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(false),
                Err(e) => Err(ic_error(
                    &format!("cannot look for '{}' in {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        self.wait(async {
            match self.store.getsize(key).await {
                Ok(n) => Ok(Some(n)),
                Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(None),
                Err(e) => Err(ic_error(
                    &format!("cannot size '{}' of {}", &**key, self.describe()),
                    e,
                )),
            }
        })
    }

    fn describe(&self) -> String {
        format!(
            "Icechunk repository at '{}' ({})",
            self.location,
            name(&self.version)
        )
    }

    /// Concurrently: virtual chunks may be on a web server.
    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        let all = self.wait(async {
            Ok(
                futures::stream::iter(requests.iter().map(|(k, r)| self.get_async(k, *r)))
                    .buffered(16)
                    .collect::<Vec<_>>()
                    .await,
            )
        });
        match all {
            Ok(v) => v,
            Err(e) => requests.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    fn as_writable(&self) -> Option<&dyn Writes> {
        (!self.read_only).then_some(self as &dyn Writes)
    }

    fn as_listable(&self) -> Option<&dyn Listing> {
        Some(self)
    }

    /// A repository in an object store or on a web server waits on the
    /// network for every chunk: the engine then keeps many requests in
    /// flight (one at a time per thread made reads of moto S3 1.4-2 times
    /// slower than a plain store's). A local one reads its chunk files on
    /// the engine's threads (native.rs).
    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        match self.chunks {
            None => Some(self),
            Some(_) => None,
        }
    }
}

impl BatchedReads for IcechunkStore {
    /// Each value handed over as it arrives, `in_flight` requests out.
    fn get_each(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
    ) {
        // Each request is a task of the runtime, whose workers receive the
        // bodies: only whole values cross to this thread (gathered here,
        // every piece of a body woke this thread). The read that waits for
        // these values answers an interrupt (engine/fetch.rs): the wait
        // ends, the set is dropped and its tasks are aborted with it.
        let _ = self.wait(async {
            let mut tasks = tokio::task::JoinSet::new();
            let mut next = requests.iter().enumerate();
            loop {
                while tasks.len() < in_flight.max(1) {
                    let Some((i, (k, r))) = next.next() else {
                        break;
                    };
                    let (store, key, range) =
                        (self.store.clone(), String::from(&**k), ic_range(*r));
                    tasks.spawn(async move { (i, store.get(&key, &range).await) });
                }
                let (i, got) = match tasks.join_next().await {
                    None => break,
                    Some(Ok(done)) => done,
                    Some(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    // only the set's drop cancels its tasks
                    Some(Err(_)) => break,
                };
                if !arrived(i, self.answer(&requests[i].0, got)) {
                    break;
                }
            }
            Ok(())
        });
    }
}
