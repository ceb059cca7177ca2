#!/bin/sh
# R CMD check --as-cran of the source tarball $1 (made by `make tarball`) as
# on a machine without network: in a network namespace of its own (only the
# loopback device, which the HTTP tests use) when run as root, with an empty
# CARGO_HOME, no proxy and pip without an index, and without the
# developer's variables (shared target folder, test venv and fixtures,
# NOT_CRAN). The tree ~/.cargo must come out byte for byte as it was; as
# root, the check also runs with ~/.cargo mounted read-only, so that a
# write there would fail the install. On a machine where other cargo runs
# go on meanwhile (they update ~/.cargo/.global-cache), a difference is
# then theirs, and is listed without failing.
# There is no LaTeX on the project's machines: --no-manual.
set -e
tarball="$1"
[ -f "$tarball" ] || { echo "no tarball $tarball: run make tarball" >&2; exit 1; }
work="$(pwd)/.check-cran"
rm -rf zarr.Rcheck "$work"
mkdir -p "$work/cargo-home"
tools/tree-digest.sh "$HOME/.cargo" > "$work/cargo-before.txt"

unset ZARR_CARGO_TARGET_DIR CARGO_TARGET_DIR ZARR_RUSTFLAGS RUSTFLAGS \
  ZARR_TEST_VENV ZARR_TEST_PYTHON ZARR_SHARED_DIR NOT_CRAN \
  http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
CARGO_HOME="$work/cargo-home"
CARGO_NET_OFFLINE=true
PIP_NO_INDEX=1
_R_CHECK_FORCE_SUGGESTS_=false
export CARGO_HOME CARGO_NET_OFFLINE PIP_NO_INDEX _R_CHECK_FORCE_SUGGESTS_

read_only=no
if [ "$(id -u)" -eq 0 ] && unshare -n -m true 2>/dev/null; then
  echo "checking in a namespace without network, ~/.cargo mounted read-only"
  read_only=yes
  set -- unshare -n -m sh -c 'ip link set lo up &&
    if [ -d "$HOME/.cargo" ]; then
      mount --bind "$HOME/.cargo" "$HOME/.cargo" && mount -o remount,bind,ro "$HOME/.cargo"
    fi && exec "$@"' sh
else
  echo "not root: checking with the network present (offline by the variables only)"
  set --
fi
start=$(date +%s)
status=0
"$@" R CMD check --as-cran --no-manual "$tarball" > "$work/check.log" 2>&1 || status=$?
echo "R CMD check: $(( $(date +%s) - start )) s, exit status $status"
tools/tree-digest.sh "$HOME/.cargo" > "$work/cargo-after.txt"

grep -E '^\* checking whether package .* can be installed|^Status|ERROR|WARNING|NOTE' "$work/check.log" || true
du -sh zarr.Rcheck/zarr 2>/dev/null | awk '{print "installed size: " $1}'
du -sh zarr.Rcheck/zarr/libs 2>/dev/null | awk '{print "installed libs: " $1}'
if cmp -s "$work/cargo-before.txt" "$work/cargo-after.txt"; then
  echo "~/.cargo unchanged by the install (byte for byte)"
elif [ "$read_only" = yes ]; then
  echo "~/.cargo was read-only for the check; other processes changed:"
  diff "$work/cargo-before.txt" "$work/cargo-after.txt" | head -n 20
else
  echo "~/.cargo CHANGED during the check:"
  diff "$work/cargo-before.txt" "$work/cargo-after.txt" | head -n 20
  exit 1
fi
if grep -q '^Status: .*ERROR' "$work/check.log" || ! grep -q '^Status' "$work/check.log"; then
  tail -n 40 "$work/check.log"
  exit 1
fi
