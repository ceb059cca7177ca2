# numcodecs' codecs both ways: zarr-python 2.18 (Zarr v2, numcodecs ids)
# and 3.4 (Zarr v3, `numcodecs.*` names) write one array per codec
# (numcodecs_arrays.py) that the package reads exactly, and read exactly
# what the package writes with the same codecs. The venvs pin both
# versions; they run only when Python tests are asked (helper-python.R).

numcodecs_writers <- list(
  zarr218 = list(python = c("python3.11", "python3.12", "python3"), min = "3.11",
                 pkgs = c("zarr==2.18.7", "numcodecs==0.15.2", "numpy<2.3")),
  # Last: without a Python 3.12, the tests skip once the 2.18 checks are done.
  zarr34 = list(python = c("python3.13", "python3.12", "python3"), min = "3.12",
                pkgs = c("zarr==3.4.2", "numcodecs==0.17.1", "numpy"))
)
numcodecs_cache <- new.env(parent = emptyenv())

# The first of `names` that runs and is Python `min` or later ("" if none):
# a pyenv shim of a version not selected is on the PATH but does not run.
numcodecs_base_python <- function(names, min) {
  for (name in names) {
    py <- Sys.which(name)
    if (!nzchar(py)) next
    ok <- tryCatch({
      v <- run_python_command(py, c("-c", "import sys; print('%d.%d' % sys.version_info[:2])"))
      v$status == 0L && package_version(trimws(v$output)) >= min
    }, error = function(e) FALSE)
    if (ok) return(unname(py))
  }
  ""
}

# The Python of the venv of one writer, made on first use in
# ZARR_TEST_NUMCODECS_VENV (else the session's temporary folder).
python_numcodecs <- function(writer) {
  if (!python_tests_asked()) {
    testthat::skip("numcodecs interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(numcodecs_cache[[writer]])) return(numcodecs_cache[[writer]])
  w <- numcodecs_writers[[writer]]
  root <- Sys.getenv("ZARR_TEST_NUMCODECS_VENV", file.path(tempdir(), "zarr-numcodecs-venvs"))
  venv <- file.path(root, writer)
  py <- venv_python_path(venv)
  ok <- function() file.exists(py) && run_python_command(py, c("-c", "import zarr, numcodecs"))$status == 0L
  if (!ok()) {
    base <- numcodecs_base_python(w$python, w$min)
    if (!nzchar(base)) testthat::skip(sprintf("no Python %s or later for %s", w$min, writer))
    dir.create(root, recursive = TRUE, showWarnings = FALSE)
    res <- run_python_command(base, c("-m", "venv", venv))
    if (res$status != 0L) stop(sprintf("could not create a venv in '%s':\n%s", venv, res$output), call. = FALSE)
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet", w$pkgs))
    if (res$status != 0L || !ok()) {
      stop(sprintf("could not install %s into '%s':\n%s", paste(w$pkgs, collapse = " "), venv, res$output),
           call. = FALSE)
    }
  }
  numcodecs_cache[[writer]] <- file.path(normalizePath(dirname(py)), basename(py))
  numcodecs_cache[[writer]]
}

numcodecs_script <- function() testthat::test_path("numcodecs_arrays.py")

# What numcodecs_arrays.py writes: numpy.arange(30).reshape(5, 6) * 3 - 40.
numcodecs_data <- matrix(0:29 * 3L - 40L, 5, 6, byrow = TRUE)

# Each array's codec as R adds it: name and configuration (v3 names; the
# package writes numcodecs' ids into .zarray).
numcodecs_codecs <- list(
  crc32 = list("numcodecs.crc32", NULL),
  crc32_end = list("numcodecs.crc32", list(location = "end")),
  adler32 = list("numcodecs.adler32", NULL),
  fletcher32 = list("numcodecs.fletcher32", NULL),
  jenkins_lookup3 = list("numcodecs.jenkins_lookup3", list(initval = 7L))
)

numcodecs_run <- function(writer, args) {
  res <- run_python_command(python_numcodecs(writer), c(numcodecs_script(), args))
  if (res$status != 0L) stop(sprintf("numcodecs_arrays.py (%s) failed:\n%s", writer, res$output), call. = FALSE)
  res$output
}

# What zarr-python 3.4 also writes under `numcodecs.*` names of codecs the
# package has under zarr's own names (read, written back under those).
numcodecs_v3_only <- c("gzip", "zstd", "blosc", "blosc_auto", "crc32c")

test_that("arrays zarr-python writes with numcodecs' codecs read exactly", {
  for (writer in names(numcodecs_writers)) {
    root <- withr::local_tempdir()
    numcodecs_run(writer, c("write", root))
    names <- c(names(numcodecs_codecs), if (writer == "zarr34") numcodecs_v3_only)
    expect_setequal(list.files(root), names)
    for (name in names) {
      got <- open_zarr(file.path(root, name))[["/"]][]
      expect_identical(got, numcodecs_data, label = sprintf("%s %s", writer, name))
    }
  }
})

test_that("arrays R writes with numcodecs' codecs read exactly in zarr-python 2.18 and 3.4", {
  for (format in c(2, 3)) {
    root <- withr::local_tempdir()
    z <- create_zarr(root, zarr_format = format)
    for (name in names(numcodecs_codecs)) {
      b <- define_array("int16", c(5, 6))
      b$chunk_shape <- c(3, 4)
      b$remove_codec("blosc")
      b$add_codec(numcodecs_codecs[[name]][[1]], numcodecs_codecs[[name]][[2]])
      z$add_array("/", name, b)$write(numcodecs_data)
      expect_identical(z[[paste0("/", name)]][], numcodecs_data)
    }
    readers <- if (format == 2) names(numcodecs_writers) else "zarr34"
    for (writer in readers) {
      out <- numcodecs_run(writer, c("read", root, jsonlite::toJSON(names(numcodecs_codecs))))
      read <- jsonlite::fromJSON(out)
      expect_identical(unlist(read[names(numcodecs_codecs)]), vapply(numcodecs_codecs, function(x) TRUE, TRUE),
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
