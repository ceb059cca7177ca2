//! Page-level advice for large output buffers, and the blocks that hold
//! large results.
//!
//! A full read writes every page of a freshly allocated R vector once. With
//! 4 KiB pages that is one page fault per 4 KiB; where transparent huge
//! pages are in `madvise` mode (the default of many distributions) the
//! kernel only backs a buffer with 2 MiB pages if asked. Which of the two
//! is cheaper depends on where the free memory comes from: see `blocks`.

/// Buffers smaller than this are left alone: the advice only pays off once
/// a buffer spans several huge pages.
pub const MIN_ADVISED_BYTES: usize = 8 << 20;

/// Ask for huge pages over the whole 2 MiB-aligned interior of
/// `[ptr, ptr + len)`. A hint only: refusal or an unsupported system is
/// not an error.
pub fn advise_huge_pages(ptr: *mut u8, len: usize) {
    if len >= MIN_ADVISED_BYTES {
        advise_interior(ptr, len);
    }
}

/// Decoded chunks from this size up are asked huge pages for, as NumPy
/// asks for its arrays of 4 MiB or more.
pub const MIN_ADVISED_CHUNK_BYTES: usize = 4 << 20;

/// An empty buffer with room for `n` bytes of a decoded chunk (refused
/// memory is an error naming `what`), with huge pages asked for from
/// `MIN_ADVISED_CHUNK_BYTES` up. Such a buffer comes from the C heap,
/// which hands the same memory out again chunk after chunk: its pages are
/// faulted in once, and what they cost is then the TLB misses of every
/// pass over them. A float32 -> float64 cast of 1e6 elements (8 MB out),
/// timed alone in a loop, took 0.155 ms with them instead of 0.165 ms;
/// NumPy's result of the same cast lives on huge pages.
pub fn try_chunk_buffer(n: usize, what: &str) -> crate::error::Result<Vec<u8>> {
    let mut v = crate::error::try_buffer(n, what)?;
    if n >= MIN_ADVISED_CHUNK_BYTES {
        advise_interior(v.as_mut_ptr(), n);
    }
    Ok(v)
}

/// Ask for huge pages over the 2 MiB-aligned interior of `[ptr, ptr + len)`.
fn advise_interior(ptr: *mut u8, len: usize) {
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
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Ask for 4 KiB pages over `[ptr, ptr + len)`, whatever the system's
/// default (transparent huge pages `always`). A hint, as
/// `advise_huge_pages`.
pub fn advise_small_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: as in advise_huge_pages; the range is a whole mapping of the
    // caller's, page aligned.
    unsafe {
        libc::madvise(ptr as *mut libc::c_void, len, libc::MADV_NOHUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Large result vectors live in blocks of their own mapping, and freed
/// blocks are kept in a small pool for the next results. Reading the same
/// array again (a loop over time steps, a repeated query) then writes
/// into pages that are already mapped instead of faulting in and zeroing
/// fresh ones, which costs a full read a sixth of its time. Kept blocks
/// are marked MADV_FREE, so under memory pressure the kernel takes their
/// pages back without swapping; the pool is bounded in bytes and blocks.
///
/// R does not count memory from a custom allocator towards the heap size
/// that triggers its collector, so results that became garbage would
/// stay mapped until something else made R collect: a plain loop of
/// reads grew by one result per read. The blocks therefore keep count of
/// the bytes handed out and not given back; once they have grown by
/// `COLLECT_AFTER_BYTES` (or half the bytes found live at the last full
/// collection, if more) beyond what that collection found live,
/// `collection_due` says so, and the caller runs R's collector before
/// taking the next block. The results freed then go to the pool, so the
/// reads of such a loop reuse mapped pages too, not only reads after an
/// explicit `gc()`.
///
/// A full collection walks every object R holds (20 ms of CPU in a bare
/// session, 30-45 ms with a few packages loaded: as long as reading
/// 128 MiB); a minor one walks what was allocated since the last
/// collection (1 ms) and frees the results that became garbage without
/// surviving a collection. The result a loop holds at a collection
/// survives it, and then only a full collection frees it.
/// `collection_kind` asks for a minor collection unless the blocks that
/// survived the last collection exceed what the last full one found live
/// (old garbage may be among them): a loop `x <- a[]` of one result size
/// alternates a minor and a full collection, with the same four results
/// held at a collection as with full collections only.
///
/// Page sizes: a process's first block takes 4 KiB pages and every later
/// one huge pages. Huge pages are faulted in 512 times less often, but
/// each needs 2 MiB of contiguous free memory, and on a virtual machine
/// that returns free memory to its host (free page reporting, which hands
/// back free blocks of 2 MiB and more) such blocks are mostly ones the
/// host must back again on first touch: 128 MiB of huge pages took
/// 12-15 ms of CPU to fault in when memory freed moments before was
/// there to take, and 76-400 ms after a pause of a few seconds, where
/// 4 KiB pages, taken from the small free blocks the host never got,
/// took a steady 55-65 ms (bench/FIRST_READ_RESULTS.md). NumPy asks for
/// huge pages and draws that lottery on a first read. A first read of a
/// process, which is all a script may do, gets the steady pages; the
/// blocks a loop of reads then reuses have huge pages (fewer TLB misses:
/// the fastest reads of a loop of C-order 128 MiB reads took 0.033-0.039 s
/// of CPU with them and 0.042-0.044 s with 4 KiB pages only), and a
/// pooled block with huge pages is taken before one without.
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
    /// The pool of freed blocks holds at most this many bytes and blocks;
    /// the oldest go first.
    pub const POOL_MAX_BYTES: usize = 1 << 30;
    pub const POOL_MAX_BLOCKS: usize = 64;
    /// Growth of the bytes held since the last collection after which
    /// the next take asks for one (see the module's notes). A loop of
    /// reads that keeps the last result then holds at most the live
    /// result and this much more: with 128 MiB results, a collection
    /// every third read and at most four results mapped. Each collection
    /// is a full one (R_gc), a few milliseconds in a bare session, so
    /// this is traded against time: half as much doubles their number.
    pub const COLLECT_AFTER_BYTES: usize = 384 << 20;

    /// Counts for tests and measurements.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Stats {
        /// Blocks handed out: reused from the pool, or newly mapped.
        pub reused: u64,
        pub mapped: u64,
        /// Collections asked for by `collection_due`, and how many of
        /// them were full ones.
        pub collections: u64,
        pub full_collections: u64,
        /// Bytes of blocks handed out and not given back, and in the pool.
        pub held: usize,
        pub pooled: usize,
    }

    struct State {
        /// Freed mappings (address, length, huge pages asked for), oldest
        /// first.
        pool: Vec<(usize, usize, bool)>,
        stats: Stats,
        /// `held` just after the last full collection (lowered whenever
        /// blocks come back): what was still in use then.
        live: usize,
        /// `held` just after the last collection of either kind (lowered
        /// likewise): blocks that survived it are old to R's collector,
        /// and only a full collection frees them.
        survived: usize,
    }

    /// The collection `collection_kind` asks for.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Collection {
        /// R's full collection (`R_gc`).
        Full,
        /// A collection of what was allocated since the last one
        /// (`gc(full = FALSE)`).
        Minor,
    }

    static STATE: Mutex<State> = Mutex::new(State {
        pool: Vec::new(),
        stats: Stats {
            reused: 0,
            mapped: 0,
            collections: 0,
            full_collections: 0,
            held: 0,
            pooled: 0,
        },
        live: 0,
        survived: 0,
    });

    fn state() -> std::sync::MutexGuard<'static, State> {
        // The state stays consistent between statements: a panic while
        // it was locked leaves nothing half done.
        STATE.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    /// The mapping length for `len` bytes of caller's memory.
    pub(super) fn mapping_len(len: usize) -> Option<usize> {
        let page = page_size();
        Some(len.checked_add(HEADER)?.div_ceil(page) * page)
    }

    fn unmap(addr: usize, len: usize) {
        // SAFETY: (addr, len) is a whole mapping made by `take` and no
        // longer handed out.
        unsafe {
            libc::munmap(addr as *mut libc::c_void, len);
        }
    }

    /// Whether huge pages were asked for the block at `ptr`, from `take`.
    ///
    /// # Safety
    /// `ptr` came from `take` and was not given back.
    pub unsafe fn has_huge_pages(ptr: *const u8) -> bool {
        // SAFETY: `take` wrote the page kind in the block's header.
        unsafe { (ptr.sub(HEADER) as *const usize).add(1).read() != 0 }
    }

    /// The counts so far.
    pub fn stats() -> Stats {
        state().stats
    }

    /// Whether the caller should run the collector before taking the next
    /// block: the blocks held have grown by the allowance beyond what the
    /// last full collection found live (results that became garbage since
    /// are among them).
    pub fn collection_due() -> bool {
        let s = state();
        let allowance = COLLECT_AFTER_BYTES.max(s.live / 2);
        s.stats.held.saturating_sub(s.live) >= allowance
    }

    /// Which collection a due one should be: minor unless more survived
    /// the last collection than the last full one found live.
    pub fn collection_kind() -> Collection {
        let s = state();
        if s.survived > s.live {
            Collection::Full
        } else {
            Collection::Minor
        }
    }

    /// Note that a collection of `kind` has run: what is still held
    /// survived it, and after a full one is all in use.
    pub fn collected(kind: Collection) {
        let mut s = state();
        s.survived = s.stats.held;
        if kind == Collection::Full {
            s.live = s.stats.held;
            s.stats.full_collections += 1;
        }
        s.stats.collections += 1;
    }

    /// Memory for `len` bytes, or null when the system refuses. The
    /// smallest pooled block that fits without wasting more than a
    /// quarter is reused, one with huge pages before one without.
    pub fn take(len: usize) -> *mut u8 {
        let Some(total) = mapping_len(len) else {
            return std::ptr::null_mut();
        };
        let reused = {
            let mut s = state();
            let best = s
                .pool
                .iter()
                .enumerate()
                .filter(|(_, &(_, size, _))| size >= total && size - total <= total / 4)
                .min_by_key(|(_, &(_, size, huge))| (size, !huge))
                .map(|(i, _)| i);
            best.map(|i| {
                let (addr, size, _) = s.pool.remove(i);
                s.stats.pooled -= size;
                s.stats.held += size;
                s.stats.reused += 1;
                addr
            })
        };
        if let Some(addr) = reused {
            return (addr + HEADER) as *mut u8;
        }
        // SAFETY: an anonymous private mapping; no existing memory is
        // touched.
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
        let mut s = state();
        // See the module's notes on page sizes: the process's first block
        // takes 4 KiB pages, later ones huge pages.
        let huge = s.stats.mapped > 0;
        if huge {
            super::advise_huge_pages(p as *mut u8, total);
        } else {
            super::advise_small_pages(p as *mut u8, total);
        }
        // SAFETY: the first page of the fresh mapping is ours.
        unsafe {
            (p as *mut usize).write(total);
            (p as *mut usize).add(1).write(huge as usize);
        }
        s.stats.held += total;
        s.stats.mapped += 1;
        (p as usize + HEADER) as *mut u8
    }

    /// Give back memory from `take`. It goes to the pool (the oldest
    /// blocks leaving it when it is full) unless it is too large.
    ///
    /// # Safety
    /// `ptr` came from `take` and is not used again.
    pub unsafe fn give(ptr: *mut u8) {
        let addr = ptr as usize - HEADER;
        // SAFETY: `take` wrote the mapping's length and page kind in its
        // header.
        let (size, huge) = unsafe {
            (
                (addr as *const usize).read(),
                (addr as *const usize).add(1).read() != 0,
            )
        };
        {
            let mut s = state();
            s.stats.held = s.stats.held.saturating_sub(size);
            s.live = s.live.min(s.stats.held);
            s.survived = s.survived.min(s.stats.held);
        }
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
        let mut evicted = Vec::new();
        {
            let mut s = state();
            s.pool.push((addr, size, huge));
            s.stats.pooled += size;
            while s.stats.pooled > POOL_MAX_BYTES || s.pool.len() > POOL_MAX_BLOCKS {
                let (a, n, _) = s.pool.remove(0);
                s.stats.pooled -= n;
                evicted.push((a, n));
            }
        }
        for (a, n) in evicted {
            unmap(a, n);
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

    #[test]
    fn chunk_buffers_have_room_for_their_bytes_or_name_what_they_hold() {
        for n in [0, 100, MIN_ADVISED_CHUNK_BYTES + 1] {
            let mut v = try_chunk_buffer(n, "a chunk").unwrap();
            assert!(v.is_empty() && v.capacity() >= n, "{n}");
            v.resize(n, 3);
            assert!(v.iter().all(|&b| b == 3));
        }
        let err = try_chunk_buffer(usize::MAX / 2, "zstd").unwrap_err();
        assert_eq!(err.kind(), "memory");
        assert!(
            err.message().starts_with("zstd: cannot allocate"),
            "{}",
            err.message()
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn blocks_are_reused_when_they_fit() {
        // One test for all of `blocks`: its state is global.
        let n = 20usize << 20;
        let before = blocks::stats();
        let p = blocks::take(n);
        assert!(!p.is_null());
        // The process's first block has 4 KiB pages, later ones huge pages.
        // SAFETY: `p` came from `take` and is live.
        assert_eq!(unsafe { blocks::has_huge_pages(p) }, before.mapped > 0);
        // SAFETY: `take` gave `n` writable bytes.
        let s = unsafe { std::slice::from_raw_parts_mut(p, n) };
        s.fill(7);
        assert_eq!(s[n - 1], 7);
        assert!(blocks::stats().held >= before.held + n);
        // SAFETY: `p` came from `take` and is not used again.
        unsafe { blocks::give(p) };
        // The same size again gets the pooled block back.
        let q = blocks::take(n);
        assert_eq!(q, p);
        assert_eq!(blocks::stats().reused, before.reused + 1);
        // Two blocks alive, then both freed: both are reused, the one
        // with huge pages first.
        let q2 = blocks::take(n);
        assert_ne!(q2, q);
        assert!(unsafe { blocks::has_huge_pages(q2) });
        unsafe {
            blocks::give(q2);
            blocks::give(q);
        }
        let (r1, r2) = (blocks::take(n), blocks::take(n));
        assert_eq!(r1, q2);
        let mut got = [r1 as usize, r2 as usize];
        let mut want = [q as usize, q2 as usize];
        got.sort();
        want.sort();
        assert_eq!(got, want);
        // A block far larger than needed is not reused.
        unsafe { blocks::give(r1) };
        let r = blocks::take(n / 4);
        assert_ne!(r, r1);
        // SAFETY: `r` came from `take`; writing all of it stays in bounds.
        unsafe {
            std::slice::from_raw_parts_mut(r, n / 4).fill(1);
            blocks::give(r);
            blocks::give(r2);
        }
        assert!(blocks::stats().pooled <= blocks::POOL_MAX_BYTES);
        // Larger than the keep limit: unmapped, still usable before that.
        let big = blocks::take(blocks::KEEP_MAX_BYTES + 1);
        assert!(!big.is_null());
        unsafe { blocks::give(big) };

        // A collection is due once the blocks held grew by the allowance
        // beyond what the last full one found live, and not right after it.
        use blocks::Collection::{Full, Minor};
        blocks::collected(Full);
        assert!(!blocks::collection_due());
        assert_eq!(blocks::collection_kind(), Minor);
        let m = 64usize << 20;
        let mut held = Vec::new();
        while held.len() * m < blocks::COLLECT_AFTER_BYTES {
            assert!(!blocks::collection_due());
            held.push(blocks::take(m));
        }
        assert!(blocks::collection_due());
        assert_eq!(blocks::collection_kind(), Minor);
        // A minor collection that freed nothing: what survived it may be
        // garbage only a full one frees, so it is due again, and full.
        blocks::collected(Minor);
        assert!(blocks::collection_due());
        assert_eq!(blocks::collection_kind(), Full);
        blocks::collected(Full);
        assert!(!blocks::collection_due());
        assert_eq!(blocks::collection_kind(), Minor);
        // Blocks given back (by a collection R ran itself) lower what
        // counts as live: the allowance starts from there.
        for p in held.drain(..) {
            unsafe { blocks::give(p) };
        }
        assert!(!blocks::collection_due());
        while held.len() * m < blocks::COLLECT_AFTER_BYTES {
            held.push(blocks::take(m));
        }
        assert!(blocks::collection_due());
        for p in held.drain(..) {
            unsafe { blocks::give(p) };
        }
        blocks::collected(Full);

        // A loop `x <- a[]` against a model of R's generational collector:
        // a minor collection frees garbage that never survived one, a full
        // one all garbage. At most four results are held when a
        // collection runs, as with full collections only, and at most
        // every other collection is full.
        struct Result {
            ptr: *mut u8,
            old: bool,
        }
        let collect = |results: &mut Vec<Result>, kind| {
            // The last result is the one the loop's variable holds.
            let last = results.len() - 1;
            let mut i = 0;
            results.retain_mut(|r| {
                let garbage = i != last;
                i += 1;
                if garbage && (kind == Full || !r.old) {
                    unsafe { blocks::give(r.ptr) };
                    false
                } else {
                    r.old = true;
                    true
                }
            });
            blocks::collected(kind);
        };
        let size = 128usize << 20;
        let base = blocks::stats().held;
        let mut results: Vec<Result> = Vec::new();
        let (mut full, mut minor, mut most) = (0, 0, 0);
        for _ in 0..60 {
            if blocks::collection_due() {
                let kind = blocks::collection_kind();
                most = most.max(results.len());
                collect(&mut results, kind);
                if kind == Full {
                    full += 1;
                } else {
                    minor += 1;
                }
            }
            results.push(Result {
                ptr: blocks::take(size),
                old: false,
            });
        }
        assert!(most <= 4, "{most} results held at a collection");
        assert!(full >= 1 && full <= minor + 1, "{full} full, {minor} minor");
        assert!(blocks::stats().held <= base + 5 * blocks::mapping_len(size).unwrap());
        for r in results {
            unsafe { blocks::give(r.ptr) };
        }
    }
}
