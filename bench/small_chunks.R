# Per-chunk overhead (issue 21): the 4096 x 4096 float64 field in 4096
# chunks of 64 x 64 against the same bytes in 256 chunks of 256 x 256,
# written and read in full, uncompressed and with zstd level 1, and
# uncompressed again with `options(zarr.atomic_writes = FALSE)` (each
# chunk written in place, not to a temporary file renamed over it). Prints
# the medians and the ratio small / large (target <= 1.2), and writes
# them as JSON when given a file. The stores go in `dir` when given (a
# folder on the disk, to measure its file system), else on tmpfs.
#   Rscript bench/small_chunks.R [repeats] [out.json] [dir]
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "common.R"))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[[1]]) else 7L
out_file <- if (length(args) >= 2 && nzchar(args[[2]])) args[[2]] else NA_character_
# On tmpfs where there is one: on this machine's root ext4 (no journal) a
# store deleted and written again 4096 files at a time waits on ext4's
# scan past recently deleted inodes, which grows with every repeat and
# says nothing of the package's own cost per chunk.
in_dir <- if (length(args) >= 3) args[[3]] else if (file.access("/dev/shm", 2) == 0) "/dev/shm" else tempdir()
dir <- tempfile("chunks", tmpdir = in_dir)
dir.create(dir)
data <- make_data(N)

builder <- function(side, codec) {
  b <- define_array("float64", c(N, N))
  b$chunk_shape <- c(side, side)
  b$remove_codec("blosc")
  if (codec == "zstd1") b$add_codec("zstd", list(level = 1, checksum = FALSE))
  b
}
rows <- list()
cases <- list(c("none", "atomic"), c("zstd1", "atomic"), c("none", "in_place"))
for (case in cases) {
  codec <- case[[1]]
  atomic <- case[[2]] == "atomic"
  times <- list()
  for (side in c(64, 256)) {
    path <- file.path(dir, sprintf("%s_%s_%d.zarr", codec, case[[2]], side))
    write_once <- function() {
      unlink(path, recursive = TRUE)
      a <- withr::with_options(list(zarr.atomic_writes = atomic), create_zarr(path))$
        add_array("/", "x", builder(side, codec))
      run_once(function() a$write(data))
    }
    w <- median_of(write_once, reps)
    a <- open_zarr(path, read_only = TRUE)[["/x"]]
    stopifnot(identical(unname(a[]), data))
    r <- timed(function() a[], reps)
    # CPU seconds (all threads, user and system) too: on a machine shared
    # with other work they move far less than the wall time does.
    times[[as.character(side)]] <- c(write = w[["wall"]], read = r[["wall"]],
                                     write_cpu = w[["wall"]] * w[["cpu"]], read_cpu = r[["wall"]] * r[["cpu"]])
  }
  s <- times[["64"]]
  l <- times[["256"]]
  row <- list(codec = codec, writes = case[[2]], write_small_s = s[["write"]], write_large_s = l[["write"]],
              read_small_s = s[["read"]], read_large_s = l[["read"]],
              write_ratio = s[["write"]] / l[["write"]], read_ratio = s[["read"]] / l[["read"]],
              write_cpu_ratio = s[["write_cpu"]] / l[["write_cpu"]], read_cpu_ratio = s[["read_cpu"]] / l[["read_cpu"]])
  cat(sprintf(paste("%s (%s writes): write %.3f s in 4096 chunks, %.3f s in 256 (ratio %.2f, CPU %.2f);",
                    "read %.3f / %.3f (ratio %.2f, CPU %.2f)\n"),
              codec, case[[2]], row$write_small_s, row$write_large_s, row$write_ratio, row$write_cpu_ratio,
              row$read_small_s, row$read_large_s, row$read_ratio, row$read_cpu_ratio))
  rows[[length(rows) + 1]] <- row
}
unlink(dir, recursive = TRUE)
if (!is.na(out_file)) jsonlite::write_json(rows, out_file, auto_unbox = TRUE, digits = NA, pretty = TRUE)
