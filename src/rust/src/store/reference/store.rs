//! The references as a read-only store: values, listings and sizes,
//! batched where the targets are on the web.

use super::*;

/// Put the keys directly below `prefix` ("" or ending in "/") of `keys`
/// into `listing`: keys as keys, deeper ones as their first sub-prefix.
fn add_direct<'a>(
    prefix: &str,
    keys: impl Iterator<Item = &'a str>,
    out_keys: &mut BTreeSet<String>,
    out_prefixes: &mut BTreeSet<String>,
) {
    for k in keys {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        match rest.find('/') {
            None => {
                out_keys.insert(k.to_string());
            }
            Some(i) => {
                out_prefixes.insert(k[..prefix.len() + i + 1].to_string());
            }
        }
    }
}

impl Store for RefStore {
    fn get(&self, key: &StoreKey, range: ByteRange) -> Result<Option<Vec<u8>>> {
        match self.resolve(key)? {
            None => Ok(None),
            Some(r) => self.read(key, &r, range).map(Some),
        }
    }

    fn exists(&self, key: &StoreKey) -> Result<bool> {
        Ok(self.resolve(key)?.is_some())
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>> {
        let Some(r) = self.resolve(key)? else {
            return Ok(None);
        };
        let target = match &r {
            Ref::Inline(data) => return Ok(Some(data.len() as u64)),
            Ref::Target {
                length: Some(len), ..
            } => return Ok(Some(*len)),
            Ref::Target { target, .. } => target,
        };
        match &target.kind {
            TargetKind::Local(path) => match std::fs::metadata(path) {
                Ok(m) if m.is_file() => Ok(Some(m.len())),
                Ok(_) => Err(ZarrError::NotFound(format!(
                    "reference '{key}': its target '{}' is not a file",
                    path.display()
                ))),
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                    Err(ZarrError::NotFound(format!(
                        "reference '{key}': its target file '{}' does not exist",
                        path.display()
                    )))
                }
                Err(e) => Err(ZarrError::Io(format!(
                    "reference '{key}': cannot read its target file '{}': {e}",
                    path.display()
                ))),
            },
            TargetKind::Http(url) => {
                let (store, http_key) = self.http.locate(url)?;
                web_target(key, url, store.size(&http_key)).map(Some)
            }
            TargetKind::Unusable(u) => Err(u.error(key)),
        }
    }

    fn describe(&self) -> String {
        match &self.source {
            Source::Json { base } => format!(
                "reference store ({} references, relative to {})",
                self.refs.len(),
                base.describe()
            ),
            Source::Parquet(lazy) => format!("Parquet reference store at {}", lazy.root_display()),
        }
    }

    /// References into http(s) files are fetched with up to 16 requests in
    /// flight, on scoped threads; the rest one after another. Results are
    /// in the order of `requests`.
    fn get_many(&self, requests: &[(StoreKey, ByteRange)]) -> Vec<Result<Option<Vec<u8>>>> {
        if let Source::Parquet(lazy) = &self.source {
            let keys: Vec<&str> = requests.iter().map(|(k, _)| k.as_str()).collect();
            lazy.load_for(&keys);
        }
        let resolved: Vec<Result<Option<Ref>>> =
            requests.iter().map(|(k, _)| self.resolve(k)).collect();
        let fetch = |i: usize| -> Result<Option<Vec<u8>>> {
            let (key, range) = &requests[i];
            match &resolved[i] {
                Err(e) => Err(e.clone()),
                Ok(None) => Ok(None),
                Ok(Some(r)) => self.read(key, r, *range).map(Some),
            }
        };
        let remote = resolved.iter().filter(|r| Self::is_http(r)).count();
        fetch_concurrently(requests.len(), remote.min(MAX_CONCURRENCY), fetch)
    }

    fn as_listable(&self) -> Option<&dyn Listing> {
        Some(self)
    }

    /// Batched when a target is an http(s) URL. For Parquet sets, the
    /// first reference file is looked at if none has been read yet.
    fn as_batched(&self) -> Option<&dyn BatchedReads> {
        self.has_http_targets().then_some(self as &dyn BatchedReads)
    }
}

impl Listing for RefStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        let mut keys: Vec<String> = self
            .refs
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(k, _)| k.starts_with(prefix.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        let lazy = self.lazy_keys(prefix, false)?;
        if !lazy.is_empty() {
            keys.extend(lazy);
            keys.sort_unstable();
            keys.dedup();
        }
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        let prefix = prefix.dir().into_owned();
        let mut keys = BTreeSet::new();
        let mut prefixes = BTreeSet::new();
        // Walk the sorted keys, jumping over each sub-prefix's keys: those
        // of "p/a/" all sort before "p/a0" ('0' follows '/').
        let mut from = prefix.clone();
        loop {
            let next = self
                .refs
                .range::<str, _>((
                    std::ops::Bound::Included(from.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .next();
            let Some((k, _)) = next else { break };
            let Some(rest) = k.strip_prefix(prefix.as_str()) else {
                break;
            };
            match rest.find('/') {
                None => {
                    keys.insert(k.clone());
                    from = format!("{k}\0");
                }
                Some(i) => {
                    let sub = &k[..prefix.len() + i + 1];
                    prefixes.insert(sub.to_string());
                    from = format!("{}0", &sub[..sub.len() - 1]);
                }
            }
        }
        let lazy = self.lazy_keys(&prefix, true)?;
        add_direct(
            &prefix,
            lazy.iter().map(|s| s.as_str()),
            &mut keys,
            &mut prefixes,
        );
        Ok(DirListing {
            keys: keys.into_iter().collect(),
            prefixes: prefixes.into_iter().collect(),
        })
    }
}

impl BatchedReads for RefStore {}

impl RefStore {
    fn has_http_targets(&self) -> bool {
        if self.any_http.load(Ordering::Relaxed) {
            return true;
        }
        if let Source::Parquet(lazy) = &self.source {
            if lazy.sample_any_http() {
                self.any_http.store(true, Ordering::Relaxed);
                return true;
            }
        }
        false
    }
}
