# zarr-python 3 reads what this package writes. Each test writes one array
# of every data type with a codec variant into a store, then ONE Python
# process (from the venv of helper-python.R) opens them all with
# zarr.open_array and writes what it read as JSON; the values are compared
# exactly, bit for bit, with the data written. R is column-major: R's
# x[i, j, k] must be zarr-python's a[i-1, j-1, k-1].

interop_types <- c("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                   "float16", "float32", "float64", "complex64", "complex128")

# The zarr-python script: argv[1] the store, argv[2] a JSON list of array
# names, argv[3] the output. Values are encoded by `encode` of
# python_script_head (helper-interop.R).
interop_script <- paste0(python_script_head, '
store, names, out = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
result = {"zarr_version": zarr.__version__, "arrays": {}}
for name in names:
    try:
        a = zarr.open_array(store=store, path=name, mode="r")
        result["arrays"][name] = {
            "dtype": np.dtype(a.dtype).name,
            "shape": list(a.shape),
            "values": encode(a[...]),
        }
    except Exception as e:
        result["arrays"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
with open(out, "w") as f:
    json.dump(result, f)
')

int64 <- function(x) bit64::as.integer64(x)

# `n` values of `data_type`, exactly representable in it, without the value
# R reads as NA (the default fill value), in a random order that includes
# the extremes and special values of the type.
interop_values <- function(data_type, n) {
  withr::with_seed(n * 100 + match(data_type, interop_types), {
    mix <- function(special, pool) {
      v <- if (n > length(special)) c(special, pool(n - length(special))) else special
      v[sample.int(length(v), n)]
    }
    any_int <- function(k, lo, hi) sample(lo:hi, k, replace = TRUE)
    big_int64 <- function(k, signed) {
      hi <- int64(round(stats::runif(k, if (signed) -2^31 else 0, 2^31)))
      hi * int64(2^31) + int64(round(stats::runif(k, 0, 2^31 - 1)))
    }
    f32 <- function(k) round(stats::runif(k, -2^23, 2^23)) * 2^sample(-30:30, k, replace = TRUE)
    f64 <- function(k) stats::runif(k, -1e6, 1e6) * 10^sample(-200:200, k, replace = TRUE)
    switch(data_type,
      bool = mix(c(TRUE, FALSE), function(k) sample(c(TRUE, FALSE), k, replace = TRUE)),
      int8 = mix(c(-127L, 127L, 0L, -1L), function(k) any_int(k, -127L, 127L)),
      int16 = mix(c(-32767L, 32767L, 0L, -1L, 256L), function(k) any_int(k, -32767L, 32767L)),
      int32 = mix(c(-2147483647L, 2147483647L, 0L, -1L, 65536L),
                  function(k) as.integer(round(stats::runif(k, -2147483647, 2147483647)))),
      int64 = mix(int64(c("-9223372036854775807", "9223372036854775807", "9007199254740993",
                          "-9007199254740993", "0", "-1", "4294967296")),
                  function(k) big_int64(k, signed = TRUE)),
      uint8 = mix(c(0L, 254L, 128L), function(k) any_int(k, 0L, 254L)),
      uint16 = mix(c(0L, 65534L, 32768L), function(k) any_int(k, 0L, 65534L)),
      uint32 = mix(int64(c("0", "4294967294", "2147483648", "65536")),
                   function(k) int64(round(stats::runif(k, 0, 4294967294)))),
      uint64 = mix(int64(c("0", "9223372036854775807", "9007199254740993", "4294967296")),
                   function(k) big_int64(k, signed = FALSE)),
      float16 = mix(c(65504, -65504, 2^-24, -2^-24, 2^-14, Inf, -Inf, 0, -0),
                    function(k) sample(seq(-30, 30, by = 0.25), k, replace = TRUE)),
      float32 = mix(c(3.4028234663852886e38, -3.4028234663852886e38, 2^-149, 2^-126, Inf, -Inf, 0, -0,
                      16777215, 13421773 * 2^-27), f32),
      float64 = mix(c(.Machine$double.xmax, -.Machine$double.xmax, 2^-1074, .Machine$double.xmin, Inf, -Inf,
                      0, -0, pi, 1 / 3, 2^53 + 2), f64),
      complex64 = complex(real = interop_values("float32", n), imaginary = rev(interop_values("float32", n))),
      complex128 = complex(real = interop_values("float64", n), imaginary = rev(interop_values("float64", n))),
      stop("unknown data type ", data_type)
    )
  })
}

# Write one array per data type into a new store. `define(b)` edits the
# builder of each and returns it or a metadata list. `na` is a function of
# the dimensions giving the positions to set to NA, or NULL.
write_interop_arrays <- function(path, types, shape, chunk_shape = NULL, define = identity, na = NULL) {
  z <- create_zarr(path)
  lapply(stats::setNames(types, types), function(type) {
    x <- interop_values(type, prod(shape))
    if (length(shape)) dim(x) <- shape
    if (!is.null(na)) x[na(shape)] <- NA
    error <- tryCatch({
      b <- define_array(type, shape)
      if (!is.null(chunk_shape)) b$chunk_shape <- chunk_shape
      arr <- z$add_array("/", type, define(b))
      arr$write(x)
      NULL
    }, error = function(e) conditionMessage(e))
    list(name = type, data_type = type, shape = shape, data = x, error = error)
  })
}

# Run the script over the arrays of a store; the parsed JSON result.
read_with_python <- function(path, names) {
  run_python_script(interop_script, jsonlite::toJSON(unname(names)), normalizePath(path))
}

# Expect that zarr-python read every array exactly; report how many did.
expect_python_reads <- function(cases, result, what) {
  exact <- 0L
  for (case in cases) {
    label <- sprintf("'%s' (%s)", case$name, what)
    if (!is.null(case$error)) {
      testthat::fail(sprintf("the package could not write %s: %s", label, case$error))
      next
    }
    got <- result$arrays[[case$name]]
    if (!is.null(got$error)) {
      testthat::fail(sprintf("zarr-python could not read %s: %s", label, got$error))
      next
    }
    ok_type <- identical(got$dtype, case$data_type)
    expect_identical(got$dtype, case$data_type, label = sprintf("zarr-python's dtype of %s", label))
    shape <- as.numeric(unlist(got$shape))
    ok_shape <- identical(shape, as.numeric(case$shape))
    expect_identical(shape, as.numeric(case$shape), label = sprintf("zarr-python's shape of %s", label))
    if (!ok_shape) next
    want <- encode_r(case$data, case$data_type)
    have <- c_order_to_r(encode_python(got$values, case$data_type), case$shape)
    bad <- which(have != want)
    ok_values <- identical(have, want)
    if (ok_values) {
      testthat::succeed()
    } else {
      ind <- if (length(case$shape) > 1L) arrayInd(bad, case$shape) else matrix(bad)
      at <- apply(ind[seq_len(min(5L, length(bad))), , drop = FALSE], 1, paste, collapse = ", ")
      testthat::fail(sprintf("zarr-python read %d of %d values of %s differently, e.g. %s", length(bad),
                             length(want), label,
                             paste(sprintf("[%s] R wrote %s, Python read %s", at, want[bad][seq_along(at)],
                                           have[bad][seq_along(at)]), collapse = "; ")))
    }
    exact <- exact + (ok_type && ok_values)
  }
  message(sprintf("zarr-python %s read %d of %d arrays (%s) exactly", result$zarr_version, exact,
                  length(cases), what))
  invisible(exact)
}

# The codec variants: a name, the shape, the chunk shape and how the
# builder is changed.
set_endian_big <- function(b) {
  m <- b$metadata()
  for (i in seq_along(m$codecs)) {
    if (m$codecs[[i]]$name == "bytes" && length(m$codecs[[i]]$configuration)) {
      m$codecs[[i]]$configuration$endian <- "big"
    }
  }
  m
}
use_compressor <- function(codec, configuration) {
  function(b) {
    b$remove_codec("blosc")
    if (!is.null(codec)) b$add_codec(codec, configuration)
    b
  }
}
interop_variants <- list(
  list(what = "the default codecs (transpose, bytes, blosc) in one chunk", shape = c(3, 5, 7)),
  list(what = "the default codecs in edge chunks", shape = c(3, 5, 7), chunks = c(2, 2, 3)),
  list(what = "row-major chunks (portable, no transpose)", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = function(b) {
         b$portable <- TRUE
         b
       }),
  list(what = "big-endian bytes", shape = c(3, 5, 7), chunks = c(2, 2, 3), define = set_endian_big),
  list(what = "big-endian bytes without transpose", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = function(b) {
         b$portable <- TRUE
         set_endian_big(b)
       }),
  list(what = "no compressor", shape = c(3, 5, 7), chunks = c(2, 2, 3), define = use_compressor(NULL)),
  list(what = "gzip", shape = c(3, 5, 7), chunks = c(2, 2, 3), define = use_compressor("gzip", list(level = 5))),
  list(what = "zstd level 10 with checksum", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = use_compressor("zstd", list(level = 10, checksum = TRUE))),
  list(what = "blosc lz4 with byte shuffle", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = use_compressor("blosc", list(cname = "lz4", clevel = 5, shuffle = "shuffle"))),
  list(what = "blosc zstd with bit shuffle", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = use_compressor("blosc", list(cname = "zstd", clevel = 3, shuffle = "bitshuffle"))),
  list(what = "blosc blosclz without shuffle", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = use_compressor("blosc", list(cname = "blosclz", clevel = 9, shuffle = "noshuffle"))),
  list(what = "a crc32c checksum after zstd", shape = c(3, 5, 7), chunks = c(2, 2, 3),
       define = function(b) b$add_codec("crc32c", NULL)),
  list(what = "0-d (scalar) arrays", shape = numeric(0)),
  list(what = "1-d arrays in several chunks", shape = 50, chunks = 7),
  list(what = "4-d arrays", shape = c(2, 3, 4, 5), chunks = c(1, 2, 3, 2))
)

for (v in interop_variants) {
  local({
    v <- v
    test_that(sprintf("zarr-python reads every data type written with %s", v$what), {
      skip_if_not_installed("bit64")
      python_zarr()
      path <- local_store_path()
      define <- if (is.null(v$define)) identity else v$define
      cases <- write_interop_arrays(path, interop_types, v$shape, v$chunks, define)
      result <- read_with_python(path, names(cases))
      expect_python_reads(cases, result, v$what)
    })
  })
}

test_that("zarr-python reads the fill value where R wrote NA, in written and unwritten chunks", {
  skip_if_not_installed("bit64")
  python_zarr()
  path <- local_store_path()
  # all of chunk (1, 1, 1), which holds only NA, and scattered elements
  na_at <- function(shape) {
    m <- array(FALSE, shape)
    m[1:2, 1:2, 1:3] <- TRUE
    m[c(5, 17, 60, 105)] <- TRUE
    m
  }
  types <- setdiff(interop_types, "bool")
  cases <- write_interop_arrays(path, types, c(3, 5, 7), c(2, 2, 3), na = na_at)
  result <- read_with_python(path, names(cases))
  expect_python_reads(cases, result, "NA as the fill value")
})
