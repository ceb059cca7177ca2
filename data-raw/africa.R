# Generates inst/extdata/africa.zarr, the example store of the package.
#
# The data are SYNTHETIC: a plausible-looking field of monthly mean
# near-surface air temperature over Africa, made up here from a few analytic
# ingredients (a land mask built from hand-drawn polygons and ellipses, a
# latitude gradient, a seasonal cycle by hemisphere, elevation-like bumps with
# a lapse rate, a cold upwelling coast and a little deterministic noise). No
# observed or modelled data are used. Cells over the sea are NA (stored as the
# fill value NaN).
#
# Layout of the array `tas` (R and Zarr dimension order, as netCDF files of
# (time, lat, lon) read into R):
#   dimension 1, "lon"  : 160 longitudes, 18W to 54E, cell centres every 0.45
#                         degrees, west to east
#   dimension 2, "lat"  : 260 latitudes, 39S to 39N, cell centres every 0.3
#                         degrees, south to north
#   dimension 3, "month": the 12 calendar months, January to December
#
# Run from the root of the repository, with the package installed:
#   R_LIBS=.rlib Rscript data-raw/africa.R

library(zarr)

if (!file.exists("DESCRIPTION") || !dir.exists("data-raw")) {
  stop("run this script from the root of the zarr repository")
}
out <- file.path("inst", "extdata", "africa.zarr")

# ---- The grid ----------------------------------------------------------------

n_lon <- 160L
n_lat <- 260L
lon <- -18 + 0.45 * (seq_len(n_lon) - 0.5) # cell centres
lat <- -39 + 0.30 * (seq_len(n_lat) - 0.5)
grid_lon <- matrix(lon, n_lon, n_lat) # lon[i] in row i
grid_lat <- matrix(lat, n_lon, n_lat, byrow = TRUE) # lat[j] in column j

# ---- Land mask -----------------------------------------------------------------

# Whether the points (x, y) lie inside the polygon `p` (a two-column matrix of
# lon, lat vertices; the polygon is closed implicitly): ray casting.
in_polygon <- function(x, y, p) {
  inside <- logical(length(x))
  n <- nrow(p)
  j <- n
  for (i in seq_len(n)) {
    xi <- p[i, 1]
    yi <- p[i, 2]
    xj <- p[j, 1]
    yj <- p[j, 2]
    crosses <- (yi > y) != (yj > y) &
      x < (xj - xi) * (y - yi) / (yj - yi) + xi
    inside <- xor(inside, crosses)
    j <- i
  }
  inside
}

in_ellipse <- function(x, y, x0, y0, a, b) ((x - x0) / a)^2 + ((y - y0) / b)^2 <= 1

poly <- function(...) matrix(c(...), ncol = 2, byrow = TRUE)

# Rough outlines, vertices as (lon, lat), drawn by hand for this example.
africa <- poly(
  -5.8, 35.8,   -2.0, 35.1,    3.0, 36.8,   10.0, 37.3,   11.0, 36.8,
  10.2, 34.5,   10.1, 33.8,   11.5, 33.1,   15.2, 32.3,   19.0, 30.3,
  20.1, 32.0,   22.5, 32.8,   25.2, 31.6,   29.9, 31.2,   32.3, 31.3,
  32.6, 29.9,   33.6, 27.2,   35.6, 23.9,   37.2, 21.0,   37.4, 18.7,
  38.6, 17.8,   39.7, 15.1,   41.6, 13.5,   43.3, 12.5,   43.1, 11.6,
  44.0, 10.4,   45.0, 10.4,   48.0, 11.2,   51.2, 11.8,   51.3, 10.4,
  49.8,  8.0,   48.5,  5.3,   45.3,  2.0,   42.5, -0.4,   40.9, -2.3,
  39.7, -4.0,   39.3, -6.8,   39.7, -10.2,  40.5, -10.5,  40.7, -14.5,
  39.0, -17.0,  34.9, -19.8,  35.5, -22.0,  35.4, -23.9,  32.6, -26.0,
  31.0, -29.9,  27.9, -33.0,  25.6, -34.0,  20.0, -34.8,  18.4, -34.2,
  18.0, -32.5,  16.5, -28.6,  15.2, -26.6,  14.5, -22.9,  12.0, -18.0,
  11.8, -16.0,  13.4, -12.6,  13.2, -8.8,   12.3, -6.0,   11.8, -4.8,
   8.7, -0.7,    9.4,  1.0,    9.7,  4.0,    8.5,  4.5,    6.0,  4.3,
   3.4,  6.4,   -0.2,  5.6,   -2.1,  4.7,   -4.0,  5.2,   -7.5,  4.4,
 -10.8,  6.3,  -13.2,  8.5,  -15.0, 10.9,  -16.7, 12.4,  -17.5, 14.7,
 -16.5, 16.1,  -16.0, 18.1,  -16.5, 19.5,  -17.05, 20.8, -16.2, 23.7,
 -13.0, 27.9,   -9.6, 30.4,   -7.6, 33.6,   -6.8, 34.0
)
# Sinai, the Levant, southern Anatolia, Arabia and southern Iran.
asia <- poly(
  32.3, 31.3,   34.2, 31.3,   35.0, 32.8,   35.5, 33.9,   35.8, 35.5,
  36.0, 36.8,   34.6, 36.8,   32.5, 36.1,   30.6, 36.8,   28.0, 36.7,
  27.3, 37.9,   26.5, 39.2,   26.5, 40.0,   60.0, 40.0,   60.0, 25.3,
  56.3, 27.2,   54.0, 26.6,   51.4, 27.9,   50.3, 29.3,   48.5, 30.0,
  48.0, 29.3,   50.1, 26.3,   51.6, 25.9,   51.6, 24.6,   54.0, 24.1,
  55.3, 25.3,   56.3, 26.2,   56.4, 24.9,   56.9, 24.0,   58.6, 23.6,
  59.8, 22.5,   58.6, 20.4,   57.8, 19.0,   56.6, 18.0,   55.0, 17.0,
  52.2, 15.6,   48.5, 14.0,   45.0, 12.8,   43.4, 12.7,   42.8, 14.8,
  42.6, 16.5,   40.8, 19.5,   39.2, 21.5,   38.1, 24.1,   36.5, 26.0,
  35.0, 28.1,   34.9, 29.5,   34.3, 28.0,   33.6, 28.5,   32.6, 29.9
)
caspian <- poly(
  48.9, 39.5,   48.9, 37.6,   50.4, 37.1,   53.9, 36.9,   53.8, 38.5,
  53.2, 39.5
)
iberia <- poly(
  -9.5, 39.5,   -9.5, 38.7,   -8.8, 38.5,   -8.9, 37.9,   -9.0, 37.0,
  -7.4, 37.2,   -6.3, 36.5,   -5.6, 36.0,   -4.4, 36.7,   -2.0, 36.7,
  -0.7, 37.6,   -0.5, 38.3,    0.2, 38.7,   -0.3, 39.5
)
greece <- poly(
  20.2, 39.5,   21.1, 38.3,   21.6, 36.9,   22.5, 36.4,   23.2, 36.5,
  22.9, 37.5,   24.0, 38.2,   23.0, 39.5
)
sicily <- poly(12.4, 38.1, 15.6, 38.3, 15.1, 36.7, 14.5, 36.7, 12.5, 37.6)
calabria <- poly(15.6, 38.0, 16.6, 38.5, 17.2, 39.0, 16.6, 39.5, 15.8, 39.5)
sardinia <- poly(8.4, 39.5, 8.4, 38.9, 9.0, 38.9, 9.6, 39.2, 9.7, 39.5)
madagascar <- poly(
  49.3, -12.0,  50.5, -15.5,  49.8, -17.0,  48.0, -22.0,  47.1, -24.9,
  45.2, -25.6,  44.0, -24.5,  43.3, -22.0,  44.4, -20.0,  44.0, -17.3,
  46.3, -15.8,  48.0, -13.6
)

land <- Reduce(`|`, lapply(list(africa, asia, iberia, greece, sicily, calabria, sardinia, madagascar),
                           function(p) in_polygon(grid_lon, grid_lat, p))) &
  !in_polygon(grid_lon, grid_lat, caspian)
# Islands as ellipses: lon, lat of the centre, semi-axes in degrees.
islands <- rbind(
  crete    = c(24.9, 35.25, 1.40, 0.30),
  cyprus   = c(33.3, 35.05, 1.20, 0.45),
  tenerife = c(-16.6, 28.30, 0.30, 0.25),
  canaria  = c(-15.6, 27.95, 0.28, 0.25),
  fuerte   = c(-14.0, 28.40, 0.45, 0.30),
  bioko    = c(8.7, 3.50, 0.30, 0.35),
  socotra  = c(53.9, 12.45, 0.70, 0.25),
  comoros  = c(43.4, -11.70, 0.30, 0.30)
)
for (k in seq_len(nrow(islands))) {
  e <- islands[k, ]
  land <- land | in_ellipse(grid_lon, grid_lat, e[1], e[2], e[3], e[4])
}

# ---- Temperature -------------------------------------------------------------

bump <- function(x0, y0, sx, sy, h) h * exp(-0.5 * (((grid_lon - x0) / sx)^2 + ((grid_lat - y0) / sy)^2))

# Elevation in metres: a low base plus highlands and mountain ranges, each a
# Gaussian bump (lon, lat of the centre, spread in lon and lat, height).
highlands <- rbind(
  ethiopia    = c(39.0,   9.0, 3.0, 4.0, 2000),
  kenya       = c(36.5,  -2.0, 3.0, 3.0, 1300),
  rwanda      = c(29.5,  -2.0, 1.5, 1.5, 1300),
  highveld    = c(27.0, -27.0, 5.0, 4.0, 1200),
  drakensberg = c(29.5, -29.5, 1.0, 1.5,  900),
  bie         = c(16.0, -12.0, 3.0, 3.0, 1100),
  zambia      = c(30.0, -14.0, 5.0, 4.0,  800),
  atlas       = c(-5.5,  31.5, 4.0, 1.2, 1800),
  ahaggar     = c(5.5,   23.3, 1.5, 1.5, 1200),
  tibesti     = c(18.5,  21.0, 1.2, 1.2, 1400),
  cameroon    = c(10.5,   6.0, 1.0, 1.5,  900),
  madagascar  = c(47.0, -19.0, 1.0, 3.0, 1100),
  yemen       = c(44.0,  15.0, 1.2, 1.5, 2000),
  iran        = c(52.0,  32.0, 5.0, 3.0, 1400),
  anatolia    = c(34.0,  39.0, 4.0, 1.5, 1000),
  meseta      = c(-4.0,  39.5, 3.0, 1.0,  500)
)
elevation <- 300
for (k in seq_len(nrow(highlands))) elevation <- elevation + do.call(bump, as.list(highlands[k, ]))

# Annual mean at sea level: warm tropics, cooler towards 40 degrees, an extra
# hot Sahara and Arabia, the cold Benguela coast.
t_annual <- 27.5 - 13 * (abs(grid_lat) / 39)^2 +
  bump(12.0, 22.0, 16.0, 6.0, 3.0) +
  bump(47.0, 23.0,  8.0, 5.0, 2.5) +
  bump(12.5, -22.0, 2.5, 7.0, -3.5) +
  bump(-15.0, 22.0, 2.0, 6.0, -2.0)

# Seasonal amplitude: weak near the equator, strong in the subtropical
# interiors, damped in the (more maritime) south; warmest in July in the north
# and in January in the south.
amplitude <- 0.8 + 8.5 * pmin(1, abs(grid_lat) / 30)^1.5 * ifelse(grid_lat > 0, 1, 0.6)
hemisphere <- tanh(grid_lat / 4)
month <- 1:12

# Deterministic noise: a smooth random field fixed per cell (local climate
# "patchiness", a 3 x 3 moving average of white noise) plus a little monthly
# jitter.
set.seed(20240601)
smooth3 <- function(x) {
  n1 <- nrow(x)
  n2 <- ncol(x)
  pad <- matrix(0, n1 + 2L, n2 + 2L)
  pad[2:(n1 + 1L), 2:(n2 + 1L)] <- x
  out <- matrix(0, n1, n2)
  for (di in 0:2) for (dj in 0:2) out <- out + pad[(1:n1) + di, (1:n2) + dj]
  out / 9
}
patchiness <- smooth3(matrix(rnorm(n_lon * n_lat, sd = 1.2), n_lon, n_lat))

tas <- array(NA_real_, c(n_lon, n_lat, 12L))
for (m in month) {
  season <- cos(2 * pi * (m - 7) / 12)
  field <- t_annual + hemisphere * amplitude * season - 6.5 * elevation / 1000 +
    patchiness + rnorm(n_lon * n_lat, sd = 0.1)
  field[!land] <- NA
  tas[, , m] <- round(field, 1)
}

# ---- The store ---------------------------------------------------------------

unlink(out, recursive = TRUE)
dir.create(dirname(out), recursive = TRUE, showWarnings = FALSE)
z <- create_zarr(out)

root <- z[["/"]]
root$set_attribute("title", "Synthetic monthly near-surface air temperature over Africa")
root$set_attribute("institution", "zarr R package")
root$set_attribute("source", "synthetic field generated by data-raw/africa.R")
root$set_attribute("comment", paste(
  "Not observed or modelled data: an analytic land mask, latitude gradient, seasonal cycle,",
  "elevation-like bumps and deterministic noise. Array tas: dimension 1 longitude 18W-54E",
  "(0.45 degree cells, west to east), dimension 2 latitude 39S-39N (0.3 degree cells,",
  "south to north), dimension 3 calendar month. Cells over the sea are NA."
))
root$set_attribute("contact", "see the package DESCRIPTION")

b <- define_array("float32", c(n_lon, n_lat, 12L))
b$chunk_shape <- c(80, 65, 12)
b$remove_codec("zstd")
b$add_codec("blosc", list(cname = "zstd", clevel = 5L, shuffle = "shuffle"))
stopifnot(identical(vapply(b$codecs, `[[`, "", "name"), c("transpose", "bytes", "blosc")))
meta <- b$metadata()
meta$dimension_names <- list("lon", "lat", "month")
meta$attributes <- list(long_name = "Near-surface air temperature", units = "degC")

arr <- z$add_array("/", "tas", meta)
arr$write(tas)

# ---- Check -------------------------------------------------------------------

back <- unname(open_zarr(out, read_only = TRUE)[["/tas"]][]) # dimnames from dimension_names
stopifnot(identical(dim(back), dim(tas)),
          identical(is.na(back), is.na(tas)),
          max(abs(back - tas), na.rm = TRUE) < 1e-5)
files <- list.files(out, recursive = TRUE, all.files = TRUE)
cat(sprintf("%s: %d files, %.0f KB; %.1f%% of the cells NA; tas from %.1f to %.1f degC\n",
            out, length(files), sum(file.size(file.path(out, files))) / 1024,
            100 * mean(is.na(tas)), min(tas, na.rm = TRUE), max(tas, na.rm = TRUE)))
