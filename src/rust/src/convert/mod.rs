//! Element conversion between stored Zarr types and R vectors, and the
//! strided N-d copy kernel every read and write goes through.

mod kernel;

pub use kernel::*;
