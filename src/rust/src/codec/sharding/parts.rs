//! The pieces of an encoded shard, and the buffers shards being written
//! pass on to each other.

/// Byte buffers handed back and forth between the shards one writer
/// encodes. A shard keeps its encoded inner chunks until it is stored;
/// allocated and freed afresh for each shard, those megabytes went back
/// to the system (the allocator trims its heap) and came back as new
/// pages every time: a 128 MiB write of sixteen shards spent 12% longer
/// than one of 256 plain chunks, and as long once the buffers were kept.
#[derive(Default)]
pub struct Buffers(std::sync::Mutex<Vec<Vec<u8>>>);

impl Buffers {
    /// A buffer (empty, or holding old bytes) to reuse.
    pub fn take(&self) -> Vec<u8> {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        free.pop().unwrap_or_default()
    }

    pub fn give(&self, buf: Vec<u8>) {
        if buf.capacity() > 0 {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        }
    }

    pub fn give_all(&self, bufs: impl IntoIterator<Item = Vec<u8>>) {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        free.extend(bufs.into_iter().filter(|b| b.capacity() > 0));
    }
}

/// An encoded shard as its pieces: the stored inner chunks in order and
/// the index, which goes before or after them.
pub struct ShardParts {
    pub(super) index: Vec<u8>,
    pub(super) index_at_end: bool,
    pub(super) chunks: Vec<Vec<u8>>,
}

impl ShardParts {
    /// The pieces in stored order (for `Store::set_parts`).
    pub fn parts(&self) -> Vec<&[u8]> {
        let mut out: Vec<&[u8]> = Vec::with_capacity(self.chunks.len() + 1);
        if !self.index_at_end {
            out.push(&self.index);
        }
        out.extend(self.chunks.iter().map(Vec::as_slice));
        if self.index_at_end {
            out.push(&self.index);
        }
        out
    }

    /// The buffers of the pieces, for reuse (`Buffers::give_all`).
    pub fn into_buffers(self) -> impl Iterator<Item = Vec<u8>> {
        self.chunks.into_iter().chain(std::iter::once(self.index))
    }

    /// The shard's bytes.
    pub fn concat(&self) -> Vec<u8> {
        self.parts().concat()
    }
}
