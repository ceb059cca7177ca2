#' Zarr extension support
#'
#' @description The ancestor of everything Zarr defines as an extension point: data
#' types, chunk grids and codecs. It holds a name and produces the metadata
#' fragment that describes the extension in `zarr.json`.
#'
#' @docType class
#' @export
#' @examples
#' e <- zarr_extension$new("my_extension")
#' e$metadata_fragment()
zarr_extension <- R6::R6Class("zarr_extension",
  public = list(
    #' @description Create a new extension object.
    #' @param name The name of the extension, a single character string.
    initialize = function(name) {
      check_string(name, "name")
      private$.name <- name
    },
    #' @description The metadata fragment describing this extension.
    #' @return A list.
    metadata_fragment = function() list(name = private$.name)
  ),
  active = list(
    #' @field name The name of the extension.
    name = function(value) {
      if (missing(value)) return(private$.name)
      check_string(value, "name")
      private$.name <- value
    }
  ),
  private = list(.name = NULL)
)
