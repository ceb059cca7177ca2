//! An in-memory store: the abstract store interface of v3-core.rst
//! ("Abstract store interface") over a sorted map, for tests and scratch
//! arrays. Values are shared (`Arc`) so a read holds the lock only for a
//! lookup, not for the copy.

use super::*;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

type Map = BTreeMap<String, Arc<Vec<u8>>>;

pub struct MemoryStore {
    map: RwLock<Map>,
    read_only: bool,
}

impl MemoryStore {
    pub fn new(read_only: bool) -> MemoryStore {
        MemoryStore {
            map: RwLock::new(BTreeMap::new()),
            read_only,
        }
    }

    /// The same keys and values, refusing writes from now on (a read-only
    /// store made by `new` would be empty forever).
    pub fn into_read_only(self) -> MemoryStore {
        MemoryStore {
            map: self.map,
            read_only: true,
        }
    }

    // No operation panics half-way through a change of the map, so a
    // poisoned lock still guards a consistent map and can be used.
    fn read(&self) -> RwLockReadGuard<'_, Map> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Map> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The keys starting with `prefix`, in order.
    fn keys_from<'a>(map: &'a Map, prefix: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        map.range::<str, _>((
            std::ops::Bound::Included(prefix),
            std::ops::Bound::Unbounded,
        ))
        .map(|(k, _)| k)
        .take_while(move |k| k.starts_with(prefix))
    }
}

// By hand: a derived Debug would print every value.
impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("keys", &self.read().len())
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        let Some(value) = self.read().get(key.as_str()).cloned() else {
            return Ok(None);
        };
        let (start, end) = resolve_range(key, value.len() as u64, range)?;
        Ok(Some(value[start as usize..end as usize].to_vec()))
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        Ok(self.read().contains_key(key.as_str()))
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        Ok(self.read().get(key.as_str()).map(|v| v.len() as u64))
    }

    fn describe(&self) -> String {
        "memory store".to_string()
    }

    fn as_writable(&self) -> Option<&dyn Writes> {
        (!self.read_only).then_some(self as &dyn Writes)
    }

    fn as_listable(&self) -> Option<&dyn Listing> {
        Some(self)
    }
}

impl Writes for MemoryStore {
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "write", key)?;
        // Copy before taking the lock, so other threads wait only for the insert.
        let value = Arc::new(value.to_vec());
        self.write().insert(key.to_string(), value);
        Ok(())
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase", key)?;
        self.write().remove(key.as_str());
        Ok(())
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase prefix", prefix)?;
        let mut map = self.write();
        if prefix.is_empty() {
            map.clear();
        } else {
            let doomed: Vec<String> = Self::keys_from(&map, prefix).cloned().collect();
            for key in doomed {
                map.remove(&key);
            }
        }
        Ok(())
    }
}

impl Listing for MemoryStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        let map = self.read();
        Ok(Self::keys_from(&map, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        let prefix = prefix.dir().into_owned();
        let map = self.read();
        let mut listing = DirListing::default();
        for key in Self::keys_from(&map, &prefix) {
            let rest = &key[prefix.len()..];
            match rest.find('/') {
                None => listing.keys.push(key.clone()),
                Some(i) => {
                    let sub = &key[..prefix.len() + i + 1];
                    // Keys sharing a sub-prefix are adjacent in the map.
                    if listing.prefixes.last().map(String::as_str) != Some(sub) {
                        listing.prefixes.push(sub.to_string());
                    }
                }
            }
        }
        Ok(listing)
    }
}
