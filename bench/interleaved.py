#!/usr/bin/env python3
"""The peer workload with every contender taking turns.

Runs the workload of ../shared/bench/peers_bench.py (its data, layouts,
implementations and timing protocol, imported from it) on zarr-python,
zarr-python with the zarrs pipeline, tensorstore, and this package in both
storage orders (through bench/zarr_worker.R). Instead of one implementation
after the other, each repeat of an operation runs every contender once, in
an order shuffled for each repeat. A run of 128 MiB writes is
sensitive to what the file system did in the minutes before it (ext4 scans
recently deleted inodes when it allocates new ones), so contenders timed
minutes apart are not timed under the same conditions; taking turns puts
every contender's repeats under the same spread of conditions.

Usage: interleaved.py PEERS_BENCH.py --repeats 5 --data-dir DIR --out DIR
Writes DIR/peers.json (the peers' rows, the physical references, a meta
line, as peers_bench.py writes them) and DIR/zarr_rows.json (this
package's rows), which bench/zarr_bench.R completes and bench/report.R
reports.
"""
import argparse
import gc
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np


def load_peers(path):
    spec = importlib.util.spec_from_file_location("peers_bench", path)
    pb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pb)
    if os.environ.get("ZARR_BENCH_MAX_WAIT") == "0":
        busy_machine(pb)
    return pb


def busy_machine(pb):
    """ZARR_BENCH_MAX_WAIT=0, as for bench/common.R: on a machine that is
    never quiet, time every run at once and keep it (no wait for quiet,
    no retries), the peers as this package. Runs other processes
    disturbed are still listed."""
    def run_once(fn, label):
        if not pb.BACK_TO_BACK:
            gc.collect()
        b0, c0, t0 = pb.sys_busy(), pb.cpu_now(), time.perf_counter()
        result = fn()
        wall = time.perf_counter() - t0
        if pb.BACK_TO_BACK:
            pb.KEPT[label] = result
        del result
        mine = pb.cpu_now() - c0
        others = max(0.0, (pb.sys_busy() - b0) - mine) / wall if wall > 0.05 else 0.0
        if others > 0.15:
            pb.NOISY.append((label, round(others, 2)))
        return wall, mine / wall if wall > 0 else 0.0
    pb.run_once = run_once


class RWorker:
    """bench/zarr_worker.R, one command per line and one JSON line back."""

    def __init__(self, script, data_dir):
        self.proc = subprocess.Popen(["Rscript", script, data_dir], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.hello = self._reply()

    def _reply(self):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the R worker stopped")
            if line.startswith("{"):
                out = json.loads(line)
                if "error" in out:
                    raise RuntimeError(f"R worker: {out['error']}")
                return out

    def call(self, *words):
        self.proc.stdin.write(" ".join(words) + "\n")
        return self._reply()

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Peer:
    def __init__(self, pb, name, data, data_dir):
        self.pb, self.name, self.data, self.data_dir = pb, name, data, data_dir
        self.create, self.open_, self._write, self._read, self._subset = pb.IMPLS[name]()
        self.arrays = {}

    def path(self, layout):
        return os.path.join(self.data_dir, f"{self.name}_{layout}.zarr")

    def write(self, layout):
        path = self.path(layout)
        shutil.rmtree(path, ignore_errors=True)
        a = self.create(path, layout)
        self.arrays.pop(layout, None)
        return self.pb.run_once(lambda: self._write(a, self.data), f"{self.name}/{layout}/write")

    def _opened(self, layout):
        if layout not in self.arrays:
            self.arrays[layout] = self.open_(self.path(layout))
        return self.arrays[layout]

    def check(self, layout):
        a = self._opened(layout)
        return (np.array_equal(np.asarray(self._read(a)), self.data)
                and np.array_equal(np.asarray(self._subset(a)), self.data[self.pb.SUB]))

    def read(self, layout):
        a = self._opened(layout)
        return self.pb.run_once(lambda: self._read(a), f"{self.name}/{layout}/read")

    def subset(self, layout):
        a = self._opened(layout)
        return self.pb.run_once(lambda: self._subset(a), f"{self.name}/{layout}/subset")

    def _back_to_back(self, op, layout):
        """`op` as a session repeats it (`x = a[...]` again): no wait or
        gc.collect() first, and the last result alive until this one
        replaces it (peers_bench.py's --back-to-back)."""
        before, self.pb.BACK_TO_BACK = self.pb.BACK_TO_BACK, True
        try:
            return getattr(self, op)(layout)
        finally:
            self.pb.BACK_TO_BACK = before

    def writeloop(self, layout):
        return self._back_to_back("write", layout)

    def readloop(self, layout):
        return self._back_to_back("read", layout)

    def subsetloop(self, layout):
        return self._back_to_back("subset", layout)

    def readfresh(self, layout):
        """The first read in a new process: the array opened there, then one
        timed full read (the interpreter's start and the imports untimed)."""
        code = ("import importlib.util, json, sys, time\n"
                "spec = importlib.util.spec_from_file_location('pb', sys.argv[1])\n"
                "pb = importlib.util.module_from_spec(spec); spec.loader.exec_module(pb)\n"
                "impl = pb.IMPLS[sys.argv[2]]()\n"
                "a = impl[1](sys.argv[3])\n"
                "t0 = time.perf_counter(); x = impl[3](a); t = time.perf_counter() - t0\n"
                "print(json.dumps({'wall': t}))\n")
        out = subprocess.run([sys.executable, "-c", code, self.pb.__file__, self.name, self.path(layout)],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])["wall"], 0.0

    def stored(self, layout):
        return self.pb.du(self.path(layout))


class Ours:
    def __init__(self, worker, order):
        self.worker, self.order = worker, order
        self.name = f"zarr (R, {order} order)"

    def _run(self, op, layout):
        r = self.worker.call(op, layout, self.order)
        return r["wall"], r["cpu"]

    def write(self, layout):
        return self._run("write", layout)

    def read(self, layout):
        return self._run("read", layout)

    def subset(self, layout):
        return self._run("subset", layout)

    def writeloop(self, layout):
        return self._run("writeloop", layout)

    def readloop(self, layout):
        return self._run("readloop", layout)

    def subsetloop(self, layout):
        return self._run("subsetloop", layout)

    def readfresh(self, layout):
        return self._run("readfresh", layout)

    def check(self, layout):
        return self.worker.call("check", layout, self.order)["ok"]

    def stored(self, layout):
        return self.worker.call("stored", layout, self.order)["bytes"]


def median(runs):
    runs = sorted(runs)
    return runs[len(runs) // 2]


def in_turns(contenders, op, layout, repeats, rng):
    """Each contender's runs of `op`: one untimed warm-up each, then
    `repeats` rounds in which every contender runs once, in a shuffled
    order. Not a rotation: that would give each contender the same
    predecessor every round, and a write is slowed by the writeback and
    freed blocks its predecessor left (one contender always ran right
    after tensorstore's shard writes and was 20% slower for it)."""
    for c in contenders if op != "readfresh" else ():
        getattr(c, op)(layout)
    runs = {c.name: [] for c in contenders}
    for _ in range(repeats):
        turn = list(contenders)
        rng.shuffle(turn)
        for c in turn:
            runs[c.name].append(getattr(c, op)(layout))
    return {name: (median(r), min(r)) for name, r in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peers")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1, help="of the order in which contenders take turns")
    ap.add_argument("--writes-only", action="store_true",
                    help="time only the writes; results go to peers_writes.json and zarr_writes.json")
    ap.add_argument("--ops", default=None,
                    help="comma-separated operations to time (default all; a write always runs "
                         "first, since it makes the stores the others read), e.g. write,readloop")
    ap.add_argument("--impls", default=None,
                    help="comma-separated peers to run (default all of peers_bench.py's), "
                         "e.g. zarr-python+zarrs,tensorstore")
    ap.add_argument("--layouts", default=None,
                    help="comma-separated layouts to run (default all), e.g. none,zstd1")
    ap.add_argument("--fresh-repeats", type=int, default=None,
                    help="new processes per contender for readfresh (default a third of --repeats)")
    ap.add_argument("--tag", default=None,
                    help="of a writes-only run's result files, peers<TAG>.json and zarr<TAG>.json "
                         "(default _writes), so runs on several file systems sit side by side")
    args = ap.parse_args()
    pb = load_peers(args.peers)
    os.makedirs(args.out, exist_ok=True)

    import numcodecs
    import tensorstore  # noqa: F401
    import zarr
    import zarrs  # noqa: F401
    import platform
    from importlib.metadata import version

    data = pb.make_data()
    refs = [] if args.writes_only else pb.bench_physical(data, args.repeats)
    for label, nb, t in refs:
        print(f"{label}: {t:.4f} s, {nb / t / 1e9:.2f} GB/s", flush=True)

    worker = RWorker(os.path.join(os.path.dirname(os.path.abspath(__file__)), "zarr_worker.R"),
                     os.path.join(args.data_dir, "r"))
    names = args.impls.split(",") if args.impls else list(pb.IMPLS)
    peers = [Peer(pb, name, data, args.data_dir) for name in names]
    ours = [Ours(worker, "F"), Ours(worker, "C")]
    contenders = peers + ours
    rows = {c.name: [] for c in contenders}
    our_rows = []
    rng = random.Random(args.seed)
    for layout in args.layouts.split(",") if args.layouts else pb.LAYOUTS:
        result = {c.name: {"impl": c.name, "layout": layout} for c in contenders}
        for c in ours:
            result[c.name]["order"] = c.order
        ops = ("write",) if args.writes_only else (
            "write", "writeloop", "read", "readloop", "subset", "subsetloop", "readfresh")
        if args.ops:
            wanted = set(args.ops.split(",")) | {"write"}
            ops = tuple(op for op in ops if op in wanted)
        for op in ops:
            if op == "read":
                for c in contenders:
                    if not c.check(layout):
                        raise RuntimeError(f"{c.name} read back wrong values ({layout})")
                    result[c.name]["stored_bytes"] = c.stored(layout)
            # Reads in a loop: three times the repeats, so that several of
            # the package's own collections (pages.rs) fall among them; a
            # new process for each first read: a third of them.
            reps = {"readloop": 3 * args.repeats,
                    "readfresh": args.fresh_repeats or max(1, args.repeats // 3)}.get(op, args.repeats)
            for name, ((wall, cpu), (best, _)) in in_turns(contenders, op, layout, reps,
                                                           rng).items():
                result[name][f"{op}_s"], result[name][f"{op}_cpu"] = wall, cpu
                result[name][f"{op}_min_s"] = best
        for c in ours if not args.writes_only else ():
            result[c.name]["read_1thread_s"] = worker.call("read1", layout, c.order)["wall"]
            result[c.name]["read_peak_bytes"] = (
                worker.call("peak", layout, c.order)["bytes"] if layout == "zstd1" else None)
        for c in contenders:
            rows[c.name].append(result[c.name])
            print(json.dumps(result[c.name]), flush=True)
        our_rows += [result[c.name] for c in ours]
    threads = worker.hello["threads"]
    worker.close()

    meta = (f"python {platform.python_version()}, numpy {np.__version__}, zarr {zarr.__version__}, "
            f"zarrs {version('zarrs')}, tensorstore {version('tensorstore')}, numcodecs "
            f"{numcodecs.__version__}; {os.cpu_count()} CPUs; repeats={args.repeats} (median), "
            f"every contender in turn (shuffled each repeat); page cache warm; R worker threads "
            f"{threads}; runs disturbed by other processes (>0.15 cores, kept after 5 tries): "
            + (", ".join(f"{lab} ({c})" for lab, c in pb.NOISY) if pb.NOISY else "none"))
    tag = (args.tag or "_writes") if args.writes_only else ""
    with open(os.path.join(args.out, f"peers{tag}.json"), "w") as f:
        json.dump({"meta": meta, "rows": [r for p in peers for r in rows[p.name]],
                   "physical": [{"label": lab, "bytes": b, "seconds": t} for lab, b, t in refs]},
                  f, indent=1)
    with open(os.path.join(args.out, f"zarr{tag}.json" if args.writes_only else "zarr_rows.json"),
              "w") as f:
        json.dump(our_rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
