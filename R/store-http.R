# The HTTP store: a read-only store over http:// or https://. The Rust
# engine (src/rust/src/store/http.rs) makes the requests: ranged GETs for
# partial reads, HEAD for exists() and getsize(), and several requests in
# flight at once when the engine fetches a batch of chunks.

#' Zarr store on a web server
#'
#' @description A read-only store whose keys are paths below a URL: the value of key
#' `"c/0/1"` of the store at `https://example.org/data.zarr` is the body of
#' `https://example.org/data.zarr/c/0/1`. Any web server or object store
#' that serves the files of a Zarr store can be read this way.
#'
#' Partial reads use HTTP range requests (`Range: bytes=`), so reading part
#' of a sharded array fetches only the bytes it needs; a server that ignores
#' ranges still gives the right bytes, at the cost of sending whole values.
#' When the engine reads many chunks it keeps up to 16 requests in flight
#' over reused connections. Connections time out after 10 seconds, reads
#' after 30 seconds without data.
#'
#' A request that fails in a way that may pass (a 5xx or 429 answer, a
#' dropped or reset connection, a body cut short, a timeout) is tried again
#' with growing random waits, up to 10 times within 2 minutes; the options
#' `max_retries`, `retry_timeout`, `connect_timeout`, `request_timeout` and
#' `max_concurrency` of [zarr_options()] (or of the store's `options`) set
#' these limits. A 206 answer whose `Content-Range` is not the range asked
#' for is an error, never data.
#'
#' A missing key (HTTP status 404) reads as `NULL`. Other failures raise a
#' `zarr_error_io` condition naming the key and the URL: `403 Forbidden`
#' or any other error status, and, once the retries are spent, the last
#' failure with the number of attempts. A metadata document
#' (`zarr.json`, `.zarray`, `.zgroup`, `.zattrs`, `.zmetadata`) that comes
#' back as a web page raises `zarr_error_metadata`.
#'
#' HTTP has no way to list keys, so `list()`, `list_dir()` and
#' `list_prefix()` raise `zarr_error_unsupported`. A store whose root is a
#' single array or group can be opened with [open_zarr()].
#'
#' Keys are checked as in every store (no `..`, `.`, empty segments,
#' backslashes or leading `/`) and percent-encoded segment by segment when
#' they are added to the URL, so a key never leaves the store's URL. A query
#' in the URL (such as `?token=...`) is sent with every request but not
#' shown in messages. The URL may contain UTF-8 characters.
#'
#' Unlike the manual this package follows, in which writing to an HTTP
#' store silently returns `FALSE` or the store, every write (`set()`,
#' `set_if_not_exists()`, `erase()`, `erase_prefix()`, `clear()`,
#' `set_metadata()`, `create_group()`, `create_array()`) raises a
#' `zarr_error_read_only` condition, as writing to any read-only store does.
#'
#' @docType class
#' @export
#' @examples
#' # Making the store sends no request yet.
#' s <- zarr_httpstore$new("https://example.org/data/temperature.zarr")
#' s
#' s$read_only
#' tryCatch(s$set("x", as.raw(1)), zarr_error_read_only = conditionMessage)
#' @examplesIf interactive()
#' # Reading needs the server (the URL above is only an example).
#' z <- open_zarr("https://example.org/data/temperature.zarr")
#' z[["/"]][1:10]
zarr_httpstore <- R6::R6Class("zarr_httpstore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Create a store for the Zarr data at a URL. HTTP stores
    #'   are read-only. No request is made until a key is read.
    #' @param url The URL of the store root, starting with `http://` or
    #'   `https://`. It may use UTF-8 code points.
    #' @param options A named list of network options (`max_retries`,
    #'   `retry_timeout`, `connect_timeout`, `request_timeout`,
    #'   `max_concurrency`, see [zarr_options()]); those not given are taken
    #'   from [zarr_options()].
    initialize = function(url, options = list()) {
      check_string(url, "url")
      super$initialize(read_only = TRUE)
      net <- http_options(options)
      private$handle <- zarr_call(rz_store_http(
        enc2utf8(url), net$max_retries, net$retry_timeout, net$connect_timeout, net$request_timeout,
        net$max_concurrency %||% 16L
      ))
      private$.url <- url
    },
    #' @description Clearing the store is not supported: raises a
    #'   `zarr_error_read_only` condition.
    clear = function() http_read_only(self, "clear the store"),
    #' @description Storing a value is not supported: raises a
    #'   `zarr_error_read_only` condition.
    #' @param key The key.
    #' @param value A raw vector.
    set_if_not_exists = function(key, value) {
      check_string(key, "key")
      http_read_only(self, sprintf("write '%s'", key))
    },
    #' @description Setting metadata is not supported: raises a
    #'   `zarr_error_read_only` condition.
    #' @param prefix The node path.
    #' @param metadata The metadata.
    set_metadata = function(prefix, metadata) {
      http_read_only(self, sprintf("write the metadata of '/%s'", node_key_path(prefix)))
    },
    #' @description Creating a group is not supported: raises a
    #'   `zarr_error_read_only` condition.
    #' @param path The path of the parent group.
    #' @param name The name of the new group.
    create_group = function(path, name) {
      http_read_only(self, sprintf("create the group '/%s'", child_path(path, name)))
    },
    #' @description Creating an array is not supported: raises a
    #'   `zarr_error_read_only` condition.
    #' @param parent The path of the parent group.
    #' @param name The name of the new array.
    #' @param metadata The metadata of the new array.
    create_array = function(parent, name, metadata) {
      http_read_only(self, sprintf("create the array '/%s'", child_path(parent, name)))
    }
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "HTTP store",
    #' @field root (read-only) The root of the store, identical to its URL.
    root = function(value) private$.url,
    #' @field uri (read-only) The URI of the store location, its URL.
    uri = function(value) private$.url,
    #' @field separator (read-only) The chunk key separator, "/".
    separator = function(value) "/",
    #' @field supports_listing (read-only) FALSE: HTTP cannot list keys.
    supports_listing = function(value) FALSE
  ),
  private = list(.url = NULL)
)

http_read_only <- function(store, what) {
  zarr_abort("read_only", sprintf(
    "cannot %s: %s is read-only", what, zarr_call(rz_store_info(store_handle(store)))$description
  ))
}

# The network options of an HTTP store from its `options` argument.
http_options <- function(options) {
  if (is.null(options)) options <- list()
  known <- c("max_retries", "retry_timeout", "connect_timeout", "request_timeout", "max_concurrency")
  if (!is.list(options) || (length(options) && (is.null(names(options)) || !all(names(options) %in% known)))) {
    zarr_abort("argument", sprintf("`options` of an HTTP store must be a named list of %s",
                                   paste(known, collapse = ", ")))
  }
  network_options(options)
}
