# Object stores: S3 (and S3-compatible servers), Google Cloud Storage and
# Azure Blob Storage. The Rust engine (src/rust/src/store/object/) talks to
# them through the object_store crate, which signs requests, retries and
# uploads in parts; this file turns URLs, arguments and the AWS shared
# credentials file into its options.

#' Zarr store in S3, Google Cloud Storage or Azure Blob Storage
#'
#' @description A store whose keys are objects below a path in a bucket (a container for
#' Azure): the value of key `"c/0/1"` of the store at
#' `s3://bucket/data.zarr` is the object `data.zarr/c/0/1` of the bucket.
#' [open_zarr()], [create_zarr()] and [as_zarr()] make one for a URL of the
#' form `s3://bucket/path`, `gs://bucket/path`, `az://container/path`,
#' `abfs://container@account.dfs.core.windows.net/path`, or an `https://`
#' URL of S3 (`https://bucket.s3.region.amazonaws.com/path`), Cloudflare R2
#' or Azure.
#'
#' Requests are made by Apache Arrow's `object_store` Rust crate. Reading
#' many chunks keeps up to `max_concurrency` (default 64) requests in
#' flight; partial reads of sharded arrays fetch only the byte ranges they
#' need; values of 64 MiB or more are uploaded in parts of 16 MiB (a failed
#' upload is aborted, so no parts are left behind). Failed requests (5xx,
#' throttling, dropped connections, bodies cut short, timeouts) are retried
#' with growing random waits, up to 10 times within 2 minutes: the network
#' options of [zarr_options()] set these limits, and the timeouts.
#'
#' @section Credentials and settings:
#' Settings are read where each cloud's own tools read them:
#' * **S3**: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
#'   `AWS_SESSION_TOKEN`, `AWS_REGION` (or `AWS_DEFAULT_REGION`),
#'   `AWS_ENDPOINT_URL` (a MinIO, Ceph or R2 server, addressed path-style),
#'   `AWS_ALLOW_HTTP=true` for a plain-http endpoint, web identity and
#'   container credentials. When the key is not in the environment, the
#'   profile `AWS_PROFILE` (else `default`) of the shared credentials file
#'   (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) and its
#'   region in the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`)
#'   are used. With no credentials at all, or with `AWS_NO_SIGN_REQUEST=true`,
#'   requests are sent unsigned, as public buckets need.
#' * **GCS**: `GOOGLE_SERVICE_ACCOUNT` (a key file),
#'   `GOOGLE_SERVICE_ACCOUNT_KEY`, `GOOGLE_APPLICATION_CREDENTIALS`, then
#'   gcloud's application default credentials.
#' * **Azure**: `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`,
#'   `AZURE_STORAGE_SAS_KEY`, `AZURE_STORAGE_ENDPOINT`, service principal
#'   variables (`AZURE_CLIENT_ID`, ...), and `AZURE_STORAGE_USE_EMULATOR=true`
#'   for Azurite (at `AZURITE_BLOB_STORAGE_URL`, default
#'   `http://127.0.0.1:10000`). When no account is named there,
#'   `AZURE_STORAGE_CONNECTION_STRING` (`AccountName=...;AccountKey=...;`
#'   `BlobEndpoint=...`, as the Azure CLI takes it) is read instead.
#'
#' The `options` list wins over the environment. Its names are the
#' configuration keys of `object_store` (`region`, `endpoint`,
#' `access_key_id`, `secret_access_key`, `allow_http`,
#' `virtual_hosted_style_request`, `account_name`, `service_account`, ...,
#' with or without the `aws_`, `google_` or `azure_` prefix), plus
#' `multipart_threshold` and `part_size` (bytes) and the network options of
#' [zarr_options()] (`max_retries`, `max_concurrency`, and `retry_timeout`,
#' `connect_timeout`, `request_timeout` in seconds), which default to
#' those of [zarr_options()]. An unknown name is a
#' `zarr_error_unsupported` error.
#'
#' @section Errors:
#' A missing key reads as `NULL`. A refused request (HTTP 401 or 403) is a
#' `zarr_error_permission_denied` condition, a missing bucket a
#' `zarr_error_not_found` one, a conditional write that lost to another
#' writer a `zarr_error_conflict` one, and a server that still fails after
#' the retries a `zarr_error_io` one; every message names the bucket and
#' the key.
#'
#' @section Multipart uploads:
#' A value larger than `multipart_threshold` is uploaded in parts of
#' `part_size`. A write that fails or is interrupted once its upload has
#' started aborts the upload, so no parts are left behind. One case
#' remains: when the answer to the request that starts an upload is lost
#' (the connection drops after the server created the upload), the
#' upload's id never reaches the client, and `object_store` has no call
#' that lists a bucket's open uploads to find it. Such an upload stays
#' open, invisible to listings of keys, until the bucket's lifecycle
#' removes it: on S3 and GCS a lifecycle rule that aborts incomplete
#' multipart uploads after some days does; Azure discards uncommitted
#' blocks after a week by itself.
#'
#' @section Many writers:
#' Each chunk is one object, written by one request: processes or machines
#' that write disjoint, chunk-aligned regions of one array (see
#' `chunk_regions()` of [zarr_array]) lose nothing. Writes of parts of one
#' chunk by two processes at once are last-writer-wins for the whole chunk
#' (the rule for every store: [zarr_many_writers]).
#'
#' Metadata documents (attributes, shape) are guarded: a writable store
#' remembers the version (ETag) of each document it reads, at the cost of
#' one more request per node opened, and replaces the document only if it
#' is still that version (HTTP `If-Match`). When another process changed it
#' in between, the write fails with a `zarr_error_conflict` condition
#' instead of silently undoing the other change: open the node again and
#' repeat. A document this store has not read (a new node) is written
#' unconditionally.
#'
#' @docType class
#' @export
#' @examples
#' # Making the store sends no request.
#' s <- zarr_objectstore$new("s3://example-bucket/data.zarr",
#'                           options = list(region = "eu-west-1"), anonymous = TRUE)
#' s
#' s$bucket
#' s$prefix
#' @examplesIf interactive()
#' # A public bucket (needs the network).
#' z <- open_zarr("s3://example-public-bucket/data.zarr")
zarr_objectstore <- R6::R6Class("zarr_objectstore",
  inherit = zarr_store,
  cloneable = FALSE,
  public = list(
    #' @description Create a store for a URL. No request is made.
    #' @param url The URL of the store root (see the description).
    #' @param options A named list of settings (see "Credentials and
    #'   settings"); values are converted with `as.character()`.
    #' @param anonymous TRUE to send unsigned requests (public buckets),
    #'   FALSE to always sign, NULL (the default) to decide from the
    #'   environment.
    #' @param read_only Whether the store is read-only. Default FALSE.
    initialize = function(url, options = list(), anonymous = NULL, read_only = FALSE) {
      objectstore_init(self, private, url, options, anonymous, read_only)
    },
    #' @description Store a value under a key. A metadata document this
    #'   store has read is replaced only if it is still the version read
    #'   (see "Many writers").
    #' @param key The key.
    #' @param value A raw vector.
    #' @return Self, invisibly.
    set = function(key, value) objectstore_set(self, private, key, value),
    #' @description The metadata document of the node at a path; on a
    #'   writable store its version is remembered for `set()`.
    #' @param prefix The node path ("" or "/" for the root).
    #' @return A list, or NULL when there is no node there.
    get_metadata = function(prefix) objectstore_get_metadata(self, private, prefix)
  ),
  active = list(
    #' @field friendlyClassName (read-only) Name of the class for printing.
    friendlyClassName = function(value) paste(private$.cloud_name, "store"),
    #' @field root (read-only) The URL of the store root.
    root = function(value) private$.url,
    #' @field uri (read-only) The URL of the store root.
    uri = function(value) private$.url,
    #' @field bucket (read-only) The bucket (container for Azure).
    bucket = function(value) private$.bucket,
    #' @field prefix (read-only) The path of the store root in the bucket.
    prefix = function(value) private$.prefix
  ),
  private = list(.url = NULL, .bucket = NULL, .prefix = NULL, .cloud_name = NULL, .tags = list())
)

objectstore_init <- function(self, private, url, options, anonymous, read_only) {
  check_string(url, "url")
  check_flag(read_only, "read_only")
  if (!is.null(anonymous)) check_flag(anonymous, "anonymous")
  if (is.null(options)) options <- list()
  if (!is.list(options) || (length(options) && (is.null(names(options)) || any(!nzchar(names(options)))))) {
    zarr_abort("argument", "`options` must be a named list")
  }
  cloud <- zarr_call(rz_object_url_cloud(url))
  if (is.null(cloud)) {
    zarr_abort("argument", sprintf("'%s' is not a URL of S3, GCS or Azure (s3://, gs://, az://, abfs://)", url))
  }
  net <- network_options()
  options <- c(options, net[!names(net) %in% names(options)])
  values <- vapply(options, function(v) {
    if (is.logical(v)) tolower(as.character(v)) else as.character(v)
  }, character(1))
  if (identical(cloud, "s3")) {
    extra <- aws_profile_options(names(options), anonymous)
    keep <- !names(extra) %in% names(options)
    values <- c(values, unlist(extra[keep]))
  }
  # What zarr_store$initialize() does; the version is read from the root.
  private$.version <- 3L
  private$handle <- zarr_call(rz_store_object(
    enc2utf8(url), names(values) %||% character(0), unname(values), read_only,
    if (is.null(anonymous)) NA else anonymous
  ))
  desc <- zarr_call(rz_store_info(private$handle))$description
  private$.cloud_name <- sub(" store at .*$", "", desc)
  private$.url <- sub("^.* store at ", "", desc)
  rest <- sub("^[a-z0-9]+://", "", private$.url)
  private$.bucket <- sub("/.*$", "", rest)
  private$.prefix <- if (grepl("/", rest, fixed = TRUE)) sub("^[^/]*/", "", rest) else ""
  invisible(self)
}

# Metadata keys whose versions are tracked.
is_metadata_key <- function(key) {
  sub("^.*/", "", key) %in% c("zarr.json", ".zarray", ".zattrs", ".zgroup")
}

objectstore_set <- function(self, private, key, value) {
  check_string(key, "key")
  if (!is.raw(value)) zarr_abort("argument", sprintf("the value for key '%s' must be a raw vector", key))
  tag <- private$.tags[[key]]
  if (!is.null(tag)) {
    # The new version is the one to compare with next time; a store that
    # gives no tag back leaves the next write unconditional.
    private$.tags[[key]] <- zarr_call(rz_store_set_if_version(private$handle, key, value, tag))
  } else {
    zarr_call(rz_store_set(private$handle, key, value))
  }
  invisible(self)
}

objectstore_get_metadata <- function(self, private, prefix) {
  # Tags of earlier reads (outside this method) may be stale now.
  zarr_call(rz_node_take_tags(private$handle))
  meta <- store_get_metadata(private$handle, prefix)
  if (is.null(meta) || self$read_only) return(meta)
  path <- node_key_path(prefix)
  docs <- if (identical(self$version, 2L)) {
    c(if (identical(meta$node_type, "array")) ".zarray" else ".zgroup", ".zattrs")
  } else {
    "zarr.json"
  }
  # The engine read the documents with their versions (one request each);
  # only a document it did not read (one of consolidated metadata) is
  # asked for again.
  read <- zarr_call(rz_node_take_tags(private$handle))
  for (doc in docs) {
    key <- if (nzchar(path)) paste(path, doc, sep = "/") else doc
    at <- match(key, read$keys)
    tag <- if (is.na(at)) zarr_call(rz_store_get_versioned(private$handle, key))$tag else read$tags[[at]]
    private$.tags[[key]] <- if (!is.null(tag) && !is.na(tag)) tag
  }
  meta
}

# Credentials of the AWS shared files, for when the environment has none:
# object_store reads only environment variables. Returns a named list of
# options (possibly empty).
aws_profile_options <- function(given, anonymous) {
  if (isTRUE(anonymous) || nzchar(Sys.getenv("AWS_ACCESS_KEY_ID")) ||
        any(c("access_key_id", "aws_access_key_id") %in% tolower(given))) {
    return(list())
  }
  profile <- Sys.getenv("AWS_PROFILE", Sys.getenv("AWS_DEFAULT_PROFILE", "default"))
  home <- path.expand("~")
  cred_file <- Sys.getenv("AWS_SHARED_CREDENTIALS_FILE", file.path(home, ".aws", "credentials"))
  conf_file <- Sys.getenv("AWS_CONFIG_FILE", file.path(home, ".aws", "config"))
  creds <- read_ini_section(cred_file, profile)
  conf <- read_ini_section(conf_file, if (identical(profile, "default")) "default" else paste("profile", profile))
  out <- list()
  if (!is.null(creds$aws_access_key_id)) {
    out$access_key_id <- creds$aws_access_key_id
    out$secret_access_key <- creds$aws_secret_access_key %||% ""
    if (!is.null(creds$aws_session_token)) out$session_token <- creds$aws_session_token
  }
  if (!nzchar(Sys.getenv("AWS_REGION")) && !nzchar(Sys.getenv("AWS_DEFAULT_REGION")) && !is.null(conf$region)) {
    out$region <- conf$region
  }
  if (!nzchar(Sys.getenv("AWS_ENDPOINT_URL")) && !is.null(conf$endpoint_url)) {
    out$endpoint <- conf$endpoint_url
  }
  out
}

# The `key = value` lines of section `[name]` of an INI file, as a named
# list; NULL entries when the file or the section is missing.
read_ini_section <- function(file, name) {
  if (!file.exists(file)) return(list())
  lines <- trimws(readLines(file, warn = FALSE))
  lines <- lines[nzchar(lines) & !startsWith(lines, "#") & !startsWith(lines, ";")]
  header <- grepl("^\\[.*\\]$", lines)
  section <- cumsum(header)
  at <- which(header & trimws(gsub("^\\[|\\]$", "", lines)) == name)
  if (!length(at)) return(list())
  body <- lines[section == section[at[1L]] & !header & grepl("=", lines, fixed = TRUE)]
  keys <- tolower(trimws(sub("=.*$", "", body)))
  vals <- trimws(sub("^[^=]*=", "", body))
  stats::setNames(as.list(vals), keys)
}

# Whether `location` is a URL for zarr_objectstore (not one for
# zarr_httpstore).
is_object_url <- function(location) {
  is.character(location) && length(location) == 1L && !is.na(location) &&
    grepl("^[A-Za-z][A-Za-z0-9+.-]*://", location) && !grepl("^file://", location, ignore.case = TRUE) &&
    !is.null(zarr_call(rz_object_url_cloud(location)))
}

#' Zarr store in Amazon S3 or an S3-compatible server
#'
#' @description A [zarr_objectstore] for a bucket and prefix, with the arguments of the
#' S3 store of the zarr package's development version on GitHub (R-CF/zarr).
#' Unlike there, requests are made by the Rust `object_store` crate, not by
#' `paws.storage`, and the store may be made before the data exists.
#'
#' @docType class
#' @export
#' @examples
#' s <- zarr_s3store$new("example-bucket", "data/cube.zarr", region = "us-east-1")
#' s$uri
zarr_s3store <- R6::R6Class("zarr_s3store",
  inherit = zarr_objectstore,
  cloneable = FALSE,
  public = list(
    #' @description Create a store for a prefix in an S3 bucket.
    #' @param bucket The bucket name.
    #' @param prefix The path of the store root in the bucket ("" for the
    #'   bucket root).
    #' @param region The AWS region, e.g. "eu-west-1"; NULL to take it from
    #'   the environment.
    #' @param profile A profile of the AWS shared credentials file.
    #' @param access_key,secret_key,session_token Explicit credentials.
    #' @param endpoint The URL of an S3-compatible server (MinIO, Ceph, R2);
    #'   an `http://` endpoint is allowed.
    #' @param path_style Whether to address the bucket in the path
    #'   (`endpoint/bucket/key`) rather than in the host name. NULL: path
    #'   style exactly when `endpoint` is given.
    #' @param anonymous TRUE for unsigned requests (public buckets). NULL
    #'   (the default): unsigned when neither `profile` nor `access_key` is
    #'   given and the environment has no credentials.
    #' @param read_only Whether the store is read-only. Default FALSE.
    initialize = function(bucket, prefix = "", region = NULL, profile = NULL,
                          access_key = NULL, secret_key = NULL, session_token = NULL,
                          endpoint = NULL, path_style = NULL, anonymous = NULL, read_only = FALSE) {
      args <- s3_args_options(bucket, prefix, region, profile, access_key, secret_key, session_token,
                              endpoint, path_style, anonymous)
      objectstore_init(self, private, args$url, args$options, args$anonymous, read_only)
    }
  )
)

# The URL, options and anonymous flag of zarr_s3store's arguments.
s3_args_options <- function(bucket, prefix, region, profile, access_key, secret_key, session_token,
                            endpoint, path_style, anonymous) {
  check_string(bucket, "bucket")
  check_string(prefix, "prefix")
  opts <- list()
  if (!is.null(region)) opts$region <- region
  if (!is.null(endpoint)) {
    opts$endpoint <- endpoint
    if (grepl("^http://", endpoint, ignore.case = TRUE)) opts$allow_http <- "true"
  }
  if (is.null(path_style)) path_style <- !is.null(endpoint) || nzchar(Sys.getenv("AWS_ENDPOINT_URL"))
  opts$virtual_hosted_style_request <- if (isTRUE(path_style)) "false" else "true"
  if (!is.null(access_key)) {
    opts$access_key_id <- access_key
    opts$secret_access_key <- secret_key %||% ""
    if (!is.null(session_token)) opts$session_token <- session_token
  } else if (!is.null(profile)) {
    old <- Sys.getenv("AWS_PROFILE", NA)
    Sys.setenv(AWS_PROFILE = profile)
    on.exit(if (is.na(old)) Sys.unsetenv("AWS_PROFILE") else Sys.setenv(AWS_PROFILE = old))
    prof <- aws_profile_options(character(0), FALSE)
    if (is.null(prof$access_key_id)) {
      zarr_abort("argument", sprintf("profile '%s' has no credentials in the AWS shared credentials file", profile))
    }
    opts <- c(opts, prof[!names(prof) %in% names(opts)])
  }
  if (is.null(anonymous) && (!is.null(access_key) || !is.null(profile))) anonymous <- FALSE
  prefix <- gsub("^/+|/+$", "", prefix)
  list(url = paste0("s3://", bucket, if (nzchar(prefix)) paste0("/", prefix)), options = opts, anonymous = anonymous)
}

#' List the keys and folders directly below a prefix of an S3 bucket
#'
#' @param bucket The bucket name.
#' @param prefix The prefix to list below ("" for the bucket root).
#' @param region,profile,access_key,secret_key,session_token,endpoint,path_style,anonymous
#'   As for [zarr_s3store]: the AWS region (NULL: from the environment),
#'   a profile of the shared credentials file, explicit credentials, an
#'   S3-compatible server's URL, path-style addressing (NULL: exactly when
#'   `endpoint` is given), and unsigned requests (NULL: when no credentials
#'   are found).
#' @return A character vector of the keys and folders (ending in "/")
#'   directly below `prefix`, each with `prefix` in front.
#' @export
#' @examplesIf interactive()
#' s3_list_dir("example-public-bucket", "data")
s3_list_dir <- function(bucket, prefix = "", region = NULL, profile = NULL,
                        access_key = NULL, secret_key = NULL, session_token = NULL,
                        endpoint = NULL, path_style = NULL, anonymous = NULL) {
  s <- zarr_s3store$new(bucket, prefix, region = region, profile = profile, access_key = access_key,
                        secret_key = secret_key, session_token = session_token, endpoint = endpoint,
                        path_style = path_style, anonymous = anonymous, read_only = TRUE)
  p <- s$prefix
  entries <- s$list_dir("")
  if (nzchar(p)) paste0(p, "/", entries) else entries
}
