# `make test`: the testthat suite against the installed package.
# processx (loaded with testthat) takes SIGCHLD; without this it does not
# pass the signal on, parallel never sees its forked children exit, and R
# waits 10 s at exit to print "unable to terminate some child processes".
Sys.setenv(PROCESSX_NOTIFY_OLD_SIGCHLD = "true")
library(testthat)
# Snapshot tests run here (they skip "on CRAN").
Sys.setenv(NOT_CRAN = "true")
library(zarr)
res <- test_dir("tests/testthat", package = "zarr", load_package = "installed",
                reporter = ProgressReporter$new(show_praise = FALSE), stop_on_failure = FALSE)
df <- as.data.frame(res)
failed <- sum(df$failed) + sum(df$error)
quit(status = if (failed > 0) 1 else 0)
