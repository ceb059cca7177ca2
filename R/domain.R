# Domains decide which R6 class represents each node when a store is
# opened. Packages register their own domain (zarr_register_domain) to return
# subclasses of zarr_array / zarr_group for the nodes they understand.

#' Zarr domain
#'
#' @description A domain builds the R objects for the nodes of a store. When a store is
#' opened, every registered domain is asked, in registration order, to
#' `build()` each node; the first that returns a node wins, and the generic
#' domain (this class) builds the rest as plain [zarr_group] and
#' [zarr_array] objects. Domains from other packages inherit from this class
#' and override `build()`.
#'
#' @docType class
#' @export
#' @examples
#' d <- zarr_domain$new("generic example")
#' d$name
zarr_domain <- R6::R6Class("zarr_domain",
  public = list(
    #' @description Create a domain (called by descendant classes).
    #' @param name The domain's name, unique in the session.
    initialize = function(name) {
      check_string(name, "name")
      private$.name <- name
    },
    #' @description Build the node for a metadata document.
    #' @param name The node's name.
    #' @param metadata The node's metadata, a list.
    #' @param parent The parent group, or NULL for the root.
    #' @param store The store.
    #' @return A [zarr_node] descendant, or FALSE to leave the node to
    #'   other domains.
    build = function(name, metadata, parent, store) {
      switch(metadata$node_type,
        group = zarr_group$new(name, metadata, parent, store),
        array = zarr_array$new(name, metadata, parent, store),
        zarr_abort("metadata", sprintf("node '%s' has an unknown node_type", name))
      )
    }
  ),
  active = list(
    #' @field name (read-only) The name of the domain.
    name = function(value) private$.name,
    #' @field can_read (read-only) Whether the domain can read stores.
    can_read = function(value) TRUE,
    #' @field can_write (read-only) Whether the domain can write stores.
    can_write = function(value) TRUE
  ),
  private = list(.name = NULL)
)

domain_registry <- new.env(parent = emptyenv())

register_default_domain <- function() {
  domain_registry$default <- zarr_domain$new("generic")
  if (is.null(domain_registry$domains)) domain_registry$domains <- list()
}

#' List the Zarr domains registered in this session
#'
#' @return A list of [zarr_domain] objects, the generic domain last.
#' @export
#' @examples
#' vapply(zarr_domains(), function(d) d$name, "")
zarr_domains <- function() {
  c(domain_registry$domains, list(domain_registry$default))
}

#' Register a Zarr domain for this session
#'
#' @param domain An object of a class that inherits from [zarr_domain].
#' @return Nothing, invisibly.
#' @export
#' @examples
#' my_domain <- R6::R6Class("my_domain", inherit = zarr_domain,
#'   public = list(build = function(name, metadata, parent, store) FALSE))
#' zarr_register_domain(my_domain$new("example"))
#' zarr_unregister_domain("example")
zarr_register_domain <- function(domain) {
  if (!inherits(domain, "zarr_domain")) zarr_abort("argument", "`domain` must inherit from zarr_domain")
  names <- vapply(zarr_domains(), function(d) d$name, character(1))
  if (domain$name %in% names) zarr_abort("argument", sprintf("a domain named '%s' is already registered", domain$name))
  domain_registry$domains <- c(domain_registry$domains, list(domain))
  invisible(NULL)
}

#' Unregister a Zarr domain
#'
#' @param domain The name of the domain to remove.
#' @return TRUE if a domain was removed, FALSE otherwise, invisibly.
#' @export
#' @examples
#' zarr_unregister_domain("no such domain")
zarr_unregister_domain <- function(domain) {
  check_string(domain, "domain")
  keep <- vapply(domain_registry$domains, function(d) d$name != domain, logical(1))
  removed <- !all(keep)
  domain_registry$domains <- domain_registry$domains[keep]
  invisible(removed)
}

# The node for a metadata document: the first registered domain that takes
# it, else the generic domain.
build_node <- function(name, metadata, parent, store) {
  node <- NULL
  for (d in domain_registry$domains) {
    node <- d$build(name, metadata, parent, store)
    if (inherits(node, "zarr_node")) break
  }
  if (!inherits(node, "zarr_node")) node <- domain_registry$default$build(name, metadata, parent, store)
  # Its parent is in place: the node may now look at the hierarchy.
  node$post_open()
  node
}

# Which domain built a node (for zarr$domain).
node_domain <- function(node) {
  for (d in domain_registry$domains) {
    cls <- class(d$build(node$name, node$metadata, node$parent, node$store))[1L]
    if (identical(cls, class(node)[1L])) return(d)
  }
  domain_registry$default
}
