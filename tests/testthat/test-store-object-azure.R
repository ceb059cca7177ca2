# zarr_objectstore on Azure Blob Storage, against Azurite on 127.0.0.1
# (helper-azure.R), started once for this file: az:// and abfs:// URLs,
# the ways object_store and Azure's own tools take credentials, and many
# writers.

azurite_shared <- new.env(parent = emptyenv())

# The file's Azurite server, with the environment pointing at it through
# the emulator switch for the calling test, and a new container.
local_azure <- function(env = parent.frame()) {
  if (is.null(azurite_shared$server)) azurite_shared$server <- start_azurite(testthat::teardown_env())
  s <- azurite_shared$server
  withr::local_envvar(azurite_env(s), .local_envir = env)
  list(server = s, container = azurite_container(s))
}

test_that("an Azure store sets, gets, ranges, lists and erases keys", {
  az <- local_azure()
  s <- zarr_objectstore$new(sprintf("az://%s/root", az$container))
  expect_identical(s$friendlyClassName, "Azure store")
  expect_null(s$get("a/b"))
  s$set("a/b", as.raw(0:9))
  s$set("a/c/d", as.raw(1:3))
  s$set("ab", as.raw(7))
  expect_identical(s$get("a/b"), as.raw(0:9))
  expect_identical(s$get("a/b", byte_range = c(2, 5)), as.raw(2:4))
  expect_identical(s$get("a/b", byte_range = -3), as.raw(7:9))
  expect_identical(s$getsize("a/b"), 10)
  expect_identical(s$list(), c("a/b", "a/c/d", "ab"))
  expect_identical(s$list_dir(""), c("ab", "a/"))
  expect_identical(s$list_dir("a"), c("b", "c/"))
  s$erase("a/b")
  expect_false(s$exists("a/b"))
  s$erase_prefix("a/")
  expect_identical(s$list(), "ab")
})

test_that("v3, v2 and sharded arrays round-trip through az:// and abfs:// URLs", {
  az <- local_azure()
  x <- matrix(as.numeric(1:600), 20, 30)
  x[5, 6] <- NA
  url <- sprintf("az://%s/v3.zarr", az$container)
  z <- create_zarr(url)
  def <- define_array("float64", dim(x))
  def$chunk_shape <- c(7, 8)
  z$add_array("/", "a", def)$write(x)
  z$add_group("/", "g")$set_attribute("site", "azurite")
  z2 <- open_zarr(url, read_only = TRUE)
  expect_identical(z2[["/a"]][], x)
  expect_identical(z2[["/g"]]$attributes$site, "azurite")

  # The same objects by their abfs:// URL, which names the account.
  abfs <- sprintf("abfs://%s@%s.dfs.core.windows.net/v3.zarr", az$container, azurite_account)
  expect_identical(open_zarr(abfs)[["/a"]][3:9, 4:6], x[3:9, 4:6])

  v2 <- sprintf("abfs://%s@%s.dfs.core.windows.net/v2.zarr", az$container, azurite_account)
  def <- define_array("float64", dim(x))
  def$chunk_shape <- c(7, 8)
  create_zarr(v2, zarr_format = 2L)$add_array("/", "b", def)$write(x)
  expect_identical(open_zarr(v2)[["/b"]][], x)
  expect_true(zarr_objectstore$new(sprintf("az://%s/v2.zarr", az$container))$exists("b/.zarray"))

  xi <- matrix(1:600, 20, 30)
  b <- define_array("int32", dim(xi))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5)))
  url <- sprintf("az://%s/sharded.zarr", az$container)
  create_zarr(url)$add_array("/", "s", b)$write(xi)
  expect_identical(open_zarr(url)[["/s"]][4:12, 2:20], xi[4:12, 2:20])

  # strings, and a consolidated store read from its root document
  xs <- matrix(c("a", "", NA, "\u00e9t\u00e9", strrep("z", 300), "x y"), 2, 3)
  url <- sprintf("az://%s/strings.zarr", az$container)
  create_zarr(url)$add_array("/", "t", define_array("string", dim(xs)))$write(xs)
  expect_identical(open_zarr(url)[["/t"]][], xs)
  url <- sprintf("az://%s/cons.zarr", az$container)
  z <- create_zarr(url)
  z$add_group("/", "g")
  z$add_array("/g", "a", def)$write(x)
  z$consolidate()
  expect_identical(open_zarr(url, read_only = TRUE)[["/g/a"]][], x)
  root <- jsonlite::fromJSON(rawToChar(zarr_objectstore$new(url)$get("zarr.json")), simplifyVector = FALSE)
  expect_identical(root$consolidated_metadata$kind, "inline")
  expect_identical(sort(names(root$consolidated_metadata$metadata)), c("g", "g/a"))

  # a missing store and a missing container are not found, naming them
  expect_error(open_zarr(sprintf("az://%s/none.zarr", az$container)), class = "zarr_error_not_found")
  err <- tryCatch(zarr_objectstore$new("az://no-such-container/p")$set("k", as.raw(1)), error = identity)
  expect_s3_class(err, "zarr_error_not_found")
  expect_match(conditionMessage(err), "bucket 'no-such-container', key 'p/k'", fixed = TRUE)
})

test_that("Azure credentials come from the account variables, a connection string or options", {
  az <- local_azure()
  blob <- paste0(az$server$endpoint, "/", azurite_account)
  url <- sprintf("az://%s/cred", az$container)
  zarr_objectstore$new(url)$set("k", as.raw(1:4))

  # Account name and key as Azure's tools read them, with the endpoint.
  withr::local_envvar(AZURE_STORAGE_USE_EMULATOR = NA, AZURE_STORAGE_ACCOUNT_NAME = azurite_account,
                      AZURE_STORAGE_ACCOUNT_KEY = azurite_key, AZURE_STORAGE_ENDPOINT = blob,
                      AZURE_ALLOW_HTTP = "true")
  expect_identical(zarr_objectstore$new(url)$get("k"), as.raw(1:4))

  # A connection string alone, as the Azure CLI and SDKs take it.
  withr::local_envvar(AZURE_STORAGE_ACCOUNT_NAME = NA, AZURE_STORAGE_ACCOUNT_KEY = NA,
                      AZURE_STORAGE_ENDPOINT = NA, AZURE_ALLOW_HTTP = NA,
                      AZURE_STORAGE_CONNECTION_STRING = paste0(
                        "DefaultEndpointsProtocol=http;AccountName=", azurite_account,
                        ";AccountKey=", azurite_key, ";BlobEndpoint=", blob, ";"))
  s <- zarr_objectstore$new(url)
  expect_identical(s$get("k"), as.raw(1:4))
  s$set("from-connection-string", as.raw(9))

  # The same settings as options, with nothing in the environment.
  withr::local_envvar(AZURE_STORAGE_CONNECTION_STRING = NA)
  s <- zarr_objectstore$new(url, options = list(account_name = azurite_account, access_key = azurite_key,
                                                endpoint = blob, allow_http = TRUE))
  expect_identical(s$list(), c("from-connection-string", "k"))
  e <- zarr_objectstore$new(url, options = list(use_emulator = TRUE))
  expect_identical(e$get("from-connection-string"), as.raw(9))

  # A wrong key is refused; the error names container and key.
  bad <- zarr_objectstore$new(url, options = list(account_name = azurite_account, endpoint = blob,
                                                  access_key = "d3Jvbmc=", allow_http = TRUE,
                                                  max_retries = 0))
  err <- tryCatch(bad$get("k"), error = identity)
  expect_s3_class(err, "zarr_error_permission_denied")
  expect_match(conditionMessage(err), sprintf("bucket '%s', key 'cred/k'", az$container), fixed = TRUE)
})

test_that("four R processes write disjoint chunk regions of one array on Azure; a metadata race is a conflict", {
  skip_if_not_installed("callr")
  az <- local_azure()
  r <- write_from_four_processes(sprintf("az://%s/many.zarr", az$container))
  expect_identical(r$ok, rep(TRUE, 4))
  expect_identical(r$value, outer(1:40, 1:64, function(i, j) as.integer(i * 1000L + j)))

  url <- sprintf("az://%s/race.zarr", az$container)
  create_zarr(url)$add_array("/", "a", define_array("int32", 4))
  first <- open_zarr(url)[["/a"]]
  second <- open_zarr(url)[["/a"]]
  first$set_attribute("writer", "first")
  expect_error(second$set_attribute("writer", "second"), "race.zarr/a/zarr.json",
               class = "zarr_error_conflict")
  expect_identical(open_zarr(url)[["/a"]]$attributes$writer, "first")
})
