# An Azure Blob Storage server for the tests of zarr_objectstore: Azurite
# (the npm package `azurite`, Microsoft's emulator) on 127.0.0.1 at a free
# port. Azurite is installed on first use with npm into a folder outside
# the package source: the one named by ZARR_TEST_AZURITE_DIR (the Makefile
# sets it), else one in the session's temporary folder.
#
# The tests install from npm, so they run only when asked, as the
# zarr-python ones: ZARR_TEST_PYTHON=true or NOT_CRAN=true (`make test`
# sets both). Without node and npm, or when npm cannot install Azurite,
# they are skipped with a message that says so.

# Azurite's one account and its key, published in Azure's documentation
# of the emulator: they are what every emulator accepts, not a secret.
azurite_account <- "devstoreaccount1"
azurite_key <- paste0("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/",
                      "K1SZFPTOtr/KBHBeksoGMGw==")

azurite_cache <- new.env(parent = emptyenv())

azurite_dir <- function() {
  dir <- Sys.getenv("ZARR_TEST_AZURITE_DIR", "")
  if (!nzchar(dir)) dir <- file.path(tempdir(), "zarr-azurite")
  dir
}

# The path of the azurite-blob launcher, installing Azurite when needed.
azurite_blob_path <- function() {
  if (!python_tests_asked()) {
    testthat::skip("the Azure tests install Azurite from npm: set ZARR_TEST_PYTHON=true (or NOT_CRAN=true)")
  }
  if (!is.null(azurite_cache$bin)) return(azurite_cache$bin)
  testthat::skip_if_not_installed("processx")
  node <- Sys.which("node")
  npm <- Sys.which("npm")
  if (!nzchar(node) || !nzchar(npm)) testthat::skip("node and npm are not available: the Azure tests (Azurite) do not run")
  dir <- azurite_dir()
  bin <- file.path(dir, "node_modules", ".bin", "azurite-blob")
  if (!file.exists(bin)) {
    dir.create(dir, recursive = TRUE, showWarnings = FALSE)
    res <- run_python_command(npm, c("install", "--prefix", dir, "--no-audit", "--no-fund", "--silent", "azurite"))
    if (res$status != 0L || !file.exists(bin)) {
      testthat::skip(paste("cannot install azurite with npm, the Azure tests do not run:", res$output))
    }
  }
  azurite_cache$node <- unname(node)
  azurite_cache$bin <- bin
  bin
}

# Wait until `port` on 127.0.0.1 accepts connections, or fail with the
# server's log.
wait_for_port <- function(p, port, log, what) {
  deadline <- Sys.time() + 60
  repeat {
    con <- suppressWarnings(tryCatch(socketConnection("127.0.0.1", port, timeout = 1, open = "r+b"),
                                     error = function(e) NULL))
    if (!is.null(con)) {
      close(con)
      # Ports are picked at random while other test runs on the machine
      # pick theirs: a server that found its port taken exits, and what
      # answered was someone else's. FALSE tells the caller to try another.
      Sys.sleep(0.2)
      return(invisible(p$is_alive()))
    }
    if (!p$is_alive() || Sys.time() > deadline) {
      stop(what, " did not start: ", paste(readLines(log, warn = FALSE), collapse = "\n"))
    }
    Sys.sleep(0.1)
  }
}

# Start Azurite's blob service; returns list(endpoint, port, process). The
# server is stopped when `env` ends.
start_azurite <- function(env = parent.frame()) {
  bin <- azurite_blob_path()
  port <- free_port()
  data <- tempfile("azurite-")
  dir.create(data)
  log <- tempfile("azurite-", fileext = ".log")
  p <- processx::process$new(bin, c("--blobHost", "127.0.0.1", "--blobPort", as.character(port),
                                    "--location", data, "--skipApiVersionCheck", "--silent"),
                             stdout = log, stderr = "2>&1", env = c("current", LD_LIBRARY_PATH = ""),
                             cleanup = TRUE)
  withr::defer(if (p$is_alive()) p$kill(), envir = env)
  wait_for_port(p, port, log, "azurite")
  list(endpoint = sprintf("http://127.0.0.1:%d", port), port = port, process = p)
}

# The environment variables that point object_store at `server` through
# its emulator switch, as a user of Azurite sets them.
azurite_env <- function(server) {
  c(AZURE_STORAGE_USE_EMULATOR = "true", AZURITE_BLOB_STORAGE_URL = server$endpoint,
    AZURE_STORAGE_ACCOUNT_NAME = NA, AZURE_STORAGE_ACCOUNT_KEY = NA, AZURE_STORAGE_ACCESS_KEY = NA,
    AZURE_STORAGE_SAS_KEY = NA, AZURE_STORAGE_CONNECTION_STRING = NA, AZURE_STORAGE_ENDPOINT = NA,
    AZURE_ALLOW_HTTP = NA, no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
}

# Create a container with a request signed by the account key (Azurite
# refuses unsigned ones). node is there since Azurite runs on it; its
# crypto module computes the SharedKey signature.
azurite_create_container <- function(server, name) {
  script <- tempfile(fileext = ".js")
  on.exit(unlink(script))
  writeLines(c(
    'const http = require("http"), crypto = require("crypto");',
    "const [port, account, key, container] = process.argv.slice(2);",
    'const date = new Date().toUTCString(), version = "2021-08-06";',
    "const path = `/${account}/${container}`;",
    "// The string to sign of a PUT without body: eleven empty standard",
    "// headers, the x-ms- headers, then the resource and its query.",
    'const toSign = ["PUT", "", "", "", "", "", "", "", "", "", "", "",',
    "  `x-ms-date:${date}`, `x-ms-version:${version}`,",
    '  `/${account}${path}\\nrestype:container`].join("\\n");',
    'const sig = crypto.createHmac("sha256", Buffer.from(key, "base64")).update(toSign, "utf8").digest("base64");',
    'const req = http.request({host: "127.0.0.1", port: +port, method: "PUT", path: path + "?restype=container",',
    '  headers: {"x-ms-date": date, "x-ms-version": version, "Content-Length": 0,',
    "    Authorization: `SharedKey ${account}:${sig}`}}, res => {",
    '  let body = ""; res.on("data", d => body += d);',
    '  res.on("end", () => { if (res.statusCode !== 201) { console.error(res.statusCode, body); process.exit(1); } });',
    "});",
    'req.on("error", e => { console.error(e.message); process.exit(1); });',
    "req.end();"
  ), script)
  res <- run_python_command(azurite_cache$node,
                            c(script, server$port, azurite_account, azurite_key, name))
  if (res$status != 0L) stop("cannot create container '", name, "' on azurite: ", res$output)
  invisible(name)
}

# A new, empty container on the Azurite server shared by a test file.
azurite_container <- local({
  n <- 0L
  function(server) {
    n <<- n + 1L
    azurite_create_container(server, sprintf("zarr-test-%d-%d", Sys.getpid(), n))
  }
})
