//! Unit tests of the object store without a server: no request leaves the
//! machine; the signing tests answer one request on a loopback socket and
//! look at its headers.

use super::config::{anonymous_by_default, azure_connection_string};
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
            ("connect_timeout", "3"),
            ("request_timeout", "0.5"),
        ]),
        true,
        Some(true),
    )
    .unwrap();
    assert_eq!(s.options().max_concurrency, 7);
    assert_eq!(s.options().retry.retry_timeout, Duration::from_millis(2500));
    assert_eq!(s.options().retry.max_retries, 10);
    assert_eq!(s.options().connect_timeout, Duration::from_secs(3));
    assert_eq!(s.options().request_timeout, Duration::from_millis(500));
    // The timeouts reach object_store's client as its own settings, unless
    // the user gave those.
    assert_eq!(
        s.options().timeout_settings(&[]),
        [
            ("connect_timeout".to_string(), "3000ms".to_string()),
            ("read_timeout".to_string(), "500ms".to_string())
        ]
    );
    let mine = [("read_timeout".to_string(), "9s".to_string())];
    assert_eq!(s.options().timeout_settings(&mine).len(), 1);
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
    let client = |s: &ObjectStore| s.inner.current().unwrap();
    let open = |url: &str, kv: &[(&str, &str)]| {
        ObjectStore::open(url, &opts(kv), true, Some(true)).unwrap()
    };
    let a = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-1")]);
    let b = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-1")]);
    assert!(Arc::ptr_eq(&client(&a), &client(&b)));
    assert!(std::ptr::eq(&*a.runtime, &*b.runtime));
    // Another setting, URL or signing mode is another client.
    let c = open("s3://shared-bkt/a.zarr", &[("region", "eu-west-2")]);
    assert!(!Arc::ptr_eq(&client(&a), &client(&c)));
    let d = open("s3://shared-bkt/b.zarr", &[("region", "eu-west-1")]);
    assert!(!Arc::ptr_eq(&client(&a), &client(&d)));
    let e = ObjectStore::open(
        "s3://shared-bkt/a.zarr",
        &opts(&[("region", "eu-west-1")]),
        true,
        Some(false),
    )
    .unwrap();
    assert!(!Arc::ptr_eq(&client(&a), &client(&e)));
    assert!(std::ptr::eq(&*a.runtime, &*e.runtime));
}

/// A throwaway RSA key made for this test only (openssl genpkey, 2048
/// bits): the private key of a fake service account.
const TEST_SERVICE_KEY: &str = concat!(
    "-----BEGIN PRIVATE KEY-----\n",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCstue2AXijavzN\n",
    "R2srTGJMNduLGzM3O/u+5WF2LhQxskzYSHa1rP9a4hGcj+3hkckTkm+OSz+Rdn59\n",
    "eG3rlm/n8t/uwveNhG/iAR1CtwDRKAoJltJpwHUpB/oT/UHjipGQxWL7hh80Cux4\n",
    "4qkBohhHNULUzSzp2Qc9wqkvkZAGAzddQwxHF8FTOVPU0FnR+dY9jZAiaFp32r1m\n",
    "lynEyom7PrnYllKnvEDAx2EtKVlPSIl98iObPgK0P8W1ktxjXcXNfK9s20VEtESC\n",
    "ZB0PlcEljdbuB6xY22rRqXsCooLCvEQWsuSn7EwyUlSuH4FshpoKGRHc4b4c8qpH\n",
    "kGcgvpVvAgMBAAECggEATVp93J48EbTRFH9wGCxVuhxE/8Bm584NqinBxNROZxOc\n",
    "JyINSMD6fRHTIXO07toEXKexHuHEzrlrXXaahHEUHaZBdQYNKWyvT2GAYWjlDMgJ\n",
    "9tF9268+yemwr1M2N1rQZy6AbnZbc0uRLXMWjoyyovHPxM8/1lxFSfvtGkjvYEFE\n",
    "JbtygUAMdHeqne2c4SGpE+BOh00r5ciLDCnpt8OYWGZlQnL2lr6sNPniAFg07zZZ\n",
    "4NF+fsZLyKucE9sW9+5sYojMgkg1gTV6AB+EW9nxSLpz0LT7uWA5p3+cVargdOLz\n",
    "16RObcsJpdc2xk8yGT42yqeo+91M8NUefWBQKAuWgQKBgQDUceGX+OK2wvgnxUnK\n",
    "MT7fzrQzYxiFcRLw9cLm61j/kc6aRfOvFs3gLSsDWJ8/EE7ZdudjSlExVitAkosZ\n",
    "imZdtqpWMycbHlNWdBjKGhD3+bRuEGLbp2o8aZQJSjXyPyAM21EsOoQxSotF8vew\n",
    "y9D5muuhAJlEnWZRA6Yu3G6wRwKBgQDQH8jJhzCqYDbahB2Yx3eucqyvpFjOF9YY\n",
    "UEVz4r8ya9+kaiohbFLlQSek1yvugL5M9LtayvzGErrRwMvNAhX/6JYShIemnS1o\n",
    "q1d+0UBK/zsxXjrcJnzyVXFxQXd3MDNov6voImMWFVUTowgQd4pMABx0P6frCVVf\n",
    "dBG7t69tmQKBgEOTDbz3T7Xugly0JmqIC4XJDAykYrJfazT2F064YZC5Ykw0H/T7\n",
    "ffTmqR3hXJYEq/AEIEm24+ibjhp2AoTXPwRkC/5rOu8nUD7ZouD2NZuK89dmoutX\n",
    "bzVUJ+BkmJA7gAhW4pT87/t1yKMxS5QS4J/kpTqLJDVtE5SFYqDZQOQVAoGBAJGe\n",
    "259eTwe24EqOjCLc1fmiVP9kL5qsBOnoKGBIM900qztf6PCP2YR8zR9CSoPLYtt3\n",
    "lSuWwbxZWIvwqOhdYEU5WN/GCR/j8+S7ljGueZy/7ovBUc+9wkjQzdofo1YqzJ2r\n",
    "Fr4KaWgHLwrZVIgpDAPXRBF2hKgoVKrADLRado1pAoGAbWBXoPY8VIfECtUdaAt9\n",
    "fYhHP7V0Rll2d8aIwCmTdeLCkwkf0/+nQxi9llJ+X7OptZSXp3XTj2Q7xOLQrjle\n",
    "+QbDBZCuCk5JX8B6HX2P2pJoZTpuyf/2ofiUKQg1BiaP5Zno78teXZeHQlza/WQ3\n",
    "nv6LWaiLFiSI8JFmejhnsfM=\n",
    "-----END PRIVATE KEY-----\n",
);

/// One request read from a socket: its request line and headers (names
/// lower-cased); the client is answered 404.
fn answer_one_request_404(listener: std::net::TcpListener) -> (String, Vec<(String, String)>) {
    use std::io::{BufRead, BufReader, Write};
    let (conn, _) = listener.accept().unwrap();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut conn = conn;
    conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .unwrap();
    (line.trim_end().to_string(), headers)
}

/// GCS has no emulator that takes object_store's writes here, so its
/// request signing is checked offline: a store configured with a service
/// account file sends a self-signed JWT (RS256, https://google.aip.dev/auth/4111)
/// as its bearer token, to the path of the bucket and key; the token's
/// claims name the account and its signature verifies with the account's
/// public key. An anonymous store sends no Authorization header.
#[test]
fn gcs_requests_are_signed_with_the_service_account_key() {
    use base64::Engine as _;
    let der: Vec<u8> = base64::engine::general_purpose::STANDARD
        .decode(
            TEST_SERVICE_KEY
                .lines()
                .filter(|l| !l.starts_with("-----"))
                .collect::<String>(),
        )
        .unwrap();
    let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    let public = ring::signature::KeyPair::public_key(&pair)
        .as_ref()
        .to_vec();

    let dir = std::env::temp_dir().join(format!("zarr-gcs-sign-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let account = serde_json::json!({
        "type": "service_account",
        "client_email": "reader@zarr-test.iam.gserviceaccount.com",
        "private_key_id": "key-1",
        "private_key": TEST_SERVICE_KEY,
        "gcs_base_url": endpoint,
    });
    let account_file = dir.join("account.json");
    std::fs::write(&account_file, account.to_string()).unwrap();
    let settings = opts(&[
        ("google_service_account", account_file.to_str().unwrap()),
        ("allow_http", "true"),
        ("max_retries", "0"),
    ]);

    let s = ObjectStore::open("gs://bkt/data/x.zarr", &settings, true, Some(false)).unwrap();
    let server = std::thread::spawn(move || answer_one_request_404(listener));
    assert_eq!(
        s.get(&StoreKey::new("c/0").unwrap(), ByteRange::All)
            .unwrap(),
        None
    );
    let (line, headers) = server.join().unwrap();
    // object_store sends the object name as one percent-encoded segment.
    assert_eq!(line, "GET /bkt/data%2Fx%2Ezarr%2Fc%2F0 HTTP/1.1");
    let auth = headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone())
        .expect("a signed request");
    let jwt = auth.strip_prefix("Bearer ").unwrap();
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: serde_json::Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["kid"], "key-1");
    let claims: serde_json::Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["iss"], "reader@zarr-test.iam.gserviceaccount.com");
    assert_eq!(claims["sub"], claims["iss"]);
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );
    let signed = format!("{}.{}", parts[0], parts[1]);
    let signature = b64.decode(parts[2]).unwrap();
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &public,
    );
    key.verify(signed.as_bytes(), &signature).unwrap();
    // A changed claim no longer verifies: the signature covers them.
    let forged = format!("{}.{}", parts[0], b64.encode(br#"{"iss":"other"}"#));
    assert!(key.verify(forged.as_bytes(), &signature).is_err());

    // Anonymous: the same request, unsigned (the account file now only
    // says where the server is).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let mut account = account;
    account["gcs_base_url"] = serde_json::Value::from(endpoint);
    let anon_file = dir.join("anonymous.json");
    std::fs::write(&anon_file, account.to_string()).unwrap();
    let anon = ObjectStore::open(
        "gs://bkt/data/x.zarr",
        &opts(&[
            ("google_service_account", anon_file.to_str().unwrap()),
            ("allow_http", "true"),
            ("max_retries", "0"),
        ]),
        true,
        Some(true),
    )
    .unwrap();
    let server = std::thread::spawn(move || answer_one_request_404(listener));
    assert_eq!(
        anon.get(&StoreKey::new("c/0").unwrap(), ByteRange::All)
            .unwrap(),
        None
    );
    let (line, headers) = server.join().unwrap();
    assert_eq!(line, "GET /bkt/data%2Fx%2Ezarr%2Fc%2F0 HTTP/1.1");
    assert!(!headers.iter().any(|(k, _)| k == "authorization"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aws_no_sign_request_and_missing_credentials_make_requests_unsigned() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let keys: &[(&str, &str)] = &[("AWS_ACCESS_KEY_ID", "AK"), ("AWS_SECRET_ACCESS_KEY", "SK")];
    assert!(!anonymous_by_default(Cloud::S3, &[], &env(keys)));
    let no_sign: &[(&str, &str)] = &[
        ("AWS_ACCESS_KEY_ID", "AK"),
        ("AWS_SECRET_ACCESS_KEY", "SK"),
        ("AWS_NO_SIGN_REQUEST", "true"),
    ];
    assert!(anonymous_by_default(Cloud::S3, &[], &env(no_sign)));
    let no_sign_off: &[(&str, &str)] = &[
        ("AWS_ACCESS_KEY_ID", "AK"),
        ("AWS_NO_SIGN_REQUEST", "false"),
    ];
    assert!(!anonymous_by_default(Cloud::S3, &[], &env(no_sign_off)));
    // No credentials anywhere: unsigned, unless the options hold a key.
    assert!(anonymous_by_default(Cloud::S3, &[], &env(&[])));
    assert!(!anonymous_by_default(
        Cloud::S3,
        &opts(&[("access_key_id", "AK")]),
        &env(&[])
    ));
    // AWS_NO_SIGN_REQUEST is the AWS tools' variable: GCS keeps its chain.
    assert!(!anonymous_by_default(
        Cloud::Gcs,
        &[],
        &env(&[("AWS_NO_SIGN_REQUEST", "true")])
    ));
}

/// S3 requests as the server sees them, offline: signed with AWS
/// Signature Version 4 by the keys of the options (with the session token
/// sent along), or not signed at all when anonymous.
#[test]
fn s3_requests_carry_a_sigv4_signature_of_the_given_keys_or_none() {
    let request = |anonymous: bool| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let s = ObjectStore::open(
            "s3://bkt/data/x.zarr",
            &opts(&[
                ("endpoint", &endpoint),
                ("allow_http", "true"),
                ("region", "eu-central-1"),
                ("access_key_id", "AKIDZARRTEST"),
                ("secret_access_key", "not-a-secret"),
                ("session_token", "session-123"),
                ("virtual_hosted_style_request", "false"),
                ("max_retries", "0"),
            ]),
            true,
            Some(anonymous),
        )
        .unwrap();
        let server = std::thread::spawn(move || answer_one_request_404(listener));
        assert_eq!(
            s.get(&StoreKey::new("c/0").unwrap(), ByteRange::All)
                .unwrap(),
            None
        );
        server.join().unwrap()
    };
    let header = |headers: &[(String, String)], name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let (line, headers) = request(false);
    assert_eq!(line, "GET /bkt/data/x.zarr/c/0 HTTP/1.1");
    let auth = header(&headers, "authorization").expect("a signed request");
    let date = header(&headers, "x-amz-date").unwrap();
    assert_eq!(date.len(), 16, "{date}");
    let scope = format!("{}/eu-central-1/s3/aws4_request", &date[..8]);
    assert!(
        auth.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential=AKIDZARRTEST/{scope}, SignedHeaders="
        )),
        "{auth}"
    );
    assert!(auth.contains("host;x-amz-content-sha256;x-amz-date;x-amz-security-token"));
    let signature = auth.rsplit("Signature=").next().unwrap();
    assert_eq!(signature.len(), 64);
    assert!(signature.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        header(&headers, "x-amz-security-token").as_deref(),
        Some("session-123")
    );

    let (line, headers) = request(true);
    assert_eq!(line, "GET /bkt/data/x.zarr/c/0 HTTP/1.1");
    assert_eq!(header(&headers, "authorization"), None);
    assert_eq!(header(&headers, "x-amz-security-token"), None);
}
