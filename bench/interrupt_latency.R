# How long after an interrupt does a read or write return? Runs each under
# setTimeLimit(elapsed = limit) (R checks the limit where it checks for
# Ctrl-C, so the engine sees both the same way) and reports the time from
# the limit to the error, median and maximum of `repeats` runs: local
# folder read and write, and a read over HTTP from the test server
# (tests/testthat/http_server.py) with 0 and 2 ms of latency per request.
#   Rscript bench/interrupt_latency.R [threads]
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f)) else "bench"
})
source(file.path(script_dir, "http_server.R"))
suppressPackageStartupMessages(library(zarr))
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args)) as.integer(args[[1L]]) else zarr_num_threads()
options(zarr.num_threads = threads, zarr.progress = FALSE)
limit <- 0.3
repeats <- 5L

root <- tempfile("interrupt-")
dir.create(root)
n <- 4000
x <- matrix(as.numeric(seq_len(n * n)), n)
def <- define_array("float64", c(n, n))
def$chunk_shape <- c(50, 50)
z <- create_zarr(file.path(root, "a.zarr"))
a <- z$add_array("/", "a", def)
a[] <- x
z$consolidate()

# Seconds from the limit to the error, or NA when the call ended first.
stop_after <- function(f) {
  started <- proc.time()[["elapsed"]]
  err <- tryCatch({
    setTimeLimit(elapsed = limit, transient = TRUE)
    f()
    NULL
  }, error = function(e) e)
  setTimeLimit()
  took <- proc.time()[["elapsed"]] - started
  if (!inherits(err, "zarr_error_interrupted")) return(NA_real_)
  took - limit
}

measure <- function(label, f) {
  full <- system.time(f())[["elapsed"]]
  lat <- vapply(seq_len(repeats), function(i) stop_after(f), numeric(1))
  cat(sprintf("%-28s full %5.2f s | stop latency median %4.0f ms, max %4.0f ms (%d of %d stopped)\n",
              label, full, 1000 * stats::median(lat, na.rm = TRUE), 1000 * max(lat, na.rm = TRUE),
              sum(!is.na(lat)), repeats))
}

cat(sprintf("%d x %d float64, chunks 50 x 50 (6400 chunks, 128 MB), %d threads, limit %.1f s\n",
            n, n, threads, limit))
measure("local read", function() a[])
measure("local write", function() a[] <- x)
for (delay in c(0, 2)) {
  server <- start_server(root, delay_ms = delay)
  remote <- open_zarr(paste0(server$url, "/a.zarr"))[["/a"]]
  measure(sprintf("HTTP read, %d ms latency", delay), function() remote[])
  stop_server(server)
}
unlink(root, recursive = TRUE)
