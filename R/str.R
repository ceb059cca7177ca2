# Compact displays for str(): one line per object, as str() gives for
# base objects.

#' Compact display of a Zarr object
#'
#' @param object A [zarr] object.
#' @param ... Ignored.
#' @return Nothing, invisibly.
#' @export
#' @examples
#' fn <- system.file("extdata", "africa.zarr", package = "zarr")
#' africa <- open_zarr(fn)
#' str(africa)
str.zarr <- function(object, ...) {
  root <- object$root
  what <- if (inherits(root, "zarr_array")) {
    "array"
  } else {
    sprintf("%d group%s, %d array%s", length(object$groups), if (length(object$groups) != 1L) "s" else "",
            length(object$arrays), if (length(object$arrays) != 1L) "s" else "")
  }
  cat(sprintf("Zarr v%d object (%s) in a %s\n", object$version, what, tolower(object$store$friendlyClassName)))
  invisible(NULL)
}

#' Compact display of a Zarr array
#'
#' @param object A [zarr_array].
#' @param ... Ignored.
#' @return Nothing, invisibly.
#' @export
#' @examples
#' fn <- system.file("extdata", "africa.zarr", package = "zarr")
#' africa <- open_zarr(fn)
#' tas <- africa[["/tas"]]
#' str(tas)
str.zarr_array <- function(object, ...) {
  dt <- object$data_type
  shape <- object$shape
  dn <- names(dimnames(object))
  chunks <- paste(unlist(object$metadata$chunk_grid$configuration$chunk_shape), collapse = ", ")
  if (identical(object$metadata$chunk_grid$name, "rectilinear")) {
    chunks <- paste("rectilinear, up to", paste(object$chunking$chunk_shape, collapse = ", "))
  }
  cat(sprintf("Zarr array %s: %s [%s]%s, chunks [%s]\n", object$path, dt$data_type,
              if (length(shape)) paste(shape, collapse = ", ") else "",
              if (is.null(dn)) "" else sprintf(" (%s)", paste(dn, collapse = ", ")),
              chunks))
  invisible(NULL)
}

#' Compact display of a Zarr group
#'
#' @param object A [zarr_group].
#' @param ... Ignored.
#' @return Nothing, invisibly.
#' @export
#' @examples
#' fn <- system.file("extdata", "africa.zarr", package = "zarr")
#' africa <- open_zarr(fn)
#' root <- africa[["/"]]
#' str(root)
str.zarr_group <- function(object, ...) {
  kids <- object$children
  ng <- sum(vapply(kids, inherits, logical(1), "zarr_group"))
  na <- length(kids) - ng
  cat(sprintf("Zarr group %s: %d group%s, %d array%s, %d attribute%s\n", object$path,
              ng, if (ng != 1L) "s" else "", na, if (na != 1L) "s" else "",
              length(object$attributes), if (length(object$attributes) != 1L) "s" else ""))
  invisible(NULL)
}

#' Compact display of a regular chunk grid
#'
#' @param object A [chunk_grid_regular].
#' @param ... Ignored.
#' @return Nothing, invisibly.
#' @export
#' @examples
#' fn <- system.file("extdata", "africa.zarr", package = "zarr")
#' africa <- open_zarr(fn)
#' tas <- africa[["/tas"]]
#' str(tas$chunking)
str.chunk_grid_regular <- function(object, ...) {
  cat(sprintf("Regular chunk grid: chunks [%s], grid [%s]\n", paste(object$chunk_shape, collapse = ", "),
              paste(object$chunk_grid, collapse = ", ")))
  invisible(NULL)
}

#' Summary of the values of a Zarr array
#'
#' Reads the whole array and summarises its values as [base::summary()]
#' does for a vector (quartiles and mean, or counts for logical values).
#' (An addition to the manual.)
#'
#' @param object A [zarr_array].
#' @param ... Passed to [base::summary()].
#' @return The summary of the values.
#' @export
#' @examples
#' arr <- as_zarr(matrix(c(1:5, NA), 2, 3))[["/"]]
#' summary(arr)
summary.zarr_array <- function(object, ...) {
  summary(as.vector(object), ...)
}
