//! Bindings of metadata: normalising documents, the documents of a node,
//! reading a node's metadata, and consolidated metadata (v2 and v3).

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
        if let (true, NodeMetadata::Array(m)) = (check_codecs, &node) {
            crate::codec::CodecChain::from_json(
                &m.codecs,
                m.data_type,
                &m.fill_value.bytes,
                m.shape.len(),
            )?;
        }
        Ok(serde_json::to_string_pretty(&doc)
            .map_err(ZarrError::from)?
            .into())
    })
}

/// The documents that store a node given in R form: a character vector
/// named by key ("zarr.json", or ".zarray"/".zgroup" and ".zattrs").
/// @noRd
#[extendr]
fn rz_metadata_documents(json: &str) -> Robj {
    guard(|| {
        let node = crate::metadata::parse_r_form(json.as_bytes())?;
        if let NodeMetadata::Array(m) = &node {
            crate::codec::CodecChain::from_json(
                &m.codecs,
                m.data_type,
                &m.fill_value.bytes,
                m.shape.len(),
            )?;
        }
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

/// The metadata of the node at `path`, v3 or v2, in R form (JSON text),
/// or NULL when there is no node.
/// @noRd
#[extendr]
fn rz_node_metadata(store: Robj, path: &str) -> Robj {
    guard(|| {
        let store = store_of(&store)?;
        let path = crate::engine::normalize_path(path)?;
        Ok(
            match crate::metadata::read_node_warning(store.as_ref(), &path)? {
                None => ().into(),
                Some((node, warning)) => {
                    let text = serde_json::to_vec(&crate::metadata::r_form(&node))?;
                    let (_, doc) = crate::metadata::canonical(&text, true)?;
                    let out = serde_json::to_string(&doc).map_err(ZarrError::from)?.into();
                    with_warnings_of(out, "metadata", warning.into_iter().collect())
                }
            },
        )
    })
}

/// Zarr v2 consolidated metadata (.zmetadata text) as a named list of
/// node documents in R form (JSON text), named by node path.
/// @noRd
#[extendr]
fn rz_consolidated_v2(text: &str) -> Robj {
    guard(|| {
        let nodes = crate::metadata::v2_consolidated_nodes(text.as_bytes())?;
        let warning = serde_json::from_str(text).ok().and_then(|doc| {
            let unknown = crate::metadata::strict::unknown_members_zmetadata(&doc);
            crate::metadata::strict::unknown_members_warning(
                ".zmetadata",
                text.as_bytes(),
                &unknown,
            )
        });
        let mut paths = Vec::new();
        let mut docs = Vec::new();
        for (path, node) in &nodes {
            let t = serde_json::to_vec(&crate::metadata::r_form(node))?;
            let (_, doc) = crate::metadata::canonical(&t, true)?;
            paths.push(path.clone());
            docs.push(serde_json::to_string(&doc).map_err(ZarrError::from)?);
        }
        Ok(with_warnings_of(
            named_strings(docs, paths)?,
            "metadata",
            warning.into_iter().collect(),
        ))
    })
}

/// A character vector of `values` named by `names`.
fn named_strings(values: Vec<String>, names: Vec<String>) -> Result<Robj> {
    let mut v: Robj = strings(values);
    v.set_names(names)
        .map_err(|e| ZarrError::Type(e.to_string()))?;
    Ok(v)
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

/// The node documents of a canonical root document's consolidated
/// metadata (as rz_node_metadata gives it), as JSON texts named by path;
/// NULL when it has none.
/// @noRd
#[extendr]
fn rz_consolidated_v3(text: &str) -> Robj {
    guard(|| {
        let doc: serde_json::Value = serde_json::from_str(text)?;
        let Some(serde_json::Value::Object(entries)) =
            doc.pointer("/consolidated_metadata/metadata")
        else {
            return Ok(().into());
        };
        let mut paths = Vec::with_capacity(entries.len());
        let mut docs = Vec::with_capacity(entries.len());
        for (path, entry) in entries {
            paths.push(path.clone());
            docs.push(serde_json::to_string(entry)?);
        }
        named_strings(docs, paths)
    })
}

extendr_module! {
    mod metadata;
    fn rz_metadata_normalize;
    fn rz_metadata_documents;
    fn rz_node_metadata;
    fn rz_consolidated_v2;
    fn rz_consolidate_v2;
    fn rz_consolidated_v3;
}
