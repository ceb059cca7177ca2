# zarr-python 3 reads exactly the formats this package writes beyond plain
# Zarr v3 chunks: sharded arrays, Zarr v2 arrays (C and F order, each
# compressor), string arrays (sharded, and NumPy's fixed-width v2 ones),
# 64-bit integer extremes and consolidated hierarchies (v3 and v2). Each test
# writes its stores with the package, then ONE Python process (the venv of
# helper-python.R) opens them with zarr-python and writes what it read as
# JSON; values are compared exactly, bit for bit. A few tests go the other
# way: zarr-python writes, the package reads.
# R is column-major: R's x[i, j] must be zarr-python's a[i-1, j-1].

fmt_types <- c("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128")

# The zarr-python script: argv[1] a JSON list of jobs, argv[2] the output.
# A job is {"id", "kind": "array", "store", "path", "slices"} (slices: a list
# of regions, each a list of [start, stop) pairs, 0-based) or {"id", "kind":
# "consolidated", "store"}. Consolidated jobs open the store through a store
# class that refuses every listing, so all that is read comes from the
# consolidated metadata. Values are encoded by `encode` of
# python_script_head (helper-interop.R).
fmt_script <- paste0(python_script_head, '
from zarr.storage import LocalStore


class NoListingStore(LocalStore):
    """A local store that refuses to list: whatever is read through it was
    found without listing."""

    async def list(self):
        raise RuntimeError("listing refused: list()")
        yield

    async def list_prefix(self, prefix):
        raise RuntimeError("listing refused: list_prefix(%r)" % prefix)
        yield

    async def list_dir(self, prefix):
        raise RuntimeError("listing refused: list_dir(%r)" % prefix)
        yield


def dtype_name(a):
    dt = np.dtype(a.dtype)
    return "string" if dt.kind in "OTUS" else dt.name


def numcodecs_id(c):
    return c.get_config()["id"]


def layout(a):
    md = a.metadata
    info = {"zarr_format": md.zarr_format, "chunks": list(a.chunks),
            "shards": None if a.shards is None else list(a.shards)}
    if md.zarr_format == 2:
        info["order"] = md.order
        info["numpy_dtype"] = np.dtype(a.dtype).str
        info["compressor"] = None if md.compressor is None else numcodecs_id(md.compressor)
        info["filters"] = [numcodecs_id(f) for f in (md.filters or [])]
    else:
        codecs = list(md.codecs)
        info["codecs"] = [type(c).__name__ for c in codecs]
        loc = getattr(codecs[0], "index_location", None)
        info["index_location"] = None if loc is None else getattr(loc, "value", str(loc))
    return info


def read_array(a, slices):
    out = {"dtype": dtype_name(a), "shape": list(a.shape), "values": encode(a[...])}
    out.update(layout(a))
    out["slices"] = [encode(a[tuple(slice(s, e) for s, e in region)]) for region in slices]
    return out


def read_consolidated(store):
    g = zarr.open_group(store=NoListingStore(store, read_only=True), mode="r", use_consolidated=True)
    cm = g.metadata.consolidated_metadata
    if cm is None:
        raise ValueError("zarr-python found no consolidated metadata")
    members = {}
    for path, md in sorted(cm.flattened_metadata.items()):
        entry = {"node_type": "array" if hasattr(md, "shape") else "group",
                 "attributes": dict(md.attributes)}
        if entry["node_type"] == "array":
            entry.update(read_array(g[path], []))
        members[path] = entry
    # The store really refuses to list: a group without consolidated
    # metadata cannot find its members through it.
    try:
        plain = zarr.open_group(store=NoListingStore(store, read_only=True), mode="r", use_consolidated=False)
        list(plain.members())
        refused = False
    except Exception as e:
        refused = "listing refused" in str(e)
    return {"zarr_format": g.metadata.zarr_format, "attributes": dict(g.attrs),
            "members": members, "listing_refused": refused}


jobs, out = json.load(open(sys.argv[1], encoding="utf-8")), sys.argv[2]
result = {"zarr_version": zarr.__version__, "jobs": {}}
for job in jobs:
    try:
        if job["kind"] == "array":
            a = zarr.open_array(store=job["store"], path=job["path"], mode="r")
            result["jobs"][job["id"]] = read_array(a, job.get("slices") or [])
        else:
            result["jobs"][job["id"]] = read_consolidated(job["store"])
    except Exception as e:
        result["jobs"][job["id"]] = {"error": "%s: %s" % (type(e).__name__, e)}
with open(out, "w", encoding="utf-8") as f:
    json.dump(result, f)
')

fmt_int64 <- function(x) bit64::as.integer64(x)

fmt_strings <- c("a", "", "ab c", "\u65e5\u672c\u8a9e", "emoji \U0001f389", "with\nnewline", "quote\" and \\",
                 "tab\t", strrep("long ", 40), "\u00e9t\u00e9", "\u2400 is not NA")

# `n` values of `type`, exactly representable in it, never the value R reads
# as NA, in a random order that includes the extremes of the type.
fmt_values <- function(type, n, seed = 1L) {
  withr::with_seed(seed * 1000L + n * 7L + match(type, c(fmt_types, "string")), {
    mix <- function(special, pool) {
      v <- if (n > length(special)) c(special, pool(n - length(special))) else special[seq_len(n)]
      v[sample.int(length(v))]
    }
    ints <- function(lo, hi) function(k) sample(lo:hi, k, replace = TRUE)
    big <- function(signed) {
      function(k) {
        hi <- fmt_int64(round(stats::runif(k, if (signed) -2^31 + 1 else 0, 2^31 - 1)))
        hi * fmt_int64(2^32) + fmt_int64(round(stats::runif(k, 0, 2^32 - 1)))
      }
    }
    f32 <- function(k) round(stats::runif(k, -2^23, 2^23)) * 2^sample(-30:30, k, replace = TRUE)
    f64 <- function(k) stats::runif(k, -1e6, 1e6) * 10^sample(-200:200, k, replace = TRUE)
    word <- function(k) {
      pool <- c(letters, "\u00e9", "\u4e2d", "\U0001f600", " ")
      vapply(seq_len(k), function(i) paste(sample(pool, sample(0:9, 1L), replace = TRUE), collapse = ""), "")
    }
    switch(type,
      bool = mix(c(TRUE, FALSE), function(k) sample(c(TRUE, FALSE), k, replace = TRUE)),
      int8 = mix(c(-127L, 127L, 0L, -1L), ints(-127L, 127L)),
      int16 = mix(c(-32767L, 32767L, 0L, -1L, 256L), ints(-32767L, 32767L)),
      int32 = mix(c(-2147483647L, 2147483647L, 0L, -1L, 65536L),
                  function(k) as.integer(round(stats::runif(k, -2147483647, 2147483647)))),
      int64 = mix(fmt_int64(c("-9223372036854775807", "9223372036854775807", "9007199254740993",
                              "-9007199254740993", "0", "-1", "4294967296")), big(TRUE)),
      uint8 = mix(c(0L, 254L, 128L), ints(0L, 254L)),
      uint16 = mix(c(0L, 65534L, 32768L), ints(0L, 65534L)),
      uint32 = mix(fmt_int64(c("0", "4294967294", "2147483648")),
                   function(k) fmt_int64(round(stats::runif(k, 0, 4294967294)))),
      uint64 = mix(fmt_int64(c("0", "9223372036854775807", "9007199254740993", "4294967296")), big(FALSE)),
      float16 = mix(c(65504, -65504, 2^-24, -2^-24, 2^-14, Inf, -Inf, 0, -0),
                    function(k) sample(seq(-30, 30, by = 0.25), k, replace = TRUE)),
      float32 = mix(c(3.4028234663852886e38, -3.4028234663852886e38, 2^-149, 2^-126, Inf, -Inf, 0, -0), f32),
      float64 = mix(c(.Machine$double.xmax, -.Machine$double.xmax, 2^-1074, .Machine$double.xmin, Inf, -Inf,
                      0, -0, pi, 2^53 + 2), f64),
      complex64 = complex(real = fmt_values("float32", n, seed), imaginary = fmt_values("float32", n, seed + 1L)),
      complex128 = complex(real = fmt_values("float64", n, seed), imaginary = fmt_values("float64", n, seed + 1L)),
      string = mix(fmt_strings, word),
      stop("unknown data type ", type)
    )
  })
}

# Run the script over `jobs`; the parsed result, keyed by job id.
fmt_run_python <- function(jobs) {
  run_python_script(fmt_script, jsonlite::toJSON(unname(jobs), auto_unbox = TRUE))
}

# A job for an array case.
fmt_job <- function(case) {
  slices <- lapply(case$slices, function(region) lapply(region, function(r) c(min(r) - 1L, max(r))))
  list(id = case$id, kind = "array", store = normalizePath(case$store), path = case$path, slices = slices)
}

# Write `x` into a new array `name` of the zarr object `z` defined by `def`
# (a builder or metadata list); a case recording it, or the error.
fmt_write <- function(z, name, def, x, type, store, expect = list(), slices = list(), na = python_fill[type],
                      write = function(arr) arr$write(x)) {
  error <- tryCatch({
    arr <- z$add_array("/", name, def)
    write(arr)
    NULL
  }, error = function(e) paste0(class(e)[1L], ": ", conditionMessage(e)))
  shape <- if (is.null(dim(x))) length(x) else dim(x)
  list(id = paste(basename(store), name, sep = ":"), store = store, path = name, data = x, type = type,
       shape = shape, expect = expect, slices = slices, na = na, error = error)
}

# Expect that zarr-python read every case exactly (values, dtype, shape,
# layout in `expect`, slices); report how many it did.
fmt_expect_reads <- function(cases, result, what) {
  exact <- 0L
  for (case in cases) {
    label <- sprintf("'%s' (%s)", case$id, what)
    if (!is.null(case$error)) {
      testthat::fail(sprintf("the package could not write %s: %s", label, case$error))
      next
    }
    got <- result$jobs[[case$id]]
    if (is.null(got) || !is.null(got$error)) {
      testthat::fail(sprintf("zarr-python could not read %s: %s", label, got$error %||% "no result"))
      next
    }
    ok <- fmt_expect_array(got, case, label)
    exact <- exact + ok
  }
  message(sprintf("zarr-python %s read %d of %d arrays (%s) exactly", result$zarr_version, exact,
                  length(cases), what))
  invisible(exact)
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# Compare what zarr-python read of one array with the case; TRUE when exact.
fmt_expect_array <- function(got, case, label) {
  ok <- TRUE
  check <- function(have, want, what) {
    same <- identical(have, want)
    expect_identical(have, want, label = sprintf("zarr-python's %s of %s", what, label))
    ok <<- ok && same
  }
  check(got$dtype, case$type, "dtype")
  shape <- as.numeric(unlist(got$shape))
  check(shape, as.numeric(case$shape), "shape")
  for (key in names(case$expect)) {
    have <- got[[key]]
    if (is.null(have)) have <- character(0)
    if (is.list(have)) have <- if (length(have)) unlist(have) else character(0)
    want <- case$expect[[key]]
    if (is.numeric(want)) have <- as.numeric(have)
    check(have, want, key)
  }
  if (!identical(shape, as.numeric(case$shape))) return(FALSE)
  compare <- function(values, x, shape, where) {
    want <- encode_r(x, case$type, case$na)
    have <- c_order_to_r(encode_python(values, case$type), shape)
    if (identical(have, want)) {
      testthat::succeed()
      return(TRUE)
    }
    bad <- which(have != want | is.na(have) != is.na(want))
    if (length(have) != length(want)) bad <- seq_len(max(length(have), length(want)))
    ind <- if (length(shape) > 1L) arrayInd(bad, shape) else matrix(bad)
    at <- apply(ind[seq_len(min(5L, length(bad))), , drop = FALSE], 1, paste, collapse = ", ")
    testthat::fail(sprintf("zarr-python read %d of %d values of %s%s differently, e.g. %s", length(bad),
                           length(want), label, where,
                           paste(sprintf("[%s] R wrote %s, Python read %s", at, encodeString(want[bad][seq_along(at)]),
                                         encodeString(have[bad][seq_along(at)])), collapse = "; ")))
    FALSE
  }
  ok <- compare(got$values, case$data, case$shape, "") && ok
  for (k in seq_along(case$slices)) {
    region <- case$slices[[k]]
    part <- do.call(`[`, c(list(case$data), region, list(drop = FALSE)))
    if (length(case$shape) <= 1L) dim(part) <- NULL
    where <- sprintf(" in [%s]", paste(vapply(region, function(r) paste0(min(r), ":", max(r)), ""), collapse = ", "))
    ok <- compare(got$slices[[k]], part, lengths(region), where) && ok
  }
  ok
}

# Read `cases` with one zarr-python process and expect exact reads.
fmt_check_python <- function(cases, what) {
  result <- fmt_run_python(lapply(Filter(function(c) is.null(c$error), cases), fmt_job))
  fmt_expect_reads(cases, result, what)
}

# ------------------------------------------------------------------ sharding

# Change the codecs inside the sharding codec of a builder's metadata.
edit_inner_codecs <- function(b, fun) {
  m <- b$metadata()
  m$codecs[[1L]]$configuration$codecs <- fun(m$codecs[[1L]]$configuration$codecs)
  m
}
big_endian_bytes <- function(codecs) {
  lapply(codecs, function(c) {
    if (c$name == "bytes" && length(c$configuration)) c$configuration$endian <- "big"
    c
  })
}

# Shape 9 x 14 in shards of 6 x 8 (partial shards at the edges) made of
# inner chunks of 3 x 4 (which fill the shards, as the spec requires), or
# the shapes given. `define(b)` edits the builder after sharding is added
# (or before, with `before`), and returns it or a metadata list.
shard_variants <- list(
  list(what = "sharding (index at the end, crc32c) over transpose, bytes, blosc"),
  list(what = "sharding with the index at the start", sharding = list(index_location = "start")),
  list(what = "sharding of row-major inner chunks compressed with gzip",
       before = function(b) {
         b$portable <- TRUE
         b$remove_codec("blosc")
         b$add_codec("gzip", list(level = 6))
         b
       }),
  list(what = "sharding of big-endian inner chunks with blosc and crc32c",
       before = function(b) {
         b$remove_codec("blosc")
         b$add_codec("blosc", list(cname = "lz4", clevel = 5, shuffle = "shuffle"))
         b$add_codec("crc32c", NULL)
         b
       },
       define = function(b) edit_inner_codecs(b, big_endian_bytes)),
  list(what = "sharding with an index without checksum at the start, big-endian",
       sharding = list(index_location = "start",
                       index_codecs = list(list(name = "bytes", configuration = list(endian = "big"))))),
  list(what = "sharding of uncompressed inner chunks", before = function(b) {
    b$remove_codec("blosc")
    b
  }),
  list(what = "sharding of 3-d arrays", shape = c(5, 6, 7), shard = c(4, 4, 6), inner = c(2, 2, 3)),
  list(what = "sharding of 1-d arrays", shape = 50, shard = 16, inner = 4),
  list(what = "sharding with one inner chunk per shard", shape = c(7, 9), shard = c(3, 4), inner = c(3, 4))
)

for (v in shard_variants) {
  local({
    v <- v
    test_that(sprintf("zarr-python reads every data type written with %s", v$what), {
      skip_if_not_installed("bit64")
      python_zarr()
      store <- local_store_path()
      z <- create_zarr(store)
      # [[ ]]: `$` would match "shard" to "sharding"
      shape <- v[["shape"]] %||% c(9, 14)
      shard <- v[["shard"]] %||% c(6, 8)
      inner <- v[["inner"]] %||% c(3, 4)
      # a region crossing shard and inner chunk boundaries, and one element
      slices <- list(lapply(shape, function(n) seq(min(2, n), max(1, n - 1))), as.list(rep(1, length(shape))))
      cases <- lapply(fmt_types, function(type) {
        x <- fmt_values(type, prod(shape))
        if (length(shape) > 1L) dim(x) <- shape
        b <- define_array(type, shape)
        b$chunk_shape <- shard
        if (!is.null(v[["before"]])) b <- v[["before"]](b)
        b$add_codec("sharding_indexed", c(list(chunk_shape = inner), v[["sharding"]]))
        def <- if (is.null(v[["define"]])) b else v[["define"]](b)
        fmt_write(z, type, def, x, type, store, slices = slices,
                  expect = list(zarr_format = 3, shards = shard, chunks = inner,
                                index_location = v[["sharding"]]$index_location %||% "end"))
      })
      fmt_check_python(cases, v$what)
    })
  })
}

test_that("zarr-python reads sharded arrays with NA holes, missing inner chunks and shards, and partial writes", {
  skip_if_not_installed("bit64")
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store)
  shape <- c(12, 16)
  cases <- lapply(setdiff(fmt_types, "bool"), function(type) {
    x <- fmt_values(type, prod(shape), seed = 2L)
    dim(x) <- shape
    x[1:3, 1:4] <- NA # one whole inner chunk: not stored, missing in the index
    x[7:12, 9:16] <- NA # one whole shard: not stored at all
    x[c(20, 50, 111)] <- NA # scattered fill values
    b <- define_array(type, shape)
    b$chunk_shape <- c(6, 8)
    b$add_codec("sharding_indexed", list(chunk_shape = c(3, 4)))
    # written in three parts, the later ones rewriting shards already stored
    write <- function(arr) {
      arr[1:6, ] <- x[1:6, , drop = FALSE]
      arr[7:12, 1:10] <- x[7:12, 1:10, drop = FALSE]
      arr[4:9, 3:14] <- x[4:9, 3:14, drop = FALSE]
      arr[7:12, 11:16] <- x[7:12, 11:16, drop = FALSE]
    }
    fmt_write(z, type, b, x, type, store, write = write, slices = list(list(1:3, 1:4), list(2:11, 3:15)),
              expect = list(shards = c(6, 8), chunks = c(3, 4)))
  })
  # the all-NA shard of the first array was never stored
  expect_false(file.exists(file.path(store, "int8", "c", "1", "1")))
  fmt_check_python(cases, "sharded, with NA and partial writes")
})

# -------------------------------------------------------------------- Zarr v2

# The compressors a v2 array can be written with through the builder, and
# (marked `list`) the numcodecs-only ones the builder refuses by name
# (add_codec("numcodecs.zlib", ...) is zarr_error_unsupported), written
# through a metadata list instead. `id` is the numcodecs id zarr-python must
# see as the compressor, `filters` the filters before it.
v2_compressors <- list(
  list(what = "no compressor", codec = NULL, id = NULL),
  list(what = "gzip", codec = "gzip", config = list(level = 5), id = "gzip"),
  list(what = "blosc zstd level 1 (the default)", id = "blosc"),
  list(what = "zstd level 10 with checksum", codec = "zstd", config = list(level = 10, checksum = TRUE), id = "zstd"),
  list(what = "blosc lz4 with byte shuffle", codec = "blosc",
       config = list(cname = "lz4", clevel = 5, shuffle = "shuffle"), id = "blosc"),
  list(what = "blosc zstd with bit shuffle", codec = "blosc",
       config = list(cname = "zstd", clevel = 3, shuffle = "bitshuffle"), id = "blosc"),
  list(what = "blosc blosclz without shuffle", codec = "blosc",
       config = list(cname = "blosclz", clevel = 9, shuffle = "noshuffle"), id = "blosc"),
  list(what = "blosc zlib", codec = "blosc", config = list(cname = "zlib", clevel = 4, shuffle = "shuffle"),
       id = "blosc"),
  list(what = "crc32c after zstd", codec = "crc32c", keep_zstd = TRUE, id = "crc32c", filters = "zstd"),
  list(what = "numcodecs.zlib (metadata list)", list = TRUE, codec = "numcodecs.zlib", config = list(level = 6),
       id = "zlib"),
  list(what = "numcodecs.lz4 (metadata list)", list = TRUE, codec = "numcodecs.lz4",
       config = list(acceleration = 1), id = "lz4"),
  list(what = "numcodecs.bz2 (metadata list)", list = TRUE, codec = "numcodecs.bz2", config = list(level = 9),
       id = "bz2")
)

# A builder (or metadata list) for a v2 array with compressor `comp`.
v2_definition <- function(type, shape, chunks, comp, portable) {
  b <- define_array(type, shape)
  b$chunk_shape <- chunks
  b$portable <- portable
  # the default compressor: zstd for strings, blosc otherwise
  default_comp <- if (type == "string") "zstd" else "blosc"
  if (is.null(comp$codec) && is.null(comp$id)) {
    b$remove_codec(default_comp)
    return(b)
  }
  if (is.null(comp$codec)) return(b) # the default compressor
  if (isTRUE(comp$list)) {
    m <- b$metadata()
    names <- vapply(m$codecs, function(c) c$name, "")
    m$codecs[[which(names == default_comp)]] <- list(name = comp$codec, configuration = comp$config)
    return(m)
  }
  b$remove_codec(default_comp)
  if (isTRUE(comp$keep_zstd)) b$add_codec("zstd", list(level = 1))
  b$add_codec(comp$codec, comp$config)
  b
}

for (comp in v2_compressors) {
  local({
    comp <- comp
    test_that(sprintf("zarr-python reads v2 arrays of every data type in C and F order with %s", comp$what), {
      skip_if_not_installed("bit64")
      python_zarr()
      store <- local_store_path()
      z <- create_zarr(store, zarr_format = 2)
      shape <- c(5, 7, 3)
      chunks <- c(2, 3, 2)
      slices <- list(list(2:4, 3:7, 1:2))
      cases <- list()
      for (order in c("F", "C")) {
        for (type in fmt_types) {
          x <- fmt_values(type, prod(shape), seed = if (order == "F") 3L else 4L)
          dim(x) <- shape
          def <- v2_definition(type, shape, chunks, comp, portable = order == "C")
          cases[[length(cases) + 1L]] <- fmt_write(
            z, paste0(type, "_", order), def, x, type, store, slices = slices,
            expect = list(zarr_format = 2, order = order, compressor = comp$id %||% character(0),
                          filters = comp$filters %||% character(0), chunks = chunks)
          )
        }
      }
      # the chunks are v2 keys ("0.0.0"), beside .zarray
      expect_true(file.exists(file.path(store, "int32_F", ".zarray")))
      expect_true(file.exists(file.path(store, "int32_F", "0.0.0")))
      fmt_check_python(cases, paste("v2,", comp$what))
    })
  })
}

codec_names_of <- function(b) vapply(b$codecs, function(c) c$name, character(1))

test_that("the builder adds the v2 numcodecs compressors by name, and zarr-python reads them", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  x <- matrix(seq_len(24) / 4, 4, 6)
  ids <- c("numcodecs.zlib" = "zlib", "numcodecs.lz4" = "lz4", "numcodecs.bz2" = "bz2")
  for (codec in names(ids)) {
    b <- define_array("float64", dim(x))
    b$remove_codec("blosc")
    b$add_codec(codec, NULL)
    expect_identical(tail(codec_names_of(b), 1L), codec)
    z$add_array("/", ids[[codec]], b)$write(x)
    zarray <- jsonlite::fromJSON(file.path(store, ids[[codec]], ".zarray"))
    expect_identical(zarray$compressor$id, ids[[codec]])
    expect_identical(open_zarr(store)[[paste0("/", ids[[codec]])]][], x)
  }
  script <- tempfile(fileext = ".py")
  writeLines(c("import sys, zarr, numpy as np",
               "for name in ('zlib', 'lz4', 'bz2'):",
               "    a = zarr.open_array(sys.argv[1] + '/' + name, mode='r')",
               "    assert np.array_equal(a[...], (np.arange(1, 25).reshape(6, 4).T / 4)), name",
               "print('ok')"), script)
  res <- run_python_command(python_zarr(), c(script, store))
  expect_identical(res$status, 0L, info = res$output)
})

test_that("zarr-python reads v2 arrays with big-endian dtypes and NA as the fill value in C and F order", {
  skip_if_not_installed("bit64")
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  shape <- c(6, 5)
  cases <- list()
  for (order in c("F", "C")) {
    for (type in setdiff(fmt_types, "bool")) {
      x <- fmt_values(type, prod(shape), seed = 5L)
      dim(x) <- shape
      x[1:3, 1:2] <- NA # a whole chunk: not stored
      x[c(9, 17, 28)] <- NA
      b <- define_array(type, shape)
      b$chunk_shape <- c(3, 2)
      b$portable <- order == "C"
      m <- b$metadata()
      for (i in seq_along(m$codecs)) {
        if (m$codecs[[i]]$name == "bytes" && length(m$codecs[[i]]$configuration)) {
          m$codecs[[i]]$configuration$endian <- "big"
        }
      }
      cases[[length(cases) + 1L]] <- fmt_write(z, paste0(type, "_", order), m, x, type, store,
                                               expect = list(zarr_format = 2, order = order))
    }
  }
  expect_false(file.exists(file.path(store, "int32_F", "0.0")))
  zarray <- jsonlite::fromJSON(file.path(store, "float64_C", ".zarray"))
  expect_identical(zarray$dtype, ">f8")
  fmt_check_python(cases, "v2, big-endian, NA")
})

test_that("zarr-python reads v2 arrays made by as_zarr(zarr_format = 2), root and named", {
  python_zarr()
  x <- array(fmt_values("float64", 60, seed = 6L), c(3, 4, 5))
  root <- local_store_path()
  as_zarr(x, location = root, zarr_format = 2)
  named <- local_store_path()
  as_zarr(x, name = "x", location = named, zarr_format = 2)
  cases <- list(
    list(id = "root", store = root, path = "", data = x, type = "float64", shape = dim(x),
         expect = list(zarr_format = 2, order = "C")),
    list(id = "named", store = named, path = "x", data = x, type = "float64", shape = dim(x),
         expect = list(zarr_format = 2, order = "C"))
  )
  fmt_check_python(cases, "v2 from as_zarr()")
})

# -------------------------------------------------------------------- strings

# String arrays of shape 7 x 9 in chunks of 3 x 4 with NA, "" and unicode.
string_case <- function(z, store, name, def_fun, na = python_fill[["string"]], expect = list(), seed = 7L) {
  shape <- c(7, 9)
  x <- matrix(fmt_values("string", prod(shape), seed = seed), shape[1], shape[2])
  x[c(2, 10, 33, 60)] <- NA
  x[c(3, 40)] <- ""
  x[4:6, 5:8] <- NA # a whole chunk of NA: not stored
  b <- define_array("string", shape)
  b$chunk_shape <- c(3, 4)
  fmt_write(z, name, def_fun(b), x, "string", store, na = na, expect = expect,
            slices = list(list(2:6, 3:9)))
}

test_that("zarr-python reads v3 string arrays exactly, NA as U+2400 and \"\" kept apart", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store)
  cases <- list(
    string_case(z, store, "default", identity, expect = list(zarr_format = 3)),
    string_case(z, store, "portable", function(b) {
      b$portable <- TRUE
      b
    }),
    string_case(z, store, "gzip", function(b) {
      b$remove_codec("zstd")
      b$add_codec("gzip", list(level = 1))
      b
    }),
    string_case(z, store, "blosc_crc32c", function(b) {
      b$remove_codec("zstd")
      b$add_codec("blosc", list(cname = "lz4", clevel = 5, shuffle = "noshuffle"))
      b$add_codec("crc32c", NULL)
      b
    }),
    string_case(z, store, "uncompressed", function(b) {
      b$remove_codec("zstd")
      b
    })
  )
  # 1-d and 0-d string arrays
  x1 <- c(fmt_strings, NA)
  cases[[length(cases) + 1L]] <- fmt_write(z, "one_d", {
    b <- define_array("string", length(x1))
    b$chunk_shape <- 5
    b
  }, x1, "string", store)
  fmt_check_python(cases, "v3 strings")
})

test_that("zarr-python reads v2 string arrays (|O, vlen-utf8) with a fill value of \"\"", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  empty_fill <- function(compress, portable = FALSE) {
    function(b) {
      b$fill_value <- ""
      b$portable <- portable
      if (!compress) b$remove_codec("zstd")
      b
    }
  }
  cases <- list(
    string_case(z, store, "F_zstd", empty_fill(TRUE), na = "", expect = list(zarr_format = 2, order = "F")),
    string_case(z, store, "C_zstd", empty_fill(TRUE, TRUE), na = "", expect = list(zarr_format = 2, order = "C")),
    string_case(z, store, "F_none", empty_fill(FALSE), na = "",
                expect = list(zarr_format = 2, compressor = character(0), filters = "vlen-utf8"))
  )
  zarray <- jsonlite::fromJSON(file.path(store, "F_none", ".zarray"), simplifyVector = FALSE)
  expect_identical(zarray$dtype, "|O")
  expect_identical(zarray$filters[[1]]$id, "vlen-utf8")
  fmt_check_python(cases, "v2 strings, fill \"\"")
})

test_that("zarr-python reads v2 string arrays written with the default fill value (NA apart from \"\")", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  cases <- list(
    string_case(z, store, "F", function(b) {
      b$portable <- FALSE
      b
    }, expect = list(zarr_format = 2, order = "F")),
    string_case(z, store, "C", identity, expect = list(zarr_format = 2, order = "C"))
  )
  fmt_check_python(cases, "v2 strings, default fill")
})

test_that("zarr-python reads sharded string arrays, NA as U+2400, with missing inner chunks and edge shards", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store)
  # 7 x 9 in shards of 6 x 8 (edge shards) of inner chunks 3 x 4; the NA
  # block x[4:6, 5:8] is one inner chunk, left out of its shard.
  sharded <- function(before = identity, ...) {
    function(b) {
      b <- before(b)
      b$chunk_shape <- c(6, 8)
      b$add_codec("sharding_indexed", list(chunk_shape = c(3, 4), ...))
      b
    }
  }
  expect <- list(zarr_format = 3, shards = c(6, 8), chunks = c(3, 4))
  cases <- list(
    string_case(z, store, "sharded", sharded(), expect = expect),
    string_case(z, store, "sharded_start_gzip", sharded(function(b) {
      b$portable <- TRUE
      b$remove_codec("zstd")
      b$add_codec("gzip", list(level = 5))
      b
    }, index_location = "start"), expect = c(expect, index_location = "start")),
    string_case(z, store, "sharded_uncompressed", sharded(function(b) {
      b$remove_codec("zstd")
      b
    }), expect = expect)
  )
  # four shards, the edge ones partial
  expect_identical(sort(list.files(file.path(store, "sharded", "c"), recursive = TRUE)),
                   c("0/0", "0/1", "1/0", "1/1"))
  fmt_check_python(cases, "sharded strings")
})

# ------------------------------------------------------ fixed-width strings

# Strings that fit in <U10 and |S16 (UTF-8), with "" and non-ASCII ones.
fixed_strings <- c("a", "", "ab c", "\u65e5\u672c\u8a9e", "emoji \U0001f389", "\u00e9t\u00e9", "tab\t", "quote\"\\",
                   "\u2400", "0123456789")

fixed_values <- function(n, seed) {
  withr::with_seed(seed, sample(fixed_strings, n, replace = TRUE))
}

test_that("zarr-python reads fixed-width v2 string arrays (<U, >U, |S) in C and F order with each compressor", {
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  shape <- c(5, 7)
  comps <- list(list(what = "default", id = "zstd"), list(what = "none", id = NULL),
                list(what = "blosc", codec = "blosc", config = list(cname = "lz4", clevel = 5, shuffle = "shuffle"),
                     id = "blosc"),
                list(what = "gzip", codec = "gzip", config = list(level = 5), id = "gzip"))
  cases <- list()
  k <- 0L
  for (dtype in c("<U10", ">U10", "|S16")) {
    for (order in c("F", "C")) {
      for (comp in comps) {
        k <- k + 1L
        x <- matrix(fixed_values(prod(shape), k), shape[1], shape[2])
        x[3:4, 4:6] <- "" # one whole chunk of the fill value: not stored
        def <- v2_definition("string", shape, c(2, 3), comp, portable = order == "C")
        def$add_codec("numpy.fixed_string", list(dtype = dtype))
        name <- sprintf("%s_%s_%s", c("<" = "lt", ">" = "gt", "|" = "S")[[substr(dtype, 1, 1)]], order, comp$what)
        cases[[length(cases) + 1L]] <- fmt_write(
          z, name, def, x, "string", store, slices = list(list(2:5, 3:7)),
          expect = list(zarr_format = 2, order = order, numpy_dtype = dtype, compressor = comp$id %||% character(0),
                        filters = character(0))
        )
      }
    }
  }
  expect_false(file.exists(file.path(store, "lt_F_default", "1.1")))
  fmt_check_python(cases, "v2 fixed-width strings")
})

# zarr-python writes fixed-width v2 arrays (argv[2]: the values, 5 x 7 in C
# order) and a sharded vlen-utf8 v3 array into the folder argv[1].
fixed_write_script <- '
import json, sys
import numcodecs
import numpy as np
import zarr

root, values = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8"))
grid = np.array(values, dtype=object).reshape(5, 7)
g = zarr.open_group(root + "/v2.zarr", mode="w", zarr_format=2)
comps = {"none": None, "zstd": "auto", "zlib": numcodecs.Zlib(level=5),
         "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)}
for dtype in ["<U10", ">U10", "|S16"]:
    data = grid.astype("U10")
    if dtype.endswith("S16"):
        data = np.char.encode(data, "utf-8")
    data = data.astype(dtype)
    for order in ["C", "F"]:
        for comp, compressor in comps.items():
            name = "%s_%s_%s" % ({"<": "lt", ">": "gt", "|": "S"}[dtype[0]], order, comp)
            a = g.create_array(name, shape=(5, 7), chunks=(2, 3), dtype=dtype, order=order,
                               compressors=compressor)
            a[...] = data
    # a fill value of its own, and a null one; only the first chunk written
    fill = b"zz" if dtype.endswith("S16") else "zz"
    for name, fv in [("fill", fill), ("null", None)]:
        a = g.create_array("%s_%s" % ({"<": "lt", ">": "gt", "|": "S"}[dtype[0]], name), shape=(5, 7),
                           chunks=(2, 3), dtype=dtype, fill_value=fv)
        a[0:2, 0:3] = data[0:2, 0:3]
s = zarr.create_array(root + "/sharded.zarr", shape=(5, 7), chunks=(2, 2), shards=(4, 4), dtype=str)
s[...] = grid.astype(str)
s[0:2, 0:2] = ""
s[4, 4:7] = "-"
'

test_that("the package reads fixed-width v2 arrays and sharded string arrays written by zarr-python", {
  py <- python_zarr()
  dir <- withr::local_tempdir()
  values <- fixed_values(35, 11L)
  script <- file.path(dir, "write.py")
  writeLines(fixed_write_script, script)
  vfile <- file.path(dir, "values.json")
  writeLines(enc2utf8(as.character(jsonlite::toJSON(values))), vfile, useBytes = TRUE)
  res <- run_python_command(py, c(script, dir, vfile))
  expect_identical(res$status, 0L, info = res$output)
  want <- matrix(values, 5, 7, byrow = TRUE)
  v2 <- open_zarr(file.path(dir, "v2.zarr"))
  read <- 0L
  for (kind in c("lt", "gt", "S")) {
    dtype <- c(lt = "<U10", gt = ">U10", S = "|S16")[[kind]]
    for (order in c("C", "F")) {
      for (comp in c("none", "zstd", "zlib", "blosc")) {
        arr <- v2[[sprintf("/%s_%s_%s", kind, order, comp)]]
        expect_identical(arr[], want, info = arr$name)
        expect_identical(arr[2:5, 3:7], want[2:5, 3:7], info = arr$name)
        expect_identical(vapply(arr$codecs, function(c) c$name, "")[if (order == "F") 2 else 1], "numpy.fixed_string")
        read <- read + 1L
      }
    }
    # unwritten chunks read as the fill value, "zz" or "" (null), never NA
    part <- matrix("zz", 5, 7)
    part[1:2, 1:3] <- want[1:2, 1:3]
    expect_identical(v2[[sprintf("/%s_fill", kind)]][], part)
    part[part == "zz"] <- ""
    expect_identical(v2[[sprintf("/%s_null", kind)]][], part)
    zarray <- jsonlite::fromJSON(file.path(dir, "v2.zarr", paste0(kind, "_fill"), ".zarray"))
    expect_identical(zarray$dtype, dtype)
    expect_identical(zarray$fill_value, if (kind == "S") "eno=" else "zz")
  }
  expect_identical(read, 24L)
  # the sharded vlen-utf8 array, fill value "": "" is text, as in zarr-python
  sh <- want
  sh[1:2, 1:2] <- ""
  sh[5, 5:7] <- "-"
  arr <- open_zarr(file.path(dir, "sharded.zarr"))[["/"]]
  expect_identical(arr[], sh)
  expect_identical(arr[3:5, 2:6], sh[3:5, 2:6])
  # and the package rewrites part of it for zarr-python to read back
  sh[2:4, 3:5] <- "R \u00e9crit"
  arr[2:4, 3:5] <- sh[2:4, 3:5]
  result <- fmt_run_python(list(list(id = "sh", kind = "array", store = normalizePath(file.path(dir, "sharded.zarr")),
                                     path = "", slices = list())))
  got <- result$jobs$sh
  expect_null(got$error)
  expect_identical(c_order_to_r(encode_python(got$values, "string"), c(5, 7)), encode_r(sh, "string", na = ""))
})

# ------------------------------------------------------------ 64-bit extremes

int64_extremes <- c("-9223372036854775807", "9223372036854775807", "-9223372036854775806", "9223372036854775806",
                    "9007199254740993", "-9007199254740993", "9007199254740992", "4294967296", "-4294967297",
                    "2147483648", "-2147483649", "0", "-1", "1")
uint64_extremes <- c("0", "1", "9223372036854775807", "9223372036854775806", "4611686018427387904",
                     "9007199254740993", "9007199254740992", "4294967296", "4294967295", "2147483648")

test_that("zarr-python reads int64 and uint64 extremes written as v3, sharded and v2 (C and F) arrays", {
  skip_if_not_installed("bit64")
  python_zarr()
  v3 <- local_store_path()
  v2 <- local_store_path()
  z3 <- create_zarr(v3)
  z2 <- create_zarr(v2, zarr_format = 2)
  layouts <- list(
    default = function(b) b,
    portable_big = function(b) {
      b$portable <- TRUE
      m <- b$metadata()
      m$codecs[[1L]]$configuration$endian <- "big"
      m
    },
    sharded = function(b) {
      b$chunk_shape <- c(4, 4)
      b$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
      b
    }
  )
  cases <- list()
  for (type in c("int64", "uint64")) {
    vals <- fmt_int64(if (type == "int64") int64_extremes else uint64_extremes)
    x <- c(vals, fmt_int64(NA), rev(vals))
    x <- x[seq_len(4 * 6)]
    if (length(x) < 24L) x <- c(x, fmt_int64(rep("7", 24L - length(x))))
    dim(x) <- c(4, 6)
    for (name in names(layouts)) {
      b <- define_array(type, dim(x))
      b$chunk_shape <- c(3, 4)
      cases[[length(cases) + 1L]] <- fmt_write(z3, paste0(type, "_", name), layouts[[name]](b), x, type, v3,
                                               expect = list(zarr_format = 3))
    }
    for (order in c("F", "C")) {
      b <- define_array(type, dim(x))
      b$chunk_shape <- c(3, 4)
      b$portable <- order == "C"
      cases[[length(cases) + 1L]] <- fmt_write(z2, paste0(type, "_", order), b, x, type, v2,
                                               expect = list(zarr_format = 2, order = order))
    }
  }
  # the extremes survived the R side too
  ids <- vapply(cases, function(c) c$id, "")
  expect_identical(open_zarr(v2)[["/int64_C"]][], cases[[which(ids == paste0(basename(v2), ":int64_C"))]]$data)
  fmt_check_python(cases, "64-bit extremes")
})

# A 1-d result without its dim attribute.
as_plain <- function(x) {
  dim(x) <- NULL
  x
}

test_that("uint64 values above 2^63-1 written by zarr-python read as NA with a zarr_warning; the rest exactly", {
  skip_if_not_installed("bit64")
  py <- python_zarr()
  dir <- withr::local_tempdir()
  script <- file.path(dir, "write.py")
  writeLines(c(
    "import sys",
    "import numpy as np",
    "import zarr",
    "values = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 12345, 2**64 - 2, 9007199254740993], dtype='uint64')",
    "for fmt in (3, 2):",
    "    g = zarr.open_group(sys.argv[1] + '/v%d.zarr' % fmt, mode='w', zarr_format=fmt)",
    "    a = g.create_array('u', shape=(8,), chunks=(3,), dtype='uint64', fill_value=7)",
    "    a[...] = values",
    "    if fmt == 3:",
    "        s = g.create_array('s', shape=(8,), chunks=(2,), shards=(4,), dtype='uint64', fill_value=7)",
    "        s[...] = values"
  ), script)
  res <- run_python_command(py, c(script, dir))
  expect_identical(res$status, 0L, info = res$output)
  want <- fmt_int64(c("0", "1", "9223372036854775807", NA, NA, "12345", NA, "9007199254740993"))
  for (node in c("v3.zarr/u", "v3.zarr/s", "v2.zarr/u")) {
    parts <- strsplit(node, "/", fixed = TRUE)[[1]]
    arr <- open_zarr(file.path(dir, parts[1]))[[paste0("/", parts[2])]]
    expect_warning(got <- arr[], class = "zarr_warning",
                   regexp = sprintf("'/%s'.*3 value\\(s\\) that integer64 cannot hold", parts[2]))
    expect_identical(as_plain(got), want, info = node)
    # a selection of values that fit reads without a warning
    expect_no_warning(part <- arr[c(1:3, 6, 8)])
    expect_identical(as_plain(part), want[c(1:3, 6, 8)], info = node)
    # one value above 2^63-1 alone
    expect_warning(one <- arr[5], class = "zarr_warning", regexp = "1 value\\(s\\) that integer64")
    expect_identical(as_plain(one), fmt_int64(NA))
  }
})

# ------------------------------------------------------ consolidated metadata

# Expect that zarr-python saw, from consolidated metadata alone, exactly the
# nodes of `z` with their attributes and (for arrays) values.
expect_python_consolidated <- function(z, got, arrays, attrs, what) {
  if (!is.null(got$error)) {
    testthat::fail(sprintf("zarr-python could not open %s: %s", what, got$error))
    return(invisible())
  }
  expect_true(got$listing_refused, label = "zarr-python could not list through the no-listing store")
  groups <- setdiff(z$groups, "/")
  r_types <- stats::setNames(rep(c("group", "array"), c(length(groups), length(z$arrays))),
                             sub("^/", "", c(groups, z$arrays)))
  r_paths <- sort(names(r_types))
  py_paths <- sort(names(got$members))
  expect_identical(py_paths, r_paths, label = sprintf("the members zarr-python sees in %s", what))
  py_types <- vapply(got$members[py_paths], function(m) m$node_type, "")
  expect_identical(py_types, r_types[py_paths], label = sprintf("the node types zarr-python sees in %s", what))
  for (path in names(attrs)) {
    have <- if (path == "/") got$attributes else got$members[[path]]$attributes
    # The _FillValue (missing_value for strings) that add_array() gives a
    # v3 array is xarray's marker (?cf_decoding), checked in test-cf.R.
    for (k in intersect(c("_FillValue", "missing_value"), names(have))) have[[k]] <- NULL
    expect_identical(have, attrs[[path]], label = sprintf("zarr-python's attributes of '%s' in %s", path, what))
  }
  exact <- 0L
  for (case in arrays) {
    entry <- got$members[[case$path]]
    if (is.null(entry)) {
      testthat::fail(sprintf("zarr-python does not see array '%s' in %s", case$path, what))
      next
    }
    exact <- exact + fmt_expect_array(entry, case, sprintf("'%s' (%s)", case$path, what))
  }
  message(sprintf("zarr-python read %d of %d nodes and %d of %d arrays of %s exactly from consolidated metadata",
                  length(intersect(py_paths, r_paths)), length(r_paths), exact, length(arrays), what))
}

test_that("zarr-python opens a consolidated v3 hierarchy written by the package without listing", {
  skip_if_not_installed("bit64")
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store)
  z$root$set_attribute("title", "root \u00e9")
  g <- z$add_group("/", "g")
  g$set_attribute("kind", "group g")
  h <- g$add_group("h")
  h$set_attribute("level", 2L)
  z$add_group("/", "empty")
  z$add_group("/", "with space")
  arrays <- list()
  add <- function(parent, name, type, shape, def = NULL) {
    x <- fmt_values(type, prod(shape), seed = 8L)
    if (length(shape) > 1L) dim(x) <- shape
    b <- def %||% define_array(type, shape)
    path <- sub("^/", "", paste(if (parent == "/") "" else parent, name, sep = "/"))
    arr <- z$add_array(parent, name, b)
    arr$write(x)
    arr$set_attribute("units", paste("u of", name))
    arrays[[length(arrays) + 1L]] <<- list(path = path, data = x, type = type, shape = shape, na = python_fill[type],
                                           expect = list(zarr_format = 3))
  }
  add("/", "b", "float32", c(4, 5))
  add("/g", "a", "int64", 6)
  add("/g/h", "s", "string", c(3, 3))
  sharded <- define_array("int32", c(8, 6))
  sharded$chunk_shape <- c(4, 6)
  sharded$add_codec("sharding_indexed", list(chunk_shape = c(2, 3)))
  add("/", "sh", "int32", c(8, 6), sharded)
  add("/with space", "c", "complex128", c(2, 2))
  z$consolidate()
  # a node added after consolidation shows once consolidated again
  add("/g", "late", "uint16", c(3, 2))
  z$consolidate()
  root <- jsonlite::fromJSON(file.path(store, "zarr.json"), simplifyVector = FALSE)
  expect_true("g/late" %in% names(root$consolidated_metadata$metadata))
  result <- fmt_run_python(list(list(id = "v3", kind = "consolidated", store = normalizePath(store))))
  got <- result$jobs$v3
  expect_identical(got$zarr_format, 3L)
  attrs <- list("/" = list(title = "root \u00e9"), g = list(kind = "group g"), "g/h" = list(level = 2L),
                "g/a" = list(units = "u of a"), "sh" = list(units = "u of sh"))
  expect_python_consolidated(z, got, arrays, attrs, "a consolidated v3 hierarchy")
})

test_that("zarr-python opens a consolidated v2 hierarchy (.zmetadata) written by the package without listing", {
  skip_if_not_installed("bit64")
  python_zarr()
  store <- local_store_path()
  z <- create_zarr(store, zarr_format = 2)
  z$root$set_attribute("title", "root v2")
  g <- z$add_group("/", "g")
  g$set_attribute("kind", "group g")
  g$add_group("h")
  z$add_group("/", "empty")
  arrays <- list()
  add <- function(parent, name, type, shape, portable = FALSE) {
    x <- fmt_values(type, prod(shape), seed = 9L)
    if (length(shape) > 1L) dim(x) <- shape
    b <- define_array(type, shape)
    b$portable <- portable
    path <- sub("^/", "", paste(if (parent == "/") "" else parent, name, sep = "/"))
    arr <- z$add_array(parent, name, b)
    arr$write(x)
    arr$set_attribute("units", paste("u of", name))
    arrays[[length(arrays) + 1L]] <<- list(path = path, data = x, type = type, shape = shape, na = python_fill[type],
                                           expect = list(zarr_format = 2,
                                                         order = if (portable || length(shape) < 2L) "C" else "F"))
  }
  add("/", "b", "float64", c(4, 5))
  add("/g", "a", "int64", 6)
  add("/g/h", "c", "uint16", c(3, 2, 2), portable = TRUE)
  z$consolidate()
  expect_true(file.exists(file.path(store, ".zmetadata")))
  result <- fmt_run_python(list(list(id = "v2", kind = "consolidated", store = normalizePath(store))))
  got <- result$jobs$v2
  expect_identical(got$zarr_format, 2L)
  # (v2 keeps the dimension names that add_array() gives in the attributes)
  attrs <- list("/" = list(title = "root v2"), g = list(kind = "group g"),
                "g/a" = list(`_ARRAY_DIMENSIONS` = list("a_dim_0"), units = "u of a"))
  expect_python_consolidated(z, got, arrays, attrs, "a consolidated v2 hierarchy")
})
