test_that("a registered domain builds the nodes it claims when a store is opened", {
  path <- local_store_path()
  z <- create_zarr(path)
  g <- z$add_group("/", "g")
  g$set_attribute("kind", "special")
  a <- z$add_array("/g", "a", define_array("int32", c(2, 3)))
  a$set_attribute("kind", "special")
  z$add_array("/", "plain", define_array("float64", 4))

  d <- test_domain$new("test domain")
  zarr_register_domain(d)
  withr::defer(zarr_unregister_domain("test domain"))
  expect_true("test domain" %in% vapply(zarr_domains(), function(x) x$name, ""))

  z2 <- open_zarr(path)
  expect_s3_class(z2[["/g"]], "special_group")
  expect_s3_class(z2[["/g/a"]], "special_array")
  expect_identical(z2[["/g/a"]]$describe(), "special array of 6 elements")
  expect_false(inherits(z2[["/plain"]], "special_array"))
  expect_s3_class(z2[["/plain"]], "zarr_array")
  # every node was offered to the domain
  expect_setequal(d$seen, c("", "g", "a", "plain"))
  # the domain's subclass is still a working array
  z2[["/g/a"]][1, ] <- 1:3
  expect_identical(z2[["/g/a"]][1, ], 1:3)
})

test_that("unregistering a domain restores the generic classes", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_array("/", "a", define_array("int32", 2))$set_attribute("kind", "special")
  zarr_register_domain(test_domain$new("temporary domain"))
  expect_s3_class(open_zarr(path)[["/a"]], "special_array")
  expect_true(zarr_unregister_domain("temporary domain"))
  expect_false(inherits(open_zarr(path)[["/a"]], "special_array"))
  expect_false(zarr_unregister_domain("temporary domain"))
})

test_that("domains must inherit from zarr_domain and have unique names", {
  expect_error(zarr_register_domain(list()), class = "zarr_error_argument")
  zarr_register_domain(test_domain$new("dup"))
  withr::defer(zarr_unregister_domain("dup"))
  expect_error(zarr_register_domain(test_domain$new("dup")), class = "zarr_error_argument", regexp = "dup")
})
