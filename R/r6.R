# Objects of this package's own R6 classes that an open builds (its store
# and nodes), made as R6's `new()` makes them but with what all objects of a
# class share worked out once per class.
#
# R6 merges a class's method lists with its ancestors' on every `new()`
# (de-duplicating names) and binds each method through an R closure. The
# objects made here are the same: a public environment holding the methods,
# fields, active bindings and `.__enclos_env__`; a private one; for each
# level of the class an enclosing environment with `self`, `private` and
# `super` (the bindings of the level above, whose methods run in their own
# enclosing environment); method bindings locked, and the environments when
# the class locks its objects. Classes of other packages (domains extend
# the node classes) and any class this cannot build keep R6's `new()`.

# The plan of each class (see r6_plan()), by class name.
r6_plans <- new.env(parent = emptyenv())

# A new object of the R6 class `gen`, initialised with `...`.
r6_new <- function(gen, ...) {
  plan <- r6_plans[[gen$classname]]
  if (is.null(plan) || !identical(plan$gen, gen) || !r6_current(plan)) {
    plan <- r6_plan(gen)
    r6_plans[[gen$classname]] <- plan
  }
  if (!plan$fast) return(gen$new(...))
  public <- new.env(parent = emptyenv(), hash = FALSE)
  private <- if (plan$has_private) new.env(parent = emptyenv(), hash = FALSE)
  # From the root class down; `fns` gathers every level's methods, bound.
  fns <- list()
  super <- NULL
  for (k in rev(seq_along(plan$levels))) {
    lv <- plan$levels[[k]]
    enclos <- new.env(parent = lv$parent_env, hash = FALSE)
    enclos$self <- public
    if (!is.null(private)) enclos$private <- private
    if (!is.null(super)) enclos$super <- super
    fns <- c(fns, lapply(plan$own[[k]], `environment<-`, enclos))
    if (k > 1L) {
      super <- new.env(parent = emptyenv(), hash = FALSE)
      super$.__enclos_env__ <- enclos
      r6_fill(super, NULL, fns, plan$at[[k]], enclos)
    }
  }
  r6_fill(public, private, fns, plan$at[[1L]], enclos)
  for (f in plan$fields) if (length(f$values)) list2env(f$values, if (f$private) private else public)
  public$.__enclos_env__ <- enclos
  if (plan$lock) {
    if (!is.null(private)) lockEnvironment(private)
    lockEnvironment(public)
  }
  for (name in names(plan$at[[1L]]$private)) lockBinding(name, private)
  for (name in names(plan$at[[1L]]$public)) lockBinding(name, public)
  class(public) <- plan$classes
  init <- .subset2(public, "initialize")
  if (is.function(init)) {
    init(...)
  } else if (...length()) {
    zarr_abort("argument", sprintf("class '%s' takes no arguments to new()", gen$classname))
  }
  public
}

# Bind the methods of one level: `at` picks from `fns` the public, private
# and active ones that level sees (its own over its ancestors'); private
# methods go to `private`, or with the public ones when it is NULL (the
# bindings of a `super`).
r6_fill <- function(env, private, fns, at, enclos) {
  if (length(at$public)) list2env(fns[at$public], env)
  if (length(at$private)) list2env(fns[at$private], if (is.null(private)) env else private)
  if (length(at$active)) {
    act <- fns[at$active]
    for (name in names(act)) makeActiveBinding(name, act[[name]], env)
    enclos$.__active__ <- act
  }
}

# What every object of `gen` shares: its classes from the class itself up
# (`levels`), each level's methods (`own`: public, private, active, in that
# order), where in all of them each level finds the methods it sees (`at`),
# the fields, and whether r6_new() can build it at all (portable classes
# that cannot be cloned and have no finalizer, as this package's are).
r6_plan <- function(gen) {
  levels <- list()
  g <- gen
  while (!is.null(g)) {
    levels[[length(levels) + 1L]] <- g
    g <- g$get_inherit()
  }
  fast <- all(vapply(levels, function(l) {
    isTRUE(l$portable) && !isTRUE(l$cloneable) && !length(l$debug_names) &&
      is.null(l$public_methods$finalize) && is.null(l$private_methods$finalize)
  }, logical(1)))
  n <- length(levels)
  own <- lapply(levels, function(l) c(l$public_methods, l$private_methods, l$active))
  kind <- lapply(levels, function(l) {
    rep(c("public", "private", "active"), c(length(l$public_methods), length(l$private_methods), length(l$active)))
  })
  # Methods are gathered from the root class (level n) down to level 1.
  all_names <- unlist(lapply(rev(seq_len(n)), function(k) names(own[[k]])))
  all_kind <- unlist(rev(kind))
  at <- vector("list", n)
  for (k in seq_len(n)) {
    seen <- seq_len(sum(lengths(own[k:n])))
    at[[k]] <- lapply(c(public = "public", private = "private", active = "active"), function(what) {
      idx <- seen[all_kind[seen] == what]
      idx <- idx[!duplicated(all_names[idx], fromLast = TRUE)]
      names(idx) <- all_names[idx]
      idx
    })
  }
  fields <- list(list(private = FALSE, values = r6_fields(levels, "public_fields")),
                 list(private = TRUE, values = r6_fields(levels, "private_fields")))
  list(gen = gen, levels = levels, source = lapply(levels, r6_source), fast = fast, own = own, at = at, fields = fields,
       lock = isTRUE(gen$lock_objects), has_private = gen$has_private(),
       classes = c(vapply(levels, function(l) l$classname, character(1)), "R6"))
}

# What a plan is made from, per class: a class's `set()` replaces these.
r6_source <- function(l) list(l$public_methods, l$private_methods, l$active, l$public_fields, l$private_fields)

# Whether no class of a plan changed since it was made (identical() of the
# same objects returns at once).
r6_current <- function(plan) {
  for (k in seq_along(plan$levels)) {
    l <- plan$levels[[k]]
    s <- plan$source[[k]]
    if (!identical(s[[1L]], l$public_methods) || !identical(s[[2L]], l$private_methods) ||
          !identical(s[[3L]], l$active) || !identical(s[[4L]], l$public_fields) ||
          !identical(s[[5L]], l$private_fields)) {
      return(FALSE)
    }
  }
  TRUE
}

# The fields `which` ("public_fields", "private_fields") of all `levels`,
# a class's replacing its ancestors'.
r6_fields <- function(levels, which) {
  out <- list()
  for (k in rev(seq_along(levels))) {
    x <- c(out, levels[[k]][[which]])
    out <- x[!duplicated(names(x), fromLast = TRUE)]
  }
  out
}
