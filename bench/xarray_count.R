# How many variables of the xarray interop datasets (tests/testthat/
# xarray_datasets.py) this package reads exactly as xarray.open_zarr()
# shows them, per writer (zarr-python 3, zarr-python 2.18), Zarr format and
# store; and how many variables R writes (as_zarr()) xarray reads as R
# meant them. The same datasets and comparison as test-cf.R, counted.
# Needs the venvs of tests/testthat/helper-xarray.R
# (ZARR_TEST_XARRAY_VENV) and ZARR_TEST_PYTHON=true.
#   Rscript bench/xarray_count.R
suppressMessages({
  library(zarr)
  library(testthat)
})
`%||%` <- function(a, b) if (is.null(a)) b else a
for (h in c("helper-python.R", "helper-xarray.R")) source(file.path("tests", "testthat", h))
test_path <- function(...) file.path("tests", "testthat", ...)
for (writer in c("zarr3", "zarr2")) {
  stores <- xarray_stores(writer)
  versions <- stores$expected[["_versions"]]
  for (store in setdiff(names(stores$expected), "_versions")) {
    z <- open_zarr(file.path(stores$dir, store))
    expected <- stores$expected[[store]]
    ok <- vapply(names(expected), function(v) {
      x <- tryCatch(z[[paste0("/", v)]][], error = function(e) e)
      !inherits(x, "error") && identical(xarray_compare(x, expected[[v]]), "")
    }, logical(1))
    cat(sprintf("read  xarray %s + zarr-python %s, %-14s %2d / %2d exactly%s\n", versions$xarray, versions$zarr,
                store, sum(ok), length(ok), if (all(ok)) "" else paste0(" (not: ", paste(names(ok)[!ok], collapse = ", "), ")")))
  }
}
x <- r_variables()
for (writer in c("zarr3", "zarr2")) {
  for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
    path <- tempfile(fileext = ".zarr")
    z <- create_zarr(path, zarr_format = fmt)
    for (v in names(x)) as_zarr(x[[v]], name = v, location = z$root)
    seen <- xarray_view(writer, path)
    ok <- vapply(names(x), function(v) {
      meant <- r_meant(x[[v]])
      identical(xarray_compare(meant, seen$variables[[v]]), "")
    }, logical(1))
    cat(sprintf("write R -> xarray %s + zarr-python %s, Zarr v%d: %2d / %2d as R meant them%s\n",
                seen[["_versions"]]$xarray, seen[["_versions"]]$zarr, fmt, sum(ok), length(ok),
                if (all(ok)) "" else paste0(" (not: ", paste(names(ok)[!ok], collapse = ", "), ")")))
    unlink(path, recursive = TRUE)
  }
}
