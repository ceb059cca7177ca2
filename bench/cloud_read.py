"""The Python contenders of bench/cloud_read.R: zarr-python (its ObjectStore
over obstore's S3Store) and tensorstore (its zarr3 driver over the "s3"
kvstore), each reading one array of an S3 store through the bench's
counting proxy exactly as the R side does: a store opened anew on every
run (metadata requests included), the whole array or one 256 x 256
region, median of `reps` runs, timed inside this process (no interpreter
start-up in the figure).

    python cloud_read.py CONTENDER ENDPOINT BUCKET NAME WHAT REPS EXPECTED_SUM

CONTENDER is "zarr-python" or "tensorstore", WHAT "full" or "region".
Prints one JSON line: the median wall time and CPU time (all threads of
this process), the proxy's request count of
the last run and the versions read.
"""

import json
import os
import statistics
import sys
import time
import urllib.error
import urllib.request

import numpy as np

REGION = (slice(256, 512), slice(512, 768))


def proxy(endpoint, path, method="GET"):
    """The proxy's counters; None when reading from the server directly."""
    req = urllib.request.Request(endpoint + path, method=method)
    try:
        with urllib.request.urlopen(req) as r:
            return json.load(r)
    except urllib.error.HTTPError:
        return None


def zarr_python(endpoint, bucket, name):
    import obstore.store
    import zarr
    import zarr.storage

    def read(what):
        s3 = obstore.store.S3Store(bucket, prefix=name + ".zarr", endpoint=endpoint, region="us-east-1",
                                   access_key_id="testing", secret_access_key="testing",
                                   client_options={"allow_http": True})
        a = zarr.open_array(zarr.storage.ObjectStore(s3, read_only=True), path="x", mode="r")
        return a[:] if what == "full" else a[REGION]

    return read, f"zarr {zarr.__version__}, obstore {obstore.__version__}"


def tensorstore(endpoint, bucket, name):
    import tensorstore as ts

    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "s3", "bucket": bucket, "path": name + ".zarr/x/",
                    "endpoint": endpoint, "aws_region": "us-east-1"},
    }

    def read(what):
        # A new context each run: no cache or pool carried over from the
        # previous open, as for the other contenders.
        a = ts.open(spec, read=True, context=ts.Context()).result()
        return (a if what == "full" else a[REGION]).read().result()

    from importlib.metadata import version

    return read, f"tensorstore {version('tensorstore')}"


def main():
    contender, endpoint, bucket, name, what, reps, expected = sys.argv[1:8]
    make = {"zarr-python": zarr_python, "tensorstore": tensorstore}[contender]
    read, version = make(endpoint, bucket, name)
    walls = []
    cpus = []
    # One untimed read first, as every contender gets (bench/interleaved.py
    # does the same): a process's first reads map memory that later ones
    # reuse, and on this VM first-touched memory is also set up by the host.
    read(what)
    for _ in range(int(reps)):
        proxy(endpoint, "/__proxy/reset", "POST")
        t0 = time.perf_counter()
        c0 = time.process_time()
        y = read(what)
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
        n = int(os.environ.get("ZARR_BENCH_N", "4096"))
        want = (n, n) if what == "full" else (256, 256)
        assert y.shape == want, (contender, y.shape)
        # The same values as R wrote: the sum of what was read, to 1e-9.
        assert np.isclose(float(np.sum(y, dtype=np.float64)), float(expected), rtol=1e-9, atol=0), contender
    stats = proxy(endpoint, "/__proxy/stats")
    print(json.dumps({"wall": statistics.median(walls), "cpu": statistics.median(cpus), "requests": stats and stats["requests"],
                      "version": version}))


if __name__ == "__main__":
    main()
