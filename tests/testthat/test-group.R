# Groups: children, relative navigation, deleting, attributes that persist.

child_names <- function(g) vapply(g$children, function(ch) ch$name, character(1))

test_that("a group's add_group() and add_array() create nodes below it", {
  z <- create_zarr()
  root <- z[["/"]]
  g <- root$add_group("measurements")
  expect_s3_class(g, "zarr_group")
  expect_identical(g$path, "/measurements")
  expect_identical(g$prefix, "measurements/")
  expect_identical(g$parent$path, "/")
  arr <- g$add_array("temp", define_array("float64", c(4, 2)))
  expect_s3_class(arr, "zarr_array")
  expect_identical(arr$path, "/measurements/temp")
  expect_true(z$store$exists("measurements/zarr.json"))
  expect_true(z$store$exists("measurements/temp/zarr.json"))
  expect_true(z$store$is_group("measurements"))
  expect_false(z$store$is_group("measurements/temp"))
})

test_that("add_array() accepts a metadata list as well as a builder", {
  z <- create_zarr()
  meta <- define_array("int16", c(3, 3))$metadata()
  arr <- z$root$add_array("fromlist", meta)
  arr$write(matrix(1:9, 3))
  expect_identical(arr[], matrix(1:9, 3))
})

test_that("a group's children are its direct groups and arrays, each once", {
  z <- create_zarr()
  root <- z$root
  root$add_group("b")
  root$add_array("a", define_array("int8", 2))
  root$add_group("c")
  expect_identical(sort(child_names(root)), c("a", "b", "c"))
  expect_identical(root$count_arrays(), 1L)
})

test_that("children of a reopened group come from listing the store", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "b")
  z$add_array("/", "a", define_array("int8", 2))
  z$add_group("/b", "inner")
  z$add_array("/b/inner", "deep", define_array("int8", 2))
  root <- open_zarr(path)$root
  expect_identical(child_names(root), c("a", "b"))
  expect_identical(root$count_arrays(), 2L)
  expect_identical(root$count_arrays(recursive = FALSE), 1L)
  expect_identical(root$groups, c("/", "/b", "/b/inner"))
  expect_identical(root$arrays, c("/a", "/b/inner/deep"))
  expect_identical(root[["b"]]$arrays, "/b/inner/deep")
})

test_that("folders without zarr.json are not children", {
  path <- local_store_path()
  z <- create_zarr(path)
  dir.create(file.path(path, "not_a_node"))
  writeBin(as.raw(1), file.path(path, "stray"))
  expect_identical(open_zarr(path)$groups, "/")
  expect_identical(open_zarr(path)$arrays, character(0))
})

test_that("get_node() and [[ follow relative paths, '..' going up", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "a")
  z$add_group("/a", "b")
  z$add_array("/a/b", "x", define_array("int8", 2))
  z$add_array("/a", "y", define_array("int8", 2))
  root <- open_zarr(path)$root
  a <- root[["a"]]
  expect_identical(a$path, "/a")
  expect_identical(a[["b/x"]]$path, "/a/b/x")
  expect_identical(a$get_node("b")$path, "/a/b")
  expect_identical(a[["b"]][[".."]]$path, "/a")
  expect_identical(a[["b"]][["../y"]]$path, "/a/y")
  expect_identical(a[["./b"]]$path, "/a/b")
  expect_null(a[["nope"]])
  expect_null(a[["y/deeper"]])
  expect_null(root[[".."]])
})

test_that("delete() removes an array or an empty group below this group", {
  path <- local_store_path()
  z <- create_zarr(path)
  root <- z$root
  root$add_group("empty")
  root$add_array("arr", define_array("int32", 3))$write(1:3)
  root$add_group("kept")
  root$delete("arr")
  root$delete("empty")
  expect_identical(child_names(root), "kept")
  expect_identical(z$store$list(), c("kept/zarr.json", "zarr.json"))
  expect_identical(open_zarr(path)$groups, c("/", "/kept"))
})

test_that("delete() refuses a non-empty group and a missing child", {
  z <- create_zarr()
  g <- z$root$add_group("g")
  g$add_array("a", define_array("int8", 2))
  expect_error(z$root$delete("g"), class = "zarr_error_argument", regexp = "/g")
  expect_true(z$store$exists("g/a/zarr.json"))
  expect_error(z$root$delete("none"), class = "zarr_error_not_found", regexp = "none")
  # a grandchild is not a child
  expect_error(z$root$delete("g/a"), class = "zarr_error_not_found", regexp = "g/a")
})

test_that("delete_all() removes everything below a group and its attributes", {
  path <- local_store_path()
  z <- create_zarr(path)
  g <- z$root$add_group("g")
  g$set_attribute("note", "x")
  g$add_group("h")$add_array("a", define_array("int8", 2))$write(1:2)
  z$root$add_group("other")
  g$delete_all()
  expect_length(g$children, 0L)
  expect_length(g$attributes, 0L)
  expect_identical(sort(z$store$list()), c("g/zarr.json", "other/zarr.json", "zarr.json"))
  reopened <- open_zarr(path)
  expect_identical(reopened$groups, c("/", "/g", "/other"))
  expect_length(reopened[["/g"]]$attributes, 0L)
})

test_that("set_attribute() writes attributes that persist after reopening", {
  path <- local_store_path()
  z <- create_zarr(path)
  g <- z$root$add_group("g")
  arr <- g$add_array("a", define_array("int32", 2))
  g$set_attribute("site", "A")
  g$set_attribute("count", 3L)
  g$set_attribute("nested", list(x = 1.5, y = "b"))
  arr$set_attribute("units", "m")
  z$root$set_attribute("title", "Test")
  expect_identical(g$attributes$site, "A")
  z2 <- open_zarr(path)
  g2 <- z2[["/g"]]
  expect_identical(g2$attributes$site, "A")
  expect_identical(g2$attributes$count, 3L)
  expect_identical(g2$attributes$nested, list(x = 1.5, y = "b"))
  # (and the _FillValue that add_array() gives a v3 array, for xarray)
  expect_identical(z2[["/g/a"]]$attributes, list(`_FillValue` = -2147483648, units = "m"))
  expect_identical(z2$root$attributes, list(title = "Test"))
  # replacing a value
  g$set_attribute("site", "B")
  expect_identical(open_zarr(path)[["/g"]]$attributes$site, "B")
})

test_that("a vector attribute reads back with the same values after reopening", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$root$set_attribute("n", 1:3)
  z$root$set_attribute("w", c("a", "b"))
  attrs <- open_zarr(path)$root$attributes
  expect_identical(unlist(attrs$n), 1:3)
  expect_identical(unlist(attrs$w), c("a", "b"))
})

test_that("delete_attributes() removes attributes from the store too", {
  path <- local_store_path()
  z <- create_zarr(path)
  g <- z$root$add_group("g")
  g$set_attribute("a", 1)
  g$set_attribute("b", 2)
  g$set_attribute("c", 3)
  g$delete_attributes(c("a", "c"))
  expect_identical(names(g$attributes), "b")
  expect_identical(open_zarr(path)[["/g"]]$attributes, list(b = 2L))
  g$delete_attributes("b")
  expect_length(open_zarr(path)[["/g"]]$attributes, 0L)
  # deleting an absent attribute is not an error
  expect_no_error(g$delete_attributes("never"))
})

test_that("attributes of an array survive writing data to it", {
  path <- local_store_path()
  z <- create_zarr(path)
  arr <- z$root$add_array("a", define_array("int32", 3))
  arr$set_attribute("units", "kg")
  arr$write(1:3)
  arr2 <- open_zarr(path)[["/a"]]
  expect_identical(arr2$attributes, list(`_FillValue` = -2147483648, units = "kg"))
  expect_identical(arr2$read(), 1:3)
})

test_that("set_attribute() refuses an empty or too long name", {
  z <- create_zarr()
  expect_error(z$root$set_attribute("", 1), class = "zarr_error_argument", regexp = "attribute name")
  expect_error(z$root$set_attribute(strrep("x", 256), 1), class = "zarr_error_argument", regexp = "255")
  expect_error(z$root$set_attribute(NA_character_, 1), class = "zarr_error_argument", regexp = "name")
})

test_that("add_group() and add_array() with names with '/', '.', '..' or a leading '__' return NULL with a warning", {
  z <- create_zarr()
  for (nm in c("a/b", ".", "..", "__meta")) {
    expect_warning(g <- z$root$add_group(nm), class = "zarr_warning", regexp = nm, fixed = TRUE)
    expect_null(g)
    expect_warning(a <- z$root$add_array(nm, define_array("int8", 1)), class = "zarr_warning",
                   regexp = nm, fixed = TRUE)
    expect_null(a)
  }
  expect_identical(z$store$list(), "zarr.json")
})

test_that("node names may hold UTF-8 characters", {
  path <- local_store_path()
  z <- create_zarr(path)
  nm <- "temp\u00e9rature"
  z$root$add_array(nm, define_array("int8", 2))$write(1:2)
  z2 <- open_zarr(path)
  expect_identical(z2$arrays, paste0("/", nm))
  expect_identical(z2[[paste0("/", nm)]]$read(), 1:2)
})

test_that("print() of a group counts its children and shows attributes", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_array("/", "a", define_array("int8", 2))
  z$add_array("/", "b", define_array("int8", 2))
  z$root$set_attribute("site", "A")
  root <- open_zarr(path)$root
  expect_output(print(root), "[root]", fixed = TRUE)
  expect_output(print(root), "1 group, 2 arrays")
  expect_output(print(root), "site")
  expect_output(print(root[["g"]]), "/g")
})

test_that("a group's hierarchy() lists the nodes below it", {
  path <- local_store_path()
  z <- create_zarr(path)
  z$add_group("/", "g")
  z$add_group("/g", "sub")
  z$add_array("/g/sub", "values", define_array("float64", c(2, 3)))
  z$add_group("/", "elsewhere")
  g <- open_zarr(path)[["/g"]]
  out <- capture.output(g$hierarchy())
  expect_match(out[1], "g <group>", fixed = TRUE)
  expect_true(any(grepl("sub <group>", out, fixed = TRUE)))
  expect_true(any(grepl("values <array> [2 x 3] float64", out, fixed = TRUE)))
  expect_false(any(grepl("elsewhere", out, fixed = TRUE)))
})

test_that("an array's hierarchy() prints its own line", {
  z <- create_zarr()
  arr <- z$root$add_array("a", define_array("int16", c(5, 6)))
  expect_output(arr$hierarchy(), "a <array> [5 x 6] int16", fixed = TRUE)
})

test_that("build_hierarchy() finds nodes added to the store by another handle", {
  path <- local_store_path()
  z <- create_zarr(path)
  root <- z$root
  expect_length(root$children, 0L)
  other <- open_zarr(path)
  other$add_group("/", "late")
  root$build_hierarchy()
  expect_identical(child_names(root), "late")
})

# ---- a node that cannot be read never takes its store down ------------------

# A store with arrays "good" and "bad" (and a group "g" holding "inner");
# `break_it` spoils bad's metadata after the store is written.
unreadable_store <- function(format, consolidated, env = parent.frame()) {
  path <- local_store_path(env)
  z <- create_zarr(path, zarr_format = format)
  z$add_array("/", "good", define_array("int32", 3))$write(1:3)
  z$add_array("/", "bad", define_array("int32", 3))$write(4:6)
  z$add_group("/", "g")
  z$add_array("/g", "inner", define_array("float64", 2))$write(c(0.5, 1.5))
  if (consolidated) z$consolidate()
  spoil <- function(m) {
    if (format == 3L) m$data_type <- "bfloat16" else m$dtype <- "<x9"
    m
  }
  if (format == 3L) {
    fe_edit <- function(file) {
      m <- jsonlite::fromJSON(file, simplifyVector = FALSE)
      if (!is.null(m$consolidated_metadata)) {
        m$consolidated_metadata$metadata$bad <- spoil(m$consolidated_metadata$metadata$bad)
      } else {
        m <- spoil(m)
      }
      writeLines(as.character(jsonlite::toJSON(m, auto_unbox = TRUE, null = "null", digits = NA)), file)
    }
    fe_edit(file.path(path, "bad", "zarr.json"))
    if (consolidated) fe_edit(file.path(path, "zarr.json"))
  } else {
    f <- file.path(path, "bad", ".zarray")
    m <- spoil(jsonlite::fromJSON(f, simplifyVector = FALSE))
    writeLines(as.character(jsonlite::toJSON(m, auto_unbox = TRUE, null = "null", digits = NA)), f)
    if (consolidated) {
      zm <- file.path(path, ".zmetadata")
      m <- jsonlite::fromJSON(zm, simplifyVector = FALSE)
      m$metadata[["bad/.zarray"]] <- spoil(m$metadata[["bad/.zarray"]])
      writeLines(as.character(jsonlite::toJSON(m, auto_unbox = TRUE, null = "null", digits = NA)), zm)
    }
  }
  path
}

test_that("a store holding an array it cannot read opens, lists and reads every other node, each time alike", {
  for (format in c(3L, 2L)) for (consolidated in c(FALSE, TRUE)) {
    what <- sprintf("v%d, consolidated %s", format, consolidated)
    path <- unreadable_store(format, consolidated)
    for (round in 1:2) {
      z <- open_zarr(path)
      expect_warning(arrays <- z$arrays, class = "zarr_warning", regexp = "'/bad' skipped")
      expect_identical(sort(arrays), c("/g/inner", "/good"), info = what)
      expect_warning(groups <- z$groups, class = "zarr_warning", regexp = "'/bad' skipped")
      expect_identical(sort(groups), c("/", "/g"), info = what)
      expect_identical(as.vector(z[["/good"]][]), 1:3, info = what)
      expect_identical(as.vector(z[["/g/inner"]][]), c(0.5, 1.5), info = what)
      expect_output(print(z), "Zarr", info = what)
      out <- capture.output(z$hierarchy())
      expect_true(any(grepl("bad <unreadable: .*(bfloat16|<x9)", out)), info = what)
      expect_true(any(grepl("good <array>", out, fixed = TRUE)), info = what)
      kind <- if (format == 3L) "zarr_error_unsupported" else "zarr_error_metadata"
      err <- expect_error(z[["/bad"]], class = kind, info = what)
      expect_match(conditionMessage(err), "node '/bad' cannot be opened", fixed = TRUE)
      expect_match(conditionMessage(err), if (format == 3L) "bfloat16" else "<x9", fixed = TRUE)
    }
  }
})

test_that("opening one child of a group reads that child's document and no sibling's", {
  skip_on_os("windows")
  path <- withr::local_tempdir(fileext = ".zarr")
  z <- create_zarr(path)
  z$add_array("/", "x", define_array("int32", 3))$write(1:3)
  z$add_array("/", "y", define_array("int32", 3))
  # A sibling whose document cannot be read at all (reading a FIFO is an
  # I/O error, which would stop a listing of the group).
  unlink(file.path(path, "y", "zarr.json"))
  expect_identical(system2("mkfifo", shQuote(file.path(path, "y", "zarr.json"))), 0L)
  z2 <- open_zarr(path, read_only = TRUE)
  expect_identical(z2[["/x"]][], 1:3)
  expect_null(z2[["/nothing"]])
  # The listing, asked for later, meets the sibling and reuses the child
  # already opened.
  x <- z2[["/x"]]
  expect_error(z2$root$children, class = "zarr_error_io")
})

test_that("a child opened by name is the object the group's listing later holds", {
  z <- create_zarr()
  z$add_array("/", "b", define_array("int32", 2))
  z$add_array("/", "a", define_array("int32", 2))
  z2 <- open_zarr(z$store)
  b <- z2[["/b"]]
  kids <- z2$root$children
  expect_identical(child_names(z2$root), c("a", "b"))
  expect_true(identical(kids[[2L]], b))
  expect_identical(z2$arrays, c("/a", "/b"))
})

test_that("a group on an HTTP store without consolidated metadata opens a child by name with two requests", {
  path <- withr::local_tempdir(fileext = ".zarr")
  z <- create_zarr(path)
  for (nm in c("a", "b", "c")) z$add_array("/", nm, define_array("int32", 2))
  server <- local_http_server(path)
  http_reset(server)
  expect_no_warning(a <- open_zarr(server$url)[["/b"]])
  expect_identical(a$path, "/b")
  # the root's zarr.json and the array's: no other node is read
  expect_identical(as.integer(http_stats(server)$requests), 2L)
})
