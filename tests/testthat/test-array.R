# Reading and writing arrays through the engine: every data type, shapes
# with edge chunks, partial writes, fill value chunks, NA semantics.

all_types <- c("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128")

bit64_types <- c("int64", "uint32", "uint64")

# n values of type `type` with NA at every 5th position, as written, and
# the values the array should read back.
type_data <- function(type, n) {
  k <- seq_len(n)
  na_at <- k %% 5L == 3L
  x <- switch(type,
    bool = k %% 3L == 0L,
    int8 = as.integer((k * 37L) %% 255L - 127L),
    int16 = as.integer((k * 1237L) %% 65535L - 32767L),
    int32 = as.integer(k * 104729L - 2000000000L),
    uint8 = as.integer((k * 37L) %% 255L),
    uint16 = as.integer((k * 1237L) %% 65535L),
    int64 = bit64::as.integer64(k) * bit64::as.integer64(1000000007) - bit64::as.integer64("4611686018427387904"),
    uint32 = bit64::as.integer64(k) * bit64::as.integer64(40000001),
    uint64 = bit64::as.integer64(k) * bit64::as.integer64("100000000000007"),
    float16 = (k - 20) / 4,
    float32 = (k - 1000) / 8,
    float64 = (k - 1000) / 7,
    complex64 = complex(real = k / 4, imaginary = -k / 8),
    complex128 = complex(real = k / 3, imaginary = -k / 7)
  )
  x[na_at] <- NA
  expected <- x
  if (type == "bool") expected[na_at] <- FALSE
  list(write = x, read = expected)
}

new_array <- function(z, type, shape, chunks = NULL, name = "a", portable = FALSE) {
  def <- define_array(type, shape)
  if (!is.null(chunks)) def$chunk_shape <- chunks
  if (portable) def$portable <- TRUE
  z$add_array("/", name, def)
}

chunk_keys <- function(arr) {
  keys <- arr$store$list_prefix(arr$prefix)
  sort(keys[!endsWith(keys, "zarr.json")])
}

for (type in all_types) {
  test_that(sprintf("a %s array round trips a 2-d matrix with NA and edge chunks", type), {
    if (type %in% bit64_types) skip_if_not_installed("bit64")
    z <- create_zarr()
    arr <- new_array(z, type, c(7, 5), c(3, 2))
    d <- type_data(type, 35)
    x <- d$write
    dim(x) <- c(7, 5)
    arr$write(x)
    expected <- d$read
    dim(expected) <- c(7, 5)
    expect_identical(arr$read(), expected)
    expect_identical(arr[], expected)
    if (type != "bool") expect_identical(length(chunk_keys(arr)), 9L)
  })
}

for (type in all_types) {
  test_that(sprintf("a %s array round trips through a local store and reopening", type), {
    if (type %in% bit64_types) skip_if_not_installed("bit64")
    path <- local_store_path()
    z <- create_zarr(path)
    arr <- new_array(z, type, 23, 10)
    d <- type_data(type, 23)
    arr$write(d$write)
    expect_identical(open_zarr(path)[["/a"]]$read(), d$read)
  })
}

test_that("NA is written as the fill value and read back as NA, for a non-default fill value", {
  z <- create_zarr()
  def <- define_array("int16", 6)
  def$fill_value <- -9999
  arr <- z$add_array("/", "a", def)
  arr$write(c(1L, NA, 3L, -9999L, 5L, NA))
  expect_identical(arr$read(), c(1L, NA, 3L, NA, 5L, NA))
  # the stored bytes hold the fill value where NA was written
  def2 <- define_array("int16", 6)
  def2$fill_value <- -9999
  def2$remove_codec("blosc")
  raw_arr <- z$add_array("/", "b", def2)
  raw_arr$write(c(1L, NA, 3L, 4L, 5L, 6L))
  stored <- readBin(z$store$get("b/c/0"), "integer", n = 6, size = 2, endian = "little")
  expect_identical(stored, c(1L, -9999L, 3L, 4L, 5L, 6L))
})

test_that("with a NaN fill every NaN reads as NA; with a numeric fill NaN stays NaN", {
  z <- create_zarr()
  a <- new_array(z, "float64", 4, name = "nanfill")
  a$write(c(1, NaN, NA, 2))
  expect_identical(a$read(), c(1, NA, NA, 2))
  def <- define_array("float64", 4)
  def$fill_value <- 0
  b <- z$add_array("/", "zerofill", def)
  b$write(c(1, NaN, NA, 0))
  out <- b$read()
  expect_true(is.nan(out[2]))
  expect_identical(out[c(1, 3, 4)], c(1, NA, NA))
})

test_that("a bool array reads FALSE where NA was written", {
  z <- create_zarr()
  arr <- new_array(z, "bool", 4)
  arr$write(c(TRUE, NA, FALSE, TRUE))
  expect_identical(arr$read(), c(TRUE, FALSE, FALSE, TRUE))
})

test_that("a 0-d array stores one value under the key 'c'", {
  for (type in c("int32", "float64", "bool", "complex128")) {
    z <- create_zarr()
    arr <- new_array(z, type, integer(0))
    expect_identical(arr$shape, integer(0))
    expect_null(dim(arr))
    val <- switch(type, int32 = 42L, float64 = 3.5, bool = TRUE, complex128 = 1 - 1i)
    arr$write(val)
    expect_identical(arr$read(), val, info = type)
    expect_identical(chunk_keys(arr), "a/c", info = type)
  }
})

test_that("a 0-d array reads NA before anything is written", {
  z <- create_zarr()
  arr <- new_array(z, "float64", integer(0))
  expect_identical(arr$read(), NA_real_)
})

test_that("a 1-d array with an edge chunk round trips and reads as a plain vector", {
  z <- create_zarr()
  arr <- new_array(z, "int32", 250)
  x <- c(seq_len(249), NA)
  arr$write(x)
  expect_identical(arr$read(), x)
  expect_null(dim(arr$read()))
  expect_identical(chunk_keys(arr), c("a/c/0", "a/c/1", "a/c/2"))
  expect_identical(arr$read(list(95:105)), x[95:105])
})

test_that("a 4-d array with edge chunks along every dimension round trips", {
  for (portable in c(FALSE, TRUE)) {
    z <- create_zarr()
    arr <- new_array(z, "float64", c(5, 4, 3, 6), c(2, 3, 2, 4), portable = portable)
    x <- array(seq_len(360) / 3, c(5, 4, 3, 6))
    x[2, 3, 1, 5] <- NA
    arr$write(x)
    expect_identical(arr$read(), x, info = portable)
    expect_length(chunk_keys(arr), 3L * 2L * 2L * 2L)
    sel <- list(2:5, 3:4, 1:2, c(1, 6))
    expect_identical(arr$read(sel), x[2:5, 3:4, 1:2, 1:6, drop = FALSE], info = portable)
    expect_identical(arr[2:5, 3:4, 1:2, c(1, 5, 6), drop = FALSE], x[2:5, 3:4, 1:2, c(1, 5, 6), drop = FALSE],
                     info = portable)
  }
})

test_that("a 3-d array keeps R's order: arr element [i, j, k] is the R element [i, j, k]", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(3, 4, 5), c(2, 3, 2))
  x <- array(seq_len(60), c(3, 4, 5))
  arr$write(x)
  expect_identical(arr$read(list(3, 2, 5)), x[3, 2, 5, drop = FALSE])
  expect_identical(arr$read(list(NULL, 4, NULL)), x[, 4, , drop = FALSE])
})

test_that("read() takes one range per dimension, as the manual has it", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(10, 8), c(3, 3))
  x <- matrix(1:80, 10, 8)
  arr$write(x)
  expect_identical(arr$read(list(2:4, 5:8)), x[2:4, 5:8])
  expect_identical(arr$read(list(c(2, 4), c(5, 8))), x[2:4, 5:8])
  # the block from the smallest to the largest index, whatever the order
  expect_identical(arr$read(list(c(10, 1, 5), NULL)), x[1:10, ])
  expect_identical(arr$read(list(c(2, 2, 2), 1)), x[2, 1, drop = FALSE])
  # `[` keeps R's index semantics
  expect_identical(arr[c(10, 1, 5), ], x[c(10, 1, 5), ])
})

test_that("read() of list(c(1, 3), c(2, 4)) is the 3 x 3 block, not 2 x 2 values", {
  arr <- as_zarr(matrix(1:20, 4))$root
  expect_identical(arr$read(list(c(1, 3), c(2, 4))), matrix(1:20, 4)[1:3, 2:4])
})

test_that("write() takes ranges: c(first, last) writes the whole block", {
  arr <- as_zarr(matrix(1:20, 4))$root
  arr$write(matrix(0L, 3, 3), list(c(1, 3), c(2, 4)))
  x <- matrix(1:20, 4)
  x[1:3, 2:4] <- 0L
  expect_identical(arr$read(), x)
  expect_error(arr$write(matrix(0L, 2, 2), list(c(1, 3), c(2, 4))), class = "zarr_error_type")
})

test_that("write() without a selection puts data at the origin; extents of 1 are recycled", {
  arr <- as_zarr(matrix(1:20, 4))$root
  arr$write(matrix(-1L, 2, 2))
  x <- matrix(1:20, 4)
  x[1:2, 1:2] <- -1L
  expect_identical(arr$read(), x)
  arr$write(7L, list(c(3, 4), c(4, 5)))
  x[3:4, 4:5] <- 7L
  expect_identical(arr$read(), x)
  arr$write(matrix(c(8L, 9L), 2, 1), list(c(1, 2), NULL))
  x[1:2, ] <- c(8L, 9L)
  expect_identical(arr$read(), x)
})

test_that("a partial write keeps the rest of the chunk", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(6, 6), c(4, 4))
  x <- matrix(1:36, 6, 6)
  arr$write(x)
  arr$write(matrix(-1L, 2, 3), list(2:3, 3:5))
  x[2:3, 3:5] <- -1L
  expect_identical(arr$read(), x)
  # scattered indices in one chunk
  arr[c(1, 4), 1] <- c(100L, 200L)
  x[c(1, 4), 1] <- c(100L, 200L)
  expect_identical(arr$read(), x)
})

test_that("random block and scattered writes keep every element in place, in R and C order", {
  withr::local_seed(42)
  shape <- c(7, 6, 5)
  for (portable in c(FALSE, TRUE)) {
    for (type in c("int16", "float32", "complex64", "bool")) {
      z <- create_zarr()
      arr <- new_array(z, type, shape, c(3, 4, 2), portable = portable)
      x <- array(type_data(type, prod(shape))$read, shape)
      arr$write(x)
      for (k in 1:20) {
        sel <- lapply(shape, function(n) unique(sample(n, sample(n, 1))))
        if (k %% 2 == 1) sel <- lapply(sel, sort)
        v <- x[sel[[1]], sel[[2]], sel[[3]], drop = FALSE]
        v[] <- v[rev(seq_along(v))]
        arr[sel[[1]], sel[[2]], sel[[3]]] <- v
        x[sel[[1]], sel[[2]], sel[[3]]] <- v
        expect_identical(arr[sel[[1]], sel[[2]], sel[[3]], drop = FALSE], v, info = paste(type, portable, k))
      }
      expect_identical(arr$read(), x, info = paste(type, portable))
    }
  }
})

test_that("a partial write into a missing chunk fills the rest of it with NA", {
  z <- create_zarr()
  arr <- new_array(z, "float64", c(4, 4), c(4, 4))
  arr$write(7.5, list(2, 3))
  expected <- matrix(NA_real_, 4, 4)
  expected[2, 3] <- 7.5
  expect_identical(arr$read(), expected)
})

test_that("a chunk whose elements all equal the fill value is not stored", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(4, 4), c(2, 2))
  x <- matrix(NA_integer_, 4, 4)
  x[1, 1] <- 1L # only chunk (0, 0) holds data
  arr$write(x)
  expect_identical(chunk_keys(arr), "a/c/0/0")
  expect_identical(arr$read(), x)
  # a non-default fill value: writing it explicitly stores nothing either
  def <- define_array("float32", c(4, 4))
  def$chunk_shape <- c(2, 2)
  def$fill_value <- 0
  b <- z$add_array("/", "b", def)
  b$write(matrix(c(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5), 4, 4))
  expect_identical(chunk_keys(b), "b/c/1/1")
})

test_that("an existing chunk is erased when overwritten with NA", {
  for (make in list(function(e) create_zarr(), function(e) create_zarr(local_store_path(e)))) {
    z <- make(environment())
    arr <- new_array(z, "int16", c(4, 4), c(2, 2))
    arr$write(matrix(1:16, 4, 4))
    expect_length(chunk_keys(arr), 4L)
    arr$write(matrix(NA_integer_, 2, 2), list(3:4, 1:2))
    expect_identical(chunk_keys(arr), c("a/c/0/0", "a/c/0/1", "a/c/1/1"))
    arr[1:2, 1:2] <- NA
    expect_identical(chunk_keys(arr), c("a/c/0/1", "a/c/1/1"))
    expected <- matrix(1:16, 4, 4)
    expected[, 1:2] <- NA
    expect_identical(arr$read(), expected)
  }
})

test_that("a chunk made all-fill by a partial write is erased", {
  z <- create_zarr()
  arr <- new_array(z, "float64", 6, 3)
  arr$write(c(1, NA, NA, 4, 5, 6))
  expect_identical(chunk_keys(arr), c("a/c/0", "a/c/1"))
  arr$write(NA_real_, list(1))
  expect_identical(chunk_keys(arr), "a/c/1")
  expect_identical(arr$read(), c(NA, NA, NA, 4, 5, 6))
})

test_that("missing chunks read as NA", {
  for (type in setdiff(all_types, "bool")) {
    if (type %in% bit64_types && !requireNamespace("bit64", quietly = TRUE)) next
    z <- create_zarr()
    arr <- tryCatch(new_array(z, type, c(3, 4), c(2, 2)), zarr_error = function(e) NULL)
    if (is.null(arr)) {
      fail(sprintf("could not create a %s array", type))
      next
    }
    out <- arr$read()
    expect_identical(dim(out), c(3L, 4L), info = type)
    expect_true(all(is.na(out)), info = type)
    expect_identical(chunk_keys(arr), character(0), info = type)
  }
})

test_that("a missing bool chunk reads as the fill value FALSE (or TRUE)", {
  z <- create_zarr()
  arr <- new_array(z, "bool", 3)
  expect_identical(arr$read(), c(FALSE, FALSE, FALSE))
  def <- define_array("bool", 3)
  def$fill_value <- TRUE
  b <- z$add_array("/", "b", def)
  expect_identical(b$read(), c(TRUE, TRUE, TRUE))
})

test_that("missing chunks read as NA next to stored ones", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(4, 4), c(2, 2))
  arr$write(matrix(1:4, 2, 2), list(3:4, 3:4))
  expected <- matrix(NA_integer_, 4, 4)
  expected[3:4, 3:4] <- 1:4
  expect_identical(arr$read(), expected)
  # a chunk removed from the store reads as NA too
  arr$store$erase("a/c/1/1")
  expect_identical(arr$read(), matrix(NA_integer_, 4, 4))
})

test_that("portable = TRUE (C order) arrays read the same as default ones", {
  for (type in c("int8", "int32", "float32", "float64", "complex128", "bool")) {
    z <- create_zarr()
    shape <- c(5, 7, 3)
    a <- new_array(z, type, shape, c(2, 3, 2), name = "r_order")
    b <- new_array(z, type, shape, c(2, 3, 2), name = "c_order", portable = TRUE)
    expect_identical(vapply(b$codecs, function(c) c$name, ""), c("bytes", "blosc"))
    d <- type_data(type, prod(shape))
    x <- array(d$write, shape)
    a$write(x)
    b$write(x)
    expect_identical(b$read(), a$read(), info = type)
    expect_identical(b$read(), array(d$read, shape), info = type)
    sel <- list(c(5, 1), 2:6, 3)
    expect_identical(b$read(sel), a$read(sel), info = type)
  }
})

test_that("portable arrays store chunks in C order", {
  z <- create_zarr()
  def <- define_array("int32", c(2, 3))
  def$portable <- TRUE
  def$remove_codec("blosc")
  arr <- z$add_array("/", "a", def)
  arr$write(matrix(1:6, 2, 3)) # rows (1, 3, 5) and (2, 4, 6)
  stored <- readBin(z$store$get("a/c/0/0"), "integer", n = 6, size = 4, endian = "little")
  expect_identical(stored, c(1L, 3L, 5L, 2L, 4L, 6L))
  def2 <- define_array("int32", c(2, 3))
  def2$remove_codec("blosc")
  arr2 <- z$add_array("/", "b", def2)
  arr2$write(matrix(1:6, 2, 3))
  stored2 <- readBin(z$store$get("b/c/0/0"), "integer", n = 6, size = 4, endian = "little")
  expect_identical(stored2, 1:6)
})

test_that("int64 extremes round trip", {
  skip_if_not_installed("bit64")
  i64 <- bit64::as.integer64
  z <- create_zarr()
  a <- new_array(z, "int64", 5)
  x <- i64(c("-9223372036854775807", "-1", "0", "9223372036854775806", "9223372036854775807"))
  a$write(x)
  expect_identical(a$read(), x)
  a$write(i64(c(NA, 1, 2, 3, 4)))
  expect_identical(a$read(), i64(c(NA, 1, 2, 3, 4)))
})

test_that("uint64 values up to the int64 maximum round trip", {
  skip_if_not_installed("bit64")
  i64 <- bit64::as.integer64
  z <- create_zarr()
  u <- new_array(z, "uint64", 4)
  y <- i64(c("0", "1", "9223372036854775807", NA))
  u$write(y)
  expect_identical(u$read(), y)
})

# A 64-bit integer array whose zarr.json is written by hand, with the fill
# value as a JSON number as other Zarr tools write it.
hand_made_array <- function(type, fill, n = 5, chunk = 2) {
  s <- zarr_memorystore$new()
  s$create_group("", "")
  json <- sprintf(paste0(
    '{"zarr_format":3,"node_type":"array","shape":[%d],"data_type":"%s",',
    '"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[%d]}},',
    '"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},',
    '"fill_value":%s,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"attributes":{}}'),
    n, type, chunk, fill)
  s$set("a/zarr.json", charToRaw(json))
  zarr$new(s)[["/a"]]
}

test_that("int64 extremes round trip in an array made by another tool", {
  skip_if_not_installed("bit64")
  i64 <- bit64::as.integer64
  a <- hand_made_array("int64", "-9223372036854775808")
  x <- i64(c("-9223372036854775807", "-1", NA, "9223372036854775806", "9223372036854775807"))
  a$write(x)
  expect_identical(a$read(), x)
  expect_identical(a[c(5, 1)], x[c(5, 1)])
})

test_that("uint64 values above the int64 maximum read as NA with a zarr_warning", {
  skip_if_not_installed("bit64")
  u <- hand_made_array("uint64", "18446744073709551615", n = 2, chunk = 2)
  u$store$set("a/c/0", as.raw(c(rep(0xfe, 8), 5, rep(0, 7))))
  expect_warning(out <- u$read(), class = "zarr_warning", regexp = "/a", fixed = TRUE)
  expect_identical(out, bit64::as.integer64(c(NA, 5)))
})

test_that("uint32 extremes round trip as integer64", {
  skip_if_not_installed("bit64")
  i64 <- bit64::as.integer64
  z <- create_zarr()
  u32 <- new_array(z, "uint32", 4)
  w <- i64(c(0, 2147483648, 4294967294, NA))
  u32$write(w)
  expect_identical(u32$read(), w)
  # plain doubles are accepted too
  u32$write(c(0, 2147483648, 4294967294, NA))
  expect_identical(u32$read(), w)
})

test_that("writing whole doubles into an int32 array works", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(2, 3))
  arr$write(matrix(c(1, 2, -3, 2147483647, -2147483647, NA), 2, 3))
  expect_identical(arr$read(), matrix(c(1L, 2L, -3L, 2147483647L, -2147483647L, NA), 2, 3))
  arr[1, 1] <- 10
  expect_identical(arr[1, 1], 10L)
})

test_that("writing integers and logicals into float and integer arrays converts them", {
  z <- create_zarr()
  f <- new_array(z, "float64", 3, name = "f")
  f$write(1:3)
  expect_identical(f$read(), c(1, 2, 3))
  i <- new_array(z, "int8", 3, name = "i")
  i$write(c(TRUE, FALSE, NA))
  expect_identical(i$read(), c(1L, 0L, NA))
  b <- new_array(z, "bool", 3, name = "b")
  b$write(c(0L, 1L, 2L))
  expect_identical(b$read(), c(FALSE, TRUE, TRUE))
})

test_that("zarr_num_threads() follows the option, then the environment variable", {
  withr::local_envvar(`_R_CHECK_LIMIT_CORES_` = NA, ZARR_NUM_THREADS = NA, OMP_THREAD_LIMIT = NA)
  withr::local_options(zarr.num_threads = 3)
  expect_identical(zarr_num_threads(), 3L)
  withr::local_options(zarr.num_threads = NULL)
  withr::local_envvar(ZARR_NUM_THREADS = "2")
  expect_identical(zarr_num_threads(), 2L)
  withr::local_envvar(ZARR_NUM_THREADS = NA)
  n <- zarr_num_threads()
  expect_type(n, "integer")
  expect_gte(n, 1L)
  withr::local_options(zarr.num_threads = 0)
  expect_gte(zarr_num_threads(), 1L)
})

test_that("zarr_num_threads() is capped at 2 when _R_CHECK_LIMIT_CORES_ is set", {
  withr::local_envvar(`_R_CHECK_LIMIT_CORES_` = "TRUE")
  withr::local_options(zarr.num_threads = 8)
  expect_identical(zarr_num_threads(), 2L)
  withr::local_envvar(`_R_CHECK_LIMIT_CORES_` = "false")
  expect_identical(zarr_num_threads(), 8L)
})

test_that("zarr_num_threads() never exceeds OMP_THREAD_LIMIT", {
  withr::local_envvar(`_R_CHECK_LIMIT_CORES_` = NA, OMP_THREAD_LIMIT = "3")
  withr::local_options(zarr.num_threads = 8)
  expect_identical(zarr_num_threads(), 3L)
  withr::local_envvar(OMP_THREAD_LIMIT = "1")
  expect_identical(zarr_num_threads(), 1L)
  withr::local_envvar(OMP_THREAD_LIMIT = "none")
  expect_identical(zarr_num_threads(), 8L)
})

test_that("reads and writes give identical results with 1 and 2 threads", {
  x <- array(seq_len(40 * 30 * 6) / 11, c(40, 30, 6))
  x[sample(length(x), 50)] <- NA
  results <- list()
  for (n in 1:2) {
    withr::local_options(zarr.num_threads = n)
    z <- create_zarr()
    arr <- new_array(z, "float64", dim(x), c(7, 8, 4))
    arr$write(x)
    arr$write(array(-1, c(3, 3, 2)), list(5:7, 10:12, 3:4))
    results[[n]] <- list(all = arr$read(), part = arr[c(40, 1, 20), 2:29, ],
                         keys = chunk_keys(arr))
  }
  expect_identical(results[[1]], results[[2]])
  expected <- x
  expected[5:7, 10:12, 3:4] <- -1
  expect_identical(results[[1]]$all, expected)
})

test_that("parallel writes to a local store leave exactly one file per stored chunk", {
  withr::local_options(zarr.num_threads = 4)
  path <- local_store_path()
  z <- create_zarr(path)
  arr <- new_array(z, "int32", c(50, 50), c(10, 10))
  arr$write(matrix(1:2500, 50))
  arr$write(matrix(1L, 50, 50))
  arr[1:10, 1:10] <- NA
  files <- list.files(path, recursive = TRUE, all.files = TRUE)
  chunks <- setdiff(files, c("zarr.json", "a/zarr.json"))
  expect_length(chunks, 24L)
  expect_setequal(chunks, chunk_keys(arr))
  expect_false(file.exists(file.path(path, "a", "c", "0", "0")))
})

test_that("an array opened twice sees the other handle's writes", {
  path <- local_store_path()
  z <- create_zarr(path)
  arr <- new_array(z, "int32", 5)
  arr$write(1:5)
  other <- open_zarr(path)[["/a"]]
  expect_identical(other$read(), 1:5)
  other[2] <- 20L
  expect_identical(arr$read(), c(1L, 20L, 3L, 4L, 5L))
})

test_that("arrays with the gzip, blosc and crc32c codecs round trip", {
  codec_sets <- list(gzip = list("gzip"), blosc = list("blosc"), crc32c = list("zstd", "crc32c"),
                     none = list())
  for (nm in names(codec_sets)) {
    z <- create_zarr()
    def <- define_array("float32", c(9, 11))
    def$chunk_shape <- c(4, 4)
    def$remove_codec("blosc")
    for (cd in codec_sets[[nm]]) def$add_codec(cd, NULL)
    arr <- z$add_array("/", "a", def)
    x <- matrix(seq_len(99) / 4, 9, 11)
    x[3, 3] <- NA
    arr$write(x)
    expect_identical(arr$read(), x, info = nm)
  }
})

test_that("the chunk grid attached to an array reads and writes between corners", {
  z <- create_zarr()
  arr <- new_array(z, "int32", c(6, 5), c(4, 2))
  x <- matrix(1:30, 6, 5)
  arr$write(x)
  g <- arr$chunking
  expect_identical(g$chunk_grid, c(2L, 3L))
  expect_identical(g$read(c(2, 2), c(4, 3)), x[2:4, 2:3])
  g$write(matrix(0L, 2, 2), c(5, 4), c(6, 5))
  x[5:6, 4:5] <- 0L
  expect_identical(arr$read(), x)
})

test_that("an array reports its shape, chunking, separator and prefix", {
  z <- create_zarr()
  g <- z$add_group("/", "grp")
  arr <- g$add_array("a", define_array("uint8", c(300, 2)))
  expect_identical(arr$shape, c(300L, 2L))
  expect_identical(arr$chunking$chunk_shape, c(100L, 2L))
  expect_identical(arr$chunk_separator, "/")
  expect_identical(arr$path, "/grp/a")
  expect_identical(arr$prefix, "grp/a/")
  expect_identical(dim(arr), c(300L, 2L))
})

test_that("print() of an array shows its shape, type, chunks and codecs", {
  z <- create_zarr()
  arr <- new_array(z, "int16", c(30, 20), c(10, 10))
  arr$write(matrix(1:600, 30, 20))
  arr$set_attribute("units", "K")
  expect_output(print(arr), "30 x 20")
  expect_output(print(arr), "int16")
  expect_output(print(arr), "6 chunks")
  expect_output(print(arr), "transpose, bytes, blosc")
  expect_output(print(arr), "units")
  expect_output(print(new_array(z, "float64", integer(0), name = "s")), "scalar")
})

test_that("large results are right when their memory is reused from an earlier read", {
  # Results of 8 MiB and more get memory that a freed earlier result may
  # have held: every element must still be written by the new read.
  z <- create_zarr()
  n <- c(1100L, 1000L) # 8.4 MB of doubles
  full <- new_array(z, "float64", n, c(500, 500), name = "full")
  x <- matrix(as.numeric(seq_len(prod(n))), n[1], n[2])
  full$write(x)
  sparse <- new_array(z, "float64", n, c(500, 500), name = "sparse")
  sparse[1:10, 1:10] <- matrix(-1, 10, 10)
  ints <- new_array(z, "int32", c(2200, 1000), c(1000, 1000), name = "ints")
  ints[2191:2200, 991:1000] <- matrix(7L, 10, 10)
  for (k in 1:3) {
    expect_identical(full$read(), x)
    invisible(gc(FALSE))
    # Missing chunks read as the fill value (NA), not as what the block held.
    y <- sparse$read()
    expect_identical(y[1:10, 1:10], matrix(-1, 10, 10))
    expect_identical(sum(is.na(y)), n[1] * n[2] - 100L)
    rm(y)
    invisible(gc(FALSE))
    i <- ints$read()
    expect_identical(i[2191:2200, 991:1000], matrix(7L, 10, 10))
    expect_identical(sum(is.na(i)), 2200L * 1000L - 100L)
    rm(i)
    invisible(gc(FALSE))
  }
  # A result that outlives the next read keeps its own values.
  a <- full$read()
  b <- sparse$read()
  expect_identical(a, x)
  expect_identical(sum(is.na(b)), n[1] * n[2] - 100L)
})

test_that("results of 32 MiB and more, written with streaming stores, hold every value", {
  # Float64 results this large bypass the cache as they are written
  # (convert.rs, stream_copy); odd row counts put runs at odd offsets.
  z <- create_zarr()
  n <- c(2101L, 2000L) # 33.6 MB of doubles
  arr <- new_array(z, "float64", n, c(700, 512), name = "big")
  x <- matrix(as.numeric(seq_len(prod(n))) / 3, n[1], n[2])
  x[cbind(c(1, 700, 2101), c(1, 513, 2000))] <- NA
  x[, 1537:2000] <- NA # chunks left unwritten read as the fill value
  arr[, 1:1536] <- x[, 1:1536]
  expect_identical(arr$read(), x)
  expect_identical(arr[2:2101, ], x[2:2101, ])
  expect_identical(sum(is.na(arr[])), sum(is.na(x)))
})

test_that("$shape and chunk shapes are integer vectors, as the manual says", {
  arr <- as_zarr(array(1:24, c(2, 3, 4)))$root
  expect_identical(arr$shape, c(2L, 3L, 4L))
  expect_identical(arr$chunking$chunk_shape, c(2L, 3L, 4L))
  expect_identical(define_array("int8", c(300, 2))$shape, c(300L, 2L))
  expect_identical(as_zarr(1)$root$shape, 1L)
})

test_that("$shape follows the document whenever the store's handle changes it, and only then", {
  z <- as_zarr(array(1:24, c(2, 3, 4)), name = "a")
  arr <- z[["/a"]]
  expect_identical(arr$shape, c(2L, 3L, 4L))
  # A chunk written is no document: the shape stays, as does the list.
  meta <- arr$metadata
  arr[1, 1, 1] <- 5L
  expect_identical(arr$shape, c(2L, 3L, 4L))
  expect_identical(arr$metadata, meta)
  # The document written again through the store, with another shape.
  doc <- sub('("shape": \\[\\s*2,\\s*3,\\s*)4', "\\15", rawToChar(z$store$get("a/zarr.json")), perl = TRUE)
  z$store$set("a/zarr.json", charToRaw(doc))
  expect_identical(arr$shape, c(2L, 3L, 5L))
  arr$resize(c(4, 3, 5))
  expect_identical(arr$shape, c(4L, 3L, 5L))
  expect_identical(z[["/a"]]$shape, c(4L, 3L, 5L))
})

test_that("the package version sorts above every R-CF release (0.5.1 on CRAN) and its development version", {
  expect_true(utils::packageVersion("zarr") > "0.5.1")
  expect_true(utils::packageVersion("zarr") > "0.5.1.9000")
})

# A store at a temporary path holding an uncompressed n x n float64 array
# "/x" of 1, 2, ..., n^2 in 1024 x 1024 chunks: results of n = 4096 are
# 128 MiB, large enough for pages.rs. Written once per size for the tests
# of this file, which only read it; removed when they are done.
large_square_store <- local({
  paths <- list()
  function(n) {
    key <- as.character(n)
    if (is.null(paths[[key]])) {
      path <- file.path(withr::local_tempdir(.local_envir = testthat::teardown_env()), "large.zarr")
      b <- define_array("float64", c(n, n))
      b$chunk_shape <- c(1024, 1024)
      b$remove_codec("blosc")
      create_zarr(path)$add_array("/", "x", b)$write(matrix(as.numeric(seq_len(n * n)), n, n))
      paths[[key]] <<- path
    }
    paths[[key]]
  }
})

# What `Rscript -e code` prints (output and messages), run with this
# session's library paths.
rscript_output <- function(code) {
  withr::with_envvar(
    c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)),
    system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE, stderr = TRUE)
  )
}

test_that("bit64 is loaded by reads that return integer64 only (#42)", {
  # Loading it took a new process's first read of a float64 array 40-60 ms.
  skip_on_cran()
  skip_if_not_installed("bit64")
  path <- withr::local_tempfile(fileext = ".zarr")
  z <- create_zarr(path)
  z$add_array("/", "d", define_array("float64", c(3, 2)))$write(matrix(1:6 / 2, 3, 2))
  z$add_array("/", "i", define_array("int64", 4))$write(bit64::as.integer64(c(1, -2, 3, 2^40)))
  code <- sprintf('
    suppressMessages(library(zarr))
    z <- open_zarr("%s", read_only = TRUE)
    d <- z[["/d"]][]
    a <- isNamespaceLoaded("bit64")
    i <- z[["/i"]][]
    cat(a, isNamespaceLoaded("bit64"), class(d), class(i), sum(d), as.character(i), "\n")
  ', path)
  out <- rscript_output(code)
  expect_identical(tail(out, 1), "FALSE TRUE matrix array integer64 10.5 1 -2 3 1099511627776 ")
})

test_that("a loop of large reads does not grow memory by a result per read (#23)", {
  # R's collector does not count the memory of large results (pages.rs),
  # so the package collects when the results it handed out have grown
  # enough. Measured in a child process, whose resident memory is its own
  # and whose R heap has not grown from other work (here, the write).
  skip_on_cran()
  skip_if_not(file.exists("/proc/self/status") && file.exists("/proc/self/clear_refs"))
  n <- 4096L
  path <- large_square_store(n)
  code <- sprintf('
    suppressMessages(library(zarr))
    status <- function(f) {
      l <- grep(paste0("^", f, ":"), readLines("/proc/self/status"), value = TRUE)
      as.numeric(gsub("[^0-9]", "", l)) * 1024
    }
    a <- open_zarr("%s", read_only = TRUE)[["/x"]]
    x <- a[]
    invisible(gc()) # as a session may have run; then R would not collect again
    base <- status("VmRSS")
    writeLines("5", "/proc/self/clear_refs") # resets VmHWM
    for (i in 1:40) x <- a[]
    stopifnot(x[%d, %d] == %d^2, x[1, 1] == 1)
    cat((c(status("VmRSS"), status("VmHWM")) - base) / %d, "\n")
  ', path, n, n, n, 8 * n * n)
  out <- rscript_output(code)
  growth <- suppressWarnings(as.numeric(strsplit(trimws(tail(out, 1)), " +")[[1]]))
  expect_length(growth, 2)
  # Resident memory after the loop, and at its peak, in results (128 MiB).
  expect_lte(growth[1], 4, label = paste(out, collapse = "\n"))
  expect_lte(growth[2], 4, label = paste(out, collapse = "\n"))
})

test_that("a large read after a collection does not make R run another", {
  # R weighs a new vector against its own heap, which it shrinks after
  # each collection; a large result used to make it run a full collection
  # of the whole session (every other read after a `gc()`). In a child
  # process, so that the only collections are the ones of this loop.
  skip_on_cran()
  skip_if_not(.Platform$OS.type == "unix")
  n <- 4096L # 128 MiB: smaller results fit the room R keeps after a collection
  path <- large_square_store(n)
  code <- sprintf('
    suppressMessages(library(zarr))
    a <- open_zarr("%s", read_only = TRUE)[["/x"]]
    x <- a[]
    counts <- integer(10)
    ok <- logical(10)
    for (i in 1:10) {
      rm(x)
      invisible(gc())
      msgs <- utils::capture.output(
        {
          invisible(gcinfo(TRUE))
          x <- a[]
          invisible(gcinfo(FALSE))
        },
        type = "message"
      )
      counts[i] <- sum(grepl("Garbage collection", msgs))
      ok[i] <- identical(dim(x), c(%dL, %dL)) && x[%d, %d] == %d^2 && x[1, 1] == 1
    }
    cat(all(ok), counts, "\n")
  ', path, n, n, n, n, n)
  out <- rscript_output(code)
  got <- strsplit(trimws(tail(out, 1)), " +")[[1]]
  expect_identical(got[1], "TRUE", label = paste(out, collapse = "\n"))
  # Collections during each of the ten reads.
  expect_identical(as.integer(got[-1]), rep(0L, 10), label = paste(out, collapse = "\n"))
})

test_that("reads in a loop and in lapply() over slices reuse the memory of earlier results (#23)", {
  # The package's own counts (pages.rs): blocks newly mapped and reused.
  # Without reuse every read maps a block of its own. In a child process,
  # whose blocks no other test has used.
  skip_on_cran()
  skip_if_not(Sys.info()[["sysname"]] == "Linux")
  n <- 4096L
  path <- large_square_store(n)
  code <- sprintf('
    suppressMessages(library(zarr))
    a <- open_zarr("%s", read_only = TRUE)[["/x"]]
    counts <- function() {
      unlist(zarr:::rz_result_blocks())[c("mapped", "reused", "collections", "full_collections")]
    }
    b0 <- counts()
    # 40 slices of 32 MiB, each garbage as soon as it is summed
    s <- 0
    for (r in 1:10) s <- s + sum(vapply(0:3, function(k) sum(a[, k * 1024 + 1:1024]), 0))
    b1 <- counts()
    # 20 reads of 128 MiB, each kept until the next replaces it
    for (i in 1:20) x <- a[]
    b2 <- counts()
    ok <- s == 10 * sum(as.numeric(seq_len(%d * %d))) && x[%d, %d] == %d^2
    cat(ok, b1 - b0, b2 - b1, "\n")
  ', path, n, n, n, n, n)
  out <- rscript_output(code)
  got <- strsplit(trimws(tail(out, 1)), " +")[[1]]
  expect_identical(got[1], "TRUE", label = paste(out, collapse = "\n"))
  kinds <- c("mapped", "reused", "collections", "full")
  slices <- setNames(as.numeric(got[2:5]), kinds)
  loop <- setNames(as.numeric(got[6:9]), kinds)
  expect_identical(slices[["mapped"]] + slices[["reused"]], 40)
  expect_lte(slices[["mapped"]], 16)
  expect_gte(slices[["collections"]], 1)
  expect_identical(loop[["mapped"]] + loop[["reused"]], 20)
  # four blocks: the kept result and the 384 MiB allowed between collections
  expect_lte(loop[["mapped"]], 5)
  expect_gte(loop[["collections"]], 4)
  # The kept result is the only garbage a minor collection cannot free:
  # full and minor collections alternate (pages.rs).
  expect_gte(loop[["full"]], 1)
  expect_lte(loop[["full"]], loop[["collections"]] - loop[["full"]] + 1)
})
