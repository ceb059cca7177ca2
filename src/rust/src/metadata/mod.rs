//! Node metadata of Zarr v3 (v3-core.rst, "Metadata"), with the regular chunk
//! grid (v3-chunk-grids-regular-grid.rst) and the `default` and `v2` chunk key
//! encodings (v3-chunk-key-encodings-default.rst, -v2.rst). The JSON side
//! lives in `v3`.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use crate::fill::FillValue;
pub use crate::grid::ChunkGrid;
use serde_json::{json, Map, Value};

pub mod numpy_types;
pub mod strict;
#[cfg(test)]
mod test_util;
pub mod v2;
pub mod v3;

/// The error of a document that breaks its spec.
fn malformed(msg: impl Into<String>) -> ZarrError {
    ZarrError::Metadata(msg.into())
}

/// A chunk shape must have one positive extent per dimension of `shape`;
/// `label` names the member in messages (".zarray: chunks").
pub(crate) fn check_chunk_shape(chunks: &[u64], shape: &[u64], label: &str) -> Result<()> {
    if chunks.len() != shape.len() {
        return Err(malformed(format!(
            "{label} {chunks:?} has {} dimensions but shape {shape:?} has {}",
            chunks.len(),
            shape.len()
        )));
    }
    if chunks.contains(&0) {
        return Err(malformed(format!(
            "{label} {chunks:?} entries must be greater than 0"
        )));
    }
    Ok(())
}

/// A list of non-negative integers (a shape); `what` names it in errors.
fn u64_list(v: &Value, what: &str) -> Result<Vec<u64>> {
    let want = || {
        malformed(format!(
            "{what} must be an array of non-negative integers, got {v}"
        ))
    };
    v.as_array()
        .ok_or_else(want)?
        .iter()
        .map(|x| x.as_u64().ok_or_else(want))
        .collect()
}

pub use crate::key::ChunkKeyEncoding;

#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadata {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    /// The regular grid's chunk shape; for a rectilinear grid, each
    /// dimension's longest chunk (what a buffer for any chunk must hold).
    pub chunk_shape: Vec<u64>,
    /// The chunk edges of a `rectilinear` chunk grid; None for a regular one.
    pub rectilinear: Option<ChunkGrid>,
    pub chunk_key_encoding: ChunkKeyEncoding,
    pub fill_value: FillValue,
    /// The codecs as written in zarr.json (validated by CodecChain::from_json).
    pub codecs: Vec<Value>,
    pub attributes: Map<String, Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
    pub storage_transformers: Vec<Value>,
    /// Other top-level members (extensions with must_understand false), kept verbatim.
    pub extra: Map<String, Value>,
    /// 3, or 2 for arrays described by .zarray documents.
    pub zarr_format: u8,
    /// Whether elements equal to the fill value read as NA. False only for
    /// Zarr v2 arrays whose fill_value is null (no missing-value marker).
    pub fill_marks_na: bool,
}

impl ArrayMetadata {
    /// An array with the defaults zarr-python uses for a new array: `/`
    /// chunk keys, a zero fill value and a little-endian `bytes` codec.
    pub fn new(shape: Vec<u64>, data_type: DataType, chunk_shape: Vec<u64>) -> ArrayMetadata {
        ArrayMetadata {
            shape,
            data_type,
            chunk_shape,
            rectilinear: None,
            chunk_key_encoding: ChunkKeyEncoding::default(),
            fill_value: FillValue::zero(data_type),
            zarr_format: 3,
            fill_marks_na: true,
            codecs: vec![json!({"name": "bytes", "configuration": {"endian": "little"}})],
            attributes: Map::new(),
            dimension_names: None,
            storage_transformers: Vec::new(),
            extra: Map::new(),
        }
    }

    /// The invariants `v3::parse` guarantees, for metadata built in code
    /// before it is written.
    pub fn validate(&self) -> Result<()> {
        let rank = self.shape.len();
        if self.chunk_shape.len() != rank {
            return Err(ZarrError::Metadata(format!(
                "chunk_grid: chunk_shape has {} dimensions but shape has {rank}",
                self.chunk_shape.len()
            )));
        }
        if self.chunk_shape.contains(&0) {
            return Err(ZarrError::Metadata(
                "chunk_grid: chunk_shape entries must be greater than 0".into(),
            ));
        }
        if let Some(g) = &self.rectilinear {
            g.check_covers(&self.shape, "chunk_grid (rectilinear): chunk_shapes")?;
        }
        if self.data_type != DataType::String
            && self.fill_value.bytes.len() != self.data_type.size()
        {
            return Err(ZarrError::Metadata(format!(
                "fill_value has {} bytes but {} needs {}",
                self.fill_value.bytes.len(),
                self.data_type.name(),
                self.data_type.size()
            )));
        }
        if self.codecs.is_empty() {
            return Err(ZarrError::Metadata("codecs must not be empty".into()));
        }
        if let Some(names) = &self.dimension_names {
            if names.len() != rank {
                return Err(ZarrError::Metadata(format!(
                    "dimension_names has {} entries but shape has {rank}",
                    names.len()
                )));
            }
        }
        Ok(())
    }

    /// Chunks along each dimension: ceil(shape / chunk_shape) for a
    /// regular grid.
    pub fn grid_shape(&self) -> Vec<u64> {
        self.grid().grid_shape(&self.shape)
    }

    /// The chunk grid, regular or rectilinear.
    pub fn grid(&self) -> ChunkGrid {
        match &self.rectilinear {
            Some(g) => g.clone(),
            None => ChunkGrid::regular(&self.chunk_shape),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadata {
    pub attributes: Map<String, Value>,
    pub extra: Map<String, Value>,
    /// 3, or 2 for groups described by .zgroup documents (0 reads as 3).
    pub zarr_format: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeMetadata {
    Array(ArrayMetadata),
    Group(GroupMetadata),
}

impl NodeMetadata {
    pub fn attributes(&self) -> &Map<String, Value> {
        match self {
            NodeMetadata::Array(a) => &a.attributes,
            NodeMetadata::Group(g) => &g.attributes,
        }
    }

    /// The zarr.json document, pretty-printed as zarr-python writes it.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(&v3::to_json(self)).expect("a Value always serialises")
    }
}

impl NodeMetadata {
    pub fn zarr_format(&self) -> u8 {
        match self {
            NodeMetadata::Array(a) => a.zarr_format,
            NodeMetadata::Group(g) if g.zarr_format == 2 => 2,
            NodeMetadata::Group(_) => 3,
        }
    }
}

/// The form in which R holds metadata of either format: the members of
/// zarr.json, with `zarr_format` 2 for v2 nodes, where a null fill value
/// means "no missing-value marker".
pub fn parse_r_form(bytes: &[u8]) -> Result<NodeMetadata> {
    parse_r_form_value(&serde_json::from_slice(bytes)?)
}

/// `parse_r_form` of a document already parsed as JSON.
pub fn parse_r_form_value(doc: &Value) -> Result<NodeMetadata> {
    let v2 = doc.get("zarr_format").and_then(Value::as_u64) == Some(2);
    if !v2 {
        return v3::parse_value(doc);
    }
    let mut doc = doc.clone();
    let obj = doc
        .as_object_mut()
        .ok_or_else(|| ZarrError::Metadata("metadata must be a JSON object".into()))?;
    obj.insert("zarr_format".into(), 3.into());
    // Other members of a v2 document are kept but mean nothing (v2 has no
    // must_understand): they must not make the v3 parser refuse the node.
    let v2_extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !v3::known_member(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    obj.retain(|k, _| v3::known_member(k));
    let null_fill = obj.get("fill_value").is_some_and(Value::is_null);
    if null_fill {
        // Any valid fill parses; the bytes are zero below.
        let any_fill = match obj.get("data_type").and_then(Value::as_str) {
            Some("bool") => Value::from(false),
            Some("string") => Value::from(""),
            Some("complex64" | "complex128") => json!([0, 0]),
            _ => Value::from(0),
        };
        obj.insert("fill_value".into(), any_fill);
    }
    let mut node = v3::parse_value(&doc)?;
    match &mut node {
        NodeMetadata::Array(a) => {
            a.zarr_format = 2;
            a.extra = v2_extra;
            if null_fill {
                a.fill_value = FillValue::zero(a.data_type);
                a.fill_marks_na = false;
            }
        }
        NodeMetadata::Group(g) => {
            g.zarr_format = 2;
            g.extra = v2_extra;
        }
    }
    Ok(node)
}

/// The R form of a node (see `parse_r_form`).
pub fn r_form(node: &NodeMetadata) -> Value {
    let mut doc = v3::to_json(node);
    if node.zarr_format() == 2 {
        doc["zarr_format"] = 2.into();
        if let NodeMetadata::Array(a) = node {
            if !a.fill_marks_na {
                doc["fill_value"] = Value::Null;
            }
        }
    }
    doc
}

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

/// The member of an R-form document that marks a node this reader cannot
/// represent; R raises the error it holds when the node is opened.
pub const UNREADABLE: &str = "unreadable";

/// The R-form stand-in for a node document that failed to parse: its
/// node type (array unless it says group) and the error's kind and text.
pub fn unreadable(doc: &Value, e: &ZarrError) -> Value {
    let node_type = match doc.get("node_type").and_then(Value::as_str) {
        Some("group") => "group",
        _ => "array",
    };
    let zarr_format = match doc.get("zarr_format").and_then(Value::as_u64) {
        Some(2) => 2,
        _ => 3,
    };
    json!({
        "zarr_format": zarr_format,
        "node_type": node_type,
        UNREADABLE: {"kind": e.kind(), "message": e.to_string()}
    })
}

/// The canonical R form of a node document (see `parse_r_form`), with the
/// documents of consolidated metadata (`consolidated_metadata.metadata`)
/// canonical too. With `int64_as_text`, fill values of int64 and uint64
/// arrays are decimal strings: R's JSON parser cannot hold every 64-bit
/// integer as a number, and the parsers here accept that form back.
pub fn canonical(bytes: &[u8], int64_as_text: bool) -> Result<(NodeMetadata, Value)> {
    canonical_value(&serde_json::from_slice(bytes)?, int64_as_text)
}

/// `canonical` of a document already parsed as JSON.
pub fn canonical_value(form: &Value, int64_as_text: bool) -> Result<(NodeMetadata, Value)> {
    let node = parse_r_form_value(form)?;
    let mut doc = r_form(&node);
    if let (true, NodeMetadata::Array(a)) = (int64_as_text, &node) {
        // ("NaT", the fill of a numpy.datetime64 array, stays as it is.)
        if a.fill_marks_na
            && matches!(a.data_type, DataType::Int64 | DataType::UInt64)
            && doc["fill_value"].is_number()
        {
            doc["fill_value"] = Value::String(doc["fill_value"].to_string());
        }
    }
    if let Some(Value::Object(entries)) = doc.pointer_mut("/consolidated_metadata/metadata") {
        for (path, entry) in entries.iter_mut() {
            *entry = match canonical_value(entry, int64_as_text) {
                Ok((_, canon)) => canon,
                // One node this reader cannot represent must not hide the
                // others: it stays listed, and opening it raises this error.
                Err(e) => unreadable(
                    entry,
                    &e.context(&format!("consolidated metadata of '{path}'")),
                ),
            };
        }
    }
    Ok((node, doc))
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

    #[test]
    fn consolidated_metadata_keeps_an_unreadable_entry_as_a_marker() {
        let good = json!({"zarr_format": 3, "node_type": "group", "attributes": {}});
        let bad = json!({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "bfloat16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes"}]});
        let root = json!({"zarr_format": 3, "node_type": "group", "attributes": {},
            "consolidated_metadata": {"kind": "inline", "must_understand": false,
                "metadata": {"g": good, "bad": bad}}});
        let (_, doc) = canonical(root.to_string().as_bytes(), true).unwrap();
        let entries = &doc["consolidated_metadata"]["metadata"];
        assert_eq!(entries["g"]["node_type"], "group");
        assert!(entries["g"].get(UNREADABLE).is_none());
        let marker = &entries["bad"][UNREADABLE];
        assert_eq!(entries["bad"]["node_type"], "array");
        assert_eq!(marker["kind"], "unsupported");
        let msg = marker["message"].as_str().unwrap();
        assert!(msg.contains("'bad'") && msg.contains("bfloat16"), "{msg}");
    }

    #[test]
    fn the_r_form_of_v2_string_arrays_round_trips_with_a_null_fill() {
        for dtype in ["|O", "<U4", "|S4"] {
            let filters = if dtype == "|O" {
                json!([{"id": "vlen-utf8"}])
            } else {
                Value::Null
            };
            let zarray = json!({"shape": [3], "chunks": [2], "dtype": dtype, "fill_value": null,
                "order": "C", "filters": filters, "dimension_separator": ".",
                "compressor": null, "zarr_format": 2});
            let node =
                NodeMetadata::Array(v2::parse_array(zarray.to_string().as_bytes(), None).unwrap());
            let form = r_form(&node);
            assert_eq!(form["fill_value"], Value::Null, "{dtype}");
            let back = parse_r_form(form.to_string().as_bytes()).unwrap();
            assert_eq!(back, node, "{dtype}");
            let docs = documents(&back).unwrap();
            let written: Value = serde_json::from_slice(&docs[0].1).unwrap();
            assert_eq!(written, zarray, "{dtype}");
        }
    }

    #[test]
    fn metadata_new_is_valid_and_round_trips() {
        let mut m = ArrayMetadata::new(vec![10, 7], DataType::Float32, vec![3, 7]);
        m.validate().unwrap();
        assert_eq!(m.grid_shape(), vec![4, 1]);
        let node = NodeMetadata::Array(m.clone());
        assert_eq!(v3::parse(node.to_json_string().as_bytes()).unwrap(), node);
        m.chunk_shape = vec![3];
        assert_eq!(m.validate().unwrap_err().kind(), "metadata");
        m.chunk_shape = vec![3, 0];
        assert_eq!(m.validate().unwrap_err().kind(), "metadata");
    }

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
