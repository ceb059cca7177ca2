# Arrays of numcodecs' ZFPY codec for test-zfp.R, written and read by
# zarr-python 2.18 (Zarr v2, id "zfpy") or 3.4 (Zarr v3, "numcodecs.zfpy").
# argv: "write" ROOT (writes one array per case and prints, per array, the
# little-endian bytes numcodecs decodes from it, C order, in hex), or
# "read" ROOT NAMES-JSON (prints, per array, the bytes zarr-python reads
# from it and whether they equal what zarr-python reads from the same data
# written by itself with the same codec).
import json, sys, tempfile, warnings

warnings.simplefilter("ignore")
import numpy as np
import zarr
import numcodecs

major = int(zarr.__version__.split(".")[0])
nc = numcodecs if major == 2 else zarr.codecs.numcodecs

MODES = {
    "rate": dict(mode=2, rate=12),
    "precision": dict(mode=3, precision=18),
    "accuracy": dict(mode=4, tolerance=0.01),
    "reversible": dict(),
}


def data(dtype, shape, nan):
    n = int(np.prod(shape))
    i = np.arange(n)
    if dtype[1] == "f":
        x = (np.sin(i * 0.37) * 100 + i / 3).astype(dtype)
        if nan:
            x[1] = np.nan
            x[n - 2] = np.inf
    else:
        x = (i * 7919 - 30000).astype(dtype)
    return x.reshape(shape)


# name -> (type, shape, chunks, mode): every mode and type in 2-d arrays
# with edge chunks, and 1-, 3- and 4-d ones.
CASES = {}
for t in ["<f4", "<f8", "<i4", "<i8"]:
    for m in MODES:
        CASES["%s_%s" % (t[1:], m)] = (t, (5, 7), (3, 4), m)
CASES["d1"] = ("<f8", (10,), (4,), "accuracy")
CASES["d3"] = ("<f4", (3, 5, 6), (2, 3, 4), "rate")
CASES["d4"] = ("<f8", (3, 4, 5, 3), (2, 3, 2, 2), "precision")


def values(name):
    t, shape, chunks, mode = CASES[name]
    return data(t, shape, mode == "reversible")


def write(path, name):
    t, shape, chunks, mode = CASES[name]
    codec = nc.ZFPY(**MODES[mode])
    fill = -9999
    if major == 2:
        a = zarr.open(path, mode="w", shape=shape, chunks=chunks, dtype=t, compressor=codec, fill_value=fill)
    else:
        a = zarr.create_array(path, shape=shape, chunks=chunks, dtype=t, serializer=codec, compressors=None,
                              fill_value=fill)
    a[...] = values(name)
    return a


def hexed(x):
    return np.ascontiguousarray(x).astype(x.dtype.newbyteorder("<")).tobytes().hex()


mode, root = sys.argv[1], sys.argv[2]
out = {}
if mode == "write":
    for name in CASES:
        write("%s/%s" % (root, name), name)
        out[name] = hexed(zarr.open_array("%s/%s" % (root, name), mode="r")[...])
else:
    with tempfile.TemporaryDirectory() as tmp:
        for name in json.loads(sys.argv[3]):
            got = zarr.open_array("%s/%s" % (root, name), mode="r")[...]
            own = write("%s/%s" % (tmp, name), name)[...]
            out[name] = {"bytes": hexed(got), "same": hexed(got) == hexed(own)}
print(json.dumps(out))
