//! Zarr v3 core data types (v3-data-types.rst) and how each maps to an R
//! vector type.

use crate::error::{Result, ZarrError};

mod endian;
pub mod fixed_text;
pub mod numpy;
pub mod structs;

pub use endian::Endian;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    Complex64,
    Complex128,
    /// Variable-length UTF-8 strings (the `string` extension data type).
    String,
    /// Records of this many bytes whose layout the engine does not look
    /// into: the `struct` data type and NumPy's structured dtypes
    /// (`structs::StructType` names their fields). Elements are copied as
    /// they are stored; fields are converted one by one above the engine.
    Record(u32),
}

/// The R vector type an array of a data type reads into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RType {
    Logical,
    Integer,
    Double,
    Complex,
    /// `bit64::integer64`: a double vector holding the bits of an i64.
    Integer64,
    Character,
    /// A raw vector holding whole records, as stored (see
    /// `DataType::Record`).
    Raw,
}

pub const ALL_DATA_TYPES: [DataType; 15] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
    DataType::String,
];

impl RType {
    /// Bytes of one element of the R vector (0 for character vectors,
    /// which hold pointers R manages).
    pub fn size(self) -> usize {
        match self {
            RType::Logical | RType::Integer => 4,
            RType::Double | RType::Integer64 => 8,
            RType::Complex => 16,
            RType::Character => 0,
            RType::Raw => 1,
        }
    }
}

impl DataType {
    pub fn parse(name: &str) -> Result<DataType> {
        ALL_DATA_TYPES
            .iter()
            .copied()
            .find(|d| d.name() == name)
            .ok_or_else(|| ZarrError::Unsupported(format!("data type '{name}' is not supported")))
    }

    pub fn name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::String => "string",
            DataType::Record(_) => "struct",
        }
    }

    /// Bytes of one element; strings have no fixed size (0).
    pub fn size(self) -> usize {
        match self {
            DataType::String => 0,
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::Record(n) => n as usize,
        }
    }

    /// Bytes of the unit whose byte order the `bytes` codec swaps: complex
    /// numbers swap their real and imaginary parts separately.
    pub fn swap_unit(self) -> usize {
        match self {
            DataType::Complex64 => 4,
            DataType::Complex128 => 8,
            // Each field has its own byte order (structs.rs).
            DataType::Record(_) => 1,
            d => d.size(),
        }
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Float16
                | DataType::Float32
                | DataType::Float64
                | DataType::Complex64
                | DataType::Complex128
        )
    }

    /// The R type values of this data type read into. `bit64` says whether
    /// the R session can use `integer64`; without it 64-bit and uint32 values
    /// read as double.
    pub fn r_type(self, bit64: bool) -> RType {
        match self {
            DataType::Bool => RType::Logical,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16 => RType::Integer,
            DataType::Int64 | DataType::UInt32 | DataType::UInt64 => {
                if bit64 {
                    RType::Integer64
                } else {
                    RType::Double
                }
            }
            DataType::Float16 | DataType::Float32 | DataType::Float64 => RType::Double,
            DataType::Complex64 | DataType::Complex128 => RType::Complex,
            DataType::String => RType::Character,
            DataType::Record(_) => RType::Raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_is_refused() {
        for d in ALL_DATA_TYPES {
            assert_eq!(DataType::parse(d.name()).unwrap(), d);
        }
        assert_eq!(
            DataType::parse("float128").unwrap_err().kind(),
            "unsupported"
        );
    }

    #[test]
    fn complex_swaps_parts_separately() {
        assert_eq!(DataType::Complex128.size(), 16);
        assert_eq!(DataType::Complex128.swap_unit(), 8);
        assert_eq!(DataType::Int16.swap_unit(), 2);
    }

    #[test]
    fn r_types_follow_the_architecture() {
        assert_eq!(DataType::UInt16.r_type(true), RType::Integer);
        assert_eq!(DataType::UInt32.r_type(true), RType::Integer64);
        assert_eq!(DataType::UInt32.r_type(false), RType::Double);
        assert_eq!(DataType::Float16.r_type(true), RType::Double);
    }
}
