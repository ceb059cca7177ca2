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

engine_codecs <- function() zarr:::zarr_call(zarr:::rz_codec_registry())

# The codecs the engine runs on bytes whose defaults on int32 do not show
# them working: a data type they take, a configuration, data, and what the
# data decode to (the lossy filters' own rounding).
on_bytes_cases <- function(name, x) {
  dbl <- sin(seq_len(2000) / 50) * 1000
  switch(name,
    numcodecs.quantize = list(type = "float64", config = list(digits = 2L), data = writeBin(dbl, raw()),
                              # A multiple of 2^-7, numcodecs' step for 2 digits (no ties in these data).
                              want = writeBin(round(dbl * 128) / 128, raw())),
    # float64 keeping 26 of 52 mantissa bits: within half a unit of the 26th.
    numcodecs.bitround = list(type = "float64", config = NULL, data = writeBin(dbl, raw()),
                              near = function(got) all(abs(readBin(got, "double", 2000) - dbl) <= abs(dbl) * 2^-27)),
    bitround = list(type = "float64", config = NULL, data = writeBin(dbl, raw()),
                    near = function(got) all(abs(readBin(got, "double", 2000) - dbl) <= abs(dbl) * 2^-27)),
    numcodecs.packbits = list(type = "bool", config = NULL, data = as.raw(rep(c(0, 1, 1), 667)),
                              want = as.raw(rep(c(0, 1, 1), 667))),
    # 21 of 32 bits hold these integers and their sign; the padding byte
    # says how many there are.
    packbits = list(type = "int32", config = list(last_bit = 20L, padding_encoding = "first_byte"), data = x,
                    want = x),
    numcodecs.fixedscaleoffset = list(type = "int32", config = list(offset = -7L, scale = 3L), data = x, want = x),
    numcodecs.astype = list(type = "int32", config = list(encode_dtype = "<i2"), data = x, want = x),
    # zfp compresses fields: a 40 x 50 one, lossless (reversible); the
    # registry's zfp has no header, so decoding needs the shape too (zfpy
    # compresses reversibly by default: mode 4 with tolerance -1).
    numcodecs.zfpy = list(type = "float64", config = NULL, data = writeBin(dbl, raw()),
                          want = writeBin(dbl, raw()), shape = c(40, 50)),
    zfp = list(type = "float64", config = list(mode = "reversible"), data = writeBin(dbl, raw()),
               want = writeBin(dbl, raw()), shape = c(40, 50)),
    list(type = "int32", config = NULL, data = x, want = x)
  )
}

test_that("every codec the engine runs on bytes round-trips through the R API", {
  reg <- engine_codecs()
  on_bytes <- reg$name[reg$on_bytes]
  expect_true(all(c("gzip", "zstd", "blosc", "crc32c", "numcodecs.zlib", "numcodecs.delta", "numcodecs.lzma",
                    "numcodecs.fixedscaleoffset", "numcodecs.quantize", "numcodecs.bitround",
                    "numcodecs.packbits", "numcodecs.astype") %in% on_bytes))
  expect_setequal(reg$name[reg$on_bytes & reg$mode != "bytes -> bytes"],
                  c("numcodecs.delta", "numcodecs.fixedscaleoffset", "numcodecs.quantize", "numcodecs.bitround",
                    "numcodecs.packbits", "numcodecs.astype", "numcodecs.pcodec", "numcodecs.zfpy", "zfp",
                    "bitround", "packbits"))
  x <- writeBin(as.integer(round(sin(seq_len(5000) / 50) * 1000)), raw())
  for (name in on_bytes) {
    case <- on_bytes_cases(name, x)
    codec <- zarr_codec_generic$new(name, case$config, case$type)
    expect_identical(codec$mode, unname(codec_modes()[name]), info = name)
    enc <- codec$encode(case$data, shape = case$shape)
    expect_false(identical(enc, case$data), info = name)
    if (is.null(case$near)) {
      expect_identical(codec$decode(enc, shape = case$shape), case$want, info = name)
    } else {
      expect_true(case$near(codec$decode(enc)), info = name)
      # Rounded values stay as they are.
      expect_identical(codec$encode(codec$decode(enc)), enc, info = name)
    }
    expect_identical(codec$copy()$configuration, codec$configuration, info = name)
  }
})

test_that("a standalone codec's shape is checked by the engine, in R's order", {
  codec <- zarr_codec_generic$new("zfp", list(mode = "reversible"), "float64")
  data <- writeBin(c(1, 2, 3, 40, 50, 60), raw())
  for (bad in list(-1, c(2, NA), 1.5, "3", TRUE, Inf)) {
    err <- expect_error(codec$encode(data, shape = bad), class = "zarr_error_argument")
    expect_match(conditionMessage(err), "shape must be NULL or whole numbers >= 0", fixed = TRUE)
  }
  enc <- codec$encode(data, shape = c(3L, 2L))
  expect_identical(codec$decode(enc, shape = c(3, 2)), data)
  # zfp's blocks follow the dimensions: 3 x 2 (R's order) is not 2 x 3.
  expect_false(identical(codec$encode(data, shape = c(2, 3)), enc))
})

test_that("numcodecs' filters go before bytes, and zarr-python 3's names for zarr's codecs are taken", {
  b <- define_array("float64", c(6, 4))
  b$fill_value <- 0
  b$add_codec("numcodecs.fixedscaleoffset", list(offset = 0, scale = 8, dtype = "<f8", astype = "<i2"))
  b$add_codec("numcodecs.gzip", list(level = 1L))
  expect_identical(codec_names(b$codecs), c("transpose", "numcodecs.fixedscaleoffset", "bytes", "blosc", "gzip"))
  z <- create_zarr()
  a <- z$add_array("/", "a", b)
  x <- matrix(c(1:23 / 8, -1.3), 6, 4)
  a[] <- x
  want <- x
  want[24] <- -1.25
  expect_identical(a[], want)
  expect_identical(codec_names(a$codecs), c("transpose", "numcodecs.fixedscaleoffset", "bytes", "blosc", "gzip"))
  expect_s3_class(a$codecs[[2]], "zarr_codec_generic")
  expect_identical(zarr_codec_generic$new("numcodecs.zstd")$name, "zstd")
  # A value the stored type cannot hold is refused, naming the codec and value.
  expect_error(a[1, 1] <- 1e6, "fixedscaleoffset: the value 8000000 does not fit in <i2")
  expect_identical(a[], want)
})

test_that("an array's codecs are engine codecs that decode its own chunks", {
  reg <- engine_codecs()
  b2b <- reg$name[reg$mode == "bytes -> bytes"]
  for (name in b2b) {
    b <- define_array("int32", c(6, 4))
    b$remove_codec("blosc")
    b$add_codec(name, NULL)
    z <- create_zarr()
    a <- z$add_array("/", "a", b)
    a[] <- matrix(1:24, 6, 4)
    codecs <- a$codecs
    last <- codecs[[length(codecs)]]
    expect_true(inherits(last, "zarr_codec_generic"), info = name)
    raw_chunk <- z$store$get("a/c/0/0")
    expect_identical(readBin(last$decode(raw_chunk), "integer", 24), 1:24, info = name)
  }
})

test_that("every other codec of the engine round-trips through an array", {
  reg <- engine_codecs()
  others <- reg$name[!reg$on_bytes]
  # A codec added to the engine without a case here fails this test.
  expect_setequal(others, c("transpose", "bytes", "vlen-utf8", "numpy.fixed_string", "sharding_indexed",
                            "scale_offset", "cast_value", "numcodecs.categorize"))
  z <- create_zarr()
  num <- define_array("float64", c(6, 4))
  a <- z$add_array("/", "num", num)
  a[] <- matrix(as.numeric(1:24), 6, 4)
  expect_identical(codec_names(a$codecs), c("transpose", "bytes", "blosc"))
  expect_identical(a[], matrix(as.numeric(1:24), 6, 4))
  s <- define_array("string", 4)
  a <- z$add_array("/", "s", s)
  a[] <- c("a", "bb", "", "dddd")
  expect_true("vlen-utf8" %in% codec_names(a$codecs))
  expect_identical(a[], c("a", "bb", "", "dddd"))
  fs <- define_array("string", 4)
  fs$format <- 2
  fs$add_codec("numpy.fixed_string", list(dtype = "<U4"))
  a <- z$add_array("/", "fs", fs)
  a[] <- c("a", "bb", "ccc", "dddd")
  expect_true("numpy.fixed_string" %in% codec_names(a$codecs))
  expect_identical(a[], c("a", "bb", "ccc", "dddd"))
  cs <- define_array("string", 5)
  cs$fill_value <- ""
  cs$add_codec("numcodecs.categorize", list(labels = list("x", "yy")))
  a <- z$add_array("/", "cs", cs)
  a[] <- c("yy", "x", "", "x", "yy")
  expect_identical(codec_names(a$codecs), c("numcodecs.categorize", "zstd"))
  # "" is the fill value, text in a v3 string array
  expect_identical(a[], c("yy", "x", "", "x", "yy"))
  expect_error(a[1] <- "z", "categorize: \"z\" is not one of the 2 labels")
  sh <- define_array("int32", c(8, 8))
  sh$add_codec("sharding_indexed", list(chunk_shape = c(4L, 4L)))
  a <- z$add_array("/", "sh", sh)
  a[] <- matrix(1:64, 8, 8)
  expect_identical(codec_names(a$codecs), "sharding_indexed")
  expect_identical(a[], matrix(1:64, 8, 8))
  # test-scale_offset.R checks these two against zarr-python.
  so <- define_array("float64", c(6, 4))
  so$fill_value <- 0
  so$add_codec("scale_offset", list(offset = 1, scale = 4))
  so$add_codec("cast_value", list(data_type = "int16"))
  a <- z$add_array("/", "so", so)
  a[] <- matrix(1:24 / 4, 6, 4)
  expect_identical(codec_names(a$codecs), c("transpose", "scale_offset", "cast_value", "bytes", "blosc"))
  expect_identical(a[], matrix(1:24 / 4, 6, 4))
})

test_that("R's codec classes hold the engine's defaults", {
  defaults <- function(name, dtype) {
    jsonlite::fromJSON(zarr:::zarr_call(zarr:::rz_codec_defaults(name, dtype, 1L)), simplifyVector = FALSE)
  }
  expect_identical(zarr_codec_gzip$new()$configuration, defaults("gzip", "uint8"))
  expect_identical(zarr_codec_gzip$new()$level, 6L)
  expect_identical(zarr_codec_zstd$new()$configuration, defaults("zstd", "uint8"))
  expect_identical(zarr_codec_crc32c$new()$configuration, structure(list(), names = character()))
  for (t in c("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64", "complex128", "string")) {
    expect_identical(zarr_codec_blosc$new(t)$configuration, defaults("blosc", t), info = t)
  }
  for (name in engine_codecs()$name[engine_codecs()$mode == "bytes -> bytes"]) {
    expect_identical(zarr_codec_generic$new(name, NULL, "float64")$configuration, defaults(name, "float64"),
                     info = name)
  }
})

test_that("codec members are checked by the engine, whose message names the codec and the member", {
  expect_error(zarr_codec_gzip$new(list(level = 10)), "codec 'gzip': level must be an integer from 0 to 9",
               class = "zarr_error_argument")
  expect_error(zarr_codec_zstd$new(list(level = 3, checksum = "yes")), "checksum", class = "zarr_error_argument")
  expect_error(zarr_codec_generic$new("numcodecs.bz2", list(level = 0)), "from 1 to 9", class = "zarr_error_argument")
  expect_error(zarr_codec_generic$new("zfp-not-here"), "unknown codec 'zfp-not-here'",
               class = "zarr_error_unsupported")
  expect_error(zarr_codec_generic$new("sharding_indexed"), "array -> bytes", class = "zarr_error_argument")
  g <- zarr_codec_generic$new("numcodecs.zlib", list(level = 3))
  g$set("level", 9)
  expect_identical(g$configuration$level, 9L)
  expect_error(g$set("level", 12), "level", class = "zarr_error_argument")
  expect_identical(g$configuration$level, 9L)
})
