//! Bindings of metadata: normalising documents, the documents of a node,
//! and writing Zarr v2 consolidated metadata (nodes are read through the
//! store handle's documents, `r/node.rs`).

use super::*;

/// Parse and re-serialise a zarr.json document: validates it (and its
/// codec chain when `check_codecs`) and gives the canonical form. With
/// `for_r`, 64-bit integer fill values are given as decimal strings, since
/// R's JSON parser cannot hold all of them as numbers (the parser here
/// takes them back in that form).
/// @noRd
#[extendr]
fn rz_metadata_normalize(json: &str, check_codecs: bool, for_r: bool) -> Robj {
    guard(|| {
        let (node, doc) = crate::metadata::canonical(json.as_bytes(), for_r)?;
        if check_codecs {
            check_array_codecs(&node)?;
        }
        Ok(serde_json::to_string_pretty(&doc)
            .map_err(ZarrError::from)?
            .into())
    })
}

/// Refuse an array whose codecs cannot be built for its data type.
fn check_array_codecs(node: &NodeMetadata) -> Result<()> {
    if let NodeMetadata::Array(m) = node {
        crate::codec::CodecChain::from_json(
            &m.codecs,
            m.data_type,
            &m.fill_value.bytes,
            m.shape.len(),
        )?;
    }
    Ok(())
}

/// The documents that store a node given in R form: a character vector
/// named by key ("zarr.json", or ".zarray"/".zgroup" and ".zattrs").
/// @noRd
#[extendr]
fn rz_metadata_documents(json: &str) -> Robj {
    guard(|| {
        let node = crate::metadata::parse_r_form(json.as_bytes())?;
        check_array_codecs(&node)?;
        let docs = crate::metadata::documents(&node)?;
        let texts: Vec<String> = docs
            .iter()
            .map(|(_, t)| String::from_utf8_lossy(t).into_owned())
            .collect();
        let mut v: Robj = strings(texts);
        v.set_names(docs.iter().map(|(n, _)| *n))
            .map_err(|e| ZarrError::Type(e.to_string()))?;
        Ok(v)
    })
}

/// .zmetadata text for nodes given as R-form JSON texts named by path.
/// @noRd
#[extendr]
fn rz_consolidate_v2(paths: Vec<String>, docs: Vec<String>) -> Robj {
    guard(|| {
        let nodes = paths
            .into_iter()
            .zip(docs)
            .map(|(p, d)| Ok((p, crate::metadata::parse_r_form(d.as_bytes())?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(
            String::from_utf8_lossy(&crate::metadata::v2_consolidated_document(&nodes)?)
                .into_owned()
                .into(),
        )
    })
}

extendr_module! {
    mod metadata;
    fn rz_metadata_normalize;
    fn rz_metadata_documents;
    fn rz_consolidate_v2;
}
