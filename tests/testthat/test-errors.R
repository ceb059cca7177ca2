# Every failure is a classed `zarr_error_*` condition (or a `zarr_warning`)
# whose message names the array, chunk key or path involved; never a crash.

# A local store with one int32 array "/a" of shape 10 x 4 in one chunk,
# holding 1:40. Returns the path, the zarr object and the array.
local_int_array <- function(def = define_array("int32", c(10, 4)), env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path)
  arr <- z$add_array("/", "a", def)
  arr$write(matrix(1:40, 10, 4))
  list(path = path, z = z, arr = arr, chunk = file.path(path, "a", "c", "0", "0"))
}

read_raw_file <- function(f) readBin(f, "raw", file.size(f))

edit_json <- function(file, fun) {
  meta <- jsonlite::fromJSON(file, simplifyVector = FALSE)
  writeLines(as.character(jsonlite::toJSON(fun(meta), auto_unbox = TRUE, null = "null", digits = NA)), file)
}

test_that("zarr_abort() signals a condition of class zarr_error_<kind> and zarr_error", {
  err <- tryCatch(zarr:::zarr_abort("selection", "array '/x': bad"), error = function(e) e)
  expect_s3_class(err, c("zarr_error_selection", "zarr_error", "error", "condition"), exact = TRUE)
  expect_identical(conditionMessage(err), "array '/x': bad")
  w <- tryCatch(zarr:::zarr_warn("careful"), warning = function(w) w)
  expect_s3_class(w, c("zarr_warning", "warning", "condition"), exact = TRUE)
})

test_that("reading a truncated chunk is zarr_error_corrupt_chunk naming the chunk key", {
  x <- local_int_array()
  b <- read_raw_file(x$chunk)
  writeBin(b[seq_len(length(b) %/% 2)], x$chunk)
  expect_error(x$arr$read(), class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
  expect_error(x$arr$read(), regexp = "/a", fixed = TRUE)
  # a fresh handle on the same store fails the same way
  z2 <- open_zarr(x$path)
  expect_error(z2[["/a"]][1, 1], class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
})

test_that("reading a chunk truncated to nothing or to one byte is zarr_error_corrupt_chunk", {
  for (n in c(0L, 1L)) {
    x <- local_int_array()
    writeBin(read_raw_file(x$chunk)[seq_len(n)], x$chunk)
    expect_error(x$arr$read(), class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
  }
})

test_that("a truncated uncompressed chunk is zarr_error_corrupt_chunk, not a short read", {
  def <- define_array("int32", c(10, 4))
  def$remove_codec("blosc")
  x <- local_int_array(def)
  b <- read_raw_file(x$chunk)
  expect_length(b, 160L)
  writeBin(b[1:157], x$chunk)
  expect_error(x$arr$read(), class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
})

test_that("an uncompressed float64 chunk one element or one byte off its length is zarr_error_corrupt_chunk", {
  # Chunks of 32 x 2, whose 256-byte columns are read straight into the
  # result. Every wrong length of the chunk file is an error naming it;
  # the other chunk still reads.
  def <- define_array("float64", c(64, 2))
  def$chunk_shape <- c(32, 2)
  def$remove_codec("blosc")
  path <- local_store_path()
  arr <- create_zarr(path)$add_array("/", "a", def)
  m <- matrix(as.numeric(1:128), 64, 2)
  arr$write(m)
  chunk <- file.path(path, "a", "c", "1", "0")
  b <- read_raw_file(chunk)
  expect_length(b, 512L)
  for (bytes in list(b[1:511], b[1:504], c(b, as.raw(0)), c(b, b[1:8]))) {
    writeBin(bytes, chunk)
    expect_error(arr$read(), class = "zarr_error_corrupt_chunk", regexp = "a/c/1/0", fixed = TRUE)
    expect_identical(arr[1:32, ], m[1:32, ])
  }
  writeBin(b, chunk)
  expect_identical(arr[], m)
})

test_that("reading a chunk of garbage bytes is zarr_error_corrupt_chunk naming the chunk key", {
  x <- local_int_array()
  writeBin(as.raw(c(0x00, 0x13, 0x57, 0xa1, 0xff, 0x42, 0x99, 0x10, rep(0xee, 40))), x$chunk)
  expect_error(x$arr$read(), class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
  # a partial write needs the old chunk, so it fails the same way
  expect_error(x$arr[1, 1] <- 0L, class = "zarr_error_corrupt_chunk", regexp = "a/c/0/0", fixed = TRUE)
})

test_that("invalid JSON in a node's zarr.json is zarr_error_metadata naming the key", {
  x <- local_int_array()
  writeLines("{not json", file.path(x$path, "a", "zarr.json"))
  z2 <- open_zarr(x$path)
  expect_error(z2[["/a"]], class = "zarr_error_metadata", regexp = "a/zarr.json", fixed = TRUE)
  # listing skips it (one bad node never takes its store down)
  expect_warning(arrays <- z2$arrays, class = "zarr_warning", regexp = "a/zarr.json", fixed = TRUE)
  expect_identical(arrays, character(0))
})

test_that("invalid JSON in the root zarr.json makes open_zarr() fail with zarr_error_metadata", {
  path <- local_store_path()
  create_zarr(path)
  writeLines("[1,", file.path(path, "zarr.json"))
  expect_error(open_zarr(path), class = "zarr_error_metadata", regexp = "zarr.json", fixed = TRUE)
})

test_that("a zarr.json without 'shape' is zarr_error_metadata naming the member and the key", {
  x <- local_int_array()
  edit_json(file.path(x$path, "a", "zarr.json"), function(m) {
    m$shape <- NULL
    m
  })
  z2 <- open_zarr(x$path)
  expect_error(z2[["/a"]], class = "zarr_error_metadata", regexp = "shape")
  expect_error(z2[["/a"]], class = "zarr_error_metadata", regexp = "a/zarr.json", fixed = TRUE)
})

test_that("a root array whose zarr.json lacks 'shape' makes open_zarr() fail with zarr_error_metadata", {
  path <- local_store_path()
  as_zarr(1:10, location = path)
  edit_json(file.path(path, "zarr.json"), function(m) {
    m$shape <- NULL
    m
  })
  expect_error(open_zarr(path), class = "zarr_error_metadata", regexp = "shape")
})

test_that("a zarr.json whose node_type is unknown is zarr_error_metadata", {
  x <- local_int_array()
  edit_json(file.path(x$path, "a", "zarr.json"), function(m) {
    m$node_type <- "table"
    m
  })
  expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", regexp = "a/zarr.json", fixed = TRUE)
  expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", regexp = "table")
})

test_that("an unknown codec in zarr.json is zarr_error_unsupported naming the codec and the array", {
  x <- local_int_array()
  edit_json(file.path(x$path, "a", "zarr.json"), function(m) {
    m$codecs <- c(m$codecs, list(list(name = "lzma")))
    m
  })
  z2 <- open_zarr(x$path)
  expect_error(z2[["/a"]]$read(), class = "zarr_error_unsupported", regexp = "lzma")
  expect_error(z2[["/a"]]$read(), class = "zarr_error_unsupported", regexp = "/a", fixed = TRUE)
  expect_error(z2[["/a"]]$write(matrix(0L, 10, 4)), class = "zarr_error_unsupported", regexp = "lzma")
})

test_that("creating an array with an unknown codec returns NULL with a warning naming the codec", {
  z <- create_zarr()
  meta <- define_array("int32", 4)$metadata()
  meta$codecs <- c(meta$codecs, list(list(name = "lzma")))
  expect_warning(expect_null(z$add_array("/", "a", meta)), class = "zarr_warning", regexp = "lzma")
  expect_false(z$store$exists("a/zarr.json"))
  b <- define_array("int32", 4)
  expect_error(b$add_codec("lzma", NULL), class = "zarr_error_unsupported", regexp = "lzma")
})

test_that("a selection out of bounds is zarr_error_selection naming the array", {
  x <- local_int_array()
  arr <- x$arr
  expect_error(arr$read(list(1:11, NULL)), class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(arr$read(list(1:11, NULL)), regexp = "11")
  expect_error(arr[11, 1], class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(arr[1, 5], class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(arr$read(list(0, 1)), class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(arr$write(1L, list(11, 1)), class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(arr[11, 1] <- 1L, class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  # nothing was changed by the failed writes
  expect_identical(arr$read(), matrix(1:40, 10, 4))
})

test_that("a selection with the wrong number of dimensions is zarr_error_selection", {
  x <- local_int_array()
  expect_error(x$arr$read(list(1:2)), class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(x$arr[1, 1, 1], class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
  expect_error(x$arr$read(list(NA, 1)), class = "zarr_error_selection", regexp = "'/a'", fixed = TRUE)
})

test_that("writing to a store opened read-only is zarr_error_read_only and changes nothing", {
  x <- local_int_array()
  before <- read_raw_file(x$chunk)
  z2 <- open_zarr(x$path, read_only = TRUE)
  arr <- z2[["/a"]]
  expect_error(arr$write(matrix(0L, 10, 4)), class = "zarr_error_read_only", regexp = "/a", fixed = TRUE)
  expect_error(arr[1, 1] <- 0L, class = "zarr_error_read_only", regexp = "/a", fixed = TRUE)
  expect_error(z2$add_group("/", "g"), class = "zarr_error_read_only")
  expect_error(arr$set_attribute("x", 1), class = "zarr_error_read_only")
  expect_identical(read_raw_file(x$chunk), before)
  expect_false(dir.exists(file.path(x$path, "g")))
  expect_identical(arr$read(), matrix(1:40, 10, 4))
})

test_that("keys with '..' are zarr_error_invalid_key and nothing is written outside the root", {
  parent <- tempfile("zarr-parent")
  dir.create(parent)
  withr::defer(unlink(parent, recursive = TRUE))
  root <- file.path(parent, "store.zarr")
  s <- zarr_localstore$new(root)
  expect_error(s$get("../x"), class = "zarr_error_invalid_key", regexp = "../x", fixed = TRUE)
  expect_error(s$set("a/../../x", as.raw(1:3)), class = "zarr_error_invalid_key",
               regexp = "a/../../x", fixed = TRUE)
  expect_error(s$set("../x", as.raw(1:3)), class = "zarr_error_invalid_key", regexp = "../x", fixed = TRUE)
  expect_error(s$exists("../x"), class = "zarr_error_invalid_key")
  expect_error(s$erase("../store.zarr"), class = "zarr_error_invalid_key")
  expect_identical(list.files(parent, recursive = TRUE, all.files = TRUE, include.dirs = TRUE), "store.zarr")
  expect_identical(list.files(root, recursive = TRUE, all.files = TRUE), character(0))
  m <- zarr_memorystore$new()
  expect_error(m$get("../x"), class = "zarr_error_invalid_key", regexp = "../x", fixed = TRUE)
  expect_error(m$set("a/../../x", as.raw(1)), class = "zarr_error_invalid_key")
  expect_identical(m$list(), character(0))
})

test_that("absolute keys cannot escape the root of a local store", {
  parent <- tempfile("zarr-parent")
  dir.create(parent)
  withr::defer(unlink(parent, recursive = TRUE))
  s <- zarr_localstore$new(file.path(parent, "store.zarr"))
  target <- file.path(parent, "escaped")
  expect_error(s$set(target, as.raw(1)), class = "zarr_error_invalid_key")
  expect_false(file.exists(target))
})

test_that("a bad crc32c is a zarr_warning with options(zarr.strict_checksums = FALSE) and the data is still returned", {
  def <- define_array("int32", c(10, 4))
  def$add_codec("crc32c", NULL)
  x <- local_int_array(def)
  b <- read_raw_file(x$chunk)
  n <- length(b)
  b[n] <- xor(b[n], as.raw(0xff)) # damage the stored checksum only
  writeBin(b, x$chunk)
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_warning(out <- x$arr$read(), class = "zarr_warning", regexp = "a/c/0/0", fixed = TRUE)
  expect_identical(out, matrix(1:40, 10, 4))
  expect_warning(x$arr$read(), regexp = "crc32c")
})

test_that("a bad crc32c is zarr_error_checksum by default, as in zarr-python", {
  def <- define_array("int32", c(10, 4))
  def$add_codec("crc32c", NULL)
  x <- local_int_array(def)
  b <- read_raw_file(x$chunk)
  b[1] <- xor(b[1], as.raw(0x01)) # damage the payload
  writeBin(b, x$chunk)
  withr::local_options(zarr.strict_checksums = NULL)
  expect_error(x$arr$read(), class = "zarr_error_checksum", regexp = "a/c/0/0", fixed = TRUE)
  expect_error(x$arr$read(), class = "zarr_error_checksum", regexp = "/a", fixed = TRUE)
  withr::local_options(zarr.strict_checksums = TRUE)
  expect_error(x$arr$read(), class = "zarr_error_checksum", regexp = "a/c/0/0", fixed = TRUE)
})

test_that("a bad zstd content checksum is zarr_error_checksum by default and a warning on request", {
  def <- define_array("int32", c(10, 4))
  def$remove_codec("zstd")
  def$add_codec("zstd", list(level = 1L, checksum = TRUE))
  x <- local_int_array(def)
  b <- read_raw_file(x$chunk)
  n <- length(b)
  b[n] <- xor(b[n], as.raw(0xff)) # the frame's checksum is its last 4 bytes
  writeBin(b, x$chunk)
  withr::local_options(zarr.strict_checksums = NULL)
  expect_error(x$arr$read(), class = "zarr_error_checksum", regexp = "a/c/0/0", fixed = TRUE)
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_warning(out <- x$arr$read(), class = "zarr_warning")
  expect_identical(out, matrix(1:40, 10, 4))
})

test_that("a flipped data byte under crc32c without compression warns and returns the changed value", {
  def <- define_array("int32", c(10, 4))
  def$remove_codec("blosc")
  def$add_codec("crc32c", NULL)
  x <- local_int_array(def)
  b <- read_raw_file(x$chunk)
  expect_length(b, 164L)
  b[1] <- as.raw(0x63) # element [1, 1] becomes 99 (little endian, column-major)
  writeBin(b, x$chunk)
  expected <- matrix(1:40, 10, 4)
  expected[1, 1] <- 99L
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_warning(out <- x$arr$read(), class = "zarr_warning")
  expect_identical(out, expected)
})

test_that("writing a value out of range of the data type is zarr_error_type naming the array", {
  z <- create_zarr()
  arr <- z$add_array("/", "small", define_array("int8", 5))
  expect_error(arr$write(c(1, 2, 300, 4, 5)), class = "zarr_error_type", regexp = "300")
  expect_error(arr$write(c(1, 2, 300, 4, 5)), class = "zarr_error_type", regexp = "/small", fixed = TRUE)
  expect_error(arr[3] <- 300L, class = "zarr_error_type", regexp = "int8")
  expect_error(arr[3] <- -129, class = "zarr_error_type", regexp = "/small", fixed = TRUE)
  # the failed writes stored nothing
  expect_identical(z$store$list_prefix("small/"), "small/zarr.json")
})

test_that("writing just outside the range of any integer type is zarr_error_type", {
  ranges <- list(int8 = c(-128, 127), int16 = c(-32768, 32767), int32 = c(-2147483648, 2147483647),
                 uint8 = c(0, 255), uint16 = c(0, 65535), uint32 = c(0, 4294967295))
  for (t in names(ranges)) {
    z <- create_zarr()
    arr <- z$add_array("/", "r", define_array(t, 2))
    for (v in c(ranges[[t]][1] - 1, ranges[[t]][2] + 1)) {
      expect_error(arr$write(c(1, v)), class = "zarr_error_type", regexp = t, info = paste(t, v))
    }
    expect_error(arr$write(c(1, Inf)), class = "zarr_error_type", regexp = "/r", fixed = TRUE, info = t)
    expect_identical(z$store$list_prefix("r/c/"), character(0), info = t)
  }
})

test_that("writing a value too large for a float type is zarr_error_type", {
  z <- create_zarr()
  expect_error(z$add_array("/", "h", define_array("float16", 1))$write(70000), class = "zarr_error_type",
               regexp = "float16")
  expect_error(z$add_array("/", "s", define_array("float32", 1))$write(1e40), class = "zarr_error_type",
               regexp = "float32")
})

test_that("writing data of the wrong length or type is zarr_error_type naming the array", {
  z <- create_zarr()
  arr <- z$add_array("/", "m", define_array("int32", c(3, 4)))
  expect_error(arr$write(1:11), class = "zarr_error_type", regexp = "/m", fixed = TRUE)
  expect_error(arr$write(matrix(1:12, 4, 3)), class = "zarr_error_type", regexp = "/m", fixed = TRUE)
  expect_error(arr$write(letters[1:12]), class = "zarr_error_type", regexp = "/m", fixed = TRUE)
  expect_error(arr[1, ] <- 1:3, class = "zarr_error_type", regexp = "/m", fixed = TRUE)
})

test_that("writing fractional numbers into an integer array is zarr_error_type", {
  z <- create_zarr()
  arr <- z$add_array("/", "i", define_array("int32", 3))
  expect_error(arr$write(c(1, 2.5, 3)), class = "zarr_error_type", regexp = "/i", fixed = TRUE)
})

test_that("open_zarr() on a missing path is zarr_error_not_found naming it, and creates nothing", {
  path <- local_store_path()
  expect_error(open_zarr(path), class = "zarr_error_not_found", regexp = basename(path), fixed = TRUE)
  expect_false(file.exists(path))
  expect_error(open_zarr(path, read_only = TRUE), class = "zarr_error_not_found")
  expect_false(file.exists(path))
  nested <- file.path(path, "deeper", "x.zarr")
  expect_error(open_zarr(nested), class = "zarr_error_not_found")
  expect_false(file.exists(path))
})

test_that("open_zarr() on a folder without zarr.json is zarr_error_not_found", {
  path <- local_store_path()
  dir.create(path)
  expect_error(open_zarr(path), class = "zarr_error_not_found", regexp = "zarr.json", fixed = TRUE)
  expect_identical(list.files(path, all.files = TRUE, no.. = TRUE), character(0))
})

test_that("bad arguments are zarr_error_argument naming the argument", {
  expect_error(open_zarr(1), class = "zarr_error_argument", regexp = "location")
  expect_error(open_zarr(tempfile(), read_only = NA), class = "zarr_error_argument", regexp = "read_only")
  expect_error(zarr_localstore$new(c("a", "b")), class = "zarr_error_argument", regexp = "root")
  expect_error(define_array("int32", -1), class = "zarr_error_argument", regexp = "shape")
  expect_error(define_array("text", 3), class = "zarr_error_unsupported", regexp = "text")
  z <- create_zarr()
  expect_null(z$get_node("a"))
  expect_warning(expect_null(z$add_group("/", "a/b")), class = "zarr_warning", regexp = "a/b")
  expect_warning(expect_null(z$add_group("/", "..")), class = "zarr_warning", regexp = "'..'", fixed = TRUE)
})

test_that("adding to a group that does not exist returns NULL with a warning naming the path", {
  z <- create_zarr()
  expect_warning(expect_null(z$add_group("/nope", "g")), class = "zarr_warning", regexp = "/nope", fixed = TRUE)
  expect_warning(expect_null(z$add_array("/nope", "a", define_array("int32", 3))), class = "zarr_warning", regexp = "/nope", fixed = TRUE)
})

test_that("every zarr error can be caught by the parent class zarr_error", {
  z <- create_zarr()
  arr <- z$add_array("/", "a", define_array("int8", 3))
  caught <- tryCatch(arr$write(c(1, 2, 1000)), zarr_error = function(e) "caught")
  expect_identical(caught, "caught")
  caught <- tryCatch(arr$read(list(4)), zarr_error_selection = function(e) "selection")
  expect_identical(caught, "selection")
})

test_that("messages keep '%' in array names and keys verbatim", {
  path <- local_store_path()
  z <- create_zarr(path)
  arr <- z$add_array("/", "p%s%d", define_array("int32", 4))
  arr$write(1:4)
  writeBin(as.raw(1:5), file.path(path, "p%s%d", "c", "0"))
  expect_error(arr$read(), class = "zarr_error_corrupt_chunk", regexp = "'p%s%d/c/0'", fixed = TRUE)
  expect_error(arr$read(list(9)), class = "zarr_error_selection", regexp = "'/p%s%d'", fixed = TRUE)
  expect_error(z$store$get("%s/../x"), class = "zarr_error_invalid_key", regexp = "'%s/../x'", fixed = TRUE)
})

test_that("open_zarr() and create_zarr() on a file (not a folder) are classed errors naming it", {
  f <- tempfile()
  writeLines("not a store", f)
  withr::defer(unlink(f))
  expect_error(open_zarr(f), class = "zarr_error", regexp = basename(f), fixed = TRUE)
  expect_error(create_zarr(f), class = "zarr_error", regexp = basename(f), fixed = TRUE)
  expect_identical(readLines(f), "not a store")
})

test_that("an unknown method or field is a classed error naming it", {
  z <- create_zarr()
  a <- z$add_array("/", "a", define_array("int32", 3))
  expect_error(a$no_such_method(), class = "zarr_error_argument", regexp = "zarr_array.*'no_such_method'")
  expect_error(z$nope, class = "zarr_error_argument", regexp = "'nope'")
  expect_error(z$store$nope(), class = "zarr_error_argument", regexp = "'nope'")
  expect_error(z[["/"]]$nope, class = "zarr_error_argument")
})

test_that("values of the wrong type are a classed error naming the array and the types", {
  z <- create_zarr()
  a <- z$add_array("/", "a", define_array("int32", 3))
  expect_error(a[1] <- "x", class = "zarr_error_type", regexp = "array '/a'.*character.*int32")
  s <- z$add_array("/", "s", define_array("string", 3))
  expect_error(s[1] <- 1, class = "zarr_error_type", regexp = "array '/s'.*double.*string")
  expect_error(a[1] <- list(1), class = "zarr_error_type")
})
