#' Bit rounding of numeric arrays
#'
#' @description Bit rounding keeps a number of significant bits of each
#' element and sets the others to zero, rounding to the nearest kept value
#' (half to even on the bits), so that a compressor after it finds long
#' runs. It is lossy: reads return the rounded values. It is an
#' array -> array codec, applied before `bytes`. The package reads and
#' writes it under two names:
#'
#' - `"numcodecs.bitround"` (Zarr v2 filter `"bitround"`), numcodecs'
#'   `BitRound` as zarr-python writes it: `float16`, `float32` and
#'   `float64` arrays, `keepbits` from 0 to the bits of the mantissa (10,
#'   23 or 52).
#' - `"bitround"`, the Zarr extension registry's codec (as zarrs writes
#'   it): the same rounding of floats (and of each part of a complex
#'   number), and of integers too, which keep `keepbits` bits from their
#'   highest set bit (a negative integer by its two's complement bits; a
#'   value that would round past the largest the type holds stays at the
#'   largest its kept bits give). `keepbits` is at least 1; more bits than
#'   a type has leave its values unchanged. Zarr v2 has no id for it.
#'
#' @name zarr_bitround
#' @examples
#' b <- define_array("int32", 6)
#' b$add_codec("bitround", list(keepbits = 3))
#' a <- create_zarr()$add_array("/", "x", b)
#' a[] <- c(1000L, 1023L, 77L, 5L, 123456L, 0L)
#' a[]
NULL
