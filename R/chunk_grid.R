#' Regular chunk grid
#'
#' The regular chunk grid of an array: chunks of one shape tile the array,
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
    #' @field chunk_shape (read-only) The shape of each chunk.
    chunk_shape = function(value) private$.chunk_shape,
    #' @field chunk_grid (read-only) The number of chunks along each dimension.
    chunk_grid = function(value) ceiling(private$.array_shape / private$.chunk_shape),
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

corner_selection <- function(start, stop) {
  if (length(start) != length(stop)) zarr_abort("argument", "`start` and `stop` must have the same length")
  Map(function(a, b) seq(a, b), start, stop)
}
