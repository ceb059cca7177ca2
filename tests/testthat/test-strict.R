# Strict metadata (src/rust/src/metadata/strict.rs and fill.rs): a fill value
# of the wrong JSON type is refused naming the array and key; an attribute
# holding a NUL is refused, never cut short; members of known objects that
# the reader does not know are ignored with one classed warning per
# document, naming them, unless they say "must_understand": false.

# A store with the int32 array "/a" (4 values 1:4, chunks of 2) written by
# the package, in Zarr format `format`; `doc` is its metadata file.
strict_store <- function(format = 3L, env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path, zarr_format = format)
  b <- define_array("int32", 4L)
  b$chunk_shape <- 2L
  a <- z$add_array("/", "a", b)
  a$write(1:4)
  # These tests are about the Zarr metadata alone: without the CF marker
  # that add_array() gives a v3 array (?cf_decoding), the fill value in
  # the metadata decides what reads as NA.
  if ("_FillValue" %in% names(a$attributes)) a$delete_attribute("_FillValue")
  doc <- file.path(path, "a", if (format == 3L) "zarr.json" else ".zarray")
  list(path = path, doc = doc)
}

# Rewrite JSON file `file` by text substitution (so that members the R JSON
# tools cannot hold, such as a NUL escape, can be written).
strict_sub <- function(file, pattern, replacement) {
  txt <- paste(readLines(file, warn = FALSE), collapse = "\n")
  out <- sub(pattern, replacement, txt, fixed = TRUE)
  stopifnot(!identical(out, txt))
  writeLines(out, file)
}

strict_edit <- function(file, fun) {
  meta <- jsonlite::fromJSON(file, simplifyVector = FALSE)
  writeLines(as.character(jsonlite::toJSON(fun(meta), auto_unbox = TRUE, null = "null", digits = NA)), file)
}

test_that("a fill value of the wrong JSON type is zarr_error_metadata naming the array and fill_value", {
  cases <- list(
    list(type = "int32", fill = '"3"'), list(type = "uint8", fill = '"3"'), list(type = "int16", fill = "true"),
    list(type = "float64", fill = '"nan"'), list(type = "float32", fill = "[1,2]"),
    list(type = "bool", fill = "0"), list(type = "int32", fill = "1.5"), list(type = "int64", fill = '"1e3"')
  )
  for (case in cases) {
    x <- strict_store()
    if (case$type != "int32") strict_sub(x$doc, '"data_type": "int32"', sprintf('"data_type": "%s"', case$type))
    strict_sub(x$doc, '"fill_value": -2147483648', sprintf('"fill_value": %s', case$fill))
    err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", info = case$fill)
    expect_match(conditionMessage(err), "a/zarr.json", fixed = TRUE, info = case$fill)
    expect_match(conditionMessage(err), sprintf("fill_value %s", case$fill), fixed = TRUE, info = case$fill)
    expect_match(conditionMessage(err), case$type, fixed = TRUE, info = case$fill)
  }
})

test_that("fill values in the forms the specs allow still read, 64-bit integers as digit strings too", {
  cases <- list(
    list(type = "float64", fill = '"NaN"'), list(type = "float64", fill = '"-Infinity"'),
    list(type = "float32", fill = '"0x7fc00000"'), list(type = "int64", fill = '"-9223372036854775807"'),
    list(type = "uint64", fill = '"18446744073709551615"'), list(type = "int64", fill = "-9223372036854775807")
  )
  for (case in cases) {
    x <- strict_store()
    unlink(file.path(x$path, "a", "c"), recursive = TRUE)
    strict_sub(x$doc, '"data_type": "int32"', sprintf('"data_type": "%s"', case$type))
    strict_sub(x$doc, '"fill_value": -2147483648', sprintf('"fill_value": %s', case$fill))
    a <- open_zarr(x$path)[["/a"]]
    # No chunk is stored: every element is the fill value, which reads as NA.
    expect_true(all(is.na(a[])), info = case$fill)
    expect_length(a[], 4L)
  }
})

test_that("a v2 fill value of the wrong type is refused naming '.zarray'; integral floats still read", {
  x <- strict_store(2L)
  strict_edit(x$doc, function(m) {
    m$fill_value <- "3"
    m
  })
  err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata")
  expect_match(conditionMessage(err), "a/.zarray", fixed = TRUE)
  expect_match(conditionMessage(err), 'fill_value "3"', fixed = TRUE)
  # zarr-python 2 wrote 0.0 for integer arrays: still the fill value 0.
  strict_edit(x$doc, function(m) {
    m$fill_value <- 2.0
    m
  })
  strict_sub(x$doc, '"fill_value":2', '"fill_value":2.0')
  expect_identical(open_zarr(x$path)[["/a"]][], c(1L, NA, 3L, 4L))
})

test_that("an attribute holding a NUL is refused naming it, never cut short", {
  for (format in c(3L, 2L)) {
    x <- strict_store(format)
    attrs <- file.path(x$path, "a", if (format == 3L) "zarr.json" else ".zattrs")
    if (format == 3L) {
      strict_sub(attrs, '"attributes": {}', '"attributes": {"units": "x\\u0000y"}')
    } else {
      writeLines('{"units": "x\\u0000y"}', attrs)
    }
    err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", info = format)
    expect_match(conditionMessage(err), "attribute 'units'", fixed = TRUE, info = format)
    expect_match(conditionMessage(err), "NUL", fixed = TRUE, info = format)
  }
  # In a group's attributes, nested, and in a name.
  path <- local_store_path()
  create_zarr(path)
  root <- file.path(path, "zarr.json")
  strict_sub(root, '"attributes": {}', '"attributes": {"a": {"b": ["ok", "x\\u0000"]}, "c": 1}')
  expect_error(open_zarr(path), class = "zarr_error_metadata", regexp = "attribute 'a.b[1]'", fixed = TRUE)
  strict_sub(root, '"a": {', '"a\\u0000": {')
  expect_error(open_zarr(path), class = "zarr_error_metadata", regexp = "attribute 'a\\u0000'", fixed = TRUE)
})

test_that("an attribute without a NUL keeps every character", {
  x <- strict_store()
  strict_sub(x$doc, '"attributes": {}', '"attributes": {"units": "x\\u0001y\\u00e9"}')
  a <- open_zarr(x$path)[["/a"]]
  expect_identical(a$attributes$units, paste0("x", intToUtf8(1L), "y", intToUtf8(233L)))
})

test_that("unknown members of known objects warn once per document, naming them, and are ignored", {
  x <- strict_store()
  strict_edit(x$doc, function(m) {
    m$chunk_key_encoding$configuration$seperator <- "."
    m$codecs[[1]]$configuration$endianness <- "big"
    m$chunk_grid$extra <- 1L
    m
  })
  w <- expect_warning(a <- open_zarr(x$path)[["/a"]], class = "zarr_warning_metadata")
  expect_s3_class(w, "zarr_warning")
  for (member in c("'chunk_key_encoding.configuration.seperator'", "'codecs[0].configuration.endianness'",
                   "'chunk_grid.extra'", "'a/zarr.json'")) {
    expect_match(conditionMessage(w), member, fixed = TRUE)
  }
  # ignored: the "/" separator and little endian stay in force
  expect_identical(a[], 1:4)
  # once per document: opening it again says nothing
  expect_no_warning(expect_identical(open_zarr(x$path)[["/a"]][], 1:4))
})

test_that("an unknown member in a v2 .zarray or its compressor warns naming it", {
  x <- strict_store(2L)
  strict_edit(x$doc, function(m) {
    m$compressor$nthreads <- 4L
    m$my_hint <- TRUE
    m
  })
  w <- expect_warning(a <- open_zarr(x$path)[["/a"]], class = "zarr_warning_metadata")
  expect_match(conditionMessage(w), "'a/.zarray'", fixed = TRUE)
  expect_match(conditionMessage(w), "'compressor.nthreads'", fixed = TRUE)
  expect_match(conditionMessage(w), "'my_hint'", fixed = TRUE)
  expect_identical(a[], 1:4)
})

test_that("extensions that say must_understand false stay silent", {
  x <- strict_store()
  strict_edit(x$doc, function(m) {
    m$chunk_key_encoding$configuration$hint <- list(must_understand = FALSE, value = 1L)
    m$codecs[[1]]$note <- list(must_understand = FALSE)
    m$my_extension <- list(must_understand = FALSE, anything = "x")
    m
  })
  expect_no_warning(a <- open_zarr(x$path)[["/a"]])
  expect_identical(a[], 1:4)
})

test_that("an unknown member in consolidated metadata warns for that document", {
  path <- local_store_path()
  z <- create_zarr(path)
  b <- define_array("int32", 4L)
  b$chunk_shape <- 2L
  z$add_array("/", "a", b)$write(1:4)
  z$consolidate()
  root <- file.path(path, "zarr.json")
  strict_sub(root, '"separator": "/"', '"separator": "/", "sep2": "."')
  w <- expect_warning(z2 <- open_zarr(path), class = "zarr_warning_metadata")
  expect_match(conditionMessage(w), "consolidated_metadata.metadata['a'].chunk_key_encoding.configuration.sep2",
               fixed = TRUE)
  expect_identical(z2[["/a"]][], 1:4)
})
