# Zarr conventions: named sets of attributes that applications agree on.
# A node that uses a convention lists it under the attribute
# "zarr_conventions" (name, schema URL, UUID, ...) and stores the
# convention's own properties under an attribute named after it.

#' Zarr convention
#'
#' @description The base class of conventions. Descendants (such as [zarr_convention_ref] and
#' [zarr_convention_uom]) define the convention's properties and how `write()`
#' puts them into a node's attributes.
#'
#' @docType class
#' @export
#' @examples
#' u <- zarr_conv_uom$new()
#' u$unit <- "m/s"
#' attrs <- u$register(list())
#' attrs <- u$write(attrs)
#' str(attrs)
zarr_convention <- R6::R6Class("zarr_convention",
  public = list(
    #' @description Create a convention (called by descendant classes).
    #' @param name The name of the convention.
    #' @param schema The URL of the convention's JSON schema.
    #' @param uuid The UUID of the convention.
    initialize = function(name, schema, uuid) {
      check_string(name, "name")
      check_string(schema, "schema")
      check_string(uuid, "uuid")
      private$.name <- name
      private$.schema <- schema
      private$.uuid <- uuid
    },
    #' @description Register the use of the convention in attributes.
    #' @param attributes A list of attributes of a group or array.
    #' @param brief Whether to record only the name and schema URL.
    #' @return The updated attributes.
    register = function(attributes, brief = FALSE) {
      check_flag(brief, "brief")
      entry <- list(schema_url = private$.schema, name = private$.name)
      if (!brief) {
        entry <- c(entry, list(uuid = private$.uuid, spec_url = private$.spec, description = private$.description))
        entry <- entry[!vapply(entry, is.null, logical(1))]
      }
      regs <- attributes$zarr_conventions %||% list()
      known <- vapply(regs, function(r) identical(r$name, private$.name), logical(1))
      regs <- c(regs[!known], list(entry))
      attributes$zarr_conventions <- regs
      attributes
    },
    #' @description Write the convention's properties into attributes. The
    #'   base class writes nothing.
    #' @param attributes A list of attributes of a group or array.
    #' @return The updated attributes.
    write = function(attributes) attributes
  ),
  active = list(
    #' @field name (read-only) The name of the convention.
    name = function(value) private$.name,
    #' @field schema (read-only) The URL of the schema.
    schema = function(value) private$.schema,
    #' @field uuid (read-only) The UUID of the convention.
    uuid = function(value) private$.uuid,
    #' @field spec The URL of the specification.
    spec = function(value) {
      if (missing(value)) return(private$.spec)
      check_string(value, "spec")
      private$.spec <- value
    },
    #' @field description A short description.
    description = function(value) {
      if (missing(value)) return(private$.description)
      check_string(value, "description")
      private$.description <- value
    }
  ),
  private = list(.name = NULL, .schema = NULL, .uuid = NULL, .spec = NULL, .description = NULL)
)

# A settable property of a convention: a single string (or NULL to unset).
# (R6 rebinds the environment of active bindings, so each binding calls
# this with its own field name rather than being made by a closure.)
conv_field <- function(private, field, value, check = function(v) check_string(v, field)) {
  if (missing(value)) return(private$.props[[field]])
  if (!is.null(value)) check(value)
  private$.props[field] <- list(value)
}

check_index <- function(v) {
  if (!is.numeric(v) || length(v) != 1L || v < 0 || v != trunc(v)) {
    zarr_abort("argument", "convention 'ref': index must be a whole number >= 0")
  }
}

conv_props <- function(props) props[!vapply(props, is.null, logical(1))]

#' Convention "ref"
#'
#' @description Refers from a group or array to another object: an array, a group or an
#' attribute, in the same store or in another one (`uri`). Its properties
#' are written under the attribute "ref".
#'
#' @docType class
#' @export
#' @examples
#' r <- zarr_convention_ref$new()
#' r$array <- "/grid/lat"
#' r$write(list())
zarr_convention_ref <- R6::R6Class("zarr_convention_ref",
  inherit = zarr_convention,
  public = list(
    #' @description Create a "ref" convention agent.
    initialize = function() {
      super$initialize("ref", "https://raw.githubusercontent.com/R-CF/zarr_convention_ref/main/schema.json",
                       "d89b30cf-ed8c-43d5-9a16-b492f0cd8786")
      private$.spec <- "https://raw.githubusercontent.com/R-CF/zarr_convention_ref/main/README.md"
      private$.description <- "Referencing Zarr objects external to the current Zarr object"
    },
    #' @description Write the reference into attributes (as "ref").
    #' @param attributes A list of attributes of a group or array.
    #' @return The updated attributes.
    write = function(attributes) {
      props <- conv_props(private$.props)
      if (!length(props)) zarr_abort("argument", "convention 'ref': set at least one of uri, array, group, attribute")
      attributes$ref <- props
      attributes
    }
  ),
  active = list(
    #' @field uri The URI of an external Zarr store.
    uri = function(value) conv_field(private, "uri", value),
    #' @field array The path of the referenced array.
    array = function(value) conv_field(private, "array", value),
    #' @field group The path of the referenced group.
    group = function(value) conv_field(private, "group", value),
    #' @field attribute The path of the referenced attribute.
    attribute = function(value) conv_field(private, "attribute", value),
    #' @field index The 0-based index into an attribute that is an array.
    index = function(value) conv_field(private, "index", value, check_index),
    #' @field name The name of a sub-schema the attribute refers to.
    name = function(value) conv_field(private, "name", value)
  ),
  private = list(.props = list())
)

#' Convention "uom"
#'
#' @description The unit of measure of an array's data, in UCUM notation, written under
#' the attribute "uom".
#'
#' @docType class
#' @export
#' @examples
#' u <- zarr_convention_uom$new()
#' u$unit <- "Cel"
#' u$write(list())$uom
zarr_convention_uom <- R6::R6Class("zarr_convention_uom",
  inherit = zarr_convention,
  public = list(
    #' @description Create a "uom" convention agent.
    initialize = function() {
      super$initialize("uom", "https://raw.githubusercontent.com/clbarnes/zarr-convention-uom/refs/tags/v1/schema.json",
                       "3bbe438d-df37-49fe-8e2b-739296d46dfb")
      private$.spec <- "https://github.com/clbarnes/zarr-convention-uom/blob/v1/README.md"
      private$.description <- "Units of measurement for Zarr arrays"
    },
    #' @description Write the unit into attributes (as "uom").
    #' @param attributes A list of attributes of a group or array.
    #' @return The updated attributes.
    write = function(attributes) {
      if (is.null(private$.props$unit)) zarr_abort("argument", "convention 'uom': set the unit first")
      uom <- list(ucum = conv_props(list(version = private$.props$version, unit = private$.props$unit)))
      if (!is.null(private$.props$description)) uom$description <- private$.props$description
      attributes$uom <- uom
      attributes
    }
  ),
  active = list(
    #' @field version The UCUM version used.
    version = function(value) conv_field(private, "version", value),
    #' @field unit The unit, in UCUM notation (e.g. "m/s", "Cel").
    unit = function(value) conv_field(private, "unit", value),
    #' @field description A free-text description of the unit.
    description = function(value) conv_field(private, "description", value)
  ),
  private = list(.props = list())
)

#' Convention class names of zarr 0.3.0
#'
#' `zarr_conv_ref` and `zarr_conv_uom` are the names that
#' [zarr_convention_ref] and [zarr_convention_uom] had in zarr 0.3.0 (the
#' manual); they are the same class generators.
#'
#' @name zarr_conv_ref
#' @aliases zarr_conv_uom
#' @export zarr_conv_ref zarr_conv_uom
#' @examples
#' identical(zarr_conv_uom, zarr_convention_uom)
NULL

zarr_conv_ref <- zarr_convention_ref
zarr_conv_uom <- zarr_convention_uom

#' Conventions this package supports
#'
#' The conventions (in the sense of the zarr-conventions attribute) that
#' have a class here, as R-CF's `zarr_conventions()` lists them.
#'
#' @return A data frame with columns `name`, `schema` (the URL of the JSON
#'   schema) and `uuid`, one row per convention.
#' @export
#' @examples
#' zarr_conventions()
zarr_conventions <- function() {
  # Each class's registration entry says what it is (its `name` field can
  # be a property of the convention, as in "ref").
  entries <- lapply(list(zarr_convention_ref$new(), zarr_convention_uom$new()),
                    function(c) c$register(list())$zarr_conventions[[1L]])
  data.frame(name = vapply(entries, function(e) e$name, ""),
             schema = vapply(entries, function(e) e$schema_url, ""),
             uuid = vapply(entries, function(e) e$uuid, ""),
             stringsAsFactors = FALSE)
}
