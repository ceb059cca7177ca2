# One timed operation for bench/old_new.R, in a fresh R process whose
# R_LIBS holds the build under test:
#   Rscript bench/old_new_worker.R prepare|read|write LAYOUT FOLDER REPS
# Prints the median elapsed seconds of REPS runs.
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

write_store <- function(path) {
  unlink(path, recursive = TRUE)
  z <- create_zarr(path)
  a <- z$add_array("/", "a", definition(layout))
  system.time(a[] <- x)[["elapsed"]]
}

store <- file.path(folder, paste0(layout, ".zarr"))
times <- switch(op,
  prepare = write_store(store),
  write = vapply(seq_len(reps), function(i) {
    write_store(file.path(folder, paste0(layout, "-w", Sys.getpid(), ".zarr")))
  }, numeric(1)),
  read = {
    a <- open_zarr(store)[["/a"]]
    vapply(seq_len(reps), function(i) {
      t <- system.time(y <- a[])[["elapsed"]]
      stopifnot(identical(dim(y), dim(x)))
      t
    }, numeric(1))
  }
)
unlink(file.path(folder, paste0(layout, "-w", Sys.getpid(), ".zarr")), recursive = TRUE)
cat(median(times), "\n")
