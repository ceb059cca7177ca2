#' Packing values into fewer bits
#'
#' @description The package reads and writes two codecs named packbits:
#'
#' - `"numcodecs.packbits"` (Zarr v2 filter `"packbits"`), numcodecs'
#'   `PackBits` as zarr-python writes it: booleans eight to a byte, the
#'   first in the highest bit, behind a byte that counts the padding bits.
#'   For `bool` arrays; it has no configuration.
#' - `"packbits"`, the Zarr extension registry's array -> bytes codec (as
#'   zarrs writes it): `add_codec()` puts it in the place of `bytes`. It
#'   keeps bits `first_bit` to `last_bit` (counted from 0, the lowest bit)
#'   of each element, or of each part of a complex number, and packs them
#'   one after the other from the lowest bit of the first byte up. On
#'   reading, the bits go back to their place, signed integers have their
#'   sign extended from `last_bit`, and every other bit is 0: values that
#'   need more bits than are kept do not read back. `padding_encoding`
#'   says where the number of padding bits of the last byte is written:
#'   `"none"` (the default), `"first_byte"` or `"last_byte"`. Data types:
#'   `bool` (one bit), the integers, `float16`, `float32`, `float64`,
#'   `complex64` and `complex128`. By default every bit is kept, which
#'   stores what `bytes` stores (little endian).
#'
#' @name zarr_packbits
#' @examples
#' b <- define_array("int16", 6)
#' b$add_codec("packbits", list(last_bit = 11))
#' a <- create_zarr()$add_array("/", "x", b)
#' a[] <- c(-2048L, -1L, 0L, 7L, 1000L, 2047L)
#' a[]
NULL
