# The array builder: package defaults, codec chain editing and metadata
# documents.

all_types <- c("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128")

codec_names_of <- function(x) vapply(x$codecs, function(c) c$name, character(1))

# The codec chain as in zarr.json: a list of name (and configuration)
# entries, whether `codecs` holds such entries or zarr_codec objects.
codec_docs <- function(x) {
  lapply(x$codecs, function(c) if (inherits(c, "zarr_codec")) c$metadata_fragment() else c)
}

test_that("define_array() chunks are min(shape, 100) along each dimension", {
  shapes <- list(5, 100, 101, c(250, 30, 7), c(1000, 1), c(3, 200, 100, 2))
  for (s in shapes) {
    b <- define_array("int32", s)
    expect_identical(b$shape, as.integer(s), info = paste(s, collapse = "x"))
    expect_identical(b$chunk_shape$chunk_shape, as.integer(pmin(s, 100)), info = paste(s, collapse = "x"))
  }
})

test_that("define_array() chunks are at least 1 along an empty dimension", {
  b <- define_array("int8", c(0, 3))
  expect_identical(b$chunk_shape$chunk_shape, c(1L, 3L))
  expect_true(b$is_valid())
})

test_that("the chunk_shape field reads as a chunk_grid_regular", {
  b <- define_array("int32", c(250, 30))
  g <- b$chunk_shape
  expect_s3_class(g, "chunk_grid_regular")
  expect_identical(g$chunk_grid, c(3L, 1L))
  b$chunk_shape <- c(50, 7)
  expect_identical(b$chunk_shape$chunk_shape, c(50L, 7L))
  expect_identical(b$chunk_shape$chunk_grid, c(5L, 5L))
})

test_that("define_array() codecs are R-CF's: transpose (reversed order), bytes and blosc zstd level 1", {
  for (nd in 2:4) {
    b <- define_array("float32", rep(3, nd))
    codecs <- codec_docs(b)
    expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc"), info = nd)
    expect_identical(codecs[[1]]$configuration$order, as.list(rev(seq_len(nd) - 1L)), info = nd)
    expect_identical(codecs[[2]]$configuration, list(endian = "little"), info = nd)
    expect_identical(codecs[[3]]$configuration,
                     list(cname = "zstd", clevel = 1L, shuffle = "shuffle", typesize = 4L, blocksize = 0L), info = nd)
    expect_false(b$portable, info = nd)
  }
})

test_that("define_array() for one dimension has no transpose codec", {
  b <- define_array("float64", 10)
  expect_identical(codec_names_of(b), c("bytes", "blosc"))
})

test_that("the default blosc shuffles by data type as R-CF's zarr does", {
  shuffle_of <- function(type) codec_docs(define_array(type, 4))[[2]]$configuration$shuffle
  expect_identical(vapply(c("bool", "int8", "uint8"), shuffle_of, ""),
                   c(bool = "noshuffle", int8 = "noshuffle", uint8 = "noshuffle"))
  expect_identical(vapply(c("int16", "int32", "uint32", "int64", "float32"), shuffle_of, ""),
                   c(int16 = "shuffle", int32 = "shuffle", uint32 = "shuffle", int64 = "shuffle", float32 = "shuffle"))
  expect_identical(vapply(c("float64", "uint64", "complex128"), shuffle_of, ""),
                   c(float64 = "bitshuffle", uint64 = "bitshuffle", complex128 = "bitshuffle"))
})

test_that("string arrays default to zstd, which Zarr v2 stores of strings can read back", {
  expect_identical(codec_names_of(define_array("string", c(2, 2))), c("transpose", "vlen-utf8", "zstd"))
  v2 <- create_zarr(zarr_format = 2)$add_array("/", "s", define_array("string", 4))
  v2[] <- c("a", NA, "", "d")
  expect_identical(v2[], c("a", NA, "", "d"))
})

test_that("remove_codec(\"blosc\") leaves R-CF's uncompressed chain", {
  b <- define_array("int32", c(4, 4))
  b$remove_codec("blosc")
  expect_identical(codec_names_of(b), c("transpose", "bytes"))
  z <- create_zarr()
  arr <- z$add_array("/", "a", b)
  arr$write(matrix(1:16, 4))
  expect_identical(arr[], matrix(1:16, 4))
})

test_that("the bytes codec has an endian only for multi-byte types", {
  for (t in all_types) {
    b <- define_array(t, c(4, 4))
    bytes_cfg <- codec_docs(b)[[2]]$configuration
    size <- zarr_data_type$new(t)$size
    if (size > 1L) {
      expect_identical(bytes_cfg, list(endian = "little"), info = t)
    } else {
      expect_null(bytes_cfg, info = t)
    }
  }
})

test_that("define_array() sets each type's default fill value", {
  for (t in all_types) {
    b <- define_array(t, 3)
    expect_identical(b$data_type, t)
    expect_identical(b$fill_value, zarr_data_type$new(t)$fill_value, info = t)
  }
  expect_identical(define_array("int8", 3)$fill_value, -128)
  expect_identical(define_array("uint16", 3)$fill_value, 65535)
  expect_identical(define_array("float64", 3)$fill_value, "NaN")
  expect_identical(define_array("bool", 3)$fill_value, FALSE)
})

test_that("metadata() gives a complete v3 array document", {
  b <- define_array("int16", c(20, 30))
  m <- b$metadata()
  expect_identical(m$zarr_format, 3L)
  expect_identical(m$node_type, "array")
  expect_identical(unlist(m$shape), c(20, 30))
  expect_identical(m$data_type, "int16")
  expect_identical(m$chunk_grid$name, "regular")
  expect_identical(unlist(m$chunk_grid$configuration$chunk_shape), c(20, 30))
  expect_identical(m$chunk_key_encoding, list(name = "default", configuration = list(separator = "/")))
  expect_identical(m$fill_value, -32768)
  expect_identical(m$codecs, codec_docs(b))
  expect_length(m$attributes, 0L)
})

test_that("metadata(format = 'JSON') is valid JSON describing the same array", {
  for (t in all_types) {
    b <- define_array(t, c(5, 6))
    json <- b$metadata(format = "JSON")
    expect_type(json, "character")
    expect_length(json, 1L)
    expect_true(jsonlite::validate(json), info = t)
    doc <- jsonlite::fromJSON(json, simplifyVector = FALSE)
    expect_identical(doc$data_type, t, info = t)
    expect_identical(doc$node_type, "array", info = t)
    expect_equal(unlist(doc$shape), c(5, 6), info = t)
    expect_identical(vapply(doc$codecs, function(c) c$name, ""), codec_names_of(b), info = t)
  }
})

test_that("metadata(format = 'JSON') writes 64-bit fill values as JSON numbers", {
  b <- define_array("int64", 3)
  json <- b$metadata(format = "JSON")
  expect_false(grepl('"fill_value": "', json, fixed = TRUE))
  expect_true(grepl('"fill_value": ?-9223372036854775808[,\n ]', json))
  u <- define_array("uint64", 3)$metadata(format = "JSON")
  expect_true(grepl('"fill_value": ?18446744073709551615[,\n ]', u))
})

test_that("metadata() refuses an unknown format and an incomplete definition", {
  expect_error(define_array("int8", 3)$metadata("yaml"), class = "zarr_error_argument", regexp = "format")
  expect_error(array_builder$new()$metadata(), class = "zarr_error_argument", regexp = "data type")
})

test_that("add_codec() appends a codec with its default configuration", {
  b <- define_array("int32", c(10, 10))
  expect_invisible(b$add_codec("crc32c", NULL))
  expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc", "crc32c"))
  b <- define_array("float64", 10)
  b$remove_codec("blosc")
  b$add_codec("gzip", NULL)
  expect_identical(codec_docs(b)[[2]], list(name = "gzip", configuration = list(level = 6L)))
  b$remove_codec("gzip")
  b$add_codec("zstd", list(level = 7L))
  expect_identical(codec_docs(b)[[2]]$configuration, list(level = 7L, checksum = FALSE))
  b$remove_codec("zstd")
  b$add_codec("blosc", list(cname = "lz4"))
  cfg <- codec_docs(b)[[2]]$configuration
  expect_identical(cfg$cname, "lz4")
  expect_identical(cfg$typesize, 8L)
  expect_identical(cfg$shuffle, "bitshuffle")
  expect_true(b$is_valid())
})

test_that("add_codec() inserts at .position", {
  b <- define_array("int32", c(10, 10))
  b$add_codec("gzip", list(level = 9L), .position = 3)
  expect_identical(codec_names_of(b), c("transpose", "bytes", "gzip", "blosc"))
  expect_identical(codec_docs(b)[[3]]$configuration, list(level = 9L))
  # a position past the end appends
  b$add_codec("crc32c", NULL, .position = 99)
  expect_identical(codec_names_of(b), c("transpose", "bytes", "gzip", "blosc", "crc32c"))
  expect_true(b$is_valid())
})

test_that("add_codec() refuses a codec at a position its mode does not allow, with a warning", {
  b <- define_array("int32", c(10, 10))
  before <- codec_docs(b)
  expect_warning(b$add_codec("crc32c", NULL, .position = 1), class = "zarr_warning", regexp = "crc32c")
  expect_identical(codec_docs(b), before)
  expect_warning(b$add_codec("transpose", NULL, .position = 4), class = "zarr_warning", regexp = "position 4")
  expect_identical(codec_docs(b), before)
  expect_warning(b$add_codec("gzip", NULL, .position = 2), class = "zarr_warning", regexp = "gzip")
  expect_identical(codec_docs(b), before)
})

test_that("add_codec() refuses a second array -> bytes codec with a warning", {
  b <- define_array("int32", c(10, 10))
  before <- codec_docs(b)
  expect_warning(b$add_codec("bytes", NULL), class = "zarr_warning", regexp = "array -> bytes")
  expect_identical(codec_docs(b), before)
})

test_that("add_codec() needs a data type and a known codec name", {
  expect_error(array_builder$new()$add_codec("zstd", NULL), class = "zarr_error_argument", regexp = "data type")
  b <- define_array("int32", 4)
  expect_error(b$add_codec("lzma", NULL), class = "zarr_error_unsupported", regexp = "lzma")
  expect_error(b$add_codec(NA_character_, NULL), class = "zarr_error_argument", regexp = "codec")
})

test_that("remove_codec() removes a codec by name", {
  b <- define_array("int32", c(10, 10))
  expect_invisible(b$remove_codec("blosc"))
  expect_identical(codec_names_of(b), c("transpose", "bytes"))
  b$remove_codec("transpose")
  expect_identical(codec_names_of(b), "bytes")
  expect_true(b$portable)
  expect_true(b$is_valid())
  # removing a codec that is not there changes nothing
  b$remove_codec("gzip")
  expect_identical(codec_names_of(b), "bytes")
})

test_that("remove_codec() keeps the array -> bytes codec, with a warning", {
  b <- define_array("int32", c(10, 10))
  expect_warning(b$remove_codec("bytes"), class = "zarr_warning", regexp = "bytes")
  expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc"))
})

test_that("is_valid() is FALSE until a data type and shape are set, TRUE for defaults", {
  b <- array_builder$new()
  expect_false(b$is_valid())
  b$data_type <- "int32"
  expect_false(b$is_valid())
  b$shape <- c(4, 5)
  expect_true(b$is_valid())
  for (t in all_types) expect_true(define_array(t, c(3, 3))$is_valid(), info = t)
})

test_that("is_valid() is FALSE for a definition the engine refuses", {
  b <- define_array("int32", c(10, 10))
  b$remove_codec("transpose")
  b$add_codec("transpose", list(order = c(0L, 0L)), .position = 1)
  expect_false(b$is_valid())
})

test_that("add_codec() refuses a bytes -> bytes configuration the engine refuses, naming the member", {
  b <- define_array("int32", c(10, 10))
  expect_error(b$add_codec("zstd", list(level = 1000L)), "level must be an integer from -131072 to 22",
               class = "zarr_error_argument")
  expect_error(b$add_codec("gzip", list(level = "high")), "codec 'gzip'", class = "zarr_error_argument")
  expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc"))
})

test_that("portable = TRUE drops the transpose codec and FALSE brings it back", {
  b <- define_array("float32", c(4, 5, 6))
  b$add_codec("crc32c", NULL)
  b$portable <- TRUE
  expect_true(b$portable)
  expect_identical(codec_names_of(b), c("bytes", "blosc", "crc32c"))
  b$portable <- FALSE
  expect_false(b$portable)
  expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc", "crc32c"))
  expect_identical(codec_docs(b)[[1]]$configuration$order, list(2L, 1L, 0L))
  expect_error(b$portable <- NA, class = "zarr_error_argument", regexp = "portable")
})

test_that("setting the shape resets the chunk shape and keeps the portable choice", {
  b <- define_array("int32", c(10, 10))
  b$chunk_shape <- c(5, 5)
  b$portable <- TRUE
  b$shape <- c(300, 20, 2)
  expect_identical(b$chunk_shape$chunk_shape, c(100L, 20L, 2L))
  expect_true(b$portable)
  b$portable <- FALSE
  b$shape <- c(7, 8)
  expect_identical(codec_docs(b)[[1]]$configuration$order, list(1L, 0L))
})

test_that("setting the data type resets the fill value", {
  b <- define_array("int32", 3)
  b$fill_value <- 0
  b$data_type <- "uint8"
  expect_identical(b$fill_value, 255)
  expect_error(b$data_type <- "nope", class = "zarr_error_unsupported", regexp = "nope")
})

test_that("fill_value and chunk_shape setters validate their values", {
  b <- define_array("int8", c(10, 10))
  expect_error(b$fill_value <- 1000, class = "zarr_error_argument", regexp = "1000")
  expect_error(b$chunk_shape <- c(5, 5, 5), class = "zarr_error_argument", regexp = "chunk_shape")
  expect_error(b$chunk_shape <- c(0, 5), class = "zarr_error_argument", regexp = "chunk_shape")
  expect_error(b$shape <- c(1.5, 2), class = "zarr_error_argument", regexp = "shape")
  empty <- array_builder$new()
  expect_error(empty$fill_value <- 1, class = "zarr_error_argument", regexp = "data type")
  expect_error(empty$chunk_shape <- 1, class = "zarr_error_argument", regexp = "shape")
  expect_error(b$format <- 4, class = "zarr_error_unsupported", regexp = "3 or 2")
  expect_identical(b$format, 3L)
  b$format <- 2
  expect_identical(b$metadata()$zarr_format, 2L)
  expect_identical(b$metadata()$chunk_key_encoding$name, "v2")
})

test_that("codec_info describes the definition's own codecs, in order, with their modes", {
  info <- define_array("int32", c(3, 4))$codec_info
  expect_identical(info, data.frame(mode = c("array -> array", "array -> bytes", "bytes -> bytes"),
                                    codec = c("transpose", "bytes", "blosc")))
  b <- define_array("int32", 3)
  b$add_codec("crc32c", NULL)
  expect_identical(b$codec_info$codec, c("bytes", "blosc", "crc32c"))
  expect_null(array_builder$new()$codec_info)
})

test_that("array_builder$new(metadata) reproduces an existing array's definition", {
  z <- create_zarr()
  def <- define_array("int16", c(20, 30))
  def$chunk_shape <- c(7, 11)
  def$fill_value <- -1
  def$add_codec("crc32c", NULL)
  arr <- z$add_array("/", "a", def)
  arr$set_attribute("units", "m")
  b <- array_builder$new(arr$metadata)
  expect_identical(b$data_type, "int16")
  expect_identical(b$shape, c(20L, 30L))
  expect_identical(b$chunk_shape$chunk_shape, c(7L, 11L))
  expect_equal(b$fill_value, -1)
  expect_identical(codec_names_of(b), c("transpose", "bytes", "blosc", "crc32c"))
  expect_true(b$is_valid())
  # used as a template, it creates an identical array
  arr2 <- z$add_array("/", "b", b)
  doc <- function(k) jsonlite::fromJSON(rawToChar(z$store$get(k)), simplifyVector = FALSE)
  expect_identical(doc("b/zarr.json"), doc("a/zarr.json"))
  # (add_array() gave the first its _FillValue, for xarray; the template carries it)
  expect_identical(arr2$attributes, list(`_FillValue` = -1L, units = "m"))
})

test_that("array_builder$new() accepts JSON text and refuses a group's metadata", {
  json <- define_array("float32", c(3, 4))$metadata(format = "JSON")
  b <- array_builder$new(json)
  expect_identical(b$data_type, "float32")
  expect_identical(b$shape, c(3L, 4L))
  group_meta <- list(zarr_format = 3L, node_type = "group", attributes = list())
  expect_error(array_builder$new(group_meta), class = "zarr_error_metadata", regexp = "array")
})

test_that("an array created from a builder has the builder's chunks and codecs", {
  z <- create_zarr()
  def <- define_array("float64", c(30, 40))
  def$chunk_shape <- c(8, 16)
  def$add_codec("crc32c", NULL)
  arr <- z$add_array("/", "a", def)
  expect_identical(arr$chunking$chunk_shape, c(8L, 16L))
  expect_identical(vapply(arr$codecs, function(c) c$name, ""), c("transpose", "bytes", "blosc", "crc32c"))
  x <- matrix(seq_len(1200) / 7, 30, 40)
  arr$write(x)
  expect_identical(arr$read(), x)
  expect_length(z$store$list_prefix("a/c/"), 4L * 3L)
})

test_that("print() of a builder shows its definition", {
  b <- define_array("int32", c(4, 5))
  expect_output(print(b), "int32")
  expect_output(print(b), "4 x 5")
  expect_output(print(b), "transpose, bytes, blosc")
  expect_output(print(array_builder$new()), "not set")
})

test_that("v2 arrays are stored in C order unless the caller asks for F", {
  zarray_order <- function(path, name) {
    jsonlite::fromJSON(file.path(path, name, ".zarray"))$order
  }
  path <- local_store_path()
  z <- create_zarr(path, zarr_format = 2)
  x <- matrix(1:12, 3, 4)
  z$add_array("/", "c", define_array("int32", c(3, 4)))$write(x)
  f <- define_array("int32", c(3, 4))
  f$portable <- FALSE
  z$add_array("/", "f", f)$write(x)
  b <- define_array("int32", c(3, 4))
  b$format <- 2
  expect_null(Find(function(c) identical(c$name, "transpose"), b$metadata()$codecs))
  expect_identical(zarray_order(path, "c"), "C")
  expect_identical(zarray_order(path, "f"), "F")
  z2 <- open_zarr(path)
  expect_identical(z2[["/c"]][], x)
  expect_identical(z2[["/f"]][], x)
  # as_zarr() into a new v2 store
  p2 <- local_store_path()
  as_zarr(x, location = p2, zarr_format = 2)
  expect_identical(jsonlite::fromJSON(file.path(p2, ".zarray"))$order, "C")
  expect_identical(open_zarr(p2)[["/"]][], x)
})

test_that("dimension_names and attributes are set on the builder and go into the array's metadata", {
  b <- define_array("int32", c(2, 3))
  expect_null(b$dimension_names)
  b$dimension_names <- c("lat", NA)
  b$attributes <- list(units = "m")
  expect_identical(b$dimension_names, c("lat", NA))
  expect_identical(b$metadata()$attributes, list(units = "m"))
  z <- create_zarr()
  a <- z$add_array("/", "a", b)
  expect_identical(a$metadata$dimension_names, list("lat", NULL))
  expect_identical(a$attributes$units, "m")
  # the builder the caller holds is not changed by add_array()'s additions
  expect_identical(b$attributes, list(units = "m"))
  b$dimension_names <- NULL
  expect_null(b$metadata()$dimension_names)
  expect_error(b$dimension_names <- "one", class = "zarr_error_argument", regexp = "2 dimensions")
  expect_error(b$dimension_names <- list(1, 2), class = "zarr_error_argument", regexp = "dimension_names")
  expect_error(b$attributes <- list(1), class = "zarr_error_argument", regexp = "named list")
})

test_that("a fill value of the wrong kind for a string array names `fill_value`", {
  b <- array_builder$new()
  b$data_type <- "string"
  expect_error(b$fill_value <- 0L, class = "zarr_error_argument",
               regexp = "`fill_value` 0 is not valid for data type 'string'", fixed = TRUE)
  expect_error(b$fill_value <- NA_character_, class = "zarr_error_argument", regexp = "fill_value")
  b$fill_value <- "N/A"
  expect_identical(b$fill_value, "N/A")
})
