//! The process-wide objects that own threads or connections: the engine's
//! worker pool, the tokio runtime of the object stores, the HTTP store's
//! runtime and clients, and the object stores' clients. All of them follow
//! one fork-safety rule.
//!
//! A process forked after such an object was made (`parallel::mclapply()`,
//! `future::plan(multicore)`) inherits the object but not its threads: work
//! handed to the parent's pool would never run, a request on the parent's
//! runtime would never be polled, and a kept connection belongs to a
//! socket the parent still reads. Dropping them is no better: it would
//! join threads that are not there or deregister the parent's sockets. So
//! every object here is kept with the process id it was made in
//! ([`PerProcess`]); a child makes its own on first use and forgets (never
//! drops) the parent's.

use crate::error::{Result, ZarrError};
use crate::steer::Steer;
use futures::future::{FutureExt, Shared};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Objects of type `V` by key `K`, each made once per process.
pub struct PerProcess<K, V> {
    kept: Mutex<Vec<(u32, K, V)>>,
}

impl<K: PartialEq, V: Clone> PerProcess<K, V> {
    pub const fn new() -> PerProcess<K, V> {
        PerProcess {
            kept: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u32, K, V)>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The object kept for `key` in this process, if any.
    pub fn get(&self, key: &K) -> Option<V> {
        let pid = std::process::id();
        self.lock()
            .iter()
            .find(|(made_in, k, _)| *made_in == pid && k == key)
            .map(|(_, _, v)| v.clone())
    }

    /// The object for `key`, made by `make` when this process has none
    /// (under the lock: two threads never make two). At most `most` objects
    /// of this process are kept (the oldest go); a parent's are forgotten.
    pub fn get_or_make<E>(
        &self,
        key: K,
        most: usize,
        make: impl FnOnce() -> std::result::Result<V, E>,
    ) -> std::result::Result<V, E> {
        let pid = std::process::id();
        let mut kept = self.lock();
        if let Some((_, _, v)) = kept
            .iter()
            .find(|(made_in, k, _)| *made_in == pid && *k == key)
        {
            return Ok(v.clone());
        }
        let value = make()?;
        let (mine, theirs): (Vec<_>, Vec<_>) =
            kept.drain(..).partition(|(made_in, _, _)| *made_in == pid);
        std::mem::forget(theirs);
        *kept = mine;
        while !kept.is_empty() && kept.len() >= most.max(1) {
            kept.remove(0);
        }
        kept.push((pid, key, value.clone()));
        Ok(value)
    }
}

impl<K: PartialEq, V: Clone> Default for PerProcess<K, V> {
    fn default() -> Self {
        PerProcess::new()
    }
}

// ------------------------------------------------------------ the worker pool

/// The engine's rayon pool (never rayon's global one: R owns the process
/// and another package may configure that), and what keeps its workers off
/// the caller's CPU.
pub struct Workers {
    pub pool: ThreadPool,
    pub steer: Steer,
}

/// The pool, by thread count: one at a time, rebuilt when the count asked
/// for changes.
type PoolSlot = PerProcess<usize, Arc<Workers>>;
static POOL: PoolSlot = PerProcess::new();

/// The pool with `threads` workers (at least one).
pub fn pool(threads: usize) -> Arc<Workers> {
    pool_in(&POOL, threads)
}

/// `pool` over a given slot, so that a test can have one no other test
/// touches (tests run in parallel, and one asking for another thread count
/// replaces the shared pool).
fn pool_in(slot: &PoolSlot, threads: usize) -> Arc<Workers> {
    let threads = threads.max(1);
    let made = slot.get_or_make(threads, 1, || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("zarr-worker-{i}"))
            .build()
            .expect("the zarr thread pool could not be started");
        let steer = Steer::of(&pool);
        Ok::<_, std::convert::Infallible>(Arc::new(Workers { pool, steer }))
    });
    match made {
        Ok(p) => p,
        Err(never) => match never {},
    }
}

// ------------------------------------------------------------ tokio runtimes

/// The multi-thread tokio runtime of the object stores (and Icechunk
/// repositories): their requests are tasks on its two workers, where hyper
/// receives the bodies. Made on first use, never dropped.
pub fn io_runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: PerProcess<(), &'static tokio::runtime::Runtime> = PerProcess::new();
    RUNTIME.get_or_make((), 1, || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zarr-object-store")
            .enable_all()
            .build()
            .map_err(|e| {
                ZarrError::Io(format!("cannot start the object stores' I/O runtime: {e}"))
            })?;
        Ok(&*Box::leak(Box::new(rt)))
    })
}

/// rustls needs one process-wide crypto provider before the first TLS
/// connection; the HTTP and object stores both install ring, which the
/// object stores' request signing links anyway.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another library of the process may have installed one already;
        // either serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// What an HTTP client is made with: stores with equal settings share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub max_idle_per_host: usize,
}

/// An HTTP client with the current-thread runtime that drives it. The
/// thread that reads drives it (`block_on`): a batch of requests is one
/// future with many requests in flight on that thread, so the HTTP store
/// adds no threads to the engine's beyond two short-lived ones for host
/// name lookups, and a body's pieces never cross threads.
pub struct HttpIo {
    pub runtime: tokio::runtime::Runtime,
    pub client: reqwest::Client,
}

/// The runtime and client of each set of settings used in this process:
/// a store opened again, as every `open_zarr()` of a URL does, reuses them
/// and their open connections (making them, with TLS set-up and a new
/// connection, cost ~5 ms of CPU, several times an open's requests).
pub fn http_io(settings: HttpSettings) -> Result<Arc<HttpIo>> {
    static SHARED: PerProcess<HttpSettings, Arc<HttpIo>> = PerProcess::new();
    SHARED.get_or_make(settings, usize::MAX, || {
        let fail = |e: String| ZarrError::Io(format!("cannot start the HTTP client: {e}"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(2)
            .thread_name("zarr-http")
            .build()
            .map_err(|e| fail(e.to_string()))?;
        install_crypto_provider();
        let client = {
            let _inside = runtime.enter();
            reqwest::Client::builder()
                .connect_timeout(settings.connect_timeout)
                .read_timeout(settings.read_timeout)
                .pool_max_idle_per_host(settings.max_idle_per_host)
                .redirect(reqwest::redirect::Policy::limited(10))
                .user_agent(format!("zarr-r/{}", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| fail(e.to_string()))?
        };
        Ok(Arc::new(HttpIo { runtime, client }))
    })
}

/// A built object-store client (S3, GCS, Azure).
pub type ObjectClient = Arc<dyn object_store::ObjectStore>;

/// What an object-store client was built from, as name/value pairs (the
/// cloud, the URL, every setting, the retry policy and the environment the
/// builder read): two opens with equal recipes share one client.
pub type ClientRecipe = Vec<(String, String)>;

/// The most object-store clients kept for reuse; a new recipe beyond that
/// drops the oldest.
const KEPT_CLIENTS: usize = 16;

/// How an object-store client is built (on the runtime's context).
pub type ClientBuild = Arc<dyn Fn() -> Result<ObjectClient> + Send + Sync>;

/// This process's client of `recipe`, built by `build` when there is none.
/// What a store holds is a [`ProcessClient`]: used in a process forked
/// after the store was opened, it builds that process's own client.
pub fn object_client(recipe: ClientRecipe, build: ClientBuild) -> Result<Arc<ProcessClient>> {
    let client = ProcessClient { recipe, build };
    client.current()?;
    Ok(Arc::new(client))
}

/// The built clients, by recipe.
static CLIENTS: PerProcess<ClientRecipe, ObjectClient> = PerProcess::new();

/// An object-store client that is always the calling process's own: it
/// hands every request to the client kept for its recipe in this process,
/// built on first use.
pub struct ProcessClient {
    recipe: ClientRecipe,
    build: ClientBuild,
}

impl ProcessClient {
    /// The client of this process (built now if there is none).
    pub fn current(&self) -> Result<ObjectClient> {
        let runtime = io_runtime()?;
        CLIENTS.get_or_make(self.recipe.clone(), KEPT_CLIENTS, || {
            install_crypto_provider();
            let _inside = runtime.enter();
            (self.build)()
        })
    }

    fn client(&self) -> object_store::Result<ObjectClient> {
        self.current().map_err(|e| object_store::Error::Generic {
            store: "zarr",
            source: Box::new(e),
        })
    }
}

impl std::fmt::Debug for ProcessClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the recipe: it holds the settings, secrets among them.
        f.write_str("ProcessClient")
    }
}

impl std::fmt::Display for ProcessClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("object store client of this process")
    }
}

/// A stream of one error (a client that could not be built).
fn failed<T: Send + 'static>(
    e: object_store::Error,
) -> futures::stream::BoxStream<'static, object_store::Result<T>> {
    futures::stream::StreamExt::boxed(futures::stream::once(async move { Err(e) }))
}

#[async_trait::async_trait]
impl object_store::ObjectStore for ProcessClient {
    async fn put_opts(
        &self,
        location: &object_store::path::Path,
        payload: object_store::PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.client()?.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &object_store::path::Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.client()?.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &object_store::path::Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.client()?.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &object_store::path::Path,
        ranges: &[std::ops::Range<u64>],
    ) -> object_store::Result<Vec<bytes::Bytes>> {
        self.client()?.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<
            'static,
            object_store::Result<object_store::path::Path>,
        >,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>> {
        match self.client() {
            Ok(c) => c.delete_stream(locations),
            Err(e) => failed(e),
        }
    }

    fn list(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        match self.client() {
            Ok(c) => c.list(prefix),
            Err(e) => failed(e),
        }
    }

    fn list_with_offset(
        &self,
        prefix: Option<&object_store::path::Path>,
        offset: &object_store::path::Path,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        match self.client() {
            Ok(c) => c.list_with_offset(prefix, offset),
            Err(e) => failed(e),
        }
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.client()?.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.client()?.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
        options: object_store::RenameOptions,
    ) -> object_store::Result<()> {
        self.client()?.rename_opts(from, to, options).await
    }
}

/// This process's tokio runtime of the object stores, as a value a store
/// can hold: it dereferences to the runtime of the process it is used in,
/// so a store opened before a fork runs its requests on the child's own.
#[derive(Debug, Clone, Copy)]
pub struct IoRuntime;

impl std::ops::Deref for IoRuntime {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &tokio::runtime::Runtime {
        match io_runtime() {
            Ok(rt) => rt,
            // Only when no thread can be started; the package's panic
            // guard makes this an R error.
            Err(e) => panic!("{}", e.message()),
        }
    }
}

// ------------------------------------------------------------ cancellation

/// A flag that the caller of a fetch raises when it stops waiting (an
/// error, an interrupt): requests of the fetch, and their retries and
/// back-off waits, end at once instead of going on in the background.
pub struct Cancel {
    raise: Mutex<Option<futures::channel::oneshot::Sender<()>>>,
    raised: Shared<futures::channel::oneshot::Receiver<()>>,
}

impl Default for Cancel {
    fn default() -> Self {
        let (tx, rx) = futures::channel::oneshot::channel();
        Cancel {
            raise: Mutex::new(Some(tx)),
            raised: rx.shared(),
        }
    }
}

impl Cancel {
    /// Raise the flag: every wait on it ends (now and later).
    pub fn cancel(&self) {
        // Dropping the sender resolves every clone of the receiver.
        drop(self.raise.lock().unwrap_or_else(|e| e.into_inner()).take());
    }

    pub fn is_cancelled(&self) -> bool {
        self.raise
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// A future that completes once the flag is raised.
    pub fn raised(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.raised.clone().map(|_| ())
    }
}

thread_local! {
    static CANCEL: std::cell::RefCell<Option<Arc<Cancel>>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with `cancel` as this thread's cancel flag (see [`cancel_flag`]).
pub fn with_cancel<R>(cancel: Arc<Cancel>, f: impl FnOnce() -> R) -> R {
    let before = CANCEL.with(|c| c.replace(Some(cancel)));
    struct Restore(Option<Arc<Cancel>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CANCEL.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(before);
    f()
}

/// The cancel flag of the fetch running on this thread, if any.
pub fn cancel_flag() -> Option<Arc<Cancel>> {
    CANCEL.with(|c| c.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn objects_are_made_once_per_key_and_the_oldest_go_beyond_the_limit() {
        let slot: PerProcess<u32, Arc<u32>> = PerProcess::new();
        let made = AtomicUsize::new(0);
        let make = |k: u32| {
            slot.get_or_make(k, 2, || {
                made.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ()>(Arc::new(k * 10))
            })
            .unwrap()
        };
        assert_eq!(*make(1), 10);
        assert_eq!(*make(1), 10);
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(*make(2), 20);
        assert_eq!(*make(3), 30);
        assert_eq!(made.load(Ordering::SeqCst), 3);
        assert_eq!(slot.get(&1), None, "the oldest was dropped");
        assert_eq!(slot.get(&2).as_deref(), Some(&20));
        assert_eq!(slot.get_or_make(4, 2, || Err("no")), Err("no"));
        assert_eq!(slot.get(&4), None);
    }

    #[test]
    fn a_parent_process_objects_are_forgotten_not_dropped() {
        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let slot: PerProcess<u8, Arc<Counted>> = PerProcess::new();
        // As a forked child sees it: an object stamped with another pid.
        slot.lock().push((
            std::process::id().wrapping_add(1),
            0,
            Arc::new(Counted(Arc::clone(&drops))),
        ));
        assert!(slot.get(&0).is_none());
        let mine = slot
            .get_or_make(0, 1, || Ok::<_, ()>(Arc::new(Counted(Arc::clone(&drops)))))
            .unwrap();
        assert_eq!(
            drops.load(Ordering::SeqCst),
            0,
            "the parent's is never dropped"
        );
        assert!(Arc::ptr_eq(&mine, &slot.get(&0).unwrap()));
        assert_eq!(slot.lock().len(), 1);
    }

    #[test]
    fn pool_has_the_requested_threads_and_is_reused() {
        let slot = PoolSlot::new();
        let a = pool_in(&slot, 2);
        assert_eq!(a.pool.current_num_threads(), 2);
        let b = pool_in(&slot, 2);
        assert!(Arc::ptr_eq(&a, &b));
        let c = pool_in(&slot, 0);
        assert_eq!(c.pool.current_num_threads(), 1);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(pool(3).pool.current_num_threads(), 3);
    }

    #[test]
    fn a_raised_cancel_flag_ends_every_wait_on_it() {
        let c = Cancel::default();
        assert!(!c.is_cancelled());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let early = rt
            .block_on(async { tokio::time::timeout(Duration::from_millis(20), c.raised()).await });
        assert!(early.is_err(), "not raised yet");
        c.cancel();
        assert!(c.is_cancelled());
        rt.block_on(c.raised());
        rt.block_on(c.raised());
    }
}
