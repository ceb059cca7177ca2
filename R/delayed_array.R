# DelayedArray (Bioconductor) for zarr arrays: a seed whose chunk grid
# block processing follows, and a realization sink that writes a delayed
# expression block by block into a new array. DelayedArray is suggested,
# not imported, and loading it takes about a second: its classes and
# methods are defined when it is loaded (delayed_array_register(), from a
# load hook set in .onLoad), not when zarr is. The zarr namespace is
# sealed by then, so the definitions live in an environment of their own.

delayed_array_env <- new.env()

#' Zarr arrays as DelayedArrays
#'
#' With the Bioconductor package DelayedArray installed, a [zarr_array]
#' is the seed of a `DelayedArray`: `DelayedArray(arr)` (or
#' `ZarrArray(location, name)`) gives a lazy array of class `ZarrArray`
#' (`ZarrMatrix` for two dimensions) whose `chunkdim()` is the Zarr chunk
#' shape (the shard shape of a sharded array), so `blockApply()` over
#' `chunkGrid()` reads each chunk once, and `path()` the store's
#' location. Blocks are read through the engine in parallel, CF-decoded
#' (see [cf_decoding]); times are read as the plain numbers of POSIXct
#' (seconds since 1970), as DelayedArrays hold base types only.
#'
#' `writeZarrArray(x, location)` realizes any array-like object (a
#' delayed expression of any size) into a new Zarr array block by block,
#' with blocks made of whole chunks, each block written by the engine in
#' parallel, so the whole never has to fit in memory. Missing values and
#' blocks equal to the fill value follow the package's rules (see
#' [zarr_array]): `NA` is stored as the fill value and chunks that hold
#' only it are not stored; sparse blocks are written as the dense values
#' they stand for. `as(x, "ZarrArray")` writes to a store in memory
#' (`realize(x, BACKEND = "ZarrArray")` is refused by DelayedArray, whose
#' list of backends is fixed).
#'
#' @param x For `writeZarrArray()`, an array-like object (a matrix, array
#'   or `DelayedArray`).
#' @param location For `ZarrArray()`, the location of a store (as in
#'   [open_zarr()]) or a [zarr] object. For `writeZarrArray()`, a folder or
#'   object store URL for a new store (see [create_zarr()]), a
#'   [zarr_group] to add the array to, or NULL (the default) for a store
#'   in memory.
#' @param name The path of the array in the store; for `ZarrArray()` it
#'   may be left out when the root of the store is the array. For
#'   `writeZarrArray()`, NULL makes the array the root of the new store
#'   (not with a group `location`).
#' @param chunk_shape For `writeZarrArray()`, the chunk shape; NULL takes
#'   `chunkdim(x)` where `x` has one, else that of [define_array()].
#' @param data_type For `writeZarrArray()`, the Zarr data type; NULL takes
#'   the one of `type(x)` ("float64", "int32", "bool", "string").
#' @param zarr_format 3 (the default) or 2, for a new store.
#' @param verbose Passed to DelayedArray's block processing: whether to
#'   report each block.
#' @return `ZarrArray()` and `writeZarrArray()` return a `ZarrArray` (a
#'   `DelayedArray`); for `writeZarrArray()` one on the new array.
#' @name zarr_delayed_array
#' @examples
#' if (requireNamespace("DelayedArray", quietly = TRUE)) {
#'   suppressPackageStartupMessages(library(DelayedArray))
#'   z <- as_zarr(matrix(as.numeric(1:200), 10, 20), name = "m")
#'   x <- ZarrArray(z, "m")
#'   chunkdim(x)
#'   y <- writeZarrArray(log(x) + 1)
#'   as.matrix(y)[1:2, 1:3]
#' }
NULL

#' @rdname zarr_delayed_array
#' @export
# (Bioconductor's names: HDF5Array(), writeHDF5Array(), ...)
ZarrArray <- function(location, name = NULL) { # nolint: object_name_linter.
  delayed_array_need()
  z <- if (inherits(location, "zarr")) location else open_zarr(location)
  # (a name as HDF5Array() takes it: "m" or "/m")
  arr <- if (is.null(name)) z$root else z$get_node(if (is_relative_path(name)) paste0("/", name) else name)
  if (!inherits(arr, "zarr_array")) {
    zarr_abort("argument", sprintf("'%s' in %s is not an array", name %||% "/", store_location(z$store)))
  }
  DelayedArray::DelayedArray(zarr_seed(arr))
}

#' @rdname zarr_delayed_array
#' @export
writeZarrArray <- function(x, location = NULL, name = NULL, chunk_shape = NULL, # nolint: object_name_linter.
                           data_type = NULL, zarr_format = 3L, verbose = NA) {
  delayed_array_need()
  d <- dim(x)
  if (is.null(d)) zarr_abort("argument", "`x` must be an array-like object with dimensions")
  arr <- delayed_new_array(x, location, name, chunk_shape, data_type, zarr_format)
  sink <- methods::new("ZarrRealizationSink", node = zarr_node_env(arr), dim = as.integer(d),
                       dimnames = dimnames(x) %||% vector("list", length(d)), type = DelayedArray::type(x),
                       chunkdim = as.integer(arr$chunking$chunk_shape))
  DelayedArray::BLOCK_write_to_sink(sink, x, verbose = verbose)
  DelayedArray::DelayedArray(zarr_seed(arr))
}

# The new array writeZarrArray() realizes `x` into.
delayed_new_array <- function(x, location, name, chunk_shape, data_type, zarr_format) {
  type <- DelayedArray::type(x)
  dtype <- data_type %||% switch(type, logical = "bool", integer = "int32", double = "float64",
                                 complex = "complex128", character = "string",
                                 zarr_abort("type", sprintf("cannot write a DelayedArray of type '%s'", type)))
  def <- define_array(dtype, dim(x))
  chunk_shape <- chunk_shape %||% DelayedArray::chunkdim(x)
  if (!is.null(chunk_shape)) def$chunk_shape <- pmin(as.numeric(chunk_shape), pmax(dim(x), 1))
  dims <- cf_dimension_names(array(0, rep(1L, length(dim(x))), dimnames(x)), name)
  if (inherits(location, "zarr_group")) {
    if (is.null(name)) zarr_abort("argument", "`name` is required when `location` is a group")
    return(location$add_array(name, cf_annotate(def, list(attributes = list(), data_type = dtype), dims,
                                                location$store$version)))
  }
  def <- cf_annotate(def, list(attributes = list(), data_type = dtype), dims, zarr_format)
  store <- new_store(location, zarr_format)
  if (is.null(name)) {
    store$create_array("", "", def)
    return(zarr$new(store)$root)
  }
  store$create_group("", "")
  zarr$new(store)$add_array("/", name, def)
}

# The seed of a zarr array: an S4 object that holds the array (in an
# environment, as S4 slots cannot hold R6 objects) and what DelayedArray
# asks of it without a read.
zarr_seed <- function(arr) {
  if (any(arr$shape > .Machine$integer.max)) {
    zarr_abort("unsupported", sprintf("%s: DelayedArray takes extents of at most %d", array_what(arr),
                                      .Machine$integer.max))
  }
  methods::new("ZarrArraySeed", node = zarr_node_env(arr), location = store_location(arr$store),
               name = arr$path, dim = as.integer(arr$shape), dimnames = seed_dimnames(arr),
               chunkdim = as.integer(arr$chunking$chunk_shape), type = seed_type(arr))
}

zarr_node_env <- function(arr) {
  env <- new.env(parent = emptyenv())
  env$array <- arr
  env$session <- delayed_array_env
  env
}

# The location of a store as open_zarr() takes it ("" for memory).
store_location <- function(store) {
  if (inherits(store, "zarr_localstore")) return(store$root)
  uri <- tryCatch(store$uri, error = function(e) NULL)
  if (is.character(uri) && length(uri) == 1L) uri else ""
}

# dimnames() of the array as DelayedArray wants them: one entry per
# dimension (NULL entries), and NULL when there is nothing to show.
seed_dimnames <- function(arr) {
  dn <- dimnames(arr)
  if (is.null(dn)) return(vector("list", length(arr$shape)))
  dn
}

# dimnames without any names are NULL, as base R has them.
none_as_null <- function(dn) if (all(vapply(dn, is.null, logical(1))) && is.null(names(dn))) NULL else dn

# The R type that reads of `arr` give, as DelayedArray holds it: CF times
# and unpacked numbers are double; int64 is double here, as block
# processing knows no integer64.
seed_type <- function(arr) {
  cf <- arr$engine_info()$cf
  type <- arr$data_type$Rtype
  if (!is.null(cf) && !isTRUE(cf$zarr_rule)) {
    if (cf$kind %in% c("time", "timedelta")) type <- "double"
    else if (identical(cf$kind, "bool")) type <- "logical"
    else if (cf$scale != 1 || cf$offset != 0) type <- "double"
  }
  if (identical(type, "integer64")) "double" else type
}

# The array of a seed: the object it was made with, else (a seed that was
# serialized, e.g. sent to another process) opened again from its location.
seed_array <- function(x) {
  env <- x@node
  # A seed that was serialized holds a copy of delayed_array_env, and an
  # array whose engine handle is gone.
  if (is.null(env$array) || !identical(env$session, delayed_array_env)) {
    if (!nzchar(x@location)) {
      zarr_abort("argument", sprintf("the store of array '%s' was in memory: it cannot be opened again", x@name))
    }
    env$array <- open_zarr(x@location, read_only = TRUE)[[x@name]]
    env$session <- delayed_array_env
  }
  env$array
}

# extract_array() of a seed: `index` holds per dimension NULL (all) or
# 1-based indices, in any order and with repeats, as the engine takes them.
seed_extract <- function(x, index) {
  n <- lengths(index)
  shape <- x@dim
  if (any(!vapply(index, is.null, logical(1)) & n == 0L)) {
    return(array(vector(x@type, 0L), ifelse(vapply(index, is.null, logical(1)), shape, n)))
  }
  arr <- seed_array(x)
  info <- arr$engine_info()
  sel <- lapply(seq_along(shape), function(d) {
    if (is.null(index[[d]])) engine_whole(shape[d]) else engine_dim(as.numeric(index[[d]]))
  })
  out <- engine_read(info, sel, TRUE, NULL)
  plain_array(out, x@type)
}

# An array of a base type with dim only, as block processing expects.
plain_array <- function(out, type) {
  d <- dim(out)
  if (inherits(out, "integer64")) out <- as.double(out)
  out <- as.vector(unclass(out), type)
  dim(out) <- d
  out
}

# write_block() of the sink: the block goes to its viewport's region;
# blocks are whole chunks, written by the engine in parallel.
sink_write_block <- function(sink, viewport, block) {
  if (!is.array(block)) block <- as.array(block)
  arr <- sink@node$array
  sel <- Map(c, BiocGenerics::start(viewport), BiocGenerics::end(viewport))
  arr$write(block, sel)
  invisible(sink)
}

delayed_array_need <- function() {
  if (!requireNamespace("DelayedArray", quietly = TRUE)) {
    zarr_abort("unsupported", "this needs the Bioconductor package DelayedArray, which is not installed")
  }
  delayed_array_register()
}

# Defines the classes and methods (once), into delayed_array_env.
delayed_array_register <- function(...) {
  if (isTRUE(delayed_array_env$registered)) return(invisible(TRUE))
  where <- delayed_array_env
  methods::setOldClass(c("zarr_array", "zarr_node", "R6"), where = where)
  methods::setClass("ZarrArraySeed", contains = "Array", where = where,
                    slots = c(node = "environment", location = "character", name = "character", dim = "integer",
                              dimnames = "list", chunkdim = "integer", type = "character"))
  methods::setClass("ZarrArray", contains = "DelayedArray", slots = c(seed = "ZarrArraySeed"), where = where)
  methods::setClass("ZarrMatrix", contains = c("ZarrArray", "DelayedMatrix"), where = where)
  methods::setClass("ZarrRealizationSink", contains = "RealizationSink", where = where,
                    slots = c(node = "environment", dim = "integer", dimnames = "list", type = "character",
                              chunkdim = "integer"))
  methods::setMethod("dim", "ZarrArraySeed", function(x) x@dim, where = where)
  methods::setMethod("dimnames", "ZarrArraySeed", function(x) none_as_null(x@dimnames), where = where)
  methods::setMethod(DelayedArray::extract_array, "ZarrArraySeed", seed_extract, where = where)
  methods::setMethod(DelayedArray::chunkdim, "ZarrArraySeed", function(x) x@chunkdim, where = where)
  methods::setMethod(DelayedArray::type, "ZarrArraySeed", function(x) x@type, where = where)
  methods::setMethod(BiocGenerics::path, "ZarrArraySeed", function(object, ...) object@location, where = where)
  methods::setMethod(DelayedArray::DelayedArray, "ZarrArraySeed",
                     function(seed) DelayedArray::new_DelayedArray(seed, Class = "ZarrArray"), where = where)
  methods::setMethod(DelayedArray::DelayedArray, "zarr_array",
                     function(seed) DelayedArray::DelayedArray(zarr_seed(seed)), where = where)
  methods::setMethod(DelayedArray::matrixClass, "ZarrArray", function(x) "ZarrMatrix", where = where)
  methods::setMethod("dim", "ZarrRealizationSink", function(x) x@dim, where = where)
  methods::setMethod("dimnames", "ZarrRealizationSink", function(x) none_as_null(x@dimnames), where = where)
  methods::setMethod(DelayedArray::type, "ZarrRealizationSink", function(x) x@type, where = where)
  methods::setMethod(DelayedArray::chunkdim, "ZarrRealizationSink", function(x) x@chunkdim, where = where)
  methods::setMethod(DelayedArray::write_block, "ZarrRealizationSink", sink_write_block, where = where)
  methods::setAs("ANY", "ZarrArray", function(from) writeZarrArray(from), where = where)
  delayed_array_env$registered <- TRUE
  invisible(TRUE)
}
