# zfp both ways: zarr-python 2.18 (Zarr v2, compressor "zfpy") and 3.4
# (Zarr v3, serializer "numcodecs.zfpy") write arrays of every zfpy mode
# and type (zfp_arrays.py) that the package reads bit for bit as numcodecs
# decodes them, and read what the package writes as the package reads it.
# The venvs are test-numcodecs.R's (helper-numcodecs.R).

zfp_run <- function(writer, args) {
  res <- run_python_command(python_numcodecs(writer), c(testthat::test_path("zfp_arrays.py"), args))
  if (res$status != 0L) stop(sprintf("zfp_arrays.py (%s) failed:\n%s", writer, res$output), call. = FALSE)
  jsonlite::fromJSON(res$output, simplifyVector = FALSE)
}

# zfp_arrays.py's cases in R: type, shape, chunks and numcodecs' configuration.
zfp_modes <- list(rate = list(mode = 2L, rate = 12), precision = list(mode = 3L, precision = 18L),
                  accuracy = list(mode = 4L, tolerance = 0.01), reversible = list(mode = 4L, tolerance = -1))
zfp_case <- function(type, shape, chunks, mode) list(type = type, shape = shape, chunks = chunks, mode = mode)
zfp_cases <- c(
  unlist(lapply(c(f4 = "float32", f8 = "float64", i4 = "int32", i8 = "int64"), function(type) {
    lapply(stats::setNames(names(zfp_modes), names(zfp_modes)), function(m) zfp_case(type, c(5, 7), c(3, 4), m))
  }), recursive = FALSE),
  list(d1 = zfp_case("float64", 10, 4, "accuracy"), d3 = zfp_case("float32", c(3, 5, 6), c(2, 3, 4), "rate"),
       d4 = zfp_case("float64", c(3, 4, 5, 3), c(2, 3, 2, 2), "precision"))
)
names(zfp_cases) <- sub(".", "_", names(zfp_cases), fixed = TRUE)

# The values zfp_arrays.py writes: C order, so filled into R's array by
# reversing the dimensions and transposing back.
zfp_values <- function(case) {
  n <- prod(case$shape)
  i <- seq_len(n) - 1
  x <- if (startsWith(case$type, "float")) sin(i * 0.37) * 100 + i / 3 else i * 7919 - 30000
  if (case$type == "float32") x <- readBin(writeBin(x, raw(), size = 4), "double", n, size = 4)
  if (case$mode == "reversible" && startsWith(case$type, "float")) x[c(2, n - 1)] <- c(NaN, Inf)
  if (case$type == "int32") x <- as.integer(x)
  if (length(case$shape) > 1L) x <- aperm(array(x, rev(case$shape)), rev(seq_along(case$shape)))
  if (case$type == "int64") {
    d <- dim(x)
    x <- bit64::as.integer64(x)
    dim(x) <- d
  }
  x
}

# An R array's elements as little-endian bytes in C order, in hex.
zfp_hex <- function(x, type) {
  d <- dim(x)
  if (!is.null(d)) x <- aperm(x, rev(seq_along(d)))
  size <- switch(type, float32 = 4L, int32 = 4L, 8L)
  x <- if (type == "int64") unclass(x) else as.vector(x)
  bytes <- if (type == "int64") writeBin(as.vector(x), raw(), size = 8, endian = "little") else
    writeBin(x, raw(), size = size, endian = "little")
  paste(as.character(bytes), collapse = "")
}

test_that("arrays zarr-python writes with numcodecs' zfpy read bit for bit as numcodecs decodes them", {
  skip_if_not_installed("bit64")
  for (writer in names(numcodecs_writers)) {
    root <- withr::local_tempdir()
    want <- zfp_run(writer, c("write", root))
    expect_setequal(names(want), names(zfp_cases))
    for (name in names(zfp_cases)) {
      case <- zfp_cases[[name]]
      got <- open_zarr(file.path(root, name))[["/"]][]
      expect_identical(zfp_hex(got, case$type), want[[name]], label = sprintf("%s %s", writer, name))
    }
    # Lossless modes give the data back, NaN and Inf too; the others not.
    expect_identical(open_zarr(file.path(root, "f8_reversible"))[["/"]][], zfp_values(zfp_cases$f8_reversible))
    expect_identical(open_zarr(file.path(root, "i8_reversible"))[["/"]][], zfp_values(zfp_cases$i8_reversible))
    expect_false(identical(open_zarr(file.path(root, "f8_rate"))[["/"]][], zfp_values(zfp_cases$f8_rate)))
  }
})

test_that("arrays R writes with numcodecs.zfpy read in zarr-python 2.18 and 3.4 as in R, and as zfpy writes them", {
  skip_if_not_installed("bit64")
  for (format in c(2, 3)) {
    root <- withr::local_tempdir()
    z <- create_zarr(root, zarr_format = format)
    mine <- list()
    for (name in names(zfp_cases)) {
      case <- zfp_cases[[name]]
      b <- define_array(case$type, case$shape)
      b$chunk_shape <- case$chunks
      b$fill_value <- -9999
      # C order, as zarr-python writes: the same fields, so the same
      # streams. d3 keeps R's order (a transpose in v3, order F in v2):
      # fields of the stored shape, which zarr-python reads as R does.
      b$portable <- name != "d3"
      b$remove_codec("blosc")
      b$add_codec("numcodecs.zfpy", zfp_modes[[case$mode]])
      z$add_array("/", name, b)$write(zfp_values(case))
      mine[[name]] <- zfp_hex(open_zarr(root)[[paste0("/", name)]][], case$type)
    }
    readers <- if (format == 2) names(numcodecs_writers) else "zarr34"
    for (writer in readers) {
      read <- zfp_run(writer, c("read", root, jsonlite::toJSON(names(zfp_cases))))
      for (name in names(zfp_cases)) {
        label <- sprintf("zarr v%d %s read by %s", format, name, writer)
        expect_identical(read[[name]]$bytes, mine[[name]], label = label)
        if (name != "d3") expect_true(read[[name]]$same, label = label)
      }
    }
  }
})

test_that("zfp and numcodecs.zfpy round-trip in R, inside shards too, and refuse what they cannot hold", {
  x <- outer(1:9, 1:11, function(i, j) sin(i / 3) * cos(j / 5) * 100)
  x[2, 3] <- NaN
  z <- create_zarr()
  for (codec in list(list("zfp", list(mode = "reversible")), list("numcodecs.zfpy", NULL))) {
    b <- define_array("float64", dim(x))
    b$chunk_shape <- c(4, 5)
    b$add_codec(codec[[1]], codec[[2]])
    a <- z$add_array("/", paste0("r_", codec[[1]]), b)
    a[] <- x
    expect_identical(a[], x, label = codec[[1]])
    # Sharded: each inner chunk is a zfp field.
    b$add_codec("sharding_indexed", list(chunk_shape = c(2, 5)))
    a <- z$add_array("/", paste0("s_", codec[[1]]), b)
    a[] <- x
    expect_identical(a[], x, label = codec[[1]])
    expect_identical(a[3:5, 2], x[3:5, 2], label = codec[[1]])
  }
  y <- x
  y[2, 3] <- 0
  b <- define_array("float32", dim(y))
  b$add_codec("zfp", list(mode = "fixed_accuracy", tolerance = 0.01))
  a <- z$add_array("/", "acc", b)
  a[] <- y
  expect_true(max(abs(a[] - y)) <= 0.01)
  expect_false(identical(a[], y))
  expect_identical(a$metadata$codecs[[2]], list(name = "zfp", configuration = list(mode = "fixed_accuracy",
                                                                                   tolerance = 0.01)))
  b <- define_array("int16", 4)
  expect_error(b$add_codec("numcodecs.zfpy", NULL), "numcodecs.zfpy.*not int16")
  b <- define_array("float64", 4)
  expect_error(b$add_codec("zfp", list(mode = "fixed_rate")), "needs 'rate'")
  expect_error(b$add_codec("numcodecs.zfpy", list(mode = 9)), "mode must be an integer from 0 to 5")
})
