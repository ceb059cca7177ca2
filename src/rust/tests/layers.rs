//! The engine's modules in layers, each importing only from the layers
//! below it, so that there is no import cycle (ARCHITECTURE.md): leaves
//! (errors, layout kernels, data types, R's NA values), then the runtime
//! (pool, async runtimes, clients), stores and codecs, metadata,
//! conversion, CF, nodes and the engine, and the R bindings on top. The
//! test reads the sources and fails on any use of `crate::<module>` that
//! points up or sideways.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module, lowest layer first. A module may use modules
/// of earlier entries only.
const LAYERS: &[&str] = &[
    "error",
    "panics",
    "words",
    "layout",
    "key",
    "grid",
    "dtype",
    "fill",
    "steer",
    "runtime",
    "pool",
    "pages",
    "selection",
    "store",
    "codec",
    "metadata",
    "convert",
    "cf",
    "node",
    "engine",
    "r",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (None for lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib").then_some(name)
}

/// The code of a source file without comments and string literals, so that
/// a `crate::x` in a doc comment or a message is not taken for a use.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal such as '"' or '\n' (not a lifetime).
            let close = text[i + 1..].find('\'').map_or(b.len(), |e| i + 1 + e + 1);
            i = close;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The top-level modules a file's code names through `crate::`, including
/// those of grouped imports (`use crate::{a, b::c}`).
fn uses(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = matching_brace(group);
            for part in split_top_level(&group[..end]) {
                let name = ident(part.trim());
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                found.insert(name);
            }
        }
        rest = after;
    }
    found
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Each module's imports of other top-level modules, and the files that
/// make each one.
fn import_graph() -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(&src, &file) else {
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        let entry = graph.entry(from.clone()).or_default();
        for to in uses(&code) {
            if to != from {
                entry.entry(to).or_default().push(rel.clone());
            }
        }
    }
    graph
}

#[test]
fn every_module_has_a_layer() {
    let graph = import_graph();
    let unlisted: Vec<&String> = graph
        .keys()
        .filter(|m| !LAYERS.contains(&m.as_str()))
        .collect();
    assert!(unlisted.is_empty(), "modules not in LAYERS: {unlisted:?}");
}

#[test]
fn imports_point_down_the_layers_only() {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut wrong = Vec::new();
    for (from, tos) in import_graph() {
        let Some(rf) = rank(&from) else { continue };
        for (to, files) in tos {
            match rank(&to) {
                Some(rt) if rt < rf => {}
                // Names that are no module of this crate (macros, `crate::Result`).
                None => {}
                Some(_) => wrong.push(format!("{from} -> {to} ({})", files.join(", "))),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scanner_finds_grouped_and_path_uses_and_skips_comments() {
    let code = code_only(
        "use crate::{codec::{a, b}, dtype};\n// crate::engine\nlet x = crate::store::f(\"crate::cf\");\n",
    );
    let found: Vec<String> = uses(&code).into_iter().collect();
    assert_eq!(found, ["codec", "dtype", "store"]);
}
