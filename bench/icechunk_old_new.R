# Two builds of the package reading the 128 MiB array of
# bench/icechunk_read.R from an Icechunk repository and from a plain store,
# locally and on moto S3, taking turns: in each turn every build runs once,
# in a fresh R process, in an order drawn anew, so that both see the same
# spread of load on a shared machine. Each process opens the four stores,
# reads each once to warm up, then `reads` times in turns, and reports the
# median per store. The ratio repository / plain store is computed per
# process, then its median over the turns is reported per build.
#
#   R_LIBS=.rlib Rscript bench/icechunk_old_new.R PYTHON MOTO_SERVER LIB_OLD LIB_NEW [TURNS]
#
# PYTHON has icechunk 2.3 (the tests' venv), MOTO_SERVER is moto's server
# (the S3 tests' venv). Prints the table (Markdown) and `uptime` before
# and after; not part of the tests.
args <- commandArgs(TRUE)
py <- args[1]
moto <- args[2]
libs <- c(old = normalizePath(args[3]), new = normalizePath(args[4]))
turns <- if (length(args) >= 5L) as.integer(args[5]) else 5L
reads <- 3L
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))
source(file.path(here, "moto.R"))
uptime <- function() trimws(paste(system2("uptime", stdout = TRUE), collapse = " "))

out <- tempfile("icechunk-old-new-")
dir.create(out)
on.exit(unlink(out, recursive = TRUE), add = TRUE)
server <- bench_moto(moto)
on.exit(server$process$kill(), add = TRUE, after = FALSE)
status <- system2(py, c(file.path(here, "icechunk_read.py"), out, server$endpoint, "bench"), stderr = FALSE,
                  env = "LD_LIBRARY_PATH=")
if (!identical(as.integer(status), 0L)) stop("bench/icechunk_read.py failed")
# The plain store's files copied to S3 by the new build.
copy <- sprintf(paste0("library(zarr); root <- %s; target <- zarr_objectstore$new('s3://bench/plain.zarr'); ",
                       "for (key in list.files(root, recursive = TRUE, all.files = TRUE)) ",
                       "target$set(key, readBin(file.path(root, key), 'raw', file.size(file.path(root, key))))"),
                deparse(file.path(out, "plain.zarr")))
rscript <- file.path(R.home("bin"), "Rscript")
status <- system2(rscript, c("-e", shQuote(copy)), env = paste0("R_LIBS=", libs[["new"]]))
if (!identical(as.integer(status), 0L)) stop("cannot copy the plain store to moto")

stores <- c(
  local_plain = sprintf("open_zarr(%s)", deparse(file.path(out, "plain.zarr"))),
  local_repo = sprintf("open_icechunk(%s)", deparse(file.path(out, "repo"))),
  s3_plain = 'open_zarr("s3://bench/plain.zarr")',
  s3_repo = 'open_icechunk("s3://bench/repo")'
)
worker <- paste0(
  "suppressPackageStartupMessages(library(zarr)); stores <- ", paste(deparse(stores), collapse = ""), "; ",
  "a <- lapply(stores, function(code) eval(str2lang(code))[['/x']]); ",
  "want <- a[[1]][]; for (s in a[-1]) stopifnot(identical(s[], want)); rm(want); ",
  "t <- cpu <- matrix(NA_real_, ", reads, ", length(a), dimnames = list(NULL, names(a))); x <- NULL; ",
  "for (i in seq_len(", reads, ")) for (s in names(a)) { st <- system.time(x <- a[[s]][]); ",
  "t[i, s] <- st[['elapsed']]; cpu[i, s] <- st[['user.self']] + st[['sys.self']] }; ",
  "cat(apply(t, 2, median), apply(cpu, 2, median))"
)
# Wall and CPU seconds (this process's threads, not moto's) per store.
run <- function(build) {
  res <- system2(rscript, c("-e", shQuote(worker)), stdout = TRUE, env = paste0("R_LIBS=", libs[[build]]))
  stats::setNames(as.numeric(strsplit(res[length(res)], " ")[[1]]),
                  c(names(stores), paste0(names(stores), "_cpu")))
}

load_start <- uptime()
times <- list(old = NULL, new = NULL)
for (i in seq_len(turns)) {
  for (build in sample(names(libs))) times[[build]] <- rbind(times[[build]], run(build))
}
load_end <- uptime()

lines <- c(
  sprintf("%d turns, each build a fresh process per turn (medians of %d reads of each store).", turns, reads),
  "Wall seconds, and in brackets CPU seconds of the reading process (all its threads).",
  "",
  "| build | local plain | local repository | local ratio | S3 plain | S3 repository | S3 ratio |",
  "|---|---|---|---|---|---|---|"
)
cell <- function(t, s) sprintf("%.3f (%.3f)", median(t[, s]), median(t[, paste0(s, "_cpu")]))
ratio <- function(t, s) {
  sprintf("%.2f (%.2f)", median(t[, paste0(s, "_repo")] / t[, paste0(s, "_plain")]),
          median(t[, paste0(s, "_repo_cpu")] / t[, paste0(s, "_plain_cpu")]))
}
for (build in names(libs)) {
  t <- times[[build]]
  lines <- c(lines, sprintf("| %s | %s | %s | %s | %s | %s | %s |", build, cell(t, "local_plain"),
                            cell(t, "local_repo"), ratio(t, "local"), cell(t, "s3_plain"), cell(t, "s3_repo"),
                            ratio(t, "s3")))
}
lines <- c(lines, "", "`uptime` before and after:", "", paste0("    ", c(load_start, load_end)))
writeLines(lines)
