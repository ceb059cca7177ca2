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
Rscript bench/zarr_bench.R "${REPEATS:-9}" bench/results/zarr.json bench/results/zarr_rows.json
Rscript bench/report.R bench/results
