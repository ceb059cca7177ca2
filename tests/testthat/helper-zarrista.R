# zarrista 0.1 (zarrs' Python binding) for test-packbits.R: zarrs is the
# implementation of the registry's packbits codec that other tools meet
# (zarr-python 3.4 and numcodecs do not have it). Installed from PyPI on
# first use into a venv in ZARR_TEST_ZARRISTA_VENV, else the session's
# temporary folder; run only when Python tests are asked, as the others.

zarrista_cache <- new.env(parent = emptyenv())

python_zarrista <- function() {
  if (!python_tests_asked()) {
    testthat::skip("zarrs interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(zarrista_cache$py)) return(zarrista_cache$py)
  venv <- Sys.getenv("ZARR_TEST_ZARRISTA_VENV", file.path(tempdir(), "zarr-zarrista-venv"))
  py <- venv_python_path(venv)
  ok <- function() file.exists(py) && run_python_command(py, c("-c", "import zarrista, numpy"))$status == 0L
  if (!ok()) {
    base <- system_python("3.11", c("python3.13", "python3.12", "python3.11", "python3"))
    if (!nzchar(base)) testthat::skip("zarrista needs Python 3.11 or later")
    res <- run_python_command(base, c("-m", "venv", venv))
    if (res$status != 0L) stop(sprintf("could not create a venv in '%s':\n%s", venv, res$output), call. = FALSE)
    pkgs <- c("zarrista==0.1.0", "numpy")
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet", pkgs))
    if (res$status != 0L || !ok()) {
      stop(sprintf("could not install zarrista into '%s':\n%s", venv, res$output), call. = FALSE)
    }
  }
  zarrista_cache$py <- file.path(normalizePath(dirname(py)), basename(py))
  zarrista_cache$py
}

# Run packbits_arrays.py with `args`; its JSON output parsed.
zarrista_run <- function(args) {
  res <- run_python_command(python_zarrista(), c(testthat::test_path("packbits_arrays.py"), args))
  if (res$status != 0L) stop(sprintf("packbits_arrays.py failed:\n%s", res$output), call. = FALSE)
  jsonlite::fromJSON(res$output, simplifyVector = TRUE)
}
