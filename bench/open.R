# Open time against zarr-python: open_zarr(location)[["/x"]] here,
# zarr.open_group(location, mode = "r")["x"] there (bench/open.py), on
#
#   small      a root group with 10 arrays and a sub-group, on the local
#              file system (no consolidated metadata) and over HTTP with
#              consolidated metadata;
#   1000       a root group with 1,000 arrays, the same two ways: opening
#              one array must not read the other 999 documents.
#
# Two figures each, R and Python taking turns in one run: the median of
# repeated opens in one process (warm: libraries loaded, connections open)
# and the first open in a fresh process, the median over fresh processes.
# A fresh process times the loading of the package (library(zarr) /
# import zarr) and the first open after it separately, so that both sides
# count the same things: the first open alone, and the load plus the first
# open. Neither counts the start of R or of the Python interpreter. The HTTP server is the test server
# (tests/testthat/http_server.py, Python standard library) on 127.0.0.1;
# zarr-python reaches it through fsspec, which needs aiohttp in the venv.
# Also counted: the requests one open of an array of the 1,000 makes over
# HTTP without consolidated metadata (laziness: the root and that array).
#
# The venv of zarr-python: ZARR_BENCH_VENV, else ZARR_TEST_VENV, else
# bench/.venv. Prints a table and writes bench/OPEN_RESULTS.md. Run from
# the repository root after `make install`:
#
#   R_LIBS=.rlib Rscript bench/open.R
library(zarr)

script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "http_server.R"))
results_md <- file.path(script_dir, "OPEN_RESULTS.md")

reps <- as.integer(Sys.getenv("ZARR_BENCH_OPEN_REPS", "30"))
# Rounds and fresh processes alternate R and Python: on a shared machine
# the load moves within a minute, and 7 of each keep one busy spell from
# deciding a median.
rounds <- as.integer(Sys.getenv("ZARR_BENCH_OPEN_ROUNDS", "7"))
fresh <- as.integer(Sys.getenv("ZARR_BENCH_OPEN_FRESH", "7"))

venv <- Sys.getenv("ZARR_BENCH_VENV", Sys.getenv("ZARR_TEST_VENV", file.path(script_dir, ".venv")))
python <- file.path(venv, "bin", "python")
if (!file.exists(python)) stop("no Python at ", python, ": set ZARR_BENCH_VENV to a venv with zarr")
open_py <- file.path(script_dir, "open.py")
run_py <- function(args) {
  # R's library path must not leak into Python.
  old <- Sys.getenv("LD_LIBRARY_PATH", unset = NA)
  Sys.unsetenv("LD_LIBRARY_PATH")
  on.exit(if (!is.na(old)) Sys.setenv(LD_LIBRARY_PATH = old))
  out <- suppressWarnings(system2(python, shQuote(c(open_py, args)), stdout = TRUE, stderr = FALSE))
  last_numbers(out, if (args[1L] == "first") 4L else 2L)
}

# The `n` numbers on the last line a timing process printed: c(wall, cpu),
# or for a fresh process c(load wall, load cpu, open wall, open cpu).
last_numbers <- function(out, n = 2L) {
  v <- if (length(out)) suppressWarnings(as.numeric(strsplit(out[length(out)], " ", fixed = TRUE)[[1L]]))
  if (length(v) != n) rep(NA_real_, n) else v
}

cpu_now <- function() {
  t <- proc.time()
  t[["user.self"]] + t[["sys.self"]]
}
py_http <- local({
  old <- Sys.getenv("LD_LIBRARY_PATH", unset = NA)
  Sys.unsetenv("LD_LIBRARY_PATH")
  ok <- system2(python, c("-c", shQuote("import aiohttp")), stdout = FALSE, stderr = FALSE) == 0L
  if (!is.na(old)) Sys.setenv(LD_LIBRARY_PATH = old)
  ok
})

# --- the stores ---------------------------------------------------------------

# The 1-minute load average of the machine (Linux), to report with the figures.
load_average <- function() {
  if (file.exists("/proc/loadavg")) strsplit(readLines("/proc/loadavg", n = 1L), " ")[[1L]][1L] else "unknown"
}
load_start <- load_average()

base <- file.path(tempdir(), "bench-open")
unlink(base, recursive = TRUE)
dir.create(base)
make_store <- function(path, n, consolidate) {
  z <- create_zarr(path)
  z$add_array("/", "x", define_array("float64", c(1000, 1000)))
  z$add_group("/", "g")
  names <- if (n > 10) sprintf("a%04d", seq_len(n - 1L)) else sprintf("y%d", seq_len(n - 1L))
  for (nm in names) z$add_array("/", nm, define_array("int32", 10))
  if (consolidate) z$consolidate()
  path
}
stores <- list(
  small = make_store(file.path(base, "small.zarr"), 10L, FALSE),
  small_cons = make_store(file.path(base, "small-cons.zarr"), 10L, TRUE),
  big = make_store(file.path(base, "big.zarr"), 1000L, FALSE),
  big_cons = make_store(file.path(base, "big-cons.zarr"), 1000L, TRUE)
)
server <- start_server(base)
on.exit(stop_server(server), add = TRUE)
url <- function(name) paste0(server$url, "/", basename(stores[[name]]))

cases <- list(
  list(case = "small, local", location = stores$small),
  list(case = "small, HTTP consolidated", location = url("small_cons"), http = TRUE),
  list(case = "1000 arrays, local", location = stores$big),
  list(case = "1000 arrays, HTTP consolidated", location = url("big_cons"), http = TRUE)
)

# --- timing ---------------------------------------------------------------------

open_r <- function(location) open_zarr(location, read_only = TRUE)[["/x"]]

# Wall: the median open. CPU: the batch's CPU time over `reps`, as R
# counts CPU time in whole milliseconds (an open takes a few).
r_repeated <- function(location) {
  open_r(location)
  c0 <- cpu_now()
  t <- vapply(seq_len(reps), function(i) {
    t0 <- Sys.time()
    a <- open_r(location)
    as.numeric(Sys.time() - t0, units = "secs")
  }, numeric(1))
  c(stats::median(t), (cpu_now() - c0) / reps)
}

# library(zarr), then the first open, each timed (as open.py's `first`).
r_first <- function(location) {
  code <- sprintf(paste("now <- function() c(as.numeric(Sys.time()), sum(proc.time()[1:2]));",
                        "t0 <- now(); suppressMessages(library(zarr)); t1 <- now();",
                        "a <- open_zarr('%s', read_only = TRUE)[['/x']]; t2 <- now();",
                        "cat(t1 - t0, t2 - t1)"), location)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE, stderr = FALSE)
  last_numbers(out, 4L)
}

rows <- lapply(cases, function(cs) {
  http <- isTRUE(cs$http)
  py_ok <- !http || py_http
  # rows: wall, cpu (fresh: load wall, load cpu, open wall, open cpu); one
  # column per round or process
  r_rep <- py_rep <- matrix(NA_real_, 2L, 0L)
  r_new <- py_new <- matrix(NA_real_, 4L, 0L)
  for (k in seq_len(rounds)) {
    r_rep <- cbind(r_rep, r_repeated(cs$location))
    if (py_ok) py_rep <- cbind(py_rep, run_py(c("repeat", cs$location, "x", reps)))
  }
  for (k in seq_len(fresh)) {
    r_new <- cbind(r_new, r_first(cs$location))
    if (py_ok) py_new <- cbind(py_new, run_py(c("first", cs$location, "x")))
  }
  med <- function(m, row) if (ncol(m)) 1e3 * stats::median(m[row, ]) else NA_real_
  # load + first open, per process
  both <- function(m) if (ncol(m)) 1e3 * stats::median(m[2L, ] + m[4L, ]) else NA_real_
  data.frame(case = cs$case,
             r_repeated_ms = med(r_rep, 1L), py_repeated_ms = med(py_rep, 1L),
             ratio_repeated = med(r_rep, 1L) / med(py_rep, 1L),
             ratio_repeated_cpu = med(r_rep, 2L) / med(py_rep, 2L),
             r_fresh_ms = med(r_new, 3L), py_fresh_ms = med(py_new, 3L),
             ratio_fresh = med(r_new, 3L) / med(py_new, 3L),
             ratio_fresh_cpu = med(r_new, 4L) / med(py_new, 4L),
             r_load_cpu_ms = med(r_new, 2L), py_load_cpu_ms = med(py_new, 2L),
             r_load_open_cpu_ms = both(r_new), py_load_open_cpu_ms = both(py_new),
             ratio_load_open_cpu = both(r_new) / both(py_new))
})
res <- do.call(rbind, rows)
load_end <- load_average()

# Requests for one array of 1,000 over HTTP without consolidated metadata.
reset(server)
a <- suppressWarnings(open_zarr(url("big"))[["/a0500"]])
lazy_requests <- as.integer(stats(server)$requests)

# --- report -----------------------------------------------------------------------

fmt <- res
num <- vapply(fmt, is.numeric, logical(1))
fmt[num] <- lapply(fmt[num], function(v) sprintf("%.2f", v))
print(fmt, row.names = FALSE)
cat(sprintf("requests to open one array of 1000 over HTTP without consolidated metadata: %d\n", lazy_requests))

md <- c(
  "# Open time",
  "",
  "`open_zarr(location)[[\"/x\"]]` against zarr-python's `zarr.open_group(location, mode=\"r\")[\"x\"]`,",
  "written by `bench/open.R` (R and Python take turns in one run). Milliseconds; ratio = R / Python.",
  sprintf("Repeated: median of %d opens in one process (CPU: their total / %d), median of %d rounds.",
          reps, reps, rounds),
  "",
  sprintf(paste("Fresh: a new process (`Rscript -e`, `python open.py first`), median of %d processes. Its clocks",
                "start once R or the interpreter runs the"), fresh),
  "script, so neither counts the start of R or of Python. Two clocks, the same on both sides:",
  "",
  "- the load: `library(zarr)` (the namespace, the Rust library, R6 and the class generators an open",
  "  uses) and `import zarr` (zarr-python's modules and their imports: numpy, numcodecs, ...);",
  "- the first open after it: `open_zarr(location, read_only = TRUE)[[\"/x\"]]` and",
  "  `zarr.open_group(location, mode=\"r\")[\"x\"]`, with whatever each still loads on first use.",
  "",
  "\"fresh\" is the first open alone; \"load + fresh\" the CPU time of both, summed per process.",
  "CPU ratio: the same for the CPU time of the process, which depends much less on the load of the machine.",
  "",
  paste("| case | R repeated | zarr-python repeated | ratio | CPU ratio | R fresh | zarr-python fresh | ratio |",
        "CPU ratio | R load + fresh CPU | zarr-python load + fresh CPU | CPU ratio |"),
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", fmt$case, fmt$r_repeated_ms,
          fmt$py_repeated_ms, fmt$ratio_repeated, fmt$ratio_repeated_cpu, fmt$r_fresh_ms, fmt$py_fresh_ms,
          fmt$ratio_fresh, fmt$ratio_fresh_cpu, fmt$r_load_open_cpu_ms, fmt$py_load_open_cpu_ms,
          fmt$ratio_load_open_cpu),
  "",
  sprintf("CPU time of the load alone (median of the cases' medians): `library(zarr)` %s ms, `import zarr` %s ms.",
          sprintf("%.1f", stats::median(res$r_load_cpu_ms)), sprintf("%.1f", stats::median(res$py_load_cpu_ms))),
  "",
  sprintf(paste("Opening one array of the 1,000 over HTTP without consolidated metadata makes %d requests",
                "(the root's zarr.json and the array's): the group is opened lazily."), lazy_requests),
  "",
  sprintf("Load average (1 minute) of the machine at the start and the end of the run: %s and %s.",
          load_start, load_end),
  if (!py_http) c("", "zarr-python's HTTP figures are missing: its venv has no aiohttp (fsspec's HTTP needs it).")
)
writeLines(md, results_md)
cat("written to", results_md, "\n")
