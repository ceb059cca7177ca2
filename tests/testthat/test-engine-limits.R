# What a store or a definition may ask of the engine: sizes it cannot
# hold, stores rewritten while they are read, and calls stopped by the
# user. None of it may abort R, hang, or return another chunk's values.
# The cases that once aborted R run in a child R process, so that a
# regression fails a test instead of ending the suite.

# Run `code` (lines of R) in a new R process with this package; its
# output lines, and its exit status as attribute "status".
run_in_child <- function(code) {
  script <- withr::local_tempfile(fileext = ".R", .local_envir = parent.frame())
  writeLines(c("library(zarr)", code), script)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"), shQuote(script),
    stdout = TRUE, stderr = TRUE, env = paste0("R_LIBS=", shQuote(libs))
  ))
  attr(out, "status") <- attr(out, "status") %||% 0L
  out
}

# R code that prints the classes of the condition `expr` raises, on one
# line after "classes:".
print_classes <- function(expr) {
  sprintf(
    paste(
      "r <- tryCatch({%s; 'no error'}, error = function(e) e)",
      "cat('classes:', class(r), '\\n'); cat(conditionMessage(r), '\\n')",
      sep = "; "
    ),
    expr
  )
}

classes_of <- function(out) {
  line <- grep("^classes:", out, value = TRUE)
  if (length(line) != 1L) {
    return(character())
  }
  strsplit(sub("^classes: ", "", trimws(line)), " ")[[1]]
}

# A store of a few hundred bytes: array "/a" of int32 with the given
# chunk shape and codecs (JSON text), and chunk "a/c/0" holding `chunk`.
write_small_store <- function(path, shape, chunk_shape, codecs, chunk) {
  dir.create(file.path(path, "a", "c"), recursive = TRUE)
  writeLines('{"zarr_format": 3, "node_type": "group", "attributes": {}}', file.path(path, "zarr.json"))
  writeLines(sprintf(
    paste0(
      '{"zarr_format": 3, "node_type": "array", "shape": [%s], "data_type": "int32",',
      ' "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [%s]}},',
      ' "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": %s}'
    ),
    shape, chunk_shape, codecs
  ), file.path(path, "a", "zarr.json"))
  writeBin(chunk, file.path(path, "a", "c", "0"))
}

test_that("a chunk shape of 1e12 in a small store is a classed error, not an abort", {
  path <- withr::local_tempdir()
  codecs <- paste0(
    '[{"name": "bytes", "configuration": {"endian": "little"}},',
    ' {"name": "gzip", "configuration": {"level": 1}}]'
  )
  # zlib data, which the gzip codec reads too: 100 int32 values.
  chunk <- memCompress(writeBin(1:100, raw(), size = 4, endian = "little"), "gzip")
  write_small_store(path, "100", "1000000000000", codecs, chunk)
  out <- run_in_child(c(
    sprintf("a <- open_zarr(%s)[['/a']]", deparse(path)),
    print_classes("a[1]")
  ))
  expect_identical(attr(out, "status"), 0L)
  cls <- classes_of(out)
  expect_true("zarr_error" %in% cls, info = paste(out, collapse = "\n"))
  expect_true(any(c("zarr_error_memory", "zarr_error_corrupt_chunk") %in% cls))
})

test_that("writing to an array of chunk shape 1e12 is a memory error, not an abort", {
  out <- run_in_child(c(
    "def <- define_array('int32', 100)",
    "def$chunk_shape <- 1e12",
    "a <- create_zarr()$add_array('/', 'a', def)",
    print_classes("a[1] <- 1L")
  ))
  expect_identical(attr(out, "status"), 0L)
  expect_identical(classes_of(out)[1:2], c("zarr_error_memory", "zarr_error"))
  # (a new process: the package's default chunk key separator, ".")
  expect_match(paste(out, collapse = "\n"), "chunk 'a/c.0'", fixed = TRUE)
})

test_that("a 400 MB chunk read with too little memory is a memory error, not an abort", {
  skip_on_cran()
  skip_if_not(.Platform$OS.type == "unix" && nzchar(Sys.which("bash")), "needs ulimit")
  path <- file.path(withr::local_tempdir(), "s.zarr")
  made <- run_in_child(c(
    sprintf("z <- create_zarr(%s)", deparse(path)),
    "def <- define_array('float64', 50e6)",
    "def$chunk_shape <- 50e6",
    "a <- z$add_array('/', 'a', def)",
    "a[] <- as.numeric(seq_len(50e6))",
    "cat('written\\n')"
  ))
  expect_true("written" %in% made)
  reader <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(zarr)",
    sprintf("a <- open_zarr(%s)[['/a']]", deparse(path)),
    print_classes("a[]")
  ), reader)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  # 800 MB of address space: R, the 400 MB result, and not the chunk too.
  out <- suppressWarnings(system2("bash", c("-c", shQuote(sprintf(
    "ulimit -v 800000; R_LIBS=%s %s %s",
    shQuote(libs), shQuote(file.path(R.home("bin"), "Rscript")), shQuote(reader)
  ))), stdout = TRUE, stderr = TRUE))
  expect_null(attr(out, "status"))
  cls <- classes_of(out)
  expect_true("zarr_error" %in% cls, info = paste(out, collapse = "\n"))
  expect_true(any(c("zarr_error_memory", "zarr_error_io") %in% cls), info = paste(out, collapse = "\n"))
})

test_that("a shard whose index would take 16 GB is a classed error, not an abort", {
  path <- withr::local_tempdir()
  # 1e9 inner chunks of one element: an index of 16e9 bytes, in a shard
  # file of 400 bytes.
  codecs <- paste0(
    '[{"name": "sharding_indexed", "configuration": {"chunk_shape": [1],',
    ' "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],',
    ' "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]'
  )
  write_small_store(path, "1000000000", "1000000000", codecs, as.raw(rep(7L, 400)))
  out <- run_in_child(c(
    sprintf("a <- open_zarr(%s)[['/a']]", deparse(path)),
    print_classes("a[1]")
  ))
  expect_identical(attr(out, "status"), 0L)
  expect_identical(classes_of(out)[1:2], c("zarr_error_corrupt_chunk", "zarr_error"))
})

test_that("a selection whose element count overflows is a selection error, not an empty result", {
  for (shape in list(c(2^32, 2^32), c(2^34, 2^30), c(2^20, 2^20, 2^24))) {
    a <- create_zarr()$add_array("/", "a", define_array("int32", shape))
    expect_error(a[], class = "zarr_error_selection", regexp = "too large")
  }
})

test_that("a selection of more elements than R can hold fails at once instead of hanging", {
  a <- create_zarr()$add_array("/", "a", define_array("int32", c(2^20, 2^44 + 1)))
  t <- system.time(expect_error(a[], class = "zarr_error_selection"))
  # The old plan walked 2^44 chunks; anything short of a minute is fine.
  expect_lt(t[["elapsed"]], 60)
  expect_error(a[1:2, ], class = "zarr_error_selection", regexp = "more than an R vector")
  # The array still reads where R can hold the result.
  expect_identical(a[1, 1], NA_integer_)
})

test_that("a read stopped by setTimeLimit() stops early with a classed error, and the next read is right", {
  # One thread and 40,000 or more small chunks: a read of 1.5 s or more (a
  # second at least when timed again, below, or it is skipped). Up to
  # 360,000 chunks: since blosc's zstd blocks keep their decoder, 160,000
  # of these chunks read in 0.7-0.8 s here. (The parallel path stops the
  # same way: see pool.rs's tests.)
  withr::local_options(zarr.num_threads = 1L)
  z <- create_zarr()
  made <- long_running_array(function(n) {
    def <- define_array("float64", c(n, n))
    def$chunk_shape <- c(10, 10)
    a <- z$add_array("/", paste0("a", n), def)
    a[] <- matrix(as.numeric(seq_len(n * n)), n)
    a
  }, function(a) a[], min_seconds = 1.5, max_n = 6000)
  a <- made$array
  x <- matrix(as.numeric(seq_len(made$n^2)), made$n)
  full <- system.time(y <- a[])[["elapsed"]]
  expect_identical(y, x)
  skip_if(full < 1, "the full read is too quick to stop half way even at the largest size")
  started <- Sys.time()
  err <- tryCatch(
    {
      setTimeLimit(elapsed = 0.3, transient = TRUE)
      a[]
    },
    error = function(e) e
  )
  setTimeLimit()
  took <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  expect_s3_class(err, "zarr_error_interrupted")
  expect_s3_class(err, "interrupt")
  expect_lt(took, full / 2 + 0.5)
  expect_identical(a[], x)
})

test_that("a shard rewritten with a changing layout while it is read never gives another inner chunk's values", {
  path <- withr::local_tempdir()
  z <- create_zarr(path)
  def <- define_array("int32", 16)
  def$chunk_shape <- 16
  def$add_codec("sharding_indexed", list(chunk_shape = 4))
  a <- z$add_array("/", "a", def)
  # Inner chunk j (1 to 4) holds j * 1e6 + round * 10 + 1:4, or for j > 1
  # only the fill value (then it is not stored): the offsets of the others
  # move. Inner chunk 1 always has values, so the shard is always replaced,
  # never erased and made anew.
  a[] <- rep(1:4, each = 4) * 1e6L + rep(1:4, 4)
  done <- file.path(withr::local_tempdir(), "done")
  writer <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    "library(zarr)",
    sprintf("a <- open_zarr(%s)[['/a']]", deparse(path)),
    "end <- Sys.time() + 3",
    "round <- 0L",
    "while (Sys.time() < end) {",
    "  round <- round + 1L",
    "  v <- rep(1:4, each = 4) * 1e6L + round * 10L + rep(1:4, 4)",
    "  v[rep(c(FALSE, bitwAnd(round, c(1L, 2L, 4L)) == 0), each = 4)] <- NA",
    "  a[] <- v",
    "}",
    sprintf("file.create(%s)", deparse(done))
  ), writer)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  system2(file.path(R.home("bin"), "Rscript"), shQuote(writer),
    wait = FALSE, stdout = FALSE, stderr = FALSE, env = paste0("R_LIBS=", shQuote(libs))
  )
  reads <- 0L
  wrong <- 0L
  give_up <- Sys.time() + 30
  while (!file.exists(done) && Sys.time() < give_up) {
    v <- a[13:16]
    reads <- reads + 1L
    ok <- all(is.na(v)) || (all(v %/% 1e6L == 4L) && identical(v %% 10L, 1:4) &&
      length(unique(v %/% 10L)) == 1L)
    if (!ok) wrong <- wrong + 1L
  }
  expect_true(file.exists(done))
  expect_gt(reads, 10L)
  expect_identical(wrong, 0L)
})

test_that("a zstd chunk of strings whose header claims 2.9 GB is a corrupt chunk error (fuzz regression)", {
  # Found by the codec_decode fuzz target: 13 bytes of zstd frame whose
  # header gives a content size of 2.9 GB. Strings have no expected size,
  # so the claim once sized the output buffer.
  path <- withr::local_tempdir()
  dir.create(file.path(path, "s", "c"), recursive = TRUE)
  writeLines('{"zarr_format": 3, "node_type": "group", "attributes": {}}', file.path(path, "zarr.json"))
  writeLines(paste0(
    '{"zarr_format": 3, "node_type": "array", "shape": [64], "data_type": "string",',
    ' "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64]}},',
    ' "chunk_key_encoding": {"name": "default"}, "fill_value": "",',
    ' "codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]}'
  ), file.path(path, "s", "zarr.json"))
  frame <- as.raw(c(0x28, 0xb5, 0x2f, 0xfd, 0x84, 0x84, 0x84, 0x84, 0x00, 0x52, 0xb0, 0x0d, 0x2b))
  writeBin(frame, file.path(path, "s", "c", "0"))
  a <- open_zarr(path)[["/s"]]
  err <- expect_error(a[], class = "zarr_error_corrupt_chunk")
  expect_match(conditionMessage(err), "c/0")
  expect_match(conditionMessage(err), "zstd")
})

expect_parquet_refs_refused <- function(case) {
  path <- withr::local_tempdir()
  dir.create(file.path(path, "a"))
  writeLines(paste0(
    '{"record_size": 10, "metadata": {".zgroup": {"zarr_format": 2},',
    ' "a/.zarray": {"zarr_format": 2, "shape": [10], "chunks": [1], "dtype": "<i8",',
    ' "compressor": null, "fill_value": 0, "filters": null, "order": "C"}}}'
  ), file.path(path, ".zmetadata"))
  file.copy(test_path("fuzz", case), file.path(path, "a", "refs.0.parq"))
  a <- open_zarr(path)[["/a"]]
  err <- expect_error(a[], class = "zarr_error_metadata", info = case)
  expect_match(conditionMessage(err), "refs.0.parq", fixed = TRUE, info = case)
  expect_match(conditionMessage(err), "malformed", info = case)
}

test_that("Parquet reference files the parquet crate asserts on are metadata errors (fuzz regressions)", {
  # Found by the reference_parquet fuzz target: a data page missing its
  # dictionary page, and a footer giving a column a negative start. The
  # parquet crate asserts on both; the reference set refuses the file.
  for (case in c("parquet_dictionary_page.parq", "parquet_negative_column_start.parq")) {
    expect_parquet_refs_refused(case)
  }
})

test_that("a panic the engine catches is an R error naming its cause, and Rust prints nothing", {
  # In a new R process, so that its stderr can be read: Rust's panic hook
  # would print "thread ... panicked at" (and a backtrace, asked for here).
  skip_if_not_installed("callr")
  fuzz <- normalizePath(test_path("fuzz", "parquet_dictionary_page.parq"))
  err_file <- withr::local_tempfile()
  got <- callr::r(function(fuzz) {
    path <- tempfile()
    dir.create(file.path(path, "a"), recursive = TRUE)
    writeLines(paste0(
      '{"record_size": 10, "metadata": {".zgroup": {"zarr_format": 2},',
      ' "a/.zarray": {"zarr_format": 2, "shape": [10], "chunks": [1], "dtype": "<i8",',
      ' "compressor": null, "fill_value": 0, "filters": null, "order": "C"}}}'
    ), file.path(path, ".zmetadata"))
    file.copy(fuzz, file.path(path, "a", "refs.0.parq"))
    a <- zarr::open_zarr(path)[["/a"]]
    err <- tryCatch(a[], error = identity)
    list(class = class(err), message = conditionMessage(err))
  }, args = list(fuzz = fuzz), stderr = err_file, env = c(callr::rcmd_safe_env(), RUST_BACKTRACE = "1"))
  expect_true("zarr_error_metadata" %in% got$class)
  # the decoder's own words, after "malformed"
  expect_match(got$message, "refs.0.parq': malformed \\(.*[a-z]{4}.*\\)")
  stderr <- paste(readLines(err_file, warn = FALSE), collapse = "\n")
  expect_false(grepl("panicked", stderr, fixed = TRUE), label = stderr)
  expect_false(grepl("backtrace", stderr, ignore.case = TRUE), label = stderr)
})
