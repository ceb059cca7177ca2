# `make test`: the testthat suite against the installed package.
# processx (loaded with testthat) takes SIGCHLD; without this it does not
# pass the signal on, parallel never sees its forked children exit, and R
# waits 10 s at exit to print "unable to terminate some child processes".
Sys.setenv(PROCESSX_NOTIFY_OLD_SIGCHLD = "true")
library(testthat)
# Snapshot tests run here (they skip "on CRAN").
Sys.setenv(NOT_CRAN = "true")
library(zarr)

# The progress reporter prints a failure where it happens, far above the
# summary; a CI log that keeps only its tail would lose it. This one also
# lists every failure, one line each, just before the summary.
ListingReporter <- R6::R6Class("ListingReporter", inherit = ProgressReporter,
  public = list(
    broken = character(),
    add_result = function(context, test, result) {
      if (inherits(result, c("expectation_failure", "expectation_error"))) {
        msg <- strsplit(conditionMessage(result), "\n", fixed = TRUE)[[1]]
        self$broken <- c(self$broken, sprintf("%s: %s: %s", self$file_name,
          test, paste(utils::head(msg, 3), collapse = " | ")))
      }
      super$add_result(context, test, result)
    },
    end_reporter = function() {
      if (length(self$broken) > 0) {
        self$cat_line()
        self$rule("Failed tests", line = 2)
        self$cat_line(self$broken)
      }
      super$end_reporter()
    }
  )
)

reporter <- ListingReporter$new(show_praise = FALSE)
res <- test_dir("tests/testthat", package = "zarr", load_package = "installed",
                reporter = reporter, stop_on_failure = FALSE)
df <- as.data.frame(res)
# as.data.frame() flags a test's error only when it was the test's last
# result: an error followed by a warning counted as passed. The reporter
# saw every result.
failed <- sum(df$failed) + sum(df$error) + length(reporter$broken)
quit(status = if (failed > 0) 1 else 0)
