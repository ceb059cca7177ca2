"""The compressors' own cost under the peer benchmark's writes (issue 42).

Compresses the benchmark's 256 chunks of 256 x 256 float64 (the data of
../shared/bench/peers_bench.py, each chunk in C order as zarr-python
stores it) with numcodecs' Zstd at level 1 and Blosc lz4 (clevel 5, byte
shuffle, typesize 8), the codecs of its zstd1, shard and lz4 layouts, and
prints the CPU seconds of the compression alone, one thread, and half of
it: what two cores cannot go below for these layouts whatever else a
contender does (the files come on top; bench/write_floor.c measures them).

  python bench/compress_floor.py ../shared/bench/peers_bench.py
"""
import importlib.util
import sys
import time

import numcodecs
import numpy as np


def main():
    spec = importlib.util.spec_from_file_location("peers_bench", sys.argv[1])
    pb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pb)
    numcodecs.blosc.set_nthreads(1)
    x = pb.make_data()
    side = 256
    chunks = [np.ascontiguousarray(x[i:i + side, j:j + side])
              for i in range(0, x.shape[0], side) for j in range(0, x.shape[1], side)]
    codecs = [("zstd level 1", numcodecs.Zstd(level=1)),
              ("blosc lz4 clevel 5 shuffle", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))]
    for name, codec in codecs:
        times = []
        for _ in range(7):
            t0 = time.process_time()
            stored = sum(len(codec.encode(c)) for c in chunks)
            times.append(time.process_time() - t0)
        times.sort()
        print(f"{name}: {len(chunks)} chunks, {stored / 2**20:.1f} MiB stored, one thread "
              f"{times[3]:.4f} s CPU (median of 7), on two cores at best {times[3] / 2:.4f} s")


if __name__ == "__main__":
    main()
