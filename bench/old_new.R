# Two builds of the package on one workload, taking turns: for every
# repeat of every (layout, operation) each build runs once, in an order
# drawn anew, so both see the same spread of load on a shared machine.
# Reports new/old per operation: the median of the per-repeat ratios of
# elapsed time, with a bootstrap 90% interval of that median, and the same
# median for CPU time (all threads), which moves less with what else the
# machine runs.
#   Rscript bench/old_new.R LIB_OLD LIB_NEW [REPEATS] [FOLDER]
# OLD_NEW_OPS="read" (or "write") times one kind of operation only.
# Each run is a fresh process (bench/old_new_worker.R) timing the median
# of OLD_NEW_CALLS calls (default 3); FOLDER (default a folder in /dev/shm
# if there is one, else tempdir()) holds the stores.
args <- commandArgs(trailingOnly = TRUE)
libs <- c(old = normalizePath(args[[1]]), new = normalizePath(args[[2]]))
repeats <- if (length(args) >= 3) as.integer(args[[3]]) else 6L
base <- if (length(args) >= 4) args[[4]] else if (dir.exists("/dev/shm")) "/dev/shm" else tempdir()
folder <- tempfile("old_new", tmpdir = base)
dir.create(folder)
on.exit(unlink(folder, recursive = TRUE))
worker <- file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))), "old_new_worker.R")
rscript <- file.path(R.home("bin"), "Rscript")

calls <- as.integer(Sys.getenv("OLD_NEW_CALLS", "3"))
# Elapsed and CPU seconds of one fresh process.
run <- function(build, op, layout, reps = calls) {
  out <- system2(rscript, c(worker, op, layout, folder, reps),
    stdout = TRUE, env = paste0("R_LIBS=", libs[[build]])
  )
  as.numeric(strsplit(trimws(out[length(out)]), " ")[[1]])
}

layouts <- c("none", "small", "zstd", "shards")
ops <- strsplit(Sys.getenv("OLD_NEW_OPS", "read,write"), ",")[[1]]
for (l in layouts) run("new", "prepare", l)
rows <- list()
set.seed(42)
for (r in seq_len(repeats)) {
  for (l in layouts) {
    for (op in ops) {
      t <- list()
      for (b in sample(names(libs))) t[[b]] <- run(b, op, l)
      rows[[length(rows) + 1]] <- data.frame(
        layout = l, op = op, rep = r, old = t$old[[1]], new = t$new[[1]],
        cpu_ratio = t$new[[2]] / t$old[[2]]
      )
    }
  }
  cat("repeat", r, "done\n")
}
d <- do.call(rbind, rows)
d$ratio <- d$new / d$old
s <- aggregate(cbind(old, new, ratio, cpu_ratio) ~ layout + op, d, median)
# A bootstrap interval of the median ratio: how far the figure could move
# with another draw of the same number of repeats.
interval <- function(r) {
  m <- replicate(2000, stats::median(sample(r, replace = TRUE)))
  round(stats::quantile(m, c(0.05, 0.95), names = FALSE), 3)
}
ci <- t(vapply(seq_len(nrow(s)), function(i) {
  interval(d$ratio[d$layout == s$layout[[i]] & d$op == s$op[[i]]])
}, numeric(2)))
s$old <- round(1000 * s$old, 1)
s$new <- round(1000 * s$new, 1)
s$ratio <- round(s$ratio, 3)
s$ratio_5 <- ci[, 1]
s$ratio_95 <- ci[, 2]
s$cpu_ratio <- round(s$cpu_ratio, 3)
names(s)[3:4] <- c("old_ms", "new_ms")
cat(sprintf("load average: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
print(s, row.names = FALSE)
