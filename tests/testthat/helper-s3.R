# An S3 server for the tests of zarr_objectstore: moto (PyPI `moto[server]`)
# in server mode on 127.0.0.1 at a free port. moto is installed on first use
# into a virtual environment outside the package source: the folder named by
# ZARR_TEST_MOTO_VENV (the Makefile sets it), else one in the session's
# temporary folder.
#
# The tests run where the suite is run for development (NOT_CRAN=true, which
# `make test` sets); on CRAN they are skipped. Without Python 3.9+, or when
# pip cannot install moto (no access to PyPI), they are skipped with a
# message that says so.

moto_venv_dir <- function() {
  dir <- Sys.getenv("ZARR_TEST_MOTO_VENV", "")
  if (!nzchar(dir)) dir <- file.path(tempdir(), "zarr-moto-venv")
  dir
}

moto_cache <- new.env(parent = emptyenv())

# The path of moto_server, installing moto into the venv when needed.
moto_server_path <- function() {
  if (!is.null(moto_cache$server)) return(moto_cache$server)
  testthat::skip_on_cran()
  testthat::skip_if_not_installed("processx")
  venv <- moto_venv_dir()
  bin <- if (.Platform$OS.type == "windows") file.path(venv, "Scripts") else file.path(venv, "bin")
  server <- file.path(bin, if (.Platform$OS.type == "windows") "moto_server.exe" else "moto_server")
  if (!file.exists(server)) {
    base <- ""
    for (name in c("python3", "python")) {
      py <- Sys.which(name)
      if (!nzchar(py)) next
      ok <- run_python_command(py, c("-c", "import sys; sys.exit(sys.version_info < (3, 9))"))
      if (ok$status == 0L) {
        base <- unname(py)
        break
      }
    }
    if (!nzchar(base)) testthat::skip("Python 3.9 or later is not available: the S3 tests (moto) do not run")
    py <- venv_python_path(venv)
    if (!file.exists(py)) {
      res <- run_python_command(base, c("-m", "venv", venv))
      if (res$status != 0L) testthat::skip(paste("cannot create a venv for moto:", res$output))
    }
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    "moto[server]"))
    if (res$status != 0L || !file.exists(server)) {
      testthat::skip(paste("cannot install moto[server] with pip, the S3 tests do not run:", res$output))
    }
  }
  moto_cache$server <- server
  server
}

# A free TCP port on 127.0.0.1.
free_port <- function() {
  for (i in 1:50) {
    port <- sample(20000:60000, 1L)
    s <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(s)) {
      close(s)
      return(port)
    }
  }
  stop("no free port found")
}

# Start moto; returns list(endpoint, port, process). The server is stopped
# when `env` ends (a test, or the file with teardown_env()). `auth = TRUE`
# makes moto check request signatures against its own users, of which
# there are none: every signed request is then refused with 403.
start_moto <- function(env = parent.frame(), auth = FALSE) {
  server <- moto_server_path()
  envvars <- c("current", LD_LIBRARY_PATH = "", if (auth) c(INITIAL_NO_AUTH_ACTION_COUNT = "0"))
  for (attempt in 1:3) {
    port <- free_port()
    log <- tempfile("moto-", fileext = ".log")
    p <- processx::process$new(server, c("-H", "127.0.0.1", "-p", as.character(port)),
                               stdout = log, stderr = "2>&1", env = envvars, cleanup = TRUE)
    withr::defer(if (p$is_alive()) p$kill(), envir = env)
    if (wait_for_port(p, port, log, "moto_server")) break
  }
  if (!p$is_alive()) stop("moto_server did not start: ", paste(readLines(log, warn = FALSE), collapse = "\n"))
  list(endpoint = sprintf("http://127.0.0.1:%d", port), port = port, process = p)
}

# The environment variables that point object_store at `server`, as a
# user of MinIO sets them.
moto_env <- function(server) {
  c(AWS_ENDPOINT_URL = server$endpoint, AWS_ALLOW_HTTP = "true", AWS_ACCESS_KEY_ID = "testing",
    AWS_SECRET_ACCESS_KEY = "testing", AWS_REGION = "us-east-1", AWS_SESSION_TOKEN = NA,
    AWS_PROFILE = NA, AWS_NO_SIGN_REQUEST = NA, AWS_DEFAULT_REGION = NA,
    no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
}

# Create a bucket (moto accepts an unsigned PUT of the bucket path).
moto_create_bucket <- function(server, bucket) {
  con <- socketConnection("127.0.0.1", server$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf(paste0("PUT /%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n",
                            "Connection: close\r\n\r"), bucket, server$port), con, sep = "\n")
  status <- readLines(con, n = 1L, warn = FALSE)
  if (!grepl(" 200", status)) stop("cannot create bucket '", bucket, "' on moto: ", status)
  invisible(bucket)
}

# A new, empty bucket on the moto server shared by a test file.
moto_bucket <- local({
  n <- 0L
  function(server) {
    n <<- n + 1L
    moto_create_bucket(server, sprintf("zarr-test-%d-%d", Sys.getpid(), n))
  }
})

# A loopback proxy (proxy/s3_proxy.py, run by moto's Python) in front of
# `server` that answers the first `fail_first` requests with 503 and
# counts requests; list(endpoint, port, process). Stopped when `env` ends.
start_s3_proxy <- function(server, fail_first = 0L, delay_ms = 0, env = parent.frame()) {
  py <- venv_python_path(moto_venv_dir())
  for (attempt in 1:3) {
    port <- free_port()
    log <- tempfile("s3-proxy-", fileext = ".log")
    p <- processx::process$new(py, c(testthat::test_path("proxy", "s3_proxy.py"), "--port", port,
                                     "--upstream", server$endpoint, "--fail-first", fail_first,
                                     "--delay-ms", delay_ms),
                               stdout = log, stderr = "2>&1", env = c("current", LD_LIBRARY_PATH = ""),
                               cleanup = TRUE)
    withr::defer(if (p$is_alive()) p$kill(), envir = env)
    if (wait_for_port(p, port, log, "the S3 proxy")) break
  }
  if (!p$is_alive()) stop("the S3 proxy did not start: ", paste(readLines(log, warn = FALSE), collapse = "\n"))
  list(endpoint = sprintf("http://127.0.0.1:%d", port), port = port, process = p)
}

# The proxy's request counts: list(requests, by_method, failed, bytes).
s3_proxy_stats <- function(proxy) {
  con <- socketConnection("127.0.0.1", proxy$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf("GET /__proxy/stats HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r",
                     proxy$port), con, sep = "\n")
  lines <- readLines(con, warn = FALSE)
  jsonlite::fromJSON(lines[length(lines)], simplifyVector = FALSE)
}
