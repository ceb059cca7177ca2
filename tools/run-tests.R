# `make test`: the testthat suite against the installed package.
library(testthat)
library(zarr)
res <- test_dir("tests/testthat", package = "zarr", load_package = "installed",
                reporter = ProgressReporter$new(show_praise = FALSE), stop_on_failure = FALSE)
df <- as.data.frame(res)
failed <- sum(df$failed) + sum(df$error)
quit(status = if (failed > 0) 1 else 0)
