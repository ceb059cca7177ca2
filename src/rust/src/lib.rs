//! Rust core of the `zarr` R package.
//!
//! Every module except `r` is plain Rust with no knowledge of R, so the
//! whole engine is covered by `cargo test --no-default-features`.

pub mod cf;
pub mod codec;
pub mod convert;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod fill;
pub mod grid;
pub mod key;
pub mod layout;
pub mod metadata;
pub mod node;
pub mod pages;
pub mod panics;
pub mod pool;
pub mod runtime;
pub mod selection;
pub mod steer;
pub mod store;
pub mod words;

#[cfg(feature = "r")]
pub mod r;
