# Nodes of a Zarr hierarchy: what groups and arrays share (name, place in
# the hierarchy, metadata document and attributes). A node object holds its
# store and its place; its metadata document is the one the store's engine
# handle holds (src/rust/src/node.rs), which forgets it when a write
# through the handle makes it stale.

#' Zarr hierarchy node
#'
#' @description The common ancestor of [zarr_group] and [zarr_array]: a named node in a
#' hierarchy with a metadata document and attributes. Attribute edits
#' (`set_attribute()`, `delete_attributes()`) are written to the store at
#' once, so they are never lost; `save()` writes the metadata document again.
#'
#' @docType class
#' @export
zarr_node <- R6::R6Class("zarr_node",
  cloneable = FALSE,
  public = list(
    #' @description Initialize a node.
    #' @param name The name of the node ("" for the root).
    #' @param metadata The metadata document, a list: shown only while the
    #'   store has no document at the node's path (the store's document is
    #'   the node's metadata).
    #' @param parent The parent group, or NULL for the root.
    #' @param store The store; ignored when a parent is given.
    initialize = function(name, metadata, parent = NULL, store = NULL) {
      private$.name <- name
      private$.given <- metadata
      private$.parent <- parent
      private$.store <- if (is.null(parent)) store else parent$store
    },
    #' @description Print the attributes of the node.
    #' @param ... `width = ` sets the width of values.
    print_attributes = function(...) {
      dt <- if (inherits(self, "zarr_array")) self$data_type$data_type
      node_print_attributes(self$attributes, ..., data_type = dt)
    },
    #' @description Set an attribute and write the metadata to the store.
    #' @param name The name of the attribute, or a path into nested
    #'   attributes as in R-CF's zarr: "a/b" is "b" inside the object "a"
    #'   (made when missing), "a/2" the second element of the array "a".
    #' @param value The value: a vector or list of character, numeric or
    #'   logical values.
    #' @return Self, invisibly.
    set_attribute = function(name, value) {
      node_set_attributes(self, private, attribute_set(self$attributes, name, value))
    },
    #' @description The value of an attribute.
    #' @param name The name of the attribute, or a path as in
    #'   `set_attribute()`; a number indexes an array (1-based).
    #' @return The value, or NULL when there is none.
    attribute = function(name) attribute_get(self$attributes, name),
    #' @description Add a value to an attribute that is an array (made when
    #'   missing) and write the metadata to the store.
    #' @param name The name or path of the attribute.
    #' @param value The value to add, as one element.
    #' @param after The element after which it goes: NULL for the end, 0 for
    #'   the front.
    #' @return Self, invisibly.
    append_array_attribute = function(name, value, after = NULL) {
      node_set_attributes(self, private, attribute_append(self$attributes, name, value, after))
    },
    #' @description Delete an attribute, or an element inside one given by
    #'   its path, and write the metadata to the store. A path that is not
    #'   there changes nothing.
    #' @param name The name or path of the attribute.
    #' @return Self, invisibly.
    delete_attribute = function(name) node_set_attributes(self, private, attribute_delete(self$attributes, name)),
    #' @description Delete attributes and write the metadata to the store.
    #' @param name Names of the attributes to delete.
    #' @return Self, invisibly.
    delete_attributes = function(name) {
      attrs <- self$attributes
      node_set_attributes(self, private, attrs[setdiff(names(attrs), name)])
    },
    #' @description Called on each node when it is built into an opened
    #'   hierarchy (its parent is in place); does nothing here. Domain
    #'   classes override it for work that needs the hierarchy.
    #' @return Self, invisibly.
    post_open = function() invisible(self),
    #' @description Take the parent from a function called on first use of
    #'   it (internal: the root's children opened before the root).
    #' @param parent A function of no arguments that gives the parent group.
    #' @return Self, invisibly.
    defer_parent = function(parent) {
      delayedAssign(".parent", parent(), assign.env = private)
      invisible(self)
    },
    #' @description The relative path from this node to another.
    #' @param to A node, or an absolute path.
    #' @return The path, with ".." for each level up; "." for this node.
    relative_path = function(to) node_relative_path(self, to),
    #' @description The absolute path of a path relative to this node.
    #' @param dest A relative path; ".." goes up, "." stays.
    #' @return An absolute path starting with "/".
    absolute_path = function(dest) node_absolute_path(self, dest),
    #' @description Walk from this node along node names: ".." goes to the
    #'   parent, any other name to a child.
    #' @param node_names A character vector of names, as
    #'   `strsplit(path, "/")[[1]]` gives them.
    #' @return The node reached; an error of class `zarr_error_not_found`
    #'   when there is none.
    walk_path = function(node_names) node_walk_path(self, node_names),
    #' @description Write the metadata document to the store again.
    #' @return Self, invisibly.
    save = function() {
      node_store_metadata(self, private, self$metadata)
      invisible(self)
    }
  ),
  active = list(
    #' @field name (read-only) The name of the node.
    name = function(value) private$.name,
    #' @field parent (read-only) The parent group, NULL for the root.
    parent = function(value) private$.parent,
    #' @field store (read-only) The store of the node.
    store = function(value) private$.store,
    #' @field path (read-only) The path of the node, "/" for the root.
    path = function(value) {
      if (is.null(private$.parent)) return("/")
      pp <- private$.parent$path
      if (pp == "/") paste0("/", private$.name) else paste(pp, private$.name, sep = "/")
    },
    #' @field prefix (read-only) The store prefix of the node: "" for the
    #'   root, otherwise the path without leading "/" and with a trailing "/".
    prefix = function(value) as_prefix(self$path),
    #' @field metadata The metadata document, a list: the one the store
    #'   holds at the node's path, as last read or written through it.
    #'   Setting it writes the new document to the store.
    metadata = function(value) {
      if (missing(value)) return(node_metadata(self, private))
      if (!is.list(value)) zarr_abort("argument", "metadata must be a list")
      node_store_metadata(self, private, value)
    },
    #' @field attributes (read-only) The attributes, a named list.
    attributes = function(value) {
      a <- self$metadata$attributes
      if (is.null(a)) structure(list(), names = character(0)) else a
    }
  ),
  private = list(
    .name = NULL,
    # The document given to new(), for a node the store has none for (one
    # built by hand before it is written, or a store without an engine).
    .given = NULL,
    # The text of the document last seen in the handle and its R form.
    .seen = NULL,
    .store_handle = NULL,
    .key = NULL,
    .parent = NULL,
    .store = NULL,
    metadata_changed = function() invisible(NULL)
  )
)

# The node's document as the store's engine handle holds it (read when it
# holds none); the one given to new() where the store has none. The R form
# of the text last seen is kept, and used while the handle holds that same
# text: the list the node wrote keeps R's types (a double stays double, a
# member left out stays out) until the document changes in the store. It
# is taken without asking for the text while the handle's count of
# document changes stays where it was when it was seen.
node_metadata <- function(node, private) {
  h <- node_handle(private)
  if (is.null(h)) return(private$.given)
  seen <- private$.seen
  if (!is.null(seen) && identical(seen$generation, rz_node_generation(h))) return(seen$meta)
  got <- zarr_call(rz_node_metadata(h, node_key(node, private), TRUE, seen$text %||% ""))
  if (isTRUE(got)) {
    private$.seen$generation <- rz_node_generation(h)
    return(seen$meta)
  }
  if (is.null(got)) return(private$.given)
  meta <- if (is.character(got$meta)) parse_json(got$meta) else got$meta
  private$.seen <- list(text = got$text, meta = meta, generation = rz_node_generation(h))
  meta
}

# A value derived from the node's document by `derive`, kept with the
# document as last seen (`name` in private$.seen) until that changes.
node_derived <- function(node, private, name, derive) {
  meta <- node_metadata(node, private)
  seen <- private$.seen
  # (identical() of one object is a pointer comparison)
  if (is.null(seen) || !identical(seen$meta, meta)) return(derive(meta))
  seen[[name]] %||% (private$.seen[[name]] <- derive(meta))
}

# The store's engine handle and the node's key path, found once: a node's
# store and place never change, and finding them took two thirds of an
# access to the metadata.
node_handle <- function(private) {
  private$.store_handle %||% (private$.store_handle <- store_handle_or_null(private$.store))
}
node_key <- function(node, private) private$.key %||% (private$.key <- node_key_path(node$path))

# Write `meta` as the node's document; the handle holds it from now on.
node_store_metadata <- function(node, private, meta) {
  private$.store$set_metadata(node$path, meta)
  h <- node_handle(private)
  if (is.null(h)) {
    private$.given <- meta
  } else {
    got <- zarr_call(rz_node_metadata(h, node_key(node, private), TRUE, ""))
    private$.seen <- if (is.list(got)) list(text = got$text, meta = meta, generation = rz_node_generation(h))
  }
  private$metadata_changed()
  invisible(node)
}

#' Whether a name can name a node
#'
#' The rules of the Zarr specification: a node name is not empty, has no
#' "/", is not made of periods only ("." or ".."), and does not start with
#' "__" (reserved). R-CF's zarr also refuses characters other than letters,
#' digits and "-", "_", "."; the specification allows them (it only
#' recommends that set for portability), and so does this function: a name
#' such as "air temperature" is valid.
#'
#' @param name A character string.
#' @return TRUE or FALSE.
#' @export
#' @examples
#' is_valid_node_name("temperature")
#' is_valid_node_name("..")
#' is_valid_node_name("__private")
is_valid_node_name <- function(name) {
  is.character(name) && length(name) == 1L && !is.na(name) && nzchar(name) &&
    !grepl("/", name, fixed = TRUE) && !grepl("^[.]+$", name) && !startsWith(name, "__")
}

path_parts <- function(path) {
  parts <- strsplit(path, "/", fixed = TRUE)[[1L]]
  parts[nzchar(parts)]
}

node_relative_path <- function(node, to) {
  if (inherits(to, "zarr_node")) to <- to$path
  check_string(to, "to")
  target <- path_parts(to)
  if (any(target %in% c(".", ".."))) {
    zarr_abort("argument", sprintf("`to` ('%s') must be an absolute path of node names", to))
  }
  from <- path_parts(node$path)
  common <- 0L
  while (common < min(length(from), length(target)) && from[common + 1L] == target[common + 1L]) {
    common <- common + 1L
  }
  parts <- c(rep("..", length(from) - common), target[seq_len(length(target) - common) + common])
  if (length(parts)) paste(parts, collapse = "/") else "."
}

node_absolute_path <- function(node, dest) {
  check_string(dest, "dest")
  parts <- path_parts(node$path)
  for (seg in path_parts(dest)) {
    if (seg == "..") {
      if (!length(parts)) zarr_abort("not_found", sprintf("'%s' goes above the root from '%s'", dest, node$path))
      parts <- parts[-length(parts)]
    } else if (seg != ".") {
      parts <- c(parts, seg)
    }
  }
  paste0("/", paste(parts, collapse = "/"))
}

node_walk_path <- function(node, node_names) {
  if (!is.character(node_names)) zarr_abort("argument", "`node_names` must be a character vector")
  for (nm in node_names[nzchar(node_names) & node_names != "."]) {
    nxt <- if (nm == "..") node$parent else if (inherits(node, "zarr_group")) node$get_node(nm)
    if (is.null(nxt)) {
      zarr_abort("not_found", sprintf("node '%s' has no %s", node$path,
                                      if (nm == "..") "parent" else sprintf("child '%s'", nm)))
    }
    node <- nxt
  }
  node
}

node_print_attributes <- function(attrs, width = 60L, ..., data_type = NULL) {
  if (!length(attrs)) return(invisible(NULL))
  cat("attributes:\n")
  w <- max(nchar(names(attrs)))
  for (n in names(attrs)) {
    v <- attrs[[n]]
    if (n %in% c("_FillValue", "missing_value") && !is.null(data_type)) v <- cf_fill_shown(v, data_type)
    txt <- if (is.list(v)) as.character(to_json(v, pretty = FALSE)) else paste(format(v), collapse = ", ")
    if (nchar(txt) > width) txt <- paste0(substr(txt, 1L, width - 3L), "...")
    cat(sprintf("  %-*s : %s\n", w, n, txt))
  }
  invisible(NULL)
}
