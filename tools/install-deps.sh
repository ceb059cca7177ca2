#!/bin/sh
# Installs what building and testing the package needs, from Debian's
# packages, when it is missing: R, the R packages it imports and suggests,
# and lintr. Needs root (or sudo) only when something is missing.
set -e

need=""
command -v Rscript >/dev/null 2>&1 || need="r-base-dev"
for p in R6:r-cran-r6 jsonlite:r-cran-jsonlite testthat:r-cran-testthat bit64:r-cran-bit64 \
         withr:r-cran-withr knitr:r-cran-knitr rmarkdown:r-cran-rmarkdown \
         roxygen2:r-cran-roxygen2 lintr:r-cran-lintr \
         DelayedArray:r-bioc-delayedarray stars:r-cran-stars future:r-cran-future \
         future.apply:r-cran-future.apply progressr:r-cran-progressr; do
  pkg=${p%%:*}
  deb=${p#*:}
  if ! command -v Rscript >/dev/null 2>&1 || \
     ! Rscript -e "quit(status = !requireNamespace('$pkg', quietly = TRUE))" >/dev/null 2>&1; then
    need="$need $deb"
  fi
done
command -v pandoc >/dev/null 2>&1 || need="$need pandoc"

if [ -n "$need" ]; then
  echo "installing:$need"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "cargo (Rust) is required: install it with rustup or your package manager" >&2
  exit 1
fi
