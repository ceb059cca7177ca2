# CF encoding cost on write: a float32 cube of 365 x 180 x 360 in chunks of
# 30 x 90 x 90 (blosc zstd, the default codecs) with a _FillValue and
# dimension names, and the same cube packed into int16 (scale_factor,
# add_offset), written in alternating turns:
#   cf     through the CF-decoding array: the engine's gather encodes
#          (NA -> _FillValue, packing, rounding);
#   raw    the stored values (encoded once, beforehand) written raw
#          (zarr.cf_decode = FALSE): the cost floor;
#   r      the R encoding the engine replaced (kept below): a pass of R
#          over the data, then a raw write.
# Prints the medians and the ratios cf / raw and cf / r.
#   Rscript bench/cf_write.R [repeats]
suppressMessages(library(zarr))
reps <- as.integer(commandArgs(TRUE)[1L])
if (is.na(reps)) reps <- 7L
shape <- c(365, 180, 360)
set.seed(1)
x <- array(as.numeric(sin(seq_len(prod(shape)) / 1000)) * 20 + 280, shape)
x[sample.int(length(x), 1000)] <- NA

make <- function(data_type, attrs) {
  path <- tempfile(fileext = ".zarr")
  z <- create_zarr(path)
  b <- define_array(data_type, shape)
  b$chunk_shape <- c(30, 90, 90)
  a <- z$add_array("/", "v", b)
  for (n in names(attrs)) a$set_attribute(n, attrs[[n]])
  dimnames(a) <- list(time = NULL, lat = NULL, lon = NULL)
  list(path = path, array = open_zarr(path)[["/v"]])
}

# The R encoding the engine replaced (R/cf.R before): NA -> the first
# missing value, inverse scale/offset, rounding, then a raw write.
r_encode <- function(data, cf, data_type) {
  na <- is.na(data)
  if (cf$scale != 1 || cf$offset != 0) {
    data <- (as.numeric(data) - cf$offset) / cf$scale
    if (!startsWith(data_type, "float")) data <- round(data, digits = 0L)
  }
  if (any(na)) data[na] <- unlist(cf$missing)[1L]
  data
}
encoded <- function(a) r_encode(x, zarr:::cf_info(a$.__enclos_env__$private$engine(TRUE)), a$data_type$data_type)
write_r <- function(a) {
  raw <- a$.__enclos_env__$private$engine(FALSE)
  zarr:::engine_write(a, raw, encoded(a), lapply(shape, zarr:::engine_whole))
}
write_cf <- function(a) a$write(x)

cases <- list(
  float32 = make("float32", list(`_FillValue` = 1e20, units = "K")),
  int16 = make("int16", list(`_FillValue` = -32767, scale_factor = 0.01, add_offset = 273.15, units = "K"))
)
for (name in names(cases)) {
  a <- cases[[name]]$array
  enc <- encoded(a)
  write_raw <- function(a) withr::with_options(list(zarr.cf_decode = FALSE), a$write(enc))
  stored <- function() withr::with_options(list(zarr.cf_decode = FALSE), a[])
  write_cf(a)
  by_engine <- stored()
  write_r(a)
  stopifnot(identical(stored(), by_engine))
  t <- list(cf = numeric(0), raw = numeric(0), r = numeric(0))
  for (i in seq_len(reps)) {
    for (how in names(t)) {
      f <- switch(how, cf = write_cf, raw = write_raw, r = write_r)
      gc()
      t[[how]] <- c(t[[how]], system.time(f(a))[["elapsed"]])
    }
  }
  m <- vapply(t, median, numeric(1))
  cat(sprintf("%s: CF write (engine's gather) %.3f s, raw write %.3f s, R encoding + raw write %.3f s (medians of %d); cf/raw %.2f, cf/r %.2f\n",
              name, m[["cf"]], m[["raw"]], m[["r"]], reps, m[["cf"]] / m[["raw"]], m[["cf"]] / m[["r"]]))
  unlink(cases[[name]]$path, recursive = TRUE)
}
