# How many variables of the xarray interop datasets (tests/testthat/
# xarray_datasets.py) this package reads exactly as xarray.open_zarr()
# shows them, per writer (zarr-python 3, zarr-python 2.18), Zarr format and
# store; and how many variables R writes (as_zarr()) xarray reads as R
# meant them. The comparisons are those of test-cf.R (the functions of
# tests/testthat/helper-xarray.R), counted.
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
  res <- xarray_read_all(writer)
  v <- attr(res, "versions")
  for (store in unique(res$store)) {
    cat(sprintf("read  xarray %s + zarr-python %s, %-13s %s exactly\n", v$xarray, v$zarr, store,
                xarray_count(res[res$store == store, ])))
  }
}
for (writer in c("zarr3", "zarr2")) {
  for (fmt in if (writer == "zarr3") c(3L, 2L) else 2L) {
    res <- xarray_written_all(writer, fmt)
    v <- attr(res, "versions")
    cat(sprintf("write R -> xarray %s + zarr-python %s, Zarr v%d: %s as R meant them\n",
                v$xarray, v$zarr, fmt, xarray_count(res)))
  }
}
