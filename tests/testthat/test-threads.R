# The engine's thread pool (R/threads.R, src/rust/src/pool.rs) in a forked
# child: parallel::mclapply() copies the process without the pool's threads.

test_that("a forked process reads and writes with a pool of its own", {
  skip_on_os("windows")
  withr::local_options(zarr.num_threads = 2)
  x <- matrix(seq_len(300 * 200) / 7, 300, 200)
  z <- create_zarr()
  arr <- z$add_array("/", "x", define_array("float64", dim(x)))
  arr[] <- x
  # the parent's pool exists before the fork
  expect_identical(arr[], x)
  job <- parallel::mcparallel({
    y <- arr[11:290, 5:180]
    arr[1:3, 1:3] <- -1
    list(y = y, back = arr[1:4, 1:4])
  })
  # A child waiting on the threads it does not have would never answer:
  # give it 60 s, then stop it and fail.
  got <- parallel::mccollect(job, wait = FALSE, timeout = 60)
  if (is.null(got)) tools::pskill(job$pid)
  expect_false(is.null(got), label = "the child finished in time")
  if (!is.null(got)) {
    res <- got[[1]]
    expect_identical(res$y, x[11:290, 5:180])
    back <- x[1:4, 1:4]
    back[1:3, 1:3] <- -1
    expect_identical(res$back, back)
  }
  # the parent is untouched by the child's write and still reads
  expect_identical(arr[], x)
})

test_that("the core count is read from /proc/cpuinfo as detectCores() counts it, without a shell", {
  cpuinfo <- withr::local_tempfile(lines = c(
    "processor\t: 0", "model name\t: A", "", "processor\t: 1", "flags\t: processor", "",
    "processor\t: 2", ""
  ))
  if (startsWith(R.version$os, "linux")) {
    expect_identical(zarr:::proc_cpuinfo_cores(cpuinfo), 3L)
    expect_identical(zarr:::proc_cpuinfo_cores(), parallel::detectCores(logical = TRUE))
  } else {
    expect_identical(zarr:::proc_cpuinfo_cores(cpuinfo), NA_integer_)
  }
  expect_identical(zarr:::proc_cpuinfo_cores(file.path(tempdir(), "no-such-file")), NA_integer_)
  empty <- withr::local_tempfile(lines = "model name\t: A")
  expect_identical(zarr:::proc_cpuinfo_cores(empty), NA_integer_)
})
