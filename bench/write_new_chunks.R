# The cost of writing new chunks through a temporary file and a rename
# (the file store's default) against writing them in place. Run it once
# with each build on R_LIBS and compare:
#   R_LIBS=<lib> Rscript bench/write_new_chunks.R [folder]
# The folder (default tempdir()) decides the file system measured.
library(zarr)
args <- commandArgs(trailingOnly = TRUE)
base <- if (length(args)) args[[1]] else tempdir()
reps <- as.integer(Sys.getenv("WNC_REPS", "7"))
x <- matrix(sample.int(1000L, 2000L * 2000L, replace = TRUE), 2000L, 2000L)

time_new_array <- function(chunks, codec, fsync = FALSE) {
  old <- options(zarr.fsync = fsync)
  on.exit(options(old))
  times <- numeric(reps)
  for (i in seq_len(reps)) {
    path <- tempfile("wnc", tmpdir = base, fileext = ".zarr")
    def <- define_array("int32", dim(x))
    def$chunk_shape <- chunks
    if (codec == "none") def$remove_codec("zstd")
    z <- create_zarr(path)
    a <- z$add_array("/", "a", def)
    times[i] <- system.time(a[] <- x)[["elapsed"]]
    unlink(path, recursive = TRUE)
  }
  median(times)
}

cases <- expand.grid(chunks = c(50L, 250L), codec = c("none", "zstd"), stringsAsFactors = FALSE)
for (k in seq_len(nrow(cases))) {
  ch <- cases$chunks[k]
  n <- (2000L / ch)^2
  t <- time_new_array(c(ch, ch), cases$codec[k])
  cat(sprintf("%4d chunks of %3dx%3d, %-4s: %7.1f ms (%.0f us per chunk)\n",
              as.integer(n), ch, ch, cases$codec[k], 1000 * t, 1e6 * t / n))
}
if (isTRUE(as.logical(Sys.getenv("WNC_FSYNC", "FALSE")))) {
  t <- time_new_array(c(250L, 250L), "zstd", fsync = TRUE)
  cat(sprintf("  64 chunks of 250x250, zstd, fsync: %7.1f ms\n", 1000 * t))
}
