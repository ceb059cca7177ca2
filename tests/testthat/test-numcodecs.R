# numcodecs' codecs both ways: zarr-python 2.18 (Zarr v2, numcodecs ids)
# and 3.4 (Zarr v3, `numcodecs.*` names) write one array per codec
# (numcodecs_arrays.py) that the package reads exactly, and read exactly
# what the package writes with the same codecs. The venvs pin both
# versions; they run only when Python tests are asked (helper-python.R).

numcodecs_script <- function() testthat::test_path("numcodecs_arrays.py")

# What numcodecs_arrays.py writes (I2, F8, F4 and B1 there), in R.
numcodecs_data <- matrix(0:29 * 3L - 40L, 5, 6, byrow = TRUE)
numcodecs_f8 <- matrix(0:29 / 7 + 1000, 5, 6, byrow = TRUE)
numcodecs_f4 <- matrix(readBin(writeBin((0:29 - 11.5) / 3, raw(), size = 4), "double", 30, size = 4), 5, 6,
                       byrow = TRUE)
numcodecs_b1 <- matrix(0:29 %% 3L == 0L, 5, 6, byrow = TRUE)
numcodecs_s <- matrix(rep(c("a", "bb", "", "ccc", "a", "bb"), 5), 5, 6, byrow = TRUE)

# Each array's data type, data and codecs as R adds them (v3 names; the
# package writes numcodecs' ids into .zarray), and its fill value where the
# default would not pass the codec (fixedscaleoffset stores a chunk's edge,
# which holds the fill value, as uint8).
nc_case <- function(type, data, ..., fill = NULL, writers = names(numcodecs_writers)) {
  list(type = type, data = data, codecs = list(...), fill = fill, writers = writers)
}
numcodecs_codecs <- list(
  crc32 = nc_case("int16", numcodecs_data, list("numcodecs.crc32", NULL)),
  crc32_end = nc_case("int16", numcodecs_data, list("numcodecs.crc32", list(location = "end"))),
  adler32 = nc_case("int16", numcodecs_data, list("numcodecs.adler32", NULL)),
  fletcher32 = nc_case("int16", numcodecs_data, list("numcodecs.fletcher32", NULL)),
  jenkins_lookup3 = nc_case("int16", numcodecs_data, list("numcodecs.jenkins_lookup3", list(initval = 7L))),
  lzma = nc_case("int16", numcodecs_data, list("numcodecs.lzma", NULL)),
  lzma_alone = nc_case("int16", numcodecs_data, list("numcodecs.lzma", list(format = 2L, preset = 1L))),
  fixedscaleoffset = nc_case("float64", numcodecs_f8,
                             list("numcodecs.fixedscaleoffset", list(offset = 1000L, scale = 10L, dtype = "<f8",
                                                                     astype = "|u1")),
                             list("numcodecs.zlib", list(level = 1L)), fill = 1000),
  quantize = nc_case("float64", numcodecs_f8, list("numcodecs.quantize", list(digits = 2L, dtype = "<f8"))),
  bitround = nc_case("float32", numcodecs_f4, list("numcodecs.bitround", list(keepbits = 5L)),
                     list("numcodecs.zlib", list(level = 1L))),
  packbits = nc_case("bool", numcodecs_b1, list("numcodecs.packbits", NULL)),
  astype = nc_case("float64", numcodecs_f8,
                   list("numcodecs.astype", list(encode_dtype = "<f4", decode_dtype = "<f8"))),
  delta = nc_case("int16", numcodecs_data, list("numcodecs.delta", list(dtype = "<i2")),
                  list("numcodecs.zlib", list(level = 1L))),
  # numcodecs 0.15 (zarr-python 2.18) takes pcodec 0.3, whose format pco 1 does not write.
  pcodec = nc_case("int16", numcodecs_data, list("numcodecs.pcodec", list(level = 3L)), writers = "zarr34"),
  # Zarr v2 object arrays only (zarr-python 3 wants vlen-utf8 for them);
  # the fill value ("" reads as "") must be a label or "".
  categorize = nc_case("string", numcodecs_s, list("numcodecs.categorize", list(labels = list("a", "bb", "ccc"))),
                       list("numcodecs.zlib", list(level = 1L)), fill = "", writers = "zarr218")
)
numcodecs_cases_of <- function(writer) names(Filter(function(x) writer %in% x$writers, numcodecs_codecs))

numcodecs_run <- function(writer, args) {
  res <- run_python_command(python_numcodecs(writer), c(numcodecs_script(), args))
  if (res$status != 0L) stop(sprintf("numcodecs_arrays.py (%s) failed:\n%s", writer, res$output), call. = FALSE)
  res$output
}

# What zarr-python 3.4 also writes under `numcodecs.*` names of codecs the
# package has under zarr's own names (read, written back under those).
numcodecs_v3_only <- c("gzip", "zstd", "blosc", "blosc_auto", "crc32c")

test_that("arrays zarr-python writes with numcodecs' codecs read as zarr-python reads them", {
  for (writer in names(numcodecs_writers)) {
    root <- withr::local_tempdir()
    want <- jsonlite::fromJSON(numcodecs_run(writer, c("write", root)))
    names <- c(numcodecs_cases_of(writer), if (writer == "zarr34") numcodecs_v3_only)
    expect_setequal(list.files(root), names)
    expect_setequal(names(want), names)
    for (name in names) {
      got <- open_zarr(file.path(root, name))[["/"]][]
      w <- matrix(want[[name]], 5, 6, byrow = TRUE)
      storage.mode(w) <- typeof(numcodecs_codecs[[name]]$data %||% numcodecs_data)
      expect_identical(got, w, label = sprintf("%s %s", writer, name))
    }
  }
  # The lossy filters changed the values, as they should.
  expect_false(identical(matrix(want$quantize, 5, 6, byrow = TRUE), numcodecs_f8))
})

test_that("arrays R writes with numcodecs' codecs read exactly in zarr-python 2.18 and 3.4", {
  for (format in c(2, 3)) {
    root <- withr::local_tempdir()
    z <- create_zarr(root, zarr_format = format)
    for (name in names(numcodecs_codecs)) {
      case <- numcodecs_codecs[[name]]
      if (format == 3 && identical(case$writers, "zarr218")) next
      b <- define_array(case$type, c(5, 6))
      b$chunk_shape <- c(3, 4)
      if (!is.null(case$fill)) b$fill_value <- case$fill
      b$remove_codec("blosc")
      for (codec in case$codecs) b$add_codec(codec[[1]], codec[[2]])
      z$add_array("/", name, b)$write(case$data)
    }
    readers <- if (format == 2) names(numcodecs_writers) else "zarr34"
    for (writer in readers) {
      names <- numcodecs_cases_of(writer)
      read <- jsonlite::fromJSON(numcodecs_run(writer, c("read", root, jsonlite::toJSON(names))))
      expect_identical(unlist(read[names]), stats::setNames(rep(TRUE, length(names)), names),
                       label = sprintf("zarr v%d read by %s", format, writer))
    }
  }
})

test_that("a checksum mismatch is an error, and a warning without strict checksums", {
  root <- withr::local_tempdir()
  z <- create_zarr(root, zarr_format = 3)
  b <- define_array("int16", c(5, 6))
  b$remove_codec("blosc")
  b$add_codec("numcodecs.fletcher32", NULL)
  z$add_array("/", "f", b)$write(numcodecs_data)
  doc <- jsonlite::fromJSON(file.path(root, "f", "zarr.json"), simplifyVector = FALSE)
  expect_identical(doc$codecs[[3]], list(name = "numcodecs.fletcher32", configuration = setNames(list(), character())))
  chunk <- file.path(root, "f", "c", "0", "0")
  bytes <- readBin(chunk, "raw", 1000)
  bytes[1] <- xor(bytes[1], as.raw(1))
  writeBin(bytes, chunk)
  expect_error(open_zarr(root)[["/f"]][], class = "zarr_error_checksum", regexp = "fletcher32 checksum mismatch")
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_warning(got <- open_zarr(root)[["/f"]][], "fletcher32 checksum mismatch")
  # The data come back as stored: -40 with its lowest bit flipped.
  expect_identical(got[-1], numcodecs_data[-1])
  expect_identical(got[1, 1], -39L)
})
