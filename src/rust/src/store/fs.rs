// placeholder: filled in by the store work
use super::*;
use std::path::PathBuf;
pub struct FsStore { pub root: PathBuf, pub read_only: bool }
impl FsStore {
    /// Open a store rooted at `root`; `create` makes the folder if missing,
    /// otherwise a missing folder is a NotFound error.
    pub fn open(_root: &str, _read_only: bool, _create: bool) -> Result<FsStore> { todo!() }
}
impl Store for FsStore {
    fn get(&self, _k: &str, _r: ByteRange) -> Result<Option<Vec<u8>>> { todo!() }
    fn set(&self, _k: &str, _v: &[u8]) -> Result<()> { todo!() }
    fn erase(&self, _k: &str) -> Result<()> { todo!() }
    fn erase_prefix(&self, _p: &str) -> Result<()> { todo!() }
    fn list(&self) -> Result<Vec<String>> { todo!() }
    fn list_prefix(&self, _p: &str) -> Result<Vec<String>> { todo!() }
    fn list_dir(&self, _p: &str) -> Result<DirListing> { todo!() }
    fn exists(&self, _k: &str) -> Result<bool> { todo!() }
    fn size(&self, _k: &str) -> Result<Option<u64>> { todo!() }
    fn read_only(&self) -> bool { self.read_only }
    fn describe(&self) -> String { todo!() }
}
