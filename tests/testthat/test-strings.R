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

test_that("with a fill value of \"\" empty strings read as NA", {
  z <- create_zarr()
  def <- define_array("string", 3)
  def$fill_value <- ""
  arr <- z$add_array("/", "s", def)
  arr[] <- c("x", "", NA)
  expect_identical(arr$read(), c("x", NA, NA))
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
