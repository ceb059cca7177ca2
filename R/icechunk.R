# Icechunk repositories. The icechunk crate (src/rust/src/store/icechunk.rs)
# keeps the repository -- refs, snapshots, manifests, sessions, commits and
# conflicts -- and answers the Zarr keys of one session; the package reads
# and writes the arrays through it as through any other store.

#' Open an Icechunk repository
#'
#' @description
#' [Icechunk](https://icechunk.io) is a storage engine for Zarr that keeps
#' every change as a snapshot: a repository has branches and tags like a
#' git repository, and every commit is a consistent version of the whole
#' hierarchy. `open_icechunk()` opens one branch, tag or snapshot of a
#' repository as a [zarr] object (of class `zarr_icechunk`): every read and
#' write of the package works on it (selections, sharding, `resize()`,
#' parallel reads).
#'
#' A repository opened with `read_only = FALSE` gives a writable session on
#' a branch: writes go into the session, and nothing is seen by other
#' readers until `z$commit(message)`. Two sessions that both commit to a
#' branch do not overwrite each other: the second commit raises a
#' `zarr_error_conflict` condition, unless it asks to be rebased onto the
#' new tip of the branch (`rebase = "detect"`, `"ours"` or `"theirs"`, as
#' icechunk's `ConflictDetector` and `BasicConflictSolver`).
#'
#' @section When to use Icechunk:
#' A plain store (a folder, a bucket) is the simplest, and every Zarr
#' reader reads it. An Icechunk repository is worth its extra layer when
#' several writers work on one data set (commits are atomic: readers never
#' see half a write, and conflicting writers are told), when earlier
#' versions must stay readable (tags, history, time travel), or when arrays
#' point into existing files (virtual chunks: byte ranges of NetCDF, HDF5 or
#' other files that are not copied).
#'
#' @section Virtual chunks:
#' A chunk of a repository may be a reference to a byte range of another
#' file (`file://`, `http(s)://`, `s3://`, `gs://` or `az://` URLs), in one
#' of the repository's virtual chunk containers. As in icechunk-python,
#' such chunks are read only from containers the caller trusts: name their
#' URL prefixes in `authorize_virtual_chunk_access` (`"file:///data/"`,
#' `"https://example.org/files/"`). A chunk in any other container raises a
#' `zarr_error_io` condition naming it. Object stores are read with the
#' credentials of the environment (or unsigned, as the container says).
#'
#' @section Where a repository can be:
#' The same URLs and credentials as [open_zarr()] and [zarr_objectstore]:
#' a folder, `s3://bucket/prefix`, `gs://bucket/prefix`,
#' `az://container/prefix` (or `abfs://container@account.dfs.core.windows.net/prefix`),
#' with the settings of `options` and the `AWS_*`, `GOOGLE_*` and `AZURE_*`
#' environment variables (an Azure account is named by
#' `azure_storage_account_name`, `AZURE_STORAGE_ACCOUNT_NAME` or the abfs://
#' URL, or is the emulator's when `AZURE_STORAGE_USE_EMULATOR` is set). A
#' repository on a web server (`https://`, `http://`) is read-only: opening
#' it with `read_only = FALSE` raises `zarr_error_read_only`.
#'
#' @section Limitations:
#' Repositories in S3 go through icechunk's object_store backend (not the
#' AWS SDK): static keys, the environment's credentials or unsigned
#' requests; an Azure connection string (`AZURE_STORAGE_CONNECTION_STRING`)
#' is not read for repositories. The icechunk crate needs rustc 1.95 or
#' later: a package built with an older rustc raises
#' `zarr_error_unsupported` saying so (configure says at install whether
#' the build has Icechunk).
#'
#' @param location The folder of the repository (or a `file://` URL), or
#'   the URL of a repository in S3 (`s3://bucket/prefix`), GCS (`gs://`),
#'   Azure (`az://container/prefix`) or on a web server (`https://`,
#'   read-only).
#' @param branch The branch to open, "main" by default.
#' @param tag,snapshot A tag name or a snapshot id to open instead of a
#'   branch (read-only).
#' @param read_only FALSE for a writable session on `branch` (or on
#'   `new_branch`).
#' @param new_branch The name of a branch to create at the version opened
#'   (`branch`, `tag` or `snapshot`) and write to; implies `read_only =
#'   FALSE`.
#' @param authorize_virtual_chunk_access A character vector of the URL
#'   prefixes of the virtual chunk containers whose files may be read.
#' @param options For a repository in S3, GCS or Azure: a named list of
#'   settings, with the names [zarr_objectstore] takes (`aws_endpoint`,
#'   `aws_region`, `aws_access_key_id`, `aws_secret_access_key`,
#'   `aws_allow_http`, `aws_skip_signature`...); as there, the `AWS_*`,
#'   `GOOGLE_*` and `AZURE_*` environment variables are read too.
#' @return A `zarr_icechunk` object: a [zarr] with `commit()`, `history()`,
#'   `branches()`, `tags()` and the fields `branch` and `snapshot`.
#' @seealso [create_tag()]
#' @export
#' @examplesIf zarr:::icechunk_available()
#' # A small repository written by icechunk-python: two commits on main,
#' # the first tagged "v1".
#' path <- system.file("extdata", "icechunk", package = "zarr")
#' z <- open_icechunk(path)
#' z[["/temp"]][]
#' z$history()$message
#' open_icechunk(path, tag = "v1")[["/temp"]][]
#'
#' # Writes go into a session, and to the branch with commit().
#' repo <- file.path(tempdir(), "example.icechunk")
#' file.copy(path, tempdir(), recursive = TRUE)
#' file.rename(file.path(tempdir(), "icechunk"), repo)
#' w <- open_icechunk(repo, read_only = FALSE)
#' w[["/temp"]][3, ] <- 100
#' w$commit("last row set to 100")
#' open_icechunk(repo)[["/temp"]][]
#' unlink(repo, recursive = TRUE)
open_icechunk <- function(location, branch = "main", tag = NULL, snapshot = NULL, read_only = TRUE,
                          new_branch = NULL, authorize_virtual_chunk_access = character(), options = list()) {
  check_string(location, "location")
  check_string(branch, "branch")
  check_flag(read_only, "read_only")
  if (!is.null(tag)) check_string(tag, "tag")
  if (!is.null(snapshot)) check_string(snapshot, "snapshot")
  if (!is.null(new_branch)) check_string(new_branch, "new_branch")
  if (!is.null(tag) && !is.null(snapshot)) {
    zarr_abort("argument", "give `tag` or `snapshot`, not both")
  }
  if (!is.character(authorize_virtual_chunk_access) || anyNA(authorize_virtual_chunk_access)) {
    zarr_abort("argument", "`authorize_virtual_chunk_access` must be a character vector of URL prefixes")
  }
  kind <- if (!is.null(tag)) "tag" else if (!is.null(snapshot)) "snapshot" else "branch"
  name <- tag %||% snapshot %||% branch
  if (is.null(options)) options <- list()
  if (!is.list(options) || (length(options) && (is.null(names(options)) || any(!nzchar(names(options)))))) {
    zarr_abort("argument", "`options` must be a named list")
  }
  values <- vapply(options, function(v) {
    if (is.logical(v)) tolower(as.character(v)) else as.character(v)
  }, character(1))
  if (!is.null(new_branch)) read_only <- FALSE
  if (!grepl("://", location, fixed = TRUE)) location <- normalizePath(location, mustWork = FALSE)
  opened <- zarr_call(rz_icechunk_open(
    enc2utf8(location), kind, enc2utf8(name), read_only, enc2utf8(new_branch %||% ""),
    enc2utf8(authorize_virtual_chunk_access), names(values) %||% character(0), unname(values)
  ))
  zarr_icechunk$new(zarr_icechunkstore$new(opened, location, read_only))
}

#' Zarr store of an Icechunk session
#'
#' @description The store under a [zarr] object that [open_icechunk()]
#' returns: the keys of one session of an Icechunk repository. Use
#' [open_icechunk()] to make one.
#' @docType class
#' @keywords internal
#' @export
zarr_icechunkstore <- R6::R6Class("zarr_icechunkstore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Wrap a session opened by `open_icechunk()`.
    #' @param opened What the engine returned for the session.
    #' @param location The repository's location.
    #' @param read_only Whether the session is read-only.
    initialize = function(opened, location, read_only) {
      private$.version <- 3L
      private$handle <- opened$store
      private$repo <- opened$repo
      private$.location <- location
      private$.ref <- list(kind = opened$kind, name = opened$name)
    },
    #' @description The repository's handle in the engine (internal).
    #' @return An external pointer.
    repo_handle = function() private$repo
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) "Icechunk session",
    #' @field root (read-only) The repository's location.
    root = function(value) private$.location,
    #' @field uri (read-only) The repository's location.
    uri = function(value) private$.location,
    #' @field ref (read-only) The branch, tag or snapshot the session
    #'   started from: a list of `kind` and `name`.
    ref = function(value) private$.ref
  ),
  private = list(repo = NULL, .location = NULL, .ref = NULL)
)

#' A hierarchy in an Icechunk repository
#'
#' @description What [open_icechunk()] returns: a [zarr] over one session of
#' a repository, with its version control.
#' @docType class
#' @export
zarr_icechunk <- R6::R6Class("zarr_icechunk",
  inherit = zarr,
  public = list(
    #' @description Commit the session's changes to its branch.
    #' @param message The commit message.
    #' @param rebase What to do when the branch moved on since the session
    #'   started: "none" raises a `zarr_error_conflict` condition; "detect"
    #'   rebases onto the new tip when the changes do not overlap; "ours" and
    #'   "theirs" rebase, keeping this session's or the branch's chunk where
    #'   both wrote one.
    #' @return The id of the new snapshot (a string).
    commit = function(message, rebase = c("none", "detect", "ours", "theirs")) {
      icechunk_commit(self, message, match.arg(rebase))
    },
    #' @description The commits from a version back to the first.
    #' @param branch,tag,snapshot The version to start from; by default the
    #'   session's snapshot.
    #' @return A data frame of `id`, `parent`, `time` (POSIXct, UTC) and
    #'   `message`, newest first.
    history = function(branch = NULL, tag = NULL, snapshot = NULL) icechunk_history(self, branch, tag, snapshot),
    #' @description The branches of the repository.
    #' @return A named character vector: the snapshot at the tip of each
    #'   branch, named by branch.
    branches = function() icechunk_refs(self, "branches"),
    #' @description The tags of the repository.
    #' @return A named character vector: the snapshot of each tag, named by
    #'   tag.
    tags = function() icechunk_refs(self, "tags")
  ),
  active = list(
    #' @field branch (read-only) The branch of the session, or NULL when it
    #'   was opened at a tag or snapshot.
    branch = function(value) {
      ref <- self$store$ref
      if (identical(ref$kind, "branch")) ref$name
    },
    #' @field snapshot (read-only) The snapshot the session is at: after a
    #'   commit, the new one.
    snapshot = function(value) zarr_call(rz_icechunk_info(icechunk_handle(self)))$snapshot,
    #' @field has_changes (read-only) Whether the session holds changes not
    #'   yet committed.
    has_changes = function(value) zarr_call(rz_icechunk_info(icechunk_handle(self)))$changed
  )
)

#' Tag a snapshot of an Icechunk repository
#'
#' @description Tags name one snapshot for good: unlike a branch, a tag does
#' not move, and it cannot be made again with another snapshot.
#' @param x A `zarr_icechunk` object from [open_icechunk()].
#' @param name The tag.
#' @param snapshot The snapshot id to tag; by default the session's snapshot.
#' @return The snapshot id tagged, invisibly.
#' @export
#' @examplesIf zarr:::icechunk_available()
#' repo <- file.path(tempdir(), "tags.icechunk")
#' file.copy(system.file("extdata", "icechunk", package = "zarr"), tempdir(), recursive = TRUE)
#' file.rename(file.path(tempdir(), "icechunk"), repo)
#' z <- open_icechunk(repo, read_only = FALSE)
#' create_tag(z, "latest")
#' z$tags()
#' unlink(repo, recursive = TRUE)
create_tag <- function(x, name, snapshot = NULL) {
  if (!inherits(x, "zarr_icechunk")) zarr_abort("argument", "`x` must be a zarr_icechunk from open_icechunk()")
  check_string(name, "name")
  if (!is.null(snapshot)) check_string(snapshot, "snapshot")
  invisible(zarr_call(rz_icechunk_tag(icechunk_handle(x), enc2utf8(name), snapshot %||% "")))
}

# Whether this build reads Icechunk repositories (rustc >= 1.95 at install).
icechunk_available <- function() rz_icechunk_available()

icechunk_handle <- function(z) z$store$repo_handle()

icechunk_commit <- function(z, message, rebase) {
  check_string(message, "message")
  zarr_call(rz_icechunk_commit(icechunk_handle(z), enc2utf8(message), rebase))
}

icechunk_history <- function(z, branch, tag, snapshot) {
  given <- list(branch = branch, tag = tag, snapshot = snapshot)
  given <- given[!vapply(given, is.null, logical(1))]
  if (length(given) > 1L) zarr_abort("argument", "give one of `branch`, `tag` and `snapshot`")
  kind <- if (length(given)) names(given) else ""
  name <- if (length(given)) given[[1L]] else ""
  if (length(given)) check_string(name, kind)
  h <- zarr_call(rz_icechunk_history(icechunk_handle(z), kind, enc2utf8(name)))
  data.frame(
    id = h$id, parent = h$parent,
    time = as.POSIXct(h$time, origin = "1970-01-01", tz = "UTC"),
    message = h$message, stringsAsFactors = FALSE
  )
}

icechunk_refs <- function(z, what) {
  r <- zarr_call(rz_icechunk_refs(icechunk_handle(z), what))
  stats::setNames(r$snapshot, r$name)
}
