# Where the shared fixtures are: ZARR_SHARED_DIR, or ../shared beside the
# package source. Tests that need them skip when they are absent (a user's
# clone has no ../shared).
shared_dir <- function() {
  env <- Sys.getenv("ZARR_SHARED_DIR", "")
  candidates <- c(env, file.path(testthat::test_path(), "..", "..", "..", "shared"))
  for (c in candidates[nzchar(candidates)]) {
    if (dir.exists(file.path(c, "fixtures"))) return(normalizePath(c))
  }
  NULL
}

skip_if_no_shared <- function() {
  if (is.null(shared_dir())) testthat::skip("../shared (fixtures) is not available")
}

# A fresh folder for a store, removed when the calling test ends.
local_store_path <- function(env = parent.frame()) {
  path <- tempfile(fileext = ".zarr")
  withr::defer(unlink(path, recursive = TRUE), envir = env)
  path
}
