test_that("conventions register themselves and write their properties", {
  u <- zarr_conv_uom$new()
  u$unit <- "m/s"
  u$version <- "2.1"
  attrs <- u$write(u$register(list(title = "x")))
  expect_identical(attrs$title, "x")
  expect_identical(attrs$uom$ucum, list(version = "2.1", unit = "m/s"))
  expect_identical(attrs$zarr_conventions[[1]]$name, "uom")
  expect_identical(attrs$zarr_conventions[[1]]$uuid, "3bbe438d-df37-49fe-8e2b-739296d46dfb")
  brief <- u$register(list(), brief = TRUE)
  expect_setequal(names(brief$zarr_conventions[[1]]), c("schema_url", "name"))
  # registering twice keeps one entry
  expect_length(u$register(attrs)$zarr_conventions, 1L)
})

test_that("the ref convention writes only the properties that are set", {
  r <- zarr_conv_ref$new()
  expect_error(r$write(list()), class = "zarr_error_argument")
  r$array <- "/grid/lat"
  r$index <- 2
  expect_identical(r$write(list())$ref, list(array = "/grid/lat", index = 2))
  expect_error(r$index <- -1, class = "zarr_error_argument")
  r$index <- NULL
  expect_identical(r$write(list())$ref, list(array = "/grid/lat"))
})

test_that("convention attributes survive a store round trip", {
  z <- create_zarr(local_store_path())
  a <- z$add_array("/", "v", define_array("float64", 3))
  u <- zarr_conv_uom$new()
  u$unit <- "Cel"
  for (n in c("zarr_conventions", "uom")) a$set_attribute(n, u$write(u$register(list()))[[n]])
  back <- open_zarr(z$store$root)[["/v"]]$attributes
  expect_identical(back$uom$ucum$unit, "Cel")
})

test_that("zarr_conventions() lists the supported conventions with schema and UUID", {
  conv <- zarr_conventions()
  expect_identical(conv$name, c("ref", "uom"))
  expect_identical(conv$uuid, c("d89b30cf-ed8c-43d5-9a16-b492f0cd8786", "3bbe438d-df37-49fe-8e2b-739296d46dfb"))
  expect_true(all(startsWith(conv$schema, "https://")))
})

test_that("zarr_convention_ref and zarr_convention_uom keep their 0.3.0 names as aliases", {
  expect_identical(zarr_conv_ref, zarr_convention_ref)
  expect_identical(zarr_conv_uom, zarr_convention_uom)
  u <- zarr_conv_uom$new()
  u$unit <- "m"
  expect_identical(u$write(list())$uom$ucum$unit, "m")
})
