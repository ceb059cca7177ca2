# The scale_offset and cast_value codecs (array -> array): arrays
# zarr-python 3.4 writes read exactly, and what R writes reads exactly in
# zarr-python 3.4 (scale_offset_arrays.py). zarr-python casts values with
# cast-value-rs, which its venv adds (python_cast(), helper-python.R).

cast_run <- function(args) {
  res <- run_python_command(python_cast(), c(testthat::test_path("scale_offset_arrays.py"), args))
  if (res$status != 0L) stop(sprintf("scale_offset_arrays.py failed:\n%s", res$output), call. = FALSE)
  res$output
}

# The values zarr-python read, as R reads them: C order, and NA where an
# element equals the fill value (NaN for a NaN fill).
python_values <- function(file, dims, fill, like) {
  x <- readBin(file, "double", prod(dims), endian = "little")
  x <- aperm(array(x, rev(dims)), rev(seq_along(dims)))
  x[if (is.nan(fill)) is.nan(x) else x == fill] <- NA
  storage.mode(x) <- storage.mode(like)
  x
}

# Each array of scale_offset_arrays.py: its fill value and codecs as R adds them.
cast_cases <- list(
  f32_scale_offset = list(0, list(list("scale_offset", list(offset = 5, scale = 0.1)))),
  u16_offset_cast_u8 = list(1000, list(list("scale_offset", list(offset = 1000)),
                                       list("cast_value", list(data_type = "uint8")))),
  f64_nan_u8 = list(NaN, list(list("scale_offset", list(offset = -10, scale = 0.1)),
                              list("cast_value", list(data_type = "uint8", rounding = "nearest-even",
                                                      scalar_map = list(encode = list(list("NaN", 0L)),
                                                                        decode = list(list(0L, "NaN"))))))),
  f64_i8_towards_zero_wrap = list(0, list(list("cast_value", list(data_type = "int8", rounding = "towards-zero",
                                                                  out_of_range = "wrap")))),
  f64_u8_clamp_away = list(0, list(list("cast_value", list(data_type = "uint8", rounding = "nearest-away",
                                                           out_of_range = "clamp")))),
  f64_f32_towards_positive = list(0, list(list("cast_value", list(data_type = "float32",
                                                                  rounding = "towards-positive")))),
  i32_scale_cast_i16 = list(0, list(list("scale_offset", list(offset = 8L, scale = 2L)),
                                    list("cast_value", list(data_type = "int16")))),
  f64_sharded_u16 = list(0, list(list("scale_offset", list(scale = 1000L)),
                                 list("cast_value", list(data_type = "uint16"))))
)

test_that("arrays zarr-python 3.4 writes with scale_offset and cast_value read exactly", {
  root <- withr::local_tempdir()
  cast_run(c("write", root))
  for (name in names(cast_cases)) {
    a <- open_zarr(file.path(root, name))[["/"]]
    got <- a[]
    want <- python_values(file.path(root, paste0(name, ".bin")), dim(got), cast_cases[[name]][[1]], got)
    expect_identical(got, want, label = name)
    # A part of the array: the chunks it touches decode alike.
    expect_identical(a[2:4, 3:5], want[2:4, 3:5], label = paste(name, "[2:4, 3:5]"))
  }
  # 0 is stored as (0 + 10) * 0.1 = 1, and NaN as 0 (the scalar map).
  raw <- readBin(file.path(root, "f64_nan_u8", "c", "0", "0"), "raw", 100)
  expect_identical(as.integer(raw[c(1, 7)]), c(1L, 0L))
})

test_that("arrays R writes with scale_offset and cast_value read exactly in zarr-python 3.4", {
  root <- withr::local_tempdir()
  py_root <- withr::local_tempdir()
  cast_run(c("write", py_root))
  z <- create_zarr(root)
  for (name in names(cast_cases)) {
    src <- open_zarr(file.path(py_root, name))[["/"]]
    b <- define_array(src$data_type$data_type, src$shape)
    b$portable <- TRUE
    b$chunk_shape <- if (name == "f64_sharded_u16") c(4, 6) else c(3, 4)
    b$remove_codec("blosc")
    b$fill_value <- cast_cases[[name]][[1]]
    for (codec in cast_cases[[name]][[2]]) b$add_codec(codec[[1]], codec[[2]])
    if (name == "f64_sharded_u16") b$add_codec("sharding_indexed", list(chunk_shape = c(2, 3)))
    a <- z$add_array("/", name, b)
    # zarr-python's decoded values, written and read back through the codecs.
    a$write(src[])
    expect_identical(a[], src[], label = name)
  }
  out <- jsonlite::fromJSON(cast_run(c("read", root, jsonlite::toJSON(names(cast_cases)))), simplifyVector = FALSE)
  for (name in names(cast_cases)) {
    got <- z[[paste0("/", name)]][]
    want <- python_values(file.path(root, paste0(name, ".bin")), dim(got), cast_cases[[name]][[1]], got)
    expect_identical(want, got, label = paste(name, "read by zarr-python"))
  }
  expect_identical(unlist(out$u16_offset_cast_u8), c("scale_offset", "cast_value", "bytes"))
  expect_identical(unlist(out$f64_sharded_u16), "sharding_indexed")
})

test_that("a bytes codec after cast_value has an endian when the stored type needs one", {
  b <- define_array("uint8", c(4, 4))
  b$portable <- TRUE
  expect_identical(b$metadata()$codecs[[1]], list(name = "bytes"))
  b$add_codec("cast_value", list(data_type = "int16"))
  codecs <- b$metadata()$codecs
  expect_identical(vapply(codecs, function(c) c$name, ""), c("cast_value", "bytes", "blosc"))
  expect_identical(codecs[[2]], list(name = "bytes", configuration = list(endian = "little")))
  z <- create_zarr()
  a <- z$add_array("/", "a", b)
  a$write(matrix(1:16, 4))
  expect_identical(a[], matrix(1:16, 4))
})

test_that("values scale_offset or cast_value cannot encode are classed errors naming the array", {
  z <- create_zarr()
  b <- define_array("float64", c(4))
  b$fill_value <- 0
  b$add_codec("cast_value", list(data_type = "uint8"))
  a <- z$add_array("/", "small", b)
  a$write(c(1, 2, 255, 3))
  expect_identical(a[], c(1, 2, 255, 3))
  expect_error(a$write(c(1, 2, 256, 3)), class = "zarr_error_codec", regexp = "256 is outside the range of uint8")
  expect_error(a$write(c(1, 2, NaN, 3)), class = "zarr_error_codec", regexp = "NaN has no value in uint8")
  # The chunk as it was.
  expect_identical(a[], c(1, 2, 255, 3))
  # Metadata the chain refuses: add_array() warns and makes no array, as
  # for any invalid definition.
  refused <- function(b, regexp) {
    expect_warning(got <- z$add_array("/", "refused", b), class = "zarr_warning", regexp = regexp)
    expect_null(got)
  }
  b <- define_array("int16", c(4))
  b$add_codec("scale_offset", list(scale = 0L))
  refused(b, "scale must not be 0")
  b <- define_array("float64", c(4))
  b$add_codec("cast_value", list(data_type = "float32", out_of_range = "wrap"))
  refused(b, "needs an integer data_type")
  # R's default float fill, NaN, that uint8 cannot hold without a scalar map.
  b <- define_array("float64", c(4))
  b$add_codec("cast_value", list(data_type = "uint8"))
  refused(b, "array '/refused': the fill value cannot be encoded: codec 'cast_value': NaN has no value in uint8")
  expect_identical(z$root$arrays, "/small")
  # Zarr v2 has no place for them: refused, never dropped.
  v2 <- create_zarr(zarr_format = 2)
  b <- define_array("float64", c(4))
  b$format <- 2
  b$fill_value <- 0
  b$add_codec("scale_offset", list(scale = 2))
  expect_warning(got <- v2$add_array("/", "v2", b), class = "zarr_warning",
                 regexp = "codec 'scale_offset' cannot be written to Zarr v2 metadata")
  expect_null(got)
})
