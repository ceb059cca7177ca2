# Attributes by path: attribute(), set_attribute() with nested paths,
# append_array_attribute() and delete_attribute(), as in R-CF's zarr.

test_that("set_attribute() with a path makes nested objects and attribute() reads them", {
  z <- create_zarr()
  g <- z$root
  g$set_attribute("a/b/c", 3)
  g$set_attribute("a/d", "x")
  expect_identical(g$attributes, list(a = list(b = list(c = 3), d = "x")))
  expect_identical(g$attribute("a/b/c"), 3)
  expect_identical(g$attribute("a/b"), list(c = 3))
  expect_null(g$attribute("a/nope"))
  expect_null(g$attribute("nope/deeper"))
  # stored at once: a store opened again has it
  expect_identical(zarr$new(z$store)$root$attribute("a/b/c"), 3L)
})

test_that("attribute() indexes arrays 1-based with numeric path segments", {
  z <- create_zarr()
  g <- z$root
  g$set_attribute("conv", list(list(name = "ref"), list(name = "uom")))
  expect_identical(g$attribute("conv/2/name"), "uom")
  expect_identical(g$attribute("conv/1"), list(name = "ref"))
  expect_null(g$attribute("conv/3"))
  g$set_attribute("conv/2/name", "units")
  expect_identical(g$attribute("conv/2/name"), "units")
})

test_that("append_array_attribute() adds one element to an array attribute, at the end or after an index", {
  arr <- as_zarr(1:3)$root
  arr$append_array_attribute("history", "created")
  arr$append_array_attribute("history", "resized")
  expect_identical(arr$attribute("history"), list("created", "resized"))
  arr$append_array_attribute("history", "first", after = 0)
  expect_identical(arr$attribute("history"), list("first", "created", "resized"))
  arr$append_array_attribute("meta/tags", list(k = 1))
  expect_identical(arr$attribute("meta/tags/1/k"), 1)
  arr$set_attribute("title", "t")
  expect_error(arr$append_array_attribute("title", "u"), class = "zarr_error_argument", regexp = "title")
})

test_that("delete_attribute() removes a nested value or an array element; absent paths change nothing", {
  z <- create_zarr()
  g <- z$root
  g$set_attribute("a/b", 1)
  g$set_attribute("a/c", 2)
  g$set_attribute("list", list("x", "y", "z"))
  g$delete_attribute("a/b")
  expect_identical(g$attributes$a, list(c = 2))
  g$delete_attribute("list/2")
  expect_identical(g$attribute("list"), list("x", "z"))
  before <- g$attributes
  g$delete_attribute("nope/deeper")
  g$delete_attribute("list/9")
  expect_identical(g$attributes, before)
  g$delete_attribute("a")
  g$delete_attribute("list")
  expect_identical(g$attributes, structure(list(), names = character(0)))
})

test_that("attribute paths with no name in them are zarr_error_argument", {
  g <- create_zarr()$root
  expect_error(g$set_attribute("/", 1), class = "zarr_error_argument", regexp = "empty")
  expect_error(g$attribute(NA_character_), class = "zarr_error_argument", regexp = "name")
})

test_that("deleting the last attribute removes the metadata's attributes member, as in R-CF's zarr", {
  path <- local_store_path()
  z <- create_zarr(path)
  g <- z$root$add_group("g")
  g$set_attribute("a/b", 1)
  g$append_array_attribute("list", "x")
  g$delete_attribute("a")
  expect_identical(names(g$metadata$attributes), "list")
  g$delete_attribute("list")
  expect_null(g$metadata[["attributes"]])
  expect_identical(g$attributes, structure(list(), names = character(0)))
  expect_length(open_zarr(path)[["/g"]]$attributes, 0L)
  g$set_attribute("c", "again")
  g$delete_attributes("c")
  expect_null(g$metadata[["attributes"]])
  # an array with no attribute left (not even the `_FillValue` that
  # add_array() gives it) reads and writes as before
  arr <- z$add_array("/", "a", define_array("int32", 3))
  arr$set_attribute("units", "m")
  arr$delete_attributes(names(arr$attributes))
  expect_null(arr$metadata[["attributes"]])
  arr[] <- 1:3
  expect_identical(open_zarr(path)[["/a"]][], 1:3)
})
