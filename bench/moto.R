# moto in server mode on loopback for the S3 benchmarks of Icechunk
# repositories (bench/icechunk_read.R, bench/icechunk_old_new.R): a free
# port, the server with a bucket "bench", and the environment variables
# that point object_store (and child processes) at it.

free_port <- function() {
  for (i in 1:50) {
    port <- sample(20000:60000, 1L)
    s <- tryCatch(serverSocket(port), error = function(e) NULL)
    if (!is.null(s)) {
      close(s)
      return(port)
    }
  }
  stop("no free port found")
}

# moto in server mode on loopback with a bucket "bench"; the environment
# variables point object_store (and the child processes) at it.
start_moto <- function(server) {
  port <- free_port()
  p <- processx::process$new(server, c("-H", "127.0.0.1", "-p", as.character(port)),
                             env = c("current", LD_LIBRARY_PATH = ""), cleanup = TRUE)
  deadline <- Sys.time() + 60
  repeat {
    con <- suppressWarnings(tryCatch(socketConnection("127.0.0.1", port, timeout = 1, open = "r+b"),
                                     error = function(e) NULL))
    if (!is.null(con)) {
      close(con)
      break
    }
    if (!p$is_alive() || Sys.time() > deadline) stop("moto_server did not start")
    Sys.sleep(0.2)
  }
  Sys.sleep(0.5)
  con <- socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE, timeout = 10)
  writeLines(sprintf("PUT /bench HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\nConnection: close\r\n\r",
                     port), con, sep = "\n")
  status <- readLines(con, n = 1L, warn = FALSE)
  close(con)
  if (!grepl(" 200", status)) stop("cannot create the bucket on moto: ", status)
  endpoint <- sprintf("http://127.0.0.1:%d", port)
  Sys.setenv(AWS_ENDPOINT_URL = endpoint, AWS_ALLOW_HTTP = "true", AWS_ACCESS_KEY_ID = "testing",
             AWS_SECRET_ACCESS_KEY = "testing", AWS_REGION = "us-east-1",
             no_proxy = "127.0.0.1,localhost", NO_PROXY = "127.0.0.1,localhost")
  Sys.unsetenv(c("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION"))
  list(process = p, endpoint = endpoint)
}
