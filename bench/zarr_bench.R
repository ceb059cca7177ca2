# The peer workload (../shared/bench/peers_bench.py) run on this package:
# a 4096 x 4096 float64 field, four layouts, write / full read / 256 x 256
# subset, in both storage orders (R's column-major with the default
# transpose codec, and C order as Python writes it), single-thread reads
# and peak memory of a full read; then read scaling with size, and opening
# a hierarchy of 1,000 arrays with and without consolidated metadata.
# `make bench` times the workload in bench/interleaved.py, in turns with the
# peers, and hands its rows here (ROWS); without ROWS this script times the
# workload itself.
# Usage: Rscript bench/zarr_bench.R [repeats] [out.json] [ROWS]
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "common.R"))
source(file.path(script_dir, "http_server.R"))

args <- commandArgs(trailingOnly = TRUE)
repeats <- if (length(args) >= 1) as.integer(args[[1]]) else 3L
out_file <- if (length(args) >= 2) args[[2]] else "bench/results/zarr.json"
rows_file <- if (length(args) >= 3) args[[3]] else NA_character_
dir.create(dirname(out_file), recursive = TRUE, showWarnings = FALSE)
data_dir <- file.path(tempdir(), "zarr-bench")
dir.create(data_dir, showWarnings = FALSE)

rows <- list()
if (!is.na(rows_file)) {
  rows <- jsonlite::fromJSON(rows_file, simplifyVector = FALSE)
} else {
  data <- make_data(N)
  for (layout in c("none", "zstd1", "lz4", "shard")) {
    for (order in c("F", "C")) {
      w <- workload(data, data_dir, layout, order)
      wr <- median_of(w$write, repeats)
      stopifnot(w$check())
      r <- median_of(w$read, repeats)
      s <- median_of(w$subset, repeats)
      r1 <- median_of(w$read_1thread, repeats)
      # Reads in a loop that keeps the last result, without gc() first:
      # 3 x repeats runs back to back, so that several collections fall
      # among them.
      rl <- median_of(w$read_loop, 3 * repeats)
      wl <- median_of(w$write_loop, repeats)
      sl <- median_of(w$subset_loop, repeats)
      rf <- median_run(t(vapply(seq_len(max(1, repeats %/% 3)), function(k) w$read_fresh(), numeric(2))))
      row <- list(impl = sprintf("zarr (R, %s order)", order), layout = layout, order = order,
                  write_s = wr[["wall"]], write_cpu = wr[["cpu"]], stored_bytes = w$stored(),
                  read_s = r[["wall"]], read_cpu = r[["cpu"]], subset_s = s[["wall"]], subset_cpu = s[["cpu"]],
                  read_1thread_s = r1[["wall"]], readloop_s = rl[["wall"]], readloop_cpu = rl[["cpu"]],
                  writeloop_s = wl[["wall"]], subsetloop_s = sl[["wall"]], readfresh_s = rf[["wall"]],
                  read_peak_bytes = if (layout == "zstd1") peak_rss(w$path) else NA)
      cat(jsonlite::toJSON(row, auto_unbox = TRUE, na = "null"), "\n")
      rows[[length(rows) + 1]] <- row
    }
  }
  rm(data)
}

# Read scaling: 32, 128, 512 MiB, zstd level 1, 256 x 256 chunks.
scaling <- list()
for (mib in c(32, 128, 512) * (N / 4096)^2) {
  n <- mib * 2^20 / 8 / N
  path <- file.path(data_dir, sprintf("scale_%g.zarr", mib))
  unlink(path, recursive = TRUE)
  z <- create_zarr(path)
  x <- make_data(n)
  z$add_array("/", "x", layout_builder("zstd1", "F", n))$write(x)
  rm(x)
  a <- open_zarr(path, read_only = TRUE)[["/x"]]
  t <- timed(function() a[], repeats)
  scaling[[length(scaling) + 1]] <- list(mib = mib, read_s = t[["wall"]], read_cpu = t[["cpu"]])
  cat(sprintf("scaling: %g MiB read in %.3f s\n", mib, t[["wall"]]))
  unlink(path, recursive = TRUE)
}

# Opening a hierarchy of 1,000 arrays in 100 groups.
path <- file.path(data_dir, "hierarchy.zarr")
unlink(path, recursive = TRUE)
z <- create_zarr(path)
for (g in seq_len(100)) {
  grp <- z$add_group("/", sprintf("g%03d", g))
  for (k in seq_len(10)) grp$add_array(sprintf("a%02d", k), define_array("int16", c(10, 10)))
}
open_all <- function() length(open_zarr(path, read_only = TRUE)$arrays)
stopifnot(open_all() == 1000)
plain <- timed(open_all, repeats)
z$consolidate()
consolidated <- timed(open_all, repeats)
# Store reads to open it with consolidated metadata, counted by the test
# HTTP server serving the same folder (NA without Python).
requests <- NA_integer_
if (nzchar(find_python())) {
  server <- start_server(path)
  reset(server)
  stopifnot(length(open_zarr(server$url)$arrays) == 1000)
  requests <- as.integer(stats(server)$requests)
  stop_server(server)
}
hierarchy <- list(plain_s = plain[["wall"]], consolidated_s = consolidated[["wall"]],
                  consolidated_requests = requests)
cat(sprintf("open 1000 arrays: %.3f s listing, %.3f s consolidated\n", plain[["wall"]], consolidated[["wall"]]))

meta <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M"), threads = zarr_num_threads(),
             cores = parallel::detectCores(), repeats = repeats,
             cpu = sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
             r = R.version.string)
jsonlite::write_json(list(meta = meta, rows = rows, scaling = scaling, hierarchy = hierarchy), out_file,
                     auto_unbox = TRUE, digits = NA, pretty = TRUE, na = "null")
unlink(data_dir, recursive = TRUE)
