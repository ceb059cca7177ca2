"""Open time of zarr-python, for bench/open.R: zarr.open_group(location)
then group[name], the way bench/open.R times open_zarr() then [[.

    python open.py repeat LOCATION NAME REPS   -> median seconds of REPS opens
                                                  (CPU: their total / REPS)
    python open.py first LOCATION NAME         -> seconds of `import zarr`, then
                                                  of the first open in this
                                                  process

LOCATION is a folder or an http:// URL (fsspec's HTTP file system, which
needs aiohttp). Prints wall-clock and CPU seconds of this process (the CPU
figure does not depend on what else the machine runs): two numbers for
`repeat`; four for `first`, the import's then the open's. The clocks start
after the interpreter has started (as bench/open.R's start after R has),
and zarr is imported inside them.
"""
import importlib
import statistics
import sys
import time

zarr = None


def open_one(location, name):
    g = zarr.open_group(location, mode="r")
    return g[name]


def load():
    global zarr
    zarr = importlib.import_module("zarr")


def main():
    mode, location, name = sys.argv[1:4]
    if mode == "first":
        t0, c0 = time.perf_counter(), time.process_time()
        load()
        t1, c1 = time.perf_counter(), time.process_time()
        open_one(location, name)
        t2, c2 = time.perf_counter(), time.process_time()
        print(t1 - t0, c1 - c0, t2 - t1, c2 - c1)
        return
    load()
    reps = int(sys.argv[4])
    open_one(location, name)  # imports and connections, as R's warm-up
    # CPU over the whole batch, as bench/open.R counts it.
    times = []
    c0 = time.process_time()
    for _ in range(reps):
        t0 = time.perf_counter()
        open_one(location, name)
        times.append(time.perf_counter() - t0)
    print(statistics.median(times), (time.process_time() - c0) / reps)


if __name__ == "__main__":
    main()
