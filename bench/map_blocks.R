# zarr_map_blocks() on 1 and 2 local workers (issue 41), against xarray +
# dask doing the same job on the same store (bench/map_blocks.py).
#
# The job: read every chunk of a float64 array (1 GiB by default; chunks of
# 1024 x 1024, 8 MiB, the default codecs: blosc zstd 1 with shuffle), apply
# an f that costs about as much as decoding the chunk, and write the result
# into a second array of the same layout. f is `reps` passes of
# `b * 0.999 + 0.001`, with `reps` chosen here so that f takes about the
# time one thread takes to read (fetch and decode) a chunk; xarray + dask
# run the same f with the same `reps`.
#
# Workers are PSOCK processes (plan(cluster), as plan(multisession) makes
# them; multisession with one worker would run in this process instead),
# each reading and writing with one thread (ZARR_NUM_THREADS=1 in their
# environment), so that 2 workers use the 2 cores once. dask runs its
# threaded scheduler with num_workers = 1 and 2 (numpy and blosc release
# the GIL). The tools take turns: every repeat runs each of them with 1,
# then 2 workers, so that they meet the same load.
#
#   R_LIBS=.rlib [BENCH_PYTHON=/path/to/venv/bin/python] Rscript bench/map_blocks.R [GiB] [repeats]
#
# BENCH_PYTHON: a Python with xarray, dask and zarr >= 3 (python -m venv
# v && v/bin/pip install "zarr>=3" xarray dask); without it the dask rows
# are left out. Prints a table with the machine's load average (uptime)
# beside each figure, and the CPU time the job took (this process and the
# workers; dask's process with its threads), which the load of other
# processes does not change as much as the elapsed time.
suppressMessages(library(zarr))
args <- commandArgs(TRUE)
gib <- if (length(args) >= 1) as.numeric(args[[1]]) else 1
reps_run <- if (length(args) >= 2) as.integer(args[[2]]) else 3L
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})

cols <- 8192
rows <- max(1024, round(gib * 2^30 / 8 / cols / 1024) * 1024)
chunk <- c(1024, 1024)
dir <- tempfile("map-blocks-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
path <- file.path(dir, "data.zarr")

load_avg <- function() {
  l <- tryCatch(readLines("/proc/loadavg", n = 1L), error = function(e) NA_character_)
  paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
}

# The data, written one column of chunks at a time (128 MiB each for 1 GiB).
z <- create_zarr(path)
def <- define_array("float64", c(rows, cols))
def$chunk_shape <- chunk
x <- z$add_array("/", "x", def)
i <- seq_len(rows) - 1
for (c0 in seq(0, cols - 1, by = chunk[2])) {
  j <- c0 + seq_len(chunk[2]) - 1
  x$write(round(outer(sin(i / 97), cos(j / 53)) * 1000 + outer(i, j, `+`) %% 7, 3),
          list(c(1, rows), c(c0 + 1, c0 + chunk[2])))
}
out <- z$add_array("/", "y", def)
n_blocks <- prod(ceiling(c(rows, cols) / chunk))
cat(sprintf("array %d x %d float64 (%.2f GiB), chunks %d x %d: %d blocks; stored %.0f MiB\n",
            rows, cols, rows * cols * 8 / 2^30, chunk[1], chunk[2], n_blocks,
            sum(file.size(list.files(file.path(path, "x"), recursive = TRUE, full.names = TRUE))) / 2^20))

# Calibration, on one thread: the median read of a chunk, and of a pass
# of f over it.
options(zarr.num_threads = 1)
sels <- lapply(0:7, function(k) list(c(1, 1024), c(k * 1024 + 1, (k + 1) * 1024)))
t_read <- median(vapply(sels, function(s) system.time(x$read(s))[["elapsed"]], 0))
f <- function(b, reps) {
  for (k in seq_len(reps)) b <- b * 0.999 + 0.001
  b
}
b <- x$read(sels[[1]])
# Ten passes at a time: one pass (an 8 MiB allocation and a multiply-add)
# is near the clock's resolution.
t_pass <- median(vapply(1:5, function(k) system.time(f(b, 10))[["elapsed"]], 0)) / 10
reps <- max(1L, as.integer(round(t_read / t_pass)))
options(zarr.num_threads = NULL)
t_f <- median(vapply(1:5, function(k) system.time(f(b, reps))[["elapsed"]], 0))
cat(sprintf("one chunk, one thread: read %.1f ms, f %.1f ms (%d passes of %.1f ms)\n",
            t_read * 1000, t_f * 1000, reps, t_pass * 1000))
rm(b)

# Each worker reads and writes with one thread.
Sys.setenv(ZARR_NUM_THREADS = "1")
want <- function() f(x$read(list(c(1, 1024), c(1, 1024))), reps)
# CPU seconds (user + system) used so far by the processes `pids`
# (/proc/<pid>/stat, in clock ticks of 1/100 s), and by this one.
cpu_of <- function(pids) {
  sum(vapply(pids, function(p) {
    v <- strsplit(sub("^.*\\) ", "", readLines(sprintf("/proc/%d/stat", p), n = 1L)), " ")[[1]]
    sum(as.numeric(v[12:13])) / 100
  }, 0))
}
cpu_self <- function() sum(proc.time()[c("user.self", "sys.self")])

python <- Sys.getenv("BENCH_PYTHON", "")
has_python <- nzchar(python) && file.exists(python)
zarr_run <- function(w, r) {
  future::plan(future::cluster, workers = w)
  on.exit(future::plan(future::sequential))
  # Start the workers and load the package before timing.
  pids <- unique(unlist(future.apply::future_lapply(seq_len(w), function(i) {
    requireNamespace("zarr", quietly = TRUE)
    Sys.getpid()
  })))
  load <- load_avg()
  c0 <- cpu_of(pids) + cpu_self()
  t <- system.time(zarr_map_blocks(x, f, out, reps = reps))[["elapsed"]]
  cpu <- cpu_of(pids) + cpu_self() - c0
  stopifnot(identical(out$read(list(c(1, 1024), c(1, 1024))), want()))
  list(tool = "zarr_map_blocks", workers = w, run = r, s = t, cpu_s = cpu, load = load)
}
dask_run <- function(w, r) {
  env <- Sys.getenv("LD_LIBRARY_PATH")
  Sys.unsetenv("LD_LIBRARY_PATH")
  on.exit(Sys.setenv(LD_LIBRARY_PATH = env))
  lines <- system2(python, c(file.path(script_dir, "map_blocks.py"), path, reps, w), stdout = TRUE)
  row <- jsonlite::fromJSON(lines[length(lines)], simplifyDataFrame = FALSE)
  row$run <- r
  row[c("tool", "workers", "run", "s", "cpu_s", "load")]
}
# In turns, so that every contender meets the same load: each repeat runs
# each tool with 1 and then 2 workers.
results <- list()
for (r in seq_len(reps_run)) {
  for (w in c(1L, 2L)) {
    results[[length(results) + 1L]] <- zarr_run(w, r)
    if (has_python) results[[length(results) + 1L]] <- dask_run(w, r)
  }
}

tab <- do.call(rbind, lapply(results, as.data.frame))
print(tab, row.names = FALSE)
cat("\nmedians:\n")
med <- aggregate(cbind(s, cpu_s) ~ tool + workers, tab, median)
base <- med$s[med$workers == 1]
names(base) <- med$tool[med$workers == 1]
med$speedup <- base[med$tool] / med$s
med$GiB_per_s <- rows * cols * 8 / 2^30 / med$s
print(med, row.names = FALSE, digits = 3)
