# The peer workload (../shared/bench/peers_bench.py) run on this package:
# a 4096 x 4096 float64 field, four layouts, write / full read / 256 x 256
# subset, in both storage orders (R's column-major with the default
# transpose codec, and C order as Python writes it). Also single-thread
# reads, peak memory of a full read, read scaling with size, and opening a
# hierarchy of 1,000 arrays with and without consolidated metadata.
# Usage: Rscript bench/zarr_bench.R [repeats] [out.json]
library(zarr)
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "http_server.R"))

args <- commandArgs(trailingOnly = TRUE)
repeats <- if (length(args) >= 1) as.integer(args[[1]]) else 3L
out_file <- if (length(args) >= 2) args[[2]] else "bench/results/zarr.json"
dir.create(dirname(out_file), recursive = TRUE, showWarnings = FALSE)
data_dir <- file.path(tempdir(), "zarr-bench")
dir.create(data_dir, showWarnings = FALSE)

# ZARR_BENCH_N shrinks the workload for a quick check of this script.
N <- as.integer(Sys.getenv("ZARR_BENCH_N", "4096"))
nbytes <- N * N * 8
make_data <- function(n) {
  i <- (seq_len(n) - 1)
  j <- (seq_len(N) - 1)
  x <- outer(sin(i / 97), cos(j / 53)) * 1000 + outer(i * N, j, `+`) %% 7
  round(x, 3)
}
data <- make_data(N)

cpu_now <- function() {
  t <- proc.time()
  t[["user.self"]] + t[["sys.self"]]
}

# CPU seconds used by the whole machine so far (/proc/stat: user, nice,
# system, irq, softirq, steal).
sys_busy <- function() {
  v <- as.numeric(strsplit(trimws(readLines("/proc/stat", n = 1L)), " +")[[1]][-1])
  sum(v[c(1, 2, 3, 6, 7, 8)]) / 100
}

# Cores used by everything but this process over `window` seconds
# (kernel writeback of earlier writes counts).
others_cores <- function(window = 0.25) {
  b0 <- sys_busy()
  c0 <- cpu_now()
  Sys.sleep(window)
  max(0, (sys_busy() - b0) - (cpu_now() - c0)) / window
}

# As peers_bench.py does before each timed run: wait (up to 5 minutes) until
# other processes use less than 0.1 cores.
wait_quiet <- function(max_wait = 300, limit = 0.1) {
  t_end <- Sys.time() + max_wait
  while (Sys.time() < t_end) {
    if (others_cores() < limit) return(TRUE)
    Sys.sleep(1)
  }
  FALSE
}

# One timed run of fn() after wait_quiet(), retried (up to 5 times) when
# other processes used more than 0.15 cores meanwhile, as the peers' runs.
run_once <- function(fn) {
  for (attempt in 1:5) {
    wait_quiet()
    invisible(gc(FALSE))
    b0 <- sys_busy()
    c0 <- cpu_now()
    t0 <- Sys.time()
    fn()
    wall <- as.numeric(Sys.time() - t0, units = "secs")
    mine <- cpu_now() - c0
    others <- if (wall > 0.05) max(0, (sys_busy() - b0) - mine) / wall else 0
    if (others <= 0.15 || attempt == 5) return(c(wall = wall, cpu = mine / wall))
  }
}

# Median wall time (and its cpu/wall) of `reps` runs, after one warm-up.
timed <- function(fn, reps = repeats, before = NULL) {
  if (!is.null(before)) before()
  fn()
  runs <- t(vapply(seq_len(reps), function(k) {
    if (!is.null(before)) before()
    run_once(fn)
  }, numeric(2)))
  runs[order(runs[, "wall"])[ceiling(reps / 2)], ]
}

# Peak resident memory of one full read of the array at `path`, above what
# the process held before it, in a fresh R process: here, the read would
# reuse the memory a freed earlier result left mapped (see pages.rs) and
# show almost no growth at all.
peak_rss <- function(path) {
  code <- sprintf(paste(
    "status <- function(f) { l <- grep(paste0('^', f, ':'), readLines('/proc/self/status'), value = TRUE);",
    "as.numeric(gsub('[^0-9]', '', l)) * 1024 }",
    "suppressMessages(library(zarr)); a <- open_zarr('%s', read_only = TRUE)[['/x']]; invisible(gc(FALSE))",
    "base <- status('VmRSS'); writeLines('5', '/proc/self/clear_refs'); y <- a[]",
    "cat(status('VmHWM') - base)", sep = "\n"), path)
  as.numeric(system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE))
}

layout_builder <- function(layout, order, n = N) {
  b <- define_array("float64", c(n, N))
  b$chunk_shape <- c(256, 256)
  if (order == "C") b$portable <- TRUE
  b$remove_codec("zstd")
  switch(layout,
    none = NULL,
    zstd1 = b$add_codec("zstd", list(level = 1, checksum = FALSE)),
    lz4 = b$add_codec("blosc", list(cname = "lz4", clevel = 5, shuffle = "shuffle", typesize = 8)),
    shard = {
      b$add_codec("zstd", list(level = 1, checksum = FALSE))
      b$chunk_shape <- c(1024, 1024)
      b$add_codec("sharding_indexed", list(chunk_shape = c(256, 256)))
    }
  )
  b
}

du <- function(path) sum(file.size(list.files(path, recursive = TRUE, full.names = TRUE, all.files = TRUE)))

rows <- list()
for (layout in c("none", "zstd1", "lz4", "shard")) {
  for (order in c("F", "C")) {
    path <- file.path(data_dir, sprintf("zarr_%s_%s.zarr", layout, order))
    make_array <- function() {
      unlink(path, recursive = TRUE)
      z <- create_zarr(path)
      z$add_array("/", "x", layout_builder(layout, order))
    }
    arr <- NULL
    # the write alone: the array is created (metadata only) before the timer
    w <- timed(function() arr$write(data), before = function() arr <<- make_array())
    stored <- du(path)
    a <- open_zarr(path, read_only = TRUE)[["/x"]]
    sub <- if (N >= 1256) 1001:1256 else seq_len(min(N, 256))
    stopifnot(identical(unname(a[]), data), identical(unname(a[sub, sub]), data[sub, sub]))
    r <- timed(function() a[])
    s <- timed(function() a[sub, sub])
    r1 <- withr::with_options(list(zarr.num_threads = 1), timed(function() a[]))
    mem <- if (layout == "zstd1") peak_rss(path) else NA
    row <- list(impl = sprintf("zarr (R, %s order)", order), layout = layout, order = order,
                write_s = w[["wall"]], write_cpu = w[["cpu"]], stored_bytes = stored,
                read_s = r[["wall"]], read_cpu = r[["cpu"]], subset_s = s[["wall"]], subset_cpu = s[["cpu"]],
                read_1thread_s = r1[["wall"]], read_peak_bytes = mem)
    cat(jsonlite::toJSON(row, auto_unbox = TRUE, na = "null"), "\n")
    rows[[length(rows) + 1]] <- row
  }
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
  t <- timed(function() a[])
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
plain <- timed(open_all)
z$consolidate()
consolidated <- timed(open_all)
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
