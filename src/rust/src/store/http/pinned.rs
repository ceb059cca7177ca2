//! Ranges of one version of a value: a shard's inner chunks asked for
//! with `If-Match: <ETag of its index>`.

use super::*;

impl PinnedReads for HttpStore {
    /// Later ranges are asked for with `If-Match: <ETag of the first>`, so
    /// they come from the same version or fail with `Conflict`. A server
    /// that gives no strong ETag cannot pin: its later ranges are read as
    /// `get` reads them.
    fn get_pinned<'s>(
        &'s self,
        key: &StoreKey,
        range: ByteRange,
    ) -> Result<Option<PinnedRead<'s>>> {
        let got = self
            .client
            .run(|http| async move { self.fetch(&http, key, range, None).await })?;
        Ok(got.map(|(bytes, etag)| {
            let pinned = PinnedHttp {
                store: self,
                key: key.clone(),
                etag,
            };
            (bytes, Box::new(pinned) as Box<dyn Pinned + 's>)
        }))
    }
}

/// One version of one value of an [`HttpStore`], by its ETag.
struct PinnedHttp<'s> {
    store: &'s HttpStore,
    key: StoreKey,
    etag: Option<String>,
}

impl PinnedHttp<'_> {
    fn found(&self, got: Result<Option<Versioned>>) -> Result<Vec<u8>> {
        match got? {
            Some((bytes, _)) => Ok(bytes),
            // Deleted since: another version too.
            None => Err(changed(&self.key, &self.store.key_url(&self.key))),
        }
    }
}

impl Pinned for PinnedHttp<'_> {
    fn get(&self, range: ByteRange) -> Result<Vec<u8>> {
        let pin = self.etag.as_deref();
        let got = self
            .store
            .client
            .run(|http| async move { self.store.fetch(&http, &self.key, range, pin).await });
        self.found(got)
    }

    fn get_many(&self, ranges: &[ByteRange]) -> Vec<Result<Vec<u8>>> {
        let requests: Vec<(&StoreKey, ByteRange)> =
            ranges.iter().map(|r| (&self.key, *r)).collect();
        self.store
            .fetch_many(&requests, self.etag.as_deref())
            .into_iter()
            .map(|got| self.found(got))
            .collect()
    }
}
