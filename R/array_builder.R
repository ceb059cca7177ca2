# Building array metadata. The builder keeps the parts of a zarr.json
# document, applies the package defaults (R order via transpose, chunks of
# at most 100, bytes + blosc), and the engine validates the result.

# The mode of each codec the engine knows, named by codec, from the codecs'
# Rust files (src/rust/src/codec/), read once per session.
codec_modes <- function() {
  modes <- registry_cache$codec_modes
  if (is.null(modes)) {
    reg <- zarr_call(rz_codec_registry())
    modes <- stats::setNames(reg$mode, reg$name)
    registry_cache$codec_modes <- modes
    registry_cache$on_bytes <- stats::setNames(reg$on_bytes, reg$name)
    registry_cache$v2_ids <- stats::setNames(reg$name, reg$v2_id)[!is.na(reg$v2_id)]
  }
  modes
}

# Whether the engine runs codec `name` on a chunk's bytes alone (bytes ->
# bytes codecs, and numcodecs' filters, which zarr-python 3 places before
# `bytes` as array -> array codecs): R's codec objects encode and decode
# raw vectors with it.
codec_on_bytes <- function(name) {
  codec_modes()
  isTRUE(registry_cache$on_bytes[name])
}

# The registry's name for `name`: zarr-python 3 calls numcodecs' codecs
# `numcodecs.<id>`, which for gzip, zstd, blosc and crc32c are zarr's own.
codec_registry_name <- function(name) {
  if (!is.na(codec_modes()[name]) || !startsWith(name, "numcodecs.")) return(name)
  known <- registry_cache$v2_ids[substring(name, 11L)]
  if (is.na(known)) name else unname(known)
}

mode_rank <- c("array -> array" = 1L, "array -> bytes" = 2L, "bytes -> bytes" = 3L)

default_chunk_shape <- function(shape) {
  pmax(1, pmin(shape, zarr_options("chunk_length")))
}

r_order <- function(ndim) as.list(rev(seq_len(ndim) - 1L))

# The configuration a codec gets when none (or only part) is given.
default_codec_configuration <- function(codec, configuration, data_type, ndim) {
  # The engine builds the codecs it runs on bytes, so it checks them whole.
  if (codec_on_bytes(codec)) {
    return(codec_configure(codec, configuration, data_type, ndim))
  }
  cfg <- if (is.null(configuration)) list() else as.list(configuration)
  txt <- zarr_call(rz_codec_defaults(codec, data_type, as.integer(ndim)))
  if (is.null(txt)) {
    zarr_abort("unsupported", sprintf("unknown codec '%s'; known codecs are %s", codec,
                                      paste(names(codec_modes()), collapse = ", ")))
  }
  defaults <- parse_json(txt)
  for (n in names(cfg)) defaults[[n]] <- cfg[[n]]
  if (codec == "transpose") defaults$order <- as.list(as.integer(unlist(defaults$order)))
  defaults
}

codec_entry <- function(name, configuration) {
  # zarr-python's numcodecs.* codecs refuse an entry without "configuration".
  if (length(configuration)) return(list(name = name, configuration = configuration))
  if (startsWith(name, "numcodecs.")) return(list(name = name, configuration = structure(list(), names = character())))
  list(name = name)
}

# R-CF's default chain, which R code written for it edits (for example
# `remove_codec("blosc")`): transpose to R's order, bytes (or vlen-utf8),
# then blosc with zstd at level 1 and the shuffle that suits the type.
# Strings keep zstd: blosc's shuffle has no items to work on in variable-
# length bytes, and a Zarr v2 array of strings records no item size for it.
default_codecs <- function(data_type, ndim, portable = FALSE) {
  out <- list()
  if (!portable && ndim > 1L) out <- c(out, list(codec_entry("transpose", list(order = r_order(ndim)))))
  if (is_struct_type(data_type)) {
    # (records have no item size that blosc's shuffle could use)
    zstd <- default_codec_configuration("zstd", NULL, "uint8", ndim)
    return(c(out, list(codec_entry("bytes", list(endian = "little")), codec_entry("zstd", zstd))))
  }
  if (data_type == "string") {
    zstd <- default_codec_configuration("zstd", NULL, data_type, ndim)
    return(c(out, list(codec_entry("vlen-utf8", list()), codec_entry("zstd", zstd))))
  }
  c(out, list(
    codec_entry("bytes", default_codec_configuration("bytes", NULL, data_type, ndim)),
    codec_entry("blosc", default_codec_configuration("blosc", NULL, data_type, ndim))
  ))
}

# A sharding codec whose inner chunks use the codecs the array had (or
# those given): the array's chunk shape becomes the shard shape.
sharding_entry <- function(configuration, codecs) {
  inner <- configuration$chunk_shape
  if (is.null(inner)) {
    zarr_abort("argument", "codec 'sharding_indexed' needs `chunk_shape`, the shape of the inner chunks")
  }
  check_shape(inner, "chunk_shape", allow_zero = FALSE)
  index <- list(codec_entry("bytes", list(endian = "little")), codec_entry("crc32c", NULL))
  codec_entry("sharding_indexed", list(
    chunk_shape = as.list(as.numeric(inner)),
    codecs = configuration$codecs %||% codecs,
    index_codecs = configuration$index_codecs %||% index,
    index_location = configuration$index_location %||% "end"
  ))
}

codec_names <- function(codecs) vapply(codecs, function(c) c$name, character(1))

# A `cast_value` codec changes the type the `bytes` codec stores, which
# needs `endian` when that type has more than one byte (zarr-python refuses
# the chain without it).
bytes_endian_after_cast <- function(codecs) {
  names <- codec_names(codecs)
  casts <- which(names == "cast_value")
  at <- which(names == "bytes")
  if (!length(casts) || length(at) != 1L) return(codecs)
  stored <- codecs[[casts[length(casts)]]]$configuration$data_type
  if (!is.null(stored) && !stored %in% c("int8", "uint8") && is.null(codecs[[at]]$configuration$endian)) {
    codecs[[at]] <- codec_entry("bytes", list(endian = "little"))
  }
  codecs
}

# NumPy's fixed-width strings take the place of the string codec. They have
# no NA, so the NA marker is no use as their fill value: the default becomes
# "", zarr-python's.
builder_set_fixed_string <- function(private, configuration) {
  if (private$.data_type$data_type != "string") {
    zarr_abort("argument", "codec 'numpy.fixed_string' is for arrays of data type \"string\"")
  }
  dtype <- configuration$dtype
  if (!is.character(dtype) || length(dtype) != 1L || !grepl("^[<>|=][US][0-9]+$", dtype)) {
    zarr_abort("argument", paste("codec 'numpy.fixed_string' needs `dtype`, a NumPy type string such as",
                                 "\"<U5\" (5 characters) or \"|S5\" (5 bytes of UTF-8)"))
  }
  names <- codec_names(private$.codecs)
  at <- which(names %in% c("vlen-utf8", "numpy.fixed_string"))
  if (length(at) != 1L) {
    zarr_abort("argument", "codec 'numpy.fixed_string' replaces the 'vlen-utf8' codec, which the chain does not have")
  }
  private$.codecs[[at]] <- codec_entry("numpy.fixed_string", list(dtype = dtype))
  if (identical(private$.data_type$fill_value, default_fill_value("string"))) private$.data_type$fill_value <- ""
}

# numcodecs' array -> bytes codecs (pcodec and zfpy for numbers, categorize
# for strings) and the registry's `zfp` take the place of the chain's
# `bytes` or `vlen-utf8`.
builder_replace_serializer <- function(private, codec, configuration) {
  at <- which(codec_names(private$.codecs) %in% c("bytes", "vlen-utf8"))
  if (length(at) != 1L) {
    zarr_abort("argument", sprintf(
      "codec '%s' replaces the 'bytes' or 'vlen-utf8' codec, which the chain does not have", codec
    ))
  }
  private$.codecs[[at]] <- codec_entry(codec, configuration)
}

# Insert a codec where its mode allows; NULL (with a warning) if it cannot go there.
insert_codec <- function(codecs, name, configuration, position) {
  mode <- codec_modes()[[name]]
  if (mode == "array -> bytes" && "array -> bytes" %in% codec_modes()[codec_names(codecs)]) {
    zarr_warn(sprintf("codec '%s' not added: the array already has an array -> bytes codec", name))
    return(NULL)
  }
  n <- length(codecs)
  # By default a codec goes last among the codecs of its mode or before.
  after <- which(mode_rank[codec_modes()[codec_names(codecs)]] <= mode_rank[[mode]])
  last <- if (length(after)) max(after) else 0L
  pos <- if (is.null(position)) last + 1L else min(max(1L, as.integer(position)), n + 1L)
  new <- append(codecs, list(codec_entry(name, configuration)), after = pos - 1L)
  ranks <- mode_rank[codec_modes()[codec_names(new)]]
  if (is.unsorted(ranks)) {
    zarr_warn(sprintf("codec '%s' (%s) not added: it cannot stand at position %d of the codec chain", name, mode, pos))
    return(NULL)
  }
  new
}

#' Array builder
#'
#' @description Builds the metadata document of a Zarr array to be created, or inspects
#' that of an existing one. By default the array is stored in R's
#' column-major order: the codec chain starts with a `transpose` codec whose
#' order reverses the dimensions, followed by `bytes` (little endian) and
#' `blosc` (zstd at level 1, shuffled as suits the data type: none for
#' 1-byte types, byte shuffle for 2- and 4-byte types and int64, bit shuffle
#' otherwise), the chain of R-CF's zarr; string arrays get `vlen-utf8` and
#' `zstd` (level 1) instead, as blosc's shuffle has nothing to work on in
#' variable-length strings. Set `portable = TRUE` to drop the transpose codec and
#' store row-major chunks, as most other Zarr tools write them; R data is
#' then permuted while it is written and read (by the engine, in parallel).
#' Zarr v2 arrays are stored in C order (row-major) unless the caller sets
#' `portable = FALSE` or adds a `transpose` codec: that is the order every
#' v2 reader supports.
#'
#' Shape and chunk shape are always in R (= Zarr) dimension order: `arr[i, j]`
#' in R is element `(i-1, j-1)` of the Zarr array in any Zarr tool.
#'
#' @docType class
#' @export
#' @examples
#' b <- array_builder$new()
#' b$data_type <- "float32"
#' b$shape <- c(200, 300)
#' b$chunk_shape <- c(50, 100)
#' b$add_codec("crc32c", NULL)
#' b$is_valid()
#' b
array_builder <- R6::R6Class("array_builder",
  public = list(
    #' @description Create a new array builder.
    #' @param metadata Optional metadata document (list or JSON text) of an
    #'   existing array, to inspect or use as a template.
    initialize = function(metadata = NULL) {
      if (!is.null(metadata)) builder_load(self, private, metadata)
    },
    #' @description Print the array definition.
    #' @param ... Ignored.
    print = function(...) builder_print(self, private),
    #' @description The metadata document.
    #' @param format "list" or "JSON".
    #' @return A list or a JSON string.
    metadata = function(format = "list") builder_metadata(self, private, format),
    #' @description Add a codec at the end of the chain, or at `.position`;
    #'   an array -> array codec (`scale_offset`, `cast_value`) goes after
    #'   the array -> array codecs already there unless `.position` is given.
    #'   A codec whose mode does not fit there is not added (with a warning).
    #'   Adding "sharding_indexed" with `list(chunk_shape = ...)` makes the
    #'   array sharded: the chunk shape becomes the shard shape, and the
    #'   codecs the array had encode the inner chunks (string arrays too).
    #'
    #'   Adding "numpy.fixed_string" with `list(dtype = "<U5")` (or ">U5",
    #'   "|S5") stores a string array as NumPy's fixed-width strings instead
    #'   of `vlen-utf8`, for tools that expect them in Zarr v2: "<U5" holds
    #'   up to 5 characters (UTF-32), "|S5" up to 5 bytes of UTF-8. It
    #'   replaces the `vlen-utf8` codec, and turns the default fill value
    #'   (U+2400) into "", as zarr-python has it. Such arrays can only be
    #'   created in Zarr v2 stores; they have no `NA` (writing `NA`, or a
    #'   string longer than the width, is an error of class
    #'   `zarr_error_type`, and "" reads as "").
    #' @param codec The name of the codec.
    #' @param configuration List of configuration parameters, or NULL for
    #'   the defaults.
    #' @param .position Optional 1-based position in the chain.
    #' @return Self, invisibly.
    add_codec = function(codec, configuration, .position = NULL) {
      if (inherits(codec, "zarr_codec")) {
        if (missing(configuration)) configuration <- codec$configuration
        codec <- codec$name
      }
      check_string(codec, "codec")
      codec <- codec_registry_name(codec)
      if (is.null(private$.data_type)) zarr_abort("argument", "set the data type before adding codecs")
      if (codec == "sharding_indexed") {
        private$.codecs <- list(sharding_entry(configuration, private$.codecs))
        return(invisible(self))
      }
      if (codec == "numpy.fixed_string") {
        builder_set_fixed_string(private, configuration)
        return(invisible(self))
      }
      if (codec == "transpose") private$.order_chosen <- TRUE
      cfg <- default_codec_configuration(codec, configuration, private$.data_type$data_type, length(private$.shape))
      if ((startsWith(codec, "numcodecs.") || codec_on_bytes(codec)) &&
          identical(codec_modes()[[codec]], "array -> bytes")) {
        builder_replace_serializer(private, codec, cfg)
        return(invisible(self))
      }
      new <- insert_codec(private$.codecs, codec, cfg, .position)
      if (!is.null(new)) private$.codecs <- bytes_endian_after_cast(new)
      invisible(self)
    },
    #' @description Remove a codec from the chain; the array -> bytes codec
    #'   cannot be removed.
    #' @param codec The name of the codec to remove.
    #' @return Self, invisibly.
    remove_codec = function(codec) {
      check_string(codec, "codec")
      if (identical(codec_modes()[[codec]], "array -> bytes")) {
        zarr_warn(sprintf("codec '%s' not removed: the chain needs an array -> bytes codec", codec))
      } else {
        private$.codecs <- private$.codecs[codec_names(private$.codecs) != codec]
      }
      invisible(self)
    },
    #' @description Whether the definition makes a valid array.
    #' @return TRUE or FALSE.
    is_valid = function() {
      if (is.null(private$.data_type) || is.null(private$.shape)) return(FALSE)
      ok <- tryCatch({
        metadata_json(self$metadata())
        TRUE
      }, zarr_error = function(e) FALSE)
      ok
    }
  ),
  active = list(
    #' @field format The Zarr format: 3, or 2 for a version 2 array (an
    #'   addition to the manual, which allows only 3).
    format = function(value) {
      if (missing(value)) return(private$.format)
      if (!identical(as.integer(value), 3L) && !identical(as.integer(value), 2L)) {
        zarr_abort("unsupported", "the Zarr format must be 3 or 2")
      }
      private$.format <- as.integer(value)
    },
    #' @field portable Whether chunks are stored row-major (no transpose codec).
    portable = function(value) {
      if (missing(value)) return(!"transpose" %in% codec_names(private$.codecs))
      check_flag(value, "portable")
      private$.order_chosen <- TRUE
      builder_set_portable(private, value)
    },
    #' @field data_type The data type name; setting it resets the fill
    #'   value and the codecs to their defaults.
    data_type = function(value) {
      if (missing(value)) return(private$.data_type$data_type)
      private$.data_type <- zarr_data_type$new(value)
      private$.codecs <- default_codecs(value, length(private$.shape), self$portable && length(private$.codecs) > 0L)
    },
    #' @field fill_value The fill value (see [zarr_data_type]).
    fill_value = function(value) {
      if (is.null(private$.data_type)) zarr_abort("argument", "set the data type before the fill value")
      if (missing(value)) return(private$.data_type$fill_value)
      private$.data_type$fill_value <- value
    },
    #' @field shape The array shape; setting it resets the chunk shape.
    shape = function(value) {
      if (missing(value)) return(if (!is.null(private$.shape)) as_extents(private$.shape))
      check_shape(value, "shape", allow_zero = TRUE)
      portable <- self$portable
      private$.shape <- as.numeric(value)
      private$.chunk_shape <- default_chunk_shape(private$.shape)
      private$.chunk_edges <- NULL
      if (!is.null(private$.data_type)) {
        builder_set_portable(private, portable && length(private$.codecs) > 0L)
      }
    },
    #' @field chunk_shape The chunk shape; reading it gives a
    #'   [chunk_grid_regular]. A list with one vector of chunk lengths per
    #'   dimension (each summing to at least the dimension's extent) makes
    #'   a rectilinear grid instead ([chunk_grid_rectilinear]).
    chunk_shape = function(value) {
      if (missing(value)) return(builder_chunk_grid(private))
      if (is.null(private$.shape)) zarr_abort("argument", "set the shape before the chunk shape")
      if (length(value) != length(private$.shape)) {
        zarr_abort("argument", sprintf("`chunk_shape` has %d dimensions but the shape has %d",
                                       length(value), length(private$.shape)))
      }
      if (is.list(value)) {
        private$.chunk_edges <- check_chunk_edges(value, private$.shape)
        private$.chunk_shape <- vapply(private$.chunk_edges, max, numeric(1))
        return(invisible(NULL))
      }
      check_shape(value, "chunk_shape", allow_zero = FALSE)
      private$.chunk_edges <- NULL
      private$.chunk_shape <- as.numeric(value)
    },
    #' @field dimension_names The names of the dimensions: a character
    #'   vector or list with one name per dimension (`NA` or NULL for none,
    #'   written as `null`), or NULL. Read as a character vector, `NA` for
    #'   none. An array created without them gets "<name>_dim_0",
    #'   "<name>_dim_1", ... (see [cf_decoding]). Zarr v2 stores keep them
    #'   in the `_ARRAY_DIMENSIONS` attribute, as xarray does.
    dimension_names = function(value) {
      if (missing(value)) return(dimension_names_text(private$.dimension_names))
      private$.dimension_names <- builder_dimension_names(value, length(private$.shape))
    },
    #' @field attributes The attributes the array is created with: a named
    #'   list, or NULL for none.
    attributes = function(value) {
      if (missing(value)) return(private$.attributes)
      if (!is.null(value) && (!is.list(value) || (length(value) && !all(nzchar(names(value) %||% ""))))) {
        zarr_abort("argument", "`attributes` must be a named list")
      }
      private$.attributes <- value
    },
    #' @field order_chosen (read-only, internal) Whether the storage order
    #'   was chosen (`portable`, or a transpose codec added): if not, an
    #'   array added to a Zarr v2 store is stored in C order.
    order_chosen = function(value) private$.order_chosen,
    #' @field codec_info (read-only) The codecs of this array definition, in
    #'   order: a data frame with columns `mode` and `codec`, NULL when there
    #'   are none.
    codec_info = function(value) {
      if (!length(private$.codecs)) return(NULL)
      names <- codec_names(private$.codecs)
      data.frame(mode = unname(codec_modes()[names]), codec = names, stringsAsFactors = FALSE)
    },
    #' @field codecs (read-only) The codec chain, a list of [zarr_codec]
    #'   objects.
    codecs = function(value) {
      if (is.null(private$.data_type)) return(list())
      instantiate_codecs(private$.codecs, private$.data_type, private$.chunk_shape)
    }
  ),
  private = list(
    .format = 3L,
    .data_type = NULL,
    .shape = NULL,
    .chunk_shape = NULL,
    # The chunk lengths of each dimension of a rectilinear grid, or NULL.
    .chunk_edges = NULL,
    .codecs = list(),
    .attributes = NULL,
    .dimension_names = NULL,
    .chunk_key_encoding = NULL,
    # Whether the caller chose the storage order (portable, or a transpose
    # codec of their own); if not, a v2 array is stored in C order.
    .order_chosen = FALSE
  )
)

# The codecs of a v2 array whose caller did not choose the storage order:
# without the default transpose codec, that is in C order, which every v2
# reader supports ("order": "F" is refused by some, zarrs among them).
v2_default_order <- function(codecs, order_chosen) {
  if (order_chosen) return(codecs)
  codecs[codec_names(codecs) != "transpose"]
}

# Dimension names as the metadata holds them: a list with a string or
# NULL (no name) for each of the `ndim` dimensions, or NULL.
builder_dimension_names <- function(value, ndim) {
  if (is.null(value)) return(NULL)
  ok <- (is.character(value) || is.list(value)) && length(value) == ndim &&
    all(vapply(value, function(v) is.null(v) || (is.character(v) && length(v) == 1L), logical(1)))
  if (!ok) {
    zarr_abort("argument", sprintf("`dimension_names` must hold one name (or NA) for each of the %d dimensions", ndim))
  }
  lapply(value, function(v) if (is.null(v) || is.na(v)) NULL else v)
}

check_shape <- function(value, arg, allow_zero) {
  lo <- if (allow_zero) 0 else 1
  if (!is.numeric(value) || anyNA(value) || any(value < lo) || any(value != trunc(value))) {
    zarr_abort("argument", sprintf("`%s` must be a vector of whole numbers >= %d", arg, lo))
  }
  invisible(value)
}

builder_set_portable <- function(private, portable) {
  codecs <- private$.codecs[codec_names(private$.codecs) != "transpose"]
  ndim <- length(private$.shape)
  if (!portable && ndim > 1L) codecs <- c(list(codec_entry("transpose", list(order = r_order(ndim)))), codecs)
  if (!length(codecs) && !is.null(private$.data_type)) {
    codecs <- default_codecs(private$.data_type$data_type, ndim, portable)
  }
  private$.codecs <- codecs
}

builder_metadata <- function(self, private, format = "list") {
  if (is.null(private$.data_type) || is.null(private$.shape)) {
    zarr_abort("argument", "the array definition needs a data type and a shape")
  }
  if (private$.format == 2L && !is.null(private$.chunk_edges)) {
    zarr_abort("unsupported", "Zarr v2 has no rectilinear chunk grid: give `chunk_shape` as one vector")
  }
  dt <- private$.data_type$metadata_fragment()
  attrs <- private$.attributes
  if (is.null(attrs)) attrs <- structure(list(), names = character(0))
  default_keys <- if (private$.format == 2L) {
    list(name = "v2", configuration = list(separator = "."))
  } else {
    list(name = "default", configuration = list(separator = zarr_options("chunk_separator")))
  }
  meta <- list(
    zarr_format = private$.format,
    node_type = "array",
    shape = as.list(private$.shape),
    data_type = dt$data_type,
    chunk_grid = if (is.null(private$.chunk_edges)) {
      list(name = "regular", configuration = list(chunk_shape = as.list(private$.chunk_shape)))
    } else {
      rectilinear_grid_member(private$.chunk_edges)
    },
    chunk_key_encoding = private$.chunk_key_encoding %||% default_keys,
    fill_value = dt$fill_value,
    codecs = if (private$.format == 2L) v2_default_order(private$.codecs, private$.order_chosen) else private$.codecs,
    attributes = attrs
  )
  if (!is.null(private$.dimension_names)) meta$dimension_names <- private$.dimension_names
  switch(format,
    list = meta,
    JSON = as.character(to_json(meta)),
    zarr_abort("argument", "`format` must be \"list\" or \"JSON\"")
  )
}

# The chunk grid a definition's `chunk_shape` reads as.
builder_chunk_grid <- function(private) {
  if (is.null(private$.chunk_edges)) return(chunk_grid_regular$new(private$.shape, private$.chunk_shape))
  chunk_grid_rectilinear$new(private$.shape, private$.chunk_edges)
}

# The chunk lengths of a rectilinear `chunk_shape`: for each dimension
# positive whole numbers that sum to at least its extent.
check_chunk_edges <- function(value, shape) {
  Map(function(e, n, d) {
    ok <- is.numeric(e) && length(e) >= 1L && !anyNA(e) && all(e >= 1) && all(e == round(e))
    if (!ok) {
      zarr_abort("argument", sprintf("`chunk_shape[[%d]]` must be chunk lengths: positive whole numbers", d))
    }
    if (sum(e) < n) {
      zarr_abort("argument", sprintf("`chunk_shape[[%d]]` sums to %s, less than the extent %s of dimension %d",
                                     d, format(sum(e)), format(n), d))
    }
    as.numeric(e)
  }, value, shape, seq_along(value))
}

builder_load <- function(self, private, metadata) {
  if (is.character(metadata)) metadata <- parse_json(metadata)
  if (!is.list(metadata) || !identical(metadata$node_type, "array")) {
    zarr_abort("metadata", "the metadata document is not that of a Zarr array")
  }
  private$.format <- as.integer(metadata$zarr_format %||% 3L)
  fill <- metadata$fill_value %||% default_fill_value(metadata$data_type)
  private$.data_type <- zarr_data_type$new(metadata$data_type, fill)
  private$.shape <- as.numeric(unlist(metadata$shape))
  private$.chunk_edges <- NULL
  if (identical(metadata$chunk_grid$name, "rectilinear")) {
    private$.chunk_edges <- grid_edges(metadata$chunk_grid, private$.shape)
    private$.chunk_shape <- vapply(private$.chunk_edges, max, numeric(1))
  } else {
    private$.chunk_shape <- as.numeric(unlist(metadata$chunk_grid$configuration$chunk_shape))
  }
  private$.codecs <- metadata$codecs
  private$.attributes <- metadata$attributes
  private$.dimension_names <- metadata$dimension_names
  private$.chunk_key_encoding <- metadata$chunk_key_encoding
}

builder_print <- function(self, private) {
  cat("<Zarr array definition>\n")
  if (is.null(private$.data_type)) {
    cat("data type  : (not set)\n")
  } else {
    cat("data type  : ", private$.data_type$data_type, "\n", sep = "")
    cat("fill value : ", format_fill(private$.data_type$fill_value), "\n", sep = "")
  }
  shape <- if (is.null(private$.shape)) "(not set)" else paste(private$.shape, collapse = " x ")
  cat("shape      : ", shape, "\n", sep = "")
  if (!is.null(private$.chunk_edges)) {
    cat("chunks     : rectilinear, ", paste(vapply(private$.chunk_edges, format_edges, ""), collapse = " / "),
        "\n", sep = "")
  } else if (!is.null(private$.chunk_shape)) {
    cat("chunks     : ", paste(private$.chunk_shape, collapse = " x "), "\n", sep = "")
  }
  codecs <- if (length(private$.codecs)) paste(codec_names(private$.codecs), collapse = ", ") else "(none)"
  cat("codecs     : ", codecs, "\n", sep = "")
  cat("valid      : ", self$is_valid(), "\n", sep = "")
  invisible(self)
}

#' Define the properties of a new Zarr array
#'
#' Creates an [array_builder] with a data type and shape and the package
#' defaults for everything else: chunks of at most 100 along each dimension,
#' the type's default fill value, and codecs `transpose` (R order), `bytes`
#' and `blosc` (zstd at level 1; see [array_builder]).
#'
#' @param data_type The data type, e.g. "float64" or "int32".
#' @param shape A vector of whole numbers, the extent of each dimension.
#' @return An [array_builder].
#' @export
#' @examples
#' x <- array(1:120, c(3, 8, 5))
#' def <- define_array("int32", dim(x))
#' def$chunk_shape <- c(4, 4, 4)
#' z <- create_zarr() # in memory
#' arr <- z$add_array("/", "my_array", def)
#' arr$write(x)
#' arr
#'
#' # NumPy fixed-width strings of at most 5 characters, in a Zarr v2 store
#' s <- define_array("string", c(2, 3))
#' s$add_codec("numpy.fixed_string", list(dtype = "<U5"))
#' v2 <- create_zarr(zarr_format = 2)
#' words <- v2$add_array("/", "words", s)
#' words[] <- c("zarr", "", "\u00e9t\u00e9", "R", "numpy", "fixed")
#' words[]
define_array <- function(data_type, shape) {
  b <- array_builder$new()
  b$shape <- shape
  b$data_type <- data_type
  b
}
