#!/usr/bin/env python3
"""The first full read of a new process, this package against the peers,
with counters that do not depend on the machine's load.

Each contender opens the array in a new process and times one full read
(`x <- a[]`, `a[...]`); the process's CPU seconds over the read (all its
threads), its minor page faults, and the machine's transparent huge page
faults and compaction stalls (/proc/vmstat) over the read come with the
wall time. Contenders take turns, in a shuffled order each round, with
`--pause` seconds before each process (0: back to back; a few seconds:
long enough for a virtual machine's free page reporting to hand the
memory the last process freed back to the host, see src/rust/src/pages.rs).

Stores: the peer workload's four layouts (../shared/bench/peers_bench.py),
written once by zarr-python in C order, as Python writes them; every
contender reads the same stores.

Usage: first_read.py PEERS_BENCH.py --data-dir DIR [--rounds 5] [--pause 0]
       [--impls zarr-python+zarrs,tensorstore] [--layouts none,zstd1,lz4,shard]
       [--out FILE.json]
"""
import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys

R_CHILD = r"""
suppressMessages(library(zarr))
vm <- function() {
  l <- readLines("/proc/vmstat")
  v <- as.numeric(sub(".* ", "", l))
  names(v) <- sub(" .*", "", l)
  v[c("thp_fault_alloc", "compact_stall")]
}
minflt <- function() as.numeric(strsplit(readLines("/proc/self/stat"), " ")[[1]][10])
a <- open_zarr(commandArgs(TRUE)[[1]], read_only = TRUE)[["/"]]
v0 <- vm(); f0 <- minflt(); t0 <- proc.time()
x <- a[]
t <- proc.time() - t0; f1 <- minflt(); v1 <- vm()
cat(jsonlite::toJSON(list(wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]],
  minflt = f1 - f0, thp = v1[[1]] - v0[[1]], stall = v1[[2]] - v0[[2]]), auto_unbox = TRUE, digits = NA))
"""

PY_CHILD = r"""
import importlib.util, json, os, resource, sys, time
spec = importlib.util.spec_from_file_location("pb", sys.argv[1])
pb = importlib.util.module_from_spec(spec); spec.loader.exec_module(pb)
def vm():
    d = dict(l.split() for l in open("/proc/vmstat"))
    return int(d["thp_fault_alloc"]), int(d["compact_stall"])
impl = pb.IMPLS[sys.argv[2]]()
a = impl[1](sys.argv[3])
v0 = vm(); r0 = resource.getrusage(resource.RUSAGE_SELF); c0 = os.times()
t0 = time.perf_counter(); x = impl[3](a); t = time.perf_counter() - t0
c1 = os.times(); r1 = resource.getrusage(resource.RUSAGE_SELF); v1 = vm()
print(json.dumps({"wall": t, "cpu": c1.user - c0.user + c1.system - c0.system,
                  "minflt": r1.ru_minflt - r0.ru_minflt, "thp": v1[0] - v0[0], "stall": v1[1] - v0[1]}))
"""


def load_peers(path):
    spec = importlib.util.spec_from_file_location("peers_bench", path)
    pb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pb)
    return pb


def run(cmd):
    # R puts its own libraries first in LD_LIBRARY_PATH; Python must not see them.
    env = dict(os.environ)
    if cmd[0] != "Rscript":
        env.pop("LD_LIBRARY_PATH", None)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peers")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pause", type=float, default=0.0)
    ap.add_argument("--impls", default="zarr-python+zarrs,tensorstore")
    ap.add_argument("--layouts", default="none,zstd1,lz4,shard")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    pb = load_peers(args.peers)
    os.makedirs(args.data_dir, exist_ok=True)
    data = None
    layouts = args.layouts.split(",")
    for layout in layouts:
        path = os.path.join(args.data_dir, f"py_{layout}.zarr")
        if not os.path.exists(path):
            if data is None:
                data = pb.make_data()
            create, _open, write, _read, _subset = pb.IMPLS["zarr-python"]()
            write(create(path, layout), data)
    import time
    contenders = ["zarr (R)"] + args.impls.split(",")
    rng = random.Random(args.seed)
    rows = []
    for layout in layouts:
        path = os.path.join(args.data_dir, f"py_{layout}.zarr")
        runs = {c: [] for c in contenders}
        for _ in range(args.rounds):
            turn = list(contenders)
            rng.shuffle(turn)
            for c in turn:
                time.sleep(args.pause)
                before = load()
                if c == "zarr (R)":
                    r = run(["Rscript", "-e", R_CHILD, path])
                else:
                    r = run([sys.executable, "-c", PY_CHILD, pb.__file__, c, path])
                r["load"] = before
                runs[c].append(r)
        for c in contenders:
            med = {k: statistics.median(r[k] for r in runs[c]) for k in runs[c][0]}
            row = {"layout": layout, "impl": c, "pause": args.pause, "runs": runs[c],
                   **{f"median_{k}": v for k, v in med.items()}}
            rows.append(row)
            print(f"{layout:6} {c:20} pause {args.pause:g}: wall {med['wall']:.4f} s, cpu {med['cpu']:.4f} s, "
                  f"minflt {med['minflt']:.0f}, thp faults {med['thp']:.0f}, compaction stalls "
                  f"{med['stall']:.0f} (load {med['load']:.1f}; cpu per run "
                  + " ".join(f"{r['cpu']:.3f}" for r in runs[c]) + ")", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
