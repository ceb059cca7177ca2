# R's indexing operators on arrays and hierarchies.

#' Extract or replace parts of a Zarr array
#'
#' `arr[i, j, ...]` reads the selected elements with R's rules for `[` on
#' an array: positive, negative, logical and character (via dimnames)
#' indices, in any order and with repeats, empty (the whole dimension), and
#' `drop`. Only the chunks holding selected elements are read.
#' `arr[i, j, ...] <- value` writes them, recycling `value` as R does.
#'
#' Unlike the manual this package follows, indices need not be consecutive.
#'
#' A struct array (see [struct_type()]) reads as a data.frame with one
#' column per field when it has one dimension, and otherwise as a named
#' list with one array per field, each with the selection's dims (a
#' NumPy sub-array field adds its own dims after them; `drop` drops
#' extents of 1 of each). A single index on a struct array of several
#' dimensions is refused. `value` is then a data.frame or a named list of
#' fields, each with as many values as the selection has elements (times
#' a sub-array field's); fields left out keep their stored values.
#'
#' @param x A [zarr_array].
#' @param i,j,... Indices, one per dimension.
#' @param drop Whether to drop dimensions of extent 1. Default TRUE.
#' @param value The values to write.
#' @return For `[`, a vector, matrix or array; for a struct array a
#'   data.frame (one dimension) or a named list of arrays.
#' @name array-indexing
#' @examples
#' x <- array(1:100, c(10, 10))
#' z <- as_zarr(x)
#' arr <- z[["/"]]
#' arr[3:5, 7:9]
#' arr[-1, c(TRUE, FALSE)]
#' arr[1, 1:3] <- 0L
#' arr[1, ]
NULL

# The index of a dimension left empty (`x[, 1]`) or given as an argument
# that is itself missing (`f <- function(a, i, j) a[i, j]; f(arr, 1, )`):
# the whole dimension.
whole_dim <- structure(list(), class = "zarr_whole_dim")
is_whole_dim <- function(a) inherits(a, "zarr_whole_dim")

# The indices of a call to `[` or `[<-` as values, `n` of them, from the
# method's own arguments `i`, `j` and `...`. They are taken as R passes
# them, promises evaluated where the call was written (a loop variable, a
# function's argument, a worker's local), never rebuilt from the call's
# text; a missing one, left empty or forwarded missing, is `whole_dim`.
index_values <- function(n, i, j, ...) {
  out <- vector("list", n)
  if (n >= 1L) out[1L] <- list(if (missing(i)) whole_dim else i)
  if (n >= 2L) out[2L] <- list(if (missing(j)) whole_dim else j)
  if (n >= 3L) {
    # missing(..k) follows a promise to a missing argument, as missing(i) does.
    dots <- environment()
    for (k in seq_len(n - 2L)) {
      gone <- eval(call("missing", as.name(paste0("..", k))), dots)
      out[k + 2L] <- list(if (gone) whole_dim else ...elt(k))
    }
  }
  out
}

# The indices per dimension of a call to `[` or `[<-` (values, as
# index_values() gives them), as positive 1-based vectors (NULL for a
# missing index = whole dimension).
index_args <- function(x, args, shape = x$shape) {
  nd <- length(shape)
  if (length(args) == 1L && nd != 1L) {
    if (is_whole_dim(args[[1L]])) {
      args <- rep(list(whole_dim), nd)
    } else {
      zarr_abort("selection", sprintf("%s has %d dimensions: give %d indices", array_what(x), nd, nd))
    }
  }
  if (length(args) != nd) {
    zarr_abort("selection", sprintf("%s has %d dimensions but %d indices were given",
                                    array_what(x), nd, length(args)))
  }
  # The dimension names and the array's description are passed as promises:
  # built only for a character index or an error, they made up a sixth of
  # the time of a small read.
  lapply(seq_len(nd), function(d) {
    if (is_whole_dim(args[[d]])) return(NULL)
    resolve_index(args[[d]], shape[d], dimnames(x)[[d]], d, array_what(x))
  })
}

# One index vector -> positive 1-based indices, with R's rules.
resolve_index <- function(i, n, names, d, what) {
  if (is.null(i)) return(numeric(0))
  # The common case, numbers all within 1..n, needs none of the checks
  # below: truncated, they are the indices, with no zero to drop.
  if (is.numeric(i) && length(i) && !anyNA(i) && min(i) >= 1 && max(i) < n + 1) {
    return(if (is.integer(i)) as.numeric(i) else trunc(i))
  }
  bad <- function(msg) zarr_abort("selection", sprintf("%s, dimension %d: %s", what, d, msg))
  if (is.factor(i)) i <- as.character(i)
  if (is.character(i)) {
    if (is.null(names)) bad("character indices need dimnames")
    m <- match(i, names)
    if (anyNA(m)) bad(sprintf("no dimname '%s'", i[is.na(m)][1L]))
    return(as.numeric(m))
  }
  if (is.logical(i)) {
    if (anyNA(i)) bad("NA indices are not supported")
    if (length(i) > n) bad(sprintf("logical index of length %d is longer than the extent %s", length(i), format(n)))
    return(as.numeric(which(rep_len(i, n))))
  }
  if (!is.numeric(i)) bad(sprintf("indices of type '%s' are not supported", typeof(i)))
  if (anyNA(i)) bad("NA indices are not supported")
  i <- trunc(as.numeric(i))
  i <- i[i != 0]
  if (!length(i)) return(numeric(0))
  if (all(i < 0)) {
    if (any(-i > n)) bad("negative index out of bounds")
    return(setdiff(seq_len(n), -i))
  }
  if (any(i < 0)) bad("positive and negative indices cannot be mixed")
  if (any(i > n)) bad(sprintf("subscript %s out of bounds (extent %s)", format(max(i)), format(n)))
  i
}

#' @rdname array-indexing
#' @export
`[.zarr_array` <- function(x, i, j, ..., drop = TRUE) {
  args <- index_values(nargs() - 1L - !missing(drop), i, j, ...)
  info <- array_read_info(x)
  if (isTRUE(info$struct)) return(struct_index(x, info, args, drop))
  shape <- info$shape
  nd <- length(shape)
  # x[] (and x[drop = ]) is the whole array, unchanged, as in base R; a
  # 1-d array reads as a plain vector, as R-CF's zarr returns it.
  if (!length(args) || (length(args) == 1L && is_whole_dim(args[[1L]]))) {
    return(if (nd == 1L && drop) plain_vector(as.array(x)) else as.array(x))
  }
  if (length(args) == 1L && nd != 1L) return(index_points(x, args[[1L]]))
  sel <- index_args(x, args, shape)
  if (any(vapply(sel, function(s) !is.null(s) && !length(s), logical(1)))) {
    out <- empty_result(x, sel, drop)
    return(if (drop && nd == 1L) plain_vector(out) else out)
  }
  # index_args() checked the indices: straight to the engine's form.
  sel <- lapply(seq_len(nd), function(d) if (is.null(sel[[d]])) engine_whole(shape[d]) else engine_dim(sel[[d]]))
  out <- engine_read(info, sel, TRUE, info$dim_names)
  if (!is.null(info$labels)) out <- with_labels(out, info$labels, sel, info$dim_names)
  if (!drop) return(out)
  if (nd == 1L) plain_vector(out) else drop(out)
}

# A result of `[` with the labels of the elements it holds (`sel` in the
# engine's form).
with_labels <- function(out, labels, sel, dim_names) {
  picked <- Map(function(l, s) {
    if (is.null(l)) return(NULL)
    if (isTRUE(attr(s, "zarr_range"))) l[s[1L] + seq_len(s[2L])] else l[s + 1]
  }, labels, sel)
  dimnames(out) <- if (is.null(dim_names)) picked else structure(picked, names = dim_names)
  out
}

# A 1-d array as a vector, its labels (if any) as names.
plain_vector <- function(x) {
  nm <- dimnames(x)[[1L]]
  dim(x) <- NULL
  if (!is.null(nm)) names(x) <- nm
  x
}

# x[i] with one index on an array of several dimensions: linear indices
# (column-major, as base R counts), or a matrix with one column per
# dimension. Reads the block spanned by the points, then picks them.
index_points <- function(x, i) {
  shape <- x$shape
  what <- array_what(x)
  if (is.matrix(i) && ncol(i) == length(shape) && is.numeric(i)) {
    if (anyNA(i) || any(i < 1) || any(t(i) > shape)) {
      zarr_abort("selection", sprintf("%s: a matrix index is out of bounds", what))
    }
    subs <- matrix(as.integer(i), ncol = length(shape))
  } else {
    lin <- resolve_index(i, prod(shape), NULL, 1L, what)
    subs <- arrayInd(lin, shape)
  }
  if (!nrow(subs)) return(empty_result(x, list(numeric(0)), TRUE))
  sel <- lapply(seq_along(shape), function(d) sort(unique(subs[, d])))
  info <- array_read_info(x)
  block <- engine_read(info, engine_selection(sel, shape, what), FALSE, NULL)
  dim(block) <- lengths(sel)
  local <- vapply(seq_along(shape), function(d) match(subs[, d], sel[[d]]), integer(nrow(subs)))
  block[matrix(local, ncol = length(shape))]
}

selection_shape_r <- function(sel, shape) {
  vapply(seq_along(shape), function(d) if (is.null(sel[[d]])) shape[d] else length(sel[[d]]), numeric(1))
}

dimnames_for <- function(x, sel) {
  dn <- dimnames(x)
  if (is.null(dn)) return(NULL)
  Map(function(names, s) if (is.null(names) || is.null(s)) names else names[s], dn, sel)
}

empty_result <- function(x, sel, drop) {
  proto <- switch(x$data_type$Rtype,
    logical = logical(0), integer = integer(0), double = double(0), complex = complex(0),
    character = character(0),
    integer64 = if (use_bit64()) bit64::integer64(0) else double(0)
  )
  # Base `[` drops zero-extent results differently from drop(): let it.
  shape <- selection_shape_r(sel, x$shape)
  whole <- array(proto, shape, dimnames_for(x, sel))
  do.call(`[`, c(list(whole), lapply(shape, seq_len), list(drop = drop)))
}

#' @rdname array-indexing
#' @export
`[<-.zarr_array` <- function(x, i, j, ..., value) {
  args <- index_values(nargs() - 2L, i, j, ...)
  sel <- if (length(args)) index_args(x, args) else rep(list(NULL), length(x$shape))
  if (isTRUE(array_read_info(x)$struct)) return(struct_assign(x, sel, value))
  shape <- selection_shape_r(sel, x$shape)
  n <- prod(shape)
  if (n == 0) return(x)
  if (!length(value)) zarr_abort("type", sprintf("%s: replacement has length zero", array_what(x)))
  if (n %% length(value) != 0) {
    zarr_abort("type", sprintf("%s: %d items to replace is not a multiple of the replacement length %d",
                               array_what(x), n, length(value)))
  }
  dim(value) <- NULL
  if (length(value) != n) value <- value[rep_len(seq_along(value), n)]
  full <- lapply(seq_along(sel), function(d) if (is.null(sel[[d]])) seq_len(x$shape[d]) else sel[[d]])
  what <- array_what(x)
  info <- array_read_info(x)
  engine_write(x, info$handle, cf_encode(value, info$cf), engine_selection(full, x$shape, what))
  x
}

#' @export
dim.zarr_array <- function(x) {
  s <- x$shape
  if (!length(s)) return(NULL)
  if (all(s <= .Machine$integer.max)) as.integer(s) else s
}

#' @export
dimnames.zarr_array <- function(x) {
  # (a dimension without a name, null in zarr.json, is "" as in R's dimnames)
  unnamed <- function(dn) if (is.null(dn)) NULL else ifelse(is.na(dn), "", dn)
  dn <- unnamed(dimension_names_text(x$metadata$dimension_names))
  # (default names are no names: the attribute's, if any, come first)
  if (is.null(dn) || length(dn) != length(x$shape) || is.null(cf_given_dims(dn, x$name))) {
    attr_dn <- unnamed(dimension_names_text(x$attributes[["_ARRAY_DIMENSIONS"]]))
    if (length(attr_dn) == length(x$shape) || is.null(dn)) dn <- attr_dn
  }
  labels <- dimnames_labels(x)
  if (is.null(dn) || length(dn) != length(x$shape)) {
    return(labels)
  }
  # the names as_zarr() gives by default read back as no names
  dn <- cf_given_dims(dn, x$name)
  if (is.null(dn)) {
    return(labels)
  }
  if (is.null(labels)) labels <- vector("list", length(dn))
  structure(labels, names = dn)
}

# Dimension names as JSON holds them (a list of strings and NULL for
# null) -> a character vector with NA where a dimension has no name; NULL
# for none.
dimension_names_text <- function(dn) {
  if (is.null(dn)) return(NULL)
  vapply(dn, function(v) if (is.character(v) && length(v) == 1L) v else NA_character_, "", USE.NAMES = FALSE)
}

# The zarr_array field `dimension_names`: the stored names (v3
# `dimension_names`, else v2's `_ARRAY_DIMENSIONS` attribute) as they
# are, defaults included, NA where a dimension has none.
array_dimension_names <- function(arr) {
  dimension_names_text(arr$metadata$dimension_names %||% arr$attributes[["_ARRAY_DIMENSIONS"]])
}

# The labels along each dimension (NULL where there are none), kept in the
# attribute `R_dimnames` since Zarr has no place for them; NULL when no
# dimension has labels or they no longer fit the shape.
dimnames_labels <- function(x) {
  stored <- x$attributes[["R_dimnames"]]
  shape <- x$shape
  if (!is.list(stored) || length(stored) != length(shape)) return(NULL)
  labels <- lapply(stored, function(l) if (length(l)) as.character(unlist(l)))
  fits <- vapply(seq_along(shape), function(d) is.null(labels[[d]]) || length(labels[[d]]) == shape[d], logical(1))
  if (!all(fits)) return(NULL)
  labels
}

#' Extract a node from a Zarr object
#'
#' `z[["/path"]]` returns the group or array at an absolute path.
#'
#' Paths in a zarr object are absolute, as in the manual and R-CF's zarr:
#' `z[["g"]]` is NULL (`g[["path"]]` of a [zarr_group] takes relative
#' paths). Where a node is at "/g", the NULL comes with a warning of class
#' `zarr_warning_path` that names the absolute path, so that a forgotten
#' "/" does not pass for missing data.
#'
#' @param x A [zarr] object.
#' @param i The absolute path ("/a/b").
#' @return A [zarr_group] or [zarr_array], or NULL when there is none.
#' @export
#' @examples
#' z <- as_zarr(1:10)
#' z[["/"]]
#' z <- create_zarr()
#' z$add_group("/", "g")
#' z[["/g"]]
`[[.zarr` <- function(x, i) {
  if (is_relative_path(i)) {
    if (!is.null(x$get_node(paste0("/", i)))) {
      zarr_warn(sprintf("z[[\"%s\"]] is NULL: paths in a zarr object start with \"/\"; the node is z[[\"/%s\"]]",
                        i, i), "path")
    }
    return(NULL)
  }
  x$get_node(i)
}

is_relative_path <- function(i) is.character(i) && length(i) == 1L && !is.na(i) && !startsWith(i, "/")

#' Extract a node from a Zarr group
#'
#' `g[["path"]]` returns the node at a path relative to the group.
#'
#' @param x A [zarr_group].
#' @param i The relative path; ".." goes up.
#' @return A [zarr_group] or [zarr_array], or NULL.
#' @export
#' @examples
#' z <- create_zarr()
#' z$add_group("/", "a")
#' z[["/"]][["a"]]
`[[.zarr_group` <- function(x, i) x$get_node(i)

#' @export
length.zarr_array <- function(x) {
  n <- prod(x$shape)
  if (n <= .Machine$integer.max) as.integer(n) else n
}

#' Set the dimension names of a Zarr array
#'
#' The names of `dimnames()` are stored as the dimension names of the array
#' (v3 `dimension_names`, which xarray and other tools read); labels along
#' a dimension, for which Zarr has no place, are kept in the array's
#' attribute `R_dimnames` and serve as character indices: `arr["a", ]`.
#' (An addition to the manual, which has no `dimnames<-`.)
#'
#' @param x A [zarr_array].
#' @param value NULL to remove both, or a list with one element per
#'   dimension: NULL or a character vector of labels as long as the
#'   dimension. Its names, if any, are the dimension names.
#' @return The array.
#' @export
#' @examples
#' arr <- as_zarr(matrix(1:6, 2, 3))[["/"]]
#' dimnames(arr) <- list(row = c("a", "b"), col = NULL)
#' dimnames(arr)
#' arr["b", ]
`dimnames<-.zarr_array` <- function(x, value) {
  meta <- x$metadata
  shape <- x$shape
  what <- array_what(x)
  attrs <- meta$attributes
  # Dimension names left out become the defaults of as_zarr() (read back
  # as no name): xarray opens no array with a dimension unnamed.
  n <- length(shape)
  if (is.null(value)) {
    meta$dimension_names <- if (n) as.list(cf_default_dims(x$name, n))
    attrs[["R_dimnames"]] <- NULL
  } else {
    if (!is.list(value) || length(value) != length(shape)) {
      zarr_abort("argument", sprintf("%s: dimnames must be a list with one entry per dimension (%d)",
                                     what, length(shape)))
    }
    for (d in seq_along(value)) {
      l <- value[[d]]
      if (!is.null(l) && (!is.atomic(l) || length(l) != shape[d])) {
        zarr_abort("argument", sprintf("%s: the labels of dimension %d must be NULL or %s values, not %d",
                                       what, d, format(shape[d]), length(l)))
      }
    }
    meta$dimension_names <- as.list(cf_dims_or_default(names(value), x$name, n))
    labelled <- !vapply(value, is.null, logical(1))
    attrs[["R_dimnames"]] <- if (any(labelled)) {
      lapply(value, function(l) if (is.null(l)) NULL else I(as.character(l)))
    }
  }
  # (v2 keeps them in this attribute, which must not say otherwise)
  if (!is.null(attrs[["_ARRAY_DIMENSIONS"]])) attrs[["_ARRAY_DIMENSIONS"]] <- meta$dimension_names
  meta$attributes <- attrs
  x$metadata <- meta
  x
}

#' Read a whole Zarr array
#'
#' @param x A [zarr_array].
#' @param ... Ignored.
#' @return `as.array()`: an array with the array's shape (and dimension
#'   names); `as.vector()`: the values as a vector, in R's column-major order.
#' @name zarr-conversions
#' @examples
#' arr <- as_zarr(matrix(1:6, 2, 3))[["/"]]
#' as.array(arr)
#' as.vector(arr)
NULL

#' @rdname zarr-conversions
#' @export
as.array.zarr_array <- function(x, ...) {
  info <- array_read_info(x)
  out <- engine_read(info, NULL, TRUE, info$dim_names)
  if (is.null(info$labels)) return(out)
  with_labels(out, info$labels, lapply(info$shape, engine_whole), info$dim_names)
}

#' @rdname zarr-conversions
#' @param mode The mode of the result, as for [base::as.vector()].
#' @export
as.vector.zarr_array <- function(x, mode = "any") {
  out <- x$read()
  attributes(out) <- if (inherits(out, "integer64")) list(class = "integer64") else NULL
  if (mode == "any") out else as.vector(out, mode)
}

#' @rdname sub-sub-.zarr
#' @param value The node itself: `z[["/a"]][1, 1] <- 0` writes through the
#'   array and puts it back. Other values are refused; use `add_array()` or
#'   `add_group()` to add nodes.
#' @export
`[[<-.zarr` <- function(x, i, value) {
  node_assign_back(if (!is_relative_path(i)) x$get_node(i), value, i)
  x
}

#' @rdname sub-sub-.zarr_group
#' @param value The node itself (see [`[[<-.zarr`]).
#' @export
`[[<-.zarr_group` <- function(x, i, value) {
  node_assign_back(x$get_node(i), value, i)
  x
}

node_assign_back <- function(node, value, path) {
  if (!identical(node, value)) {
    zarr_abort("unsupported", sprintf("cannot replace the node at '%s'; use add_array() or add_group()", path))
  }
  invisible(NULL)
}
