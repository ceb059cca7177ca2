# Vendors the crate's dependencies into src/rust/vendor.tar.xz for the
# source tarball, so that an install needs no network (run by
# `make tarball`, from the package root, with cargo on the PATH).
#
# `cargo vendor` copies every crate of Cargo.lock, including those only
# built for targets R never runs on (wasm, Windows MSVC/ARM, i686). Cargo
# still reads their manifests to resolve the lock, so those crates stay as
# stubs (manifest and licence files only); the crates that are built lose
# their test data and the assembly of targets CRAN does not build for.
# Each change is mirrored in .cargo-checksum.json, whose file list cargo
# verifies.

crate <- "src/rust"
vendor <- file.path(crate, "vendor")
archive <- file.path(crate, "vendor.tar.xz")

# The platforms of CRAN's builders and of R's usual binaries. The build
# scripts run on the same platform (CRAN does not cross-compile).
targets <- c(
  "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin", "aarch64-apple-darwin",
  "x86_64-pc-windows-gnu"
)

run <- function(cmd, args, ...) {
  status <- system2(cmd, args, ...)
  if (!identical(as.integer(status), 0L)) stop(cmd, " ", paste(args, collapse = " "), " failed")
  invisible(status)
}

unlink(vendor, recursive = TRUE)
unlink(archive)
run("cargo", c("vendor", "--quiet", "--locked", "--versioned-dirs",
               "--manifest-path", file.path(crate, "Cargo.toml"), vendor),
    stdout = FALSE)

# "name-version" of each crate built for one of `targets` (normal and
# build dependencies, the features of the default build with the
# "icechunk" feature, which configure turns on where rustc allows).
needed <- unique(unlist(lapply(targets, function(t) {
  out <- system2("cargo", c("tree", "--locked", "--offline", "--manifest-path",
                            file.path(crate, "Cargo.toml"), "--target", t, "--features", "icechunk",
                            "-e", "normal,build", "--prefix", "none", "-f", "'{p}'"),
                 stdout = TRUE)
  if (!is.null(attr(out, "status"))) stop("cargo tree failed for ", t)
  out <- sub(" \\(.*$", "", out)
  sub(" v", "-", out, fixed = TRUE)
})))
# The package's own crate is the first line of every tree.
needed <- setdiff(needed, "zarr-0.1.0")

# The features each built crate is compiled with (those of every target).
metadata <- system2("cargo", c("metadata", "--format-version", "1", "--locked", "--offline", "--features", "icechunk",
                               "--manifest-path", file.path(crate, "Cargo.toml")), stdout = TRUE)
if (!is.null(attr(metadata, "status"))) stop("cargo metadata failed")
nodes <- jsonlite::fromJSON(paste(metadata, collapse = "\n"), simplifyVector = FALSE)$resolve$nodes
features_of <- function(name, version = "") {
  node <- Filter(function(n) grepl(paste0("#", name, "@", version), n$id, fixed = TRUE), nodes)
  unique(unlist(lapply(node, `[[`, "features")))
}

# Licence and notice files are kept in every crate, stub or not.
keep_always <- "^(Cargo\\.toml|LICEN[CS]E[^/]*|COPYING[^/]*|NOTICE[^/]*|AUTHORS[^/]*|COPYRIGHT[^/]*)$"

# Inside crates that are built: files no build reads. Dependencies' tests,
# benches, examples and binaries are never compiled; ring uses its
# pregenerated objects (not the .asm sources, nor the Perl that generates
# them) and has no Windows builds here but x86_64; libz-sys builds zlib-ng
# only with a feature this crate does not enable; parquet's modules behind
# features this crate does not enable are never read by rustc (a module
# that cfg removes is not loaded); tracing ships the tests of its macros;
# lz4-sys compiles four files of liblz4/lib, zstd-sys its lib/ folder (not
# the cmake files, nor the seekable format of contrib/, both behind
# features that are off).
parquet_features <- features_of("parquet")
if (!"snap" %in% parquet_features) stop("parquet's features not found in cargo metadata")
drop_pattern <- function(name) {
  common <- "^(tests|benches|examples|test-data|testdata|fuzz)/"
  extra <- switch(name,
    ring = "^pregenerated/.*(-win32n\\.(asm|o)|-win64\\.S|-nasm\\.asm)$|^crypto/.*\\.pl$",
    # tracing's own macro tests (9 MB), a folder of the crate no build reads.
    tracing = "^test-macros/",
    `lz4-sys` = "^liblz4/(build|contrib|doc|examples|ossfuzz|programs|tests)/",
    `zstd-sys` = "^zstd/(build|contrib)/",
    `libz-sys` = "^src/zlib-ng/",
    # zfp-rs: the benchmarks' figures and scripts.
    `zfp-rs` = "^(docs|scripts)/",
    parquet = paste(c("^src/bin/",
                      if (!"arrow" %in% parquet_features) "^src/arrow/",
                      if (!"encryption" %in% parquet_features) "^src/encryption/"),
                    collapse = "|"),
    NULL
  )
  paste(c(common, extra), collapse = "|")
}

# windows-sys has one module per API area, each in its folder
# src/Windows/<Area>/<Sub>/mod.rs and declared behind the feature
# "<Area>_<Sub>": the files of features that are off are never read. Its
# two versions in the lock have different feature sets.
windows_sys_unused <- function(version, files) {
  enabled <- features_of("windows-sys", version)
  if (!"Win32" %in% enabled) stop("windows-sys ", version, ": features not found in cargo metadata")
  modules <- grepl("^src/Windows/.+/mod\\.rs$", files)
  feature <- gsub("/", "_", sub("^src/Windows/(.+)/mod\\.rs$", "\\1", files), fixed = TRUE)
  files[modules & !feature %in% enabled]
}

checksum_update <- function(dir, keep) {
  path <- file.path(dir, ".cargo-checksum.json")
  sums <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  sums$files <- sums$files[intersect(names(sums$files), keep)]
  if (length(sums$files) == 0L) sums$files <- structure(list(), names = character(0))
  writeLines(jsonlite::toJSON(sums, auto_unbox = TRUE), path)
}

stubbed <- character(0)
for (dir in list.dirs(vendor, recursive = FALSE)) {
  name_version <- basename(dir)
  files <- list.files(dir, recursive = TRUE, all.files = TRUE, no.. = TRUE)
  files <- setdiff(files, ".cargo-checksum.json")
  if (name_version %in% needed) {
    name <- sub("-[0-9]+\\.[0-9]+\\.[0-9]+.*$", "", name_version)
    drop <- files[grepl(drop_pattern(name), files)]
    if (name == "windows-sys") {
      drop <- union(drop, windows_sys_unused(substring(name_version, nchar(name) + 2L), files))
    }
  } else {
    drop <- files[!grepl(keep_always, files)]
    stubbed <- c(stubbed, name_version)
  }
  unlink(file.path(dir, drop))
  # Empty folders left behind are harmless, but smaller archives are nicer.
  for (d in rev(sort(unique(dirname(file.path(dir, drop)))))) {
    if (dir.exists(d) && length(list.files(d, all.files = TRUE, no.. = TRUE)) == 0L) unlink(d, recursive = TRUE)
  }
  if (!name_version %in% needed) {
    # A library target must exist for the manifest to parse; it is never built.
    dir.create(file.path(dir, "src"), showWarnings = FALSE)
    writeLines("// Not built on the platforms this package supports.", file.path(dir, "src", "lib.rs"))
  }
  checksum_update(dir, setdiff(files, drop))
}
missing <- setdiff(needed, basename(list.dirs(vendor, recursive = FALSE)))
if (length(missing)) stop("not vendored: ", paste(missing, collapse = ", "))

cat(sprintf("vendored %d crates, %d of them as stubs (not built on %s)\n",
            length(needed) + length(stubbed), length(stubbed), paste(targets, collapse = ", ")))

# Fixed order, owner and times: the same sources give the same archive.
old <- setwd(crate)
run("tar", c("--sort=name", "--owner=0", "--group=0", "--numeric-owner",
             "--mtime=2000-01-01", "-cf", "vendor.tar", "vendor"))
run("xz", c("-9e", "-T2", "-f", "vendor.tar"))
unlink("vendor", recursive = TRUE)
setwd(old)
cat(sprintf("%s: %.2f MB\n", archive, file.size(archive) / 1e6))
