# Retries of the network stores (src/rust/src/store/retry.rs) under the
# faults of the proxy of helper-faults.R: in front of the test HTTP server
# (helper-http.R) and of moto (helper-s3.R). Every fault class alone, then
# mixed: full reads are exact; with a small budget, failures are classed
# errors, never wrong values. Seeds are fixed, so each run fails the same
# requests.

fault_kinds <- c("503", "500", "429", "close", "short", "stall")

# Three small arrays, each the root of its own store (an HTTP store cannot
# list, so none is a child of a group): chunked, sharded, strings.
retry_values <- function() {
  list(
    chunked = matrix(seq_len(40L * 40L) - 800L, 40, 40),
    sharded = matrix(seq_len(40L * 40L) * 3L, 40, 40),
    strings = c(sprintf("s%d-\u00e9", 1:29), NA)
  )
}

retry_definitions <- function() {
  v <- retry_values()
  chunked <- define_array("int32", dim(v$chunked))
  chunked$chunk_shape <- c(10, 10)
  sharded <- define_array("int32", dim(v$sharded))
  sharded$chunk_shape <- c(20, 20)
  sharded$add_codec("sharding_indexed", list(chunk_shape = c(10, 10)))
  strings <- define_array("string", length(v$strings))
  strings$chunk_shape <- 5
  list(chunked = chunked, sharded = sharded, strings = strings)
}

# Write the three arrays below `base` (a folder or an s3:// URL).
write_retry_arrays <- function(base) {
  v <- retry_values()
  defs <- retry_definitions()
  for (name in names(v)) {
    create_zarr(paste0(base, "/", name))$add_array("/", "x", defs[[name]])$write(v[[name]])
  }
}

# Read each array whole `times` times from the arrays `open(name)` opens;
# each result is the value or the condition.
read_retry_arrays <- function(open, times = 1) {
  out <- list()
  for (i in seq_len(times)) {
    for (name in names(retry_values())) {
      out[[length(out) + 1L]] <- list(name = name, got = tryCatch(open(name)[], error = identity))
    }
  }
  out
}

expect_all_exact <- function(results, label) {
  v <- retry_values()
  for (r in results) {
    expect_identical(r$got, v[[r$name]], label = paste(label, r$name))
  }
}

retry_http <- local({
  dir <- NULL
  function() {
    if (is.null(dir)) {
      d <- tempfile("retry-http-")
      dir.create(d)
      withr::defer(unlink(d, recursive = TRUE), envir = testthat::teardown_env())
      write_retry_arrays(d)
      dir <<- d
    }
    dir
  }
})

# Small limits so that the faults cost little time: a stall is cut after
# 0.3 s, and a read gives up after 8 retries.
local_quick_network <- function(max_retries = 8, retry_timeout = 20, env = parent.frame()) {
  withr::local_options(zarr.max_retries = max_retries, zarr.retry_timeout = retry_timeout,
                       zarr.request_timeout = 0.3, zarr.connect_timeout = 2, .local_envir = env)
}

test_that("the network options are checked and reach the HTTP store", {
  expect_identical(zarr_options("max_retries"), 10L)
  expect_identical(zarr_options("retry_timeout"), 120)
  expect_identical(zarr_options("request_timeout"), 30)
  expect_null(zarr_options("max_concurrency"))
  expect_error(zarr_options("max_retries", -1), class = "zarr_error_argument")
  expect_error(zarr_options("request_timeout", 0), class = "zarr_error_argument")
  expect_error(zarr_httpstore$new("http://127.0.0.1:1/x", options = list(retries = 2)),
               class = "zarr_error_argument")
  withr::with_options(list(zarr.request_timeout = "soon"), {
    expect_error(zarr_httpstore$new("http://127.0.0.1:1/x"), "request_timeout", class = "zarr_error_argument")
  })
  withr::local_options(zarr.max_retries = 1L, zarr.retry_timeout = 5)
  # Nothing listens on the port: the two tries are counted in the message.
  s <- zarr_httpstore$new("http://127.0.0.1:1/x", options = list(connect_timeout = 1))
  err <- expect_error(s$get("zarr.json"), class = "zarr_error_io")
  expect_match(conditionMessage(err), "'zarr.json' at http://127.0.0.1:1/x/zarr.json", fixed = TRUE)
  expect_match(conditionMessage(err), "after 2 attempts in ", fixed = TRUE)
  expect_match(conditionMessage(err), "(max_retries 1, retry_timeout 5 s)", fixed = TRUE)
})

test_that("an object store gives up on a refused connection after 3 retries, as the HTTP store does", {
  skip_on_cran()
  # Nothing listens on port 1, and the budget would allow 1000 retries.
  withr::local_envvar(moto_env(list(endpoint = "http://127.0.0.1:1")))
  withr::local_options(zarr.max_retries = 1000L, zarr.retry_timeout = 600, zarr.connect_timeout = 2)
  s <- zarr_objectstore$new("s3://refused/x")
  err <- expect_error(s$get("zarr.json"), class = "zarr_error_io")
  expect_match(conditionMessage(err), "S3 bucket 'refused', key 'x/zarr.json'", fixed = TRUE)
  expect_match(conditionMessage(err), "after 3 retries, max_retries: 1000,", fixed = TRUE)
})

test_that("each fault class alone: every full read over HTTP is exact", {
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  local_quick_network()
  for (kind in fault_kinds) {
    set_faults(proxy, kind, rate = 0.15, seed = 11)
    got <- read_retry_arrays(function(name) open_zarr(paste0(proxy$url, "/", name, "/x"))[["/"]])
    expect_all_exact(got, kind)
    st <- fault_stats(proxy)
    # The faults happened: the reads above were tried again, not lucky.
    expect_gt(st$faults[[kind]], 3)
    # 429 carried "Retry-After: 1": no request came back before it passed.
    expect_identical(st$early_retries, 0L, label = kind)
  }
})

test_that("faults mixed at 15% over HTTP: every full read is exact", {
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  local_quick_network()
  faults <- 0L
  for (seed in 1:2) {
    # Retry-After: 0 here; the test above checks that it is waited for.
    set_faults(proxy, fault_kinds, rate = 0.15, seed = seed, retry_after = 0)
    got <- read_retry_arrays(function(name) open_zarr(paste0(proxy$url, "/", name, "/x"))[["/"]])
    expect_all_exact(got, paste("seed", seed))
    faults <- faults + sum(unlist(fault_stats(proxy)$faults))
  }
  expect_gt(faults, 10)
})

test_that("faults at 40% with a small budget over HTTP: classed errors naming key and URL, never wrong values", {
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  local_quick_network(max_retries = 1, retry_timeout = 2)
  v <- retry_values()
  failed <- 0L
  for (seed in 1:3) {
    set_faults(proxy, fault_kinds, rate = 0.4, seed = seed, retry_after = 0)
    for (r in read_retry_arrays(function(name) open_zarr(paste0(proxy$url, "/", name, "/x"))[["/"]])) {
      if (inherits(r$got, "condition")) {
        failed <- failed + 1L
        expect_s3_class(r$got, "zarr_error_io")
        expect_match(conditionMessage(r$got), paste0(proxy$url, "/", r$name, "/x/"), fixed = TRUE)
        expect_match(conditionMessage(r$got), "after 2 attempts|HTTP status|timed out|closed|connection")
      } else {
        expect_identical(r$got, v[[r$name]])
      }
    }
  }
  expect_gt(failed, 3)
})

test_that("a 206 answer whose Content-Range is not the range asked for is an error, never data", {
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  local_quick_network()
  arr <- open_zarr(paste0(proxy$url, "/sharded/x"))[["/"]]
  set_faults(proxy, "range", rate = 1)
  # A region of one inner chunk: the shard index and the chunk are ranges.
  err <- expect_error(arr[1:5, 1:5], class = "zarr_error_io")
  expect_match(conditionMessage(err), "(bytes ", fixed = TRUE)
  expect_match(conditionMessage(err), paste0(proxy$url, "/sharded/x/c/"), fixed = TRUE)
  expect_gt(fault_stats(proxy)$faults$range, 0L)
})

test_that("an interrupt ends a read that is waiting to retry", {
  # Every request fails and the budget is large: only the interrupt (here
  # R's time limit) ends the open, on R's thread between two waits.
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  withr::local_options(zarr.max_retries = 1000L, zarr.retry_timeout = 600)
  set_faults(proxy, "503", rate = 1)
  started <- Sys.time()
  err <- tryCatch({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    open_zarr(paste0(proxy$url, "/chunked/x"))
  }, error = function(e) e)
  setTimeLimit()
  took <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  expect_s3_class(err, "zarr_error_interrupted")
  expect_lt(took, 15)
  expect_gt(fault_stats(proxy)$faults[["503"]], 1L)
})

test_that("a reference store reads its targets with the network options: retried, within the budget", {
  dir <- withr::local_tempdir()
  values <- 1:8
  writeBin(values, file.path(dir, "data.bin"), size = 4L, endian = "little")
  server <- local_http_server(dir)
  proxy <- local_fault_proxy(server$url)
  meta <- paste0('{"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "int32", ',
                 '"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}}, ',
                 '"chunk_key_encoding": {"name": "default"}, "fill_value": 0, ',
                 '"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}')
  refs <- file.path(dir, "refs.json")
  target <- paste0(proxy$url, "/data.bin")
  writeLines(sprintf('{"version": 1, "refs": {"zarr.json": %s, "c/0": ["%s", 0, 16], "c/1": ["%s", 16, 16]}}',
                     meta, target, target), refs)
  local_quick_network()
  set_faults(proxy, fault_kinds, rate = 0.15, seed = 3, retry_after = 0)
  for (i in 1:20) expect_identical(open_zarr(refs)[["/"]][], values, label = paste("read", i))
  expect_gt(sum(unlist(fault_stats(proxy)$faults)), 2)
  # The budget of zarr_options() ends the read, and the message says so.
  withr::local_options(zarr.max_retries = 1L, zarr.retry_timeout = 5)
  set_faults(proxy, "503", rate = 1)
  err <- expect_error(open_zarr(refs)[["/"]][], class = "zarr_error_io")
  expect_match(conditionMessage(err), target, fixed = TRUE)
  expect_match(conditionMessage(err), "after 2 attempts in ", fixed = TRUE)
  expect_match(conditionMessage(err), "(max_retries 1, retry_timeout 5 s)", fixed = TRUE)
})

# Read `arr` whole until R's time limit stops it after `seconds`.
interrupted_read <- function(arr, seconds = 0.5) {
  err <- tryCatch({
    setTimeLimit(elapsed = seconds, transient = TRUE)
    arr[]
  }, error = function(e) e)
  setTimeLimit()
  err
}

# The requests the proxy gets in `seconds`, after `settle` seconds for the
# ones already on their way.
requests_within <- function(proxy, seconds = 2, settle = 0.5) {
  Sys.sleep(settle)
  before <- fault_stats(proxy)$requests
  Sys.sleep(seconds)
  fault_stats(proxy)$requests - before
}

test_that("an interrupted read over HTTP stops retrying: no request follows it", {
  server <- local_http_server(retry_http())
  proxy <- local_fault_proxy(server$url)
  withr::local_options(zarr.max_retries = 1000L, zarr.retry_timeout = 600)
  arr <- open_zarr(paste0(proxy$url, "/chunked/x"))[["/"]]
  set_faults(proxy, "503", rate = 1)
  err <- interrupted_read(arr)
  expect_s3_class(err, "zarr_error_interrupted")
  expect_gt(fault_stats(proxy)$faults[["503"]], 1L)
  expect_identical(requests_within(proxy), 0L)
  # The store works on once the faults are gone.
  set_faults(proxy)
  expect_identical(arr[], retry_values()$chunked)
})

# ---------------------------------------------------------------- S3 (moto)

retry_moto <- new.env(parent = emptyenv())
retry_moto$buckets <- 0L

# The file's moto server, a new bucket on it, and a fault proxy in front of
# it for the calling test.
local_retry_s3 <- function(env = parent.frame()) {
  if (is.null(retry_moto$server)) retry_moto$server <- start_moto(testthat::teardown_env())
  server <- retry_moto$server
  # The proxy draws each request's fault from a hash of its path, which
  # holds the bucket: names that depend only on this file's order (not on
  # the process id or on buckets other files made) give every run the same
  # faults, as the fixed seeds mean to.
  retry_moto$buckets <- retry_moto$buckets + 1L
  bucket <- moto_create_bucket(server, sprintf("zarr-retry-%d", retry_moto$buckets))
  proxy <- local_fault_proxy(server$endpoint, env = env)
  list(server = server, bucket = bucket, proxy = proxy)
}

# Run `code` with object stores pointed at moto itself (no faults).
direct <- function(s3, code) withr::with_envvar(moto_env(s3$server), code)

# Point object stores at the proxy for the calling test.
local_through_proxy <- function(s3, env = parent.frame()) {
  withr::local_envvar(moto_env(list(endpoint = s3$proxy$url)), .local_envir = env)
}

# The multipart uploads moto has open in `bucket` (a plain, unsigned
# ListMultipartUploads, which moto without auth answers).
moto_open_uploads <- function(server, bucket) {
  con <- socketConnection("127.0.0.1", server$port, open = "r+b", blocking = TRUE, timeout = 10)
  on.exit(close(con))
  writeLines(sprintf("GET /%s?uploads HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r",
                     bucket, server$port), con, sep = "\n")
  body <- paste(readLines(con, warn = FALSE), collapse = "\n")
  if (!grepl("ListMultipartUploadsResult", body, fixed = TRUE)) stop("not a listing of uploads: ", body)
  lengths(regmatches(body, gregexpr("<UploadId>", body, fixed = TRUE)))
}

test_that("each fault class alone and mixed at 15%: every full read from S3 is exact", {
  s3 <- local_retry_s3()
  base <- sprintf("s3://%s", s3$bucket)
  direct(s3, write_retry_arrays(base))
  local_through_proxy(s3)
  local_quick_network()
  open_s3 <- function(name) open_zarr(paste0(base, "/", name), read_only = TRUE)[["/x"]]
  for (kind in fault_kinds) {
    set_faults(s3$proxy, kind, rate = 0.15, seed = 5)
    expect_all_exact(read_retry_arrays(open_s3), kind)
    expect_gt(fault_stats(s3$proxy)$faults[[kind]], 1L)
  }
  for (seed in 1:2) {
    set_faults(s3$proxy, fault_kinds, rate = 0.15, seed = seed, retry_after = 0)
    expect_all_exact(read_retry_arrays(open_s3), paste("seed", seed))
  }
})

test_that("an interrupted read from S3 stops retrying: no request follows it", {
  s3 <- local_retry_s3()
  base <- sprintf("s3://%s", s3$bucket)
  direct(s3, write_retry_arrays(base))
  local_through_proxy(s3)
  withr::local_options(zarr.max_retries = 1000L, zarr.retry_timeout = 600)
  arr <- open_zarr(paste0(base, "/chunked"), read_only = TRUE)[["/x"]]
  set_faults(s3$proxy, "503", rate = 1)
  err <- interrupted_read(arr)
  expect_s3_class(err, "zarr_error_interrupted")
  expect_gt(fault_stats(s3$proxy)$faults[["503"]], 1L)
  expect_identical(requests_within(s3$proxy), 0L)
  set_faults(s3$proxy)
  expect_identical(arr[], retry_values()$chunked)
})

test_that("faults at 40% with a small budget on S3: classed errors, never wrong values", {
  s3 <- local_retry_s3()
  base <- sprintf("s3://%s", s3$bucket)
  direct(s3, write_retry_arrays(base))
  local_through_proxy(s3)
  local_quick_network(max_retries = 1, retry_timeout = 2)
  v <- retry_values()
  failed <- 0L
  for (seed in 1:3) {
    set_faults(s3$proxy, fault_kinds, rate = 0.4, seed = seed, retry_after = 0)
    for (r in read_retry_arrays(function(name) open_zarr(paste0(base, "/", name), read_only = TRUE)[["/x"]])) {
      if (inherits(r$got, "condition")) {
        failed <- failed + 1L
        expect_s3_class(r$got, "zarr_error_io")
        expect_match(conditionMessage(r$got), sprintf("S3 bucket '%s', key '%s/", s3$bucket, r$name),
                     fixed = TRUE)
      } else {
        expect_identical(r$got, v[[r$name]])
      }
    }
  }
  expect_gt(failed, 3)
})

test_that("writes to S3 under faults at 15% read back exact and leave no multipart upload open", {
  s3 <- local_retry_s3()
  base <- sprintf("s3://%s", s3$bucket)
  local_quick_network()
  n <- 800000 # 6.4 MB of float64: past the 6 MB threshold set below, so two parts
  big <- define_array("float64", n)
  big$chunk_shape <- n
  big$remove_codec("blosc")
  x <- as.numeric(seq_len(n)) / 4
  for (seed in 1:2) {
    withr::with_envvar(moto_env(list(endpoint = s3$proxy$url)), {
      set_faults(s3$proxy, c("503", "500", "close", "stall", "drop"), rate = 0.15, seed = seed)
      write_retry_arrays(paste0(base, "/w", seed))
      store <- zarr_objectstore$new(paste0(base, "/big", seed),
                                    options = list(multipart_threshold = "6000000", part_size = "5242880"))
      create_zarr(store)$add_array("/", "x", big)$write(x)
      expect_gt(sum(unlist(fault_stats(s3$proxy)$faults)), 3)
    })
    direct(s3, {
      v <- retry_values()
      for (name in names(v)) {
        expect_identical(open_zarr(sprintf("%s/w%d/%s", base, seed, name))[["/x"]][], v[[name]])
      }
      expect_identical(open_zarr(sprintf("%s/big%d", base, seed))[["/x"]][], x)
    })
  }
  expect_identical(moto_open_uploads(s3$server, s3$bucket), 0L)
})

test_that("a write under 40% faults that fails leaves each chunk old or new, never mixed", {
  s3 <- local_retry_s3()
  url <- sprintf("s3://%s/oldnew", s3$bucket)
  old <- matrix(1:1600, 40, 40)
  new <- -old
  def <- define_array("int32", dim(old))
  def$chunk_shape <- c(10, 10)
  direct(s3, create_zarr(url)$add_array("/", "x", def)$write(old))
  local_through_proxy(s3)
  local_quick_network(max_retries = 1, retry_timeout = 2)
  failed <- 0L
  for (seed in 1:3) {
    set_faults(s3$proxy, c("503", "500", "close", "stall", "drop"), rate = 0.4, seed = seed,
               methods = "PUT")
    err <- tryCatch(open_zarr(url)[["/x"]]$write(new), error = identity)
    if (inherits(err, "condition")) {
      failed <- failed + 1L
      expect_s3_class(err, "zarr_error_io")
    }
    got <- direct(s3, open_zarr(url)[["/x"]][])
    for (i in 0:3) for (j in 0:3) {
      rows <- i * 10 + 1:10
      cols <- j * 10 + 1:10
      block <- got[rows, cols]
      expect_true(identical(block, old[rows, cols]) || identical(block, new[rows, cols]),
                  label = sprintf("chunk %d/%d after seed %d", i, j, seed))
    }
    direct(s3, open_zarr(url)[["/x"]]$write(old))
  }
  expect_gt(failed, 0L)
})

test_that("a retried conditional metadata write keeps If-Match: it never overwrites another writer", {
  s3 <- local_retry_s3()
  url <- sprintf("s3://%s/cond", s3$bucket)
  direct(s3, create_zarr(url))
  local_through_proxy(s3)
  local_quick_network()
  key_path <- sprintf("/%s/cond/zarr.json", s3$bucket)
  mine <- charToRaw('{"zarr_format":3,"node_type":"group","attributes":{"by":"me"}}')
  theirs <- '{"zarr_format":3,"node_type":"group","attributes":{"by":"other"}}'

  # The proxy applies this store's PUT, then another writer's, then drops
  # the answer: object_store sends the PUT again with the same If-Match,
  # which the other writer's version fails.
  s <- zarr_objectstore$new(url)
  s$get_metadata("")
  set_faults(s3$proxy)
  fault_control(s3$proxy, sprintf("race?path=%s&value=%s", key_path, utils::URLencode(theirs, TRUE)))
  expect_error(s$set("zarr.json", mine), class = "zarr_error_conflict")
  st <- fault_stats(s3$proxy)
  expect_identical(st$faults$drop, 1L)
  expect_identical(st$race_status, 200L)
  expect_identical(direct(s3, rawToChar(zarr_objectstore$new(url)$get("zarr.json"))), theirs)

  # Only the answer is lost, nobody else writes: the retry's refusal is
  # this write's own doing, and the write succeeds.
  s <- zarr_objectstore$new(url)
  s$get_metadata("")
  set_faults(s3$proxy)
  fault_control(s3$proxy, sprintf("race?path=%s", key_path))
  s$set("zarr.json", mine)
  expect_identical(direct(s3, zarr_objectstore$new(url)$get("zarr.json")), mine)
  expect_identical(fault_stats(s3$proxy)$faults$drop, 1L)
})
