# Zarr arrays as DelayedArray seeds and a realization sink
# (R/delayed_array.R), through DelayedArray's own API.

skip_if_not_installed("DelayedArray")
suppressPackageStartupMessages(library(DelayedArray))

test_that("a zarr array is a seed with its dim, chunkdim, type and path", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "s.zarr")
  m <- matrix(as.numeric(1:600), 20, 30)
  z <- as_zarr(m, name = "m", location = path)
  x <- ZarrArray(path, "m")
  expect_s4_class(x, "ZarrMatrix")
  expect_identical(dim(x), c(20L, 30L))
  expect_null(dimnames(x))
  expect_identical(chunkdim(x), as.integer(z[["/m"]]$chunking$chunk_shape))
  expect_identical(type(x), "double")
  expect_identical(path(x), normalizePath(path))
  expect_identical(as.matrix(x), m)
  y <- DelayedArray(z[["/m"]])
  expect_s4_class(y, "ZarrMatrix")
  expect_identical(as.matrix(y), m)
})

test_that("extract_array() takes indices in any order, with repeats", {
  a <- array(as.integer(1:60), c(3, 4, 5))
  z <- as_zarr(a, name = "a")
  x <- DelayedArray(z[["/a"]])
  expect_s4_class(x, "ZarrArray")
  expect_identical(type(x), "integer")
  i <- list(c(3L, 1L, 3L), NULL, c(5L, 2L))
  expect_identical(extract_array(x, i), a[c(3, 1, 3), , c(5, 2), drop = FALSE])
  expect_identical(extract_array(x, list(integer(0), NULL, 1L)), array(integer(0), c(0, 4, 1)))
  expect_identical(as.array(x[2, , 4:5]), a[2, , 4:5])
})

test_that("times and packed values read as plain doubles of the decoded values", {
  z <- create_zarr()
  when <- .POSIXct(c(0, 3600, 7200), tz = "UTC")
  as_zarr(structure(when, dim = 3L, dimnames = list(time = NULL)), name = "time", location = z$root)
  x <- DelayedArray(z[["/time"]])
  expect_identical(type(x), "double")
  expect_identical(as.array(x), array(c(0, 3600, 7200), 3L, list(time = NULL)))
})

test_that("blockApply() over chunkGrid() equals the base result and reads each chunk once", {
  dir <- withr::local_tempdir()
  m <- matrix(as.numeric(1:(60 * 90)), 60, 90)
  def <- define_array("float64", dim(m))
  def$chunk_shape <- c(20, 30)
  z <- create_zarr(file.path(dir, "s.zarr"))
  z$add_array("/", "m", def)$write(m)
  n_chunks <- length(grep("^m/c/", z$store$list()))
  expect_identical(n_chunks, 9L)
  server <- local_http_server(file.path(dir, "s.zarr"))
  x <- ZarrArray(server$url, "m")
  expect_identical(chunkdim(x), c(20L, 30L))
  grid <- chunkGrid(x)
  expect_identical(length(grid), 9L)
  http_reset(server)
  sums <- blockApply(x, sum, grid = grid)
  expect_identical(http_stats(server)$gets, 9L)
  expected <- vapply(seq_len(9), function(b) {
    i <- (b - 1) %% 3
    j <- (b - 1) %/% 3
    sum(m[i * 20 + 1:20, j * 30 + 1:30])
  }, numeric(1))
  expect_identical(unlist(sums), expected)
  # Blocks across the chunk grid read some chunks more than once.
  http_reset(server)
  across <- blockApply(x, sum, grid = RegularArrayGrid(dim(x), c(25, 40)))
  expect_identical(sum(unlist(across)), sum(m))
  expect_gt(http_stats(server)$gets, 9L)
})

test_that("writeZarrArray() writes a delayed expression block by block, chunk-aligned", {
  m <- matrix(as.numeric(1:(40 * 50)), 40, 50)
  x <- DelayedArray(m)
  old <- getAutoBlockSize()
  withr::defer(suppressMessages(setAutoBlockSize(old)))
  dir <- withr::local_tempdir()
  path <- file.path(dir, "w.zarr")
  # The blocks written, as DelayedArray reports them.
  blocks_written <- function(expr) {
    msgs <- character()
    withCallingHandlers(expr, message = function(e) {
      msgs <<- c(msgs, conditionMessage(e))
      invokeRestart("muffleMessage")
    })
    grep("^/ Reading and realizing block", msgs, value = TRUE)
  }
  # blocks smaller than a chunk: one block per chunk (8 chunks of 10 x 25)
  suppressMessages(setAutoBlockSize(8 * 100))
  blocks <- blocks_written(y <- writeZarrArray(log(x) * 2, path, name = "v", chunk_shape = c(10, 25), verbose = TRUE))
  expect_identical(length(blocks), 8L)
  expect_identical(sub(" \\.\\.\\. $", "", blocks[8L]), "/ Reading and realizing block 8/8")
  # blocks of two chunks
  suppressMessages(setAutoBlockSize(8 * 500))
  blocks <- blocks_written(writeZarrArray(x, chunk_shape = c(10, 25), verbose = TRUE))
  expect_identical(length(blocks), 4L)
  expect_s4_class(y, "ZarrMatrix")
  expect_identical(chunkdim(y), c(10L, 25L))
  expect_identical(as.matrix(y), log(m) * 2)
  back <- open_zarr(path)[["/v"]]
  expect_identical(back[], log(m) * 2)
  expect_identical(back$chunking$chunk_shape, c(10L, 25L))
  # its own chunk grid, taken when no chunk shape is given
  y2 <- writeZarrArray(y + 1)
  expect_identical(chunkdim(y2), c(10L, 25L))
  expect_identical(as.matrix(y2), log(m) * 2 + 1)
})

test_that("writeZarrArray() adds to a group, with the dimension names and types of x", {
  z <- create_zarr()
  m <- matrix(1:6, 2, dimnames = list(r = NULL, c = NULL))
  y <- writeZarrArray(DelayedArray(m), z$root, name = "w")
  expect_identical(z$arrays, "/w")
  expect_identical(z[["/w"]]$dimension_names, c("r", "c"))
  expect_identical(as.matrix(y), m)
  chr <- matrix(c("a", NA, "c", "\u00e9"), 2)
  expect_identical(as.matrix(writeZarrArray(DelayedArray(chr))), chr)
  cpx <- matrix(complex(real = 1:4, imaginary = -1), 2)
  expect_identical(as.matrix(writeZarrArray(DelayedArray(cpx))), cpx)
  expect_identical(z[["/w"]]$data_type$data_type, "int32")
  f32 <- writeZarrArray(DelayedArray(m / 2), z$root, name = "f", data_type = "float32")
  expect_identical(z[["/f"]]$data_type$data_type, "float32")
  expect_identical(as.matrix(f32), m / 2)
})

test_that("writeZarrArray() stores NA as the fill value and skips chunks of fill only", {
  m <- matrix(1L, 8, 8)
  m[1:4, 5:8] <- NA
  m[6, 2] <- NA
  y <- writeZarrArray(DelayedArray(m), name = "i", chunk_shape = c(4, 4))
  arr <- y@seed@node$array
  expect_identical(arr[], m)
  expect_identical(sort(grep("^i/c/", arr$store$list(), value = TRUE)), c("i/c/0/0", "i/c/1/0", "i/c/1/1"))
})

test_that("sparse blocks are written as the dense values they stand for", {
  skip_if_not_installed("Matrix")
  s <- Matrix::sparseMatrix(i = c(1, 7, 10), j = c(2, 19, 20), x = c(5, 6, -1), dims = c(10, 20))
  x <- DelayedArray(s)
  expect_true(is_sparse(x))
  y <- writeZarrArray(x, chunk_shape = c(5, 5))
  expect_identical(as.matrix(y), as.matrix(s))
})

test_that("as(x, 'ZarrArray') realizes into a store in memory", {
  x <- DelayedArray(matrix(c(TRUE, FALSE, NA, TRUE), 2))
  y <- as(!x, "ZarrArray")
  expect_s4_class(y, "ZarrMatrix")
  expect_identical(type(y), "logical")
  # (bool has no missing value: NA is stored as FALSE)
  expect_identical(as.matrix(y), matrix(c(FALSE, TRUE, FALSE, FALSE), 2))
})

test_that("bad input is a classed error naming the argument", {
  expect_error(writeZarrArray(1:3), class = "zarr_error_argument", regexp = "`x`")
  z <- as_zarr(matrix(1:4, 2), name = "m")
  expect_error(writeZarrArray(DelayedArray(matrix(1:4, 2)), z$root), class = "zarr_error_argument",
               regexp = "`name`")
  expect_error(ZarrArray(z, "/nope"), class = "zarr_error")
  expect_error(ZarrArray(z), class = "zarr_error_argument", regexp = "not an array")
})

test_that("a seed sent to another process opens its store again", {
  dir <- withr::local_tempdir()
  path <- file.path(dir, "s.zarr")
  as_zarr(matrix(as.numeric(1:12), 3), name = "m", location = path)
  x <- ZarrArray(path, "m")
  y <- unserialize(serialize(x, NULL))
  expect_identical(as.matrix(y), matrix(as.numeric(1:12), 3))
  mem <- unserialize(serialize(DelayedArray(as_zarr(matrix(1:4, 2), name = "m")[["/m"]]), NULL))
  expect_error(as.matrix(mem), class = "zarr_error_argument", regexp = "in memory")
})

test_that("writeZarrArray() of a delayed expression larger than memory holds streams it", {
  skip_if_not_installed("callr")
  skip_on_os(c("windows", "mac")) # VmHWM is Linux's
  dir <- withr::local_tempdir()
  res <- callr::r(function(dir) {
    suppressPackageStartupMessages({
      library(zarr)
      library(DelayedArray)
    })
    peak <- function() {
      line <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", line)) * 1024
    }
    setAutoBlockSize(8e6)
    cube <- function(n) ConstantArray(c(n, n), 1) * seq_len(n) + 0.5
    # A small write first: the engine's threads and buffers, made once,
    # are not what this measures.
    writeZarrArray(cube(2000L), file.path(dir, "small.zarr"), name = "v", chunk_shape = c(1000, 1000))
    gc()
    before <- peak()
    # 7000 x 7000 doubles: 392 MB that are never in memory at once
    x <- cube(7000L)
    writeZarrArray(x, file.path(dir, "big.zarr"), name = "v", chunk_shape = c(1000, 1000))
    grew <- peak() - before
    arr <- open_zarr(file.path(dir, "big.zarr"))[["/v"]]
    list(grew = grew, shape = arr$shape, corner = arr[c(1, 7000), c(1, 7000)], bytes = 8 * prod(dim(x)))
  }, args = list(dir))
  expect_identical(res$shape, c(7000L, 7000L))
  expect_identical(res$corner, matrix(c(1.5, 7000.5, 1.5, 7000.5), 2))
  expect_identical(res$bytes, 392e6)
  expect_lt(res$grew, res$bytes / 8)
})
