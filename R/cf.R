# CF decoding: the encodings xarray writes into Zarr attributes, read as
# xarray.open_zarr() reads them by default. Which arrays are decoded and
# how is decided by the engine (src/rust/src/cf/), which also converts
# each element while it scatters a chunk into R's vector, and back while it
# gathers one for a write; this file holds the R side: the switch, the R
# classes of times, printing, and dimension names.

#' CF decoding
#'
#' Most Zarr data written by xarray carries the encodings of the netCDF
#' Climate and Forecast (CF) conventions in its attributes. Reads decode
#' them the way `xarray.open_zarr()` does by default.
#'
#' **Which arrays.** An array is a CF variable when it names its dimensions
#' the way xarray does (the `_ARRAY_DIMENSIONS` attribute of Zarr v2, or
#' `dimension_names` in Zarr v3) or carries a CF encoding attribute
#' (`_FillValue`, `missing_value`, `scale_factor`, `add_offset`,
#' `calendar`, or `units` of the form "<unit> since <date>"). Other arrays
#' keep the rule of [zarr_data_type]: elements equal to the fill value read
#' as `NA`.
#'
#' **Missing values.** In a CF variable the CF attributes, not the Zarr
#' fill value, say what is missing: elements equal to `_FillValue` or to a
#' `missing_value` read as `NA` (in the forms xarray stores them: numbers,
#' "NaN", or base64 text in Zarr v3), and so does the Zarr fill value of a
#' v2 array, which is where xarray keeps `_FillValue` in v2. The fill value
#' of a v3 array marks nothing when one of those attributes is there, nor
#' when it is 0: zarr-python's default of 0 would otherwise turn every 0 (a
#' first time step, a depth of 0 m, a latitude of 0) into `NA`. Another v3
#' fill value (such as this package's defaults) still marks `NA`.
#'
#' **Values.** `scale_factor` and `add_offset` unpack to double
#' (`stored * scale_factor + add_offset`). `units` of the form
#' "<unit> since <date>" (days, hours, minutes, seconds, milliseconds,
#' microseconds, nanoseconds) with the standard, gregorian or
#' proleptic_gregorian calendar (or none) read as POSIXct in UTC, always
#' (never Date); NaT (the smallest int64) reads as `NA`. Other calendars
#' (noleap, 360_day, ...) read as the stored numbers, with a warning of
#' class `zarr_warning_cf`. xarray's timedeltas (`dtype: "timedelta64[...]"`
#' with `units` "hours" etc.) read as difftime in seconds, its booleans
#' (int8 with `dtype: "bool"`) as logical, and so do integers with CF flags
#' `flag_values` 0, 1 and `flag_meanings` "false true" (a logical with
#' `NA` as [as_zarr()] writes it). Arrays of zarr-python's
#' `numpy.datetime64` and `numpy.timedelta64` data types read as POSIXct and
#' difftime too. Complex numbers and bool arrays are read as they are.
#'
#' **Strings.** In a string array `missing_value` (one string or several)
#' marks `NA`, and so does `_FillValue`: in Zarr v3 the attribute (which
#' xarray refuses for strings, but other tools write), in v2 the fill value
#' of `.zarray`, "" too, as xarray masks it (the attribute only where the
#' fill value is null). Without those attributes a string fill value other
#' than "" (such as this package's default, U+2400) still marks `NA`, and
#' in v3 "" (zarr-python's default) is text. (R-CF's zarr reads elements
#' equal to such a fill value, and those of chunks never written, as the
#' fill value itself, "missing" rather than `NA`; here they are `NA`, as
#' numbers equal to the fill value are in both packages.) Markers that are not text
#' mark nothing. `NA` written into such an array is stored as the first
#' marker; where no string reads as `NA` (v3, fill value "", no marker),
#' writing `NA` is a `zarr_error_type` error rather than a silent "".
#'
#' **What R writes.** [as_zarr()] gives every array dimension names and
#' the CF attributes with which xarray reads it as R means it (`NA` as
#' NaN/NaT, POSIXct and Date as times); see there. Such an array reads
#' back in R under the Zarr rule, which its `_FillValue` repeats. Arrays
#' made with `add_array()` get dimension names too, unless the definition
#' has its own: `"<name>_dim_0"`, `"<name>_dim_1"`, ... as in [as_zarr()].
#' Names of that form alone do not make an array a CF variable: it keeps
#' the Zarr rule (so a fill value of 0 still reads as `NA`). In Zarr v3,
#' whose fill value xarray does not mask, a new numeric array also gets a
#' `_FillValue` attribute equal to its fill value wherever R reads that
#' value as `NA`, and a string array whose fill value is not "" a
#' `missing_value` attribute (xarray refuses a text `_FillValue` in v3),
#' so that xarray masks the same elements (in v2 xarray takes the fill
#' value itself). `dimnames(arr) <- NULL`, names left out
#' of `dimnames<-` and the new dimension of `$promote()` take the default
#' names, since xarray opens no array with a dimension unnamed.
#'
#' **Raw values.** `options(zarr.cf_decode = FALSE)` turns decoding off:
#' every array then reads its stored values under the Zarr rule.
#'
#' **Writes** through a CF variable encode: `NA` (and `NaN`) becomes the
#' first of `_FillValue`/`missing_value` (NaT for int64 times without
#' one), values are packed with the inverse of `scale_factor`/`add_offset`
#' and rounded half to even to the stored integer type, and times become
#' the stored units. `NA` is refused where the array has no missing value,
#' and so are values the stored type cannot hold. The engine encodes while
#' it gathers the chunks: no extra pass over the data.
#'
#' @name cf_decoding
#' @examples
#' z <- create_zarr()
#' b <- define_array("int16", 4)
#' b$fill_value <- 0
#' a <- z$add_array("/", "t", b)
#' a$set_attribute("scale_factor", 0.5)
#' a$set_attribute("add_offset", 10)
#' a$set_attribute("_FillValue", -1)
#' a[] <- c(10, 10.5, NA, 12)
#' a[]
#' old <- options(zarr.cf_decode = FALSE)
#' a[] # the stored values
#' options(old)
NULL

# Whether reads decode CF (the option zarr.cf_decode, TRUE by default).
cf_decode <- function() !isFALSE(getOption("zarr.cf_decode", TRUE))

# How the engine decodes reads through `handle` (NULL: not at all).
cf_info <- function(handle) zarr_call(rz_array_cf(handle))

# The R class of decoded values: POSIXct for times, difftime (seconds)
# for timedeltas. Only time arrays get attributes here.
cf_classes <- function(x, cf) {
  if (is.null(cf)) return(x)
  if (!is.null(cf$note)) cf_warn(cf$note)
  switch(cf$kind,
    time = structure(x, class = c("POSIXct", "POSIXt"), tzone = "UTC"),
    timedelta = structure(x, class = "difftime", units = "secs"),
    x
  )
}

cf_warn <- function(message) {
  warning(structure(class = c("zarr_warning_cf", "zarr_warning", "warning", "condition"),
                    list(message = message, call = NULL)))
}

# R's time classes -> the seconds since 1970 (difftime: seconds) that the
# engine encodes into a CF variable's stored units; other data goes to the
# engine as it is, which encodes it while it gathers the chunks (cf/encode.rs).
cf_encode <- function(data, cf) {
  if (is.null(cf) || isTRUE(cf$zarr_rule)) return(data)
  cf_seconds(data)
}

# Times (POSIXct, POSIXlt, Date) as seconds since 1970 and difftime as
# seconds; other data as it is (also for the time fields of struct arrays).
cf_seconds <- function(data) {
  if (inherits(data, "difftime")) return(as.numeric(data, units = "secs"))
  if (inherits(data, "POSIXt") || inherits(data, "Date")) return(as.numeric(as.POSIXct(data, tz = "UTC")))
  data
}

# The lines print() shows for a CF variable.
cf_print <- function(cf) {
  # (an array that decodes as the Zarr rule reads has nothing to show)
  if (is.null(cf) || isTRUE(cf$zarr_rule)) return(invisible(NULL))
  text <- is.character(cf$missing)
  kind <- switch(cf$kind, time = "times (POSIXct, UTC)", timedelta = "timedeltas (difftime)",
                 bool = "logical",
                 if (text) "strings" else if (cf$scale != 1 || cf$offset != 0) "unpacked numbers" else "numbers")
  missing <- if (text) encodeString(cf$missing, quote = "\"") else format(unlist(cf$missing))
  cat("CF decoding: ", kind, if (!is.null(cf$units)) sprintf(", units '%s'", cf$units),
      if (length(missing)) sprintf(", missing %s", paste(missing, collapse = ", ")),
      "\n", sep = "")
  invisible(NULL)
}

# as_zarr(): what R holds -> the values stored, their data type, and the
# CF attributes with which xarray reads them as R meant them. Factors are
# stored as their labels; POSIXct as seconds and Date as days since 1970
# (proleptic Gregorian, xarray's default calendar); a logical with NA as
# int8 (bool has no missing value) whose flag attributes read back as
# logical here and as masked 0/1 in xarray.
cf_prepare <- function(x) {
  keep <- function(v) {
    if (!is.null(dim(x))) dim(v) <- dim(x)
    if (!is.null(dimnames(x))) dimnames(v) <- dimnames(x)
    v
  }
  attrs <- list()
  dtype <- NULL
  if (is.factor(x)) {
    x <- keep(as.character(x))
  } else if (inherits(x, "POSIXt")) {
    # (the write encodes the times through these attributes)
    if (!inherits(x, "POSIXct")) x <- as.POSIXct(x)
    attrs <- list(units = "seconds since 1970-01-01", calendar = "proleptic_gregorian")
  } else if (inherits(x, "Date")) {
    attrs <- list(units = "days since 1970-01-01", calendar = "proleptic_gregorian")
  } else if (is.logical(x) && anyNA(x)) {
    x <- keep(as.integer(x))
    dtype <- "int8"
    attrs <- list(flag_values = c(0L, 1L), flag_meanings = "false true")
  }
  list(data = x, data_type = dtype %||% r_data_type(x), attributes = attrs)
}

# The dimension names as_zarr() gives an array `name` (of the R object `x`):
# names(dimnames(x)) where set, else "<name>_dim_<k>" ("dim_<k>" for a root
# array). xarray holds one extent per dimension name in a group, so the
# default names are the array's own: arrays of other shapes never clash.
# R reads these names back as no name (dimnames() leaves them out), so
# that as_zarr(x)[] is x.
cf_dimension_names <- function(x, name) {
  as.list(cf_dims_or_default(names(dimnames(x)), name, length(dim(x) %||% 1L)))
}

# The `n` dimension names `given` (NULL, or "" or NA where not given) of
# an array `name`, with the defaults where there is none.
cf_dims_or_default <- function(given, name, n) {
  given <- given %||% character(n)
  ifelse(is.na(given) | !nzchar(given), cf_default_dims(name, n), given)
}

cf_default_dims <- function(name, n) {
  prefix <- if (is.null(name) || !nzchar(name)) "dim_" else paste0(basename(name), "_dim_")
  paste0(prefix, seq_len(n) - 1L)
}

# The definition `metadata` (an array_builder or a list) of a new array
# `name` in a store of `zarr_format`, as xarray needs it: dimension names,
# the caller's where given (v3 `dimension_names`, or a v2
# `_ARRAY_DIMENSIONS` attribute), else the defaults of as_zarr(), so that
# xarray opens every store this package writes; and the attributes with
# which xarray masks what R reads as NA (cf_missing_attributes()). A
# builder is copied: the caller may define more arrays with it.
cf_with_dimension_names <- function(metadata, name, zarr_format) {
  builder <- inherits(metadata, "array_builder")
  if (!builder && !is.list(metadata)) return(metadata)
  if (builder) metadata <- metadata$clone(deep = TRUE)
  # (a definition without data type or shape: creating the array says so)
  meta <- if (builder) tryCatch(metadata$metadata(), zarr_error = function(e) NULL) else metadata
  if (is.null(meta)) return(metadata)
  n <- length(meta$shape)
  if (n && is.null(meta$dimension_names) && is.null(meta$attributes[["_ARRAY_DIMENSIONS"]])) {
    dims <- as.list(cf_default_dims(name, n))
    metadata$dimension_names <- dims
    meta$dimension_names <- dims
  }
  add <- cf_missing_attributes(meta, name, zarr_format)
  if (length(add)) metadata$attributes <- c(metadata$attributes, add)
  metadata
}

# The attributes (a list, each value JSON text of class "json") that the
# new array of metadata list `meta` needs in a store of `zarr_format` so
# that xarray masks the elements R reads as NA: in v3 a `_FillValue` for
# numbers, a `missing_value` for strings (src/rust/src/cf/xarray.rs). A
# definition the engine cannot parse gets none here: creating the array
# reports what is wrong with it.
cf_missing_attributes <- function(meta, name, zarr_format) {
  if (!identical(as.integer(zarr_format), 3L)) return(list())
  json <- to_json(with_key_encoding(meta, "/"), pretty = FALSE)
  add <- tryCatch(zarr_call(rz_cf_missing_attributes(json, name %||% "", 3L)), zarr_error = function(e) NULL)
  lapply(as.list(add), structure, class = "json")
}

# Stored dimension names `dn` of the array `name` as R shows them: the
# defaults of as_zarr() become "" (NULL when no name is left). An array
# opened as the root of a store (a URL to the array) has lost its name:
# there "<any>_dim_0", "<any>_dim_1", ... are defaults too.
cf_given_dims <- function(dn, name) {
  defaults <- cf_default_dims(name, length(dn))
  root <- is.null(name) || !nzchar(name)
  if (root && length(dn) && grepl("(^|_)dim_0$", dn[[1L]])) {
    defaults <- paste0(sub("dim_0$", "", dn[[1L]]), "dim_", seq_along(dn) - 1L)
  }
  dn[dn == defaults] <- ""
  if (all(!nzchar(dn))) NULL else dn
}

# The definition `def` of an array that as_zarr() writes into a store of
# `zarr_format`, with dimension names and CF attributes (and in v3 those
# with which xarray masks R's NA): the builder, or for a v2 bool array its
# metadata with a null fill value (xarray masks the v2 fill value, and a
# fill of false would hide every FALSE).
cf_annotate <- function(def, prep, dims, zarr_format) {
  def$dimension_names <- dims
  if (length(prep$attributes)) def$attributes <- prep$attributes
  # (the name is not needed: "<name>_dim_<k>" counts as a default anyway)
  add <- cf_missing_attributes(def$metadata(), "", zarr_format)
  if (length(add)) def$attributes <- c(def$attributes, add)
  v2 <- identical(as.integer(zarr_format), 2L)
  if (v2 && prep$data_type == "bool") {
    def$format <- 2L
    meta <- def$metadata()
    meta["fill_value"] <- list(NULL)
    return(meta)
  }
  def
}

# A `_FillValue` or `missing_value` of a float or complex array as print()
# shows it: xarray stores those of Zarr v3 as base64 text of a float64's
# little-endian bytes ("AAAAAAAA+H8=" is NaN), whatever the float type;
# bytes of the array's own type are taken too. Shown decoded; anything
# else is shown as it is.
cf_fill_shown <- function(v, data_type) {
  size <- unname(c(float16 = 2L, float32 = 4L, float64 = 8L, complex64 = 4L, complex128 = 8L)[data_type])
  if (is.na(size) || !is.character(v) || length(v) != 1L || !grepl("^[A-Za-z0-9+/]+=*$", v)) return(v)
  bytes <- tryCatch(jsonlite::base64_dec(v), error = function(e) raw(0))
  parts <- if (startsWith(data_type, "complex")) 2L else 1L
  if (length(bytes) == 8L * parts) size <- 8L
  if (length(bytes) != size * parts) return(v)
  x <- if (size == 2L) half_to_double(bytes) else readBin(bytes, "double", n = parts, size = size, endian = "little")
  if (parts == 2L) complex(real = x[1L], imaginary = x[2L]) else x
}

# IEEE half-precision numbers (little-endian pairs of bytes) as doubles.
half_to_double <- function(bytes) {
  bits <- readBin(bytes, "integer", n = length(bytes) %/% 2L, size = 2L, signed = FALSE, endian = "little")
  sign <- ifelse(bitwAnd(bits, 0x8000L) > 0L, -1, 1)
  e <- bitwAnd(bitwShiftR(bits, 10L), 0x1FL)
  m <- bitwAnd(bits, 0x3FFL)
  ifelse(e == 0L, sign * m * 2^-24,
         ifelse(e == 31L, ifelse(m == 0L, sign * Inf, NaN), sign * (1 + m / 1024) * 2^(e - 15)))
}
