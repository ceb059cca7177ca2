"""Stores written by xarray (and bare zarr-python) for the CF tests.

Usage: python xarray_datasets.py OUTDIR
       python xarray_datasets.py --read STORE OUT.json

The second form writes what xarray.open_zarr() shows of each variable of
a store (written by R's as_zarr() in the tests) to OUT.json, in the form
below, and under "raw" what zarr-python reads of each array.

Writes, with whatever xarray and zarr-python the interpreter has:
  xr-v<format>-<c|n>.zarr   one dataset with every CF encoding the tests
                            check, per Zarr format and consolidated or not
                            (zarr-python 2 writes format 2 only);
  zp-v<format>.zarr         arrays written by zarr-python alone: its NumPy
                            data types (v3) or object arrays (v2);
  zp-cf-strings-v<format>.zarr  string arrays with CF missing values,
                            written by zarr-python alone;
and OUTDIR/expected.json, what xarray.open_zarr() (its defaults) and
zarr-python show for each variable:
  {store: {variable: {"kind": numpy kind, "dims": [...], "shape": [...],
                      "values": [...], "na": [...]}}}
with values flattened in C order as text: integers as decimal strings,
floats as float.hex() (missing ones as "NaN"), complex as [re, im],
datetime64/timedelta64 as nanoseconds (decimal strings), strings as they
are; `na` says where xarray shows a missing value (NaN, NaT, None).
"""

import json
import math
import os
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import zarr

warnings.simplefilter("ignore")
ZARR3 = int(zarr.__version__.split(".")[0]) >= 3


def dataset():
    time = pd.date_range("1990-01-01", periods=4, freq="6h")
    nan = np.nan
    tas = np.arange(48, dtype="float32").reshape(4, 3, 4) / 4 - 3
    tas[1, 2, 3] = nan
    pr = np.linspace(-1, 1, 48).reshape(4, 3, 4)
    pr[0, 0, 0] = nan
    pr[3, 1, 2] = 0.0
    packed = np.array([[273.15, 280.0, nan], [250.5, 273.15, 300.25],
                       [0.0, 273.16, 200.0], [nan, 310.0, 273.15]])
    ds = xr.Dataset(
        {
            "tas": (("time", "lat", "lon"), tas, {"units": "K"}),
            "pr": (("time", "lat", "lon"), pr),
            "count": (("time", "lat"), np.array([[0, 1, 2], [3, 0, 5], [6, 7, 0], [0, 0, 0]], "int32")),
            "flag": (("lat", "lon"), np.array([[True, False, True, False]] * 3)),
            "i8": (("lon",), np.array([0, -128, 127, 5], "int8")),
            "u8": (("lon",), np.array([0, 255, 1, 7], "uint8")),
            "i16": (("lon",), np.array([0, -32768, 32767, 5], "int16")),
            "u16": (("lon",), np.array([0, 65535, 1, 7], "uint16")),
            "u32": (("lon",), np.array([0, 4294967295, 1, 7], "uint32")),
            "i64": (("lon",), np.array([0, -(2**62), 2**53, 5], "int64")),
            "u64": (("lon",), np.array([0, 2**53, 1, 7], "uint64")),
            "f16": (("lon",), np.array([0.0, 1.5, nan, -2.25], "float16")),
            "c64": (("lon",), np.array([0, 1 + 2j, -1.5j, 3], "complex64")),
            "c128": (("lon",), np.array([0, 1 + 2j, -1.5j, 3], "complex128")),
            "packed": (("time", "lat"), packed, {"long_name": "packed temperature"}),
            "mv": (("lon",), np.array([1.5, nan, 0.0, -3.0], "float32")),
            "fill16": (("lon",), np.array([0, nan, 7, -9], "float64")),
            "su": (("s",), np.array(["abc", "", "zz"])),
            "sb": (("s",), np.array([b"ab", b"", b"xyz"])),
            "so": (("s",), np.array(["abc", "", "\u00e9t\u00e9"], dtype=object)),
            "when": (("s",), np.array(["2000-01-01T12:00", "NaT", "1969-12-31"], "datetime64[ns]")),
            "lag": (("s",), np.array([3600, "NaT", 0], "timedelta64[s]").astype("timedelta64[ns]")),
        },
        coords={
            "time": time,
            "depth": ("depth", np.array([0, 10, 20], "int32"), {"units": "m"}),
            "lat": ("lat", np.array([-10.0, 0.0, 10.0])),
            "lon": ("lon", np.array([0, 90, 180, 270], "int16")),
        },
    )
    ds["tas"].encoding = {"_FillValue": 1e20}
    ds["packed"].encoding = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15,
                             "_FillValue": -32767}
    ds["mv"].encoding = {"missing_value": np.float32(-999.0)}
    ds["fill16"].encoding = {"dtype": "int16", "_FillValue": -9999}
    ds["lag"].encoding = {"units": "seconds"}
    return ds


def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x.hex()


def describe(values, dims):
    a = np.asarray(values)
    flat = a.ravel(order="C")
    kind = flat.dtype.kind
    if kind in "mM":
        na = [bool(x) for x in np.isnat(flat)]
        ints = flat.astype("datetime64[ns]" if kind == "M" else "timedelta64[ns]").view("int64")
        vals = [str(int(x)) for x in ints]
    elif kind == "f":
        na = [bool(x) for x in np.isnan(flat)]
        vals = [enc_float(x) for x in flat]
    elif kind == "c":
        na = [bool(x) for x in np.isnan(flat)]
        vals = [[enc_float(x.real), enc_float(x.imag)] for x in flat]
    elif kind in "iu":
        na = [False] * flat.size
        vals = [str(int(x)) for x in flat]
    elif kind == "b":
        na = [False] * flat.size
        vals = [bool(x) for x in flat]
    elif kind == "S":
        na = [False] * flat.size
        vals = [bytes(x).decode("utf-8") for x in flat]
    elif kind in "OUT":
        # xarray masks a missing string as NaN (v2), its writers as None
        na = [x is None or (isinstance(x, float) and math.isnan(x)) for x in flat]
        vals = ["" if m else str(x) for x, m in zip(flat, na)]
    else:
        raise TypeError("unexpected dtype %s" % flat.dtype)
    return {"kind": kind, "dims": list(dims), "shape": list(a.shape), "values": vals, "na": na}


def write_xarray(ds, outdir, expected):
    formats = [2, 3] if ZARR3 else [2]
    for fmt in formats:
        for consolidated in (True, False):
            name = "xr-v%d-%s.zarr" % (fmt, "c" if consolidated else "n")
            path = os.path.join(outdir, name)
            kw = {"zarr_format": fmt} if ZARR3 else {}
            ds.to_zarr(path, mode="w", consolidated=consolidated, **kw)
            back = xr.open_zarr(path, consolidated=consolidated)
            expected[name] = {v: describe(back[v].values, back[v].dims) for v in back.variables}


def write_zarr_python(outdir, expected):
    if ZARR3:
        name = "zp-v3.zarr"
        root = zarr.open_group(os.path.join(outdir, name), mode="w", zarr_format=3)
        arrays = {
            "dt_s": np.array(["2001-02-03T04:05:06", "NaT", "1960-01-01"], "datetime64[s]"),
            "dt_ns": np.array(["2001-02-03T04:05:06.123456789", "NaT", "1970-01-01"], "datetime64[ns]"),
            "dt_day": np.array(["2001-02-03", "NaT", "1969-12-31"], "datetime64[D]"),
            "td_ms": np.array([1500, "NaT", -2], "timedelta64[ms]"),
            "u5": np.array(["hello", "", "\u00e9"], "<U5"),
            "s4": np.array([b"abcd", b"", b"x"], "S4"),
        }
        for key, a in arrays.items():
            z = root.create_array(key, shape=a.shape, dtype=a.dtype, chunks=(2,))
            z[...] = a
        expected[name] = {k: describe(root[k][...], ["dim_0"]) for k in arrays}
    else:
        from numcodecs import Blosc, VLenUTF8
        name = "zp-v2.zarr"
        root = zarr.open_group(os.path.join(outdir, name), mode="w")
        a = np.array(["abc", "", "x" * 20], dtype=object)
        # zarr-python 2 writes a fill value of 0 for object arrays unless
        # told otherwise, and numcodecs' blosc is its default compressor.
        z = root.create_dataset("obj", shape=a.shape, chunks=(2,), dtype=object, object_codec=VLenUTF8(),
                                compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))
        z[...] = a
        expected[name] = {"obj": describe(root["obj"][...], ["dim_0"])}
        zarr.consolidate_metadata(os.path.join(outdir, name))


def write_cf_strings(outdir, expected):
    """String arrays with CF missing values, written by zarr-python alone
    (xarray writes none), and what xarray.open_zarr() masks in them."""
    values = np.array(["a", "N/A", "", "b", "zz"], dtype=object)
    arrays = {  # name: (fill value, attributes)
        "s_mv": ("", {"missing_value": "N/A"}),
        "s_mvs": ("", {"missing_value": ["N/A", "b"]}),
        "s_fill": ("zz", {"missing_value": "N/A"}),
        "s_none": ("", {}),
    }
    for fmt in [2, 3] if ZARR3 else [2]:
        name = "zp-cf-strings-v%d.zarr" % fmt
        path = os.path.join(outdir, name)
        if ZARR3:
            root = zarr.open_group(path, mode="w", zarr_format=fmt)
        else:
            root = zarr.open_group(path, mode="w")
        for key, (fill, attrs) in arrays.items():
            if ZARR3:
                dims = {"dimension_names": ["x"]} if fmt == 3 else {}
                z = root.create_array(key, shape=values.shape, dtype=str, fill_value=fill, chunks=(5,), **dims)
            else:
                from numcodecs import VLenUTF8
                z = root.create_dataset(key, shape=values.shape, chunks=(5,), dtype=object,
                                        object_codec=VLenUTF8(), fill_value=fill)
            z[...] = values
            z.attrs.update(attrs)
            if fmt == 2:
                z.attrs["_ARRAY_DIMENSIONS"] = ["x"]
        zarr.consolidate_metadata(path)
        ds = xr.open_zarr(path)
        expected[name] = {v: describe(ds[v].values, ds[v].dims) for v in arrays}


def read_store(store, out):
    ds = xr.open_zarr(store)
    seen = {v: describe(ds[v].values, ds[v].dims) for v in ds.variables}
    # zarr-python's own view: the stored values, no CF decoding
    group = zarr.open_group(store, mode="r")
    raw = {k: describe(a[...], []) for k, a in group.arrays()}
    with open(out, "w") as f:
        json.dump({"variables": seen, "raw": raw, "sizes": {k: int(n) for k, n in ds.sizes.items()},
                   "_versions": {"xarray": xr.__version__, "zarr": zarr.__version__}}, f)


def main():
    if sys.argv[1] == "--read":
        read_store(sys.argv[2], sys.argv[3])
        return
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    expected = {}
    write_xarray(dataset(), outdir, expected)
    write_zarr_python(outdir, expected)
    write_cf_strings(outdir, expected)
    expected["_versions"] = {"xarray": xr.__version__, "zarr": zarr.__version__}
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
