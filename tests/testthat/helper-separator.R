# The tests name chunk keys as zarr-python writes them ("c/0/0"), so they
# run with that separator. The package's default, "." (as in the manual and
# R-CF's zarr), is what test-store.R and test-resize.R check with
# `withr::local_options(zarr.chunk_separator = NULL)`, and what R-CF's own
# tests see.
options(zarr.chunk_separator = "/")
