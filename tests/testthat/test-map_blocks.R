# zarr_map_blocks() and zarr_reduce_blocks() on future's plans: sequential,
# multisession and a PSOCK cluster on localhost (2 workers each, fresh R
# processes that find the package through R_LIBS), on a local store and on
# S3 (moto, helper-s3.R).

# Set a plan for the calling test; the previous one (and so sequential,
# which stops the workers) comes back when the test ends.
local_plan <- function(..., env = parent.frame()) {
  old <- future::plan(...)
  withr::defer(future::plan(old), envir = env)
}

# A 20 x 30 float64 array `x` (chunks 5 x 10: 12 blocks) holding
# 1..600, and an empty `out` of its shape, in a store at `location`.
local_blocks_store <- function(location, out_type = "float64", chunk = c(5, 10)) {
  z <- create_zarr(location)
  def <- define_array("float64", c(20, 30))
  def$chunk_shape <- chunk
  x <- z$add_array("/", "x", def)
  x$write(array(as.numeric(1:600), c(20, 30)))
  def_out <- define_array(out_type, c(20, 30))
  def_out$chunk_shape <- chunk
  out <- z$add_array("/", "out", def_out)
  list(z = z, x = x, out = out, value = array(as.numeric(1:600), c(20, 30)))
}

# The first elements of the 12 blocks of a 20 x 30 array in chunks of 5 x 10,
# in the order of the blocks (column-major over the chunk grid).
block_firsts <- as.numeric(outer(seq(1, 16, 5), seq(0, 20, 10) * 20, `+`))

test_that("on plan(sequential), blocks are chunks and results are exact, written or returned", {
  skip_if_not_installed("future.apply")
  local_plan(future::sequential)
  s <- local_blocks_store(file.path(withr::local_tempdir(), "s.zarr"))
  k <- 3
  expect_identical(zarr_map_blocks(s$x, function(b, add) b * k + add, s$out, add = 1), s$out)
  expect_identical(s$out[], s$value * 3 + 1)

  firsts <- zarr_map_blocks(s$x, function(b) b[1])
  expect_identical(unlist(firsts), block_firsts)
  expect_identical(zarr_map_blocks(s$x, dim), rep(list(c(5L, 10L)), 12))

  expect_identical(zarr_reduce_blocks(s$x, sum, `+`), sum(s$value))
  expect_identical(zarr_reduce_blocks(s$x, max, max), 600)
  counts <- zarr_reduce_blocks(s$x, function(b) c(sum(b), length(b)), `+`)
  expect_identical(counts, c(sum(s$value), 600))
  expect_identical(zarr_reduce_blocks(s$x, function(b) 0, `+`, blocks = list(), init = 7), 7)
})

test_that("blocks can be given: large regions of out, partial edge chunks, 1-d arrays", {
  z <- create_zarr()
  def <- define_array("int32", c(23, 7))
  def$chunk_shape <- c(5, 3)
  x <- z$add_array("/", "x", def)
  v <- matrix(1:161, 23, 7)
  x$write(v)
  y <- z$add_array("/", "y", def)
  regions <- y$chunk_regions(2)
  zarr_map_blocks(x, function(b) -b, y, blocks = regions)
  expect_identical(y[], -v)
  # Edge chunks are partial: the default blocks follow them.
  expect_identical(lengths(zarr_map_blocks(x, function(b) b)), as.integer(outer(c(5, 5, 5, 5, 3), c(3, 3, 1))))
  ranges <- zarr_map_blocks(x, function(b) range(b), blocks = list(list(NULL, c(2, 3)), list(4:6, 7)))
  expect_identical(ranges, list(c(24L, 69L), c(142L, 144L)))

  # The blocks are chunks of out, whatever the chunks of x.
  d2 <- define_array("int32", c(23, 7))
  d2$chunk_shape <- c(10, 7)
  w <- z$add_array("/", "w", d2)
  expect_identical(length(zarr_map_blocks(x, function(b) b * 3L, w, resume = FALSE)$read()), 161L)
  expect_identical(w[], v * 3L)
  expect_identical(zarr_map_blocks(x, function(b) dim(b), blocks = w$chunk_regions(3)),
                   list(c(10L, 7L), c(10L, 7L), c(3L, 7L)))

  d1 <- define_array("float64", 10)
  d1$chunk_shape <- 4
  a <- z$add_array("/", "a", d1)
  a$write(as.numeric(1:10))
  b <- z$add_array("/", "b", d1)
  zarr_map_blocks(a, rev, b)
  expect_identical(b[], c(4, 3, 2, 1, 8, 7, 6, 5, 10, 9))
})

test_that("a sharded out is written one shard per block", {
  z <- create_zarr()
  x <- z$add_array("/", "x", define_array("int32", c(12, 8)))
  x$write(matrix(1:96, 12, 8))
  def <- define_array("int32", c(12, 8))
  def$chunk_shape <- c(6, 8)
  def$add_codec("sharding_indexed", list(chunk_shape = c(3, 4)))
  y <- z$add_array("/", "y", def)
  zarr_map_blocks(x, function(b) b * 2L, y)
  expect_identical(y[], matrix(1:96, 12, 8) * 2L)
  expect_error(zarr_map_blocks(x, identity, y, blocks = list(list(1:3, 1:4))),
               "does not cover whole chunks", class = "zarr_error_argument")
})

test_that("bad arguments and blocks are classed errors naming them", {
  z <- create_zarr()
  def <- define_array("int32", c(10, 10))
  def$chunk_shape <- c(5, 5)
  x <- z$add_array("/", "x", def)
  y <- z$add_array("/", "y", def)
  other <- z$add_array("/", "other", define_array("int32", c(10, 9)))
  expect_error(zarr_map_blocks(1:3, identity), "`x`", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, "sum"), "`f`", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, other), "array '/other'.*shape 10 x 9", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, resume = TRUE), "`out`", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, y, blocks = list(list(1:5, 2:5))),
               "blocks\\[\\[1\\]\\].*\\[1:5, 2:5\\]", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, y, blocks = list(list(1:5, NULL), list(NULL, 6:10))),
               "`blocks\\[\\[1\\]\\]` and `blocks\\[\\[2\\]\\]` share a chunk", class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, y, blocks = list(list(1:11, NULL))), "1..10",
               class = "zarr_error_argument")
  expect_error(zarr_map_blocks(x, identity, y, blocks = list(list(NULL))), "one entry per dimension",
               class = "zarr_error_argument")
  expect_error(zarr_reduce_blocks(x, sum, "+"), "`combine`", class = "zarr_error_argument")
  e <- expect_error(zarr_map_blocks(x, function(b) b[1:2, ], y), class = "zarr_error_block")
  expect_match(conditionMessage(e), "block 1 of 4 \\(region \\[1:5, 1:5\\]\\).*shape 2 x 5 for a block of shape 5 x 5")
  expect_identical(y[], matrix(NA_integer_, 10, 10))
})

test_that("without future.apply the blocks run here, one after the other, with the same results", {
  z <- create_zarr()
  def <- define_array("float64", c(6, 4))
  def$chunk_shape <- c(3, 2)
  x <- z$add_array("/", "x", def)
  x$write(matrix(as.numeric(1:24), 6, 4))
  y <- z$add_array("/", "y", def)
  # (testthat 3.1.6 cannot mock requireNamespace(): the internal runner is
  # called as zarr_map_blocks() calls it when future.apply is missing.)
  add <- function(b) b + 0.5
  zarr:::map_blocks_run(zarr:::map_blocks_job(x, add, y, NULL, FALSE), add, list(), use_future = FALSE)
  expect_identical(y[], matrix(as.numeric(1:24) + 0.5, 6, 4))
  pid <- function(b) Sys.getpid()
  r <- zarr:::map_blocks_run(zarr:::map_blocks_job(x, pid, NULL, NULL, FALSE), pid, list(), use_future = FALSE)
  expect_identical(unlist(r), rep(Sys.getpid(), 4))
})

test_that("on plan(multisession), blocks run in the workers, which open the store from its path", {
  skip_if_not_installed("future.apply")
  local_plan(future::multisession, workers = 2)
  s <- local_blocks_store(file.path(withr::local_tempdir(), "m.zarr"))
  k <- 2
  zarr_map_blocks(s$x, function(b) b * k, s$out)
  expect_identical(s$out[], s$value * 2)

  r <- zarr_map_blocks(s$x, function(b) list(first = b[1], pid = Sys.getpid(), lib = find.package("zarr")))
  expect_identical(vapply(r, `[[`, 0, "first"), block_firsts)
  pids <- unique(vapply(r, `[[`, 0L, "pid"))
  expect_length(pids, 2L)
  expect_false(Sys.getpid() %in% pids)
  # The workers, fresh R processes, found this installation (through R_LIBS).
  expect_identical(unique(vapply(r, `[[`, "", "lib")), find.package("zarr"))

  # A worker's error comes back here with its block and region.
  e <- expect_error(zarr_map_blocks(s$x, function(b) if (any(b == 287)) stop("no 287 please") else b, s$out),
                    class = "zarr_error_block")
  expect_identical(e$block, 6L)
  expect_identical(e$region, list(c(6, 10), c(11, 20)))
  expect_false(e$pid == Sys.getpid())
  expect_match(conditionMessage(e), "array '/x': block 6 of 12 \\(region \\[6:10, 11:20\\]\\).*no 287 please")
  expect_identical(conditionMessage(e$parent), "no 287 please")

  # A memory store cannot be opened by a worker.
  m <- create_zarr()
  mx <- m$add_array("/", "mx", define_array("int32", 4))
  expect_error(zarr_map_blocks(mx, identity), "array '/mx'.*only in this session", class = "zarr_error_unsupported")

  # Each block has its own random number stream, whatever the plan.
  set.seed(42)
  drawn <- unlist(zarr_map_blocks(s$x, function(b) stats::runif(1)))
  future::plan(future::sequential) # the test's local_plan() puts the first plan back
  set.seed(42)
  expect_identical(unlist(zarr_map_blocks(s$x, function(b) stats::runif(1))), drawn)
  expect_length(unique(drawn), 12L)
})

test_that("on a PSOCK cluster on localhost, blocks run in the workers and write exact results", {
  skip_if_not_installed("future.apply")
  local_plan(future::cluster, workers = 2)
  s <- local_blocks_store(file.path(withr::local_tempdir(), "c.zarr"), out_type = "int32")
  zarr_map_blocks(s$x, function(b) array(Sys.getpid(), dim(b)), s$out)
  pids <- s$out[]
  expect_length(unique(as.vector(pids)), 2L)
  expect_false(Sys.getpid() %in% pids)
  # Each block was written by one worker: one pid per chunk.
  per_block <- vapply(zarr_map_blocks(s$out, function(b) length(unique(as.vector(b)))), identity, 0L)
  expect_identical(per_block, rep(1L, 12))
  expect_identical(zarr_reduce_blocks(s$x, function(b) sum(b * 2), `+`), sum(s$value * 2))
})

test_that("resume = TRUE evaluates only the blocks missing after a failed run", {
  skip_if_not_installed("future.apply")
  local_plan(future::sequential)
  s <- local_blocks_store(file.path(withr::local_tempdir(), "r.zarr"))
  # Block 5 fails: blocks 1-4 are written, 5-12 are not.
  expect_error(zarr_map_blocks(s$x, function(b) if (b[1] == block_firsts[5]) stop("boom") else b + 0.25, s$out),
               "block 5 of 12", class = "zarr_error_block")
  seen <- new.env()
  seen$firsts <- numeric(0)
  zarr_map_blocks(s$x, function(b) {
    seen$firsts <- c(seen$firsts, b[1])
    b + 0.5
  }, s$out, resume = TRUE)
  expect_identical(seen$firsts, block_firsts[5:12])
  want <- s$value + 0.5
  want[1:20, 1:10] <- s$value[1:20, 1:10] + 0.25
  expect_identical(s$out[], want)
  # Nothing left to do: f is not called.
  expect_identical(zarr_map_blocks(s$x, function(b) stop("not again"), s$out, resume = TRUE), s$out)
})

test_that("resume = TRUE finds the stored chunks of v2 arrays, the shards of sharded ones and 0-d arrays", {
  z2 <- create_zarr(withr::local_tempfile(fileext = ".zarr"), zarr_format = 2)
  d <- define_array("int32", c(6, 6))
  d$chunk_shape <- c(3, 3)
  x <- z2$add_array("/", "x", d)
  x$write(matrix(1:36, 6))
  y <- z2$add_array("/", "y", d)
  expect_error(zarr_map_blocks(x, function(b) if (b[1] == 22) stop("no") else b, y), "block 4 of 4",
               class = "zarr_error_block")
  seen <- new.env()
  mark <- function(b) {
    seen$firsts <- c(seen$firsts, b[1])
    b
  }
  zarr_map_blocks(x, mark, y, resume = TRUE)
  expect_identical(seen$firsts, 22L)
  expect_identical(y[], matrix(1:36, 6))

  z <- create_zarr()
  s <- define_array("int32", c(8, 8))
  s$chunk_shape <- c(4, 8)
  s$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
  sx <- z$add_array("/", "sx", s)
  sx$write(matrix(1:64, 8))
  sy <- z$add_array("/", "sy", s)
  zarr_map_blocks(sx, function(b) b, sy, blocks = list(list(5:8, NULL)))
  seen$firsts <- NULL
  zarr_map_blocks(sx, mark, sy, resume = TRUE)
  expect_identical(seen$firsts, 1L)

  a <- z$add_array("/", "a", define_array("float64", integer(0)))
  a$write(5)
  b <- z$add_array("/", "b", define_array("float64", integer(0)))
  expect_identical(zarr_map_blocks(a, function(v) v * 2), list(10))
  zarr_map_blocks(a, function(v) v * 2, b)
  zarr_map_blocks(a, function(v) stop("stored already"), b, resume = TRUE)
  expect_identical(b[], 10)
})

test_that("resume = TRUE after a killed run evaluates the missing blocks in the workers", {
  skip_if_not_installed("future.apply")
  skip_if_not_installed("callr")
  path <- file.path(withr::local_tempdir(), "k.zarr")
  s <- local_blocks_store(path)
  # A child process writes blocks 1-3, then hangs in block 4 until killed.
  child <- callr::r_bg(function(path, stop_at) {
    z <- zarr::open_zarr(path)
    zarr::zarr_map_blocks(z[["/x"]], function(b) {
      if (b[1] == stop_at) Sys.sleep(120)
      b + 0.25
    }, z[["/out"]])
  }, args = list(path = path, stop_at = block_firsts[4]), package = FALSE)
  withr::defer(if (child$is_alive()) child$kill())
  chunk_files <- function() length(list.files(file.path(path, "out", "c"), recursive = TRUE))
  deadline <- Sys.time() + 60
  while (chunk_files() < 3 && child$is_alive() && Sys.time() < deadline) Sys.sleep(0.1)
  expect_identical(chunk_files(), 3L)
  child$kill()

  local_plan(future::multisession, workers = 2)
  zarr_map_blocks(s$x, function(b) b + 0.5, s$out, resume = TRUE)
  want <- s$value + 0.5
  want[1:15, 1:10] <- s$value[1:15, 1:10] + 0.25
  expect_identical(s$out[], want)
})

test_that("progressr reports one step per block, from the workers too", {
  skip_if_not_installed("future.apply")
  skip_if_not_installed("progressr")
  # progressr's default is to report only in interactive sessions.
  withr::local_options(progressr.enable = TRUE)
  s <- local_blocks_store(file.path(withr::local_tempdir(), "p.zarr"))
  steps <- function() {
    n <- 0
    withCallingHandlers(
      zarr_map_blocks(s$x, function(b) b, s$out),
      progression = function(p) if (identical(p$type, "update")) n <<- n + p$amount
    )
    n
  }
  local_plan(future::sequential)
  expect_identical(steps(), 12)
  local_plan(future::multisession, workers = 2)
  expect_identical(steps(), 12)
})

test_that("on S3 (moto), multisession workers open the bucket with the credentials of their environment", {
  skip_if_not_installed("future.apply")
  server <- start_moto()
  withr::local_envvar(moto_env(server))
  bucket <- moto_bucket(server)
  # The workers start after the variables are set, and inherit them.
  local_plan(future::multisession, workers = 2)
  s <- local_blocks_store(sprintf("s3://%s/blocks.zarr", bucket))
  zarr_map_blocks(s$x, function(b) b - 1, s$out)
  expect_identical(open_zarr(sprintf("s3://%s/blocks.zarr", bucket))[["/out"]][], s$value - 1)
  firsts <- zarr_map_blocks(s$x, function(b) c(b[1], Sys.getpid()))
  expect_identical(vapply(firsts, `[`, 0, 1), block_firsts)
  expect_false(Sys.getpid() %in% vapply(firsts, `[`, 0, 2))

  e <- expect_error(zarr_map_blocks(s$x, function(b) stop("bad block"), s$out, blocks = list(list(11:20, NULL))),
                    "bad block", class = "zarr_error_block")
  expect_identical(e$region, list(c(11, 20), c(1, 30)))
  expect_identical(open_zarr(sprintf("s3://%s/blocks.zarr", bucket))[["/out"]][], s$value - 1)

  # Resume: a run that wrote the middle column of chunks, then the rest.
  def <- define_array("float64", c(20, 30))
  def$chunk_shape <- c(5, 10)
  out2 <- s$z$add_array("/", "out2", def)
  zarr_map_blocks(s$x, function(b) -b, out2, blocks = list(list(NULL, 11:20)))
  zarr_map_blocks(s$x, function(b) if (b[1] > 200 && b[1] <= 400) stop("done already") else b * 2, out2,
                  resume = TRUE)
  want <- s$value * 2
  want[, 11:20] <- -s$value[, 11:20]
  expect_identical(out2[], want)
})
