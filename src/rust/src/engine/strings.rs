//! String arrays: reads decode chunks in parallel and keep them, with a
//! map from each result element to its chunk and element (the bindings
//! make the R strings); writes merge into the stored chunk's strings.

use super::plan::{cartesian, chunk_index, read_spans, write_spans};
use super::{Array, IoOptions};
use crate::codec::Warnings;
use crate::convert::{self, Span};
use crate::error::{try_vec, Result, ZarrError};
use crate::fill::NA_TEXT;
use crate::pool::{collect_tasks, run_tasks};
use crate::selection::{DimChunk, Selection};
use crate::store::{ByteRange, StoreKey};

/// The longest string R can hold, in bytes (R's CHARSXP length is an int).
const R_MAX_STRING_BYTES: usize = i32::MAX as usize;

/// Refuse strings that R cannot hold: with a NUL (UTF-8 allows it) or of
/// more than `max_bytes`. Refused here, the decoded chunk is freed with
/// the error instead of failing inside R, which would keep it.
fn check_r_strings(strings: &[String], what: &str, max_bytes: usize) -> Result<()> {
    if let Some(i) = strings.iter().position(|s| s.contains('\0')) {
        return Err(ZarrError::Unsupported(format!(
            "{what}: string {i} contains a NUL character, which R strings cannot hold"
        )));
    }
    if let Some(i) = strings.iter().position(|s| s.len() > max_bytes) {
        return Err(ZarrError::Unsupported(format!(
            "{what}: string {i} has {} bytes, more than the {max_bytes} an R string can hold",
            strings[i].len()
        )));
    }
    Ok(())
}

impl Array {
    /// The strings of the chunk stored at `key` (named `what` in errors),
    /// in the chunk's C order; None where it is missing.
    fn stored_strings(
        &self,
        key: &StoreKey,
        what: &str,
        cshape: &[usize],
        opts: IoOptions,
        warnings: &Warnings,
    ) -> Result<Option<Vec<String>>> {
        let Some(raw) = self
            .store
            .get(key, ByteRange::All)
            .map_err(|e| e.context(what))?
        else {
            return Ok(None);
        };
        let ctx = opts.context(warnings, what);
        self.chain.decode_strings(raw, cshape, &ctx).map(Some)
    }

    pub(super) fn fill_string(&self) -> Result<String> {
        String::from_utf8(self.meta.fill_value.bytes.clone()).map_err(|_| {
            ZarrError::Metadata(format!("{}: the fill value is not UTF-8", self.what()))
        })
    }

    /// The strings that read as NA: a CF variable's markers (see `cf`),
    /// else, under the Zarr rule, the fill value of a v2 array (xarray's
    /// `_FillValue` there, so xarray masks it too) or a v3 fill value that
    /// is this package's marker (`NA_TEXT`). Any other v3 fill value (""
    /// from zarr-python, "missing" from a user) reads as the text it is,
    /// as in zarr-python and R-CF's zarr. Fixed-width strings have no NA
    /// of their own: "" (all NULs) is just "" unless CF says so.
    fn missing_strings(&self, fill: &str) -> Vec<String> {
        match &self.cf {
            Some(cf) => cf.missing_text.clone(),
            None if self.meta.fill_marks_na
                && self.chain.fixed_string().is_none()
                && (fill == NA_TEXT || self.meta.zarr_format == 2) =>
            {
                vec![fill.to_string()]
            }
            None => Vec::new(),
        }
    }

    /// Read `sel` of a string array. Decoding runs in parallel; the result
    /// refers into the decoded chunks, and the bindings make the R strings.
    pub fn read_strings(
        &self,
        sel: &Selection,
        opts: IoOptions,
    ) -> Result<(StringRead, Vec<String>)> {
        let what = self.what();
        sel.check(&self.meta.shape, &what)?;
        let n = sel.num_elements();
        let fill = self.fill_string()?;
        let mut read = StringRead {
            chunks: Vec::new(),
            which: try_vec(n, 0, &what)?,
            elem: try_vec(n, 0, &what)?,
            missing: self.missing_strings(&fill),
            fill,
        };
        if n == 0 {
            return Ok((read, vec![]));
        }
        let plan = self.plan(sel);
        let chunks: Vec<(usize, Vec<&DimChunk>)> =
            cartesian(&plan).into_iter().enumerate().collect();
        let cshape = self.chunk_shape();
        let strides = self.chain.stored_strides(&cshape);
        let out_strides = convert::column_major_strides(&sel.shape());
        let mut iota: Vec<u32> = Vec::new();
        let per_chunk = cshape.iter().product::<usize>();
        iota.try_reserve_exact(per_chunk).map_err(|_| {
            ZarrError::Memory(format!(
                "{what}: a chunk of {per_chunk} strings does not fit in memory"
            ))
        })?;
        iota.extend(0..per_chunk as u32);
        let zero = vec![0usize; cshape.len()];
        let (which, elem) = (
            SendPtr(read.which.as_mut_ptr()),
            SendPtr(read.elem.as_mut_ptr()),
        );
        let warnings = Warnings::default();
        read.chunks = collect_tasks(&chunks, opts.threads, |(k, c)| {
            let idx = chunk_index(c);
            let key = self.chunk_key(&idx);
            let what = self.chunk_what(&key);
            let decoded = self.stored_strings(&key, &what, &cshape, opts, &warnings)?;
            if let Some(strings) = &decoded {
                check_r_strings(strings, &what, R_MAX_STRING_BYTES)?;
            }
            let spans: Vec<Vec<Span>> = read_spans(c, None);
            let k = *k as u32;
            // SAFETY: as in `scatter`: disjoint output elements per chunk.
            unsafe {
                convert::strided_copy(
                    iota.as_ptr(),
                    &strides,
                    elem.get(),
                    &out_strides,
                    &spans,
                    &|v| v,
                );
                convert::strided_copy(
                    &k as *const u32,
                    &zero,
                    which.get(),
                    &out_strides,
                    &spans,
                    &|v| v,
                );
            }
            Ok(decoded)
        })?;
        Ok((read, warnings.take()))
    }

    /// Write strings (None = NA, written as the fill value), laid out
    /// column-major in the selection's shape.
    pub fn write_strings(
        &self,
        sel: &Selection,
        data: &[Option<&str>],
        opts: IoOptions,
    ) -> Result<Vec<String>> {
        if !self.check_write(sel, data.len())? {
            return Ok(vec![]);
        }
        if let Some(f) = self.chain.fixed_string() {
            // Refused before anything is written, and never cut short.
            let what = self.what();
            for (i, v) in data.iter().enumerate() {
                match v {
                    None => {
                        return Err(ZarrError::Type(format!(
                            "{what}: value {} is NA, which a fixed-width string array (dtype {}) cannot hold",
                            i + 1,
                            f.numpy_dtype()
                        )))
                    }
                    Some(s) => {
                        if let Some(why) = f.refusal(s) {
                            return Err(ZarrError::Type(format!("{what}: value {}: {why}", i + 1)));
                        }
                    }
                }
            }
        }
        let fill = self.fill_string()?;
        // NA is written as the first string that reads back as NA. Where no
        // string does (a CF variable without a marker, whose fill value
        // reads as text), writing NA would store text that reads back as
        // that text: refused before anything is written, as for numbers.
        let na = self.missing_strings(&fill).into_iter().next();
        if na.is_none() {
            if let Some(i) = data.iter().position(|v| v.is_none()) {
                return Err(ZarrError::Type(format!(
                    "{}: value {} is NA, which this string array cannot hold: no string of it reads as NA (its fill value is text; set a missing_value attribute to mark missing strings)",
                    self.what(),
                    i + 1
                )));
            }
        }
        let na = na.as_deref().unwrap_or(&fill);
        let plan = self.plan(sel);
        let chunks = cartesian(&plan);
        let cshape = self.chunk_shape();
        let cn: usize = cshape.iter().product();
        let strides = self.chain.stored_strides(&cshape);
        let data_strides = convert::column_major_strides(&sel.shape());
        let iota: Vec<usize> = (0..data.len()).collect();
        let warnings = Warnings::default();
        run_tasks(&chunks, opts.threads, |c| {
            let idx = chunk_index(c);
            let key = self.chunk_key(&idx);
            let what = self.chunk_what(&key);
            let mut buf = match self.covers_chunk(c, &idx) {
                true => None,
                false => self.stored_strings(&key, &what, &cshape, opts, &warnings)?,
            }
            .unwrap_or_else(|| vec![fill.clone(); cn]);
            // Which data element lands on each chunk element (MAX: none).
            let mut source = vec![usize::MAX; cn];
            let spans: Vec<Vec<Span>> = write_spans(c);
            // SAFETY: spans stay inside the data and the chunk.
            unsafe {
                convert::strided_copy(
                    iota.as_ptr(),
                    &data_strides,
                    source.as_mut_ptr(),
                    &strides,
                    &spans,
                    &|v| v,
                )
            };
            for (b, &i) in buf.iter_mut().zip(&source) {
                if i != usize::MAX {
                    *b = data[i].unwrap_or(na).to_owned();
                }
            }
            if buf.iter().all(|s| *s == fill) {
                self.writes()?.erase(&key).map_err(|e| e.context(&what))
            } else {
                let enc = self
                    .chain
                    .encode_strings(&buf, &cshape)
                    .map_err(|e| e.context(&what))?;
                self.writes()?.set(&key, &enc).map_err(|e| e.context(&what))
            }
        })
        .map_err(super::write::stopped_write)?;
        Ok(warnings.take())
    }
}

/// Strings read from an array: output element `i` is element `elem[i]`
/// of decoded chunk `which[i]` (the fill value where that chunk is missing).
pub struct StringRead {
    chunks: Vec<Option<Vec<String>>>,
    which: Vec<u32>,
    elem: Vec<u32>,
    fill: String,
    /// The strings that read as NA (usually none or one).
    missing: Vec<String>,
}

impl StringRead {
    pub fn len(&self) -> usize {
        self.which.len()
    }

    pub fn is_empty(&self) -> bool {
        self.which.is_empty()
    }

    /// Element `i`, or None where it is NA (equal to a missing string).
    pub fn get(&self, i: usize) -> Option<&str> {
        let s = match &self.chunks[self.which[i] as usize] {
            Some(c) => c[self.elem[i] as usize].as_str(),
            None => self.fill.as_str(),
        };
        if self.missing.iter().any(|m| m == s) {
            None
        } else {
            Some(s)
        }
    }
}

/// A pointer into a buffer that worker threads fill at disjoint places.
struct SendPtr<T>(*mut T);
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    // A method, so closures capture the wrapper and not the bare pointer.
    fn get(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod r_string_tests {
    use super::check_r_strings;

    #[test]
    fn strings_longer_than_r_allows_are_refused_by_kind() {
        let ok = vec!["ab".to_string(), "cde".to_string()];
        assert!(check_r_strings(&ok, "chunk 'c/0'", 3).is_ok());
        let e = check_r_strings(&ok, "chunk 'c/0'", 2).unwrap_err();
        assert_eq!(e.kind(), "unsupported");
        assert!(
            e.message().contains("chunk 'c/0': string 1 has 3 bytes"),
            "{}",
            e.message()
        );
        let nul = vec!["a\0b".to_string()];
        assert_eq!(
            check_r_strings(&nul, "x", 10).unwrap_err().kind(),
            "unsupported"
        );
    }
}
