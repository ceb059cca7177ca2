# Malformed input in the newer formats (sharded arrays, Zarr v2, strings,
# consolidated metadata, HTTP) is a classed `zarr_error_*` condition whose
# message names the key involved; never a crash, never wrong data. Each case
# writes a valid store with the package, then corrupts bytes with R.

# ------------------------------------------------------------------ helpers

fe_read_raw <- function(f) readBin(f, "raw", file.size(f))

fe_edit_json <- function(file, fun) {
  meta <- jsonlite::fromJSON(file, simplifyVector = FALSE)
  writeLines(as.character(jsonlite::toJSON(fun(meta), auto_unbox = TRUE, null = "null", digits = NA)), file)
}

# CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bit by bit on raw
# bytes; the 4 bytes little-endian, as the crc32c codec stores them.
fe_crc32c <- function(bytes) {
  crc <- as.raw(c(0xff, 0xff, 0xff, 0xff))
  poly <- as.raw(c(0x78, 0x3b, 0xf6, 0x82))
  for (b in bytes) {
    crc[1L] <- xor(crc[1L], b)
    for (k in 1:8) {
      low <- as.integer(crc[1L]) %% 2L == 1L
      crc <- rawShift(crc, -1L) | rawShift(c(crc[2:4], as.raw(0L)), 7L)
      if (low) crc <- xor(crc, poly)
    }
  }
  xor(crc, as.raw(c(0xff, 0xff, 0xff, 0xff)))
}

# A little-endian uint64 of a whole number below 2^53.
fe_u64 <- function(x) {
  out <- raw(8)
  for (i in 1:8) {
    out[i] <- as.raw(x %% 256)
    x <- x %/% 256
  }
  out
}
fe_u64_value <- function(b) sum(as.numeric(b) * 256^(0:7))
fe_u64_max <- as.raw(rep(0xff, 8))

fe_matrix <- matrix(1:600, 20, 30)

# A local store with the int32 array "/s" of shape 20 x 30 holding 1:600,
# in shards of 10 x 15 made of 6 inner chunks of 5 x 5, so the shard index
# of "s/c/0/0" has 6 entries (96 bytes), then (by default) a crc32c.
local_sharded <- function(index_location = "end", index_codecs = NULL, env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path)
  b <- define_array("int32", c(20, 30))
  b$chunk_shape <- c(10, 15)
  cfg <- list(chunk_shape = c(5, 5), index_location = index_location)
  if (!is.null(index_codecs)) cfg$index_codecs <- index_codecs
  b$add_codec("sharding_indexed", cfg)
  arr <- z$add_array("/", "s", b)
  arr$write(fe_matrix)
  crc <- is.null(index_codecs)
  list(path = path, z = z, arr = arr, shard = file.path(path, "s", "c", "0", "0"), at_end = index_location == "end",
       crc = crc, index_len = 96L + if (crc) 4L else 0L)
}

# The positions in the shard file of its 96 index bytes.
shard_index_pos <- function(x, n) {
  start <- if (x$at_end) n - x$index_len else 0L
  start + seq_len(96L)
}

# Rewrite entry `entry` (0-based, C order of the 2 x 3 inner chunks) of the
# index of shard "s/c/0/0": its offset and/or nbytes (8 raw bytes each),
# then recompute the crc32c, so only what is named is wrong.
rewrite_index_entry <- function(x, entry, offset = NULL, nbytes = NULL) {
  b <- fe_read_raw(x$shard)
  pos <- shard_index_pos(x, length(b))
  if (!is.null(offset)) b[pos[entry * 16L + 1:8]] <- offset
  if (!is.null(nbytes)) b[pos[entry * 16L + 8L + 1:8]] <- nbytes
  if (x$crc) {
    at <- if (x$at_end) length(b) - 3:0 else 96L + 1:4
    b[at] <- fe_crc32c(b[pos])
  }
  writeBin(b, x$shard)
  invisible(length(b))
}

# Expect every way of reading the damaged shard to fail with `class`
# naming its key: the whole array, one element (the engine fetches the index
# and one inner chunk by byte range), most of the shard (the whole shard is
# fetched) and through a fresh handle; the undamaged shards still read.
expect_shard_error <- function(x, class, regexp = NULL, key = "s/c/0/0") {
  arr <- open_zarr(x$path)[["/s"]]
  expect_error(arr[], class = class, regexp = key, fixed = TRUE)
  expect_error(arr[1, 1], class = class, regexp = key, fixed = TRUE)
  expect_error(arr[1:10, 1:15], class = class, regexp = key, fixed = TRUE)
  expect_error(x$arr$read(), class = class, regexp = "'/s'", fixed = TRUE)
  if (!is.null(regexp)) expect_error(arr[], class = class, regexp = regexp)
  expect_identical(arr[11:20, 16:30], fe_matrix[11:20, 16:30])
  expect_identical(arr[1:10, 16:30], fe_matrix[1:10, 16:30])
}

# ----------------------------------------------------------- sharding: index

test_that("the CRC-32C of these tests is the one the crc32c codec stores", {
  expect_identical(fe_crc32c(charToRaw("123456789")), as.raw(c(0x83, 0x92, 0x06, 0xe3)))
  x <- local_sharded()
  b <- fe_read_raw(x$shard)
  n <- length(b)
  expect_identical(b[n - 3:0], fe_crc32c(b[shard_index_pos(x, n)]))
  # rewriting an entry with its own value changes nothing
  rewrite_index_entry(x, 0L, offset = b[shard_index_pos(x, n)[1:8]])
  expect_identical(fe_read_raw(x$shard), b)
  expect_identical(open_zarr(x$path)[["/s"]][], fe_matrix)
})

test_that("a shard index entry pointing past the end of the shard is zarr_error_corrupt_chunk naming the key", {
  x <- local_sharded()
  n <- rewrite_index_entry(x, 0L, offset = fe_u64(file.size(x$shard) + 100))
  withr::local_options(zarr.strict_checksums = FALSE)
  expect_shard_error(x, "zarr_error_corrupt_chunk", regexp = "past the end")
})

test_that("a shard index entry whose nbytes runs past the end is zarr_error_corrupt_chunk", {
  x <- local_sharded()
  b <- fe_read_raw(x$shard)
  off <- fe_u64_value(b[shard_index_pos(x, length(b))[16L + 1:8]]) # entry 1 stays in the shard
  rewrite_index_entry(x, 1L, nbytes = fe_u64(length(b) - off + 1))
  expect_error(open_zarr(x$path)[["/s"]][1, 6], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_error(open_zarr(x$path)[["/s"]][], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  # a huge nbytes (2^62) is refused, not allocated
  rewrite_index_entry(x, 0L, nbytes = fe_u64(2^62))
  expect_shard_error(x, "zarr_error_corrupt_chunk")
})

test_that("a shard index entry whose offset + nbytes overflows 64 bits is zarr_error_corrupt_chunk", {
  x <- local_sharded()
  rewrite_index_entry(x, 0L, offset = as.raw(c(0xfe, rep(0xff, 7))), nbytes = fe_u64(5))
  expect_shard_error(x, "zarr_error_corrupt_chunk")
  rewrite_index_entry(x, 0L, offset = fe_u64(8), nbytes = as.raw(c(0xfe, rep(0xff, 7))))
  expect_shard_error(x, "zarr_error_corrupt_chunk")
})

test_that("a shard index entry with only one of offset and nbytes missing is zarr_error_corrupt_chunk", {
  x <- local_sharded()
  rewrite_index_entry(x, 2L, offset = fe_u64_max)
  expect_shard_error(x, "zarr_error_corrupt_chunk", regexp = "shard index")
  x <- local_sharded()
  rewrite_index_entry(x, 2L, nbytes = fe_u64_max)
  expect_shard_error(x, "zarr_error_corrupt_chunk", regexp = "shard index")
})

test_that("a shard index entry marked missing (both 2^64-1) reads as the fill value", {
  x <- local_sharded()
  rewrite_index_entry(x, 0L, offset = fe_u64_max, nbytes = fe_u64_max)
  want <- fe_matrix
  want[1:5, 1:5] <- NA
  expect_identical(open_zarr(x$path)[["/s"]][], want)
  expect_identical(open_zarr(x$path)[["/s"]][1:6, 1:6], want[1:6, 1:6])
})

test_that("a shard index entry of 0 bytes or pointing into the index is a classed error, not wrong data", {
  x <- local_sharded()
  rewrite_index_entry(x, 0L, offset = fe_u64(0), nbytes = fe_u64(0))
  expect_shard_error(x, "zarr_error_corrupt_chunk")
  x <- local_sharded()
  n <- file.size(x$shard)
  rewrite_index_entry(x, 0L, offset = fe_u64(n - 40), nbytes = fe_u64(40))
  expect_shard_error(x, "zarr_error_corrupt_chunk")
})

test_that("an index at the start without checksum pointing past the end is zarr_error_corrupt_chunk", {
  x <- local_sharded("start", list(list(name = "bytes", configuration = list(endian = "little"))))
  meta <- jsonlite::fromJSON(file.path(x$path, "s", "zarr.json"), simplifyVector = FALSE)
  cfg <- meta$codecs[[1]]$configuration
  expect_identical(cfg$index_location, "start")
  expect_length(cfg$index_codecs, 1L)
  n <- file.size(x$shard)
  # entry 4 (inner chunk [1, 1]) to the last 3 bytes and beyond
  rewrite_index_entry(x, 4L, offset = fe_u64(n - 3))
  arr <- open_zarr(x$path)[["/s"]]
  expect_error(arr[6, 6], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_error(arr[], class = "zarr_error_corrupt_chunk", regexp = "past the end")
  expect_identical(arr[1:5, 1:15], fe_matrix[1:5, 1:15]) # inner chunks of the first row still read
})

test_that("a bad crc32c on a shard index is zarr_error_checksum naming the key, even when checksums only warn", {
  for (strict in c(FALSE, TRUE)) {
    withr::local_options(zarr.strict_checksums = strict)
    # the stored checksum is wrong
    x <- local_sharded()
    b <- fe_read_raw(x$shard)
    n <- length(b)
    b[n] <- xor(b[n], as.raw(0x01))
    writeBin(b, x$shard)
    expect_shard_error(x, "zarr_error_checksum", regexp = "shard index")
    # an offset changed without updating the checksum: refused, never read
    x <- local_sharded()
    b <- fe_read_raw(x$shard)
    b[shard_index_pos(x, length(b))[1L]] <- as.raw(0x01)
    writeBin(b, x$shard)
    expect_shard_error(x, "zarr_error_checksum", regexp = "crc32c")
    # with the index at the start
    x <- local_sharded("start")
    b <- fe_read_raw(x$shard)
    b[97L] <- xor(b[97L], as.raw(0x80))
    writeBin(b, x$shard)
    expect_shard_error(x, "zarr_error_checksum", regexp = "shard index")
  }
})

test_that("a truncated shard, shorter than its index, is zarr_error_corrupt_chunk naming the key", {
  for (keep in c(0L, 1L, 50L, 99L)) {
    x <- local_sharded()
    writeBin(fe_read_raw(x$shard)[seq_len(keep)], x$shard)
    expect_shard_error(x, "zarr_error_corrupt_chunk")
    expect_error(x$arr[], class = "zarr_error_corrupt_chunk",
                 regexp = sprintf("(%d bytes|cannot hold its index)", keep))
  }
})

test_that("a truncated shard that still holds an index-sized tail is a classed error", {
  # index at the end: the tail is no index, so its checksum fails
  x <- local_sharded()
  b <- fe_read_raw(x$shard)
  writeBin(b[seq_len(length(b) - 30L)], x$shard)
  expect_shard_error(x, "zarr_error_checksum")
  # index at the start: the index is intact but the last inner chunks are cut
  x <- local_sharded("start")
  b <- fe_read_raw(x$shard)
  writeBin(b[seq_len(length(b) - 10L)], x$shard)
  arr <- open_zarr(x$path)[["/s"]]
  expect_error(arr[], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_error(arr[10, 15], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_identical(arr[1:5, 1:5], fe_matrix[1:5, 1:5])
})

test_that("a partial write into a shard with a corrupt index fails and leaves the shard as it was", {
  x <- local_sharded()
  rewrite_index_entry(x, 0L, offset = fe_u64(file.size(x$shard) + 100))
  before <- fe_read_raw(x$shard)
  expect_error(x$arr[1, 1] <- 5L, class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_identical(fe_read_raw(x$shard), before)
  # writing the whole shard replaces it
  x$arr[1:10, 1:15] <- fe_matrix[1:10, 1:15]
  expect_identical(x$arr[], fe_matrix)
})

# ------------------------------------------------------------ Zarr v2 metadata

# A local v2 store with the int32 array "/a" of shape 4 x 3 holding 1:12.
local_v2 <- function(env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path, zarr_format = 2)
  z$add_array("/", "a", define_array("int32", c(4, 3)))$write(matrix(1:12, 4, 3))
  list(path = path, z = z, zarray = file.path(path, "a", ".zarray"))
}

test_that("a v2 .zarray with an unknown dtype is zarr_error_metadata naming the dtype and '.zarray'", {
  for (dtype in c("<x9", "<i3", "i4", "", "|i4")) {
    x <- local_v2()
    fe_edit_json(x$zarray, function(m) {
      m$dtype <- dtype
      m
    })
    err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata")
    expect_match(conditionMessage(err), sprintf("'%s'", dtype), fixed = TRUE)
    expect_match(conditionMessage(err), "a/.zarray", fixed = TRUE)
  }
  # not a string at all
  x <- local_v2()
  fe_edit_json(x$zarray, function(m) {
    m$dtype <- 5
    m
  })
  expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", regexp = "a/.zarray.*dtype")
})

test_that("a root v2 array whose .zarray has an unknown dtype makes open_zarr() fail naming '.zarray'", {
  path <- local_store_path()
  as_zarr(matrix(1:6, 2, 3), location = path, zarr_format = 2)
  fe_edit_json(file.path(path, ".zarray"), function(m) {
    m$dtype <- "<x9"
    m
  })
  err <- expect_error(open_zarr(path), class = "zarr_error_metadata")
  expect_match(conditionMessage(err), "'.zarray'", fixed = TRUE)
  expect_match(conditionMessage(err), "'<x9'", fixed = TRUE)
})

test_that("v2 dtypes the package does not support are zarr_error_unsupported or skipped with a warning", {
  for (dtype in list("<M8[ns]", "<f16", "|V8", "<O")) {
    x <- local_v2()
    fe_edit_json(x$zarray, function(m) {
      m$dtype <- dtype
      m
    })
    # the hierarchy opens; its listing skips the node with a warning naming it
    z <- open_zarr(x$path)
    expect_warning(arrays <- z$arrays, class = "zarr_warning", regexp = "a/.zarray", fixed = TRUE)
    expect_identical(arrays, character(0))
    # the node itself is unsupported
    s <- zarr_localstore$new(x$path)
    expect_error(s$get_metadata("a"), class = "zarr_error_unsupported", regexp = "a/.zarray", fixed = TRUE)
  }
})

test_that("a structured .zarray whose fill value is not a record's is zarr_error_metadata, skipped in listings", {
  x <- local_v2()
  fe_edit_json(x$zarray, function(m) {
    m$dtype <- list(list("x", "<i4"))
    m
  })
  z <- open_zarr(x$path)
  expect_warning(arrays <- z$arrays, class = "zarr_warning", regexp = "a/.zarray", fixed = TRUE)
  expect_identical(arrays, character(0))
  err <- expect_error(zarr_localstore$new(x$path)$get_metadata("a"), class = "zarr_error_metadata")
  expect_match(conditionMessage(err), "a/.zarray", fixed = TRUE)
  expect_match(conditionMessage(err), "a struct's fill value", fixed = TRUE)
})

test_that("a fixed-width string .zarray with a bad width or fill value is zarr_error_metadata naming '.zarray'", {
  cases <- list(list(dtype = "<U0", fill = "", what = "<U0"), list(dtype = "<U10", fill = -1, what = "fill_value"),
                list(dtype = "|S5", fill = "not base64", what = "base64"),
                list(dtype = "<U2", fill = "abc", what = "fill value"))
  for (case in cases) {
    x <- local_v2()
    fe_edit_json(x$zarray, function(m) {
      m$dtype <- case$dtype
      m$fill_value <- case$fill
      m
    })
    err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata")
    expect_match(conditionMessage(err), "a/.zarray", fixed = TRUE)
    expect_match(conditionMessage(err), case$what, fixed = TRUE)
  }
})

test_that("a v2 .zarray missing a required member is zarr_error_metadata naming it and '.zarray'", {
  for (member in c("shape", "chunks", "dtype", "zarr_format", "fill_value", "order")) {
    x <- local_v2()
    fe_edit_json(x$zarray, function(m) {
      m[[member]] <- NULL
      m
    })
    err <- expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata")
    expect_match(conditionMessage(err), sprintf("'%s'", member), fixed = TRUE)
    expect_match(conditionMessage(err), "a/.zarray", fixed = TRUE)
  }
})

test_that("a v2 .zarray that is not JSON is zarr_error_metadata naming the key", {
  x <- local_v2()
  writeLines("{not json", x$zarray)
  expect_error(open_zarr(x$path)[["/a"]], class = "zarr_error_metadata", regexp = "a/.zarray", fixed = TRUE)
  expect_error(zarr_localstore$new(x$path)$get_metadata("a"), class = "zarr_error_metadata",
               regexp = "a/.zarray", fixed = TRUE)
})

test_that("a .zmetadata that is not JSON is zarr_error_metadata naming '.zmetadata'", {
  for (bad in list(charToRaw("{not json"), charToRaw("[1, 2]"), charToRaw('{"metadata": 3}'), as.raw(c(0xff, 0xfe, 0x7b)),
                   raw(0))) {
    x <- local_v2()
    x$z$consolidate()
    writeBin(bad, file.path(x$path, ".zmetadata"))
    expect_error(open_zarr(x$path), class = "zarr_error_metadata", regexp = "'.zmetadata'", fixed = TRUE)
  }
})

test_that("a .zmetadata entry with an unknown dtype is zarr_error_metadata naming '.zmetadata' and the dtype", {
  x <- local_v2()
  x$z$consolidate()
  f <- file.path(x$path, ".zmetadata")
  writeLines(sub("<i4", "<x9", readLines(f, warn = FALSE), fixed = TRUE), f)
  # the store opens (one bad node never takes it down); the node raises
  z <- open_zarr(x$path)
  err <- expect_error(z[["/a"]], class = "zarr_error_metadata")
  expect_match(conditionMessage(err), "'.zmetadata'", fixed = TRUE)
  expect_match(conditionMessage(err), "'<x9'", fixed = TRUE)
})

test_that("a v2 chunk that is not what its compressor wrote is zarr_error_corrupt_chunk naming the v2 key", {
  x <- local_v2()
  chunk <- file.path(x$path, "a", "0.0")
  writeBin(as.raw(c(0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x13, 0x57)), chunk)
  expect_error(open_zarr(x$path)[["/a"]][], class = "zarr_error_corrupt_chunk", regexp = "a/0.0", fixed = TRUE)
})

# --------------------------------------------------------------------- strings

le32 <- function(i) writeBin(as.integer(i), raw(), endian = "little")
vlen <- function(...) {
  s <- list(...)
  c(le32(length(s)), unlist(lapply(s, function(b) c(le32(length(b)), b))))
}

# A store with the string array "/s" of 3 strings in one uncompressed chunk.
local_strings <- function(format = 3L, env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path, zarr_format = format)
  b <- define_array("string", 3)
  b$remove_codec("zstd")
  if (format == 2L) b$fill_value <- "" # the only string fill value v2 arrays take, see the interop tests
  z$add_array("/", "s", b)$write(c("ab", "cd", "ef"))
  key <- if (format == 2L) "s/0" else "s/c/0"
  list(path = path, key = key, chunk = file.path(path, key))
}

test_that("invalid UTF-8 in a string chunk is zarr_error_corrupt_chunk naming the key, in v3 and v2", {
  for (format in c(3L, 2L)) {
    x <- local_strings(format)
    expect_identical(fe_read_raw(x$chunk), vlen(charToRaw("ab"), charToRaw("cd"), charToRaw("ef")))
    for (bad in list(as.raw(c(0xff, 0xfe)), as.raw(c(0xc3)), as.raw(c(0xed, 0xa0, 0x80)), as.raw(c(0xc0, 0xaf)))) {
      writeBin(vlen(charToRaw("ab"), bad, charToRaw("ef")), x$chunk)
      err <- expect_error(open_zarr(x$path)[["/s"]][], class = "zarr_error_corrupt_chunk")
      expect_match(conditionMessage(err), x$key, fixed = TRUE)
      expect_match(conditionMessage(err), "UTF-8", fixed = TRUE)
    }
  }
})

test_that("a string chunk whose counts and lengths do not add up is zarr_error_corrupt_chunk naming the key", {
  x <- local_strings()
  ab <- charToRaw("ab")
  cases <- list(
    more_strings = vlen(ab, ab, ab, ab),
    fewer_strings = vlen(ab, ab),
    huge_count = c(as.raw(rep(0xff, 4)), le32(2L), ab),
    huge_length = c(le32(3L), as.raw(rep(0xff, 4)), ab),
    length_past_end = c(le32(3L), le32(2L), ab, le32(2L), ab, le32(50L), ab),
    trailing_bytes = c(vlen(ab, ab, ab), as.raw(1:3)),
    truncated_header = as.raw(c(0x03, 0x00)),
    empty = raw(0)
  )
  for (name in names(cases)) {
    writeBin(cases[[name]], x$chunk)
    expect_error(open_zarr(x$path)[["/s"]][], class = "zarr_error_corrupt_chunk", regexp = "s/c/0", fixed = TRUE,
                 info = name)
  }
})

test_that("a string holding a NUL character is a classed zarr error naming the key", {
  # Valid UTF-8 (zarr-python writes such strings) that R cannot hold.
  x <- local_strings()
  writeBin(vlen(charToRaw("ab"), as.raw(c(0x63, 0x00, 0x64)), charToRaw("ef")), x$chunk)
  err <- tryCatch(open_zarr(x$path)[["/s"]][], error = function(e) e)
  expect_s3_class(err, "zarr_error")
  expect_match(conditionMessage(err), "s/c/0", fixed = TRUE)
  # and the session goes on
  writeBin(vlen(charToRaw("ab"), charToRaw("cd"), charToRaw("ef")), x$chunk)
  expect_identical(as.vector(open_zarr(x$path)[["/s"]][]), c("ab", "cd", "ef"))
})

# ------------------------------------------------------------------------ HTTP

test_that("a server answering with web pages gives zarr_error_metadata naming the key, for every new format", {
  dir <- withr::local_tempdir()
  # a sharded v3 hierarchy with consolidated metadata, and a v2 one
  z3 <- create_zarr(file.path(dir, "v3.zarr"))
  b <- define_array("int32", c(20, 30))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5)))
  z3$add_array("/", "s", b)$write(fe_matrix)
  z3$consolidate()
  z2 <- create_zarr(file.path(dir, "v2.zarr"), zarr_format = 2)
  z2$add_array("/", "a", define_array("int32", c(4, 3)))$write(matrix(1:12, 4, 3))
  z2$consolidate()
  server <- local_http_server(dir, html = TRUE)
  for (name in c("v3.zarr", "v2.zarr")) {
    url <- paste0(server$url, "/", name)
    err <- expect_error(open_zarr(url), class = "zarr_error_metadata")
    expect_match(conditionMessage(err), "'zarr.json'.*returned HTML, not Zarr metadata")
    expect_match(conditionMessage(err), url, fixed = TRUE)
  }
  s3 <- zarr_httpstore$new(paste0(server$url, "/v3.zarr"))
  expect_error(s3$get_metadata("s"), class = "zarr_error_metadata", regexp = "s/zarr.json", fixed = TRUE)
  s2 <- zarr_httpstore$new(paste0(server$url, "/v2.zarr"))
  for (key in c(".zgroup", ".zattrs", ".zmetadata", "a/.zarray", "a/.zattrs")) {
    expect_error(s2$get(key), class = "zarr_error_metadata", regexp = sprintf("'%s' at", key), fixed = TRUE)
  }
  # chunks and shards are only bytes to the store
  expect_type(s3$get("s/c/0/0"), "raw")
  expect_type(s2$get("a/0.0"), "raw")
})

test_that("shards and v2 chunks served as web pages are classed errors naming the key", {
  dir <- withr::local_tempdir()
  page <- charToRaw("<!DOCTYPE html>\n<html><head><title>Not Zarr</title></head><body>Hello</body></html>\n")
  z3 <- create_zarr(file.path(dir, "v3.zarr"))
  b <- define_array("int32", c(20, 30))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(5, 5))) # index of 100 bytes: more than the page
  z3$add_array("/", "s", b)$write(fe_matrix)
  b <- define_array("int32", c(20, 30))
  b$chunk_shape <- c(10, 15)
  b$add_codec("sharding_indexed", list(chunk_shape = c(10, 15))) # index of 20 bytes: less than the page
  z3$add_array("/", "one", b)$write(fe_matrix)
  z3$consolidate()
  z2 <- create_zarr(file.path(dir, "v2.zarr"), zarr_format = 2)
  z2$add_array("/", "a", define_array("int32", c(4, 3)))$write(matrix(1:12, 4, 3))
  z2$consolidate()
  writeBin(page, file.path(dir, "v3.zarr", "s", "c", "0", "0"))
  writeBin(page, file.path(dir, "v3.zarr", "one", "c", "0", "0"))
  writeBin(page, file.path(dir, "v2.zarr", "a", "0.0"))
  server <- local_http_server(dir)
  z <- open_zarr(paste0(server$url, "/v3.zarr"))
  expect_error(z[["/s"]][], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_error(z[["/s"]][1, 1], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_identical(z[["/s"]][11:20, 16:30], fe_matrix[11:20, 16:30])
  expect_error(z[["/one"]][], class = "zarr_error_checksum", regexp = "one/c/0/0", fixed = TRUE)
  expect_error(z[["/one"]][1, 1], class = "zarr_error_checksum", regexp = "one/c/0/0", fixed = TRUE)
  z <- open_zarr(paste0(server$url, "/v2.zarr"))
  expect_error(z[["/a"]][], class = "zarr_error_corrupt_chunk", regexp = "a/0.0", fixed = TRUE)
})

test_that("a corrupt shard index read over HTTP is the same classed error as on disk", {
  x <- local_sharded()
  x$z$consolidate() # so that the hierarchy opens over HTTP
  rewrite_index_entry(x, 0L, offset = fe_u64(file.size(x$shard) + 100))
  server <- local_http_server(x$path)
  arr <- open_zarr(server$url)[["/s"]]
  expect_error(arr[1, 1], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_error(arr[], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  expect_identical(arr[11:20, 16:30], fe_matrix[11:20, 16:30])
  # a truncated shard too, with and without Range support
  x <- local_sharded()
  x$z$consolidate()
  writeBin(fe_read_raw(x$shard)[1:50], x$shard)
  for (no_ranges in c(FALSE, TRUE)) {
    server <- local_http_server(x$path, no_ranges = no_ranges)
    arr <- open_zarr(server$url)[["/s"]]
    expect_error(arr[1, 1], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
    expect_error(arr[], class = "zarr_error_corrupt_chunk", regexp = "s/c/0/0", fixed = TRUE)
  }
})
