//! The node documents a store handle has read or written. Opening a node or
//! an array takes its document from here rather than from the store, which
//! saves a read (a request over HTTP) per node; the root's consolidated
//! metadata (v3 `consolidated_metadata`, v2 `.zmetadata`) answers for every
//! node below it and lists children without listing the store.
//!
//! Documents are in R form (see `metadata::r_form`) as JSON text: R parses
//! only the node it asks for, and an array is opened from the same text.
//! Writing or erasing a node's documents through the handle forgets them:
//! R's node objects hold only this handle and their path, and ask here.

use crate::error::{Result, ZarrError};
use crate::metadata::{self, NodeMetadata, UNREADABLE};
use crate::store::{writable, ByteRange, Store, StoreKey, StorePrefix};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

/// A node of consolidated metadata: its document, or the error it raises
/// when it is opened (a node this reader cannot represent).
#[derive(Clone, Debug)]
struct Entry {
    doc: std::result::Result<String, ZarrError>,
    /// Whether an array may be opened from `doc`: not after its documents
    /// were written or erased since (the listing still shows the node).
    current: bool,
}

/// A node document as last read or written.
#[derive(Clone, Debug)]
struct Held {
    array: bool,
    text: String,
}

#[derive(Default)]
struct Docs {
    /// The Zarr version of the root as last read or set.
    version: Option<u8>,
    /// Node documents by node path, as last read or written, and whether
    /// each is an array's.
    nodes: HashMap<String, Held>,
    /// Consolidated metadata of the root, by node path; None without it.
    consolidated: Option<BTreeMap<String, Entry>>,
    /// Warnings about documents read since R last took them (members of
    /// known objects this reader does not know: see `metadata::strict`).
    warnings: Vec<String>,
    /// The version tag of each document key read since R last took them
    /// (None: absent, or the store gave no tag), on a store with
    /// conditional writes: R updates a document only at the version it
    /// read, and needs no second request to learn it.
    tags: Vec<(String, Option<String>)>,
}

/// The cache of one store handle. Store reads happen outside the lock.
#[derive(Default)]
pub struct NodeDocs {
    docs: Mutex<Docs>,
    /// Counts the changes of the documents held: R keeps what it derived
    /// from a document (its list, an array's shape) until this moves, and
    /// asks for nothing more on each access.
    generation: AtomicU64,
}

impl NodeDocs {
    /// The count of changes to the documents held (see `generation`).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Docs> {
        // A panic while the lock was held leaves plain maps behind, which
        // stay usable.
        self.docs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The document of the node at `path` (normalised, "" for the root),
    /// or None when there is no node there. A consolidated node is taken
    /// from the root's consolidated metadata; reading the root (re)reads
    /// that metadata.
    pub fn document(&self, store: &dyn Store, path: &str) -> Result<Option<String>> {
        if !path.is_empty() {
            if let Some(e) = self.lock().consolidated.as_ref().and_then(|c| c.get(path)) {
                return e.doc.clone().map(Some);
            }
        }
        let what = format!("node '/{path}'");
        let tags = std::cell::RefCell::new(Vec::new());
        let read = read_r_form(store, path, &tags).map_err(|e| e.context(&what));
        self.lock().tags.extend(tags.into_inner());
        let Some((node, doc, warning)) = read? else {
            return Ok(None);
        };
        self.lock().warnings.extend(warning);
        let text = serde_json::to_string(&doc)?;
        if path.is_empty() {
            let (consolidated, warning) = consolidated_entries(store, &node, &doc)?;
            let mut d = self.lock();
            d.version = Some(node.zarr_format());
            d.consolidated = consolidated;
            d.warnings.extend(warning);
        }
        let array = matches!(node, NodeMetadata::Array(_));
        self.lock().nodes.insert(
            path.to_string(),
            Held {
                array,
                text: text.clone(),
            },
        );
        self.changed();
        Ok(Some(text))
    }

    /// The warnings gathered by reads since the last call, for R to raise.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().warnings)
    }

    /// The version tags of the document keys read since the last call
    /// (only on a writable store with conditional writes).
    pub fn take_tags(&self) -> Vec<(String, Option<String>)> {
        std::mem::take(&mut self.lock().tags)
    }

    /// The paths of the nodes directly below `path` when the root has
    /// consolidated metadata (sorted); None when the store must be listed.
    pub fn children(&self, path: &str) -> Option<Vec<String>> {
        let d = self.lock();
        let c = d.consolidated.as_ref()?;
        Some(c.keys().filter(|p| parent_of(p) == path).cloned().collect())
    }

    /// The document an array at `path` can be opened from without reading
    /// the store, if this handle has one.
    pub fn array_document(&self, path: &str) -> Option<String> {
        let d = self.lock();
        if let Some(h) = d.nodes.get(path) {
            return h.array.then(|| h.text.clone());
        }
        if path.is_empty() {
            return None;
        }
        match d.consolidated.as_ref()?.get(path)? {
            Entry {
                doc: Ok(t),
                current: true,
            } => Some(t.clone()),
            _ => None,
        }
    }

    /// The document of the node at `path` as this handle last read or
    /// wrote it (a node of consolidated metadata: as that holds it, until
    /// it is written), or as the store holds it now when the handle has
    /// none: what R's node objects show, with no copy of their own.
    pub fn held(&self, store: &dyn Store, path: &str) -> Result<Option<String>> {
        if let Some(h) = self.lock().nodes.get(path) {
            return Ok(Some(h.text.clone()));
        }
        self.document(store, path)
    }

    /// Record the document just written for the node at `path` (R form
    /// text); a node of consolidated metadata gets it too, so that this
    /// session's listing stays in step with the store.
    pub fn put(&self, path: &str, text: &str) -> Result<()> {
        let (node, doc) = metadata::canonical(text.as_bytes(), true)?;
        let mut d = self.lock();
        let array = matches!(node, NodeMetadata::Array(_));
        d.nodes.insert(
            path.to_string(),
            Held {
                array,
                text: text.to_string(),
            },
        );
        if let (false, Some(c)) = (path.is_empty(), d.consolidated.as_mut()) {
            c.insert(
                path.to_string(),
                Entry {
                    doc: Ok(serde_json::to_string(&doc)?),
                    current: false,
                },
            );
        }
        drop(d);
        self.changed();
        Ok(())
    }

    /// Forget what a write or erase of `key` makes stale: the documents of
    /// the node whose document `key` is, or with `below`, of every node
    /// under the prefix `key` ("" or ending in "/").
    pub fn forget(&self, key: &str, below: bool) {
        let mut d = self.lock();
        let stale: Box<dyn Fn(&str) -> bool> = if below {
            let key = key.to_string();
            Box::new(move |p: &str| key.is_empty() || format!("{p}/").starts_with(&key))
        } else {
            let (dir, name) = match key.rsplit_once('/') {
                Some((dir, name)) => (dir, name),
                None => ("", key),
            };
            if !matches!(name, "zarr.json" | ".zarray" | ".zgroup" | ".zattrs") {
                return;
            }
            let dir = dir.to_string();
            Box::new(move |p: &str| p == dir)
        };
        d.nodes.retain(|p, _| !stale(p));
        if let Some(c) = d.consolidated.as_mut() {
            for (p, e) in c.iter_mut() {
                if stale(p) {
                    e.current = false;
                }
            }
        }
        drop(d);
        self.changed();
    }

    /// The Zarr version of the root, as read or set.
    pub fn version(&self) -> Option<u8> {
        self.lock().version
    }

    /// Set the Zarr version that nodes created in a new store get.
    pub fn set_version(&self, version: u8) {
        self.lock().version = Some(version);
    }
}

/// "a/b/c" -> "a/b"; "a" -> "".
fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

/// A node read from the store: its metadata, its canonical R-form
/// document, and the warning its documents raise, if any.
type ReadNode = (NodeMetadata, Value, Option<String>);

/// The node at `path` and its canonical R-form document (64-bit fill values
/// as text, as R's parser needs them). On a writable store with
/// conditional writes each document key read goes into `tags` with its
/// version, from the same request.
fn read_r_form(
    store: &dyn Store,
    path: &str,
    tags: &std::cell::RefCell<Vec<(String, Option<String>)>>,
) -> Result<Option<ReadNode>> {
    let versioned = store.as_versioned();
    let fetch = |key: &str| {
        let key = StoreKey::new(key)?;
        let Some(versioned) = versioned else {
            return store.get(&key, ByteRange::All);
        };
        let got = versioned.get_versioned(&key)?;
        let tag = got.as_ref().and_then(|(_, t)| t.clone());
        tags.borrow_mut().push((key.to_string(), tag));
        Ok(got.map(|(v, _)| v))
    };
    let Some((node, warning)) = metadata::read_node_by(path, &fetch)? else {
        return Ok(None);
    };
    let (node, doc) = metadata::canonical_value(&metadata::r_form(&node), true)?;
    Ok(Some((node, doc, warning)))
}

/// Consolidated entries by node path, and the warning of `.zmetadata`.
type Consolidated = (Option<BTreeMap<String, Entry>>, Option<String>);

/// The consolidated metadata of the root: in its zarr.json (v3) or in
/// `.zmetadata` (v2). None when there is none.
fn consolidated_entries(
    store: &dyn Store,
    root: &NodeMetadata,
    doc: &Value,
) -> Result<Consolidated> {
    if root.zarr_format() != 2 {
        let Some(Value::Object(entries)) = doc.pointer("/consolidated_metadata/metadata") else {
            return Ok((None, None));
        };
        let mut out = BTreeMap::new();
        for (path, entry) in entries {
            let doc = match entry.get(UNREADABLE) {
                Some(u) => Err(unreadable_error(u)),
                None => Ok(serde_json::to_string(entry)?),
            };
            out.insert(path.clone(), Entry { doc, current: true });
        }
        return Ok((Some(out), None));
    }
    let Some(text) = store.get(&StoreKey::new(".zmetadata")?, ByteRange::All)? else {
        return Ok((None, None));
    };
    // Parsed once, for both the warning and the entries.
    let doc: Option<Value> = serde_json::from_slice(&text).ok();
    let warning = doc.as_ref().and_then(|doc| {
        let unknown = metadata::strict::unknown_members_zmetadata(doc);
        metadata::strict::unknown_members_warning(".zmetadata", &text, &unknown)
    });
    let mut out = BTreeMap::new();
    for (path, node) in metadata::v2_consolidated_each_doc(doc.as_ref())? {
        if path.is_empty() {
            continue;
        }
        let doc = node.and_then(|n| {
            let (_, canon) = metadata::canonical_value(&metadata::r_form(&n), true)?;
            Ok(serde_json::to_string(&canon)?)
        });
        out.entry(path).or_insert(Entry { doc, current: true });
    }
    Ok((Some(out), warning))
}

/// The error a consolidated stand-in (see `metadata::unreadable`) holds.
fn unreadable_error(u: &Value) -> ZarrError {
    let message = u
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the node cannot be read")
        .to_string();
    match u.get("kind").and_then(Value::as_str) {
        Some("unsupported") => ZarrError::Unsupported(message),
        _ => ZarrError::Metadata(message),
    }
}

/// A store shared by every array and group opened from it, with the node
/// documents read or written through it. Its writes, erases and
/// conditional writes forget the documents they make stale, so that
/// nothing above the engine has to keep the two coherent.
pub struct NodeStore {
    pub store: Arc<dyn Store>,
    pub nodes: NodeDocs,
}

impl NodeStore {
    pub fn new(store: Arc<dyn Store>) -> NodeStore {
        NodeStore {
            store,
            nodes: NodeDocs::default(),
        }
    }

    // Each write forgets even when it fails: a failed write may have
    // changed the value all the same (a body sent, its answer lost).

    pub fn set(&self, key: &StoreKey, value: &[u8]) -> Result<()> {
        let done = writable(&*self.store, "write", key).and_then(|w| w.set(key, value));
        self.nodes.forget(key.as_str(), false);
        done
    }

    /// `store::set_if_version`, forgetting as `set` does.
    pub fn set_if_version(
        &self,
        key: &StoreKey,
        value: &[u8],
        tag: Option<&str>,
    ) -> Result<Option<String>> {
        let done = crate::store::set_if_version(&*self.store, key, value, tag);
        self.nodes.forget(key.as_str(), false);
        done
    }

    pub fn erase(&self, key: &StoreKey) -> Result<()> {
        let done = writable(&*self.store, "erase", key).and_then(|w| w.erase(key));
        self.nodes.forget(key.as_str(), false);
        done
    }

    pub fn erase_prefix(&self, prefix: &StorePrefix) -> Result<()> {
        let done =
            writable(&*self.store, "erase prefix", prefix).and_then(|w| w.erase_prefix(prefix));
        self.nodes.forget(prefix.as_str(), true);
        done
    }

    /// Move the folder `from` of a local store to `to` (file system paths,
    /// the caller having checked that both stay inside the store), the
    /// prefixes `from_prefix` and `to_prefix`, in one rename; false when
    /// the rename fails (the keys are then moved one by one). The
    /// documents below either prefix are forgotten.
    pub fn rename_folder(
        &self,
        from: &std::path::Path,
        to: &std::path::Path,
        from_prefix: &StorePrefix,
        to_prefix: &StorePrefix,
    ) -> Result<bool> {
        if self.store.as_writable().is_none() {
            return Err(ZarrError::ReadOnly(format!(
                "cannot rename '{from_prefix}': the store is read-only"
            )));
        }
        if let Some(parent) = to.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                return Ok(false);
            }
        }
        let done = std::fs::rename(from, to).is_ok();
        self.nodes.forget(from_prefix.as_str(), true);
        self.nodes.forget(to_prefix.as_str(), true);
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, StrKeys};

    fn store_with(docs: &[(&str, &str)]) -> MemoryStore {
        let s = MemoryStore::new(false);
        for (k, v) in docs {
            s.set_str(k, v.as_bytes()).unwrap();
        }
        s
    }

    const GROUP: &str = r#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;
    const ARRAY: &str = r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"int32",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}"#;

    #[test]
    fn writes_and_erases_through_a_node_store_forget_what_they_make_stale() {
        let s = Arc::new(store_with(&[
            ("zarr.json", GROUP),
            ("a/zarr.json", ARRAY),
            ("g/zarr.json", GROUP),
            ("g/b/zarr.json", ARRAY),
        ]));
        let h = NodeStore::new(s.clone());
        let read = |p: &str| h.nodes.document(&*h.store, p).unwrap();
        read("a");
        read("g/b");
        assert!(h.nodes.array_document("a").is_some());
        // A chunk is no document: nothing is forgotten.
        h.set(&StoreKey::new("a/c/0").unwrap(), b"x").unwrap();
        assert!(h.nodes.array_document("a").is_some());
        let shorter = ARRAY.replace(r#""shape":[4]"#, r#""shape":[2]"#);
        h.set(&StoreKey::new("a/zarr.json").unwrap(), shorter.as_bytes())
            .unwrap();
        assert!(h.nodes.array_document("a").is_none());
        assert!(read("a").unwrap().contains("[2]"));
        h.erase(&StoreKey::new("a/zarr.json").unwrap()).unwrap();
        assert!(h.nodes.array_document("a").is_none());
        assert!(h.nodes.array_document("g/b").is_some());
        h.erase_prefix(&StorePrefix::new("g/").unwrap()).unwrap();
        assert!(h.nodes.array_document("g/b").is_none());
        assert!(read("g/b").is_none());
    }

    #[test]
    fn the_generation_moves_when_a_held_document_may_change_and_not_for_chunks() {
        let s = Arc::new(store_with(&[("zarr.json", GROUP), ("a/zarr.json", ARRAY)]));
        let h = NodeStore::new(s.clone());
        let g0 = h.nodes.generation();
        h.nodes.document(&*h.store, "a").unwrap();
        let g1 = h.nodes.generation();
        assert!(g1 > g0);
        // Held documents answer without a change; chunks are no documents.
        h.nodes.held(&*h.store, "a").unwrap();
        h.set(&StoreKey::new("a/c/0").unwrap(), b"x").unwrap();
        assert_eq!(h.nodes.generation(), g1);
        h.set(&StoreKey::new("a/zarr.json").unwrap(), ARRAY.as_bytes())
            .unwrap();
        let g2 = h.nodes.generation();
        assert!(g2 > g1);
        h.nodes.put("a", ARRAY).unwrap();
        assert!(h.nodes.generation() > g2);
    }

    #[test]
    fn an_array_read_once_opens_again_from_its_cached_document() {
        let s = store_with(&[("zarr.json", GROUP), ("a/zarr.json", ARRAY)]);
        let docs = NodeDocs::default();
        assert!(docs.array_document("a").is_none());
        let text = docs.document(&s, "a").unwrap().unwrap();
        assert_eq!(docs.array_document("a").as_deref(), Some(text.as_str()));
        docs.forget("a/zarr.json", false);
        assert!(docs.array_document("a").is_none());
        assert!(docs.document(&s, "b").unwrap().is_none());
        assert_eq!(docs.children(""), None);
    }

    #[test]
    fn consolidated_metadata_answers_for_nodes_and_children_without_reads() {
        let root = format!(
            r#"{{"zarr_format":3,"node_type":"group","attributes":{{}},
            "consolidated_metadata":{{"kind":"inline","must_understand":false,
            "metadata":{{"g":{GROUP},"g/a":{ARRAY},"b":{ARRAY}}}}}}}"#
        );
        let s = store_with(&[("zarr.json", &root)]);
        let docs = NodeDocs::default();
        docs.document(&s, "").unwrap().unwrap();
        assert_eq!(docs.version(), Some(3));
        // Not in the store: only the consolidated metadata has these.
        let a: Value = serde_json::from_str(&docs.document(&s, "g/a").unwrap().unwrap()).unwrap();
        assert_eq!(a["shape"], serde_json::json!([4]));
        assert_eq!(docs.children("").unwrap(), vec!["b", "g"]);
        assert_eq!(docs.children("g").unwrap(), vec!["g/a"]);
        assert!(docs.array_document("b").is_some());
        docs.forget("g/", true);
        assert!(docs.array_document("g/a").is_none());
        assert!(docs.array_document("b").is_some());
        // The listing keeps the node.
        assert_eq!(docs.children("g").unwrap(), vec!["g/a"]);
        docs.forget("", true);
        assert!(docs.array_document("b").is_none());
    }

    #[test]
    fn a_v2_node_that_cannot_be_read_raises_its_error_and_hides_no_sibling() {
        let zmeta = r#"{"zarr_consolidated_format":1,"metadata":{
            ".zgroup":{"zarr_format":2},
            "ok/.zarray":{"zarr_format":2,"shape":[2],"chunks":[2],"dtype":"<i4",
              "compressor":null,"fill_value":0,"order":"C","filters":null},
            "bad/.zarray":{"zarr_format":2,"shape":[2],"chunks":[2],"dtype":"<x9",
              "compressor":null,"fill_value":0,"order":"C","filters":null}}}"#;
        let s = store_with(&[(".zgroup", r#"{"zarr_format":2}"#), (".zmetadata", zmeta)]);
        let docs = NodeDocs::default();
        docs.document(&s, "").unwrap().unwrap();
        assert_eq!(docs.version(), Some(2));
        assert_eq!(docs.children("").unwrap(), vec!["bad", "ok"]);
        assert!(docs.document(&s, "ok").unwrap().is_some());
        let e = docs.document(&s, "bad").unwrap_err();
        assert!(e.message().contains("'.zmetadata', node '/bad'"), "{e:?}");
    }

    #[test]
    fn a_written_document_replaces_the_consolidated_one() {
        let root = format!(
            r#"{{"zarr_format":3,"node_type":"group","attributes":{{}},
            "consolidated_metadata":{{"kind":"inline","must_understand":false,
            "metadata":{{"g":{GROUP}}}}}}}"#
        );
        let s = store_with(&[("zarr.json", &root)]);
        let docs = NodeDocs::default();
        docs.document(&s, "").unwrap();
        docs.put(
            "g",
            r#"{"zarr_format":3,"node_type":"group","attributes":{"x":1}}"#,
        )
        .unwrap();
        let g: Value = serde_json::from_str(&docs.document(&s, "g").unwrap().unwrap()).unwrap();
        assert_eq!(g["attributes"]["x"], 1);
        docs.put("n", ARRAY).unwrap();
        assert_eq!(docs.children("").unwrap(), vec!["g", "n"]);
        assert_eq!(docs.array_document("n").as_deref(), Some(ARRAY));
    }
}
