# The fault-injecting proxy (tests/testthat/fault_proxy.py, Python standard
# library only) for the tests of the network stores' retries: on 127.0.0.1
# at a free port, in front of the test HTTP server or moto, stopped when
# the calling test (or file) ends and by itself when this R process ends.
# Skipped, with a message, without Python 3.7+.

local_fault_proxy <- function(upstream, env = parent.frame()) {
  py <- http_server_python()
  if (!nzchar(py)) testthat::skip("python3 (>= 3.7) is needed to run the fault-injecting proxy")
  args <- c(testthat::test_path("fault_proxy.py"), "--upstream", upstream, "--parent-pid", Sys.getpid(),
            "--max-seconds", "600")
  started <- start_port_process(py, args, "the fault proxy", env)
  port <- started$port
  pid <- started$pid
  err <- started$err
  withr::defer(tools::pskill(pid), envir = env)
  list(url = sprintf("http://127.0.0.1:%d", port), port = port, pid = pid, err = err)
}

# A control request to the proxy (a path below /__faults/ with its query);
# returns its counts as a list.
fault_control <- function(proxy, what) {
  con <- socketConnection("127.0.0.1", proxy$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf("GET /__faults/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r",
                     what, proxy$port), con, sep = "\n")
  lines <- readLines(con, warn = FALSE)
  jsonlite::fromJSON(lines[length(lines)], simplifyVector = FALSE)
}

# Fail `rate` of the requests with `faults` (a character vector of the
# proxy's fault kinds), drawn with `seed`; zeroes the counts.
set_faults <- function(proxy, faults = character(0), rate = 0, seed = 1, stall_ms = 1500,
                       retry_after = 1, methods = character(0)) {
  fault_control(proxy, sprintf("set?rate=%s&faults=%s&seed=%s&stall_ms=%s&retry_after=%s&methods=%s",
                               rate, paste(faults, collapse = ","), seed, stall_ms, retry_after,
                               paste(methods, collapse = ",")))
}

fault_stats <- function(proxy) fault_control(proxy, "stats")
