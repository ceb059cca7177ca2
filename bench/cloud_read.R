# Reading from S3 over a slow link: time and requests per read, this
# package against zarr-python (its ObjectStore over obstore) and
# tensorstore (its zarr3 driver over the "s3" kvstore), all three reading
# one store on a loopback S3 server through a loopback proxy
# (tests/testthat/proxy/s3_proxy.py) that adds 0 or 20 ms to every request
# and counts them.
#
# The array is the peer workload's (bench/common.R): float64 4096 x 4096
# (128 MiB), chunks 256 x 256 (256 chunks of 512 KiB) in C order, zstd
# level 1; and the same in shards of 1024 x 1024 (16 shards of 16 inner
# chunks). Reads, median of BENCH_CLOUD_REPS (3) runs after one untimed
# run (the same for every contender), each on a newly
# opened store (metadata requests included): the whole array, and one
# 256 x 256 region that is one chunk (one inner chunk). The "direct" rows
# read from the server without the proxy: what the server alone allows.
#
# A setting "s<ms>" (e.g. s20) adds the latency in the server instead, with
# no proxy in the path: zarr-bench-s3 only (BENCH_S3_MEMORY), set with its
# POST /__bench/delay?ms=<ms> route (the same delay as its `--delay-ms`
# flag: a sleep per request before it is answered, so requests in flight
# overlap their waits). The proxy is Python and, relaying 128 MiB, takes a
# share of the two cores the clients also need; here the latency costs no
# CPU. Requests are then the server's count (GET /__bench/stats): R's for
# its last run, as the proxy's; the Python contenders' over all their runs
# divided by the runs (they ask only a proxy for counts). "s<ms>l<mbit>"
# (e.g. s20l1000) adds a link of that many Mbit/s that every body shares,
# paced by the server (its POST /__bench/link?mbit=<mbit> route): the
# transfer of a full read then takes most of a second, as from a cloud
# region, instead of the loopback's few tens of ms.
#
# The server: zarr-bench-s3 when BENCH_S3_MEMORY names its binary, a small
# Rust S3 server of this folder's (bench/s3_server, on the `s3s` crate)
# that holds the objects in memory and sends each answer in one piece:
#
#   cargo install --locked --path bench/s3_server --root /some/dir
#
# (bench only: not part of the package). Else s3s-fs (a Rust S3 server
# over a folder: `cargo install s3s-fs --features binary`) when
# BENCH_S3S_FS names its binary: it reads each answer from its file 4 KiB
# at a time and takes more CPU per full read than the clients. Else moto
# (ZARR_TEST_MOTO_VENV, as the tests), whose Python server answers a few
# hundred requests per second and is then the bottleneck at 0 ms. The
# proxy is Python too (standard library, asyncio, one thread): see CLOUD_RESULTS.md for what
# each bounds.
#
# The peers: a Python with zarr >= 3, obstore and tensorstore in
# BENCH_PYTHON (a venv outside the repository; without it only this
# package is measured). BENCH_CLOUD_DELAYS picks the settings (default
# "direct,0,20"; "s20" as above). Besides wall times it reports the CPU
# seconds per read of each client, of the server and of the proxy: on a
# machine whose cores the three share, the wall time of a full read is
# their CPU together.
# Prints a table and writes bench/CLOUD_RESULTS.md (and,
# with BENCH_CLOUD_LOG=folder, each R run's request timeline from the
# proxy as JSON). Run from the repository root after `make install`:
#
#   R_LIBS=.rlib BENCH_PYTHON=/path/to/venv/bin/python BENCH_S3_MEMORY=/some/dir/bin/zarr-bench-s3 Rscript bench/cloud_read.R
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "common.R"))
repo <- dirname(script_dir)
proxy_py <- file.path(repo, "tests", "testthat", "proxy", "s3_proxy.py")
peers_py <- file.path(script_dir, "cloud_read.py")
results_md <- file.path(script_dir, "CLOUD_RESULTS.md")
moto_venv <- Sys.getenv("ZARR_TEST_MOTO_VENV", file.path(repo, ".venv-moto"))
moto_python <- file.path(moto_venv, "bin", "python")
peer_python <- Sys.getenv("BENCH_PYTHON", Sys.getenv("BENCH_ZARR_PYTHON", ""))
s3s_fs <- Sys.getenv("BENCH_S3S_FS", "")
s3_memory <- Sys.getenv("BENCH_S3_MEMORY", "")
log_dir <- Sys.getenv("BENCH_CLOUD_LOG", "")
reps <- as.integer(Sys.getenv("BENCH_CLOUD_REPS", "3"))
settings <- strsplit(Sys.getenv("BENCH_CLOUD_DELAYS", "direct,0,20"), ",")[[1]]
peers <- if (nzchar(peer_python)) c("zarr-python", "tensorstore") else character()
python <- if (file.exists(moto_python)) moto_python else Sys.which("python3")
# The latency the server adds itself ("s20": 20 ms), 0 for the others.
server_delay <- ifelse(grepl("^s[0-9]+", settings), suppressWarnings(as.integer(sub("^s([0-9]+).*", "\\1", settings))), 0L)
# The bandwidth of the server's link ("s20l1000": 1000 Mbit/s), 0 for none.
server_link <- ifelse(grepl("^s[0-9]+l[0-9]+$", settings), suppressWarnings(as.integer(sub(".*l", "", settings))), 0L)
bad <- settings[!grepl("^(direct|[0-9]+|s[0-9]+(l[0-9]+)?)$", settings)]
if (length(bad)) stop("BENCH_CLOUD_DELAYS: not a setting: ", paste(bad, collapse = ", "),
                      " (direct, a delay in ms for the proxy, s<ms> for the server, s<ms>l<mbit> with a link)")
if (any(grepl("^s", settings)) && !nzchar(s3_memory))
  stop("BENCH_CLOUD_DELAYS: ", paste(grep("^s", settings, value = TRUE), collapse = ", "),
       " (latency added by the server) needs zarr-bench-s3: set BENCH_S3_MEMORY to its binary")
names(server_delay) <- names(server_link) <- settings
key <- "testing"

# Servers start as the test suite starts them (free_port() in
# tests/testthat/helper-s3.R, wait_for_port() in helper-azure.R).
for (h in c("helper-s3.R", "helper-azure.R")) {
  sys.source(file.path(repo, "tests", "testthat", h), envir = globalenv())
}

start <- function(cmd, args) {
  for (attempt in 1:3) {
    port <- free_port()
    # To a file: a pipe nobody reads fills with the server's request log and
    # stalls it.
    log <- tempfile("cloud-bench-", fileext = ".log")
    p <- processx::process$new(cmd, c(args(port)), stdout = log, stderr = "2>&1",
                               env = c("current", LD_LIBRARY_PATH = ""), cleanup = TRUE)
    if (wait_for_port(p, port, log, cmd)) {
      return(list(process = p, port = port, endpoint = sprintf("http://127.0.0.1:%d", port)))
    }
  }
  stop("cannot start ", cmd, " (its port was taken three times)")
}

http <- function(port, method, path) {
  con <- socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE, timeout = 30)
  on.exit(close(con))
  writeLines(sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\nConnection: close\r\n\r",
                     method, path, port), con, sep = "\n")
  readLines(con, warn = FALSE)
}

bucket <- "zarr-bench"
if (nzchar(s3_memory)) {
  server <- start(s3_memory, function(p) {
    c("--host", "127.0.0.1", "--port", p, "--access-key", key, "--secret-key", key, "--bucket", bucket)
  })
  server_name <- system2(s3_memory, "--version", stdout = TRUE)[1]
} else if (nzchar(s3s_fs)) {
  # s3s-fs serves the folders of its root as buckets.
  root <- tempfile("s3s-root-")
  dir.create(file.path(root, bucket), recursive = TRUE)
  server <- start(s3s_fs, function(p) {
    c("--host", "127.0.0.1", "--port", p, "--access-key", key, "--secret-key", key, root)
  })
  server_name <- paste("s3s-fs", sub(".*s3s-fs ", "", system2(s3s_fs, "--version", stdout = TRUE)[1]))
} else {
  server <- start(file.path(moto_venv, "bin", "moto_server"), function(p) c("-H", "127.0.0.1", "-p", p))
  invisible(http(server$port, "PUT", paste0("/", bucket)))
  server_name <- "moto (Python)"
}
on.exit(server$process$kill(), add = TRUE)
Sys.setenv(AWS_ENDPOINT_URL = server$endpoint, AWS_ALLOW_HTTP = "true", AWS_ACCESS_KEY_ID = key,
           AWS_SECRET_ACCESS_KEY = key, AWS_REGION = "us-east-1",
           no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")

x <- make_data(N)
layouts <- c(chunked = "zstd1", sharded = "shard")
for (name in names(layouts)) {
  create_zarr(sprintf("s3://%s/%s.zarr", bucket, name))$add_array("/", "x", layout_builder(layouts[[name]], "C"))$write(x)
}
region <- list(257:512, 513:768)
want <- list(full = x, region = x[region[[1]], region[[2]]])
sums <- vapply(want, function(v) sprintf("%.17g", sum(v)), "")

# CPU seconds (user + system, all threads) a process has used so far,
# from /proc/<pid>/stat (fields 14 and 15, in clock ticks): the server's
# and the proxy's share of each read. NA where there is no /proc.
ticks <- suppressWarnings(as.numeric(system("getconf CLK_TCK", intern = TRUE)))
cpu_of <- function(p) {
  if (is.null(p)) return(NA_real_)
  stat <- tryCatch(readLines(sprintf("/proc/%d/stat", p$process$get_pid()), warn = FALSE),
                   error = function(e) "")
  # The command name (field 2) may hold spaces: count from after its ")".
  f <- strsplit(sub(".*\\) ", "", stat), " ", fixed = TRUE)[[1]]
  if (length(f) < 13L) return(NA_real_)
  (as.numeric(f[12L]) + as.numeric(f[13L])) / ticks
}

# Median wall time and CPU time of `reps` runs of f() and the request
# count of the last run by `counter` (the proxy, or zarr-bench-s3 when it
# adds the latency; NA without either); the proxy's request timeline goes
# to BENCH_CLOUD_LOG. The CPU time is this process's (all its threads: the
# client's fetch and decode).
measure <- function(counter, f, what, label) {
  walls <- cpus <- numeric(reps)
  # One untimed run first, as the Python contenders do (cloud_read.py).
  stopifnot(identical(f(), want[[what]]))
  for (r in seq_len(reps)) {
    if (!is.null(counter)) reset_count(counter)
    t0 <- proc.time()
    got <- f()
    t1 <- proc.time()
    walls[r] <- t1[["elapsed"]] - t0[["elapsed"]]
    cpus[r] <- sum(t1[c("user.self", "sys.self")]) - sum(t0[c("user.self", "sys.self")])
    # Checked outside the timing, as the peers check theirs.
    stopifnot(identical(got, want[[what]]))
  }
  out <- list(wall = stats::median(walls), cpu = stats::median(cpus))
  if (is.null(counter)) return(c(out, requests = NA_integer_))
  if (nzchar(log_dir) && counter$routes == "/__proxy") {
    dir.create(log_dir, showWarnings = FALSE, recursive = TRUE)
    writeLines(utils::tail(http(counter$port, "GET", "/__proxy/log"), 1L), file.path(log_dir, paste0(label, ".json")))
  }
  c(out, requests = requests_of(counter))
}

# Zero the request count of `counter` (the proxy or zarr-bench-s3), and
# read it.
reset_count <- function(counter) invisible(http(counter$port, "POST", paste0(counter$routes, "/reset")))
requests_of <- function(counter) {
  jsonlite::fromJSON(utils::tail(http(counter$port, "GET", paste0(counter$routes, "/stats")), 1L))$requests
}

# Run `read` (one contender's `reps` reads) and add the CPU seconds per
# read the server and the proxy spent meanwhile (the proxy's few counting
# requests included).
with_service_cpu <- function(proxy, read) {
  s0 <- cpu_of(server)
  p0 <- cpu_of(proxy)
  got <- read()
  got$server_cpu <- (cpu_of(server) - s0) / reps
  got$proxy_cpu <- (cpu_of(proxy) - p0) / reps
  got
}

# The array is opened by its own URL, as the peers open it by its path:
# one metadata request, not the root group's too.
r_read <- function(counter, endpoint, name, what, setting) {
  url <- sprintf("s3://%s/%s.zarr/x", bucket, name)
  Sys.setenv(AWS_ENDPOINT_URL = endpoint)
  read <- switch(what,
    full = function() open_zarr(url, read_only = TRUE)[["/"]][],
    region = function() open_zarr(url, read_only = TRUE)[["/"]][region[[1]], region[[2]]]
  )
  measure(counter, read, what, paste("R", name, what, setting, sep = "-"))
}

# `counter` is the server's when it adds the latency itself: the peers
# find no proxy to ask, so their requests are counted here, over all runs.
peer_read <- function(peer, endpoint, name, what, counter = NULL) {
  if (!is.null(counter)) reset_count(counter)
  out <- system2(peer_python, c(peers_py, peer, endpoint, bucket, name, what, reps, sums[[what]]),
                 stdout = TRUE, stderr = TRUE,
                 env = c("LD_LIBRARY_PATH=", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"))
  if (!is.null(attr(out, "status"))) stop(paste(out, collapse = "\n"))
  r <- jsonlite::fromJSON(utils::tail(out, 1L))
  requests <- if (!is.null(counter)) requests_of(counter) / (reps + 1) else if (is.null(r$requests)) NA_integer_ else r$requests
  list(wall = r$wall, cpu = r$cpu, requests = requests, version = r$version)
}

loads <- character()
versions <- character()
rows <- list()
for (setting in settings) {
  proxy <- NULL
  counter <- NULL
  endpoint <- server$endpoint
  # Set for every setting, so that one after an "s" setting has none.
  if (nzchar(s3_memory)) {
    http(server$port, "POST", sprintf("/__bench/delay?ms=%d", server_delay[[setting]]))
    http(server$port, "POST", sprintf("/__bench/link?mbit=%d", server_link[[setting]]))
  }
  if (grepl("^s", setting)) {
    counter <- list(port = server$port, routes = "/__bench")
  } else if (setting != "direct") {
    proxy <- start(python, function(p) {
      c(proxy_py, "--port", p, "--upstream", server$endpoint, "--delay-ms", setting)
    })
    proxy$routes <- "/__proxy"
    counter <- proxy
    endpoint <- proxy$endpoint
  }
  loads[setting] <- trimws(sub(".*load average: ", "", system("uptime", intern = TRUE)))
  for (name in names(layouts)) {
    for (what in c("full", "region")) {
      got <- list(R = with_service_cpu(proxy, function() r_read(counter, endpoint, name, what, setting)))
      for (peer in peers) {
        got[[peer]] <- with_service_cpu(proxy, function() {
          peer_read(peer, endpoint, name, what, if (is.null(proxy)) counter)
        })
        versions[peer] <- got[[peer]]$version
      }
      row <- data.frame(setting = setting, layout = name,
                        read = if (what == "full") "full 4096 x 4096" else "region 256 x 256",
                        stringsAsFactors = FALSE)
      for (who in names(got)) {
        row[[paste(who, "s")]] <- got[[who]]$wall
        row[[paste(who, "cpu")]] <- got[[who]]$cpu
        row[[paste(who, "requests")]] <- got[[who]]$requests
        row[[paste(who, "server cpu")]] <- got[[who]]$server_cpu
        row[[paste(who, "proxy cpu")]] <- got[[who]]$proxy_cpu
      }
      rows[[length(rows) + 1L]] <- row
      cat(sprintf("%-6s %-7s %-6s %s\n", setting, name, what,
                  paste(sprintf("%s %.3f s", names(got), vapply(got, function(g) g$wall, 0)), collapse = ", ")))
    }
  }
  loads[setting] <- paste(loads[setting], "->", trimws(sub(".*load average: ", "", system("uptime", intern = TRUE))))
  if (!is.null(proxy)) proxy$process$kill()
}
res <- do.call(rbind, rows)

latency <- ifelse(res$setting == "direct", "direct (no proxy)",
                  ifelse(grepl("^s[0-9]+l", res$setting),
                         sub("^s([0-9]+)l([0-9]+)$", "\\1 (server, link \\2 Mbit/s)", res$setting),
                         ifelse(grepl("^s", res$setting), paste(sub("^s", "", res$setting), "(server)"), res$setting)))
fmt <- data.frame("latency (ms/req)" = latency,
                  layout = res$layout, read = res$read, check.names = FALSE, stringsAsFactors = FALSE)
for (who in c("R", peers)) {
  label <- if (who == "R") "zarr (R)" else who
  fmt[[paste(label, "s")]] <- sprintf("%.3f", res[[paste(who, "s")]])
  fmt[[paste(label, "CPU s")]] <- sprintf("%.2f", res[[paste(who, "cpu")]])
  n <- res[[paste(who, "requests")]]
  # A mean over runs (the peers' in an "s" setting) shows when the runs differ.
  fmt[[paste(label, "requests")]] <- ifelse(is.na(n), "-", ifelse(n == round(n), sprintf("%d", as.integer(round(n))),
                                                                  sprintf("%.1f", n)))
}
for (peer in peers) fmt[[paste("R /", peer)]] <- sprintf("%.2f", res[["R s"]] / res[[paste(peer, "s")]])
if (length(peers)) {
  best <- do.call(pmin, res[paste(peers, "s")])
  fmt[["R / best peer"]] <- sprintf("%.2f", res[["R s"]] / best)
}
print(fmt, row.names = FALSE, right = FALSE)

# The server's and the proxy's CPU seconds per read while each contender
# read: what the services took of the shared cores.
svc <- fmt[c("latency (ms/req)", "layout", "read")]
for (who in c("R", peers)) {
  label <- if (who == "R") "zarr (R)" else who
  svc[[paste("server CPU s,", label)]] <- sprintf("%.2f", res[[paste(who, "server cpu")]])
  svc[[paste("proxy CPU s,", label)]] <- ifelse(is.na(res[[paste(who, "proxy cpu")]]), "-",
                                                sprintf("%.2f", res[[paste(who, "proxy cpu")]]))
}
print(svc, row.names = FALSE, right = FALSE)

md_row <- function(v) paste0("| ", paste(v, collapse = " | "), " |")
# The notes written by hand below the table (from their first "## "
# heading on) are kept.
notes <- if (file.exists(results_md)) readLines(results_md) else character()
notes <- if (any(grepl("^## ", notes))) c("", notes[seq(which(grepl("^## ", notes))[1], length(notes))])
writeLines(c(
  sprintf("# Cloud read: S3 (%s) through a delaying proxy", server_name),
  "",
  "Written by `bench/cloud_read.R`.",
  "",
  sprintf("- date: %s; nproc %s; R %s; zarr %s; %s",
          format(Sys.time(), "%Y-%m-%d %H:%M %Z"), trimws(system("nproc", intern = TRUE)),
          getRversion(), packageVersion("zarr"),
          if (length(versions)) paste(versions, collapse = "; ") else "peers not measured"),
  sprintf(paste("- server: %s on 127.0.0.1; proxy: tests/testthat/proxy/s3_proxy.py",
                "(Python, asyncio, bodies relayed in pieces)%s"), server_name,
          if (any(grepl("^s", settings))) paste("; \"(server)\": the latency added by the server itself",
                                                "(a sleep per request), no proxy; requests its count",
                                                "(the Python contenders': over all runs, the untimed one too, / runs)") else ""),
  sprintf("- load average (1, 5, 15 min) at the start -> end of each setting: %s",
          paste(sprintf("%s: %s", names(loads), loads), collapse = "; ")),
  paste("- array: the peer workload, float64 4096 x 4096 (128 MiB), chunks 256 x 256 in C order, zstd level 1;",
        "sharded: shards 1024 x 1024 of 256 x 256; region: [256:512, 512:768] (one chunk / inner chunk)"),
  paste0("- each read opens the store anew (metadata requests included), median of ", reps, " runs after one untimed run (every contender); ",
         "requests are the proxy's count for one run; the Python contenders time their own reads ",
         "(without interpreter start-up): zarr-python's `ObjectStore` over `obstore.store.S3Store`, ",
         "tensorstore's `zarr3` driver over its `s3` kvstore with a new context per run"),
  "",
  md_row(names(fmt)), md_row(rep("---", ncol(fmt))),
  apply(fmt, 1, md_row),
  "",
  paste("CPU seconds (user + system, all threads) per read: the clients' in the table above (R by",
        "`proc.time()`, the Python contenders by `time.process_time()` around each read); the",
        "server's and the proxy's below, from `/proc/<pid>/stat` around each contender's runs."),
  "",
  md_row(names(svc)), md_row(rep("---", ncol(svc))),
  apply(svc, 1, md_row),
  notes
), results_md)
