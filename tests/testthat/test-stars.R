# Zarr variables as stars data cubes and back (R/stars.R), through stars'
# own API; xarray's view of the same stores is the reference.

skip_if_not_installed("stars")

# A cube in memory: tas (time, lat, lon) in K with a CRS, as stars holds it.
stars_cube_fixture <- function() {
  time <- .POSIXct(as.numeric(as.POSIXct("2001-03-01", tz = "UTC")) + 3600 * c(0, 6, 12, 18), tz = "UTC")
  tas <- array(250 + seq_len(60) / 2, c(4, 3, 5))
  tas[3, 2, 4] <- NA
  d <- stars::st_dimensions(time = time, lat = c(-10, 0, 10), lon = c(0, 10, 20, 30, 40),
                            .raster = c("lon", "lat"), cell_midpoints = c(FALSE, TRUE, TRUE))
  s <- stars::st_as_stars(list(tas = units::set_units(tas, "K"), pr = tas / 1000), dimensions = d)
  sf::st_set_crs(s, 4326)
}

test_that("as_zarr() of a stars object reads back as the same cube", {
  s <- stars_cube_fixture()
  z <- as_zarr(s)
  expect_setequal(z$arrays, c("/tas", "/pr", "/time", "/lat", "/lat_bounds", "/lon", "/lon_bounds",
                              "/spatial_ref", "/time_bounds"))
  expect_identical(z[["/tas"]]$dimension_names, c("time", "lat", "lon"))
  expect_identical(z[["/tas"]]$attributes$units, "K")
  expect_identical(z[["/tas"]]$attributes$grid_mapping, "spatial_ref")
  expect_identical(z[["/lon"]][], c(0, 10, 20, 30, 40))
  expect_identical(z[["/tas"]]$attributes$coordinates, "time_bounds lat_bounds lon_bounds spatial_ref")
  expect_identical(z[["/lat_bounds"]][], array(c(-15, -5, 5, -5, 5, 15), c(3, 2), list(lat = NULL, bounds = NULL)))
  back <- stars::st_as_stars(z)
  expect_identical(names(back), c("pr", "tas"))
  expect_identical(stars::st_dimensions(back)$time, stars::st_dimensions(s)$time)
  expect_identical(stars::st_get_dimension_values(back, "lon", center = TRUE), c(0, 10, 20, 30, 40))
  expect_identical(stars::st_get_dimension_values(back, "lat", center = TRUE), c(-10, 0, 10))
  expect_identical(stars::st_get_dimension_values(back, "time"), stars::st_get_dimension_values(s, "time"))
  expect_identical(units::deparse_unit(back$tas), "K")
  expect_identical(units::drop_units(back$tas), units::drop_units(s$tas))
  expect_identical(back$pr, s$pr)
  expect_identical(sf::st_crs(back)$epsg, 4326L)
  expect_identical(attr(stars::st_dimensions(back), "raster")$dimensions, c("lon", "lat"))
})

test_that("st_as_stars() of an array takes its group's coordinates; of a group, named variables", {
  s <- stars_cube_fixture()
  z <- as_zarr(s)
  one <- stars::st_as_stars(z[["/tas"]])
  expect_identical(names(one), "tas")
  expect_identical(stars::st_dimensions(one), stars::st_dimensions(stars::st_as_stars(z)))
  pr <- stars::st_as_stars(z$root, variables = "pr")
  expect_identical(names(pr), "pr")
  expect_error(stars::st_as_stars(z$root, variables = "nope"), class = "zarr_error_argument", regexp = "nope")
  expect_error(stars::st_as_stars(z$root, variables = c("tas", "lat")), class = "zarr_error_argument",
               regexp = "dimensions")
  expect_error(as_zarr(s, name = "x"), class = "zarr_error_argument", regexp = "`location`")
})

test_that("a selection reads part of the cube, its coordinates and bounds with it", {
  s <- stars_cube_fixture()
  z <- as_zarr(s)
  part <- stars::st_as_stars(z, selection = list(c(2, 3), 2, c(2, 4)))
  expect_identical(dim(part), c(time = 2L, lat = 1L, lon = 3L))
  expect_identical(part$pr, s$pr[2:3, 2, 2:4, drop = FALSE])
  expect_identical(as.numeric(stars::st_get_dimension_values(part, "time")),
                   as.numeric(stars::st_get_dimension_values(s, "time")[2:3]))
  expect_identical(stars::st_get_dimension_values(part, "lon", center = TRUE), c(10, 20, 30))
  lat <- stars::st_dimensions(part)$lat$values
  expect_identical(c(lat$start, lat$end), c(-5, 5))
  expect_error(stars::st_as_stars(z, selection = list(1)), class = "zarr_error_selection")
  expect_error(stars::st_as_stars(z[["/tas"]], selection = list(NULL, NULL, c(4, 9))),
               class = "zarr_error_selection", regexp = "out of bounds")
})

test_that("a large cube is a stars proxy that reads the region it was cut to", {
  path <- file.path(withr::local_tempdir(), "cube.zarr")
  s <- stars_cube_fixture()
  as_zarr(s, location = path)
  z <- open_zarr(path)
  full <- stars::st_as_stars(z, proxy = FALSE)
  p <- stars::st_as_stars(z, proxy = TRUE)
  expect_s3_class(p, "stars_proxy")
  expect_identical(stars::st_dimensions(p), stars::st_dimensions(full))
  expect_identical(unclass(p)$tas, paste0(z$store$root, "#/tas"))
  expect_identical(stars::st_as_stars(p), full)
  # (a range in a variable, as stars evaluates it where `[` was called)
  r <- 2:4
  part <- stars::st_as_stars(p[, 2:3, 1:2, r])
  expect_identical(part$pr, full$pr[2:3, 1:2, 2:4, drop = FALSE])
  expect_identical(stars::st_get_dimension_values(part, "lon", center = TRUE), c(10, 20, 30))
  expect_identical(stars::st_as_stars(p["pr"])$pr, full$pr)
  # operations wait for the read
  m <- stars::st_apply(p, c("lat", "lon"), mean)
  expect_s3_class(m, "stars_proxy")
  expect_equal(as.vector(stars::st_as_stars(m)$pr), as.vector(apply(full$pr, 2:3, mean)))
  expect_identical(dim(stars::st_as_stars(p, downsample = 1)), c(time = 4L, lat = 2L, lon = 3L))
  withr::local_options(list(zarr.stars_proxy_bytes = 100))
  expect_s3_class(stars::st_as_stars(z), "zarr_stars_proxy")
  expect_s3_class(stars::st_as_stars(as_zarr(s)), "stars")
  expect_false(inherits(stars::st_as_stars(as_zarr(s)), "stars_proxy"))
  expect_error(stars::st_as_stars(as_zarr(s), proxy = TRUE), class = "zarr_error_unsupported", regexp = "memory")
  expect_error(stars::st_as_stars(z, proxy = "yes"), class = "zarr_error_argument", regexp = "`proxy`")
})

test_that("dimensions without coordinate variables count 1, 2, ...", {
  z <- as_zarr(array(as.numeric(1:6), c(2, 3), list(a = NULL, b = NULL)), name = "v")
  s <- stars::st_as_stars(z)
  expect_identical(names(stars::st_dimensions(s)), c("a", "b"))
  expect_identical(stars::st_get_dimension_values(s, "b"), c(1, 2, 3))
  expect_identical(s$v, array(as.numeric(1:6), c(2, 3)))
})

test_that("irregular coordinates and bounds give values and intervals", {
  z <- create_zarr()
  invisible(as_zarr(array(c(0, 1, 3, 7), 4L, list(x = NULL)), "x", z$root))
  xb <- as_zarr(array(c(-0.5, 0.5, 2, 5, 0.5, 2, 5, 9), c(4, 2), list(x = NULL, nv = NULL)), "x_bnds", z$root)
  invisible(as_zarr(array(as.numeric(1:4), 4L, list(x = NULL)), "v", z$root))
  s <- stars::st_as_stars(z)
  expect_identical(stars::st_get_dimension_values(s, "x"), c(0, 1, 3, 7))
  z[["/x"]]$set_attribute("bounds", "x_bnds")
  s <- stars::st_as_stars(open_zarr(z$store))
  v <- stars::st_dimensions(s)$x$values
  expect_s3_class(v, "intervals")
  expect_identical(v$start, c(-0.5, 0.5, 2, 5))
  expect_identical(v$end, c(0.5, 2, 5, 9))
  expect_null(xb$attributes$bounds)
})

# The cubes stars_datasets.py writes with xarray, once per session.
stars_xarray_cubes <- function() {
  if (!is.null(xarray_cache$stars_cubes)) return(xarray_cache$stars_cubes)
  py <- python_xarray("zarr3")
  dir <- file.path(tempdir(), "xarray-stars")
  unlink(dir, recursive = TRUE)
  res <- run_python_command(py, c(testthat::test_path("stars_datasets.py"), dir))
  if (res$status != 0L) stop(sprintf("stars_datasets.py failed:\n%s", res$output), call. = FALSE)
  expected <- jsonlite::fromJSON(file.path(dir, "expected.json"), simplifyVector = FALSE)
  xarray_cache$stars_cubes <- list(dir = dir, expected = expected)
  xarray_cache$stars_cubes
}

# xarray's numbers (null for NaN) and times (ns) as R vectors.
xr_numbers <- function(v) vapply(v, function(x) if (is.null(x)) NA_real_ else x, numeric(1))
xr_times <- function(v) .POSIXct(xr_numbers(v) / 1e9, tz = "UTC")

test_that("st_as_stars() of xarray-written stores has the coordinates and times xarray shows", {
  cubes <- stars_xarray_cubes()
  expect_setequal(names(cubes$expected), c("cube-v2-plain.zarr", "cube-v2-bounds.zarr", "cube-v3-plain.zarr",
                                           "cube-v3-bounds.zarr"))
  for (store in names(cubes$expected)) {
    e <- cubes$expected[[store]]
    s <- stars::st_as_stars(open_zarr(file.path(cubes$dir, store)))
    info <- sprintf("store %s", store)
    expect_identical(names(s), c("pr", "tas"), info = info)
    expect_identical(names(stars::st_dimensions(s)), unlist(e$dims$tas), info = info)
    expect_identical(as.numeric(stars::st_get_dimension_values(s, "time", where = "start")),
                     as.numeric(xr_times(e$coords$time)), info = info)
    expect_identical(stars::st_get_dimension_values(s, "lat", center = TRUE), xr_numbers(e$coords$lat), info = info)
    for (v in c("tas", "pr")) {
      x <- as.vector(aperm(units::drop_units(units::as_units(s[[v]])), 3:1))
      expect_identical(x, xr_numbers(e$values[[v]]), info = paste(info, v))
    }
    expect_identical(units::deparse_unit(s$tas), "K", info = info)
    expect_identical(sf::st_crs(s)$epsg, 4326L, info = info)
    if (grepl("bounds", store)) {
      lon <- stars::st_dimensions(s)$lon$values
      bnds <- matrix(xr_numbers(e$coords$lon_bnds), ncol = 2, byrow = TRUE)
      expect_identical(lon$start, bnds[, 1], info = info)
      expect_identical(lon$end, bnds[, 2], info = info)
      tb <- matrix(xr_numbers(e$coords$time_bnds), ncol = 2, byrow = TRUE)
      expect_identical(as.numeric(stars::st_get_dimension_values(s, "time", where = "end")),
                       as.numeric(xr_times(tb[, 2])), info = info)
      expect_false(stars::st_dimensions(s)$time$point, info = info)
    } else {
      expect_identical(stars::st_get_dimension_values(s, "lon"), xr_numbers(e$coords$lon), info = info)
      expect_true(stars::st_dimensions(s)$time$point, info = info)
    }
  }
})

test_that("a stars object written with as_zarr() opens in xarray with the same coordinates", {
  s <- stars_cube_fixture()
  for (fmt in c(2L, 3L)) {
    path <- file.path(withr::local_tempdir(), "cube.zarr")
    as_zarr(s, location = path, zarr_format = fmt)
    py <- python_xarray("zarr3")
    out <- tempfile(fileext = ".json")
    res <- run_python_command(py, c(testthat::test_path("stars_datasets.py"), "--read", path, out))
    expect_identical(res$status, 0L, info = res$output)
    e <- jsonlite::fromJSON(out, simplifyVector = FALSE)
    info <- sprintf("Zarr v%d", fmt)
    expect_identical(unlist(e$dims$tas), c("time", "lat", "lon"), info = info)
    expect_identical(as.numeric(xr_times(e$coords$time)), as.numeric(stars::st_get_dimension_values(s, "time")),
                     info = info)
    expect_identical(xr_numbers(e$coords$lat), c(-10, 0, 10), info = info)
    expect_identical(xr_numbers(e$coords$lon), c(0, 10, 20, 30, 40), info = info)
    expect_identical(xr_numbers(e$coords$lon_bounds), c(-5, 5, 5, 15, 15, 25, 25, 35, 35, 45), info = info)
    expect_identical(xr_numbers(e$values$tas), as.vector(aperm(units::drop_units(s$tas), 3:1)), info = info)
    expect_identical(e$attrs$tas$units, "K", info = info)
    expect_identical(e$attrs$tas$grid_mapping, "spatial_ref", info = info)
  }
})
