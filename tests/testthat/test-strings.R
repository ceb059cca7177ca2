test_that("strings round-trip with NA, empty strings and unicode kept apart", {
  x <- matrix(c("a", "", NA, "\u65e5\u672c\u8a9e", "emoji \U0001f389", "with\nnewline"), 2, 3)
  for (portable in c(FALSE, TRUE)) {
    def <- define_array("string", dim(x))
    def$chunk_shape <- c(1, 2)
    def$portable <- portable
    z <- create_zarr(local_store_path())
    arr <- z$add_array("/", "s", def)
    arr[] <- x
    expect_identical(arr[], x)
    expect_identical(open_zarr(z$store$root)[["/s"]][2, 2:3], x[2, 2:3])
  }
})

test_that("string chunks that are all NA are not stored, and read back as NA", {
  z <- create_zarr()
  def <- define_array("string", 6)
  def$chunk_shape <- 2
  arr <- z$add_array("/", "s", def)
  arr[] <- c("a", "b", NA, NA, "", "c")
  expect_false(z$store$exists("s/c/1"))
  expect_identical(arr$read(), c("a", "b", NA, NA, "", "c"))
})

test_that("a string fill value other than the default is text, as in zarr-python and R-CF", {
  z <- create_zarr()
  def <- define_array("string", 3)
  def$fill_value <- ""
  arr <- z$add_array("/", "s", def)
  expect_identical(arr[], c("", "", ""))
  arr[] <- c("x", "", "y")
  expect_identical(arr$read(), c("x", "", "y"))
  # NA has no string to stand for it here: refused, nothing written
  expect_error(arr[] <- c("x", NA, "z"), class = "zarr_error_type", regexp = "'/s'.*value 2 is NA")
  expect_identical(arr[], c("x", "", "y"))
  def$shape <- 10
  def$chunk_shape <- 5
  def$fill_value <- "missing"
  sparse <- z$add_array("/", "sparse", def)
  sparse[1:5] <- letters[1:5]
  expect_identical(sparse[4:7], c("d", "e", "missing", "missing"))
  expect_identical(sparse[6:10], rep("missing", 5))
  expect_null(sparse$attributes$missing_value)
})

test_that("a string chunk with invalid UTF-8 is a corrupt chunk naming its key", {
  path <- local_store_path()
  z <- create_zarr(path)
  def <- define_array("string", 2)
  def$remove_codec("zstd")
  arr <- z$add_array("/", "s", def)
  arr[] <- c("ab", "cd")
  # u32 count, then u32 length + bytes for each string
  bad <- c(writeBin(2L, raw(), endian = "little"), writeBin(2L, raw(), endian = "little"), as.raw(c(0xff, 0xfe)),
           writeBin(2L, raw(), endian = "little"), charToRaw("cd"))
  writeBin(bad, file.path(path, "s", "c", "0"))
  expect_error(open_zarr(path)[["/s"]][], class = "zarr_error_corrupt_chunk", regexp = "s/c/0")
})

test_that("numbers cannot be written to a string array", {
  arr <- create_zarr()$add_array("/", "s", define_array("string", 2))
  expect_error(arr[] <- 1:2, class = "zarr_error_type", regexp = "string")
})

# ------------------------------------------------------ fixed-width strings

# A v2 string array `name` of `dtype` ("<U5", "|S5", ...) in the zarr `z`.
fixed_width_array <- function(z, name, dtype, shape, chunks = shape, portable = FALSE, fill = NULL) {
  def <- define_array("string", shape)
  def$chunk_shape <- chunks
  def$portable <- portable
  def$add_codec("numpy.fixed_string", list(dtype = dtype))
  if (!is.null(fill)) def$fill_value <- fill
  z$add_array("/", name, def)
}

test_that("fixed-width v2 strings round-trip, \"\" reads as \"\" and .zarray has NumPy's dtype", {
  x <- matrix(c("ab", "", "\u00e9t\u00e9", "\u65e5\u672c", "xyzwv", "R", "", "\U0001f389"), 2, 4)
  path <- local_store_path()
  z <- create_zarr(path, zarr_format = 2)
  for (dtype in c("<U5", ">U5", "|S6")) {
    for (portable in c(FALSE, TRUE)) {
      name <- paste0(if (portable) "C" else "F", substr(dtype, 2, 2), if (startsWith(dtype, ">")) "big" else "")
      arr <- fixed_width_array(z, name, dtype, dim(x), chunks = c(2, 3), portable = portable)
      arr[] <- x
      expect_identical(arr[], x, info = name)
      back <- open_zarr(path)[[paste0("/", name)]]
      expect_identical(back[], x, info = name)
      expect_identical(back[2, 2:4], x[2, 2:4], info = name)
      zarray <- jsonlite::fromJSON(file.path(path, name, ".zarray"), simplifyVector = FALSE)
      expect_identical(zarray$dtype, dtype)
      expect_identical(zarray$fill_value, "")
      expect_identical(zarray$order, if (portable) "C" else "F")
      expect_null(zarray$filters)
    }
  }
})

test_that("fixed-width strings have no NA: missing chunks read as the fill value, never NA", {
  z <- create_zarr(zarr_format = 2)
  arr <- fixed_width_array(z, "u", "<U3", 6, chunks = 2)
  expect_identical(arr$read(), rep("", 6))
  arr[3:4] <- c("a", "")
  expect_identical(arr$read(), c("", "", "a", "", "", ""))
  # a fill value of their own
  dash <- fixed_width_array(z, "dash", "|S2", 4, chunks = 2, fill = "-")
  dash[1] <- "ok"
  expect_identical(dash$read(), c("ok", "-", "-", "-"))
  expect_identical(dash$metadata$fill_value, "-")
})

test_that("writing NA or a string longer than the width is zarr_error_type naming the array; nothing is written", {
  path <- local_store_path()
  z <- create_zarr(path, zarr_format = 2)
  u <- fixed_width_array(z, "u", "<U3", 4)
  s <- fixed_width_array(z, "s", "|S3", 4)
  u[] <- c("\u00e9\u00e9\u00e9", "abc", "", "x") # U counts characters
  s[] <- c("\u00e9", "abc", "", "x") # S counts UTF-8 bytes
  before <- list(u = u[], s = s[], files = sort(list.files(path, recursive = TRUE, all.files = TRUE)))
  expect_error(u[2] <- NA, class = "zarr_error_type", regexp = "'/u'.*NA")
  expect_error(u[] <- c("a", NA, "b", "c"), class = "zarr_error_type", regexp = "'/u'.*value 2 is NA")
  expect_error(u[1:2] <- c("ok", "abcd"), class = "zarr_error_type", regexp = "'/u'.*4 characters.*<U3")
  expect_error(s[1] <- "\u00e9\u00e9", class = "zarr_error_type", regexp = "'/s'.*4 UTF-8 bytes.*\\|S3")
  expect_error(s[1] <- NA_character_, class = "zarr_error_type", regexp = "'/s'")
  expect_identical(list(u = u[], s = s[], files = sort(list.files(path, recursive = TRUE, all.files = TRUE))), before)
})

test_that("the numpy.fixed_string codec is checked when it is added and when the array is created", {
  def <- define_array("string", 3)
  expect_error(def$add_codec("numpy.fixed_string", list(dtype = "U5")), class = "zarr_error_argument")
  expect_error(def$add_codec("numpy.fixed_string", NULL), class = "zarr_error_argument", regexp = "dtype")
  expect_error(define_array("int32", 3)$add_codec("numpy.fixed_string", list(dtype = "<U5")),
               class = "zarr_error_argument", regexp = "string")
  def$add_codec("numpy.fixed_string", list(dtype = "<U5"))
  expect_identical(vapply(def$codecs, function(c) c$name, ""), c("numpy.fixed_string", "zstd"))
  expect_identical(def$codecs[[1]]$mode, "array -> bytes")
  expect_identical(def$fill_value, "")
  # added again, it replaces itself
  def$add_codec("numpy.fixed_string", list(dtype = "|S2"))
  expect_identical(def$codecs[[1]]$configuration$dtype, "|S2")
  # a fill value that does not fit, a width of 0, and Zarr v3 are refused by the engine
  def$fill_value <- "abc"
  expect_warning(expect_null(create_zarr(zarr_format = 2)$add_array("/", "a", def)), class = "zarr_warning",
                 regexp = "'/a'.*fill value")
  def$fill_value <- ""
  def$add_codec("numpy.fixed_string", list(dtype = "<U0"))
  expect_warning(expect_null(create_zarr(zarr_format = 2)$add_array("/", "a", def)), class = "zarr_warning",
                 regexp = "<U0")
  def$add_codec("numpy.fixed_string", list(dtype = "<U2"))
  expect_warning(expect_null(create_zarr()$add_array("/", "v3", def)), class = "zarr_warning",
                 regexp = "array '/v3'.*Zarr v2")
})

test_that("a fixed-width chunk of the wrong size or with a bad code point is a corrupt chunk naming its key", {
  path <- local_store_path()
  z <- create_zarr(path, zarr_format = 2)
  def <- define_array("string", 2)
  def$remove_codec("zstd")
  def$add_codec("numpy.fixed_string", list(dtype = "<U2"))
  arr <- z$add_array("/", "u", def)
  arr[] <- c("ab", "c")
  chunk <- file.path(path, "u", "0")
  le32 <- function(i) writeBin(as.integer(i), raw(), endian = "little")
  expect_identical(readBin(chunk, "raw", 100), c(le32(utf8ToInt("a")), le32(utf8ToInt("b")), le32(utf8ToInt("c")),
                                                 le32(0)))
  writeBin(c(le32(utf8ToInt("a")), le32(0xD800), le32(0), le32(0)), chunk)
  expect_error(open_zarr(path)[["/u"]][], class = "zarr_error_corrupt_chunk", regexp = "u/0.*D800")
  writeBin(le32(1:3), chunk)
  expect_error(open_zarr(path)[["/u"]][], class = "zarr_error_corrupt_chunk", regexp = "u/0")
})

# ------------------------------------------------------------ sharded strings

test_that("sharded string arrays round-trip with NA, \"\", partial writes and all-NA shards left out", {
  x <- matrix(sprintf("%d,%d \u00e9", rep(1:7, 9), rep(1:9, each = 7)), 7, 9)
  x[c(2, 10, 33)] <- NA
  x[c(3, 40)] <- ""
  for (portable in c(FALSE, TRUE)) {
    path <- local_store_path()
    z <- create_zarr(path)
    def <- define_array("string", dim(x))
    def$portable <- portable
    def$chunk_shape <- c(6, 8)
    def$add_codec("sharding_indexed", list(chunk_shape = c(3, 4), index_location = "start"))
    arr <- z$add_array("/", "s", def)
    arr[1:6, ] <- x[1:6, ]
    arr[7, 1:8] <- x[7, 1:8]
    arr[7, 9] <- x[7, 9]
    expect_identical(arr[], x)
    # shard (1, 1) holds only x[7, 9]; NA there removes it
    arr[7, 9] <- NA
    expect_false(file.exists(file.path(path, "s", "c", "1", "1")))
    x2 <- x
    x2[7, 9] <- NA
    back <- open_zarr(path)[["/s"]]
    expect_identical(back[], x2)
    expect_identical(back[2:7, 4:9], x2[2:7, 4:9])
  }
})
