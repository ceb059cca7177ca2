# Interrupt tests need an engine call that is still running when they stop
# it. A fixed size finishes too soon on a quiet or fast machine (the tests
# then skipped themselves), so the size grows with what the machine does:
# `make(n)` builds an n x n array, `op(a)` is the call to stop, and n grows
# (in steps of 10, the chunk edge) until `op` takes `min_seconds` or n
# reaches `max_n`.
long_running_array <- function(make, op, min_seconds, n = 2000, max_n = 4000) {
  repeat {
    a <- make(n)
    took <- system.time(op(a))[["elapsed"]]
    if (took >= min_seconds || n >= max_n) {
      return(list(array = a, n = n, seconds = took))
    }
    grow <- sqrt(1.3 * min_seconds / max(took, 0.05))
    n <- min(max_n, ceiling(n * grow / 10) * 10)
  }
}
