# Stores. Every store class here holds a handle to a store in the Rust
# engine, which does the I/O; the R6 methods only translate arguments.

#' Zarr abstract store
#'
#' @description The base class of all stores: a map from keys (strings such as
#' `"group/array/c/0/1"`) to raw vectors. Use [zarr_localstore] or
#' [zarr_memorystore]; this class is not instantiated directly.
#'
#' Keys are relative to the store root and are checked before use: a key
#' with `..`, `.`, an empty segment, a backslash or a leading `/` is refused
#' with a `zarr_error_invalid_key` condition, so no key can escape the root.
#'
#' @docType class
#' @export
zarr_store <- R6::R6Class("zarr_store",
  cloneable = FALSE,
  public = list(
    #' @description Create an instance of this class (by descendant classes).
    #' @param read_only Whether the store is read-only.
    #' @param version The Zarr version of the store, 3.
    initialize = function(read_only = FALSE, version = 3L) {
      private$.version <- as.integer(version)
    },
    #' @description Remove every key and value from the store except the
    #'   root metadata document.
    #' @return TRUE, invisibly.
    clear = function() store_clear(self, private),
    #' @description Remove a key. Removing a key that is absent is not an error.
    #' @param key The key to remove.
    #' @return TRUE, invisibly.
    erase = function(key) {
      zarr_call(rz_store_erase(private$handle, key))
      invisible(TRUE)
    },
    #' @description Remove every key that starts with a prefix.
    #' @param prefix The prefix, "" or ending in "/".
    #' @return TRUE, invisibly.
    erase_prefix = function(prefix) {
      zarr_call(rz_store_erase_prefix(private$handle, as_prefix(prefix)))
      invisible(TRUE)
    },
    #' @description Whether a key exists.
    #' @param key The key to look for.
    #' @return TRUE or FALSE.
    exists = function(key) zarr_call(rz_store_exists(private$handle, key)),
    #' @description Retrieve the value of a key.
    #' @param key The key.
    #' @param prototype Ignored; values are raw vectors.
    #' @param byte_range NULL for the whole value; a single non-negative
    #'   number for the bytes from that 0-based offset to the end; a single
    #'   negative number `-n` for the last `n` bytes; or `c(start, end)` for
    #'   the bytes from 0-based `start` up to `end` (exclusive), where an
    #'   `end` past the value gives the rest of it. A zero-length range, or
    #'   one that starts past the end of the value, is an error.
    #' @return A raw vector, or NULL if the key does not exist.
    get = function(key, prototype = NULL, byte_range = NULL) store_get(private$handle, key, byte_range),
    #' @description Size in bytes of the value of a key.
    #' @param key The key.
    #' @return A number, or NA if the key does not exist.
    getsize = function(key) zarr_call(rz_store_size(private$handle, key)),
    #' @description Total size in bytes of the values under a prefix.
    #' @param prefix The prefix.
    #' @return A number.
    getsize_prefix = function(prefix) {
      keys <- self$list_prefix(prefix)
      sum(vapply(keys, function(k) self$getsize(k), numeric(1)))
    },
    #' @description Whether no key starts with a prefix.
    #' @param prefix The prefix.
    #' @return TRUE or FALSE.
    is_empty = function(prefix) length(self$list_prefix(prefix)) == 0L,
    #' @description All keys in the store.
    #' @return A character vector, sorted.
    list = function() zarr_call(rz_store_list(private$handle)),
    #' @description The keys and sub-prefixes directly below a prefix.
    #' @param prefix The prefix, "" or ending in "/".
    #' @return A character vector: keys, then prefixes (ending in "/").
    list_dir = function(prefix) {
      d <- zarr_call(rz_store_list_dir(private$handle, as_prefix(prefix)))
      c(d$keys, d$prefixes)
    },
    #' @description All keys below a prefix.
    #' @param prefix The prefix.
    #' @return A character vector, sorted.
    list_prefix = function(prefix) zarr_call(rz_store_list_prefix(private$handle, as_prefix(prefix))),
    #' @description The keys of the chunks (shards of a sharded array)
    #'   stored for the array at a prefix: every key below it but the
    #'   metadata documents.
    #' @param prefix The prefix of the array ("a/b/"; "" for a root array).
    #' @return A character vector of keys from the store root, sorted.
    list_chunks = function(prefix) store_list_chunks(self, prefix),
    #' @description Move the value of a key to another key, byte for byte
    #'   (any value there is replaced).
    #' @param old_key The key to move; it must exist.
    #' @param new_key The key it moves to.
    #' @return Self, invisibly.
    rename = function(old_key, new_key) store_rename(self, old_key, new_key),
    #' @description Move every key below a prefix (and the key of that name,
    #'   if there is one) to another prefix: in one step on a store whose
    #'   `supports_prefix_rename` is TRUE, key by key otherwise.
    #' @param old_prefix,new_prefix Prefixes from the store root, with or
    #'   without a trailing "/".
    #' @return Self, invisibly.
    rename_prefix = function(old_prefix, new_prefix) store_rename_prefix(self, old_prefix, new_prefix),
    #' @description Store a value under a key, replacing any old value.
    #' @param key The key.
    #' @param value A raw vector.
    #' @return Self, invisibly.
    set = function(key, value) {
      if (!is.raw(value)) zarr_abort("argument", sprintf("the value for key '%s' must be a raw vector", key))
      zarr_call(rz_store_set(private$handle, key, value))
      invisible(self)
    },
    #' @description Store a value under a key unless the key exists.
    #' @param key The key.
    #' @param value A raw vector.
    #' @return Self, invisibly.
    set_if_not_exists = function(key, value) {
      if (!self$exists(key)) self$set(key, value)
      invisible(self)
    },
    #' @description The metadata document of the node at a path.
    #' @param prefix The node path ("" or "/" for the root).
    #' @return A list, or NULL when there is no node there.
    get_metadata = function(prefix) store_get_metadata(private$handle, prefix),
    #' @description Write the metadata document of the node at a path.
    #' @param prefix The node path.
    #' @param metadata A list, or an [array_builder].
    #' @return Self, invisibly.
    set_metadata = function(prefix, metadata) store_set_metadata(self, prefix, metadata),
    #' @description Whether a path is a group.
    #' @param path The node path.
    #' @return TRUE or FALSE.
    is_group = function(path) identical(self$get_metadata(path)$node_type, "group"),
    #' @description Create a group.
    #' @param path The path of the parent group.
    #' @param name The name of the new group; "" for the root group.
    #' @return The metadata of the new group, a list.
    create_group = function(path, name) store_create_group(self, path, name),
    #' @description Create an array.
    #' @param parent The path of the parent group.
    #' @param name The name of the new array; "" for a root array.
    #' @param metadata A list or [array_builder] with the array's metadata.
    #' @return The metadata of the new array, a list.
    create_array = function(parent, name, metadata) store_create_array(self, parent, name, metadata),
    #' @description The store's handle in the engine (internal).
    #' @return An external pointer; NULL for a store written in R.
    engine_handle = function() private$handle,
    #' @description Print a short description of the store.
    #' @param ... Ignored.
    print = function(...) {
      cat("<", self$friendlyClassName, "> ", zarr_call(rz_store_info(private$handle))$description,
          if (self$read_only) " (read-only)", "\n", sep = "")
      invisible(self)
    }
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "Zarr store",
    #' @field read_only (read-only) Whether the store is read-only.
    read_only = function(value) zarr_call(rz_store_info(private$handle))$read_only,
    #' @field supports_consolidated_metadata (read-only) Whether the store
    #'   can hold consolidated metadata.
    supports_consolidated_metadata = function(value) TRUE,
    #' @field supports_deletes (read-only) Whether keys can be deleted.
    supports_deletes = function(value) !self$read_only,
    #' @field supports_listing (read-only) Whether keys can be listed.
    supports_listing = function(value) TRUE,
    #' @field supports_partial_writes (read-only) Deprecated, always FALSE.
    supports_partial_writes = function(value) FALSE,
    #' @field supports_writes (read-only) Whether the store can be written.
    supports_writes = function(value) !self$read_only,
    #' @field supports_prefix_rename (read-only) Whether `rename_prefix()`
    #'   moves a whole prefix in one step (a folder of a local store) rather
    #'   than key by key.
    supports_prefix_rename = function(value) FALSE,
    #' @field version (read-only) The Zarr version of the store.
    version = function(value) {
      if (is.null(private$handle)) private$.version else zarr_call(rz_node_version(private$handle, 0L))
    },
    #' @field separator (read-only) The chunk key separator that arrays
    #'   created in this store get when their metadata has none: the
    #'   option `chunk_separator` ([zarr_options()]), "." by default as in
    #'   the manual and R-CF's zarr. An array's own separator is its
    #'   `chunk_separator`.
    separator = function(value) zarr_options("chunk_separator")
  ),
  private = list(
    handle = NULL,
    .version = 3L
  )
)

#' Zarr store on the local file system
#'
#' @description Keys map to files below a root folder following the Zarr file system
#' store specification. Every value (a new chunk as well as a replaced one)
#' is written to a temporary file in the same folder and renamed into place,
#' so a reader, or a process killed mid-write, never sees a partly written
#' chunk. Temporary files are named `.tmp-zarr-<pid>-<n>`: listings skip
#' them, and a store's first write or erase in a folder removes those of
#' processes that no longer run (left by a writer that was killed).
#'
#' `options(zarr.atomic_writes = FALSE)` (read when the store is created)
#' writes new chunks in place instead, as this package did before: it saves
#' a rename per new chunk (about 20 microseconds on a RAM disk, a third of
#' the time to write a new array of 10 KB chunks there; little against a
#' disk), but a process killed mid-write may then leave a short or empty
#' chunk that fails every read until it is written again. Existing chunks
#' are always replaced by a rename.
#'
#' With `options(zarr.fsync = TRUE)` (read when the store is created; off
#' by default, as in zarr-python) each value and the folder entry of its
#' rename are flushed to the disk before a write returns, so a power loss
#' keeps them; this costs a disk flush per chunk.
#'
#' Only regular files are values: reading a key that is a FIFO, a device or
#' a socket is an error of class `zarr_error_io` (it is never opened in a
#' way that could block). A folder is a prefix, not a key.
#'
#' Symbolic links: reads follow them, inside the store and out of it (a key
#' may be a link to a file elsewhere). Writes and erases never act through
#' a link that leads out of the root folder: they fail with an error of
#' class `zarr_error_invalid_key`. A write to a key that is itself a link
#' replaces the link, not the file it points to.
#'
#' Unlike the manual this package follows, opening a store never creates a
#' folder by accident: `zarr_localstore$new()` creates the root folder only
#' when it does not exist yet, and [open_zarr()] refuses a missing path. As
#' the manual says, an existing folder must be a Zarr store (hold a
#' `zarr.json`, or `.zgroup`, `.zarray` or `.zmetadata` of Zarr version 2):
#' anything else is an error of class `zarr_error_argument`, so that files
#' that are not Zarr are never mixed with chunks. An empty folder is taken
#' as a new store.
#'
#' @docType class
#' @export
#' @examples
#' root <- tempfile(fileext = ".zarr")
#' s <- zarr_localstore$new(root)
#' s$set("a/b", as.raw(1:3))
#' s$get("a/b")
#' s$list()
#' unlink(root, recursive = TRUE)
zarr_localstore <- R6::R6Class("zarr_localstore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Move every key below a prefix to another prefix, in one
    #'   step (a rename of the folder) where that is safe: the target does
    #'   not exist and no link leads out of the root; key by key otherwise.
    #' @param old_prefix,new_prefix Prefixes from the store root.
    #' @return Self, invisibly.
    rename_prefix = function(old_prefix, new_prefix) {
      in_one_step <- function(from, to) localstore_rename_folder(self, private, from, to)
      store_rename_prefix(self, old_prefix, new_prefix, in_one_step)
    },
    #' @description Create or open a store on the local file system.
    #' @param root The folder of the store; a `file://` URI is accepted.
    #' @param read_only Whether the store is read-only. Default FALSE.
    #' @param create Whether to create the folder when it does not exist.
    initialize = function(root, read_only = FALSE, create = !read_only) {
      check_string(root, "root")
      check_flag(read_only, "read_only")
      super$initialize(read_only)
      root <- path.expand(root)
      check_store_folder(without_file_scheme(root))
      private$handle <- zarr_call(rz_store_local(
        enc2utf8(root), read_only, create,
        fsync = isTRUE(getOption("zarr.fsync", FALSE)),
        atomic = !isFALSE(getOption("zarr.atomic_writes", TRUE))
      ))
      private$.root <- normalizePath(without_file_scheme(root), winslash = "/", mustWork = FALSE)
    }
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "Local file system store",
    #' @field root (read-only) The root folder of the store.
    root = function(value) private$.root,
    #' @field uri (read-only) The URI of the store location.
    uri = function(value) paste0("file://", private$.root),
    #' @field supports_prefix_rename (read-only) TRUE: a prefix is a folder,
    #'   renamed in one step.
    supports_prefix_rename = function(value) TRUE
  ),
  private = list(.root = NULL)
)

#' Zarr store in memory
#'
#' @description Keys and values held in memory by the Rust engine, gone when the store
#' is garbage-collected.
#'
#' @docType class
#' @export
#' @examples
#' s <- zarr_memorystore$new()
#' s$set("x", charToRaw("hello"))
#' rawToChar(s$get("x"))
#' s$keys
zarr_memorystore <- R6::R6Class("zarr_memorystore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Create an empty memory store.
    #' @param read_only Whether the store is read-only. Default FALSE.
    initialize = function(read_only = FALSE) {
      super$initialize(read_only)
      private$handle <- zarr_call(rz_store_memory(read_only))
    }
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "Memory store",
    #' @field keys (read-only) The keys in the store.
    keys = function(value) self$list()
  )
)

# ---------------------------------------------------------------- helpers

store_list_chunks <- function(store, prefix) {
  keys <- store$list_prefix(prefix)
  keys[!basename(keys) %in% c("zarr.json", ".zarray", ".zattrs", ".zgroup")]
}

store_rename <- function(store, old_key, new_key) {
  check_string(old_key, "old_key")
  check_string(new_key, "new_key")
  value <- store$get(old_key)
  if (is.null(value)) zarr_abort("not_found", sprintf("cannot rename key '%s': it does not exist", old_key))
  if (!identical(old_key, new_key)) {
    store$set(new_key, value)
    store$erase(old_key)
  }
  invisible(store)
}

store_rename_prefix <- function(store, old_prefix, new_prefix, in_one_step = NULL) {
  from <- node_key_path(as_prefix(old_prefix))
  to <- node_key_path(as_prefix(new_prefix))
  if (!nzchar(from) || !nzchar(to)) zarr_abort("argument", "cannot rename the root of a store")
  if (identical(from, to)) return(invisible(store))
  if (startsWith(paste0(to, "/"), paste0(from, "/"))) {
    zarr_abort("argument", sprintf("cannot rename prefix '%s' into itself ('%s')", from, to))
  }
  if (!is.null(in_one_step) && isTRUE(in_one_step(from, to))) return(invisible(store))
  keys <- store$list_prefix(from)
  if (store$exists(from)) keys <- c(from, keys)
  for (k in keys) store_rename(store, k, paste0(to, substring(k, nchar(from) + 1L)))
  invisible(store)
}

# A folder (or file) of a local store renamed in one step; FALSE (nothing
# done) where that is not safe, and the keys are moved one by one instead:
# a target that exists, or a path that leads out of the root through a link
# (writes never act through one, see zarr_localstore).
localstore_rename_folder <- function(store, private, from, to) {
  if (store$read_only) zarr_abort("read_only", sprintf("cannot rename '%s': the store is read-only", from))
  # (the engine's key checks: a key with "..", "." or an empty segment is refused)
  store$exists(from)
  store$exists(to)
  root <- normalizePath(private$.root, winslash = "/", mustWork = TRUE)
  src <- file.path(root, from)
  dst <- file.path(root, to)
  if (!file.exists(src) || file.exists(dst)) return(FALSE)
  inside <- function(path) {
    while (!dir.exists(path)) path <- dirname(path)
    real <- normalizePath(path, winslash = "/", mustWork = TRUE)
    real == root || startsWith(real, paste0(root, "/"))
  }
  if (nzchar(Sys.readlink(src)) || !inside(dirname(src)) || !inside(dirname(dst))) return(FALSE)
  # The engine renames the folder and forgets the documents below it.
  zarr_call(rz_node_rename_folder(private$handle, src, dst, as_prefix(from), as_prefix(to)))
}

# A path, or a `file://` URI as its path.
without_file_scheme <- function(x) if (startsWith(x, "file://")) substring(x, 8L) else x

# An existing folder with files in it must be a Zarr store.
check_store_folder <- function(path) {
  # The documents first: listing a large store's root folder costs more.
  docs <- file.path(path, c("zarr.json", ".zgroup", ".zarray", ".zmetadata"))
  if (any(file.exists(docs)) || !dir.exists(path)) return(invisible(NULL))
  if (!length(list.files(path, all.files = TRUE, no.. = TRUE))) return(invisible(NULL))
  zarr_abort("argument", sprintf("'%s' exists and is not a Zarr store (it has no zarr.json)", path))
}

# The Rust handle of a store, for the array engine.
store_handle <- function(store) {
  h <- store_handle_or_null(store)
  if (is.null(h)) {
    zarr_abort("unsupported", sprintf("stores of class '%s' have no engine handle", class(store)[1L]))
  }
  h
}

# The Rust handle of a store, NULL for a store without one.
store_handle_or_null <- function(store) store$engine_handle()

# "/a/b", "a/b/" and "a/b" -> "a/b/"; "/" and "" -> "".
as_prefix <- function(prefix) {
  check_string(prefix, "prefix")
  p <- gsub("^/+|/+$", "", prefix)
  if (nzchar(p)) paste0(p, "/") else ""
}

# "/a/b/" -> "a/b"; "/" -> "".
node_key_path <- function(path) gsub("^/+|/+$", "", path)


store_get <- function(handle, key, byte_range) {
  check_string(key, "key")
  offset <- -1
  length <- -1
  suffix <- FALSE
  if (!is.null(byte_range)) {
    if (!is.numeric(byte_range) || anyNA(byte_range) || !length(byte_range) %in% 1:2) {
      zarr_abort("argument", "`byte_range` must be NULL, one number, or c(offset, length)")
    }
    if (length(byte_range) == 1L) {
      if (byte_range < 0) {
        length <- -byte_range
        suffix <- TRUE
      } else {
        offset <- byte_range
      }
    } else {
      if (any(byte_range < 0) || byte_range[2L] <= byte_range[1L]) {
        zarr_abort("argument", sprintf("key '%s': `byte_range` c(start, end) needs 0 <= start < end", key))
      }
      size <- zarr_call(rz_store_size(handle, key))
      if (is.na(size)) return(NULL)
      offset <- byte_range[1L]
      length <- max(0, min(byte_range[2L], size) - offset)
    }
  }
  zarr_call(rz_store_get(handle, key, as.double(offset), as.double(length), suffix))
}

store_clear <- function(self, private) {
  keep <- c("zarr.json", ".zgroup", ".zattrs")
  saved <- lapply(keep, self$get)
  zarr_call(rz_store_erase_prefix(private$handle, ""))
  for (i in seq_along(keep)) if (!is.null(saved[[i]])) self$set(keep[[i]], saved[[i]])
  invisible(TRUE)
}

# Parse JSON text from the engine into R lists; 64-bit integers that do not
# fit a double stay character strings.
parse_json <- function(txt) {
  jsonlite::fromJSON(txt, simplifyVector = FALSE, bigint_as_char = TRUE)
}

to_json <- function(x, pretty = TRUE) {
  jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", na = "null", digits = NA, pretty = pretty,
                   json_verbatim = TRUE)
}

# The node documents below live in the store's Rust handle (see
# src/rust/src/node.rs): R asks for one when it needs it.

# The metadata of the node at `prefix`, a list; NULL when there is none. The
# root's consolidated metadata, when it has some, answers for every node
# below it without a read of the store.
store_get_metadata <- function(handle, prefix) {
  # The engine gives R lists (text only for a document R must refuse).
  meta <- zarr_call(rz_node_metadata(handle, node_key_path(prefix), FALSE, ""))
  if (is.character(meta)) parse_json(meta) else meta
}

# The document an array's engine is opened from without reading the store
# (JSON text), or NULL: the one the store object read or wrote last.
node_json_get <- function(store, path) zarr_call(rz_node_array_document(store_handle(store), path))

# The paths of the nodes directly below `prefix`: from consolidated
# metadata when the store has it, otherwise by listing.
store_child_paths <- function(store, prefix) {
  paths <- zarr_call(rz_node_children(store_handle(store), node_key_path(prefix)))
  if (!is.null(paths)) return(sort(paths))
  entries <- store$list_dir(as_prefix(prefix))
  sort(sub("/$", "", entries[endsWith(entries, "/")]))
}

# Validate a metadata list (or array_builder) with the engine and return the
# canonical JSON text.
metadata_json <- function(metadata) {
  if (inherits(metadata, "array_builder")) metadata <- metadata$metadata()
  if (!is.list(metadata)) zarr_abort("argument", "`metadata` must be a list or an array_builder")
  zarr_call(rz_metadata_normalize(to_json(metadata, pretty = FALSE), TRUE, FALSE))
}

store_set_metadata <- function(self, prefix, metadata) {
  path <- node_key_path(prefix)
  kind <- if (inherits(metadata, "array_builder")) "array" else if (is.list(metadata)) metadata$node_type
  if (!is.character(kind) || length(kind) != 1L) kind <- "node"
  what <- sprintf("%s '/%s'", kind, path)
  txt <- with_context(metadata_json(metadata), what)
  docs <- with_context(zarr_call(rz_metadata_documents(txt)), what)
  for (name in names(docs)) {
    self$set(if (nzchar(path)) paste(path, name, sep = "/") else name, charToRaw(enc2utf8(docs[[name]])))
  }
  # The handle keeps what was written (and the consolidated view of this
  # session in step with the store).
  zarr_call(rz_node_put(store_handle(self), path, txt))
  invisible(self)
}

check_node_name <- function(name) {
  check_string(name, "name")
  if (!nzchar(name)) return(invisible(name))
  if (!is_valid_node_name(name)) {
    zarr_abort("argument", sprintf(
      "invalid node name '%s': names cannot contain '/', be only periods, or start with '__'", name
    ))
  }
  invisible(name)
}

child_path <- function(path, name) {
  p <- node_key_path(path)
  if (!nzchar(name)) return(p)
  if (nzchar(p)) paste(p, name, sep = "/") else name
}

check_no_node <- function(store, path) {
  docs <- c("zarr.json", ".zarray", ".zgroup")
  keys <- if (nzchar(path)) paste(path, docs, sep = "/") else docs
  if (any(vapply(keys, store$exists, logical(1)))) {
    zarr_abort("argument", sprintf("a node already exists at '/%s'", path))
  }
}

# Array metadata in the format of the store it goes into: a Zarr v2 store
# gets v2 arrays (chunk keys "0.0" rather than "c/0/0").
as_store_format <- function(metadata, version) {
  order_chosen <- TRUE
  if (inherits(metadata, "array_builder")) {
    order_chosen <- metadata$order_chosen
    metadata <- metadata$metadata()
  }
  if (identical(as.integer(version), 2L) && !identical(as.integer(metadata$zarr_format), 2L)) {
    metadata$codecs <- v2_default_order(metadata$codecs, order_chosen)
    metadata$zarr_format <- 2L
    metadata$chunk_key_encoding <- list(name = "v2", configuration = list(separator = "."))
  }
  metadata
}

# Metadata with a chunk key encoding: the store's separator fills in one
# that is missing or whose separator is neither "/" nor ".".
with_key_encoding <- function(metadata, separator) {
  if (!is.list(metadata) || !identical(as.integer(metadata$zarr_format), 3L)) return(metadata)
  cke <- metadata$chunk_key_encoding
  sep <- cke$configuration$separator
  if (is.null(cke$name)) {
    metadata$chunk_key_encoding <- list(name = "default", configuration = list(separator = separator))
  } else if (!is.null(sep) && !identical(sep, "/") && !identical(sep, ".")) {
    metadata$chunk_key_encoding$configuration$separator <- if (identical(cke$name, "v2")) "." else separator
  }
  metadata
}

# v3 array metadata given as a list without `codecs` (R-CF's zarr takes
# it so) gets the one codec the specification requires, from array to
# bytes: `bytes` in little-endian order, `vlen-utf8` for strings.
with_codecs <- function(metadata) {
  if (!is.list(metadata) || !identical(as.integer(metadata$zarr_format), 3L) || !is.null(metadata$codecs) ||
        !is.character(metadata$data_type)) {
    return(metadata)
  }
  dt <- metadata$data_type
  if (identical(dt, "string")) {
    metadata$codecs <- list(codec_entry("vlen-utf8", list()))
    return(metadata)
  }
  # (a data type the engine does not know is left for the metadata check to name)
  cfg <- tryCatch(default_codec_configuration("bytes", NULL, dt, length(metadata$shape)), zarr_error = function(e) NULL)
  if (!is.null(cfg)) metadata$codecs <- list(codec_entry("bytes", cfg))
  metadata
}

store_create_group <- function(self, path, name) {
  check_node_name(name)
  p <- child_path(path, name)
  check_no_node(self, p)
  meta <- list(zarr_format = self$version, node_type = "group", attributes = structure(list(), names = character(0)))
  self$set_metadata(p, meta)
  meta
}

store_create_array <- function(self, parent, name, metadata) {
  check_node_name(name)
  p <- child_path(parent, name)
  check_no_node(self, p)
  metadata <- with_key_encoding(as_store_format(metadata, self$version), self$separator)
  self$set_metadata(p, with_codecs(metadata))
  self$get_metadata(p)
}
