#!/bin/sh
# configure's decisions about the Rust toolchain, without building: a
# fake `rustc` earlier on PATH reports a version, configure runs in a copy
# of the files it reads, and the Makevars it writes must turn the
# "icechunk" feature on or off as the version allows (the icechunk crate
# needs rustc >= 1.95), say so, and refuse a rustc older than the crate's
# rust-version. Run by `make test`.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# configure with a rustc of version $1: its output in $work/out, its
# status in $status, the Makevars' features in $features.
run_configure() {
  rm -rf "$work/pkg" "$work/bin"
  mkdir -p "$work/pkg/src/rust" "$work/bin"
  cp "$here/configure" "$work/pkg/"
  cp "$here/src/Makevars.in" "$work/pkg/src/"
  cp "$here/src/rust/Cargo.toml" "$work/pkg/src/rust/"
  printf '#!/bin/sh\necho "rustc %s (fake 2026-01-01)"\n' "$1" > "$work/bin/rustc"
  chmod +x "$work/bin/rustc"
  status=0
  (cd "$work/pkg" && PATH="$work/bin:$PATH" ZARR_CARGO_TARGET_DIR= sh ./configure) > "$work/out" 2>&1 || status=$?
  features=$(sed -n 's/^CARGO_FEATURES = *//p' "$work/pkg/src/Makevars" 2>/dev/null || true)
}

# check DESCRIPTION CONDITION: report a failed one with configure's output.
check() {
  if eval "$2"; then
    echo "ok: $1"
  else
    echo "FAILED: $1"
    sed 's/^/  | /' "$work/out"
    failed=1
  fi
}

run_configure 1.94.1
check "rustc 1.94.1: builds without Icechunk" '[ "$status" = 0 ] && [ -z "$features" ]'
check "rustc 1.94.1: says which rustc Icechunk needs" \
  'grep -q "Icechunk repositories: no (the icechunk crate needs rustc >= 1.95)" "$work/out"'

run_configure 1.95.0
check "rustc 1.95.0: builds with Icechunk" '[ "$status" = 0 ] && [ "$features" = icechunk ]'
check "rustc 1.95.0: says so" 'grep -q "Icechunk repositories: yes" "$work/out"'

run_configure 2.0.0
check "rustc 2.0.0: builds with Icechunk" '[ "$status" = 0 ] && [ "$features" = icechunk ]'

required=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' "$here/src/rust/Cargo.toml")
run_configure 1.80.0
check "rustc 1.80.0: refused, naming rustc >= $required" \
  '[ "$status" != 0 ] && grep -q "zarr needs rustc >= $required; this rustc is 1.80.0" "$work/out"'

exit $failed
