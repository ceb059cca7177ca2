# CF decoding cost: a float32 cube of 365 x 180 x 360 in chunks of
# 30 x 90 x 90 (xarray's layout of a year of daily global data; blosc
# zstd, the default codecs), with a _FillValue, scale_factor, add_offset
# and dimension names, read decoded and raw (zarr.cf_decode = FALSE), in
# alternating turns (a loaded machine slows both alike). Prints the
# medians and their ratio.
#   Rscript bench/cf_read.R [repeats]
suppressMessages(library(zarr))
reps <- as.integer(commandArgs(TRUE)[1L])
if (is.na(reps)) reps <- 7L
path <- tempfile(fileext = ".zarr")
z <- create_zarr(path)
b <- define_array("float32", c(365, 180, 360))
b$chunk_shape <- c(30, 90, 90)
a <- z$add_array("/", "tas", b)
x <- array(as.numeric(sin(seq_len(365 * 180 * 360) / 1000)), c(365, 180, 360))
x[sample.int(length(x), 1000)] <- NA
a$write(x)
a$set_attribute("_FillValue", 1e20)
a$set_attribute("scale_factor", 0.5)
a$set_attribute("add_offset", 273.15)
a$set_attribute("units", "K")
dimnames(a) <- list(time = NULL, lat = NULL, lon = NULL)
rm(x)
a <- open_zarr(path)[["/tas"]]
time_read <- function(decode) {
  old <- options(zarr.cf_decode = decode)
  on.exit(options(old))
  gc()
  system.time(v <- a[])[["elapsed"]]
}
t_cf <- t_raw <- numeric(0)
for (i in seq_len(reps)) {
  t_cf <- c(t_cf, time_read(TRUE))
  t_raw <- c(t_raw, time_read(FALSE))
}
cat(sprintf("CF-decoded read %.3f s, raw read %.3f s (medians of %d), ratio %.2f\n",
            median(t_cf), median(t_raw), reps, median(t_cf) / median(t_raw)))
unlink(path, recursive = TRUE)
