# A float32 climate cube (365 x 180 x 360 in chunks of 30 x 90 x 90, blosc
# zstd, NaN fill; issue 21) read in full, against the zarrs pipeline
# (bench/cube_read.py, run from bench/.venv as bench/run.sh makes it) on
# the same stores: one in this package's column-major chunk order, one in
# C order as Python writes it. R returns doubles, twice the bytes numpy's
# float32 result holds. Prints the medians and the ratios, and writes
# them as JSON when given a file.
#   Rscript bench/cube_read.R [repeats] [out.json]
suppressMessages(library(zarr))
args <- commandArgs(TRUE)
reps <- if (length(args) >= 1) as.integer(args[[1]]) else 7L
out_file <- if (length(args) >= 2) args[[2]] else NA_character_
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
dir <- tempfile("cube")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE))
x <- array(as.numeric(sin(seq_len(365 * 180 * 360) / 1000) * 30 + 280), c(365, 180, 360))
x[sample.int(length(x), 10000)] <- NA
paths <- c(F = file.path(dir, "cube_f.zarr"), C = file.path(dir, "cube_c.zarr"))
for (order in names(paths)) {
  z <- create_zarr(paths[[order]])
  b <- define_array("float32", dim(x))
  b$chunk_shape <- c(30, 90, 90)
  b$fill_value <- NaN
  if (order == "C") b$portable <- TRUE
  z$add_array("/", "tas", b)$write(x)
}
rm(x)
invisible(gc())

# Back to back (`v <- a[]` again, the last result alive) and after gc().
time_reads <- function(a) {
  v <- a[]
  kept <- vapply(seq_len(reps), function(i) {
    t0 <- proc.time()[["elapsed"]]
    v <<- a[]
    proc.time()[["elapsed"]] - t0
  }, 0)
  rm(v)
  fresh <- vapply(seq_len(reps), function(i) system.time(a[])[["elapsed"]], 0)
  c(kept_s = median(kept), gc_first_s = median(fresh))
}
ours <- lapply(paths, function(p) time_reads(open_zarr(p, read_only = TRUE)[["/tas"]]))

python <- file.path(script_dir, ".venv", "bin", "python")
peer <- NULL
if (file.exists(python)) {
  env <- Sys.getenv("LD_LIBRARY_PATH")
  Sys.unsetenv("LD_LIBRARY_PATH")
  line <- system2(python, c(file.path(script_dir, "cube_read.py"), reps, file.path(paths, "tas")), stdout = TRUE)
  Sys.setenv(LD_LIBRARY_PATH = env)
  peer <- jsonlite::fromJSON(line[length(line)])
}
rows <- lapply(names(paths), function(order) {
  p <- if (is.null(peer)) list(kept_s = NA, gc_first_s = NA) else peer[[file.path(paths[[order]], "tas")]]
  r <- ours[[order]]
  row <- list(order = order, kept_s = r[["kept_s"]], gc_first_s = r[["gc_first_s"]],
              zarrs_kept_s = p$kept_s, zarrs_gc_first_s = p$gc_first_s,
              ratio_kept = r[["kept_s"]] / p$kept_s, ratio_gc_first = r[["gc_first_s"]] / p$gc_first_s)
  cat(sprintf("cube %s order: %.3f s back to back (zarrs %.3f, ratio %.2f), %.3f s gc first (zarrs %.3f, ratio %.2f)\n",
              order, row$kept_s, row$zarrs_kept_s, row$ratio_kept, row$gc_first_s, row$zarrs_gc_first_s,
              row$ratio_gc_first))
  row
})
if (!is.na(out_file)) jsonlite::write_json(rows, out_file, auto_unbox = TRUE, digits = NA, pretty = TRUE)
