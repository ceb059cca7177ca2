# Reference stores ("virtual Zarr"): fsspec reference sets, as kerchunk
# writes them, that map Zarr keys to inline values or to byte ranges of
# other files (NetCDF, HDF5, GRIB...). The Rust engine
# (src/rust/src/store/reference.rs) parses the set and fetches the bytes;
# reads then go through the same parallel engine as any store.

#' Zarr store of fsspec references (kerchunk)
#'
#' @description A read-only store described by a reference set (the fsspec reference
#' specification): a JSON file (version 0, or version 1 with Jinja
#' templates and `gen` ranges; plain, gzip or zstd compressed), or a folder
#' of Parquet references (`.zmetadata` plus `refs.N.parq` files per array,
#' loaded only when their chunks are read). Targets may be local paths,
#' `file://` URLs (relative paths start from the reference file's folder),
#' `http(s)://` URLs or object store URLs (`s3://`, `gs://`, `az://`, with
#' the credentials of [zarr_objectstore] from the environment), fetched
#' with range requests, several at a time, and retried, timed out and
#' limited by the network options of [zarr_options()] (`max_retries`,
#' `retry_timeout`, `connect_timeout`, `request_timeout`,
#' `max_concurrency`) as the HTTP and object stores are. A JSON set or a
#' Parquet folder may itself be at an `http(s)://` or object store URL
#' (`open_zarr("s3://bucket/refs.parq")`): the folder's `.zmetadata` is
#' read on opening and each `refs.N.parq` file when its chunks are first
#' read. Other protocols raise
#' `zarr_error_unsupported` naming the URL. [open_zarr()] opens a reference
#' set directly.
#'
#' A reference set may be someone else's file, and it can name any local
#' file as a target. `local_root` (default: the option
#' `zarr.reference_local_root`) confines local targets to one folder: a
#' reference to a file outside it (after resolving links) fails to read
#' with an error of class `zarr_error_invalid_key`. The keys a JSON set
#' may expand to are bounded by the option `zarr.reference_max_keys`
#' (default 1e7, about a gigabyte of references), and the expansion of its
#' `templates` and `gen` by a minute: beyond either, opening is an error of
#' class `zarr_error_metadata`.
#'
#' @docType class
#' @export
#' @examples
#' refs <- tempfile(fileext = ".json")
#' writeLines('{"version": 1, "refs": {
#'   "zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [3],
#'     "data_type": "uint8", "chunk_grid": {"name": "regular",
#'     "configuration": {"chunk_shape": [3]}}, "chunk_key_encoding":
#'     {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]},
#'   "c/0": "base64:AQID"}}', refs)
#' z <- open_zarr(refs)
#' z[["/"]][]
#' unlink(refs)
zarr_refstore <- R6::R6Class("zarr_refstore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Open a reference set.
    #' @param location A JSON reference file or a folder of Parquet
    #'   references: a path, a `file://` URL, or an `http(s)://` or object
    #'   store URL (a URL whose name does not end in `.json` is tried as a
    #'   Parquet folder first).
    #' @param local_root `NULL` (any local target may be read), or the
    #'   folder local targets must lie in.
    initialize = function(location, local_root = getOption("zarr.reference_local_root")) {
      check_string(location, "location")
      if (!is.null(local_root)) check_string(local_root, "local_root")
      max_keys <- getOption("zarr.reference_max_keys", 1e7)
      if (!is.numeric(max_keys) || length(max_keys) != 1L || is.na(max_keys) || max_keys < 0) {
        zarr_abort("argument", "option `zarr.reference_max_keys` must be a single non-negative number")
      }
      super$initialize(read_only = TRUE)
      root <- if (is.null(local_root)) "" else enc2utf8(path.expand(local_root))
      net <- network_options()
      network <- as.double(c(net$max_retries, net$retry_timeout, net$connect_timeout, net$request_timeout,
                             net$max_concurrency %||% 16L))
      handle <- rz_store_reference(enc2utf8(path.expand(location)), root, as.double(max_keys), network)
      private$handle <- with_context(zarr_call(handle), sprintf("reference set '%s'", location))
      private$.location <- location
    }
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "Reference store",
    #' @field location (read-only) The reference set's file, folder or URL.
    location = function(value) private$.location
  ),
  private = list(.location = NULL)
)

# Whether `location` names a reference set rather than a Zarr store.
is_reference_set <- function(location) {
  # (a URL has "://": the cheaper test first, an open of a folder being the usual case)
  if (grepl("://", location, fixed = TRUE) &&
        (grepl("^https?://", location, ignore.case = TRUE) || is_object_url(location))) {
    # By name: a store's URL gets no probing request. Parquet folders are
    # named "<name>.parq" by kerchunk and fsspec.
    return(grepl("[.](json([.](gz|zst))?|parq(uet)?/?)([?].*)?$", location, ignore.case = TRUE))
  }
  path <- path.expand(without_file_scheme(location))
  if (file.exists(path) && !dir.exists(path)) return(TRUE)
  zmeta <- file.path(path, ".zmetadata")
  if (!dir.exists(path) || !file.exists(zmeta)) return(FALSE)
  # A Zarr root document makes it a store (whose .zmetadata is consolidated
  # metadata, maybe large): Parquet reference folders have none.
  if (any(file.exists(file.path(path, c("zarr.json", ".zgroup", ".zarray"))))) return(FALSE)
  # Parquet reference folders hold their own .zmetadata, with record_size.
  meta <- tryCatch(jsonlite::fromJSON(zmeta, simplifyVector = FALSE), error = function(e) NULL)
  !is.null(meta$record_size)
}
