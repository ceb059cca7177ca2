# Progress bars of long reads and writes (R/progress.R, src/rust/src/r/progress.rs).

test_that("the engine reports chunks done and in all to the progress function while it works", {
  withr::local_options(zarr.num_threads = 1L, zarr.progress = FALSE)
  z <- create_zarr()
  def <- define_array("float64", c(1000, 1000))
  def$chunk_shape <- c(10, 10)
  a <- z$add_array("/", "a", def)
  x <- matrix(as.numeric(seq_len(1e6)), 1000)
  seen <- list()
  rz_progress_hook(function(done, total) seen[[length(seen) + 1L]] <<- c(done, total))
  on.exit(rz_progress_hook(NULL))
  a[] <- x
  y <- a[]
  rz_progress_hook(NULL)
  expect_identical(y, x)
  skip_if(length(seen) < 2L, "the calls were too quick for a progress report")
  m <- do.call(rbind, seen)
  expect_true(all(m[, 2] == 10000))
  expect_true(all(m[, 1] >= 0 & m[, 1] <= 10000))
  expect_true(any(m[, 1] > 0))
})

test_that("a failing progress function is dropped and the read goes on", {
  withr::local_options(zarr.num_threads = 1L)
  z <- create_zarr()
  def <- define_array("float64", c(1000, 1000))
  def$chunk_shape <- c(10, 10)
  a <- z$add_array("/", "a", def)
  x <- matrix(as.numeric(seq_len(1e6)), 1000)
  a[] <- x
  calls <- 0L
  rz_progress_hook(function(done, total) {
    calls <<- calls + 1L
    stop("no bar today")
  })
  on.exit(rz_progress_hook(NULL))
  expect_identical(a[], x)
  expect_lte(calls, 1L)
})

test_that("progress is off with zarr_options(progress = FALSE) and in non-interactive sessions", {
  skip_if_not_installed("cli")
  withr::local_options(zarr.progress = TRUE)
  expect_true(progress_wanted(interactive = TRUE))
  expect_false(progress_wanted(interactive = FALSE))
  zarr_options("progress", FALSE)
  expect_false(progress_wanted(interactive = TRUE))
})

test_that("a bar appears only when the call looks like taking 2 s or more, and follows the chunks", {
  skip_if_not_installed("cli")
  withr::local_options(cli.progress_handlers_only = "logger")
  clock <- 0
  f <- function() {
    report <- progress_reporter("Reading chunks", environment(), now = function() clock)
    clock <<- 0.1
    report(10, 100) # too early to tell
    clock <<- 0.5
    report(50, 100) # 1 s in all: no bar
    clock <<- 0.6
    report(20, 100) # 3 s in all: a bar
    clock <<- 0.8
    report(40, 100)
  }
  log <- capture.output(f())
  expect_length(grep("created", log), 1L)
  expect_length(grep(" 20/100 added", log), 1L)
  expect_length(grep("50/100", log), 0L)
  # closed with its frame
  expect_match(log[length(log)], "40/100 terminated")
})
