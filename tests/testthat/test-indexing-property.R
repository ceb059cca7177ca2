# Property test: `[` and `[<-` on a zarr_array agree with `[` and `[<-` on
# the same data held as a base R array, for random shapes (1 to 4
# dimensions), random chunking, random data types and random index vectors.
#
# Everything is drawn from a fixed seed; every case carries a description
# (data type, shape, chunks, store, the call with its index values) that is
# printed when it disagrees, and a failing case can be replayed with
# `prop_replay(kind, case)` below (same seed, same draws), e.g. after
#   library(zarr); library(testthat)
#   for (e in parse("tests/testthat/test-indexing-property.R"))
#     if (!identical(e[[1]], as.name("test_that"))) eval(e)
#   prop_replay("write", 5)
#
# The reference is the data as the package documents it to read back:
# elements equal to the fill value read as NA, so NaN in float arrays
# (fill value NaN) reads as NA_real_; bool arrays have no NA. The reference
# is `as.array(arr)`, so one-dimensional arrays are 1-d R arrays; `[` on a
# zarr 1-d array gives a plain vector unless drop = FALSE, and the reference
# is made one the same way.

prop_seed <- 20240611L
prop_plan <- list(read = c(arrays = 300L, per_array = 3L, seed = prop_seed),
                  write = c(arrays = 150L, per_array = 2L, seed = prop_seed + 1L))
prop_types <- c("int32", "float64", "bool", "complex128", "int16", "float32")
prop_counts <- new.env()
prop_rtype <- c(int32 = "integer", int16 = "integer", float64 = "double", float32 = "double",
                bool = "logical", complex128 = "complex")

# Stands for an empty (missing) index, as in x[, 2].
prop_missing <- structure(list(), class = "prop_missing")
is_prop_missing <- function(a) inherits(a, "prop_missing")

# ---- data ------------------------------------------------------------------

# `n` random values of `type`, in the R type it reads as; NA (and for float
# types NaN, +-Inf, -0) sprinkled in when `na` is TRUE.
prop_values <- function(type, n, na = TRUE) {
  if (n == 0) return(vector(prop_rtype[[type]], 0))
  v <- switch(type,
    int32 = {
      v <- sample.int(2000001L, n, replace = TRUE) - 1000001L
      ext <- runif(n) < 0.05
      v[ext] <- sample(c(.Machine$integer.max, -.Machine$integer.max, 0L), sum(ext), replace = TRUE)
      v
    },
    int16 = sample(-32767:32767, n, replace = TRUE),
    float64 = {
      v <- round(rnorm(n) * 10^sample(-3:6, 1), 4)
      sp <- runif(n) < 0.1
      v[sp] <- sample(c(NaN, Inf, -Inf, -0, 0, 1e300, -5e-324), sum(sp), replace = TRUE)
      v
    },
    float32 = {
      v <- sample(-4000:4000, n, replace = TRUE) / 2
      sp <- runif(n) < 0.1
      v[sp] <- sample(c(NaN, Inf, -Inf, -0), sum(sp), replace = TRUE)
      v
    },
    bool = sample(c(TRUE, FALSE), n, replace = TRUE),
    complex128 = complex(real = round(rnorm(n), 3), imaginary = round(rnorm(n) * 100, 2))
  )
  if (na && type != "bool" && runif(1) < 0.6) {
    v[runif(n) < 0.15] <- NA
  }
  v
}

# What the values read back as: NaN (= the fill value) reads as NA.
prop_normalize <- function(v, type) {
  if (type %in% c("float64", "float32")) v[is.na(v)] <- NA_real_
  if (type == "complex128") v[is.na(v)] <- NA_complex_
  v
}

# ---- index vectors ---------------------------------------------------------

prop_index_kinds <- c(
  missing = 3, single = 3, single_dbl = 1, range = 3, revrange = 1, sample = 4,
  negative = 3, neg_dup = 1, neg_zero = 1, logical = 3, logical_short = 2, logical_false = 1,
  empty = 1, zero = 1, zeros_pos = 2, double = 2, neg_double = 1, null = 1
)

# A random valid index for a dimension of extent `n` (never out of bounds).
prop_index <- function(n) {
  kind <- sample(names(prop_index_kinds), 1, prob = prop_index_kinds)
  k <- sample.int(n, 1)
  switch(kind,
    missing = prop_missing,
    single = sample.int(n, 1),
    single_dbl = as.double(sample.int(n, 1)),
    range = {
      ab <- sort(sample.int(n, 2, replace = TRUE))
      ab[1]:ab[2]
    },
    revrange = {
      ab <- sort(sample.int(n, 2, replace = TRUE))
      ab[2]:ab[1]
    },
    sample = sample.int(n, sample.int(2L * n, 1), replace = TRUE),
    negative = -sample.int(n, k),
    neg_dup = {
      v <- sample.int(n, k)
      -v[sample.int(length(v), k + 1L, replace = TRUE)]
    },
    neg_zero = sample(c(0, -sample.int(n, k))),
    logical = sample(c(TRUE, FALSE), n, replace = TRUE),
    logical_short = sample(c(TRUE, FALSE), sample.int(max(n - 1L, 1L), 1), replace = TRUE),
    logical_false = if (runif(1) < 0.5) FALSE else rep(FALSE, n),
    empty = if (runif(1) < 0.5) integer(0) else numeric(0),
    zero = if (runif(1) < 0.5) 0L else 0,
    zeros_pos = sample(c(0L, 0L, sample.int(n, k, replace = TRUE))),
    double = runif(k, 1, n + 1),
    neg_double = -(sample.int(n, k) + runif(k, 0, 0.99)),
    null = NULL
  )
}

# Number of elements an index selects along a dimension of extent `n`.
prop_count <- function(i, n) {
  if (is_prop_missing(i)) return(n)
  length(seq_len(n)[i])
}

# ---- arrays ----------------------------------------------------------------

# A random array definition and data, stored in a new store. Returns the
# zarr array, the reference R object (as it reads back) and a description.
prop_make_array <- function(env = parent.frame()) {
  nd <- sample.int(4L, 1, prob = c(2, 3, 3, 2))
  shape <- sample.int(if (nd >= 4L) 6L else 9L, nd, replace = TRUE)
  chunks <- vapply(shape, function(s) {
    if (runif(1) < 0.15) s + sample.int(3L, 1) else sample.int(s, 1)
  }, integer(1))
  type <- sample(prop_types, 1)
  portable <- runif(1) < 0.3
  named <- nd >= 2L && runif(1) < 0.2
  on_disk <- runif(1) < 0.1

  def <- define_array(type, shape)
  def$chunk_shape <- chunks
  if (portable) def$portable <- TRUE
  dnames <- NULL
  names_later <- named && runif(1) < 0.5 &&
    !is.null(utils::getS3method("dimnames<-", "zarr_array", optional = TRUE))
  if (named) dnames <- paste0(sample(letters, nd), seq_len(nd))
  if (named && !names_later) {
    meta <- def$metadata()
    meta$dimension_names <- as.list(dnames)
    def <- array_builder$new(meta)
  }
  z <- if (on_disk) {
    path <- tempfile(fileext = ".zarr")
    withr::defer(unlink(path, recursive = TRUE), envir = env)
    create_zarr(path)
  } else {
    create_zarr()
  }
  arr <- z$add_array("/", "a", def)
  if (names_later) dimnames(arr) <- structure(vector("list", nd), names = dnames)

  x <- prop_values(type, prod(shape))
  dim(x) <- shape
  if (named) dimnames(x) <- structure(vector("list", nd), names = dnames)
  if (runif(1) < 0.5) arr$write(x) else arr[] <- x

  desc <- sprintf("type %s, shape %s, chunks %s%s%s%s", type, paste(shape, collapse = "x"),
                  paste(chunks, collapse = "x"), if (portable) ", portable" else "",
                  if (named) paste0(", dimension_names ", paste(dnames, collapse = ","),
                                   if (names_later) " (set by dimnames<-)") else "",
                  if (on_disk) ", local store" else ", memory store")
  list(arr = arr, ref = prop_normalize(x, type), type = type, shape = shape, desc = desc)
}

# ---- calls -----------------------------------------------------------------

# The call `X[i1, i2, ..., drop = d]` (or `X[...] <- V`), with the index
# values either inline or bound to variables i1, i2, ... in `bind`.
prop_call <- function(idx, drop = NULL, bind = NULL, assign = FALSE) {
  args <- lapply(seq_along(idx), function(d) {
    a <- idx[[d]]
    if (is_prop_missing(a)) return(quote(expr = ))
    if (!is.null(bind)) {
      nm <- paste0("i", d)
      assign(nm, a, envir = bind)
      return(as.name(nm))
    }
    if (is.null(a)) return(NULL)
    a
  })
  extra <- if (is.null(drop)) list() else list(drop = drop)
  sub <- as.call(c(list(as.name("["), as.name("X")), args, extra))
  if (assign) call("<-", sub, as.name("V")) else sub
}

prop_describe_call <- function(call, bind) {
  txt <- paste(deparse(call, width.cutoff = 500L), collapse = " ")
  # deparse() shows `[`(X) and X[] (one empty argument) alike.
  if (identical(call[[1]], as.name("<-"))) {
    if (length(call[[2]]) == 2L) txt <- "X <- `[<-`(X, value = V)"
  } else if (length(call) == 2L) {
    txt <- "`[`(X)"
  }
  if (!is.null(bind) && length(ls(bind))) {
    vals <- vapply(sort(ls(bind)), function(nm) {
      paste0(nm, " <- ", paste(deparse(get(nm, bind), width.cutoff = 500L), collapse = " "))
    }, character(1))
    txt <- paste0(txt, "  where ", paste(vals, collapse = "; "))
  }
  txt
}

prop_eval <- function(call, X, bind, V = NULL) {
  env <- new.env(parent = if (is.null(bind)) globalenv() else bind)
  env$X <- X
  env$V <- V
  res <- tryCatch(eval(call, env), error = function(e) e)
  list(value = res, X = env$X)
}

prop_show <- function(x) {
  if (inherits(x, "error")) return(paste("error:", conditionMessage(x)))
  paste(utils::capture.output(utils::str(x, vec.len = 6)), collapse = "\n    ")
}

# ---- one case of `[` -------------------------------------------------------

prop_read_case <- function(a) {
  nd <- length(a$shape)
  form <- runif(1)
  drop <- sample(list(NULL, TRUE, FALSE), 1)[[1]]
  if (form < 0.03) {
    idx <- list()                           # `[`(X), X[drop = d]: no index at all
  } else if (form < 0.06) {
    idx <- list(prop_missing)               # X[] as parsed (one empty argument), X[, drop = d]
  } else if (nd >= 2L && form < 0.09) {
    idx <- rep(list(prop_missing), nd)      # X[, , ]
  } else {
    idx <- lapply(a$shape, prop_index)
  }
  bind <- if (runif(1) < 0.3 && length(idx)) new.env(parent = globalenv()) else NULL
  call <- prop_call(idx, drop, bind)

  ref <- a$ref
  want <- prop_eval(call, ref, bind)$value
  # A 1-d array reads as a plain vector unless drop = FALSE (as R-CF's zarr).
  if (length(a$shape) == 1L && !isFALSE(drop) && is.array(want)) want <- as.vector(want)
  got <- prop_eval(call, a$arr, bind)$value
  list(ok = !inherits(want, "error") && identical(got, want),
       desc = prop_describe_call(call, bind), got = got, want = want)
}

# ---- one case of `[<-` -----------------------------------------------------

prop_assign_value <- function(a, n) {
  divisors <- if (n == 0) c(0, 1) else which(n %% seq_len(n) == 0)
  len <- if (n > 0 && runif(1) < 0.4) {
    n
  } else if (n > 0 && runif(1) < 0.4) {
    1L
  } else {
    divisors[sample.int(length(divisors), 1)]
  }
  v <- prop_values(a$type, len, na = TRUE)
  # Values of a narrower R type, which base R coerces without changing the
  # type of the array.
  if (len > 0 && runif(1) < 0.15) {
    v <- switch(prop_rtype[[a$type]],
      double = sample(-100:100, len, replace = TRUE),
      complex = sample(-100:100, len, replace = TRUE) / 2,
      integer = sample(c(TRUE, FALSE, NA), len, replace = TRUE),
      v
    )
  }
  # Dimensions on the value are ignored by base R.
  if (len > 1 && runif(1) < 0.15) dim(v) <- c(len, 1L)[sample.int(2)]
  v
}

prop_write_case <- function(a) {
  nd <- length(a$shape)
  form <- runif(1)
  idx <- if (form < 0.03) {
    list()                                  # `[<-`(X, value = V)
  } else if (form < 0.06) {
    list(prop_missing)                      # X[] <- V as parsed
  } else {
    lapply(a$shape, prop_index)
  }
  bind <- if (runif(1) < 0.3 && length(idx)) new.env(parent = globalenv()) else NULL
  call <- prop_call(idx, bind = bind, assign = TRUE)
  n <- if (length(idx) == length(a$shape)) prod(mapply(prop_count, idx, a$shape)) else prod(a$shape)
  V <- prop_assign_value(a, n)

  base <- prop_eval(call, a$ref, bind, V)
  zres <- prop_eval(call, a$arr, bind, V)
  desc <- paste0(prop_describe_call(call, bind), "  with V <- ",
                 paste(deparse(V, width.cutoff = 500L), collapse = " "))
  if (inherits(base$value, "error")) {
    return(list(ok = FALSE, desc = desc, got = zres$value, want = base$value))
  }
  want <- prop_normalize(base$X, a$type)
  if (inherits(zres$value, "error")) {
    return(list(ok = FALSE, desc = desc, got = zres$value, want = want))
  }
  got <- prop_full_read(a)
  ok <- identical(got, prop_full_ref(a, want))
  list(ok = ok, desc = desc, got = got, want = prop_full_ref(a, want), new_ref = want)
}

# ---- running ---------------------------------------------------------------

# The whole array as an R array: as.array() where the package has it,
# otherwise X[, , , drop = FALSE].
prop_full_read <- function(a) {
  if (!is.null(utils::getS3method("as.array", "zarr_array", optional = TRUE))) {
    return(tryCatch(as.array(a$arr), error = function(e) e))
  }
  call <- prop_call(rep(list(prop_missing), length(a$shape)), drop = FALSE)
  prop_eval(call, a$arr, NULL)$value
}

# What prop_full_read() should give for the reference `ref`.
prop_full_ref <- function(a, ref) ref

# The reference taken back from a full read (after a disagreement, so that
# later cases test their own assignment only).
prop_ref_from <- function(a, full) full

prop_failure_text <- function(f) {
  sprintf("[%s case %d] %s\n  array: %s\n  call : %s\n  zarr : %s\n  base : %s",
          f$kind, f$case, if (is.null(f$note)) "" else f$note, f$array, f$desc,
          prop_show(f$got), prop_show(f$want))
}

# Runs `n_arrays` random arrays with `per_array` cases of `kind` each.
# Returns the failures and the number of cases.
prop_run <- function(kind, n_arrays, per_array, seed, only = NULL) {
  withr::local_seed(seed)
  env <- environment()
  fails <- list()
  case <- 0L
  for (k in seq_len(n_arrays)) {
    a <- prop_make_array(env)
    full <- prop_full_read(a)
    if (!identical(full, prop_full_ref(a, a$ref))) {
      fails[[length(fails) + 1L]] <- list(kind = kind, case = case + 1L, note = "full read after write",
                                          array = a$desc, desc = "as.array(X)", got = full,
                                          want = prop_full_ref(a, a$ref))
    }
    for (r in seq_len(per_array)) {
      case <- case + 1L
      res <- if (kind == "read") prop_read_case(a) else prop_write_case(a)
      if (!is.null(res$new_ref)) a$ref <- res$new_ref
      if (!isTRUE(res$ok)) {
        if (kind == "write") {
          full <- prop_full_read(a)         # continue from what the array holds
          if (!inherits(full, "error")) a$ref <- prop_ref_from(a, full)
        }
        fails[[length(fails) + 1L]] <- c(list(kind = kind, case = case, array = a$desc), res)
      }
      if (!is.null(only) && case >= only) break
    }
    if (!is.null(only) && case >= only) break
  }
  list(fails = fails, cases = case)
}

# Replay: run the same draws up to case `case` and print what it did.
prop_replay <- function(kind, case) {
  p <- prop_plan[[kind]]
  res <- prop_run(kind, p[["arrays"]], p[["per_array"]], p[["seed"]], only = case)
  hit <- Filter(function(f) f$case == case, res$fails)
  if (length(hit)) cat(prop_failure_text(hit[[1]]), "\n") else cat("case", case, "agrees\n")
  invisible(hit)
}

prop_report <- function(res, label) {
  n_fail <- length(res$fails)
  msg <- if (n_fail) {
    paste0(n_fail, " of ", res$cases, " ", label, " cases disagree with base R (seed ", prop_seed,
           "; replay one with prop_replay(kind, case)):\n",
           paste(vapply(utils::head(res$fails, 8), prop_failure_text, character(1)), collapse = "\n"))
  } else {
    ""
  }
  expect(n_fail == 0L, msg)
  res$cases - length(unique(vapply(res$fails, function(f) as.numeric(f$case), numeric(1))))
}

test_that("`[` on random arrays and indices equals `[` on the base array", {
  p <- prop_plan$read
  res <- prop_run("read", p[["arrays"]], p[["per_array"]], p[["seed"]])
  expect_gte(res$cases, 500L)
  agree <- prop_report(res, "`[`")
  prop_counts$read <- c(res$cases, agree)
})

test_that("`[<-` on random arrays, indices and values equals `[<-` on the base array", {
  p <- prop_plan$write
  res <- prop_run("write", p[["arrays"]], p[["per_array"]], p[["seed"]])
  expect_gte(res$cases, 200L)
  agree <- prop_report(res, "`[<-`")
  prop_counts$write <- c(res$cases, agree)
})

test_that("property test summary", {
  read <- if (is.null(prop_counts$read)) c(0, 0) else prop_counts$read
  write <- if (is.null(prop_counts$write)) c(0, 0) else prop_counts$write
  cat(sprintf("\nindexing property: %d cases agree with base R (of %d: %d `[`, %d `[<-`)\n",
              read[2] + write[2], read[1] + write[1], read[1], write[1]))
  expect_gte(read[1] + write[1], 700)
})

test_that("character indices without dimnames are a selection error", {
  arr <- create_zarr()$add_array("/", "a", define_array("int32", c(3, 4)))
  arr[] <- matrix(1:12, 3, 4)
  expect_error(arr["a", 1], class = "zarr_error_selection")
  expect_error(arr[, c("x", "y")], class = "zarr_error_selection")
  expect_error(arr["a", 1] <- 0L, class = "zarr_error_selection")
})
