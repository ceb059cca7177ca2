# The registry's `bitround` codec (zarr-extensions codecs/bitround): floats
# as numcodecs.bitround rounds them (test-numcodecs.R checks that one
# against numcodecs), integers from their highest set bit.

# `v` (whole numbers >= 0) rounded to `keep` significant bits, half to even:
# the rule the codec's bit steps follow, in plain arithmetic.
round_significant <- function(v, keep) {
  vapply(v, function(x) {
    bits <- if (x == 0) 0 else floor(log2(x)) + 1
    if (bits <= keep) return(x)
    unit <- 2^(bits - keep)
    q <- x / unit
    r <- floor(q)
    if (q - r > 0.5 || (q - r == 0.5 && r %% 2 == 1)) r <- r + 1
    r * unit
  }, 0)
}

test_that("bitround rounds floats as numcodecs.bitround does, and complex numbers part by part", {
  x <- c(sin(seq_len(400) / 7) * 10^(seq_len(400) %% 9 - 4), 0, 1, -2.5, Inf, -Inf)
  for (type in c("float32", "float64")) {
    size <- if (type == "float32") 4L else 8L
    data <- writeBin(x, raw(), size = size)
    for (k in c(1L, 5L, 11L)) {
      ours <- zarr_codec_generic$new("bitround", list(keepbits = k), type)$encode(data)
      theirs <- zarr_codec_generic$new("numcodecs.bitround", list(keepbits = k), type)$encode(data)
      expect_identical(ours, theirs, info = paste(type, k))
      expect_false(identical(ours, data))
    }
  }
  z <- complex(real = x[1:100], imaginary = x[101:200])
  got <- zarr_codec_generic$new("bitround", list(keepbits = 4L), "complex128")$encode(writeBin(z, raw()))
  parts <- zarr_codec_generic$new("numcodecs.bitround", list(keepbits = 4L), "float64")$encode(
    writeBin(as.vector(rbind(Re(z), Im(z))), raw()))
  expect_identical(got, parts)
})

test_that("bitround keeps keepbits bits of an integer from its highest set bit, half to even", {
  u8 <- zarr_codec_generic$new("bitround", list(keepbits = 2L), "uint8")
  v <- c(0, 1, 3, 5, 6, 7, 200, 254, 255)
  # 7 is halfway between 6 and 8: 8 (bits 10) is the even one; 255 would
  # round up past 8 bits, and stays at the largest value the bits hold.
  expect_identical(as.integer(u8$encode(as.raw(v))), c(0L, 1L, 3L, 4L, 6L, 8L, 192L, 192L, 192L))
  expect_identical(as.integer(u8$encode(as.raw(v[1:7]))), as.integer(round_significant(v[1:7], 2)))
  # Negative numbers are rounded as their two's complement bits: -1 is
  # 0xffff, whose top 4 bits stay.
  i16 <- zarr_codec_generic$new("bitround", list(keepbits = 4L), "int16")
  expect_identical(readBin(i16$encode(writeBin(c(-1L, 1000L, 1023L), raw(), size = 2)), "integer", 3, size = 2),
                   c(-4096L, 1024L, 1024L))
  expect_error(zarr_codec_generic$new("bitround", list(keepbits = 0L), "int16"), class = "zarr_error",
               regexp = "keepbits")
  expect_error(zarr_codec_generic$new("bitround", list(keepbits = 3L), "bool"), class = "zarr_error",
               regexp = "bitround")
})

test_that("an int32 array with bitround stores its values rounded and reads them back", {
  def <- define_array("int32", 1000)
  def$chunk_shape <- 300
  def$fill_value <- -1L
  def$add_codec("bitround", list(keepbits = 3L))
  root <- withr::local_tempdir()
  a <- create_zarr(root)$add_array("/", "r", def)
  x <- as.integer(abs(round(sin(seq_len(1000) / 9) * 1e6)))
  a$write(x)
  expect_identical(a[], as.integer(round_significant(x, 3)))
  doc <- jsonlite::fromJSON(file.path(root, "r", "zarr.json"), simplifyVector = FALSE)
  ours <- Filter(function(codec) identical(codec$name, "bitround"), doc$codecs)
  expect_identical(ours, list(list(name = "bitround", configuration = list(keepbits = 3L))))
  expect_identical(open_zarr(root)[["/r"]][901:1000], as.integer(round_significant(x[901:1000], 3)))
})
