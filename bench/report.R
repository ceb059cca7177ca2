# Combine the peers' results (peers_bench.py) and this package's
# (zarr_bench.R) into bench/RESULTS.md, with each package figure as a ratio
# to the best peer of the same run. Usage: Rscript bench/report.R DIR
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[[1]] else "bench/results"
peers <- jsonlite::fromJSON(file.path(dir, "peers.json"), simplifyVector = FALSE)
ours <- jsonlite::fromJSON(file.path(dir, "zarr.json"), simplifyVector = FALSE)
nbytes <- 4096 * 4096 * 8
sub_bytes <- 256 * 256 * 8
num <- function(x) if (is.null(x)) NA_real_ else as.numeric(x)
gbs <- function(b, s) b / s / 1e9

best_peer <- function(layout, field) {
  v <- vapply(peers$rows, function(r) if (identical(r$layout, layout)) num(r[[field]]) else NA_real_, 0)
  if (all(is.na(v))) return(list(s = NA, impl = NA))
  i <- which.min(v)
  list(s = v[i], impl = peers$rows[[i]]$impl)
}

lines <- c(
  "# Benchmark: zarr (R) against the peers, one run",
  "",
  sprintf("Date: %s. Machine: %s cores, %s. %s. Threads: %s. Median of %s repeats, the peers and this package taking turns on each repeat, page cache warm.",
          ours$meta$date, ours$meta$cores, ours$meta$cpu, ours$meta$r, ours$meta$threads, ours$meta$repeats),
  "",
  sprintf("Peers: %s", peers$meta),
  "",
  "Data: 4096 x 4096 float64 (128 MiB), chunks 256 x 256 (shards 1024 x 1024). Ratios are this package's",
  "time over the best peer's time for the same layout and operation (below 1 is faster).",
  "",
  "| impl | layout | stored MiB | write s | write GB/s | write cpu/wall | read s | read GB/s | read cpu/wall | subset ms | read 1 thread s |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)
fmt_row <- function(r) {
  if (!is.null(r$error) && is.null(r$read_s)) return(sprintf("| %s | %s | ERROR: %s | | | | | | | | |", r$impl, r$layout, r$error))
  sprintf("| %s | %s | %.1f | %.3f | %.2f | %.2f | %.3f | %.2f | %.2f | %.2f | %s |", r$impl, r$layout,
          num(r$stored_bytes) / 2^20, num(r$write_s), gbs(nbytes, num(r$write_s)), num(r$write_cpu),
          num(r$read_s), gbs(nbytes, num(r$read_s)), num(r$read_cpu), num(r$subset_s) * 1e3,
          if (is.null(r$read_1thread_s)) "" else sprintf("%.3f", num(r$read_1thread_s)))
}
for (r in c(peers$rows, ours$rows)) lines <- c(lines, fmt_row(r))

# Every operation three ways, each against the best peer timed the same
# way: back to back (as a session repeats it), after an idle pause (the
# table above), and a first read in a new process.
if (!is.null(ours$rows[[1]]$writeloop_s)) {
  lines <- c(lines, "", "## Ratios to the best peer: back to back, after an idle pause, in a new process", "",
             paste("Back to back: `x <- a[]` (or the write, or the subset) again and again, no pause and no collection",
                   "before a run and the last result alive meanwhile, the peers as this package (peers_bench.py's",
                   "--back-to-back). After an idle pause: each run waits for a quiet machine and collects first",
                   "(R's system.time() does that collection too). New process: the first full read of a process that",
                   "has just opened the array, where every page of the result is new."), "",
             "| layout | order | write b2b | read b2b | subset b2b | write idle | read idle | subset idle | first read, new process |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|")
  ratio <- function(r, field) num(r[[field]]) / best_peer(r$layout, field)$s
  for (r in ours$rows) {
    lines <- c(lines, sprintf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |", r$layout, r$order,
                              ratio(r, "writeloop_s"), ratio(r, "readloop_s"), ratio(r, "subsetloop_s"),
                              ratio(r, "write_s"), ratio(r, "read_s"), ratio(r, "subset_s"), ratio(r, "readfresh_s")))
  }
  lines <- c(lines, "", "| layout | order | read b2b s | read idle s | read new process s | best peer b2b / idle / new process (s) |",
             "|---|---|---:|---:|---:|---|")
  for (r in ours$rows) {
    b <- best_peer(r$layout, "readloop_s")
    i <- best_peer(r$layout, "read_s")
    f <- best_peer(r$layout, "readfresh_s")
    lines <- c(lines, sprintf("| %s | %s | %.3f | %.3f | %.3f | %s %.3f / %s %.3f / %s %.3f |", r$layout, r$order,
                              num(r$readloop_s), num(r$read_s), num(r$readfresh_s),
                              b$impl, b$s, i$impl, i$s, f$impl, f$s))
  }
}

lines <- c(lines, "", "## Ratios to the best peer (package time / best peer time)", "",
           "| layout | order | write | read | subset | best peer (write / read / subset) |", "|---|---|---:|---:|---:|---|")
for (r in ours$rows) {
  w <- best_peer(r$layout, "write_s")
  rd <- best_peer(r$layout, "read_s")
  s <- best_peer(r$layout, "subset_s")
  lines <- c(lines, sprintf("| %s | %s | %.2f | %.2f | %.2f | %s / %s / %s |", r$layout, r$order,
                            num(r$write_s) / w$s, num(r$read_s) / rd$s, num(r$subset_s) / s$s, w$impl, rd$impl, s$impl))
}

# Reads as a session repeats them, `x <- a[]` in a loop: no gc() (or
# gc.collect()) first and the last result alive meanwhile.
if (!is.null(ours$rows[[1]]$readloop_s)) {
  lines <- c(lines, "", "## Reads in a loop", "",
             paste("`x <- a[]` again and again: no wait and no gc() before a run, the last result alive while the next",
                   "is read (peers_bench.py's --back-to-back), three times the repeats. The table above collects",
                   "first, as R's system.time() does; here the package must collect itself (pages.rs)."), "",
             "| layout | order | loop read s | gc-first read s | loop / gc-first | best peer's loop read (s) | loop / best peer's loop | loop / zarrs pipeline's loop |",
             "|---|---|---:|---:|---:|---|---:|---:|")
  zarrs_loop <- function(layout) {
    for (p in peers$rows) if (identical(p$layout, layout) && identical(p$impl, "zarr-python+zarrs")) return(num(p$readloop_s))
    NA_real_
  }
  for (r in ours$rows) {
    p <- best_peer(r$layout, "readloop_s")
    lines <- c(lines, sprintf("| %s | %s | %.3f | %.3f | %.2f | %s (%.3f) | %.2f | %.2f |", r$layout, r$order,
                              num(r$readloop_s), num(r$read_s), num(r$readloop_s) / num(r$read_s),
                              p$impl, p$s, num(r$readloop_s) / p$s, num(r$readloop_s) / zarrs_loop(r$layout)))
  }
  loop_file <- file.path(dir, "read_loop.json")
  if (file.exists(loop_file)) {
    lines <- c(lines, "", paste("The same loop in a new R process for each layout (F order, bench/read_loop.R): resident",
                                "memory above the first read's, in results of 128 MiB, and the median of 400 loop reads",
                                "against 40 reads after a gc()."), "",
               "| layout | resident after 40 reads | after 400 reads | loop read s | gc-first read s | loop / gc-first |",
               "|---|---:|---:|---:|---:|---:|")
    for (r in jsonlite::fromJSON(loop_file, simplifyVector = FALSE)) {
      lines <- c(lines, sprintf("| %s | %+.2f | %+.2f | %.4f | %.4f | %.2f |", r$layout, num(r$rss40), num(r$rss400),
                                num(r$loop_s), num(r$gc_first_s), num(r$loop_over_gc_first)))
    }
  }
}

# The fastest of the repeats, the floor under this machine's noise (the
# file system's state moves a write by up to 2x from one run to the next).
if (!is.null(ours$rows[[1]]$write_min_s)) {
  lines <- c(lines, "", "Fastest run of each contender (same repeats), as a ratio to the fastest peer run:", "",
             "| layout | order | write | read | subset |", "|---|---|---:|---:|---:|")
  for (r in ours$rows) {
    lines <- c(lines, sprintf("| %s | %s | %.2f | %.2f | %.2f |", r$layout, r$order,
                              num(r$write_min_s) / best_peer(r$layout, "write_min_s")$s,
                              num(r$read_min_s) / best_peer(r$layout, "read_min_s")$s,
                              num(r$subset_min_s) / best_peer(r$layout, "subset_min_s")$s))
  }
}

# The same write turns again on another file system (bench/run.sh), when run.
write_section <- function(tag, title, about) {
  peer_file <- file.path(dir, sprintf("peers%s.json", tag))
  our_file <- file.path(dir, sprintf("zarr%s.json", tag))
  if (!file.exists(peer_file) || !file.exists(our_file)) return(character())
  tp <- jsonlite::fromJSON(peer_file, simplifyVector = FALSE)$rows
  to <- jsonlite::fromJSON(our_file, simplifyVector = FALSE)
  best <- function(layout, field) {
    v <- vapply(tp, function(r) if (identical(r$layout, layout)) num(r[[field]]) else NA_real_, 0)
    list(s = min(v, na.rm = TRUE), impl = tp[[which.min(v)]]$impl)
  }
  out <- c("", paste("##", title), "", about, "",
           "| layout | order | write s | ratio (median) | ratio (fastest run) | best peer (s) |",
           "|---|---|---:|---:|---:|---|")
  for (r in to) {
    w <- best(r$layout, "write_s")
    out <- c(out, sprintf("| %s | %s | %.3f | %.2f | %.2f | %s (%.3f) |", r$layout, r$order, num(r$write_s),
                          num(r$write_s) / w$s, num(r$write_min_s) / best(r$layout, "write_min_s")$s,
                          w$impl, w$s))
  }
  out
}
lines <- c(lines,
  write_section("_writes", "Writes with the stores on tmpfs", paste(
    "The same write turns again, with every store in /dev/shm: what is left is each library's own work and",
    "the kernel's page-cache copy, without ext4's state (which the deletions of the repeats keep changing).")),
  write_section("_journal", "Writes on an ext4 with a journal", paste(
    "The same write turns again on a freshly made, loop-mounted ext4 with a journal (as mkfs.ext4 makes it,",
    "and as users' machines have it). The table at the top writes to this machine's root ext4, which has",
    "no journal: in that mode ext4 will not reuse an inode deleted in the last seconds, and every new file",
    "first steps over those the earlier repeats freed, so write times there depend on what ran before.")))

phys <- peers$physical
ref <- function(pattern) {
  for (p in phys) if (grepl(pattern, p$label, fixed = TRUE)) return(p$bytes / p$seconds / 1e9)
  NA_real_
}
memcpy <- ref("np.copyto")
zstd1 <- ref("zstd level 1 decompress")
row_of <- function(layout, order) Filter(function(r) r$layout == layout && r$order == order, ours$rows)[[1]]
none_f <- row_of("none", "F")
zstd_f <- row_of("zstd1", "F")
zstd_c <- row_of("zstd1", "C")
lines <- c(lines, "", "## Targets", "",
  sprintf("- C-order read / column-major read (zstd1): %.2f (target <= 1.3); uncompressed: %.2f",
          num(zstd_c$read_s) / num(zstd_f$read_s), num(row_of("none", "C")$read_s) / num(none_f$read_s)),
  sprintf("- Uncompressed full read: %.2f GB/s = %.0f%% of memcpy (%.2f GB/s; target >= 50%%)",
          gbs(nbytes, num(none_f$read_s)), 100 * gbs(nbytes, num(none_f$read_s)) / memcpy, memcpy),
  sprintf("- zstd1 full read: %.2f GB/s = %.0f%% of two threads of single-thread zstd decompress (%.2f GB/s x 2; target >= 80%%)",
          gbs(nbytes, num(zstd_f$read_s)), 100 * gbs(nbytes, num(zstd_f$read_s)) / (2 * zstd1), zstd1),
  sprintf("- Peak memory of a full zstd1 read: %.2f x the result (target < 1.3)", num(zstd_f$read_peak_bytes) / nbytes))
sc <- ours$scaling
lines <- c(lines, "", "## Scaling and hierarchies", "", "| full read | s | GB/s |", "|---|---:|---:|")
for (s in sc) lines <- c(lines, sprintf("| %g MiB | %.3f | %.2f |", num(s$mib), num(s$read_s), s$mib * 2^20 / num(s$read_s) / 1e9))
lines <- c(lines, "",
  sprintf("512 MiB / 32 MiB read time: %.1f (target <= 17)", num(sc[[3]]$read_s) / num(sc[[1]]$read_s)),
  sprintf(paste("Opening 1,000 arrays in 100 groups: %.3f s by listing, %.3f s with consolidated metadata",
                "(%s store read(s), counted by the test HTTP server serving the same folder)."),
          num(ours$hierarchy$plain_s), num(ours$hierarchy$consolidated_s),
          format(num(ours$hierarchy$consolidated_requests))))
cube_file <- file.path(dir, "cube.json")
if (file.exists(cube_file)) {
  lines <- c(lines, "", "## A float32 cube, and many small chunks", "",
             paste("A float32 cube of 365 x 180 x 360 in chunks of 30 x 90 x 90 (blosc zstd, NaN fill) read in full",
                   "against the zarrs pipeline on the same store (bench/cube_read.R; R returns doubles, twice the",
                   "bytes): back to back and after a collection."), "",
             "| chunk order | b2b s | zarrs b2b s | ratio b2b | gc-first s | zarrs gc-first s | ratio gc-first |",
             "|---|---:|---:|---:|---:|---:|---:|")
  for (r in jsonlite::fromJSON(cube_file, simplifyVector = FALSE)) {
    lines <- c(lines, sprintf("| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |", r$order, num(r$kept_s),
                              num(r$zarrs_kept_s), num(r$ratio_kept), num(r$gc_first_s), num(r$zarrs_gc_first_s),
                              num(r$ratio_gc_first)))
  }
  lines <- c(lines, "", "Target: <= 1.2 x the zarrs pipeline.")
}
small_file <- file.path(dir, "small_chunks.json")
if (file.exists(small_file)) {
  lines <- c(lines, "",
             paste("The 128 MiB field in 4096 chunks of 64 x 64 against 256 chunks of 256 x 256 (bench/small_chunks.R),",
                   "gc first; the ratio is the time in 4096 chunks over the time in 256 (target <= 1.2)."), "",
             "| codec | write 4096 s | write 256 s | write ratio | read 4096 s | read 256 s | read ratio |",
             "|---|---:|---:|---:|---:|---:|---:|")
  for (r in jsonlite::fromJSON(small_file, simplifyVector = FALSE)) {
    lines <- c(lines, sprintf("| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |", r$codec, num(r$write_small_s),
                              num(r$write_large_s), num(r$write_ratio), num(r$read_small_s), num(r$read_large_s),
                              num(r$read_ratio)))
  }
}
writeLines(lines, "bench/RESULTS.md")
cat(lines, sep = "\n")
