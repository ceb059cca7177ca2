# Changing an array's shape: resize() (either end of any dimension),
# append() (grow one dimension and write there) and promote() (a new
# dimension). All of it is done on top of the store and the engine's write
# path: the metadata document is rewritten, stored chunks are renamed or
# erased, and values are written through an engine handle opened on the
# new metadata before that metadata is stored, so readers of the old shape
# never see the new region being filled.

# ---------------------------------------------------------------- chunk keys

# The chunk key encoding of array metadata: its name and separator.
key_encoding <- function(meta) {
  cke <- meta$chunk_key_encoding
  name <- cke$name %||% "default"
  sep <- cke$configuration$separator %||% (if (name == "v2") "." else "/")
  list(name = name, sep = sep)
}

# The keys (relative to the array) of the chunks at the 0-based grid
# indices in the rows of matrix `index`, as the engine writes them.
chunk_keys_of <- function(index, enc) {
  zarr_call(rz_chunk_keys(as.numeric(t(index)), nrow(index), ncol(index), enc$name, enc$sep))
}

# The stored chunks of an array: their keys (relative to `prefix`) and
# grid indices, one row per chunk. Keys that are not chunk keys of `ndim`
# dimensions are left out (and never touched).
stored_chunks <- function(store, prefix, enc, ndim) {
  keys <- substring(store$list_prefix(prefix), nchar(prefix) + 1L)
  found <- zarr_call(rz_chunk_key_index(keys, as.integer(ndim), enc$name, enc$sep))
  index <- matrix(found$index, nrow = length(found$which), ncol = ndim, byrow = TRUE)
  list(keys = keys[found$which], index = index)
}

# Move a stored value to another key, byte for byte.
move_key <- function(store, from, to) {
  value <- store$get(from)
  if (is.null(value)) return(invisible(NULL))
  store$set(to, value)
  store$erase(from)
}

# ---------------------------------------------------------------- helpers

# The shape of the chunk grid's chunks (the shard shape of a sharded array).
grid_chunk_shape <- function(meta) as.numeric(unlist(meta$chunk_grid$configuration$chunk_shape))

# An engine handle on `meta` for the array at `path`, without storing it;
# with `decode`, its writes CF-encode.
engine_on <- function(store, path, meta, decode = FALSE) {
  zarr_call(rz_array_attach(store_handle(store), node_key_path(path), metadata_json(meta), decode))
}

# `arr` must be writable and have a regular grid.
check_reshapable <- function(arr, what) {
  if (arr$store$read_only) zarr_abort("read_only", sprintf("%s: the store is read-only", array_what(arr)))
  if (!identical(arr$metadata$chunk_grid$name, "regular")) {
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

is_sharded <- function(meta) any(vapply(meta$codecs, function(cd) identical(cd$name, "sharding_indexed"), logical(1)))

# A value that every element type writes as the fill value: NA, except
# for bool, whose NA is written as FALSE whatever the fill.
fill_marker <- function(arr) {
  dt <- arr$data_type
  switch(dt$Rtype,
    logical = isTRUE(dt$fill_value),
    integer = NA_integer_,
    character = NA_character_,
    complex = NA_complex_,
    NA_real_
  )
}

# Write the fill value over the block `lo` (0-based) to `hi` (exclusive)
# through `handle`, in pieces of at most `max_n` elements so that a slab
# across a big array is never built in R at once.
write_fill_block <- function(arr, handle, lo, hi, max_n = 2^22) {
  ext <- hi - lo
  if (any(ext <= 0)) return(invisible(NULL))
  if (prod(ext) > max_n) {
    d <- which.max(ext)
    step <- max(1, floor(max_n / prod(ext[-d])))
    for (s in seq(lo[d], hi[d] - 1, by = step)) {
      l <- lo
      h <- hi
      l[d] <- s
      h[d] <- min(hi[d], s + step)
      write_fill_block(arr, handle, l, h, max_n)
    }
    return(invisible(NULL))
  }
  sel <- lapply(seq_along(lo), function(d) structure(c(lo[d], ext[d]), zarr_range = TRUE))
  engine_write(arr, handle, rep(fill_marker(arr), prod(ext)), sel)
}

# Replace the array's metadata document and store it.
store_new_metadata <- function(arr, meta) {
  arr$metadata <- meta
  arr$save()
  invisible(arr)
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

array_resize <- function(arr, new_shape = NULL, low = NULL, high = NULL) {
  what <- array_what(arr)
  check_reshapable(arr, "resize()")
  meta <- arr$metadata
  shape <- as.numeric(arr$shape)
  nd <- length(shape)
  if (!nd) zarr_abort("unsupported", sprintf("%s: a 0-d array cannot be resized; use promote()", what))
  chunk <- grid_chunk_shape(meta)
  low <- if (is.null(low)) numeric(nd) else check_extents(low, nd, "low", what)
  # The low end moves by whole chunks, rounded outward as R-CF's zarr does:
  # growth adds at least what was asked, shrinking removes at most that.
  shift <- ifelse(low >= 0, ceiling(low / chunk), -floor(-low / chunk))
  if (!is.null(new_shape)) {
    if (!is.null(high)) zarr_abort("argument", sprintf("%s: give `new_shape` or `high`, not both", what))
    target <- check_extents(new_shape, nd, "new_shape", what, lo = 0)
  } else {
    high <- if (is.null(high)) numeric(nd) else check_extents(high, nd, "high", what)
    target <- shape + shift * chunk + high
    # (as in R-CF's zarr, element counts never empty a dimension: new_shape can)
    if (any(target < 1)) {
      zarr_abort("argument", sprintf("%s: resizing would give a non-positive extent (%s): none may be zero or negative",
                                     what, paste(target, collapse = " x ")))
    }
  }
  if (all(shift == 0) && all(target == shape)) return(invisible(arr))
  if (is_sharded(meta)) {
    # Cutting into a shard would rewrite all of it to clear part; R-CF's zarr
    # refuses it too. Whole shards are erased, and growth touches none.
    cut <- target < shape + shift * chunk & target %% chunk != 0
    if (any(cut)) {
      zarr_abort("unsupported", sprintf(paste(
        "%s: shrinking a sharded array to an extent that is not a whole number of shards (%s along dimension %s)",
        "is not supported"), what, paste(chunk[cut], collapse = ", "), paste(which(cut), collapse = ", ")))
    }
  }
  resize_chunks(arr, meta, shape, chunk, shift, target)
}

# Resize in the order that keeps the old shape readable until the new
# metadata is stored (except for moves at the low end, which rename chunks
# first): clear what becomes visible, store the metadata, erase what fell
# outside.
resize_chunks <- function(arr, meta, shape, chunk, shift, target) {
  store <- arr$store
  prefix <- arr$prefix
  enc <- key_encoding(meta)
  nd <- length(shape)
  stored <- stored_chunks(store, prefix, enc, nd)
  index <- stored$index
  if (any(shift != 0)) {
    index <- shift_chunks(store, prefix, enc, stored, shift, ceiling(target / chunk))
    stored <- list(keys = chunk_keys_of(index, enc), index = index)
  }
  # The old data, in the new coordinates, ends at `data_end`.
  data_end <- shape + shift * chunk
  starts <- sweep(index, 2L, chunk, `*`)
  stale <- if (nrow(index)) apply(sweep(starts, 2L, data_end, `>=`), 1L, any) else logical(0)
  for (k in stored$keys[stale]) store$erase(paste0(prefix, k))
  new_meta <- meta
  new_meta$shape <- as.list(target)
  grows <- which(target > data_end & data_end %% chunk != 0 & data_end > 0)
  if (length(grows)) {
    wide <- meta
    wide$shape <- as.list(pmax(target, data_end))
    handle <- engine_on(store, arr$path, wide)
    for (d in grows) {
      # The rest of the old edge chunks along `d`, across the new shape.
      lo <- numeric(nd)
      hi <- target
      lo[d] <- data_end[d]
      hi[d] <- min(target[d], ceiling(data_end[d] / chunk[d]) * chunk[d])
      write_fill_block(arr, handle, lo, hi)
    }
  }
  store_new_metadata(arr, new_meta)
  outside <- if (nrow(index)) apply(sweep(index, 2L, ceiling(target / chunk), `>=`), 1L, any) else logical(0)
  for (k in stored$keys[outside & !stale]) store$erase(paste0(prefix, k))
  invisible(arr)
}

# Rename the stored chunks for a shift of `shift` chunks at the low end;
# those moved off either end of the new grid (`grid`) are erased. Returns
# the grid indices of the chunks that remain.
shift_chunks <- function(store, prefix, enc, stored, shift, grid) {
  moved <- sweep(stored$index, 2L, shift, `+`)
  off <- if (nrow(moved)) apply(moved < 0 | sweep(moved, 2L, grid, `>=`), 1L, any) else logical(0)
  for (k in stored$keys[off]) store$erase(paste0(prefix, k))
  keep <- which(!off)
  # A chunk's new key is free once the chunk that held it has moved: that
  # chunk lies further along the shift, so moving in decreasing order of
  # index . shift clears every key before it is written.
  order_by <- as.numeric(stored$index[keep, , drop = FALSE] %*% shift)
  new_keys <- character(nrow(moved))
  new_keys[keep] <- chunk_keys_of(moved[keep, , drop = FALSE], enc)
  for (i in keep[order(order_by, decreasing = TRUE)]) {
    move_key(store, paste0(prefix, stored$keys[i]), paste0(prefix, new_keys[i]))
  }
  moved[keep, , drop = FALSE]
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
  new_meta <- meta
  new_meta$shape <- as.list(target)
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

# Insert a dimension of extent 1 into the codecs' view of the chunk: the
# transpose orders and the inner chunk shape of a sharding codec. A
# dimension of extent 1 anywhere leaves the bytes of a chunk as they are.
promote_codecs <- function(codecs, at, nd) {
  lapply(codecs, function(cd) {
    cfg <- cd$configuration
    if (identical(cd$name, "transpose")) {
      order <- as.integer(unlist(cfg$order))
      cfg$order <- if (identical(order, as.integer(unlist(r_order(nd))))) {
        r_order(nd + 1L)
      } else {
        as.list(c(order + (order >= at), at))
      }
    } else if (identical(cd$name, "sharding_indexed")) {
      cfg$chunk_shape <- as.list(append(as.numeric(unlist(cfg$chunk_shape)), 1, after = at))
      cfg$codecs <- promote_codecs(cfg$codecs, at, nd)
      cfg$index_codecs <- promote_codecs(cfg$index_codecs, at, nd)
    } else {
      return(cd)
    }
    cd$configuration <- cfg
    cd
  })
}

array_promote <- function(arr, dimension, length) {
  what <- array_what(arr)
  check_reshapable(arr, "promote()")
  meta <- arr$metadata
  if (is_sharded(meta)) zarr_abort("unsupported", sprintf("%s: promote() is not supported for sharded arrays", what))
  shape <- as.numeric(arr$shape)
  nd <- length(shape)
  dimension <- check_whole(dimension, "dimension", what)
  if (dimension > nd + 1L) {
    zarr_abort("argument", sprintf("%s: `dimension` must be between 1 and %d for an array of %d dimension%s", what,
                                   nd + 1L, nd, if (nd != 1L) "s" else ""))
  }
  length <- check_whole(length, "length", what)
  at <- dimension - 1L
  new_meta <- meta
  new_meta$shape <- as.list(append(shape, 1, after = at))
  new_meta$chunk_grid$configuration$chunk_shape <- as.list(append(grid_chunk_shape(meta), 1, after = at))
  new_meta$codecs <- promote_codecs(meta$codecs, at, nd)
  if (!is.null(meta$dimension_names)) {
    # The default names of add_array() are renumbered; among others, the
    # new dimension takes its default name (xarray opens no array with a
    # dimension unnamed, and R shows that name as none).
    defaults <- cf_default_dims(arr$name, nd + 1L)
    new_name <- defaults[dimension]
    while (new_name %in% unlist(meta$dimension_names)) new_name <- paste0(new_name, "_")
    dn <- append(meta$dimension_names, list(new_name), after = at)
    if (identical(unlist(meta$dimension_names), cf_default_dims(arr$name, nd))) dn <- as.list(defaults)
    new_meta$dimension_names <- dn
    if (!is.null(meta$attributes[["_ARRAY_DIMENSIONS"]])) new_meta$attributes[["_ARRAY_DIMENSIONS"]] <- dn
  }
  metadata_json(new_meta)
  store <- arr$store
  prefix <- arr$prefix
  enc <- key_encoding(meta)
  stored <- stored_chunks(store, prefix, enc, nd)
  # Through keys of a prefix of their own: with "/" keys, an old chunk's file
  # may stand where a new key needs a folder ("c/0/0" and "c/0/0/1").
  tmp <- paste0(prefix, "__promote/")
  for (k in stored$keys) move_key(store, paste0(prefix, k), paste0(tmp, k))
  store_new_metadata(arr, new_meta)
  index <- stored$index
  grown <- cbind(index[, seq_len(at), drop = FALSE], rep(0, nrow(index)), index[, at + seq_len(nd - at), drop = FALSE])
  new_keys <- chunk_keys_of(grown, enc)
  for (i in seq_along(stored$keys)) move_key(store, paste0(tmp, stored$keys[i]), paste0(prefix, new_keys[i]))
  if (length > 1) {
    high <- numeric(nd + 1L)
    high[dimension] <- length - 1
    array_resize(arr, high = high)
  }
  invisible(arr)
}
