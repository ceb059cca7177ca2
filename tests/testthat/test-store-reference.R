# Reference stores ("virtual Zarr", R/store-reference.R and
# src/rust/src/store/reference*.rs): fsspec reference sets as kerchunk
# writes them. The real inputs come from helper-kerchunk.R: netCDF4 and h5py
# write files, kerchunk and fsspec write JSON and Parquet references, and
# every variable read through the package must equal what netCDF4 (or h5py)
# reads, exactly. Reference sets with templates and generators, and broken
# ones, are written here in R.

# The variables of `file` in the fixture, as array paths ("/t2m").
kerchunk_arrays <- function(dir, file) paste0("/", names(kerchunk_manifest(dir)[[file]]))

# Read every variable of `file` through the reference set `refs` (a path
# or URL) and compare it with Python's values.
expect_reads_fixture <- function(refs, dir, file = "data.nc") {
  # the stored values, as the byte-exact comparison needs (a NetCDF time
  # variable would read as POSIXct)
  withr::local_options(zarr.cf_decode = FALSE)
  z <- open_zarr(refs)
  expect_s3_class(z$store, "zarr_refstore")
  manifest <- kerchunk_manifest(dir)[[file]]
  expect_setequal(z$arrays, kerchunk_arrays(dir, file))
  for (name in names(manifest)) {
    got <- as.array(z[[paste0("/", name)]])
    label <- sprintf("%s of %s", name, basename(refs))
    expect_identical(unname(got), kerchunk_expected(dir, file, name), label = label)
    if (length(manifest[[name]]$dims)) {
      expect_identical(names(dimnames(got)), unlist(manifest[[name]]$dims), label = label)
    }
  }
  invisible(z)
}

# A reference set (an R list) written as JSON to a new file in `dir`.
write_refs <- function(refs, dir, name = "refs.json") {
  path <- file.path(dir, name)
  writeLines(jsonlite::toJSON(refs, auto_unbox = TRUE, digits = NA, null = "null"), path)
  path
}

local_ref_dir <- function(env = parent.frame()) {
  d <- tempfile("refs-")
  dir.create(d)
  withr::defer(unlink(d, recursive = TRUE), envir = env)
  normalizePath(d, winslash = "/")
}

# A Zarr v2 array document: uint8, `n` elements in chunks of `chunk`, no
# compressor, fill value 0.
v2_uint8 <- function(n, chunk) {
  list(shape = list(n), chunks = list(chunk), dtype = "|u1", compressor = NULL, fill_value = 0,
       order = "C", filters = NULL, zarr_format = 2)
}

# ---- real inputs: netCDF4 / h5py, kerchunk, fsspec ---------------------------

test_that("kerchunk JSON references of a NetCDF4 file read exactly (absolute, relative, file:// targets)", {
  d <- kerchunk_fixture()
  # absolute paths, small chunks inline as base64
  z <- expect_reads_fixture(file.path(d, "refs_abs.json"), d)
  refs <- jsonlite::fromJSON(file.path(d, "refs_abs.json"), simplifyVector = FALSE)$refs
  targets <- unique(vapply(Filter(is.list, refs), function(r) r[[1]], ""))
  expect_identical(targets, file.path(d, "data.nc"))
  expect_true(any(startsWith(unlist(Filter(is.character, refs)), "base64:")))
  # the codecs kerchunk emits for netCDF4's zlib and the attributes it copies
  expect_match(rawToChar(z$store$get("t2m/.zarray")), '"zlib"', fixed = TRUE)
  expect_identical(z[["/t2m"]]$attributes$units, "K")
  expect_identical(z[["/time"]]$attributes$units, "hours since 2000-01-01")
  expect_identical(z$root$attributes$title, "kerchunk fixture")
  expect_identical(z[["/crs"]]$attributes$grid_mapping_name, "latitude_longitude")
  expect_identical(z[["/crs"]][], 4326L)
  expect_s3_class(z[["/ids"]][], "integer64")
  # "data.nc", relative to the reference file's folder; no inline chunks
  expect_reads_fixture(file.path(d, "refs_rel.json"), d)
  refs <- jsonlite::fromJSON(file.path(d, "refs_rel.json"), simplifyVector = FALSE)$refs
  expect_identical(unique(vapply(Filter(is.list, refs), function(r) r[[1]], "")), "data.nc")
  # file:// URLs, and the reference set itself given as a file:// URL
  expect_reads_fixture(file.path(d, "refs_url.json"), d)
  expect_reads_fixture(paste0("file://", file.path(d, "refs_url.json")), d)
})

test_that("kerchunk JSON references of an h5py HDF5 file (groups, big-endian, gzip) read exactly", {
  d <- kerchunk_fixture()
  z <- expect_reads_fixture(file.path(d, "refs_h5.json"), d, "data.h5")
  expect_setequal(z$groups, c("/", "/grp"))
  expect_identical(z[["/grp"]]$attributes$note, "h5py")
  expect_match(rawToChar(z$store$get("grp/be/.zarray")), '">f8"', fixed = TRUE)
  # h5py's fill value 0 is in the data: read as NA, like any fill value
  expect_identical(sum(is.na(z[["/grp/be"]][])), 1L)
})

test_that("fsspec Parquet references (fastparquet and pyarrow) read the same values as the JSON ones", {
  d <- kerchunk_fixture()
  # kerchunk.df.refs_to_dataframe of the absolute references, fastparquet,
  # 10 references per file: temp's 27 chunks span refs.0..2.parq
  expect_true(file.exists(file.path(d, "refs_fp.parq", "temp", "refs.2.parq")))
  zp <- expect_reads_fixture(file.path(d, "refs_fp.parq"), d)
  # LazyReferenceMapper with pyarrow (a null 'raw' column) of the relative ones
  expect_reads_fixture(file.path(d, "refs_pa.parq"), d)
  zj <- open_zarr(file.path(d, "refs_abs.json"))
  for (a in kerchunk_arrays(d, "data.nc")) {
    expect_identical(zp[[a]][], zj[[a]][], label = a)
  }
  # partial reads touch a subset of the chunks
  expect_identical(zp[["/temp"]][4:6, 2, 11:12], zj[["/temp"]][4:6, 2, 11:12])
  expect_identical(zp$store$get("temp/2.2.2"), zj$store$get("temp/2.2.2"))
  expect_true(zp$store$exists("temp/2.2.2"))
  expect_false(zp$store$exists("temp/3.0.0"))
  expect_identical(sort(zp$store$list_prefix("temp/")), sort(zj$store$list_prefix("temp/")))
})

test_that("the _FillValue of NetCDF variables (int16, float32) reads as NA and every other value exactly", {
  d <- kerchunk_fixture()
  expected <- kerchunk_expected(d, "data.nc", "counts")
  # Python's counts[3, 7] is R's [4, 8] of the 10 x 12 matrix
  expect_identical(which(is.na(expected)), (8L - 1L) * 10L + 4L)
  for (refs in c("refs_abs.json", "refs_fp.parq")) {
    got <- open_zarr(file.path(d, refs))[["/counts"]][]
    expect_type(got, "integer")
    expect_identical(unname(got), expected)
  }
  # precip: -9999 in netCDF4's raw values at Python's [4, 2]
  expected <- kerchunk_expected(d, "data.nc", "precip")
  expect_identical(which(is.na(expected)), (3L - 1L) * 6L + 5L)
  for (refs in c("refs_rel.json", "refs_pa.parq")) {
    expect_identical(unname(open_zarr(file.path(d, refs))[["/precip"]][]), expected)
  }
})

test_that("a gzip-compressed JSON reference set reads like the plain one", {
  d <- kerchunk_fixture()
  gz <- file.path(d, "refs_rel_test.json.gz")
  withr::defer(unlink(gz))
  con <- gzfile(gz, "wb")
  writeBin(readBin(file.path(d, "refs_rel.json"), "raw", file.size(file.path(d, "refs_rel.json"))), con)
  close(con)
  expect_identical(readBin(gz, "raw", 2), as.raw(c(0x1f, 0x8b)))
  expect_reads_fixture(gz, d)
})

test_that("netCDF4's default zlib compression (shuffle on) reads exactly", {
  # netCDF4 turns the shuffle filter on with zlib = TRUE unless told not
  # to; kerchunk then writes
  # "filters": [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", ...}].
  d <- kerchunk_fixture()
  refs <- jsonlite::fromJSON(file.path(d, "refs_shuffled.json"), simplifyVector = FALSE)$refs
  expect_match(refs[["sst/.zarray"]], '"shuffle"', fixed = TRUE)
  z <- open_zarr(file.path(d, "refs_shuffled.json"))
  # (today: the node is skipped with a warning, then "unsupported filter 'shuffle'")
  sst <- suppressWarnings(z[["/sst"]])
  expect_identical(unname(sst[]), kerchunk_expected(d, "shuffled.nc", "sst"))
})

# ---- version 1: templates and gen --------------------------------------------

test_that("the spec's version 1 example expands to its version 0 equivalent and reads those bytes", {
  d <- local_ref_dir()
  names <- c(paste0("path_", 0:4), "path", "text", "target_url")
  files <- withr::with_seed(1, lapply(names, function(f) {
    as.raw(sample.int(256L, if (startsWith(f, "path_")) 6000L else 10200L, replace = TRUE) - 1L)
  }))
  names(files) <- names
  for (f in names) writeBin(files[[f]], file.path(d, f))
  # The example of references-spec.rst, with local files for its http
  # URLs: "u" is the absolute folder, "text" and "target_url" are relative.
  v1 <- list(
    version = 1,
    templates = list(u = paste0(d, "/path"), f = "{{c}}"),
    gen = list(list(
      key = "gen_key{{i}}",
      url = "{{u}}_{{i}}",
      offset = "{{(i + 1) * 1000}}",
      length = "1000",
      dimensions = list(i = list(stop = 5))
    )),
    refs = list(
      key0 = "data",
      key1 = list("target_url", 10000, 100),
      key2 = list("{{u}}", 10000, 100),
      key3 = list("{{f(c='text')}}", 10000, 100)
    )
  )
  v0 <- list(
    key0 = "data",
    key1 = list("target_url", 10000, 100),
    key2 = list(paste0(d, "/path"), 10000, 100),
    key3 = list("text", 10000, 100)
  )
  for (i in 0:4) v0[[paste0("gen_key", i)]] <- list(paste0(d, "/path_", i), (i + 1) * 1000, 1000)
  s1 <- zarr_refstore$new(write_refs(v1, d, "v1.json"))
  s0 <- zarr_refstore$new(write_refs(v0, d, "v0.json"))
  keys <- sort(c(paste0("key", 0:3), paste0("gen_key", 0:4)))
  expect_identical(sort(s1$list()), keys)
  expect_identical(sort(s0$list()), keys)
  expect_identical(s1$get("key0"), charToRaw("data"))
  slice <- function(f, offset, length) files[[f]][offset + seq_len(length)]
  expected <- list(key1 = slice("target_url", 10000, 100), key2 = slice("path", 10000, 100),
                   key3 = slice("text", 10000, 100))
  for (i in 0:4) expected[[paste0("gen_key", i)]] <- slice(paste0("path_", i), (i + 1) * 1000, 1000)
  for (k in names(expected)) {
    expect_identical(s1$get(k), expected[[k]], label = k)
    expect_identical(s1$get(k), s0$get(k), label = k)
    expect_equal(s1$getsize(k), length(expected[[k]]), label = k)
  }
  expect_identical(s1$get("gen_key3", byte_range = c(10, 20)), expected$gen_key3[11:20])
  expect_null(s1$get("gen_key5"))
})

test_that("an array with chunks from a 2-d gen (list and range dimensions, function template) reads exactly", {
  d <- local_ref_dir()
  m <- matrix(seq_len(24L) * 7919L - 50000L, 4, 6)
  # row_<r>.bin: an 8-byte header, then chunks (r, 0) and (r, 1), C order.
  for (r in 0:1) {
    con <- file(file.path(d, sprintf("row_%d.bin", r)), "wb")
    writeBin(charToRaw("HEADER!!"), con)
    for (c in 0:1) {
      block <- m[2 * r + 1:2, 3 * c + 1:3]
      writeBin(as.vector(t(block)), con, size = 4, endian = "little")
    }
    close(con)
  }
  refs <- list(
    version = 1,
    templates = list(root = d, file = "{{root}}/row_{{r}}.bin", itemsize = 4),
    gen = list(list(
      key = "c/{{r}}/{{c}}",
      url = "{{file(r=r)}}",
      offset = "{{8 + c * 6 * itemsize}}",
      length = "{{2 * 3 * itemsize}}",
      dimensions = list(r = list(0, 1), c = list(start = 0, stop = 2, step = 1))
    )),
    refs = list(zarr.json = list(
      zarr_format = 3, node_type = "array", shape = list(4, 6), data_type = "int32",
      chunk_grid = list(name = "regular", configuration = list(chunk_shape = list(2, 3))),
      chunk_key_encoding = list(name = "default"), fill_value = 0,
      codecs = list(list(name = "bytes", configuration = list(endian = "little")))
    ))
  )
  path <- write_refs(refs, d)
  z <- open_zarr(path)
  expect_identical(sort(z$store$list()), c("c/0/0", "c/0/1", "c/1/0", "c/1/1", "zarr.json"))
  expect_identical(z[["/"]][], m)
  expect_identical(z[["/"]][3:4, 2:5], m[3:4, 2:5])
  # the version 0 set of the expanded references reads the same
  v0 <- list(zarr.json = refs$refs$zarr.json)
  for (r in 0:1) for (c in 0:1) {
    v0[[sprintf("c/%d/%d", r, c)]] <- list(sprintf("row_%d.bin", r), 8 + c * 24, 24)
  }
  expect_identical(open_zarr(write_refs(v0, d, "v0.json"))[["/"]][], m)
})

# ---- targets on a loopback HTTP server ----------------------------------------

# `refs` (a parsed JSON reference set) with every target replaced by `url`.
retarget_refs <- function(refs, url) {
  for (k in names(refs$refs)) {
    if (is.list(refs$refs[[k]])) refs$refs[[k]][[1]] <- url
  }
  refs
}

test_that("references to a NetCDF file on an HTTP server read exactly, with concurrent ranged GETs", {
  d <- kerchunk_fixture()
  server <- local_http_server(d, delay_ms = 20)
  refs <- jsonlite::fromJSON(file.path(d, "refs_rel.json"), simplifyVector = FALSE)
  chunk_refs <- Filter(is.list, refs$refs)
  http_refs <- retarget_refs(refs, paste0(server$url, "/data.nc"))
  tmp <- local_ref_dir()
  path <- write_refs(http_refs, tmp)
  z <- open_zarr(path)
  http_reset(server)
  expect_reads_fixture(path, d)
  st <- http_stats(server)
  # every chunk fetched once, as a range of exactly its bytes
  expect_identical(as.integer(st$ranges), length(chunk_refs))
  expect_identical(as.integer(st$gets), length(chunk_refs))
  expect_identical(as.numeric(st$bytes), sum(vapply(chunk_refs, function(r) as.numeric(r[[3]]), 0)))
  expect_gt(st$max_in_flight, 1)
  expect_lte(st$max_in_flight, 16)
  # a partial read fetches only the chunks it needs
  http_reset(server)
  expect_identical(unname(z[["/temp"]][2, 3:5, 4]), kerchunk_expected(d, "data.nc", "temp")[2, 3:5, 4])
  expect_identical(as.integer(http_stats(server)$ranges), 2L)
})

test_that("an interrupt ends a read whose targets are on a server that does not answer", {
  # The chunks' requests are out on the fetch's own thread; before, the
  # read waited for them after the interrupt: 30 s (the HTTP read timeout).
  d <- kerchunk_fixture()
  server <- local_http_server(d, delay_ms = 600000)
  refs <- jsonlite::fromJSON(file.path(d, "refs_rel.json"), simplifyVector = FALSE)
  tmp <- local_ref_dir()
  a <- open_zarr(write_refs(retarget_refs(refs, paste0(server$url, "/data.nc")), tmp))[["/temp"]]
  started <- Sys.time()
  err <- tryCatch({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    a[]
  }, error = function(e) e)
  setTimeLimit()
  took <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  expect_s3_class(err, "zarr_error_interrupted")
  expect_lt(took, 15)
})

test_that("a JSON reference set served over HTTP resolves relative targets against its URL", {
  d <- kerchunk_fixture()
  server <- local_http_server(d, delay_ms = 20)
  url <- paste0(server$url, "/refs_rel.json")
  expect_true(zarr:::is_reference_set(url))
  z <- expect_reads_fixture(url, d)
  expect_match(paste(utils::capture.output(print(z$store)), collapse = " "), server$url, fixed = TRUE)
  st <- http_stats(server)
  expect_gt(st$max_in_flight, 1)
  refs <- jsonlite::fromJSON(file.path(d, "refs_rel.json"), simplifyVector = FALSE)$refs
  expect_identical(as.integer(st$ranges), length(Filter(is.list, refs)))
})

test_that("HTTP targets that are missing or too short give errors naming the key, never short values", {
  d <- local_ref_dir()
  writeBin(as.raw(1:100), file.path(d, "data.bin"))
  server <- local_http_server(d)
  url <- paste0(server$url, "/data.bin")
  missing <- paste0(server$url, "/missing.bin")
  refs <- list(
    .zgroup = list(zarr_format = 2),
    "x/.zarray" = v2_uint8(20, 10),
    "x/0" = list(url, 90, 10),
    "x/1" = list(url, 95, 10),
    "far" = list(url, 200, 4),
    "gone" = list(missing, 0, 4),
    "gone_whole" = list(missing),
    "whole" = list(url)
  )
  s <- zarr_refstore$new(write_refs(refs, d))
  expect_identical(s$get("x/0"), as.raw(91:100))
  expect_identical(s$get("whole"), as.raw(1:100))
  expect_equal(s$getsize("whole"), 100)
  expect_error(s$get("x/1"), "reference 'x/1'.*past the end", class = "zarr_error_corrupt_chunk")
  expect_error(s$get("far"), "reference 'far'", class = "zarr_error_corrupt_chunk")
  expect_error(s$get("gone"), "reference 'gone'.*missing.bin", class = "zarr_error_not_found")
  expect_error(s$get("gone_whole"), "reference 'gone_whole'.*missing.bin", class = "zarr_error_not_found")
  expect_error(s$getsize("gone_whole"), "reference 'gone_whole'", class = "zarr_error_not_found")
  a <- open_zarr(file.path(d, "refs.json"))[["/x"]]
  expect_identical(as.vector(a[1:10]), 91:100)
  expect_error(a[], "x/1", class = "zarr_error_corrupt_chunk")
})

test_that("Parquet references to an HTTP server read exactly and concurrently", {
  d <- kerchunk_fixture()
  py <- python_kerchunk()
  server <- local_http_server(d, delay_ms = 20)
  tmp <- local_ref_dir()
  refs <- retarget_refs(jsonlite::fromJSON(file.path(d, "refs_rel.json"), simplifyVector = FALSE),
                        paste0(server$url, "/data.nc"))
  json <- write_refs(refs, tmp)
  parq <- file.path(tmp, "http.parq")
  to_parquet <- "import sys, kerchunk.df; kerchunk.df.refs_to_dataframe(sys.argv[1], sys.argv[2], record_size=10)"
  res <- run_python_command(py, c("-c", to_parquet, json, parq))
  expect_identical(res$status, 0L, label = res$output)
  http_reset(server)
  expect_reads_fixture(parq, d)
  st <- http_stats(server)
  expect_identical(as.integer(st$ranges), length(Filter(is.list, refs$refs)))
  expect_gt(st$max_in_flight, 1)

  # The Parquet folder itself on the server: its relative targets
  # ("data.nc") are fetched from beside it.
  expect_reads_fixture(paste0(server$url, "/refs_pa.parq"), d)
  expect_reads_fixture(paste0(server$url, "/refs_pa.parq/"), d)
  expect_error(open_zarr(paste0(server$url, "/none.parq")), "none.parq", class = "zarr_error_not_found")
})

# ---- bad reference sets --------------------------------------------------------

test_that("invalid reference JSON is a metadata error, not a crash", {
  d <- local_ref_dir()
  bad <- c("{\"a\": [", "[1, 2]", "not json", "{\"version\": 2, \"refs\": {}}", "")
  for (i in seq_along(bad)) {
    path <- file.path(d, sprintf("bad%d.json", i))
    writeLines(bad[i], path)
    expect_error(open_zarr(path), class = "zarr_error_metadata", label = bad[i])
    expect_error(zarr_refstore$new(path), class = "zarr_error_metadata", label = bad[i])
  }
  writeLines("{\"a\": [", file.path(d, "bad.json"))
  expect_error(zarr_refstore$new(file.path(d, "bad.json")), "invalid reference JSON.*line",
               class = "zarr_error_metadata")
  # a malformed reference value names its key
  for (v in list(list("data.bin", 1), list("data.bin", -1, 3), list(5, 0, 3), "base64:@@@", 5)) {
    path <- write_refs(list(.zgroup = list(zarr_format = 2), "x/0" = v), d)
    expect_error(zarr_refstore$new(path), "reference 'x/0'", class = "zarr_error_metadata")
  }
  path <- write_refs(list("../escape" = "x"), d)
  expect_error(zarr_refstore$new(path), "../escape", class = "zarr_error_metadata")
  expect_error(open_zarr(file.path(d, "none.json")), class = "zarr_error_not_found")
  expect_error(zarr_refstore$new(file.path(d, "none.json")), "none.json", class = "zarr_error_not_found")
})

test_that("a reference past the end of its target file is an error naming the key", {
  d <- local_ref_dir()
  writeBin(as.raw(1:100), file.path(d, "data.bin"))
  refs <- list(
    .zgroup = list(zarr_format = 2),
    "x/.zarray" = v2_uint8(20, 10),
    "x/0" = list("data.bin", 90, 10), # ends at the end of the file: fine
    "x/1" = list("data.bin", 91, 10), # one byte past it
    "y" = list("data.bin", 200, 1),
    "huge" = list("data.bin", 0, 1e15)
  )
  path <- write_refs(refs, d)
  s <- zarr_refstore$new(path)
  expect_identical(s$get("x/0"), as.raw(91:100))
  expect_error(s$get("x/1"), "reference 'x/1' is past the end", class = "zarr_error_corrupt_chunk")
  expect_error(s$get("y"), "reference 'y'", class = "zarr_error_corrupt_chunk")
  expect_error(s$get("huge"), "reference 'huge'", class = "zarr_error_corrupt_chunk")
  expect_error(s$get("x/1", byte_range = c(0, 5)), "reference 'x/1'", class = "zarr_error_corrupt_chunk")
  a <- open_zarr(path)[["/x"]]
  expect_identical(as.vector(a[1:10]), 91:100)
  expect_error(a[], "x/1", class = "zarr_error_corrupt_chunk")
  expect_error(a[11:20], "x/1", class = "zarr_error_corrupt_chunk")
})

test_that("a missing target file is a not_found error naming the key and the file, never fill values", {
  d <- local_ref_dir()
  writeBin(as.raw(1:100), file.path(d, "data.bin"))
  refs <- list(
    .zgroup = list(zarr_format = 2),
    "x/.zarray" = v2_uint8(20, 10),
    "x/0" = list("data.bin", 0, 10),
    "x/1" = list("missing.bin", 0, 10),
    "whole" = list("gone.bin")
  )
  s <- zarr_refstore$new(write_refs(refs, d))
  expect_error(s$get("x/1"), "reference 'x/1'.*missing.bin.*does not exist", class = "zarr_error_not_found")
  expect_error(s$get("whole"), "reference 'whole'.*gone.bin", class = "zarr_error_not_found")
  expect_error(s$getsize("whole"), "reference 'whole'.*gone.bin", class = "zarr_error_not_found")
  a <- open_zarr(file.path(d, "refs.json"))[["/x"]]
  expect_identical(as.vector(a[2:10]), 2:10)
  expect_error(a[], "x/1.*missing.bin", class = "zarr_error_not_found")
  expect_error(a[15], "x/1.*missing.bin", class = "zarr_error_not_found")
})

test_that("a template that does not render is a metadata error naming the key or gen entry", {
  d <- local_ref_dir()
  writeBin(as.raw(1:100), file.path(d, "data.bin"))
  v1 <- function(templates = list(a = "x"), refs = NULL, gen = NULL) {
    write_refs(Filter(Negate(is.null), list(version = 1, templates = templates, refs = refs, gen = gen)), d)
  }
  # an undefined variable, a syntax error, an unparsable function template
  expect_error(open_zarr(v1(refs = list(k = list("{{nope}}/data.bin", 0, 4)))),
               "reference 'k'.*\\{\\{nope\\}\\}", class = "zarr_error_metadata")
  expect_error(open_zarr(v1(refs = list(k = list("{{ a + }}", 0, 4)))),
               "reference 'k'", class = "zarr_error_metadata")
  expect_error(open_zarr(v1(templates = list(f = "{{ c }"), refs = list(k = list("{{f(c=1)}}", 0, 4)))),
               "template 'f'", class = "zarr_error_metadata")
  gen <- function(...) {
    list(modifyList(list(key = "k{{i}}", url = "data.bin", dimensions = list(i = list(stop = 2))), list(...)))
  }
  expect_error(open_zarr(v1(gen = gen(url = "{{root}}/f"))), "gen entry 0.*url.*i=0",
               class = "zarr_error_metadata")
  expect_error(open_zarr(v1(gen = gen(offset = "{{i * x}}", length = "3"))), "gen entry 0.*offset",
               class = "zarr_error_metadata")
  expect_error(open_zarr(v1(gen = gen(offset = "abc{{i}}", length = "3"))), "key 'k0'",
               class = "zarr_error_metadata")
  expect_error(open_zarr(v1(gen = gen(offset = "1"))), "gen entry 0", class = "zarr_error_metadata")
  expect_error(open_zarr(v1(gen = gen(dimensions = list(i = list(stop = 2, step = 0))))), "gen entry 0.*step",
               class = "zarr_error_metadata")
  expect_error(open_zarr(v1(gen = gen(key = "../k{{i}}"))), "../k0", class = "zarr_error_metadata")
  # a template that renders fine reads
  s <- zarr_refstore$new(v1(refs = list(k = list("{{a}}.bin", 2, 3)), templates = list(a = "data")))
  expect_identical(s$get("k"), as.raw(3:5))
})

test_that("a Parquet reference file with the wrong columns, types or bytes is a metadata error naming it", {
  d <- kerchunk_fixture()
  py <- python_kerchunk()
  tmp <- local_ref_dir()
  writer <- '
import sys, pyarrow as pa, pyarrow.parquet as pq
kind, path = sys.argv[1], sys.argv[2]
if kind == "columns":
    pq.write_table(pa.table({"url": ["a"] * 10, "start": list(range(10)), "length": [1] * 10}), path)
elif kind == "types":
    pq.write_table(pa.table({"path": ["a"] * 10, "offset": ["x"] * 10, "size": [1] * 10, "raw": [None] * 10}), path)
else:
    open(path, "wb").write(b"not a parquet file")
'
  for (kind in c("columns", "types", "bytes")) {
    parq <- file.path(tmp, paste0(kind, ".parq"))
    dir.create(parq)
    file.copy(list.files(file.path(d, "refs_fp.parq"), full.names = TRUE, all.files = TRUE, no.. = TRUE),
              parq, recursive = TRUE)
    # temp's references 10..19 (chunks 1.0.1 to 2.0.0)
    res <- run_python_command(py, c("-c", writer, kind, file.path(parq, "temp", "refs.1.parq")))
    expect_identical(res$status, 0L, label = res$output)
    z <- open_zarr(parq)
    # the other files and arrays still read
    expect_identical(unname(z[["/temp"]][1, , ]), kerchunk_expected(d, "data.nc", "temp")[1, , ])
    expect_identical(unname(z[["/t2m"]][]), kerchunk_expected(d, "data.nc", "t2m"))
    msg <- if (kind == "bytes") "cannot read the Parquet reference file" else "has the wrong columns"
    expect_error(z[["/temp"]][], "temp/refs.1.parq", class = "zarr_error_metadata")
    expect_error(z[["/temp"]][], msg, class = "zarr_error_metadata")
    expect_error(z[["/temp"]][3, 5, 5], "chunk 'temp/1.1.0'.*temp/refs.1.parq", class = "zarr_error_metadata")
    expect_error(z$store$get("temp/1.0.1"), "temp/refs.1.parq", class = "zarr_error_metadata")
  }
  # a .zmetadata without record_size
  parq <- file.path(tmp, "norec.parq")
  dir.create(parq)
  meta <- jsonlite::fromJSON(file.path(d, "refs_fp.parq", ".zmetadata"), simplifyVector = FALSE)
  meta$record_size <- NULL
  writeLines(jsonlite::toJSON(meta, auto_unbox = TRUE, null = "null"), file.path(parq, ".zmetadata"))
  expect_error(zarr_refstore$new(parq), "record_size", class = "zarr_error_metadata")
})

test_that("targets of unsupported protocols are errors naming the URL (s3:// is read, see test-store-object.R)", {
  d <- local_ref_dir()
  writeBin(as.raw(1:100), file.path(d, "data.bin"))
  refs <- list(
    .zgroup = list(zarr_format = 2),
    "x/.zarray" = v2_uint8(20, 10),
    "x/0" = list("data.bin", 0, 10),
    "x/1" = list("hdfs://namenode/path/file.nc", 294094376, 10),
    "g" = list("ftp://host/file.nc"),
    "h" = list("file://otherhost/data.bin", 0, 4)
  )
  s <- zarr_refstore$new(write_refs(refs, d))
  expect_error(s$get("x/1"), "reference 'x/1'.*hdfs://namenode/path/file.nc", class = "zarr_error_unsupported")
  expect_error(s$get("g"), "ftp://host/file.nc", class = "zarr_error_unsupported")
  expect_error(s$get("h"), "otherhost", class = "zarr_error_unsupported")
  a <- open_zarr(file.path(d, "refs.json"))[["/x"]]
  expect_identical(as.vector(a[1:10]), 1:10)
  expect_error(a[], "x/1.*hdfs://namenode/path/file.nc", class = "zarr_error_unsupported")
  expect_error(zarr_refstore$new("hdfs://namenode/refs.json"), "hdfs://namenode/refs.json", class = "zarr_error_unsupported")
})

test_that("reference stores are read-only", {
  d <- local_ref_dir()
  s <- zarr_refstore$new(write_refs(list(k = "data"), d))
  expect_true(s$read_only)
  expect_identical(s$get("k"), charToRaw("data"))
  expect_error(s$set("k", charToRaw("x")), class = "zarr_error_read_only")
  expect_error(s$erase("k"), class = "zarr_error_read_only")
  expect_identical(s$get("k"), charToRaw("data"))
})

test_that("a 400-byte reference set whose gen expands to 1e8 keys is zarr_error_metadata, not an abort", {
  refs <- withr::local_tempfile(fileext = ".json")
  writeLines('{"version": 1, "refs": {".zgroup": "{\\"zarr_format\\": 2}"},
    "gen": [{"key": "a/{{i}}", "url": "data.bin", "offset": "{{i * 4}}", "length": "4",
             "dimensions": {"i": {"stop": 100000000}}}]}', refs)
  expect_lt(file.size(refs), 400)
  expect_error(open_zarr(refs), class = "zarr_error_metadata", regexp = "100000000 values")
  withr::local_options(zarr.reference_max_keys = 10)
  writeLines('{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 11}}}]}', refs)
  expect_error(zarr_refstore$new(refs), class = "zarr_error_metadata", regexp = "more than the 10 keys")
  writeLines('{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 10}}}]}', refs)
  expect_length(zarr_refstore$new(refs)$list(), 10L)
})

test_that("local_root confines local targets: a reference outside it is zarr_error_invalid_key", {
  dir <- withr::local_tempdir()
  dir.create(file.path(dir, "data"))
  writeBin(as.raw(1:4), file.path(dir, "data", "inside.bin"))
  writeBin(as.raw(5:8), file.path(dir, "secret.bin"))
  refs <- file.path(dir, "data", "refs.json")
  writeLines('{"version": 1, "refs": {"in": ["inside.bin"], "out": ["../secret.bin"]}}', refs)
  open <- zarr_refstore$new(refs)
  expect_identical(open$get("out"), as.raw(5:8)) # documented: any local file by default
  confined <- zarr_refstore$new(refs, local_root = file.path(dir, "data"))
  expect_identical(confined$get("in"), as.raw(1:4))
  expect_error(confined$get("out"), class = "zarr_error_invalid_key", regexp = "confined")
  withr::local_options(zarr.reference_local_root = file.path(dir, "data"))
  expect_error(zarr_refstore$new(refs)$get("out"), class = "zarr_error_invalid_key", regexp = "'out'")
})
