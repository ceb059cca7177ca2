//! Chunks read and written straight between R memory and the store, and
//! reads of only the bytes of uncompressed chunks a region needs.

use super::*;

fn plain_f_order(nd: usize) -> Value {
    json!([{"name": "transpose", "configuration": {"order": (0..nd).rev().collect::<Vec<_>>()}},
           {"name": "bytes", "configuration": {"endian": "little"}}])
}

/// The types and fill values that chunks read and write straight between
/// R memory and the store: a NaN fill, a number fill, an integer fill.
fn straight_cases() -> [(&'static str, Value); 3] {
    [
        ("float64", json!("NaN")),
        ("float64", json!(-1.0)),
        ("int32", json!(-7)),
    ]
}

/// A fresh folder for a file store, removed at the end of the test.
struct Folder(std::path::PathBuf);

impl Folder {
    fn new(tag: &str) -> Folder {
        let p = std::env::temp_dir().join(format!("zarr-engine-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Folder(p)
    }
    fn store(&self) -> Arc<dyn Store> {
        Arc::new(crate::store::FsStore::open(self.0.to_str().unwrap(), false, true).unwrap())
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn plain_chunks_read_straight_into_the_result_match_the_copying_path() {
    // The file store reads uncompressed column-major chunks straight into
    // the result; the memory store goes through decode and scatter. Edge
    // chunks, a missing chunk, fill values and NA must agree.
    let folder = Folder::new("straight");
    let shape = [70u64, 50, 3];
    let n: usize = 70 * 50 * 3;
    let sels = [
        Selection::all(&shape),
        range_sel(&[(0, 64), (16, 32), (0, 2)]),
        range_sel(&[(5, 60), (3, 40), (1, 2)]),
        range_sel(&[(0, 70), (0, 50), (2, 1)]),
    ];
    for (k, (dtype, fill)) in straight_cases().into_iter().enumerate() {
        let name = format!("a{k}");
        let md = || {
            meta(doc(
                dtype,
                &shape,
                &[64, 16, 2],
                fill.clone(),
                plain_f_order(3),
            ))
        };
        let on_disk = Array::create(folder.store(), &name, md()).unwrap();
        let in_memory = Array::create(Arc::new(MemoryStore::new(false)), &name, md()).unwrap();
        let sel = Selection::all(&shape);
        let rtype = if dtype == "int32" {
            RType::Integer
        } else {
            RType::Double
        };
        let strides = on_disk.chain.stored_strides(&on_disk.chunk_shape());
        assert!(on_disk.stores_as_r(rtype, &strides), "{dtype}");
        if dtype == "int32" {
            let mut data: Vec<i32> = (0..n as i32).map(|i| i * 3 - 500).collect();
            data[7] = NA_INTEGER;
            data[100] = -7;
            for a in [&on_disk, &in_memory] {
                a.write(&sel, &RBuf::Integer(&data), opts(2)).unwrap();
                a.writes().unwrap().erase(&a.chunk_key(&[1, 1, 0])).unwrap();
            }
            for s in &sels {
                let mut x = vec![0i32; s.num_elements()];
                let mut y = vec![1i32; s.num_elements()];
                on_disk
                    .read(s, &mut RBufMut::Integer(&mut x), opts(2))
                    .unwrap();
                in_memory
                    .read(s, &mut RBufMut::Integer(&mut y), opts(2))
                    .unwrap();
                assert_eq!(x, y, "{dtype} {s:?}");
            }
        } else {
            let mut data: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
            data[7] = convert::na_real();
            data[8] = f64::NAN;
            data[100] = -1.0;
            for a in [&on_disk, &in_memory] {
                a.write(&sel, &RBuf::Double(&data), opts(2)).unwrap();
                a.writes().unwrap().erase(&a.chunk_key(&[1, 1, 0])).unwrap();
            }
            for s in &sels {
                let mut x = vec![0f64; s.num_elements()];
                let mut y = vec![1f64; s.num_elements()];
                on_disk
                    .read(s, &mut RBufMut::Double(&mut x), opts(2))
                    .unwrap();
                in_memory
                    .read(s, &mut RBufMut::Double(&mut y), opts(2))
                    .unwrap();
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&x), bits(&y), "{dtype} {fill} {s:?}");
            }
        }
    }
}

#[test]
fn a_plain_chunk_of_the_wrong_length_on_disk_is_corrupt() {
    let folder = Folder::new("straight-bad");
    let store = folder.store();
    let a = Array::create(
        store.clone(),
        "t",
        meta(doc(
            "float64",
            &[64, 2],
            &[32, 2],
            json!(0.0),
            plain_f_order(2),
        )),
    )
    .unwrap();
    for len in [20usize, 32 * 2 * 8 + 8] {
        store.set_str("t/c/0/0", &vec![0u8; len]).unwrap();
        let e = a
            .read(
                &Selection::all(&[64, 2]),
                &mut RBufMut::Double(&mut [0.0; 128]),
                opts(1),
            )
            .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk");
        assert!(e.message().contains("t/c/0/0"), "{}", e.message());
    }
}

#[test]
fn plain_chunks_written_straight_from_the_data_hold_the_expected_bytes() {
    // Whole interior chunks go from the data to the store without a copy.
    // NA (in either of R's bit patterns) must still become the fill value,
    // chunks of fill must not be stored, and edge and partly written
    // chunks take the usual path: compare every chunk with bytes built
    // here element by element.
    let folder = Folder::new("straight-write");
    let shape = [140usize, 70];
    let chunk = [64usize, 32];
    let n = shape[0] * shape[1];
    for (k, (dtype, fill)) in straight_cases().into_iter().enumerate() {
        let name = format!("w{k}");
        let md = meta(doc(
            dtype,
            &[140, 70],
            &[64, 32],
            fill.clone(),
            plain_f_order(2),
        ));
        let a = Array::create(folder.store(), &name, md).unwrap();
        let sel = Selection::all(&[140, 70]);
        let part = range_sel(&[(64, 64), (0, 32)]);
        // Element values as stored, NA already turned into the fill.
        let (stored, fill_bytes): (Vec<Vec<u8>>, Vec<u8>) = if dtype == "int32" {
            let mut data: Vec<i32> = (0..n as i32).map(|i| i - 900).collect();
            data[140 * 40 + 5] = NA_INTEGER; // chunk (0, 1)
            data[..32].fill(-7);
            a.write(&sel, &RBuf::Integer(&data), opts(2)).unwrap();
            a.write(&part, &RBuf::Integer(&[-7; 64 * 32]), opts(1))
                .unwrap();
            data[140 * 40 + 5] = -7;
            for c in 0..32 {
                data[64 + 140 * c..128 + 140 * c].fill(-7);
            }
            (
                data.iter().map(|v| v.to_le_bytes().to_vec()).collect(),
                (-7i32).to_le_bytes().to_vec(),
            )
        } else {
            let f = if k == 0 { f64::NAN } else { -1.0 };
            let mut data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
            data[140 * 40 + 5] = convert::na_real(); // chunk (0, 1)
            data[140 * 40 + 6] = f64::from_bits(0x7FF8_0000_0000_07A2); // NA after arithmetic
            data[140 * 40 + 7] = f64::NAN;
            a.write(&sel, &RBuf::Double(&data), opts(2)).unwrap();
            a.write(&part, &RBuf::Double(&[f; 64 * 32]), opts(1))
                .unwrap();
            data[140 * 40 + 5] = f;
            data[140 * 40 + 6] = f;
            for c in 0..32 {
                data[64 + 140 * c..128 + 140 * c].fill(f);
            }
            (
                data.iter().map(|v| v.to_le_bytes().to_vec()).collect(),
                f.to_le_bytes().to_vec(),
            )
        };
        for i in 0..3 {
            for j in 0..3 {
                let mut expect = Vec::new();
                for c in 0..chunk[1] {
                    for r in 0..chunk[0] {
                        let (row, col) = (i * chunk[0] + r, j * chunk[1] + c);
                        if row < shape[0] && col < shape[1] {
                            expect.extend_from_slice(&stored[row + shape[0] * col]);
                        } else {
                            expect.extend_from_slice(&fill_bytes);
                        }
                    }
                }
                let key = a.chunk_key(&[i as u64, j as u64]);
                let got = a.store.get(&key, ByteRange::All).unwrap();
                if expect
                    .chunks_exact(fill_bytes.len())
                    .all(|e| e == fill_bytes.as_slice())
                {
                    assert_eq!(got, None, "{dtype} {fill}: chunk {key} holds only the fill");
                } else {
                    assert_eq!(got, Some(expect), "{dtype} {fill}: chunk {key}");
                }
            }
        }
    }
}

#[test]
fn regions_of_uncompressed_chunks_read_only_the_bytes_they_need() {
    // Both storage orders, a type that needs converting, and a store that
    // serves byte ranges (memory) against one whose chunks are compressed.
    for (codecs, tag) in [
        (plain_f_order(2), "F"),
        (
            json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            "C",
        ),
    ] {
        let plain = Array::create(
            Arc::new(MemoryStore::new(false)),
            "p",
            meta(doc("int16", &[100, 90], &[40, 30], json!(-5), codecs)),
        )
        .unwrap();
        let packed = Array::create(
            Arc::new(MemoryStore::new(false)),
            "z",
            meta(doc("int16", &[100, 90], &[40, 30], json!(-5), f_order(2))),
        )
        .unwrap();
        let data: Vec<i32> = (0..9000).map(|i| (i % 3000) - 5).collect();
        for a in [&plain, &packed] {
            a.write(&Selection::all(&[100, 90]), &RBuf::Integer(&data), opts(2))
                .unwrap();
            a.writes().unwrap().erase(&a.chunk_key(&[2, 2])).unwrap();
        }
        for sel in [
            range_sel(&[(35, 10), (25, 10)]),
            range_sel(&[(0, 3), (0, 90)]),
            range_sel(&[(85, 15), (70, 20)]),
            range_sel(&[(39, 2), (29, 2)]),
        ] {
            let mut x = vec![0i32; sel.num_elements()];
            let mut y = vec![1i32; sel.num_elements()];
            plain
                .read(&sel, &mut RBufMut::Integer(&mut x), opts(2))
                .unwrap();
            packed
                .read(&sel, &mut RBufMut::Integer(&mut y), opts(2))
                .unwrap();
            assert_eq!(x, y, "{tag} {sel:?}");
        }
        // A truncated chunk is corrupt, whichever part is read.
        plain
            .writes()
            .unwrap()
            .set(&plain.chunk_key(&[0, 0]), &[0u8; 100])
            .unwrap();
        let e = plain
            .read(
                &range_sel(&[(35, 5), (25, 5)]),
                &mut RBufMut::Integer(&mut [0; 25]),
                opts(1),
            )
            .unwrap_err();
        assert_eq!(e.kind(), "corrupt_chunk", "{tag}: {}", e.message());
        assert!(e.message().contains("p/c/0/0"), "{}", e.message());
    }
}
