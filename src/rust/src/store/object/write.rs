//! Writes to an object store: plain, multipart (large values) and
//! conditional on a version tag (metadata documents).

use super::*;
use crate::store::refuse_if_read_only;

impl ObjectStore {
    pub(super) async fn put_async(
        &self,
        key: &str,
        parts: &[&[u8]],
        mode: PutMode,
    ) -> Result<Option<String>> {
        // Every write, plain or conditional, comes through here.
        refuse_if_read_only(self, self.read_only, "write", key)?;
        let path = self.path(key);
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total >= self.options.multipart_threshold && matches!(mode, PutMode::Overwrite) {
            let upload = self
                .inner
                .put_multipart(&path)
                .await
                .map_err(|e| self.error("start the upload of", key, e))?;
            let w = os::WriteMultipart::new_with_chunk_size(upload, self.options.part_size);
            let mut guard = AbortUnfinished(Some(w), self.runtime);
            for p in parts {
                let Some(w) = guard.0.as_mut() else { break };
                // Bounds the parts in memory at once to the concurrency.
                if let Err(e) = w
                    .wait_for_capacity(self.options.max_concurrency.min(8))
                    .await
                {
                    // No upload is left behind, nor its parts billed.
                    if let Some(w) = guard.0.take() {
                        let _ = w.abort().await;
                    }
                    return Err(self.error("upload", key, e));
                }
                w.write(p);
            }
            // finish() aborts the upload itself when it fails.
            let finished = match guard.0.take() {
                Some(w) => w.finish().await,
                None => Err(os::Error::Generic {
                    store: "zarr",
                    source: "the upload was already ended".into(),
                }),
            };
            let r = finished.map_err(|e| self.error("upload", key, e))?;
            return Ok(r.e_tag);
        }
        let payload: PutPayload = parts.iter().map(|p| Bytes::copy_from_slice(p)).collect();
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let r = self
            .inner
            .put_opts(&path, payload, opts)
            .await
            .map_err(|e| self.error("write", key, e))?;
        Ok(r.e_tag)
    }
}

/// A multipart upload that is aborted if its write stops before it is
/// finished (an interrupt drops the write's future): an upload left open
/// keeps its parts in the bucket, billed and listed, until a lifecycle rule
/// removes it.
struct AbortUnfinished(Option<os::WriteMultipart>, crate::runtime::IoRuntime);

impl Drop for AbortUnfinished {
    fn drop(&mut self) {
        if let Some(w) = self.0.take() {
            self.1.spawn(async move {
                let _ = w.abort().await;
            });
        }
    }
}

impl Writes for ObjectStore {
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &StoreKey, parts: &[&[u8]]) -> Result<()> {
        crate::store::wait::block_on(self.runtime, self.put_async(key, parts, PutMode::Overwrite))
            .map(|_| ())
    }

    fn erase(&self, key: &StoreKey) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase", key)?;
        crate::store::wait::block_on(self.runtime, async {
            match self.inner.delete(&self.path(key)).await {
                Ok(()) | Err(os::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.error("erase", key, e)),
            }
        })
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        refuse_if_read_only(self, self.read_only, "erase prefix", prefix)?;
        crate::store::wait::block_on(self.runtime, async {
            let keys = self.list_async(prefix).await?;
            let paths: Vec<os::Result<Path>> = keys.iter().map(|k| Ok(self.path(k))).collect();
            let mut done = self.inner.delete_stream(stream::iter(paths).boxed());
            while let Some(r) = done.next().await {
                match r {
                    Ok(_) | Err(os::Error::NotFound { .. }) => {}
                    Err(e) => return Err(self.error("erase", prefix, e)),
                }
            }
            Ok(())
        })
    }
}

impl VersionedWrites for ObjectStore {
    /// The value at `key` and its version tag (ETag or generation), for a
    /// later [`ObjectStore::set_if_version`].
    fn get_versioned(&self, key: &StoreKey) -> Result<Option<(Vec<u8>, Option<String>)>> {
        crate::store::wait::block_on(self.runtime, async {
            match self.inner.get(&self.path(key)).await {
                Ok(r) => {
                    let tag = r.meta.e_tag.clone();
                    let bytes = r.bytes().await.map_err(|e| self.error("read", key, e))?;
                    Ok(Some((bytes.into(), tag)))
                }
                Err(os::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.error("read", key, e)),
            }
        })
    }

    /// Write `value` at `key` only if the value there is still the one of
    /// version `tag` (`None`: only if there is none yet). Another writer's
    /// change in between is a `Conflict` error, not a lost update. Returns
    /// the new version tag.
    fn set_if_version(
        &self,
        key: &StoreKey,
        value: &[u8],
        tag: Option<&str>,
    ) -> Result<Option<String>> {
        let mode = match tag {
            None => PutMode::Create,
            Some(t) => PutMode::Update(os::UpdateVersion {
                e_tag: Some(t.to_string()),
                version: None,
            }),
        };
        crate::store::wait::block_on(self.runtime, async {
            match self.put_async(key, &[value], mode).await {
                Err(ZarrError::Conflict(msg)) => self.own_write_or(key, value, msg).await,
                other => other,
            }
        })
    }
}

impl ObjectStore {
    /// After a conditional write was refused: a write whose answer was
    /// lost (the connection dropped after the server applied it) is tried
    /// again by object_store with the same condition, which the value it
    /// wrote itself now fails. When the value there is the one this write
    /// wrote, the write is done (its version tag is returned); otherwise
    /// another writer changed it and the refusal (`msg`) stands.
    async fn own_write_or(
        &self,
        key: &StoreKey,
        value: &[u8],
        msg: String,
    ) -> Result<Option<String>> {
        if let Ok(r) = self.inner.get(&self.path(key)).await {
            let tag = r.meta.e_tag.clone();
            if let Ok(now) = r.bytes().await {
                if now.as_ref() == value {
                    return Ok(tag);
                }
            }
        }
        Err(ZarrError::Conflict(msg))
    }
}
