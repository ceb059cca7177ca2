//! Zarr v2 documents (v2-v2.0.rst): `.zarray`, `.zgroup`, `.zattrs`, and the
//! consolidated `.zmetadata` that zarr-python writes.
//!
//! A v2 array is held as the same `ArrayMetadata` as a v3 one, with its
//! layout and numcodecs configuration turned into a v3-style codec list:
//!
//!   [transpose (reversed order) if order "F"]
//!   + bytes (endian from the dtype string); for strings `vlen-utf8`
//!     (dtype "|O", the object codec first of the filters) or
//!     `numpy.fixed_string` (dtypes "<U5", ">U5", "|S5")
//!   + filters, in order, as bytes -> bytes codecs
//!   + the compressor
//!
//! Filters act on the chunk's memory (numcodecs flattens it in memory
//! order), which is what the `bytes` codec outputs, so putting them after
//! `bytes` gives the same stored bytes. Compressors with a v3 codec of the
//! same bytes map to it (gzip, zstd, blosc, crc32c); zlib, lz4, bz2 and the
//! delta filter map to the `numcodecs.*` codecs of this crate. `fill_value:
//! null` reads as zero bytes with `fill_marks_na` false; the fill value of
//! an `S` dtype is base64, as numcodecs writes it. `_ARRAY_DIMENSIONS`
//! in `.zattrs` (the xarray convention) gives the dimension names.
//!
//! `document` reads and writes the documents; `convert` turns a `.zarray`
//! into the v3 model and back.

mod convert;
mod document;

pub use convert::{
    array_from_json, array_to_json, parse_array, parse_array_value, zarray_document,
};
pub(crate) use document::ARRAY_MEMBERS;
pub use document::{
    consolidated_metadata, dtype_string, group_from_json, group_to_json, parse_consolidated,
    parse_dtype, parse_group,
};

use super::*;
use crate::dtype::Endian;

/// Store keys of the v2 documents, relative to a node's prefix.
pub const ZARRAY: &str = ".zarray";
pub const ZGROUP: &str = ".zgroup";
pub const ZATTRS: &str = ".zattrs";
pub const ZMETADATA: &str = ".zmetadata";
/// The attribute xarray keeps dimension names in.
pub const ARRAY_DIMENSIONS: &str = "_ARRAY_DIMENSIONS";

#[cfg(test)]
mod tests;
