# Struct arrays for test-struct.R, with zarr-python 2.18 (Zarr v2 NumPy
# structured dtypes) or 3.4 (the v3 `struct` data type, and v2 from 3.4).
#
#   python struct_arrays.py write ROOT   one store per case under ROOT
#   python struct_arrays.py read PATH    the array at PATH as JSON: each
#                                        field's values (C order), the
#                                        fill value's fields and the dtype
import json
import sys

import numpy as np
import zarr

V2 = zarr.__version__.startswith("2.")
TEXT = ["ab", "c", "", "xyz", "q", "zz", "k"]
UTEXT = ["hi", "\u00e9", "", "z", "yy", "\u00e0b", "."]


def values(dt, n):
    """n records of `dt`, field values from the record's position."""
    x = np.zeros(n, dtype=dt)
    i = np.arange(n)
    for name in dt.names:
        f = dt.fields[name][0]
        base = f.base if f.subdtype else f
        if base.kind == "S":
            v = np.array([TEXT[k % len(TEXT)].encode() for k in i])
        elif base.kind == "U":
            v = np.array([UTEXT[k % len(UTEXT)] for k in i])
        elif base.kind == "b":
            v = i % 3 == 0
        elif base.kind == "c":
            v = i + 1j * (i - 2)
        elif base.kind == "f":
            v = i / 4 + 0.5
        elif base.kind == "V":
            continue
        else:
            v = i * 3 - 4 if base.kind == "i" else i * 5 + 1
        if f.subdtype:
            k = int(np.prod(f.shape))
            v = (np.repeat(np.asarray(v, dtype=float), k).reshape((n,) + f.shape)
                 + np.arange(k).reshape(f.shape) * 10).astype(base)
        x[name] = v
    return x


FLAT = [("a", "<i4"), ("b", "<f8"), ("c", "|b1"), ("h", "<f2"), ("w", "<u2"),
        ("l", "<i8"), ("z", "<c8"), ("s", "|S3"), ("u", "<U2")]
FLAT_FILL = (-1, np.nan, False, 0.5, 7, -4, np.nan, b"", "")


# Times: nanoseconds with NaT and 1970-01-01 (0, the default fill value,
# which is no NA), and seconds of timedelta, 10-second steps big-endian.
TIME = [("t", "<M8[ns]"), ("d", "<m8[s]"), ("x", "<f8")]
TIME_V2 = [("t", ">M8[ms]"), ("d", "<m8[10s]"), ("x", "<f8")]


def times(dt):
    x = np.zeros(4, dtype=dt)
    x["t"] = np.array(["2024-01-02T03:04:05.123456789", "NaT", "1970-01-01", "1969-12-31T23:59:59.5"],
                      dtype="M8[ns]").astype(dt["t"])
    x["d"] = np.array([50, "NaT", -30, 0], dtype="m8[s]").astype(dt["d"])
    x["x"] = [1, 2, 3, 4]
    return x


def write_v3(root):
    from numcodecs import GZip
    dt = np.dtype(TIME)
    a = zarr.create_array(f"{root}/v3_times", shape=(4,), chunks=(3,), dtype=dt)
    a[:] = times(dt)
    # (zarr-python 3.4's zstd refuses datetime64 fields in Zarr v2)
    a = zarr.create_array(f"{root}/v2_times34", shape=(4,), chunks=(3,), dtype=dt, zarr_format=2,
                          compressors=GZip())
    a[:] = times(dt)
    from zarr.codecs import BytesCodec
    dt = np.dtype(FLAT)
    fill = np.array(FLAT_FILL, dtype=dt)[()]
    # 7 records in chunks of 3 (an edge chunk), the last two never written
    a = zarr.create_array(f"{root}/v3_flat", shape=(7,), chunks=(3,), dtype=dt, fill_value=fill)
    a[:5] = values(dt, 5)
    # uncompressed, 2-d, big-endian records
    dt2 = np.dtype([("a", "<i2"), ("b", "<f4")])
    a = zarr.create_array(f"{root}/v3_grid", shape=(5, 4), chunks=(2, 3), dtype=dt2,
                          compressors=None, serializer=BytesCodec(endian="big"),
                          fill_value=np.array((0, 0), dtype=dt2)[()])
    a[:4, :3] = values(dt2, 12).reshape(4, 3)
    # the same records in shards of 2 x 2 inner chunks, edge shards included
    a = zarr.create_array(f"{root}/v3_sharded", shape=(5, 4), chunks=(2, 2), shards=(4, 4), dtype=dt2,
                          fill_value=np.array((0, 0), dtype=dt2)[()])
    a[:4, :3] = values(dt2, 12).reshape(4, 3)
    dt3 = np.dtype([("p", [("x", "<f4"), ("y", "<f4")]), ("v", "<f8")])
    a = zarr.create_array(f"{root}/v3_nested", shape=(4,), chunks=(4,), dtype=dt3,
                          fill_value=np.array(((1.5, 2.5), 3.5), dtype=dt3)[()])
    x = np.zeros(4, dtype=dt3)
    x["p"]["x"] = [1, 2, 3, 4]
    x["p"]["y"] = [5, 6, 7, 8]
    x["v"] = [0.25, 0.5, 3.5, 1]
    a[:] = x
    # Zarr v2 from 3.4: the fill value in base64
    a = zarr.create_array(f"{root}/v2_from34", shape=(7,), chunks=(3,), dtype=dt,
                          fill_value=fill, zarr_format=2)
    a[:5] = values(dt, 5)


def write_v2(root):
    dt = np.dtype([(n, ">i4" if n == "a" else t) for n, t in FLAT])
    fill = np.array(FLAT_FILL, dtype=dt)[()]
    a = zarr.open(f"{root}/v2_flat", mode="w", shape=(7,), chunks=(3,), dtype=dt, fill_value=fill)
    a[:5] = values(dt, 5)
    # a sub-array field, no compressor, no fill value, Fortran order
    dt2 = np.dtype([("i", "<i4"), ("m", "<f8", (2, 3))])
    a = zarr.open(f"{root}/v2_sub", mode="w", shape=(3, 2), chunks=(2, 2), dtype=dt2,
                  fill_value=None, compressor=None, order="F")
    a[:] = values(dt2, 6).reshape(3, 2)
    dt = np.dtype(TIME_V2)
    a = zarr.open(f"{root}/v2_times", mode="w", shape=(4,), chunks=(3,), dtype=dt)
    a[:] = times(dt)
    # nested records, and a 1-d sub-array field
    dt3 = np.dtype([("p", [("x", "<f4"), ("y", ">i2")]), ("m", "<i2", (2,))])
    a = zarr.open(f"{root}/v2_nested", mode="w", shape=(3,), chunks=(2,), dtype=dt3)
    x = np.zeros(3, dtype=dt3)
    x["p"]["x"] = [1.5, 2.5, 3.5]
    x["p"]["y"] = [-1, 2, 300]
    x["m"] = [[1, 2], [3, 4], [5, 6]]
    a[:] = x


def plain(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, (complex, np.complexfloating)):
        return [plain(v.real), plain(v.imag)]
    if isinstance(v, (float, np.floating)) and np.isnan(v):
        return "NaN"
    if isinstance(v, np.generic):
        return v.item()
    return v


def leaves(x, prefix=""):
    """(name, values) of each leaf field, nested ones as "outer.inner"."""
    for name in x.dtype.names:
        v = x[name]
        if v.dtype.names:
            yield from leaves(v, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", v


def read(path):
    a = zarr.open_array(path, mode="r")
    x = a[...]
    fill = a.fill_value
    out = {"dtype": str(a.dtype), "fields": {}, "fill": None}
    for name, v in leaves(x):
        if v.dtype.kind in "Mm":
            # the int64 counts (NaT: -2^63) and the type, "<M8[ns]"
            out.setdefault("times", {})[name] = v.dtype.str
            v = v.astype("int64")
        out["fields"][name] = [plain(e) for e in v.reshape(-1)]
    if fill is not None:
        fill = np.asarray(fill, dtype=x.dtype)
        out["fill"] = {n: [plain(e) for e in (v.astype("int64") if v.dtype.kind in "Mm" else v).reshape(-1)]
                       for n, v in leaves(fill)}
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        (write_v2 if V2 else write_v3)(sys.argv[2])
    else:
        read(sys.argv[2])
