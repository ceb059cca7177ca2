# Icechunk repositories written by icechunk-python 2.3 (icechunk_repos.py,
# see helper-icechunk.R): every ref read exactly, virtual chunks to local
# files and to a loopback HTTP server, and R's commits read back by
# icechunk-python. Repositories in object stores and on web servers:
# test-icechunk-remote.R.

test_that("without the icechunk feature open_icechunk() names the rustc it needs", {
  skip_if(icechunk_available(), "this build has Icechunk support")
  err <- expect_error(open_icechunk(tempdir()), class = "zarr_error_unsupported")
  expect_match(conditionMessage(err), "rustc >= 1.95", fixed = TRUE)
})

test_that("every branch, tag and snapshot of a repository reads exactly", {
  f <- icechunk_fixture()
  z <- open_icechunk(f$repo)
  expect_s3_class(z, "zarr_icechunk")
  expect_s3_class(z, "zarr")
  expect_identical(z$branch, "main")
  expect_identical(z$snapshot, f$ids$second)
  expect_identical(sort(z$arrays), c("/sharded", "/temp", "/virt", "/virt_http"))
  expect_identical(z[["/temp"]][], temp_main)
  expect_identical(z[["/temp"]][2:5, 2:3], temp_main[2:5, 2:3])
  expect_identical(z[["/sharded"]][], matrix(0:63, 8, 8, byrow = TRUE))
  expect_identical(z[["/sharded"]][3:6, c(1, 8)], matrix(0:63, 8, 8, byrow = TRUE)[3:6, c(1, 8)])

  v1 <- open_icechunk(f$repo, tag = "v1")
  expect_null(v1$branch)
  expect_identical(v1$snapshot, f$ids$first)
  expect_identical(v1$arrays, "/temp")
  expect_identical(v1[["/temp"]][], temp_first)
  first <- open_icechunk(f$repo, snapshot = f$ids$first)
  expect_identical(first[["/temp"]][], temp_first)
  dev <- open_icechunk(f$repo, branch = "dev")
  expect_identical(dev$snapshot, f$ids$dev)
  expect_identical(dev[["/temp"]][], temp_first * 10L)

  h <- z$history()
  expect_identical(h$id[1:2], c(f$ids$second, f$ids$first))
  expect_identical(h$message[1:2], c("second", "first"))
  expect_identical(h$parent[1:2], c(f$ids$first, h$id[3]))
  expect_identical(nrow(h), 3L)
  expect_s3_class(h$time, "POSIXct")
  expect_true(all(diff(as.numeric(h$time)) <= 0))
  expect_identical(z$history(branch = "dev")$id[1:2], c(f$ids$dev, f$ids$first))
  expect_identical(z$history(tag = "v1")$id[1], f$ids$first)
  expect_identical(z$branches(), c(dev = f$ids$dev, main = f$ids$second))
  expect_identical(z$tags(), c(v1 = f$ids$first))
})

test_that("virtual chunks read from trusted local files and HTTP servers only", {
  f <- icechunk_fixture()
  z <- open_icechunk(f$repo, authorize_virtual_chunk_access = f$trusted)
  expect_identical(z[["/virt"]][], as.numeric(10:25))
  expect_identical(z[["/virt"]][6:9], as.numeric(15:18))
  expect_identical(z[["/virt_http"]][], as.numeric(40:47))
  expect_identical(z[["/virt_http"]][3:6], as.numeric(42:45))

  # Without authorisation, the chunks of an untrusted container are refused.
  only_files <- open_icechunk(f$repo, authorize_virtual_chunk_access = f$trusted[1])
  expect_identical(only_files[["/virt"]][1:2], c(10, 11))
  err <- expect_error(only_files[["/virt_http"]][], class = "zarr_error_io")
  expect_match(conditionMessage(err), f$url, fixed = TRUE)
  none <- open_icechunk(f$repo)
  expect_error(none[["/virt"]][], class = "zarr_error_io")
  # ... while its stored chunks read as before
  expect_identical(none[["/temp"]][], temp_main)
})

test_that("bad refs and locations give classed errors naming them", {
  f <- icechunk_fixture()
  err <- expect_error(open_icechunk(f$repo, branch = "nope"), class = "zarr_error")
  expect_match(conditionMessage(err), "nope", fixed = TRUE)
  expect_error(open_icechunk(f$repo, tag = "v9"), class = "zarr_error")
  expect_error(open_icechunk(f$repo, snapshot = "not-an-id"), class = "zarr_error_not_found")
  missing <- file.path(tempdir(), "no-such-repo")
  err <- expect_error(open_icechunk(missing), class = "zarr_error_not_found")
  expect_match(conditionMessage(err), "no-such-repo", fixed = TRUE)
  expect_error(open_icechunk(f$repo, tag = "v1", snapshot = f$ids$first), class = "zarr_error_argument")
  expect_error(open_icechunk(f$repo, tag = "v1", read_only = FALSE), class = "zarr_error_unsupported")
  z <- open_icechunk(f$repo)
  expect_error(z[["/temp"]][1, 1] <- 0L, class = "zarr_error_read_only")
  expect_error(z$commit("x"), class = "zarr_error_read_only")
})

test_that("R's commits to a branch read back exactly in icechunk-python", {
  f <- icechunk_fixture()
  z <- open_icechunk(f$repo, read_only = FALSE)
  a <- z[["/temp"]]
  a[1, 1:4] <- c(-5L, -6L, -7L, -8L)
  expect_true(z$has_changes)
  # uncommitted writes are seen by the session, not by other readers
  expect_identical(a[1, ], c(-5L, -6L, -7L, -8L))
  expect_identical(open_icechunk(f$repo)[["/temp"]][], temp_main)
  id <- z$commit("from R")
  expect_match(id, "^[0-9A-Z]{20}$")
  expect_identical(z$snapshot, id)
  expect_false(z$has_changes)

  py <- icechunk_script(c("read", f$repo, "main", "temp"))
  want <- temp_main
  want[1, ] <- c(-5L, -6L, -7L, -8L)
  expect_identical(py$shape, c(6L, 4L))
  expect_identical(matrix(as.integer(py$values), 6, 4, byrow = TRUE), want)
  expect_identical(py$history$id[1:2], c(id, f$ids$second))
  expect_identical(py$history$message[1], "from R")

  # a new array and a resize in a second commit of the same session
  def <- define_array("float64", 5)
  def$chunk_shape <- 2
  z$add_array("/", "added", def)
  z[["/added"]][] <- c(1.5, 2.5, 3.5, 4.5, 5.5)
  z[["/temp"]]$resize(c(8, 4))
  id2 <- z$commit("added and resized")
  py <- icechunk_script(c("read", f$repo, "main", "added"))
  expect_identical(py$values, c(1.5, 2.5, 3.5, 4.5, 5.5))
  expect_identical(py$history$id[1:2], c(id2, id))
  py <- icechunk_script(c("read", f$repo, "main", "temp"))
  expect_identical(py$shape, c(8L, 4L))
  expect_identical(matrix(as.integer(py$values), 8, 4, byrow = TRUE), rbind(want, matrix(-1L, 2, 4)))
  expect_identical(open_icechunk(f$repo)[["/temp"]][], rbind(want, matrix(NA_integer_, 2, 4)))
})

test_that("new_branch starts a branch at a tag; create_tag() tags a commit", {
  f <- icechunk_fixture()
  z <- open_icechunk(f$repo, tag = "v1", new_branch = "from-r")
  expect_identical(z$branch, "from-r")
  z[["/temp"]][6, 4] <- 999L
  id <- z$commit("on a new branch")
  expect_identical(create_tag(z, "r-tag"), id)
  expect_identical(create_tag(z, "r-first", snapshot = f$ids$first), f$ids$first)
  expect_error(create_tag(z, "r-tag"), class = "zarr_error")

  py <- icechunk_script(c("read", f$repo, "from-r", "temp"))
  want <- temp_first
  want[6, 4] <- 999L
  expect_identical(matrix(as.integer(py$values), 6, 4, byrow = TRUE), want)
  expect_identical(py$history$id[1:2], c(id, f$ids$first))
  expect_identical(py$branches, c("dev", "from-r", "main"))
  expect_identical(py$tags, c("r-first", "r-tag", "v1"))
  expect_identical(open_icechunk(f$repo, tag = "r-tag")[["/temp"]][], want)
})

test_that("a conflicting commit raises zarr_error_conflict; rebase = 'detect' rebases", {
  f <- icechunk_fixture()
  one <- open_icechunk(f$repo, read_only = FALSE)
  two <- open_icechunk(f$repo, read_only = FALSE)
  one[["/temp"]][1, 1] <- 1000L
  two[["/temp"]][6, 4] <- 2000L
  first <- one$commit("one")
  err <- expect_error(two$commit("two"), class = "zarr_error_conflict")
  expect_match(conditionMessage(err), "rebase", fixed = TRUE)
  expect_match(conditionMessage(err), "main", fixed = TRUE)
  # the other chunk was written: the changes do not overlap
  second <- two$commit("two", rebase = "detect")
  py <- icechunk_script(c("read", f$repo, "main", "temp"))
  want <- temp_main
  want[1, 1] <- 1000L
  want[6, 4] <- 2000L
  expect_identical(matrix(as.integer(py$values), 6, 4, byrow = TRUE), want)
  expect_identical(py$history$id[1:3], c(second, first, f$ids$second))

  # the same chunk on both sides: detect fails, "theirs" keeps the branch's
  three <- open_icechunk(f$repo, read_only = FALSE)
  four <- open_icechunk(f$repo, read_only = FALSE)
  three[["/temp"]][1, 1] <- 3000L
  four[["/temp"]][1, 1] <- 4000L
  three$commit("three")
  expect_error(four$commit("four", rebase = "detect"), class = "zarr_error_conflict")
  four$commit("four", rebase = "theirs")
  expect_identical(open_icechunk(f$repo)[["/temp"]][1, 1], 3000L)
})
