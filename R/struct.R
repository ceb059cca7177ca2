# Struct arrays: records of named fields (the v3 `struct` data type,
# zarr-python's older `structured`, and NumPy structured dtypes in Zarr v2).
# The engine reads whole records and hands back one column per field
# (src/rust/src/convert/structs.rs); here they become a data.frame for a
# 1-d array and stay a named list of arrays otherwise.

#' Struct data types
#'
#' @description `struct_type()` describes records of named fields, the
#' Zarr v3 `struct` data type (NumPy's structured arrays), for
#' [define_array()] or [array_builder]. `as_zarr()` makes one from a
#' data.frame.
#'
#' Reading a struct array with `[` (or `$read()`, `as.array()`) gives a
#' data.frame with one column per field for a 1-d array, and otherwise a
#' named list with one R array per field, each with the selection's dims
#' (`drop = TRUE` drops extents of 1, as for other arrays). A field that
#' is a NumPy sub-array (Zarr v2 dtypes such as `["b", "<f8", [2]]`) adds
#' its own dims after the selection's: a matrix column of the data.frame.
#' Fields of nested structs are columns named "outer.inner". Field values
#' read into R as arrays of their data type do ([zarr_data_type]); a value
#' equal to the field's fill value reads as `NA` (except for bool), and
#' text fields (NumPy `S` and `U`, `null_terminated_bytes` and
#' `fixed_length_utf32`) read as character without `NA`.
#' datetime64 and timedelta64 fields (`numpy.datetime64` in v3, `"<M8[ns]"`
#' in v2) read as an array of that data type does (see [cf_decoding]):
#' POSIXct in UTC and difftime in seconds, NaT as `NA`; the field's fill
#' value marks `NA` too unless it is 0 (zarr-python's default, which is
#' 1970-01-01). Units without a fixed length (years, months) stay int64
#' counts, with a warning; `options(zarr.cf_decode = FALSE)` reads and
#' writes the counts of every time field.
#'
#' Writing takes the same forms: a data.frame or a named list of the
#' fields' values (`arr[i] <- df`, `arr$write(df)`); fields left out keep
#' their stored values, `NA` is written as the field's fill value (NaT in
#' a time field whose fill value marks nothing), and text longer than its
#' field is refused. Time fields take POSIXct, POSIXlt, Date or difftime
#' (plain numbers are seconds), stored in the field's unit. Nested fields
#' are given as "outer.inner" columns or as a named list or data.frame
#' `outer` of the inner fields; a sub-array field as the read gives it
#' (its dims after the selection's) or as a list column with one element
#' per record, each holding the field's values. Fields of other types
#' (strings of variable length, nested arrays of structs) are refused by
#' name with an error of class `zarr_error_unsupported`.
#'
#' @param ... The fields, in order: each named, with its data type: a
#'   numeric or bool data type name such as "float64" or "int32",
#'   NumPy's "U<n>" (text of at most n characters) or "S<n>" (at most n
#'   bytes of UTF-8), or `"datetime64[<unit>]"` or `"timedelta64[<unit>]"`
#'   (units as NumPy's: "D", "s", "ms", "us", "ns", ..., with an optional
#'   count before them, "10s"). `as_zarr()` stores POSIXct columns as
#'   `"datetime64[us]"`, Date as `"datetime64[D]"` and difftime as
#'   `"timedelta64[us]"`.
#' @return `struct_type()`: the data type, a list in the form of its JSON
#'   (`name` "struct" and a `configuration` with the `fields`).
#' @export
#' @examples
#' b <- define_array(struct_type(x = "float32", n = "int16", label = "U4"), 3)
#' z <- create_zarr()
#' arr <- z$add_array("/", "points", b)
#' arr[] <- data.frame(x = c(0.5, 1.5, 2.5), n = 1:3, label = c("a", "bb", "ccc"))
#' arr[2:3]
#' arr$data_type$fill_value
#'
#' # times
#' when <- z$add_array("/", "when", define_array(struct_type(t = "datetime64[s]", v = "float64"), 2))
#' when[] <- data.frame(t = as.POSIXct(c("2024-05-01 12:00", NA), tz = "UTC"), v = 1:2)
#' when[]
struct_type <- function(...) {
  fields <- list(...)
  nm <- names(fields)
  if (!length(fields) || is.null(nm) || any(!nzchar(nm)) || anyDuplicated(nm)) {
    zarr_abort("argument", "a struct type needs one or more fields, each with its own name")
  }
  types <- lapply(seq_along(fields), function(k) struct_field_type(fields[[k]], nm[k]))
  list(name = "struct", configuration = list(fields = Map(function(n, t) list(name = n, data_type = t), nm, types,
                                                          USE.NAMES = FALSE)))
}

# A field's data type, in JSON form, from its R spelling.
struct_field_type <- function(type, name) {
  if (!is.character(type) || length(type) != 1L || is.na(type)) {
    zarr_abort("argument", sprintf("struct field '%s': the data type must be a string", name))
  }
  time <- regmatches(type, regexec("^(datetime64|timedelta64)\\[([0-9]*)([A-Za-z]+)\\]$", type))[[1L]]
  if (length(time)) {
    factor <- if (nzchar(time[3L])) as.integer(time[3L]) else 1L
    return(list(name = paste0("numpy.", time[2L]), configuration = list(unit = time[4L], scale_factor = factor)))
  }
  text <- regmatches(type, regexec("^([US])([0-9]+)$", type))[[1L]]
  if (length(text)) {
    n <- as.numeric(text[3L])
    if (n < 1) zarr_abort("argument", sprintf("struct field '%s': a text field holds at least 1", name))
    if (text[2L] == "U") {
      return(list(name = "fixed_length_utf32", configuration = list(length_bytes = 4 * n)))
    }
    return(list(name = "null_terminated_bytes", configuration = list(length_bytes = n)))
  }
  types <- setdiff(zarr_type_table()$data_type, "string")
  if (!type %in% types) {
    zarr_abort("unsupported", sprintf("struct field '%s': data type '%s' cannot be a field; use one of %s, %s",
                                      name, type, paste(types, collapse = ", "), "U<n> or S<n>"))
  }
  type
}

# Whether a data type in JSON form is a struct (v3 `struct`/`structured`,
# or a v2 dtype list).
is_struct_type <- function(data_type) {
  is.list(data_type) && (is.null(names(data_type)) || isTRUE(data_type$name %in% c("struct", "structured")))
}

# The fill value of a new struct type: each field's value that reads as
# NA (see default_fill_value()), "" for text.
struct_default_fill <- function(data_type) {
  fields <- data_type$configuration$fields
  fill <- lapply(fields, function(f) {
    if (is.list(f$data_type)) {
      if (identical(f$data_type$name, "null_terminated_bytes") || identical(f$data_type$name, "fixed_length_utf32")) {
        return("")
      }
      if (f$data_type$name %in% c("numpy.datetime64", "numpy.timedelta64")) return("NaT")
      zarr_abort("unsupported", sprintf("struct field '%s': no default fill value for its type", f$name))
    }
    default_fill_value(f$data_type)
  })
  names(fill) <- vapply(fields, function(f) f$name, "")
  fill
}

# The engine's columns of a struct read as R gives them: a data.frame for
# a 1-d array (`one_d`), else the named list; time fields (attribute
# `zarr_time`) get the classes of a time array's values (cf_classes()).
struct_result <- function(columns, one_d) {
  columns <- lapply(columns, function(col) {
    if (one_d && length(dim(col)) == 1L) dim(col) <- NULL
    kind <- attr(col, "zarr_time")
    if (is.null(kind)) return(col)
    attr(col, "zarr_time") <- NULL
    cf_classes(col, list(kind = kind))
  })
  if (!one_d) return(columns)
  n <- if (length(columns)) NROW(columns[[1L]]) else 0L
  structure(columns, class = "data.frame", row.names = .set_row_names(n))
}

# `[` of a struct array: the rows (1-d) or blocks of every field.
struct_index <- function(x, info, args, drop) {
  shape <- info$shape
  nd <- length(shape)
  sel <- NULL
  if (length(args) && !(length(args) == 1L && is_whole_dim(args[[1L]]))) {
    if (length(args) == 1L && nd != 1L) {
      zarr_abort("selection", sprintf("%s: a struct array is indexed by one index per dimension", array_what(x)))
    }
    s <- index_args(x, args, shape)
    sel <- lapply(seq_len(nd), function(d) if (is.null(s[[d]])) engine_whole(shape[d]) else engine_dim(s[[d]]))
  }
  out <- engine_read(info, sel, TRUE, info$dim_names)
  if (nd == 1L || !drop) return(out)
  lapply(out, function(col) if (length(dim(col)) > nd) col else drop(col))
}

# `[<-` and `$write()` of a struct array: `value`, a data.frame or named
# list of fields, goes to the selection `sel` (1-based, NULL for whole
# dimensions).
struct_assign <- function(x, sel, value) {
  what <- array_what(x)
  if (!is.list(value) || is.null(names(value)) || any(!nzchar(names(value)))) {
    zarr_abort("type", sprintf("%s: a struct array is written from a data.frame or a named list of its fields", what))
  }
  full <- lapply(seq_along(x$shape), function(d) if (is.null(sel[[d]])) seq_len(x$shape[d]) else sel[[d]])
  if (prod(lengths(full)) == 0) return(invisible(x))
  info <- array_read_info(x)
  fields <- zarr_call(rz_struct_fields(info$handle))
  value <- struct_flatten(unclass(value), "", fields$name)
  value <- Map(function(col, name) {
    k <- match(name, fields$name)
    time <- isTRUE(info$decode) && fields$kind[k] %in% c("time", "timedelta")
    struct_field_value(col, name, fields$shape[[k]], time, what)
  }, value, names(value))
  zarr_call(with_progress(paste("Writing", what), rz_struct_write(
    info$handle, engine_selection(full, x$shape, what), value, zarr_num_threads(), zarr_strict_checksums(),
    isTRUE(info$decode)
  )))
  invisible(x)
}

# The fields of nested structs given as named lists or data.frames
# (`p = list(x = , y = )`) as the columns "p.x", "p.y" a read gives;
# `names` are the struct's fields (an unknown name is the engine's error).
struct_flatten <- function(value, prefix, names) {
  out <- list()
  for (k in seq_along(value)) {
    name <- paste0(prefix, names(value)[k])
    col <- value[[k]]
    inner <- is.list(col) && !is.null(names(col)) && !name %in% names &&
      any(startsWith(names, paste0(name, ".")))
    out <- c(out, if (inner) struct_flatten(unclass(col), paste0(name, "."), names) else list(col))
    if (!inner) names(out)[length(out)] <- name
  }
  out
}

# One field's values as the engine takes them: text in UTF-8, times in
# seconds (`time`), and a list column of a sub-array field (one element
# per record, each with the field's `shape`) as the array the read gives.
struct_field_value <- function(col, name, shape, time, what) {
  # (POSIXlt is a list, not a list column)
  if (inherits(col, "POSIXlt")) col <- as.POSIXct(col)
  if (is.list(col) && !is.data.frame(col)) {
    k <- prod(shape)
    if (time) col <- lapply(col, cf_seconds)
    if (!all(lengths(col) == k)) {
      zarr_abort("type", sprintf("%s: each element of the list column for field '%s' holds %d value(s)",
                                 what, name, k))
    }
    values <- unlist(col, use.names = FALSE)
    col <- if (is.null(values)) logical(0) else array(t(matrix(values, k)), c(length(col), shape))
  }
  if (time) col <- cf_seconds(col)
  if (is.factor(col)) col <- as.character(col)
  if (is.character(col)) col <- enc2utf8(col)
  if (inherits(col, "AsIs")) class(col) <- setdiff(class(col), "AsIs")
  col
}

# as_zarr() of a data.frame: a 1-d struct array, one field per column.
struct_as_zarr <- function(x, name, location, zarr_format) {
  types <- Map(function(col, nm) struct_column_type(col, nm), x, names(x))
  dt <- do.call(struct_type, types)
  b <- define_array(dt, nrow(x))
  if (nrow(x) <= zarr_options("min_compress")) b$remove_codec("zstd")
  if (inherits(location, "zarr_group")) {
    if (is.null(name)) zarr_abort("argument", "`name` is required when `location` is a group")
    arr <- location$add_array(name, b)
    arr[] <- x
    return(arr)
  }
  store <- new_store(location, zarr_format)
  if (is.null(name)) {
    store$create_array("", "", b)
    z <- zarr$new(store)
  } else {
    store$create_group("", "")
    z <- zarr$new(store)
    z$add_array("/", name, b)
  }
  arr <- z[[if (is.null(name)) "/" else paste0("/", name)]]
  arr[] <- x
  z
}

# The field type of a data.frame column.
struct_column_type <- function(col, name) {
  if (!is.null(dim(col))) {
    zarr_abort("unsupported", sprintf("column '%s': matrix columns are not written as struct fields", name))
  }
  if (is.factor(col)) col <- as.character(col)
  if (is.character(col)) {
    n <- max(c(1L, nchar(enc2utf8(col[!is.na(col)]), type = "chars")))
    return(paste0("U", n))
  }
  if (inherits(col, "integer64")) return("int64")
  # (R's times to the microsecond; dates whole days)
  if (inherits(col, "POSIXt")) return("datetime64[us]")
  if (inherits(col, "Date")) return("datetime64[D]")
  if (inherits(col, "difftime")) return("timedelta64[us]")
  switch(typeof(col),
    logical = "bool", integer = "int32", double = "float64", complex = "complex128",
    zarr_abort("type", sprintf("column '%s' of type '%s' cannot be a struct field", name, typeof(col)))
  )
}
