# Progress bars of long reads and writes. The engine's periodic interrupt
# check (every ~50 ms, on R's thread) calls the function set here with the
# chunks done and the chunks in all; a bar (the cli package) appears once a
# call has run for a moment and looks like taking 2 s or more.

# Whether reads and writes report progress: the option (default
# interactive()), an interactive session and the cli package.
progress_wanted <- function(interactive = is_interactive()) {
  isTRUE(getOption("zarr.progress", TRUE)) && interactive &&
    (isNamespaceLoaded("cli") || requireNamespace("cli", quietly = TRUE))
}

is_interactive <- function() interactive()

# Evaluate `expr` (an engine call) with a progress bar named `what` when
# one is wanted. The bar belongs to this frame: cli closes it on exit.
with_progress <- function(what, expr) {
  if (!progress_wanted()) return(expr)
  rz_progress_hook(progress_reporter(what, environment()))
  on.exit(rz_progress_hook(NULL))
  expr
}

# The function the engine calls with (done, total) chunks. `now` gives the
# time in seconds (a test passes its own clock).
progress_reporter <- function(what, envir, now = function() proc.time()[["elapsed"]],
                              after = 2) {
  started <- now()
  bar <- NULL
  label <- gsub("([{}])", "\\1\\1", what)
  function(done, total) {
    if (total <= 0) return(invisible())
    if (is.null(bar)) {
      took <- now() - started
      # Too early to guess, or the guess says it is over soon.
      if (took < 0.2 || (done > 0 && took * total / done < after) || (done == 0 && took < after)) {
        return(invisible())
      }
      old <- options(cli.progress_show_after = 0)
      on.exit(options(old))
      bar <<- cli::cli_progress_bar(label, total = total, auto_terminate = FALSE, .envir = envir)
    }
    cli::cli_progress_update(id = bar, set = done, total = total, .envir = envir)
    invisible()
  }
}
