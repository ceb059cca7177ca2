# Chunk grids: regular, sharded and rectilinear (with zarr-python 3.4's
# arrays, rectilinear_arrays.py), and optimal_chunking().

test_that("a sharded array's chunking is a chunk_grid_sharded with inner_shape", {
  def <- define_array("int32", c(10, 8))
  def$chunk_shape <- c(4, 4)
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "s", def)
  g <- arr$chunking
  expect_s3_class(g, "chunk_grid_sharded")
  expect_s3_class(g, "chunk_grid_regular")
  expect_identical(g$chunk_shape, c(4L, 4L))
  expect_identical(g$inner_shape, c(2L, 2L))
  expect_identical(g$chunk_grid, c(3L, 2L))
  expect_output(print(g), "inner shape: 2 x 2")
  arr$write(matrix(1:80, 10))
  expect_identical(g$read(c(2, 3), c(4, 5)), matrix(1:80, 10)[2:4, 3:5])
  plain <- create_zarr()$add_array("/", "p", define_array("int32", c(3, 3)))
  expect_false(inherits(plain$chunking, "chunk_grid_sharded"))
})

test_that("optimal_chunking() spreads about chunk_values elements over the dimensions by weight", {
  expect_identical(optimal_chunking(c(50000, 350, 8192)), c(161L, 175L, 161L))
  expect_identical(optimal_chunking(c(50000, 350, 8192), weights = c(1, 1, 2)), c(46L, 44L, 2048L))
  expect_identical(optimal_chunking(c(10, 1, 20)), c(10L, 1L, 20L))
  expect_identical(optimal_chunking(c(1, 1)), c(1L, 1L))
  # 3 chunks of 334 tile 1000 better than chunks of 300 and a remainder of 100
  expect_identical(optimal_chunking(1000, chunk_values = 300), 334L)
  expect_error(optimal_chunking(c(10, 10), weights = c(1, 0)), class = "zarr_error_argument", regexp = "weights")
  expect_error(optimal_chunking(c(10, -1)), class = "zarr_error_argument", regexp = "dim_sizes")
})

# A 10 x 7 int32 array in chunks of rows 3, 3, 3, 1 and columns 4, 3, as
# zarr-python 3.4 writes it ([[3, 3], 1] and [4, 3]).
rectilinear_def <- function() {
  def <- define_array("int32", c(10, 7))
  def$chunk_shape <- list(c(3, 3, 3, 1), c(4, 3))
  def$remove_codec("blosc")
  def$fill_value <- -1L
  def
}

test_that("a rectilinear grid is written with [length, count] runs and read back chunk by chunk", {
  root <- withr::local_tempdir()
  arr <- create_zarr(root)$add_array("/", "a", rectilinear_def())
  expect_identical(arr$metadata$chunk_grid$name, "rectilinear")
  doc <- jsonlite::fromJSON(file.path(root, "a", "zarr.json"), simplifyVector = FALSE)
  expect_identical(doc$chunk_grid$configuration$chunk_shapes, list(list(list(3L, 3L), 1L), list(4L, 3L)))
  g <- arr$chunking
  expect_s3_class(g, "chunk_grid_rectilinear")
  expect_identical(g$chunk_edges, list(c(3L, 3L, 3L, 1L), c(4L, 3L)))
  expect_identical(g$chunk_shape, c(3L, 4L))
  expect_identical(g$chunk_grid, c(4L, 2L))
  expect_output(print(g), "dimension 1: 3 3 3 1")
  x <- matrix(1:70, 10, 7)
  arr$write(x)
  expect_identical(arr[], x)
  # Chunk (1, 1) holds rows 4-6 and columns 5-7: 3 x 3 elements.
  raw <- readBin(file.path(root, "a", "c", "1", "1"), "raw", 100)
  expect_identical(length(raw), 36L)
  expect_identical(sort(list.files(file.path(root, "a", "c"), recursive = TRUE)),
                   sort(paste(rep(0:3, 2), rep(0:1, each = 4), sep = "/")))
  # Parts across chunk borders, index vectors, and writes of parts.
  expect_identical(arr[3:8, 4:5], x[3:8, 4:5])
  expect_identical(arr[c(10, 1, 4), c(7, 1)], x[c(10, 1, 4), c(7, 1)])
  arr[9:10, 2:6] <- matrix(-5L, 2, 5)
  x[9:10, 2:6] <- -5L
  expect_identical(arr[], x)
  arr[4:6, 5:7] <- NA
  x[4:6, 5:7] <- NA
  expect_identical(arr[], x)
  # Fill value only: the chunk is erased, as in a regular grid.
  expect_false(file.exists(file.path(root, "a", "c", "1", "1")))
  expect_output(print(arr), "rectilinear, up to 3 x 4 \\(8 chunks\\)")
})

test_that("chunk_regions() follows a rectilinear grid", {
  arr <- create_zarr()$add_array("/", "a", rectilinear_def())
  regions <- arr$chunk_regions(2)
  expect_identical(regions, list(list(1:6, 1:7), list(7:10, 1:7)))
  expect_identical(lengths(arr$chunk_regions(10)[[4]]), c(1L, 7L))
  expect_identical(arr$chunk_regions(10)[[4]][[1]], 10L)
})

test_that("a rectilinear grid with sharding reads and writes shards of two shapes", {
  def <- define_array("float64", c(12, 8))
  def$chunk_shape <- list(c(4, 4, 2, 2), c(4, 4))
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  arr <- create_zarr()$add_array("/", "s", def)
  x <- matrix(seq_len(96) / 4, 12, 8)
  arr$write(x)
  expect_identical(arr[], x)
  expect_identical(arr[3:11, 2:7], x[3:11, 2:7])
  arr[10, 3] <- 0.125
  x[10, 3] <- 0.125
  expect_identical(arr[], x)
  # A shard length that does not hold whole inner chunks is refused when
  # the engine opens the array, as in a regular grid.
  bad <- define_array("float64", c(12, 8))
  bad$chunk_shape <- list(c(4, 3, 5), c(4, 4))
  bad$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  bad <- create_zarr()$add_array("/", "b", bad)
  expect_error(bad[], class = "zarr_error_metadata", regexp = "does not divide the shard shape \\[3, 4\\]")
})

test_that("a rectilinear shard needed in part is read by its index and byte ranges", {
  root <- withr::local_tempdir()
  def <- define_array("float64", c(12, 8))
  def$chunk_shape <- list(c(4, 4, 2, 2), c(4, 4))
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  x <- matrix(seq_len(96) / 4, 12, 8)
  create_zarr(root)$add_array("/", "s", def)$write(x)
  server <- local_http_server(root)
  a <- open_zarr(server$url)[["/s"]]
  # One inner chunk of the 4 x 4 shard (1, 0), then one of the 2 x 4 shard
  # (2, 1): each shard's index, then that inner chunk's bytes.
  for (part in list(list(5:6, 1:2), list(9:10, 7:8))) {
    http_reset(server)
    expect_identical(a[part[[1]], part[[2]]], x[part[[1]], part[[2]]])
    stats <- http_stats(server)
    expect_identical(c(stats$gets, stats$ranges), c(2L, 2L))
  }
  expect_identical(a[], x)
})

test_that("rectilinear chunk lengths are checked; promote(), low-end resizes and blocks are refused", {
  def <- define_array("int32", c(10, 7))
  expect_error(def$chunk_shape <- list(c(3, 3), c(4, 3)), class = "zarr_error_argument",
               regexp = "less than the extent")
  expect_error(def$chunk_shape <- list(c(3, 0, 7), c(7)), class = "zarr_error_argument",
               regexp = "chunk_shape\\[\\[1\\]\\]")
  expect_error(def$chunk_shape <- list(10), class = "zarr_error_argument", regexp = "dimensions")
  arr <- create_zarr()$add_array("/", "a", rectilinear_def())
  expect_error(arr$resize(low = c(3, 0)), class = "zarr_error_unsupported", regexp = "'/a'.*`low`.*rectilinear")
  expect_error(arr$promote(1), class = "zarr_error_unsupported", regexp = "'/a'.*promote\\(\\) needs a regular")
  expect_identical(arr$shape, c(10L, 7L))
  expect_error(zarr_map_blocks(arr, function(b) b), class = "zarr_error_unsupported", regexp = "rectilinear")
  strings <- define_array("string", 10)
  strings$chunk_shape <- list(c(4, 6))
  strings <- create_zarr()$add_array("/", "s", strings)
  expect_error(strings[], class = "zarr_error_unsupported", regexp = "array '/s': string arrays with a rectilinear")
  v2 <- rectilinear_def()
  v2$format <- 2L
  expect_error(v2$metadata(), class = "zarr_error_unsupported", regexp = "rectilinear")
})

# The grid zarr-python 3.4 gives `rectilinear_arrays.py`'s "resized":
# chunks [3, 3, 4] x [4, 3] grown to 16 x 9 (one chunk more each way),
# then shrunk to 15 x 8 (no chunk taken away).
resized_edges <- list(c(3L, 3L, 4L, 6L), c(4L, 3L, 2L))
resized_json <- list(list(list(3L, 2L), 4L, 6L), list(4L, 3L, 2L))

test_that("resize() and append() grow a rectilinear grid by a chunk, as zarr-python 3.4 does", {
  root <- withr::local_tempdir()
  def <- define_array("int32", c(10, 7))
  def$chunk_shape <- list(c(3, 3, 4), c(4, 3))
  def$remove_codec("blosc")
  def$fill_value <- -1L
  arr <- create_zarr(root)$add_array("/", "g", def)
  x <- matrix(1:70, 10, 7)
  arr$write(x)
  arr$resize(c(16, 9))
  expect_identical(arr$chunking$chunk_edges, resized_edges)
  y <- matrix(NA_integer_, 16, 9)
  y[1:10, 1:7] <- x
  expect_identical(arr[], y)
  arr[15:16, 8:9] <- 99L
  y[15:16, 8:9] <- 99L
  # Shrinking keeps every declared chunk; the stored document says so.
  arr$resize(c(15, 8))
  expect_identical(arr$chunking$chunk_edges, resized_edges)
  doc <- jsonlite::fromJSON(file.path(root, "g", "zarr.json"), simplifyVector = FALSE)
  expect_identical(doc$chunk_grid$configuration$chunk_shapes, resized_json)
  expect_identical(doc$shape, list(15L, 8L))
  expect_identical(arr[], y[1:15, 1:8])
  # What the shrink cut off never comes back.
  arr$resize(c(16, 9))
  y[16, ] <- NA
  y[, 9] <- NA
  expect_identical(open_zarr(root)[["/g"]][], y)
  # Chunks wholly outside a smaller shape are erased.
  arr$resize(c(5, 7))
  expect_identical(sort(list.files(file.path(root, "g", "c"), recursive = TRUE)), c("0/0", "0/1", "1/0", "1/1"))
  expect_identical(arr[], x[1:5, ])
  # append() past the declared chunks adds one of the missing length.
  arr$append(matrix(-7L, 12, 7), along = 1)
  # (chunk_edges lists the chunks that hold elements; the document keeps
  # the third column chunk, past the extent 7)
  expect_identical(arr$chunking$chunk_edges, list(c(3L, 3L, 4L, 6L, 1L), c(4L, 3L)))
  doc <- jsonlite::fromJSON(file.path(root, "g", "zarr.json"), simplifyVector = FALSE)
  expect_identical(doc$chunk_grid$configuration$chunk_shapes, list(list(list(3L, 2L), 4L, 6L, 1L), list(4L, 3L, 2L)))
  expect_identical(arr[], rbind(x[1:5, ], matrix(-7L, 12, 7)))
  # A sharded rectilinear array shrinks by whole shards only.
  def <- define_array("float64", c(12, 8))
  def$chunk_shape <- list(c(4, 4, 2, 2), c(4, 4))
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  s <- create_zarr()$add_array("/", "s", def)
  s$write(matrix(as.numeric(1:96), 12, 8))
  expect_error(s$resize(c(9, 8)), class = "zarr_error_unsupported",
               regexp = "'/s'.*whole number of shards \\(2 along dimension 1\\)")
  s$resize(c(10, 8))
  expect_identical(s[], matrix(as.numeric(1:96), 12, 8)[1:10, ])
})

test_that("arrays zarr-python 3.4 writes with rectilinear grids read exactly, touching only their chunks", {
  root <- withr::local_tempdir()
  res <- run_python_command(python_cast(), c(testthat::test_path("rectilinear_arrays.py"), "write", root))
  if (res$status != 0L) stop(res$output, call. = FALSE)
  z <- open_zarr(root)
  i4 <- matrix(0:69, 10, 7, byrow = TRUE)
  i4[1, 1] <- NA
  expect_identical(z[["/i4"]][], i4)
  expect_identical(z[["/i4"]][4:10, 5:7], i4[4:10, 5:7])
  sharded <- matrix(0:95 / 4, 12, 8, byrow = TRUE)
  sharded[sharded == 0.5 | row(sharded) > 10] <- NA
  expect_identical(z[["/sharded"]][], sharded)
  expect_identical(z[["/sharded"]][9:12, 3:6], sharded[9:12, 3:6])
  expect_identical(z[["/rle"]][], c(0:6 * 3L, NA, NA, NA, NA))
  expect_identical(z[["/rle"]]$chunking$chunk_edges, list(c(1L, 1L, 1L, 4L, 4L)))
  resized <- matrix(NA_integer_, 15, 8)
  resized[1:10, 1:7] <- matrix(0:69, 10, 7, byrow = TRUE)
  resized[15, 8] <- 99L
  expect_identical(z[["/resized"]][], resized)
  expect_identical(z[["/resized"]]$chunking$chunk_edges, resized_edges)
  # A read of the first rows never opens chunk (3, 0): garbage there is
  # no error until a read needs it.
  writeBin(as.raw(1:5), file.path(root, "i4", "c", "3", "0"))
  a <- open_zarr(root)[["/i4"]]
  expect_identical(a[1:9, ], i4[1:9, ])
  expect_error(a[10, 1], class = "zarr_error")
})

test_that("arrays R writes with rectilinear grids read exactly in zarr-python 3.4", {
  root <- withr::local_tempdir()
  z <- create_zarr(root)
  x <- matrix(1:70, 10, 7)
  z$add_array("/", "i4", rectilinear_def())$write(x)
  def <- define_array("float64", c(12, 8))
  def$chunk_shape <- list(c(4, 4, 2, 2), c(4, 4))
  def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  y <- matrix(seq_len(96) / 8, 12, 8)
  z$add_array("/", "sharded", def)$write(y)
  # Edges past the extent (allowed by the grid) and a run of 4 ones.
  def <- define_array("int16", 11)
  def$chunk_shape <- list(c(1, 1, 1, 1, 3, 5))
  def$fill_value <- -9L
  w <- c(5:1, NA, 7:11)
  z$add_array("/", "rle", def)$write(w)
  # resize() as rectilinear_arrays.py does it in zarr-python.
  def <- define_array("int32", c(10, 7))
  def$chunk_shape <- list(c(3, 3, 4), c(4, 3))
  def$fill_value <- -1L
  g <- z$add_array("/", "resized", def)
  g$write(matrix(0:69, 10, 7, byrow = TRUE))
  g$resize(c(16, 9))
  g[15:16, 8:9] <- 99L
  g$resize(c(15, 8))
  res <- run_python_command(python_cast(), c(testthat::test_path("rectilinear_arrays.py"), "read", root))
  if (res$status != 0L) stop(res$output, call. = FALSE)
  out <- jsonlite::fromJSON(res$output, simplifyVector = FALSE)
  expect_identical(unlist(out$i4$values), as.integer(t(x)))
  expect_identical(unlist(out$sharded$values), as.numeric(t(y)))
  expect_identical(unlist(out$rle$values), c(5:1, -9L, 7:11))
  expect_identical(out$rle$grid$configuration$chunk_shapes, list(list(list(1L, 4L), 3L, 5L)))
  expect_identical(out$resized$grid$configuration$chunk_shapes, resized_json)
  resized <- matrix(-1L, 15, 8)
  resized[1:10, 1:7] <- matrix(0:69, 10, 7, byrow = TRUE)
  resized[15, 8] <- 99L
  expect_identical(unlist(out$resized$values), as.integer(t(resized)))
})
