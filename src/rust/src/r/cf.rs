//! Bindings of CF (`cf/`) for the definition of new arrays.

use super::*;
use serde_json::Value;

/// The attributes (a named character vector of JSON texts, or NULL) that
/// the new array of R-form metadata `json` at `path` needs in a store of
/// `zarr_format` so that xarray masks what reads here as NA.
/// @noRd
#[extendr]
fn rz_cf_missing_attributes(json: &str, path: &str, zarr_format: i32) -> Robj {
    guard(|| {
        let NodeMetadata::Array(mut meta) = crate::metadata::parse_r_form(json.as_bytes())? else {
            return Ok(().into());
        };
        meta.zarr_format = if zarr_format == 2 { 2 } else { 3 };
        let add = crate::cf::missing_attributes(&meta, path)?;
        if add.is_empty() {
            return Ok(().into());
        }
        let texts: Vec<String> = add.values().map(Value::to_string).collect();
        let mut v: Robj = strings(texts);
        v.set_names(add.keys().map(String::as_str))
            .map_err(|e| ZarrError::Type(e.to_string()))?;
        Ok(v)
    })
}

extendr_module! {
    mod cf;
    fn rz_cf_missing_attributes;
}
