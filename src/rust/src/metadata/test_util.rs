//! Helpers shared by the tests of the v2 and v3 documents.

use crate::error::Result;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The zarr-python fixtures, in ../shared beside the repository as for the
/// R tests.
pub const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/zarr-python"
);

pub fn with(mut doc: Value, member: &str, v: Value) -> Value {
    doc[member] = v;
    doc
}

pub fn without(mut doc: Value, member: &str) -> Value {
    doc.as_object_mut().unwrap().remove(member);
    doc
}

/// The kind of the error that parsing `doc` gave, checking that its message
/// names `what`.
pub fn error_naming<T: std::fmt::Debug>(
    parsed: Result<T>,
    doc: &Value,
    what: &str,
) -> &'static str {
    let e = parsed.expect_err(&format!("should fail: {doc}"));
    assert!(
        e.message().contains(what),
        "'{}' does not name '{what}'",
        e.message()
    );
    e.kind()
}

/// The files called `name` below `dir`, in sorted order.
pub fn files_named(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_named(&path, name, out);
        } else if path.file_name().is_some_and(|n| n == name) {
            out.push(path);
        }
    }
}
