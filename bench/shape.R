# The cost of `arr$shape` (and of `arr$metadata`, `arr$name` for scale) in
# two builds of the package, taking turns: each turn runs one build in a
# fresh process timing a loop of calls, so both see the same load on a
# shared machine (two builds of one package cannot share an R session).
#   Rscript bench/shape.R LIB_OLD LIB_NEW [TURNS] [CALLS]
# Prints microseconds per call (medians over the turns), new/old, and the
# load average.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2L) stop("usage: Rscript bench/shape.R LIB_OLD LIB_NEW [TURNS] [CALLS]")
libs <- c(old = normalizePath(args[[1]]), new = normalizePath(args[[2]]))
turns <- if (length(args) >= 3L) as.integer(args[[3]]) else 7L
calls <- if (length(args) >= 4L) as.integer(args[[4]]) else 10000L
rscript <- file.path(R.home("bin"), "Rscript")

# One array with a document of some size (an attribute of 2,000
# characters), as a data set with history and CF attributes has.
worker <- sprintf('
suppressPackageStartupMessages(library(zarr))
a <- as_zarr(array(1:24, c(2, 3, 4)))[["/"]]
a$set_attribute("history", strrep("x", 2000))
per_call <- function(f) {
  f()
  gc()
  system.time(for (i in seq_len(%d)) f())[["elapsed"]] / %d * 1e6
}
cat(per_call(function() a$shape), per_call(function() a$metadata), per_call(function() a$name), "\n")
', calls, calls)

run <- function(build) {
  out <- system2(rscript, c("-e", shQuote(worker)), stdout = TRUE, env = paste0("R_LIBS=", libs[[build]]))
  as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
}

times <- list(old = list(), new = list())
set.seed(1)
for (t in seq_len(turns)) {
  for (build in sample(names(libs))) times[[build]][[t]] <- run(build)
}
what <- c("shape", "metadata", "name")
med <- vapply(times, function(x) apply(do.call(rbind, x), 2, stats::median), numeric(3))
rownames(med) <- what
out <- data.frame(access = what, old_us = round(med[, "old"], 2), new_us = round(med[, "new"], 2),
                  new_over_old = round(med[, "new"] / med[, "old"], 3))
print(out, row.names = FALSE)
cat("turns", turns, "x", calls, "calls; load average:", readLines("/proc/loadavg", warn = FALSE), "\n")
