# `make document`: man pages and NAMESPACE from the roxygen comments. The
# R files are sourced with their source references (R6 method docs need
# them) and without compiling the Rust library.
load_with_srcrefs <- function(path) {
  env <- new.env(parent = globalenv())
  methods::setPackageName("zarr", env)
  # roxygen names the package of an R6 super class by environmentName():
  # without a name, pages said "Super class: ::zarr_node".
  attr(env, "name") <- "zarr"
  for (p in c("R6", "jsonlite")) library(p, character.only = TRUE)
  files <- sort(list.files(file.path(path, "R"), pattern = "[.]R$", full.names = TRUE))
  for (f in files) sys.source(f, envir = env, keep.source = TRUE)
  env
}
roxygen2::roxygenise(roclets = c("rd", "namespace"), load_code = load_with_srcrefs)
