//! Result vectors: R's custom allocator (which extendr does not bind) over
//! memory of `pages::blocks`, and the R buffer of a result vector.

use super::*;

pub(super) fn alloc_r_vector(rtype: RType, n: usize) -> Robj {
    let sexptype = match rtype {
        RType::Logical => SEXPTYPE::LGLSXP,
        RType::Integer => SEXPTYPE::INTSXP,
        RType::Double | RType::Integer64 => SEXPTYPE::REALSXP,
        RType::Complex => SEXPTYPE::CPLXSXP,
        RType::Character => SEXPTYPE::STRSXP,
        RType::Raw => SEXPTYPE::RAWSXP,
    };
    let mut v =
        alloc_large(sexptype, n, rtype.size()).unwrap_or_else(|| Robj::alloc_vector(sexptype, n));
    if rtype == RType::Integer64 {
        v.set_class(["integer64"])
            .expect("setting a class on a new vector");
    }
    v
}

/// Whether `alloc_r_vector(rtype, n)` runs R's collector before it
/// allocates.
pub(super) fn collects_before(rtype: RType, n: usize) -> bool {
    let large = rtype != RType::Character && large_bytes(n, rtype.size()).is_some();
    #[cfg(target_os = "linux")]
    return large && crate::pages::blocks::collection_due();
    #[cfg(not(target_os = "linux"))]
    return {
        let _ = large;
        false
    };
}

/// The bytes of `n` elements of `elt_size` when they make a result that
/// takes a block of `pages::blocks` (not for strings).
fn large_bytes(n: usize, elt_size: usize) -> Option<usize> {
    n.checked_mul(elt_size)
        .filter(|&b| b >= crate::pages::MIN_ADVISED_BYTES)
}

/// R's custom allocator (R_ext/Rallocators.h; "Custom allocators" in
/// Writing R Extensions), which extendr does not bind.
#[repr(C)]
struct RAllocator {
    mem_alloc: unsafe extern "C" fn(*mut RAllocator, usize) -> *mut std::ffi::c_void,
    mem_free: unsafe extern "C" fn(*mut RAllocator, *mut std::ffi::c_void),
    res: *mut std::ffi::c_void,
    data: *mut std::ffi::c_void,
}

// SEXP is an opaque pointer to R; its pointee is never touched from Rust.
#[allow(improper_ctypes)]
extern "C" {
    fn Rf_allocVector3(t: SEXPTYPE, n: isize, allocator: *mut RAllocator) -> extendr_ffi::SEXP;
    fn R_gc();
    static R_FalseValue: extendr_ffi::SEXP;
    fn Rf_lang4(
        f: extendr_ffi::SEXP,
        a: extendr_ffi::SEXP,
        b: extendr_ffi::SEXP,
        c: extendr_ffi::SEXP,
    ) -> extendr_ffi::SEXP;
    // Declared in Rinternals.h; R_xlen_t is ptrdiff_t.
    fn SETLENGTH(x: extendr_ffi::SEXP, n: isize);
}

/// A block taken before R asks for it, so that a refusal falls back to
/// R's own allocation instead of an R error unwinding through Rust.
struct Reserved {
    ptr: *mut u8,
    len: usize,
}

unsafe extern "C" fn block_alloc(a: *mut RAllocator, size: usize) -> *mut std::ffi::c_void {
    // SAFETY: `data` points to the Reserved of alloc_large, alive for the
    // whole Rf_allocVector3 call that calls this.
    let reserved = unsafe { &mut *((*a).data as *mut Reserved) };
    if size > reserved.len {
        return std::ptr::null_mut();
    }
    std::mem::replace(&mut reserved.ptr, std::ptr::null_mut()) as *mut std::ffi::c_void
}

unsafe extern "C" fn block_free(_: *mut RAllocator, ptr: *mut std::ffi::c_void) {
    #[cfg(target_os = "linux")]
    // SAFETY: R hands back the pointer block_alloc gave it, once.
    unsafe {
        crate::pages::blocks::give(ptr as *mut u8)
    }
    #[cfg(not(target_os = "linux"))]
    let _ = ptr;
}

/// Runs R's collector. R's C API has a full collection only; a minor one
/// is R's own `gc(full = FALSE)`, evaluated so that an error or an
/// interrupt inside it cannot unwind through Rust (it then falls back to
/// a full one).
#[cfg(target_os = "linux")]
fn collect(kind: crate::pages::blocks::Collection) {
    use extendr_ffi::{R_BaseEnv, R_tryEvalSilent, Rf_install, Rf_protect, Rf_unprotect};
    if kind == crate::pages::blocks::Collection::Minor {
        let mut failed: std::ffi::c_int = 0;
        // SAFETY: the call is protected while it is evaluated; nothing
        // allocated by the caller is unprotected yet (R may collect at any
        // allocation anyway); R_tryEvalSilent returns instead of jumping.
        unsafe {
            let f = R_FalseValue;
            let call = Rf_protect(Rf_lang4(Rf_install(c"gc".as_ptr()), f, f, f));
            R_tryEvalSilent(call, R_BaseEnv, &mut failed);
            Rf_unprotect(1);
        }
        if failed == 0 {
            return;
        }
    }
    // SAFETY: as above.
    unsafe { R_gc() };
}

/// A numeric vector of `n` elements of `elt_size` bytes in memory of
/// pages::blocks (reused across reads), or None where that does not apply:
/// small vectors, strings, other systems, no memory. The contents are
/// left as they are: the caller writes every element.
fn alloc_large(sexptype: SEXPTYPE, n: usize, elt_size: usize) -> Option<Robj> {
    if sexptype == SEXPTYPE::STRSXP {
        return None;
    }
    let bytes = large_bytes(n, elt_size)?;
    // R asks for its vector header and a copy of the allocator on top of
    // the data; 256 bytes is more than both.
    let len = bytes.checked_add(256)?;
    #[cfg(target_os = "linux")]
    let ptr = {
        // R does not count these blocks towards its heap: collect when
        // they have grown enough since the last collection (pages.rs).
        if crate::pages::blocks::collection_due() {
            let kind = crate::pages::blocks::collection_kind();
            collect(kind);
            crate::pages::blocks::collected(kind);
        }
        crate::pages::blocks::take(len)
    };
    #[cfg(not(target_os = "linux"))]
    let ptr: *mut u8 = std::ptr::null_mut();
    if ptr.is_null() {
        return None;
    }
    let mut reserved = Reserved { ptr, len };
    let mut allocator = RAllocator {
        mem_alloc: block_alloc,
        mem_free: block_free,
        res: std::ptr::null_mut(),
        data: &mut reserved as *mut Reserved as *mut std::ffi::c_void,
    };
    // R checks a new vector's size against its own heap before it calls
    // the allocator, and runs a collection when the heap has less room:
    // a full one, since memory of a custom allocator is not part of that
    // heap and freeing it makes no room there. After any collection R
    // shrinks the heap again, so most large reads paid a full collection
    // of the whole session (every other read in a loop with `gc()`, two
    // per collection of ours in a plain loop). The vector is therefore
    // allocated at length 2, which passes that check, and given its
    // length afterwards: the block holds all of it, R reads the length
    // from the header alone (for copies, serialization, `length()`), and
    // frees custom-allocated vectors through the allocator without
    // counting their size. pages::blocks keeps the bound on memory.
    // SAFETY: R copies the allocator into the block, so a local one may
    // go; the vector is protected by from_sexp before anything else can
    // allocate. block_alloc hands R the reserved block, which fits `n`
    // elements; length 2 is not a scalar, so R takes the allocator path.
    unsafe {
        let sexp = Rf_allocVector3(sexptype, 2, &mut allocator);
        SETLENGTH(sexp, n as isize);
        Some(Robj::from_sexp(sexp))
    }
}

/// Run `f` on the memory of `v`, a vector made by `alloc_r_vector(rtype, ..)`.
pub(super) fn with_r_buffer<T>(
    v: &mut Robj,
    rtype: RType,
    f: impl FnOnce(&mut RBufMut) -> Result<T>,
) -> Result<T> {
    // SAFETY: `v` was allocated with the vector type matching `rtype`.
    let mut buf = unsafe {
        match rtype {
            RType::Logical => RBufMut::Logical(v.as_typed_slice_raw_mut::<i32>()),
            RType::Integer => RBufMut::Integer(v.as_typed_slice_raw_mut::<i32>()),
            RType::Double => RBufMut::Double(v.as_typed_slice_raw_mut::<f64>()),
            RType::Integer64 => RBufMut::Integer64(v.as_typed_slice_raw_mut::<i64>()),
            RType::Complex => RBufMut::Complex(v.as_typed_slice_raw_mut::<[f64; 2]>()),
            RType::Character => {
                return Err(ZarrError::Type("strings have no numeric buffer".into()))
            }
            // Records are read into Rust memory and split (structs.rs).
            RType::Raw => return Err(ZarrError::Type("records have no R buffer".into())),
        }
    };
    f(&mut buf)
}

/// Counts of the result blocks (pages.rs) so far: blocks reused from the
/// pool and newly mapped, collections the package ran (and how many were
/// full ones), bytes held by live or not yet collected results and bytes
/// in the pool; and reads whose
/// requests went out before their collection (`fetched_first`). For tests and
/// benchmarks; all zero where the blocks are not used.
/// @noRd
#[extendr]
fn rz_result_blocks() -> Robj {
    #[cfg(target_os = "linux")]
    let v = {
        let s = crate::pages::blocks::stats();
        [
            s.reused as f64,
            s.mapped as f64,
            s.collections as f64,
            s.held as f64,
            s.pooled as f64,
            s.full_collections as f64,
        ]
    };
    #[cfg(not(target_os = "linux"))]
    let v = [0.0; 6];
    list!(
        reused = v[0],
        mapped = v[1],
        collections = v[2],
        held = v[3],
        pooled = v[4],
        full_collections = v[5],
        fetched_first = crate::engine::fetches_taken_over() as f64
    )
    .into()
}

extendr_module! {
    mod alloc;
    fn rz_result_blocks;
}
