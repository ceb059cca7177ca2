# How much faster is the engine's concurrent HTTP read than fetching the
# same chunks one after another? Writes a 64 MiB float64 array of exactly
# 256 chunks (4096 x 2048, chunks 256 x 128, no compressor, so every chunk
# is 256 KiB of real bytes) to a temporary folder, serves it with the test
# HTTP server (tests/testthat/http_server.py, Python standard library) on
# 127.0.0.1, and times, median of 3 runs:
#
#   (a)  concurrent, cold: open_zarr(paste0(url, "/x"))[["/"]][] (a new store
#        each run, so its connections are opened during the read; get_many
#        keeps up to 16 requests in flight). Not open_zarr(url)[["/x"]]: an
#        HTTP store cannot list, so without consolidated metadata the root
#        group finds no children and [["/x"]] is NULL (with a warning).
#   (a') concurrent, warm: arr[] again on an array already read once (its
#        connections are open)
#   (b)  sequential GETs: s <- zarr_httpstore$new(url); for (k in keys) s$get(k)
#        (the same Rust client, one request at a time, no decoding)
#   (c)  sequential chunk reads with decoding: arr[rows, cols], one chunk
#        region at a time
#   (c') the same with options(zarr.num_threads = ) set: without the option
#        (or ZARR_NUM_THREADS) every read calls parallel::detectCores(), which
#        on Linux runs `grep ^processor /proc/cpuinfo | wc -l` in a shell
#        (about 2 ms per read)
#
# with the server's artificial latency (--delay-ms) at 0 ms and 2 ms per
# request, against two servers:
#
#   "as-is": http_server.py exactly as the tests run it. Python's
#     socketserver listens with a backlog of 5, so when 16 connections are
#     opened at once the kernel drops SYNs and the client retries after 1 s;
#     and http_server.py writes the headers and a body below one TCP segment
#     in two writes without TCP_NODELAY, so such small answers (metadata,
#     shard indexes) wait ~40 ms for the client's delayed ACK.
#   "tuned": the same script, started through a few lines of Python that set
#     socketserver.TCPServer.request_queue_size = 128 and
#     StreamRequestHandler.disable_nagle_algorithm = True first (as a
#     production web server would be); http_server.py itself is unchanged.
#
# Prints a table and writes it to bench/HTTP_RESULTS.md. Not part of the
# tests. Run from the repository root after `make install`:
#
#   R_LIBS=.rlib Rscript bench/http_read.R
library(zarr)

script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
server_py <- file.path(dirname(script_dir), "tests", "testthat", "http_server.py")
results_md <- file.path(script_dir, "HTTP_RESULTS.md")
stopifnot(file.exists(server_py))

reps <- 3L
delays <- c(0, 2)
servers <- c("tuned", "as-is")
nr <- 4096
nc <- 2048
cr <- 256
cc <- 128
nbytes <- nr * nc * 8

# --- the test server (the lines of tests/testthat/helper-http.R that start
# and stop it, without testthat/withr) --------------------------------------

find_python <- function() {
  for (name in c("python3", "python")) {
    py <- Sys.which(name)
    if (nzchar(py)) return(unname(py))
  }
  stop("python3 is needed to run the test HTTP server")
}

# Runs http_server.py (argv[1]) after raising the listen backlog and turning
# Nagle's algorithm off for every connection.
tuned_launcher <- paste(
  "import runpy, socketserver, sys",
  "socketserver.TCPServer.request_queue_size = 128",
  "socketserver.StreamRequestHandler.disable_nagle_algorithm = True",
  "sys.argv = sys.argv[1:]",
  "runpy.run_path(sys.argv[0], run_name='__main__')",
  sep = "; "
)

start_server <- function(root, delay_ms = 0, kind = c("as-is", "tuned")) {
  kind <- match.arg(kind)
  py <- find_python()
  out <- tempfile("http-server-", fileext = ".out")
  err <- tempfile("http-server-", fileext = ".err")
  args <- c(server_py, root, "--max-seconds", "1800", "--parent-pid", Sys.getpid(),
            "--delay-ms", delay_ms)
  if (kind == "tuned") args <- c("-c", tuned_launcher, args)
  old <- Sys.getenv("LD_LIBRARY_PATH", unset = NA)
  Sys.unsetenv("LD_LIBRARY_PATH")
  system2(py, shQuote(args), stdout = out, stderr = err, wait = FALSE)
  if (!is.na(old)) Sys.setenv(LD_LIBRARY_PATH = old)
  deadline <- Sys.time() + 10
  repeat {
    line <- if (file.exists(out)) grep("^PORT ", readLines(out, warn = FALSE), value = TRUE)
    if (length(line)) break
    if (Sys.time() > deadline) {
      stop("the test HTTP server did not start within 10 s: ",
           paste(if (file.exists(err)) readLines(err, warn = FALSE), collapse = "\n"))
    }
    Sys.sleep(0.05)
  }
  parts <- strsplit(line[1L], " ", fixed = TRUE)[[1]]
  list(url = sprintf("http://127.0.0.1:%s", parts[2L]), pid = as.integer(parts[4L]))
}

stop_server <- function(server) {
  if (!is.null(server)) tools::pskill(server$pid)
  invisible(NULL)
}

stats <- function(server) {
  jsonlite::fromJSON(rawToChar(zarr_httpstore$new(server$url)$get("__stats")))
}
reset <- function(server) invisible(zarr_httpstore$new(server$url)$get("__reset"))

# --- the data ---------------------------------------------------------------

Sys.setenv(no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
root <- file.path(tempdir(), "bench-http.zarr")
unlink(root, recursive = TRUE)
x <- matrix(sin(seq_len(nr * nc) / 1e3) * 100, nr, nc)
def <- define_array("float64", c(nr, nc))
def$chunk_shape <- c(cr, cc)
def$remove_codec("zstd")
create_zarr(root)$add_array("/", "x", def)$write(x)
grid <- expand.grid(i = seq_len(nr / cr) - 1L, j = seq_len(nc / cc) - 1L)
keys <- sprintf("x/c/%d/%d", grid$i, grid$j)
stopifnot(length(keys) == 256L, all(file.exists(file.path(root, keys))))
stopifnot(sum(file.size(file.path(root, keys))) == nbytes)

# --- the measurements -------------------------------------------------------

# Median of `reps` runs of f() (setup() before each, untimed); the server's
# counters of the last run.
time_it <- function(server, f, setup = function() NULL) {
  walls <- numeric(reps)
  for (r in seq_len(reps)) {
    state <- setup()
    gc()
    reset(server)
    t0 <- proc.time()[["elapsed"]]
    f(state)
    walls[r] <- proc.time()[["elapsed"]] - t0
  }
  s <- stats(server)
  list(wall = stats::median(walls), walls = walls, requests = s$requests,
       bytes = s$bytes, max_in_flight = s$max_in_flight)
}

measure <- function(delay_ms, kind) {
  server <- start_server(root, delay_ms, kind)
  on.exit(stop_server(server))
  url <- paste0(server$url, "/x")
  cold <- time_it(server, function(state) {
    y <- open_zarr(url)[["/"]][]
    stopifnot(identical(y, x))
  })
  warm <- time_it(server, setup = function() {
    arr <- open_zarr(url)[["/"]]
    invisible(arr[])
    arr
  }, function(arr) {
    y <- arr[]
    stopifnot(identical(y, x))
  })
  seqn <- time_it(server, function(state) {
    s <- zarr_httpstore$new(server$url)
    got <- 0
    for (k in keys) got <- got + length(s$get(k))
    stopifnot(got == nbytes)
  })
  seqd <- time_it(server, function(state) {
    arr <- open_zarr(url)[["/"]]
    for (n in seq_along(keys)) {
      rows <- grid$i[n] * cr + seq_len(cr)
      cols <- grid$j[n] * cc + seq_len(cc)
      stopifnot(identical(arr[rows, cols], x[rows, cols]))
    }
  })
  # The same with the zarr.num_threads option set: without it every read
  # calls parallel::detectCores(), which runs `grep | wc` in a shell.
  seqd_opt <- local({
    old <- options(zarr.num_threads = zarr_num_threads())
    on.exit(options(old))
    time_it(server, function(state) {
      arr <- open_zarr(url)[["/"]]
      for (n in seq_along(keys)) {
        rows <- grid$i[n] * cr + seq_len(cr)
        cols <- grid$j[n] * cc + seq_len(cc)
        stopifnot(identical(arr[rows, cols], x[rows, cols]))
      }
    })
  })
  rows <- list(
    "(a) concurrent, cold: open_zarr(url)[[\"/\"]][]" = cold,
    "(a') concurrent, warm: arr[] again" = warm,
    "(b) sequential GETs: s$get(key)" = seqn,
    "(c) sequential chunk reads: arr[rows, cols]" = seqd,
    "(c') as (c), option zarr.num_threads set" = seqd_opt
  )
  wall <- vapply(rows, `[[`, 0, "wall")
  data.frame(
    server = kind,
    delay_ms = delay_ms,
    method = names(rows),
    wall_s = wall,
    runs = vapply(rows, function(r) paste(sprintf("%.3f", r$walls), collapse = " "), ""),
    mb_s = nbytes / 1e6 / wall,
    b_over = wall[["(b) sequential GETs: s$get(key)"]] / wall,
    requests = vapply(rows, function(r) as.integer(r$requests), 0L),
    max_in_flight = vapply(rows, function(r) as.integer(r$max_in_flight), 0L),
    sent_mib = vapply(rows, `[[`, 0, "bytes") / 2^20,
    row.names = NULL, stringsAsFactors = FALSE
  )
}

cpu <- local({
  m <- grep("^model name", readLines("/proc/cpuinfo", warn = FALSE), value = TRUE)
  if (length(m)) trimws(sub("^[^:]*:", "", m[1L])) else "unknown"
})
machine <- sprintf("%s; nproc %s; R %s; zarr %s; zarr.num_threads %d; Python %s; %s",
                   cpu, trimws(system("nproc", intern = TRUE)), getRversion(),
                   packageVersion("zarr"), zarr_num_threads(),
                   sub("^Python ", "", system2(find_python(), "--version", stdout = TRUE)),
                   R.version$platform)
cat(sprintf("array: %d x %d float64 (%.0f MiB), chunks %d x %d (%d chunks of %d KiB), no compressor\n",
            nr, nc, nbytes / 2^20, cr, cc, length(keys), cr * cc * 8 / 1024))
cat("machine:", machine, "\n")

configs <- expand.grid(delay = delays, kind = servers, stringsAsFactors = FALSE)
res <- do.call(rbind, Map(measure, configs$delay, configs$kind))
unlink(root, recursive = TRUE)

fmt <- data.frame(
  "server" = res$server,
  "latency (ms/req)" = res$delay_ms,
  method = res$method,
  "wall s (median of 3)" = sprintf("%.3f", res$wall_s),
  "runs (s)" = res$runs,
  "MB/s" = sprintf("%.0f", res$mb_s),
  "(b) / this" = sprintf("%.2f", res$b_over),
  "requests" = res$requests,
  "max in flight" = res$max_in_flight,
  "MiB sent" = sprintf("%.1f", res$sent_mib),
  check.names = FALSE, stringsAsFactors = FALSE
)
print(fmt, row.names = FALSE, right = FALSE)
pick <- function(kind, d, m) {
  res$wall_s[res$server == kind & res$delay_ms == d & startsWith(res$method, m)]
}
summary_line <- function(kind, d) {
  sprintf("- %s server, %g ms per request: (b)/(a) = %.2fx, (b)/(a') = %.2fx, (c)/(a) = %.2fx",
          kind, d, pick(kind, d, "(b)") / pick(kind, d, "(a)"),
          pick(kind, d, "(b)") / pick(kind, d, "(a')"), pick(kind, d, "(c)") / pick(kind, d, "(a)"))
}
summary_lines <- unlist(lapply(servers, function(kind) vapply(delays, summary_line, "", kind = kind)))
cat(summary_lines, sep = "\n")

md_row <- function(v) paste0("| ", paste(v, collapse = " | "), " |")
md <- c(
  "# HTTP read: concurrent engine read vs. sequential fetches",
  "",
  "Written by `bench/http_read.R` (`R_LIBS=.rlib Rscript bench/http_read.R` after `make install`).",
  "",
  sprintf("- date: %s", format(Sys.time(), "%Y-%m-%d %H:%M %Z")),
  sprintf("- machine: %s", machine),
  sprintf(paste("- array: %d x %d float64 = %.0f MiB, chunks %d x %d = %d chunks of %d KiB,",
                "codecs transpose + bytes (no compressor)"),
          nr, nc, nbytes / 2^20, cr, cc, length(keys), cr * cc * 8 / 1024),
  paste("- server: tests/testthat/http_server.py on 127.0.0.1 (Python stdlib, one thread",
        "per connection); the latency is its `--delay-ms` sleep before each answer.",
        "\"as-is\" is the script as the tests run it (listen backlog 5: 16 connections",
        "opened at once lose SYNs and wait 1 s; headers and a small body in two writes",
        "without TCP_NODELAY: ~40 ms per small answer). \"tuned\" is the same script",
        "started with `socketserver.TCPServer.request_queue_size = 128` and",
        "`StreamRequestHandler.disable_nagle_algorithm = True`."),
  paste("- (a) `open_zarr(paste0(url, \"/x\"))[[\"/\"]][]` with a new store each run (the",
        "engine's `get_many`, up to 16 requests in flight, then decode); (a') `arr[]` on an",
        "array already read once (connections open); (b)",
        "`s <- zarr_httpstore$new(url); for (k in keys) s$get(k)`; (c) `arr[rows, cols]` one",
        "chunk region at a time; (c') the same with",
        "`options(zarr.num_threads = zarr_num_threads())` set (without it each read calls",
        "`parallel::detectCores()`, which forks a shell). Requests, max in flight and bytes",
        "are the server's counters for one run ((a) and (c) include the metadata request). MB = 10^6 bytes."),
  "",
  md_row(names(fmt)),
  md_row(rep("---", ncol(fmt))),
  apply(fmt, 1, md_row),
  "",
  summary_lines,
  ""
)
writeLines(md, results_md)
cat("written:", results_md, "\n")
