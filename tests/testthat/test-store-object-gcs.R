# zarr_objectstore on Google Cloud Storage, against fake-gcs-server on
# 127.0.0.1 (helper-gcs.R). object_store uploads objects with GCS's XML
# API, which the emulator does not serve: the objects are put there with
# its JSON API, and the store is tested reading them (values, ranges,
# listings, arrays). Writes to GCS are not tested here.

test_that("a GCS store reads, ranges and lists objects, with its credentials from a service account file", {
  server <- start_fake_gcs()
  bucket <- fake_gcs_create_bucket(server, "zarr-gcs-test")
  fake_gcs_upload(server, bucket, "root/a/b", as.raw(0:9))
  fake_gcs_upload(server, bucket, "root/a/c/d", as.raw(1:3))
  fake_gcs_upload(server, bucket, "root/ab", as.raw(7))
  withr::local_envvar(GOOGLE_SERVICE_ACCOUNT = fake_gcs_service_account(server), GOOGLE_ALLOW_HTTP = NA,
                      GOOGLE_SERVICE_ACCOUNT_KEY = NA, GOOGLE_APPLICATION_CREDENTIALS = NA,
                      no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
  s <- zarr_objectstore$new(sprintf("gs://%s/root", bucket), options = list(allow_http = TRUE))
  expect_identical(s$friendlyClassName, "GCS store")
  expect_identical(s$get("a/b"), as.raw(0:9))
  expect_identical(s$get("a/b", byte_range = c(2, 5)), as.raw(2:4))
  expect_identical(s$get("a/b", byte_range = -3), as.raw(7:9))
  expect_identical(s$get("a/b", byte_range = 8), as.raw(8:9))
  expect_identical(s$getsize("a/b"), 10)
  expect_null(s$get("nothing"))
  expect_false(s$exists("nothing"))
  expect_identical(s$list(), c("a/b", "a/c/d", "ab"))
  expect_identical(s$list_dir(""), c("ab", "a/"))
  expect_identical(s$list_dir("a"), c("b", "c/"))

  # Arrays written locally, copied to the bucket, read through gs:// URLs;
  # plain http allowed by the environment as object_store reads it.
  withr::local_envvar(GOOGLE_ALLOW_HTTP = "true")
  local <- file.path(withr::local_tempdir(), "cube.zarr")
  z <- create_zarr(local)
  x <- matrix(as.numeric(1:600), 20, 30)
  x[2, 3] <- NA
  def <- define_array("float64", dim(x))
  def$chunk_shape <- c(7, 8)
  z$add_array("/", "a", def)$write(x)
  xi <- matrix(1:600, 20, 30)
  b <- define_array("int32", dim(xi))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5)))
  z$add_array("/", "s", b)$write(xi)
  z[["/"]]$set_attribute("site", "gcs")
  fake_gcs_upload_dir(server, bucket, local, "data/cube.zarr")
  g <- open_zarr(sprintf("gs://%s/data/cube.zarr", bucket), read_only = TRUE)
  expect_s3_class(g$store, "zarr_objectstore")
  expect_identical(g[["/a"]][], x)
  expect_identical(g[["/s"]][4:12, 2:20], xi[4:12, 2:20])
  expect_identical(g[["/"]]$attributes$site, "gcs")

})
