//! What this reader checks in a document beyond the members a spec
//! requires: strings an R session could not hold, and members of known
//! objects that it does not know.
//!
//! An R string ends at its first NUL byte, so an attribute holding one would
//! reach R cut short; the document is refused instead. A member that a known
//! object does not have (a typo such as `"seperator"`, or an option of a
//! newer writer) changes nothing here, so it is ignored as the v2 and v3
//! specs let a reader do, but the user is told: one warning per document,
//! naming every such member. An object that says `"must_understand": false`
//! asks to be ignored by readers that do not know it (v3-core.rst,
//! "Extensions") and stays silent.

use super::*;
use std::collections::HashSet;
use std::sync::Mutex;

/// Refuse attributes holding a NUL character anywhere (in a name or in a
/// string value, at any depth). `doc` names the document in the error.
pub(crate) fn refuse_nul(attrs: &Map<String, Value>, doc: &str) -> Result<()> {
    fn walk(v: &Value, path: &mut String) -> Option<String> {
        match v {
            Value::String(s) if s.contains('\0') => Some(path.clone()),
            Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = walk(x, path);
                path.truncate(len);
                found
            }),
            Value::Object(o) => o.iter().find_map(|(k, x)| {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                let found = if k.contains('\0') {
                    Some(path.clone())
                } else {
                    walk(x, path)
                };
                path.truncate(len);
                found
            }),
            _ => None,
        }
    }
    let mut path = String::new();
    match walk(&Value::Object(attrs.clone()), &mut path) {
        None => Ok(()),
        Some(p) => Err(malformed(format!(
            "{doc}: attribute '{}' holds a NUL character (\\u0000), which an R string cannot hold",
            p.replace('\0', "\\u0000")
        ))),
    }
}

/// Whether an unknown member is an extension that asks to be ignored.
fn ignorable(v: &Value) -> bool {
    v.get("must_understand") == Some(&Value::Bool(false))
}

/// The path of `member` below `prefix` ("" at the top of a document).
fn join(prefix: &str, member: &str) -> String {
    if prefix.is_empty() {
        member.to_string()
    } else {
        format!("{prefix}.{member}")
    }
}

/// Appends to `out` the members of `obj` not in `known`, by path.
fn unknown_in(obj: &Map<String, Value>, known: &[&str], prefix: &str, out: &mut Vec<String>) {
    for (k, v) in obj {
        if !known.contains(&k.as_str()) && !ignorable(v) {
            out.push(join(prefix, k));
        }
    }
}

/// An extension definition (`{"name", "configuration"}`) whose
/// configuration members are `members` (None: not known here, so not
/// checked).
fn extension(v: &Value, prefix: &str, members: Option<&[&str]>, out: &mut Vec<String>) {
    let Value::Object(o) = v else { return };
    unknown_in(
        o,
        &["name", "configuration", "must_understand"],
        prefix,
        out,
    );
    if let (Some(known), Some(Value::Object(c))) = (members, o.get("configuration")) {
        unknown_in(c, known, &join(prefix, "configuration"), out);
    }
}

/// The codecs of a v3 codec list, nested shards included.
fn codecs(list: &Value, prefix: &str, out: &mut Vec<String>) {
    let Value::Array(list) = list else { return };
    for (i, c) in list.iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        let at = format!("{prefix}[{i}]");
        let members = crate::codec::configuration_members(name);
        extension(c, &at, members.as_deref(), out);
        if name == "sharding_indexed" {
            for inner in ["codecs", "index_codecs"] {
                if let Some(l) = c.pointer(&format!("/configuration/{inner}")) {
                    codecs(l, &format!("{at}.configuration.{inner}"), out);
                }
            }
        }
    }
}

/// The unknown members of known objects in a zarr.json document, and in
/// the documents its consolidated metadata holds. (Unknown top-level
/// members are the must_understand rule's business, in `v3`.)
pub fn unknown_members_v3(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    v3_into(doc, "", &mut out);
    out
}

fn v3_into(doc: &Value, prefix: &str, out: &mut Vec<String>) {
    let at = |member: &str| join(prefix, member);
    if let Some(g) = doc.get("chunk_grid") {
        let name = g.get("name").and_then(Value::as_str);
        let members: Option<&[&str]> = match name {
            Some("regular") => Some(&["chunk_shape"]),
            Some("rectilinear") => Some(&["kind", "chunk_shapes"]),
            _ => None,
        };
        extension(g, &at("chunk_grid"), members, out);
    }
    if let Some(e) = doc.get("chunk_key_encoding") {
        extension(e, &at("chunk_key_encoding"), Some(&["separator"]), out);
    }
    if let Some(c) = doc.get("codecs") {
        codecs(c, &at("codecs"), out);
    }
    if let Some(Value::Object(cm)) = doc.get("consolidated_metadata") {
        let here = at("consolidated_metadata");
        unknown_in(cm, &["kind", "must_understand", "metadata"], &here, out);
        if let Some(Value::Object(entries)) = cm.get("metadata") {
            for (path, entry) in entries {
                v3_into(entry, &format!("{here}.metadata['{path}']"), out);
            }
        }
    }
}

/// The members numcodecs writes for each codec id (besides `id`).
fn numcodecs_members(id: &str) -> Option<&'static [&'static str]> {
    Some(match id {
        "zlib" | "gzip" | "bz2" => &["id", "level"],
        "zstd" => &["id", "level", "checksum"],
        "blosc" => &["id", "cname", "clevel", "shuffle", "blocksize", "typesize"],
        "lz4" => &["id", "acceleration"],
        "shuffle" => &["id", "elementsize"],
        "crc32c" => &["id", "location"],
        "delta" => &["id", "dtype", "astype"],
        "vlen-utf8" => &["id"],
        _ => return None,
    })
}

/// The unknown members of a `.zarray` document (`prefix` "" for one read
/// on its own): at its top level and in its compressor and filters.
pub fn unknown_members_zarray(doc: &Value, prefix: &str, out: &mut Vec<String>) {
    let Value::Object(obj) = doc else { return };
    unknown_in(obj, &v2::ARRAY_MEMBERS, prefix, out);
    let mut configs: Vec<(String, &Value)> = Vec::new();
    if let Some(c) = obj.get("compressor") {
        configs.push((join(prefix, "compressor"), c));
    }
    if let Some(Value::Array(fs)) = obj.get("filters") {
        for (i, f) in fs.iter().enumerate() {
            configs.push((format!("{}[{i}]", join(prefix, "filters")), f));
        }
    }
    for (at, c) in configs {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        if let (Value::Object(o), Some(known)) = (c, numcodecs_members(id)) {
            unknown_in(o, known, &at, out);
        }
    }
}

/// The unknown members of a `.zmetadata` document and the `.zarray`
/// documents it holds.
pub fn unknown_members_zmetadata(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Value::Object(obj) = doc else {
        return out;
    };
    unknown_in(obj, &["zarr_consolidated_format", "metadata"], "", &mut out);
    if let Some(Value::Object(m)) = obj.get("metadata") {
        for (key, entry) in m {
            if key == v2::ZARRAY || key.ends_with("/.zarray") {
                unknown_members_zarray(entry, &format!("metadata['{key}']"), &mut out);
            }
        }
    }
    out
}

/// Documents already warned about in this session, by a hash of their key
/// and text: a node opened again says nothing new. Bounded, so a session
/// reading millions of documents does not grow it for ever.
static WARNED: Mutex<Option<HashSet<u64>>> = Mutex::new(None);
const WARNED_MAX: usize = 4096;

/// The one warning for the document at `key` (its bytes `text`) with
/// `unknown` members, or None when there are none or it was given before.
pub fn unknown_members_warning(key: &str, text: &[u8], unknown: &[String]) -> Option<String> {
    use std::hash::{Hash, Hasher};
    if unknown.is_empty() {
        return None;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    text.hash(&mut h);
    let id = h.finish();
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    let set = warned.get_or_insert_with(HashSet::new);
    if set.len() >= WARNED_MAX {
        set.clear();
    }
    if !set.insert(id) {
        return None;
    }
    let names: Vec<String> = unknown.iter().map(|m| format!("'{m}'")).collect();
    let (s, them) = if names.len() == 1 {
        ("", "it")
    } else {
        ("s", "them")
    };
    Some(format!(
        "'{key}': unknown member{s} {} ignored (this reader does not know {them})",
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array_doc() -> Value {
        json!({
            "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "gzip", "configuration": {"level": 1}}],
        })
    }

    #[test]
    fn a_document_of_known_members_has_nothing_unknown() {
        assert!(unknown_members_v3(&array_doc()).is_empty());
    }

    #[test]
    fn unknown_members_of_known_objects_are_named_by_path() {
        let mut d = array_doc();
        d["chunk_key_encoding"]["configuration"]["seperator"] = json!(".");
        d["chunk_grid"]["extra"] = json!(1);
        d["codecs"][1]["configuration"]["lvl"] = json!(3);
        assert_eq!(
            unknown_members_v3(&d),
            [
                "chunk_grid.extra",
                "chunk_key_encoding.configuration.seperator",
                "codecs[1].configuration.lvl"
            ]
        );
    }

    #[test]
    fn extensions_that_may_be_ignored_stay_silent() {
        let mut d = array_doc();
        d["chunk_key_encoding"]["configuration"]["hint"] = json!({"must_understand": false});
        d["codecs"][0]["my_ext"] = json!({"must_understand": false, "x": 1});
        assert!(unknown_members_v3(&d).is_empty());
        d["codecs"][0]["my_ext"] = json!({"must_understand": true});
        assert_eq!(unknown_members_v3(&d), ["codecs[0].my_ext"]);
    }

    #[test]
    fn nested_shards_and_consolidated_entries_are_checked() {
        let mut d = array_doc();
        d["codecs"] = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "index_location": "end",
            "codecs": [{"name": "bytes", "configuration": {"endian": "little", "e": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c", "configuration": {"x": 0}}]}}]);
        assert_eq!(
            unknown_members_v3(&d),
            [
                "codecs[0].configuration.codecs[0].configuration.e",
                "codecs[0].configuration.index_codecs[1].configuration.x"
            ]
        );
        let root = json!({"zarr_format": 3, "node_type": "group", "consolidated_metadata": {
            "kind": "inline", "must_understand": false, "metadata": {"a/b": d}}});
        assert_eq!(
            unknown_members_v3(&root)[0],
            "consolidated_metadata.metadata['a/b'].codecs[0].configuration.codecs[0].configuration.e"
        );
        // A codec this crate does not know is refused elsewhere, not here.
        let mut d = array_doc();
        d["codecs"][1] = json!({"name": "zfp", "configuration": {"rate": 8}});
        assert!(unknown_members_v3(&d).is_empty());
    }

    #[test]
    fn v2_documents_are_checked_at_the_top_and_in_their_codecs() {
        let zarray = json!({"shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0,
            "order": "C", "filters": [{"id": "delta", "dtype": "<i4", "scale": 2}],
            "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                           "blocksize": 0, "nthreads": 4},
            "dimension_separator": ".", "zarr_format": 2, "order2": "C"});
        let mut out = Vec::new();
        unknown_members_zarray(&zarray, "", &mut out);
        assert_eq!(out, ["order2", "compressor.nthreads", "filters[0].scale"]);
        let zmeta = json!({"zarr_consolidated_format": 1, "metadata": {"x/.zarray": zarray}});
        let out = unknown_members_zmetadata(&zmeta);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], "metadata['x/.zarray'].order2");
    }

    #[test]
    fn no_document_zarr_python_wrote_has_unknown_members() {
        use crate::metadata::test_util::{files_named, FIXTURES};
        let root = std::path::Path::new(FIXTURES);
        let mut checked = 0;
        for name in ["zarr.json", ".zarray", ".zmetadata"] {
            let mut files = Vec::new();
            files_named(root, name, &mut files);
            for f in files {
                let doc: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
                let unknown = match name {
                    "zarr.json" => unknown_members_v3(&doc),
                    ".zmetadata" => unknown_members_zmetadata(&doc),
                    _ => {
                        let mut out = Vec::new();
                        unknown_members_zarray(&doc, "", &mut out);
                        out
                    }
                };
                assert!(unknown.is_empty(), "{}: {unknown:?}", f.display());
                checked += 1;
            }
        }
        assert!(checked > 300, "{checked} documents");
    }

    #[test]
    fn one_warning_per_document_naming_every_member() {
        let unknown = vec!["a.b".to_string(), "c".to_string()];
        let text = b"a unique document for this test";
        let w = unknown_members_warning("x/zarr.json", text, &unknown).unwrap();
        assert!(
            w.contains("'x/zarr.json'") && w.contains("'a.b', 'c'"),
            "{w}"
        );
        assert_eq!(unknown_members_warning("x/zarr.json", text, &unknown), None);
        assert!(unknown_members_warning("y/zarr.json", text, &unknown).is_some());
        assert_eq!(unknown_members_warning("z/zarr.json", text, &[]), None);
    }

    #[test]
    fn a_nul_in_an_attribute_is_refused_with_its_name() {
        let attrs = json!({"ok": "x", "deep": {"list": [1, "a\u{0}b"]}});
        let e = refuse_nul(attrs.as_object().unwrap(), "zarr.json").unwrap_err();
        assert_eq!(e.kind(), "metadata");
        assert!(
            e.message().contains("attribute 'deep.list[1]'"),
            "{}",
            e.message()
        );
        let attrs = json!({"ke\u{0}y": 1});
        let e = refuse_nul(attrs.as_object().unwrap(), ".zattrs").unwrap_err();
        assert!(e.message().contains("'ke\\u0000y'"), "{}", e.message());
        let fine = json!({"a": ["b", {"c": "d"}], "n": null});
        refuse_nul(fine.as_object().unwrap(), "zarr.json").unwrap();
    }
}
