# Codec classes. Each is a small R6 shell over the Rust codec of the same
# name (src/rust/src/codec/): encode() and decode() make one call into the
# engine, with no per-element R loop. Arrays do not use these objects for
# their chunk I/O, which runs the whole chain in Rust; they are for
# inspecting, building and testing codec chains.

#' Zarr codecs
#'
#' @description The base class of codecs, which turn array data into stored bytes
#' (encode) and back (decode). Codecs have a mode: "array -> array"
#' (`transpose`), "array -> bytes" (`bytes`) or "bytes -> bytes" (`gzip`,
#' `zstd`, `blosc`, `crc32c`); a chain applies them in order on encode and
#' in reverse on decode.
#'
#' @docType class
#' @export
#' @examples
#' c <- zarr_codec_gzip$new(list(level = 6))
#' c$mode
#' x <- charToRaw(strrep("zarr ", 100))
#' length(c$encode(x))
#' identical(c$decode(c$encode(x)), x)
zarr_codec <- R6::R6Class("zarr_codec",
  inherit = zarr_extension,
  public = list(
    #' @description Create a new codec object.
    #' @param name The name of the codec.
    #' @param configuration A list with the configuration parameters.
    initialize = function(name, configuration) {
      super$initialize(name)
      private$.config <- if (is.null(configuration)) list() else as.list(configuration)
    },
    #' @description Copy the codec. The base class cannot be copied.
    #' @return An error for the base class; a new codec for descendants.
    copy = function() zarr_abort("unsupported", "the base zarr_codec class cannot be copied"),
    #' @description Print the codec.
    #' @param ... Ignored.
    print = function(...) {
      cat("<Zarr codec> ", private$.name, " (", self$mode, ")\n", sep = "")
      for (n in names(self$configuration)) {
        cat("  ", n, ": ", paste(format(unlist(self$configuration[[n]])), collapse = ", "), "\n", sep = "")
      }
      invisible(self)
    },
    #' @description The metadata fragment of the codec, as in zarr.json.
    #' @return A list with `name` and, if any, `configuration`.
    metadata_fragment = function() codec_entry(private$.name, self$configuration),
    #' @description Encode data; the base class returns it unchanged.
    #' @param data The data.
    #' @return The encoded data.
    encode = function(data) data,
    #' @description Decode data; the base class returns it unchanged.
    #' @param data The data.
    #' @return The decoded data.
    decode = function(data) data
  ),
  active = list(
    #' @field mode (read-only) "array -> array", "array -> bytes" or
    #'   "bytes -> bytes".
    mode = function(value) {
      m <- codec_modes()[private$.name]
      if (is.na(m)) "bytes -> bytes" else unname(m)
    },
    #' @field from (read-only) What the codec encodes: "array" or "bytes".
    from = function(value) sub(" -> .*", "", self$mode),
    #' @field to (read-only) What the codec encodes into: "array" or "bytes".
    to = function(value) sub(".* -> ", "", self$mode),
    #' @field configuration (read-only) The configuration, as in zarr.json.
    configuration = function(value) private$.config
  ),
  private = list(.config = list())
)

# A bytes -> bytes codec: encode/decode through the engine.
b2b_encode <- function(codec, dtype, data, shape = NULL) {
  if (!is.raw(data)) zarr_abort("type", sprintf("codec '%s' encodes raw vectors", codec$name))
  zarr_call(rz_codec_encode(as.character(to_json(codec$metadata_fragment(), pretty = FALSE)), dtype, data,
                            shape))
}

b2b_decode <- function(codec, dtype, data, shape = NULL) {
  if (!is.raw(data)) zarr_abort("type", sprintf("codec '%s' decodes raw vectors", codec$name))
  zarr_call(rz_codec_decode(as.character(to_json(codec$metadata_fragment(), pretty = FALSE)), dtype, data,
                            zarr_strict_checksums(), shape))
}

# The configuration of codec `name` for arrays of `data_type` with `ndim`
# dimensions: `configuration` completed with the engine's defaults and
# checked by the engine, as the codec's Rust file declares them. A bad
# member is the caller's argument, so its error is of class
# zarr_error_argument.
codec_configure <- function(name, configuration, data_type = "uint8", ndim = 1L) {
  check_string(name, "codec")
  if (is.na(codec_modes()[name])) {
    zarr_abort("unsupported", sprintf("unknown codec '%s'; known codecs are %s", name,
                                      paste(names(codec_modes()), collapse = ", ")))
  }
  cfg <- if (is.null(configuration)) list() else as.list(configuration)
  if (length(cfg) && is.null(names(cfg))) {
    zarr_abort("argument", sprintf("codec '%s': configuration must be a named list", name))
  }
  if (!length(cfg)) cfg <- structure(list(), names = character())
  txt <- tryCatch(
    zarr_call(rz_codec_configure(name, as.character(to_json(cfg, pretty = FALSE)), data_type, as.integer(ndim))),
    zarr_error = function(e) zarr_abort("argument", conditionMessage(e))
  )
  parse_json(txt)
}

# Get or set (checked by the engine) one member of a codec's configuration.
# Active bindings call this: R6 rebinds their environment, so they cannot be
# made by a closure.
codec_member <- function(self, private, member, value) {
  if (missing(value)) return(private$.config[[member]])
  cfg <- private$.config
  cfg[[member]] <- value
  private$.config <- codec_configure(self$name, cfg, private$.dt)
}

#' Any codec the engine knows
#'
#' @description A codec of any name in the engine's codec registry that
#' works on a chunk's bytes: bytes -> bytes codecs such as
#' `"numcodecs.zlib"`, `"numcodecs.lz4"` or `"numcodecs.lzma"`, and
#' numcodecs' filters such as `"numcodecs.delta"` or
#' `"numcodecs.fixedscaleoffset"` (array -> array codecs before `bytes` in
#' Zarr v3, as zarr-python 3 writes them; they code the elements `bytes`
#' gives them). zarr-python's `numcodecs.<id>` names of codecs the registry
#' has under zarr's own names (`"numcodecs.gzip"`) are taken too. Its
#' configuration is completed with the engine's defaults and checked by
#' the engine, and `encode()` and `decode()` run the engine's codec. The manual's codec classes ([zarr_codec_gzip],
#' [zarr_codec_zstd], [zarr_codec_blosc], [zarr_codec_crc32c]) are this
#' class with a fixed name. (The base class [zarr_codec] keeps the manual's
#' contract: its `encode()` and `decode()` return the data unchanged.)
#'
#' @docType class
#' @export
#' @examples
#' z <- zarr_codec_generic$new("numcodecs.zlib")
#' z$configuration
#' x <- charToRaw(strrep("zarr ", 100))
#' identical(z$decode(z$encode(x)), x)
zarr_codec_generic <- R6::R6Class("zarr_codec_generic",
  inherit = zarr_codec,
  public = list(
    #' @description Create a codec.
    #' @param name The codec's name in Zarr v3 metadata.
    #' @param configuration Optional list of configuration members; the
    #'   engine's defaults fill in the rest.
    #' @param data_type The data type (a [zarr_data_type] or its name) of
    #'   the array; codecs that work on elements (blosc's shuffle, delta)
    #'   take their element size from it.
    initialize = function(name, configuration = NULL, data_type = "uint8") {
      dt <- if (inherits(data_type, "zarr_data_type")) data_type$data_type else check_data_type(data_type)
      check_string(name, "name")
      name <- codec_registry_name(name)
      mode <- unname(codec_modes()[name])
      if (!is.na(mode) && !codec_on_bytes(name)) {
        zarr_abort("argument", sprintf("codec '%s' is %s: use its own class, or an array's codecs", name, mode))
      }
      super$initialize(name, codec_configure(name, configuration, dt))
      private$.dt <- dt
    },
    #' @description Copy the codec.
    #' @return A new codec of the same class and configuration.
    copy = function() zarr_codec_generic$new(private$.name, self$configuration, private$.dt),
    #' @description Encode a raw vector.
    #' @param data A raw vector.
    #' @param shape Optional dimensions of the chunk the elements of `data`
    #'   make, first dimension fastest as in R: codecs that compress fields
    #'   (`zfp`) use it; without it the elements are one line.
    #' @return The encoded raw vector.
    encode = function(data, shape = NULL) b2b_encode(self, private$.dt, data, shape),
    #' @description Decode a raw vector.
    #' @param data A raw vector.
    #' @param shape Optional dimensions of the chunk, as for `encode()`; the
    #'   registry's `zfp`, whose streams have no header, needs it.
    #' @return The decoded raw vector.
    decode = function(data, shape = NULL) b2b_decode(self, private$.dt, data, shape),
    #' @description Set one configuration member, checked by the engine.
    #' @param member The member's name.
    #' @param value Its new value.
    #' @return Self, invisibly.
    set = function(member, value) {
      codec_member(self, private, member, value)
      invisible(self)
    }
  ),
  private = list(.dt = "uint8")
)

#' Zarr gzip codec
#'
#' @description Compresses bytes with gzip (RFC 1952).
#'
#' @docType class
#' @export
#' @examples
#' g <- zarr_codec_gzip$new(list(level = 9))
#' g$level
#' identical(g$decode(g$encode(as.raw(1:100))), as.raw(1:100))
zarr_codec_gzip <- R6::R6Class("zarr_codec_gzip",
  inherit = zarr_codec_generic,
  public = list(
    #' @description Create a gzip codec.
    #' @param configuration Optional list with `level` (0 to 9, default 6).
    initialize = function(configuration = NULL) super$initialize("gzip", configuration),
    #' @description Copy the codec.
    #' @return A new `zarr_codec_gzip`.
    copy = function() zarr_codec_gzip$new(self$configuration)
  ),
  active = list(
    #' @field level The compression level, 0 (none) to 9 (most).
    level = function(value) codec_member(self, private, "level", value)
  )
)

#' Zarr zstd codec
#'
#' @description Compresses bytes with Zstandard.
#'
#' @docType class
#' @export
#' @examples
#' z <- zarr_codec_zstd$new(list(level = 3))
#' identical(z$decode(z$encode(as.raw(1:100))), as.raw(1:100))
zarr_codec_zstd <- R6::R6Class("zarr_codec_zstd",
  inherit = zarr_codec_generic,
  public = list(
    #' @description Create a zstd codec.
    #' @param configuration Optional list with `level` (-131072 to 22,
    #'   default 1; the manual's range is 1 to 20, negative levels are
    #'   faster still) and `checksum` (default FALSE).
    initialize = function(configuration = NULL) super$initialize("zstd", configuration),
    #' @description Copy the codec.
    #' @return A new `zarr_codec_zstd`.
    copy = function() zarr_codec_zstd$new(self$configuration)
  ),
  active = list(
    #' @field level The compression level: 1 (fast) to 22 (most); negative
    #'   levels are faster still.
    level = function(value) codec_member(self, private, "level", value)
  )
)

#' Zarr CRC32C codec
#'
#' @description Appends a CRC-32C checksum on encode, and checks and removes it on
#' decode. A mismatch is an error of class `zarr_error_checksum`, as in
#' zarr-python; with `options(zarr.strict_checksums = FALSE)` it is a warning
#' (class `zarr_warning`) and the data is returned as stored.
#'
#' @docType class
#' @export
#' @examples
#' c <- zarr_codec_crc32c$new()
#' x <- c$encode(charToRaw("123456789"))
#' x[10:13]
#' rawToChar(c$decode(x))
zarr_codec_crc32c <- R6::R6Class("zarr_codec_crc32c",
  inherit = zarr_codec_generic,
  public = list(
    #' @description Create a crc32c codec.
    #' @param configuration Ignored: the codec has no parameters.
    initialize = function(configuration = NULL) super$initialize("crc32c", NULL),
    #' @description Copy the codec.
    #' @return A new `zarr_codec_crc32c`.
    copy = function() zarr_codec_crc32c$new()
  )
)

#' Zarr blosc codec
#'
#' @description Compresses bytes with c-blosc (version 1), optionally after shuffling
#' bytes or bits of elements of `typesize` bytes.
#'
#' @docType class
#' @export
#' @examples
#' b <- zarr_codec_blosc$new(zarr_data_type$new("float64"))
#' b$configuration
#' x <- writeBin(sin(1:1000), raw())
#' identical(b$decode(b$encode(x)), x)
zarr_codec_blosc <- R6::R6Class("zarr_codec_blosc",
  inherit = zarr_codec_generic,
  public = list(
    #' @description Create a blosc codec. By default zstd at level 1;
    #'   `typesize` is the data type's size, and `shuffle` is "noshuffle"
    #'   for one-byte types, "shuffle" for 2- and 4-byte types and int64,
    #'   "bitshuffle" for the others.
    #' @param data_type The [zarr_data_type] (or its name) of the array.
    #' @param configuration Optional list with `cname`, `clevel`, `shuffle`,
    #'   `typesize`, `blocksize`.
    initialize = function(data_type, configuration = NULL) super$initialize("blosc", configuration, data_type),
    #' @description Copy the codec.
    #' @return A new `zarr_codec_blosc`.
    copy = function() zarr_codec_blosc$new(private$.dt, self$configuration)
  ),
  active = list(
    #' @field cname The compressor: "blosclz", "lz4", "lz4hc", "zstd" or "zlib".
    cname = function(value) codec_member(self, private, "cname", value),
    #' @field clevel The compression level, 0 to 9.
    clevel = function(value) codec_member(self, private, "clevel", value),
    #' @field shuffle "shuffle", "noshuffle" or "bitshuffle".
    shuffle = function(value) codec_member(self, private, "shuffle", value),
    #' @field typesize The element size in bytes that shuffling uses.
    typesize = function(value) codec_member(self, private, "typesize", value),
    #' @field blocksize The block size in bytes; 0 lets blosc choose.
    blocksize = function(value) codec_member(self, private, "blocksize", value)
  )
)

#' Zarr transpose codec
#'
#' @description Records the order in which a chunk's dimensions are stored. Encoded
#' dimension `i` is array dimension `order[i]` (0-based). The default order
#' reverses the dimensions, which stores R's column-major data as it is; with
#' no transpose codec chunks are stored row-major (C order), as most other
#' Zarr tools write them. Either way the engine reads straight into R's
#' layout; `encode()` and `decode()` here permute an R array with [aperm()].
#'
#' @docType class
#' @export
#' @examples
#' t <- zarr_codec_transpose$new(3)
#' t$order
#' x <- array(1:24, 2:4)
#' dim(t$encode(x))
#' identical(t$decode(t$encode(x)), x)
zarr_codec_transpose <- R6::R6Class("zarr_codec_transpose",
  inherit = zarr_codec,
  public = list(
    #' @description Create a transpose codec.
    #' @param shape_length The number of dimensions of the array.
    #' @param configuration Optional list with `order`, a 0-based
    #'   permutation; R order (reversed dimensions) by default.
    initialize = function(shape_length, configuration = list()) {
      order <- configuration$order %||% rev(seq_len(shape_length) - 1L)
      super$initialize("transpose", list(order = check_order(unlist(order), shape_length)))
      private$.n <- as.integer(shape_length)
    },
    #' @description Copy the codec.
    #' @return A new `zarr_codec_transpose`.
    copy = function() zarr_codec_transpose$new(private$.n, self$configuration),
    #' @description Permute an R array into stored order.
    #' @param data An array with as many dimensions as the codec's order.
    #' @return The permuted array.
    encode = function(data) aperm(check_rank(data, private$.n), unlist(private$.config$order) + 1L),
    #' @description Permute stored data back into array order.
    #' @param data An array in stored order.
    #' @return The array in R (= Zarr) dimension order.
    decode = function(data) aperm(check_rank(data, private$.n), order(unlist(private$.config$order)))
  ),
  active = list(
    #' @field order The 0-based order of dimensions when stored.
    order = function(value) {
      if (missing(value)) return(unlist(private$.config$order))
      private$.config$order <- check_order(value, private$.n)
    }
  ),
  private = list(.n = 0L)
)

check_order <- function(order, n) {
  order <- as.integer(order)
  if (length(order) != n || anyNA(order) || !setequal(order, seq_len(n) - 1L)) {
    zarr_abort("argument", sprintf("codec 'transpose': order must be a permutation of 0..%d", n - 1L))
  }
  as.list(order)
}

check_rank <- function(data, n) {
  d <- dim(data)
  if (length(d) != n) {
    zarr_abort("type", sprintf("codec 'transpose': data must be an array of %d dimensions", n))
  }
  data
}

#' Zarr bytes codec
#'
#' @description Turns array data into bytes in C (row-major) order of its dimensions,
#' with the given byte order, and back. `NA` is written as the fill value
#' (FALSE for bool), and on decode elements equal to the fill value become
#' `NA` (not for bool).
#'
#' @docType class
#' @export
#' @examples
#' b <- zarr_codec_bytes$new(zarr_data_type$new("int16", -1), c(2, 3))
#' r <- b$encode(matrix(c(1L, NA, 3L, 4L, 5L, 6L), 2, 3))
#' r
#' b$decode(r)
zarr_codec_bytes <- R6::R6Class("zarr_codec_bytes",
  inherit = zarr_codec,
  public = list(
    #' @description Create a bytes codec.
    #' @param data_type The [zarr_data_type] of the array.
    #' @param chunk_shape The shape of the data the codec encodes.
    #' @param configuration Optional list with `endian` ("little" or
    #'   "big"); the platform's order by default.
    initialize = function(data_type, chunk_shape, configuration = NULL) {
      if (!inherits(data_type, "zarr_data_type")) data_type <- zarr_data_type$new(data_type)
      endian <- configuration$endian %||% .Platform$endian
      cfg <- if (data_type$size > 1L) list(endian = check_endian(endian)) else list()
      super$initialize("bytes", cfg)
      private$.dt <- data_type
      private$.shape <- as.numeric(chunk_shape)
    },
    #' @description Copy the codec.
    #' @return A new `zarr_codec_bytes`.
    copy = function() zarr_codec_bytes$new(private$.dt, private$.shape, self$configuration),
    #' @description The metadata fragment of the codec.
    #' @return A list.
    metadata_fragment = function() codec_entry("bytes", self$configuration),
    #' @description Encode R data of the chunk shape as bytes.
    #' @param data A vector, matrix or array.
    #' @return A raw vector.
    encode = function(data) bytes_encode(private$.dt, private$.shape, self$endian, data),
    #' @description Decode bytes into R data of the chunk shape.
    #' @param data A raw vector.
    #' @return A vector (one dimension) or array.
    decode = function(data) bytes_decode(private$.dt, private$.shape, self$endian, data)
  ),
  active = list(
    #' @field endian "little" or "big".
    endian = function(value) {
      if (missing(value)) return(private$.config$endian %||% .Platform$endian)
      if (private$.dt$size > 1L) private$.config$endian <- check_endian(value)
    }
  ),
  private = list(.dt = NULL, .shape = NULL)
)

check_endian <- function(endian) {
  if (!identical(endian, "little") && !identical(endian, "big")) {
    zarr_abort("argument", "codec 'bytes': endian must be \"little\" or \"big\"")
  }
  endian
}

fill_json_text <- function(dt) as.character(to_json(dt$metadata_fragment()$fill_value, pretty = FALSE))

bytes_encode <- function(dt, shape, endian, data) {
  if (length(data) != prod(shape)) {
    zarr_abort("type", sprintf("codec 'bytes': %d values for a chunk of %s elements",
                               length(data), format(prod(shape))))
  }
  if (length(shape) > 1L) data <- aperm(array(data, shape), rev(seq_along(shape)))
  zarr_call(rz_bytes_encode(data, dt$data_type, fill_json_text(dt), if (dt$size > 1L) endian else ""))
}

bytes_decode <- function(dt, shape, endian, data) {
  if (!is.raw(data)) zarr_abort("type", "codec 'bytes' decodes raw vectors")
  v <- zarr_call(rz_bytes_decode(data, dt$data_type, fill_json_text(dt), if (dt$size > 1L) endian else "",
                                 use_bit64()))
  if (length(v) != prod(shape)) {
    zarr_abort("corrupt_chunk", sprintf("codec 'bytes': %d elements for a chunk of %s", length(v), format(prod(shape))))
  }
  if (length(shape) > 1L) {
    cls <- oldClass(v)
    v <- aperm(array(v, rev(shape)), rev(seq_along(shape)))
    oldClass(v) <- cls
  }
  v
}

# The manual's classes of bytes -> bytes codecs, by name; every other
# codec the engine runs on bytes is a zarr_codec_generic.
documented_codec <- function(name, configuration, dt) {
  switch(name,
    gzip = zarr_codec_gzip$new(configuration),
    zstd = zarr_codec_zstd$new(configuration),
    blosc = zarr_codec_blosc$new(dt, configuration),
    crc32c = zarr_codec_crc32c$new(configuration),
    zarr_codec_generic$new(name, configuration, dt)
  )
}

# Codec objects for a codec chain (lists of name/configuration), each with
# the shape of the data it receives. Codecs whose work only a whole chain
# can do (sharding, strings) are plain zarr_codec objects that describe them.
instantiate_codecs <- function(entries, data_type, chunk_shape) {
  dt <- if (inherits(data_type, "zarr_data_type")) data_type else zarr_data_type$new(data_type)
  shape <- as.numeric(chunk_shape)
  lapply(entries, function(e) {
    cfg <- e$configuration
    switch(e$name,
      transpose = {
        codec <- zarr_codec_transpose$new(length(shape), cfg)
        shape <<- shape[unlist(codec$order) + 1L]
        codec
      },
      bytes = zarr_codec_bytes$new(dt, shape, cfg),
      cast_value = {
        # The codecs after it see the elements as the type it casts to.
        dt <<- zarr_data_type$new(cfg$data_type)
        zarr_codec$new(e$name, cfg)
      },
      if (codec_on_bytes(e$name)) {
        documented_codec(e$name, cfg, dt$data_type)
      } else {
        zarr_codec$new(e$name, cfg)
      }
    )
  })
}

#' zfp compression of numeric arrays
#'
#' @description [zfp](https://zfp.readthedocs.io) compresses arrays of
#' `int32`, `int64`, `float32` and `float64` in blocks of 4^d values,
#' losslessly or to a chosen rate, precision or accuracy. It is an
#' array -> bytes codec: `add_codec()` puts it in the place of `bytes`.
#' Chunks have 1 to 4 dimensions. The package reads and writes it under
#' two names:
#'
#' - `"numcodecs.zfpy"` (Zarr v2 compressor `"zfpy"`), numcodecs' `ZFPY`
#'   as zarr-python 2 and 3 write it: each chunk starts with zfp's header,
#'   which says how it was compressed. Its configuration is numcodecs':
#'   `mode` 2 (fixed rate, `rate` bits per value), 3 (fixed precision,
#'   `precision` bit planes) or 4 (fixed accuracy, absolute error at most
#'   `tolerance`); the member the mode needs at -1 (the default) is
#'   reversible, lossless compression, as `ZFPY()` writes it.
#' - `"zfp"`, the Zarr extension registry's codec: the same streams
#'   without the header, the configuration saying how they were made:
#'   `mode` `"reversible"`, `"fixed_rate"` (`rate`), `"fixed_precision"`
#'   (`precision`), `"fixed_accuracy"` (`tolerance`) or `"expert"`
#'   (`minbits`, `maxbits`, `maxprec`, `minexp`).
#'
#' The codec is built in (a pure-Rust implementation that writes the C
#' library's streams bit for bit), so arrays written here read in
#' zarr-python with numcodecs and zfpy, and the other way round. zfp works
#' on the chunk as stored: with the package's default column-major chunks
#' (a `transpose` codec, or order "F" in Zarr v2) its blocks run along the
#' other dimensions than in a row-major (`portable = TRUE`) chunk, so lossy
#' modes give slightly different values. Only the lossless mode keeps
#' `NaN` and infinite values; the lossy modes spoil the block that holds
#' one.
#'
#' @name zarr_zfp
#' @examples
#' x <- outer(1:20, 1:30, function(i, j) sin(i / 3) * cos(j / 5))
#' b <- define_array("float64", dim(x))
#' b$chunk_shape <- c(10, 10)
#' b$add_codec("numcodecs.zfpy", list(mode = 4, tolerance = 0.001))
#' a <- create_zarr()$add_array("/", "x", b)
#' a[] <- x
#' max(abs(a[] - x)) <= 0.001
#' b <- define_array("float64", dim(x))
#' b$add_codec("zfp", list(mode = "reversible"))
#' a <- create_zarr()$add_array("/", "y", b)
#' a[] <- x
#' identical(a[], x)
NULL
