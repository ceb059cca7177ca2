# Printed summaries are part of the interface: pin them.

snapshot_zarr <- function() {
  z <- create_zarr()
  g <- z$add_group("/", "climate")
  g$set_attribute("title", "a test hierarchy")
  d <- define_array("float32", c(40, 30, 12))
  d$chunk_shape <- c(20, 15, 12)
  a <- z$add_array("/climate", "tas", d)
  a[1:20, 1:15, ] <- array(1.5, c(20, 15, 12))
  a$set_attribute("units", "K")
  z$add_array("/", "mask", define_array("bool", c(40, 30)))
  list(z = z, g = g, a = a, d = d)
}

test_that("print() summarises a zarr object, a group, an array and a builder", {
  s <- snapshot_zarr()
  expect_snapshot({
    print(s$z)
    print(s$g)
    print(s$a)
    print(s$d)
  })
})

test_that("hierarchy() draws the tree", {
  s <- snapshot_zarr()
  expect_snapshot(s$z$hierarchy())
})

test_that("str() gives one line per object", {
  s <- snapshot_zarr()
  expect_snapshot({
    str(s$z)
    str(s$g)
    str(s$a)
    str(s$a$chunking)
  })
})

test_that("data types, codecs and stores print their settings", {
  s <- snapshot_zarr()
  expect_snapshot({
    print(s$a$data_type)
    for (c in s$a$codecs) print(c)
    print(s$z$store)
  })
})

test_that("print() of an array shows its dimension names", {
  arr <- as_zarr(matrix(1:6, 2, 3))$root
  dimnames(arr) <- list(lat = NULL, lon = NULL)
  out <- capture.output(print(arr))
  expect_identical(grep("^shape", out, value = TRUE), "shape      : 2 x 3 [lat, lon]")
})

test_that("print() of an HTTP store's group and array works, consolidated or not, without warnings", {
  for (consolidated in c(TRUE, FALSE)) {
    dir <- withr::local_tempdir()
    z <- create_zarr(file.path(dir, "d.zarr"))
    z$add_group("/", "g")
    a <- z$add_array("/g", "tas", define_array("int32", c(4, 3)))
    a[] <- matrix(1:12, 4)
    if (consolidated) z$consolidate()
    server <- local_http_server(dir)
    remote <- open_zarr(paste0(server$url, "/d.zarr"))
    # (opening by path without consolidated metadata still warns: not a print matter)
    tas <- suppressWarnings(remote[["/g/tas"]], classes = "zarr_warning")
    out <- expect_no_warning(capture.output(print(tas)))
    expect_true(any(grepl("^shape +: 4 x 3", out)))
    expect_true(any(grepl("^stored +: not known", out)))
    z_out <- expect_no_warning(capture.output(print(remote)))
    g_out <- expect_no_warning(capture.output(print(remote[["/g"]])))
    if (consolidated) {
      expect_true(any(grepl("root  : group with 1 sub-group and 1 array", z_out, fixed = TRUE)))
      expect_true(any(grepl("children: 0 groups, 1 array", g_out, fixed = TRUE)))
    } else {
      expect_true(any(grepl("not known: the store cannot list", z_out, fixed = TRUE)))
      expect_true(any(grepl("children: not known", g_out, fixed = TRUE)))
      expect_false(any(grepl("0 arrays", c(z_out, g_out))))
    }
    expect_identical(tas[], matrix(1:12, 4))
    server$stop()
  }
})

test_that("print() and str() show the stored dimension names", {
  a <- as_zarr(matrix(1:6, 2, 3))[["/"]]
  dimnames(a) <- list(lat = NULL, lon = NULL)
  expect_true(any(grepl("shape      : 2 x 3 [lat, lon]", capture.output(print(a)), fixed = TRUE)))
  expect_match(capture.output(str(a)), "[2, 3] (lat, lon)", fixed = TRUE)
})

test_that("summary() of an array summarises its values", {
  x <- matrix(c(1:5, NA), 2, 3)
  a <- as_zarr(x)[["/"]]
  expect_identical(summary(a), summary(as.vector(x)))
})

test_that("print() of an array from as_zarr() shows its `_FillValue` decoded, not as base64", {
  # (a NaN fill gets no _FillValue: xarray shows NaN anyway)
  expect_null(as_zarr(array(c(1.5, NA), c(1, 2)))[["/"]]$attributes[["_FillValue"]])
  b <- define_array("float64", 2)
  b$fill_value <- -9999
  arr <- create_zarr()$add_array("/", "x", b)
  expect_identical(arr$attributes[["_FillValue"]], jsonlite::base64_enc(writeBin(-9999, raw(), endian = "little")))
  out <- capture.output(print(arr))
  expect_identical(grep("_FillValue", out, value = TRUE), "  _FillValue : -9999")
  expect_false(any(grepl("AAAAAAA", out)))
  # a number of the array's own type, a float16, a complex number; other text as it is
  enc <- function(x, size) jsonlite::base64_enc(writeBin(x, raw(), size = size, endian = "little"))
  b <- define_array("float32", 2)
  b$attributes <- list(`_FillValue` = enc(-2.5, 4), missing_value = enc(1e20, 8))
  f32 <- create_zarr()$add_array("/", "f", b)
  out <- capture.output(f32$print_attributes())
  expect_identical(out[-1], c("  _FillValue    : -2.5", "  missing_value : 1e+20"))
  expect_identical(zarr:::cf_fill_shown("ADw=", "float16"), 1)
  expect_identical(zarr:::cf_fill_shown("AP4=", "float16"), NaN)
  expect_identical(zarr:::cf_fill_shown(enc(c(1, -2), 8), "complex128"), complex(real = 1, imaginary = -2))
  expect_identical(zarr:::cf_fill_shown("AAAAAAAA+H8=", "int32"), "AAAAAAAA+H8=")
  expect_identical(zarr:::cf_fill_shown("not base64!", "float64"), "not base64!")
})
