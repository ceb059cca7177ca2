# The zarr object: a store and the hierarchy of nodes in it.

#' Zarr object
#'
#' @description A Zarr data set: a store and the hierarchy of groups and arrays in it.
#' Create one with [create_zarr()], [open_zarr()] or [as_zarr()].
#'
#' Paths are absolute: "/" is the root node, "/group/array" a node below it.
#'
#' @docType class
#' @export
#' @examples
#' z <- create_zarr()
#' z$add_group("/", "g")
#' z$add_array("/g", "a", define_array("int32", c(4, 4)))
#' z
#' z$hierarchy()
#' z$arrays
zarr <- R6::R6Class("zarr",
  public = list(
    #' @description Open the hierarchy in a store.
    #' @param store A [zarr_store] holding a root group or array.
    initialize = function(store) {
      if (!inherits(store, "zarr_store")) zarr_abort("argument", "`store` must be a zarr_store")
      private$.store <- store
      meta <- store$get_metadata("")
      if (is.null(meta)) zarr_abort("not_found", "the store has no root group or array ('zarr.json')")
      zarr_defer_root(private, meta, store)
    },
    #' @description Print a summary.
    #' @param ... Ignored.
    print = function(...) zarr_print(self),
    #' @description Print the hierarchy as a tree.
    hierarchy = function() {
      cat(hierarchy_lines(private$.root), sep = "\n")
      invisible(self)
    },
    #' @description Retrieve the node at a path.
    #' @param path An absolute path starting with "/".
    #' @return A [zarr_group] or [zarr_array], or NULL if there is none (a
    #'   path that does not start with "/" finds nothing either).
    get_node = function(path) zarr_get_node(private, path),
    #' @description Add a group.
    #' @param path The path of the parent group.
    #' @param name The name of the new group.
    #' @return The new [zarr_group], or NULL (with a warning that says why)
    #'   when it cannot be created: the parent is missing or is an array, the
    #'   name is invalid or taken, or the store holds a single array.
    add_group = function(path, name) node_or_null(private$group_at(path)$add_group(name)),
    #' @description Add an array.
    #' @param path The path of the parent group.
    #' @param name The name of the new array.
    #' @param metadata A list or [array_builder] defining the array. A
    #'   missing `chunk_key_encoding` is filled in with the store's (see the
    #'   store's `separator`), and missing dimension names with
    #'   `"<name>_dim_0"`, ... (see [as_zarr()]), so that xarray opens the
    #'   store. In a Zarr v3 store a new array whose fill value reads as
    #'   `NA` also gets the attribute xarray masks with (`_FillValue` for
    #'   numbers other than a NaN fill, `missing_value` for strings), unless
    #'   it has one: it shows
    #'   in `$attributes`, unlike in R-CF's zarr (see [as_zarr()]).
    #' @return The new [zarr_array], or NULL (with a warning that says why)
    #'   when it cannot be created, as for `add_group()`, or when the
    #'   metadata is not valid.
    add_array = function(path, name, metadata) node_or_null(private$group_at(path)$add_array(name, metadata)),
    #' @description Delete a group.
    #' @param path The path of the group; "/" clears the root group.
    #' @param recursive Whether to delete a group that is not empty, with
    #'   everything in it.
    #' @return Self, invisibly.
    delete_group = function(path, recursive = FALSE) zarr_delete_group(self, private, path, recursive),
    #' @description Write consolidated metadata: the metadata documents of
    #'   every group and array, in the root group's zarr.json (as
    #'   zarr-python does; .zmetadata for Zarr v2), so that readers open the hierarchy with one read
    #'   and no listing (which HTTP stores cannot do). Later changes to the
    #'   hierarchy are not in it until it is written again.
    #' @return Self, invisibly.
    consolidate = function() zarr_consolidate(self),
    #' @description Delete an array. Deleting a root array leaves an empty
    #'   root group.
    #' @param path The path of the array.
    #' @return Self, invisibly.
    delete_array = function(path) zarr_delete_array(self, private, path)
  ),
  active = list(
    #' @field version (read-only) The Zarr version, 3.
    version = function(value) private$.store$version,
    #' @field root (read-only) The root node.
    root = function(value) private$.root,
    #' @field store (read-only) The store.
    store = function(value) private$.store,
    #' @field domain (read-only) The domain that built the root node.
    domain = function(value) node_domain(private$.root),
    #' @field groups (read-only) The paths of all groups.
    groups = function(value) if (inherits(private$.root, "zarr_group")) private$.root$groups,
    #' @field arrays (read-only) The paths of all arrays.
    arrays = function(value) if (inherits(private$.root, "zarr_group")) private$.root$arrays else "/"
  ),
  private = list(
    .store = NULL,
    .root = NULL,
    # Children of the root opened by path before the root node was built
    # (see zarr_defer_root()); NULL once it is.
    .opened = NULL,
    group_at = function(path) {
      if (!inherits(private$.root, "zarr_group")) {
        zarr_abort("unsupported", "the store holds a single array: nodes cannot be added to it")
      }
      g <- self$get_node(path)
      if (!inherits(g, "zarr_group")) {
        what <- if (is.null(g)) "there is no group at '%s'" else "'%s' is an array, not a group"
        zarr_abort("not_found", sprintf(what, path))
      }
      g
    },
    set_root = function(node) {
      private$.opened <- NULL
      private$.root <- node
    }
  )
)

# The root node is built when it is first asked for: `open_zarr(x)[["/a"]]`
# then builds one node object, the array's, not the root group's too (an
# R6 object costs about as much as the rest of such an open).
zarr_defer_root <- function(private, meta, store) {
  # (a root array has no children to open first)
  private$.opened <- if (identical(meta$node_type, "group")) list()
  delayedAssign(".root", zarr_build_root(private, meta, store), assign.env = private)
}

# The root node, with the children opened before it as its children.
zarr_build_root <- function(private, meta, store) {
  root <- build_node("", meta, NULL, store)
  if (inherits(root, "zarr_group")) {
    for (node in private$.opened) root$keep_child(node)
  }
  private$.opened <- NULL
  root
}

# The node at an absolute `path`; NULL when there is none.
zarr_get_node <- function(private, path) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !startsWith(path, "/")) return(NULL)
  rel <- if (startsWith(path, "//")) sub("^/+", "", path) else substring(path, 2L)
  if (!is.null(private$.opened) && nzchar(rel)) {
    node <- root_child(private, rel)
    if (!identical(node, FALSE)) return(node)
  }
  root <- private$.root
  if (!nzchar(rel)) return(root)
  if (!inherits(root, "zarr_group")) return(NULL)
  root$get_node(rel)
}

# The child `name` of a root group not yet built, opened as group_child()
# would open it, its parent the root once that is asked for; NULL when
# there is none. FALSE where only the root can answer: a path of more than
# one name, a node that cannot be read, registered domains (their build()
# is given the parent).
root_child <- function(private, name) {
  known <- private$.opened[[name]]
  if (!is.null(known)) return(known)
  if (grepl("/", name, fixed = TRUE) || name %in% c(".", "..") || length(domain_registry$domains)) return(FALSE)
  store <- private$.store
  meta <- child_metadata(store, name, warn = FALSE)
  if (is.null(meta)) return(NULL)
  if (!is.null(meta$unreadable)) return(FALSE)
  node <- domain_registry$default$build(name, meta, NULL, store)
  node_defer_parent(node, private)
  node$post_open()
  private$.opened[[name]] <- node
  node
}

# The parent of a child of the root is the root node, built on first use.
node_defer_parent <- function(node, zarr_private) {
  node$defer_parent(function() zarr_private$.root)
}

# The value of `expr`, a new node; NULL with a warning when it cannot be
# made, so that the reason is not lost (the manual returns NULL).
node_or_null <- function(expr) {
  # A failing store (read-only, I/O) is not a node that cannot be made: it
  # stays an error.
  refused <- function(e) {
    zarr_warn(conditionMessage(e))
    NULL
  }
  tryCatch(expr, zarr_error_argument = refused, zarr_error_not_found = refused, zarr_error_metadata = refused,
           zarr_error_unsupported = refused, zarr_error_type = refused)
}

zarr_consolidate <- function(self) {
  root <- self$root
  if (!inherits(root, "zarr_group")) zarr_abort("argument", "only a hierarchy with a root group can be consolidated")
  entries <- list()
  walk <- function(g) {
    for (ch in g$children) {
      # A node this package cannot read stays in the store, out of the index.
      if (inherits(ch, "zarr_unreadable_node")) next
      meta <- ch$metadata
      meta$consolidated_metadata <- NULL
      entries[[node_key_path(ch$path)]] <<- meta
      if (inherits(ch, "zarr_group")) walk(ch)
    }
  }
  walk(root)
  if (identical(as.integer(root$metadata$zarr_format), 2L)) {
    nodes <- c(list(root$metadata), entries)
    docs <- vapply(nodes, function(m) as.character(to_json(m, pretty = FALSE)), character(1))
    txt <- zarr_call(rz_consolidate_v2(c("", names(entries)), unname(docs)))
    self$store$set(".zmetadata", charToRaw(enc2utf8(txt)))
    self$store$get_metadata("")
    return(invisible(self))
  }
  meta <- root$metadata
  if (!length(entries)) entries <- structure(list(), names = character(0))
  meta$consolidated_metadata <- list(kind = "inline", must_understand = FALSE, metadata = entries)
  root$metadata <- meta
  self$store$get_metadata("")
  invisible(self)
}

zarr_delete_group <- function(self, private, path, recursive) {
  check_flag(recursive, "recursive")
  g <- private$group_at(path)
  if (length(g$children) && !recursive) {
    zarr_abort("argument", sprintf("group '%s' is not empty; use recursive = TRUE", path))
  }
  if (is.null(g$parent)) {
    g$delete_all()
  } else {
    self$store$erase_prefix(g$prefix)
    g$parent$forget_child(g$name)
  }
  invisible(self)
}

zarr_delete_array <- function(self, private, path) {
  a <- self$get_node(path)
  if (!inherits(a, "zarr_array")) zarr_abort("not_found", sprintf("there is no array at '%s'", path))
  if (is.null(a$parent)) {
    self$store$erase_prefix("")
    self$store$create_group("", "")
    private$set_root(build_node("", self$store$get_metadata(""), NULL, self$store))
  } else {
    self$store$erase_prefix(a$prefix)
    a$parent$forget_child(a$name)
  }
  invisible(self)
}

zarr_print <- function(z) {
  cat("<Zarr object> version ", z$version, "\n", sep = "")
  cat("store : ")
  print(z$store)
  root <- z$root
  if (inherits(root, "zarr_array")) {
    cat("root  : array [", paste(root$shape, collapse = " x "), "] ", root$data_type$data_type, "\n", sep = "")
  } else if (!children_known(root)) {
    cat("root  : group; its children are ", children_unknown_note(), "\n", sep = "")
  } else {
    # (the hierarchy, not this summary, shows a node that cannot be read)
    groups <- suppressWarnings(z$groups, classes = "zarr_warning")
    arrays <- suppressWarnings(z$arrays, classes = "zarr_warning")
    cat("root  : group with ", length(groups) - 1L, " sub-group", if (length(groups) != 2L) "s", " and ",
        length(arrays), " array", if (length(arrays) != 1L) "s", "\n", sep = "")
  }
  root$print_attributes()
  invisible(z)
}

#' Create a Zarr store
#'
#' Creates a new Zarr (version 3) data set with an empty root group, on the
#' local file system or in memory.
#'
#' @param location A folder for the store (a path or `file://` URI; ".zarr"
#'   is the customary extension), the URL of an object store (`s3://`,
#'   `gs://`, `az://`, `abfs://`, see [zarr_objectstore]) or such a store
#'   object, or NULL for a store in memory. The location must not hold a
#'   Zarr store already.
#' @param zarr_format 3 (the default), or 2 for tools that read only Zarr
#'   version 2 (such as GDAL before 3.8). Arrays added to a version 2 store
#'   are version 2 arrays. (An addition to the manual's `create_zarr()`.)
#' @return A [zarr] object.
#' @export
#' @examples
#' fn <- tempfile(fileext = ".zarr")
#' my_zarr_object <- create_zarr(fn)
#' my_zarr_object$store$root
#' unlink(fn, recursive = TRUE)
create_zarr <- function(location = NULL, zarr_format = 3L) {
  store <- new_store(location, zarr_format)
  store$create_group("", "")
  zarr$new(store)
}

# A new, empty store for a data set of `zarr_format` (3 or 2).
new_store <- function(location, zarr_format = 3L) {
  if (!identical(as.integer(zarr_format), 3L) && !identical(as.integer(zarr_format), 2L)) {
    zarr_abort("argument", "`zarr_format` must be 3 or 2")
  }
  store <- if (is.null(location)) {
    zarr_memorystore$new()
  } else if (inherits(location, "zarr_objectstore")) {
    location
  } else {
    check_string(location, "location")
    if (is_object_url(location)) {
      zarr_objectstore$new(location)
    } else {
      zarr_localstore$new(location, read_only = FALSE, create = TRUE)
    }
  }
  if (!is.null(store$get_metadata(""))) {
    zarr_abort("argument", sprintf("'%s' already holds a Zarr store; use open_zarr()", store$uri))
  }
  zarr_call(rz_node_version(store_handle(store), as.integer(zarr_format)))
  store
}

#' Open a Zarr store
#'
#' Opens an existing Zarr data set (version 3 or 2) on the local file
#' system, in an object store (`s3://`, `gs://`, `az://`, `abfs://` and S3
#' `https://` URLs, see [zarr_objectstore]), on a web server (`http://`,
#' `https://`; read-only), or described
#' by an fsspec reference set (a `.json` reference file or a folder of
#' Parquet references, see [zarr_refstore]; a URL is a reference set when
#' its name ends in `.json` or `.parq`). A path that does not exist is
#' an error (`zarr_error_not_found`); nothing is created.
#'
#' @param location The folder of the store, a path or `file://` URI; a URL;
#'   or a store object ([zarr_store]) to open as it is.
#' @param read_only Whether to open the store read-only. Default FALSE.
#' @return A [zarr] object.
#' @export
#' @examples
#' fn <- tempfile(fileext = ".zarr")
#' z <- as_zarr(matrix(rnorm(6), 2, 3), location = fn)
#' z2 <- open_zarr(fn, read_only = TRUE)
#' z2[["/"]][]
#' unlink(fn, recursive = TRUE)
open_zarr <- function(location, read_only = FALSE) {
  if (inherits(location, "zarr_store")) return(zarr$new(location))
  check_string(location, "location")
  check_flag(read_only, "read_only")
  if (is_reference_set(location)) return(zarr$new(zarr_refstore$new(location)))
  if (grepl("://", location, fixed = TRUE)) {
    if (is_object_url(location)) {
      return(zarr$new(zarr_objectstore$new(location, read_only = read_only)))
    }
    if (grepl("^https?://", location, ignore.case = TRUE)) {
      # HTTP stores are always read-only, whatever `read_only` says.
      return(zarr$new(zarr_httpstore$new(location)))
    }
  }
  store <- zarr_localstore$new(location, read_only = read_only, create = FALSE)
  zarr$new(store)
}

r_data_type <- function(x) {
  if (inherits(x, "integer64")) return("int64")
  switch(typeof(x),
    logical = "bool",
    integer = "int32",
    double = "float64",
    complex = "complex128",
    character = "string",
    zarr_abort("type", sprintf("cannot convert an R object of type '%s' to a Zarr array", typeof(x)))
  )
}

#' Convert an R object into a Zarr array
#'
#' Stores an R vector, matrix or array as a Zarr array: logical becomes
#' bool, integer int32, double float64, complex complex128 and
#' `bit64::integer64` int64. Chunks are at most 100 long along each
#' dimension, and the codecs those of [define_array()]; arrays of at most
#' `zarr_options("min_compress")` elements (100) are left uncompressed, as
#' in R-CF's zarr.
#'
#' The array is written so that `xarray.open_zarr()` reads it as R means
#' it (see [cf_decoding]):
#' * every dimension has a name (v3 `dimension_names`, v2
#'   `_ARRAY_DIMENSIONS`): `names(dimnames(x))` where given, else
#'   `"<name>_dim_0"`, `"<name>_dim_1"`, ... (`"dim_0"`, ... for a root
#'   array). xarray gives each dimension name one extent in a group, so
#'   arrays sharing a name must have the same extent along it; the default
#'   names belong to one array each and never clash. R reads the default
#'   names back as no names, so `as_zarr(x)[["/"]][]` is `x`.
#' * integer arrays carry xarray's `_FillValue` (a v3 attribute, as a
#'   number; in v2 the fill value), so that `NA` shows in xarray as NaN
#'   (integers become floating point there, as xarray masks them); so do
#'   float arrays with a fill value other than NaN (as base64 of a
#'   float64, which `print()` shows decoded), while a NaN fill needs no
#'   attribute, being NaN in xarray anyway; string arrays (characters,
#'   factors) carry `missing_value` (v3; the fill value U+2400), so that
#'   `NA` shows as missing. In Zarr v3 these are attributes, and show in
#'   `$attributes` of the array (also of arrays made with `add_array()`),
#'   which R-CF's zarr does not write: xarray ignores the v3 fill value
#'   and masks only through them (and refuses a text `_FillValue`, hence
#'   `missing_value` for strings). R reads such an array as before, as the
#'   attribute repeats the fill value. Delete the attribute
#'   (`$delete_attribute()`) if you want the metadata alone.
#' * POSIXct is stored as float64 seconds and Date as float64 days since
#'   1970-01-01 (`units`, `calendar = "proleptic_gregorian"`): xarray shows
#'   datetime64, and R reads both back as POSIXct in UTC (a Date as its
#'   midnight; `as.Date()` gives it back).
#' * a factor is stored as its labels (strings); a logical with `NA` as
#'   int8 0/1 with `_FillValue` and CF `flag_values`/`flag_meanings`
#'   ("false true"): xarray shows 0/1 with NaN, R reads back a logical.
#'   A character `NA` shows in xarray as a missing value (NaN) in both
#'   formats; zarr-python alone shows the fill value, U+2400.
#'
#' xarray opens groups, not a store whose root is an array: give a `name`
#' (or a `location` group) for stores meant for xarray.
#'
#' @param x A logical, integer, double, complex or character vector,
#'   matrix or array, a factor, POSIXct or Date; a data.frame, written as
#'   a 1-d struct array (see [struct_type()]); or a `stars` data cube,
#'   written as a group of CF variables (see [zarr_stars]).
#' @param name Optional name of the array. Without a name the array is the
#'   root of a new store.
#' @param location Optional: a [zarr_group] to add the array to (then
#'   `name` is required), or a folder or object store URL for a new store
#'   (see [create_zarr()]). NULL (the default) makes a store in memory.
#' @param zarr_format 3 (the default) or 2, for a new store (see
#'   [create_zarr()]).
#' @return The new [zarr_array] when `location` is a group, otherwise the
#'   new [zarr] object.
#' @export
#' @examples
#' x <- array(1:400, c(5, 20, 4))
#' z <- as_zarr(x)
#' z
#' identical(z[["/"]][], x)
as_zarr <- function(x, name = NULL, location = NULL, zarr_format = 3L) {
  if (inherits(x, "stars")) return(stars_as_zarr(x, name, location, zarr_format))
  if (is.data.frame(x)) return(struct_as_zarr(x, name, location, zarr_format))
  prep <- cf_prepare(x)
  dims <- cf_dimension_names(x, name)
  x <- prep$data
  dtype <- prep$data_type
  shape <- if (is.null(dim(x))) length(x) else dim(x)
  def <- define_array(dtype, shape)
  if (length(x) <= zarr_options("min_compress")) def$remove_codec(if (dtype == "string") "zstd" else "blosc")
  if (inherits(location, "zarr_group")) zarr_format <- location$store$version
  def <- cf_annotate(def, prep, dims, zarr_format)
  if (inherits(location, "zarr_group")) {
    if (is.null(name)) zarr_abort("argument", "`name` is required when `location` is a group")
    arr <- location$add_array(name, def)
    arr$write(x)
    return(arr)
  }
  store <- new_store(location, zarr_format)
  if (is.null(name)) {
    store$create_array("", "", def)
    z <- zarr$new(store)
    z$root$write(x)
  } else {
    store$create_group("", "")
    z <- zarr$new(store)
    z$add_array("/", name, def)$write(x)
  }
  z
}
