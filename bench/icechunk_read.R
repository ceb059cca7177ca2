# Reading a 128 MiB float64 array (4096 x 4096, chunks 512 x 512, zstd
# level 1) from an Icechunk repository on the local file system against
# the same array in a plain Zarr store beside it (both written by
# bench/icechunk_read.py with zarr-python and icechunk-python 2.3). The
# median of 5 reads each after one warm-up, back to back; the plain and
# repository reads alternate.
#
# Writes bench/ICECHUNK_RESULTS.md. Not part of the tests. Run from the
# repository root after `make install`, with a Python that has icechunk
# 2.3 (the tests' venv):
#
#   R_LIBS=.rlib Rscript bench/icechunk_read.R .venv-icechunk/bin/python
library(zarr)
args <- commandArgs(TRUE)
py <- if (length(args)) args[1] else "python3"
out <- tempfile("icechunk-bench-")
dir.create(out)
on.exit(unlink(out, recursive = TRUE), add = TRUE)
status <- system2(py, c("bench/icechunk_read.py", out), stderr = FALSE)
if (!identical(as.integer(status), 0L)) stop("bench/icechunk_read.py failed")

plain <- open_zarr(file.path(out, "plain.zarr"))[["/x"]]
repo <- open_icechunk(file.path(out, "repo"))[["/x"]]
stopifnot(identical(plain[], repo[]))
time_read <- function(a) {
  gc()
  system.time(x <- a[])[["elapsed"]]
}
runs <- 5L
t_plain <- t_repo <- numeric(runs)
for (i in seq_len(runs)) {
  t_plain[i] <- time_read(plain)
  t_repo[i] <- time_read(repo)
}
res <- data.frame(
  store = c("plain local store", "Icechunk repository (local)"),
  median_s = c(median(t_plain), median(t_repo)),
  min_s = c(min(t_plain), min(t_repo))
)
res$ratio <- res$median_s / res$median_s[1]
print(res, digits = 3)
lines <- c(
  "# Icechunk: reading 128 MiB from a repository against a plain store",
  "",
  "`bench/icechunk_read.R`: a float64 array of 4096 x 4096 in chunks of 512 x 512 (zstd 1),",
  "read whole with `a[]`, median and minimum of 5 reads after `gc()`, alternating; both local.",
  sprintf("Threads: %d; %s.", getOption("zarr.num_threads", parallel::detectCores()), format(Sys.time(), "%Y-%m-%d")),
  "",
  "| store | median (s) | min (s) | median / plain |",
  "|---|---|---|---|",
  sprintf("| %s | %.3f | %.3f | %.2f |", res$store, res$median_s, res$min_s, res$ratio)
)
writeLines(lines, "bench/ICECHUNK_RESULTS.md")
