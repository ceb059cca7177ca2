# How much of its fault-free read speed does each reader keep when 5% of the
# requests fail with 503 (issue 37)? One float64 array of 4096 x 2048
# (64 MiB), chunks 256 x 256 (128 chunks of 512 KiB), written by
# zarr-python 3.4 in C order twice: without a compressor ("plain") and with
# zstd ("zstd"). The folder is served on 127.0.0.1 by the test HTTP server
# (tests/testthat/http_server.py) behind the fault-injecting proxy
# (tests/testthat/fault_proxy.py) with 20 ms added to every request, as a
# near cloud region would. The contenders, all through the same proxy:
#
#   zarr         this package: x <- open_zarr(url)[["/"]][]
#   zarr-python  zarr 3.4, zarr.storage.ObjectStore over obstore's HTTPStore
#   tensorstore  its zarr3 driver over the "http" kvstore
#
# Each run of a contender is a fresh process that opens the array and reads
# it whole REPS times in a loop (open included in each time, the previous
# result dropped before the next read, the last result kept and compared
# with the written values: a wrong value stops the bench). The contenders
# take turns, in a rotated order, ROUNDS times for each array and fault
# setting; before each run the proxy's faults are set anew (seed = round),
# so each run meets the same draws for the same requests. The figure is the
# median of the ROUNDS x REPS reads; each row also gives the 1-minute load
# average (/proc/loadavg) when its runs started: wall times depend on the
# machine's load.
#
# Writes bench/NETWORK_RESULTS.md (the figures; the notes around them are
# kept from the file's "## Notes" section on). Not part of the tests. Run
# from the repository root after `make install`, with a Python >= 3.12:
#
#   python3.12 -m venv bench/.venv-net
#   bench/.venv-net/bin/pip install "zarr>=3.4,<3.5" obstore tensorstore numpy
#   R_LIBS=.rlib Rscript bench/network_read.R
#
# (BENCH_NET_PYTHON names another Python with those packages; ROUNDS and
# REPS default to 5 and 3.)
library(zarr)

script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
nr <- 4096L
nc <- 2048L

# --- a run of this package (a process of its own) ---------------------------

args <- commandArgs(TRUE)
if (length(args) && args[1L] == "--worker") {
  url <- args[2L]
  reps <- as.integer(args[3L])
  walls <- numeric(reps)
  x <- NULL
  for (r in seq_len(reps)) {
    x <- NULL
    t0 <- proc.time()[["elapsed"]]
    x <- open_zarr(url)[["/"]][]
    walls[r] <- proc.time()[["elapsed"]] - t0
  }
  want <- matrix(readBin(args[4L], "double", nr * nc), nr, nc, byrow = TRUE)
  if (!identical(x, want)) stop("zarr read a wrong value from ", url)
  cat(jsonlite::toJSON(list(walls = walls, versions = paste("zarr", packageVersion("zarr"))),
                       auto_unbox = TRUE, digits = NA), "\n")
  quit(save = "no")
}

# --- the set-up -------------------------------------------------------------

rounds <- as.integer(Sys.getenv("ROUNDS", "5"))
reps <- as.integer(Sys.getenv("REPS", "3"))
latency_ms <- 20
rate <- 0.05
py <- Sys.getenv("BENCH_NET_PYTHON", file.path(script_dir, ".venv-net", "bin", "python"))
if (!file.exists(py)) stop("no Python with zarr, obstore and tensorstore at ", py, " (see the header)")
tests_dir <- file.path(dirname(script_dir), "tests", "testthat")
Sys.setenv(no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")

# R's own library path would reach the Python processes.
run_python <- function(args, ...) {
  withr::with_envvar(c(LD_LIBRARY_PATH = NA), system2(py, shQuote(args), ...))
}

# Start a Python server script; returns list(url, port, pid) once it listens.
start <- function(script, args) {
  out <- tempfile("net-", fileext = ".out")
  run_python(c(file.path(tests_dir, script), args, "--parent-pid", Sys.getpid(), "--max-seconds", "7200"),
             stdout = out, stderr = tempfile("net-", fileext = ".err"), wait = FALSE)
  deadline <- Sys.time() + 20
  repeat {
    line <- if (file.exists(out)) grep("^PORT ", readLines(out, warn = FALSE), value = TRUE) else character(0)
    if (length(line)) break
    if (Sys.time() > deadline) stop(script, " did not start")
    Sys.sleep(0.05)
  }
  parts <- strsplit(line[1L], " ", fixed = TRUE)[[1]]
  list(url = sprintf("http://127.0.0.1:%s", parts[2L]), port = as.integer(parts[2L]),
       pid = as.integer(parts[4L]))
}

control <- function(proxy, what) {
  con <- socketConnection("127.0.0.1", proxy$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf("GET /__faults/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r", what), con)
  lines <- readLines(con, warn = FALSE)
  jsonlite::fromJSON(lines[length(lines)])
}

data_dir <- file.path(tempdir(), "network-read")
unlink(data_dir, recursive = TRUE)
run_python(c(file.path(script_dir, "network_read.py"), "write", data_dir))
expected <- file.path(data_dir, "expected.f64")
stopifnot(file.size(expected) == nr * nc * 8)
server <- start("http_server.py", data_dir)
proxy <- start("fault_proxy.py", c("--upstream", server$url, "--latency-ms", latency_ms))

contenders <- c("zarr", "zarr-python", "tensorstore")

# One fresh process of `who` reading `url`; its read times and the proxy's
# counts of the run.
run <- function(who, url) {
  out <- if (who == "zarr") {
    system2(file.path(R.home("bin"), "Rscript"),
            shQuote(c(file.path(script_dir, "network_read.R"), "--worker", url, reps, expected)), stdout = TRUE)
  } else {
    run_python(c(file.path(script_dir, "network_read.py"), "read", who, url, reps, expected), stdout = TRUE)
  }
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop(who, " failed on ", url)
  got <- jsonlite::fromJSON(out[length(out)])
  got$stats <- control(proxy, "stats")
  got
}

# --- the measurements -------------------------------------------------------

started <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")
uptime_start <- system2("uptime", stdout = TRUE)
rows <- list()
versions <- character(0)
for (round in seq_len(rounds)) {
  turn <- contenders[(seq_along(contenders) + round - 2L) %% length(contenders) + 1L]
  for (array in c("plain", "zstd")) {
    for (faulty in c(FALSE, TRUE)) {
      for (who in turn) {
        if (faulty) {
          control(proxy, sprintf("set?rate=%s&faults=503&seed=%d&latency_ms=%s", rate, round, latency_ms))
        } else {
          control(proxy, sprintf("set?rate=0&latency_ms=%s", latency_ms))
        }
        load <- as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1L])
        got <- run(who, paste0(proxy$url, "/", array))
        versions[who] <- got$versions
        rows[[length(rows) + 1L]] <- data.frame(
          round = round, array = array, faulty = faulty, who = who, rep = seq_len(reps),
          wall = got$walls, load = load, requests = got$stats$requests / reps,
          injected = got$stats$faults[["503"]] / reps
        )
        cat(sprintf("round %d %-5s %-9s %-12s %s s (load %.2f, %d requests, %d 503s)\n", round, array,
                    if (faulty) "5% 503" else "no faults", who,
                    paste(sprintf("%.3f", got$walls), collapse = " "), load,
                    got$stats$requests, got$stats$faults[["503"]]))
      }
    }
  }
}
uptime_end <- system2("uptime", stdout = TRUE)
# (Both also end by themselves with this process, should it stop earlier.)
tools::pskill(c(proxy$pid, server$pid))
runs <- do.call(rbind, rows)

# --- the report -------------------------------------------------------------

mib <- nr * nc * 8 / 2^20
cell <- function(a, f, w) runs[runs$array == a & runs$faulty == f & runs$who == w, ]
summary <- do.call(rbind, lapply(c("plain", "zstd"), function(a) {
  do.call(rbind, lapply(contenders, function(w) {
    clean <- cell(a, FALSE, w)
    bad <- cell(a, TRUE, w)
    data.frame(array = a, who = w, clean = stats::median(clean$wall), faulty = stats::median(bad$wall),
               clean_load = stats::median(clean$load), faulty_load = stats::median(bad$load),
               requests = stats::median(bad$requests), injected = stats::median(bad$injected))
  }))
}))
summary$kept <- summary$clean / summary$faulty

fmt_row <- function(s) {
  sprintf("| %s | %s | %.3f (%.0f MiB/s, load %.2f) | %.3f (%.0f MiB/s, load %.2f) | %.0f%% | %.0f | %.1f |",
          s$array, s$who, s$clean, mib / s$clean, s$clean_load, s$faulty, mib / s$faulty, s$faulty_load,
          100 * s$kept, s$requests, s$injected)
}
ratio_rows <- unlist(lapply(c("plain", "zstd"), function(a) {
  s <- summary[summary$array == a, ]
  z <- s[s$who == "zarr", ]
  vapply(c("zarr-python", "tensorstore"), function(o) {
    p <- s[s$who == o, ]
    sprintf("| %s | zarr vs %s | %.2f | %.2f |", a, o, p$clean / z$clean, p$faulty / z$faulty)
  }, "")
}))

results_md <- file.path(script_dir, "NETWORK_RESULTS.md")
notes <- if (file.exists(results_md)) {
  old <- readLines(results_md)
  at <- grep("^## Notes", old)
  if (length(at)) old[at[1L]:length(old)] else character(0)
} else {
  character(0)
}
lines <- c(
  "# Network reads under injected 503s (bench/network_read.R)",
  "",
  sprintf(paste("One float64 array of %d x %d (%.0f MiB), chunks 256 x 256, written by zarr-python in C order,",
                "plain and zstd, served on 127.0.0.1 by tests/testthat/http_server.py behind",
                "tests/testthat/fault_proxy.py with %d ms added to every request; fault-free and with %.0f%%",
                "of the requests answered 503. Each figure: median of %d reads (%d fresh processes per",
                "contender taking turns, %d reads each, open included). Versions: %s."),
          nr, nc, mib, latency_ms, 100 * rate, rounds * reps, rounds, reps, paste(versions, collapse = "; ")),
  "",
  sprintf("Started %s. `uptime` before: `%s`; after: `%s`.", started, trimws(uptime_start),
          trimws(uptime_end)),
  "The wall times depend on the machine's load (the load column is the 1-minute load average",
  "when the runs of that row started).",
  "",
  "## Seconds per full read, and the share of the fault-free speed kept with 5% 503s",
  "",
  "| array | contender | fault-free, s | 5% 503, s | speed kept | requests per read | 503s per read |",
  "|---|---|---|---|---|---|---|",
  vapply(seq_len(nrow(summary)), function(i) fmt_row(summary[i, ]), ""),
  "",
  "## Ratios: the other contender's time over this package's (above 1: this package is faster)",
  "",
  "| array | pair | fault-free | 5% 503 |",
  "|---|---|---|---|",
  ratio_rows,
  "",
  "## Every read (s)",
  "",
  "| round | array | faults | contender | reads |",
  "|---|---|---|---|---|",
  vapply(split(runs, list(runs$round, runs$array, runs$faulty, runs$who), drop = TRUE), function(r) {
    sprintf("| %d | %s | %s | %s | %s |", r$round[1L], r$array[1L], if (r$faulty[1L]) "5% 503" else "none",
            r$who[1L], paste(sprintf("%.3f", r$wall), collapse = " "))
  }, ""),
  "",
  notes
)
writeLines(lines, results_md)
cat(lines[seq_len(grep("^## Every read", lines) - 1L)], sep = "\n")
