//! Listings of an object store: keys below a prefix, and one level of a
//! folder.

use super::*;

impl ObjectStore {
    /// Every key below `prefix` (a valid prefix), unsorted.
    pub(super) async fn list_async(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        // object_store lists whole path segments; a prefix that ends inside
        // a segment ("a/b" for "a/bc") is listed from its folder and cut.
        let folder = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let base = if folder.is_empty() {
            if self.prefix.is_empty() {
                None
            } else {
                Some(Path::from(self.prefix.as_str()))
            }
        } else {
            Some(self.path(folder))
        };
        let metas: Vec<os::ObjectMeta> = self
            .inner
            .list(base.as_ref())
            .try_collect()
            .await
            .map_err(|e| self.error("list", prefix, e))?;
        Ok(metas
            .iter()
            .map(|m| self.key_of(&m.location))
            .filter(|k| k.starts_with(prefix.as_str()))
            .collect())
    }
}

impl Listing for ObjectStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<String>> {
        let mut keys = crate::store::wait::block_on(self.runtime, self.list_async(prefix))?;
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<DirListing> {
        let dir = prefix.dir().into_owned();
        let base = match dir.strip_suffix('/') {
            Some(d) => Some(self.path(d)),
            None if self.prefix.is_empty() => None,
            None => Some(Path::from(self.prefix.as_str())),
        };
        let listed = crate::store::wait::block_on(self.runtime, async {
            (self.inner.list_with_delimiter(base.as_ref()).await)
                .map_err(|e| self.error("list", &dir, e))
        })?;
        let mut out = DirListing {
            keys: listed
                .objects
                .iter()
                .map(|m| self.key_of(&m.location))
                .filter_map(|k| k.strip_prefix(&dir).map(str::to_string))
                .collect(),
            prefixes: listed
                .common_prefixes
                .iter()
                .map(|p| self.key_of(p))
                .filter_map(|k| k.strip_prefix(&dir).map(|s| format!("{s}/")))
                .collect(),
        };
        out.keys.sort();
        out.prefixes.sort();
        Ok(out)
    }
}
