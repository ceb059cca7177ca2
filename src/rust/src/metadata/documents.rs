//! A node's documents in a store: which keys hold them, reading a node
//! from them (zarr.json, or .zarray/.zgroup with .zattrs), and Zarr v2
//! consolidated metadata (.zmetadata).

use super::*;

/// The documents that store a node, by key name below the node's prefix:
/// zarr.json for v3; .zarray or .zgroup, and .zattrs, for v2.
pub fn documents(node: &NodeMetadata) -> Result<Vec<(&'static str, Vec<u8>)>> {
    let pretty = |v: &Value| serde_json::to_vec_pretty(v).map_err(ZarrError::from);
    Ok(match (node.zarr_format(), node) {
        (2, NodeMetadata::Array(a)) => {
            let (zarray, zattrs) = v2::array_to_json(a)?;
            vec![
                (v2::ZARRAY, pretty(&zarray)?),
                (v2::ZATTRS, pretty(&zattrs)?),
            ]
        }
        (2, NodeMetadata::Group(g)) => {
            let (zgroup, zattrs) = v2::group_to_json(g);
            vec![
                (v2::ZGROUP, pretty(&zgroup)?),
                (v2::ZATTRS, pretty(&zattrs)?),
            ]
        }
        (_, NodeMetadata::Array(a)) => {
            // A chain that does not parse is refused where the array is
            // opened, as before.
            let chain = crate::codec::CodecChain::from_json(
                &a.codecs,
                a.data_type,
                &a.fill_value.bytes,
                a.shape.len(),
            );
            if let Some(f) = chain.as_ref().ok().and_then(|c| c.fixed_string()) {
                // zarr-python 3 spells these as parameterised data types,
                // which this package does not write.
                return Err(ZarrError::Unsupported(format!(
                    "fixed-width strings (dtype {}) can only be written to Zarr v2 arrays",
                    f.numpy_dtype()
                )));
            }
            vec![("zarr.json", pretty(&v3::to_json(node))?)]
        }
        _ => vec![("zarr.json", pretty(&v3::to_json(node))?)],
    })
}

/// Read the metadata of the node at `path` from `store`, in either format:
/// zarr.json first, then .zarray or .zgroup with .zattrs. None if there is
/// no node there.
pub fn read_node(store: &dyn crate::store::Store, path: &str) -> Result<Option<NodeMetadata>> {
    Ok(read_node_warning(store, path)?.map(|(node, _)| node))
}

/// `read_node`, with the warning for members of known objects that this
/// reader does not know (see `strict`), once per document and session.
pub fn read_node_warning(
    store: &dyn crate::store::Store,
    path: &str,
) -> Result<Option<(NodeMetadata, Option<String>)>> {
    use crate::store::ByteRange;
    read_node_by(path, &|key| {
        store.get(&crate::store::StoreKey::new(key)?, ByteRange::All)
    })
}

/// `read_node_warning` with the documents' values fetched by `fetch`
/// (given a key), for a reader that needs more than the bytes of each
/// read (an object store's version tags).
pub fn read_node_by(
    path: &str,
    fetch: &dyn Fn(&str) -> Result<Option<Vec<u8>>>,
) -> Result<Option<(NodeMetadata, Option<String>)>> {
    let key = |name: &str| {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}/{name}")
        }
    };
    let get = |name: &str| fetch(&key(name));
    // Each document is parsed once, for the node and for the strict
    // mode's look at it; only one that parsed is looked at.
    let context = |name: &'static str| move |e: ZarrError| e.context(&format!("'{}'", key(name)));
    if let Some(b) = get("zarr.json")? {
        let doc = v3::document(&b).map_err(context("zarr.json"))?;
        let node = v3::parse_value(&doc).map_err(context("zarr.json"))?;
        let unknown = strict::unknown_members_v3(&doc);
        let w = strict::unknown_members_warning(&key("zarr.json"), &b, &unknown);
        return Ok(Some((node, w)));
    }
    if let Some(b) = get(v2::ZARRAY)? {
        let attrs = get(v2::ZATTRS)?;
        let doc = v2::zarray_document(&b).map_err(context(v2::ZARRAY))?;
        let a = v2::parse_array_value(&doc, attrs.as_deref()).map_err(context(v2::ZARRAY))?;
        let mut unknown = Vec::new();
        strict::unknown_members_zarray(&doc, "", &mut unknown);
        let w = strict::unknown_members_warning(&key(v2::ZARRAY), &b, &unknown);
        return Ok(Some((NodeMetadata::Array(a), w)));
    }
    if let Some(b) = get(v2::ZGROUP)? {
        let attrs = get(v2::ZATTRS)?;
        return v2::parse_group(&b, attrs.as_deref())
            .map(|g| Some((NodeMetadata::Group(g), None)))
            .map_err(|e| e.context(&format!("'{}'", key(v2::ZGROUP))));
    }
    Ok(None)
}

/// The nodes of Zarr v2 consolidated metadata (.zmetadata), as
/// (path, node) pairs; the root is "".
pub fn v2_consolidated_nodes(zmetadata: &[u8]) -> Result<Vec<(String, NodeMetadata)>> {
    v2_nodes_of(&v2::parse_consolidated(zmetadata)?)
}

/// The nodes of the `metadata` object of a `.zmetadata` document.
fn v2_nodes_of(map: &Map<String, Value>) -> Result<Vec<(String, NodeMetadata)>> {
    let mut out = Vec::new();
    for (key, doc) in map {
        let (path, kind) = match key.rsplit_once('/') {
            Some((p, k)) => (p.to_string(), k),
            None => (String::new(), key.as_str()),
        };
        let attrs_key = if path.is_empty() {
            v2::ZATTRS.to_string()
        } else {
            format!("{path}/{}", v2::ZATTRS)
        };
        let attrs = map.get(&attrs_key);
        let node = match kind {
            v2::ZARRAY => NodeMetadata::Array(v2::array_from_json(doc, attrs)?),
            v2::ZGROUP => NodeMetadata::Group(v2::group_from_json(doc, attrs)?),
            _ => continue,
        };
        out.push((path, node));
    }
    Ok(out)
}

/// The nodes of `.zmetadata` each on its own: a node this reader cannot
/// represent gets its error (naming it) and hides none of its siblings.
/// Nodes are read one by one only when the whole document does not parse;
/// a document without a `metadata` object is an error.
pub fn v2_consolidated_each(zmetadata: &[u8]) -> Result<Vec<(String, Result<NodeMetadata>)>> {
    v2_consolidated_each_doc(serde_json::from_slice(zmetadata).ok().as_ref())
}

/// `v2_consolidated_each` of a `.zmetadata` document already parsed
/// (None: it is not JSON), so a caller that also looks at the document
/// parses it once.
pub fn v2_consolidated_each_doc(
    doc: Option<&Value>,
) -> Result<Vec<(String, Result<NodeMetadata>)>> {
    let whole = doc
        .and_then(Value::as_object)
        .and_then(|o| v2::consolidated_metadata(o).ok())
        .and_then(|m| v2_nodes_of(m).ok());
    if let Some(nodes) = whole {
        return Ok(nodes.into_iter().map(|(p, n)| (p, Ok(n))).collect());
    }
    let Some(Value::Object(meta)) = doc.and_then(|d| d.get("metadata")) else {
        return Err(ZarrError::Metadata(
            "'.zmetadata' must hold a 'metadata' object".into(),
        ));
    };
    let split = |key: &str| -> (String, String) {
        match key.rsplit_once('/') {
            Some((p, k)) => (p.to_string(), k.to_string()),
            None => (String::new(), key.to_string()),
        }
    };
    let mut paths: Vec<String> = Vec::new();
    for key in meta.keys() {
        let (path, kind) = split(key);
        if (kind == v2::ZARRAY || kind == v2::ZGROUP) && !paths.contains(&path) {
            paths.push(path);
        }
    }
    let out = paths
        .into_iter()
        .map(|p| {
            let own: Map<String, Value> = meta
                .iter()
                .filter(|(k, _)| split(k).0 == p)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let node = v2_nodes_of(&own)
                .and_then(|nodes| {
                    nodes
                        .into_iter()
                        .find(|(q, _)| *q == p)
                        .map(|(_, n)| n)
                        .ok_or_else(|| ZarrError::Metadata("no node document".into()))
                })
                .map_err(|e| {
                    let prefix = format!("'.zmetadata', node '/{p}'");
                    e.context(&prefix)
                });
            (p, node)
        })
        .collect();
    Ok(out)
}

/// Zarr v2 consolidated metadata (.zmetadata) for the given nodes.
pub fn v2_consolidated_document(nodes: &[(String, NodeMetadata)]) -> Result<Vec<u8>> {
    let mut map = Map::new();
    for (path, node) in nodes {
        for (name, text) in documents(node)? {
            let key = if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}/{name}")
            };
            map.insert(key, serde_json::from_slice(&text)?);
        }
    }
    let doc = json!({"metadata": map, "zarr_consolidated_format": 1});
    serde_json::to_vec_pretty(&doc).map_err(ZarrError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read_node_by` over documents held in a map (key -> bytes).
    fn read_from(
        docs: &[(&str, Vec<u8>)],
        path: &str,
    ) -> Result<Option<(NodeMetadata, Option<String>)>> {
        read_node_by(path, &|key: &str| {
            Ok(docs.iter().find(|(k, _)| *k == key).map(|(_, b)| b.clone()))
        })
    }

    #[test]
    fn a_node_document_is_refused_with_its_key_and_read_with_the_strict_warning() {
        let array = json!({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "int8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"extra_member_of_read_node_by": 1}}]});
        let text = array.to_string().into_bytes();
        let (node, w) = read_from(&[("g/a/zarr.json", text)], "g/a")
            .unwrap()
            .unwrap();
        assert!(matches!(node, NodeMetadata::Array(ref a) if a.shape == [2]));
        let w = w.expect("a warning for the unknown member");
        assert!(
            w.contains("'g/a/zarr.json'")
                && w.contains("codecs[0].configuration.extra_member_of_read_node_by"),
            "{w}"
        );
        for (bytes, want) in [
            (
                b"{\"zarr_format\": 3, \xff}".to_vec(),
                "zarr.json is not UTF-8",
            ),
            (b"{\"zarr_format\": 3,".to_vec(), "invalid JSON"),
            (b"[3]".to_vec(), "must hold a JSON object"),
        ] {
            let e = read_from(&[("g/a/zarr.json", bytes)], "g/a").unwrap_err();
            assert_eq!(e.kind(), "metadata");
            assert!(
                e.message().contains("'g/a/zarr.json'") && e.message().contains(want),
                "{}",
                e.message()
            );
        }
        // v2: .zarray, with its .zattrs
        let zarray = json!({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|i1",
            "fill_value": 0, "order": "C", "compressor": null, "filters": null,
            "extra_member_of_read_node_by": 1});
        let docs = [
            (".zarray", zarray.to_string().into_bytes()),
            (".zattrs", br#"{"units": "m"}"#.to_vec()),
        ];
        let (node, w) = read_from(&docs, "").unwrap().unwrap();
        let NodeMetadata::Array(a) = node else {
            panic!("not an array")
        };
        assert_eq!(a.attributes["units"], "m");
        assert!(w.unwrap().contains("'.zarray'"));
        let e = read_from(&[(".zarray", b"{\xfe}".to_vec())], "").unwrap_err();
        assert!(
            e.message().contains("'.zarray'") && e.message().contains(".zarray is not UTF-8"),
            "{}",
            e.message()
        );
    }
}
