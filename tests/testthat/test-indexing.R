# `[` and `[<-` on a zarr_array follow R's rules for `[` on an array: every
# selection must give exactly what the same selection gives on the R array.

# A zarr array holding `x`, with small chunks so that selections cross them.
zarr_copy <- function(x, chunks = NULL) {
  z <- create_zarr()
  shape <- if (is.null(dim(x))) length(x) else dim(x)
  type <- switch(typeof(x), logical = "bool", integer = "int32", double = "float64", complex = "complex128")
  def <- define_array(type, shape)
  def$chunk_shape <- if (is.null(chunks)) pmax(1, ceiling(shape / 3)) else chunks
  arr <- z$add_array("/", "x", def)
  arr$write(x)
  arr
}

# Compare `[` with the same arguments on the zarr array and on `x`.
expect_same_subset <- function(arr, x, args, ...) {
  args <- as_index_args(args)
  got <- do.call(`[`, c(list(arr), args, list(...)))
  want <- do.call(`[`, c(list(x), args, list(...)))
  expect_identical(got, want, info = paste(deparse(args), collapse = " "))
}

# Stands for an empty (missing) index, as in x[, 2].
E <- structure(list(), class = "empty_index")

as_index_args <- function(args) {
  lapply(args, function(a) if (inherits(a, "empty_index")) quote(expr = ) else a)
}

matrix_cases <- list(
  ranges = list(2:4, 5:8),
  single = list(3, 5),
  single_row = list(7, E),
  single_col = list(E, 2),
  negative = list(-1, -(2:3)),
  negative_scattered = list(-c(1, 10, 5), -8),
  logical = list(c(TRUE, FALSE), c(FALSE, TRUE, TRUE)),
  logical_full = list(rep(c(TRUE, FALSE, TRUE, FALSE, FALSE), 2), rep(TRUE, 8)),
  out_of_order = list(c(10, 1, 5), c(8, 3, 2)),
  repeated = list(c(2, 2, 2, 9), c(8, 8, 1)),
  reversed = list(10:1, 8:1),
  empty_i = list(E, 4:6),
  empty_both = list(E, E),
  zero_length = list(integer(0), 2),
  zero_index = list(0, 1:2),
  doubles = list(c(1.9, 3.2), 2),
  integer_type = list(2L:3L, 4L)
)

test_that("`[` on a matrix array equals `[` on the R matrix", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  for (nm in names(matrix_cases)) {
    expect_same_subset(arr, x, matrix_cases[[nm]])
  }
})

test_that("fractional indices are truncated as R does, at either end of a dimension", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  cases <- list(
    list(c(1, 1.999, 10.999), 8.5), list(0.999, 1), list(c(0.5, 2.5), 3),
    list(c(10.9999, 1), c(8.999, 1.001)), list(-1.5, 2), list(-c(0.5, 9.9), 2)
  )
  for (args in cases) expect_same_subset(arr, x, args)
  expect_error(arr[11, 1], class = "zarr_error_selection", regexp = "out of bounds")
  expect_error(arr[1, 9.0001], class = "zarr_error_selection", regexp = "out of bounds")
})

test_that("`[` with drop = FALSE keeps the degenerate dimensions", {
  x <- matrix(seq_len(80) / 3, 10, 8)
  arr <- zarr_copy(x)
  for (nm in names(matrix_cases)) {
    expect_same_subset(arr, x, matrix_cases[[nm]], drop = FALSE)
  }
  expect_identical(dim(arr[3, 5, drop = FALSE]), c(1L, 1L))
  expect_identical(arr[3, , drop = FALSE], x[3, , drop = FALSE])
})

test_that("`[` on a 1-d array reads a plain vector, as R-CF's zarr returns it", {
  x <- c(seq_len(24), NA)
  arr <- zarr_copy(x, chunks = 4)
  ax <- as.array(x)
  cases <- list(list(3:9), list(7), list(-1), list(-(20:25)), list(c(TRUE, FALSE, FALSE)),
                list(c(25, 1, 13)), list(c(4, 4, 4)), list(integer(0)), list(E))
  for (cs in cases) {
    expect_same_subset(arr, x, cs)
    # drop = FALSE keeps the 1-d array, as on the R array
    expect_same_subset(arr, ax, cs, drop = FALSE)
  }
  expect_identical(arr[], x)
  expect_identical(arr[2:4], x[2:4])
  expect_identical(arr$read(), x)
  expect_identical(arr$read(list(c(2, 4))), x[2:4])
  expect_identical(as.array(arr), ax)
})

test_that("`[` on a 3-d array equals `[` on the R array", {
  x <- array(seq_len(5 * 6 * 4) * 1.5, c(5, 6, 4))
  x[2, 3, 4] <- NA
  arr <- zarr_copy(x, chunks = c(2, 4, 3))
  cases <- list(
    list(1:3, 2:5, 2:3), list(2, 3, 4), list(E, 3, E), list(5, E, 1), list(-1, -6, -(1:2)),
    list(c(TRUE, FALSE), E, c(FALSE, TRUE)), list(c(5, 1, 3), c(6, 6, 1), c(4, 2)),
    list(E, E, E), list(integer(0), 1, 1), list(2, 2, E)
  )
  for (cs in cases) {
    expect_same_subset(arr, x, cs)
    expect_same_subset(arr, x, cs, drop = FALSE)
  }
})

test_that("`[` on a 4-d array keeps every element in place", {
  x <- array(seq_len(3 * 4 * 2 * 5), c(3, 4, 2, 5))
  arr <- zarr_copy(x, chunks = c(2, 3, 1, 2))
  expect_identical(arr[, , , ], x)
  expect_identical(arr[3, 4, 2, 5], x[3, 4, 2, 5])
  expect_identical(arr[c(3, 1), -2, 2, c(5, 1, 3)], x[c(3, 1), -2, 2, c(5, 1, 3)])
})

test_that("`[` with no index returns the whole array", {
  x <- matrix(c(TRUE, FALSE, NA, TRUE, TRUE, FALSE), 2, 3)
  arr <- zarr_copy(x)
  expected <- x
  expected[is.na(expected)] <- FALSE # bool has no NA
  expect_identical(arr[], expected)
  expect_identical(arr[, ], expected)
})

test_that("`[` works on every R type the package reads", {
  values <- list(
    logical = matrix(c(TRUE, FALSE, TRUE, TRUE, FALSE, FALSE), 2, 3),
    integer = matrix(c(1L, NA, 3L, 4L, 5L, 6L), 2, 3),
    double = matrix(c(1.5, NA, -3, 4e10, 5, 6), 2, 3),
    complex = matrix(complex(real = 1:6, imaginary = 6:1), 2, 3)
  )
  for (nm in names(values)) {
    x <- values[[nm]]
    arr <- zarr_copy(x)
    expect_same_subset(arr, x, list(2, c(3, 1)))
    expect_same_subset(arr, x, list(E, 2))
    expect_same_subset(arr, x, list(integer(0), E))
  }
})

test_that("empty selections have the type of the array", {
  arr <- zarr_copy(matrix(1:6, 2, 3))
  expect_identical(arr[integer(0), 1], integer(0))
  expect_identical(arr[integer(0), , drop = FALSE], matrix(integer(0), 0, 3))
  darr <- zarr_copy(c(1.5, 2.5))
  expect_identical(darr[integer(0)], numeric(0))
})

test_that("indices are evaluated where `[` is called", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  pick <- function(a, rows, col) a[rows, col]
  expect_identical(pick(arr, 3:5, 2), x[3:5, 2])
  k <- 4
  expect_identical(arr[k, k + 1], x[k, k + 1])
  expect_identical(arr[seq_len(k), -k], x[seq_len(k), -k])
  expect_identical(arr[nrow(x), ], x[nrow(x), ])
})

test_that("`[` only reads the chunks holding selected elements", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x, chunks = c(5, 4))
  # damage a chunk the selection does not touch
  arr$store$set("x/c/1/1", as.raw(1:7))
  expect_identical(arr[1:5, 1:4], x[1:5, 1:4])
  expect_error(arr[6, 5], class = "zarr_error_corrupt_chunk", regexp = "x/c/1/1", fixed = TRUE)
})

test_that("bad indices are zarr_error_selection naming the array", {
  arr <- zarr_copy(matrix(1:80, 10, 8))
  expect_error(arr[11, 1], class = "zarr_error_selection", regexp = "'/x'", fixed = TRUE)
  expect_error(arr[c(-1, 2), 1], class = "zarr_error_selection", regexp = "mixed")
  expect_error(arr[NA, 1], class = "zarr_error_selection", regexp = "NA")
  expect_error(arr[c(1, NA), 1], class = "zarr_error_selection", regexp = "NA")
  expect_error(arr[rep(TRUE, 11), 1], class = "zarr_error_selection", regexp = "logical")
  expect_error(arr[-11, 1], class = "zarr_error_selection", regexp = "'/x'", fixed = TRUE)
  expect_error(arr[1, 1, 1], class = "zarr_error_selection", regexp = "2 dimensions")
  expect_error(arr["a", 1], class = "zarr_error_selection", regexp = "dimnames")
  expect_error(arr[list(1), 1], class = "zarr_error_selection", regexp = "list")
})

test_that("`[` with one index on a matrix array uses linear indices, as R does", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  expect_same_subset(arr, x, list(5))
  expect_same_subset(arr, x, list(c(80, 1, 11, 11)))
  expect_same_subset(arr, x, list(-(1:70)))
  expect_same_subset(arr, x, list(x > 75))
  expect_error(arr[81], class = "zarr_error_selection", regexp = "'/x'", fixed = TRUE)
})

test_that("`[` with a matrix index picks one element per row, as R does", {
  x <- array(seq_len(60), c(3, 4, 5))
  arr <- zarr_copy(x, chunks = c(2, 2, 2))
  m <- rbind(c(1, 1, 1), c(3, 4, 5), c(2, 3, 1), c(2, 3, 1))
  expect_identical(arr[m], x[m])
  expect_error(arr[rbind(c(4, 1, 1))], class = "zarr_error_selection", regexp = "'/x'", fixed = TRUE)
})

test_that("dim() of a zarr_array is its shape as integers", {
  expect_identical(dim(zarr_copy(matrix(1:6, 2, 3))), c(2L, 3L))
  expect_identical(dim(zarr_copy(array(1, c(2, 3, 4)))), c(2L, 3L, 4L))
  expect_identical(dim(zarr_copy(1:5)), 5L)
  z <- create_zarr()
  s <- z$add_array("/", "s", define_array("int8", integer(0)))
  expect_null(dim(s))
  expect_identical(nrow(zarr_copy(matrix(1:6, 2, 3))), 2L)
  expect_identical(ncol(zarr_copy(matrix(1:6, 2, 3))), 3L)
})

test_that("`[<-` writes a block exactly as on the R matrix", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  arr[2:4, 5:6] <- matrix(-(1:6), 3, 2)
  x[2:4, 5:6] <- matrix(-(1:6), 3, 2)
  expect_identical(arr[], x)
  arr[c(10, 1), c(8, 1)] <- c(100L, 200L, 300L, 400L)
  x[c(10, 1), c(8, 1)] <- c(100L, 200L, 300L, 400L)
  expect_identical(arr[], x)
})

test_that("`[<-` recycles the value as R does", {
  x <- matrix(seq_len(80) / 2, 10, 8)
  arr <- zarr_copy(x)
  arr[1:4, 1:2] <- c(-1, -2)
  x[1:4, 1:2] <- c(-1, -2)
  expect_identical(arr[], x)
  arr[, 3] <- 0
  x[, 3] <- 0
  expect_identical(arr[], x)
  arr[] <- 7
  x[] <- 7
  expect_identical(arr[], x)
})

test_that("`[<-` with negative, logical and missing indices writes the same elements as R", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  arr[-1, -(1:6)] <- 0L
  x[-1, -(1:6)] <- 0L
  arr[c(TRUE, FALSE), 1] <- -5L
  x[c(TRUE, FALSE), 1] <- -5L
  arr[3, ] <- 1:8
  x[3, ] <- 1:8
  expect_identical(arr[], x)
})

test_that("`[<-` with repeated indices keeps the last value written, as R does", {
  x <- 1:10
  arr <- zarr_copy(x, chunks = 3)
  arr[c(2, 2, 5)] <- c(20L, 21L, 50L)
  x[c(2, 2, 5)] <- c(20L, 21L, 50L)
  expect_identical(arr$read(), x)
})

test_that("`[<-` on a 3-d array writes the same elements as R", {
  x <- array(seq_len(60) * 1.0, c(3, 4, 5))
  arr <- zarr_copy(x, chunks = c(2, 3, 2))
  arr[2, , 3:4] <- c(-1, -2, -3, -4)
  x[2, , 3:4] <- c(-1, -2, -3, -4)
  arr[, 1, 5] <- NA
  x[, 1, 5] <- NA
  expect_identical(arr[], x)
})

test_that("`[<-` with an empty selection changes nothing", {
  x <- matrix(1:6, 2, 3)
  arr <- zarr_copy(x)
  arr[integer(0), 1] <- 9L
  expect_identical(arr[], x)
})

test_that("`[<-` refuses a value whose length does not divide the selection", {
  x <- matrix(1:80, 10, 8)
  arr <- zarr_copy(x)
  expect_error(arr[1:3, 1] <- 1:2, class = "zarr_error_type", regexp = "'/x'", fixed = TRUE)
  expect_error(arr[1:3, 1] <- integer(0), class = "zarr_error_type", regexp = "'/x'", fixed = TRUE)
  expect_identical(arr[], x)
})

test_that("`[<-` returns the array so that the binding stays a zarr_array", {
  arr <- zarr_copy(1:5)
  arr[1] <- 10L
  expect_s3_class(arr, "zarr_array")
  expect_identical(arr[1], 10L)
})

test_that("length() of a zarr_array is its number of elements", {
  expect_identical(length(zarr_copy(matrix(1:6, 2, 3))), 6L)
  expect_identical(length(zarr_copy(1:5)), 5L)
  z <- create_zarr()
  expect_identical(length(z$add_array("/", "s", define_array("int8", integer(0)))), 1L)
  expect_identical(length(z$add_array("/", "e", define_array("int8", c(0, 4)))), 0L)
})

test_that("as.array() and as.vector() read the whole array as R would give it", {
  x <- array(seq_len(24) / 2, c(2, 3, 4))
  arr <- zarr_copy(x)
  expect_identical(as.array(arr), x)
  expect_identical(as.vector(arr), as.vector(x))
  expect_identical(as.vector(arr, "integer"), as.vector(x, "integer"))
  v <- c(1L, NA, 3L)
  varr <- zarr_copy(v)
  expect_identical(as.vector(varr), v)
  expect_identical(as.array(varr), as.array(v))
})

test_that("dimnames<- stores dimension names that `[` then carries, as R does", {
  x <- matrix(1:12, 3, 4)
  arr <- zarr_copy(x)
  expect_null(dimnames(arr))
  # A read before the change must not leave the old names behind.
  expect_identical(arr[2:3, 1], x[2:3, 1])
  dimnames(arr) <- list(row = NULL, col = NULL)
  expect_identical(names(dimnames(arr)), c("row", "col"))
  expect_identical(unlist(arr$metadata$dimension_names), c("row", "col"))
  dimnames(x) <- list(row = NULL, col = NULL)
  expect_same_subset(arr, x, list(2:3, c(4, 1)))
  expect_same_subset(arr, x, list(E, 2), drop = FALSE)
  expect_identical(as.array(arr), x)
  # stored in zarr.json
  doc <- jsonlite::fromJSON(rawToChar(arr$store$get("x/zarr.json")), simplifyVector = FALSE)
  expect_identical(unlist(doc$dimension_names), c("row", "col"))
  dimnames(arr) <- NULL
  expect_null(dimnames(arr))
  expect_identical(arr[2:3, 1:2], unname(x)[2:3, 1:2])
  # Names given as the _ARRAY_DIMENSIONS attribute are carried too.
  arr$set_attribute("_ARRAY_DIMENSIONS", list("r", "c"))
  expect_identical(names(dimnames(arr[2:3, 1:2])), c("r", "c"))
})

test_that("a dimension_names entry of null reads as an unnamed dimension, and NA writes null", {
  # as zarr-python and xarray allow: ["lat", null]
  path <- local_store_path()
  as_zarr(matrix(1:6, 2, 3), name = "v", location = path)
  json <- file.path(path, "v", "zarr.json")
  doc <- jsonlite::fromJSON(json, simplifyVector = FALSE)
  doc$dimension_names <- list("lat", NULL)
  writeLines(jsonlite::toJSON(doc, auto_unbox = TRUE, null = "null", digits = NA), json)
  arr <- open_zarr(path)[["/v"]]
  expect_identical(arr$dimension_names, c("lat", NA))
  # as R names a partly named dimnames list
  m <- matrix(1:6, 2, 3, dimnames = list(lat = NULL, NULL))
  expect_identical(names(dimnames(m)), c("lat", ""))
  expect_identical(dimnames(arr), dimnames(m))
  expect_identical(arr[], m)
  expect_identical(arr[2, , drop = FALSE], m[2, , drop = FALSE])
  expect_output(print(arr), "shape      : 2 x 3 [lat, ]", fixed = TRUE)
  # all null: no names at all, as R drops them
  doc$dimension_names <- list(NULL, NULL)
  writeLines(jsonlite::toJSON(doc, auto_unbox = TRUE, null = "null", digits = NA), json)
  arr <- open_zarr(path)[["/v"]]
  expect_identical(arr$dimension_names, c(NA_character_, NA_character_))
  expect_null(dimnames(arr))
  expect_identical(arr[], matrix(1:6, 2, 3))
  expect_error(arr$dimension_names <- c("a", "b"), class = "zarr_error_argument", regexp = "dimnames<-")
  # writing: NA in dimension_names is null in zarr.json
  z <- create_zarr(local_store_path())
  b <- define_array("int32", c(2, 3))
  b$dimension_names <- c("lat", NA)
  expect_identical(b$dimension_names, c("lat", NA))
  a <- z$add_array("/", "w", b)
  doc <- jsonlite::fromJSON(rawToChar(a$store$get("w/zarr.json")), simplifyVector = FALSE)
  expect_identical(doc$dimension_names, list("lat", NULL))
  expect_identical(a$dimension_names, c("lat", NA))
  expect_identical(names(dimnames(a)), c("lat", ""))
  # arrays named in full, or not at all (the defaults of as_zarr())
  expect_identical(open_zarr(path)[["/v"]]$dimension_names, c(NA_character_, NA_character_))
  expect_identical(as_zarr(matrix(1:4, 2), name = "d")[["/d"]]$dimension_names, c("d_dim_0", "d_dim_1"))
})

test_that("dimnames<- refuses lists of the wrong length", {
  arr <- zarr_copy(matrix(1:4, 2, 2))
  expect_error(dimnames(arr) <- list(a = c("x", "y", "z"), b = NULL), class = "zarr_error_argument",
               regexp = "'/x'", fixed = TRUE)
  expect_error(dimnames(arr) <- list(a = NULL), class = "zarr_error_argument", regexp = "'/x'", fixed = TRUE)
  expect_null(dimnames(arr))
})

test_that("dimnames<- stores labels, which index by name and label the results", {
  z <- create_zarr()
  a <- z$add_array("/", "m", define_array("int32", c(2, 3)))
  a[] <- matrix(1:6, 2)
  dimnames(a) <- list(r = c("a", "b"), c = NULL)
  expect_identical(dimnames(a), list(r = c("a", "b"), c = NULL))
  expect_identical(a["b", ], c(2L, 4L, 6L))
  expect_identical(a[c("b", "a"), 2:3, drop = FALSE],
                   matrix(c(4L, 3L, 6L, 5L), 2, dimnames = list(r = c("b", "a"), c = NULL)))
  expect_identical(a[], matrix(1:6, 2, dimnames = list(r = c("a", "b"), c = NULL)))
  a["a", 3] <- 60L
  expect_identical(a[1, 3], c(a = 60L))
  # kept in the store: a fresh handle sees them
  again <- z[["/m"]]
  expect_identical(dimnames(again), list(r = c("a", "b"), c = NULL))
  # labels without names, then none at all
  dimnames(a) <- list(NULL, c("x", "y", "z"))
  expect_identical(a[2, "y"], c(y = 4L))
  expect_identical(dimnames(a), list(NULL, c("x", "y", "z")))
  dimnames(a) <- NULL
  expect_null(dimnames(a))
  expect_error(a["a", 1], class = "zarr_error_selection")
  expect_error(dimnames(a) <- list(r = c("a", "b", "c"), c = NULL), class = "zarr_error_argument",
               regexp = "dimension 1")
})

test_that("an index argument forwarded missing selects the whole dimension, as base R's `[`", {
  x <- array(1:60, c(3, 4, 5))
  arr <- as_zarr(x)[["/"]]
  pick <- function(a, i, j, k) a[i, j, k]
  expect_identical(pick(arr, 1, , 2), x[1, , 2])
  expect_identical(pick(arr, , 3, ), x[, 3, ])
  expect_identical(pick(arr, , , ), x)
  pass_on <- function(a, ...) a[...]
  expect_identical(pass_on(arr, 2, , 3), x[2, , 3])
  put <- function(a, i, j, k, v) {
    a[i, j, k] <- v
    a
  }
  put(arr, 1, , 2, -1L)
  x[1, , 2] <- -1L
  expect_identical(arr[], x)
})

test_that("indices from loop variables, function arguments and lapply() are their values there", {
  x <- array(1:60, c(3, 4, 5))
  arr <- as_zarr(x)[["/"]]
  got <- list()
  for (i in 1:3) got[[i]] <- arr[i, 2, ]
  expect_identical(got, list(x[1, 2, ], x[2, 2, ], x[3, 2, ]))
  expect_identical(lapply(1:3, function(k) arr[k, k, k]), list(x[1, 1, 1], x[2, 2, 2], x[3, 3, 3]))
  # a name that is also one in the method's own frame (`x`, `i`, `drop`)
  from_arg <- function(a, x, drop) a[x, , drop]
  expect_identical(from_arg(arr, 2, 4), x[2, , 4])
  for (j in 1:2) arr[j, j, ] <- 0L
  x[1, 1, ] <- 0L
  x[2, 2, ] <- 0L
  expect_identical(arr[], x)
})

test_that("a parallel worker indexes an array with its own variables", {
  x <- array(as.numeric(1:60), c(3, 4, 5))
  path <- local_store_path()
  as_zarr(x, location = path)
  read_slice <- function(k, path) {
    arr <- zarr::open_zarr(path)[["/"]]
    arr[k, , k + 1]
  }
  want <- list(x[1, , 2], x[2, , 3])
  if (.Platform$OS.type == "unix") {
    expect_identical(parallel::mclapply(1:2, read_slice, path = path, mc.cores = 2L), want)
  }
  cl <- parallel::makePSOCKcluster(1L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(lib) .libPaths(c(lib, .libPaths())), .libPaths())
  expect_identical(parallel::parLapply(cl, 1:2, read_slice, path = path), want)
})
