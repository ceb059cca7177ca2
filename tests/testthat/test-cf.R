# CF decoding (R/cf.R, src/rust/src/cf.rs): xarray's encodings read as
# xarray.open_zarr() shows them.

# A v3 array in a memory store with `dimension_names` (as xarray writes
# every variable), zarr-python's default fill value 0 and `attrs`.
cf_array <- function(data_type, values, attrs = list(), fill = 0, dims = TRUE) {
  z <- create_zarr()
  b <- define_array(data_type, length(values))
  b$fill_value <- fill
  a <- z$add_array("/", "v", b)
  withr::with_options(list(zarr.cf_decode = FALSE), a[] <- values)
  # (as xarray writes them: no _FillValue unless asked for, which
  # add_array() gives every numeric v3 array that marks its fill as NA)
  a$delete_attribute("_FillValue")
  for (n in names(attrs)) a$set_attribute(n, attrs[[n]])
  if (dims) dimnames(a) <- list(x = NULL)
  z[["/v"]]
}

test_that("zero case: time step 0 reads as the reference date", {
  a <- cf_array("int64", c(0, 6, 12), list(units = "hours since 1990-01-01 00:00:00",
                                            calendar = "proleptic_gregorian"))
  expect_identical(as.vector(a[]), as.numeric(as.POSIXct("1990-01-01", tz = "UTC")) + c(0, 6, 12) * 3600)
  expect_s3_class(a[], "POSIXct")
  expect_identical(attr(a[], "tzone"), "UTC")
  expect_identical(format(a[1]), "1990-01-01")
})

test_that("zero case: a depth of 0 m reads as 0", {
  a <- cf_array("int32", c(0, 10, 20), list(units = "m"))
  expect_identical(as.vector(a[]), c(0L, 10L, 20L))
})

test_that("zero case: latitude and longitude 0 read as 0", {
  lat <- cf_array("float64", c(-10, 0, 10))
  expect_identical(as.vector(lat[]), c(-10, 0, 10))
  lon <- cf_array("int16", c(0, 90, 180, 270))
  expect_identical(as.vector(lon[]), c(0L, 90L, 180L, 270L))
})

test_that("zero case: a count of 0 reads as 0", {
  a <- cf_array("uint16", c(0, 3, 0, 7))
  expect_identical(as.vector(a[]), c(0L, 3L, 0L, 7L))
})

test_that("zero case: a packed value equal to add_offset reads as add_offset", {
  a <- cf_array("int16", c(0, 685, -32767),
                list(scale_factor = 0.01, add_offset = 273.15, `_FillValue` = -32767))
  expect_identical(as.vector(a[]), c(273.15, 685 * 0.01 + 273.15, NA))
})

test_that("arrays without CF attributes or dimension names keep the Zarr rule", {
  a <- cf_array("int32", c(0, 5), dims = FALSE)
  expect_identical(as.vector(a[]), c(NA, 5L))
})

test_that("_FillValue and missing_value mark NA in the forms xarray writes", {
  # float32 1e20 as xarray writes it into v3 attributes: base64 of a float64
  a <- cf_array("float32", c(1.5, 1e20, 0), list(`_FillValue` = "AAAAgB2vFUQ="), fill = "NaN")
  expect_identical(as.vector(a[]), c(1.5, NA, 0))
  a <- cf_array("float64", c(1, -999, NaN, 0), list(missing_value = -999))
  expect_identical(is.na(as.vector(a[])), c(FALSE, TRUE, TRUE, FALSE))
  a <- cf_array("int16", c(1, -9999), list(`_FillValue` = -9999))
  expect_identical(as.vector(a[]), c(1L, NA))
  bad <- cf_array("int16", c(1, 2), list(`_FillValue` = "%%"))
  expect_error(bad[], class = "zarr_error_metadata", regexp = "_FillValue")
})

test_that("the raw values are one option away", {
  a <- cf_array("int16", c(0, 685), list(scale_factor = 0.01, add_offset = 273.15))
  raw <- withr::with_options(list(zarr.cf_decode = FALSE), a[])
  # raw: the Zarr rule, under which 0 (the fill value) is NA
  expect_identical(as.vector(raw), c(NA, 685L))
  expect_identical(as.vector(a[]), c(273.15, 685 * 0.01 + 273.15))
})

test_that("other calendars read as the stored numbers with a zarr_warning_cf", {
  a <- cf_array("int32", c(0, 365), list(units = "days since 2000-01-01", calendar = "noleap"))
  expect_warning(x <- a[], class = "zarr_warning_cf", regexp = "noleap")
  expect_identical(as.vector(x), c(0L, 365L))
})

test_that("xarray's timedeltas and booleans", {
  a <- cf_array("int64", c(1, 0, -2), list(units = "hours", dtype = "timedelta64[ns]"))
  expect_s3_class(a[], "difftime")
  expect_identical(as.numeric(a[], units = "secs"), c(3600, 0, -7200))
  b <- cf_array("int8", c(1, 0, 1), list(dtype = "bool"))
  expect_identical(as.vector(b[]), c(TRUE, FALSE, TRUE))
})

test_that("print() says how an array is decoded, with its units", {
  a <- cf_array("int64", c(0, 6), list(units = "hours since 1990-01-01"))
  expect_output(print(a), "CF decoding: times (POSIXct, UTC), units 'hours since 1990-01-01'", fixed = TRUE)
  p <- cf_array("int16", 1, list(scale_factor = 0.5, `_FillValue` = -1))
  expect_output(print(p), "CF decoding: unpacked numbers, missing -1", fixed = TRUE)
  plain <- cf_array("int16", 1, dims = FALSE)
  expect_false(any(grepl("CF decoding", capture.output(print(plain)))))
})

test_that("writes through a CF variable encode, and refuse what the encoding cannot hold", {
  a <- cf_array("int16", c(0, 0, 0, 0), list(scale_factor = 0.5, add_offset = 10, `_FillValue` = -1))
  a[] <- c(10, 10.5, NA, 12)
  raw <- withr::with_options(list(zarr.cf_decode = FALSE), as.vector(a[]))
  expect_identical(raw, c(NA, 1L, -1L, 4L))
  expect_identical(as.vector(a[]), c(10, 10.5, NA, 12))
  expect_error(a[1] <- 1e6, class = "zarr_error_type")
  t <- cf_array("int64", c(0, 0), list(units = "hours since 1990-01-01"))
  t[] <- as.POSIXct(c("1990-01-02 00:00", "1990-01-01 03:00"), tz = "UTC")
  expect_identical(format(t[], "%Y-%m-%d %H:%M"), c("1990-01-02 00:00", "1990-01-01 03:00"))
  n <- cf_array("int32", c(1, 2))
  expect_error(n[1] <- NA, class = "zarr_error_type", regexp = "no _FillValue")
})

# A string array as other tools write it: fill value `fill`, dimension
# "x", CF attributes `attrs`, and `values` stored as they are.
cf_strings <- function(values, attrs, fill = "", zarr_format = 3L) {
  z <- create_zarr(zarr_format = zarr_format)
  b <- define_array("string", length(values))
  b$fill_value <- fill
  b$dimension_names <- "x"
  a <- z$add_array("/", "s", b)
  withr::with_options(list(zarr.cf_decode = FALSE), a[] <- values)
  for (n in names(attrs)) a$set_attribute(n, attrs[[n]])
  z[["/s"]]
}

test_that("missing_value and _FillValue of a string array mark NA, as xarray masks them", {
  v <- c("a", "N/A", "", "b", "zz")
  a <- cf_strings(v, list(missing_value = "N/A"))
  expect_identical(a[], c("a", NA, "", "b", "zz"))
  expect_output(print(a), "CF decoding: strings, missing \"N/A\"", fixed = TRUE)
  # (the stored strings are one option away, under the Zarr rule: a v3 fill value "" is text)
  expect_identical(withr::with_options(list(zarr.cf_decode = FALSE), a[]), v)
  expect_identical(cf_strings(v, list(`_FillValue` = "N/A"))[], c("a", NA, "", "b", "zz"))
  expect_identical(cf_strings(v, list(missing_value = c("N/A", "b")))[], c("a", NA, "", NA, "zz"))
  # a v3 fill value of its own is text, as in zarr-python and R-CF's zarr
  expect_identical(cf_strings(v, list(missing_value = "N/A"), fill = "zz")[], c("a", NA, "", "b", "zz"))
  expect_identical(cf_strings(v, list(), fill = "zz")[], v)
  # only the package's own fill value marks NA without CF attributes
  expect_identical(cf_strings(c("a", "\u2400"), list(), fill = "\u2400")[], c("a", NA))
  # v3 without them: "" (zarr-python's fill) and "N/A" are text
  expect_identical(cf_strings(v, list())[], v)
  # v2: the fill value is xarray's _FillValue, "" too
  expect_identical(cf_strings(v, list(missing_value = "N/A"), zarr_format = 2L)[], c("a", NA, NA, "b", "zz"))
  expect_identical(cf_strings(v, list(), zarr_format = 2L)[], c("a", "N/A", NA, "b", "zz"))
  # NA is written as the first marker, which reads back as NA in R and xarray
  a[2:3] <- c(NA, "c")
  expect_identical(a[], c("a", NA, "c", "b", "zz"))
  expect_identical(withr::with_options(list(zarr.cf_decode = FALSE), a[]), c("a", "N/A", "c", "b", "zz"))
  # this package's own arrays (fill U+2400, repeated as missing_value) are unchanged
  z <- create_zarr()
  own <- as_zarr(c("x", NA, ""), name = "own", location = z$root)
  expect_identical(z[["/own"]]$attributes$missing_value, "\u2400")
  expect_identical(z[["/own"]][], c("x", NA, ""))
})

test_that("NA into a CF string array with no string that reads as NA is refused, not stored as text", {
  v <- c("a", "N/A", "", "b", "zz")
  # v3, fill "" (text under CF), no missing_value: NA has no representation
  a <- cf_strings(v, list())
  expect_error(a[2:3] <- c("c", NA), class = "zarr_error_type", regexp = "'/s'.*value 2 is NA")
  # nothing was written
  expect_identical(a[], v)
  expect_error(a[] <- rep(NA_character_, 5), class = "zarr_error_type", regexp = "value 1 is NA")
  # strings without NA still write
  a[2] <- "y"
  expect_identical(a[], c("a", "y", "", "b", "zz"))
})

test_that("every variable xarray writes (zarr-python 3 and 2, v2 and v3, consolidated or not) reads as xarray shows it", {
  for (writer in c("zarr3", "zarr2")) {
    res <- xarray_read_all(writer)
    versions <- attr(res, "versions")
    # every store of the writer: v2 and v3 (zarr-python 3 only), consolidated or not
    xr <- paste0("xr-v", if (writer == "zarr3") c(2, 2, 3, 3) else c(2, 2), c("-c", "-n"), ".zarr")
    # (and zarr-python's own arrays; string arrays with CF missing values in both formats it writes)
    zp <- if (writer == "zarr3") c("zp-v3.zarr", "zp-cf-strings-v3.zarr") else "zp-v2.zarr"
    expect_setequal(unique(res$store), c(xr, zp, "zp-cf-strings-v2.zarr"))
    for (store in xr) expect_identical(sum(res$store == store), 26L, label = paste(store, "variables"))
    for (i in seq_len(nrow(res))) {
      expect_identical(res$diff[i], "", label = sprintf("%s %s (xarray %s, zarr %s)", res$store[i],
                                                       res$variable[i], versions$xarray, versions$zarr))
    }
    for (store in unique(res$store)) {
      message(sprintf("xarray %s + zarr-python %s, %s: %s variables read exactly", versions$xarray,
                      versions$zarr, store, xarray_count(res[res$store == store, ])))
    }
  }
})

test_that("as_zarr() names every dimension and writes the CF attributes xarray needs, in each format", {
  x <- r_variables()
  for (fmt in c(3L, 2L)) {
    z <- create_zarr(zarr_format = fmt)
    for (v in names(x)) as_zarr(x[[v]], name = v, location = z$root)
    meta <- function(v) z[[paste0("/", v)]]$metadata
    dims <- function(v) unlist(if (fmt == 3L) meta(v)$dimension_names else meta(v)$attributes[["_ARRAY_DIMENSIONS"]])
    expect_identical(dims("dbl"), c("lat", "lon"))
    expect_identical(dims("wide"), c("wide_dim_0", "wide_dim_1"))
    expect_identical(dims("when"), "when_dim_0")
    # R shows its own defaults as no name, so that as_zarr(x)[] is x
    expect_null(dimnames(z[["/wide"]]))
    expect_identical(names(dimnames(z[["/int"]])), c("lat", "lon"))
    fill <- function(v) meta(v)$attributes[["_FillValue"]]
    if (fmt == 3L) {
      # a NaN fill needs no _FillValue: xarray shows NaN as NaN anyway
      expect_null(fill("dbl"))
      expect_identical(fill("int"), -2147483648)
      expect_identical(fill("big"), -2^63)
    } else {
      # v2: xarray takes the Zarr fill value
      expect_null(fill("dbl"))
      expect_identical(meta("int")$fill_value, -2147483648)
      expect_null(meta("ok")$fill_value)
    }
    expect_null(fill("chr"))
    # strings: missing_value in v3 (xarray refuses a text _FillValue there)
    expect_identical(meta("chr")$attributes$missing_value, if (fmt == 3L) "\u2400")
    expect_identical(meta("fct")$attributes$missing_value, if (fmt == 3L) "\u2400")
    expect_identical(meta("when")$attributes$units, "seconds since 1970-01-01")
    expect_identical(meta("day")$attributes$units, "days since 1970-01-01")
    expect_identical(meta("day")$attributes$calendar, "proleptic_gregorian")
    expect_identical(meta("flag")$data_type, "int8")
    expect_identical(meta("ok")$data_type, "bool")
    expect_identical(meta("fct")$data_type, "string")
    for (v in names(x)) {
      expected <- if (is.logical(x[[v]])) x[[v]] else r_meant(x[[v]])
      expect_identical(z[[paste0("/", v)]][], expected, label = sprintf("v%d %s read back in R", fmt, v))
    }
  }
  expect_identical(as_zarr(matrix(1:6, 2))[["/"]]$metadata$dimension_names, list("dim_0", "dim_1"))
})

test_that("what R writes, xarray reads as R meant it (values, NA as NaN/NaT/missing, times, dimensions)", {
  x <- r_variables()
  for (writer in c("zarr3", "zarr2")) {
    for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
      res <- xarray_written_all(writer, fmt)
      versions <- attr(res, "versions")
      what <- sprintf("v%d (xarray %s, zarr %s)", fmt, versions$xarray, versions$zarr)
      expect_identical(res$variable, names(x))
      for (i in seq_len(nrow(res))) {
        v <- res$variable[i]
        expect_identical(res$dims[i], paste(unlist(cf_dimension_names(x[[v]], v)), collapse = ","),
                         label = paste(what, v, "dimensions"))
        # values and the NA mask: R's NA in strings and factors is missing in xarray too
        expect_identical(res$diff[i], "", label = paste(what, v))
      }
      # zarr-python's raw view of a string array: R's NA is the fill value,
      # U+2400, as stored (xarray masks it through the fill value in v2,
      # through missing_value in v3)
      raw <- attr(res, "raw")
      expect_identical(unlist(raw$chr$values), c("x", "\u2400", "", "\u00fc"), label = paste(what, "chr raw"))
      expect_identical(unlist(raw$fct$values), c("b", "\u2400", "a", "b"), label = paste(what, "fct raw"))
      expect_false(any(unlist(raw$chr$na)), label = paste(what, "chr raw NA"))
      message(sprintf("R -> xarray %s + zarr-python %s, Zarr v%d: %s variables as R meant them",
                      versions$xarray, versions$zarr, fmt, xarray_count(res)))
    }
  }
  # and R reads its NA back as NA, in both formats
  for (fmt in c(3L, 2L)) {
    z <- create_zarr(zarr_format = fmt)
    for (v in c("chr", "fct")) as_zarr(x[[v]], name = v, location = z$root)
    expect_identical(z[["/chr"]][], x$chr)
    expect_identical(z[["/fct"]][], as.character(x$fct))
    if (fmt == 3L) expect_identical(z[["/chr"]]$attributes, list(missing_value = "\u2400"))
  }
})

test_that("arrays made with define_array() and add_array() alone get dimension names, and xarray opens their store", {
  for (writer in c("zarr3", "zarr2")) {
    for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
      path <- withr::local_tempfile(fileext = ".zarr")
      z <- create_zarr(path, zarr_format = fmt)
      dbl <- define_array("float64", c(3, 4))
      dbl$chunk_shape <- c(2, 2)
      a <- z$add_array("/", "dbl", dbl)
      a[] <- matrix(c(0.5, -1, 0, 2:10), 3, 4)
      # the same builder for a second array: each gets its own names
      b <- z$add_array("/", "again", dbl)
      b[] <- matrix(1:12, 3, 4)
      i <- z$add_array("/", "int", define_array("int32", c(2, 3, 2)))
      i[] <- array(c(0L, -5L, 7L, .Machine$integer.max, 1:8), c(2, 3, 2))
      s <- z$add_array("/", "chr", define_array("string", 3))
      s[] <- c("x", "", "\u00fc")
      # names the caller gives are kept
      named <- define_array("float32", 2)$metadata()
      named$dimension_names <- list("lat")
      n <- z$add_array("/", "lat", named)
      n[] <- c(-45, 45)
      expect_identical(unlist(z[["/dbl"]]$metadata$dimension_names), c("dbl_dim_0", "dbl_dim_1"))
      expect_identical(unlist(z[["/again"]]$metadata$dimension_names), c("again_dim_0", "again_dim_1"))
      expect_null(dimnames(z[["/int"]]))
      expect_identical(names(dimnames(z[["/lat"]])), "lat")
      # the default names keep the Zarr rule: a 0 fill value still reads as NA
      zero <- define_array("int16", 2)
      zero$fill_value <- 0
      zr <- z$add_array("/", "zero", zero)
      zr[] <- c(0L, 3L)
      expect_identical(z[["/zero"]][], c(NA, 3L))
      seen <- xarray_view(writer, path)
      what <- sprintf("v%d (xarray %s, zarr %s)", fmt, seen[["_versions"]]$xarray, seen[["_versions"]]$zarr)
      for (v in c("dbl", "again", "int", "chr", "lat")) {
        e <- seen$variables[[v]]
        x <- z[[paste0("/", v)]][]
        dims <- if (v == "lat") "lat" else paste0(v, "_dim_", seq_along(dim(x) %||% 1L) - 1L)
        expect_identical(unlist(e$dims), dims, label = paste(what, v))
        expect_identical(xarray_compare(x, e), "", label = paste(what, v))
      }
    }
  }
})

test_that("promote() renumbers the default dimension names of add_array()", {
  z <- create_zarr()
  a <- z$add_array("/", "p", define_array("int32", c(2, 3)))
  a[] <- matrix(1:6, 2)
  a$promote(2)
  p <- z[["/p"]]
  expect_identical(unlist(p$metadata$dimension_names), c("p_dim_0", "p_dim_1", "p_dim_2"))
  expect_null(dimnames(p))
  expect_identical(p[], array(1:6, c(2, 1, 3)))
})

test_that("add_array() arrays of numeric types write R's NA so that xarray masks it, in v2 and v3", {
  types <- c("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32", "float64")
  values <- function(type) {
    x <- c(1, NA, 0, 7, NA)
    if (type == "int64") bit64::as.integer64(x) else if (startsWith(type, "float")) x + 0.5 else as.integer(x)
  }
  for (writer in c("zarr3", "zarr2")) {
    for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
      path <- withr::local_tempfile(fileext = ".zarr")
      z <- create_zarr(path, zarr_format = fmt)
      for (type in types) {
        a <- z$add_array("/", type, define_array(type, 5))
        a[] <- values(type)
      }
      # zarr-python's default fill: 0 marks NA in R (the Zarr rule), in xarray too
      zero <- define_array("int16", 3)
      zero$fill_value <- 0
      a <- z$add_array("/", "zero", zero)
      a[] <- c(0L, 5L, NA)
      fill <- z[["/int32"]]$attributes[["_FillValue"]]
      if (fmt == 3L) {
        # the intended new attribute: xarray masks a v3 fill value only through it
        expect_identical(fill, -2147483648)
        # (none for a NaN fill: those elements are NaN in xarray anyway)
        expect_null(z[["/float64"]]$attributes[["_FillValue"]])
        expect_identical(z[["/zero"]]$attributes[["_FillValue"]], 0L)
      } else {
        expect_null(fill)
      }
      seen <- xarray_view(writer, path)
      what <- sprintf("v%d (xarray %s, zarr %s)", fmt, seen[["_versions"]]$xarray, seen[["_versions"]]$zarr)
      for (v in c(types, "zero")) {
        x <- z[[paste0("/", v)]][]
        e <- seen$variables[[v]]
        expect_identical(unlist(e$na), as.vector(is.na(x)), label = paste(what, v, "NA"))
        expect_identical(xarray_compare(x, e), "", label = paste(what, v))
      }
      expect_identical(unlist(seen$variables$zero$na), c(TRUE, FALSE, TRUE))
    }
  }
})

test_that("promote() and dimnames<- keep every dimension named, and xarray opens the store", {
  for (writer in c("zarr3", "zarr2")) {
    for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
      path <- withr::local_tempfile(fileext = ".zarr")
      z <- create_zarr(path, zarr_format = fmt)
      p <- z$add_array("/", "p", define_array("float64", c(2, 3)))
      p[] <- matrix(c(1.5, NA, 0, 2:4), 2)
      dimnames(p) <- list(lat = NULL, lon = NULL)
      p$promote(1)
      q <- z$add_array("/", "q", define_array("int32", c(2, 3)))
      q[] <- matrix(c(1L, NA, 0L, 2:4), 2)
      dimnames(q) <- list(lat = NULL, lon = NULL)
      dimnames(q) <- NULL
      r <- z$add_array("/", "r", define_array("int32", 4))
      dimnames(r) <- list(NULL)
      r[] <- 1:4
      s <- z$add_array("/", "s", define_array("int32", c(2, 2)))
      dimnames(s) <- list(NULL, lon2 = NULL)
      s[] <- matrix(1:4, 2)
      z <- open_zarr(path)
      names_of <- function(v) {
        m <- z[[paste0("/", v)]]$metadata
        unlist(if (fmt == 3L) m$dimension_names else m$attributes[["_ARRAY_DIMENSIONS"]])
      }
      expect_identical(names_of("p"), c("p_dim_0", "lat", "lon"))
      expect_identical(names(dimnames(z[["/p"]])), c("", "lat", "lon"))
      expect_identical(z[["/p"]][], array(c(1.5, NA, 0, 2:4), c(1, 2, 3), dimnames = list(NULL, lat = NULL, lon = NULL)))
      expect_identical(names_of("q"), c("q_dim_0", "q_dim_1"))
      expect_null(dimnames(z[["/q"]]))
      expect_identical(names_of("r"), "r_dim_0")
      expect_identical(names_of("s"), c("s_dim_0", "lon2"))
      seen <- xarray_view(writer, path)
      what <- sprintf("v%d (xarray %s, zarr %s)", fmt, seen[["_versions"]]$xarray, seen[["_versions"]]$zarr)
      for (v in c("p", "q", "r", "s")) {
        e <- seen$variables[[v]]
        expect_identical(unlist(e$dims), names_of(v), label = paste(what, v))
        expect_identical(xarray_compare(z[[paste0("/", v)]][], e), "", label = paste(what, v))
      }
    }
  }
})

test_that("writes into zarr-python 3's NumPy data types (datetime64, timedelta64, <U, |S) read back in zarr-python", {
  stores <- xarray_stores("zarr3")
  path <- withr::local_tempfile(fileext = ".zarr")
  dir.create(path)
  file.copy(list.files(file.path(stores$dir, "zp-v3.zarr"), full.names = TRUE), path, recursive = TRUE)
  z <- open_zarr(path)
  when <- as.POSIXct(c("2020-02-29 23:59:59", NA, "1900-01-01 00:00:01"), tz = "UTC")
  z[["/dt_s"]][] <- when
  z[["/td_ms"]][] <- as.difftime(c(-1.5, NA, 3600.25), units = "secs")
  z[["/u5"]][] <- c("\u00e9t\u00e9", "", "abcde")
  z[["/s4"]][] <- c("wxyz", "a", "")
  z <- open_zarr(path)
  expect_identical(z[["/dt_s"]][], when)
  expect_identical(z[["/u5"]][], c("\u00e9t\u00e9", "", "abcde"))
  expect_error(z[["/u5"]][1] <- "abcdef", class = "zarr_error_type")
  py <- python_xarray("zarr3")
  script <- withr::local_tempfile(fileext = ".py")
  writeLines(c(
    "import sys, zarr, numpy as np",
    "g = zarr.open_group(sys.argv[1], mode='r')",
    "print(g['dt_s'].dtype, [int(x) for x in g['dt_s'][...].astype('int64')])",
    "print(g['td_ms'].dtype, [int(x) for x in g['td_ms'][...].astype('int64')])",
    "print(g['u5'].dtype, [s.encode('unicode_escape').decode() for s in g['u5'][...]])",
    "print(g['s4'].dtype, [s.decode() for s in g['s4'][...]])"
  ), script)
  res <- run_python_command(py, c(script, path))
  expect_identical(res$status, 0L, info = res$output)
  nat <- "-9223372036854775808"
  expect_identical(strsplit(res$output, "\n")[[1L]], c(
    sprintf("datetime64[s] [%s, %s, %s]", format(as.numeric(when[1]), scientific = FALSE), nat,
            format(as.numeric(when[3]), scientific = FALSE)),
    sprintf("timedelta64[ms] [-1500, %s, 3600250]", nat),
    "<U5 ['\\\\xe9t\\\\xe9', '', 'abcde']",
    "|S4 ['wxyz', 'a', '']"
  ))
})

test_that("v2 object (string) arrays compressed with blosc read with zarr-python 2's fill value 0, null or \"\"", {
  # xarray's default for v2 strings: vlen-utf8 then blosc, whose .zarray
  # entry has no item size (an object element has none): blosc gets 1
  path <- withr::local_tempfile(fileext = ".zarr")
  z <- create_zarr(path, zarr_format = 2)
  b <- define_array("string", 3)
  b$remove_codec("zstd")
  b$add_codec("blosc", list(cname = "lz4", clevel = 5L))
  s <- z$add_array("/", "s", b)
  s[] <- c("abc", "", "\u00e9t\u00e9")
  zarray <- file.path(path, "s", ".zarray")
  doc <- jsonlite::fromJSON(zarray, simplifyVector = FALSE)
  expect_identical(c(doc$dtype, doc$compressor$id), c("|O", "blosc"))
  expect_null(doc$compressor$typesize)
  for (fill in list(0L, NULL, "")) {
    doc["fill_value"] <- list(fill)
    writeLines(jsonlite::toJSON(doc, auto_unbox = TRUE, null = "null"), zarray)
    got <- open_zarr(path)[["/s"]][]
    # a fill of "" marks "" as NA (so does xarray, which masks the v2 fill)
    expect_identical(got, c("abc", if (identical(fill, "")) NA else "", "\u00e9t\u00e9"),
                     label = paste("fill", deparse(fill)))
  }
})
