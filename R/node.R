# Nodes of a Zarr hierarchy: what groups and arrays share (name, place in
# the hierarchy, metadata document and attributes).

#' Zarr hierarchy node
#'
#' The common ancestor of [zarr_group] and [zarr_array]: a named node in a
#' hierarchy with a metadata document and attributes. Attribute edits
#' (`set_attribute()`, `delete_attributes()`) are written to the store at
#' once, so they are never lost; `save()` writes the metadata document again.
#'
#' @docType class
#' @export
zarr_node <- R6::R6Class("zarr_node",
  public = list(
    #' @description Initialize a node.
    #' @param name The name of the node ("" for the root).
    #' @param metadata The metadata document, a list.
    #' @param parent The parent group, or NULL for the root.
    #' @param store The store; ignored when a parent is given.
    initialize = function(name, metadata, parent = NULL, store = NULL) {
      private$.name <- name
      private$.metadata <- metadata
      private$.parent <- parent
      private$.store <- if (is.null(parent)) store else parent$store
    },
    #' @description Print the attributes of the node.
    #' @param ... `width = ` sets the width of values.
    print_attributes = function(...) node_print_attributes(self$attributes, ...),
    #' @description Set an attribute and write the metadata to the store.
    #' @param name The name of the attribute.
    #' @param value The value: a vector or list of character, numeric or
    #'   logical values.
    #' @return Self, invisibly.
    set_attribute = function(name, value) {
      check_string(name, "name")
      if (!nzchar(name) || nchar(name) > 255L) {
        zarr_abort("argument", "an attribute name must have 1 to 255 characters")
      }
      attrs <- self$attributes
      attrs[[name]] <- value
      private$.metadata$attributes <- attrs
      self$save()
    },
    #' @description Delete attributes and write the metadata to the store.
    #' @param name Names of the attributes to delete.
    #' @return Self, invisibly.
    delete_attributes = function(name) {
      attrs <- self$attributes
      attrs <- attrs[setdiff(names(attrs), name)]
      private$.metadata$attributes <- if (length(attrs)) attrs else structure(list(), names = character(0))
      self$save()
    },
    #' @description Write the metadata document to the store.
    #' @return Self, invisibly.
    save = function() {
      private$.store$set_metadata(self$path, private$.metadata)
      private$metadata_changed()
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
    #' @field metadata The metadata document, a list.
    metadata = function(value) {
      if (missing(value)) return(private$.metadata)
      if (!is.list(value)) zarr_abort("argument", "metadata must be a list")
      private$.metadata <- value
      private$metadata_changed()
    },
    #' @field attributes (read-only) The attributes, a named list.
    attributes = function(value) {
      a <- private$.metadata$attributes
      if (is.null(a)) structure(list(), names = character(0)) else a
    }
  ),
  private = list(
    .name = NULL,
    .metadata = NULL,
    .parent = NULL,
    .store = NULL,
    metadata_changed = function() invisible(NULL)
  )
)

node_print_attributes <- function(attrs, width = 60L, ...) {
  if (!length(attrs)) return(invisible(NULL))
  cat("attributes:\n")
  w <- max(nchar(names(attrs)))
  for (n in names(attrs)) {
    v <- attrs[[n]]
    txt <- if (is.list(v)) as.character(to_json(v, pretty = FALSE)) else paste(format(v), collapse = ", ")
    if (nchar(txt) > width) txt <- paste0(substr(txt, 1L, width - 3L), "...")
    cat(sprintf("  %-*s : %s\n", w, n, txt))
  }
  invisible(NULL)
}
