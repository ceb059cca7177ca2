# zarr_objectstore: URLs and options offline; everything else against a moto
# S3 server on 127.0.0.1 (helper-s3.R), started once for this file. GCS has
# no emulator here: its URLs and options are tested offline only.

moto_shared <- new.env(parent = emptyenv())

# The file's moto server, with the environment pointing at it for the
# calling test, and a new bucket.
local_s3 <- function(env = parent.frame()) {
  if (is.null(moto_shared$server)) moto_shared$server <- start_moto(testthat::teardown_env())
  s <- moto_shared$server
  withr::local_envvar(moto_env(s), .local_envir = env)
  list(server = s, bucket = moto_bucket(s))
}

# ---------------------------------------------------------------- offline

test_that("URLs of S3, GCS and Azure name their bucket and prefix without any request", {
  withr::local_envvar(AWS_ACCESS_KEY_ID = NA, AWS_ENDPOINT_URL = NA)
  s <- zarr_objectstore$new("s3://bkt/data/x.zarr/", options = list(region = "eu-west-1"))
  expect_identical(c(s$bucket, s$prefix, s$uri), c("bkt", "data/x.zarr", "s3://bkt/data/x.zarr"))
  expect_identical(s$friendlyClassName, "S3 store")
  expect_output(print(s), "<S3 store> S3 store at s3://bkt/data/x.zarr")

  v <- zarr_objectstore$new("https://bkt2.s3.us-west-2.amazonaws.com/y.zarr")
  expect_identical(c(v$bucket, v$prefix), c("bkt2", "y.zarr"))

  g <- zarr_objectstore$new("gs://gbkt/p/q.zarr", anonymous = TRUE)
  expect_identical(c(g$friendlyClassName, g$bucket, g$prefix), c("GCS store", "gbkt", "p/q.zarr"))

  a <- zarr_objectstore$new("abfs://cont@acct.dfs.core.windows.net/r.zarr", anonymous = TRUE)
  expect_identical(c(a$friendlyClassName, a$bucket, a$prefix, a$uri),
                   c("Azure store", "cont", "r.zarr", "az://cont/r.zarr"))
  az <- zarr_objectstore$new("az://cont/r.zarr", options = list(account_name = "acct"), anonymous = TRUE)
  expect_identical(az$uri, "az://cont/r.zarr")
})

test_that("bad URLs and options are classed errors", {
  expect_error(zarr_objectstore$new("https://example.org/a.zarr"), class = "zarr_error_argument")
  expect_error(zarr_objectstore$new("s3://bkt/a", options = list(no_such_option = 1)),
               "no_such_option", class = "zarr_error_unsupported")
  expect_error(zarr_objectstore$new("gs://bkt/a", options = list(max_retries = "many")),
               "max_retries", class = "zarr_error_unsupported")
  expect_error(zarr_objectstore$new("s3://bkt/a", options = list(1)), class = "zarr_error_argument")
})

test_that("zarr_s3store takes R-CF's arguments and a profile of the shared credentials file", {
  home <- withr::local_tempdir()
  dir.create(file.path(home, ".aws"))
  writeLines(c("[default]", "aws_access_key_id = AKDEF", "aws_secret_access_key = SKDEF",
               "[dev]", "aws_access_key_id = AKDEV", "aws_secret_access_key = SKDEV"),
             file.path(home, ".aws", "credentials"))
  writeLines(c("[profile dev]", "region = eu-central-1"), file.path(home, ".aws", "config"))
  withr::local_envvar(AWS_SHARED_CREDENTIALS_FILE = file.path(home, ".aws", "credentials"),
                      AWS_CONFIG_FILE = file.path(home, ".aws", "config"),
                      AWS_ACCESS_KEY_ID = NA, AWS_REGION = NA, AWS_DEFAULT_REGION = NA,
                      AWS_ENDPOINT_URL = NA, AWS_PROFILE = NA)
  # R-CF/zarr's argument lists, in its order
  rcf <- c("bucket", "prefix", "region", "profile", "access_key", "secret_key", "session_token",
           "endpoint", "path_style", "anonymous")
  expect_identical(names(formals(zarr_s3store$public_methods$initialize)), c(rcf, "read_only"))
  expect_identical(names(formals(s3_list_dir)), rcf)
  s <- zarr_s3store$new("bkt", "/data/cube.zarr/", region = "us-east-1")
  expect_s3_class(s, "zarr_objectstore")
  expect_identical(c(s$uri, s$prefix), c("s3://bkt/data/cube.zarr", "data/cube.zarr"))

  withr::local_envvar(AWS_PROFILE = "dev")
  expect_identical(zarr:::aws_profile_options(character(0), NULL),
                   list(access_key_id = "AKDEV", secret_access_key = "SKDEV", region = "eu-central-1"))
  args <- zarr:::s3_args_options("bkt", "", NULL, "default", NULL, NULL, NULL,
                                 "http://127.0.0.1:9", NULL, NULL)
  expect_identical(args$options[c("endpoint", "allow_http", "virtual_hosted_style_request",
                                  "access_key_id", "secret_access_key")],
                   list(endpoint = "http://127.0.0.1:9", allow_http = "true",
                        virtual_hosted_style_request = "false", access_key_id = "AKDEF",
                        secret_access_key = "SKDEF"))
  expect_false(args$anonymous)
  expect_error(zarr_s3store$new("bkt", profile = "nope"), "nope", class = "zarr_error_argument")
})

# ---------------------------------------------------------------- moto

test_that("an S3 store sets, gets, ranges, lists and erases keys", {
  s3 <- local_s3()
  s <- zarr_objectstore$new(sprintf("s3://%s/root", s3$bucket))
  expect_null(s$get("a/b"))
  expect_false(s$exists("a/b"))
  expect_identical(s$getsize("a/b"), NA_real_)
  s$set("a/b", as.raw(0:9))
  s$set("a/c/d", as.raw(1:3))
  s$set("ab", as.raw(7))
  s$set("z", raw(0))
  expect_identical(s$get("a/b"), as.raw(0:9))
  expect_identical(s$get("a/b", byte_range = 7), as.raw(7:9))
  expect_identical(s$get("a/b", byte_range = -3), as.raw(7:9))
  expect_identical(s$get("a/b", byte_range = c(2, 5)), as.raw(2:4))
  expect_identical(s$get("z"), raw(0))
  expect_true(s$exists("a/b"))
  expect_identical(s$getsize("a/b"), 10)
  expect_identical(s$list(), c("a/b", "a/c/d", "ab", "z"))
  expect_identical(s$list_prefix("a/"), c("a/b", "a/c/d"))
  expect_identical(s$list_dir(""), c("ab", "z", "a/"))
  expect_identical(s$list_dir("a"), c("b", "c/"))
  # Keys live below the prefix in the bucket.
  whole <- zarr_objectstore$new(sprintf("s3://%s", s3$bucket))
  expect_identical(whole$list(), c("root/a/b", "root/a/c/d", "root/ab", "root/z"))
  expect_identical(s3_list_dir(s3$bucket, "root"), c("root/ab", "root/z", "root/a/"))
  s$erase("a/b")
  s$erase("never/there")
  expect_null(s$get("a/b"))
  s$erase_prefix("a/")
  expect_identical(s$list(), c("ab", "z"))
  expect_error(s$get("../x"), class = "zarr_error_invalid_key")
})

test_that("a plain-http endpoint is used only when AWS_ALLOW_HTTP or allow_http says so", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/p", s3$bucket)
  zarr_objectstore$new(url)$set("k", as.raw(1:3))
  withr::local_envvar(AWS_ALLOW_HTTP = NA)
  err <- tryCatch(zarr_objectstore$new(url, options = list(max_retries = 0))$get("k"), error = identity)
  expect_s3_class(err, "zarr_error")
  expect_match(conditionMessage(err), sprintf("bucket '%s', key 'p/k'", s3$bucket), fixed = TRUE)
  expect_match(conditionMessage(err), "http", ignore.case = TRUE)
  expect_identical(zarr_objectstore$new(url, options = list(allow_http = TRUE))$get("k"), as.raw(1:3))
  withr::local_envvar(AWS_ALLOW_HTTP = "true")
  expect_identical(zarr_objectstore$new(url)$get("k"), as.raw(1:3))
})

test_that("a read-only S3 store refuses writes and a range past the end is an error", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/ro", s3$bucket)
  zarr_objectstore$new(url)$set("k", as.raw(1:4))
  ro <- zarr_objectstore$new(url, read_only = TRUE)
  expect_identical(ro$get("k"), as.raw(1:4))
  expect_error(ro$set("k", as.raw(1)), "s3://", class = "zarr_error_read_only")
  expect_error(ro$get("k", byte_range = 9), class = "zarr_error_corrupt_chunk")
})

# Write `x` as array "/a" with `def` to a new store at `url`, reopen and read.
roundtrip_s3 <- function(url, x, def, zarr_format = 3L, consolidate = FALSE) {
  z <- create_zarr(url, zarr_format = zarr_format)
  z$add_group("/", "g")$set_attribute("site", "moto")
  arr <- z$add_array("/g", "a", def)
  arr$write(x)
  if (consolidate) z$consolidate()
  z2 <- open_zarr(url, read_only = TRUE)
  list(z = z2, value = z2[["/g/a"]]$read(), site = z2[["/g"]]$attributes$site)
}

test_that("v3, v2, sharded, string and consolidated stores round-trip through S3", {
  s3 <- local_s3()
  base <- sprintf("s3://%s/", s3$bucket)
  x <- matrix(as.numeric(1:600), 20, 30)
  x[3, 4] <- NA

  def <- define_array("float64", dim(x))
  def$chunk_shape <- c(7, 8)
  r <- roundtrip_s3(paste0(base, "v3.zarr"), x, def)
  expect_identical(r$value, x)
  expect_identical(r$site, "moto")
  expect_s3_class(r$z$store, "zarr_objectstore")

  def <- define_array("float64", dim(x))
  def$chunk_shape <- c(7, 8)
  r <- roundtrip_s3(paste0(base, "v2.zarr"), x, def, zarr_format = 2L)
  expect_identical(r$value, x)
  expect_identical(r$z$version, 2L)
  expect_true(zarr_objectstore$new(paste0(base, "v2.zarr"))$exists("g/a/.zarray"))

  xi <- matrix(1:600, 20, 30)
  b <- define_array("int32", dim(xi))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5)))
  r <- roundtrip_s3(paste0(base, "sharded.zarr"), xi, b)
  expect_identical(r$value, xi)
  # A region inside one shard reads through byte ranges of it.
  expect_identical(r$z[["/g/a"]][3:9, 2:4], xi[3:9, 2:4])
  expect_identical(zarr_objectstore$new(paste0(base, "sharded.zarr"))$list_prefix("g/a/c/"),
                   c("g/a/c/0/0", "g/a/c/0/1", "g/a/c/1/0", "g/a/c/1/1"))

  xs <- matrix(c("a", NA, "", "\u00e9t\u00e9", "zarr", "s3"), 2, 3)
  r <- roundtrip_s3(paste0(base, "strings.zarr"), xs, define_array("string", dim(xs)))
  expect_identical(r$value, xs)

  def <- define_array("float64", dim(x))
  r <- roundtrip_s3(paste0(base, "cons.zarr"), x, def, consolidate = TRUE)
  expect_identical(r$value, x)
  root <- jsonlite::fromJSON(rawToChar(zarr_objectstore$new(paste0(base, "cons.zarr"))$get("zarr.json")),
                             simplifyVector = FALSE)
  expect_identical(root$consolidated_metadata$kind, "inline")
  expect_identical(sort(names(root$consolidated_metadata$metadata)), c("g", "g/a"))
})

test_that("as_zarr() writes to an S3 URL and create_zarr() refuses an existing store", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/m.zarr", s3$bucket)
  x <- array(1:60, c(3, 4, 5))
  as_zarr(x, location = url)
  expect_identical(open_zarr(url)[["/"]][], x)
  expect_error(create_zarr(url), "already holds", class = "zarr_error_argument")
  s <- zarr_s3store$new(s3$bucket, "m.zarr", endpoint = s3$server$endpoint)
  expect_identical(open_zarr(s)[["/"]][2, , ], x[2, , ])
})

test_that("a missing store, key or bucket is not found; a refused request names bucket and key", {
  s3 <- local_s3()
  expect_error(open_zarr(sprintf("s3://%s/none.zarr", s3$bucket)), class = "zarr_error_not_found")
  expect_null(zarr_objectstore$new(sprintf("s3://%s", s3$bucket))$get("nothing"))
  err <- tryCatch(zarr_objectstore$new("s3://no-such-bucket-zarr/p")$set("k", as.raw(1)),
                  error = identity)
  expect_s3_class(err, "zarr_error_not_found")
  expect_match(conditionMessage(err), "bucket 'no-such-bucket-zarr', key 'p/k'", fixed = TRUE)

  # A server that knows no user refuses every signed request with 403.
  locked <- start_moto(auth = TRUE)
  withr::local_envvar(AWS_ENDPOINT_URL = locked$endpoint, AWS_ACCESS_KEY_ID = "wrong",
                      AWS_SECRET_ACCESS_KEY = "wrong")
  s <- zarr_objectstore$new("s3://locked/data.zarr", options = list(max_retries = 0))
  err <- tryCatch(s$get("zarr.json"), error = identity)
  expect_s3_class(err, "zarr_error_permission_denied")
  expect_match(conditionMessage(err), "bucket 'locked', key 'data.zarr/zarr.json'", fixed = TRUE)
  expect_error(s$set("c/0", as.raw(1)), "key 'data.zarr/c/0'", class = "zarr_error_permission_denied")
  expect_error(open_zarr("s3://locked/data.zarr"), class = "zarr_error_permission_denied")
})

test_that("a kerchunk reference set in S3 reads targets in S3", {
  s3 <- local_s3()
  blob <- c(writeBin(c(1:6), raw(), size = 4, endian = "little"), writeBin(7:12, raw(), size = 4, endian = "little"))
  zarr_objectstore$new(sprintf("s3://%s/raw", s3$bucket))$set("blob.bin", c(as.raw(0:3), blob))
  target <- sprintf("s3://%s/raw/blob.bin", s3$bucket)
  refs <- list(version = 1L, refs = list(
    .zgroup = '{"zarr_format": 2}',
    `x/.zarray` = paste0('{"zarr_format": 2, "shape": [4, 3], "chunks": [2, 3], "dtype": "<i4", ',
                         '"compressor": null, "fill_value": null, "filters": null, "order": "C"}'),
    `x/0.0` = list(target, 4L, 24L),
    `x/1.0` = list(target, 28L, 24L)
  ))
  path <- withr::local_tempfile(fileext = ".json")
  jsonlite::write_json(refs, path, auto_unbox = TRUE)
  z <- open_zarr(path)
  expect_identical(z[["/x"]][], matrix(1:12, 4, 3, byrow = TRUE))

  # The reference file itself in the bucket.
  refs_store <- zarr_objectstore$new(sprintf("s3://%s/refs", s3$bucket))
  refs_store$set("set.json", readBin(path, "raw", file.size(path)))
  z <- open_zarr(sprintf("s3://%s/refs/set.json", s3$bucket))
  expect_s3_class(z$store, "zarr_refstore")
  expect_identical(z[["/x"]][2:4, ], matrix(4:12, 3, 3, byrow = TRUE))
  expect_error(open_zarr(sprintf("s3://%s/refs/none.json", s3$bucket)), "none.json",
               class = "zarr_error_not_found")
})

# Every file below the folder `dir` put into the object store `store` under
# `prefix`, by its relative path.
upload_folder <- function(dir, store, prefix) {
  files <- list.files(dir, recursive = TRUE, all.files = TRUE, no.. = TRUE)
  for (f in files) {
    store$set(paste0(prefix, "/", f), readBin(file.path(dir, f), "raw", file.size(file.path(dir, f))))
  }
  files
}

# Each array of the reference sets `a` and `b` (zarr objects) read whole;
# the two must hold the same arrays, values and dimension names.
expect_same_arrays <- function(a, b) {
  withr::local_options(zarr.cf_decode = FALSE)
  expect_setequal(a$arrays, b$arrays)
  for (name in a$arrays) expect_identical(as.array(a[[name]]), as.array(b[[name]]), label = name)
}

test_that("a kerchunk Parquet reference set in S3 reads targets in S3 lazily, as its local reading does", {
  d <- kerchunk_fixture()
  py <- python_kerchunk()
  s3 <- local_s3()
  bucket <- s3$bucket
  store <- zarr_objectstore$new(sprintf("s3://%s", bucket))
  store$set("data/data.nc", readBin(file.path(d, "data.nc"), "raw", file.size(file.path(d, "data.nc"))))
  # kerchunk's references of data.nc, their targets moved to the bucket,
  # written as Parquet (10 references per file) by kerchunk.df
  tmp <- withr::local_tempdir()
  parq <- file.path(tmp, "s3.parq")
  retarget <- paste(
    "import sys, json, kerchunk.df",
    "refs = json.load(open(sys.argv[1]))",
    "[v.__setitem__(0, sys.argv[3]) for v in refs['refs'].values() if isinstance(v, list)]",
    "kerchunk.df.refs_to_dataframe(refs, sys.argv[2], record_size=10)", sep = "\n")
  res <- run_python_command(py, c("-c", retarget, file.path(d, "refs_rel.json"), parq,
                                  sprintf("s3://%s/data/data.nc", bucket)))
  expect_identical(res$status, 0L, label = res$output)
  files <- upload_folder(parq, store, "refs/s3.parq")
  parq_files <- grep("refs[.][0-9]+[.]parq$", files, value = TRUE)
  expect_gt(length(parq_files), 5L)

  local <- open_zarr(parq)
  remote <- open_zarr(sprintf("s3://%s/refs/s3.parq", bucket))
  expect_s3_class(remote$store, "zarr_refstore")
  expect_match(format(remote$store$location), "s3.parq", fixed = TRUE)
  expect_same_arrays(remote, local)
  withr::local_options(zarr.cf_decode = FALSE)
  temp <- kerchunk_expected(d, "data.nc", "temp")
  expect_identical(unname(as.array(remote[["/temp"]])), temp)
  # zarr_refstore takes the folder's URL with a final "/" and any name
  expect_identical(zarr_refstore$new(sprintf("s3://%s/refs/s3.parq/", bucket))$get("temp/1.2.1"),
                   local$store$get("temp/1.2.1"))

  # relative targets ("data.nc") start beside the folder in the bucket
  upload_folder(file.path(d, "refs_pa.parq"), store, "data/rel.parq")
  expect_same_arrays(open_zarr(sprintf("s3://%s/data/rel.parq", bucket)), open_zarr(file.path(d, "refs_pa.parq")))

  # Lazy: opening reads .zmetadata; one element of temp fetches its
  # reference file and one range of data.nc, not the other files.
  proxy <- start_s3_proxy(s3$server)
  withr::local_envvar(AWS_ENDPOINT_URL = proxy$endpoint)
  z <- open_zarr(sprintf("s3://%s/refs/s3.parq", bucket))
  expect_identical(s3_proxy_stats(proxy)$requests, 1L)
  expect_identical(z[["/temp"]][6, 10, 12], temp[6, 10, 12])
  st <- s3_proxy_stats(proxy)
  expect_lte(st$by_method$GET, 4L)
  expect_lt(st$by_method$GET, length(parq_files))

  expect_error(open_zarr(sprintf("s3://%s/refs/none.parq", bucket)), "none.parq", class = "zarr_error_not_found")
})

# ---------------------------------------------------------------- many writers

test_that("four R processes writing disjoint chunk regions of one array lose nothing, on S3 and locally", {
  skip_if_not_installed("callr")
  s3 <- local_s3()
  expected <- outer(1:40, 1:64, function(i, j) as.integer(i * 1000L + j))
  for (url in c(sprintf("s3://%s/many.zarr", s3$bucket), file.path(withr::local_tempdir(), "many.zarr"))) {
    r <- write_from_four_processes(url)
    expect_identical(r$ok, rep(TRUE, 4), info = url)
    expect_identical(r$value, expected, info = url)
    # The regions split the 8 chunk columns 2 by 2 and cover every row.
    expect_identical(lapply(r$regions, `[[`, 2L), list(1:16, 17:32, 33:48, 49:64))
    expect_identical(unique(lapply(r$regions, `[[`, 1L)), list(1:40))
  }
})

test_that("chunk_regions() follows shards and the dimension with the most chunks", {
  z <- create_zarr()
  b <- define_array("int32", c(30, 20))
  b$chunk_shape <- c(10, 10)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5)))
  a <- z$add_array("/", "s", b)
  expect_identical(a$chunk_regions(2), list(list(1:10, 1:20), list(11:30, 1:20)))
  expect_identical(a$chunk_regions(10), list(list(1:10, 1:20), list(11:20, 1:20), list(21:30, 1:20)))
  expect_error(a$chunk_regions(0), class = "zarr_error_argument")
})

test_that("two processes updating the attributes of one array: one wins, the other gets a conflict", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/race.zarr", s3$bucket)
  z <- create_zarr(url)
  z$add_array("/", "a", define_array("int32", 4))
  first <- open_zarr(url)[["/a"]]
  second <- open_zarr(url)[["/a"]]
  first$set_attribute("writer", "first")
  expect_error(second$set_attribute("writer", "second"), "race.zarr/a/zarr.json",
               class = "zarr_error_conflict")
  expect_identical(open_zarr(url)[["/a"]]$attributes$writer, "first")
  # The winner knows its own new version and can write again.
  first$set_attribute("more", 1L)
  # Besides the _FillValue that add_array() wrote (?cf_decoding).
  got <- open_zarr(url)[["/a"]]$attributes
  expect_identical(got[setdiff(names(got), "_FillValue")], list(writer = "first", more = 1L))
})

test_that("a writable open reads each metadata document once, with its version, and a read fetches only chunks", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/once.zarr", s3$bucket)
  d <- define_array("float64", c(8, 8))
  d$chunk_shape <- c(4, 4)
  x <- matrix(as.numeric(1:64), 8, 8)
  create_zarr(url)$add_array("/", "x", d)$write(x)
  proxy <- start_s3_proxy(s3$server)
  withr::local_envvar(AWS_ENDPOINT_URL = proxy$endpoint)
  a <- open_zarr(url)[["/x"]]
  # The root's zarr.json and the array's, one GET each.
  expect_identical(s3_proxy_stats(proxy)$requests, 2L)
  expect_identical(a[1:4, 1:4], x[1:4, 1:4])
  expect_identical(s3_proxy_stats(proxy)$requests, 3L)
  expect_identical(a[], x)
  expect_identical(s3_proxy_stats(proxy)$requests, 7L)
  # The version read with the document guards the update: another writer
  # in between makes it a conflict.
  open_zarr(url)[["/x"]]$set_attribute("by", "other")
  expect_error(a$set_attribute("by", "me"), "once.zarr/x/zarr.json", class = "zarr_error_conflict")
  expect_identical(open_zarr(url)[["/x"]]$attributes$by, "other")
})

# ---------------------------------------------------------------- large values and failures

test_that("a chunk over 64 MiB is uploaded in parts and reads back whole", {
  s3 <- local_s3()
  url <- sprintf("s3://%s/big.zarr", s3$bucket)
  n <- 9e6 # 72 MB of float64, past the 64 MiB multipart threshold
  def <- define_array("float64", n)
  def$chunk_shape <- n
  def$remove_codec("blosc") # the chunk is stored as its 72 MB, not compressed
  x <- as.numeric(seq_len(n)) * 0.5
  create_zarr(url)$add_array("/", "a", def)$write(x)
  s <- zarr_objectstore$new(url)
  # S3 gives a multipart object the ETag "<md5 of the parts' md5s>-<parts>".
  tag <- zarr:::rz_store_get_versioned(s$engine_handle(), "a/c/0")$tag
  expect_match(tag, "-[0-9]+\"?$")
  expect_identical(open_zarr(url)[["/a"]][], x)
  # A small value is one plain PUT: its ETag is a plain MD5.
  s$set("small", as.raw(1:3))
  expect_match(zarr:::rz_store_get_versioned(s$engine_handle(), "small")$tag,
               "^\"?[0-9a-f]{32}\"?$")
})

test_that("requests refused with 503 are retried and the read succeeds; without retries it is an I/O error", {
  s3 <- local_s3()
  x <- matrix(1:100, 10, 10)
  as_zarr(x, location = sprintf("s3://%s/retry.zarr", s3$bucket))
  proxy <- start_s3_proxy(s3$server, fail_first = 2L)
  withr::local_envvar(AWS_ENDPOINT_URL = proxy$endpoint)
  expect_identical(open_zarr(sprintf("s3://%s/retry.zarr", s3$bucket))[["/"]][], x)
  stats <- s3_proxy_stats(proxy)
  expect_identical(stats$failed, 2L)
  expect_gt(stats$requests, 2L)

  flaky <- start_s3_proxy(s3$server, fail_first = 1L)
  withr::local_envvar(AWS_ENDPOINT_URL = flaky$endpoint)
  s <- zarr_objectstore$new(sprintf("s3://%s/retry.zarr", s3$bucket), options = list(max_retries = 0))
  err <- tryCatch(s$get("zarr.json"), error = identity)
  expect_s3_class(err, "zarr_error_io")
  expect_match(conditionMessage(err), sprintf("bucket '%s', key 'retry.zarr/zarr.json'", s3$bucket), fixed = TRUE)
  # The failure was the injected one; the next request goes through.
  expect_identical(s3_proxy_stats(flaky)$failed, 1L)
  expect_true(s$exists("zarr.json"))
})
