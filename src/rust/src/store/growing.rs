//! A value that is read while it arrives: one writer appends the body's
//! pieces to a buffer of the value's full length, and any thread may read
//! the part already in. The engine decodes the inner chunks of a shard
//! from it as soon as their bytes are there, instead of once the whole
//! shard has arrived (engine/shard_stream.rs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A buffer of a known length, filled from the start by one [`Filler`].
pub struct Growing {
    ptr: *mut u8,
    cap: usize,
    len: usize,
    filled: AtomicUsize,
}

// SAFETY: the bytes below `filled` are never written again and the buffer
// never moves or shrinks while the value lives; the bytes above it are
// written only by the one `Filler`, and read by nobody.
unsafe impl Send for Growing {}
unsafe impl Sync for Growing {}

/// The one writer of a [`Growing`].
pub struct Filler(Arc<Growing>);

impl Growing {
    /// An empty value of `len` bytes to come, and its writer; None when
    /// the memory cannot be had.
    pub fn with_len(len: usize) -> Option<(Arc<Growing>, Filler)> {
        let mut v: Vec<u8> = Vec::new();
        v.try_reserve_exact(len).ok()?;
        let g = Arc::new(Growing::from_vec(v, len, 0));
        Some((Arc::clone(&g), Filler(g)))
    }

    /// A value that is already all there.
    pub fn whole(v: Vec<u8>) -> Arc<Growing> {
        let n = v.len();
        Arc::new(Growing::from_vec(v, n, n))
    }

    /// `v` (with room for `len` bytes, the first `filled` of them in).
    fn from_vec(v: Vec<u8>, len: usize, filled: usize) -> Growing {
        let mut v = std::mem::ManuallyDrop::new(v);
        Growing {
            ptr: v.as_mut_ptr(),
            cap: v.capacity(),
            len,
            filled: AtomicUsize::new(filled),
        }
    }

    /// The length of the whole value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the value is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes in so far.
    pub fn filled(&self) -> &[u8] {
        let n = self.filled.load(Ordering::Acquire);
        // SAFETY: the first `n` bytes were written before `n` was
        // published (Release in `Filler::push`) and are not written again.
        unsafe { std::slice::from_raw_parts(self.ptr, n) }
    }

    /// Whether all of the value is in.
    pub fn is_complete(&self) -> bool {
        self.filled.load(Ordering::Acquire) == self.len
    }

    /// The bytes as a vector (without a copy when nobody else holds the
    /// value).
    pub fn into_vec(this: Arc<Growing>) -> Vec<u8> {
        match Arc::try_unwrap(this) {
            Ok(g) => {
                let g = std::mem::ManuallyDrop::new(g);
                let n = g.filled.load(Ordering::Acquire);
                // SAFETY: `ptr` and `cap` are the vector's, its first `n`
                // bytes written; `g` is not dropped, so it is freed once.
                unsafe { Vec::from_raw_parts(g.ptr, n, g.cap) }
            }
            Err(shared) => shared.filled().to_vec(),
        }
    }
}

impl Drop for Growing {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `cap` came from a vector this value owns.
        unsafe { drop(Vec::from_raw_parts(self.ptr, 0, self.cap)) }
    }
}

impl Filler {
    /// Append `piece`; false (and nothing appended) when it would go past
    /// the value's length.
    pub fn push(&mut self, piece: &[u8]) -> bool {
        let g = &self.0;
        let at = g.filled.load(Ordering::Relaxed);
        if piece.len() > g.len - at {
            return false;
        }
        // SAFETY: only this writer writes, above `filled`, inside the
        // buffer (checked above); readers see these bytes only after the
        // store below.
        unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), g.ptr.add(at), piece.len()) };
        g.filled.store(at + piece.len(), Ordering::Release);
        true
    }

    /// The value being filled.
    pub fn value(&self) -> &Arc<Growing> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_see_what_is_in_while_the_writer_goes_on() {
        let (g, mut w) = Growing::with_len(10).unwrap();
        assert_eq!(g.len(), 10);
        assert!(g.filled().is_empty() && !g.is_complete());
        assert!(w.push(b"abc"));
        let early = g.filled();
        assert!(w.push(b"defg"));
        assert_eq!(early, b"abc");
        assert_eq!(g.filled(), b"abcdefg");
        assert!(!w.push(b"hijk"), "past the length");
        assert_eq!(g.filled(), b"abcdefg");
        assert!(w.push(b"hij"));
        assert!(g.is_complete());
        drop(w);
        assert_eq!(Growing::into_vec(g), b"abcdefghij");
    }

    #[test]
    fn a_whole_value_is_complete_and_shared_values_are_copied_out() {
        let g = Growing::whole(b"xyz".to_vec());
        assert!(g.is_complete() && g.len() == 3);
        let other = Arc::clone(&g);
        assert_eq!(Growing::into_vec(g), b"xyz");
        assert_eq!(other.filled(), b"xyz");
        assert!(Growing::whole(Vec::new()).is_complete());
        assert!(Growing::with_len(usize::MAX).is_none());
    }

    #[test]
    fn a_reader_on_another_thread_never_sees_unwritten_bytes() {
        let (g, mut w) = Growing::with_len(1 << 20).unwrap();
        let reader = {
            let g = Arc::clone(&g);
            std::thread::spawn(move || {
                while !g.is_complete() {
                    let seen = g.filled();
                    assert!(seen.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
                }
            })
        };
        let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
        for piece in data.chunks(4096) {
            assert!(w.push(piece));
        }
        reader.join().unwrap();
        assert_eq!(g.filled(), &data[..]);
    }
}
