# Real reference sets for the tests of zarr_refstore, made the way users
# make them: netCDF4 writes a NetCDF4/HDF5 file, kerchunk translates it to
# JSON references and fsspec writes Parquet references (fastparquet and
# pyarrow engines). These Python packages are installed from PyPI into the
# venv of helper-python.R (ZARR_TEST_VENV) on first use and reused
# afterwards. As there, a test is skipped only when there is no Python; a
# failing pip install fails the test with pip's output.

kerchunk_requirements <- c("netCDF4", "h5py", "kerchunk>=0.2.8", "fsspec", "ujson",
                           "fastparquet", "pyarrow")
kerchunk_imports <- "import netCDF4, h5py, kerchunk.hdf, kerchunk.df, fsspec, ujson, fastparquet, pyarrow"

# Install `requirements` (pip specifiers) into the venv of python_zarr()
# unless `imports` (a Python statement) already runs there; the result is
# cached for the session under `id`. Returns the venv's Python.
python_with_packages <- function(id, requirements, imports) {
  py <- python_zarr()
  if (isTRUE(python_cache$extras[[id]])) return(py)
  if (run_python_command(py, c("-c", imports))$status != 0L) {
    res <- run_python_command(py, c("-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                                    requirements))
    check <- run_python_command(py, c("-c", imports))
    if (res$status != 0L || check$status != 0L) {
      stop(sprintf("could not install %s into the venv of %s:\n%s\n%s", paste(requirements, collapse = " "),
                   py, res$output, check$output), call. = FALSE)
    }
    # the install must not have broken zarr-python for the other tests
    if (!venv_has_zarr(py)) {
      stop("installing ", paste(requirements, collapse = " "), " broke zarr-python", call. = FALSE)
    }
  }
  python_cache$extras[[id]] <- TRUE
  py
}

# A Python with netCDF4, h5py, kerchunk, fsspec, fastparquet and pyarrow.
python_kerchunk <- function() {
  if (is.null(python_cache$python) && !venv_has_zarr(venv_python_path(python_venv_dir())) &&
        !nzchar(system_python())) {
    testthat::skip("Python 3.11 or later (python3) is not available: kerchunk reference sets are not tested")
  }
  python_with_packages("kerchunk", kerchunk_requirements, kerchunk_imports)
}

# The fixture script: argv[1] the output folder. It writes there
#   data.nc          NetCDF4 (HDF5) file: float32 2-d and 3-d, chunked and
#                    zlib-compressed without shuffle (so kerchunk emits a zlib
#                    codec), int16 with a _FillValue, float32 with a
#                    _FillValue, int64 along an unlimited dimension, float
#                    coordinates, a scalar
#   shuffled.nc      one variable with netCDF4's default for zlib=True
#                    (shuffle on): kerchunk emits a "shuffle" filter
#   refs_abs.json    kerchunk refs, absolute target path, chunks under 100
#                    bytes inline (base64)
#   refs_rel.json    kerchunk refs, target "data.nc" (relative), none inline
#   refs_url.json    kerchunk refs, target a file:// URL, some inline
#   refs_shuffled.json  kerchunk refs of shuffled.nc
#   refs_fp.parq/    Parquet refs (kerchunk.df.refs_to_dataframe, fastparquet)
#                    of refs_abs.json, 10 references per file
#   refs_pa.parq/    Parquet refs (fsspec LazyReferenceMapper, pyarrow) of
#                    refs_rel.json, 10 references per file
#   data.h5          HDF5 file written with h5py: a big-endian float64 array
#                    in a group and an int32 array, gzip-compressed
#   refs_h5.json     kerchunk refs of data.h5
#   expected/        per file and variable, <file>/<var>.bin: the values
#                    netCDF4 (auto mask and scale off) or h5py reads, C order,
#                    little-endian; and manifest.json describing them
kerchunk_script <- '
import json, os, sys
import numpy as np
import netCDF4
import h5py
import ujson
import kerchunk.hdf
import kerchunk.df
from fsspec.implementations.reference import LazyReferenceMapper

out = os.path.abspath(sys.argv[1])
nc = os.path.join(out, "data.nc")
with netCDF4.Dataset(nc, "w", format="NETCDF4") as ds:
    ds.title = "kerchunk fixture"
    ds.createDimension("time", 6)
    ds.createDimension("lat", 10)
    ds.createDimension("lon", 12)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = "hours since 2000-01-01"
    t[:] = np.arange(6) * 1.5 + 0.125
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat[:] = np.linspace(-45, 45, 10).astype("f4")
    a = ds.createVariable("t2m", "f4", ("lat", "lon"), chunksizes=(4, 5), zlib=True, complevel=4,
                          shuffle=False)
    a.units = "K"
    a[:] = (np.arange(120).reshape(10, 12) * 0.1 + 250).astype("f4")
    b = ds.createVariable("temp", "f4", ("time", "lat", "lon"), chunksizes=(2, 4, 5), zlib=True,
                          shuffle=False)
    b[:] = (np.sin(np.arange(720)) * 1e3).reshape(6, 10, 12).astype("f4")
    c = ds.createVariable("counts", "i2", ("lat", "lon"), fill_value=-999)
    c.set_auto_maskandscale(False)
    v = (np.arange(120).reshape(10, 12) * 271 - 16000).astype("i2")
    v[3, 7] = -999
    c[:] = v
    # a CF grid mapping: a scalar variable
    crs = ds.createVariable("crs", "i4", ())
    crs.grid_mapping_name = "latitude_longitude"
    crs.assignValue(4326)
    # a float _FillValue, masked once
    p = ds.createVariable("precip", "f4", ("time", "lat"), fill_value=-9999.0, zlib=True, shuffle=False,
                          chunksizes=(3, 5))
    pv = np.ma.masked_array((np.arange(60).reshape(6, 10) * 0.5).astype("f4"))
    pv[4, 2] = np.ma.masked
    p[:] = pv
    # int64 along an unlimited dimension
    ds.createDimension("rec", None)
    n = ds.createVariable("ids", "i8", ("rec", "lon"), chunksizes=(2, 12))
    n[0:5, :] = np.arange(60).reshape(5, 12) * 2**33 - 2**60
shuffled = os.path.join(out, "shuffled.nc")
with netCDF4.Dataset(shuffled, "w", format="NETCDF4") as ds:
    ds.createDimension("y", 8)
    ds.createDimension("x", 9)
    s = ds.createVariable("sst", "f4", ("y", "x"), chunksizes=(4, 4), zlib=True)
    s[:] = (np.arange(72).reshape(8, 9) * 0.5 + 270).astype("f4")

# kerchunk writes the target URL as given: the path or URL it opens, or
# `url` beside an open file.
def translate(h5f, url=None, **kw):
    return kerchunk.hdf.SingleHdf5ToZarr(h5f, url, **kw).translate()

def dump(refs, name):
    with open(os.path.join(out, name), "w") as f:
        ujson.dump(refs, f)

refs_abs = translate(nc, inline_threshold=100)
dump(refs_abs, "refs_abs.json")
with open(nc, "rb") as f:
    refs_rel = translate(f, "data.nc", inline_threshold=0)
dump(refs_rel, "refs_rel.json")
dump(translate("file://" + nc, inline_threshold=100), "refs_url.json")
dump(translate(shuffled, inline_threshold=0), "refs_shuffled.json")
kerchunk.df.refs_to_dataframe(refs_abs, os.path.join(out, "refs_fp.parq"), record_size=10)
lz = LazyReferenceMapper.create(os.path.join(out, "refs_pa.parq"), record_size=10, engine="pyarrow")
for k in sorted(refs_rel["refs"]):
    lz[k] = refs_rel["refs"][k]
lz.flush()

h5 = os.path.join(out, "data.h5")
with h5py.File(h5, "w") as f:
    g = f.create_group("grp")
    g.attrs["note"] = "h5py"
    g.create_dataset("be", data=(np.arange(63).reshape(7, 9) / 7 - 3).astype(">f8"), chunks=(3, 4),
                     compression="gzip", compression_opts=6)
    f.create_dataset("ints", data=np.arange(50, dtype="<i4") * 40503 - 999999, chunks=(16,),
                     compression="gzip", fillvalue=-1)
dump(translate(h5, inline_threshold=0), "refs_h5.json")

def expected_nc(path, values):
    with netCDF4.Dataset(path) as ds:
        for name, var in ds.variables.items():
            var.set_auto_maskandscale(False)
            fill = var.getncattr("_FillValue").item() if "_FillValue" in var.ncattrs() else None
            attrs = {k: var.getncattr(k) for k in var.ncattrs() if k != "_FillValue"}
            values[name] = (var[...], list(var.dimensions), fill, attrs)

def expected_h5(path, values):
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            values[name] = (obj[...], [], obj.fillvalue.item(), {})
    with h5py.File(path, "r") as f:
        f.visititems(visit)

manifest = {}
for path, read in ((nc, expected_nc), (shuffled, expected_nc), (h5, expected_h5)):
    file = os.path.basename(path)
    values = {}
    read(path, values)
    manifest[file] = {}
    for name, (v, dims, fill, attrs) in values.items():
        v = np.asarray(v).copy(order="C")
        bin_path = os.path.join(out, "expected", file, name + ".bin")
        os.makedirs(os.path.dirname(bin_path), exist_ok=True)
        v.astype(v.dtype.newbyteorder("<")).tofile(bin_path)
        manifest[file][name] = {"dtype": v.dtype.name, "shape": list(v.shape), "dims": dims, "fill": fill,
                                "attrs": attrs}
with open(os.path.join(out, "expected", "manifest.json"), "w") as f:
    json.dump(manifest, f, default=lambda x: x.item())
'

# The folder of the fixture files, made once per test run.
kerchunk_fixture <- local({
  dir <- NULL
  function() {
    if (!is.null(dir)) return(dir)
    py <- python_kerchunk()
    d <- tempfile("kerchunk-")
    dir.create(d)
    withr::defer(unlink(d, recursive = TRUE), envir = testthat::teardown_env())
    script <- file.path(d, "make_fixture.py")
    writeLines(kerchunk_script, script)
    res <- run_python_command(py, c(script, d))
    if (res$status != 0L || !file.exists(file.path(d, "expected", "manifest.json"))) {
      stop("the kerchunk fixture script failed:\n", res$output, call. = FALSE)
    }
    dir <<- normalizePath(d)
    dir
  }
})

# The values Python read (netCDF4, auto mask and scale off; h5py) of
# variable `name` of the file `file`, as R reads the Zarr array: an R array
# of its shape (one-dimensional too), values equal to the fill value as NA.
kerchunk_expected <- function(dir, file, name) {
  m <- kerchunk_manifest(dir)[[file]][[name]]
  shape <- unlist(m$shape)
  n <- prod(shape)
  path <- file.path(dir, "expected", file, paste0(name, ".bin"))
  v <- switch(m$dtype,
    float32 = readBin(path, "double", n, size = 4, endian = "little"),
    float64 = readBin(path, "double", n, size = 8, endian = "little"),
    int16 = readBin(path, "integer", n, size = 2, signed = TRUE, endian = "little"),
    int32 = readBin(path, "integer", n, size = 4, endian = "little"),
    # bit64's integer64 is a double vector holding the bits of the int64
    int64 = readBin(path, "double", n, size = 8, endian = "little"),
    stop("unexpected dtype ", m$dtype)
  )
  if (!is.null(m$fill)) {
    if (m$dtype == "int64") stop("int64 fill values are not handled here")
    v[v == m$fill] <- NA
  }
  # a scalar is a plain vector of one
  if (length(shape)) v <- aperm(array(v, rev(shape)), rev(seq_along(shape)))
  if (m$dtype == "int64") class(v) <- "integer64"
  v
}

# file -> variable -> list(dtype, shape, dims, fill, attrs).
kerchunk_manifest <- function(dir) {
  jsonlite::fromJSON(file.path(dir, "expected", "manifest.json"), simplifyVector = FALSE)
}
