# One timed operation for bench/old_new.R, in a fresh R process whose
# R_LIBS holds the build under test:
#   Rscript bench/old_new_worker.R prepare|read|write LAYOUT FOLDER REPS
# Prints the median elapsed seconds of REPS runs, then the median CPU seconds
# (user and system, all threads of the process).
library(zarr)
args <- commandArgs(trailingOnly = TRUE)
op <- args[[1]]
layout <- args[[2]]
folder <- args[[3]]
reps <- as.integer(args[[4]])
# OLD_NEW_N sets the side of the square float64 array (1600: 20 MB).
n <- as.integer(Sys.getenv("OLD_NEW_N", "1600"))
set.seed(1)
x <- matrix(round(rnorm(n * n), 3), n, n)

# Whichever compressor the defaults hold (blosc since 0.5.0, zstd before);
# removing one that is not there does nothing.
uncompressed <- function(def) {
  def$remove_codec("blosc")
  def$remove_codec("zstd")
}

definition <- function(layout) {
  def <- define_array("float64", dim(x))
  switch(layout,
    none = {
      def$chunk_shape <- c(200L, 200L)
      uncompressed(def)
    },
    small = {
      def$chunk_shape <- c(50L, 50L)
      uncompressed(def)
    },
    # The default codecs (blosc with zstd and bitshuffle).
    zstd = def$chunk_shape <- c(200L, 200L),
    shards = {
      def$chunk_shape <- c(400L, 400L)
      def$add_codec("sharding_indexed", list(chunk_shape = c(50L, 50L)))
    }
  )
  def
}

# Elapsed seconds to the microsecond (system.time() rounds to the
# millisecond, a tenth of an uncompressed read), and CPU seconds. A full
# collection first, as system.time() does, so that the previous call's
# result is freed in both builds alike, not whenever R's collector runs.
timed <- function(expr) {
  gc(FALSE)
  c0 <- proc.time()
  t0 <- Sys.time()
  force(expr)
  elapsed <- as.numeric(Sys.time() - t0, units = "secs")
  c1 <- proc.time() - c0
  c(elapsed, c1[["user.self"]] + c1[["sys.self"]])
}

write_store <- function(path) {
  unlink(path, recursive = TRUE)
  z <- create_zarr(path)
  a <- z$add_array("/", "a", definition(layout))
  timed(a[] <- x)
}

store <- file.path(folder, paste0(layout, ".zarr"))
times <- switch(op,
  prepare = matrix(write_store(store), 2L),
  write = vapply(seq_len(reps), function(i) {
    write_store(file.path(folder, paste0(layout, "-w", Sys.getpid(), ".zarr")))
  }, numeric(2)),
  read = {
    a <- open_zarr(store)[["/a"]]
    vapply(seq_len(reps), function(i) {
      t <- timed(y <- a[])
      stopifnot(identical(dim(y), dim(x)))
      t
    }, numeric(2))
  }
)
unlink(file.path(folder, paste0(layout, "-w", Sys.getpid(), ".zarr")), recursive = TRUE)
cat(median(times[1L, ]), median(times[2L, ]), "\n")
