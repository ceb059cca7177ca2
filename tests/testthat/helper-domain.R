# A domain as another package would define one: it claims arrays whose
# attribute "kind" is "special" and builds them as its own subclass.
special_array <- R6::R6Class("special_array",
  inherit = zarr::zarr_array,
  public = list(describe = function() sprintf("special array of %d elements", length(self)))
)

special_group <- R6::R6Class("special_group",
  inherit = zarr::zarr_group,
  public = list(describe = function() "special group")
)

test_domain <- R6::R6Class("test_domain",
  inherit = zarr::zarr_domain,
  public = list(
    seen = character(0),
    build = function(name, metadata, parent, store) {
      self$seen <- c(self$seen, name)
      if (!identical(metadata$attributes$kind, "special")) return(FALSE)
      switch(metadata$node_type,
        array = special_array$new(name, metadata, parent, store),
        group = special_group$new(name, metadata, parent, store)
      )
    }
  )
)
