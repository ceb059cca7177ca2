# The one fork-safety rule of the process-wide pool, tokio runtimes and
# clients (src/rust/src/runtime.rs): a process forked after they were used,
# as parallel::mclapply() and future's multicore plan fork, makes its own
# on first use. Each test forks a child that works with arrays the parent
# opened and read, and collects its result within a time limit, so that a
# child that hangs fails the test instead of hanging the run.

# `f()` run in a forked child: its value, or an error when the child has
# not finished after `seconds`.
in_forked_child <- function(f, seconds = 60) {
  job <- parallel::mcparallel(f(), silent = TRUE)
  got <- parallel::mccollect(job, wait = FALSE, timeout = seconds)
  if (is.null(got)) {
    tools::pskill(job$pid, tools::SIGKILL)
    suppressWarnings(parallel::mccollect(job, wait = TRUE))
    stop("the forked child did not finish in ", seconds, " s")
  }
  got[[1]]
}

fork_values <- function() matrix(seq_len(40L * 40L) - 100L, 40, 40)

fork_definition <- function() {
  def <- define_array("int32", c(40, 40))
  def$chunk_shape <- c(10, 10)
  def
}

test_that("a forked child reads and writes on a pool of its own after the parent used the pool", {
  skip_on_os("windows") # fork
  withr::local_options(zarr.num_threads = 2L)
  x <- fork_values()
  arr <- create_zarr(withr::local_tempdir())$add_array("/", "x", fork_definition())
  arr$write(x)
  expect_identical(arr[], x)
  got <- in_forked_child(function() {
    arr[] <- -x
    arr[]
  })
  expect_identical(got, -x)
  # The parent's pool works on, and sees the child's write.
  expect_identical(arr[], -x)
})

test_that("a forked child reads an HTTP store opened and read before the fork", {
  skip_on_os("windows")
  dir <- withr::local_tempdir()
  x <- fork_values()
  create_zarr(dir)$add_array("/", "x", fork_definition())$write(x)
  server <- local_http_server(file.path(dir, "x"))
  arr <- open_zarr(server$url)[["/"]]
  expect_identical(arr[], x)
  expect_identical(in_forked_child(function() arr[]), x)
  expect_identical(arr[1:10, 1:10], x[1:10, 1:10])
})

test_that("a forked child reads and writes an object store opened and read before the fork", {
  skip_on_os("windows")
  server <- start_moto()
  withr::local_envvar(moto_env(server))
  url <- sprintf("s3://%s/forked", moto_bucket(server))
  x <- fork_values()
  arr <- create_zarr(url)$add_array("/", "x", fork_definition())
  arr$write(x)
  expect_identical(arr[], x)
  # Before runtime.rs, the child waited for the parent's runtime threads,
  # which a fork does not copy.
  expect_identical(in_forked_child(function() arr[]), x)
  expect_true(in_forked_child(function() {
    arr[1:10, 1:10] <- -x[1:10, 1:10]
    TRUE
  }))
  expect_identical(arr[1:10, 1:10], -x[1:10, 1:10])
})
