//! zstd: round trips, frames from other writers, checksums, damage.

use super::super::test_util::{assert_decodes, ctx_of as ctx, CHUNK};
use super::super::Warnings;
use super::*;

fn zstd(level: i64, checksum: bool) -> Zstd {
    Zstd::from_config(
        json!({"level": level, "checksum": checksum})
            .as_object()
            .unwrap(),
    )
    .unwrap()
}

fn doubles() -> Vec<u8> {
    (0..10_000u32)
        .flat_map(|i| (f64::from(i % 500) * 0.25).to_le_bytes())
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A frame without the content size in its header, as streaming writers make.
fn frame_without_size(data: &[u8], checksum: bool) -> Vec<u8> {
    let mut c = zstd_safe::CCtx::create();
    c.set_parameter(CParameter::ContentSizeFlag(false)).unwrap();
    c.set_parameter(CParameter::ChecksumFlag(checksum)).unwrap();
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    c.compress2(&mut out, data).unwrap();
    assert!(matches!(zstd_safe::get_frame_content_size(&out), Ok(None)));
    out
}

#[test]
fn round_trips_at_several_levels() {
    let w = Warnings::default();
    let data = doubles();
    for (level, checksum) in [
        (-5, false),
        (0, false),
        (1, true),
        (3, false),
        (19, true),
        (22, false),
    ] {
        let c = zstd(level, checksum);
        let enc = c.encode(data.clone()).unwrap();
        assert!(
            enc.len() < data.len() / 4,
            "level {level}: {} bytes",
            enc.len()
        );
        assert_eq!(
            zstd_safe::get_frame_content_size(&enc).ok(),
            Some(Some(data.len() as u64))
        );
        assert_decodes(&c, &enc, &data, "");
    }
    assert!(w.take().is_empty());
}

#[test]
fn round_trips_empty_input() {
    let w = Warnings::default();
    let enc = zstd(3, true).encode(Vec::new()).unwrap();
    assert_eq!(
        zstd(3, true)
            .decode(enc.clone(), ctx(&w, true).decode_to(Some(0)))
            .unwrap(),
        Vec::<u8>::new()
    );
    assert_eq!(
        zstd(3, true)
            .decode(enc, ctx(&w, true).decode_to(None))
            .unwrap(),
        Vec::<u8>::new()
    );
}

#[test]
fn the_checksum_flag_is_written() {
    let data = doubles();
    let plain = zstd(3, false).encode(data.clone()).unwrap();
    let summed = zstd(3, true).encode(data).unwrap();
    assert_eq!(summed.len(), plain.len() + 4);
    assert_eq!(
        summed[4] & 0x04,
        0x04,
        "Content_Checksum_flag of the frame header"
    );
    assert_eq!(plain[4] & 0x04, 0);
}

#[test]
fn decodes_frames_without_content_size() {
    let w = Warnings::default();
    let data = doubles();
    for checksum in [false, true] {
        let enc = frame_without_size(&data, checksum);
        assert!(
            zstd(1, false)
                .decode(enc.clone(), ctx(&w, true).decode_to(Some(data.len())))
                .unwrap()
                == data
        );
        assert!(
            zstd(1, false)
                .decode(enc, ctx(&w, true).decode_to(None))
                .unwrap()
                == data
        );
    }
}

#[test]
fn decodes_bytes_from_other_writers() {
    let w = Warnings::default();
    let hello = b"hello zarr\n".to_vec();
    // numcodecs.Zstd(level=3) and Zstd(level=3, checksum=True): content size in the header.
    let numcodecs = unhex("28b52ffd200b59000068656c6c6f207a6172720a");
    let numcodecs_summed = unhex("28b52ffd240b59000068656c6c6f207a6172720a82e90f20");
    // The zstd 1.5 command line reading a pipe: no content size, with and without checksum.
    let cli_summed = unhex("28b52ffd045859000068656c6c6f207a6172720a82e90f20");
    let cli = unhex("28b52ffd005859000068656c6c6f207a6172720a");
    for known in [numcodecs, numcodecs_summed, cli_summed, cli] {
        assert_eq!(
            zstd(3, false)
                .decode(known.clone(), ctx(&w, true).decode_to(Some(11)))
                .unwrap(),
            hello
        );
        assert_eq!(
            zstd(3, false)
                .decode(known, ctx(&w, true).decode_to(None))
                .unwrap(),
            hello
        );
    }
    assert!(w.take().is_empty());
}

#[test]
fn decodes_concatenated_frames() {
    let w = Warnings::default();
    let mut enc = zstd(3, true).encode(b"first ".to_vec()).unwrap();
    enc.extend(frame_without_size(b"second", false));
    assert_eq!(
        zstd(3, false)
            .decode(enc.clone(), ctx(&w, true).decode_to(Some(12)))
            .unwrap(),
        b"first second"
    );
    assert_eq!(
        zstd(3, false)
            .decode(enc, ctx(&w, true).decode_to(None))
            .unwrap(),
        b"first second"
    );
}

/// Flip a bit of the stored checksum: the content is intact, the frame is not.
fn with_bad_checksum(data: &[u8]) -> Vec<u8> {
    let mut enc = zstd(3, true).encode(data.to_vec()).unwrap();
    let n = enc.len();
    enc[n - 2] ^= 0x10;
    enc
}

#[test]
fn checksum_mismatch_is_a_warning_by_default_and_an_error_when_strict() {
    let w = Warnings::default();
    let data = doubles();
    for hint in [Some(data.len()), None] {
        let bad = with_bad_checksum(&data);
        let dec = zstd(3, true)
            .decode(bad.clone(), ctx(&w, false).decode_to(hint))
            .unwrap();
        assert!(dec == data);
        let msgs = w.take();
        assert_eq!(msgs.len(), 1);
        assert!(
            msgs[0].contains(CHUNK) && msgs[0].contains("zstd"),
            "{}",
            msgs[0]
        );
        let e = zstd(3, true)
            .decode(bad, ctx(&w, true).decode_to(hint))
            .unwrap_err();
        assert_eq!(e.kind(), "checksum");
        assert!(e.message().contains(CHUNK));
        assert!(w.take().is_empty());
    }
}

#[test]
fn garbage_is_a_codec_error() {
    let w = Warnings::default();
    let garbage = [
        vec![],
        vec![0x28],
        b"definitely not zstd".to_vec(),
        unhex("28b52ffd"),
        unhex("28b52ffd200b590000ffffffffffffffffffffffff"),
        // A header claiming 2^60 bytes of content.
        unhex("28b52ffde0000000000000001001000000"),
    ];
    for g in garbage {
        for hint in [Some(80_000), None] {
            let e = zstd(3, false)
                .decode(g.clone(), ctx(&w, false).decode_to(hint))
                .unwrap_err();
            assert_eq!(e.kind(), "codec", "{g:02x?}");
            assert!(e.message().contains("zstd"), "{}", e.message());
        }
    }
    assert!(w.take().is_empty());
}

#[test]
fn truncated_frames_are_codec_errors() {
    let w = Warnings::default();
    let data = doubles();
    for enc in [
        zstd(3, true).encode(data.clone()).unwrap(),
        frame_without_size(&data, false),
    ] {
        for cut in [enc.len() - 1, enc.len() - 4, enc.len() / 2, 6] {
            for hint in [Some(data.len()), None] {
                let e = zstd(3, false)
                    .decode(enc[..cut].to_vec(), ctx(&w, false).decode_to(hint))
                    .unwrap_err();
                assert_eq!(e.kind(), "codec", "cut at {cut} of {}", enc.len());
            }
        }
    }
    assert!(w.take().is_empty());
}

#[test]
fn output_beyond_the_expected_size_is_refused() {
    let w = Warnings::default();
    for enc in [
        zstd(3, false).encode(vec![7u8; 1 << 20]).unwrap(),
        frame_without_size(&[7u8; 1 << 20], false),
    ] {
        let e = zstd(3, false)
            .decode(enc, ctx(&w, false).decode_to(Some(1000)))
            .unwrap_err();
        assert_eq!(e.kind(), "codec");
    }
}

#[test]
fn invalid_configs_are_refused() {
    let bad = [
        json!({}),
        json!({"level": 23}),
        json!({"level": -131073}),
        json!({"level": 2.5}),
        json!({"level": "3"}),
        json!({"level": 3, "checksum": 1}),
        json!({"level": 3, "checksum": "yes"}),
    ];
    for cfg in bad {
        let e = Zstd::from_config(cfg.as_object().unwrap()).unwrap_err();
        assert_eq!(e.kind(), "metadata", "{cfg}");
        assert!(e.message().contains("zstd"));
    }
    let c = Zstd::from_config(json!({"level": -131072}).as_object().unwrap()).unwrap();
    assert_eq!(
        c,
        Zstd {
            level: -131072,
            checksum: false
        }
    );
}

#[test]
fn writes_both_members() {
    assert_eq!(
        zstd(-3, false).to_json(),
        json!({"name": "zstd", "configuration": {"level": -3, "checksum": false}})
    );
    assert_eq!(
        zstd(5, true).to_json(),
        json!({"name": "zstd", "configuration": {"level": 5, "checksum": true}})
    );
}
