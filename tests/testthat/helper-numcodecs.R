# The venvs of zarr-python 2.18 and 3.4 with numcodecs that test-numcodecs.R
# and test-zfp.R write and read arrays with. zfpy is pinned to 1.0.1: its
# 1.0.1.post0 breaks numcodecs' import. A venv that cannot import one of
# them (made before zfpy was added) is installed again.

numcodecs_writers <- list(
  zarr218 = list(python = c("python3.11", "python3.12", "python3"), min = "3.11",
                 pkgs = c("zarr==2.18.7", "numcodecs==0.15.2", "numpy<2.3", "zfpy==1.0.1")),
  # Last: without a Python 3.12, the tests skip once the 2.18 checks are done.
  zarr34 = list(python = c("python3.13", "python3.12", "python3"), min = "3.12",
                pkgs = c("zarr==3.4.2", "numcodecs==0.17.1", "numpy", "pcodec==1.1.0", "zfpy==1.0.1"))
)
numcodecs_cache <- new.env(parent = emptyenv())

# The first of `names` that runs and is Python `min` or later ("" if none):
# a pyenv shim of a version not selected is on the PATH but does not run.
numcodecs_base_python <- function(names, min) system_python(min, names)

# The Python of the venv of one writer, made on first use in
# ZARR_TEST_NUMCODECS_VENV (else the session's temporary folder).
python_numcodecs <- function(writer) {
  if (!python_tests_asked()) {
    testthat::skip("numcodecs interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(numcodecs_cache[[writer]])) return(numcodecs_cache[[writer]])
  w <- numcodecs_writers[[writer]]
  root <- Sys.getenv("ZARR_TEST_NUMCODECS_VENV", file.path(tempdir(), "zarr-numcodecs-venvs"))
  venv <- file.path(root, writer)
  py <- venv_python_path(venv)
  ok <- function() file.exists(py) && run_python_command(py, c("-c", "import zarr, numcodecs, zfpy"))$status == 0L
  if (!ok()) {
    base <- numcodecs_base_python(w$python, w$min)
    if (!nzchar(base)) testthat::skip(sprintf("no Python %s or later for %s", w$min, writer))
    dir.create(root, recursive = TRUE, showWarnings = FALSE)
    res <- run_python_command(base, c("-m", "venv", venv))
    if (res$status != 0L) stop(sprintf("could not create a venv in '%s':\n%s", venv, res$output), call. = FALSE)
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet", w$pkgs))
    if (res$status != 0L || !ok()) {
      stop(sprintf("could not install %s into '%s':\n%s", paste(w$pkgs, collapse = " "), venv, res$output),
           call. = FALSE)
    }
  }
  numcodecs_cache[[writer]] <- file.path(normalizePath(dirname(py)), basename(py))
  numcodecs_cache[[writer]]
}
