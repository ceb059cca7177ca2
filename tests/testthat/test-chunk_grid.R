# Chunk grids: regular and sharded, and optimal_chunking().

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
