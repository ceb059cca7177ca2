//! Unit tests of the object store that make no request.

use super::config::azure_connection_string;
use super::*;
use std::time::Duration;

fn opts(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn urls_of_each_cloud_are_recognised() {
    assert_eq!(cloud_of_url("s3://bkt/a/b.zarr"), Some(Cloud::S3));
    assert_eq!(cloud_of_url("s3a://bkt/a"), Some(Cloud::S3));
    assert_eq!(
        cloud_of_url("https://bkt.s3.eu-west-1.amazonaws.com/a.zarr"),
        Some(Cloud::S3)
    );
    assert_eq!(cloud_of_url("gs://bkt/a"), Some(Cloud::Gcs));
    assert_eq!(cloud_of_url("az://container/a"), Some(Cloud::Azure));
    assert_eq!(
        cloud_of_url("abfs://container@acct.dfs.core.windows.net/a"),
        Some(Cloud::Azure)
    );
    assert_eq!(cloud_of_url("https://example.org/a.zarr"), None);
    assert_eq!(cloud_of_url("data/a.zarr"), None);
}

#[test]
fn open_takes_bucket_and_prefix_from_the_url() {
    let s = ObjectStore::open(
        "s3://bkt/data/x.zarr/",
        &opts(&[("region", "eu-west-1")]),
        true,
        Some(true),
    )
    .unwrap();
    assert_eq!(s.bucket(), "bkt");
    assert_eq!(s.prefix(), "data/x.zarr");
    assert_eq!(s.url(), "s3://bkt/data/x.zarr");
    assert_eq!(s.describe(), "S3 store at s3://bkt/data/x.zarr");
    assert_eq!(s.path("c/0/1").as_ref(), "data/x.zarr/c/0/1");
    assert_eq!(s.key_of(&Path::from("data/x.zarr/c/0/1")), "c/0/1");

    let v = ObjectStore::open(
        "https://bkt2.s3.us-west-2.amazonaws.com/y.zarr",
        &[],
        true,
        Some(true),
    )
    .unwrap();
    assert_eq!((v.bucket(), v.prefix()), ("bkt2", "y.zarr"));

    let g = ObjectStore::open("gs://gbkt/z", &[], true, Some(true)).unwrap();
    assert_eq!(
        (g.cloud(), g.bucket(), g.prefix()),
        (Cloud::Gcs, "gbkt", "z")
    );
    let a = ObjectStore::open(
        "az://cont/p/q",
        &opts(&[("account_name", "acct")]),
        true,
        Some(true),
    )
    .unwrap();
    assert_eq!(
        (a.cloud(), a.bucket(), a.prefix()),
        (Cloud::Azure, "cont", "p/q")
    );
    assert_eq!(a.url(), "az://cont/p/q");
}

#[test]
fn own_options_are_read_and_bad_ones_refused() {
    let s = ObjectStore::open(
        "s3://bkt",
        &opts(&[
            ("max_concurrency", "7"),
            ("retry_timeout", "2.5"),
            ("part_size", "1"),
        ]),
        true,
        Some(true),
    )
    .unwrap();
    assert_eq!(s.options().max_concurrency, 7);
    assert_eq!(s.options().retry_timeout, Duration::from_millis(2500));
    assert_eq!(s.options().part_size, 5 << 20);
    assert_eq!(s.prefix(), "");

    let e =
        ObjectStore::open("s3://bkt", &opts(&[("no_such_option", "1")]), true, None).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("no_such_option"), "{e}");
    let e =
        ObjectStore::open("s3://bkt", &opts(&[("max_retries", "many")]), true, None).unwrap_err();
    assert!(e.message().contains("max_retries"), "{e}");
    let e = ObjectStore::open("https://example.org/a", &[], true, None).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
}

#[test]
fn azure_connection_strings_become_builder_settings() {
    let key = "a2V5PT0=";
    let got = azure_connection_string(&format!(
        "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey={key};\
         BlobEndpoint=http://127.0.0.1:10000/acct/;QueueEndpoint=http://q"
    ));
    assert_eq!(
        got,
        opts(&[
            ("account_name", "acct"),
            ("access_key", key),
            ("allow_http", "true"),
            ("endpoint", "http://127.0.0.1:10000/acct"),
        ])
    );
    let got = azure_connection_string(
        "AccountName=a;SharedAccessSignature=sv=1&sig=x;EndpointSuffix=core.chinacloudapi.cn",
    );
    assert_eq!(
        got,
        opts(&[
            ("account_name", "a"),
            ("sas_key", "sv=1&sig=x"),
            ("endpoint", "https://a.blob.core.chinacloudapi.cn"),
        ])
    );
    assert_eq!(
        azure_connection_string("UseDevelopmentStorage=true"),
        opts(&[("use_emulator", "true")])
    );
    assert!(azure_connection_string("").is_empty());
}

#[test]
fn writes_to_a_read_only_store_are_refused_before_any_request() {
    let s = ObjectStore::open("s3://bkt/p", &[], true, Some(true)).unwrap();
    let e = s.set_str("a", b"x").unwrap_err();
    assert_eq!(e.kind(), "read_only");
    assert!(e.message().contains("s3://bkt/p"), "{e}");
    assert_eq!(s.erase_str("a").unwrap_err().kind(), "read_only");
    assert_eq!(
        s.set_if_version_str("a", b"x", None).unwrap_err().kind(),
        "read_only"
    );
    assert_eq!(
        s.get_str("../a", ByteRange::All).unwrap_err().kind(),
        "invalid_key"
    );
}

#[test]
fn errors_name_bucket_and_key_and_keep_their_kind() {
    let s = ObjectStore::open("s3://bkt/root", &[], false, Some(true)).unwrap();
    let src = || -> Box<dyn std::error::Error + Send + Sync> { "denied".into() };
    let e = s.error(
        "read",
        "c/0",
        os::Error::PermissionDenied {
            path: "root/c/0".into(),
            source: src(),
        },
    );
    assert_eq!(e.kind(), "permission_denied");
    assert!(e.message().contains("bucket 'bkt', key 'root/c/0'"), "{e}");
    let e = s.error(
        "write",
        "zarr.json",
        os::Error::Precondition {
            path: "root/zarr.json".into(),
            source: src(),
        },
    );
    assert_eq!(e.kind(), "conflict");
    let e = s.error(
        "read",
        "k",
        os::Error::Generic {
            store: "S3",
            source: src(),
        },
    );
    assert_eq!(e.kind(), "io");
    assert!(e.message().contains("key 'root/k'"), "{e}");
}

#[test]
fn opens_with_one_configuration_share_a_client_and_the_runtime() {
    let open = |url: &str, kv: &[(&str, &str)]| {
        ObjectStore::open(url, &opts(kv), true, Some(true)).unwrap()
    };
    let a = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-1")]);
    let b = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-1")]);
    assert!(Arc::ptr_eq(&a.inner, &b.inner));
    assert!(std::ptr::eq(a.runtime, b.runtime));
    // Another setting, URL or signing mode is another client.
    let c = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-2")]);
    assert!(!Arc::ptr_eq(&a.inner, &c.inner));
    let d = open("s3://shared-bkt/b.zarr", &[("region", "eu-west-1")]);
    assert!(!Arc::ptr_eq(&a.inner, &d.inner));
    let e = ObjectStore::open(
        "s3://shared-bkt/a.zarr",
        &opts(&[("region", "eu-west-1")]),
        true,
        Some(false),
    )
    .unwrap();
    assert!(!Arc::ptr_eq(&a.inner, &e.inner));
    assert!(std::ptr::eq(a.runtime, e.runtime));
}
