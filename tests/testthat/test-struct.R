# Struct arrays (the v3 `struct` data type, NumPy structured dtypes in
# Zarr v2): read as a data.frame (1-d) or a named list of arrays, written
# from the same forms; and both ways with zarr-python 3.4 and 2.18
# (struct_arrays.py, run in the venvs of helper-numcodecs.R).

struct_script <- function() testthat::test_path("struct_arrays.py")

struct_py <- function(writer, args) {
  res <- run_python_command(python_numcodecs(writer), c(struct_script(), args))
  if (res$status != 0L) stop(sprintf("struct_arrays.py (%s) failed:\n%s", writer, res$output), call. = FALSE)
  res$output
}

# The R type each field of the test arrays reads as.
struct_r_types <- c(a = "integer", b = "double", c = "logical", h = "double", w = "integer", l = "integer64",
                    z = "complex", s = "character", u = "character", i = "integer", m = "double", f = "double",
                    p.x = "double", p.y = "double", v = "double")

# A JSON value of struct_arrays.py (a number, "NaN", [re, im], text) in R.
py_value <- function(v, type) {
  num <- function(x) if (identical(x, "NaN")) NaN else as.numeric(x)
  switch(type,
    complex = complex(real = num(v[[1L]]), imaginary = num(v[[2L]])),
    character = v,
    logical = v,
    num(v)
  )
}

# What the package must read for the array zarr-python describes as
# `desc` (struct_arrays.py read): its values, in R's order, with NA where
# a value equals the field's fill value (not for bool and text).
py_expected <- function(desc, shape) {
  out <- lapply(names(desc$fields), function(name) {
    type <- struct_r_types[[name]]
    vals <- unlist(lapply(desc$fields[[name]], py_value, type = type))
    if (!is.null(desc$fill) && !type %in% c("logical", "character")) {
      f <- py_value(desc$fill[[name]][[1L]], type)
      same <- vals == f
      same[is.na(same)] <- FALSE
      vals[same | (is.nan(f) & is.nan(vals))] <- NA
    }
    vals <- switch(type, integer = as.integer(vals), integer64 = bit64::as.integer64(vals), vals)
    field_dims <- if (name == "m") c(2, 3) else NULL
    dims <- c(shape, field_dims)
    if (length(dims) == 1L) return(vals)
    arr <- aperm(array(vals, rev(dims)), rev(seq_along(dims)))
    if (inherits(vals, "integer64")) class(arr) <- "integer64"
    arr
  })
  names(out) <- names(desc$fields)
  if (length(shape) == 1L) out <- structure(out, class = "data.frame", row.names = .set_row_names(shape))
  out
}

# Rows `i` of a data.frame, numbered from 1 as a read returns them.
rows <- function(df, i) {
  out <- df[i, , drop = FALSE]
  rownames(out) <- NULL
  out
}

test_that("a data.frame becomes a 1-d struct array and reads back identical", {
  df <- data.frame(id = c(3L, NA, 5L), x = c(0.5, NaN, NA), ok = c(TRUE, NA, FALSE),
                   label = c("a", "\u00e9t\u00e9", NA), z = c(1i, NA, 2 + 0i))
  z <- as_zarr(df)
  arr <- z[["/"]]
  expect_identical(arr$metadata$data_type$name, "struct")
  expect_identical(vapply(arr$metadata$data_type$configuration$fields, function(f) f$name, ""), names(df))
  want <- df
  want$ok[2] <- FALSE # bool has no NA
  want$label[3] <- "" # NumPy's strings have no NA
  want$x[2] <- NA # NaN is the fill value of float64: it reads as NA
  expect_identical(arr[], want)
  expect_identical(arr[2:3], rows(want, 2:3))
  expect_identical(arr$read(list(c(1, 2))), rows(want, 1:2))
  expect_identical(nrow(arr[integer(0)]), 0L)
  # a text field is as wide as the longest text: 3 characters
  u <- arr$metadata$data_type$configuration$fields[[4L]]$data_type
  expect_identical(u$configuration$length_bytes, 12L)
})

test_that("struct arrays of several dimensions read as a named list of arrays, written in part", {
  z <- create_zarr()
  arr <- z$add_array("/", "g", define_array(struct_type(a = "int16", b = "float32", t = "S2"), c(3, 4)))
  a <- matrix(1:12, 3, 4)
  b <- matrix(seq(0.25, 3, by = 0.25), 3, 4)
  arr[] <- list(a = a, b = b, t = matrix(letters[1:12], 3, 4))
  expect_identical(arr[], list(a = a, b = b, t = matrix(letters[1:12], 3, 4)))
  # fields left out keep their values; NA becomes the field's fill value
  arr[2, 2:3] <- list(b = c(NA, 9.5))
  b[2, 2:3] <- c(NA, 9.5)
  expect_identical(arr[], list(a = a, b = b, t = matrix(letters[1:12], 3, 4)))
  expect_identical(arr[2, ], list(a = a[2, ], b = b[2, ], t = letters[c(2, 5, 8, 11)]))
  expect_identical(arr[2, , drop = FALSE]$a, a[2, , drop = FALSE])
  expect_identical(arr$data_type$fill_value, list(a = -32768L, b = "NaN", t = ""))
  expect_identical(arr$data_type$Rtype, "list")
})

test_that("struct arrays in shards read and write whole, in part and field by field", {
  def <- define_array(struct_type(a = "int16", b = "float64", t = "S2"), c(5, 7))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "g", def)
  expect_identical(arr$metadata$codecs[[1L]]$name, "sharding_indexed")
  a <- matrix(1:35, 5, 7)
  b <- matrix(seq(0.5, 17.5, by = 0.5), 5, 7)
  t <- matrix(rep(letters, 2)[1:35], 5, 7)
  arr[] <- list(a = a, b = b, t = t)
  expect_identical(arr[], list(a = a, b = b, t = t))
  # a region across shards and into the edge shards
  expect_identical(arr[2:5, 3:7], list(a = a[2:5, 3:7], b = b[2:5, 3:7], t = t[2:5, 3:7]))
  # one field written in part: the others keep their values
  arr[3, 4:6] <- list(b = c(NA, 1, 2))
  b[3, 4:6] <- c(NA, 1, 2)
  expect_identical(arr[], list(a = a, b = b, t = t))
})

test_that("what a struct field cannot hold is refused, naming the field", {
  arr <- as_zarr(data.frame(n = 1:2, s = c("ab", "c")))[["/"]]
  expect_error(arr[] <- data.frame(n = 1:2, s = c("abc", "")), "field 's'", class = "zarr_error_type")
  expect_error(arr[] <- data.frame(n = c(1.5, 2), s = "a"), "field 'n'", class = "zarr_error_type")
  expect_error(arr[] <- list(q = 1:2), "no field 'q'", class = "zarr_error_type")
  expect_error(arr[] <- 1:2, "data.frame", class = "zarr_error_type")
  expect_error(arr[1] <- list(n = 1:2), "field 'n' needs 1 values", class = "zarr_error_type")
  expect_identical(arr[], data.frame(n = 1:2, s = c("ab", "c")))
  expect_error(struct_type(x = "string"), "field 'x'", class = "zarr_error_unsupported")
  expect_error(struct_type("int8"), class = "zarr_error_argument")
  expect_error(as_zarr(data.frame(m = I(matrix(1:4, 2)))), "column 'm'", class = "zarr_error_unsupported")
})

test_that("struct metadata that cannot be read names the field, and spares its siblings", {
  root <- withr::local_tempdir()
  z <- create_zarr(root)
  good <- z$add_array("/", "good", define_array(struct_type(x = "float64"), 2))
  good[] <- data.frame(x = c(1, 2))
  meta <- list(zarr_format = 3L, node_type = "array", shape = list(2L),
               data_type = list(name = "struct", configuration = list(fields = list(
                 list(name = "x", data_type = "int8"), list(name = "txt", data_type = "string")))),
               chunk_grid = list(name = "regular", configuration = list(chunk_shape = list(2L))),
               chunk_key_encoding = list(name = "default"), fill_value = list(x = 0L, txt = ""),
               codecs = list(list(name = "bytes")), attributes = structure(list(), names = character(0)))
  dir.create(file.path(root, "bad"))
  writeLines(jsonlite::toJSON(meta, auto_unbox = TRUE), file.path(root, "bad", "zarr.json"))
  z2 <- open_zarr(root)
  expect_error(z2[["/bad"]], "'txt'", class = "zarr_error_unsupported")
  expect_identical(z2[["/good"]][], data.frame(x = c(1, 2)))
})

test_that("the legacy `structured` name, pair fields and base64 fill values read and are written back", {
  root <- withr::local_tempdir()
  meta <- list(zarr_format = 3L, node_type = "array", shape = list(3L),
               data_type = list(name = "structured", configuration = list(fields = list(
                 list("x", "int16"), list("y", "float64")))),
               chunk_grid = list(name = "regular", configuration = list(chunk_shape = list(2L))),
               chunk_key_encoding = list(name = "default"),
               # x = 7, y = 0.5, little-endian
               fill_value = "BwAAAAAAAADgPw==",
               codecs = list(list(name = "bytes")), attributes = structure(list(), names = character(0)))
  writeLines(jsonlite::toJSON(meta, auto_unbox = TRUE), file.path(root, "zarr.json"))
  arr <- open_zarr(root)[["/"]]
  expect_identical(arr[], data.frame(x = rep(NA_integer_, 3), y = rep(NA_real_, 3)))
  expect_identical(arr$data_type$fill_value, list(x = 7L, y = 0.5))
  arr[2:3] <- data.frame(x = c(1L, 7L), y = c(2.5, 3))
  expect_identical(open_zarr(root)[["/"]][], data.frame(x = c(NA, 1L, NA), y = c(NA, 2.5, 3)))
  # the edge chunk: record 3 (7, 3) and the fill value past the end, packed
  # little-endian as the legacy name has it without `endian`
  expect_identical(readBin(file.path(root, "c", "1"), "raw", 100),
                   as.raw(c(7, 0, 0, 0, 0, 0, 0, 0, 8, 64, 7, 0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f)))
  written <- jsonlite::fromJSON(file.path(root, "zarr.json"), simplifyVector = FALSE)
  expect_identical(written$data_type$name, "structured")
})

test_that("struct arrays zarr-python writes read as zarr-python reads them", {
  cases <- list(zarr34 = list(v3_flat = 7, v3_grid = c(5, 4), v3_sharded = c(5, 4), v3_nested = 4, v2_from34 = 7),
                zarr218 = list(v2_flat = 7, v2_sub = c(3, 2)))
  for (writer in names(cases)) {
    root <- withr::local_tempdir()
    struct_py(writer, c("write", root))
    # (the time and nested stores have tests of their own below)
    expect_setequal(setdiff(list.files(root), c("v3_times", "v2_times34", "v2_times", "v2_nested")),
                    names(cases[[writer]]))
    for (name in names(cases[[writer]])) {
      path <- file.path(root, name)
      desc <- jsonlite::fromJSON(struct_py(writer, c("read", path)), simplifyVector = FALSE)
      got <- open_zarr(path)[["/"]][]
      expect_identical(got, py_expected(desc, cases[[writer]][[name]]), label = sprintf("%s %s", writer, name))
    }
  }
  # spelled out for one of them: the never-written records are the fill
  # value (NA), as is the stored -1 of field `a`
  arr <- open_zarr(file.path(root, "v2_flat"))[["/"]]
  got <- arr[]
  expect_identical(got$a, c(-4L, NA, 2L, 5L, 8L, NA, NA))
  expect_identical(got$s, c("ab", "c", "", "xyz", "q", "", ""))
  # the fill value, from base64 with field `a` big-endian
  expect_identical(arr$data_type$fill_value,
                   list(a = -1L, b = "NaN", c = FALSE, h = 0.5, w = 7L, l = -4L, z = list("NaN", 0), s = "", u = ""))
})

test_that("struct arrays R writes read exactly in zarr-python 3.4 and 2.18", {
  df <- data.frame(a = c(-4L, 7L, NA, 2L, 9L), b = c(0.5, 1.25, 2, NA, -3), c = c(TRUE, FALSE, TRUE, FALSE, FALSE),
                   u = c("hi", "\u00e9", "", "z", "yy"))
  for (format in c(3L, 2L)) {
    root <- withr::local_tempdir()
    path <- file.path(root, "s.zarr")
    arr <- as_zarr(df, location = path, zarr_format = format)[["/"]]
    grid <- create_zarr(file.path(root, "g.zarr"), zarr_format = format)
    g <- grid$add_array("/", "g", define_array(struct_type(i = "int32", f = "float32"), c(3, 5)))
    g[1:2, 2:4] <- list(i = matrix(1:6, 2), f = matrix(c(0.5, 1.5, 2.5, 3.5, 4.5, 5.5), 2))
    readers <- if (format == 3L) "zarr34" else c("zarr34", "zarr218")
    for (writer in readers) {
      desc <- jsonlite::fromJSON(struct_py(writer, c("read", path)), simplifyVector = FALSE)
      expect_identical(desc$fields$a, list(-4L, 7L, -2147483648, 2L, 9L))
      expect_identical(desc$fields$b, list(0.5, 1.25, 2, "NaN", -3))
      expect_identical(unlist(desc$fields$c), df$c)
      expect_identical(unlist(desc$fields$u), df$u)
      expect_identical(py_expected(desc, 5), arr[])
      desc <- jsonlite::fromJSON(struct_py(writer, c("read", file.path(root, "g.zarr", "g"))),
                                 simplifyVector = FALSE)
      i <- matrix(as.numeric(unlist(desc$fields$i)), 3, 5, byrow = TRUE)
      expect_identical(i[1:2, 2:4], matrix(as.numeric(1:6), 2), label = sprintf("v%d in %s", format, writer))
      expect_identical(i[3, 1], -2147483648)
      expect_identical(py_expected(desc, c(3, 5)), g[])
    }
  }
})

# The int64 counts of a time field that struct_arrays.py read, as text
# (exact: JSON numbers would become doubles).
py_counts <- function(writer, path) {
  desc <- jsonlite::fromJSON(struct_py(writer, c("read", path)), simplifyVector = FALSE, bigint_as_char = TRUE)
  text <- function(x) if (is.numeric(x)) sprintf("%.0f", x) else x
  lapply(desc$fields, function(v) vapply(v, text, ""))
}

# POSIXct (UTC) of seconds since 1970, and difftime of seconds.
utc <- function(x) structure(x, class = c("POSIXct", "POSIXt"), tzone = "UTC")
secs <- function(x) structure(x, class = "difftime", units = "secs")

test_that("datetime64 and timedelta64 fields read as POSIXct and difftime, and are written from them", {
  arr <- create_zarr()$add_array("/", "t", define_array(
    struct_type(t = "datetime64[ns]", d = "timedelta64[10s]", x = "float64"), 3
  ))
  expect_identical(arr$data_type$fill_value, list(t = "NaT", d = "NaT", x = "NaN"))
  when <- utc(c(1588748889, NA, 0))
  arr[] <- data.frame(t = when, d = secs(c(-30, 50, NA)), x = 1:3 / 2)
  expect_identical(arr[], data.frame(t = when, d = secs(c(-30, 50, NA)), x = 1:3 / 2))
  # Date and POSIXlt are times too; plain numbers are seconds
  arr[2:3] <- list(t = as.Date(c("2000-03-01", NA)), d = c(7e9, 0))
  expect_identical(arr[2:3]$t, utc(c(951868800, NA)))
  expect_identical(arr[2:3]$d, secs(c(7e9, 0)))
  arr[3] <- list(t = as.POSIXlt("2001-02-03 04:05:06", tz = "UTC"))
  # (read as count x 1e-9 in double, as a datetime64[ns] array reads)
  expect_identical(arr[3]$t, utc(981173106e9 * 1e-9))
  # raw values: the stored counts, NaT (the fill value) as NA
  old <- options(zarr.cf_decode = FALSE)
  on.exit(options(old))
  raw <- arr[]
  expect_identical(as.character(raw$t), c("1588748889000000000", "951868800000000000", "981173106000000000"))
  expect_identical(as.character(raw$d), c("-3", "700000000", "0"))
  arr[1] <- list(d = bit64::as.integer64(4))
  options(old)
  expect_identical(arr[1]$d, secs(40))
  expect_error(arr[1] <- list(t = "2000-01-01"), "field 't'", class = "zarr_error_type")
  expect_error(arr[1] <- list(t = 1e300), "field 't'", class = "zarr_error_type")
})

test_that("as_zarr() stores POSIXct, Date and difftime columns as time fields", {
  df <- data.frame(at = utc(c(1.5, NA, -86400.25)), day = as.Date(c("1969-12-31", "2024-02-29", NA)),
                   took = secs(c(0.000001, 3600, NA)))
  arr <- as_zarr(df)[["/"]]
  types <- lapply(arr$metadata$data_type$configuration$fields, function(f) f$data_type)
  expect_identical(types[[1L]], list(name = "numpy.datetime64", configuration = list(unit = "us", scale_factor = 1L)))
  expect_identical(types[[2L]]$configuration$unit, "D")
  expect_identical(types[[3L]]$name, "numpy.timedelta64")
  want <- df
  want$day <- utc(c(-86400, 1709164800, NA)) # a Date reads back as its midnight
  expect_identical(arr[], want)
  # a 2-d array: one POSIXct array per time field
  g <- create_zarr()$add_array("/", "g", define_array(struct_type(t = "datetime64[s]"), c(2, 2)))
  g[] <- list(t = utc(matrix(c(1, NA, 3, 4), 2)))
  expect_identical(g[], list(t = utc(matrix(c(1, NA, 3, 4), 2))))
})

test_that("time fields zarr-python writes read as it reads them, and R's writes read exactly there", {
  stores <- list(zarr34 = c("v3_times", "v2_times34"), zarr218 = "v2_times")
  for (writer in names(stores)) {
    root <- withr::local_tempdir()
    struct_py(writer, c("write", root))
    for (name in stores[[writer]]) {
      path <- file.path(root, name)
      counts <- py_counts(writer, path)
      nat <- "-9223372036854775808"
      expect_identical(counts$t[2L], nat)
      # the seconds of each count, as Python's counts are: 1e-9 (ns) or
      # 1e-3 (ms) per step, 1 or 10 seconds per timedelta step
      step <- if (name == "v2_times") c(1e-3, 10) else c(1e-9, 1)
      expect_t <- utc(ifelse(counts$t == nat, NA, as.numeric(counts$t) * step[1L]))
      expect_d <- secs(ifelse(counts$d == nat, NA, as.numeric(counts$d) * step[2L]))
      arr <- open_zarr(path)[["/"]]
      got <- arr[]
      label <- sprintf("%s %s", writer, name)
      expect_identical(got, data.frame(t = expect_t, d = expect_d, x = c(1, 2, 3, 4)), label = label)
      # 1970-01-01 is a time, not the (zero) fill value
      expect_identical(as.numeric(got$t[3:4]), c(0, -0.5), label = label)
      # written back: NA is NaT, times in the field's own unit
      arr[c(1, 4)] <- data.frame(t = utc(c(NA, 1588748889)), d = secs(c(-20, NA)))
      readers <- if (name == "v3_times") "zarr34" else c("zarr34", "zarr218")
      per_step <- if (name == "v2_times") "1588748889000" else "1588748889000000000"
      for (reader in readers) {
        back <- py_counts(reader, path)
        expect_identical(back$t, c(nat, counts$t[2:3], per_step), label = paste(label, "read by", reader))
        expect_identical(back$d, c(if (name == "v2_times") "-2" else "-20", counts$d[2:3], nat),
                         label = paste(label, "read by", reader))
      }
    }
  }
})

test_that("nested fields and sub-array fields are written back in every form a read gives", {
  root <- withr::local_tempdir()
  struct_py("zarr34", c("write", root))
  path <- file.path(root, "v3_nested")
  arr <- open_zarr(path)[["/"]]
  df <- arr[]
  expect_identical(names(df), c("p.x", "p.y", "v"))
  # the read's columns, a nested list and a data.frame column
  arr[2:3] <- data.frame(p.x = c(20, 30), v = c(-1, -2), check.names = FALSE)
  arr[1] <- list(p = list(y = 9))
  arr[4] <- list(p = data.frame(x = 40, y = 44))
  df$p.x[2:4] <- c(20, 30, 40)
  df$p.y[c(1, 4)] <- c(9, 44)
  df$v[2:3] <- c(-1, -2)
  expect_identical(arr[], df)
  desc <- jsonlite::fromJSON(struct_py("zarr34", c("read", path)), simplifyVector = FALSE)
  expect_identical(py_expected(desc, 4), df)
  expect_identical(unlist(desc$fields$p.y), c(9, 6, 7, 44))

  root <- withr::local_tempdir()
  struct_py("zarr218", c("write", root))
  # nested, with a sub-array field read as a matrix column
  path <- file.path(root, "v2_nested")
  arr <- open_zarr(path)[["/"]]
  df <- arr[]
  expect_identical(df$m, matrix(1:6, 3, byrow = TRUE))
  df$m[2, ] <- c(-3L, -4L)
  df$p.y <- c(5L, NA, 7L)
  arr[] <- df
  # a list column: one element per record
  arr[c(1, 3)] <- list(m = list(c(10L, 11L), c(12L, 13L)))
  df$m[c(1, 3), ] <- matrix(10:13, 2, byrow = TRUE)
  expect_identical(arr[], df)
  desc <- jsonlite::fromJSON(struct_py("zarr218", c("read", path)), simplifyVector = FALSE)
  expect_identical(unlist(desc$fields$m), c(10L, 11L, -3L, -4L, 12L, 13L))
  expect_identical(unlist(desc$fields$p.y), c(5L, 0L, 7L)) # NA is the fill value, 0
  expect_identical(unlist(desc$fields$p.x), df$p.x)
  expect_error(arr[1:2] <- list(m = list(1:3, 1:2)), "field 'm'", class = "zarr_error_type")

  # a 2-d array (Fortran order) with a 2 x 3 sub-array field
  path <- file.path(root, "v2_sub")
  arr <- open_zarr(path)[["/"]]
  x <- arr[]
  expect_identical(dim(x$m), c(3L, 2L, 2L, 3L))
  x$m[2, 1, , ] <- matrix(-(1:6), 2)
  x$i[3, 2] <- 99L
  arr[] <- x
  expect_identical(arr[], x)
  desc <- jsonlite::fromJSON(struct_py("zarr218", c("read", path)), simplifyVector = FALSE)
  expect_identical(py_expected(desc, c(3, 2)), x)
})

test_that("time fields of struct arrays R makes read exactly in zarr-python 3.4 and 2.18", {
  df <- data.frame(at = utc(c(1.5, NA, 1588748889)), day = as.Date(c("1969-12-31", "2024-02-29", NA)),
                   took = secs(c(0.25, 3600, NA)))
  nat <- "-9223372036854775808"
  for (format in c(3L, 2L)) {
    path <- file.path(withr::local_tempdir(), "t.zarr")
    as_zarr(df, location = path, zarr_format = format)
    for (reader in if (format == 3L) "zarr34" else c("zarr34", "zarr218")) {
      got <- py_counts(reader, path)
      label <- sprintf("v%d read by %s", format, reader)
      expect_identical(got$at, c("1500000", nat, "1588748889000000"), label = label)
      expect_identical(got$day, c("-1", "19782", nat), label = label)
      expect_identical(got$took, c("250000", "3600000000", nat), label = label)
    }
  }
})
