# Reading a 128 MiB float64 array (4096 x 4096, chunks 512 x 512, zstd
# level 1) from an Icechunk repository against the same array in a plain
# Zarr store, on the local file system and, when a moto_server is given,
# on moto S3 at loopback (both written by bench/icechunk_read.py with
# zarr-python and icechunk-python 2.3; the plain store is copied to S3
# file by file through zarr_objectstore, so its bytes are the local ones).
#
# Two measures, the stores taking turns in each:
# - a loop in one process: one warm-up read each, then `runs` reads
#   `x <- a[]`, the last result kept while the next read runs, as a user's
#   loop does;
# - fresh processes: `turns` new R processes per store, each opening the
#   store and reading the array once (no connection, manifest or page
#   cache of the process is warm; the OS file cache and moto are).
# `uptime` is recorded before each measure: the wall times depend on load.
#
# Writes bench/ICECHUNK_RESULTS.md. Not part of the tests. Run from the
# repository root after `make install`, with a Python that has icechunk
# 2.3 (the tests' venv) and, optionally, moto's server (the S3 tests' venv):
#
#   R_LIBS=.rlib Rscript bench/icechunk_read.R .venv-icechunk/bin/python .venv-moto/bin/moto_server
library(zarr)
args <- commandArgs(TRUE)
py <- if (length(args) >= 1L) args[1] else "python3"
moto <- if (length(args) >= 2L) args[2] else ""
runs <- 11L
turns <- 7L
out <- tempfile("icechunk-bench-")
dir.create(out)
on.exit(unlink(out, recursive = TRUE), add = TRUE)

uptime <- function() trimws(paste(system2("uptime", stdout = TRUE), collapse = " "))

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))), "moto.R"))

s3 <- nzchar(moto)
if (s3) {
  server <- bench_moto(moto)
  on.exit(server$process$kill(), add = TRUE, after = FALSE)
}
status <- system2(py, c("bench/icechunk_read.py", out, if (s3) c(server$endpoint, "bench")), stderr = FALSE,
                  env = "LD_LIBRARY_PATH=")
if (!identical(as.integer(status), 0L)) stop("bench/icechunk_read.py failed")
if (s3) {
  target <- zarr_objectstore$new("s3://bench/plain.zarr")
  root <- file.path(out, "plain.zarr")
  for (key in list.files(root, recursive = TRUE, all.files = TRUE)) {
    path <- file.path(root, key)
    target$set(key, readBin(path, "raw", file.size(path)))
  }
}

# The code that opens each store, run here and in the fresh processes.
stores <- c(
  "plain local store" = sprintf("open_zarr(%s)", deparse(file.path(out, "plain.zarr"))),
  "Icechunk repository (local)" = sprintf("open_icechunk(%s)", deparse(file.path(out, "repo")))
)
if (s3) {
  stores <- c(stores,
              "plain store on moto S3" = 'open_zarr("s3://bench/plain.zarr")',
              "Icechunk repository on moto S3" = 'open_icechunk("s3://bench/repo")')
}
arrays <- lapply(stores, function(code) eval(str2lang(code))[["/x"]])
want <- arrays[[1]][]
for (a in arrays[-1]) stopifnot(identical(a[], want))
rm(want)

load_loop <- uptime()
x <- NULL
loop <- matrix(NA_real_, runs, length(arrays), dimnames = list(NULL, names(stores)))
for (s in names(arrays)) x <- arrays[[s]][]
for (i in seq_len(runs)) {
  for (s in names(arrays)) loop[i, s] <- system.time(x <- arrays[[s]][])[["elapsed"]]
}
rm(x, arrays)
invisible(gc())

child <- function(code) {
  expr <- sprintf(paste0("suppressPackageStartupMessages(library(zarr)); t0 <- proc.time()[[3]]; ",
                         "a <- %s[[\"/x\"]]; t1 <- proc.time()[[3]]; x <- a[]; t2 <- proc.time()[[3]]; ",
                         "stopifnot(identical(dim(x), c(4096L, 4096L))); cat(t1 - t0, t2 - t1)"), code)
  res <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(expr)), stdout = TRUE)
  as.numeric(strsplit(res[length(res)], " ")[[1]])
}
load_fresh <- uptime()
fresh_open <- fresh_read <- matrix(NA_real_, turns, length(stores), dimnames = list(NULL, names(stores)))
for (i in seq_len(turns)) {
  for (s in names(stores)) {
    t <- child(stores[[s]])
    fresh_open[i, s] <- t[1]
    fresh_read[i, s] <- t[2]
  }
}
load_end <- uptime()

med <- function(m) apply(m, 2L, median)
base <- ifelse(grepl("S3", names(stores)), "plain store on moto S3", "plain local store")
res <- data.frame(
  store = names(stores),
  loop_median = med(loop), loop_min = apply(loop, 2L, min),
  fresh_open = med(fresh_open), fresh_read = med(fresh_read)
)
res$loop_ratio <- res$loop_median / res$loop_median[match(base, res$store)]
res$fresh_ratio <- res$fresh_read / res$fresh_read[match(base, res$store)]
print(res, digits = 3, row.names = FALSE)
lines <- c(
  "# Icechunk: reading 128 MiB from a repository against a plain store",
  "",
  "`bench/icechunk_read.R`: a float64 array of 4096 x 4096 in chunks of 512 x 512 (zstd 1),",
  "read whole with `x <- a[]`; S3 is moto in server mode on loopback. Loop: one process,",
  sprintf("a warm-up read each, then %d reads per store in turns, the last result kept. Fresh:", runs),
  sprintf("%d new R processes per store in turns, each opening the store and reading once.", turns),
  "Ratios are against the plain store of the same place (local or S3).",
  sprintf("Threads: %d; %s.", zarr_num_threads(), format(Sys.time(), "%Y-%m-%d")),
  "",
  paste("| store | loop median (s) | loop min (s) | loop median / plain | fresh: open (s) | fresh: read (s) |",
        "fresh read / plain |"),
  "|---|---|---|---|---|---|---|",
  sprintf("| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |", res$store, res$loop_median, res$loop_min,
          res$loop_ratio, res$fresh_open, res$fresh_read, res$fresh_ratio),
  "",
  "`uptime` before the loop, before the fresh processes and at the end:",
  "",
  paste0("    ", c(load_loop, load_fresh, load_end))
)
# The notes written by hand below the marker stay.
results <- "bench/ICECHUNK_RESULTS.md"
marker <- "<!-- Written by hand from here on: bench/icechunk_read.R keeps it. -->"
kept <- if (file.exists(results)) readLines(results) else character(0)
kept <- if (marker %in% kept) kept[seq(match(marker, kept), length(kept))] else marker
writeLines(c(lines, "", kept), results)
