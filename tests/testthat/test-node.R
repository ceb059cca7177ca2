# Nodes in a hierarchy: paths between nodes, walking, names, post_open().

node_tree <- function() {
  z <- create_zarr()
  z$add_group("/", "a")
  z$add_group("/a", "b")
  z$add_group("/", "c")
  z$add_array("/a/b", "x", define_array("int8", 2))
  z
}

test_that("relative_path() gives the path from one node to another", {
  z <- node_tree()
  x <- z[["/a/b/x"]]
  expect_identical(x$relative_path("/c"), "../../../c")
  expect_identical(z[["/a"]]$relative_path(x), "b/x")
  expect_identical(x$relative_path("/a"), "../..")
  expect_identical(x$relative_path(x), ".")
  expect_identical(z$root$relative_path("/"), ".")
  expect_error(x$relative_path("/a/../c"), class = "zarr_error_argument", regexp = "to")
})

test_that("absolute_path() resolves a relative path from a node", {
  z <- node_tree()
  b <- z[["/a/b"]]
  expect_identical(b$absolute_path("../../c"), "/c")
  expect_identical(b$absolute_path("x"), "/a/b/x")
  expect_identical(b$absolute_path("./.."), "/a")
  expect_error(b$absolute_path("../../.."), class = "zarr_error_not_found")
})

test_that("walk_path() walks to a node by names and errors when there is none", {
  z <- node_tree()
  b <- z[["/a/b"]]
  expect_identical(b$walk_path(c("..", "..", "c"))$path, "/c")
  expect_identical(z$root$walk_path(strsplit("a/b/x", "/")[[1]])$path, "/a/b/x")
  expect_identical(b$walk_path(character(0)), b)
  expect_error(b$walk_path(c("nope")), class = "zarr_error_not_found", regexp = "nope")
  expect_error(z$root$walk_path(".."), class = "zarr_error_not_found", regexp = "parent")
})

test_that("is_valid_node_name() follows the Zarr specification's rules", {
  expect_true(is_valid_node_name("temperature"))
  expect_true(is_valid_node_name("air temperature"))
  expect_true(is_valid_node_name("a.b"))
  expect_false(is_valid_node_name(""))
  expect_false(is_valid_node_name("."))
  expect_false(is_valid_node_name("..."))
  expect_false(is_valid_node_name("a/b"))
  expect_false(is_valid_node_name("__x"))
  expect_false(is_valid_node_name(NA_character_))
  expect_false(is_valid_node_name(c("a", "b")))
  expect_warning(expect_null(create_zarr()$add_group("/", "...")), class = "zarr_warning", regexp = "...")
})

test_that("post_open() runs on every node built into an opened hierarchy", {
  seen <- character(0)
  tracked <- R6::R6Class("tracked_group", inherit = zarr_group,
                         public = list(post_open = function() {
                           seen <<- c(seen, self$path)
                           invisible(self)
                         }))
  tracked_domain <- R6::R6Class("tracked_domain", inherit = zarr_domain, public = list(
    build = function(name, metadata, parent, store) {
      if (identical(metadata$node_type, "group")) tracked$new(name, metadata, parent, store) else FALSE
    }))
  dom <- tracked_domain$new("tracked")
  z <- node_tree()
  zarr_register_domain(dom)
  on.exit(zarr_unregister_domain("tracked"))
  z2 <- zarr$new(z$store)
  invisible(z2$groups)
  z2[["/a/b"]]
  expect_true(all(c("/", "/a", "/a/b") %in% seen))
})

test_that("set_node() puts a node object in place of the child of the same name", {
  z <- node_tree()
  a <- z[["/a"]]
  replacement <- zarr_group$new("b", a[["b"]]$metadata, a)
  expect_identical(a$set_node(replacement), replacement)
  expect_identical(z[["/a/b"]], replacement)
  other <- zarr_group$new("q", list(zarr_format = 3L, node_type = "group"), z$root)
  expect_error(a$set_node(other), class = "zarr_error_argument", regexp = "another parent")
  expect_error(a$set_node("b"), class = "zarr_error_argument")
})

test_that("node documents reach R as jsonlite parses them, without R parsing JSON", {
  s <- zarr_memorystore$new()
  doc <- paste0(
    '{"zarr_format": 3, "node_type": "group", "attributes": {',
    '"int": 5, "neg": -7, "max": 2147483647, "min": -2147483648, "big": 3000000000,',
    '"past53": 9007199254740993, "huge": 12345678901234567890, "real": 1.0, "exp": 1e3,',
    '"flag": true, "none": null, "empty": {}, "list": [], "mixed": [1, "a", null, [false]],',
    '"text": "caf\\u00e9", "nested": {"a": {"b": [0.5]}}}}'
  )
  s$set("zarr.json", charToRaw(doc))
  got <- open_zarr(s)$root$metadata
  h <- store_handle(s)
  expect_identical(got, parse_json(zarr_call(rz_node_document(h, ""))))
  a <- got$attributes
  expect_identical(a$int, 5L)
  expect_identical(a$neg, -7L)
  expect_identical(a$max, 2147483647L)
  expect_identical(a$min, -2147483648)
  expect_identical(a$big, 3e9)
  expect_identical(a$past53, "9007199254740993")
  expect_identical(a$huge, 12345678901234567890)
  expect_identical(a$real, 1)
  expect_identical(a$exp, 1000)
  expect_true("none" %in% names(a))
  expect_null(a$none)
  expect_identical(a$empty, structure(list(), names = character(0)))
  expect_identical(a$list, list())
  expect_identical(a$mixed, list(1L, "a", NULL, list(FALSE)))
  expect_identical(a$text, "caf\u00e9")
  expect_identical(Encoding(a$text), "UTF-8")
  expect_identical(a$nested, list(a = list(b = list(0.5))))
})

test_that("a node shows the document its store holds, read again after a write behind its back", {
  for (s in list(zarr_memorystore$new(), zarr_localstore$new(local_store_path()))) {
    s$create_group("", "")
    z <- zarr$new(s)
    a <- z$add_array("/", "x", define_array("int32", 4))
    g <- z$add_group("/", "g")
    g$set_attribute("k", 1L)
    expect_identical(z[["/g"]]$attribute("k"), 1L)
    # Rewritten behind the node objects: they show the new documents.
    doc <- jsonlite::fromJSON(rawToChar(s$get("x/zarr.json")), simplifyVector = FALSE)
    doc$shape <- list(6L)
    s$set("x/zarr.json", charToRaw(as.character(jsonlite::toJSON(doc, auto_unbox = TRUE, null = "null"))))
    expect_identical(a$shape, 6L, info = class(s)[1])
    s$set("g/zarr.json", charToRaw('{"zarr_format": 3, "node_type": "group", "attributes": {"k": 2}}'))
    expect_identical(g$attribute("k"), 2L, info = class(s)[1])
    # Setting the document stores it.
    meta <- g$metadata
    meta$attributes$k <- 3L
    g$metadata <- meta
    expect_identical(zarr$new(s)[["/g"]]$attribute("k"), 3L, info = class(s)[1])
  }
})
