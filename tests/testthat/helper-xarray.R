# xarray for the CF tests: two virtual environments, one with xarray and
# zarr-python 3 (it writes Zarr v3 and v2) and one with xarray and
# zarr-python 2.18 (v2 only, as most stores in the wild were written).
# They live in ZARR_TEST_XARRAY_VENV (two folders below it), else in the
# session's temporary folder, and are made on first use the way
# helper-python.R makes its venv: a test is skipped only when no Python
# 3.11+ is found, and a failing pip install fails it. Like the zarr-python
# tests they run only when asked (python_tests_asked(): `make test` asks).

xarray_writers <- list(
  zarr3 = c("xarray>=2025.1", "zarr==3.1.6", "numpy", "pandas"),
  zarr2 = c("xarray>=2025.1,<2026.3", "zarr==2.18.7", "numcodecs<0.16", "numpy", "pandas")
)

xarray_cache <- new.env(parent = emptyenv())

# The Python of the venv for one writer ("zarr3" or "zarr2").
python_xarray <- function(writer) {
  if (!python_tests_asked()) {
    testthat::skip("xarray interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(xarray_cache[[writer]])) return(xarray_cache[[writer]])
  root <- Sys.getenv("ZARR_TEST_XARRAY_VENV", "")
  if (!nzchar(root)) root <- file.path(tempdir(), "zarr-xarray-venvs")
  venv <- file.path(root, writer)
  py <- venv_python_path(venv)
  ok <- function() file.exists(py) && run_python_command(py, c("-c", "import xarray, zarr, pandas"))$status == 0L
  if (!ok()) {
    base <- system_python()
    if (!nzchar(base)) testthat::skip("Python 3.11 or later (python3) is not available: xarray interoperability is not tested")
    dir.create(root, recursive = TRUE, showWarnings = FALSE)
    if (!file.exists(py)) {
      res <- run_python_command(base, c("-m", "venv", venv))
      if (res$status != 0L) stop(sprintf("could not create a venv in '%s':\n%s", venv, res$output), call. = FALSE)
    }
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    xarray_writers[[writer]]))
    if (res$status != 0L || !ok()) {
      stop(sprintf("could not install %s into '%s':\n%s", paste(xarray_writers[[writer]], collapse = " "),
                   venv, res$output), call. = FALSE)
    }
  }
  xarray_cache[[writer]] <- file.path(normalizePath(dirname(py)), basename(py))
  xarray_cache[[writer]]
}

# The stores of tests/testthat/xarray_datasets.py for one writer, written
# once per session: list(dir, expected).
xarray_stores <- function(writer) {
  key <- paste0("stores_", writer)
  if (!is.null(xarray_cache[[key]])) return(xarray_cache[[key]])
  py <- python_xarray(writer)
  dir <- file.path(tempdir(), paste0("xarray-", writer))
  unlink(dir, recursive = TRUE)
  script <- testthat::test_path("xarray_datasets.py")
  res <- run_python_command(py, c(script, dir))
  if (res$status != 0L) stop(sprintf("xarray_datasets.py failed:\n%s", res$output), call. = FALSE)
  expected <- jsonlite::fromJSON(file.path(dir, "expected.json"), simplifyVector = FALSE)
  xarray_cache[[key]] <- list(dir = dir, expected = expected)
  xarray_cache[[key]]
}

# An R value flattened in C order (xarray's), as a plain vector.
c_order <- function(x) {
  d <- dim(x)
  if (length(d) > 1L) x <- aperm(x, rev(seq_along(d)))
  cls <- oldClass(x)
  out <- as.vector(unclass(x))
  if (inherits(x, "integer64")) class(out) <- "integer64"
  attr(out, "xr_class") <- cls
  out
}

# Whether R's value `x` is xarray's decoded variable `e` (see
# xarray_datasets.py): the same missing elements and the same values
# elsewhere. Returns "" when it is, else what differs.
xarray_compare <- function(x, e) {
  na <- unlist(e$na)
  if (!identical(as.numeric(dim(x) %||% length(x)), as.numeric(unlist(e$shape)))) {
    return(sprintf("shape %s, xarray %s", paste(dim(x) %||% length(x), collapse = "x"),
                   paste(unlist(e$shape), collapse = "x")))
  }
  v <- c_order(x)
  if (!identical(as.logical(is.na(v)), na)) {
    return(sprintf("NA at %s, xarray at %s", paste(which(is.na(v)), collapse = ","), paste(which(na), collapse = ",")))
  }
  vals <- e$values[!na]
  v <- v[!na]
  same <- switch(e$kind,
    # (an integer variable with a _FillValue stays integer in R, with NA)
    f = (is.double(x) || is.integer(x)) && identical(as.numeric(v), as.numeric(unlist(vals))),
    c = is.complex(x) && identical(v, complex(real = as.numeric(vapply(vals, `[[`, "", 1L)),
                                              imaginary = as.numeric(vapply(vals, `[[`, "", 2L)))),
    i = , u = !is.double(x) || inherits(x, "integer64") || all(abs(v) < 2^53),
    b = is.logical(x) && identical(v, unlist(vals)),
    S = , U = , O = , T = is.character(x) && identical(enc2utf8(v), enc2utf8(unlist(vals, use.names = FALSE) %||% character(0))),
    M = inherits(x, "POSIXct") && identical(round(as.numeric(v) * 1e6), round(as.numeric(unlist(vals)) / 1e3)),
    m = inherits(x, "difftime") &&
      identical(round(as.numeric(v, units = "secs") * 1e6), round(as.numeric(unlist(vals)) / 1e3)),
    FALSE
  )
  if (e$kind %in% c("i", "u") && same) {
    txt <- if (inherits(x, "integer64")) as.character(v) else format(as.numeric(v), scientific = FALSE, trim = TRUE)
    same <- identical(txt, unlist(vals, use.names = FALSE) %||% character(0))
  }
  if (same) "" else sprintf("values differ (R %s: %s; xarray: %s)", class(x)[1L],
                            paste(utils::head(format(v), 4L), collapse = " "),
                            paste(utils::head(unlist(vals), 4L), collapse = " "))
}

# What xarray.open_zarr() (under `writer`) shows of the store at `path`,
# as xarray_datasets.py --read describes it: list(variables, sizes).
xarray_view <- function(writer, path) {
  py <- python_xarray(writer)
  out <- tempfile(fileext = ".json")
  res <- run_python_command(py, c(testthat::test_path("xarray_datasets.py"), "--read", path, out))
  if (res$status != 0L) stop(sprintf("xarray could not open '%s':\n%s", path, res$output), call. = FALSE)
  jsonlite::fromJSON(out, simplifyVector = FALSE)
}

# How each variable of the stores xarray_datasets.py writes under
# `writer` reads here, compared with what xarray shows: a data frame of
# store, variable and diff ("" where R reads exactly what xarray shows,
# else what differs, or the error of the read); the writer's versions in
# attribute "versions". test-cf.R asserts it, bench/xarray_count.R counts.
xarray_read_all <- function(writer) {
  stores <- xarray_stores(writer)
  rows <- list()
  for (store in setdiff(names(stores$expected), "_versions")) {
    z <- open_zarr(file.path(stores$dir, store))
    expected <- stores$expected[[store]]
    for (v in names(expected)) {
      x <- tryCatch(z[[paste0("/", v)]][], error = function(e) e)
      diff <- if (inherits(x, "error")) conditionMessage(x) else xarray_compare(x, expected[[v]])
      rows[[length(rows) + 1L]] <- data.frame(store = store, variable = v, diff = diff)
    }
  }
  structure(do.call(rbind, rows), versions = stores$expected[["_versions"]])
}

# What xarray (under `writer`) shows of each variable of r_variables()
# that as_zarr() writes into a new Zarr v`fmt` store, compared with what R
# meant: a data frame of variable, dims (xarray's dimension names, joined
# by ",") and diff ("" where xarray shows what R meant); the versions in
# attribute "versions" and zarr-python's view of the arrays in "raw".
xarray_written_all <- function(writer, fmt) {
  x <- r_variables()
  path <- tempfile(fileext = ".zarr")
  on.exit(unlink(path, recursive = TRUE))
  z <- create_zarr(path, zarr_format = fmt)
  for (v in names(x)) as_zarr(x[[v]], name = v, location = z$root)
  seen <- xarray_view(writer, path)
  rows <- lapply(names(x), function(v) {
    e <- seen$variables[[v]]
    data.frame(variable = v, dims = paste(unlist(e$dims), collapse = ","),
               diff = xarray_compare(r_meant(x[[v]]), e))
  })
  structure(do.call(rbind, rows), versions = seen[["_versions"]], raw = seen$raw)
}

# "<n> of <total>" and the variables that differ, for reports.
xarray_count <- function(res) {
  ok <- !nzchar(res$diff)
  sprintf("%d of %d%s", sum(ok), length(ok),
          if (all(ok)) "" else paste0(" (not: ", paste(res$variable[!ok], collapse = ", "), ")"))
}

# R values of every kind as_zarr() writes, with NA in each that has one;
# dbl and int share the named dimensions lat and lon, wide and tall have
# none (and other extents along their first dimension).
r_variables <- function() {
  t0 <- as.numeric(as.POSIXct("2000-01-01 12:00:00.25", tz = "UTC"))
  list(
    dbl = array(c(1.5, NA, -2, 0, 1e10, -0.125), c(2, 3), dimnames = list(lat = NULL, lon = NULL)),
    int = array(c(0L, NA, 3L, -7L, .Machine$integer.max, 1L), c(2, 3), dimnames = list(lat = NULL, lon = NULL)),
    wide = matrix(c(0.5, 1:9), 5, 2),
    tall = matrix(c(1:9, NA), 2, 5),
    when = .POSIXct(c(t0, NA, t0 + 3600.5, -14182940), tz = "UTC"),
    day = as.Date(c("1970-01-01", NA, "2024-02-29", "1900-03-01")),
    flag = c(TRUE, NA, FALSE),
    ok = c(TRUE, FALSE, TRUE),
    fct = factor(c("b", NA, "a", "b")),
    chr = c("x", NA, "", "\u00fc"),
    big = bit64::as.integer64(c(1, NA, -5))
  )
}

# What R means by `x`, in xarray's terms: Dates are times at midnight UTC,
# factors their labels, a logical with NA masked 0/1.
r_meant <- function(x) {
  if (inherits(x, "Date")) return(.POSIXct(unclass(x) * 86400, tz = "UTC"))
  if (is.factor(x)) return(as.character(x))
  if (is.logical(x) && anyNA(x)) return(as.integer(x))
  x
}
