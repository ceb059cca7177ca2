//! Inputs the fuzz targets (../fuzz) found, each minimised and kept here
//! with the codec chain or parser it was fed to. Each must give a classed
//! error, never a panic, an abort, a hang or an allocation sized by a
//! claim in the input rather than by what the read needs.

use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use zarr::codec::{CodecChain, CodecContext, Warnings};
use zarr::dtype::DataType;
use zarr::error::ZarrError;

/// The system allocator, recording the largest single request while
/// `WATCH` is on.
struct Largest;

static WATCH: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// One watched call at a time (tests run on several threads).
static SERIAL: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCH.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if WATCH.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Largest = Largest;

/// `f`'s result and the largest allocation it asked for.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LARGEST.store(0, Ordering::Relaxed);
    WATCH.store(true, Ordering::Relaxed);
    let out = f();
    WATCH.store(false, Ordering::Relaxed);
    (out, LARGEST.load(Ordering::Relaxed))
}

fn chain(dtype: DataType, codecs: Value) -> CodecChain {
    let fill = if dtype == DataType::String {
        Vec::new()
    } else {
        vec![0; dtype.size()]
    };
    CodecChain::from_json(codecs.as_array().unwrap(), dtype, &fill, 1).unwrap()
}

// codec_decode, chain 11 (vlen-utf8 then zstd), 64 strings: a zstd frame
// header claiming about 2.9 GB of content in a 12-byte chunk. Strings have
// no expected size, and the decoder reserved what the header said.
#[test]
fn zstd_frame_claiming_gigabytes_allocates_by_its_size() {
    let chunk = [
        0x28, 0xb5, 0x2f, 0xfd, 0x84, 0x84, 0x84, 0x84, 0x00, 0x52, 0xb0, 0x0d, 0x2b,
    ];
    let c = chain(
        DataType::String,
        json!([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]),
    );
    let warnings = Warnings::default();
    let ctx = CodecContext {
        strict_checksums: true,
        warnings: &warnings,
        what: "chunk 'c/0'",
    };
    let (res, largest) = largest_allocation(|| c.decode_strings(chunk.to_vec(), &[64], &ctx));
    match res {
        Err(ZarrError::CorruptChunk(msg)) => assert!(msg.contains("zstd"), "{msg}"),
        other => panic!("expected a corrupt chunk error, got {other:?}"),
    }
    assert!(
        largest < 1 << 24,
        "a 13-byte chunk allocated {largest} bytes"
    );
}

/// reference_parquet: a `refs.0.parq` whose data page asks for a dictionary
/// the column chunk does not have, and one whose footer gives a column a
/// negative start. The parquet crate asserts on both; the reference set
/// must refuse the file with a metadata error naming it.
#[test]
fn parquet_page_without_its_dictionary_is_a_metadata_error() {
    parquet_file_is_a_metadata_error(
        "dictionary",
        include_bytes!("../fuzz-regressions/parquet_dictionary_page.parq"),
    );
}

#[test]
fn parquet_negative_column_start_is_a_metadata_error() {
    parquet_file_is_a_metadata_error(
        "negative",
        include_bytes!("../fuzz-regressions/parquet_negative_column_start.parq"),
    );
}

fn parquet_file_is_a_metadata_error(case: &str, bytes: &[u8]) {
    use zarr::store::reference::RefStore;
    let dir = std::env::temp_dir().join(format!(
        "zarr-fuzz-regression-parquet-{case}-{}",
        std::process::id()
    ));
    let refs = dir.join("refs");
    std::fs::create_dir_all(refs.join("a")).unwrap();
    std::fs::write(
        refs.join(".zmetadata"),
        r#"{"record_size": 10, "metadata": {
          ".zgroup": {"zarr_format": 2},
          "a/.zarray": {"zarr_format": 2, "shape": [10], "chunks": [1], "dtype": "<i8",
                        "compressor": null, "fill_value": 0, "filters": null, "order": "C"}}}"#,
    )
    .unwrap();
    std::fs::write(refs.join("a").join("refs.0.parq"), bytes).unwrap();
    let store =
        RefStore::from_parquet_dir(&refs.to_string_lossy()).expect("the .zmetadata is valid");
    let err = store
        .expanded_json()
        .expect_err("a malformed reference file");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(err, ZarrError::Metadata(_)), "{err:?}");
    assert!(err.to_string().contains("refs.0.parq"), "{err}");
    assert!(err.to_string().contains("malformed"), "{err}");
}
