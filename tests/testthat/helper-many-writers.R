# Many writers, for the object store tests of every cloud.

# Each of 4 R processes writes its own chunk-aligned region of the int32
# array "/a" (40 x 64 in chunks of 10 x 8) of the store at `url`; every
# element is then read back. The processes inherit the environment, so
# they reach the same test server.
write_from_four_processes <- function(url) {
  z <- create_zarr(url)
  def <- define_array("int32", c(40, 64))
  def$chunk_shape <- c(10, 8)
  a <- z$add_array("/", "a", def)
  regions <- a$chunk_regions(4)
  procs <- lapply(regions, function(sel) {
    callr::r_bg(function(url, sel) {
      a <- zarr::open_zarr(url)[["/a"]]
      a$write(outer(sel[[1]], sel[[2]], function(i, j) as.integer(i * 1000L + j)), sel)
      TRUE
    }, args = list(url = url, sel = sel), package = FALSE)
  })
  for (p in procs) p$wait(120000)
  ok <- vapply(procs, function(p) isTRUE(p$get_result()), logical(1))
  list(ok = ok, regions = regions, value = open_zarr(url, read_only = TRUE)[["/a"]][])
}
