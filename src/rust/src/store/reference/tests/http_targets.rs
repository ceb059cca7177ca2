//! Reference sets over HTTP: range requests to targets, the reference
//! file itself, and concurrent batches.

use super::*;

/// The test server, serving `files` (absolute paths) from the origin,
/// each answer `delay_ms` late.
fn serve(files: Vec<(&'static str, Vec<u8>)>, delay_ms: u64) -> Server {
    let files: Vec<(&str, Vec<u8>)> = files
        .into_iter()
        .map(|(k, v)| (k.trim_start_matches('/'), v))
        .collect();
    let mode = Mode {
        delay_ms,
        ..Mode::default()
    };
    test_server::serve("", &files, mode)
}

#[test]
fn reference_http_targets_use_range_requests() {
    let server = serve(vec![("/dir/f.bin", data()), ("/dir/a b.bin", data())], 0);
    let u = &server.url;
    let s = store(
        json!({
            "part": [format!("{u}/dir/f.bin"), 100, 10],
            "whole": [format!("{u}/dir/f.bin")],
            "space": [format!("{u}/dir/a%20b.bin"), 1, 1],
            "rel": ["f.bin", 5, 2],
            "gone": [format!("{u}/dir/missing.bin"), 0, 1],
            "past": [format!("{u}/dir/f.bin"), 2000, 10],
        }),
        &format!("{u}/dir/refs.json"),
    );
    assert!(s.as_batched().is_some());
    assert_eq!(get(&s, "part").unwrap(), &data()[100..110]);
    assert_eq!(
        s.get_str("part", range(2, 3)).unwrap().unwrap(),
        &data()[102..105]
    );
    assert_eq!(get(&s, "whole").unwrap(), data());
    assert_eq!(get(&s, "space").unwrap(), &data()[1..2]);
    assert_eq!(get(&s, "rel").unwrap(), &data()[5..7]);
    assert_eq!(s.size_str("whole").unwrap(), Some(1000));
    let e = kind(s.get_str("gone", ByteRange::All), "not_found");
    assert!(e.message().contains("'gone'"), "{e}");
    assert!(e.message().contains("missing.bin"), "{e}");
    let e = kind(s.get_str("past", ByteRange::All), "corrupt_chunk");
    assert!(e.message().contains("'past'"), "{e}");
    let reqs = server.stats.lock().unwrap().log();
    assert!(
        reqs.contains(&("/dir/f.bin".into(), Some("bytes=100-109".into()))),
        "{reqs:?}"
    );
    assert!(
        reqs.contains(&("/dir/f.bin".into(), Some("bytes=102-104".into()))),
        "{reqs:?}"
    );
    assert!(reqs.contains(&("/dir/a%20b.bin".into(), Some("bytes=1-1".into()))));
    // One HTTP store per origin.
    assert_eq!(s.http.stores.lock().unwrap().len(), 1);
}

#[test]
fn reference_open_reads_a_json_file_over_http() {
    let doc = json!({"version": 1, "refs": {"k": ["f.bin", 3, 4], ".zgroup": {"zarr_format": 2}}});
    let server = serve(
        vec![
            ("/v/refs.json", doc.to_string().into_bytes()),
            ("/v/f.bin", data()),
        ],
        0,
    );
    let s = RefStore::open(&format!("{}/v/refs.json", server.url)).unwrap();
    assert_eq!(get(&s, "k").unwrap(), &data()[3..7]);
    assert_eq!(s.list().unwrap(), [".zgroup", "k"]);
    kind(
        RefStore::open(&format!("{}/v/none.json", server.url)),
        "not_found",
    );
}

#[test]
fn reference_http_get_many_is_concurrent_and_ordered() {
    let server = serve(vec![("/f.bin", data())], 100);
    let refs: serde_json::Map<String, Value> = (0..16)
        .map(|i| {
            (
                format!("c/{i}"),
                json!([format!("{}/f.bin", server.url), i * 10, 10]),
            )
        })
        .collect();
    let s = store(Value::Object(refs), "");
    let requests: Vec<(String, ByteRange)> = (0..16)
        .rev()
        .map(|i| (format!("c/{i}"), ByteRange::All))
        .chain(std::iter::once(("c/none".to_string(), ByteRange::All)))
        .collect();
    let got = s.get_many_str(&requests);
    for (j, r) in got.iter().take(16).enumerate() {
        let i = 15 - j;
        assert_eq!(
            r.as_ref().unwrap().as_deref(),
            Some(&data()[i * 10..i * 10 + 10])
        );
    }
    assert_eq!(got[16].as_ref().unwrap(), &None);
    assert!(
        server.stats.lock().unwrap().max_in_flight > 1,
        "requests were not concurrent"
    );
}
