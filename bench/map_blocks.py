# The job of bench/map_blocks.R done with xarray + dask: open the array
# "x" of the store, apply f (reps passes of b * 0.999 + 0.001) to every
# chunk with dask, and write the result as a new array with the same
# chunks and codec (blosc zstd 1 with shuffle), on dask's threaded
# scheduler with <workers> workers, once. Prints the time as JSON on its
# last line.
#   python bench/map_blocks.py <store> <reps> <workers>
import json
import os
import shutil
import sys
import time

import dask
import numpy as np
import xarray as xr
from zarr.codecs import BloscCodec


def f(b, reps):
    for _ in range(reps):
        b = b * 0.999 + 0.001
    return b


def load_avg():
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def run(store, out, reps):
    ds = xr.open_zarr(store, consolidated=False)
    x = ds["x"]
    y = x.copy(data=x.data.map_blocks(f, reps, dtype=np.float64))
    y.encoding = {}
    enc = {"y": {"chunks": x.encoding["chunks"],
                 "compressors": [BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")]}}
    y.to_dataset(name="y").to_zarr(out, mode="w", consolidated=False, encoding=enc, zarr_format=3)


def main():
    store, reps, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    out = os.path.join(os.path.dirname(store), "dask_out.zarr")
    with dask.config.set(scheduler="threads", num_workers=workers):
        load = load_avg()
        t0, c0 = time.perf_counter(), time.process_time()
        run(store, out, reps)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
    check = xr.open_zarr(out, consolidated=False)["y"][:1024, :1024].values
    first = xr.open_zarr(store, consolidated=False)["x"][:1024, :1024].values
    assert np.allclose(check, f(first, reps), equal_nan=True)
    shutil.rmtree(out)
    print(json.dumps({"tool": "xarray+dask", "workers": workers, "s": took, "cpu_s": cpu, "load": load}))


if __name__ == "__main__":
    main()
