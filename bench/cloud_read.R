# Reading from S3 over a slow link: time and requests per read, this
# package against zarr-python (its ObjectStore over obstore), both reading
# one store on a moto S3 server on 127.0.0.1 through a loopback proxy
# (tests/testthat/proxy/s3_proxy.py) that adds 0 or 20 ms to every request
# and counts them.
#
# The arrays: float64, 2048 x 2048 (32 MiB), chunks 256 x 256 (64 chunks
# of 512 KiB), default codecs (zstd); and the same in shards of
# 1024 x 1024 (4 shards of 16 inner chunks). Reads, median of 3 runs each
# on a newly opened store: the whole array, and one 256 x 256 region that
# is one chunk (inner chunk). moto's Python server answers a few hundred
# requests per second at most: at 0 ms it is the bottleneck, at 20 ms
# the latency is, which is what concurrency hides.
#
# Needs moto (ZARR_TEST_MOTO_VENV, as the tests) and, for the comparison,
# a Python with zarr >= 3 and obstore in BENCH_ZARR_PYTHON (a venv outside
# the repository; without it only this package is measured). Prints a
# table and writes bench/CLOUD_RESULTS.md. Run from the repository root
# after `make install`:
#
#   R_LIBS=.rlib BENCH_ZARR_PYTHON=/path/to/venv/bin/python Rscript bench/cloud_read.R
library(zarr)

script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
repo <- dirname(script_dir)
proxy_py <- file.path(repo, "tests", "testthat", "proxy", "s3_proxy.py")
results_md <- file.path(script_dir, "CLOUD_RESULTS.md")
moto_venv <- Sys.getenv("ZARR_TEST_MOTO_VENV", file.path(repo, ".venv-moto"))
moto_python <- file.path(moto_venv, "bin", "python")
zarr_python <- Sys.getenv("BENCH_ZARR_PYTHON", "")
reps <- 3L
delays <- c(0, 20)

free_port <- function() {
  repeat {
    port <- sample(20000:60000, 1L)
    s <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(s)) {
      close(s)
      return(port)
    }
  }
}

start <- function(cmd, args) {
  port <- free_port()
  # To a file: a pipe nobody reads fills with moto's request log and
  # stalls the server.
  p <- processx::process$new(cmd, c(args(port)), stdout = tempfile("cloud-bench-", fileext = ".log"),
                             stderr = "2>&1",
                             env = c("current", LD_LIBRARY_PATH = ""), cleanup = TRUE)
  for (i in 1:300) {
    con <- suppressWarnings(tryCatch(socketConnection("127.0.0.1", port, timeout = 1, open = "r+b"),
                                     error = function(e) NULL))
    if (!is.null(con)) {
      close(con)
      return(list(process = p, port = port, endpoint = sprintf("http://127.0.0.1:%d", port)))
    }
    Sys.sleep(0.1)
  }
  stop("cannot start ", cmd)
}

http <- function(port, method, path) {
  con <- socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE, timeout = 30)
  on.exit(close(con))
  writeLines(sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\nConnection: close\r\n\r",
                     method, path, port), con, sep = "\n")
  readLines(con, warn = FALSE)
}

moto <- start(file.path(moto_venv, "bin", "moto_server"), function(p) c("-H", "127.0.0.1", "-p", p))
on.exit(moto$process$kill(), add = TRUE)
bucket <- "zarr-bench"
invisible(http(moto$port, "PUT", paste0("/", bucket)))
Sys.setenv(AWS_ENDPOINT_URL = moto$endpoint, AWS_ALLOW_HTTP = "true", AWS_ACCESS_KEY_ID = "testing",
           AWS_SECRET_ACCESS_KEY = "testing", AWS_REGION = "us-east-1",
           no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")

n <- 2048
x <- matrix(sin(seq_len(n * n) / 1e3) * 100, n, n)
layouts <- list(
  chunked = function() {
    d <- define_array("float64", c(n, n))
    d$chunk_shape <- c(256, 256)
    d
  },
  sharded = function() {
    d <- define_array("float64", c(n, n))
    d$chunk_shape <- c(1024, 1024)
    d$add_codec("sharding_indexed", list(chunk_shape = c(256, 256)))
    d
  }
)
for (name in names(layouts)) {
  create_zarr(sprintf("s3://%s/%s.zarr", bucket, name))$add_array("/", "x", layouts[[name]]())$write(x)
}

# Median wall time of `reps` runs of f() and the proxy's request count of
# one run.
measure <- function(proxy, f) {
  walls <- numeric(reps)
  for (r in seq_len(reps)) {
    http(proxy$port, "POST", "/__proxy/reset")
    t0 <- proc.time()[["elapsed"]]
    f()
    walls[r] <- proc.time()[["elapsed"]] - t0
  }
  stats <- jsonlite::fromJSON(utils::tail(http(proxy$port, "GET", "/__proxy/stats"), 1L))
  list(wall = stats::median(walls), requests = stats$requests)
}

# zarr-python times itself (no interpreter start-up in the figure), with
# the same resets of the proxy's counters.
python_read <- function(proxy, name, what) {
  if (!nzchar(zarr_python)) return(list(wall = NA_real_, requests = NA_integer_))
  code <- c(
    "import json, statistics, sys, time, urllib.request, zarr, obstore.store, zarr.storage",
    "endpoint, bucket, name, what, reps = sys.argv[1:6]",
    "def proxy(path, method='GET'):",
    "    return json.load(urllib.request.urlopen(urllib.request.Request(endpoint + path, method=method)))",
    "walls = []",
    "for _ in range(int(reps)):",
    "    proxy('/__proxy/reset', 'POST')",
    "    t0 = time.perf_counter()",
    "    s3 = obstore.store.S3Store(bucket, prefix=name + '.zarr', endpoint=endpoint, region='us-east-1',",
    "        access_key_id='testing', secret_access_key='testing', client_options={'allow_http': True})",
    "    a = zarr.open_array(zarr.storage.ObjectStore(s3, read_only=True), path='x', mode='r')",
    "    y = a[:] if what == 'full' else a[256:512, 512:768]",
    "    walls.append(time.perf_counter() - t0)",
    "    assert y.shape == ((2048, 2048) if what == 'full' else (256, 256))",
    "print(json.dumps({'wall': statistics.median(walls), 'requests': proxy('/__proxy/stats')['requests']}))"
  )
  out <- system2(zarr_python, c("-c", shQuote(paste(code, collapse = "\n")), proxy$endpoint, bucket, name,
                                what, reps),
                 stdout = TRUE, stderr = TRUE, env = c("LD_LIBRARY_PATH=", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"))
  if (!is.null(attr(out, "status"))) stop(paste(out, collapse = "\n"))
  jsonlite::fromJSON(utils::tail(out, 1L))
}

rows <- list()
for (delay in delays) {
  proxy <- start(moto_python, function(p) {
    c(proxy_py, "--port", p, "--upstream", moto$endpoint, "--delay-ms", delay)
  })
  Sys.setenv(AWS_ENDPOINT_URL = proxy$endpoint)
  for (name in names(layouts)) {
    url <- sprintf("s3://%s/%s.zarr", bucket, name)
    full <- measure(proxy, function() stopifnot(identical(open_zarr(url)[["/x"]][], x)))
    region <- measure(proxy, function() {
      stopifnot(identical(open_zarr(url)[["/x"]][257:512, 513:768], x[257:512, 513:768]))
    })
    rows[[length(rows) + 1L]] <- data.frame(
      delay_ms = delay, layout = name,
      read = c("full 2048 x 2048", "region 256 x 256"),
      r_s = c(full$wall, region$wall), r_requests = c(full$requests, region$requests),
      stringsAsFactors = FALSE
    )
    py <- list(python_read(proxy, name, "full"), python_read(proxy, name, "region"))
    rows[[length(rows)]]$py_s <- vapply(py, function(p) as.numeric(p$wall), 0)
    rows[[length(rows)]]$py_requests <- vapply(py, function(p) as.integer(p$requests), 0L)
  }
  proxy$process$kill()
}
res <- do.call(rbind, rows)
res$ratio <- res$r_s / res$py_s
fmt <- data.frame(
  "latency (ms/req)" = res$delay_ms, layout = res$layout, read = res$read,
  "zarr (R) s" = sprintf("%.3f", res$r_s), "zarr (R) requests" = res$r_requests,
  "zarr-python s" = sprintf("%.3f", res$py_s), "zarr-python requests" = res$py_requests,
  "R / Python time" = sprintf("%.2f", res$ratio),
  check.names = FALSE, stringsAsFactors = FALSE
)
print(fmt, row.names = FALSE, right = FALSE)

py_version <- if (nzchar(zarr_python)) {
  paste(system2(zarr_python, c("-c", shQuote(paste("import zarr, obstore;",
                                                      "print(zarr.__version__, obstore.__version__)"))),
                stdout = TRUE, env = "LD_LIBRARY_PATH="), collapse = " ")
} else {
  "not measured"
}
md_row <- function(v) paste0("| ", paste(v, collapse = " | "), " |")
writeLines(c(
  "# Cloud read: S3 (moto) through a delaying proxy",
  "",
  "Written by `bench/cloud_read.R`.",
  "",
  sprintf("- date: %s; nproc %s; R %s; zarr %s; zarr-python, obstore: %s",
          format(Sys.time(), "%Y-%m-%d %H:%M %Z"), trimws(system("nproc", intern = TRUE)),
          getRversion(), packageVersion("zarr"), py_version),
  "- array: float64 2048 x 2048 (32 MiB), chunks 256 x 256, zstd; sharded: shards 1024 x 1024 of 256 x 256",
  paste("- each read opens the store anew (metadata requests included), median of 3 runs;",
        "requests are the proxy's count for one run; zarr-python times its own reads",
        "(`zarr.storage.ObjectStore` over `obstore.store.S3Store`), without interpreter start-up"),
  "",
  md_row(names(fmt)), md_row(rep("---", ncol(fmt))),
  apply(fmt, 1, md_row)
), results_md)
