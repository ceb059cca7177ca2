# The store contract, run on every store class: a memory store and a local
# file system store must behave the same for the same calls.

new_stores <- function(env = parent.frame()) {
  list(
    memory = zarr_memorystore$new(),
    local = zarr_localstore$new(local_store_path(env))
  )
}

bytes <- function(n, from = 1L) as.raw((seq_len(n) + from - 1L) %% 256L)

test_that("set() then get() returns the same raw vector", {
  for (s in new_stores()) {
    value <- bytes(300)
    s$set("a/b/c", value)
    expect_identical(s$get("a/b/c"), value, info = class(s)[1])
    s$set("top", raw(0))
    expect_identical(s$get("top"), raw(0), info = class(s)[1])
  }
})

test_that("set() replaces an existing value", {
  for (s in new_stores()) {
    s$set("k", bytes(10))
    s$set("k", bytes(3, 50))
    expect_identical(s$get("k"), bytes(3, 50), info = class(s)[1])
  }
})

test_that("set() refuses a value that is not a raw vector", {
  for (s in new_stores()) {
    expect_error(s$set("k", 1:3), class = "zarr_error_argument", regexp = "'k'")
    expect_false(s$exists("k"), info = class(s)[1])
  }
})

test_that("get() of a missing key is NULL", {
  for (s in new_stores()) {
    expect_null(s$get("nope"), info = class(s)[1])
    expect_null(s$get("a/b/nope"), info = class(s)[1])
    expect_null(s$get("nope", byte_range = c(0, 2)), info = class(s)[1])
    expect_null(s$get("nope", byte_range = -2), info = class(s)[1])
  }
})

test_that("get() honours every byte_range form", {
  for (s in new_stores()) {
    v <- bytes(10)
    s$set("k", v)
    info <- class(s)[1]
    expect_identical(s$get("k", byte_range = NULL), v, info = info)
    # a single offset: from there to the end
    expect_identical(s$get("k", byte_range = 0), v, info = info)
    expect_identical(s$get("k", byte_range = 4), v[5:10], info = info)
    # a negative number: the last n bytes
    expect_identical(s$get("k", byte_range = -3), v[8:10], info = info)
    expect_identical(s$get("k", byte_range = -10), v, info = info)
    # c(start, end): 0-based start, end exclusive (as the manual says)
    expect_identical(s$get("k", byte_range = c(2, 5)), v[3:5], info = info)
    expect_identical(s$get("k", byte_range = c(0, 10)), v, info = info)
    expect_identical(s$get("k", byte_range = c(9, 10)), v[10], info = info)
  }
})

test_that("get() with a range ending past the end returns the remainder", {
  for (s in new_stores()) {
    v <- bytes(10)
    s$set("k", v)
    expect_identical(s$get("k", byte_range = c(8, 20)), v[9:10], info = class(s)[1])
  }
})

test_that("get() with a range starting past the end is a zarr_error naming the key", {
  for (s in new_stores()) {
    s$set("k", bytes(10))
    expect_error(s$get("k", byte_range = c(20, 22)), class = "zarr_error", regexp = "'k'")
    expect_error(s$get("k", byte_range = 20), class = "zarr_error", regexp = "'k'")
  }
})

test_that("get() with a zero-length range is a zarr_error naming the key, as the manual says", {
  for (s in new_stores()) {
    s$set("k", bytes(10))
    expect_error(s$get("k", byte_range = c(3, 3)), class = "zarr_error", regexp = "'k'")
  }
})

test_that("get() refuses a malformed byte_range with zarr_error_argument", {
  for (s in new_stores()) {
    s$set("k", bytes(10))
    expect_error(s$get("k", byte_range = c(1, 2, 3)), class = "zarr_error_argument", regexp = "byte_range")
    expect_error(s$get("k", byte_range = c(-1, 2)), class = "zarr_error_argument", regexp = "byte_range")
    expect_error(s$get("k", byte_range = c(5, 2)), class = "zarr_error_argument", regexp = "byte_range")
    expect_error(s$get("k", byte_range = "1"), class = "zarr_error_argument", regexp = "byte_range")
    expect_error(s$get("k", byte_range = NA_real_), class = "zarr_error_argument", regexp = "byte_range")
  }
})

test_that("exists() tells keys from absent keys and from prefixes", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set("g/a/zarr.json", charToRaw("{}"))
    expect_true(s$exists("g/a/zarr.json"), info = info)
    expect_false(s$exists("g/a/other"), info = info)
    # a prefix ("folder") is not a key
    expect_false(s$exists("g/a"), info = info)
    expect_false(s$exists("g"), info = info)
  }
})

test_that("erase() removes one key and erasing an absent key is not an error", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set("a/1", bytes(2))
    s$set("a/2", bytes(2))
    expect_invisible(s$erase("a/1"))
    expect_false(s$exists("a/1"), info = info)
    expect_true(s$exists("a/2"), info = info)
    expect_no_error(s$erase("a/1"))
    expect_no_error(s$erase("never/was"))
    expect_identical(s$list(), "a/2", info = info)
  }
})

test_that("erase_prefix() removes every key below a prefix and nothing else", {
  for (s in new_stores()) {
    info <- class(s)[1]
    for (k in c("a/x", "a/b/y", "a/b/c/z", "ab/x", "b/x")) s$set(k, bytes(1))
    s$erase_prefix("a/")
    expect_identical(s$list(), c("ab/x", "b/x"), info = info)
    # "b" and "/b/" mean the same prefix
    s$erase_prefix("/b/")
    expect_identical(s$list(), "ab/x", info = info)
    expect_no_error(s$erase_prefix("nothing/here/"))
    s$erase_prefix("")
    expect_identical(s$list(), character(0), info = info)
  }
})

test_that("list() returns all keys, sorted", {
  for (s in new_stores()) {
    info <- class(s)[1]
    expect_identical(s$list(), character(0), info = info)
    keys <- c("z", "a/b/c", "a/a", "m/zarr.json")
    for (k in keys) s$set(k, bytes(1))
    expect_identical(s$list(), sort(keys, method = "radix"), info = info)
  }
})

test_that("list_prefix() returns the keys below a prefix only", {
  for (s in new_stores()) {
    info <- class(s)[1]
    for (k in c("a/x", "a/b/y", "ab/z", "c")) s$set(k, bytes(1))
    expect_identical(s$list_prefix("a/"), c("a/b/y", "a/x"), info = info)
    expect_identical(s$list_prefix("a"), c("a/b/y", "a/x"), info = info)
    expect_identical(s$list_prefix("a/b/"), "a/b/y", info = info)
    expect_identical(s$list_prefix("none/"), character(0), info = info)
    expect_identical(s$list_prefix(""), c("a/b/y", "a/x", "ab/z", "c"), info = info)
  }
})

test_that("list_dir() returns the keys directly below a prefix, then the sub-prefixes", {
  for (s in new_stores()) {
    info <- class(s)[1]
    for (k in c("zarr.json", "g/zarr.json", "g/arr/zarr.json", "g/arr/c/0/0", "g/h/zarr.json", "top")) {
      s$set(k, bytes(1))
    }
    expect_identical(s$list_dir(""), c("top", "zarr.json", "g/"), info = info)
    expect_identical(s$list_dir("g/"), c("g/zarr.json", "g/arr/", "g/h/"), info = info)
    expect_identical(s$list_dir("g"), s$list_dir("g/"), info = info)
    expect_identical(s$list_dir("g/arr/c/0/"), "g/arr/c/0/0", info = info)
    expect_identical(s$list_dir("missing/"), character(0), info = info)
  }
})

test_that("erase() of the last key below a prefix drops the prefix from list_dir()", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set("a/b", bytes(1))
    s$set("c", bytes(1))
    s$erase("a/b")
    expect_identical(s$list_dir(""), "c", info = info)
    expect_true(s$is_empty("a/"), info = info)
  }
})

test_that("getsize() gives the byte size of a value, NA for a missing key", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set("k", bytes(17))
    s$set("e", raw(0))
    expect_equal(s$getsize("k"), 17, info = info)
    expect_equal(s$getsize("e"), 0, info = info)
    expect_true(is.na(s$getsize("missing")), info = info)
  }
})

test_that("getsize_prefix() sums the sizes of all keys below a prefix", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set("a/1", bytes(5))
    s$set("a/b/2", bytes(7))
    s$set("c", bytes(100))
    expect_equal(s$getsize_prefix("a/"), 12, info = info)
    expect_equal(s$getsize_prefix(""), 112, info = info)
    expect_equal(s$getsize_prefix("none/"), 0, info = info)
  }
})

test_that("is_empty() tells whether any key is below a prefix", {
  for (s in new_stores()) {
    info <- class(s)[1]
    expect_true(s$is_empty(""), info = info)
    s$set("a/b", bytes(1))
    expect_false(s$is_empty(""), info = info)
    expect_false(s$is_empty("a/"), info = info)
    expect_true(s$is_empty("b/"), info = info)
  }
})

test_that("set_if_not_exists() never overwrites an existing value", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$set_if_not_exists("k", bytes(3))
    expect_identical(s$get("k"), bytes(3), info = info)
    s$set_if_not_exists("k", bytes(5, 100))
    expect_identical(s$get("k"), bytes(3), info = info)
  }
})

test_that("a new store is writable and its read_only flag is FALSE", {
  for (s in new_stores()) {
    expect_false(s$read_only, info = class(s)[1])
    expect_true(s$supports_writes, info = class(s)[1])
  }
})

test_that("a read-only memory store refuses set() and erase with zarr_error_read_only", {
  s <- zarr_memorystore$new(read_only = TRUE)
  expect_true(s$read_only)
  expect_false(s$supports_writes)
  expect_error(s$set("k", bytes(2)), class = "zarr_error_read_only", regexp = "k")
  expect_null(s$get("k"))
  expect_identical(s$list(), character(0))
})

test_that("a read-only local store reads existing keys and refuses writes", {
  path <- local_store_path()
  w <- zarr_localstore$new(path)
  w$create_group("", "")
  w$set("a/b", bytes(4))
  s <- zarr_localstore$new(path, read_only = TRUE)
  expect_true(s$read_only)
  expect_identical(s$get("a/b"), bytes(4))
  expect_error(s$set("a/c", bytes(1)), class = "zarr_error_read_only", regexp = "a/c")
  expect_error(s$erase("a/b"), class = "zarr_error_read_only", regexp = "a/b")
  expect_error(s$erase_prefix("a/"), class = "zarr_error_read_only")
  expect_false(file.exists(file.path(path, "a", "c")))
  expect_identical(w$get("a/b"), bytes(4))
})

test_that("keys that could escape the root are refused on every store", {
  for (s in new_stores()) {
    for (k in c("../x", "a/../../x", "/abs", "a//b", "a\\b", "./a", "a/.")) {
      expect_error(s$set(k, bytes(1)), class = "zarr_error_invalid_key", info = k)
      expect_error(s$get(k), class = "zarr_error_invalid_key", info = k)
    }
    expect_identical(s$list(), character(0), info = class(s)[1])
  }
})

test_that("a local store writes each key to the file root/key", {
  path <- local_store_path()
  s <- zarr_localstore$new(path)
  expect_true(dir.exists(path))
  s$set("zarr.json", charToRaw("{}"))
  s$set("grp/arr/c/0/1", bytes(9))
  f <- file.path(path, "grp", "arr", "c", "0", "1")
  expect_true(file.exists(f))
  expect_identical(readBin(f, "raw", 100), bytes(9))
  expect_identical(readBin(file.path(path, "zarr.json"), "raw", 10), charToRaw("{}"))
  # and a file put there by someone else is a key
  writeBin(bytes(3), file.path(path, "grp", "extra"))
  expect_identical(s$get("grp/extra"), bytes(3))
  expect_true("grp/extra" %in% s$list())
  # no temporary files are left behind
  expect_setequal(list.files(path, recursive = TRUE, all.files = TRUE),
                  c("zarr.json", "grp/arr/c/0/1", "grp/extra"))
})

test_that("a local store's root is the normalised folder and its uri a file:// URI", {
  path <- local_store_path()
  s <- zarr_localstore$new(path)
  expect_identical(s$root, normalizePath(path, winslash = "/"))
  expect_identical(s$uri, paste0("file://", s$root))
})

test_that("a local store accepts a file:// URI as its root", {
  path <- local_store_path()
  s <- zarr_localstore$new(paste0("file://", path))
  s$create_group("", "")
  s$set("x/y", bytes(6))
  expect_true(file.exists(file.path(path, "x", "y")))
  expect_identical(s$root, normalizePath(path, winslash = "/"))
  s2 <- zarr_localstore$new(path)
  expect_identical(s2$get("x/y"), bytes(6))
})

test_that("a local store opened with create = FALSE on a missing folder is zarr_error_not_found", {
  path <- local_store_path()
  expect_error(zarr_localstore$new(path, create = FALSE), class = "zarr_error_not_found",
               regexp = basename(path), fixed = TRUE)
  expect_false(file.exists(path))
})

test_that("erase_prefix() on a local store removes the folders too", {
  path <- local_store_path()
  s <- zarr_localstore$new(path)
  s$set("a/b/c", bytes(1))
  s$set("d", bytes(1))
  s$erase_prefix("a/")
  expect_false(file.exists(file.path(path, "a", "b", "c")))
  expect_identical(s$list(), "d")
  expect_identical(s$list_dir(""), "d")
})

test_that("clear() removes everything but the root metadata document", {
  for (s in new_stores()) {
    s$set("zarr.json", charToRaw("{}"))
    s$set("a/zarr.json", charToRaw("{}"))
    s$set("a/c/0", bytes(2))
    s$clear()
    expect_identical(s$list(), "zarr.json", info = class(s)[1])
  }
})

test_that("the memory store's keys field lists its keys", {
  s <- zarr_memorystore$new()
  s$set("b", bytes(1))
  s$set("a", bytes(1))
  expect_identical(s$keys, c("a", "b"))
})

test_that("get_metadata() and set_metadata() round trip a document through zarr.json", {
  for (s in new_stores()) {
    info <- class(s)[1]
    expect_null(s$get_metadata("/"), info = info)
    s$create_group("", "")
    meta <- s$get_metadata("/")
    expect_identical(meta$node_type, "group", info = info)
    expect_true(s$is_group(""), info = info)
    s$create_group("/", "g")
    expect_true(s$exists("g/zarr.json"), info = info)
    expect_true(s$is_group("/g"), info = info)
    expect_error(s$create_group("/", "g"), class = "zarr_error_argument", regexp = "/g")
  }
})

test_that("print() of a store runs and names its kind", {
  expect_output(print(zarr_memorystore$new()), "Memory store")
  expect_output(print(zarr_memorystore$new(read_only = TRUE)), "read-only")
  path <- local_store_path()
  expect_output(print(zarr_localstore$new(path)), "Local file system store")
})

test_that("an array is opened from the document its store read, until that document is rewritten", {
  for (s in new_stores()) {
    info <- class(s)[1]
    s$create_group("", "")
    s$create_array("/", "x", define_array("int32", 4))
    root <- zarr_group$new("", s$get_metadata("/"), NULL, s)
    a <- zarr_array$new("x", s$get_metadata("/x"), root, s)
    a[] <- 1:4
    expect_type(zarr:::node_json_get(s, "x"), "character")
    # Rewritten behind the store's metadata functions: shape 6. The kept
    # text is forgotten, so a new array object reads the new document.
    doc <- jsonlite::fromJSON(rawToChar(s$get("x/zarr.json")), simplifyVector = FALSE)
    doc$shape <- list(6L)
    s$set("x/zarr.json", charToRaw(as.character(jsonlite::toJSON(doc, auto_unbox = TRUE, null = "null"))))
    expect_null(zarr:::node_json_get(s, "x"), info = info)
    b <- zarr_array$new("x", doc, root, s)
    expect_identical(b$read(), c(1:4, NA, NA), info = info)
    # set_metadata() keeps the text it wrote
    s$set_metadata("/x", doc)
    expect_type(zarr:::node_json_get(s, "x"), "character")
    s$erase_prefix("x/")
    expect_null(zarr:::node_json_get(s, "x"), info = info)
  }
})

test_that("zarr_localstore$new() on an existing folder that is not a Zarr store is zarr_error_argument", {
  path <- local_store_path()
  dir.create(path)
  writeLines("not zarr", file.path(path, "notes.txt"))
  expect_error(zarr_localstore$new(path), class = "zarr_error_argument", regexp = "not a Zarr store")
  expect_error(create_zarr(path), class = "zarr_error_argument", regexp = "not a Zarr store")
  expect_identical(list.files(path), "notes.txt")
  # an empty folder is a new store; a Zarr store opens
  empty <- local_store_path()
  dir.create(empty)
  expect_s3_class(create_zarr(empty), "zarr")
  expect_s3_class(zarr_localstore$new(empty), "zarr_localstore")
})

test_that("add_array() fills in a missing chunk_key_encoding with the store's separator", {
  # the package's default (the suite runs with "/", see helper-separator.R)
  withr::local_options(zarr.chunk_separator = NULL)
  z <- create_zarr()
  meta <- define_array("int32", c(4, 4))$metadata()
  meta$chunk_key_encoding <- NULL
  arr <- z$add_array("/", "a", meta)
  # "." as in the manual and R-CF's zarr
  expect_identical(z$store$separator, ".")
  expect_identical(arr$metadata$chunk_key_encoding, list(name = "default", configuration = list(separator = ".")))
  expect_identical(arr$chunk_separator, ".")
  arr$write(matrix(1:16, 4))
  expect_true(z$store$exists("a/c.0.0"))
  expect_false(z$store$exists("a/c/0/0"))
  # the option gives zarr-python's "/"
  withr::local_options(zarr.chunk_separator = "/")
  expect_identical(z$store$separator, "/")
  slashed <- define_array("int32", 4)$metadata()
  expect_identical(slashed$chunk_key_encoding$configuration$separator, "/")
  slashed$chunk_key_encoding <- NULL
  s <- z$add_array("/", "s", slashed)
  s$write(1:4)
  expect_true(z$store$exists("s/c/0"))
  expect_identical(s[], 1:4)
  # an array keeps its own separator whatever the option says
  expect_identical(arr[], matrix(1:16, 4))
  expect_error(zarr_options("chunk_separator", "_"), class = "zarr_error_argument")
})

test_that("a FIFO in place of a chunk is zarr_error_io naming the key, and the read does not hang", {
  skip_on_os("windows")
  path <- local_store_path()
  arr <- create_zarr(path)$add_array("/", "a", define_array("int32", c(4, 4)))
  arr[] <- matrix(1:16, 4, 4)
  chunk <- file.path(path, "a", "c", "0", "0")
  unlink(chunk)
  skip_if(system2("mkfifo", chunk) != 0L, "mkfifo is not available")
  expect_error(open_zarr(path)[["/a"]][], class = "zarr_error_io", regexp = "a/c/0/0", fixed = TRUE)
  expect_error(open_zarr(path)[["/a"]][], regexp = "not a regular file", fixed = TRUE)
})

test_that("a write through a node linked out of the store is zarr_error_invalid_key and changes nothing outside", {
  skip_on_os("windows")
  outside <- local_store_path()
  arr <- create_zarr(outside)$add_array("/", "a", define_array("int32", c(4, 4)))
  arr[] <- matrix(1:16, 4, 4)
  path <- local_store_path()
  create_zarr(path)
  file.symlink(file.path(outside, "a"), file.path(path, "a"))
  linked <- open_zarr(path)[["/a"]]
  expect_identical(linked[], matrix(1:16, 4, 4)) # reads follow links
  expect_error(linked[1, 1] <- 99L, class = "zarr_error_invalid_key", regexp = "symbolic link")
  expect_identical(open_zarr(outside)[["/a"]][], matrix(1:16, 4, 4))
})

test_that("writes round-trip with zarr.atomic_writes and zarr.fsync on or off", {
  for (atomic in c(TRUE, FALSE)) for (fsync in c(TRUE, FALSE)) {
    withr::local_options(zarr.atomic_writes = atomic, zarr.fsync = fsync)
    path <- local_store_path()
    arr <- create_zarr(path)$add_array("/", "a", define_array("int32", c(4, 4)))
    arr[] <- matrix(1:16, 4, 4)
    arr[1, ] <- 0L
    expect_identical(open_zarr(path)[["/a"]][], rbind(0L, matrix(1:16, 4, 4)[-1, ]))
    expect_identical(list.files(path, all.files = TRUE, recursive = TRUE, pattern = "tmp"), character(0))
  }
})

test_that("list_chunks() gives an array's chunk keys without its metadata documents", {
  for (s in new_stores()) {
    s$create_group("", "")
    z <- zarr$new(s)
    def <- define_array("int32", c(4, 4))
    def$chunk_shape <- c(2, 2)
    arr <- z$add_array("/", "a", def)
    arr[1:2, ] <- 1L
    expect_identical(s$list_chunks("a/"), c("a/c/0/0", "a/c/0/1"), info = class(s)[1])
    expect_identical(s$list_chunks("a"), c("a/c/0/0", "a/c/0/1"), info = class(s)[1])
    expect_identical(s$list_chunks("none/"), character(0), info = class(s)[1])
    for (k in c("b/.zarray", "b/.zattrs", "b/0.0")) s$set(k, bytes(2))
    expect_identical(s$list_chunks("b"), "b/0.0", info = class(s)[1])
  }
})

test_that("rename() moves one value byte for byte; a missing key is zarr_error_not_found", {
  for (s in new_stores()) {
    s$set("x/a", bytes(5))
    s$set("x/b", bytes(3, 9))
    expect_invisible(s$rename("x/a", "y/a"))
    expect_identical(s$get("y/a"), bytes(5), info = class(s)[1])
    expect_false(s$exists("x/a"))
    s$rename("y/a", "x/b")
    expect_identical(s$get("x/b"), bytes(5), info = class(s)[1])
    expect_identical(s$list(), "x/b", info = class(s)[1])
    expect_error(s$rename("gone", "z"), class = "zarr_error_not_found", regexp = "'gone'")
  }
})

test_that("supports_prefix_rename is TRUE for a local store (a folder renamed in one step), FALSE in memory", {
  stores <- new_stores()
  expect_false(stores$memory$supports_prefix_rename)
  expect_true(stores$local$supports_prefix_rename)
  for (s in stores) {
    s$set("a/c/0/0", bytes(4))
    s$set("a/c/0/1", bytes(4, 5))
    s$set("a/c/1/0", bytes(4, 9))
    s$set("a/c0", bytes(2))
    expect_invisible(s$rename_prefix("a/c/0", "a/c/3"))
    expect_identical(s$list(), c("a/c/1/0", "a/c/3/0", "a/c/3/1", "a/c0"), info = class(s)[1])
    expect_identical(s$get("a/c/3/1"), bytes(4, 5), info = class(s)[1])
    # a single chunk, the last dimension's key, is a prefix too
    s$rename_prefix("a/c/1/0/", "a/c/2/0")
    expect_identical(s$get("a/c/2/0"), bytes(4, 9), info = class(s)[1])
    expect_error(s$rename_prefix("a/c", "a/c/sub"), class = "zarr_error_argument", regexp = "into itself")
    expect_error(s$rename_prefix("", "b"), class = "zarr_error_argument", regexp = "root")
  }
  root <- stores$local$root
  expect_false(dir.exists(file.path(root, "a", "c", "0")))
  expect_true(dir.exists(file.path(root, "a", "c", "3")))
})

test_that("rename_prefix() onto keys that exist moves key by key, replacing them", {
  for (s in new_stores()) {
    s$set("p/0", bytes(2))
    s$set("p/1", bytes(2, 3))
    s$set("q/1", bytes(1))
    s$set("q/2", bytes(1, 7))
    s$rename_prefix("p", "q")
    expect_identical(s$list(), c("q/0", "q/1", "q/2"), info = class(s)[1])
    expect_identical(s$get("q/1"), bytes(2, 3), info = class(s)[1])
  }
})

test_that("rename_prefix() never moves a folder through a link out of the root", {
  skip_on_os("windows")
  outside <- local_store_path()
  out <- zarr_localstore$new(outside)
  out$set("d/0", bytes(3))
  path <- local_store_path()
  s <- zarr_localstore$new(path)
  s$set("zarr.json", charToRaw('{"zarr_format": 3, "node_type": "group"}'))
  file.symlink(file.path(outside, "d"), file.path(path, "d"))
  expect_error(s$rename_prefix("d", "e"), class = "zarr_error_invalid_key")
  expect_identical(out$get("d/0"), bytes(3))
  expect_error(zarr_localstore$new(path, read_only = TRUE)$rename_prefix("d", "e"), class = "zarr_error_read_only")
})
