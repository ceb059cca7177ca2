consolidated_store <- function(path) {
  z <- create_zarr(path)
  g <- z$add_group("/", "g")
  g$set_attribute("kind", "group g")
  a <- g$add_array("a", define_array("int64", 3))
  a[] <- bit64::as.integer64(c("9007199254740993", NA, "-3"))
  b <- z$add_array("/", "b", define_array("float32", c(4, 5)))
  b[] <- matrix(1:20 / 4, 4, 5)
  z$consolidate()
  z
}

test_that("consolidate() writes every node's metadata into the root zarr.json", {
  skip_if_not_installed("bit64")
  path <- local_store_path()
  consolidated_store(path)
  root <- jsonlite::fromJSON(file.path(path, "zarr.json"), simplifyVector = FALSE)
  expect_identical(root$consolidated_metadata$kind, "inline")
  expect_false(root$consolidated_metadata$must_understand)
  expect_setequal(names(root$consolidated_metadata$metadata), c("g", "g/a", "b"))
  # 64-bit fill values are written as JSON integers, not strings
  expect_match(paste(readLines(file.path(path, "zarr.json"), warn = FALSE), collapse = ""),
               '"fill_value": -9223372036854775808')
})

test_that("a consolidated hierarchy opens from the root zarr.json without listing", {
  skip_if_not_installed("bit64")
  path <- local_store_path()
  consolidated_store(path)
  # Remove the node documents: only consolidated metadata can find the nodes.
  unlink(file.path(path, "g", "zarr.json"))
  z <- open_zarr(path)
  expect_setequal(z$arrays, c("/g/a", "/b"))
  expect_identical(z[["/g"]]$attributes$kind, "group g")
  expect_identical(z[["/b"]][], matrix(1:20 / 4, 4, 5))
})

test_that("zarr-python's consolidated fixture opens with all its nodes", {
  skip_if_no_shared()
  z <- open_zarr(file.path(shared_dir(), "fixtures", "zarr-python", "v3", "consolidated.zarr"), read_only = TRUE)
  expect_setequal(z$arrays, c("/a/b/arr", "/a/x", "/with space/v"))
  expect_setequal(z$groups, c("/", "/a", "/a/b", "/empty_group", "/with space"))
  expect_identical(z[["/a"]]$attributes$level, "a")
})

test_that("an HTTP store opens a consolidated hierarchy with one metadata request", {
  skip_if_not_installed("bit64")
  path <- local_store_path()
  consolidated_store(path)
  server <- local_http_server(path)
  http_reset(server)
  z <- open_zarr(server$url)
  expect_setequal(z$arrays, c("/g/a", "/b"))
  stats <- http_stats(server)
  # the root zarr.json is the only request
  expect_identical(as.integer(stats$requests), 1L)
  expect_identical(z[["/b"]][2:3, 4], c(14, 15) / 4)
  # reading an array adds one request, for its chunk: its metadata
  # document came with the root's
  expect_identical(as.integer(http_stats(server)$requests), 2L)
  expect_identical(z[["/g/a"]]$read(), bit64::as.integer64(c("9007199254740993", NA, "-3")))
})

test_that("an HTTP group store without consolidated metadata warns that it cannot list", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_array("/", "x", define_array("int32", 2))
  server <- local_http_server(path)
  expect_warning(z2 <- open_zarr(server$url)$arrays, class = "zarr_warning", regexp = "cannot be found")
})
