# Block-wise processing: a function applied to every chunk-aligned block of
# an array, in the workers of the current future::plan(), each worker
# opening the stores itself from their locations (a store object holds a
# Rust handle that cannot cross to another process).

#' Apply a function to every block of an array, in parallel
#'
#' @description
#' `zarr_map_blocks()` reads each block of `x`, calls `f` on it and writes
#' the result into the same region of `out` (or returns the results).
#' `zarr_reduce_blocks()` folds the results of `f` over all blocks with
#' `combine`, for sums, means, counts and extremes.
#'
#' The blocks are evaluated in the workers of the current [future::plan()]
#' (through `future.apply`): `plan(multisession)` for the cores of this
#' machine, `plan(cluster, workers = c("n1", "n2"))` for other machines
#' over ssh, `future.batchtools` for Slurm, SGE or PBS. Without the
#' `future.apply` package the blocks are evaluated one after the other in
#' this session, with the same results.
#'
#' @section Blocks:
#' By default every chunk of `out` (every shard, for a sharded array: the
#' unit a store writes) is one block; without `out`, every chunk of `x`.
#' `blocks` may give others, for example `out$chunk_regions(n)` for `n`
#' large blocks: a list of selections, each a list with one entry per
#' dimension, `NULL` (the whole dimension) or indices whose smallest and
#' largest give the range, as `read()` takes them. With an `out`, each block
#' must cover whole chunks of `out` and no two blocks may share a chunk, so
#' that no two workers ever write one chunk (a `zarr_error_argument`
#' otherwise).
#'
#' `f` gets the block's values as `read()` returns them (a vector for one
#' dimension, else an array of the block's shape, `NA` where the fill value
#' is) followed by `...`, and must return values of the block's shape for
#' `out` (any value without `out`). It runs in another R process under most
#' plans: the variables and packages it uses are sent to the worker by
#' `future` (as for any future), but not the arrays, which the worker opens
#' from `x$store$uri` and `out$store$uri`. Each block gets a random number
#' stream of its own (`future.seed = TRUE` of `future.apply`), so an `f`
#' that draws random numbers gives the same results on every plan after the
#' same [set.seed()].
#'
#' @section Stores:
#' Workers open local stores by their path (on other machines, the path
#' of a shared file system) and object stores by their
#' URL (`s3://`, `gs://`, `az://`), taking the credentials from their own
#' environment variables (see [zarr_objectstore]); options given to a
#' store object in R (`options =`, or the arguments of [zarr_s3store]) do
#' not travel, so set them as environment variables where the workers run.
#' HTTP stores may be read. An array in a memory store, a reference store
#' or a store class written in R exists only in this session: it works under
#' `plan(sequential)` (or without `future.apply`) and is a
#' `zarr_error_unsupported` error under other plans.
#'
#' @section Errors and resuming:
#' An error in `f` (or in reading or writing a block) stops the run with a
#' `zarr_error_block` condition in the calling session whose message names
#' the block, its region and the process; its fields are `block` (the
#' number of the block), `region` (its selection, a list of `c(first,
#' last)` per dimension), `pid` and `parent` (the original condition, when
#' the error came from R). Blocks finished before the error stay written.
#' A worker process that dies (killed, out of memory) ends the run with
#' `future`'s own error (a `FutureError`) instead.
#' With `resume = TRUE`, blocks whose chunks of `out` are all stored already
#' are skipped: after a failed or killed run, the same call evaluates only
#' the blocks that are missing. A chunk whose values all equal the fill
#' value is not stored (see [zarr_array]), so a block whose result is all
#' `NA` is evaluated again.
#'
#' @section Progress:
#' When the `progressr` package is installed, each block signals a
#' progress update that `progressr` relays from the workers: wrap the call
#' in `progressr::with_progress()` or set `progressr::handlers(global =
#' TRUE)` to see it. In an interactive session (the option `zarr.progress`,
#' as for reads and writes) a bar is shown without either, using the
#' handlers set with `progressr::handlers()` or else the `cli` package.
#'
#' @section Threads:
#' A worker in another process reads and writes with as many threads as
#' `parallelly::availableCores()` gives it (`future` sets 1 in the workers
#' of a plan, so that two workers on two cores do not start four threads),
#' unless the option `zarr.num_threads` or the environment variable
#' `ZARR_NUM_THREADS` says otherwise there (see [zarr_num_threads()]).
#'
#' See [zarr_many_writers] for what is safe when many processes write one
#' store.
#'
#' @param x A [zarr_array], read by the workers.
#' @param f A function whose first argument is a block's values.
#' @param out A [zarr_array] of the shape of `x` that the results are
#'   written to (it must exist: make it with `add_array()`), or `NULL` to
#'   return the results.
#' @param ... More arguments for `f`.
#' @param blocks `NULL` for one block per chunk (see "Blocks"), or a list
#'   of selections.
#' @param resume With `out`, `TRUE` to skip the blocks whose chunks are all
#'   stored in `out` already. Default `FALSE`.
#' @return `zarr_map_blocks()`: with `out`, `out` invisibly; without, a
#'   list with the result of `f` for each block, in the order of the
#'   blocks. `zarr_reduce_blocks()`: the results combined.
#' @export
#' @examples
#' z <- create_zarr()
#' def <- define_array("float64", c(6, 8))
#' def$chunk_shape <- c(3, 4)
#' x <- z$add_array("/", "x", def)
#' x$write(matrix(1:48, 6, 8))
#' y <- z$add_array("/", "y", def)
#' zarr_map_blocks(x, function(b, k) b * k, y, k = 10)
#' y[1:2, 1:3]
#' zarr_reduce_blocks(x, sum, `+`)
#' # A mean: the sums and counts of the blocks, combined.
#' s <- zarr_reduce_blocks(x, function(b) c(sum(b, na.rm = TRUE), sum(!is.na(b))), `+`)
#' s[1] / s[2]
zarr_map_blocks <- function(x, f, out = NULL, ..., blocks = NULL, resume = FALSE) {
  job <- map_blocks_job(x, f, out, blocks, resume)
  if (!length(job$todo)) return(if (is.null(out)) list() else invisible(out))
  results <- map_blocks_run(job, f, list(...), future_apply_available())
  if (!is.null(out)) return(invisible(out))
  results
}

#' @rdname zarr_map_blocks
#' @param combine A function of two results that returns their combination
#'   (such as `function(a, b) a + b` or `max`): the results of the blocks
#'   are folded with it in the order of the blocks, as [Reduce()] does.
#' @param init Optional: the value the fold starts from (the result for an
#'   array without blocks).
#' @export
zarr_reduce_blocks <- function(x, f, combine, ..., blocks = NULL, init) {
  if (!is.function(combine)) zarr_abort("argument", "`combine` must be a function of two results")
  results <- zarr_map_blocks(x, f, NULL, ..., blocks = blocks)
  if (missing(init)) Reduce(combine, results) else Reduce(combine, results, init)
}

# ---------------------------------------------------------------- the job

# Everything the workers need, small enough to send: the arrays' locations,
# the blocks (as ranges) and which of them to evaluate.
map_blocks_job <- function(x, f, out, blocks, resume) {
  if (!inherits(x, "zarr_array")) zarr_abort("argument", "`x` must be a zarr_array")
  if (!is.function(f)) zarr_abort("argument", "`f` must be a function")
  check_flag(resume, "resume")
  if (!is.null(out)) {
    if (!inherits(out, "zarr_array")) zarr_abort("argument", "`out` must be a zarr_array or NULL")
    if (!identical(as.numeric(out$shape), as.numeric(x$shape))) {
      zarr_abort("argument", sprintf("`out` (%s, shape %s) must have the shape of `x` (%s, shape %s)",
                                     array_what(out), shape_label(out$shape),
                                     array_what(x), shape_label(x$shape)))
    }
    if (out$store$read_only) zarr_abort("read_only", sprintf("`out` (%s) is in a read-only store", array_what(out)))
  } else if (resume) {
    zarr_abort("argument", "`resume = TRUE` needs an `out` array: it skips the blocks stored there")
  }
  grid_of <- if (is.null(out)) x else out
  # Blocks are whole chunks of one shape; one made of the longest chunks
  # of a rectilinear grid would share chunks with its neighbours.
  if (identical(grid_of$metadata$chunk_grid$name, "rectilinear")) {
    zarr_abort("unsupported", sprintf("%s: blocks of a rectilinear chunk grid are not supported",
                                      array_what(grid_of)))
  }
  shape <- as.numeric(x$shape)
  chunk <- if (length(shape)) as.numeric(grid_of$chunking$chunk_shape) else numeric(0)
  ranges <- if (is.null(blocks)) chunk_blocks(shape, chunk) else user_blocks(blocks, shape, "blocks")
  if (!is.null(out) && !is.null(blocks)) check_blocks_aligned(ranges, shape, chunk, out)
  todo <- seq_along(ranges)
  if (resume && length(todo)) todo <- todo[!blocks_stored(out, ranges, chunk)]
  list(x = array_location(x), out = if (!is.null(out)) array_location(out),
       x_what = array_what(x), blocks = ranges, todo = todo, caller = Sys.getpid(),
       token = job_token())
}

# A name for one run, unique across sessions (without touching the
# caller's random numbers).
job_count <- new.env(parent = emptyenv())
job_token <- function() {
  job_count$n <- (job_count$n %||% 0) + 1
  paste(Sys.info()[["nodename"]], Sys.getpid(), job_count$n, format(Sys.time(), "%OS6"), sep = "-")
}

shape_label <- function(shape) {
  if (length(shape)) paste(format(shape, scientific = FALSE, trim = TRUE), collapse = " x ") else "()"
}

# Where a worker finds an array: its store's location and the node's path;
# for a store that lives only in this session, the array itself.
array_location <- function(arr) {
  store <- arr$store
  if (inherits(store, c("zarr_localstore", "zarr_objectstore", "zarr_httpstore"))) {
    return(list(location = store$uri, path = arr$path, what = array_what(arr)))
  }
  list(object = arr, path = arr$path, what = array_what(arr))
}

# One block per chunk of a grid, in column-major order of the chunks; each
# block is a list with one c(first, last) (1-based) per dimension.
chunk_blocks <- function(shape, chunk) {
  if (!length(shape)) return(list(list()))
  if (any(shape == 0)) return(list())
  counts <- ceiling(shape / chunk)
  grid <- as.matrix(expand.grid(lapply(counts, function(n) seq_len(n) - 1)))
  lapply(seq_len(nrow(grid)), function(i) {
    g <- unname(grid[i, ])
    lapply(seq_along(shape), function(d) c(g[d] * chunk[d] + 1, min((g[d] + 1) * chunk[d], shape[d])))
  })
}

# The blocks a user gave, as ranges within the shape.
user_blocks <- function(blocks, shape, arg) {
  if (!is.list(blocks)) zarr_abort("argument", sprintf("`%s` must be a list of selections", arg))
  lapply(seq_along(blocks), function(i) {
    sel <- blocks[[i]]
    if (!length(shape)) {
      if (length(sel)) zarr_abort("argument", sprintf("`%s[[%d]]`: a 0-d array takes an empty selection", arg, i))
      return(list())
    }
    if (!is.list(sel) || length(sel) != length(shape)) {
      zarr_abort("argument", sprintf("`%s[[%d]]` must be a list with one entry per dimension (%d)",
                                     arg, i, length(shape)))
    }
    lapply(seq_along(shape), function(d) {
      v <- sel[[d]]
      if (is.null(v)) return(as.numeric(c(1, shape[d])))
      if (!is.numeric(v) || !length(v) || anyNA(v) || any(v != round(v)) || min(v) < 1 || max(v) > shape[d]) {
        zarr_abort("argument", sprintf("`%s[[%d]]`, dimension %d: indices must be whole numbers in 1..%s",
                                       arg, i, d, format(shape[d], scientific = FALSE)))
      }
      as.numeric(c(min(v), max(v)))
    })
  })
}

# The chunk-grid index ranges (0-based, inclusive) a block covers.
block_chunk_ranges <- function(block, chunk) {
  lapply(seq_along(block), function(d) c((block[[d]][1] - 1) %/% chunk[d], (block[[d]][2] - 1) %/% chunk[d]))
}

# Blocks written to `out` must be made of whole chunks and share none, so
# that no two workers write one chunk.
check_blocks_aligned <- function(ranges, shape, chunk, out) {
  ids <- vector("list", length(ranges))
  counts <- ceiling(shape / chunk)
  for (i in seq_along(ranges)) {
    b <- ranges[[i]]
    for (d in seq_along(b)) {
      if ((b[[d]][1] - 1) %% chunk[d] != 0 || (b[[d]][2] %% chunk[d] != 0 && b[[d]][2] != shape[d])) {
        zarr_abort("argument", sprintf(paste0("`blocks[[%d]]` (%s) does not cover whole chunks of `out` (%s, ",
                                              "chunks %s): take them from out$chunk_regions()"),
                                       i, region_label(b), array_what(out), shape_label(chunk)))
      }
    }
    ids[[i]] <- chunk_ids(block_chunk_ranges(b, chunk), counts)
  }
  all_ids <- unlist(ids)
  if (anyDuplicated(all_ids)) {
    dup <- all_ids[anyDuplicated(all_ids)]
    which_blocks <- which(vapply(ids, function(v) dup %in% v, logical(1)))
    zarr_abort("argument", sprintf("`blocks[[%d]]` and `blocks[[%d]]` share a chunk of `out` (%s): %s",
                                   which_blocks[1], which_blocks[2], array_what(out), "two workers would write it"))
  }
  invisible(TRUE)
}

# Column-major numbers (0-based) of the chunks in index ranges `r` of a
# grid of `counts` chunks.
chunk_ids <- function(r, counts) {
  if (!length(r)) return(0)
  ids <- 0
  stride <- 1
  for (d in seq_along(r)) {
    ids <- as.vector(outer(ids, (seq.int(r[[d]][1], r[[d]][2])) * stride, `+`))
    stride <- stride * counts[d]
  }
  ids
}

# The chunk key encoding of array metadata: its name and separator.
key_encoding <- function(meta) {
  cke <- meta$chunk_key_encoding
  name <- cke$name %||% "default"
  sep <- cke$configuration$separator %||% (if (name == "v2") "." else "/")
  list(name = name, sep = sep)
}

# The stored chunks of an array: their keys (relative to `prefix`) and
# grid indices, one row per chunk, found by the engine's chunk-key parser.
# Keys that are not chunk keys of `ndim` dimensions are left out.
stored_chunks <- function(store, prefix, enc, ndim) {
  keys <- substring(store$list_prefix(prefix), nchar(prefix) + 1L)
  found <- zarr_call(rz_chunk_key_index(keys, as.integer(ndim), enc$name, enc$sep))
  index <- matrix(found$index, nrow = length(found$which), ncol = ndim, byrow = TRUE)
  list(keys = keys[found$which], index = index)
}

# Which blocks have all their chunks stored in `out` already (one listing
# of the array's keys).
blocks_stored <- function(out, ranges, chunk) {
  shape <- as.numeric(out$shape)
  stored <- stored_chunks(out$store, out$prefix, key_encoding(out$metadata), length(shape))
  if (!length(shape)) return(rep(length(stored$keys) > 0, length(ranges)))
  counts <- ceiling(shape / chunk)
  have <- if (nrow(stored$index)) as.vector(stored$index %*% cumprod(c(1, counts))[seq_along(counts)]) else numeric(0)
  vapply(ranges, function(b) all(chunk_ids(block_chunk_ranges(b, chunk), counts) %in% have), logical(1))
}

region_label <- function(b) {
  if (!length(b)) return("[]")
  ends <- function(r) paste(format(r, scientific = FALSE, trim = TRUE), collapse = ":")
  paste0("[", paste(vapply(b, ends, ""), collapse = ", "), "]")
}

# ---------------------------------------------------------------- running

# Evaluate the job's blocks on the current plan (or here, without
# future.apply), with progress updates for progressr.
map_blocks_run <- function(job, f, dots, use_future) {
  if (use_future && in_process_only(job) && !plan_is_sequential()) {
    zarr_abort("unsupported", sprintf(paste0("%s is in a store that exists only in this session (memory, reference ",
                                             "or R store): workers cannot open it; use plan(sequential) or a ",
                                             "local or object store"),
                                      if (!is.null(job$x$object)) job$x$what else job$out$what))
  }
  # Under plan(sequential) this session was the worker: let go of the
  # arrays it opened.
  on.exit(forget_worker_arrays())
  run <- function(progress) {
    fun <- block_function(job, f, dots, progress)
    if (use_future) {
      future.apply::future_lapply(job$todo, fun, future.seed = TRUE, future.packages = "zarr")
    } else {
      lapply(job$todo, fun)
    }
  }
  with_block_progress(length(job$todo), run)
}

future_apply_available <- function() requireNamespace("future.apply", quietly = TRUE)

in_process_only <- function(job) !is.null(job$x$object) || !is.null(job$out$object)

plan_is_sequential <- function() inherits(future::plan("next"), "sequential")

# The function each worker calls with a block's number. Its environment
# holds only what it needs (its parent is the package namespace, which a
# worker loads rather than receives), so the calling frame, with its array
# objects, is not sent; `future` finds and sends the globals of `f`.
block_function <- function(job, f, dots, progress) {
  env <- new.env(parent = asNamespace("zarr"))
  env$job <- job
  env$f <- f
  env$dots <- dots
  env$progress <- progress
  fun <- function(i) run_block(i, job, f, dots, progress)
  environment(fun) <- env
  fun
}

# Arrays a worker opened, for the blocks of one job (its token): opening
# costs a metadata request per array on an object store.
worker_arrays <- new.env(parent = emptyenv())

forget_worker_arrays <- function() rm(list = ls(worker_arrays, all.names = TRUE), envir = worker_arrays)

block_array <- function(loc, job, read_only) {
  if (!is.null(loc$object)) return(loc$object)
  key <- paste(job$token, loc$location, loc$path, read_only)
  if (!identical(worker_arrays$token, job$token)) {
    forget_worker_arrays()
    worker_arrays$token <- job$token
  }
  if (is.null(worker_arrays[[key]])) worker_arrays[[key]] <- open_zarr(loc$location, read_only = read_only)[[loc$path]]
  worker_arrays[[key]]
}

# Read block `i`, apply `f`, write or return the result. Any error becomes
# a zarr_error_block naming the block, which future raises again in the
# calling session.
run_block <- function(i, job, f, dots, progress) {
  if (Sys.getpid() != job$caller) worker_threads()
  block <- job$blocks[[i]]
  result <- withCallingHandlers(
    {
      x <- block_array(job$x, job, read_only = TRUE)
      values <- x$read(if (length(block)) block)
      value <- do.call(f, c(list(values), dots))
      if (!is.null(job$out)) {
        out <- block_array(job$out, job, read_only = FALSE)
        check_block_result(value, block)
        out$write(value, if (length(block)) block)
        value <- NULL
      }
      value
    },
    error = function(e) block_abort(e, i, job)
  )
  if (!is.null(progress)) progress()
  result
}

# In a worker of another process, the thread count that process was given
# (parallelly::availableCores(), which future sets for its workers), unless
# the option or the variable names one.
worker_threads <- function() {
  if (!is.null(getOption("zarr.num_threads")) || nzchar(Sys.getenv("ZARR_NUM_THREADS"))) return(invisible())
  if (requireNamespace("parallelly", quietly = TRUE)) {
    options(zarr.num_threads = as.integer(max(1L, parallelly::availableCores())))
  }
  invisible()
}

check_block_result <- function(value, block) {
  want <- vapply(block, function(r) r[2] - r[1] + 1, numeric(1))
  got <- if (is.null(dim(value))) length(value) else dim(value)
  ok <- if (length(want) <= 1L) length(value) == prod(want) else identical(as.numeric(got), want)
  if (!ok || !is.atomic(value)) {
    stop(sprintf("`f` returned %s of %s %s for a block of shape %s",
                 if (is.atomic(value)) "values" else "an object", if (is.null(dim(value))) "length" else "shape",
                 paste(got, collapse = " x "), shape_label(want)), call. = FALSE)
  }
  invisible(TRUE)
}

block_abort <- function(e, i, job) {
  if (inherits(e, "zarr_error_block")) stop(e)
  msg <- sprintf("%s: block %d of %d (region %s) failed in process %d: %s", job$x_what, i, length(job$blocks),
                 region_label(job$blocks[[i]]), Sys.getpid(), conditionMessage(e))
  cond <- structure(
    class = c("zarr_error_block", "zarr_error", "error", "condition"),
    list(message = msg, call = NULL, block = i, region = job$blocks[[i]], pid = Sys.getpid(), parent = e)
  )
  stop(cond)
}

# Run `run(progress)` with a progressr progressor (NULL without progressr);
# in an interactive session a bar is shown through progressr's handlers, or
# cli's when none are set.
with_block_progress <- function(n, run) {
  if (!requireNamespace("progressr", quietly = TRUE)) return(run(NULL))
  if (!progress_wanted()) return(run(progressr::progressor(steps = n)))
  # progressr::handlers() gives its text bar when none were set: the option
  # says whether the user chose any.
  handlers <- if (length(getOption("progressr.handlers"))) progressr::handlers() else list(progressr::handler_cli())
  progressr::with_progress(run(progressr::progressor(steps = n)), handlers = handlers)
}

#' Many writers: what is safe when many processes write one store
#'
#' @description
#' The rule, for [zarr_map_blocks()], `arr$chunk_regions()` (see
#' [zarr_array]) and any other way of writing one store from several
#' processes or machines at once:
#'
#' * **Chunks: one writer per chunk.** The unit a store writes is a chunk,
#'   or a whole shard of a sharded array. Processes that write disjoint
#'   regions made of whole chunks (whole shards) may run at the same time,
#'   in any number: nothing is lost. Two processes that write parts of the
#'   same chunk (or of two inner chunks of one shard) each read it, change
#'   their part and write it back; the last one's version of the whole
#'   chunk wins and the other's part is lost, with no error.
#'   `chunk_regions()` and the blocks of `zarr_map_blocks()` are made of
#'   whole chunks (shards) of the array written, and `zarr_map_blocks()`
#'   refuses `blocks` that share one, so with them the rule holds by
#'   construction.
#' * **Metadata: one writer, before the others start.** Create the arrays
#'   (`add_array()`), resize, append and set attributes in one process
#'   first; then start the writers of chunks; consolidate
#'   (`z$consolidate()`) in one process after all of them have finished.
#'
#' What each store guarantees on top of that:
#'
#' * **Local file system** ([zarr_localstore]): every value is written to a
#'   temporary file and renamed into place, so a reader, or a writer killed
#'   midway, never leaves or sees a partly written chunk; of two writes of
#'   one key, one whole value wins. With `options(zarr.atomic_writes =
#'   FALSE)` new chunks are written in place and a killed writer may leave
#'   a short chunk. Metadata documents are replaced whole, but not
#'   conditionally: two processes that change the attributes of one node
#'   at once may lose one change. On a network file system the guarantees
#'   are those of its rename.
#' * **Object stores** (S3, GCS, Azure; [zarr_objectstore]): each chunk is
#'   one object written by one request, which is atomic: a reader sees the
#'   old or the new chunk. A metadata document the store has read is
#'   written back conditionally (`If-Match` on the version read), so a
#'   concurrent change of one node's attributes or shape fails with
#'   `zarr_error_conflict` instead of being lost: open the node again and
#'   repeat.
#' * **Memory stores** belong to one R session; **HTTP stores** and
#'   **reference sets** are read-only.
#'
#' A worker of [zarr_map_blocks()] opens the stores itself from their
#' location (a path or URL); on an object store its credentials come from
#' its own environment variables.
#'
#' @name zarr_many_writers
#' @examples
#' path <- tempfile(fileext = ".zarr")
#' z <- create_zarr(path)
#' def <- define_array("int32", c(4, 6))
#' def$chunk_shape <- c(2, 3)
#' a <- z$add_array("/", "a", def)
#' # Each region could be written by another process: no chunk is shared.
#' for (sel in a$chunk_regions(2)) a$write(matrix(1L, lengths(sel)[1], lengths(sel)[2]), sel)
#' sum(a[])
#' unlink(path, recursive = TRUE)
NULL
