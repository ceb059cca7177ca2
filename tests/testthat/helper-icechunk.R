# icechunk-python 2.3 for the Icechunk tests: it writes the repositories
# R reads (tests/testthat/icechunk_repos.py) and reads back what R commits.
# It is installed from PyPI on first use into a venv of its own, in
# ZARR_TEST_ICECHUNK_VENV (the Makefile points it at .venv-icechunk), else
# in the session's temporary folder.
#
# As the zarr-python tests, these run only when asked (ZARR_TEST_PYTHON=true
# or NOT_CRAN=true) and are skipped without Python 3.11+; a failing pip
# install fails the test with pip's output.

# /temp of the test repositories (icechunk_repos.py) on main, and at the
# first commit (tag v1; the branch dev holds it times 10).
temp_main <- matrix(0:23, 6, 4, byrow = TRUE) + 100L
temp_first <- matrix(0:23, 6, 4, byrow = TRUE)

icechunk_requirements <- c("icechunk>=2.3,<2.4", "zarr>=3", "numpy")

icechunk_venv_dir <- function() {
  dir <- Sys.getenv("ZARR_TEST_ICECHUNK_VENV", "")
  if (!nzchar(dir)) dir <- file.path(tempdir(), "zarr-icechunk-venv")
  dir
}

# The venv's Python, with icechunk 2.3, zarr 3 and numpy.
python_icechunk <- function() {
  if (!python_tests_asked()) {
    testthat::skip("Icechunk interoperability needs PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true) to run it")
  }
  if (!icechunk_available()) {
    testthat::skip("this build has no Icechunk support (rustc < 1.95 at install)")
  }
  if (!is.null(python_cache$icechunk)) return(python_cache$icechunk)
  venv <- icechunk_venv_dir()
  py <- venv_python_path(venv)
  check <- "import icechunk, zarr, numpy; assert icechunk.__version__.startswith('2.3')"
  if (!file.exists(py) || run_python_command(py, c("-c", check))$status != 0L) {
    # icechunk 2.3 needs Python 3.12 or later
    base <- system_python("3.12", c("python3.13", "python3.12", "python3"))
    if (!nzchar(base)) testthat::skip("Python 3.12 or later is not available: Icechunk is not tested")
    if (!file.exists(py)) {
      res <- run_python_command(base, c("-m", "venv", venv))
      if (res$status != 0L || !file.exists(py)) {
        stop(sprintf("could not create a Python venv in '%s' with %s:\n%s", venv, base, res$output), call. = FALSE)
      }
    }
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    icechunk_requirements))
    ok <- run_python_command(py, c("-c", check))
    if (res$status != 0L || ok$status != 0L) {
      stop(sprintf("could not install %s into '%s':\n%s\n%s", paste(icechunk_requirements, collapse = " "),
                   venv, res$output, ok$output), call. = FALSE)
    }
  }
  python_cache$icechunk <- py
  py
}

icechunk_available <- function() zarr:::icechunk_available()

# Run icechunk_repos.py with `args`; its JSON output parsed.
icechunk_script <- function(args) {
  py <- python_icechunk()
  script <- testthat::test_path("icechunk_repos.py")
  out <- withr::with_envvar(c(LD_LIBRARY_PATH = NA), {
    suppressWarnings(system2(py, shQuote(c(script, args)), stdout = TRUE, stderr = FALSE))
  })
  status <- attr(out, "status")
  if (!is.null(status) && status != 0L) {
    stop("icechunk_repos.py ", paste(args, collapse = " "), " failed:\n", paste(out, collapse = "\n"), call. = FALSE)
  }
  jsonlite::fromJSON(out[length(out)], simplifyVector = TRUE)
}

# A fresh copy of the test repositories (icechunk_repos.py "make") in a
# temporary folder, with a loopback HTTP server serving its files/ for the
# HTTP virtual chunks; list(dir, repo, url, ids). The repositories are made
# once per session and copied for each test, which may write to its copy.
icechunk_fixture <- function(env = parent.frame()) {
  py <- python_icechunk()
  if (is.null(python_cache$icechunk_fixture)) {
    dir <- tempfile("icechunk-")
    dir.create(file.path(dir, "files"), recursive = TRUE)
    # The server lives until the test run ends (or 5 minutes).
    server <- local_http_server(file.path(dir, "files"), env = testthat::teardown_env())
    url <- paste0(server$url, "/")
    ids <- icechunk_script(c("make", normalizePath(dir), url))
    python_cache$icechunk_fixture <- list(dir = normalizePath(dir), url = url, ids = ids)
  }
  f <- python_cache$icechunk_fixture
  copy <- tempfile("icechunk-copy-")
  dir.create(copy)
  file.copy(file.path(f$dir, "repo"), copy, recursive = TRUE)
  withr::defer(unlink(copy, recursive = TRUE), envir = env)
  list(dir = f$dir, repo = file.path(copy, "repo"), url = f$url, ids = f$ids,
       trusted = c(paste0("file://", f$dir, "/files/"), f$url))
}
