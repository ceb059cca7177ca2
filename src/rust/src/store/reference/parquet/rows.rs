//! The rows of one reference file: its `path`, `offset`, `size` and
//! `raw` columns as references.

use super::*;

impl LazyRefs {
    /// The rows of one reference file's bytes (`shown` names it).
    pub(super) fn read_rows<R: ChunkReader + 'static>(&self, file: R, shown: &str) -> Result<Rows> {
        self.opened.fetch_add(1, Ordering::Relaxed);
        let bad = |e: parquet::errors::ParquetError| {
            meta_err(format!(
                "cannot read the Parquet reference file '{shown}': {e}"
            ))
        };
        let reader = SerializedFileReader::new(file).map_err(bad)?;
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let find = |name: &str| {
            schema
                .columns()
                .iter()
                .position(|c| c.path().parts() == [name])
        };
        let (path_col, offset_col, size_col, raw_col) =
            (find("path"), find("offset"), find("size"), find("raw"));
        let columns_ok =
            offset_col.is_some() && size_col.is_some() && (path_col.is_some() || raw_col.is_some());
        // pyarrow writes a column of nulls only (no inline data in a file,
        // say) with the Null logical type over any physical type.
        let not_null_type = |i: &usize| {
            schema.column(*i).logical_type_ref() != Some(&parquet::basic::LogicalType::Unknown)
        };
        let (path_col, offset_col, size_col, raw_col) = (
            path_col.filter(not_null_type),
            offset_col.filter(not_null_type),
            size_col.filter(not_null_type),
            raw_col.filter(not_null_type),
        );
        let wrong_type = |i: Option<usize>, want: &[PhysicalType]| {
            i.is_some_and(|i| !want.contains(&schema.column(i).physical_type()))
        };
        let ints = [PhysicalType::INT64, PhysicalType::INT32];
        let bytes = [PhysicalType::BYTE_ARRAY];
        if !columns_ok
            || wrong_type(path_col, &bytes)
            || wrong_type(raw_col, &bytes)
            || wrong_type(offset_col, &ints)
            || wrong_type(size_col, &ints)
        {
            let found = schema
                .columns()
                .iter()
                .map(|c| format!("{} ({})", c.path().string(), c.physical_type()))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(meta_err(format!(
                "the Parquet reference file '{shown}' has the wrong columns: expected path \
                 (byte array), offset and size (integers) and raw (byte array), found {found}"
            )));
        }
        let mut rows = Vec::new();
        for g in 0..reader.num_row_groups() {
            let rg = reader.get_row_group(g).map_err(bad)?;
            let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
            let paths = match path_col {
                Some(i) => read_column::<ByteArrayType>(&*rg, i, n).map_err(bad)?,
                None => vec![None; n],
            };
            let raws = match raw_col {
                Some(i) => read_column::<ByteArrayType>(&*rg, i, n).map_err(bad)?,
                None => vec![None; n],
            };
            let offsets = match offset_col {
                Some(i) => read_ints(&*rg, i, n).map_err(bad)?,
                None => vec![None; n],
            };
            let sizes = match size_col {
                Some(i) => read_ints(&*rg, i, n).map_err(bad)?,
                None => vec![None; n],
            };
            if [paths.len(), raws.len(), offsets.len(), sizes.len()]
                .iter()
                .any(|&l| l != n)
            {
                return Err(meta_err(format!(
                    "the Parquet reference file '{shown}' has columns of different lengths"
                )));
            }
            // Held only to look up the targets (other files may be read meanwhile).
            let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
            for i in 0..n {
                let row = rows.len();
                if let Some(raw) = &raws[i] {
                    rows.push(Some(Ref::Inline(raw.data().into())));
                    continue;
                }
                let Some(p) = &paths[i] else {
                    rows.push(None);
                    continue;
                };
                let url = std::str::from_utf8(p.data()).map_err(|_| {
                    meta_err(format!(
                        "the Parquet reference file '{shown}': the path of row {row} is not UTF-8"
                    ))
                })?;
                let (offset, size) = (offsets[i].unwrap_or(0), sizes[i].unwrap_or(0));
                if offset < 0 || size < 0 {
                    return Err(meta_err(format!(
                        "the Parquet reference file '{shown}': row {row} has a negative offset or size"
                    )));
                }
                rows.push(Some(Ref::Target {
                    target: targets.get(url),
                    offset: offset as u64,
                    // A size of 0 references the whole file.
                    length: (size > 0).then_some(size as u64),
                }));
            }
            if targets.any_http {
                self.any_http.store(true, Ordering::Relaxed);
            }
        }
        Ok(rows)
    }
}

/// One column of a row group, `None` for nulls.
fn read_column<T: DataType>(
    rg: &dyn RowGroupReader,
    i: usize,
    rows: usize,
) -> parquet::errors::Result<Vec<Option<T::T>>> {
    let max_def = rg.metadata().column(i).column_descr().max_def_level();
    let mut reader = get_typed_column_reader::<T>(rg.get_column_reader(i)?);
    let mut out = Vec::with_capacity(rows);
    let mut defs: Vec<i16> = Vec::new();
    let mut vals: Vec<T::T> = Vec::new();
    while out.len() < rows {
        defs.clear();
        vals.clear();
        let (records, _, _) =
            reader.read_records(rows - out.len(), Some(&mut defs), None, &mut vals)?;
        if records == 0 {
            break;
        }
        if max_def == 0 {
            out.extend(vals.drain(..).map(Some));
        } else {
            let mut values = vals.drain(..);
            for &d in &defs {
                out.push(if d == max_def { values.next() } else { None });
            }
        }
    }
    Ok(out)
}

fn read_ints(
    rg: &dyn RowGroupReader,
    i: usize,
    rows: usize,
) -> parquet::errors::Result<Vec<Option<i64>>> {
    match rg.metadata().column(i).column_type() {
        PhysicalType::INT32 => Ok(read_column::<Int32Type>(rg, i, rows)?
            .into_iter()
            .map(|v| v.map(i64::from))
            .collect()),
        _ => read_column::<Int64Type>(rg, i, rows),
    }
}
