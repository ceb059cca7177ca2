# processx (loaded with testthat) must pass SIGCHLD on to parallel, whose
# forked test children would otherwise never be seen to exit.
Sys.setenv(PROCESSX_NOTIFY_OLD_SIGCHLD = "true")
library(testthat)
library(zarr)

test_check("zarr")
