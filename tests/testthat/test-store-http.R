# zarr_httpstore (R/store-http.R, src/rust/src/store/http.rs) against the
# local test server of helper-http.R, serving stores written by the package.

# Two stores written with the default codecs, made once for the file: a
# single-array store (the root is the array) and a hierarchy.
http_fixture <- local({
  dir <- NULL
  function() {
    if (!is.null(dir)) return(dir)
    d <- tempfile("http-fixture-")
    dir.create(d)
    withr::defer(unlink(d, recursive = TRUE), envir = testthat::teardown_env())
    x <- matrix(sin(seq_len(150 * 120)), 150, 120)
    as_zarr(x, location = file.path(d, "arr.zarr"))
    z <- create_zarr(file.path(d, "grp.zarr"))
    z$add_group("/", "g")
    a <- z$add_array("/g", "ints", define_array("int32", c(30, 40)))
    a$write(matrix(1:1200, 30, 40))
    dir <<- d
    d
  }
})

http_fixture_matrix <- function() matrix(sin(seq_len(150 * 120)), 150, 120)

test_that("an HTTP store is a read-only zarr_store with the documented bindings", {
  s <- zarr_httpstore$new("https://example.org/data/temperature.zarr")
  expect_s3_class(s, "zarr_httpstore")
  expect_s3_class(s, "zarr_store")
  expect_true(s$read_only)
  expect_false(s$supports_writes)
  expect_false(s$supports_deletes)
  expect_false(s$supports_listing)
  expect_identical(s$friendlyClassName, "HTTP store")
  expect_identical(s$root, "https://example.org/data/temperature.zarr")
  expect_identical(s$uri, "https://example.org/data/temperature.zarr")
  expect_identical(s$separator, "/")
  expect_output(print(s), "<HTTP store> HTTP store at https://example.org/data/temperature.zarr/ (read-only)",
                fixed = TRUE)
})

test_that("only http:// and https:// URLs make an HTTP store", {
  expect_error(zarr_httpstore$new("ftp://example.org/x"), class = "zarr_error_invalid_key")
  expect_error(zarr_httpstore$new("/some/path"), class = "zarr_error_invalid_key")
  expect_error(zarr_httpstore$new("http://"), class = "zarr_error_invalid_key")
  expect_error(zarr_httpstore$new(c("http://a", "http://b")), class = "zarr_error_argument")
  expect_s3_class(zarr_httpstore$new("HTTPS://example.org/ünï côde.zarr"), "zarr_httpstore")
})

test_that("get() of a whole key gives the bytes of the file", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  for (store_name in c("arr.zarr", "grp.zarr")) {
    s <- zarr_httpstore$new(paste0(server$url, "/", store_name))
    keys <- http_files_below(file.path(dir, store_name))
    expect_true(length(keys) >= 3)
    for (key in keys) {
      expect_identical(s$get(key), http_file_bytes(file.path(dir, store_name, key)), label = key)
    }
  }
})

test_that("byte ranges of every form are the slices of the value, fetched as ranges", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  s <- zarr_httpstore$new(paste0(server$url, "/arr.zarr"))
  key <- "c/0/0"
  whole <- http_file_bytes(file.path(dir, "arr.zarr", key))
  n <- length(whole)
  expect_gt(n, 100)
  http_reset(server)
  expect_identical(s$get(key, byte_range = -7), whole[(n - 6):n])
  expect_identical(s$get(key, byte_range = c(3, 10)), whole[4:10])
  st <- http_stats(server)
  expect_gte(st$ranges, 2L)
  # Only the requested bytes crossed the wire, not the whole value.
  expect_lte(st$bytes, 14L)
  expect_identical(s$get(key, byte_range = 10), whole[11:n])
  expect_identical(s$get(key, byte_range = c(20, n + 1000)), whole[21:n])
  expect_identical(s$get(key, byte_range = 0), whole)
  # A range past the end is an error naming the key, as in every store.
  expect_error(s$get(key, byte_range = n + 1), "c/0/0", class = "zarr_error_corrupt_chunk")
  expect_error(s$get(key, byte_range = -(n + 1)), "c/0/0", class = "zarr_error_corrupt_chunk")
})

test_that("byte ranges are right when the server ignores Range headers", {
  dir <- http_fixture()
  server <- local_http_server(dir, no_ranges = TRUE)
  s <- zarr_httpstore$new(paste0(server$url, "/arr.zarr"))
  whole <- http_file_bytes(file.path(dir, "arr.zarr", "c/0/0"))
  n <- length(whole)
  expect_identical(s$get("c/0/0", byte_range = 10), whole[11:n])
  expect_identical(s$get("c/0/0", byte_range = -7), whole[(n - 6):n])
  expect_identical(s$get("c/0/0", byte_range = c(3, 10)), whole[4:10])
})

test_that("a missing key reads as NULL; exists() and getsize() use the server", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  s <- zarr_httpstore$new(paste0(server$url, "/arr.zarr"))
  expect_null(s$get("c/9/9"))
  expect_null(s$get("no/such/key", byte_range = -3))
  expect_null(s$get("no/such/key", byte_range = c(1, 2)))
  expect_false(s$exists("c/9/9"))
  expect_true(s$exists("zarr.json"))
  expect_identical(s$getsize("zarr.json"), as.numeric(file.size(file.path(dir, "arr.zarr", "zarr.json"))))
  expect_identical(s$getsize("c/9/9"), NA_real_)
  expect_null(s$get_metadata("no/node"))
  expect_identical(s$get_metadata("")$node_type, "array")
  g <- zarr_httpstore$new(paste0(server$url, "/grp.zarr"))
  expect_true(g$is_group(""))
  expect_true(g$is_group("/g"))
  expect_false(g$is_group("/g/ints"))
})

test_that("invalid keys are refused before any request", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  s <- zarr_httpstore$new(paste0(server$url, "/arr.zarr"))
  http_reset(server)
  for (key in c("../grp.zarr/zarr.json", "/etc/passwd", "a//b", "a\\b", "./zarr.json")) {
    expect_error(s$get(key), class = "zarr_error_invalid_key")
    expect_error(s$exists(key), class = "zarr_error_invalid_key")
  }
  expect_identical(http_stats(server)$requests, 0L)
})

test_that("403 Forbidden is an I/O error naming the URL", {
  server <- local_http_server(http_fixture())
  url <- paste0(server$url, "/__forbidden/data.zarr")
  s <- zarr_httpstore$new(url)
  expect_error(s$get("zarr.json"), paste0("403 Forbidden from ", url, "/zarr.json"),
               fixed = TRUE, class = "zarr_error_io")
  expect_error(s$exists("zarr.json"), "403 Forbidden", class = "zarr_error_io")
  expect_error(open_zarr(url), url, fixed = TRUE, class = "zarr_error_io")
})

test_that("a server answering with web pages gives a metadata error naming the key", {
  server <- local_http_server(http_fixture(), html = TRUE)
  url <- paste0(server$url, "/arr.zarr")
  expect_error(open_zarr(url), "'zarr.json'.*returned HTML, not Zarr metadata", class = "zarr_error_metadata")
  s <- zarr_httpstore$new(url)
  expect_error(s$get_metadata("g"), "g/zarr.json", fixed = TRUE, class = "zarr_error_metadata")
  # Any other key is just bytes.
  expect_type(s$get("c/0/0"), "raw")
})

test_that("open_zarr() of a URL reads a single-array store exactly", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  url <- paste0(server$url, "/arr.zarr")
  x <- http_fixture_matrix()
  z <- open_zarr(url)
  expect_s3_class(z$store, "zarr_httpstore")
  expect_true(z$store$read_only)
  expect_identical(z[["/"]][], x)
  expect_identical(z[["/"]][101:150, 90:120], x[101:150, 90:120])
  # read_only = FALSE cannot make an HTTP store writable.
  z2 <- open_zarr(url, read_only = FALSE)
  expect_true(z2$store$read_only)
  expect_error(z2[["/"]]$write(x), class = "zarr_error_read_only")
  expect_identical(z2[["/"]][], x)
})

test_that("a zarr_array over an HTTP store reads what was written", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  s <- zarr_httpstore$new(paste0(server$url, "/arr.zarr"))
  a <- zarr_array$new("", s$get_metadata(""), NULL, s)
  expect_identical(a$read(), http_fixture_matrix())
  expect_identical(a$read(list(2:3, 7)), http_fixture_matrix()[2:3, 7, drop = FALSE])
  expect_identical(a[140:150, 1:3], http_fixture_matrix()[140:150, 1:3])
})

test_that("reading an array over HTTP fetches its chunks and no metadata again", {
  dir <- http_fixture()
  v2 <- file.path(dir, "arr-v2.zarr")
  if (!dir.exists(v2)) as_zarr(http_fixture_matrix(), location = v2, zarr_format = 2L)
  server <- local_http_server(dir)
  for (name in c("arr.zarr", "arr-v2.zarr")) {
    z <- open_zarr(paste0(server$url, "/", name))
    arr <- z[["/"]]
    chunks <- setdiff(http_files_below(file.path(dir, name)), c("zarr.json", ".zarray", ".zattrs", ".zgroup"))
    expect_gt(length(chunks), 1L)
    http_reset(server)
    expect_identical(arr[], http_fixture_matrix(), label = name)
    # one request per chunk: the metadata document(s) read by open_zarr()
    # are not fetched again
    expect_identical(as.integer(http_stats(server)$requests), length(chunks), label = name)
  }
})

test_that("writes raise zarr_error_read_only; listings are unsupported", {
  dir <- http_fixture()
  server <- local_http_server(dir)
  s <- zarr_httpstore$new(paste0(server$url, "/grp.zarr"))
  http_reset(server)
  expect_error(s$set("x", as.raw(1)), "read-only", class = "zarr_error_read_only")
  expect_error(s$erase("zarr.json"), class = "zarr_error_read_only")
  expect_error(s$erase_prefix("g/"), class = "zarr_error_read_only")
  expect_error(s$clear(), class = "zarr_error_read_only")
  expect_error(s$set_if_not_exists("x", as.raw(1)), class = "zarr_error_read_only")
  expect_error(s$set_metadata("g", list(zarr_format = 3L, node_type = "group")),
               class = "zarr_error_read_only")
  expect_error(s$create_group("/", "new"), class = "zarr_error_read_only")
  expect_error(s$create_array("/", "new", define_array("int32", 3)), class = "zarr_error_read_only")
  expect_identical(http_stats(server)$requests, 0L)
  # The refusal names the store and the prefix.
  expect_error(s$list(), paste0("cannot list '': listing is not supported by HTTP store at ", server$url, "/grp.zarr"),
               fixed = TRUE, class = "zarr_error_unsupported")
  expect_error(s$list_dir(""), class = "zarr_error_unsupported")
  expect_error(s$list_prefix("g/"), class = "zarr_error_unsupported")
  # Nothing changed on disk.
  expect_identical(s$get("zarr.json"), http_file_bytes(file.path(dir, "grp.zarr", "zarr.json")))
})

test_that("a refused connection is an I/O error naming the URL", {
  server <- local_http_server(http_fixture())
  url <- paste0(server$url, "/arr.zarr")
  server$stop()
  # A refused connection is retried 3 times only (nothing listens there),
  # whatever max_retries says; fewer when max_retries says so.
  withr::local_options(zarr.max_retries = NULL)
  # Wait (briefly) until the port is closed.
  s <- zarr_httpstore$new(url)
  deadline <- Sys.time() + 5
  repeat {
    e <- tryCatch(s$get("zarr.json"), error = function(e) e)
    if (inherits(e, "error") || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_s3_class(e, "zarr_error_io")
  expect_match(conditionMessage(e), paste0(url, "/zarr.json"), fixed = TRUE)
  expect_match(conditionMessage(e), "after 4 attempts", fixed = TRUE)
  withr::local_options(zarr.max_retries = 1L)
  e1 <- tryCatch(zarr_httpstore$new(url)$get("zarr.json"), zarr_error = identity)
  expect_match(conditionMessage(e1), "after 2 attempts", fixed = TRUE)
  expect_error(open_zarr(url), url, fixed = TRUE, class = "zarr_error_io")
  expect_error(s$exists("zarr.json"), class = "zarr_error_io")
})

test_that("reading through a slow server stays correct", {
  dir <- http_fixture()
  server <- local_http_server(dir, delay_ms = 5)
  z <- open_zarr(paste0(server$url, "/arr.zarr"))
  http_reset(server)
  expect_identical(z[["/"]][], http_fixture_matrix())
  st <- http_stats(server)
  # Four chunks, each fetched once (plus what the engine needs besides).
  expect_gte(st$gets, 4L)
  expect_lte(st$requests, 12L)
})

test_that("an interrupt ends the open of a store whose server does not answer", {
  # R's thread waits for the metadata on the HTTP client's runtime and
  # asks for interrupts meanwhile; before, it waited for the read timeout
  # (30 s) and then reported that instead.
  root <- withr::local_tempdir()
  create_zarr(root)$add_array("/", "x", define_array("float64", c(10, 10)))
  server <- local_http_server(root, delay_ms = 600000)
  started <- Sys.time()
  err <- tryCatch({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    open_zarr(paste0(server$url, "/x"))
  }, error = function(e) e)
  setTimeLimit()
  took <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  expect_s3_class(err, "zarr_error_interrupted")
  expect_lt(took, 15)
})
