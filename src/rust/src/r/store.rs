//! Bindings of stores: opening each kind, and their keys and values.

use super::*;
use crate::store::{get_versioned, listable, StoreKey, StorePrefix};

/// @noRd
#[extendr]
fn rz_store_local(root: &str, read_only: bool, create: bool, fsync: bool, atomic: bool) -> Robj {
    let options = crate::store::fs::FsWriteOptions {
        fsync,
        atomic_new: atomic,
    };
    guard(|| {
        Ok(store_value(Arc::new(FsStore::open_with(
            root, read_only, create, options,
        )?)))
    })
}

/// A read-only store of fsspec references: a JSON file (v0 or v1), or a
/// folder of Parquet references. `network` holds the network options of
/// its remote targets, as for `rz_store_http`.
/// @noRd
#[extendr]
fn rz_store_reference(location: &str, local_root: &str, max_keys: f64, network: &[f64]) -> Robj {
    let limits = crate::store::reference::RefLimits {
        max_keys: max_keys as u64,
        local_root: (!local_root.is_empty()).then(|| local_root.into()),
        network: match network {
            &[r, rt, ct, qt, mc] => network_options(r as i32, rt, ct, qt, mc as i32),
            _ => Default::default(),
        },
        ..Default::default()
    };
    guard(|| {
        Ok(store_value(Arc::new(crate::store::RefStore::open_with(
            location, limits,
        )?)))
    })
}

/// @noRd
#[extendr]
fn rz_store_memory(read_only: bool) -> Robj {
    guard(|| Ok(store_value(Arc::new(MemoryStore::new(read_only)))))
}

/// A read-only store over HTTP(S) at `url`; the network options as
/// `zarr_options()` checked them (times in seconds).
/// @noRd
#[extendr]
fn rz_store_http(
    url: &str,
    max_retries: i32,
    retry_timeout: f64,
    connect_timeout: f64,
    request_timeout: f64,
    max_concurrency: i32,
) -> Robj {
    let options = network_options(
        max_retries,
        retry_timeout,
        connect_timeout,
        request_timeout,
        max_concurrency,
    );
    guard(|| {
        Ok(store_value(Arc::new(
            crate::store::HttpStore::with_options(url, options)?,
        )))
    })
}

/// The network options as `zarr_options()` checked them (times in seconds).
fn network_options(
    max_retries: i32,
    retry_timeout: f64,
    connect_timeout: f64,
    request_timeout: f64,
    max_concurrency: i32,
) -> crate::store::http::HttpOptions {
    let secs = |s: f64| std::time::Duration::from_secs_f64(s.clamp(0.0, 1e9));
    crate::store::http::HttpOptions {
        connect_timeout: secs(connect_timeout),
        request_timeout: secs(request_timeout),
        max_concurrency: max_concurrency.max(1) as usize,
        retry: crate::store::retry::RetryPolicy {
            max_retries: max_retries.max(0) as usize,
            retry_timeout: secs(retry_timeout),
        },
    }
}

/// A store in S3, GCS or Azure at `url`. `keys`/`values` are the builder
/// options; `anonymous` is TRUE, FALSE or NA (decide from the environment).
/// @noRd
#[extendr]
fn rz_store_object(
    url: &str,
    keys: Strings,
    values: Strings,
    read_only: bool,
    anonymous: Rbool,
) -> Robj {
    guard(|| {
        let options: Vec<(String, String)> = keys
            .iter()
            .zip(values.iter())
            .map(|(k, v)| (String::from(&**k), String::from(&**v)))
            .collect();
        let anonymous = if anonymous.is_na() {
            None
        } else {
            Some(anonymous.is_true())
        };
        let s = crate::store::ObjectStore::open(url, &options, read_only, anonymous)?;
        Ok(store_value(Arc::new(s)))
    })
}

/// The canonical URL, bucket and prefix of `url` if it names an object
/// store, else NULL: no request is made.
/// @noRd
#[extendr]
fn rz_object_url_cloud(url: &str) -> Robj {
    guard(|| {
        Ok(match crate::store::object::cloud_of_url(url) {
            Some(c) => format!("{c:?}").to_lowercase().into(),
            None => ().into(),
        })
    })
}

/// The value at `key` and its version tag: list(value, tag), or NULL.
/// @noRd
#[extendr]
fn rz_store_get_versioned(h: Robj, key: &str) -> Robj {
    guard(|| {
        Ok(
            match get_versioned(&*store_of(&h)?, &StoreKey::new(key)?)? {
                Some((v, tag)) => list!(
                    value = Raw::from_bytes(&v),
                    tag = tag.map(Robj::from).unwrap_or_else(|| ().into())
                )
                .into(),
                None => ().into(),
            },
        )
    })
}

/// Write `value` at `key` if its version is still `tag` (NULL: only if
/// absent); returns the new tag or NULL.
/// @noRd
#[extendr]
fn rz_store_set_if_version(h: Robj, key: &str, value: Raw, tag: Nullable<String>) -> Robj {
    guard(|| {
        let tag = match tag {
            Nullable::NotNull(t) => Some(t),
            Nullable::Null => None,
        };
        Ok(
            match handle_of(&h)?.set_if_version(
                &StoreKey::new(key)?,
                value.as_slice(),
                tag.as_deref(),
            )? {
                Some(t) => t.into(),
                None => ().into(),
            },
        )
    })
}

/// `offset`/`length` are negative when absent; `suffix` asks for the last
/// `length` bytes.
/// @noRd
#[extendr]
fn rz_store_get(h: Robj, key: &str, offset: f64, length: f64, suffix: bool) -> Robj {
    guard(|| {
        let range = match (offset < 0.0, length < 0.0, suffix) {
            (_, false, true) => ByteRange::Suffix(length as u64),
            (true, true, _) => ByteRange::All,
            (false, true, _) => ByteRange::From(offset as u64),
            (o, false, false) => ByteRange::Range {
                offset: if o { 0 } else { offset as u64 },
                length: length as u64,
            },
        };
        Ok(match store_of(&h)?.get(&StoreKey::new(key)?, range)? {
            Some(v) => Raw::from_bytes(&v).into(),
            None => ().into(),
        })
    })
}

/// @noRd
#[extendr]
fn rz_store_set(h: Robj, key: &str, value: Raw) -> Robj {
    guard(|| {
        handle_of(&h)?.set(&StoreKey::new(key)?, value.as_slice())?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_erase(h: Robj, key: &str) -> Robj {
    guard(|| {
        handle_of(&h)?.erase(&StoreKey::new(key)?)?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_erase_prefix(h: Robj, prefix: &str) -> Robj {
    guard(|| {
        handle_of(&h)?.erase_prefix(&StorePrefix::new(prefix)?)?;
        Ok(().into())
    })
}

/// @noRd
#[extendr]
fn rz_store_list(h: Robj) -> Robj {
    guard(|| Ok(strings(listable(&*store_of(&h)?, "")?.list()?)))
}

/// @noRd
#[extendr]
fn rz_store_list_prefix(h: Robj, prefix: &str) -> Robj {
    guard(|| {
        let (store, prefix) = (store_of(&h)?, StorePrefix::new(prefix)?);
        Ok(strings(listable(&*store, &prefix)?.list_prefix(&prefix)?))
    })
}

/// @noRd
#[extendr]
fn rz_store_list_dir(h: Robj, prefix: &str) -> Robj {
    guard(|| {
        let (store, prefix) = (store_of(&h)?, StorePrefix::new(prefix)?);
        let d = listable(&*store, &prefix)?.list_dir(&prefix)?;
        Ok(list!(keys = strings(d.keys), prefixes = strings(d.prefixes)).into())
    })
}

/// @noRd
#[extendr]
fn rz_store_exists(h: Robj, key: &str) -> Robj {
    guard(|| Ok(store_of(&h)?.exists(&StoreKey::new(key)?)?.into()))
}

/// @noRd
#[extendr]
fn rz_store_size(h: Robj, key: &str) -> Robj {
    guard(|| {
        Ok(match store_of(&h)?.size(&StoreKey::new(key)?)? {
            Some(n) => (n as f64).into(),
            None => Rfloat::na().into(),
        })
    })
}

/// @noRd
#[extendr]
fn rz_store_info(h: Robj) -> Robj {
    guard(|| {
        let s = store_of(&h)?;
        Ok(list!(
            read_only = s.as_writable().is_none(),
            conditional_writes = s.as_versioned().is_some(),
            description = s.describe()
        )
        .into())
    })
}

extendr_module! {
    mod store;
    fn rz_store_local;
    fn rz_store_reference;
    fn rz_store_memory;
    fn rz_store_http;
    fn rz_store_object;
    fn rz_object_url_cloud;
    fn rz_store_get_versioned;
    fn rz_store_set_if_version;
    fn rz_store_get;
    fn rz_store_set;
    fn rz_store_erase;
    fn rz_store_erase_prefix;
    fn rz_store_list;
    fn rz_store_list_prefix;
    fn rz_store_list_dir;
    fn rz_store_exists;
    fn rz_store_size;
    fn rz_store_info;
}
