#!/bin/sh
# Prints one line per file below $1: its path, mode and SHA-256, sorted, so
# that two runs compare byte for byte (used to show that an install leaves
# ~/.cargo as it was).
cd "$1" 2>/dev/null || { echo "(no folder $1)"; exit 0; }
find . \( -type f -o -type l -o -type d \) -printf '%p %y %m\n' | LC_ALL=C sort
find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
