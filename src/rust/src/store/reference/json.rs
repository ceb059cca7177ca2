//! JSON reference sets: version 0 (the whole document is the map of
//! references) and version 1 (`refs`, plus `templates` and `gen` rendered
//! with Jinja syntax through minijinja and expanded to version 0 on load).

use super::{Ref, Targets};
use crate::error::{Result, ZarrError};
use crate::store::validate_key;
use base64::Engine as _;
use minijinja::value::{Kwargs, Value as JValue};
use minijinja::{Environment, UndefinedBehavior};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) fn parse(bytes: &[u8], targets: &mut Targets) -> Result<BTreeMap<String, Ref>> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| ZarrError::Metadata(format!("invalid reference JSON: {e}")))?;
    let Value::Object(obj) = doc else {
        return Err(ZarrError::Metadata(
            "invalid reference JSON: the document is not a JSON object".into(),
        ));
    };
    let mut refs = BTreeMap::new();
    match obj.get("version") {
        // Version 0; a document of only "refs" (no version) is version 1.
        None if !is_bare_v1(&obj) => {
            for (key, value) in &obj {
                let r = parse_value(key, value, None, targets)?;
                insert(&mut refs, key.clone(), r)?;
            }
        }
        None => parse_v1(&obj, targets, &mut refs)?,
        Some(v) if v.as_u64() == Some(1) => parse_v1(&obj, targets, &mut refs)?,
        Some(v) => {
            return Err(ZarrError::Metadata(format!(
                "unsupported reference set version {v}: versions 0 and 1 are supported"
            )))
        }
    }
    Ok(refs)
}

/// {"refs": {...}} alone: a version 0 set would hold the one document
/// "refs", which no Zarr hierarchy has.
fn is_bare_v1(obj: &Map<String, Value>) -> bool {
    obj.len() == 1 && obj.get("refs").is_some_and(Value::is_object)
}

fn insert(refs: &mut BTreeMap<String, Ref>, key: String, r: Ref) -> Result<()> {
    validate_key(&key).map_err(|e| {
        ZarrError::Metadata(format!("invalid key in reference set: {}", e.message()))
    })?;
    refs.insert(key, r);
    Ok(())
}

fn parse_v1(
    obj: &Map<String, Value>,
    targets: &mut Targets,
    refs: &mut BTreeMap<String, Ref>,
) -> Result<()> {
    let templates = match obj.get("templates") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(t)) => t.clone(),
        Some(_) => {
            return Err(ZarrError::Metadata(
                "reference set 'templates' must be a JSON object".into(),
            ))
        }
    };
    let env = Templates::new(&templates)?;
    match obj.get("refs") {
        None | Some(Value::Null) => {}
        Some(Value::Object(r)) => {
            let tmpl = (!templates.is_empty()).then_some(&env);
            for (key, value) in r {
                let parsed = parse_value(key, value, tmpl, targets)?;
                insert(refs, key.clone(), parsed)?;
            }
        }
        Some(_) => {
            return Err(ZarrError::Metadata(
                "reference set 'refs' must be a JSON object".into(),
            ))
        }
    }
    match obj.get("gen") {
        None | Some(Value::Null) => {}
        Some(Value::Array(gens)) => {
            for (i, g) in gens.iter().enumerate() {
                expand_gen(i, g, &env, targets, refs)?;
            }
        }
        Some(_) => {
            return Err(ZarrError::Metadata(
                "reference set 'gen' must be a JSON array".into(),
            ))
        }
    }
    Ok(())
}

/// One reference value: a string (data, "base64:" for binary), a JSON
/// object (a document, kept as its JSON text), `[url]` or
/// `[url, offset, length]`.
fn parse_value(
    key: &str,
    value: &Value,
    templates: Option<&Templates>,
    targets: &mut Targets,
) -> Result<Ref> {
    let bad = |why: String| ZarrError::Metadata(format!("reference '{key}': {why}"));
    match value {
        Value::String(s) => match s.strip_prefix("base64:") {
            Some(b64) => {
                let data = BASE64
                    .decode(b64.trim_end())
                    .map_err(|e| bad(format!("invalid base64 data: {e}")))?;
                Ok(Ref::Inline(data.into()))
            }
            None => Ok(Ref::Inline(s.as_bytes().into())),
        },
        Value::Object(_) => Ok(Ref::Inline(serde_json::to_vec(value)?.into())),
        Value::Array(a) if a.len() == 1 || a.len() == 3 => {
            let Some(url) = a[0].as_str() else {
                return Err(bad(format!(
                    "the URL must be a string, not {}",
                    short(&a[0])
                )));
            };
            let url = match templates {
                Some(t) if url.contains("{{") => t
                    .render(url, empty_ctx())
                    .map_err(|e| bad(format!("cannot render the URL template '{url}': {e}")))?,
                _ => url.to_string(),
            };
            let (offset, length) = if a.len() == 1 || (a[1].is_null() && a[2].is_null()) {
                (0, None)
            } else {
                let int = |v: &Value, what: &str| {
                    json_u64(v).ok_or_else(|| {
                        bad(format!(
                            "the {what} must be a non-negative integer, not {}",
                            short(v)
                        ))
                    })
                };
                (int(&a[1], "offset")?, Some(int(&a[2], "length")?))
            };
            Ok(Ref::Target {
                target: targets.get(&url),
                offset,
                length,
            })
        }
        Value::Array(a) => Err(bad(format!(
            "a reference is [url] or [url, offset, length], not a list of {} elements",
            a.len()
        ))),
        other => Err(bad(format!("unsupported reference value {}", short(other)))),
    }
}

const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

fn json_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// A value for messages, cut short.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(57).collect::<String>())
    } else {
        s
    }
}

/// The `templates` of a version 1 set as a Jinja environment: a template
/// holding "{{" is a function rendering it with its keyword arguments
/// (`{{f(c='text')}}`), any other one a variable (`{{u}}`).
struct Templates {
    env: Environment<'static>,
}

impl Templates {
    fn new(templates: &Map<String, Value>) -> Result<Templates> {
        let mut env = strict_env();
        // Function templates render in an environment of their own, which
        // has the variable templates but no functions (so no recursion).
        let mut inner = strict_env();
        let mut functions = Vec::new();
        for (name, t) in templates {
            match t {
                Value::String(s) if s.contains("{{") => {
                    inner
                        .add_template_owned(name.clone(), s.clone())
                        .map_err(|e| {
                            ZarrError::Metadata(format!(
                                "cannot parse the template '{name}' ('{s}'): {e}"
                            ))
                        })?;
                    functions.push(name.clone());
                }
                Value::Object(_) | Value::Array(_) => {
                    return Err(ZarrError::Metadata(format!(
                        "template '{name}' must be a string, not {}",
                        short(t)
                    )))
                }
                other => {
                    let v = to_jinja(other);
                    env.add_global(name.clone(), v.clone());
                    inner.add_global(name.clone(), v);
                }
            }
        }
        let inner = Arc::new(inner);
        for name in functions {
            let inner = Arc::clone(&inner);
            let tname = name.clone();
            env.add_function(
                name,
                move |kwargs: Kwargs| -> std::result::Result<String, minijinja::Error> {
                    inner.get_template(&tname)?.render(JValue::from(kwargs))
                },
            );
        }
        Ok(Templates { env })
    }

    fn render(&self, source: &str, ctx: JValue) -> std::result::Result<String, minijinja::Error> {
        self.env.render_str(source, ctx)
    }
}

fn empty_ctx() -> JValue {
    JValue::from_object(BTreeMap::<String, JValue>::new())
}

fn strict_env() -> Environment<'static> {
    let mut env = Environment::new();
    // A misspelt variable is an error, not an empty string.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env
}

fn to_jinja(v: &Value) -> JValue {
    match v {
        Value::Null => JValue::from(()),
        Value::Bool(b) => JValue::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                JValue::from(i)
            } else if let Some(u) = n.as_u64() {
                JValue::from(u)
            } else {
                JValue::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => JValue::from(s.as_str()),
        Value::Array(a) => a.iter().map(to_jinja).collect(),
        Value::Object(o) => JValue::from_object(
            o.iter()
                .map(|(k, v)| (k.clone(), to_jinja(v)))
                .collect::<BTreeMap<String, JValue>>(),
        ),
    }
}

/// A `gen` field: a Jinja string (numbers are taken as their text).
fn gen_field<'a>(
    index: usize,
    obj: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<std::borrow::Cow<'a, str>>> {
    match obj.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str().into())),
        Some(Value::Number(n)) => Ok(Some(n.to_string().into())),
        Some(other) => Err(ZarrError::Metadata(format!(
            "gen entry {index}: '{name}' must be a string, not {}",
            short(other)
        ))),
    }
}

/// The values of one `gen` dimension: a list, or {start, stop, step} as
/// Python's range (stop excluded).
fn dimension(index: usize, name: &str, v: &Value, max_keys: u64) -> Result<Vec<JValue>> {
    let bad = |why: &str| {
        ZarrError::Metadata(format!(
            "gen entry {index}: dimension '{name}' {why}, not {}",
            short(v)
        ))
    };
    match v {
        Value::Array(a) => Ok(a.iter().map(to_jinja).collect()),
        Value::Object(o) => {
            let int = |field: &str, default: Option<i64>| -> Result<i64> {
                match o.get(field) {
                    None | Some(Value::Null) => {
                        default.ok_or_else(|| bad("needs an integer 'stop'"))
                    }
                    Some(x) => x
                        .as_i64()
                        .ok_or_else(|| bad(&format!("needs an integer '{field}'"))),
                }
            };
            let (start, stop, step) = (
                int("start", Some(0))?,
                int("stop", None)?,
                int("step", Some(1))?,
            );
            if step == 0 {
                return Err(bad("has a step of 0"));
            }
            let count: u128 = if step > 0 && stop > start {
                (stop as i128 - start as i128 + step as i128 - 1) as u128 / step as u128
            } else if step < 0 && stop < start {
                (start as i128 - stop as i128 - step as i128 - 1) as u128
                    / (-(step as i128)) as u128
            } else {
                0
            };
            // Checked before the values are made: a 400-byte file must not
            // allocate gigabytes.
            if count > max_keys as u128 {
                return Err(ZarrError::Metadata(format!(
                    "gen entry {index}: dimension '{name}' has {count} values, more than the {max_keys} keys a reference set may hold"
                )));
            }
            Ok((0..count as i64)
                .map(|i| JValue::from(start + i * step))
                .collect())
        }
        _ => Err(bad("must be a list or {start, stop, step}")),
    }
}

/// A compiled template of a `gen` field; `None` for literal text.
fn compile_template<'e, 's>(
    env: &'e Environment<'static>,
    index: usize,
    what: &str,
    src: &'s str,
) -> Result<Option<minijinja::Template<'e, 's>>> {
    if !src.contains("{{") && !src.contains("{%") {
        return Ok(None);
    }
    env.template_from_str(src).map(Some).map_err(|e| {
        ZarrError::Metadata(format!(
            "gen entry {index}: cannot parse the {what} template '{src}': {e}"
        ))
    })
}

fn expand_gen(
    index: usize,
    g: &Value,
    templates: &Templates,
    targets: &mut Targets,
    refs: &mut BTreeMap<String, Ref>,
) -> Result<()> {
    let Value::Object(obj) = g else {
        return Err(ZarrError::Metadata(format!(
            "gen entry {index} must be a JSON object, not {}",
            short(g)
        )));
    };
    let required = |name: &str| -> Result<std::borrow::Cow<'_, str>> {
        gen_field(index, obj, name)?
            .ok_or_else(|| ZarrError::Metadata(format!("gen entry {index} has no '{name}'")))
    };
    let key_src = required("key")?;
    let url_src = required("url")?;
    let offset_src = gen_field(index, obj, "offset")?;
    let length_src = gen_field(index, obj, "length")?;
    if offset_src.is_some() != length_src.is_some() {
        return Err(ZarrError::Metadata(format!(
            "gen entry {index}: 'offset' and 'length' go together, one of them is missing"
        )));
    }
    let Some(Value::Object(dims)) = obj.get("dimensions") else {
        return Err(ZarrError::Metadata(format!(
            "gen entry {index} needs 'dimensions', a JSON object"
        )));
    };
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut total: u128 = 1;
    for (name, v) in dims {
        let vals = dimension(index, name, v, targets.limits.max_keys)?;
        total = total.saturating_mul(vals.len() as u128);
        names.push(name.clone());
        values.push(vals);
    }
    let room = targets.limits.max_keys.saturating_sub(refs.len() as u64);
    if total > room as u128 {
        return Err(ZarrError::Metadata(format!(
            "gen entry {index} would make {total} keys, more than the {} keys a reference set may hold",
            targets.limits.max_keys
        )));
    }
    let started = std::time::Instant::now();
    let max_seconds = targets.limits.max_seconds;
    let env = &templates.env;
    let key_t = compile_template(env, index, "key", &key_src)?;
    let url_t = compile_template(env, index, "url", &url_src)?;
    let offset_t = match &offset_src {
        Some(s) => compile_template(env, index, "offset", s)?,
        None => None,
    };
    let length_t = match &length_src {
        Some(s) => compile_template(env, index, "length", s)?,
        None => None,
    };
    if total == 0 {
        return Ok(());
    }
    let mut idx = vec![0usize; values.len()];
    let mut made: u64 = 0;
    loop {
        made += 1;
        if made.is_multiple_of(1024) && started.elapsed().as_secs_f64() > max_seconds {
            return Err(ZarrError::Metadata(format!(
                "gen entry {index}: expanding it took more than {max_seconds} seconds ({made} of {total} keys made)"
            )));
        }
        let ctx: BTreeMap<String, JValue> = names
            .iter()
            .zip(&idx)
            .zip(&values)
            .map(|((n, &i), vals)| (n.clone(), vals[i].clone()))
            .collect();
        let ctx = JValue::from_object(ctx);
        let render = |what: &str, src: &str, t: &Option<minijinja::Template>| match t {
            None => Ok(src.to_string()),
            Some(t) => t.render(ctx.clone()).map_err(|e| {
                ZarrError::Metadata(format!(
                    "gen entry {index}: cannot render the {what} template '{src}' with {}: {e}",
                    describe_ctx(&names, &idx, &values)
                ))
            }),
        };
        let key = render("key", &key_src, &key_t)?;
        let url = render("url", &url_src, &url_t)?;
        let (offset, length) = match (&offset_src, &length_src) {
            (Some(o), Some(l)) => {
                let o = render("offset", o, &offset_t)?;
                let l = render("length", l, &length_t)?;
                let num = |what: &str, s: &str| {
                    parse_u64(s).ok_or_else(|| {
                        ZarrError::Metadata(format!(
                            "gen entry {index}: the {what} of key '{key}' is '{s}', not a non-negative integer"
                        ))
                    })
                };
                (num("offset", &o)?, Some(num("length", &l)?))
            }
            _ => (0, None),
        };
        let target = targets.get(&url);
        insert(
            refs,
            key,
            Ref::Target {
                target,
                offset,
                length,
            },
        )?;
        // The next element of the product, the last dimension fastest
        // (itertools.product order).
        let mut d = idx.len();
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < values[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn describe_ctx(names: &[String], idx: &[usize], values: &[Vec<JValue>]) -> String {
    if names.is_empty() {
        return "no variables".into();
    }
    names
        .iter()
        .zip(idx)
        .zip(values)
        .map(|((n, &i), v)| format!("{n}={}", v[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    s.parse::<u64>().ok().or_else(|| {
        s.parse::<f64>()
            .ok()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}
