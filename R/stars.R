# stars data cubes from Zarr variables, and back. A CF variable (as xarray
# writes it) names its dimensions; each dimension's values are the 1-d
# array of the same name beside it (its coordinate variable), with cell
# bounds in the array its `bounds` attribute names, and a CRS in the
# variable its `grid_mapping` attribute names. stars is suggested: the
# st_as_stars() methods are registered by the NAMESPACE for when it is
# loaded.

#' Zarr variables as stars data cubes
#'
#' `st_as_stars()` (of the stars package) reads a Zarr array, or the
#' variables of a group, as a `stars` data cube whose dimensions are the
#' variable's, in Zarr's order, named by its `dimension_names` (xarray's
#' `_ARRAY_DIMENSIONS` in Zarr v2). The values of a dimension are those of
#' the 1-d array of the same name in the variable's group (its CF
#' coordinate variable), CF-decoded (see [cf_decoding]): times as POSIXct.
#' Evenly spaced values become an offset and a delta, numbers as cell
#' centres (as CF coordinates are), times as instants; the cell bounds of a
#' coordinate with a `bounds` attribute become intervals. A dimension
#' without a coordinate variable counts 1, 2, .... The variable's `units`
#' attribute becomes its units (where the units package knows them), and
#' the CRS is taken from the `crs_wkt` or `spatial_ref` attribute of the
#' variable its `grid_mapping` attribute names. Dimensions named `x`/`y`,
#' `lon`/`lat` or `longitude`/`latitude` are the raster's.
#'
#' Of a group (or a [zarr] object: its root), `st_as_stars()` reads every
#' variable with the dimensions of the first data variable (or of
#' `variables`, when given) as attributes of one cube. Data variables are
#' the arrays that are not coordinate, bounds or grid-mapping variables.
#'
#' [as_zarr()] of a `stars` object writes the reverse: each attribute as a
#' variable with the cube's dimension names, a coordinate variable per
#' dimension (cell centres, or the interval starts of times), a
#' `<dimension>_bounds` array where the dimension has intervals or cells,
#' `units`, and the CRS in a `spatial_ref` variable that the attribute
#' `grid_mapping` names, so that xarray opens it with the same coordinates.
#'
#' The cube is read into memory, unless it is larger than
#' `getOption("zarr.stars_proxy_bytes", 1e9)` bytes (as doubles) or `proxy =
#' TRUE`: then the result is a `stars_proxy` (of class `zarr_stars_proxy`)
#' that holds the dimensions and the location of each variable, and reads
#' only when `st_as_stars()` (or `plot()`) asks for it: the region its
#' dimensions were cut to with `[` (ranges of indices), with the operations
#' collected meanwhile applied. Such a proxy needs a store with a location
#' (not one in memory). A part of a cube can also be read with `selection`
#' (coordinates and bounds follow); for block-wise work see
#' [zarr_delayed_array].
#'
#' @param .x A [zarr_array], [zarr_group] or [zarr] object.
#' @param ... Ignored.
#' @param variables For a group, the names of the arrays to read; NULL
#'   (the default) for all that share the first data variable's dimensions.
#' @param selection NULL (the default) for the whole cube, or a list with
#'   one entry per dimension: NULL for all of it, or a range of 1-based
#'   indices `c(first, last)` as in `zarr_array$read()`.
#' @param proxy NA (the default) for a `stars_proxy` when the cube is
#'   larger than `getOption("zarr.stars_proxy_bytes", 1e9)` bytes; TRUE or
#'   FALSE to choose.
#' @param downsample For a proxy: read every `downsample + 1`-th element
#'   along the raster dimensions (a number, or one each for x and y), as
#'   stars' `plot()` asks.
#' @return A `stars` object.
#' @name zarr_stars
#' @examples
#' if (requireNamespace("stars", quietly = TRUE)) {
#'   z <- create_zarr()
#'   lon <- as_zarr(array(c(0, 10, 20), 3, list(lon = NULL)), "lon", z$root)
#'   lat <- as_zarr(array(c(50, 51), 2, list(lat = NULL)), "lat", z$root)
#'   v <- as_zarr(array(1:6, c(3, 2), list(lon = NULL, lat = NULL)), "v", z$root)
#'   cube <- stars::st_as_stars(z)
#'   print(cube)
#'   as_zarr(cube)$arrays
#' }
NULL

#' @rdname zarr_stars
#' @exportS3Method stars::st_as_stars
st_as_stars.zarr_array <- function(.x, ..., selection = NULL, proxy = NA) { # nolint: object_name_linter.
  stars_need()
  stars_cube(stats::setNames(list(.x), basename(.x$path)), stars_dims(.x), .x$parent, selection, proxy)
}

#' @rdname zarr_stars
#' @exportS3Method stars::st_as_stars
st_as_stars.zarr_group <- function(.x, ..., variables = NULL, # nolint: object_name_linter.
                                   selection = NULL, proxy = NA) {
  stars_need()
  arrays <- stars_group_arrays(.x)
  if (is.null(variables)) {
    data <- stars_data_variables(arrays)
    if (!length(data)) zarr_abort("argument", sprintf("group '%s' has no data variable", .x$path))
    dims <- stars_dims(arrays[[data[1L]]])
    variables <- data[vapply(data, function(v) identical(stars_dims(arrays[[v]]), dims), logical(1))]
  }
  missing <- setdiff(variables, names(arrays))
  if (length(missing)) {
    zarr_abort("argument", sprintf("group '%s' has no array '%s'", .x$path, missing[1L]))
  }
  dims <- stars_dims(arrays[[variables[1L]]])
  for (v in variables) {
    if (!identical(stars_dims(arrays[[v]]), dims)) {
      zarr_abort("argument", sprintf("array '%s' does not have the dimensions (%s) of '%s'",
                                     arrays[[v]]$path, paste(dims, collapse = ", "), arrays[[variables[1L]]]$path))
    }
  }
  stars_cube(arrays[variables], dims, .x, selection, proxy)
}

#' @rdname zarr_stars
#' @exportS3Method stars::st_as_stars
st_as_stars.zarr <- function(.x, ..., variables = NULL, selection = NULL, # nolint: object_name_linter.
                             proxy = NA) {
  root <- .x$root
  if (inherits(root, "zarr_array")) return(st_as_stars.zarr_array(root, ..., selection = selection, proxy = proxy))
  st_as_stars.zarr_group(root, ..., variables = variables, selection = selection, proxy = proxy)
}

stars_need <- function() {
  if (!requireNamespace("stars", quietly = TRUE)) {
    zarr_abort("unsupported", "this needs the package stars, which is not installed")
  }
}

# The dimension names of an array, with "dim_<k>" where it has none.
stars_dims <- function(arr) {
  dn <- arr$dimension_names
  n <- length(arr$shape)
  if (is.null(dn)) return(paste0("dim_", seq_len(n)))
  ifelse(is.na(dn) | !nzchar(dn), paste0("dim_", seq_len(n)), dn)
}

# The arrays directly in a group, by name.
stars_group_arrays <- function(group) {
  if (is.null(group)) return(list())
  kids <- group$children
  kids <- kids[vapply(kids, function(k) inherits(k, "zarr_array"), logical(1))]
  names(kids) <- vapply(kids, function(k) k$name, character(1))
  kids
}

# The names of the data variables among `arrays`: not named after a
# dimension (coordinates), nor named by a bounds, grid_mapping or
# coordinates attribute.
stars_data_variables <- function(arrays) {
  dims <- unique(unlist(lapply(arrays, stars_dims)))
  named <- unlist(lapply(arrays, function(a) {
    at <- a$attributes
    c(at$bounds, at$grid_mapping, if (is.character(at$coordinates)) strsplit(at$coordinates, " ")[[1L]])
  }))
  setdiff(names(arrays), c(dims, named))
}

# The stars object of `arrays` (a named list of arrays with dimensions
# `names`), with coordinates from `group`, of the region `selection`; a
# proxy of it as `proxy` says (see zarr_stars).
stars_cube <- function(arrays, names, group, selection = NULL, proxy = FALSE) {
  shape <- arrays[[1L]]$shape
  # (range_selection() checks it, and says what is wrong with it)
  sel <- range_selection(selection, shape, array_what(arrays[[1L]])) %||% lapply(shape, engine_whole)
  if (stars_want_proxy(proxy, arrays, prod(vapply(sel, `[`, numeric(1), 2L)))) {
    return(stars_proxy_of(arrays, names, group, sel))
  }
  dims <- stars_dimensions_of(arrays, names, group, sel)
  stars::st_as_stars(lapply(arrays, stars_values, selection = selection), dimensions = dims)
}

# The stars dimensions of the region `sel` (in the engine's form) of
# `arrays`, with the CRS of the first that names a grid mapping.
stars_dimensions_of <- function(arrays, names, group, sel) {
  siblings <- stars_group_arrays(group)
  shape <- arrays[[1L]]$shape
  picks <- lapply(sel, function(r) r[1L] + seq_len(r[2L]))
  dv <- lapply(seq_along(names), function(d) stars_dimension_values(siblings, names[d], shape[d], picks[[d]]))
  values <- stats::setNames(lapply(dv, `[[`, "values"), names)
  centres <- vapply(dv, `[[`, logical(1), "centres")
  # (coordinates without bounds that are not evenly spaced numbers, such
  # as times, are points, not the starts of cells)
  points <- vapply(dv, `[[`, logical(1), "instants")
  dims <- do.call(stars::st_dimensions, c(values, list(.raster = stars_raster_dims(names), cell_midpoints = centres,
                                                       point = points)))
  crs <- NULL
  for (a in arrays) crs <- crs %||% stars_crs(a, siblings)
  if (!is.null(crs)) sf::st_crs(dims) <- crs
  dims
}

# The values of dimension `name` (extent `n`) at the indices `pick`, from
# its coordinate variable: list(values, centres = whether they are cell centres, instants
# = whether they are times of no extent). With bounds, the cells' starts
# when the cells are regular and contiguous (stars makes them an offset and
# a delta), else intervals; 1..n without a coordinate variable.
stars_dimension_values <- function(siblings, name, n, pick = seq_len(n)) {
  out <- function(values, centres = FALSE, instants = FALSE) {
    list(values = values, centres = centres, instants = instants)
  }
  coord <- siblings[[name]]
  if (is.null(coord) || length(coord$shape) != 1L || coord$shape != n) return(out(pick))
  v <- coord[]
  dim(v) <- NULL
  v <- v[pick]
  n <- length(pick)
  timed <- inherits(v, "POSIXct")
  bounds <- coord$attributes$bounds
  b <- if (is.character(bounds)) siblings[[bounds]]
  if (is.null(b) || !identical(as.numeric(b$shape), c(coord$shape, 2))) {
    # Evenly spaced numbers are the centres of cells (an offset and a
    # delta); other coordinates without bounds are points, kept as they are.
    regular <- n > 1L && !timed && all(abs(diff(diff(v))) <= 1e-9 * abs(v[2L] - v[1L]))
    return(out(v, centres = regular, instants = !regular))
  }
  bv <- b[]
  start <- bv[pick, 1L]
  end <- bv[pick, 2L]
  if (timed) {
    # (xarray encodes the bounds of times with the times' units)
    start <- .POSIXct(as.numeric(start), tz = "UTC")
    end <- .POSIXct(as.numeric(end), tz = "UTC")
  }
  width <- as.numeric(end) - as.numeric(start)
  # (one cell is kept as an interval: its start alone has no extent)
  contiguous <- n > 1L && all(as.numeric(end[-n]) == as.numeric(start[-1L]))
  if (contiguous && all(abs(width - width[1L]) <= 1e-9 * abs(width[1L]))) return(out(start))
  out(stars::make_intervals(start, end))
}

# The data of a variable, with its units where the units package knows them.
stars_values <- function(arr, selection = NULL) {
  x <- if (is.null(selection)) arr[] else arr$read(selection)
  if (is.null(dim(x))) x <- array(x, length(x))
  dimnames(x) <- NULL
  u <- arr$attributes$units
  if (is.character(u) && length(u) == 1L && requireNamespace("units", quietly = TRUE) && is.numeric(x) &&
        !inherits(x, c("POSIXct", "difftime"))) {
    x <- tryCatch(units::set_units(x, u, mode = "standard"), error = function(e) x)
  }
  x
}

# Which two of `names` are the raster's x and y, as stars wants them.
stars_raster_dims <- function(names) {
  pairs <- list(c("x", "y"), c("lon", "lat"), c("longitude", "latitude"))
  for (p in pairs) if (all(p %in% names)) return(p)
  rep(NA_character_, 2L)
}

# The CRS of a variable from the variable its grid_mapping names.
stars_crs <- function(arr, siblings) {
  gm <- arr$attributes$grid_mapping
  if (!is.character(gm) || is.null(siblings[[gm]])) return(NULL)
  at <- siblings[[gm]]$attributes
  wkt <- at$crs_wkt %||% at$spatial_ref
  if (!is.character(wkt)) return(NULL)
  sf::st_crs(wkt)
}

# as_zarr() of a stars object: its attributes as variables, a coordinate
# variable per dimension, bounds and the CRS (see zarr_stars).
stars_as_zarr <- function(x, name, location, zarr_format) {
  stars_need()
  if (!is.null(name)) zarr_abort("argument", "a stars object is written as a group: give `location`, not `name`")
  group <- if (inherits(location, "zarr_group")) location else create_zarr(location, zarr_format)$root
  d <- stars::st_dimensions(x)
  dims <- names(d)
  crs <- sf::st_crs(x)
  bounds <- unlist(lapply(dims, function(k) stars_write_dimension(group, x, k)))
  # (xarray shows the variables named in `coordinates` as coordinates)
  others <- c(bounds, if (!is.na(crs)) "spatial_ref")
  for (v in names(x)) {
    val <- x[[v]]
    u <- if (inherits(val, "units")) as.character(units::deparse_unit(val))
    if (inherits(val, "units")) val <- units::drop_units(val)
    val <- array(val, dim(x), stats::setNames(vector("list", length(dims)), dims))
    arr <- as_zarr(val, name = v, location = group)
    if (!is.null(u)) arr$set_attribute("units", u)
    if (!is.na(crs)) arr$set_attribute("grid_mapping", "spatial_ref")
    if (length(others)) arr$set_attribute("coordinates", paste(others, collapse = " "))
  }
  if (!is.na(crs)) {
    ref <- as_zarr(array(0L, 1L, list(spatial_ref_dim = NULL)), name = "spatial_ref", location = group)
    ref$set_attribute("crs_wkt", crs$wkt)
    ref$set_attribute("spatial_ref", crs$wkt)
  }
  if (inherits(location, "zarr_group")) invisible(group) else zarr$new(group$store)
}

# Writes the coordinate variable of dimension `k` of `x`, and its bounds
# where the dimension has cells or intervals; returns the name of the
# bounds variable (NULL for none).
stars_write_dimension <- function(group, x, k) {
  dim1 <- function(v, nm) structure(v, dim = length(v), dimnames = stats::setNames(list(NULL), nm))
  dk <- stars::st_dimensions(x)[[k]]
  timed <- is.character(dk$refsys) && dk$refsys %in% c("POSIXct", "Date")
  # (times name the start of their cells, as stars has them; numbers the centres)
  vals <- if (timed) stars::st_get_dimension_values(x, k, where = "start") else
    stars::st_get_dimension_values(x, k, center = TRUE)
  if (inherits(vals, "intervals")) vals <- vals$start
  coord <- as_zarr(dim1(vals, k), name = k, location = group)
  cells <- is.na(dk$point) || !dk$point
  intervals <- inherits(dk$values, "intervals") || (is.null(dk$values) && !is.na(dk$delta))
  if (!cells || !intervals) return(NULL)
  start <- stars::st_get_dimension_values(x, k, where = "start")
  end <- stars::st_get_dimension_values(x, k, where = "end")
  b <- cbind(start, end)
  if (inherits(start, "POSIXct")) b <- .POSIXct(b, tz = "UTC")
  dimnames(b) <- list(NULL, NULL)
  names(dimnames(b)) <- c(k, "bounds")
  bname <- paste0(k, "_bounds")
  as_zarr(b, name = bname, location = group)
  coord$set_attribute("bounds", bname)
  bname
}

# Whether st_as_stars() gives a proxy: as asked, else when the cube's `n`
# elements (per variable) take more than the set size as doubles.
stars_want_proxy <- function(proxy, arrays, n) {
  if (!is.logical(proxy) || length(proxy) != 1L) zarr_abort("argument", "`proxy` must be TRUE, FALSE or NA")
  located <- nzchar(store_location(arrays[[1L]]$store))
  if (is.na(proxy)) proxy <- located && n * 8 * length(arrays) > getOption("zarr.stars_proxy_bytes", 1e9)
  if (proxy && !located) {
    zarr_abort("unsupported", sprintf("%s is in a store in memory: a stars proxy needs a store with a location",
                                      array_what(arrays[[1L]])))
  }
  proxy
}

# A stars proxy of `arrays`: the dimensions of the whole variables, cut to
# the region `sel` (in the engine's form) as stars' `[` cuts a proxy
# (`from` and `to`, and the values between them), and per variable
# "<location>#<path>", which it prints.
stars_proxy_of <- function(arrays, names, group, sel) {
  dims <- stars_dimensions_of(arrays, names, group, lapply(arrays[[1L]]$shape, engine_whole))
  for (d in seq_along(names)) {
    # (of the types stars gives them: `from` double, `to` integer)
    from <- sel[[d]][1L] + 1
    to <- as.integer(sel[[d]][1L] + sel[[d]][2L])
    v <- dims[[d]]$values
    if (inherits(v, "intervals")) v <- stars::make_intervals(v$start[from:to], v$end[from:to])
    else if (!is.null(v)) v <- v[from:to]
    if (!is.null(v)) dims[[d]]$values <- v
    dims[[d]]$from <- from
    dims[[d]]$to <- to
  }
  files <- lapply(arrays, function(a) paste0(store_location(a$store), "#", a$path))
  structure(files, dimensions = dims, NA_value = NA_real_, resolutions = NULL,
            class = c("zarr_stars_proxy", "stars_proxy", "stars"))
}

#' @rdname zarr_stars
#' @exportS3Method stars::st_as_stars
st_as_stars.zarr_stars_proxy <- function(.x, ..., downsample = 0) { # nolint: object_name_linter.
  stars_need()
  d <- stars::st_dimensions(.x)
  sel <- lapply(d, function(k) c(k$from, k$to))
  arrays <- lapply(unclass(.x), function(f) {
    at <- regexpr("#[^#]*$", f)
    open_zarr(substr(f, 1L, at - 1L), read_only = TRUE)[[substr(f, at + 1L, nchar(f))]]
  })
  cube <- stars_cube(arrays, names(d), arrays[[1L]]$parent, sel, proxy = FALSE)
  cube <- stars_downsample(cube, downsample)
  # (the operations stars collected on the proxy, applied as stars does)
  calls <- attr(.x, "call_list")
  if (length(calls)) cube <- utils::getFromNamespace("process_call_list", "stars")(cube, calls)
  cube
}

# Every `downsample + 1`-th element along the raster's x and y.
stars_downsample <- function(cube, downsample) {
  ds <- rep(as.numeric(downsample), length.out = 2L)
  if (all(ds <= 0)) return(cube)
  xy <- attr(stars::st_dimensions(cube), "raster")$dimensions
  idx <- lapply(dim(cube), seq_len)
  for (k in 1:2) if (!is.na(xy[k]) && ds[k] > 0) idx[[xy[k]]] <- seq(1L, dim(cube)[[xy[k]]], by = ds[k] + 1)
  do.call(`[`, c(list(cube, TRUE), unname(idx)))
}

# stars' `[` of a proxy builds a new plain stars_proxy when it picks
# attributes (and for `x[, 1:2, ]`, as all attributes): the class that
# reads it through this package is put back.
#' @export
`[.zarr_stars_proxy` <- function(x, i = TRUE, ..., drop = FALSE, crop = TRUE) {
  out <- NextMethod()
  if (inherits(out, "stars_proxy") && !inherits(out, "zarr_stars_proxy")) {
    class(out) <- c("zarr_stars_proxy", class(out))
  }
  out
}
