# Does a full read use both cores? Reads a 4096 x 4096 float64 array
# (256 x 256 chunks, zstd level 1) from a local store and reports wall time,
# CPU time and CPU/wall. `make bench` runs it; not part of the tests.
library(zarr)

n <- 4096
location <- file.path(tempdir(), "bench-read.zarr")
unlink(location, recursive = TRUE)
x <- matrix(round(sin(seq_len(n * n) / 1e4) * 100, 3), n, n)

def <- define_array("float64", c(n, n))
def$chunk_shape <- c(256, 256)
def$remove_codec("blosc")
def$add_codec("zstd", list(level = 1, checksum = FALSE))
z <- create_zarr(location)
arr <- z$add_array("/", "x", def)
arr$write(x)

arr <- open_zarr(location, read_only = TRUE)[["/x"]]
measure <- function(threads, reps = 5) {
  old <- options(zarr.num_threads = threads)
  on.exit(options(old))
  runs <- lapply(seq_len(reps), function(i) {
    gc()
    t0 <- proc.time()
    y <- arr[]
    t1 <- proc.time()
    stopifnot(identical(y, x))
    d <- t1 - t0
    c(wall = d[["elapsed"]], cpu = d[["user.self"]] + d[["sys.self"]])
  })
  m <- do.call(rbind, runs)
  i <- order(m[, "wall"])[ceiling(reps / 2)]
  m[i, ]
}

cat(sprintf("machine: %d cores; array %d x %d float64 (%.0f MiB), chunks 256 x 256, zstd level 1\n",
            parallel::detectCores(), n, n, n * n * 8 / 2^20))
for (threads in unique(c(1L, zarr_num_threads()))) {
  r <- measure(threads)
  cat(sprintf("threads %d: wall %.3f s, cpu %.3f s, cpu/wall %.2f, %.2f GB/s\n",
              threads, r[["wall"]], r[["cpu"]], r[["cpu"]] / r[["wall"]], n * n * 8 / r[["wall"]] / 1e9))
}
unlink(location, recursive = TRUE)
