# Writes R/extendr-wrappers.R from the compiled library, at install time:
# the Rust module knows its own functions, so the R side is never out of date.
args <- commandArgs(trailingOnly = TRUE)
lib <- normalizePath(args[[1]])
dll <- dyn.load(lib)
sym <- getNativeSymbolInfo("wrap__make_zarr_wrappers", dll)
code <- .Call(sym, TRUE, "zarr")
dyn.unload(lib)
writeLines(code, file.path("..", "R", "extendr-wrappers.R"))
