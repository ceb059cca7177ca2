# Decode speed of numcodecs' codecs in this package against numcodecs' own,
# single thread, on the same encoded bytes (bench/codecs.py makes them with
# numcodecs and times its decode).
#
# Both sides time the same work, bytes in memory to decoded elements in
# memory, in CPU seconds of the decoding thread (median of REPS): numcodecs'
# `codec.decode(bytes)`, and here the engine's decode of one chunk as an
# array read does it after the fetch (an internal binding times it in Rust:
# chunk_decode_seconds()). Each decode on both sides takes a fresh copy of
# the encoded bytes, made off the clock, as a read decodes bytes it has just
# fetched (the engine's decode takes its input). Each case is a one-chunk array whose chunk is
# numcodecs' bytes, with the codec where zarr-python 3 puts it (a filter
# before `bytes`, a compressor after it, a serializer in its place); the
# array's read is checked to equal numcodecs' decode. A second column times
# the user-facing `zarr_codec_generic$decode(raw)`, which also copies the
# raw vector into the engine and the result into a new raw vector (mean CPU
# seconds of the R process per call, from proc.time()).
#
#   Rscript bench/codecs.R [PYTHON] [REPS]
#
# PYTHON: a Python with numcodecs 0.17, pcodec and zfpy (the venv
# test-numcodecs.R makes), by default $ZARR_TEST_NUMCODECS_VENV/zarr34/bin/python.
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

# A one-chunk array at `path` holding `input` with the case's codec.
case_array <- function(path, case, input) {
  shape <- unlist(case$shape)
  one_byte <- case$data_type %in% c("bool", "int8", "uint8")
  bytes <- if (one_byte) list(name = "bytes") else
    list(name = "bytes", configuration = list(endian = "little"))
  codec <- list(name = case$name, configuration = case$configuration)
  codecs <- switch(case$kind, filter = list(codec, bytes), compressor = list(bytes, codec),
                   serializer = list(codec))
  meta <- list(zarr_format = 3L, node_type = "array", shape = I(shape), data_type = case$data_type,
               chunk_grid = list(name = "regular", configuration = list(chunk_shape = I(shape))),
               chunk_key_encoding = list(name = "default"),
               fill_value = if (case$data_type == "bool") FALSE else 0L, codecs = codecs)
  chunk <- file.path(path, "c", paste(rep("0", length(shape)), collapse = "/"))
  dir.create(dirname(chunk), recursive = TRUE)
  writeLines(jsonlite::toJSON(meta, auto_unbox = TRUE, null = "null", digits = NA), file.path(path, "zarr.json"))
  writeBin(input, chunk)
  open_zarr(path, read_only = TRUE)[["/"]]
}

# numcodecs' decoded bytes as the R values a read gives, in C order.
expected <- function(case, out) {
  n <- prod(unlist(case$shape))
  switch(case$data_type,
         float64 = readBin(out, "double", n, 8L), float32 = readBin(out, "double", n, 4L),
         int32 = readBin(out, "integer", n, 4L), bool = as.logical(as.integer(out)))
}

cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
rows <- lapply(names(cases), function(name) {
  case <- cases[[name]]
  input <- readBin(file.path(dir, paste0(name, ".in")), "raw", 1e8)
  want <- readBin(file.path(dir, paste0(name, ".out")), "raw", 1e8)
  arr <- case_array(file.path(dir, name), case, input)
  got <- arr[]
  if (length(dim(got)) == 2L) got <- t(got)
  stopifnot(identical(as.vector(got), expected(case, want)))
  engine <- stats::median(zarr:::chunk_decode_seconds(arr, rep(0, length(case$shape)), reps))
  codec <- zarr_codec_generic$new(case$name, case$configuration, case$data_type)
  shape <- if (case$kind == "serializer") rev(unlist(case$shape))
  stopifnot(identical(codec$decode(input, shape = shape), want))
  c0 <- cpu()
  for (i in seq_len(reps)) codec$decode(input, shape = shape)
  generic <- (cpu() - c0) / reps
  data.frame(case = name, codec = case$name, data_type = case$data_type, engine_ms = engine * 1000,
             numcodecs_ms = numcodecs_s[[name]] * 1000, ratio = numcodecs_s[[name]] / max(engine, 1e-9),
             generic_ms = generic * 1000)
})
res <- do.call(rbind, rows)
cat(sprintf("load average after: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
cat("| case | codec | data type | R engine ms | numcodecs ms | numcodecs / R | R `$decode()` ms |\n",
    "|---|---|---|---|---|---|---|\n", sep = "")
for (i in seq_len(nrow(res))) {
  with(res[i, ], cat(sprintf("| %s | %s | %s | %.3f | %.3f | %.2f | %.2f |\n", case, codec, data_type, engine_ms,
                             numcodecs_ms, ratio, generic_ms)))
}
unlink(dir, recursive = TRUE)
