# `make demo`: write a store, read it back, print it.
library(zarr)
location <- file.path(tempdir(), "demo.zarr")
unlink(location, recursive = TRUE)

temperature <- array(round(15 + 10 * sin(seq_len(24 * 36 * 12) / 500), 2), c(24, 36, 12))
temperature[1:4, 1:6, ] <- NA
z <- as_zarr(temperature, name = "tas", location = location)
z[["/tas"]]$set_attribute("units", "degC")

z2 <- open_zarr(location, read_only = TRUE)
print(z2)
z2$hierarchy()
tas <- z2[["/tas"]]
print(tas)
cat("\ntas[3:6, 5:8, 1]:\n")
print(tas[3:6, 5:8, 1])
stopifnot(identical(tas[], temperature))
cat("\nround trip of", length(temperature), "values: identical\n")
