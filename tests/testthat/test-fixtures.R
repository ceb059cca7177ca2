# Every array zarr-python wrote in ../shared/fixtures must read back exactly
# as its manifest says, with the package's NA semantics applied: elements
# equal to the fill value read as NA (not for bool, and for v3 strings only
# the package's fill value U+2400).

fixture_expected <- function(entry) {
  dtype <- entry$dtype
  vals <- entry$values
  fill <- entry$fill_value
  num <- function(v) {
    if (is.character(v)) return(switch(v, "NaN" = NaN, "Infinity" = Inf, "-Infinity" = -Inf, as.numeric(v)))
    as.numeric(v)
  }
  same <- function(v, f) if (is.nan(f)) is.nan(v) else !is.na(v) & v == f
  out <- switch(dtype,
    bool = as.logical(unlist(vals)),
    string = {
      x <- vapply(vals, function(v) v, character(1))
      # a v3 string fill value reads as NA only when it is the package's
      # marker; a v2 one always (it is xarray's _FillValue there)
      if (identical(fill, "\u2400") || startsWith(entry$store, "v2/") && !is.null(fill)) x[x == fill] <- NA_character_
      x
    },
    int8 = , int16 = , int32 = , uint8 = , uint16 = {
      # int32's minimum is R's NA_integer_, which is how it reads
      x <- suppressWarnings(as.integer(unlist(vals)))
      if (!is.null(fill)) x[x == as.integer(fill)] <- NA_integer_
      x
    },
    int64 = , uint32 = , uint64 = {
      txt <- vapply(vals, function(v) if (is.character(v)) v else sprintf("%.0f", v), character(1))
      # values above 2^63 - 1 give NA here, as they do when read
      x <- suppressWarnings(bit64::as.integer64(txt))
      # integer64 cannot hold uint64 values above 2^63 - 1: they read as NA
      too_big <- !startsWith(txt, "-") & (nchar(txt) > 19L | (nchar(txt) == 19L & txt > "9223372036854775807"))
      x[too_big] <- NA
      if (!is.null(fill)) x[txt == as.character(fill)] <- NA
      x
    },
    float16 = , float32 = , float64 = {
      x <- vapply(vals, num, numeric(1))
      if (!is.null(fill)) x[same(x, num(fill))] <- NA_real_
      x
    },
    complex64 = , complex128 = {
      re <- vapply(vals, function(v) num(v[[1L]]), numeric(1))
      im <- vapply(vals, function(v) num(v[[2L]]), numeric(1))
      x <- complex(real = re, imaginary = im)
      if (!is.null(fill)) {
        na <- same(re, num(fill[[1L]])) & same(im, num(fill[[2L]]))
        x[na] <- NA_complex_
      }
      x
    },
    stop("unexpected dtype ", dtype)
  )
  shape <- as.numeric(unlist(entry$shape))
  if (length(shape) > 1L) {
    cls <- oldClass(out)
    out <- aperm(array(out, rev(shape)), rev(seq_along(shape)))
    oldClass(out) <- cls
  }
  # a 1-d array reads as a plain vector (arr[] as in R-CF's zarr)
  out
}

# Why a fixture is not read yet, or NA when it is.
fixture_unsupported <- function(entry) {
  NA_character_
}

fixture_manifest <- function() {
  root <- file.path(shared_dir(), "fixtures", "zarr-python")
  jsonlite::fromJSON(file.path(root, "manifest.json"), simplifyVector = FALSE, bigint_as_char = TRUE)
}

test_that("every numeric v3 fixture array reads back exactly", {
  skip_if_no_shared()
  skip_if_not_installed("bit64")
  # The manifest states the Zarr rule (fill value -> NA); the arrays with
  # dimension_names are CF variables, read the xarray way (test-cf.R).
  withr::local_options(zarr.cf_decode = FALSE)
  root <- file.path(shared_dir(), "fixtures", "zarr-python")
  exact <- 0L
  stores <- list()
  for (e in fixture_manifest()$arrays) {
    id <- paste0(e$store, "/", e$path)
    if (!is.na(fixture_unsupported(e))) next
    if (is.null(stores[[e$store]])) stores[[e$store]] <- open_zarr(file.path(root, e$store), read_only = TRUE)
    arr <- stores[[e$store]][[paste0("/", e$path)]]
    expect_false(is.null(arr), label = id)
    got <- withCallingHandlers(arr[], zarr_warning = function(w) {
      # only values integer64 cannot hold (uint64 above 2^63-1, int64 -2^63) may warn
      if (e$dtype %in% c("uint64", "int64")) invokeRestart("muffleWarning")
    })
    want <- fixture_expected(e)
    # dimension names are checked on their own below
    dimnames(got) <- NULL
    ok <- identical(got, want, num.eq = FALSE)
    expect_true(ok, label = sprintf("%s (%s, %s)", id, e$dtype, e$variant))
    if (ok) exact <- exact + 1L
  }
  message(sprintf("fixtures: %d arrays read exactly", exact))
  expect_gt(exact, 200L)
})

test_that("an array's engine opened from the document read at open equals one read from the store", {
  skip_if_no_shared()
  root <- file.path(shared_dir(), "fixtures", "zarr-python")
  stores <- list()
  same <- 0L
  for (e in fixture_manifest()$arrays) {
    if (is.null(stores[[e$store]])) stores[[e$store]] <- open_zarr(file.path(root, e$store), read_only = TRUE)
    z <- stores[[e$store]]
    arr <- z[[paste0("/", e$path)]]
    key <- zarr:::node_key_path(arr$path)
    # the text the engine is opened from is what the store object read at open
    txt <- zarr:::node_json_get(z$store, key)
    expect_type(txt, "character")
    handle <- zarr:::open_array_engine(z$store, arr$path, TRUE)
    fresh <- zarr:::rz_array_open(zarr:::store_handle(z$store), key, TRUE)
    ok <- identical(zarr:::rz_array_metadata(handle), zarr:::rz_array_metadata(fresh))
    expect_true(ok, label = paste0(e$store, "/", e$path))
    same <- same + ok
  }
  expect_identical(same, 294L)
})

test_that("every fixture array is in a supported format (none skipped)", {
  skip_if_no_shared()
  why <- vapply(fixture_manifest()$arrays, fixture_unsupported, character(1))
  expect_identical(unname(why[!is.na(why)]), character(0))
  expect_identical(length(why), 294L)
})

test_that("fixture groups open with their attributes", {
  skip_if_no_shared()
  root <- file.path(shared_dir(), "fixtures", "zarr-python")
  manifest <- jsonlite::fromJSON(file.path(root, "manifest.json"), simplifyVector = FALSE)
  n <- 0L
  for (g in manifest$groups) {
    n <- n + 1L
    z <- open_zarr(file.path(root, g$store), read_only = TRUE)
    node <- z$get_node(paste0("/", g$path))
    expect_s3_class(node, "zarr_group")
    expect_identical(node$attributes[order(names(node$attributes))],
                     g$attributes[order(names(g$attributes))], label = paste(g$store, g$path))
    expect_identical(as.integer(node$metadata$zarr_format), as.integer(g$zarr_format))
  }
  message(sprintf("fixtures: %d groups opened with their attributes", n))
  expect_identical(n, 12L)
})

test_that("dimension_names of fixture arrays become names(dimnames())", {
  skip_if_no_shared()
  z <- open_zarr(file.path(shared_dir(), "fixtures", "zarr-python", "v3", "hierarchy.zarr"), read_only = TRUE)
  arr <- z[["/a/b/arr"]]
  expect_identical(names(dimnames(arr)), c("y", "x"))
  expect_identical(names(dimnames(arr[1:2, ])), c("y", "x"))
})
