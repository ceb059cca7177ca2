# Package options: one place that says which options exist, what they
# default to and what reads them. Values live in R's options() as
# `zarr.<name>`, so that options(zarr.num_threads = 2) keeps working.

option_defaults <- function() {
  list(
    threads = NULL,
    strict_checksums = TRUE,
    min_compress = 100L,
    chunk_length = 100L,
    progress = interactive(),
    cf = TRUE,
    chunk_separator = ".",
    max_retries = 10L,
    retry_timeout = 120,
    connect_timeout = 10,
    request_timeout = 30,
    max_concurrency = NULL
  )
}

# The options of the network stores, each one from `given` (a store's own
# `options`) when it is there, else from zarr_options(); NULL ones left out.
network_options <- function(given = list()) {
  out <- list()
  for (key in c("max_retries", "retry_timeout", "connect_timeout", "request_timeout", "max_concurrency")) {
    # Values set through options() directly are checked here too.
    value <- check_option(key, if (!is.null(given[[key]])) given[[key]] else zarr_options(key))
    if (!is.null(value)) out[[key]] <- value
  }
  out
}

# The R option behind each name (the thread count has had its own name).
option_name <- function(key) if (key == "threads") "zarr.num_threads" else paste0("zarr.", key)

#' Options of the zarr package
#'
#' Reads or sets the package's options, as R-CF's `zarr_options()` does
#' (the manual has no options function).
#' They are held in R's [options()] as `zarr.<name>` (`zarr.num_threads`
#' for `threads`), so `options()` and `withr::local_options()` work too.
#'
#' * `threads`: the number of threads for chunk I/O; reading it gives the
#'   count in use, [zarr_num_threads()]. Used by every read and write.
#' * `strict_checksums`: whether a checksum mismatch (crc32c, zstd's
#'   content checksum, numcodecs' crc32, adler32, fletcher32 and
#'   jenkins_lookup3) is an error of class `zarr_error_checksum` (TRUE, the
#'   default, as in zarr-python) or a warning, the data being returned as
#'   stored (FALSE). Used by every read.
#' * `min_compress`: [as_zarr()] leaves arrays of at most this many
#'   elements uncompressed (default 100).
#' * `chunk_length`: the longest default chunk along a dimension (default
#'   100), used by [define_array()] and [as_zarr()].
#' * `progress`: whether a read or write that looks like taking 2 s or
#'   more shows a progress bar of its chunks (the cli package; default
#'   `interactive()`). Never shown in a non-interactive session.
#' * `cf`: reserved for decoding arrays with CF attributes (default TRUE);
#'   nothing reads it yet.
#' * `chunk_separator`: the separator in the chunk keys of new Zarr v3
#'   arrays, "." (keys such as "c.1.0", as the manual and R-CF's zarr make
#'   them) or "/" ("c/1/0", what zarr-python writes: the specification's
#'   default when metadata names none). Both are valid Zarr and every
#'   reader takes either; "/" keeps large arrays out of one huge folder.
#'   Used by [array_builder] (and so [define_array()], [as_zarr()]) and by
#'   `add_array()` for metadata without a `chunk_key_encoding`.
#'
#' The network stores ([zarr_httpstore] and [zarr_objectstore]) read these
#' when they are made (the `options` of a store win over them):
#' * `max_retries`: how many times a failed request is tried again
#'   (default 10). Retried are answers 5xx, 408 and 429 (after the wait the
#'   server asks for in Retry-After, for the HTTP store), connections that
#'   fail, are reset or close before the answer, answers cut short of the
#'   length they announced, and timeouts. The wait before retry n is drawn at
#'   random below 0.1 s * 2^n (at most 15 s).
#' * `retry_timeout`: the most seconds from a request's first try to its
#'   last (default 120); no retry starts that would end later.
#' * `connect_timeout`: seconds to resolve a host and connect (default 10).
#' * `request_timeout`: seconds to wait for the server's answer or for the
#'   next piece of its body (default 30): a stalled request fails (and is
#'   retried) after it, however long a steady download takes.
#' * `max_concurrency`: the most requests in flight when many chunks are
#'   read (default NULL: 16 for HTTP stores, 64 for object stores).
#'
#' A request that fails for good raises a `zarr_error_io` condition whose
#' message names the key, the URL, the last failure (status or error) and
#' how many attempts were made in how long.
#'
#' @param key The name of an option; missing for all of them.
#' @param value The new value; missing to read the option.
#' @param ... Options to set by name instead, as `zarr_options(progress =
#'   FALSE)`; then `key` and `value` are not given.
#' @return With `key` only, the option's value; without arguments, a named
#'   list of all options; with `value`, the previous value, invisibly (with
#'   options by name, a named list of their previous values).
#' @export
#' @examples
#' zarr_options("min_compress")
#' old <- zarr_options("threads", 1)
#' zarr_options("threads")
#' zarr_options("threads", old)
#' names(zarr_options())
zarr_options <- function(key, value, ...) {
  if (...length()) return(set_named_options(key, value, ...))
  defaults <- option_defaults()
  if (missing(key)) return(sapply(names(defaults), zarr_options, simplify = FALSE))
  check_string(key, "key")
  if (!key %in% names(defaults)) {
    zarr_abort("argument", sprintf("unknown option '%s'; the options are %s", key,
                                   paste(names(defaults), collapse = ", ")))
  }
  if (missing(value)) {
    if (key == "threads") return(zarr_num_threads())
    return(getOption(option_name(key), defaults[[key]]))
  }
  old <- if (key == "threads") getOption("zarr.num_threads") else zarr_options(key)
  value <- check_option(key, value)
  args <- list(value)
  names(args) <- option_name(key)
  options(args)
  invisible(old)
}

# zarr_options(name = value, ...): each set as zarr_options(name, value).
set_named_options <- function(key, value, ...) {
  dots <- list(...)
  nm <- names(dots)
  if (!missing(key) || !missing(value) || is.null(nm) || any(!nzchar(nm))) {
    zarr_abort("argument", "give options either as `key` and `value` or all by name, as zarr_options(progress = FALSE)")
  }
  old <- lapply(nm, function(k) zarr_options(k, dots[[k]]))
  invisible(structure(old, names = nm))
}

check_option <- function(key, value) {
  if (key %in% c("strict_checksums", "progress", "cf")) {
    check_flag(value, key)
    return(value)
  }
  if (key == "chunk_separator") {
    if (!is.character(value) || length(value) != 1L || !value %in% c(".", "/")) {
      zarr_abort("argument", "option 'chunk_separator' must be \".\" or \"/\"")
    }
    return(value)
  }
  if (key %in% c("threads", "max_concurrency") && is.null(value)) return(NULL)
  if (key %in% c("retry_timeout", "connect_timeout", "request_timeout")) {
    if (!is.numeric(value) || length(value) != 1L || is.na(value) || value <= 0 || !is.finite(value)) {
      zarr_abort("argument", sprintf("option '%s' must be a number of seconds greater than 0", key))
    }
    return(as.numeric(value))
  }
  if (key == "max_retries") {
    if (!is.numeric(value) || length(value) != 1L || is.na(value) || value < 0 || value != trunc(value) ||
        value > 1000) {
      zarr_abort("argument", "option 'max_retries' must be a whole number from 0 to 1000")
    }
    return(as.integer(value))
  }
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value < 1 || value != trunc(value)) {
    zarr_abort("argument", sprintf("option '%s' must be a whole number of at least 1", key))
  }
  as.integer(value)
}
