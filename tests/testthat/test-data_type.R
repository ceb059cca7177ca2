# Data types: the R type each Zarr type reads into, sizes, signedness, the
# default fill values (which R reads back as NA) and fill value checks.

type_info <- data.frame(
  data_type = c("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"),
  Rtype = c("logical", "integer", "integer", "integer", "integer64", "integer", "integer", "integer64",
            "integer64", "double", "double", "double", "complex", "complex"),
  size = c(1L, 1L, 2L, 4L, 8L, 1L, 2L, 4L, 8L, 2L, 4L, 8L, 8L, 16L),
  signed = c(FALSE, TRUE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, TRUE, TRUE, TRUE, TRUE, TRUE),
  stringsAsFactors = FALSE
)

default_fills <- list(
  bool = FALSE, int8 = -128, int16 = -32768, int32 = -2147483648, int64 = "-9223372036854775808",
  uint8 = 255, uint16 = 65535, uint32 = 4294967295, uint64 = "18446744073709551615",
  float16 = "NaN", float32 = "NaN", float64 = "NaN",
  complex64 = list("NaN", "NaN"), complex128 = list("NaN", "NaN")
)

test_that("each data type reports its R type, size and signedness", {
  for (k in seq_len(nrow(type_info))) {
    row <- type_info[k, ]
    dt <- zarr_data_type$new(row$data_type)
    expect_identical(dt$data_type, row$data_type)
    expect_identical(dt$name, row$data_type)
    expect_identical(dt$Rtype, row$Rtype, info = row$data_type)
    expect_identical(dt$size, row$size, info = row$data_type)
    expect_identical(dt$signed, row$signed, info = row$data_type)
  }
})

test_that("each data type has the default fill value that R reads as NA", {
  for (t in names(default_fills)) {
    dt <- zarr_data_type$new(t)
    expect_equal(unclass(dt$fill_value), default_fills[[t]], info = t)
  }
})

test_that("metadata_fragment() gives the data type name and its fill value", {
  for (t in names(default_fills)) {
    frag <- zarr_data_type$new(t)$metadata_fragment()
    expect_identical(names(frag), c("data_type", "fill_value"), info = t)
    expect_identical(frag$data_type, t, info = t)
    expect_equal(unclass(frag$fill_value), default_fills[[t]], info = t)
  }
  frag <- zarr_data_type$new("int16", -9999)$metadata_fragment()
  expect_identical(frag, list(data_type = "int16", fill_value = -9999))
})

test_that("64-bit integer fill values are kept as exact decimal text", {
  dt <- zarr_data_type$new("int64", "9223372036854775807")
  expect_identical(unclass(dt$fill_value), "9223372036854775807")
  dt <- zarr_data_type$new("uint64", "18446744073709551615")
  expect_identical(unclass(dt$fill_value), "18446744073709551615")
  dt <- zarr_data_type$new("int64", 5)
  expect_identical(unclass(dt$fill_value), "5")
  skip_if_not_installed("bit64")
  dt <- zarr_data_type$new("int64", bit64::as.integer64("-9223372036854775807"))
  expect_identical(unclass(dt$fill_value), "-9223372036854775807")
})

test_that("the metadata fragment of a 64-bit fill value serialises as a JSON number", {
  frag <- zarr_data_type$new("int64", "9223372036854775807")$metadata_fragment()
  json <- as.character(jsonlite::toJSON(frag, auto_unbox = TRUE, json_verbatim = TRUE))
  expect_identical(json, '{"data_type":"int64","fill_value":9223372036854775807}')
})

test_that("a valid fill value can be given when creating or set later", {
  dt <- zarr_data_type$new("int16", -9999)
  expect_identical(dt$fill_value, -9999)
  dt$fill_value <- 0
  expect_identical(dt$fill_value, 0)
  dt <- zarr_data_type$new("bool", TRUE)
  expect_identical(dt$fill_value, TRUE)
  dt <- zarr_data_type$new("float32", 0)
  expect_identical(dt$fill_value, 0)
  dt$fill_value <- NaN
  expect_identical(dt$fill_value, "NaN")
  dt$fill_value <- Inf
  expect_identical(dt$fill_value, "Infinity")
  dt$fill_value <- -Inf
  expect_identical(dt$fill_value, "-Infinity")
  dt$fill_value <- "0x7fc00000"
  expect_identical(dt$fill_value, "0x7fc00000")
  dt <- zarr_data_type$new("complex64", complex(real = 1, imaginary = -2))
  expect_identical(dt$fill_value, list(1, -2))
  dt <- zarr_data_type$new("complex128", 3)
  expect_identical(dt$fill_value, list(3, 0))
  dt <- zarr_data_type$new("uint8", 0L)
  expect_identical(dt$fill_value, 0)
})

test_that("fill values outside the range of an integer type are zarr_error_argument", {
  bad <- list(
    int8 = c(128, -129), int16 = c(32768, -32769), int32 = c(2147483648, -2147483649),
    uint8 = c(256, -1), uint16 = c(65536, -1), uint32 = c(4294967296, -1), uint64 = -1
  )
  for (t in names(bad)) {
    for (v in bad[[t]]) {
      expect_error(zarr_data_type$new(t, v), class = "zarr_error_argument", regexp = t, info = paste(t, v))
      dt <- zarr_data_type$new(t)
      expect_error(dt$fill_value <- v, class = "zarr_error_argument", regexp = format(v, scientific = FALSE),
                   info = paste(t, v))
      expect_equal(unclass(dt$fill_value), default_fills[[t]], info = t)
    }
  }
})

test_that("64-bit fill values just outside the type's range are zarr_error_argument", {
  expect_error(zarr_data_type$new("int64", "9223372036854775808"), class = "zarr_error_argument", regexp = "int64")
  expect_error(zarr_data_type$new("int64", "-9223372036854775809"), class = "zarr_error_argument", regexp = "int64")
  expect_error(zarr_data_type$new("uint64", "18446744073709551616"), class = "zarr_error_argument", regexp = "uint64")
})

test_that("fill values of the wrong kind are zarr_error_argument naming the type", {
  cases <- list(
    list("int8", 1.5), list("int32", "abc"), list("int32", NA), list("int32", c(1, 2)),
    list("int16", list()), list("bool", NA), list("bool", 1), list("bool", "true"),
    list("float32", "abc"), list("float64", c(1, 2)), list("float64", NA),
    list("complex64", c(1, 2, 3)), list("complex128", list("x", 1)), list("uint8", TRUE)
  )
  for (cs in cases) {
    expect_error(zarr_data_type$new(cs[[1]], cs[[2]]), class = "zarr_error_argument",
                 regexp = cs[[1]], info = paste(cs[[1]], deparse(cs[[2]])))
  }
})

test_that("an unknown data type is zarr_error_unsupported naming it", {
  expect_error(zarr_data_type$new("int128"), class = "zarr_error_unsupported", regexp = "int128")
  expect_error(zarr_data_type$new("bfloat16"), class = "zarr_error_unsupported", regexp = "'bfloat16'")
  expect_error(zarr_data_type$new(3), class = "zarr_error_argument", regexp = "data_type")
  dt <- zarr_data_type$new("int8")
  expect_error(dt$data_type <- "float128", class = "zarr_error_unsupported", regexp = "float128")
  expect_identical(dt$data_type, "int8")
})

test_that("changing the data type resets the fill value to the new type's default", {
  dt <- zarr_data_type$new("int16", 7)
  dt$data_type <- "float32"
  expect_identical(dt$data_type, "float32")
  expect_identical(dt$fill_value, "NaN")
  expect_identical(dt$Rtype, "double")
  expect_identical(dt$size, 4L)
})

test_that("print() of a data type shows the type and fill value", {
  expect_output(print(zarr_data_type$new("int16", -9999)), "int16.*integer.*2 bytes")
  expect_output(print(zarr_data_type$new("int16", -9999)), "-9999")
  expect_output(print(zarr_data_type$new("complex64")), "\\[NaN, NaN\\]")
  expect_output(print(zarr_data_type$new("bool")), "1 byte\\)")
})

test_that("an array's data_type field reflects its metadata", {
  z <- create_zarr()
  def <- define_array("uint16", 5)
  def$fill_value <- 0
  arr <- z$add_array("/", "a", def)
  expect_s3_class(arr$data_type, "zarr_data_type")
  expect_identical(arr$data_type$data_type, "uint16")
  expect_identical(arr$data_type$fill_value, 0)
  expect_identical(arr$data_type$Rtype, "integer")
})

nondefault_fills <- list(bool = TRUE, int8 = 0, int16 = 0, int32 = 0, int64 = 0, uint8 = 0, uint16 = 0,
                         uint32 = 0, uint64 = 0, float16 = 0, float32 = 0, float64 = 0, complex64 = 0,
                         complex128 = 0)
for (t in names(nondefault_fills)) {
  test_that(sprintf("a %s array with a non-default fill value can be created", t), {
    z <- create_zarr()
    def <- define_array(t, 4)
    def$fill_value <- nondefault_fills[[t]]
    expect_true(def$is_valid())
    arr <- z$add_array("/", "a", def)
    expect_equal(unclass(arr$data_type$fill_value), unclass(def$fill_value))
  })
}

for (t in names(default_fills)) {
  test_that(sprintf("a %s array with the default fill value can be created", t), {
    z <- create_zarr()
    def <- define_array(t, 4)
    expect_true(def$is_valid())
    arr <- z$add_array("/", "a", def)
    expect_equal(unclass(arr$data_type$fill_value), default_fills[[t]])
  })
}

test_that("an int64 array with the largest int64 as fill value can be created", {
  z <- create_zarr()
  def <- define_array("int64", 4)
  def$fill_value <- "9223372036854775807"
  expect_true(def$is_valid())
  arr <- z$add_array("/", "a", def)
  expect_identical(unclass(arr$data_type$fill_value), "9223372036854775807")
})
