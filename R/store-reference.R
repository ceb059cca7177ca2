# Reference stores ("virtual Zarr"): fsspec reference sets, as kerchunk
# writes them, that map Zarr keys to inline values or to byte ranges of
# other files (NetCDF, HDF5, GRIB...). The Rust engine
# (src/rust/src/store/reference.rs) parses the set and fetches the bytes;
# reads then go through the same parallel engine as any store.

#' Zarr store of fsspec references (kerchunk)
#'
#' A read-only store described by a reference set (the fsspec reference
#' specification): a JSON file (version 0, or version 1 with Jinja
#' templates and `gen` ranges; plain, gzip or zstd compressed), or a folder
#' of Parquet references (`.zmetadata` plus `refs.N.parq` files per array,
#' loaded only when their chunks are read). Targets may be local paths,
#' `file://` URLs (relative paths start from the reference file's folder)
#' or `http(s)://` URLs, fetched with range requests, several at a time.
#' Other protocols (`s3://`, `gs://`) raise `zarr_error_unsupported` naming
#' the URL. [open_zarr()] opens a reference set directly.
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
    #'   references: a path, a `file://` URL or an `http(s)://` URL (JSON).
    initialize = function(location) {
      check_string(location, "location")
      super$initialize(read_only = TRUE)
      private$handle <- with_context(zarr_call(rz_store_reference(enc2utf8(path.expand(location)))),
                                     sprintf("reference set '%s'", location))
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
  if (grepl("^https?://", location, ignore.case = TRUE)) {
    return(grepl("[.]json([.](gz|zst))?([?].*)?$", location, ignore.case = TRUE))
  }
  path <- path.expand(sub("^file://", "", location))
  if (file.exists(path) && !dir.exists(path)) return(TRUE)
  zmeta <- file.path(path, ".zmetadata")
  if (!dir.exists(path) || !file.exists(zmeta)) return(FALSE)
  # Parquet reference folders hold their own .zmetadata, with record_size.
  meta <- tryCatch(jsonlite::fromJSON(zmeta, simplifyVector = FALSE), error = function(e) NULL)
  !is.null(meta$record_size)
}
