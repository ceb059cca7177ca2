"""Arrays with rectilinear chunk grids, for test-chunk_grid.R.

  python rectilinear_arrays.py write DIR   zarr-python 3.4 writes the arrays below
                                           into the store DIR
  python rectilinear_arrays.py read DIR    prints, per array of DIR, its name,
                                           chunk_grid member, and values (C order)
                                           as one JSON document
"""

import json
import sys

import numpy as np
import zarr

# zarr-python 3.4 reads and writes these grids only when asked.
zarr.config.set({"array.rectilinear_chunks": True})

def write(path):
    root = zarr.open_group(path, mode="w")
    # Explicit lengths: written as [[3, 3], 1] and [4, 3].
    a = root.create_array("i4", shape=(10, 7), chunks=[[3, 3, 3, 1], [4, 3]], dtype="int32", fill_value=-1)
    a[:] = np.arange(70, dtype="int32").reshape(10, 7)
    a[0, 0] = -1
    # Shards of two lengths holding inner chunks of one shape.
    s = root.create_array("sharded", shape=(12, 8), chunks=(2, 2), shards=[[4, 4, 2, 2], [4, 4]], dtype="float64",
                          fill_value=0.5)
    s[:] = np.arange(96, dtype="float64").reshape(12, 8) / 4
    s[10:, :] = 0.5
    # Run-length lengths ([[1, 3], [4, 2]]) and a chunk never written.
    r = root.create_array("rle", shape=(11,), chunks=[[1, 1, 1, 4, 4]], dtype="int16", fill_value=7)
    r[:7] = np.arange(7, dtype="int16") * 3
    # Grown past its chunks (one chunk more per dimension), written there,
    # then shrunk: the edges stay declared.
    g = root.create_array("resized", shape=(10, 7), chunks=[[3, 3, 4], [4, 3]], dtype="int32", fill_value=-1)
    g[:] = np.arange(70, dtype="int32").reshape(10, 7)
    g.resize((16, 9))
    g[14:, 7:] = 99
    g.resize((15, 8))


def read(path):
    root = zarr.open_group(path, mode="r")
    out = {}
    for name, arr in root.arrays():
        grid = arr.metadata.to_dict()["chunk_grid"]
        out[name] = {"grid": grid, "values": arr[...].ravel().tolist(), "shape": list(arr.shape)}
    print(json.dumps(out))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
