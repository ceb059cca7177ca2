//! Network targets: one HTTP or object store per origin, shared by every
//! reference into it.

use super::*;

/// The stores of the network targets: one HTTP store per origin (and
/// query), one object store per bucket, so connections to a server are
/// shared by every file on it.
#[derive(Default)]
pub(super) struct HttpPool {
    pub(super) stores: Mutex<HashMap<String, Arc<dyn Store>>>,
    /// The network options of the reference store (`zarr_options()`):
    /// every target store connects, times out and retries by them.
    options: crate::store::http::HttpOptions,
}

impl HttpPool {
    pub(super) fn new(options: crate::store::http::HttpOptions) -> HttpPool {
        HttpPool {
            stores: Mutex::default(),
            options,
        }
    }

    pub(super) fn store(&self, base: &str) -> Result<Arc<dyn Store>> {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = stores.get(base) {
            return Ok(Arc::clone(s));
        }
        // Object stores take their credentials and endpoint from the
        // environment (AWS_*, GOOGLE_*, AZURE_*), as fsspec does for
        // kerchunk's targets.
        let o = &self.options;
        let s: Arc<dyn Store> = if super::object::cloud_of_url(base).is_some() {
            let secs = |d: std::time::Duration| d.as_secs_f64().to_string();
            let own = [
                ("max_retries", o.retry.max_retries.to_string()),
                ("retry_timeout", secs(o.retry.retry_timeout)),
                ("connect_timeout", secs(o.connect_timeout)),
                ("request_timeout", secs(o.request_timeout)),
                ("max_concurrency", o.max_concurrency.to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v));
            Arc::new(super::ObjectStore::open(base, &own, true, None)?)
        } else {
            Arc::new(HttpStore::with_options(base, *o)?)
        };
        stores.insert(base.to_string(), Arc::clone(&s));
        Ok(s)
    }

    /// The store and its key for the file at `url`.
    pub(super) fn locate(&self, url: &str) -> Result<(Arc<dyn Store>, StoreKey)> {
        let (location, query) = split_http_url(url);
        let scheme_end = location.find("://").map_or(0, |i| i + 3);
        let path_start = location[scheme_end..]
            .find('/')
            .map_or(location.len(), |i| i + scheme_end);
        let (origin, path) = location.split_at(path_start);
        if super::object::cloud_of_url(url).is_some() {
            // The bucket is the store; the object path is the key.
            if let Some(key) = path
                .strip_prefix('/')
                .and_then(percent_decode)
                .and_then(|k| StoreKey::new(k).ok())
            {
                return Ok((self.store(origin)?, key));
            }
            return Err(ZarrError::Unsupported(format!(
                "cannot request {url}: its path is not supported"
            )));
        }
        // The whole path below the origin as the key...
        if let Some(key) = path
            .strip_prefix('/')
            .and_then(percent_decode)
            .and_then(|k| StoreKey::new(k).ok())
        {
            return Ok((self.store(&format!("{origin}/{query}"))?, key));
        }
        // ...or, for paths that are no valid key ("a//b"), the folder as the
        // store and the file name as the key.
        if let Some(i) = path.rfind('/') {
            if let Some(key) = percent_decode(&path[i + 1..]).and_then(|k| StoreKey::new(k).ok()) {
                let base = format!("{origin}{}{query}", &path[..=i]);
                return Ok((self.store(&base)?, key));
            }
        }
        Err(ZarrError::Unsupported(format!(
            "cannot request {url}: its path is not supported"
        )))
    }
}

/// An http(s) URL without its fragment, split into location and query.
pub(super) fn split_http_url(url: &str) -> (&str, &str) {
    let url = url.split('#').next().unwrap_or("");
    match url.find('?') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    }
}
