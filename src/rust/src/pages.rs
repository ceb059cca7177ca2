//! Page-level advice for large output buffers.
//!
//! A full read writes every page of a freshly allocated R vector once. With
//! 4 KiB pages that is one page fault per 4 KiB, which costs more than the
//! copy itself; where transparent huge pages are in `madvise` mode (the
//! default of many distributions) the kernel only backs the buffer with
//! 2 MiB pages if asked. NumPy asks for its large arrays, so we do too.

/// Buffers smaller than this are left alone: the advice only pays off once
/// a buffer spans several huge pages.
pub const MIN_ADVISED_BYTES: usize = 8 << 20;

/// Ask for huge pages over the whole 2 MiB-aligned interior of
/// `[ptr, ptr + len)`. A hint only: refusal or an unsupported system is
/// not an error.
pub fn advise_huge_pages(ptr: *mut u8, len: usize) {
    if len < MIN_ADVISED_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).div_ceil(HUGE) * HUGE;
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside a live allocation of the
            // caller; MADV_HUGEPAGE changes no contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Large result vectors live in blocks of their own mapping, and the last
/// one freed is kept for the next. Reading the same array again (a loop
/// over time steps, a repeated query) then writes into pages that are
/// already mapped instead of faulting in and zeroing fresh ones, which
/// costs a full read a sixth of its time. The kept block is marked
/// MADV_FREE, so under memory pressure the kernel takes its pages back
/// without swapping; only one block, of at most `KEEP_MAX_BYTES`, is kept.
///
/// A reused block holds old values: callers must write every element.
#[cfg(target_os = "linux")]
pub mod blocks {
    use std::sync::Mutex;

    /// Room before the caller's memory for the mapping's length; 64 keeps
    /// the caller's pointer cache-line aligned.
    const HEADER: usize = 64;
    /// Freed blocks larger than this are unmapped at once.
    pub const KEEP_MAX_BYTES: usize = 1 << 30;

    /// The kept block: mapping address and length.
    static KEPT: Mutex<Option<(usize, usize)>> = Mutex::new(None);

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    fn unmap(addr: usize, len: usize) {
        // SAFETY: (addr, len) is a whole mapping made by `take` and no
        // longer handed out.
        unsafe {
            libc::munmap(addr as *mut libc::c_void, len);
        }
    }

    /// Memory for `len` bytes, or null when the system refuses. The kept
    /// block is reused when it fits without wasting more than a quarter.
    pub fn take(len: usize) -> *mut u8 {
        let Some(need) = len.checked_add(HEADER) else {
            return std::ptr::null_mut();
        };
        let page = page_size();
        let total = need.div_ceil(page) * page;
        let kept = KEPT.lock().map(|mut k| k.take()).unwrap_or(None);
        let addr = match kept {
            Some((addr, size)) if size >= total && size - total <= total / 4 => addr,
            other => {
                if let Some((addr, size)) = other {
                    unmap(addr, size);
                }
                // SAFETY: an anonymous private mapping; no existing memory
                // is touched.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        total,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return std::ptr::null_mut();
                }
                super::advise_huge_pages(p as *mut u8, total);
                // SAFETY: the first page of the fresh mapping is ours.
                unsafe { (p as *mut usize).write(total) };
                p as usize
            }
        };
        (addr + HEADER) as *mut u8
    }

    /// Give back memory from `take`. It becomes the kept block (replacing
    /// the one kept before) unless it is too large.
    ///
    /// # Safety
    /// `ptr` came from `take` and is not used again.
    pub unsafe fn give(ptr: *mut u8) {
        let addr = ptr as usize - HEADER;
        // SAFETY: `take` wrote the mapping's length in its header.
        let size = unsafe { (addr as *const usize).read() };
        if size > KEEP_MAX_BYTES {
            unmap(addr, size);
            return;
        }
        // The header page stays as it is; the rest may be reclaimed.
        let page = page_size();
        // SAFETY: a range inside the mapping; MADV_FREE only allows the
        // kernel to drop pages we no longer need.
        unsafe {
            libc::madvise(
                (addr + page) as *mut libc::c_void,
                size - page,
                libc::MADV_FREE,
            );
        }
        let before = match KEPT.lock() {
            Ok(mut k) => k.replace((addr, size)),
            Err(_) => Some((addr, size)),
        };
        if let Some((a, s)) = before {
            unmap(a, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_keeps_the_contents() {
        let mut v: Vec<u8> = (0..(16usize << 20)).map(|i| (i % 251) as u8).collect();
        advise_huge_pages(v.as_mut_ptr(), v.len());
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        // too small, unaligned: a no-op
        advise_huge_pages(v[1..].as_mut_ptr(), 100);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn blocks_are_reused_when_they_fit() {
        let n = 20usize << 20;
        let p = blocks::take(n);
        assert!(!p.is_null());
        // SAFETY: `take` gave `n` writable bytes.
        let s = unsafe { std::slice::from_raw_parts_mut(p, n) };
        s.fill(7);
        assert_eq!(s[n - 1], 7);
        // SAFETY: `p` came from `take` and is not used again.
        unsafe { blocks::give(p) };
        // The same size again gets the kept block back.
        let q = blocks::take(n);
        assert_eq!(q, p);
        // A block far larger than needed is not reused.
        unsafe { blocks::give(q) };
        let r = blocks::take(n / 4);
        assert_ne!(r, q);
        // SAFETY: `r` came from `take`; writing all of it stays in bounds.
        unsafe {
            std::slice::from_raw_parts_mut(r, n / 4).fill(1);
            blocks::give(r);
        }
        // Larger than the keep limit: unmapped, still usable before that.
        let big = blocks::take(blocks::KEEP_MAX_BYTES + 1);
        assert!(!big.is_null());
        unsafe { blocks::give(big) };
    }
}
