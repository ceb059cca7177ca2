#' Zarr group
#'
#' @description A group is a node that holds other groups and arrays. Its children are
#' found by listing the store (or from consolidated metadata) when the
#' hierarchy is opened.
#'
#' @docType class
#' @export
#' @examples
#' z <- create_zarr()
#' root <- z[["/"]]
#' g <- root$add_group("measurements")
#' g$set_attribute("site", "A")
#' root$add_array("temperature", define_array("float64", c(10, 5)))
#' root
#' root$count_arrays()
zarr_group <- R6::R6Class("zarr_group",
  inherit = zarr_node,
  cloneable = FALSE,
  public = list(
    #' @description Open a group; it must exist in the store.
    #' @param name The name ("" for the root group).
    #' @param metadata The metadata document, a list.
    #' @param parent The parent group, or NULL for the root.
    #' @param store The store.
    initialize = function(name, metadata, parent = NULL, store = NULL) {
      super$initialize(name, metadata, parent, store)
    },
    #' @description Print a summary of the group.
    #' @param ... Ignored.
    print = function(...) group_print(self),
    #' @description Print the hierarchy below this group.
    #' @param idx,total Used for indentation while recursing.
    hierarchy = function(idx = 1L, total = 1L) {
      cat(hierarchy_lines(self), sep = "\n")
      invisible(self)
    },
    #' @description Find the children of this group and their descendants.
    #' @return Self, invisibly.
    build_hierarchy = function() {
      private$.children <- group_find_children(self, private$.known)
      private$.known <- list()
      for (ch in private$.children) if (inherits(ch, "zarr_group")) ch$build_hierarchy()
      invisible(self)
    },
    #' @description Retrieve a node by path relative to this group; ".."
    #'   goes up one level.
    #' @param path The relative path.
    #' @return A [zarr_group] or [zarr_array], or NULL if there is none.
    get_node = function(path) group_get_node(self, private, path),
    #' @description Count the arrays in this group.
    #' @param recursive Whether to count arrays in sub-groups too.
    #' @return An integer.
    count_arrays = function(recursive = TRUE) {
      n <- 0L
      for (ch in self$children) {
        if (inherits(ch, "zarr_array")) n <- n + 1L
        else if (recursive) n <- n + ch$count_arrays(TRUE)
      }
      n
    },
    #' @description Add a group under this group.
    #' @param name The name of the new group.
    #' @return The new [zarr_group], or NULL (with a warning that says why)
    #'   when it cannot be created (an invalid or taken name).
    add_group = function(name) node_or_null(group_add_group(self, private, name)),
    #' @description Add an array under this group.
    #' @param name The name of the new array.
    #' @param metadata A list or [array_builder] defining the array. A
    #'   missing `chunk_key_encoding` is filled in with the store's, and
    #'   missing dimension names with `"<name>_dim_0"`, ... (see
    #'   [as_zarr()]). In a Zarr v3 store a new array whose fill value
    #'   reads as `NA` also gets the attribute xarray masks with
    #'   (`_FillValue` for numbers other than a NaN fill, `missing_value`
    #'   for strings), unless it has one: it shows in `$attributes`, unlike
    #'   in R-CF's zarr (see
    #'   [as_zarr()]).
    #' @return The new [zarr_array], or NULL (with a warning that says why)
    #'   when it cannot be created (an invalid or taken name, metadata that
    #'   is not valid).
    add_array = function(name, metadata) node_or_null(group_add_array(self, private, name, metadata)),
    #' @description Delete a child group (which must be empty) or array.
    #' @param name The name of the child.
    #' @return Self, invisibly.
    delete = function(name) group_delete(self, private, name),
    #' @description Delete everything below this group, and its attributes.
    #' @return Self, invisibly.
    delete_all = function() {
      self$store$erase_prefix(self$prefix)
      self$metadata <- list(zarr_format = 3L, node_type = "group", attributes = structure(list(), names = character(0)))
      private$.children <- list()
      private$.known <- list()
      invisible(self)
    },
    #' @description Put a node object into this group's children in place
    #'   of the one of the same name (or as a new child), as R-CF's zarr
    #'   does for domain classes. Only the hierarchy in this session
    #'   changes; nothing is written to the store.
    #' @param node A [zarr_group] or [zarr_array] whose parent is this group.
    #' @return The node.
    set_node = function(node) group_set_node(self, private, node),
    #' @description Keep a child built before the group among its children
    #'   (internal: the root's children opened by path before the root).
    #' @param node The child, a group or array.
    #' @return The node.
    keep_child = function(node) private$add_child(node),
    #' @description Remove a child from the cached children (internal).
    #' @param name The child's name.
    forget_child = function(name) {
      private$.children <- Filter(function(ch) ch$name != name, self$children)
      invisible(self)
    }
  ),
  active = list(
    #' @field children (read-only) The child groups and arrays, a list.
    children = function(value) {
      if (is.null(private$.children)) {
        private$.children <- group_find_children(self, private$.known)
        private$.known <- list()
      }
      private$.children
    },
    #' @field groups (read-only) Paths of the groups from here down.
    groups = function(value) collect_paths(self, private, "zarr_group"),
    #' @field arrays (read-only) Paths of the arrays from here down.
    arrays = function(value) collect_paths(self, private, "zarr_array")
  ),
  private = list(
    .children = NULL,
    # Children met one by one (by name, or added) before the group was
    # listed: the listing reuses these objects.
    .known = list(),
    add_child = function(node) {
      if (is.null(private$.children)) {
        private$.known[[node$name]] <- node
        return(node)
      }
      # Listing the store may already find the new node: keep one object.
      kids <- private$.children
      same <- vapply(kids, function(k) identical(k$name, node$name), logical(1))
      if (any(same)) kids[[which(same)[1L]]] <- node else kids <- c(kids, list(node))
      private$.children <- kids
      node
    }
  )
)

group_set_node <- function(self, private, node) {
  if (!inherits(node, "zarr_node") || !nzchar(node$name)) {
    zarr_abort("argument", sprintf("group '%s': set_node() takes a group or array with a name", self$path))
  }
  if (!identical(node$parent, self)) {
    zarr_abort("argument", sprintf("group '%s': node '%s' has another parent", self$path, node$name))
  }
  private$add_child(node)
}

group_add_group <- function(self, private, name) {
  meta <- self$store$create_group(self$path, name)
  private$add_child(build_node(name, meta, self, self$store))
}

group_add_array <- function(self, private, name, metadata) {
  metadata <- cf_with_dimension_names(metadata, name, self$store$version)
  meta <- self$store$create_array(self$path, name, metadata)
  private$add_child(build_node(name, meta, self, self$store))
}

# Children found by listing the store below the group's prefix; `known`
# holds nodes already built, by name, which are kept (those the listing
# does not find, as on an HTTP store, too).
group_find_children <- function(group, known = list()) {
  store <- group$store
  subs <- tryCatch(store_child_paths(store, group$prefix), zarr_error_unsupported = function(e) {
    # A store that cannot list (HTTP) and has no consolidated metadata.
    zarr_warn(sprintf("the children of group '%s' cannot be found: %s", group$path, conditionMessage(e)))
    character(0)
  })
  out <- list()
  for (s in subs) {
    name <- sub(".*/", "", s)
    if (!is.null(known[[name]])) {
      out[[length(out) + 1L]] <- known[[name]]
      next
    }
    meta <- child_metadata(store, s, warn = FALSE)
    if (is.null(meta)) next
    out[[length(out) + 1L]] <- child_node(name, meta, group)
  }
  listed <- vapply(out, function(ch) ch$name, character(1))
  c(out, unname(known[!names(known) %in% listed]))
}

# The node object for a child's metadata (see child_metadata()).
child_node <- function(name, meta, group) {
  if (!is.null(meta$unreadable)) return(zarr_unreadable_node$new(name, meta, group))
  build_node(name, meta, group, group$store)
}

# The metadata of the node at `path`, or for a node whose metadata this
# package cannot represent, a stand-in holding the error: one such node
# must not hide its siblings. Listings of paths (`arrays`, `groups`) warn
# about it each time; the hierarchy marks it.
child_metadata <- function(store, path, warn = TRUE) {
  unreadable <- function(e) {
    if (warn) unreadable_warn(path, conditionMessage(e))
    kind <- sub("^zarr_error_", "", class(e)[1L])
    list(node_type = "array", unreadable = list(kind = kind, message = conditionMessage(e)))
  }
  tryCatch(store$get_metadata(path), zarr_error_unsupported = unreadable, zarr_error_metadata = unreadable)
}

unreadable_warn <- function(path, message) {
  zarr_warn(sprintf("node '%s' skipped: %s", sub("^/*", "/", path), message))
}

# The error a node that cannot be read raises when it is opened: the class
# of the original failure, with the node's path in the message.
unreadable_abort <- function(node) {
  u <- node$metadata$unreadable
  zarr_abort(u$kind, sprintf("node '%s' cannot be opened: %s", node$path, u$message))
}

# A node listed in a hierarchy whose metadata this package cannot read:
# it is shown (marked) by print() and hierarchy(), left out of `arrays`,
# `groups` and counts, and raises its error when it is opened.
zarr_unreadable_node <- R6::R6Class("zarr_unreadable_node",
  inherit = zarr_node,
  cloneable = FALSE,
  public = list(
    print = function(...) {
      cat("<Zarr node, unreadable> ", self$path, "\n", self$metadata$unreadable$message, "\n", sep = "")
      invisible(self)
    }
  ),
  active = list(
    # The stand-in holding the error: the store's document cannot be read.
    metadata = function(value) private$.given
  )
)

collect_paths <- function(group, private, cls) {
  # Paths need no node objects: below a group whose children were never
  # asked for, walk the store's metadata instead of building them.
  if (is.null(private$.children) && !length(private$.known)) {
    return(walk_paths(group$store, group$path, cls))
  }
  out <- character(0)
  if (cls == "zarr_group") out <- group$path
  for (ch in group$children) {
    if (inherits(ch, "zarr_unreadable_node")) {
      unreadable_warn(ch$path, ch$metadata$unreadable$message)
    } else if (inherits(ch, "zarr_group")) {
      out <- c(out, if (cls == "zarr_group") ch$groups else ch$arrays)
    } else if (cls == "zarr_array") {
      out <- c(out, ch$path)
    }
  }
  out
}

# collect_paths() from the metadata documents alone: the same paths, the
# same warnings for nodes that cannot be represented.
walk_paths <- function(store, path, cls) {
  out <- if (cls == "zarr_group") path else character(0)
  subs <- tryCatch(store_child_paths(store, path), zarr_error_unsupported = function(e) {
    zarr_warn(sprintf("the children of group '%s' cannot be found: %s", path, conditionMessage(e)))
    character(0)
  })
  for (s in subs) {
    meta <- child_metadata(store, s)
    if (is.null(meta) || !is.null(meta$unreadable)) next
    if (identical(meta$node_type, "group")) {
      out <- c(out, walk_paths(store, paste0("/", s), cls))
    } else if (cls == "zarr_array") {
      out <- c(out, paste0("/", s))
    }
  }
  out
}

group_get_node <- function(self, private, path) {
  check_string(path, "path")
  parts <- strsplit(path, "/", fixed = TRUE)[[1L]]
  node <- self
  for (p in parts[nzchar(parts) & parts != "."]) {
    node <- if (p == "..") {
      node$parent
    } else if (identical(node, self)) {
      group_child(self, private, p)
    } else if (inherits(node, "zarr_group")) {
      node$get_node(p)
    }
    if (is.null(node)) return(NULL)
  }
  node
}

# The child `name` of a group, NULL when there is none. Before the group is
# listed only that child's document is read, so opening one array of a
# large group does not read the others'. A child the listing did not find
# (a store that cannot list, such as HTTP without consolidated metadata)
# is asked for by its path too.
group_child <- function(self, private, name) {
  hit <- Filter(function(ch) ch$name == name, private$.children %||% private$.known)
  node <- if (length(hit)) {
    hit[[1L]]
  } else {
    meta <- child_metadata(self$store, child_path(self$path, name), warn = FALSE)
    if (!is.null(meta)) private$add_child(child_node(name, meta, self))
  }
  if (inherits(node, "zarr_unreadable_node")) unreadable_abort(node)
  node
}

group_delete <- function(self, private, name) {
  check_string(name, "name")
  node <- self$get_node(name)
  if (is.null(node) || !identical(node$parent, self)) {
    zarr_abort("not_found", sprintf("group '%s' has no child '%s'", self$path, name))
  }
  if (inherits(node, "zarr_group") && length(node$children)) {
    zarr_abort("argument", sprintf("group '%s' is not empty; use delete_all() on it first", node$path))
  }
  self$store$erase_prefix(node$prefix)
  self$forget_child(node$name)
  invisible(self)
}

group_print <- function(group) {
  cat("<Zarr group> ", if (group$path == "/") "[root]" else group$path, "\n", sep = "")
  if (!children_known(group)) {
    cat("children: ", children_unknown_note(), "\n", sep = "")
    group$print_attributes()
    return(invisible(group))
  }
  n_groups <- sum(vapply(group$children, inherits, logical(1), "zarr_group"))
  n_arrays <- length(group$children) - n_groups
  cat("children: ", n_groups, " group", if (n_groups != 1L) "s", ", ", n_arrays, " array",
      if (n_arrays != 1L) "s", "\n", sep = "")
  group$print_attributes()
  invisible(group)
}

# Whether a group's children can be found: from consolidated metadata or
# by listing the store (an HTTP store cannot list).
children_known <- function(group) {
  !is.null(tryCatch(store_child_paths(group$store, group$prefix),
                    zarr_error_unsupported = function(e) NULL))
}

children_unknown_note <- function() {
  paste("not known: the store cannot list its keys and has no consolidated metadata;",
        "open a node by its path, as z[[\"/name\"]]")
}

# The tree below a node, one line per node.
hierarchy_lines <- function(node, indent = "") {
  label <- if (inherits(node, "zarr_unreadable_node")) {
    sprintf("%s <unreadable: %s>", node$name, node$metadata$unreadable$message)
  } else if (inherits(node, "zarr_array")) {
    sprintf("%s %s [%s] %s", if (nzchar(node$name)) node$name else "/", "<array>",
            paste(node$shape, collapse = " x "), node$data_type$data_type)
  } else {
    sprintf("%s <group>", if (nzchar(node$name)) node$name else "/")
  }
  lines <- paste0(indent, label)
  if (inherits(node, "zarr_group")) {
    kids <- node$children
    for (i in seq_along(kids)) {
      last <- i == length(kids)
      sub <- hierarchy_lines(kids[[i]], "")
      first <- paste0(indent, if (last) "\u2514\u2500 " else "\u251c\u2500 ", sub[1L])
      rest <- if (length(sub) > 1L) paste0(indent, if (last) "   " else "\u2502  ", sub[-1L]) else character(0)
      lines <- c(lines, first, rest)
    }
  }
  lines
}
