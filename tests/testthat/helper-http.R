# A local HTTP server (tests/testthat/http_server.py, Python standard
# library only) for the tests of zarr_httpstore. It listens on 127.0.0.1 at
# a free port, is stopped when the calling test ends, and ends by itself
# when this R process does or after a few minutes, so it never outlives the
# test run. Tests that need it are skipped when there is no Python 3.

http_server_python <- function() {
  for (name in c("python3", "python")) {
    py <- Sys.which(name)
    if (!nzchar(py)) next
    ok <- withr::with_envvar(c(LD_LIBRARY_PATH = NA), suppressWarnings(system2(
      py, c("-c", shQuote("import sys; sys.exit(sys.version_info < (3, 7))")),
      stdout = FALSE, stderr = FALSE
    )))
    if (identical(as.integer(ok), 0L)) return(unname(py))
  }
  ""
}

# Start the Python script of `args` (one that prints "PORT <port> PID
# <pid>" once it listens on 127.0.0.1) in the background, requests to
# loopback bypassing any proxy of the environment until `env` ends; returns
# list(port, pid, err), or stops naming `what` when it has not started in 10 s.
start_port_process <- function(py, args, what, env) {
  out <- tempfile("port-process-", fileext = ".out")
  err <- tempfile("port-process-", fileext = ".err")
  withr::with_envvar(c(LD_LIBRARY_PATH = NA), {
    system2(py, shQuote(args), stdout = out, stderr = err, wait = FALSE)
  })
  withr::local_envvar(c(no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost"),
                      .local_envir = env)
  deadline <- Sys.time() + 10
  line <- character(0)
  repeat {
    if (file.exists(out)) line <- grep("^PORT ", readLines(out, warn = FALSE), value = TRUE)
    if (length(line)) break
    if (Sys.time() > deadline) {
      msg <- if (file.exists(err)) paste(readLines(err, warn = FALSE), collapse = "\n") else ""
      stop(what, " did not start within 10 s: ", msg)
    }
    Sys.sleep(0.05)
  }
  parts <- strsplit(line[1L], " ", fixed = TRUE)[[1]]
  list(port = as.integer(parts[2L]), pid = as.integer(parts[4L]), err = err)
}

# Serve the folder `root`; returns list(url, port, pid, stop). Options are
# those of http_server.py: a delay before each answer, HTML for every path,
# no support for Range headers.
local_http_server <- function(root, delay_ms = 0, html = FALSE, no_ranges = FALSE,
                              env = parent.frame()) {
  py <- http_server_python()
  if (!nzchar(py)) testthat::skip("python3 (>= 3.7) is needed to run the test HTTP server")
  script <- testthat::test_path("http_server.py")
  args <- c(script, root, "--max-seconds", "300", "--parent-pid", Sys.getpid(),
            "--delay-ms", delay_ms, if (html) "--html", if (no_ranges) "--no-ranges")
  started <- start_port_process(py, args, "the test HTTP server", env)
  port <- started$port
  pid <- started$pid
  stopped <- FALSE
  stop_server <- function() {
    if (!stopped) {
      stopped <<- TRUE
      tools::pskill(pid)
    }
    invisible(NULL)
  }
  withr::defer(stop_server(), envir = env)
  list(url = sprintf("http://127.0.0.1:%d", port), port = port, pid = pid, stop = stop_server)
}

# The server's counters: requests, bytes (of bodies sent), gets, heads,
# ranges, max_in_flight. Read through the store under test itself.
http_stats <- function(server) {
  s <- zarr_httpstore$new(server$url)
  jsonlite::fromJSON(rawToChar(s$get("__stats")))
}

http_reset <- function(server) {
  invisible(zarr_httpstore$new(server$url)$get("__reset"))
}

# The keys of every file below `dir`, "/"-separated.
http_files_below <- function(dir) {
  sort(list.files(dir, recursive = TRUE, all.files = TRUE, no.. = TRUE))
}

http_file_bytes <- function(path) readBin(path, "raw", file.size(path))
