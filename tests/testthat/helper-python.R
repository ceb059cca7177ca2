# zarr-python 3 for the interoperability tests. A virtual environment with
# zarr (>= 3) and numpy is created on first use and reused afterwards: it
# lives in ZARR_TEST_VENV (the Makefile points it at .venv in the package
# source, which git ignores), else in the session's temporary folder.
#
# These tests install zarr-python from PyPI, so they run only when asked:
# ZARR_TEST_PYTHON=true or NOT_CRAN=true (`make test` sets both); CRAN's
# checks and offline installs skip them. When asked, they are skipped only
# when no Python 3.11+ (the oldest Python zarr-python 3 supports) is found.
# When Python is there but the venv or the pip install fails, the test fails
# with pip's output: CI reaches PyPI, and a skip would hide a broken test.

python_venv_dir <- function() {
  dir <- Sys.getenv("ZARR_TEST_VENV", "")
  if (!nzchar(dir)) dir <- file.path(tempdir(), "zarr-venv")
  dir
}

venv_python_path <- function(venv) {
  if (.Platform$OS.type == "windows") file.path(venv, "Scripts", "python.exe") else file.path(venv, "bin", "python")
}

# Run a command; list(status, output) with stdout and stderr merged.
# LD_LIBRARY_PATH is unset for the child: R puts its own library folders
# (with the system's, e.g. /usr/lib/x86_64-linux-gnu) in front of it, so a
# Python built with a shared libpython (pyenv's) would load the system's
# libpython of another patch release and fail to import modules such as
# _ssl, breaking pip.
run_python_command <- function(cmd, args) {
  out <- withr::with_envvar(c(LD_LIBRARY_PATH = NA), {
    suppressWarnings(system2(cmd, shQuote(args), stdout = TRUE, stderr = TRUE))
  })
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, output = paste(out, collapse = "\n"))
}

# The system Python, or "" when there is none fit for zarr-python 3.
# The first of the Python commands `names` that is at least version `min`,
# or "" (zarr-python 3.4 and icechunk need 3.12, which pyenv may offer as
# python3.12 beside an older python3).
system_python <- function(min = "3.11", names = c("python3", "python")) {
  for (name in names) {
    py <- Sys.which(name)
    if (!nzchar(py)) next
    ver <- tryCatch(run_python_command(py, c("-c", "import sys; print('%d.%d' % sys.version_info[:2])")),
                    error = function(e) list(status = 1L))
    if (ver$status == 0L && package_version(trimws(ver$output)) >= min) return(unname(py))
  }
  ""
}

venv_has_zarr <- function(py) {
  file.exists(py) &&
    run_python_command(py, c("-c", "import numpy, zarr; assert int(zarr.__version__.split('.')[0]) >= 3"))$status == 0L
}

python_cache <- new.env(parent = emptyenv())

python_tests_asked <- function() {
  env <- tolower(Sys.getenv(c("ZARR_TEST_PYTHON", "NOT_CRAN"), ""))
  any(env %in% c("true", "1", "yes"))
}

# The path of a Python interpreter that can import zarr >= 3 and numpy.
python_zarr <- function() {
  if (!python_tests_asked()) {
    testthat::skip("zarr-python interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(python_cache$python)) return(python_cache$python)
  venv <- python_venv_dir()
  py <- venv_python_path(venv)
  if (!venv_has_zarr(py)) {
    base <- system_python()
    if (!nzchar(base)) {
      testthat::skip("Python 3.11 or later (python3) is not available: zarr-python interoperability is not tested")
    }
    if (!file.exists(py)) {
      res <- run_python_command(base, c("-m", "venv", venv))
      if (res$status != 0L || !file.exists(py)) {
        stop(sprintf("could not create a Python venv in '%s' with %s:\n%s", venv, base, res$output), call. = FALSE)
      }
    }
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    "zarr>=3", "numpy"))
    if (res$status != 0L || !venv_has_zarr(py)) {
      stop(sprintf("could not install zarr-python (zarr>=3, numpy) into the venv '%s':\n%s", venv, res$output),
           call. = FALSE)
    }
  }
  # the venv folder made absolute, not the link: resolved, it is the base interpreter
  python_cache$python <- file.path(normalizePath(dirname(py)), basename(py))
  python_cache$python
}

# zarr-python 3.4 with cast-value-rs (which its scale_offset and cast_value
# codecs need): the venv of test-scale_offset.R and test-chunk_grid.R, made
# on first use in ZARR_TEST_CAST_VENV, and only when Python tests are asked.
cast_venv_cache <- new.env(parent = emptyenv())

python_cast <- function() {
  if (!python_tests_asked()) {
    testthat::skip("zarr-python interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!is.null(cast_venv_cache$py)) return(cast_venv_cache$py)
  venv <- Sys.getenv("ZARR_TEST_CAST_VENV", file.path(tempdir(), "zarr-cast-venv"))
  py <- venv_python_path(venv)
  ok <- function() file.exists(py) && run_python_command(py, c("-c", "import zarr, cast_value_rs"))$status == 0L
  if (!ok()) {
    base <- system_python("3.12", c("python3.13", "python3.12", "python3"))
    if (!nzchar(base)) testthat::skip("zarr-python 3.4 needs Python 3.12 or later")
    res <- run_python_command(base, c("-m", "venv", venv))
    if (res$status != 0L) stop(sprintf("could not create a venv in '%s':\n%s", venv, res$output), call. = FALSE)
    pkgs <- c("zarr==3.4.2", "numpy", "cast-value-rs==0.5.1")
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet", pkgs))
    if (res$status != 0L || !ok()) {
      stop(sprintf("could not install zarr-python into '%s':\n%s", venv, res$output), call. = FALSE)
    }
  }
  cast_venv_cache$py <- py
  py
}
