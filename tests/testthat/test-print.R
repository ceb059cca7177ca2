# Printed summaries are part of the interface: pin them.

snapshot_zarr <- function() {
  z <- create_zarr()
  g <- z$add_group("/", "climate")
  g$set_attribute("title", "a test hierarchy")
  d <- define_array("float32", c(40, 30, 12))
  d$chunk_shape <- c(20, 15, 12)
  a <- z$add_array("/climate", "tas", d)
  a[1:20, 1:15, ] <- array(1.5, c(20, 15, 12))
  a$set_attribute("units", "K")
  z$add_array("/", "mask", define_array("bool", c(40, 30)))
  list(z = z, g = g, a = a, d = d)
}

test_that("print() summarises a zarr object, a group, an array and a builder", {
  s <- snapshot_zarr()
  expect_snapshot({
    print(s$z)
    print(s$g)
    print(s$a)
    print(s$d)
  })
})

test_that("hierarchy() draws the tree", {
  s <- snapshot_zarr()
  expect_snapshot(s$z$hierarchy())
})

test_that("str() gives one line per object", {
  s <- snapshot_zarr()
  expect_snapshot({
    str(s$z)
    str(s$g)
    str(s$a)
    str(s$a$chunking)
  })
})

test_that("data types, codecs and stores print their settings", {
  s <- snapshot_zarr()
  expect_snapshot({
    print(s$a$data_type)
    for (c in s$a$codecs) print(c)
    print(s$z$store)
  })
})

test_that("print() of an array shows its dimension names", {
  arr <- as_zarr(matrix(1:6, 2, 3))$root
  dimnames(arr) <- list(lat = NULL, lon = NULL)
  out <- capture.output(print(arr))
  expect_identical(grep("^shape", out, value = TRUE), "shape      : 2 x 3 [lat, lon]")
})
