# This package's side of bench/interleaved.py: a process that holds the
# data and the arrays and answers one command per line on standard input,
# "<op> <layout> <order>", with one line of JSON. The driver runs the peers
# and this worker turn about, so each timed run of one side is taken under
# the same machine and file-system state as the other side's.
# Usage: Rscript bench/zarr_worker.R DATA_DIR
script_dir <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1L])) else normalizePath("bench")
})
source(file.path(script_dir, "common.R"))

data_dir <- commandArgs(trailingOnly = TRUE)[[1]]
dir.create(data_dir, showWarnings = FALSE, recursive = TRUE)
data <- make_data(N)
loads <- list()
load_of <- function(layout, order) {
  key <- paste(layout, order)
  if (is.null(loads[[key]])) loads[[key]] <<- workload(data, data_dir, layout, order)
  loads[[key]]
}

answer <- function(words) {
  w <- load_of(words[[2]], words[[3]])
  switch(words[[1]],
    write = as.list(w$write()),
    read = as.list(w$read()),
    writeloop = as.list(w$write_loop()),
    readloop = as.list(w$read_loop()),
    subset = as.list(w$subset()),
    subsetloop = as.list(w$subset_loop()),
    readfresh = as.list(w$read_fresh()),
    read1 = as.list(w$read_1thread()),
    check = list(ok = w$check()),
    stored = list(bytes = w$stored()),
    peak = list(bytes = peak_rss(w$path)),
    stop("unknown command ", words[[1]])
  )
}

input <- file("stdin")
open(input)
cat(jsonlite::toJSON(list(ready = TRUE, threads = zarr_num_threads()), auto_unbox = TRUE), "\n", sep = "")
repeat {
  line <- readLines(input, n = 1L)
  if (!length(line) || identical(line, "quit")) break
  reply <- tryCatch(answer(strsplit(line, " ", fixed = TRUE)[[1]]),
                    error = function(e) list(error = conditionMessage(e)))
  cat(jsonlite::toJSON(reply, auto_unbox = TRUE, digits = NA), "\n", sep = "")
  flush(stdout())
}
