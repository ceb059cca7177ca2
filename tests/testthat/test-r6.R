# r6_new() must build the objects R6's new() builds: compared here binding
# by binding, down the chain of `super` environments.

# Each binding of `env` as text: its name, whether it is active or locked,
# and for a function its code and the level whose environment runs it.
r6_layout <- function(env, levels) {
  where <- function(f) {
    hit <- which(vapply(levels, function(e) identical(environment(f), e), logical(1)))
    if (length(hit)) hit else NA
  }
  vapply(sort(ls(env, all.names = TRUE)), function(n) {
    if (bindingIsActive(n, env)) {
      return(paste(n, "active", where(environment(env)$.__active__[[n]] %||% function() NULL)))
    }
    v <- get(n, env)
    what <- if (is.function(v)) {
      paste(deparse(v), collapse = " ")
    } else if (is.environment(v)) {
      "environment"
    } else {
      # (a store's handle is another one in each object)
      gsub("<pointer: [^>]*>", "<pointer>", paste(deparse(v), collapse = " "))
    }
    paste(n, bindingIsLocked(n, env), what, if (is.function(v)) where(v))
  }, "")
}

# The layout of an object: its public, private and enclosing environments
# and every `super` level's.
r6_object_layout <- function(obj) {
  enclos <- list(obj$.__enclos_env__)
  repeat {
    s <- enclos[[length(enclos)]]$super
    if (is.null(s)) break
    enclos[[length(enclos) + 1L]] <- s$.__enclos_env__
  }
  supers <- lapply(enclos[-1L], function(e) {
    b <- Filter(function(x) identical(x$.__enclos_env__, e), lapply(enclos, function(en) en$super))[[1L]]
    r6_layout(b, enclos)
  })
  list(class = class(obj), locked = environmentIsLocked(obj),
       public = r6_layout(obj, enclos), private = r6_layout(enclos[[1L]]$private, enclos),
       enclos = lapply(enclos, function(e) sort(ls(e, all.names = TRUE))),
       parents = lapply(enclos, parent.env), supers = supers)
}

test_that("r6_new() builds nodes and stores as R6's new() does", {
  s <- zarr_memorystore$new()
  store_path <- local_store_path()
  meta <- list(zarr_format = 3L, node_type = "group", attributes = structure(list(), names = character(0)))
  cases <- list(
    list(zarr_group, "g", meta, NULL, s),
    list(zarr_array, "a", list(zarr_format = 3L, node_type = "array", shape = list(2L)), NULL, s),
    list(zarr_memorystore),
    list(zarr_localstore, store_path)
  )
  for (args in cases) {
    gen <- args[[1L]]
    a <- do.call(gen$new, args[-1L])
    b <- do.call(zarr:::r6_new, args)
    expect_identical(r6_object_layout(b), r6_object_layout(a), info = gen$classname)
  }
})

test_that("r6_new() builds a subclass of another package as R6 does, and follows set()", {
  sub <- R6::R6Class("my_array", inherit = zarr_array, cloneable = FALSE,
    public = list(hello = function() paste("array", private$.name), read = function(...) "mine"),
    private = list(.extra = 1L, metadata_changed = function() "changed"),
    active = list(twice = function(value) 2L * private$.extra)
  )
  s <- zarr_memorystore$new()
  args <- list("a", list(zarr_format = 3L, node_type = "array", shape = list(2L)), NULL, s)
  a <- do.call(sub$new, args)
  b <- do.call(zarr:::r6_new, c(list(sub), args))
  expect_identical(r6_object_layout(b), r6_object_layout(a))
  expect_identical(b$hello(), "array a")
  expect_identical(b$read(), "mine")
  expect_identical(b$twice, 2L)
  expect_identical(b$.__enclos_env__$private$metadata_changed(), "changed")
  sub$set("public", "bye", function() "bye")
  b <- do.call(zarr:::r6_new, c(list(sub), args))
  expect_identical(b$bye(), "bye")
  expect_identical(r6_object_layout(b), r6_object_layout(do.call(sub$new, args)))
})

test_that("r6_new() leaves classes it does not build to R6", {
  z <- zarr:::r6_new(zarr, create_zarr()$store)
  expect_s3_class(z, "zarr")
  expect_true(is.function(z$clone))
})
