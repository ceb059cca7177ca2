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
}
