#!/usr/bin/env bash
# `make bench`: the peers (zarr-python, zarr-python with the zarrs pipeline,
# tensorstore) and this package on the same workload in one run, then
# bench/RESULTS.md. Needs ../shared/bench/peers_bench.py and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=../shared/bench/peers_bench.py
[ -f "$peers" ] || { echo "bench: $peers is missing" >&2; exit 1; }
venv=bench/.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# R puts its own libraries first in LD_LIBRARY_PATH; Python must not see them.
unset LD_LIBRARY_PATH
"$venv/bin/pip" install -q "zarr>=3" zarrs tensorstore numcodecs google-crc32c numpy
# nginx (optional) for bench/http_read.R: a server that is not the bottleneck.
if ! command -v nginx > /dev/null && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light > /dev/null 2>&1 || true
  # Debian starts the packaged service; the benchmark runs its own.
  service nginx stop > /dev/null 2>&1 || true
fi
mkdir -p bench/results
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
# The peers and this package take turns on each repeat (bench/interleaved.py);
# zarr_bench.R then adds read scaling and the hierarchy figures.
"$venv/bin/python" bench/interleaved.py "$peers" --repeats "${REPEATS:-9}" \
  --data-dir "$data" --out bench/results
# The writes once more with the stores in memory (tmpfs), where no file
# system history (ext4's scan of recently deleted inodes) weighs on them.
rm -f bench/results/peers_writes.json bench/results/zarr_writes.json
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  shm=$(mktemp -d -p /dev/shm zarr-bench-XXXXXX)
  trap 'rm -rf "$data" "$shm"' EXIT
  "$venv/bin/python" bench/interleaved.py "$peers" --repeats "${REPEATS:-9}" \
    --data-dir "$shm" --out bench/results --writes-only
  rm -rf "$shm"
fi
# And on a freshly made ext4 with a journal (mkfs.ext4's default, and what
# users' machines have), loop-mounted: this machine's own root ext4 has no
# journal, and in that mode ext4 will not reuse an inode deleted in the
# last seconds, so every new file first steps over the ones the earlier
# repeats freed. Needs root and loop devices; skipped without them.
rm -f bench/results/peers_journal.json bench/results/zarr_journal.json
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 > /dev/null && command -v losetup > /dev/null; then
  mnt="$data/journal"
  mkdir -p "$mnt"
  truncate -s 6G "$data/journal.img"
  # Inode tables and journal written now, so no lazy-init thread runs
  # beside the timed writes.
  if mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$data/journal.img" &&
    mount -o loop "$data/journal.img" "$mnt" 2> /dev/null; then
    trap 'umount "$mnt" 2> /dev/null || true; rm -rf "$data" "${shm:-}"' EXIT
    mkdir -p "$mnt/bench"
    "$venv/bin/python" bench/interleaved.py "$peers" --repeats "${REPEATS:-9}" \
      --data-dir "$mnt/bench" --out bench/results --writes-only --tag _journal
    umount "$mnt"
  else
    echo "bench: no loop-mounted ext4 here; the journaled-ext4 writes are skipped" >&2
  fi
  rm -f "$data/journal.img"
fi
Rscript bench/zarr_bench.R "${REPEATS:-9}" bench/results/zarr.json bench/results/zarr_rows.json
# Issue 21's float32 cube against the zarrs pipeline, and the cost of
# many small chunks.
Rscript bench/cube_read.R "${REPEATS:-9}" bench/results/cube.json
Rscript bench/small_chunks.R "${REPEATS:-9}" bench/results/small_chunks.json
Rscript bench/read_loop.R bench/results/read_loop.json
Rscript bench/report.R bench/results
