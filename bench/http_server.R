# Start and stop the test HTTP server (tests/testthat/http_server.py, Python
# standard library) from a benchmark script, without testthat or withr, and
# read its request counters. Sourced by bench/http_read.R and
# bench/zarr_bench.R; expects `script_dir`, the bench/ folder.

server_py <- file.path(dirname(script_dir), "tests", "testthat", "http_server.py")

find_python <- function() {
  for (name in c("python3", "python")) {
    py <- Sys.which(name)
    if (nzchar(py)) return(unname(py))
  }
  ""
}

# Serve the folder `root` on 127.0.0.1 with `delay_ms` of latency per answer.
start_server <- function(root, delay_ms = 0) {
  py <- find_python()
  if (!nzchar(py)) stop("python3 is needed to run the test HTTP server")
  out <- tempfile("http-server-", fileext = ".out")
  err <- tempfile("http-server-", fileext = ".err")
  args <- c(server_py, root, "--max-seconds", "1800", "--parent-pid", Sys.getpid(),
            "--delay-ms", delay_ms)
  # The venv's or R's library path must not leak into the system Python.
  old <- Sys.getenv("LD_LIBRARY_PATH", unset = NA)
  Sys.unsetenv("LD_LIBRARY_PATH")
  system2(py, shQuote(args), stdout = out, stderr = err, wait = FALSE)
  if (!is.na(old)) Sys.setenv(LD_LIBRARY_PATH = old)
  Sys.setenv(no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
  deadline <- Sys.time() + 10
  repeat {
    line <- if (file.exists(out)) grep("^PORT ", readLines(out, warn = FALSE), value = TRUE)
    if (length(line)) break
    if (Sys.time() > deadline) {
      stop("the test HTTP server did not start within 10 s: ",
           paste(if (file.exists(err)) readLines(err, warn = FALSE), collapse = "\n"))
    }
    Sys.sleep(0.05)
  }
  parts <- strsplit(line[1L], " ", fixed = TRUE)[[1]]
  list(url = sprintf("http://127.0.0.1:%s", parts[2L]), pid = as.integer(parts[4L]))
}

stop_server <- function(server) {
  if (!is.null(server)) tools::pskill(server$pid)
  invisible(NULL)
}

# The server's counters since the last reset: requests, bytes, gets, heads,
# ranges, max_in_flight.
stats <- function(server) {
  jsonlite::fromJSON(rawToChar(zarr_httpstore$new(server$url)$get("__stats")))
}
reset <- function(server) invisible(zarr_httpstore$new(server$url)$get("__reset"))
