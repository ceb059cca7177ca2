//! The blosc codec against c-blosc's own headers and zarr-python's
//! buffers, and the header checks that keep corrupt input from c-blosc.

use super::super::test_util::{assert_decodes, ctx_of, unhex};
use super::super::Warnings;
use super::*;
use blosc_src::{blosc_cbuffer_sizes, BLOSC_BITSHUFFLE, BLOSC_NOSHUFFLE, BLOSC_SHUFFLE};

/// (decoded, compressed, block) sizes from a header, as c-blosc reads them.
fn header_sizes(buf: &[u8]) -> (usize, usize, usize) {
    assert!(buf.len() >= BLOSC_MIN_HEADER_LENGTH as usize);
    let (mut nbytes, mut cbytes, mut blocksize) = (0, 0, 0);
    // SAFETY: the buffer holds the 16 header bytes this reads.
    unsafe {
        blosc_cbuffer_sizes(
            buf.as_ptr().cast(),
            &mut nbytes,
            &mut cbytes,
            &mut blocksize,
        )
    };
    (nbytes, cbytes, blocksize)
}

fn blosc(cfg: Value, dtype: DataType) -> Blosc {
    Blosc::from_config(cfg.as_object().unwrap(), dtype).unwrap()
}

fn config_error(cfg: Value) -> ZarrError {
    Blosc::from_config(cfg.as_object().unwrap(), DataType::Float64).unwrap_err()
}

fn doubles() -> Vec<u8> {
    (0..10_000u32)
        .flat_map(|i| (f64::from(i) * 0.01).to_le_bytes())
        .collect()
}

#[test]
fn every_cname_and_shuffle_round_trips() {
    let data = doubles();
    for cname in CNAMES {
        for shuffle in SHUFFLES {
            let c = blosc(
                json!({"cname": cname, "clevel": 5, "shuffle": shuffle}),
                DataType::Float64,
            );
            let enc = c.encode(data.clone()).unwrap();
            let limit = if shuffle == "noshuffle" {
                data.len()
            } else {
                data.len() / 2
            };
            assert!(enc.len() < limit, "{cname}/{shuffle}: {} bytes", enc.len());
            assert_eq!(
                header_sizes(&enc),
                (data.len(), enc.len(), header_sizes(&enc).2)
            );
            let flags = enc[2];
            assert_eq!(
                flags & 0x01 != 0,
                shuffle == "shuffle",
                "{cname}/{shuffle}: flags {flags:#x}"
            );
            assert_eq!(
                flags & 0x04 != 0,
                shuffle == "bitshuffle",
                "{cname}/{shuffle}: flags {flags:#x}"
            );
            assert_decodes(&c, &enc, &data, &format!("{cname}/{shuffle}"));
        }
    }
}

#[test]
fn every_clevel_round_trips_and_zero_stores_plainly() {
    let data = doubles();
    for clevel in 0..=9 {
        let c = blosc(
            json!({"cname": "zstd", "clevel": clevel, "shuffle": "shuffle"}),
            DataType::Float64,
        );
        let enc = c.encode(data.clone()).unwrap();
        if clevel == 0 {
            assert_eq!(enc.len(), data.len() + 16);
            assert_ne!(u32::from(enc[2]) & BLOSC_MEMCPYED, 0);
        }
        assert_decodes(&c, &enc, &data, "");
    }
}

#[test]
fn typesize_defaults_to_the_data_type_and_is_written_to_the_header() {
    let data = doubles();
    let cfg = json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"});
    for (dtype, size) in [
        (DataType::Float64, 8),
        (DataType::Int32, 4),
        (DataType::Int16, 2),
        (DataType::UInt8, 1),
    ] {
        let c = blosc(cfg.clone(), dtype);
        assert_eq!(c.typesize, size);
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(usize::from(enc[3]), size);
        assert_decodes(&c, &enc, &data, "");
    }
    for typesize in [1, 2, 3, 4, 7, 8, 16, 255] {
        let c = blosc(
            json!({"cname": "blosclz", "clevel": 5, "shuffle": "bitshuffle", "typesize": typesize}),
            DataType::Int8,
        );
        assert_eq!(c.typesize, typesize);
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(usize::from(enc[3]), typesize);
        assert_decodes(&c, &enc, &data, &format!("typesize {typesize}"));
    }
    // Over c-blosc's 255, shuffling falls back to single bytes; the data still round trips.
    let c = blosc(
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 1000}),
        DataType::Int8,
    );
    let enc = c.encode(data.clone()).unwrap();
    assert_eq!(enc[3], 1);
    assert_decodes(&c, &enc, &data, "");
    // The right typesize is what makes shuffling pay.
    let shuffled = |t: usize| {
        blosc(
            json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": t}),
            DataType::Int8,
        )
        .encode(data.clone())
        .unwrap()
        .len()
    };
    assert!(
        shuffled(8) < shuffled(1),
        "{} vs {}",
        shuffled(8),
        shuffled(1)
    );
}

#[test]
fn an_explicit_blocksize_is_used() {
    let data = doubles();
    // zstd because c-blosc enlarges the blocks of codecs it splits (blosclz, lz4).
    for blocksize in [0usize, 256, 4096, 1 << 16] {
        let c = blosc(
            json!({"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "blocksize": blocksize}),
            DataType::Float64,
        );
        assert_eq!(c.blocksize, blocksize);
        let enc = c.encode(data.clone()).unwrap();
        if blocksize > 0 {
            assert_eq!(header_sizes(&enc).2, blocksize);
        }
        assert_decodes(&c, &enc, &data, "");
    }
}

#[test]
fn odd_sizes_round_trip() {
    let w = Warnings::default();
    let c = blosc(
        json!({"cname": "zstd", "clevel": 9, "shuffle": "bitshuffle", "typesize": 8}),
        DataType::Float64,
    );
    for n in [0usize, 1, 7, 8, 9, 127, 129, 1001, 65_537] {
        let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
        let enc = c.encode(data.clone()).unwrap();
        assert!(
            c.decode(enc, ctx_of(&w, true).decode_to(Some(n))).unwrap() == data,
            "{n} bytes"
        );
    }
}

#[test]
fn decodes_bytes_written_by_numcodecs() {
    let w = Warnings::default();
    let c = blosc(
        json!({"cname": "lz4", "clevel": 5, "shuffle": "noshuffle"}),
        DataType::Int32,
    );
    // numcodecs 0.16 (c-blosc 1.21.7) Blosc(clevel=5, ...).encode(np.arange(256, dtype="<i4")).
    let ints: Vec<u8> = (0..256i32).flat_map(i32::to_le_bytes).collect();
    let zstd_bitshuffle = unhex(
        "02019404000400000004000048000000140000003000000028b52ffd60000335010040aaaaccf000ff00ff0ca030ef01a08293\
         77ed5035045a1013f3884ba2956dee66356814f10f",
    );
    let lz4hc_bitshuffle = unhex(
        "0201240400040000000400007a00000014000000350000001faa01000c1fcc01000c1ff001000c2f00ff02000c2f00ff04000c00\
         06000f08000b040c000f1000090c180080ffffffffffffffff0b0000001f000100e75000000000000b0000001f000100e7500000\
         0000000b0000001f000100e7500000000000",
    );
    for known in [zstd_bitshuffle, lz4hc_bitshuffle] {
        assert_eq!(
            c.decode(known.clone(), ctx_of(&w, true).decode_to(Some(1024)))
                .unwrap(),
            ints
        );
        assert_eq!(
            c.decode(known, ctx_of(&w, true).decode_to(None)).unwrap(),
            ints
        );
    }
    // ... and Blosc(cname=..., clevel=9, shuffle=SHUFFLE) of np.arange(64) / 4 as "<f8".
    let quarters: Vec<u8> = (0..64u32)
        .flat_map(|i| (f64::from(i) / 4.0).to_le_bytes())
        .collect();
    let zlib_shuffle = unhex(
        "0201710800020000000200006e000000140000005600000078da6360180534050d04e085072f3e7cf9f1878189858d838b874f40\
         50485844544c5c42524a5a46564e5e4141515149495959454555554d4d5d5d434353534b4b5b5b474757574f4f5f9fc11e021c\
         c80400cff924ca",
    );
    let blosclz_shuffle = unhex(
        "02011108000200000002000075000000140000005d0000002300000000e0ff5503018000e015011fd0e0e8f0f4f8fc0002040608\
         0a0c0e101112131415161718191a1b1c1d1e1f201f202121222223232424252526262727282829292a2a2b2b2c2c2d2d2e2e2f2f\
         00003f80000040e02c00014040",
    );
    for known in [zlib_shuffle, blosclz_shuffle] {
        assert_eq!(
            c.decode(known, ctx_of(&w, true).decode_to(Some(512)))
                .unwrap(),
            quarters
        );
    }
}

#[test]
fn garbage_is_a_codec_error() {
    let w = Warnings::default();
    let c = blosc(
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}),
        DataType::Float64,
    );
    let valid = c.encode(doubles()).unwrap();
    let mut wrong_version = valid.clone();
    wrong_version[0] = 7;
    let mut lying_cbytes = valid.clone();
    lying_cbytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut huge_nbytes = valid.clone();
    huge_nbytes[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut unknown_compressor = valid.clone();
    unknown_compressor[2] = (unknown_compressor[2] & 0x1f) | (6 << 5);
    let mut zero_blocksize = valid.clone();
    zero_blocksize[8..12].copy_from_slice(&0u32.to_le_bytes());
    let mut scrambled_body = valid.clone();
    for b in scrambled_body.iter_mut().skip(16) {
        *b = !*b;
    }
    let cases = [
        vec![],
        vec![2, 1],
        vec![0u8; 16],
        vec![0xffu8; 64],
        b"this is not a blosc buffer at all".to_vec(),
        wrong_version,
        lying_cbytes,
        huge_nbytes,
        unknown_compressor,
        zero_blocksize,
        scrambled_body,
    ];
    for (i, g) in cases.into_iter().enumerate() {
        for hint in [Some(80_000), None] {
            let e = c
                .decode(g.clone(), ctx_of(&w, true).decode_to(hint))
                .unwrap_err();
            assert_eq!(e.kind(), "codec", "case {i}: {}", e.message());
            assert!(e.message().contains("blosc"), "{}", e.message());
        }
    }
}

#[test]
fn snappy_chunks_are_unsupported() {
    let w = Warnings::default();
    let c = blosc(
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}),
        DataType::Float64,
    );
    let mut enc = c.encode(doubles()).unwrap();
    enc[2] = (enc[2] & 0x1f) | ((BLOSC_SNAPPY_FORMAT as u8) << 5);
    let e = c.decode(enc, ctx_of(&w, true).decode_to(None)).unwrap_err();
    assert_eq!(e.kind(), "unsupported");
    assert!(e.message().contains("snappy"));
}

#[test]
fn truncated_buffers_are_codec_errors() {
    let w = Warnings::default();
    let data = doubles();
    for shuffle in SHUFFLES {
        let c = blosc(
            json!({"cname": "zstd", "clevel": 3, "shuffle": shuffle}),
            DataType::Float64,
        );
        let enc = c.encode(data.clone()).unwrap();
        for cut in [enc.len() - 1, enc.len() / 2, 17, 16, 15, 3] {
            let e = c
                .decode(
                    enc[..cut].to_vec(),
                    ctx_of(&w, true).decode_to(Some(data.len())),
                )
                .unwrap_err();
            assert_eq!(e.kind(), "codec", "cut at {cut}");
        }
    }
}

#[test]
fn a_size_other_than_expected_is_refused_before_decompressing() {
    let w = Warnings::default();
    let c = blosc(
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}),
        DataType::Float64,
    );
    let enc = c.encode(doubles()).unwrap();
    let e = c
        .decode(enc, ctx_of(&w, true).decode_to(Some(8)))
        .unwrap_err();
    assert_eq!(e.kind(), "codec");
    assert!(e.message().contains("80000"), "{}", e.message());
}

/// Random damage to valid buffers must end in Ok (blosc has no checksum)
/// or an error, never a crash.
#[test]
fn damaged_buffers_never_crash() {
    let w = Warnings::default();
    let data = doubles();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for cname in CNAMES {
        for shuffle in SHUFFLES {
            let c = blosc(
                json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "blocksize": 4096}),
                DataType::Float64,
            );
            let enc = c.encode(data.clone()).unwrap();
            for _ in 0..40 {
                let mut bad = enc.clone();
                for _ in 0..1 + next() % 8 {
                    let i = (next() % bad.len() as u64) as usize;
                    bad[i] = next() as u8;
                }
                if let Err(e) = c.decode(bad, ctx_of(&w, true).decode_to(Some(data.len()))) {
                    assert!(
                        matches!(e.kind(), "codec" | "unsupported"),
                        "{}",
                        e.message()
                    );
                }
            }
        }
    }
}

#[test]
fn works_from_many_threads_at_once() {
    let data = doubles();
    std::thread::scope(|s| {
        for (i, cname) in CNAMES.iter().cycle().take(16).enumerate() {
            let data = &data;
            s.spawn(move || {
                let w = Warnings::default();
                let shuffle = SHUFFLES[i % 3];
                let c = blosc(
                    json!({"cname": cname, "clevel": 1 + i % 9, "shuffle": shuffle}),
                    DataType::Float64,
                );
                for _ in 0..5 {
                    let enc = c.encode(data.clone()).unwrap();
                    assert!(
                        &c.decode(enc, ctx_of(&w, true).decode_to(Some(data.len())))
                            .unwrap()
                            == data
                    );
                }
            });
        }
    });
}

#[test]
fn zarr_v2_integer_shuffles_are_read_and_written_as_names() {
    for (i, name) in SHUFFLES.iter().enumerate() {
        let c = blosc(
            json!({"cname": "lz4", "clevel": 5, "shuffle": i, "blocksize": 0}),
            DataType::Int16,
        );
        assert_eq!(c.shuffle, i as u8);
        assert_eq!(c.to_json()["configuration"]["shuffle"], json!(name));
    }
    // The index of a name is c-blosc's code for it.
    assert_eq!(
        [BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE],
        [0, 1, 2]
    );
}

#[test]
fn writes_all_five_members() {
    let c = blosc(
        json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle"}),
        DataType::Float32,
    );
    assert_eq!(
        c.to_json(),
        json!({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}})
    );
    let cfg =
        json!({"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0});
    assert_eq!(
        blosc(cfg.clone(), DataType::Float64).to_json(),
        json!({"name": "blosc", "configuration": cfg})
    );
}

#[test]
fn invalid_configs_are_refused() {
    let base =
        json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0});
    let with = |key: &str, v: Value| {
        let mut c = base.clone();
        c[key] = v;
        c
    };
    let without = |key: &str| {
        let mut c = base.clone();
        c.as_object_mut().unwrap().remove(key);
        c
    };
    let bad = [
        without("cname"),
        without("clevel"),
        without("shuffle"),
        with("cname", json!("lzma")),
        with("cname", json!("LZ4")),
        with("cname", json!(1)),
        with("clevel", json!(10)),
        with("clevel", json!(-1)),
        with("clevel", json!(4.5)),
        with("shuffle", json!("byteshuffle")),
        with("shuffle", json!(3)),
        with("shuffle", json!(-1)),
        with("shuffle", json!(true)),
        with("typesize", json!(0)),
        with("typesize", json!(-8)),
        with("typesize", json!("8")),
        with("blocksize", json!(-1)),
        with("blocksize", json!(1.5)),
    ];
    for cfg in bad {
        let e = config_error(cfg.clone());
        assert_eq!(e.kind(), "metadata", "{cfg}");
        assert!(e.message().contains("blosc"), "{}", e.message());
    }
    assert_eq!(
        config_error(with("cname", json!("snappy"))).kind(),
        "unsupported"
    );
    // Absent and null optional members take their defaults.
    let c = blosc(with("typesize", Value::Null), DataType::Int16);
    assert_eq!((c.typesize, c.blocksize), (2, 0));
    let c = blosc(without("blocksize"), DataType::Int16);
    assert_eq!((c.typesize, c.blocksize), (8, 0));
}
