# Renders every man page to text, as ?topic shows it, and counts what
# markdown left raw: backticks, [links] in square brackets, "::name" with
# no package, **bold**. Also runs tools::checkRd() on each page. Prints one
# line per page with a problem and a total; exits with status 1 when any.
#   Rscript tools/check-rd.R [man folder]
args <- commandArgs(trailingOnly = TRUE)
man <- if (length(args)) args[[1L]] else "man"
pages <- sort(list.files(man, pattern = "[.]Rd$", full.names = TRUE))
patterns <- c(
  backtick = "`",
  link = "(^|[ (])\\[[A-Za-z_.][A-Za-z0-9_.:]*(\\(\\))?\\]",
  no_package = "(^|[^A-Za-z0-9_])::[A-Za-z]",
  bold = "\\*\\*[^*]+\\*\\*"
)
leftovers <- 0L
rd_problems <- 0L
for (p in pages) {
  rd <- tools::parse_Rd(p)
  text <- utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE)))
  # Examples are R code: brackets and backticks there are meant.
  ex <- grep("^Examples:?$", text)
  if (length(ex)) text <- text[seq_len(ex[1L] - 1L)]
  hits <- vapply(patterns, function(re) sum(grepl(re, text)), integer(1))
  checks <- tools::checkRd(rd)
  if (any(hits > 0L) || length(checks)) {
    found <- hits[hits > 0L]
    cat(sprintf("%s: %s%s\n", basename(p),
                paste(sprintf("%s %d", names(found), found), collapse = ", "),
                if (length(checks)) paste0(" checkRd: ", paste(checks, collapse = "; ")) else ""))
    for (re in patterns) {
      for (line in grep(re, text, value = TRUE)) cat("    ", line, "\n")
    }
  }
  leftovers <- leftovers + sum(hits)
  rd_problems <- rd_problems + length(checks)
}
cat(sprintf("%d pages, %d lines with raw markdown, %d checkRd notes\n",
            length(pages), leftovers, rd_problems))
quit(status = as.integer(leftovers + rd_problems > 0L))
