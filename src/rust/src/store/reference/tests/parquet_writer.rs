//! Parquet reference files written as fsspec writes them (the parquet
//! crate's writer), for the tests of Parquet reference sets.

use super::*;
use ::parquet::basic::{Compression, ZstdLevel};
use ::parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::parser::parse_message_type;

/// One row: path, offset, size, raw (all None: a missing key).
pub type Row<'a> = (Option<&'a str>, i64, i64, Option<&'a [u8]>);

const SCHEMA: &str = "message schema {
    OPTIONAL BYTE_ARRAY path (UTF8);
    REQUIRED INT64 offset;
    REQUIRED INT64 size;
    OPTIONAL BYTE_ARRAY raw;
}";

fn props(compression: Compression) -> Arc<WriterProperties> {
    Arc::new(
        WriterProperties::builder()
            .set_compression(compression)
            .set_dictionary_enabled(true)
            .set_max_row_group_row_count(Some(3))
            .build(),
    )
}

fn bytes_col(vals: impl Iterator<Item = Option<Vec<u8>>>) -> (Vec<ByteArray>, Vec<i16>) {
    let mut values = Vec::new();
    let mut defs = Vec::new();
    for v in vals {
        match v {
            Some(v) => {
                values.push(ByteArray::from(v));
                defs.push(1);
            }
            None => defs.push(0),
        }
    }
    (values, defs)
}

/// Write `rows` to `path` in the layout of fsspec's LazyReferenceMapper
/// (row groups of 3 rows, so several are read).
pub fn write_refs(path: &Path, rows: &[Row], compression: Compression) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let schema = Arc::new(parse_message_type(SCHEMA).unwrap());
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, props(compression)).unwrap();
    for chunk in rows.chunks(3) {
        let mut rg = w.next_row_group().unwrap();
        let mut i = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            match i {
                0 => {
                    let (v, d) =
                        bytes_col(chunk.iter().map(|r| r.0.map(|s| s.as_bytes().to_vec())));
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, Some(&d), None)
                        .unwrap();
                }
                1 | 2 => {
                    let v: Vec<i64> = chunk
                        .iter()
                        .map(|r| if i == 1 { r.1 } else { r.2 })
                        .collect();
                    col.typed::<Int64Type>()
                        .write_batch(&v, None, None)
                        .unwrap();
                }
                _ => {
                    let (v, d) = bytes_col(chunk.iter().map(|r| r.3.map(|b| b.to_vec())));
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, Some(&d), None)
                        .unwrap();
                }
            }
            col.close().unwrap();
            i += 1;
        }
        rg.close().unwrap();
    }
    w.close().unwrap();
}

/// A file with other columns: name (string) and offset (int32).
pub fn write_wrong(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let schema = Arc::new(
        parse_message_type(
            "message schema { REQUIRED BYTE_ARRAY name (UTF8); REQUIRED INT32 offset; }",
        )
        .unwrap(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, props(Compression::SNAPPY)).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut col) = rg.next_column().unwrap() {
        if i == 0 {
            col.typed::<ByteArrayType>()
                .write_batch(&[ByteArray::from("x")], None, None)
                .unwrap();
        } else {
            col.typed::<Int32Type>()
                .write_batch(&[1], None, None)
                .unwrap();
        }
        col.close().unwrap();
        i += 1;
    }
    rg.close().unwrap();
    w.close().unwrap();
}

/// The other column types fsspec's readers accept: a required path
/// and 32-bit offsets and sizes, no raw column.
pub fn write_int32_refs(path: &Path, rows: &[(&str, i32, i32)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let schema = Arc::new(
        parse_message_type(
            "message schema { REQUIRED BYTE_ARRAY path (UTF8); \
             REQUIRED INT32 offset; REQUIRED INT32 size; }",
        )
        .unwrap(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, props(Compression::SNAPPY)).unwrap();
    for chunk in rows.chunks(3) {
        let mut rg = w.next_row_group().unwrap();
        let mut i = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            if i == 0 {
                let v: Vec<ByteArray> = chunk.iter().map(|r| ByteArray::from(r.0)).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&v, None, None)
                    .unwrap();
            } else {
                let v: Vec<i32> = chunk
                    .iter()
                    .map(|r| if i == 1 { r.1 } else { r.2 })
                    .collect();
                col.typed::<Int32Type>()
                    .write_batch(&v, None, None)
                    .unwrap();
            }
            col.close().unwrap();
            i += 1;
        }
        rg.close().unwrap();
    }
    w.close().unwrap();
}

/// What pyarrow writes for fsspec when no row has inline data: optional
/// int64 offsets and sizes, and "raw" of the Null logical type (int32).
pub fn write_pyarrow_style(path: &Path, rows: &[(Option<&str>, i64, i64)]) {
    use ::parquet::basic::{LogicalType, Repetition, Type as Physical};
    use ::parquet::schema::types::Type;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let field = |name: &str, t: Physical, logical: Option<LogicalType>| {
        Arc::new(
            Type::primitive_type_builder(name, t)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .unwrap(),
        )
    };
    let schema = Type::group_type_builder("schema")
        .with_fields(vec![
            field("path", Physical::BYTE_ARRAY, Some(LogicalType::String)),
            field("offset", Physical::INT64, None),
            field("size", Physical::INT64, None),
            field("raw", Physical::INT32, Some(LogicalType::Unknown)),
        ])
        .build()
        .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), props(zstd())).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut col) = rg.next_column().unwrap() {
        let all = vec![1i16; rows.len()];
        match i {
            0 => {
                let (v, d) = bytes_col(rows.iter().map(|r| r.0.map(|s| s.as_bytes().to_vec())));
                col.typed::<ByteArrayType>()
                    .write_batch(&v, Some(&d), None)
                    .unwrap();
            }
            1 | 2 => {
                let v: Vec<i64> = rows
                    .iter()
                    .map(|r| if i == 1 { r.1 } else { r.2 })
                    .collect();
                col.typed::<Int64Type>()
                    .write_batch(&v, Some(&all), None)
                    .unwrap();
            }
            _ => {
                let none = vec![0i16; rows.len()];
                col.typed::<Int32Type>()
                    .write_batch(&[], Some(&none), None)
                    .unwrap();
            }
        }
        col.close().unwrap();
        i += 1;
    }
    rg.close().unwrap();
    w.close().unwrap();
}

pub fn zstd() -> Compression {
    Compression::ZSTD(ZstdLevel::default())
}

pub fn snappy() -> Compression {
    Compression::SNAPPY
}
