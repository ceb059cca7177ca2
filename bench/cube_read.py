#!/usr/bin/env python3
"""The zarrs pipeline's side of bench/cube_read.R: median seconds of full
reads of each store given, one JSON line. Reads run back to back (the
last result alive while the next is made, no gc.collect() first) and
after a collection, as R's side times them.

Usage: cube_read.py REPEATS PATH...
"""
import gc
import json
import sys
import time

import zarr

repeats = int(sys.argv[1])
out = {}
with zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"}):
    for path in sys.argv[2:]:
        a = zarr.open_array(path, mode="r")
        x = a[...]
        kept, fresh = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            x = a[...]
            kept.append(time.perf_counter() - t0)
        del x
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            y = a[...]
            fresh.append(time.perf_counter() - t0)
            del y
        out[path] = {"kept_s": sorted(kept)[repeats // 2], "gc_first_s": sorted(fresh)[repeats // 2]}
print(json.dumps(out))
