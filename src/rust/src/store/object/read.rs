//! Reads of an object store: ranged reads, and values received into a
//! [`Growing`] buffer that the engine may read while the rest arrives
//! (batched and streamed reads).

use super::*;

impl ObjectStore {
    pub(super) async fn get_async(
        &self,
        key: &StoreKey,
        range: ByteRange,
    ) -> Result<Option<Vec<u8>>> {
        // Nobody else holds the value: no copy.
        let got = self.get_growing_async(key, range, 0, None).await?;
        Ok(got.map(Growing::into_vec))
    }

    /// `range` of the value at `key`, received into a [`Growing`] value
    /// that `grew` (if any) hears of (with `at`) each time another
    /// `GROW_STEP` bytes are in.
    pub(super) async fn get_growing_async(
        &self,
        key: &StoreKey,
        range: ByteRange,
        at: usize,
        grew: Option<&GrewFn>,
    ) -> Result<Option<Arc<Growing>>> {
        let (got, expect_len) = match self.open_get(key, range).await? {
            Opened::Missing => return Ok(None),
            Opened::Empty => return Ok(Some(Growing::whole(Vec::new()))),
            Opened::Body(got, expect_len) => (got, expect_len),
        };
        let size = got.meta.size;
        let len = (got.range.end - got.range.start) as usize;
        // A range past the end is cut short by the server: report it as
        // every store does.
        if expect_len.is_some_and(|n| n != len as u64) {
            resolve_range(key, size, range)?;
        }
        let (value, mut filler) = Growing::with_len(len).ok_or_else(|| {
            ZarrError::Memory(format!(
                "no memory for the {len} bytes of '{key}' in {}",
                self.url()
            ))
        })?;
        let mut body = got.into_stream();
        let mut told = 0;
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(|e| self.error("read", key, e))?;
            if !filler.push(&piece) {
                return Err(self.short_body(key, len, "more"));
            }
            let n = value.filled().len();
            if let Some(grew) = grew.filter(|_| n - told >= GROW_STEP && n < len) {
                grew(at, &value);
                told = n;
            }
        }
        if !value.is_complete() {
            return Err(self.short_body(key, len, "fewer"));
        }
        Ok(Some(value))
    }

    fn short_body(&self, key: &str, len: usize, which: &str) -> ZarrError {
        ZarrError::Io(format!(
            "the answer for '{key}' in {} had {which} bytes than the {len} it announced",
            self.url()
        ))
    }

    /// The answer to a read of `range` of `key`, before its body: missing,
    /// empty (answered without a body), or to be read (with the length
    /// the range asks for, when it says).
    async fn open_get(&self, key: &StoreKey, range: ByteRange) -> Result<Opened> {
        let path = self.path(key);
        let (want, expect_len) = match range {
            ByteRange::All => (None, None),
            // object_store refuses empty ranges; they are answered by a
            // HEAD, which still says whether the value exists and is long
            // enough.
            ByteRange::Range { length: 0, .. } | ByteRange::Suffix(0) => {
                return match self.size_async(key).await? {
                    None => Ok(Opened::Missing),
                    Some(len) => {
                        resolve_range(key, len, range)?;
                        Ok(Opened::Empty)
                    }
                };
            }
            ByteRange::Range { offset, length } => (
                Some(GetRange::Bounded(offset..offset.saturating_add(length))),
                Some(length),
            ),
            ByteRange::From(offset) => (Some(GetRange::Offset(offset)), None),
            // Azure Blob Storage has no suffix ranges ("bytes=-n"): the
            // size comes first, from a HEAD, then the range from it: one
            // more request per shard index on Azure.
            ByteRange::Suffix(n) if self.cloud == Cloud::Azure => {
                let Some(size) = self.size_async(key).await? else {
                    return Ok(Opened::Missing);
                };
                if n > size {
                    resolve_range(key, size, range)?;
                }
                (Some(GetRange::Bounded(size - n..size)), Some(n))
            }
            ByteRange::Suffix(n) => (Some(GetRange::Suffix(n)), Some(n)),
        };
        let opts = GetOptions {
            range: want,
            ..Default::default()
        };
        match self.inner.get_opts(&path, opts).await {
            Ok(r) => Ok(Opened::Body(r, expect_len)),
            Err(os::Error::NotFound { .. }) => Ok(Opened::Missing),
            Err(e) => Err(self.range_error(key, range, e)),
        }
    }

    /// A ranged read the server refused (416, or object_store's own check)
    /// is an out-of-bounds range; everything else keeps its kind.
    fn range_error(&self, key: &str, range: ByteRange, e: os::Error) -> ZarrError {
        let text = e.to_string();
        if range != ByteRange::All
            && (text.contains("416") || text.contains("Range") || text.contains("range"))
            && !matches!(
                e,
                os::Error::PermissionDenied { .. }
                    | os::Error::Unauthenticated { .. }
                    | os::Error::NotSupported { .. }
            )
        {
            return ZarrError::CorruptChunk(format!(
                "byte range {range:?} is past the end of '{key}' in {}",
                self.url()
            ));
        }
        self.error("read", key, e)
    }
}

/// See `ObjectStore::open_get`.
// One per request, never stored: a box would cost an allocation per read
// (the size comes from object_store's "fs" feature, which icechunk turns on).
#[allow(clippy::large_enum_variant)]
enum Opened {
    Missing,
    Empty,
    Body(os::GetResult, Option<u64>),
}

/// How many more bytes of a value the engine hears of at a time: about a
/// compressed inner chunk, few enough wake-ups of the engine's threads.
const GROW_STEP: usize = 256 << 10;

/// A request's task, cancelled when its read stops waiting for it (an
/// error elsewhere, an interrupt): no request goes on after its read ended.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = std::result::Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl BatchedReads for ObjectStore {
    fn get_each(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        arrived: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> bool,
    ) {
        // Nobody else holds a value handed over whole: no copy.
        self.get_each_growing(requests, in_flight, Arc::new(|_, _| {}), &mut |i, got| {
            arrived(i, got.map(|v| v.map(Growing::into_vec)))
        })
    }
}

impl StreamedReads for ObjectStore {
    fn get_each_growing(
        &self,
        requests: &[(StoreKey, ByteRange)],
        in_flight: usize,
        grew: GrewFn,
        arrived: &mut dyn FnMut(usize, Result<Option<Arc<Growing>>>) -> bool,
    ) {
        let in_flight = in_flight.clamp(1, self.options.max_concurrency);
        // Each request is a task of the runtime, on the worker threads
        // where hyper's connection tasks receive the bodies: a body's
        // pieces are gathered there (and `grew` called there), and only
        // whole values cross to this thread. Gathered here, every piece
        // woke this thread from another one (a futex wake and a task
        // switch per piece).
        let me = Arc::new(self.clone());
        // On the fetching thread, not R's: the read that waits for these
        // values is the one that answers an interrupt (engine/fetch.rs),
        // and ends this wait, with its requests, when it stops.
        let _ = crate::store::wait::block_on(self.runtime, async {
            let mut got = stream::iter(requests.iter().enumerate().map(|(i, (k, r))| {
                let (me, key, range, grew) = (Arc::clone(&me), k.clone(), *r, Arc::clone(&grew));
                let task = self
                    .runtime
                    .spawn(async move { me.get_growing_async(&key, range, i, Some(&grew)).await });
                async move { (i, AbortOnDrop(task).await) }
            }))
            .buffer_unordered(in_flight);
            while let Some((i, value)) = got.next().await {
                let value = match value {
                    Ok(v) => v,
                    // A panic in a request reaches the fetching thread, as
                    // it did when the request ran there.
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    Err(e) => Err(ZarrError::Io(format!("a read was cancelled: {e}"))),
                };
                if !arrived(i, value) {
                    break;
                }
            }
            Ok(())
        });
    }
}
