#' @useDynLib zarr, .registration = TRUE
#' @importFrom R6 R6Class
NULL

.onLoad <- function(libname, pkgname) {
  register_default_domain()
  load_open_classes()
  # DelayedArray's classes and methods for zarr arrays (R/delayed_array.R),
  # defined when DelayedArray is loaded rather than loading it here
  setHook(packageEvent("DelayedArray", "onLoad"), function(...) delayed_array_register())
  if (isNamespaceLoaded("DelayedArray")) delayed_array_register()
}

# The class generators every open builds objects of are lazy-loaded on
# first use, which made a new session's first open_zarr() 3-4 times slower
# than the next (each generator carries R6's own code: ~4 ms to load).
# zarr-python builds its classes at `import zarr`; loading them with the
# package here does the same, so the first open costs what later ones do.
load_open_classes <- function() {
  invisible(list(zarr, zarr_store, zarr_localstore, zarr_httpstore, zarr_node, zarr_group, zarr_array,
                 # and the functions of `open_zarr(dir)[["/x"]]`, lazy-loaded as well
                 open_zarr, is_reference_set, is_object_url, check_store_folder, zarr_call, rz_store_local,
                 store_get_metadata, rz_node_metadata, node_key_path, zarr_defer_root, zarr_get_node, root_child,
                 child_metadata, node_defer_parent, `[[.zarr`, is_relative_path,
                 without_file_scheme))
}
