//! Progress of long reads and writes: R/progress.R sets an R function
//! before an engine call, and the engine's periodic interrupt check (on
//! R's thread, see `pool::interrupted`) passes it the chunks done so far.

use super::{R_tryCatch, Sexp};
use extendr_api::prelude::*;
use std::cell::RefCell;
use std::ffi::{c_char, c_void};

thread_local! {
    // Only R's thread ever sets or calls it.
    static HOOK: RefCell<Option<Robj>> = const { RefCell::new(None) };
}

// SEXP is an opaque pointer to R; its pointee is never touched from Rust.
#[allow(improper_ctypes)]
extern "C" {
    fn Rf_eval(call: Sexp, env: Sexp) -> Sexp;
    fn Rf_lang3(f: Sexp, a: Sexp, b: Sexp) -> Sexp;
    fn Rf_ScalarReal(x: f64) -> Sexp;
    fn Rf_inherits(x: Sexp, class: *const c_char) -> extendr_ffi::Rboolean;
}

/// Set (a function of `done` and `total`) or clear (NULL) the progress
/// function of the next engine calls.
/// @noRd
#[extendr]
fn rz_progress_hook(f: Robj) {
    HOOK.with(|h| *h.borrow_mut() = (!f.is_null()).then_some(f));
}

struct Call {
    f: Sexp,
    done: f64,
    total: f64,
}

extern "C" fn call_hook(data: *mut c_void) -> Sexp {
    // SAFETY: `data` is the `Call` that `report` passes, alive for the
    // call; this runs on R's thread inside R_tryCatch, which catches any
    // jump out of the R code.
    unsafe {
        let c = &*(data as *const Call);
        let call =
            extendr_ffi::Rf_protect(Rf_lang3(c.f, Rf_ScalarReal(c.done), Rf_ScalarReal(c.total)));
        Rf_eval(call, extendr_ffi::R_GlobalEnv);
        extendr_ffi::Rf_unprotect(1);
        extendr_ffi::R_NilValue
    }
}

extern "C" fn caught(cond: Sexp, _: *mut c_void) -> Sexp {
    cond
}

/// Pass the progress to the hook, if one is set. True when the user
/// interrupted while it ran (its R code saw the interrupt first). A hook
/// that fails is dropped: progress is never worth failing a read for.
pub(super) fn report(done: usize, total: usize) -> bool {
    let Some(f) = HOOK.with(|h| h.borrow().clone()) else {
        return false;
    };
    let conds: Robj = Strings::from_values(["interrupt", "error"]).into();
    // SAFETY: on R's thread (the only caller is the interrupt check, asked
    // from the thread that entered `guard`); `f` and `conds` stay alive.
    unsafe {
        let mut call = Call {
            f: f.get(),
            done: done as f64,
            total: total as f64,
        };
        let got = R_tryCatch(
            call_hook,
            &mut call as *mut Call as *mut c_void,
            conds.get(),
            caught,
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        );
        if matches!(extendr_ffi::Rf_isNull(got), extendr_ffi::Rboolean::TRUE) {
            return false;
        }
        let interrupted = matches!(
            Rf_inherits(got, c"interrupt".as_ptr()),
            extendr_ffi::Rboolean::TRUE
        );
        if !interrupted {
            HOOK.with(|h| *h.borrow_mut() = None);
        }
        interrupted
    }
}

extendr_module! {
    mod progress;
    fn rz_progress_hook;
}
