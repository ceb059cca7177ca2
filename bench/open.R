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
# and the first open in a fresh process (after library(zarr) / import zarr),
# the median over fresh processes. The HTTP server is the test server
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
rounds <- 3L
fresh <- as.integer(Sys.getenv("ZARR_BENCH_OPEN_FRESH", "5"))

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
  wall_cpu(out)
}

# c(wall, cpu) from the last line a timing process printed.
wall_cpu <- function(out) {
  v <- suppressWarnings(as.numeric(strsplit(out[length(out)], " ", fixed = TRUE)[[1L]]))
  if (length(v) != 2L) c(NA_real_, NA_real_) else v
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

r_first <- function(location) {
  code <- sprintf(paste("suppressMessages(library(zarr)); t0 <- Sys.time(); c0 <- sum(proc.time()[1:2]);",
                        "a <- open_zarr('%s', read_only = TRUE)[['/x']];",
                        "cat(as.numeric(Sys.time() - t0, units = 'secs'), sum(proc.time()[1:2]) - c0)"), location)
  wall_cpu(system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE, stderr = FALSE))
}

rows <- lapply(cases, function(cs) {
  http <- isTRUE(cs$http)
  py_ok <- !http || py_http
  # rows: wall, cpu; one column per round or process
  r_rep <- py_rep <- r_new <- py_new <- matrix(NA_real_, 2L, 0L)
  for (k in seq_len(rounds)) {
    r_rep <- cbind(r_rep, r_repeated(cs$location))
    if (py_ok) py_rep <- cbind(py_rep, run_py(c("repeat", cs$location, "x", reps)))
  }
  for (k in seq_len(fresh)) {
    r_new <- cbind(r_new, r_first(cs$location))
    if (py_ok) py_new <- cbind(py_new, run_py(c("first", cs$location, "x")))
  }
  med <- function(m, row) if (ncol(m)) 1e3 * stats::median(m[row, ]) else NA_real_
  data.frame(case = cs$case,
             r_repeated_ms = med(r_rep, 1L), py_repeated_ms = med(py_rep, 1L),
             ratio_repeated = med(r_rep, 1L) / med(py_rep, 1L),
             ratio_repeated_cpu = med(r_rep, 2L) / med(py_rep, 2L),
             r_fresh_ms = med(r_new, 1L), py_fresh_ms = med(py_new, 1L),
             ratio_fresh = med(r_new, 1L) / med(py_new, 1L),
             ratio_fresh_cpu = med(r_new, 2L) / med(py_new, 2L))
})
res <- do.call(rbind, rows)

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
  sprintf(paste("Repeated: median of %d opens in one process (CPU: their total / %d), median of %d rounds.",
                "Fresh: the first open in a"), reps, reps, rounds),
  sprintf("new process after loading the package, median of %d processes.", fresh),
  "",
  "CPU ratio: the same for the CPU time of the process, which does not depend on the load of the machine.",
  "",
  "| case | R repeated | zarr-python repeated | ratio | CPU ratio | R fresh | zarr-python fresh | ratio | CPU ratio |",
  "|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |", fmt$case, fmt$r_repeated_ms, fmt$py_repeated_ms,
          fmt$ratio_repeated, fmt$ratio_repeated_cpu, fmt$r_fresh_ms, fmt$py_fresh_ms, fmt$ratio_fresh,
          fmt$ratio_fresh_cpu),
  "",
  sprintf(paste("Opening one array of the 1,000 over HTTP without consolidated metadata makes %d requests",
                "(the root's zarr.json and the array's): the group is opened lazily."), lazy_requests),
  if (!py_http) c("", "zarr-python's HTTP figures are missing: its venv has no aiohttp (fsspec's HTTP needs it).")
)
writeLines(md, results_md)
cat("written to", results_md, "\n")
