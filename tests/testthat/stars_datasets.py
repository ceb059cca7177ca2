"""Data cubes written by xarray for the stars tests (test-stars.R).

Usage: python stars_datasets.py OUTDIR
       python stars_datasets.py --read STORE OUT.json

The first form writes cube-v<format>-<plain|bounds>.zarr (Zarr formats 2
and 3; zarr-python 2 writes format 2 only): variables tas (time, lat, lon;
units K; a grid mapping naming EPSG:4326) and pr (the same dimensions),
with coordinate variables time (6-hourly), lat (regular) and lon
(irregular), and in the "bounds" stores CF bounds of time, lat and lon.
OUTDIR/expected.json holds what xarray.open_zarr() shows of each store.

Both forms describe a store as
  {"dims": {var: [dim, ...]}, "coords": {name: values},
   "values": {var: values in C order, NaN as null}}
with times as nanoseconds since 1970 (integers) and numbers as floats.
"""

import json
import os
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr

warnings.simplefilter("ignore")
ZARR3 = int(zarr.__version__.split(".")[0]) >= 3

WGS84 = ('GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],'
         'PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4326"]]')


def cube(bounds):
    time = pd.date_range("2001-03-01", periods=4, freq="6h")
    lat = np.array([-10.0, 0.0, 10.0])
    lon = np.array([0.0, 10.0, 25.0, 45.0, 70.0])
    tas = (np.arange(60, dtype="float32").reshape(4, 3, 5) / 2 + 250).astype("float32")
    tas[2, 1, 3] = np.nan
    pr = np.linspace(0, 1, 60).reshape(4, 3, 5)
    ds = xr.Dataset(
        {
            "tas": (("time", "lat", "lon"), tas, {"units": "K", "grid_mapping": "crs"}),
            "pr": (("time", "lat", "lon"), pr),
            "crs": ((), np.int32(0), {"crs_wkt": WGS84}),
        },
        coords={"time": time, "lat": ("lat", lat, {"units": "degrees_north"}),
                "lon": ("lon", lon, {"units": "degrees_east"})},
    )
    if bounds:
        edges = np.array([-5.0, 5.0, 17.5, 35.0, 57.5, 82.5])
        ds["lon_bnds"] = (("lon", "nv"), np.stack([edges[:-1], edges[1:]], axis=1))
        ds["lat_bnds"] = (("lat", "nv"), np.stack([lat - 5, lat + 5], axis=1))
        ds["time_bnds"] = (("time", "nv"), np.stack([time.values, (time + pd.Timedelta("6h")).values], axis=1))
        ds = ds.set_coords(["lon_bnds", "lat_bnds", "time_bnds"])
        for c in ("lon", "lat", "time"):
            ds[c].attrs["bounds"] = c + "_bnds"
    return ds


def values(a):
    a = np.asarray(a)
    flat = a.ravel(order="C")
    if flat.dtype.kind == "M":
        return [int(x) for x in flat.astype("datetime64[ns]").view("int64")]
    return [None if np.isnan(x) else float(x) for x in flat.astype("float64")]


def describe(path):
    ds = xr.open_zarr(path)
    data = [v for v in ds.data_vars if ds[v].ndim > 0]
    return {
        "dims": {v: list(ds[v].dims) for v in data},
        "coords": {c: values(ds[c].values) for c in ds.coords},
        "values": {v: values(ds[v].values) for v in data},
        "attrs": {v: {k: str(x) for k, x in ds[v].attrs.items()} for v in data},
    }


def main():
    if sys.argv[1] == "--read":
        with open(sys.argv[3], "w") as f:
            json.dump(describe(sys.argv[2]), f)
        return
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    expected = {}
    for fmt in ([2, 3] if ZARR3 else [2]):
        for bounds in (False, True):
            name = "cube-v%d-%s.zarr" % (fmt, "bounds" if bounds else "plain")
            path = os.path.join(outdir, name)
            kw = {"zarr_format": fmt} if ZARR3 else {}
            cube(bounds).to_zarr(path, mode="w", **kw)
            expected[name] = describe(path)
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
