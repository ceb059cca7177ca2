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

# nginx (Debian's nginx-light, if installed) serving `root` on 127.0.0.1:
# a server that is not the bottleneck, to show what the client does when
# every request is cheap. NULL when nginx is not on the PATH.
start_nginx <- function(root) {
  nginx <- Sys.which("nginx")
  if (!nzchar(nginx)) return(NULL)
  dir <- tempfile("nginx-")
  dir.create(dir)
  for (attempt in 1:5) {
    port <- sample(20000:60000, 1L)
    conf <- file.path(dir, "nginx.conf")
    writeLines(c(
      # As root, nginx would hand requests to an unprivileged worker that
      # cannot read R's private temporary folder.
      if (Sys.info()[["user"]] == "root") "user root;",
      "worker_processes 1;", "daemon off;", sprintf("pid %s/nginx.pid;", dir),
      sprintf("error_log %s/error.log;", dir), "events { worker_connections 256; }",
      "http {", "  access_log off;", "  sendfile on;", "  tcp_nodelay on;", "  keepalive_requests 100000;",
      sprintf("  client_body_temp_path %s;", dir), sprintf("  proxy_temp_path %s;", dir),
      sprintf("  fastcgi_temp_path %s;", dir), sprintf("  uwsgi_temp_path %s;", dir),
      sprintf("  scgi_temp_path %s;", dir),
      sprintf("  server { listen 127.0.0.1:%d; root %s; location / { } }", port, root), "}"
    ), conf)
    system2(nginx, c("-c", shQuote(conf)), stdout = FALSE, stderr = FALSE, wait = FALSE)
    pid_file <- file.path(dir, "nginx.pid")
    deadline <- Sys.time() + 5
    while (!file.exists(pid_file) && Sys.time() < deadline) Sys.sleep(0.05)
    if (file.exists(pid_file)) {
      Sys.setenv(no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
      return(list(url = sprintf("http://127.0.0.1:%d", port), pid = as.integer(readLines(pid_file))))
    }
  }
  NULL
}
