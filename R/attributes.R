# Attributes addressed by path, as R-CF's zarr has them: "a/b/2/c" is the
# element "c" of the second element of the JSON array "b" inside the object
# "a". These functions take and return the attribute list; the node
# methods store the result.

# The segments of an attribute path; empty segments are ignored.
attribute_path <- function(name) {
  check_string(name, "name")
  path <- strsplit(name, "/", fixed = TRUE)[[1L]]
  path <- path[nzchar(path)]
  if (!length(path)) zarr_abort("argument", sprintf("an attribute name must not be empty ('%s')", name))
  if (any(nchar(path) > 255L)) zarr_abort("argument", "an attribute name must have 1 to 255 characters")
  path
}

# A JSON object is a named list; a JSON array an unnamed list or a vector.
is_json_object <- function(x) is.list(x) && !is.null(names(x)) && any(nzchar(names(x)))

# A path segment that indexes a JSON array: a whole number, when the value
# it applies to is not an object.
segment_index <- function(x, key) {
  if (is_json_object(x) || !grepl("^[0-9]+$", key)) return(NA_integer_)
  as.integer(key)
}

attribute_get <- function(atts, name) {
  x <- atts
  for (key in attribute_path(name)) {
    i <- segment_index(x, key)
    if (!is.na(i)) {
      if (!(is.list(x) || is.atomic(x)) || i < 1L || i > length(x)) return(NULL)
      x <- x[[i]]
    } else {
      if (!is.list(x) || is.null(x[[key]])) return(NULL)
      x <- x[[key]]
    }
  }
  x
}

# Set the value at a path, creating the objects on the way.
attribute_set <- function(atts, name, value) {
  set_at <- function(x, path) {
    key <- path[[1L]]
    i <- segment_index(x, key)
    if (!is.na(i)) {
      if (i < 1L || i > length(x) + 1L) {
        zarr_abort("argument", sprintf("attribute '%s': index %d is out of range for an array of length %d",
                                       name, i, length(x)))
      }
      x <- as.list(x)
      if (length(path) == 1L) {
        x[i] <- list(value)
      } else {
        child <- if (i <= length(x) && is.list(x[[i]])) x[[i]] else list()
        x[[i]] <- set_at(child, path[-1L])
      }
      return(x)
    }
    if (!is.list(x)) x <- list()
    if (length(path) == 1L) {
      x[key] <- list(value)
    } else {
      child <- x[[key]]
      child <- if (is.list(child)) child else if (is.atomic(child) && length(child) > 1L) as.list(child) else list()
      x[[key]] <- set_at(child, path[-1L])
    }
    x
  }
  set_at(atts %||% list(), attribute_path(name))
}

# Add `value` as one element of the JSON array at a path (made when absent),
# after element `after` (NULL: at the end; 0: first).
attribute_append <- function(atts, name, value, after = NULL) {
  current <- attribute_get(atts, name)
  if (!is.null(current) && (is_json_object(current) || !(is.list(current) || length(current) > 1L))) {
    zarr_abort("argument", sprintf("attribute '%s' is not an array; use set_attribute() to replace it", name))
  }
  current <- unname(as.list(current))
  at <- if (is.null(after)) length(current) else check_whole(after, "after", sprintf("attribute '%s'", name), 0)
  attribute_set(atts, name, append(current, list(value), after = min(at, length(current))))
}

# Remove the value at a path; a path that is not there changes nothing.
attribute_delete <- function(atts, name) {
  delete_at <- function(x, path) {
    key <- path[[1L]]
    i <- segment_index(x, key)
    if (!is.na(i)) {
      if (i < 1L || i > length(x)) return(x)
      if (length(path) == 1L) return(x[-i])
      if (is.list(x[[i]])) x[[i]] <- delete_at(x[[i]], path[-1L])
      return(x)
    }
    if (!is.list(x) || is.null(x[[key]])) return(x)
    if (length(path) == 1L) {
      x[[key]] <- NULL
    } else if (is.list(x[[key]])) {
      x[[key]] <- delete_at(x[[key]], path[-1L])
    }
    x
  }
  out <- delete_at(atts %||% list(), attribute_path(name))
  if (!length(out)) structure(list(), names = character(0)) else out
}

# Store edited attributes on a node.
node_set_attributes <- function(node, private, atts) {
  # A node left with none has no `attributes` member at all, as in R-CF's
  # zarr: its metadata reads NULL there (the field `attributes` an empty list).
  meta <- node$metadata
  meta$attributes <- if (length(atts)) atts
  node_store_metadata(node, private, meta)
}
