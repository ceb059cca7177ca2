# Changing an array's shape: resize() (either end of any dimension),
# append() (grow one dimension and write there) and promote() (a new
# dimension). resize() and promote() run in the engine
# (src/rust/src/engine/resize.rs), which renames, erases and rewrites the
# stored chunks in parallel; R checks the arguments and stores the new
# metadata document between the engine's two steps, through the store
# object (which knows the versions of a store with conditional writes).
# append() writes its values through an engine handle opened on the new
# metadata before that metadata is stored, so readers of the old shape
# never see the new region being filled.

# ---------------------------------------------------------------- helpers

# An engine handle on `meta` for the array at `path`, without storing it;
# with `decode`, its writes CF-encode.
engine_on <- function(store, path, meta, decode = FALSE) {
  zarr_call(rz_array_attach(store_handle(store), node_key_path(path), metadata_json(meta), decode))
}

# `arr` must be writable; promote() needs a regular grid (resize() and
# append() grow a rectilinear one by a chunk, as zarr-python does).
check_reshapable <- function(arr, what, rectilinear = TRUE) {
  if (arr$store$read_only) zarr_abort("read_only", sprintf("%s: the store is read-only", array_what(arr)))
  grid <- arr$metadata$chunk_grid$name
  if (!identical(grid, "regular") && !(rectilinear && identical(grid, "rectilinear"))) {
    zarr_abort("unsupported", sprintf("%s: %s needs a regular chunk grid", array_what(arr), what))
  }
}

check_extents <- function(x, n, arg, what, lo = -Inf) {
  if (!is.numeric(x) || length(x) != n) {
    zarr_abort("argument", sprintf("%s: `%s` must have one element per dimension of the array (%d)%s", what, arg, n,
                                   if (!is.numeric(x) && length(x) == n) ", as numbers" else ""))
  }
  if (anyNA(x) || any(x != trunc(x)) || any(x < lo)) {
    zarr_abort("argument", sprintf("%s: `%s` must be whole numbers%s", what, arg, if (lo == 0) " >= 0" else ""))
  }
  as.numeric(x)
}

# One number, such as promote()'s `dimension` and `length`.
check_whole <- function(x, arg, what, lo = 1) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != trunc(x) || x < lo) {
    zarr_abort("argument", sprintf("%s: `%s` must be one whole number >= %d", what, arg, lo))
  }
  as.numeric(x)
}

# Replace the array's metadata document (setting it stores it).
store_new_metadata <- function(arr, meta) {
  arr$metadata <- meta
  invisible(arr)
}

# Store `meta` (evaluated here) as the array's metadata; when that fails,
# `undo()` reverses the engine's first step before the error is raised
# again.
store_or_undo <- function(arr, meta, undo) {
  tryCatch(store_new_metadata(arr, meta), error = function(e) {
    undo()
    stop(e)
  })
}

# ---------------------------------------------------------------- resize

# The arguments of resize() as R-CF's zarr and this package take them:
# `new_shape` alone, or `low` and/or `high` (element counts to add, or
# remove when negative, at each end). Two unnamed arguments are R-CF's
# positional (low, high).
resize_arguments <- function(call, new_shape, low, high) {
  args <- as.list(call)[-1L]
  nm <- names(args) %||% rep("", length(args))
  if (sum(!nzchar(nm)) == 2L && !any(nm %in% c("low", "high", "new_shape"))) {
    return(list(new_shape = NULL, low = new_shape, high = low))
  }
  list(new_shape = new_shape, low = low, high = high)
}

# The engine works out the new shape (the low end moves by whole chunks,
# rounded outward as in R-CF's zarr) and refuses what it cannot do before
# anything changes; the new metadata is stored after the region that
# comes into view is cleared and before what fell outside is erased.
array_resize <- function(arr, new_shape = NULL, low = NULL, high = NULL) {
  what <- array_what(arr)
  check_reshapable(arr, "resize()")
  nd <- length(arr$shape)
  # (a 0-d array: the engine says to use promote())
  if (nd) {
    low <- if (!is.null(low)) check_extents(low, nd, "low", what)
    if (!is.null(new_shape)) {
      if (!is.null(high)) zarr_abort("argument", sprintf("%s: give `new_shape` or `high`, not both", what))
      new_shape <- check_extents(new_shape, nd, "new_shape", what, lo = 0)
    } else if (!is.null(high)) {
      high <- check_extents(high, nd, "high", what)
    }
  }
  h <- store_handle(arr$store)
  path <- node_key_path(arr$path)
  old <- metadata_json(arr$metadata)
  done <- zarr_call(rz_array_resize(h, path, old, if (!is.null(new_shape)) as.numeric(new_shape),
                                    as.numeric(low), as.numeric(high), zarr_num_threads()))
  if (is.null(done)) return(invisible(arr))
  store_or_undo(arr, parse_json(done$metadata), function() zarr_call(rz_array_resize_undo(h, path, old, done$shift)))
  zarr_call(rz_array_resize_finish(h, path, done$metadata, zarr_num_threads()))
  invisible(arr)
}

# ---------------------------------------------------------------- append

array_append <- function(arr, x, along) {
  what <- array_what(arr)
  check_reshapable(arr, "append()")
  meta <- arr$metadata
  shape <- as.numeric(arr$shape)
  nd <- length(shape)
  if (!nd) zarr_abort("unsupported", sprintf("%s: nothing can be appended to a 0-d array; use promote()", what))
  along <- check_whole(along, "along", what)
  if (along > nd) zarr_abort("argument", sprintf("%s: `along` is %d but the array has %d dimensions", what, along, nd))
  xd <- dim(x) %||% length(x)
  # One slice (a matrix appended to a 3-d array) has no extent along `along`.
  if (length(xd) == nd - 1L) xd <- append(xd, 1, after = along - 1L)
  if (length(xd) != nd || any(xd[-along] != shape[-along])) {
    zarr_abort("type", sprintf("%s: data of shape %s cannot be appended along dimension %d of shape %s", what,
                               paste(dim(x) %||% length(x), collapse = " x "), along, paste(shape, collapse = " x ")))
  }
  if (xd[along] == 0) return(invisible(arr))
  target <- shape
  target[along] <- shape[along] + xd[along]
  new_meta <- parse_json(zarr_call(rz_array_reshaped(metadata_json(meta), target)))
  # The data goes in through a handle on the new shape, in parallel as any
  # write; the metadata is stored last, so a crash in between leaves the
  # old shape, whose chunks only ever gain values beyond its end.
  handle <- engine_on(arr$store, arr$path, new_meta, cf_decode())
  sel <- lapply(seq_len(nd), function(d) engine_whole(shape[d]))
  sel[[along]] <- structure(c(shape[along], xd[along]), zarr_range = TRUE)
  dim(x) <- NULL
  engine_write(arr, handle, cf_encode(x, array_read_info(arr)$cf), sel)
  store_new_metadata(arr, new_meta)
}

# ---------------------------------------------------------------- promote

# The engine inserts the dimension into the shape, the chunk grid and the
# codecs (a dimension of extent 1 leaves a chunk's bytes as they are) and
# renames the chunks; R names the new dimension.
array_promote <- function(arr, dimension, length) {
  what <- array_what(arr)
  check_reshapable(arr, "promote()", rectilinear = FALSE)
  nd <- length(arr$shape)
  dimension <- check_whole(dimension, "dimension", what)
  length <- check_whole(length, "length", what)
  h <- store_handle(arr$store)
  path <- node_key_path(arr$path)
  meta <- arr$metadata
  old <- metadata_json(meta)
  new_meta <- parse_json(zarr_call(rz_array_promote(h, path, old, dimension - 1, zarr_num_threads())))
  store_or_undo(arr, promoted_names(arr, meta, new_meta, dimension),
                function() zarr_call(rz_array_promote_undo(h, path, old)))
  zarr_call(rz_array_promote_finish(h, path, metadata_json(arr$metadata), dimension - 1, zarr_num_threads()))
  if (length > 1) {
    high <- numeric(nd + 1L)
    high[dimension] <- length - 1
    array_resize(arr, high = high)
  }
  invisible(arr)
}

# The dimension names of `new_meta` after promote() from `meta`: the
# default names of add_array() are renumbered; among others, the new
# dimension takes its default name (xarray opens no array with a
# dimension unnamed, and R shows that name as none).
promoted_names <- function(arr, meta, new_meta, dimension) {
  if (is.null(meta$dimension_names)) return(new_meta)
  nd <- length(meta$dimension_names)
  defaults <- cf_default_dims(arr$name, nd + 1L)
  new_name <- defaults[dimension]
  while (new_name %in% unlist(meta$dimension_names)) new_name <- paste0(new_name, "_")
  dn <- append(meta$dimension_names, list(new_name), after = dimension - 1L)
  if (identical(unlist(meta$dimension_names), cf_default_dims(arr$name, nd))) dn <- as.list(defaults)
  new_meta$dimension_names <- dn
  if (!is.null(meta$attributes[["_ARRAY_DIMENSIONS"]])) new_meta$attributes[["_ARRAY_DIMENSIONS"]] <- dn
  new_meta
}
