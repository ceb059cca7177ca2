# Icechunk repositories away from the local file system, written by
# icechunk-python 2.3 (icechunk_repos.py "write": two commits on main, the
# tag v1 and the branch dev on the first) and opened with the URLs and
# credentials open_zarr() takes: S3 (moto), Azure (Azurite), GCS
# (fake-gcs-server) and a web server (read-only). Each server is started
# once for the file.

remote <- new.env(parent = emptyenv())

# Every ref of the repository at `url` reads exactly, with its history,
# branches and tags; `ids` are the snapshot ids icechunk_repos.py printed.
expect_every_ref <- function(url, ids, options = list()) {
  open <- function(...) open_icechunk(url, ..., options = options)
  z <- open()
  expect_identical(z$snapshot, ids$second)
  expect_identical(z[["/temp"]][], temp_main)
  expect_identical(z[["/temp"]][2:5, 2:3], temp_main[2:5, 2:3])
  expect_identical(open(tag = "v1")[["/temp"]][], temp_first)
  expect_identical(open(snapshot = ids$first)[["/temp"]][], temp_first)
  expect_identical(open(branch = "dev")[["/temp"]][], temp_first * 10L)
  expect_identical(z$history()$id[1:2], c(ids$second, ids$first))
  expect_identical(z$history()$message[1:2], c("second", "first"))
  expect_identical(z$history(branch = "dev")$id[1:2], c(ids$dev, ids$first))
  expect_identical(z$branches(), c(dev = ids$dev, main = ids$second))
  expect_identical(z$tags(), c(v1 = ids$first))
}

# R commits a change to main at `url`; icechunk-python reads it back
# exactly, with R's commit on top of the branch's history.
expect_commit_read_back <- function(url, ids, message, options = list()) {
  w <- open_icechunk(url, read_only = FALSE, options = options)
  w[["/temp"]][2, 3] <- 77L
  w[["/temp"]][6, 1:4] <- -(2:5)
  id <- w$commit(message)
  want <- temp_main
  want[2, 3] <- 77L
  want[6, ] <- -(2:5)
  py <- icechunk_script(c("read", url, "main", "temp"))
  expect_identical(py$shape, c(6L, 4L))
  expect_identical(matrix(as.integer(py$values), 6, 4, byrow = TRUE), want)
  expect_identical(py$history$id[1:3], c(id, ids$second, ids$first))
  expect_identical(py$history$message[1], message)
  expect_identical(open_icechunk(url, options = options)[["/temp"]][], want)
  expect_identical(open_icechunk(url, options = options)$snapshot, id)
}

test_that("a repository in S3 (moto) reads every ref, and R's commits read back in icechunk-python", {
  python_icechunk()
  if (is.null(remote$moto)) remote$moto <- start_moto(testthat::teardown_env())
  withr::local_envvar(moto_env(remote$moto))
  url <- sprintf("s3://%s/repos/one", moto_bucket(remote$moto))
  ids <- icechunk_script(c("write", url))
  expect_every_ref(url, ids)
  expect_commit_read_back(url, ids, "from R, in S3")
  expect_error(open_icechunk(sub("repos/one", "nothing-here", url)), class = "zarr_error_not_found")
  # explicit keys in `options`, as zarr_objectstore takes them
  withr::local_envvar(AWS_ACCESS_KEY_ID = NA, AWS_SECRET_ACCESS_KEY = NA)
  opts <- list(aws_access_key_id = "testing", aws_secret_access_key = "testing")
  expect_identical(open_icechunk(url, options = opts)$history()$message[1], "from R, in S3")
})

test_that("a repository on Azure (Azurite) reads every ref by az:// and abfs:// URLs; R's commits read back", {
  python_icechunk()
  if (is.null(remote$azurite)) remote$azurite <- start_azurite(testthat::teardown_env())
  # the emulator's switch, as open_zarr() takes it; the key for Python
  withr::local_envvar(c(azurite_env(remote$azurite), ZARR_TEST_AZURITE_KEY = azurite_key))
  container <- azurite_container(remote$azurite)
  url <- sprintf("az://%s/repos/one", container)
  ids <- icechunk_script(c("write", url))
  expect_every_ref(url, ids)
  abfs <- sprintf("abfs://%s@%s.dfs.core.windows.net/repos/one", container, azurite_account)
  expect_identical(open_icechunk(abfs, tag = "v1")[["/temp"]][], temp_first)
  expect_commit_read_back(url, ids, "from R, on Azure")
  err <- expect_error(open_icechunk(sprintf("az://%s/nothing-here", container)), class = "zarr_error_not_found")
  expect_match(conditionMessage(err), "nothing-here", fixed = TRUE)
})

test_that("a repository on GCS (fake-gcs-server) reads every ref; a refused commit leaves the branch as it was", {
  python_icechunk()
  if (is.null(remote$gcs)) remote$gcs <- start_fake_gcs(testthat::teardown_env())
  server <- remote$gcs
  withr::local_envvar(GOOGLE_SERVICE_ACCOUNT = fake_gcs_service_account(server), GOOGLE_SERVICE_ACCOUNT_KEY = NA,
                      GOOGLE_APPLICATION_CREDENTIALS = NA, GOOGLE_ALLOW_HTTP = NA,
                      no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
  # The emulator lacks the XML API uploads of object_store (which both
  # icechunk-python and this package write with): the repository is
  # written locally and its files put into the bucket with the JSON API.
  local <- file.path(withr::local_tempdir(), "repo")
  ids <- icechunk_script(c("write", local))
  bucket <- fake_gcs_create_bucket(server, "icechunk-test")
  fake_gcs_upload_dir(server, bucket, local, "repos/one")
  url <- sprintf("gs://%s/repos/one", bucket)
  opts <- list(allow_http = TRUE)
  expect_every_ref(url, ids, options = opts)

  # So a commit is refused by the server: a classed error, and the branch
  # still reads as before.
  w <- open_icechunk(url, read_only = FALSE, options = opts)
  w[["/temp"]][1, 1] <- 0L
  err <- expect_error(w$commit("refused"), class = "zarr_error_io")
  expect_match(conditionMessage(err), url, fixed = TRUE)
  expect_identical(open_icechunk(url, options = opts)$snapshot, ids$second)
  expect_identical(open_icechunk(url, options = opts)[["/temp"]][], temp_main)
})

test_that("a repository on a web server reads every ref and refuses writes naming its URL", {
  python_icechunk()
  root <- withr::local_tempdir()
  ids <- icechunk_script(c("write", file.path(root, "repo")))
  server <- local_http_server(root)
  url <- paste0(server$url, "/repo")
  expect_every_ref(url, ids)
  err <- expect_error(open_icechunk(url, read_only = FALSE), class = "zarr_error_read_only")
  expect_match(conditionMessage(err), url, fixed = TRUE)
  expect_error(open_icechunk(url, new_branch = "b"), class = "zarr_error_read_only")
  err <- expect_error(open_icechunk(paste0(server$url, "/nothing-here")), class = "zarr_error")
  expect_match(conditionMessage(err), "nothing-here", fixed = TRUE)
})
