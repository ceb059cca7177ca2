#' @useDynLib zarr, .registration = TRUE
#' @importFrom R6 R6Class
NULL

.onLoad <- function(libname, pkgname) {
  register_default_domain()
}
