//! The targets of references: the files (local paths, `file://` URLs,
//! paths relative to the reference file) and URLs a reference points into,
//! resolved once per distinct URL, and how a local one is read, within the
//! folder an untrusted set may be confined to.

use super::*;

/// One reference: the value of one key.
#[derive(Debug, Clone)]
pub(crate) enum Ref {
    /// The value itself (a string or "base64:" value, a JSON document).
    Inline(Arc<[u8]>),
    /// `length` bytes at `offset` of a file, or the whole file (`None`).
    Target {
        target: Arc<Target>,
        offset: u64,
        length: Option<u64>,
    },
}

/// A file that references point into, resolved once per distinct URL.
#[derive(Debug)]
pub(crate) struct Target {
    /// The URL or path as the reference set wrote it (after templates).
    pub(super) url: String,
    pub(super) kind: TargetKind,
}

#[derive(Debug)]
pub(super) enum TargetKind {
    Local(PathBuf),
    /// An absolute URL read over the network: http(s), or an object in
    /// S3, GCS or Azure (s3://, gs://, az://, ...).
    Http(String),
    /// A target this store does not read.
    Unusable(Unusable),
}

/// Why a target is not read; each holds the message that says so.
#[derive(Debug)]
pub(super) enum Unusable {
    /// A URL of a protocol this store cannot read.
    Unsupported(String),
    /// A local file outside the folder targets are confined to.
    Refused(String),
}

impl Unusable {
    /// The error of reading reference `key`, whose target this is.
    pub(super) fn error(&self, key: &str) -> ZarrError {
        match self {
            Unusable::Refused(why) => ZarrError::InvalidKey(format!("reference '{key}': {why}")),
            Unusable::Unsupported(why) => {
                ZarrError::Unsupported(format!("reference '{key}': {why}"))
            }
        }
    }
}

/// Where relative target paths start: the folder (or URL folder) of the
/// reference file.
#[derive(Debug, Clone)]
pub(super) enum Base {
    Local(PathBuf),
    /// A URL ending in "/".
    Url(String),
}

impl Base {
    /// `base` is a folder, a reference file (its folder is used), a
    /// `file://` URL or the URL of the reference file (or its folder, when
    /// it ends in "/"); "" is the working directory.
    pub(super) fn new(base: &str) -> Result<Base> {
        if let Some(scheme) = url_scheme(base) {
            if scheme.eq_ignore_ascii_case("file") {
                return Base::local(&file_url_path(base)?);
            }
            let location = base.split(['?', '#']).next().unwrap_or("");
            let after_authority = scheme.len() + 3;
            let dir = match location[after_authority..].find('/') {
                None => format!("{location}/"),
                Some(_) => match location.rfind('/') {
                    Some(i) => location[..=i].to_string(),
                    None => format!("{location}/"),
                },
            };
            return Ok(Base::Url(dir));
        }
        if let Some(path) = plain_file_url(base) {
            return Base::local(&path?);
        }
        Base::local(Path::new(if base.is_empty() { "." } else { base }))
    }

    pub(super) fn local(path: &Path) -> Result<Base> {
        let abs = std::path::absolute(path).map_err(|e| {
            ZarrError::Io(format!(
                "cannot resolve the reference base '{}': {e}",
                path.display()
            ))
        })?;
        if abs.is_file() {
            if let Some(parent) = abs.parent() {
                return Ok(Base::Local(parent.to_path_buf()));
            }
        }
        Ok(Base::Local(abs))
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Base::Local(p) => p.display().to_string(),
            Base::Url(u) => u.clone(),
        }
    }
}

/// The targets of a reference set, one `Target` per distinct URL.
#[derive(Debug)]
pub(crate) struct Targets {
    pub(super) base: Base,
    pub(super) map: HashMap<String, Arc<Target>>,
    pub(super) any_http: bool,
    pub(crate) limits: RefLimits,
    /// `limits.local_root` with its links resolved.
    pub(super) real_local_root: Option<PathBuf>,
}

impl Targets {
    pub(super) fn new(base: Base, limits: RefLimits) -> Result<Targets> {
        let real_local_root = match &limits.local_root {
            None => None,
            Some(root) => Some(std::fs::canonicalize(root).map_err(|e| {
                ZarrError::Io(format!(
                    "cannot resolve the folder local targets are confined to, '{}': {e}",
                    root.display()
                ))
            })?),
        };
        Ok(Targets {
            base,
            map: HashMap::new(),
            any_http: false,
            limits,
            real_local_root,
        })
    }

    pub(crate) fn get(&mut self, url: &str) -> Arc<Target> {
        if let Some(t) = self.map.get(url) {
            return Arc::clone(t);
        }
        let mut kind = resolve_target(url, &self.base);
        if let (TargetKind::Local(path), Some(root)) = (&kind, &self.real_local_root) {
            if !inside_folder(path, root) {
                kind = TargetKind::Unusable(Unusable::Refused(format!(
                    "its target '{url}' is outside '{}', the folder local targets are confined to",
                    root.display()
                )));
            }
        }
        if matches!(kind, TargetKind::Http(_)) {
            self.any_http = true;
        }
        let t = Arc::new(Target {
            url: url.to_string(),
            kind,
        });
        self.map.insert(url.to_string(), Arc::clone(&t));
        t
    }
}

/// Whether `path` lies in `root` (already resolved): its links resolved
/// when it exists, else its "." and ".." segments.
pub(super) fn inside_folder(path: &Path, root: &Path) -> bool {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real.starts_with(root);
    }
    let Ok(abs) = std::path::absolute(path) else {
        return false;
    };
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            std::path::Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean.starts_with(root)
}

/// The scheme of `s` if it is a URL "scheme://...": at least two
/// characters, so a Windows drive ("C:/...") is not one.
pub(super) fn url_scheme(s: &str) -> Option<&str> {
    let i = s.find("://")?;
    let scheme = &s[..i];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    if scheme.len() < 2
        || !first.is_ascii_alphabetic()
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(scheme)
}

/// "file:/path" (no authority), which `url_scheme` does not see.
pub(super) fn plain_file_url(s: &str) -> Option<Result<PathBuf>> {
    let rest = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("file:"))
        .map(|_| &s[5..])?;
    if rest.starts_with("//") {
        return None;
    }
    Some(decode_file_path(s, rest))
}

/// The local path of a `file://` URL (RFC 8089): an empty host or
/// "localhost", a percent-encoded absolute path.
pub(super) fn file_url_path(url: &str) -> Result<PathBuf> {
    match file_url_parts(url) {
        Some(Ok(path)) => decode_file_path(url, path),
        Some(Err(host)) => Err(ZarrError::Unsupported(format!(
            "file URL '{url}' names the remote host '{host}'; only local files are supported"
        ))),
        // Not reached: callers have seen the "file" scheme. An empty path
        // gives the invalid-URL error.
        None => decode_file_path(url, ""),
    }
}

pub(super) fn decode_file_path(url: &str, path: &str) -> Result<PathBuf> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(path)
        .filter(|d| d.starts_with('/') && !d.contains('\0'))
        .ok_or_else(|| {
            ZarrError::Metadata(format!(
                "invalid file URL '{url}': it needs an absolute, well percent-encoded path"
            ))
        })?;
    Ok(local_path(decoded))
}

/// Remove "." and ".." segments from the path of a URL ("http://h/a/../b").
pub(super) fn remove_dot_segments(url: &str) -> String {
    let Some(scheme) = url_scheme(url) else {
        return url.to_string();
    };
    let start = scheme.len() + 3;
    let (location, tail) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let Some(slash) = location[start..].find('/').map(|i| i + start) else {
        return url.to_string();
    };
    let mut segs: Vec<&str> = Vec::new();
    let parts: Vec<&str> = location[slash + 1..].split('/').collect();
    for (i, seg) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *seg {
            "." => {
                if last {
                    segs.push("");
                }
            }
            ".." => {
                segs.pop();
                if last {
                    segs.push("");
                }
            }
            s => segs.push(s),
        }
    }
    format!("{}/{}{tail}", &location[..slash], segs.join("/"))
}

pub(super) fn resolve_target(url: &str, base: &Base) -> TargetKind {
    let unsupported = |why: String| TargetKind::Unusable(Unusable::Unsupported(why));
    if let Some(scheme) = url_scheme(url) {
        let scheme = scheme.to_ascii_lowercase();
        return match scheme.as_str() {
            "http" | "https" => TargetKind::Http(url.to_string()),
            _ if super::object::cloud_of_url(url).is_some() => TargetKind::Http(url.to_string()),
            "file" => match file_url_path(url) {
                Ok(p) => TargetKind::Local(p),
                Err(e) => unsupported(e.message().to_string()),
            },
            _ => unsupported(format!("protocol not supported yet: {url}")),
        };
    }
    if let Some(path) = plain_file_url(url) {
        return match path {
            Ok(p) => TargetKind::Local(p),
            Err(e) => unsupported(e.message().to_string()),
        };
    }
    let path = Path::new(url);
    if path.is_absolute() || url.starts_with('/') {
        return TargetKind::Local(path.to_path_buf());
    }
    match base {
        Base::Local(dir) => TargetKind::Local(dir.join(path)),
        Base::Url(dir) => {
            let joined = remove_dot_segments(&format!("{dir}{url}"));
            match url_scheme(&joined).map(|s| s.to_ascii_lowercase()) {
                Some(s) if s == "http" || s == "https" => TargetKind::Http(joined),
                // Beside a reference set in a bucket (s3://b/refs.parq).
                Some(_) if super::object::cloud_of_url(&joined).is_some() => {
                    TargetKind::Http(joined)
                }
                _ => unsupported(format!(
                    "protocol not supported yet: {joined} (the relative path '{url}')"
                )),
            }
        }
    }
}

/// Read the bytes of a reference into a local file: `file_range` (offset,
/// length in the file) for byte-range references, `range` of the whole file
/// otherwise. The reference itself must lie within the file.
pub(super) fn read_local(
    key: &str,
    path: &Path,
    offset: u64,
    length: Option<u64>,
    file_range: Option<(u64, u64)>,
    range: ByteRange,
) -> Result<Vec<u8>> {
    let io_err = |e: std::io::Error| {
        ZarrError::Io(format!(
            "reference '{key}': cannot read its target file '{}': {e}",
            path.display()
        ))
    };
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Err(ZarrError::NotFound(format!(
                "reference '{key}': its target file '{}' does not exist",
                path.display()
            )))
        }
        Err(e) => return Err(io_err(e)),
    };
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(ZarrError::NotFound(format!(
            "reference '{key}': its target '{}' is not a file",
            path.display()
        )));
    }
    let file_len = meta.len();
    let (start, n) = match (length, file_range) {
        (Some(len), Some(fr)) => {
            let end = offset.checked_add(len);
            if end.is_none_or(|end| end > file_len) {
                return Err(ZarrError::CorruptChunk(format!(
                    "reference '{key}' is past the end of its target file '{}': bytes {offset}..{} of a file of {file_len} bytes",
                    path.display(),
                    offset.saturating_add(len)
                )));
            }
            fr
        }
        _ => {
            let (s, e) = resolve_range(key, file_len, range)?;
            (s, e - s)
        }
    };
    let n = usize::try_from(n)
        .map_err(|_| ZarrError::Io(format!("reference '{key}': {n} bytes do not fit in memory")))?;
    let mut buf = vec![0u8; n];
    if n > 0 {
        file.seek(SeekFrom::Start(start)).map_err(io_err)?;
        file.read_exact(&mut buf).map_err(|e| {
            if e.kind() == ErrorKind::UnexpectedEof {
                // The file shrank after its size was read.
                ZarrError::CorruptChunk(format!(
                    "reference '{key}' is past the end of its target file '{}'",
                    path.display()
                ))
            } else {
                io_err(e)
            }
        })?;
    }
    Ok(buf)
}
