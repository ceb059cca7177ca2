# A plain loop of full reads, `x <- a[]` with no gc() between (issue 23),
# on the four layouts of the peer workload (F order, or C order as Python
# writes with ZARR_LOOP_ORDER=C; ZARR_LOOP_LAYOUTS=none,zstd1 for a part),
# each in a new R process: resident memory after 40 and after 400 reads, above what the
# process held after its first read, in results (128 MiB); and the
# median read of the loop against the median read after a gc(), and the
# means (the loop's mean includes the collections the package runs every
# few reads; the median is a read without one).
#   Rscript bench/read_loop.R [out.json]
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "common.R"))
args <- commandArgs(TRUE)
out_file <- if (length(args) >= 1) args[[1]] else NA_character_
dir <- tempfile("loop")
dir.create(dir)
data <- make_data(N)
child <- sprintf('
  suppressMessages(library(zarr))
  rss <- function() {
    l <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
    as.numeric(gsub("[^0-9]", "", l)) * 1024
  }
  a <- open_zarr(commandArgs(TRUE)[[1]], read_only = TRUE)[["/x"]]
  x <- a[]
  base <- rss()
  t <- numeric(400)
  for (i in 1:400) {
    t0 <- proc.time()[["elapsed"]]
    x <- a[]
    t[i] <- proc.time()[["elapsed"]] - t0
    if (i == 40) after40 <- rss()
  }
  after400 <- rss()
  rm(x)
  g <- vapply(1:40, function(i) system.time(a[])[["elapsed"]], 0)
  cat(jsonlite::toJSON(list(rss40 = (after40 - base) / %g, rss400 = (after400 - base) / %g,
                            loop_s = median(t), gc_first_s = median(g),
                            loop_mean_s = mean(t), gc_first_mean_s = mean(g)), auto_unbox = TRUE, digits = NA))
', nbytes, nbytes)
rows <- list()
order <- Sys.getenv("ZARR_LOOP_ORDER", "F")
layouts <- strsplit(Sys.getenv("ZARR_LOOP_LAYOUTS", "none,lz4,zstd1,shard"), ",")[[1]]
for (layout in layouts) {
  path <- file.path(dir, paste0(layout, ".zarr"))
  create_zarr(path)$add_array("/", "x", layout_builder(layout, order))$write(data)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(child), path), stdout = TRUE)
  row <- c(list(layout = layout, order = order), jsonlite::fromJSON(out[length(out)]))
  row$loop_over_gc_first <- row$loop_s / row$gc_first_s
  row$loop_over_gc_first_mean <- row$loop_mean_s / row$gc_first_mean_s
  cat(sprintf("%s: resident +%.2f results after 40 reads, +%.2f after 400; loop read %.4f s, gc-first %.4f s (%.2f); means %.4f / %.4f (%.2f)\n",
              layout, row$rss40, row$rss400, row$loop_s, row$gc_first_s, row$loop_over_gc_first,
              row$loop_mean_s, row$gc_first_mean_s, row$loop_over_gc_first_mean))
  rows[[length(rows) + 1]] <- row
  unlink(path, recursive = TRUE)
}
unlink(dir, recursive = TRUE)
if (!is.na(out_file)) jsonlite::write_json(rows, out_file, auto_unbox = TRUE, digits = NA, pretty = TRUE)
