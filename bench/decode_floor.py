#!/usr/bin/env python3
"""The decode floor beside the back-to-back reads, in one interleaved run
(issue 21).

Each repeat runs, in a shuffled order: bench/decode_floor.c on the stored
chunks of a layout (a server process that keeps them in memory), the
zarrs pipeline's back-to-back full read (`x = a[...]`, the last result
kept), and this package's back-to-back full read in both storage orders
(bench/zarr_worker.R). The floors:
  floor F      R's F store (column-major chunks) decoded and copied into a
               reused column-major result: what R's F read cannot beat
  floor C      the Python store (C-order chunks) decoded and transposed into
               a column-major result: what R's C read cannot beat
  floor numpy  the Python store decoded and copied row by row, as into the
               C-order NumPy result the zarrs pipeline returns
Reads the stores bench/interleaved.py wrote (run it first with the same
--data-dir). lz4 (blosc) has no floor here: the floor links libzstd only.

Usage: decode_floor.py PEERS_BENCH.py --floor BIN --data-dir DIR [--repeats 5] [--out FILE]
"""
import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_interleaved():
    spec = importlib.util.spec_from_file_location("interleaved", os.path.join(HERE, "interleaved.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FloorServer:
    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(self, *words):
        self.proc.stdin.write(" ".join(words) + "\n")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the floor program stopped")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Floor:
    """One floor as a contender: its wall is the fused decode + scatter;
    the parts of every run are kept for the table."""

    def __init__(self, server, name, path_of, order):
        self.server, self.name, self.path_of, self.order = server, name, path_of, order
        self.parts = []

    def readloop(self, layout):
        mode = "shard" if layout == "shard" else "chunks"
        codec = "raw" if layout == "none" else "zstd"
        r = self.server.call(self.path_of(layout), mode, codec, self.order)
        self.parts.append(r)
        return r["fused"], 0.0


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peers")
    ap.add_argument("--floor", required=True, help="the built bench/decode_floor.c")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--layouts", default="zstd1,shard,none")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="JSON of the medians")
    args = ap.parse_args()
    il = load_interleaved()
    pb = il.load_peers(args.peers)
    data = pb.make_data()
    zarrs = il.Peer(pb, "zarr-python+zarrs", data, args.data_dir)
    worker = il.RWorker(os.path.join(HERE, "zarr_worker.R"), os.path.join(args.data_dir, "r"))
    ours = [il.Ours(worker, "F"), il.Ours(worker, "C")]
    server = FloorServer(args.floor)
    r_path = lambda order: (lambda layout: os.path.join(  # noqa: E731
        args.data_dir, "r", f"zarr_{layout}_{order}.zarr", "x"))
    floors = [Floor(server, "floor F", r_path("F"), "F"),
              Floor(server, "floor C", zarrs.path, "C"),
              Floor(server, "floor numpy", zarrs.path, "F")]
    rng = random.Random(args.seed)
    table = []
    for layout in args.layouts.split(","):
        for f in floors:
            f.parts = []
        res = il.in_turns(floors + [zarrs] + ours, "readloop", layout, args.repeats, rng)
        wall = {name: r[0][0] for name, r in res.items()}
        row = {"layout": layout, "wall": wall,
               "floor_parts": {f.name: {k: med([p[k] for p in f.parts])
                                        for k in ("decode", "scatter", "fused", "fused1")}
                               for f in floors}}
        table.append(row)
        fl = {f.name: wall[f.name] for f in floors}
        print(f"{layout}: floor F {fl['floor F']:.4f}  floor C {fl['floor C']:.4f}  "
              f"floor numpy {fl['floor numpy']:.4f}  |  R F {wall['zarr (R, F order)']:.4f} "
              f"({wall['zarr (R, F order)'] / fl['floor F']:.2f}x floor F)  "
              f"R C {wall['zarr (R, C order)']:.4f} ({wall['zarr (R, C order)'] / fl['floor C']:.2f}x "
              f"floor C)  zarrs {wall['zarr-python+zarrs']:.4f} "
              f"({wall['zarr-python+zarrs'] / fl['floor numpy']:.2f}x floor numpy)", flush=True)
        for f in floors:
            p = row["floor_parts"][f.name]
            print(f"    {f.name:12} decode {p['decode']:.4f}  scatter {p['scatter']:.4f}  "
                  f"fused {p['fused']:.4f}  fused 1 thread {p['fused1']:.4f}", flush=True)
    worker.close()
    server.close()
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"noisy": pb.NOISY, "rows": table}, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
