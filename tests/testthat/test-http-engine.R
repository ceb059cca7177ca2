# The engine's reads over HTTP, against the local test server
# (helper-http.R): a region of a sharded array fetches only the shard index
# and the inner chunk it needs, and a full read of a multi-chunk array keeps
# several requests in flight. Skipped without Python 3.

test_that("one inner chunk of a sharded array transfers < 5% of the shard over HTTP", {
  root <- withr::local_tempdir()
  b <- define_array("int32", c(1024, 1024))
  b$chunk_shape <- c(1024, 1024)
  b$remove_codec("blosc")
  b$add_codec("sharding_indexed", list(chunk_shape = c(64, 64)))
  x <- matrix(seq_len(1024L * 1024L) - 300000L, 1024, 1024)
  create_zarr(root)$add_array("/", "x", b)$write(x)
  shard <- file.path(root, "x", "c", "0", "0")
  expect_true(file.exists(shard))
  shard_bytes <- file.size(shard)
  # 256 inner chunks of 64 x 64 int32 (16 KiB each), no compression,
  # and an index of 256 (offset, length) pairs plus a crc32c.
  expect_equal(shard_bytes, 256 * 64 * 64 * 4 + 256 * 16 + 4)

  server <- local_http_server(root)
  http_reset(server)
  # The array is the root of the store at <url>/x: an HTTP store cannot
  # list, so it is not found as a child of the root group.
  arr <- open_zarr(paste0(server$url, "/x"))[["/"]]
  got <- arr[65:128, 129:192]
  st <- http_stats(server)

  expect_identical(got, x[65:128, 129:192])
  # The metadata document (once: open_zarr() read it, the read does not
  # fetch it again), the shard index and one inner chunk, each in one
  # request; the index and the chunk as byte ranges, never the shard.
  expect_identical(as.integer(st$ranges), 2L)
  expect_identical(as.integer(st$requests), 3L)
  metadata_bytes <- file.size(file.path(root, "x", "zarr.json"))
  expect_lte(st$bytes, metadata_bytes + 256 * 16 + 4 + 64 * 64 * 4)
  pct <- 100 * st$bytes / shard_bytes
  expect_lt(pct, 5)
  message(sprintf(
    "sharded read of one 64 x 64 region over HTTP: %d bytes sent (%d requests, %d ranged) of a %d-byte shard = %.2f%%",
    as.integer(st$bytes), as.integer(st$requests), as.integer(st$ranges), as.integer(shard_bytes), pct
  ))

  # A region across four inner chunks: the index and four ranges.
  http_reset(server)
  expect_identical(arr[60:70, 120:130], x[60:70, 120:130])
  st <- http_stats(server)
  expect_identical(as.integer(st$ranges), 5L)
  expect_lt(st$bytes, 0.05 * shard_bytes)
})

test_that("a full read of a multi-chunk array over HTTP is exact and concurrent", {
  root <- withr::local_tempdir()
  b <- define_array("float64", c(256, 128))
  b$chunk_shape <- c(32, 32)
  b$remove_codec("blosc")
  x <- matrix(sin(seq_len(256 * 128) / 7) * 1e3, 256, 128)
  x[5, 7] <- NA
  x[200, 100] <- -Inf
  create_zarr(root)$add_array("/", "x", b)$write(x)
  keys <- http_files_below(file.path(root, "x"))
  n_chunks <- sum(startsWith(keys, "c/"))
  expect_identical(n_chunks, 32L)

  # Each answer waits 20 ms, so requests made together overlap at the
  # server: 32 one after another would take >= 640 ms.
  server <- local_http_server(root, delay_ms = 20)
  http_reset(server)
  arr <- open_zarr(paste0(server$url, "/x"))[["/"]]
  got <- arr[]
  st <- http_stats(server)

  expect_identical(got, x)
  expect_gt(st$max_in_flight, 1)
  expect_lte(st$max_in_flight, 16)
  # Every chunk once, whole (no ranges), plus the metadata.
  expect_identical(as.integer(st$ranges), 0L)
  expect_gte(st$requests, n_chunks)
  expect_lte(st$requests, n_chunks + 2)
  expect_equal(st$bytes, 256 * 128 * 8 + (st$requests - n_chunks) *
                 file.size(file.path(root, "x", "zarr.json")))
})

test_that("a read that makes R collect first has its requests out before, each sent once", {
  # A large result may make the package run R's collector before it
  # allocates (pages.rs: every 384 MiB of results); over a store with
  # latency the read's requests go out first and the collection runs
  # while they wait. Counted by the package (`fetched_first`), and each
  # chunk or shard is still requested once with the values exact.
  skip_if_not(Sys.info()[["sysname"]] == "Linux")
  root <- withr::local_tempdir()
  x <- matrix(round(sin(seq_len(2048 * 2048) / 11) * 1e4, 2), 2048, 2048)
  x[3, 5] <- NA
  chunked <- define_array("float64", c(2048, 2048))
  chunked$chunk_shape <- c(512, 512)
  sharded <- define_array("float64", c(2048, 2048))
  sharded$chunk_shape <- c(1024, 1024)
  sharded$add_codec("sharding_indexed", list(chunk_shape = c(512, 512)))
  z <- create_zarr(root)
  z$add_array("/", "chunked", chunked)$write(x)
  z$add_array("/", "sharded", sharded)$write(x)
  server <- local_http_server(root, delay_ms = 5)
  counts <- function() unlist(zarr:::rz_result_blocks())[c("collections", "fetched_first")]
  for (name in c("chunked", "sharded")) {
    arr <- open_zarr(paste0(server$url, "/", name))[["/"]]
    stored <- if (name == "chunked") 16L else 4L
    early <- 0
    # 32 MiB a read, each kept, so that R's own collections do not free
    # them first: the 13th passes the 384 MiB allowed between collections.
    kept <- vector("list", 13)
    for (i in seq_along(kept)) {
      b0 <- counts()
      http_reset(server)
      kept[[i]] <- arr[]
      st <- http_stats(server)
      d <- counts() - b0
      expect_identical(kept[[i]], x)
      expect_identical(as.integer(st$requests), stored)
      # Every collection of a read over HTTP came after its requests.
      expect_identical(d[["fetched_first"]], d[["collections"]])
      early <- early + d[["fetched_first"]]
    }
    expect_gte(early, 1)
    rm(kept)
    gc()
  }
})
