#' Regular chunk grid
#'
#' @description The regular chunk grid of an array: chunks of one shape tile the array,
#' with partial chunks at the upper edges. When attached to an array (as
#' `arr$chunking`), `read()` and `write()` move data through the engine.
#'
#' @docType class
#' @export
#' @examples
#' g <- chunk_grid_regular$new(c(160, 260, 12), c(80, 65, 12))
#' g$chunk_grid
#' g
chunk_grid_regular <- R6::R6Class("chunk_grid_regular",
  inherit = zarr_extension,
  public = list(
    #' @description Initialize a chunk grid.
    #' @param array_shape The array shape.
    #' @param chunk_shape The chunk shape.
    initialize = function(array_shape, chunk_shape) {
      super$initialize("regular")
      private$.array_shape <- as.numeric(array_shape)
      private$.chunk_shape <- as.numeric(chunk_shape)
    },
    #' @description Print the chunk grid.
    #' @param ... Ignored.
    print = function(...) {
      cat("<Zarr regular chunk grid>\n")
      cat("chunk shape:", paste(private$.chunk_shape, collapse = " x "), "\n")
      cat("chunk grid :", paste(self$chunk_grid, collapse = " x "), "chunks\n")
      invisible(self)
    },
    #' @description The metadata fragment of this chunk grid.
    #' @return A list.
    metadata_fragment = function() {
      list(chunk_grid = list(name = "regular", configuration = list(chunk_shape = as.list(private$.chunk_shape))))
    },
    #' @description Read data between two corners (1-based, inclusive).
    #' @param start,stop Vectors as long as the array has dimensions.
    #' @return A vector, matrix or array.
    read = function(start, stop) {
      private$attached()$read(corner_selection(start, stop))
    },
    #' @description Write data between two corners (1-based, inclusive).
    #' @param data The data, with the shape of the region.
    #' @param start,stop Vectors as long as the array has dimensions.
    #' @return Self, invisibly.
    write = function(data, start, stop) {
      private$attached()$write(data, corner_selection(start, stop))
      invisible(self)
    },
    #' @description Attach the grid to an array (used by `zarr_array`).
    #' @param array A [zarr_array].
    attach = function(array) {
      private$.array <- array
      invisible(self)
    }
  ),
  active = list(
    #' @field chunk_shape (read-only) The shape of each chunk, an integer vector.
    chunk_shape = function(value) as_extents(private$.chunk_shape),
    #' @field chunk_grid (read-only) The number of chunks along each dimension.
    chunk_grid = function(value) as_extents(ceiling(private$.array_shape / private$.chunk_shape)),
    #' @field chunk_encoding (read-only) The chunk key encoding of the
    #'   attached array.
    chunk_encoding = function(value) {
      if (is.null(private$.array)) return(list(name = "default", configuration = list(separator = "/")))
      private$.array$metadata$chunk_key_encoding
    },
    #' @field data_type (read-only) The data type of the attached array.
    data_type = function(value) if (!is.null(private$.array)) private$.array$data_type,
    #' @field codecs (read-only) The codecs of the attached array.
    codecs = function(value) if (!is.null(private$.array)) private$.array$codecs,
    #' @field store (read-only) The store of the attached array.
    store = function(value) if (!is.null(private$.array)) private$.array$store,
    #' @field array_prefix (read-only) The prefix of the attached array.
    array_prefix = function(value) if (!is.null(private$.array)) private$.array$prefix
  ),
  private = list(
    .array_shape = NULL,
    .chunk_shape = NULL,
    .array = NULL,
    attached = function() {
      if (is.null(private$.array)) zarr_abort("argument", "this chunk grid is not attached to an array")
      private$.array
    }
  )
)

#' Sharded chunk grid
#'
#' @description The chunk grid of a sharded array: a regular grid of shards (its
#' `chunk_shape`), each holding a regular grid of inner chunks of
#' `inner_shape`, as R-CF's `chunk_grid_sharded`. An array's `chunking` is
#' of this class when its codec chain is a `sharding_indexed` codec.
#'
#' @docType class
#' @export
#' @examples
#' def <- define_array("int32", c(8, 8))
#' def$chunk_shape <- c(4, 4)
#' def$add_codec("sharding_indexed", list(chunk_shape = c(2, 2)))
#' arr <- create_zarr()$add_array("/", "a", def)
#' arr$chunking$inner_shape
#' arr$chunking
chunk_grid_sharded <- R6::R6Class("chunk_grid_sharded",
  inherit = chunk_grid_regular,
  public = list(
    #' @description Initialize a sharded chunk grid.
    #' @param array_shape The array shape.
    #' @param chunk_shape The shape of the shards.
    #' @param inner_shape The shape of the chunks inside a shard.
    initialize = function(array_shape, chunk_shape, inner_shape) {
      super$initialize(array_shape, chunk_shape)
      private$.inner_shape <- as.numeric(inner_shape)
    },
    #' @description Print the chunk grid.
    #' @param ... Ignored.
    print = function(...) {
      cat("<Zarr sharded chunk grid>\n")
      cat("shard shape:", paste(self$chunk_shape, collapse = " x "), "\n")
      cat("inner shape:", paste(self$inner_shape, collapse = " x "), "\n")
      cat("shard grid :", paste(self$chunk_grid, collapse = " x "), "shards\n")
      invisible(self)
    }
  ),
  active = list(
    #' @field inner_shape (read-only) The shape of the chunks inside a
    #'   shard, an integer vector.
    inner_shape = function(value) as_extents(private$.inner_shape)
  ),
  private = list(.inner_shape = NULL)
)

#' Rectilinear chunk grid
#'
#' @description The rectilinear chunk grid of an array (the `rectilinear`
#' chunk grid of the Zarr extensions, as zarr-python 3.4 writes it): along
#' each dimension the chunks have lengths of their own, listed in
#' `chunk_edges`. An array's `chunking` is of this class when its metadata
#' names that grid; `chunk_shape` then gives each dimension's longest chunk.
#' Create such an array by setting a definition's `chunk_shape` to a list
#' with one vector of chunk lengths per dimension.
#'
#' @docType class
#' @export
#' @examples
#' def <- define_array("int32", c(10, 7))
#' def$chunk_shape <- list(c(3, 3, 3, 1), c(4, 3))
#' arr <- create_zarr()$add_array("/", "a", def)
#' arr$chunking$chunk_edges
#' arr$chunking
chunk_grid_rectilinear <- R6::R6Class("chunk_grid_rectilinear",
  inherit = chunk_grid_regular,
  public = list(
    #' @description Initialize a rectilinear chunk grid.
    #' @param array_shape The array shape.
    #' @param chunk_edges A list with, for each dimension, the lengths of
    #'   its chunks in order.
    initialize = function(array_shape, chunk_edges) {
      super$initialize(array_shape, vapply(chunk_edges, max, numeric(1)))
      private$.name <- "rectilinear"
      private$.edges <- lapply(chunk_edges, as.numeric)
    },
    #' @description Print the chunk grid.
    #' @param ... Ignored.
    print = function(...) {
      cat("<Zarr rectilinear chunk grid>\n")
      for (d in seq_along(private$.edges)) {
        cat("dimension ", d, ": ", format_edges(private$.edges[[d]]), "\n", sep = "")
      }
      cat("chunk grid :", paste(self$chunk_grid, collapse = " x "), "chunks\n")
      invisible(self)
    },
    #' @description The metadata fragment of this chunk grid.
    #' @return A list.
    metadata_fragment = function() list(chunk_grid = rectilinear_grid_member(private$.edges))
  ),
  active = list(
    #' @field chunk_edges (read-only) A list with the lengths of the chunks
    #'   along each dimension.
    chunk_edges = function(value) lapply(private$.edges, as_extents),
    #' @field chunk_grid (read-only) The number of chunks along each dimension.
    chunk_grid = function(value) as_extents(lengths(private$.edges))
  ),
  private = list(.edges = NULL)
)

# "3 3 3 1" for a short list of chunk lengths, "1000 x 250, 12" (length x
# count runs) for a long one.
format_edges <- function(edges) {
  if (length(edges) <= 8L) return(paste(edges, collapse = " "))
  r <- rle(edges)
  paste(ifelse(r$lengths > 1, paste(r$values, "x", r$lengths), r$values), collapse = ", ")
}

# The chunk_grid member of a rectilinear grid with these chunk lengths,
# repeated lengths written as [length, count] as zarr-python writes them.
rectilinear_grid_member <- function(edges) {
  shapes <- lapply(edges, function(e) {
    r <- rle(as.numeric(e))
    Map(function(v, n) if (n > 1L) list(v, n) else v, r$values, r$lengths)
  })
  list(name = "rectilinear", configuration = list(kind = "inline", chunk_shapes = shapes))
}

# Each dimension's chunk lengths, as far as they hold elements of `shape`,
# from a chunk_grid member: a regular grid's chunk shape repeated, or a
# rectilinear grid's chunk_shapes (an integer, or a list of lengths and
# [length, count] pairs) expanded. The engine checked the member when the
# array was opened.
grid_edges <- function(grid, shape) {
  if (!identical(grid$name, "rectilinear")) {
    chunks <- as.numeric(unlist(grid$configuration$chunk_shape))
    return(Map(function(c, n) rep(c, ceiling(n / c)), chunks, shape))
  }
  Map(function(spec, n) {
    if (!is.list(spec) && length(spec) == 1L) return(rep(as.numeric(spec), ceiling(n / spec)))
    out <- numeric(0)
    left <- n
    for (e in spec) {
      if (left <= 0) break
      e <- as.numeric(unlist(e))
      len <- e[[1L]]
      count <- if (length(e) == 2L) min(e[[2L]], ceiling(left / len)) else 1
      out <- c(out, rep(len, count))
      left <- left - len * count
    }
    out
  }, grid$configuration$chunk_shapes, shape)
}

# The chunk grid object of array metadata: rectilinear when the metadata
# says so, sharded when the codec chain is a sharding codec.
chunk_grid_of <- function(shape, meta) {
  if (identical(meta$chunk_grid$name, "rectilinear")) {
    return(chunk_grid_rectilinear$new(shape, grid_edges(meta$chunk_grid, shape)))
  }
  chunks <- unlist(meta$chunk_grid$configuration$chunk_shape)
  codecs <- meta$codecs
  if (length(codecs) == 1L && identical(codecs[[1L]]$name, "sharding_indexed")) {
    return(chunk_grid_sharded$new(shape, chunks, unlist(codecs[[1L]]$configuration$chunk_shape)))
  }
  chunk_grid_regular$new(shape, chunks)
}

corner_selection <- function(start, stop) {
  if (length(start) != length(stop)) zarr_abort("argument", "`start` and `stop` must have the same length")
  Map(function(a, b) c(a, b), start, stop)
}

#' Chunk shape for an array
#'
#' A chunk shape with about `chunk_values` elements per chunk, spread over
#' the dimensions by weight, as R-CF's `optimal_chunking()`: a dimension of
#' weight 2 gets chunks about twice as long (in the exponent) as one of
#' weight 1, so reads along it touch fewer chunks. Each chunk length is then
#' evened out so that the chunks tile the dimension without a small
#' remainder.
#'
#' @param dim_sizes The array shape.
#' @param weights Positive weights, one per dimension; default all 1.
#' @param chunk_values About how many elements a chunk holds (default 4 Mi:
#'   16 MiB of float32); evening out can make a chunk a little larger.
#' @return An integer vector, the chunk length of each dimension.
#' @export
#' @examples
#' optimal_chunking(c(50000, 350, 8192))
#' optimal_chunking(c(50000, 350, 8192), weights = c(1, 1, 2))
optimal_chunking <- function(dim_sizes, weights = NULL, chunk_values = 4L * 1024L * 1024L) {
  check_shape(dim_sizes, "dim_sizes", allow_zero = FALSE)
  n <- length(dim_sizes)
  if (is.null(weights)) weights <- rep(1, n)
  if (!is.numeric(weights) || length(weights) != n || anyNA(weights) || any(weights <= 0)) {
    zarr_abort("argument", "`weights` must be positive numbers, one per dimension")
  }
  check_shape(chunk_values, "chunk_values", allow_zero = FALSE)
  dim_sizes <- as.numeric(dim_sizes)
  spread <- dim_sizes > 1
  if (!any(spread)) return(as_extents(dim_sizes))
  # chunk_values = base^(sum of weights): each dimension gets base^weight.
  base <- chunk_values^(1 / sum(weights[spread]))
  len <- ifelse(spread, pmin(floor(base^weights), dim_sizes), 1)
  len <- pmax(len, 1)
  pieces <- pmax(1, round(dim_sizes / len))
  as_extents(ifelse(len >= dim_sizes, dim_sizes, ceiling(dim_sizes / pieces)))
}
