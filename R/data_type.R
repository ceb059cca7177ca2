# Data types and fill values. The default fill value of each type is the
# value R reads back as NA (see ARCHITECTURE: NA <-> fill_value), so NA
# round-trips: the minimum of signed integers (-2147483648 is R's
# NA_integer_ for int32), the maximum of unsigned integers, NaN for floats
# and complex, and false for bool (which has no NA in Zarr).

# The data types and what R needs of each (R type, signedness, size, range),
# from the engine (src/rust/src/dtype.rs), read once per session.
zarr_type_table <- function() {
  tab <- registry_cache$types
  if (is.null(tab)) {
    tab <- as.data.frame(zarr_call(rz_data_types()), stringsAsFactors = FALSE)
    registry_cache$types <- tab
  }
  tab
}

registry_cache <- new.env(parent = emptyenv())

# One column of the type table at `data_type`.
type_info <- function(data_type, column) {
  tab <- zarr_type_table()
  tab[[column]][tab$data_type == data_type]
}

# Fill values are kept in R as what they will be in JSON: a number, TRUE or
# FALSE, "NaN"/"Infinity"/"-Infinity", a list(re, im) for complex, or a
# decimal string for 64-bit integers that a double cannot hold exactly.
default_fill_value <- function(data_type) {
  switch(data_type,
    bool = FALSE,
    int64 = "-9223372036854775808",
    uint64 = "18446744073709551615",
    float16 = , float32 = , float64 = "NaN",
    complex64 = , complex128 = list("NaN", "NaN"),
    # U+2400 SYMBOL FOR NULL: a visible marker no real text uses, so that
    # both NA and "" round-trip.
    string = "\u2400",
    {
      if (type_info(data_type, "signed")) type_info(data_type, "min") else type_info(data_type, "max")
    }
  )
}

check_data_type <- function(data_type) {
  check_string(data_type, "data_type")
  types <- zarr_type_table()$data_type
  if (!data_type %in% types) {
    zarr_abort("unsupported", sprintf("data type '%s' is not supported; use one of %s", data_type,
                                      paste(types, collapse = ", ")))
  }
  data_type
}

float_json <- function(x) {
  if (is.character(x) && x %in% c("NaN", "Infinity", "-Infinity")) return(x)
  if (is.character(x) && grepl("^0x[0-9a-fA-F]+$", x)) return(x)
  x <- suppressWarnings(as.numeric(x))
  if (length(x) != 1L || is.na(x) && !is.nan(x)) return(NULL)
  if (is.nan(x)) return("NaN")
  if (is.infinite(x)) return(if (x > 0) "Infinity" else "-Infinity")
  x
}

# Turn a user-supplied fill value into its JSON form for `data_type`, or
# raise a classed error naming the value.
normalize_fill_value <- function(value, data_type) {
  bad <- function() {
    zarr_abort("argument", sprintf("`fill_value` %s is not valid for data type '%s'",
                                   paste(format(value), collapse = ", "), data_type))
  }
  if (is.null(value) || length(value) == 0L) bad()
  if (data_type == "string") {
    if (!is.character(value) || length(value) != 1L || is.na(value)) bad()
    return(enc2utf8(value))
  }
  if (data_type == "bool") {
    if (!is.logical(value) || length(value) != 1L || is.na(value)) bad()
    return(value)
  }
  if (startsWith(data_type, "complex")) {
    parts <- if (is.complex(value)) list(Re(value), Im(value)) else as.list(value)
    if (length(parts) == 1L) parts <- list(parts[[1L]], 0)
    if (length(parts) != 2L) bad()
    out <- lapply(parts, float_json)
    if (any(vapply(out, is.null, logical(1)))) bad()
    return(out)
  }
  if (startsWith(data_type, "float")) {
    if (length(value) != 1L) bad()
    out <- float_json(value)
    if (is.null(out)) bad()
    return(out)
  }
  # integers: exact decimal text for 64-bit values
  if (length(value) != 1L) bad()
  txt <- if (inherits(value, "integer64") || is.character(value)) {
    as.character(value)
  } else {
    if (!is.numeric(value) || is.na(value) || value != trunc(value)) bad()
    format(value, scientific = FALSE, trim = TRUE)
  }
  if (!grepl("^-?[0-9]+$", txt)) bad()
  txt <- sub("^(-?)0+([0-9])", "\\1\\2", txt)
  row <- zarr_type_table()[zarr_type_table()$data_type == data_type, ]
  if (row$size == 8L) {
    # Doubles cannot tell 2^63 from 2^63 - 1: compare the digits.
    lo <- if (data_type == "int64") "-9223372036854775808" else "0"
    hi <- if (data_type == "int64") "9223372036854775807" else "18446744073709551615"
    if (decimal_less(txt, lo) || decimal_less(hi, txt)) bad()
    return(txt)
  }
  num <- as.numeric(txt)
  if (num < row$min || num > row$max) bad()
  num
}

# a < b for integers written in decimal (no leading zeros).
decimal_less <- function(a, b) {
  neg_a <- startsWith(a, "-")
  neg_b <- startsWith(b, "-")
  if (neg_a != neg_b) return(neg_a)
  da <- sub("^-", "", a)
  db <- sub("^-", "", b)
  less_abs <- if (nchar(da) != nchar(db)) nchar(da) < nchar(db) else da < db
  if (da == db) return(FALSE)
  if (neg_a) !less_abs else less_abs
}

# The JSON form of a fill value (64-bit integers verbatim).
fill_value_json <- function(fill) {
  if (is.character(fill) && grepl("^-?[0-9]+$", fill)) return(structure(fill, class = "json"))
  fill
}

# The R value a fill value reads as (for printing).
fill_value_r <- function(fill, data_type) {
  if (startsWith(data_type, "complex")) {
    p <- vapply(fill, function(x) as.numeric(fill_value_r(x, "float64")), 0)
    return(complex(real = p[1L], imaginary = p[2L]))
  }
  if (is.character(fill)) {
    if (fill == "Infinity") return(Inf)
    if (fill == "-Infinity") return(-Inf)
    if (fill == "NaN") return(NaN)
    if (grepl("^-?[0-9]+$", fill) && requireNamespace("bit64", quietly = TRUE)) {
      return(bit64::as.integer64(fill))
    }
    return(fill)
  }
  fill
}

# The data type and fill value the engine reads an array's metadata as.
# zarr-python 3's NumPy data types are objects in zarr.json: fixed-width
# strings read as string, datetime64/timedelta64 as int64 with NaT (the
# smallest int64) as the fill value; R/cf.R turns the latter into times.
core_data_type <- function(data_type, fill_value) {
  if (!is.list(data_type) || is_struct_type(data_type)) return(list(data_type = data_type, fill_value = fill_value))
  switch(data_type$name,
    fixed_length_utf32 = , null_terminated_bytes = list(data_type = "string", fill_value = ""),
    numpy.datetime64 = , numpy.timedelta64 = list(
      data_type = "int64",
      fill_value = if (identical(fill_value, "NaT")) "-9223372036854775808" else fill_value
    ),
    list(data_type = data_type$name, fill_value = fill_value)
  )
}

#' Zarr data types
#'
#' @description A Zarr data type and its fill value. The R type each data type reads
#' into: bool -> logical; int8, int16, int32, uint8, uint16 -> integer;
#' int64, uint32, uint64 -> `bit64::integer64` (double without bit64);
#' float16, float32, float64 -> double; complex64, complex128 -> complex;
#' string (variable-length UTF-8) -> character.
#'
#' Elements equal to the fill value read as `NA` (except for bool), and `NA`
#' is written as the fill value. The default fill value of each type is
#' therefore the one R reads as `NA`: the smallest signed integer, the
#' largest unsigned integer, and NaN for floating point and complex types.
#' For strings it is U+2400 (the symbol for NUL), so that `NA` and ""
#' stay distinct. Any other fill value of a Zarr v3 string array is text
#' (in v2, where it is xarray's `_FillValue`, it reads as `NA`): a missing
#' chunk of an array whose fill value is "missing" reads as "missing" (as in
#' zarr-python and R-CF's zarr; 0.5.x and earlier of this package read it
#' as `NA`), and `NA` cannot be written to such an array (an error of
#' class `zarr_error_type`) unless a `missing_value` attribute names the
#' string that stands for it.
#'
#' Zarr v2 arrays of NumPy's fixed-width strings (dtypes "<U5", ">U5",
#' "|S5") are of data type string too: they read into character vectors,
#' with no `NA` (an empty element is ""). To create one, add the codec
#' "numpy.fixed_string" to an [array_builder] of data type string.
#' zarr-python 3's `fixed_length_utf32` and `null_terminated_bytes` (Zarr
#' v3) read the same way, and its `numpy.datetime64` and
#' `numpy.timedelta64` read as int64 whose NaT is the fill value; `[` turns
#' them into times (see [cf_decoding]).
#'
#' @docType class
#' @export
#' @examples
#' dt <- zarr_data_type$new("int16")
#' dt
#' dt$fill_value <- -9999
#' dt$metadata_fragment()
zarr_data_type <- R6::R6Class("zarr_data_type",
  inherit = zarr_extension,
  public = list(
    #' @description Create a new data type object.
    #' @param data_type The name of the data type, e.g. "float64".
    #' @param fill_value Optional fill value; the type's default otherwise.
    initialize = function(data_type, fill_value = NULL) {
      if (is_struct_type(data_type)) {
        super$initialize("struct")
        private$.struct <- data_type
        private$.fill <- fill_value %||% if (!is.null(names(data_type))) struct_default_fill(data_type)
        return(invisible(self))
      }
      super$initialize(check_data_type(data_type))
      private$.fill <- if (is.null(fill_value)) {
        default_fill_value(data_type)
      } else {
        normalize_fill_value(fill_value, data_type)
      }
    },
    #' @description Print a summary of the data type.
    #' @param ... Ignored.
    print = function(...) {
      if (!is.null(private$.struct)) {
        cat("<Zarr data type> struct (R type list)\n", "fill value: ", format_fill(private$.fill), "\n", sep = "")
        return(invisible(self))
      }
      cat("<Zarr data type> ", private$.name, " (R type ", self$Rtype, ", ", self$size, " byte",
          if (self$size > 1L) "s", ")\n", sep = "")
      cat("fill value: ", format_fill(private$.fill), "\n", sep = "")
      invisible(self)
    },
    #' @description The metadata fragment of this data type and its fill value.
    #' @return A list with `data_type` and `fill_value`.
    metadata_fragment = function() {
      list(data_type = private$.struct %||% private$.name, fill_value = fill_value_json(private$.fill))
    }
  ),
  active = list(
    #' @field data_type The name of the data type; setting it resets the
    #'   fill value to the new type's default.
    data_type = function(value) {
      if (missing(value)) return(private$.name)
      private$.struct <- NULL
      if (is_struct_type(value)) {
        private$.name <- "struct"
        private$.struct <- value
        private$.fill <- struct_default_fill(value)
        return(invisible(NULL))
      }
      private$.name <- check_data_type(value)
      private$.fill <- default_fill_value(value)
    },
    #' @field Rtype (read-only) The R type values of this data type read as
    #'   ("list" for a struct, see [struct_type()]).
    Rtype = function(value) if (is.null(private$.struct)) type_info(private$.name, "Rtype") else "list",
    #' @field signed (read-only) Whether the type is signed.
    signed = function(value) if (is.null(private$.struct)) type_info(private$.name, "signed") else FALSE,
    #' @field size (read-only) Size of one element in bytes (NA for a struct).
    size = function(value) if (is.null(private$.struct)) type_info(private$.name, "size") else NA_integer_,
    #' @field fill_value The fill value, in its JSON form (for a struct, a
    #'   named list of its fields' fill values).
    fill_value = function(value) {
      if (missing(value)) return(private$.fill)
      if (!is.null(private$.struct)) {
        if (!is.list(value) || is.null(names(value))) {
          zarr_abort("argument", "the fill value of a struct is a named list of its fields' values")
        }
        private$.fill <- value
        return(invisible(NULL))
      }
      private$.fill <- normalize_fill_value(value, private$.name)
    }
  ),
  private = list(.fill = NULL, .struct = NULL)
)

format_fill <- function(fill) {
  if (is.list(fill) && !is.null(names(fill))) {
    return(paste0("{", paste(names(fill), vapply(fill, function(v) format_fill(v), ""), sep = ": ", collapse = ", "),
                  "}"))
  }
  if (is.list(fill)) return(sprintf("[%s, %s]", fill[[1L]], fill[[2L]]))
  format(fill)
}
