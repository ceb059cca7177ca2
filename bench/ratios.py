#!/usr/bin/env python3
"""Ratios of a run of bench/interleaved.py: this package's medians over the
zarrs pipeline's and over the best peer's, per layout, storage order and
operation, as a Markdown table (the back-to-back, after-a-pause and
new-process columns of bench/FIRST_READ_RESULTS.md).

Usage: ratios.py DIR   (DIR holds peers.json and zarr_rows.json)
"""
import json
import os
import sys

OPS = [("readloop_s", "read b2b"), ("read_s", "read after a pause"),
       ("readfresh_s", "first read, new process"), ("write_s", "write after a pause"),
       ("writeloop_s", "write b2b")]
ZARRS = "zarr-python+zarrs"


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "peers.json")) as f:
        peers = json.load(f)["rows"]
    with open(os.path.join(d, "zarr_rows.json")) as f:
        ours = json.load(f)
    ops = [(k, label) for k, label in OPS if any(k in r for r in ours)]
    print("| layout | order | " + " | ".join(f"{label}: s (/ zarrs, / best peer)" for _, label in ops) + " |")
    print("|---|---|" + "---:|" * len(ops))
    for r in ours:
        cells = []
        for k, _ in ops:
            mine = r.get(k)
            same = [p for p in peers if p["layout"] == r["layout"] and p.get(k) is not None]
            if mine is None or not same:
                cells.append("")
                continue
            zarrs = next((p[k] for p in same if p["impl"] == ZARRS), None)
            best = min(same, key=lambda p: p[k])
            zr = f"{mine / zarrs:.2f}" if zarrs else "-"
            cells.append(f"{mine:.3f} ({zr}, {mine / best[k]:.2f} {best['impl']})")
        print(f"| {r['layout']} | {r['order']} | " + " | ".join(cells) + " |")
    print()
    print("Peers' medians (s): " + "; ".join(
        f"{p['impl']} {p['layout']} " + ", ".join(f"{label} {p[k]:.3f}" for k, label in ops if p.get(k))
        for p in peers))


if __name__ == "__main__":
    sys.exit(main())
