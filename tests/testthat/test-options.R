# zarr_options(): the package's options in one place.

test_that("zarr_options() lists every option with its value", {
  withr::local_options(zarr.num_threads = 2L, zarr.strict_checksums = NULL, zarr.progress = NULL, zarr.cf = NULL,
                       zarr.chunk_separator = NULL)
  opts <- zarr_options()
  expect_identical(names(opts), c("threads", "strict_checksums", "min_compress", "chunk_length", "progress", "cf",
                                  "chunk_separator", "max_retries", "retry_timeout", "connect_timeout",
                                  "request_timeout", "max_concurrency"))
  expect_identical(opts$chunk_separator, ".")
  expect_identical(opts$threads, 2L)
  # What reads do when the option is unset: a mismatch is an error.
  expect_true(opts$strict_checksums)
  expect_true(zarr:::zarr_strict_checksums())
  expect_identical(opts$min_compress, 100L)
  expect_identical(opts$progress, interactive())
  expect_true(opts$cf)
})

test_that("zarr_options(key, value) sets the R option the package reads and returns the old value", {
  withr::local_options(zarr.num_threads = NULL, zarr.strict_checksums = NULL)
  old <- zarr_options("threads", 1)
  expect_null(old)
  expect_identical(getOption("zarr.num_threads"), 1L)
  expect_identical(zarr_num_threads(), 1L)
  zarr_options("strict_checksums", TRUE)
  expect_true(getOption("zarr.strict_checksums"))
})

test_that("min_compress decides which arrays as_zarr() leaves uncompressed", {
  withr::local_options(zarr.min_compress = 10L)
  codecs <- function(x) vapply(as_zarr(x)$root$codecs, function(c) c$name, "")
  expect_identical(codecs(1:10), "bytes")
  expect_identical(codecs(1:11), c("bytes", "blosc"))
})

test_that("chunk_length sets the longest default chunk", {
  withr::local_options(zarr.chunk_length = 8L)
  expect_identical(define_array("int32", c(20, 5))$chunk_shape$chunk_shape, c(8L, 5L))
})

test_that("zarr_options() refuses unknown options and bad values with classed errors", {
  expect_error(zarr_options("speed"), class = "zarr_error_argument", regexp = "speed")
  expect_error(zarr_options("threads", 0), class = "zarr_error_argument", regexp = "threads")
  expect_error(zarr_options("cf", "yes"), class = "zarr_error_argument", regexp = "cf")
})

test_that("zarr_options() sets options given by name and returns the old values", {
  withr::local_options(zarr.progress = TRUE, zarr.min_compress = 100L)
  old <- zarr_options(progress = FALSE, min_compress = 5)
  expect_identical(old, list(progress = TRUE, min_compress = 100L))
  expect_false(zarr_options("progress"))
  expect_identical(zarr_options("min_compress"), 5L)
  expect_error(zarr_options("progress", progress = FALSE), class = "zarr_error_argument")
  expect_error(zarr_options(FALSE, TRUE, TRUE), class = "zarr_error_argument")
  expect_error(zarr_options(nope = 1), class = "zarr_error_argument", regexp = "unknown option 'nope'")
})
