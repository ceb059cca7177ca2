# Errors and warnings. Every failure the package signals is a condition of
# class `zarr_error_<kind>` and `zarr_error`, so callers can catch one kind
# (`tryCatch(..., zarr_error_not_found = ...)`) without matching messages.

#' Signal a classed zarr error
#'
#' @param kind The kind of error: `not_found`, `read_only`, `corrupt_chunk`,
#'   `checksum`, `metadata`, `selection`, `codec`, `invalid_key`, `io`,
#'   `unsupported`, `type`, `memory`, `interrupted`, `permission_denied`,
#'   `conflict`, `argument` or `internal`. An `interrupted` error (Ctrl-C or
#'   `setTimeLimit()` during an engine call) is also of class `interrupt`.
#' @param message The message, naming the array, key or argument.
#' @param call The call to report, if any.
#' @noRd
zarr_abort <- function(kind, message, call = NULL) {
  also <- if (identical(kind, "interrupted")) "interrupt"
  cond <- structure(
    class = c(paste0("zarr_error_", kind), "zarr_error", also, "error", "condition"),
    list(message = message, call = call)
  )
  stop(cond)
}

zarr_warn <- function(message, kind = NULL) {
  cond <- structure(
    class = c(if (!is.null(kind)) paste0("zarr_warning_", kind), "zarr_warning", "warning", "condition"),
    list(message = message, call = NULL)
  )
  warning(cond)
}

# Unwraps what a Rust binding returned: raises its error as a classed
# condition, and its warnings as `zarr_warning`s.
zarr_call <- function(x) {
  if (inherits(x, "zarr_rust_error")) {
    zarr_abort(x$kind, x$message)
  }
  w <- attr(x, "zarr_warnings", exact = TRUE)
  if (!is.null(w)) {
    kind <- attr(x, "zarr_warning_kind", exact = TRUE)
    attr(x, "zarr_warnings") <- NULL
    attr(x, "zarr_warning_kind") <- NULL
    for (m in w) zarr_warn(m, kind)
  }
  x
}

# Argument checks used across the package.
check_string <- function(x, arg) {
  if (!is.character(x) || length(x) != 1L || is.na(x)) {
    zarr_abort("argument", sprintf("`%s` must be a single character string", arg))
  }
  invisible(x)
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    zarr_abort("argument", sprintf("`%s` must be TRUE or FALSE", arg))
  }
  invisible(x)
}

# Evaluate `expr`; a zarr error it raises is raised again with `what` (the
# key or node) in front of its message, keeping its class.
with_context <- function(expr, what) {
  withCallingHandlers(expr, zarr_error = function(e) {
    e$message <- paste0(what, ": ", conditionMessage(e))
    stop(e)
  })
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# `obj$name` for a name the object does not have: a classed error naming
# the class and the name, where R6 would return NULL (and a call of it
# fail with "attempt to apply non-function"). R6's own fields, which
# start with ".", are left alone.
dollar_checked <- function(x, name) {
  v <- .subset2(x, name)
  if (is.null(v) && !startsWith(name, ".") && !exists(name, envir = x, inherits = FALSE)) {
    zarr_abort("argument", sprintf("a %s object has no field or method '%s'", class(x)[1L], name))
  }
  v
}

#' @export
`$.zarr_node` <- function(x, name) dollar_checked(x, name)

#' @export
`$.zarr` <- function(x, name) dollar_checked(x, name)

#' @export
`$.zarr_store` <- function(x, name) dollar_checked(x, name)
