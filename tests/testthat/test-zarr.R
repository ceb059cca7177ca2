# The zarr object: creating, opening and converting, and navigating the
# hierarchy from the top.

stores_to_test <- function(env = parent.frame()) {
  list(memory = NULL, local = local_store_path(env))
}

test_that("create_zarr() makes an empty root group, in memory or on disk", {
  for (loc in stores_to_test()) {
    z <- create_zarr(loc)
    expect_s3_class(z, "zarr")
    expect_identical(z$version, 3L)
    expect_s3_class(z$root, "zarr_group")
    expect_identical(z$groups, "/")
    expect_identical(z$arrays, character(0))
    expect_identical(z$store$list(), "zarr.json")
    meta <- jsonlite::fromJSON(rawToChar(z$store$get("zarr.json")), simplifyVector = FALSE)
    expect_identical(meta$zarr_format, 3L)
    expect_identical(meta$node_type, "group")
  }
})

test_that("create_zarr() with a path uses a local store rooted there", {
  path <- local_store_path()
  z <- create_zarr(path)
  expect_s3_class(z$store, "zarr_localstore")
  expect_identical(z$store$root, normalizePath(path, winslash = "/"))
  expect_true(file.exists(file.path(path, "zarr.json")))
  expect_s3_class(create_zarr()$store, "zarr_memorystore")
})

test_that("create_zarr() accepts a file:// URI", {
  path <- local_store_path()
  z <- create_zarr(paste0("file://", path))
  expect_true(file.exists(file.path(path, "zarr.json")))
  z$add_array("/", "a", define_array("int32", 3))$write(1:3)
  expect_identical(open_zarr(path)[["/a"]]$read(), 1:3)
})

test_that("create_zarr() refuses a folder that already holds a store", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "keep")
  expect_error(create_zarr(path), class = "zarr_error_argument", regexp = basename(path), fixed = TRUE)
  expect_true(file.exists(file.path(path, "keep", "zarr.json")))
})

test_that("open_zarr() opens what create_zarr() wrote", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/g", "a", define_array("float64", c(2, 2)))$write(matrix(c(1, 2, 3, 4), 2))
  z2 <- open_zarr(path)
  expect_identical(sort(z2$groups), c("/", "/g"))
  expect_identical(z2$arrays, "/g/a")
  expect_identical(z2[["/g/a"]][], matrix(c(1, 2, 3, 4), 2))
  expect_false(z2$store$read_only)
  # and can write to it
  a <- z2[["/g/a"]]
  a[1, 1] <- 10
  expect_identical(open_zarr(path)[["/g/a"]][1, 1], 10)
})

test_that("open_zarr(read_only = TRUE) opens a store that can only be read", {
  path <- local_store_path()
  as_zarr(1:4, location = path)
  z <- open_zarr(path, read_only = TRUE)
  expect_true(z$store$read_only)
  expect_identical(z$root$read(), 1:4)
  root <- z$root
  expect_error(root[1] <- 0L, class = "zarr_error_read_only")
})

test_that("open_zarr() accepts a file:// URI", {
  path <- local_store_path()
  as_zarr(c(1.5, 2.5), location = path)
  expect_identical(open_zarr(paste0("file://", path))$root$read(), c(1.5, 2.5))
})

test_that("zarr$new() refuses a non-store and a store without a root node", {
  expect_error(zarr$new(list()), class = "zarr_error_argument", regexp = "store")
  expect_error(zarr$new(zarr_memorystore$new()), class = "zarr_error_not_found", regexp = "zarr.json")
})

test_that("as_zarr() stores a vector as a root array of the matching type", {
  inputs <- list(
    logical = c(TRUE, FALSE, TRUE),
    integer = c(1L, NA, 3L),
    double = c(1.5, NA, -2),
    complex = c(1 + 1i, NA, 0 - 2i)
  )
  types <- c(logical = "bool", integer = "int32", double = "float64", complex = "complex128")
  for (nm in names(inputs)) {
    z <- as_zarr(inputs[[nm]])
    expect_s3_class(z, "zarr")
    arr <- z[["/"]]
    expect_s3_class(arr, "zarr_array")
    expect_identical(arr$data_type$data_type, types[[nm]], info = nm)
    expect_identical(arr$shape, as.integer(3), info = nm)
    expect_identical(arr$read(), inputs[[nm]], info = nm)
    expect_identical(z$arrays, "/", info = nm)
  }
})

test_that("as_zarr() stores an integer64 vector as int64", {
  skip_if_not_installed("bit64")
  x <- bit64::as.integer64(c("1", "-9223372036854775807", NA))
  z <- as_zarr(x)
  expect_identical(z$root$data_type$data_type, "int64")
  expect_identical(z$root$read(), x)
})

test_that("as_zarr() stores a matrix and an array with their shapes", {
  m <- matrix(seq_len(12) / 4, 3, 4)
  zm <- as_zarr(m)
  expect_identical(zm$root$shape, c(3L, 4L))
  expect_identical(zm$root[], m)
  a <- array(1:400, c(5, 20, 4))
  za <- as_zarr(a)
  expect_identical(za$root$shape, c(5L, 20L, 4L))
  expect_identical(za$root[], a)
  expect_identical(vapply(za$root$codecs, function(c) c$name, ""), c("transpose", "bytes", "blosc"))
})

test_that("as_zarr() chunks are at most 100 along each dimension", {
  z <- as_zarr(matrix(1L, 250, 3))
  expect_identical(z$root$chunking$chunk_shape, c(100L, 3L))
  expect_identical(z$root[], matrix(1L, 250, 3))
})

test_that("as_zarr() with a name makes a root group holding the named array", {
  x <- matrix(1:6, 2, 3)
  z <- as_zarr(x, name = "m")
  expect_s3_class(z$root, "zarr_group")
  expect_identical(z$arrays, "/m")
  expect_identical(z[["/m"]][], x)
  expect_identical(z[["/m"]]$name, "m")
})

test_that("as_zarr() with a group as location adds the array to that group", {
  z <- create_zarr()
  g <- z$add_group("/", "g")
  arr <- as_zarr(c(1.5, 2), name = "v", location = g)
  expect_s3_class(arr, "zarr_array")
  expect_identical(arr$path, "/g/v")
  expect_identical(arr$read(), c(1.5, 2))
  expect_identical(z$arrays, "/g/v")
  expect_identical(z[["/g/v"]]$read(), c(1.5, 2))
  expect_error(as_zarr(1:3, location = g), class = "zarr_error_argument", regexp = "name")
})

test_that("as_zarr() with a path writes a local store that open_zarr() reads", {
  path <- local_store_path()
  x <- array(seq_len(24), c(2, 3, 4))
  z <- as_zarr(x, location = path)
  expect_s3_class(z$store, "zarr_localstore")
  expect_identical(open_zarr(path)$root[], x)
  expect_error(as_zarr(x, location = path), class = "zarr_error_argument", regexp = basename(path), fixed = TRUE)
  path2 <- local_store_path()
  as_zarr(x, name = "arr", location = path2)
  expect_identical(open_zarr(path2)[["/arr"]][], x)
})

test_that("as_zarr() stores character vectors as strings and refuses lists", {
  z <- as_zarr(letters)
  expect_identical(z[["/"]]$data_type$data_type, "string")
  expect_identical(z[["/"]]$read(), letters)
  expect_error(as_zarr(list(1, 2)), class = "zarr_error_type", regexp = "list")
})

test_that("get_node() and [[ return the node at an absolute path, or NULL", {
  z <- create_zarr()
  z$add_group("/", "a")
  z$add_group("/a", "b")
  z$add_array("/a/b", "c", define_array("int8", 2))
  expect_identical(z$get_node("/")$path, "/")
  expect_s3_class(z[["/a"]], "zarr_group")
  expect_identical(z[["/a/b"]]$path, "/a/b")
  expect_s3_class(z[["/a/b/c"]], "zarr_array")
  expect_identical(z[["/a/b/c"]]$name, "c")
  expect_null(z[["/nope"]])
  expect_null(z[["/a/b/c/d"]])
  expect_identical(z[["/a/b/c"]]$parent$path, "/a/b")
  # get_node() and `[[` take absolute paths only, as R-CF's; a relative
  # path that names a node warns, naming the absolute one
  expect_null(z$get_node("a/b"))
  expect_warning(expect_null(z[["a"]]), class = "zarr_warning_path", regexp = "z[[\"/a\"]]", fixed = TRUE)
  expect_warning(expect_null(z[["a/b/c"]]), class = "zarr_warning_path")
  expect_silent(expect_null(z[["nope"]]))
  expect_null(z[[NA_character_]])
  z[["/a/b/c"]][1:2] <- c(3L, 5L)
  expect_identical(z[["/a/b/c"]][], c(3L, 5L))
  expect_error(suppressWarnings(z[["a/b/c"]][1:2] <- c(3L, 5L)), class = "zarr_error_unsupported")
  expect_identical(z[["/a/b/c"]][], c(3L, 5L))
  # a group's `[[` takes relative paths
  expect_identical(z[["/"]][["a/b/c"]]$path, "/a/b/c")
})

test_that("the root of a single-array store has no other nodes; $groups is NULL", {
  z <- as_zarr(1:3)
  expect_identical(z$arrays, "/")
  expect_null(z$groups)
  expect_null(z[["/x"]])
  expect_warning(g <- z$add_group("/", "g"), class = "zarr_warning", regexp = "single array")
  expect_null(g)
  expect_warning(a <- z$add_array("/", "a", define_array("int8", 2)), class = "zarr_warning", regexp = "single array")
  expect_null(a)
})

test_that("groups and arrays list every path once, after adding nodes", {
  z <- create_zarr()
  z$add_group("/", "g1")
  z$add_group("/g1", "h")
  z$add_array("/g1/h", "arr", define_array("int32", c(3, 4)))
  z$add_array("/", "top", define_array("float64", 5))
  expect_identical(sort(z$groups), c("/", "/g1", "/g1/h"))
  expect_identical(sort(z$arrays), c("/g1/h/arr", "/top"))
})

test_that("a group added to a fresh root is its only child", {
  z <- create_zarr()
  z$add_group("/", "g")
  expect_identical(z$groups, c("/", "/g"))
  expect_length(z$root$children, 1L)
})

test_that("groups and arrays list every path once after reopening", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g1")
  z$add_group("/g1", "h")
  z$add_array("/g1/h", "arr", define_array("int32", c(3, 4)))
  z$add_array("/", "top", define_array("float64", 5))
  z2 <- open_zarr(path)
  expect_identical(z2$groups, c("/", "/g1", "/g1/h"))
  expect_identical(z2$arrays, c("/g1/h/arr", "/top"))
})

test_that("a node opened by its path before the root is the root's child, once", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/", "x", define_array("int32", 3))
  z$add_array("/g", "y", define_array("int32", 2))
  z[["/x"]]$write(1:3)
  z2 <- open_zarr(path)
  x <- z2[["/x"]]
  g <- z2[["/g"]]
  expect_null(z2[["/nope"]])
  expect_identical(z2[["/x"]], x)
  expect_identical(x$path, "/x")
  expect_identical(x[], 1:3)
  expect_identical(x$parent, z2$root)
  expect_identical(z2$root$get_node("x"), x)
  expect_identical(z2[["/g/y"]]$parent, g)
  expect_identical(g$get_node("..")$path, "/")
  expect_identical(vapply(z2$root$children, function(ch) ch$name, ""), c("g", "x"))
  expect_identical(z2$arrays, c("/g/y", "/x"))
})

test_that("add_group() and add_array() on a missing parent or an array return NULL with a warning", {
  z <- create_zarr()
  expect_warning(expect_null(z$add_group("/missing", "g")), class = "zarr_warning", regexp = "/missing")
  z$add_array("/", "a", define_array("int8", 2))
  expect_warning(expect_null(z$add_group("/a", "g")), class = "zarr_warning", regexp = "/a")
})

test_that("add_array() and add_group() return NULL with a warning for a name already in use", {
  z <- create_zarr()
  z$add_array("/", "a", define_array("int8", 2))
  expect_warning(expect_null(z$add_array("/", "a", define_array("int8", 2))), class = "zarr_warning", regexp = "/a")
  expect_warning(expect_null(z$add_group("/", "a")), class = "zarr_warning", regexp = "/a")
})

test_that("delete_group() refuses a non-empty group unless recursive = TRUE", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_group("/g", "h")
  z$add_array("/g/h", "a", define_array("int32", 4))$write(1:4)
  expect_error(z$delete_group("/g"), class = "zarr_error_argument", regexp = "/g")
  expect_true(z$store$exists("g/h/a/c/0"))
  z$delete_group("/g", recursive = TRUE)
  expect_null(z[["/g"]])
  expect_identical(z$store$list(), "zarr.json")
  expect_false(dir.exists(file.path(path, "g")))
  expect_identical(open_zarr(path)$groups, "/")
})

test_that("delete_group() removes an empty group", {
  z <- create_zarr()
  z$add_group("/", "keep")
  z$add_group("/", "drop")
  z$delete_group("/drop")
  expect_null(z[["/drop"]])
  expect_false(z$store$exists("drop/zarr.json"))
  expect_true(z$store$exists("keep/zarr.json"))
})

test_that("delete_group('/') clears the root group but keeps it", {
  z <- create_zarr()
  z$add_group("/", "g")
  z$root$set_attribute("a", 1)
  z$delete_group("/", recursive = TRUE)
  expect_identical(z$store$list(), "zarr.json")
  expect_identical(z$groups, "/")
  expect_length(z$root$attributes, 0L)
})

test_that("delete_group() on a path that is not a group is zarr_error_not_found", {
  z <- create_zarr()
  z$add_array("/", "a", define_array("int8", 2))
  expect_error(z$delete_group("/a"), class = "zarr_error_not_found", regexp = "/a")
  expect_error(z$delete_group("/none"), class = "zarr_error_not_found", regexp = "/none")
})

test_that("delete_array() removes an array and its chunks", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/g", "a", define_array("int32", 4))$write(1:4)
  z$add_array("/g", "b", define_array("int32", 4))$write(5:8)
  z$delete_array("/g/a")
  expect_null(z[["/g/a"]])
  expect_false(any(startsWith(z$store$list(), "g/a/")))
  expect_identical(z[["/g/b"]]$read(), 5:8)
  expect_identical(open_zarr(path)$arrays, "/g/b")
  expect_error(z$delete_array("/g"), class = "zarr_error_not_found", regexp = "/g")
})

test_that("delete_array() of a root array leaves an empty root group", {
  z <- as_zarr(1:5)
  z$delete_array("/")
  expect_s3_class(z$root, "zarr_group")
  expect_identical(z$store$list(), "zarr.json")
  expect_identical(z$arrays, character(0))
})

test_that("hierarchy() prints every node name once", {
  z <- create_zarr()
  z$add_group("/", "g1")
  z$add_group("/g1", "inner")
  z$add_array("/g1/inner", "temperature", define_array("float32", c(3, 4)))
  z$add_array("/", "top", define_array("int8", 5))
  out <- capture.output(z$hierarchy())
  for (nm in c("g1", "inner", "temperature", "top")) {
    expect_identical(sum(grepl(nm, out, fixed = TRUE)), 1L, info = nm)
  }
  expect_true(any(grepl("temperature <array> [3 x 4] float32", out, fixed = TRUE)))
  expect_identical(length(out), 5L)
})

test_that("hierarchy() of a reopened store names every node", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g1")
  z$add_array("/g1", "arr", define_array("float32", c(3, 4)))
  out <- capture.output(open_zarr(path)$hierarchy())
  expect_identical(length(out), 3L)
  expect_match(out[1], "/ <group>", fixed = TRUE)
  expect_true(any(grepl("g1 <group>", out, fixed = TRUE)))
  expect_true(any(grepl("arr <array> [3 x 4] float32", out, fixed = TRUE)))
})

test_that("print() of a zarr object describes the store and the root", {
  z <- create_zarr()
  z$add_group("/", "g")
  z$add_array("/g", "a", define_array("int32", 3))
  expect_output(print(z), "Zarr object")
  expect_output(print(z), "Memory store")
  expect_output(print(z), "1 sub-group and 1 array")
  expect_output(print(as_zarr(1:3)), "array \\[3\\] int32")
  path <- local_store_path()
  expect_output(print(create_zarr(path)), "Local file system store")
})

test_that("print() of a zarr object shows the root attributes", {
  z <- create_zarr()
  z$root$set_attribute("title", "test data")
  expect_output(print(z), "title.*test data")
})

test_that("z[[path]][i, j] <- value writes through to the array", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/g", "a", define_array("int32", c(2, 3)))$write(matrix(1:6, 2, 3))
  z[["/g/a"]][1, 2] <- 0L
  expect_identical(z[["/g/a"]][1, ], c(1L, 0L, 5L))
  g <- z[["/g"]]
  g[["a"]][2, 3] <- -6L
  expect_identical(open_zarr(path)[["/g/a"]][], matrix(c(1L, 2L, 0L, 4L, 5L, -6L), 2, 3))
})

test_that("z[[path]] <- something else is refused with zarr_error_unsupported", {
  z <- create_zarr()
  z$add_array("/", "a", define_array("int32", 2))
  expect_error(z[["/a"]] <- 1:2, class = "zarr_error_unsupported", regexp = "/a")
  expect_s3_class(z[["/a"]], "zarr_array")
})

test_that("str() methods give a one-line summary of zarr objects, groups, arrays and grids", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/g", "a", define_array("int16", c(3, 4)))
  z2 <- open_zarr(path)
  expect_output(str(z2), "2 groups, 1 array")
  expect_output(str(z2[["/g"]]), "/g")
  expect_output(str(z2[["/g/a"]]), "int16 \\[3, 4\\]")
  expect_output(str(z2[["/g/a"]]$chunking), "chunks \\[3, 4\\]")
})

test_that("print() of arrays, groups, grids and data types runs for every node kind", {
  z <- create_zarr()
  g <- z$add_group("/", "g")
  arr <- z$add_array("/g", "a", define_array("float32", c(3, 4)))
  expect_output(print(g), "Zarr group")
  expect_output(print(arr), "Zarr array")
  expect_output(print(arr$chunking), "chunk shape: 3 x 4")
  expect_output(print(arr$data_type), "float32")
  expect_output(print(z$store), "Memory store")
})
