# Shared by bench/zarr_bench.R and bench/zarr_worker.R: the peer workload's
# data and layouts (as ../shared/bench/peers_bench.py defines them) and its
# timing protocol, so that this package's figures are taken exactly the way
# the peers' are.
library(zarr)

N <- as.integer(Sys.getenv("ZARR_BENCH_N", "4096")) # shrinks the workload for a quick check
nbytes <- N * N * 8
sub_index <- if (N >= 1256) 1001:1256 else seq_len(min(N, 256))

make_data <- function(n) {
  i <- (seq_len(n) - 1)
  j <- (seq_len(N) - 1)
  x <- outer(sin(i / 97), cos(j / 53)) * 1000 + outer(i * N, j, `+`) %% 7
  round(x, 3)
}

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
# other processes use less than 0.1 cores. ZARR_BENCH_MAX_WAIT=0 times at
# once and keeps the first run (a quick check on a busy machine).
max_wait_s <- as.numeric(Sys.getenv("ZARR_BENCH_MAX_WAIT", "300"))
wait_quiet <- function(max_wait = max_wait_s, limit = 0.1) {
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
  for (attempt in if (max_wait_s > 0) 1:5 else 5) {
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

# One timed run of `x <- fn()` the way a session repeats a read (a loop
# over time steps, `x <- a[]` again and again; peers_bench.py's
# --back-to-back): no wait and no gc() before it, and the result of the
# previous run of the same `label` is still alive while this one is made.
# run_once() collects first, so its reads always find freed memory to
# reuse; here the package must collect itself (pages.rs).
kept_results <- new.env()
run_kept <- function(fn, label) {
  b0 <- sys_busy()
  c0 <- cpu_now()
  t0 <- Sys.time()
  assign(label, fn(), envir = kept_results)
  wall <- as.numeric(Sys.time() - t0, units = "secs")
  c(wall = wall, cpu = (cpu_now() - c0) / wall)
}

# The median run (wall, cpu) of `reps` calls of run(), which times itself
# and returns c(wall, cpu), after one untimed warm-up call.
median_of <- function(run, reps) {
  run()
  median_run(t(vapply(seq_len(reps), function(k) run(), numeric(2))))
}

# Median wall time (and its cpu/wall) of `reps` timed runs of fn().
timed <- function(fn, reps) median_of(function() run_once(fn), reps)

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

# Seconds of the first full read of the array at `path` in a new R
# process: opened there, then one timed read (R's start, the package's
# loading and the opening untimed). Nothing freed earlier is there to
# reuse: every page of the result is new to the process.
fresh_read <- function(path) {
  code <- sprintf(paste(
    "suppressMessages(library(zarr)); a <- open_zarr('%s', read_only = TRUE)[['/x']]",
    "t0 <- proc.time()[['elapsed']]; x <- a[]; cat(proc.time()[['elapsed']] - t0)", sep = "\n"), path)
  as.numeric(system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE))
}

# The array definition of a layout; order "C" stores chunks as Python does
# (no transpose codec), "F" is the package's default (column-major chunks).
layout_builder <- function(layout, order, n = N) {
  b <- define_array("float64", c(n, N))
  b$chunk_shape <- c(256, 256)
  if (order == "C") b$portable <- TRUE
  b$remove_codec("blosc")
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

# One layout and order of the workload: `write()` deletes and re-creates
# the store (metadata only, untimed) and times the whole write; `read()`,
# `subset()` and `read_1thread()` time reads of what was written last.
workload <- function(data, data_dir, layout, order) {
  path <- file.path(data_dir, sprintf("zarr_%s_%s.zarr", layout, order))
  arr <- NULL
  reader <- NULL
  make_array <- function() {
    unlink(path, recursive = TRUE)
    z <- create_zarr(path)
    arr <<- z$add_array("/", "x", layout_builder(layout, order))
  }
  opened <- function() {
    if (is.null(reader)) reader <<- open_zarr(path, read_only = TRUE)[["/x"]]
    reader
  }
  list(
    path = path,
    write = function() {
      make_array()
      reader <<- NULL
      run_once(function() arr$write(data))
    },
    check = function() {
      a <- opened()
      identical(unname(a[]), data) && identical(unname(a[sub_index, sub_index]), data[sub_index, sub_index])
    },
    read = function() {
      a <- opened()
      run_once(function() a[])
    },
    subset = function() {
      a <- opened()
      run_once(function() a[sub_index, sub_index])
    },
    write_loop = function() {
      make_array()
      reader <<- NULL
      run_kept(function() arr$write(data), paste(path, "write"))
    },
    read_loop = function() {
      a <- opened()
      run_kept(function() a[], path)
    },
    subset_loop = function() {
      a <- opened()
      run_kept(function() a[sub_index, sub_index], paste(path, "subset"))
    },
    read_fresh = function() c(wall = fresh_read(path), cpu = NA),
    read_1thread = function() {
      a <- opened()
      withr::with_options(list(zarr.num_threads = 1), run_once(function() a[]))
    },
    stored = function() du(path)
  )
}

# The median run (wall, cpu) of a matrix of runs, one per row.
median_run <- function(runs) runs[order(runs[, "wall"])[ceiling(nrow(runs) / 2)], ]
