# Crash consistency of the file store: a writer killed with SIGKILL at a
# random moment leaves every chunk as it was or as it was being written,
# never short, empty or mixed.

crash_arrays <- function(z) {
  plain <- define_array("int32", c(200, 200))
  plain$chunk_shape <- c(50, 50)
  plain$remove_codec("zstd")
  compressed <- define_array("int32", c(200, 200))
  compressed$chunk_shape <- c(50, 50)
  sharded <- define_array("int32", c(200, 200))
  sharded$chunk_shape <- c(100, 100)
  sharded$add_codec("sharding_indexed", list(chunk_shape = c(50, 50)))
  list(plain = z$add_array("/", "plain", plain),
       compressed = z$add_array("/", "compressed", compressed),
       sharded = z$add_array("/", "sharded", sharded))
}

# The writer's loop: every pass rewrites the top half (existing chunks) and
# writes the bottom half anew after erasing it (new chunk files each time).
crash_writer <- function(path) {
  arrays <- open_zarr(path)
  k <- 1L
  repeat {
    k <- k + 1L
    for (name in c("plain", "compressed", "sharded")) {
      a <- arrays[[paste0("/", name)]]
      a[] <- matrix(k, 200, 200)
      a[101:200, ] <- NA
    }
  }
}

# The 50 x 50 blocks that do not hold one value throughout (a whole chunk
# of one pass) or all NA (never written, or erased).
mixed_blocks <- function(x) {
  bad <- character(0)
  for (i in 0:3) for (j in 0:3) {
    values <- unique(as.vector(x[i * 50 + 1:50, j * 50 + 1:50]))
    if (length(values) != 1L) bad <- c(bad, sprintf("[%d, %d]", i, j))
  }
  bad
}

test_that("a writer killed at random moments leaves every chunk old or new, never torn", {
  skip_on_os("windows") # fork and SIGKILL
  skip_on_cran()
  path <- local_store_path()
  z <- create_zarr(path)
  arrays <- crash_arrays(z)
  for (a in arrays) a[] <- matrix(1L, 200, 200)
  set.seed(18)
  torn <- 0L
  for (trial in 1:30) {
    job <- parallel::mcparallel(crash_writer(path), silent = TRUE)
    Sys.sleep(stats::runif(1, 0.02, 0.3))
    tools::pskill(job$pid, tools::SIGKILL)
    # A killed job delivers no result, which mccollect() warns about.
    suppressWarnings(parallel::mccollect(job, wait = TRUE))
    files <- list.files(path, recursive = TRUE, all.files = TRUE, full.names = TRUE)
    chunks <- files[grepl("/c/", files, fixed = TRUE) & !grepl("/\\.tmp-zarr-", files)]
    torn <- torn + sum(file.size(chunks) == 0)
    reopened <- open_zarr(path)
    for (name in names(arrays)) {
      x <- reopened[[paste0("/", name)]][]
      expect_identical(mixed_blocks(x), character(0), info = sprintf("trial %d, %s", trial, name))
      expect_true(all(is.na(x) | x >= 1L), info = sprintf("trial %d, %s", trial, name))
    }
  }
  expect_identical(torn, 0L)
  # The first write of a newly opened store in each folder removes what
  # the killed writers left there.
  reopened <- open_zarr(path)
  for (name in names(arrays)) reopened[[paste0("/", name)]][] <- matrix(7L, 200, 200)
  left <- list.files(path, pattern = "^\\.tmp-zarr-", recursive = TRUE, all.files = TRUE)
  expect_identical(left, character(0))
  expect_identical(open_zarr(path)[["/sharded"]][], matrix(7L, 200, 200))
})
