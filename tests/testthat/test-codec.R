test_that("bytes -> bytes codecs round-trip raw vectors through the engine", {
  x <- as.raw(rep(0:255, 20))
  codecs <- list(
    zarr_codec_gzip$new(list(level = 9)),
    zarr_codec_zstd$new(list(level = 3, checksum = TRUE)),
    zarr_codec_blosc$new("float64", list(cname = "lz4", shuffle = "bitshuffle")),
    zarr_codec_crc32c$new()
  )
  for (c in codecs) {
    expect_identical(c$decode(c$encode(x)), x, info = c$name)
    expect_identical(c$copy()$configuration, c$configuration, info = c$name)
    expect_identical(c$mode, "bytes -> bytes")
  }
  expect_identical(zarr_codec_crc32c$new()$encode(charToRaw("123456789"))[10:13], as.raw(c(0x83, 0x92, 0x06, 0xe3)))
})

test_that("codec bindings validate what they are set to", {
  b <- zarr_codec_blosc$new(zarr_data_type$new("int16"))
  expect_identical(b$typesize, 2L)
  expect_identical(b$shuffle, "shuffle")
  b$cname <- "zlib"
  b$clevel <- 9
  expect_identical(b$configuration$cname, "zlib")
  expect_error(b$cname <- "snappy", class = "zarr_error_argument")
  expect_error(b$clevel <- 10, class = "zarr_error_argument")
  g <- zarr_codec_gzip$new()
  g$level <- 1
  expect_identical(g$level, 1L)
  expect_error(g$level <- 11, class = "zarr_error_argument")
  expect_error(zarr_codec$new("x", NULL)$copy(), class = "zarr_error_unsupported")
})

test_that("a crc32c mismatch is an error by default and warns when not strict", {
  c <- zarr_codec_crc32c$new()
  x <- c$encode(as.raw(1:10))
  x[1] <- as.raw(99)
  withr::local_options(zarr.strict_checksums = NULL)
  expect_error(c$decode(x), class = "zarr_error_checksum")
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_warning(out <- c$decode(x), class = "zarr_warning")
  expect_identical(out, c(as.raw(99), as.raw(2:10)))
})

test_that("transpose permutes R arrays and back", {
  t <- zarr_codec_transpose$new(3, list(order = c(1, 2, 0)))
  x <- array(1:24, 2:4)
  expect_identical(dim(t$encode(x)), c(3L, 4L, 2L))
  expect_identical(t$decode(t$encode(x)), x)
  expect_error(t$order <- c(0, 0, 1), class = "zarr_error_argument")
})

test_that("bytes encodes in C order with NA as the fill value", {
  b <- zarr_codec_bytes$new(zarr_data_type$new("int16", -1), c(2, 3))
  m <- matrix(c(1L, NA, 3L, 4L, 5L, 6L), 2, 3)
  r <- b$encode(m)
  expect_identical(readBin(r, "integer", size = 2, n = 6, endian = "little"), c(1L, 3L, 5L, -1L, 4L, 6L))
  expect_identical(b$decode(r), m)
  b$endian <- "big"
  expect_identical(readBin(b$encode(m), "integer", size = 2, n = 6, endian = "big"), c(1L, 3L, 5L, -1L, 4L, 6L))
})

test_that("arrays report their codec chain as codec objects", {
  arr <- as_zarr(array(1:240, c(2, 30, 4)))[["/"]]
  expect_identical(vapply(arr$codecs, function(c) class(c)[1], ""),
                   c("zarr_codec_transpose", "zarr_codec_bytes", "zarr_codec_blosc"))
  # as_zarr() leaves an array of at most zarr_options("min_compress") elements uncompressed
  small <- as_zarr(array(1:24, 2:4))[["/"]]
  expect_identical(vapply(small$codecs, function(c) class(c)[1], ""), c("zarr_codec_transpose", "zarr_codec_bytes"))
})
