# Decode speed of numcodecs' codecs in this package against numcodecs' own,
# single thread, on the same encoded bytes (bench/codecs.py makes them and
# times numcodecs). Each side's figure is the CPU seconds of its process per
# decode, the median of REPS, which depends little on what else the machine
# runs; R's decode is `zarr_codec_generic$new(...)$decode(raw)`, so it
# includes copying the raw vector into the engine and the result into a new
# raw vector, where numcodecs' decode returns a NumPy array (a view of its
# input for quantize and bitround). Every R decode is checked to equal
# numcodecs' bytes.
#
#   Rscript bench/codecs.R [PYTHON] [REPS]
#
# PYTHON: a Python with numcodecs 0.17 and pcodec (the venv test-numcodecs.R
# makes), by default $ZARR_TEST_NUMCODECS_VENV/zarr34/bin/python.
library(zarr)

args <- commandArgs(trailingOnly = TRUE)
python <- if (length(args) >= 1L) args[[1]] else
  file.path(Sys.getenv("ZARR_TEST_NUMCODECS_VENV", ".venv-numcodecs"), "zarr34", "bin", "python")
reps <- if (length(args) >= 2L) as.integer(args[[2]]) else 15L
options(zarr.num_threads = 1L)

script <- file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1])), "codecs.py")
dir <- tempfile("codecs-bench")
dir.create(dir)
py <- system2(python, c(shQuote(script), shQuote(dir), reps), stdout = TRUE)
numcodecs_s <- jsonlite::fromJSON(py[length(py)])
cases <- jsonlite::fromJSON(file.path(dir, "cases.json"), simplifyVector = FALSE)

cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
rows <- lapply(names(cases), function(name) {
  case <- cases[[name]]
  input <- readBin(file.path(dir, paste0(name, ".in")), "raw", 1e8)
  want <- readBin(file.path(dir, paste0(name, ".out")), "raw", 1e8)
  codec <- zarr_codec_generic$new(case$name, case$configuration, case$data_type)
  stopifnot(identical(codec$decode(input), want))
  t <- vapply(seq_len(reps), function(i) {
    c0 <- cpu()
    codec$decode(input)
    cpu() - c0
  }, 0)
  r <- stats::median(t)
  data.frame(case = name, codec = case$name, data_type = case$data_type,
             r_ms = round(r * 1000, 2), numcodecs_ms = round(numcodecs_s[[name]] * 1000, 3),
             ratio = round(numcodecs_s[[name]] / max(r, 1e-6), 2))
})
res <- do.call(rbind, rows)
cat(sprintf("load average before: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
cat("| case | codec | data type | R ms | numcodecs ms | numcodecs / R |\n|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(res))) {
  with(res[i, ], cat(sprintf("| %s | %s | %s | %.2f | %.3f | %.2f |\n", case, codec, data_type, r_ms, numcodecs_ms,
                             ratio)))
}
unlink(dir, recursive = TRUE)
