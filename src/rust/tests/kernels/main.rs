//! The engine's kernels and parsers from outside the crate, in one test
//! binary: each integration binary links the whole library with LTO, which
//! costs `make test` most of a minute per binary.

mod fuzz_regressions;
mod layout;
