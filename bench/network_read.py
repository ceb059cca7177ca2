"""The Python side of bench/network_read.R.

    python network_read.py write DIR
    python network_read.py read CONTENDER URL REPS EXPECTED

`write` makes DIR/plain and DIR/zstd with zarr-python: each a v3 store whose
root is one float64 array of NR x NC in C order, chunks of 256 x 256, without
a compressor and with zstd (level 3), and DIR/expected.f64, the array's
values (C order, native float64) that every reader compares its result with.

`read` opens the array at URL anew and reads it whole, REPS times in a loop,
timing each (open included) and keeping the last result, which must equal
the values in the file EXPECTED. CONTENDER is "zarr-python" (its ObjectStore over obstore's
HTTPStore) or "tensorstore" (its zarr3 driver over the "http" kvstore). It
prints one JSON line: the wall times and the versions read.
"""

import importlib.metadata
import json
import sys
import time

import numpy as np

NR, NC = 4096, 2048
CHUNKS = (256, 256)


def data():
    # Values that zstd shrinks only somewhat, so both stores move real bytes;
    # none is the fill value (NaN), which this package reads as NA.
    i = np.arange(NR * NC, dtype=np.float64).reshape(NR, NC)
    return np.round(np.sin(i / 1e3) * 100, 3)


def write(root):
    import zarr
    import zarr.codecs

    x = data()
    for name, compressors in (("plain", None), ("zstd", zarr.codecs.ZstdCodec(level=3))):
        a = zarr.create_array(root + "/" + name, shape=x.shape, chunks=CHUNKS, dtype="float64",
                              compressors=compressors, zarr_format=3,
                              fill_value=float("nan"), overwrite=True)
        a[:] = x
    x.tofile(root + "/expected.f64")


def zarr_python(url):
    import obstore
    import obstore.store
    import zarr
    import zarr.storage

    def read():
        store = zarr.storage.ObjectStore(obstore.store.HTTPStore.from_url(
            url, client_options={"allow_http": True}), read_only=True)
        return zarr.open_array(store, mode="r")[:]

    return read, f"zarr {zarr.__version__}, obstore {obstore.__version__}"


def tensorstore(url):
    import tensorstore as ts

    spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": url + "/"},
            "recheck_cached_data": False, "recheck_cached_metadata": False}

    def read():
        # A new context each time: no cache or connection carried over.
        return ts.open(spec, read=True, context=ts.Context()).result().read().result()

    return read, f"tensorstore {importlib.metadata.version('tensorstore')}"


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2])
        return
    _, _, contender, url, reps, expected = sys.argv
    read, versions = {"zarr-python": zarr_python, "tensorstore": tensorstore}[contender](url)
    walls = []
    x = None
    for _ in range(int(reps)):
        x = None
        t0 = time.perf_counter()
        x = read()
        walls.append(time.perf_counter() - t0)
    want = np.fromfile(expected, dtype=np.float64).reshape(NR, NC)
    if not np.array_equal(np.asarray(x), want):
        raise SystemExit(f"{contender} read a wrong value from {url}")
    print(json.dumps({"walls": walls, "versions": versions}))


if __name__ == "__main__":
    main()
