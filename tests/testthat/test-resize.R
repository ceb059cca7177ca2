# resize(), append() and promote(): shapes change, stored chunks follow.

# An int32 array "a" holding `x`, in chunks of `chunks`.
resize_array <- function(x, chunks, z = create_zarr(), name = "a") {
  shape <- dim(x) %||% length(x)
  def <- define_array("int32", shape)
  def$chunk_shape <- chunks
  arr <- z$add_array("/", name, def)
  arr$write(x)
  arr
}

open_zarr_store <- function(store) zarr$new(store)

keys_of <- function(arr) {
  k <- arr$store$list_prefix(arr$prefix)
  sort(substring(k[!endsWith(k, "zarr.json")], nchar(arr$prefix) + 1L))
}

test_that("resize(new_shape) grows the high end: the new region reads NA, the data stays", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  expect_invisible(arr$resize(c(10, 6)))
  expect_identical(arr$shape, c(10L, 6L))
  want <- matrix(NA_integer_, 10, 6)
  want[1:6, 1:4] <- x
  expect_identical(arr[], want)
  # a store opened again sees the new shape
  expect_identical(open_zarr_store(arr$store)[["/a"]][], want)
})

test_that("resize() shrinking the high end erases the chunks outside the new shape", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  arr$resize(c(4, 4))
  expect_identical(arr[], x[1:4, ])
  expect_identical(keys_of(arr), c("c/0/0", "c/0/1", "c/1/0", "c/1/1"))
})

test_that("with the default separator, resize() and promote() move keys of the form c.1.0 (R-CF's)", {
  withr::local_options(zarr.chunk_separator = NULL)
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  expect_identical(arr$chunk_separator, ".")
  arr$resize(c(4, 4))
  expect_identical(keys_of(arr), c("c.0.0", "c.0.1", "c.1.0", "c.1.1"))
  arr$resize(low = c(2, 0))
  expect_identical(keys_of(arr), c("c.1.0", "c.1.1", "c.2.0", "c.2.1"))
  want <- matrix(NA_integer_, 6, 4)
  want[3:6, ] <- x[1:4, ]
  expect_identical(arr[], want)
  arr$promote(1)
  expect_identical(keys_of(arr), c("c.0.1.0", "c.0.1.1", "c.0.2.0", "c.0.2.1"))
  expect_identical(arr[1, , ], want)
})

test_that("values cut off by a shrink that splits a chunk read NA after growing again", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(4, 3))
  arr$resize(c(5, 2))
  expect_identical(arr[], x[1:5, 1:2])
  arr$resize(c(6, 4))
  want <- matrix(NA_integer_, 6, 4)
  want[1:5, 1:2] <- x[1:5, 1:2]
  expect_identical(arr[], want)
})

test_that("resize(high = ) and resize(low = ) take R-CF's element counts", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  arr$resize(high = c(4, 2))
  expect_identical(arr$shape, c(10L, 6L))
  arr$resize(high = c(-4, -2))
  expect_identical(arr[], x)
  # low moves by whole chunks: 2 rows is one chunk; indices shift by it
  arr$resize(low = c(2, 0))
  want <- matrix(NA_integer_, 8, 4)
  want[3:8, ] <- x
  expect_identical(arr[], want)
  expect_false("c/0/0" %in% keys_of(arr))
  arr$resize(low = c(-4, 0))
  expect_identical(arr[], x[3:6, ])
})

test_that("resize(low = ) rounds outward to whole chunks, as R-CF's zarr", {
  arr <- resize_array(1:6, 2)
  arr$resize(low = 3)
  expect_identical(arr[], c(rep(NA_integer_, 4), 1:6))
  arr$resize(low = -3)
  expect_identical(arr[], c(NA, NA, 1:6))
})

test_that("resize() with two unnamed arguments reads them as R-CF's (low, high)", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  arr$resize(c(2, 0), c(0, -2))
  want <- matrix(NA_integer_, 8, 2)
  want[3:8, ] <- x[, 1:2]
  expect_identical(arr[], want)
})

test_that("resize() shifting both low ends at once keeps every chunk", {
  x <- matrix(1:24, 6, 4)
  arr <- resize_array(x, c(2, 2))
  arr$resize(low = c(2, 2))
  want <- matrix(NA_integer_, 8, 6)
  want[3:8, 3:6] <- x
  expect_identical(arr[], want)
  arr$resize(low = c(-2, -2))
  expect_identical(arr[], x)
})

test_that("resize() of a sharded array erases and moves whole shards; growth may end inside one", {
  def <- define_array("int32", c(8, 8))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  z <- create_zarr()
  arr <- z$add_array("/", "s", def)
  x <- matrix(1:64, 8)
  arr$write(x)
  arr$resize(c(4, 8))
  expect_identical(keys_of(arr), c("c/0/0", "c/0/1"))
  arr$resize(c(6, 8))
  want <- matrix(NA_integer_, 6, 8)
  want[1:4, ] <- x[1:4, ]
  expect_identical(arr[], want)
  arr$resize(low = c(4, 0))
  want2 <- matrix(NA_integer_, 10, 8)
  want2[5:10, ] <- want
  expect_identical(arr[], want2)
  expect_identical(keys_of(arr), c("c/1/0", "c/1/1"))
})

test_that("resize() refuses to cut into a shard, as R-CF's zarr, and leaves the array as it was", {
  def <- define_array("int32", c(8, 8))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "s", def)
  x <- matrix(1:64, 8)
  arr$write(x)
  expect_error(arr$resize(high = c(0, -2)), class = "zarr_error_unsupported",
               regexp = "whole number of shards (4 along dimension 2) is not supported", fixed = TRUE)
  expect_error(arr$resize(c(6, 4)), class = "zarr_error_unsupported", regexp = "'/s'")
  expect_identical(arr$shape, c(8L, 8L))
  expect_identical(arr[], x)
})

test_that("resize(low, high) of the wrong length, or emptying a dimension, is refused in R-CF's words", {
  arr <- resize_array(matrix(1:16, 4), c(2, 2))
  expect_error(arr$resize(low = c(1, 1, 1)), class = "zarr_error_argument",
               regexp = "`low` must have one element per dimension of the array (2)", fixed = TRUE)
  expect_error(arr$resize(high = 1), class = "zarr_error_argument",
               regexp = "`high` must have one element per dimension")
  expect_error(arr$resize(high = c(-4, 0)), class = "zarr_error_argument", regexp = "non-positive extent (0 x 4)",
               fixed = TRUE)
  expect_error(arr$resize(low = c(0, -4)), class = "zarr_error_argument", regexp = "non-positive extent (4 x 0)",
               fixed = TRUE)
  expect_error(arr$resize(high = c(0.5, 0)), class = "zarr_error_argument", regexp = "`high` must be whole numbers")
  expect_identical(arr[], matrix(1:16, 4))
})

test_that("resize() refuses bad shapes, 0-d arrays and read-only stores with classed errors", {
  arr <- resize_array(matrix(1:4, 2), c(1, 1))
  expect_error(arr$resize(c(2, -1)), class = "zarr_error_argument", regexp = "new_shape")
  expect_error(arr$resize(c(2, 2, 2)), class = "zarr_error_argument", regexp = "'/a'")
  expect_error(arr$resize(high = c(-3, 0)), class = "zarr_error_argument", regexp = "negative")
  s <- create_zarr()$add_array("/", "s", define_array("int32", integer(0)))
  expect_error(s$resize(1), class = "zarr_error_unsupported", regexp = "promote")
  path <- withr::local_tempdir()
  unlink(path, recursive = TRUE)
  as_zarr(matrix(1:4, 2), location = path)
  ro <- open_zarr(path, read_only = TRUE)$root
  expect_error(ro$resize(c(3, 3)), class = "zarr_error_read_only")
  expect_identical(ro[], matrix(1:4, 2))
})

test_that("append() grows one dimension and writes the data there", {
  x <- matrix(1:12, 3, 4)
  arr <- resize_array(x, c(2, 3))
  expect_invisible(arr$append(matrix(101:106, 3, 2), along = 2))
  expect_identical(arr[], cbind(x, matrix(101:106, 3, 2)))
  arr$append(c(7L, 8L, 9L, 10L, 11L, 12L), along = 1)
  expect_identical(arr[], rbind(cbind(x, matrix(101:106, 3, 2)), 7:12))
  expect_identical(arr$shape, c(4L, 6L))
})

test_that("append() of a slice with one dimension fewer adds one step", {
  x <- array(1:24, c(2, 3, 4))
  arr <- resize_array(x, c(2, 2, 3))
  arr$append(matrix(-(1:6), 2, 3))
  want <- array(c(1:24, -(1:6)), c(2, 3, 5))
  expect_identical(arr[], want)
  v <- resize_array(1:5, 2, name = "v")
  v$append(6:9)
  expect_identical(v[], 1:9)
})

test_that("append() keeps the old shape readable until the metadata is written", {
  x <- matrix(1:12, 3, 4)
  arr <- resize_array(x, c(2, 3))
  # a write that fails in the engine leaves the array as it was
  expect_error(arr$append(matrix("a", 3, 2), along = 2), class = "zarr_error")
  expect_identical(arr$shape, c(3L, 4L))
  expect_identical(arr[], x)
  # chunks written beyond the stored shape do not show before the metadata
  meta <- arr$metadata
  arr$append(matrix(101:103, 3, 1), along = 2)
  arr$store$set_metadata(arr$path, meta)
  again <- open_zarr_store(arr$store)[["/a"]]
  expect_identical(again[], x)
})

test_that("append() refuses data whose other extents do not match", {
  arr <- resize_array(matrix(1:12, 3, 4), c(2, 3))
  expect_error(arr$append(matrix(1:8, 4, 2), along = 2), class = "zarr_error_type", regexp = "'/a'")
  expect_error(arr$append(1:3, along = 3), class = "zarr_error_argument", regexp = "along")
})

test_that("promote() inserts a dimension, renaming chunks without rewriting them", {
  x <- matrix(1:12, 3, 4)
  arr <- resize_array(x, c(2, 3))
  before <- arr$store$get("a/c/1/1")
  arr$promote(1)
  expect_identical(arr$shape, c(1L, 3L, 4L))
  expect_identical(arr[1, , ], x)
  expect_identical(arr$store$get("a/c/0/1/1"), before)
  expect_identical(keys_of(arr), c("c/0/0/0", "c/0/0/1", "c/0/1/0", "c/0/1/1"))
  arr$promote(4, length = 3)
  expect_identical(arr$shape, c(1L, 3L, 4L, 3L))
  expect_identical(arr[1, , , 1], x)
  expect_true(all(is.na(arr[1, , , 2:3])))
})

test_that("promote() turns a 0-d array into a 1-d array", {
  z <- create_zarr()
  s <- z$add_array("/", "s", define_array("float64", integer(0)))
  s$write(2.5)
  s$promote(1)
  expect_identical(s$shape, 1L)
  expect_identical(s[], 2.5)
  s$append(c(3.5, 4.5))
  expect_identical(s$read(), c(2.5, 3.5, 4.5))
})

test_that("promote() of a sharded array is refused, as R-CF's zarr, and changes nothing", {
  def <- define_array("int32", c(4, 4))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "s", def)
  arr$write(matrix(1:16, 4))
  expect_error(arr$promote(2), class = "zarr_error_unsupported",
               regexp = "array '/s': promote() is not supported for sharded arrays", fixed = TRUE)
  expect_identical(arr$shape, c(4L, 4L))
  expect_identical(arr[], matrix(1:16, 4))
})

test_that("promote(dimension) out of range names the range in R-CF's words", {
  arr <- resize_array(array(1:8, c(2, 2, 2)), c(2, 2, 2))
  expect_error(arr$promote(5), class = "zarr_error_argument",
               regexp = "`dimension` must be between 1 and 4 for an array of 3 dimensions", fixed = TRUE)
  expect_error(arr$promote(0), class = "zarr_error_argument", regexp = "`dimension` must be one whole number >= 1")
  expect_error(arr$promote(1, length = 0), class = "zarr_error_argument", regexp = "`length`")
  expect_identical(arr$shape, c(2L, 2L, 2L))
})

test_that("a 0-d array added from metadata without codecs promotes to a 1-d array that reads and writes", {
  z <- create_zarr()
  meta <- list(zarr_format = 3L, node_type = "array", shape = list(), data_type = "int32",
               fill_value = -7L, chunk_grid = list(name = "regular", configuration = list(chunk_shape = list())))
  sc <- z$add_array("/", "sc", meta)
  expect_identical(vapply(sc$metadata$codecs, function(cd) cd$name, ""), "bytes")
  sc$promote(1)
  expect_identical(sc$shape, 1L)
  expect_identical(sc$chunking$chunk_shape, 1L)
  expect_identical(sc$read(), NA_integer_)
  sc$write(42L)
  expect_identical(sc$read(), 42L)
  expect_identical(z[["/sc"]][1], 42L)
  sc$resize(high = 2)
  expect_identical(sc[], c(42L, NA, NA))
})

# ---------------------------------------------------------------- in the engine

test_that("a resize whose chunk rename fails part way is undone: the array reads as before", {
  path <- local_store_path()
  z <- create_zarr(path)
  x <- matrix(1:16, 4)
  arr <- resize_array(x, c(2, 2), z)
  # A folder where chunk c/1/0 must move to: that rename fails, after
  # c/1/1 moved to c/2/1 in the same wave.
  arr$store$set("a/c/2/0/x", as.raw(1))
  expect_error(arr$resize(low = c(2, 0)), class = "zarr_error")
  expect_identical(arr$shape, c(4L, 4L))
  expect_identical(arr[], x)
  expect_identical(keys_of(arr), c("c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/2/0/x"))
  expect_identical(open_zarr(path)[["/a"]][], x)
})

test_that("a resize whose metadata cannot be stored moves every chunk back, parked ones too", {
  failing <- R6::R6Class("failing_store", inherit = zarr_memorystore, public = list(
    fail = FALSE,
    set_metadata = function(prefix, metadata) {
      if (self$fail) zarr_abort("io", "the metadata write failed")
      super$set_metadata(prefix, metadata)
    }
  ))
  s <- failing$new()
  s$create_group("", "")
  z <- zarr$new(s)
  x <- matrix(1:24, 6)
  arr <- resize_array(x, c(2, 2), z)
  before <- lapply(keys_of(arr), function(k) s$get(paste0("a/", k)))
  s$fail <- TRUE
  for (low in list(c(2, 0), c(-2, -2))) {
    expect_error(arr$resize(low = low), class = "zarr_error_io", regexp = "metadata write failed")
    expect_identical(arr$shape, c(6L, 4L))
    expect_identical(arr[], x)
    expect_identical(lapply(keys_of(arr), function(k) s$get(paste0("a/", k))), before)
  }
  expect_error(arr$promote(1), class = "zarr_error_io")
  expect_identical(arr[], x)
  expect_identical(keys_of(arr), c("c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/2/0", "c/2/1"))
})

test_that("a promote() whose chunk moves fail part way is undone", {
  path <- local_store_path()
  z <- create_zarr(path)
  x <- matrix(1:16, 4)
  arr <- resize_array(x, c(2, 2), z)
  # A file where the parked chunks of row 1 need a folder.
  arr$store$set("a/__promote/c/1", as.raw(1))
  expect_error(arr$promote(1), class = "zarr_error")
  expect_identical(arr$shape, c(4L, 4L))
  expect_identical(arr[], x)
  expect_identical(keys_of(arr), c("__promote/c/1", "c/0/0", "c/0/1", "c/1/0", "c/1/1"))
})

test_that("growth rewrites the cut-off part of string edge chunks with the fill value", {
  z <- create_zarr()
  def <- define_array("string", 6)
  def$chunk_shape <- 4
  arr <- z$add_array("/", "s", def)
  arr$write(letters[1:6])
  arr$resize(5)
  arr$resize(8)
  expect_identical(arr[], c(letters[1:5], NA, NA, NA))
})

test_that("growth inside a shard leaves its stored bytes alone; a low-end move renames whole shards", {
  def <- define_array("int32", c(6, 8))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "s", def)
  x <- matrix(1:48, 6)
  arr$write(x)
  shard <- arr$store$get("s/c/1/0")
  arr$resize(c(10, 8))
  expect_identical(arr$store$get("s/c/1/0"), shard)
  want <- matrix(NA_integer_, 10, 8)
  want[1:6, ] <- x
  expect_identical(arr[], want)
  arr$resize(low = c(0, 4))
  expect_identical(arr$store$get("s/c/1/1"), shard)
  expect_identical(arr[, 5:12], want)
  expect_identical(keys_of(arr), c("c/0/1", "c/0/2", "c/1/1", "c/1/2"))
})
