# moto in server mode on loopback for the S3 benchmarks of Icechunk
# repositories (bench/icechunk_read.R, bench/icechunk_old_new.R), started as
# the test suite starts it (tests/testthat/helper-s3.R, and helper-azure.R's
# wait for the port), with a bucket "bench" and the environment variables
# that point object_store (and child processes) at it.
local({
  helpers <- file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))), "..",
                       "tests", "testthat")
  for (h in c("helper-s3.R", "helper-azure.R")) sys.source(file.path(helpers, h), envir = globalenv())
})

# `server` is the path of moto_server; the process ends with this R process.
bench_moto <- function(server) {
  for (attempt in 1:3) {
    port <- free_port()
    log <- tempfile("moto-", fileext = ".log")
    p <- processx::process$new(server, c("-H", "127.0.0.1", "-p", as.character(port)),
                               stdout = log, stderr = "2>&1", env = c("current", LD_LIBRARY_PATH = ""),
                               cleanup = TRUE)
    if (wait_for_port(p, port, log, "moto_server")) break
  }
  if (!p$is_alive()) stop("moto_server did not start: ", paste(readLines(log, warn = FALSE), collapse = "\n"))
  moto <- list(endpoint = sprintf("http://127.0.0.1:%d", port), port = port, process = p)
  moto_create_bucket(moto, "bench")
  env <- moto_env(moto)
  do.call(Sys.setenv, as.list(env[!is.na(env)]))
  Sys.unsetenv(names(env)[is.na(env)])
  moto
}
