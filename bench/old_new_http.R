# Two builds of the package reading one array over HTTP, taking turns as
# bench/old_new.R does for local stores: each repeat runs each build once,
# in an order drawn anew, in a fresh process that opens the array, reads it
# once and times the median of 3 more full reads (connections open).
#   Rscript bench/old_new_http.R LIB_OLD LIB_NEW [REPEATS] [DELAY_MS]
# The array: 64 MiB of float64 in 256 uncompressed chunks of 256 KiB
# (4096 x 2048, chunks 256 x 128), served by the test HTTP server
# (tests/testthat/http_server.py) with DELAY_MS of latency per answer.
# Reports new/old (the median of the per-repeat ratios).
args <- commandArgs(trailingOnly = TRUE)
libs <- c(old = normalizePath(args[[1]]), new = normalizePath(args[[2]]))
repeats <- if (length(args) >= 3) as.integer(args[[3]]) else 6L
delay <- if (length(args) >= 4) as.integer(args[[4]]) else 0L
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))))
source(file.path(script_dir, "http_server.R"))
library(zarr, lib.loc = libs[["new"]])

root <- tempfile("old_new_http")
def <- define_array("float64", c(4096, 2048))
def$chunk_shape <- c(256, 128)
def$remove_codec("blosc")
create_zarr(root)$add_array("/", "x", def)$write(matrix(runif(4096 * 2048), 4096, 2048))
server <- start_server(file.path(root, "x"), delay_ms = delay)

worker <- tempfile("old_new_http_worker", fileext = ".R")
writeLines(c(
  "library(zarr)",
  "arr <- open_zarr(commandArgs(trailingOnly = TRUE)[[1]])[['/']]",
  "x <- arr[]",
  "t <- vapply(1:3, function(i) system.time(x <- arr[])[['elapsed']], 0)",
  "cat(median(t), '\\n')"
), worker)
rscript <- file.path(R.home("bin"), "Rscript")
run <- function(build) {
  out <- system2(rscript, c(worker, server$url), stdout = TRUE, env = paste0("R_LIBS=", libs[[build]]))
  as.numeric(out[length(out)])
}
rows <- list()
set.seed(42)
for (r in seq_len(repeats)) {
  t <- c(old = NA, new = NA)
  for (b in sample(names(libs))) t[[b]] <- run(b)
  rows[[r]] <- data.frame(rep = r, old = t[["old"]], new = t[["new"]])
}
stop_server(server)
unlink(root, recursive = TRUE)
d <- do.call(rbind, rows)
cat(sprintf("delay %d ms, load average: %s\n", delay, paste(readLines("/proc/loadavg"), collapse = " ")))
cat(sprintf("old %.1f ms, new %.1f ms (medians), new/old %.3f (median of %d ratios)\n",
            1000 * median(d$old), 1000 * median(d$new), median(d$new / d$old), nrow(d)))
