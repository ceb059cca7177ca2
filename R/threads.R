#' Number of threads used for chunk I/O
#'
#' Reads and writes decode and encode chunks in parallel on a thread pool
#' owned by this package (never another package's pool). The thread count is
#' taken, in order, from the option `zarr.num_threads`, the environment
#' variable `ZARR_NUM_THREADS`, and otherwise the number of cores. When
#' `_R_CHECK_LIMIT_CORES_` is set (as `R CMD check --as-cran` does), at most 2
#' threads are used, and never more than `OMP_THREAD_LIMIT` when that is set.
#'
#' A process forked after a read or write (`parallel::mclapply()`,
#' `parallel::mcparallel()`) starts a pool of its own on its first read: the
#' parent's threads do not exist in the child.
#'
#' @return A single positive integer.
#' @export
#' @examples
#' zarr_num_threads()
#' old <- options(zarr.num_threads = 1)
#' zarr_num_threads()
#' options(old)
zarr_num_threads <- function() {
  # The variables in one call: this runs before every read and write.
  env <- Sys.getenv(c("ZARR_NUM_THREADS", "_R_CHECK_LIMIT_CORES_", "OMP_THREAD_LIMIT"), "",
                    names = FALSE)
  n <- getOption("zarr.num_threads")
  if (is.null(n)) {
    n <- if (nzchar(env[[1L]])) suppressWarnings(as.integer(env[[1L]])) else NA_integer_
  }
  if (length(n) != 1L || is.na(n) || n < 1L) n <- detected_cores()
  n <- as.integer(n)
  # CRAN's checks set the first ("false" is its way to ask for no limit).
  if (nzchar(env[[2L]]) && !identical(tolower(env[[2L]]), "false")) n <- min(n, 2L)
  limit <- if (nzchar(env[[3L]])) suppressWarnings(as.integer(env[[3L]])) else NA_integer_
  if (!is.na(limit) && limit >= 1L) n <- min(n, limit)
  n
}

# Whether a crc32c or zstd checksum mismatch is an error (TRUE, default, as
# in zarr-python) or a warning that returns the data as stored (FALSE).
zarr_strict_checksums <- function() {
  !isFALSE(getOption("zarr.strict_checksums", TRUE))
}

# Whether 64-bit integers read as bit64::integer64.
use_bit64 <- function() {
  requireNamespace("bit64", quietly = TRUE)
}

# detectCores() runs a shell command on Linux (grep and wc over
# /proc/cpuinfo), which took a first read 10-35 ms: count the same lines
# here, and ask detectCores() elsewhere; once per session.
core_cache <- new.env(parent = emptyenv())
detected_cores <- function() {
  if (is.null(core_cache$n)) {
    n <- proc_cpuinfo_cores()
    if (is.na(n)) n <- parallel::detectCores(logical = TRUE)
    core_cache$n <- if (is.na(n)) 1L else as.integer(n)
  }
  core_cache$n
}

# The processors /proc/cpuinfo lists, as detectCores() counts them on
# Linux; NA where there is no such file.
proc_cpuinfo_cores <- function(path = "/proc/cpuinfo") {
  if (!startsWith(R.version$os, "linux") || !file.exists(path)) return(NA_integer_)
  n <- tryCatch(sum(startsWith(readLines(path, warn = FALSE), "processor")),
                error = function(e) 0L)
  if (n >= 1L) as.integer(n) else NA_integer_
}
