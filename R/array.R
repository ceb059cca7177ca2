# Arrays: the R6 class is a thin shell; reading and writing go through the
# engine (src/rust/src/engine.rs) via an array handle opened on first use.

#' Zarr array
#'
#' @description An array node. `read()` and `write()` (and `[`, `[<-`) move data between
#' R and the store through the Rust engine, which fetches, decodes and
#' scatters chunks in parallel straight into the R result
#' ([zarr_num_threads()] threads).
#'
#' The array's metadata document is the one read (or written) when the
#' node was opened: reads and writes do not fetch it again, which saves a
#' request per array on an HTTP store. A change another process makes to
#' the document is seen by opening the node again.
#'
#' Elements equal to the fill value read as `NA` (not for bool arrays, and
#' for strings only with this package's default fill value, U+2400), and
#' `NA` is written as the fill value. A chunk whose elements all equal the
#' fill value is not stored (an existing one is removed); a missing chunk
#' reads as fill value.
#'
#' @docType class
#' @export
#' @examples
#' z <- as_zarr(matrix(1:20, 4, 5))
#' arr <- z[["/"]]
#' arr$read(list(c(2, 3), NULL))
#' arr$write(matrix(0L, 2, 2), list(c(1, 2), c(1, 2)))
#' arr[1:3, 1:2]
zarr_array <- R6::R6Class("zarr_array",
  inherit = zarr_node,
  cloneable = FALSE,
  public = list(
    #' @description Open an array; it must exist in the store.
    #' @param name The name of the array.
    #' @param metadata The metadata document, a list.
    #' @param parent The parent group, or NULL for a root array.
    #' @param store The store.
    initialize = function(name, metadata, parent = NULL, store = NULL) {
      super$initialize(name, metadata, parent, store)
    },
    #' @description Print a summary of the array.
    #' @param ... Ignored.
    print = function(...) array_print(self),
    #' @description Print this array as a line of a hierarchy.
    #' @param idx,total Used for indentation while recursing.
    hierarchy = function(idx = 1L, total = 1L) {
      cat(hierarchy_lines(self), sep = "\n")
      invisible(self)
    },
    #' @description Read some or all of the array.
    #' @param selection NULL for the whole array, or a list with one entry
    #'   per dimension: NULL for the whole dimension, or a range of 1-based
    #'   indices `c(first, last)` (the block from the smallest to the
    #'   largest number given, as the manual has it: `c(1, 3)` is rows 1 to
    #'   3). For other index sets use `[`, which follows R's rules.
    #' @return A vector (one dimension), matrix or array. A struct array
    #'   reads as a data.frame (one dimension) or a named list of arrays,
    #'   one per field (see [struct_type()]).
    read = function(selection = NULL) array_read(self, private$read_info(), selection),
    #' @description Write data into the array.
    #' @param data A vector, matrix or array of the selection's shape; extents
    #'   of 1 are recycled along the selection (a single value fills it).
    #'   For a struct array, a data.frame or a named list of fields.
    #' @param selection A list of ranges as in `read()`. Missing or NULL:
    #'   data with as many dimensions as the array is written to the block at
    #'   the origin it covers; a vector as long as the array fills it.
    #' @return Self, invisibly.
    write = function(data, selection = NULL) {
      array_write(self, private$read_info(), data, selection)
      invisible(self)
    },
    #' @description Change the shape of the array: grow or shrink any
    #'   dimension at its high end, and at its low end by whole chunks (of
    #'   the chunk grid; shards for a sharded array). Chunks that fall
    #'   outside the new shape are erased; the part of an old edge chunk
    #'   that comes into view reads as `NA` (its stored values are cleared
    #'   first), so data that was cut off never comes back. Moving the low
    #'   end renames the chunks, which shifts every index: element `i`
    #'   becomes `i + k * chunk` for `k` chunks added.
    #'
    #'   `resize(new_shape)` gives the new shape (growth and shrinking at
    #'   the high end; an extent may become 0); `resize(low = , high = )`
    #'   are R-CF's API: the number of elements to add (negative: remove) at
    #'   each end, one per dimension, `low` rounded outward to whole chunks.
    #'   As in R-CF's zarr, these may leave no dimension empty (an error of
    #'   class `zarr_error_argument`). Two unnamed arguments are read as
    #'   R-CF's `(low, high)`; a single one is `new_shape` (in R-CF it would
    #'   be `low`).
    #'
    #'   A sharded array is shrunk by whole shards only, as in R-CF's zarr:
    #'   shrinking a dimension to an extent that is not a whole number of
    #'   shards is an error of class `zarr_error_unsupported`. It grows by
    #'   any amount.
    #'
    #'   A rectilinear chunk grid ([chunk_grid_rectilinear]) grows as
    #'   zarr-python 3.4 grows it: a dimension that grows past its declared
    #'   chunks gains one chunk of the missing length, and shrinking keeps
    #'   every declared chunk (so regrowth finds the chunks where they
    #'   were). Its low end cannot move (`low` is an error of class
    #'   `zarr_error_unsupported`), and [append()][zarr_array] grows it the
    #'   same way.
    #'
    #'   Growing and shrinking at the high end store the new metadata only
    #'   after the new region is cleared, so a crash leaves the old shape
    #'   readable; a move of the low end is not safe from a crash midway.
    #'   Chunk keys are those of the array's `chunk_key_encoding`: "c.1.0"
    #'   for an array made here (see the option `chunk_separator` of
    #'   [zarr_options()]).
    #' @param new_shape The new shape, or NULL to use `low` and `high`.
    #' @param low,high Elements to add (remove if negative) at the low and
    #'   high end of each dimension; NULL for none.
    #' @return Self, invisibly.
    resize = function(new_shape = NULL, low = NULL, high = NULL) {
      args <- resize_arguments(sys.call(), new_shape, low, high)
      array_resize(self, args$new_shape, args$low, args$high)
    },
    #' @description Grow the array along one dimension and write `x` in the
    #'   new part (an extension of R-CF's API after the append of the carray
    #'   persistence proposal). The chunks are written in parallel through a
    #'   view of the array with the new shape, and the metadata is stored
    #'   once, last: a crash in between leaves the old shape readable, with
    #'   its data unchanged.
    #' @param x A vector, matrix or array with the array's extents in every
    #'   dimension but `along`; with one dimension fewer, it is one slice.
    #' @param along The dimension to grow (default the last).
    #' @return Self, invisibly.
    append = function(x, along = length(self$shape)) array_append(self, x, along),
    #' @description Insert a dimension (R-CF's `promote()`): a 0-d array
    #'   becomes 1-d, a `(lat, lon)` array `(time, lat, lon)`. The chunks are
    #'   renamed, not rewritten; the new dimension has chunks of 1, and the
    #'   existing data is its first index. With `length` > 1 the array then
    #'   grows along it as `resize()` does (the rest reads `NA`; in R-CF the
    #'   chunk length would equal `length`). The new dimension takes the
    #'   default name (`"<name>_dim_<k>"`, shown as none), where R-CF's zarr
    #'   drops `dimension_names`. A sharded array is refused, as in R-CF's
    #'   zarr (`zarr_error_unsupported`).
    #' @param dimension 1-based position of the new dimension: 1 puts it
    #'   first, the number of dimensions + 1 last.
    #' @param length The extent of the new dimension (default 1).
    #' @return Self, invisibly.
    promote = function(dimension, length = 1L) array_promote(self, dimension, length),
    #' @description Split the array into regions for parallel writers.
    #'   Each region covers whole chunks (whole shards of a sharded array,
    #'   the unit a store writes), so processes that write one region each
    #'   never write the same chunk and lose nothing, on any store. The
    #'   split is along the dimension with the most chunks (the last of
    #'   equals), in runs of neighbouring chunks as equal as possible.
    #'   [zarr_map_blocks()] runs a function over such regions in parallel;
    #'   [zarr_many_writers] has the rule for many writers.
    #' @param n The number of regions wanted: a positive whole number.
    #'   Fewer are returned when that dimension has fewer than `n` chunks.
    #' @return A list of selections, each a list with one vector of
    #'   1-based indices per dimension, as `read()` and `write()` take.
    chunk_regions = function(n) array_chunk_regions(self, n),
    #' @description The engine's handle of the array and what every read
    #'   needs (shape, dimension names, CF decoding), made once per array
    #'   object; the `[` and `[<-` methods read and write through it.
    #' @param decode Whether reads are CF-decoded (see [cf_decoding]).
    #' @return A list with `handle`, `shape`, `dim_names` and `cf`.
    engine_info = function(decode = cf_decode()) private$read_info(decode)
  ),
  active = list(
    #' @field data_type (read-only) The [zarr_data_type] of the array.
    data_type = function(value) {
      meta <- self$metadata
      dt <- core_data_type(meta$data_type, meta$fill_value)
      zarr_data_type$new(dt$data_type, dt$fill_value)
    },
    #' @field shape (read-only) The shape of the array, an integer vector
    #'   (double where an extent exceeds R's integers).
    shape = function(value) {
      # The shape kept with the document while the engine says none changed
      # (see node_metadata()): about the cost of a plain field.
      seen <- private$.seen
      if (!is.null(seen$shape) && identical(seen$generation, rz_node_generation(private$.store_handle))) {
        return(seen$shape)
      }
      node_derived(self, private, "shape", array_shape)
    },
    #' @field chunking (read-only) The [chunk_grid_regular] of the array
    #'   ([chunk_grid_sharded] for a sharded array).
    chunking = function(value) {
      meta <- self$metadata
      chunk_grid_of(as_extents(unlist(meta$shape)), meta)$attach(self)
    },
    #' @field chunk_separator (read-only) The separator in chunk keys.
    chunk_separator = function(value) {
      cke <- self$metadata$chunk_key_encoding
      if (!is.null(cke$configuration$separator)) return(cke$configuration$separator)
      if (identical(cke$name, "v2")) "." else "/"
    },
    #' @field codecs (read-only) The codec chain, a list of [zarr_codec]
    #'   objects.
    codecs = function(value) {
      instantiate_codecs(self$metadata$codecs, self$data_type, self$chunking$chunk_shape)
    },
    #' @field dimension_names (read-only) The stored names of the
    #'   dimensions (v3 `dimension_names`, v2 `_ARRAY_DIMENSIONS`), a
    #'   character vector with `NA` for a dimension without a name (`null`),
    #'   or NULL when the array has none. `dimnames()` shows them as R does
    #'   (`""` for no name, the defaults of [as_zarr()] left out) and
    #'   `dimnames<-` sets them.
    dimension_names = function(value) {
      if (!missing(value)) {
        zarr_abort("argument", sprintf("%s: `dimension_names` is read-only: set them with dimnames<-",
                                       array_what(self)))
      }
      array_dimension_names(self)
    }
  ),
  private = list(
    .handle = list(),
    .read_info = list(),
    # The engine's handle: CF-decoding (see cf_decoding) or raw.
    engine = function(decode = cf_decode()) {
      key <- if (decode) "cf" else "raw"
      if (is.null(private$.handle[[key]])) {
        private$.handle[[key]] <- open_array_engine(private$.store, self$path, decode)
      }
      private$.handle[[key]]
    },
    # What every `[` needs, derived from the metadata once rather than on
    # each call: rebuilding it took about a sixth of a one-element read.
    read_info = function(decode = cf_decode()) {
      key <- if (decode) "cf" else "raw"
      if (is.null(private$.read_info[[key]])) {
        handle <- private$engine(decode)
        private$.read_info[[key]] <- list(handle = handle, shape = self$shape,
                                          dim_names = names(dimnames(self)), cf = cf_info(handle),
                                          integer64 = zarr_call(rz_array_integer64(handle)),
                                          labels = dimnames_labels(self),
                                          struct = is_struct_type(self$metadata$data_type),
                                          decode = decode)
      }
      private$.read_info[[key]]
    },
    metadata_changed = function() {
      private$.handle <- list()
      private$.read_info <- list()
      invisible(NULL)
    }
  )
)

array_shape <- function(meta) as_extents(unlist(meta$shape))

# Extents as an integer vector, as the manual has shapes; double only where
# one exceeds R's integers.
as_extents <- function(x) {
  x <- as.numeric(x)
  if (all(x <= .Machine$integer.max)) as.integer(x) else x
}

# The engine's handle of the array at `path`: from the metadata document
# the store object read or wrote last, so that the store is not read
# again; from the store when it has none.
open_array_engine <- function(store, path, decode) {
  zarr_call(rz_node_array(store_handle(store), node_key_path(path), decode))
}

# A selection of index vectors (as `[` and `[<-` resolve them) for the
# engine: per dimension either c(start0, count) with attribute zarr_range,
# or a vector of 0-based indices. `what` names the array.
engine_selection <- function(selection, shape, what) {
  per_dim_selection(selection, shape, what, function(s, d) engine_dim(s))
}

# The manual's selection for `$read()` and `$write()`: per dimension NULL
# (the whole dimension) or a range of indices, c(first, last); the range
# runs from the smallest to the largest number given, so 2:4 and c(2, 4)
# select the same elements, as in R-CF's zarr.
range_selection <- function(selection, shape, what) {
  per_dim_selection(selection, shape, what, function(s, d) {
    if (!length(s)) {
      zarr_abort("selection", sprintf("%s: the range for dimension %d is empty", what, d))
    }
    lo <- min(s)
    structure(c(lo - 1, max(s) - lo + 1), zarr_range = TRUE)
  })
}

# The engine's selection from an R one: NULL stays NULL (everything); a
# dimension left NULL is whole; any other is checked against the shape and
# handed to `one(indices, dimension)`.
per_dim_selection <- function(selection, shape, what, one) {
  if (is.null(selection)) return(NULL)
  selection <- selection_list(selection, shape, what)
  lapply(seq_along(shape), function(d) {
    s <- selection[[d]]
    if (is.null(s)) return(engine_whole(shape[d]))
    one(checked_indices(s, shape[d], d, what), d)
  })
}

# A selection as a list with one entry per dimension (a bare vector is
# accepted for a 1-d array).
selection_list <- function(selection, shape, what) {
  if (!is.list(selection)) {
    if (length(shape) == 1L) selection <- list(selection)
    else zarr_abort("selection", sprintf("%s: the selection must be a list with one entry per dimension", what))
  }
  if (length(selection) != length(shape)) {
    zarr_abort("selection", sprintf("%s: the selection has %d entries but the array has %d dimensions",
                                    what, length(selection), length(shape)))
  }
  selection
}

# 1-based whole-number indices of dimension `d` (of extent `n`), checked.
checked_indices <- function(s, n, d, what) {
  if (!is.numeric(s) || anyNA(s)) {
    zarr_abort("selection", sprintf("%s: the selection for dimension %d must be numeric indices without NA", what, d))
  }
  s <- trunc(as.numeric(s))
  bad <- s < 1 | s > n
  if (any(bad)) {
    zarr_abort("selection", sprintf("%s: index %s is out of bounds for dimension %d of extent %s",
                                    what, format(s[bad][1L]), d, format(n)))
  }
  s
}

# Checked 1-based whole-number indices of one dimension -> the engine's
# form: c(start0, count) with attribute zarr_range when they run
# consecutively, else the 0-based indices.
engine_dim <- function(s) {
  n <- length(s)
  # Whole numbers rising strictly from s[1] to s[1] + n - 1 are consecutive;
  # is.unsorted() tells without the vector diff() would allocate.
  if (n > 0L && s[n] - s[1L] == n - 1 && (n == 1L || !is.unsorted(s, strictly = TRUE))) {
    r <- c(s[1L] - 1, n)
    attr(r, "zarr_range") <- TRUE
    r
  } else {
    s - 1
  }
}

# The whole of a dimension of extent `n`, in the engine's form.
engine_whole <- function(n) structure(c(0, n), zarr_range = TRUE)

selection_shape <- function(sel, shape) {
  if (is.null(sel)) return(shape)
  vapply(sel, function(s) if (isTRUE(attr(s, "zarr_range"))) s[2L] else length(s), numeric(1))
}

array_what <- function(arr) sprintf("array '%s'", arr$path)

# Read a selection given as in `zarr_array$read()`: ranges per dimension.
array_read <- function(arr, info, selection) {
  engine_read(info, range_selection(selection, arr$shape, array_what(arr)), FALSE, NULL)
}

# Read an engine selection (see engine_selection()) through `handle`. With
# `as_array`, the result is an array for any number of dimensions, with
# `dim_names`; the engine sets these attributes, since setting them in R
# would copy the result.
# `info` is the array's read_info: its handle and CF decoding. bit64 is
# asked for (and loaded, a sizeable part of a first read) only where the
# result can be integer64.
engine_read <- function(info, sel, as_array, dim_names) {
  bit64 <- !isFALSE(info$integer64) && use_bit64()
  # `decode`: a struct array's datetime64/timedelta64 fields as times
  # (plain arrays get their CF classes here, below).
  out <- zarr_call(with_progress("Reading chunks", rz_array_read(
    info$handle, sel, bit64, zarr_num_threads(), zarr_strict_checksums(), as_array, dim_names,
    isTRUE(info$decode)
  )))
  if (isTRUE(info$struct)) return(struct_result(out, length(info$shape) == 1L))
  cf_classes(out, info$cf)
}

# The array's handle, shape and dimension names (see read_info).
array_read_info <- function(arr) arr$engine_info()

# Write as `zarr_array$write()` does: `selection` holds ranges. Without a
# selection, data with the array's rank (a vector for a 1-d array) goes to
# the block at the origin that it covers, as the manual has it; a plain
# vector of the array's length fills the whole array.
array_write <- function(arr, info, data, selection) {
  if (isTRUE(info$struct)) {
    sel <- vector("list", length(arr$shape))
    if (!is.null(selection)) sel <- lapply(selection, function(r) seq(min(r), max(r)))
    return(struct_assign(arr, sel, data))
  }
  what <- array_what(arr)
  shape <- arr$shape
  if (is.null(selection) && length(shape)) {
    d <- dim(data) %||% length(data)
    whole <- is.null(dim(data)) && length(data) == prod(shape)
    if (!whole && length(d) == length(shape) && all(d <= shape)) {
      selection <- lapply(d, function(n) c(1, n))
    }
  }
  sel <- range_selection(selection, shape, what)
  data <- broadcast_to(data, selection_shape(sel, shape), what)
  engine_write(arr, info$handle, cf_encode(data, info$cf), sel)
}

# `data` recycled to `target` as R-CF's zarr broadcasts: dimensions of
# extent 1 (or missing at the front) stretch to the selection's extent.
# Data with as many values as the target is taken as it is.
broadcast_to <- function(data, target, what) {
  if (length(data) == prod(target) || !length(target)) return(data)
  d <- dim(data) %||% length(data)
  if (length(d) <= length(target)) {
    d <- c(rep(1, length(target) - length(d)), d)
    if (all(d == target | d == 1) && length(data) > 0L) {
      idx <- lapply(seq_along(target), function(k) if (d[k] == 1) rep(1L, target[k]) else seq_len(target[k]))
      return(do.call(`[`, c(list(array(data, d)), idx, list(drop = FALSE))))
    }
  }
  data
}

# Write `data` to an engine selection (see engine_selection()).
engine_write <- function(arr, handle, data, sel) {
  what <- array_what(arr)
  target <- selection_shape(sel, arr$shape)
  if (arr$data_type$data_type == "string" && is.logical(data) && all(is.na(data))) {
    data <- as.character(data)
  }
  holds_text <- arr$data_type$data_type == "string" || identical(arr$data_type$Rtype, "character")
  if (is.character(data) != holds_text) {
    zarr_abort("type", sprintf("%s: cannot write %s values to an array of type '%s', which holds %s", what,
                               if (is.character(data)) "character" else typeof(data), arr$data_type$data_type,
                               if (holds_text) "strings" else "numbers"))
  }
  if (is.character(data)) {
    data <- enc2utf8(data)
  } else if (!is.numeric(data) && !is.logical(data) && !is.complex(data)) {
    zarr_abort("type", sprintf("%s: cannot write data of type '%s' to an array of type '%s'",
                               what, typeof(data), arr$data_type$data_type))
  }
  n <- prod(target)
  if (length(data) != n) {
    zarr_abort("type", sprintf("%s: %d values given for a selection of %s elements (shape %s)",
                               what, length(data), format(n), paste(target, collapse = " x ")))
  }
  d <- dim(data)
  if (!is.null(d) && length(d) == length(target) && any(d != target)) {
    zarr_abort("type", sprintf("%s: data of shape %s does not match the selection's shape %s",
                               what, paste(d, collapse = " x "), paste(target, collapse = " x ")))
  }
  zarr_call(with_progress(paste("Writing", what),
                          rz_array_write(handle, sel, data, zarr_num_threads(), zarr_strict_checksums())))
  invisible(NULL)
}

format_bytes <- function(n) {
  units <- c("B", "KB", "MB", "GB", "TB")
  i <- if (n > 0) min(length(units), floor(log(n, 1024)) + 1) else 1
  sprintf("%.4g %s", n / 1024^(i - 1), units[i])
}

# The bytes the array's chunks take in the store, or why that is not
# known: HTTP stores cannot list the chunks.
format_stored <- function(arr, shape, dt) {
  keys <- tryCatch(arr$store$list_prefix(arr$prefix), zarr_error_unsupported = function(e) NULL)
  if (is.null(keys)) return("not known (the store cannot list its chunks)")
  keys <- keys[!basename(keys) %in% c("zarr.json", ".zarray", ".zattrs", ".zgroup")]
  stored <- sum(vapply(keys, function(k) arr$store$getsize(k), numeric(1)))
  raw <- prod(shape) * dt$size
  paste0(format_bytes(stored), " in ", length(keys), " chunk", if (length(keys) != 1L) "s",
         if (stored > 0 && !is.na(raw)) sprintf(" (%.1f x compression)", raw / stored))
}

array_print <- function(arr) {
  meta <- arr$metadata
  dt <- arr$data_type
  shape <- arr$shape
  if (identical(meta$chunk_grid$name, "rectilinear")) {
    grid <- arr$chunking
    chunks <- paste0("rectilinear, up to ", paste(grid$chunk_shape, collapse = " x "))
    n_chunks <- prod(grid$chunk_grid)
  } else {
    chunks <- unlist(meta$chunk_grid$configuration$chunk_shape)
    n_chunks <- prod(ceiling(shape / chunks))
  }
  cat("<Zarr array> ", arr$path, "\n", sep = "")
  dn <- names(dimnames(arr))
  cat("shape      : ", if (length(shape)) paste(shape, collapse = " x ") else "(scalar)",
      if (!is.null(dn)) paste0(" [", paste(dn, collapse = ", "), "]"), "\n", sep = "")
  cat("data type  : ", dt$data_type, " (R ", dt$Rtype, "), fill value ", format_fill(dt$fill_value), "\n", sep = "")
  cat("chunks     : ", if (length(chunks)) paste(chunks, collapse = " x ") else "(scalar)", " (",
      format(n_chunks), " chunk", if (n_chunks != 1) "s", ")\n", sep = "")
  cat("codecs     : ", paste(codec_names(meta$codecs), collapse = ", "), "\n", sep = "")
  cf_print(array_read_info(arr)$cf)
  cat("stored     : ", format_stored(arr, shape, dt), "
", sep = "")
  arr$print_attributes()
  invisible(arr)
}

array_chunk_regions <- function(self, n) {
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1 || n != round(n)) {
    zarr_abort("argument", "`n` must be one positive whole number")
  }
  shape <- self$shape
  if (!length(shape)) return(list(list()))
  grid <- self$metadata$chunk_grid
  # Where chunk j (0-based) of dimension d starts: j * chunk length in a
  # regular grid (whose chunks may be too many to list), else from the
  # grid's own lengths.
  if (identical(grid$name, "rectilinear")) {
    edges <- grid_edges(grid, shape)
    counts <- lengths(edges)
    bound <- function(d, j) c(0, cumsum(edges[[d]]))[j + 1]
  } else {
    chunks <- self$chunking$chunk_shape
    counts <- ceiling(shape / chunks)
    bound <- function(d, j) j * chunks[d]
  }
  d <- max(which(counts == max(counts)))
  k <- min(n, counts[d])
  if (k < 1) return(list(lapply(shape, seq_len)))
  # Chunk indices 0..counts[d]-1 in k runs whose lengths differ by at most one.
  ends <- floor(seq_len(k) * counts[d] / k)
  starts <- c(0, ends[-k])
  lapply(seq_len(k), function(i) {
    sel <- lapply(shape, function(len) seq_len(len))
    first <- bound(d, starts[i]) + 1
    last <- min(bound(d, ends[i]), shape[d])
    sel[[d]] <- seq.int(as.integer(first), as.integer(last))
    sel
  })
}

# Benchmark support (bench/codecs.R): the CPU seconds of each of `reps`
# decodes of the stored chunk at grid position `chunk` (0-based, one number
# per dimension), timed in the engine around the decode an array read does
# after fetching the chunk, so that it compares with numcodecs' decode of
# the same bytes. Not exported.
chunk_decode_seconds <- function(arr, chunk, reps) {
  handle <- arr$engine_info(FALSE)$handle
  zarr_call(rz_array_decode_seconds(handle, as.numeric(chunk), as.integer(reps)))
}
