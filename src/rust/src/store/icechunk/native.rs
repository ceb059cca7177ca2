//! Chunks of a repository on the local file system, read from their files
//! here. icechunk reads them through object_store's local file system,
//! which streams a file in blocks of 8 KiB, each on tokio's blocking pool:
//! 256 thread hand-overs for a chunk of 2 MiB, which made a read of a
//! repository 3-5 times slower than the same chunks in a plain folder.
//! Icechunk's chunk files are immutable (named by a fresh id, never
//! rewritten) and lie in the repository's `chunks/` folder (the Icechunk
//! specification's layout), so reading one by its reference is what
//! icechunk itself does, without the hand-overs. Inline and virtual chunks,
//! and any key this does not recognise, still go through icechunk.

use super::*;
use icechunk::format::manifest::{ChunkPayload, ChunkRef};
use icechunk::format::{ChunkIndices, Path as IcPath};
use std::io::{Read, Seek, SeekFrom};

/// The array path and chunk coordinates of a chunk key of the default
/// encoding ("a/b/c/0/1"); None for metadata and anything else.
pub(super) fn chunk_of_key(key: &str) -> Option<(IcPath, ChunkIndices)> {
    if key == "zarr.json" || key.ends_with("/zarr.json") {
        return None;
    }
    // The last "/c/" ends the array's path ("c/c/0": chunk 0 of /c).
    let (array, coords) = match key.rsplit_once("/c/") {
        Some(split) => split,
        None => ("", key.strip_prefix("c/")?),
    };
    let coords = coords
        .split('/')
        .map(|c| c.parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()?;
    let path = IcPath::new(&format!("/{array}")).ok()?;
    Some((path, ChunkIndices(coords)))
}

/// What a chunk key of a local repository reads as.
pub(super) enum Native {
    /// The chunk is stored in the repository: its bytes, or None for a
    /// chunk that is not there (the fill value).
    Read(Option<Vec<u8>>),
    /// Not a stored chunk (metadata, inline or virtual): ask icechunk.
    Icechunk,
}

impl IcechunkStore {
    /// `key` of a repository on the local file system (`chunks` is its
    /// chunks folder), read from the chunk's file when it is a stored
    /// chunk.
    pub(super) async fn get_native(
        &self,
        chunks: &std::path::Path,
        key: &str,
        range: ByteRange,
    ) -> Result<Native> {
        let Some((path, coords)) = chunk_of_key(key) else {
            return Ok(Native::Icechunk);
        };
        let payload = {
            let session = self.store.session();
            let session = session.read().await;
            match session.get_chunk_ref(&path, &coords).await {
                Ok(p) => p,
                // icechunk's own get gives the error it gives for the key
                Err(_) => return Ok(Native::Icechunk),
            }
        };
        match payload {
            None => Ok(Native::Read(None)),
            Some(ChunkPayload::Ref(ChunkRef { id, offset, length })) => {
                let file = chunks.join(id.to_string());
                read_part(&file, key, offset, length, range).map(|b| Native::Read(Some(b)))
            }
            Some(_) => Ok(Native::Icechunk),
        }
    }
}

/// `range` of the `length` bytes at `offset` of `file`, the value of `key`.
fn read_part(
    file: &std::path::Path,
    key: &str,
    offset: u64,
    length: u64,
    range: ByteRange,
) -> Result<Vec<u8>> {
    let (start, end) = crate::store::resolve_range(key, length, range)?;
    let fail = |e: std::io::Error| {
        ZarrError::Io(format!(
            "cannot read '{key}' from its chunk file '{}': {e}",
            file.display()
        ))
    };
    let n = usize::try_from(end - start).map_err(|_| {
        ZarrError::Io(format!(
            "cannot read '{key}': {} bytes do not fit in memory",
            end - start
        ))
    })?;
    let mut buf = crate::error::try_buffer(n, &format!("'{key}'"))?;
    let mut f = std::fs::File::open(file).map_err(fail)?;
    f.seek(SeekFrom::Start(offset + start)).map_err(fail)?;
    f.take(n as u64).read_to_end(&mut buf).map_err(fail)?;
    if buf.len() != n {
        return Err(ZarrError::CorruptChunk(format!(
            "'{key}': its chunk file '{}' ends {} bytes short",
            file.display(),
            n - buf.len()
        )));
    }
    Ok(buf)
}
