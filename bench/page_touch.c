/* The cost of faulting in 128 MiB of new anonymous memory, as a first
 * read's result takes it: 4 KiB pages (MADV_NOHUGEPAGE), huge pages
 * (MADV_HUGEPAGE, as NumPy asks for its large arrays), or 4 KiB pages
 * populated by the kernel in one call (MADV_POPULATE_WRITE). Prints wall
 * and CPU milliseconds and the page faults taken. Run it back to back and
 * after pauses of a few seconds (see bench/FIRST_READ_RESULTS.md):
 *   cc -O2 -o page_touch bench/page_touch.c && ./page_touch huge */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void usage(double *cpu, long *faults) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  *cpu = r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
  *faults = r.ru_minflt;
}

int main(int argc, char **argv) {
  const size_t n = 128ul << 20, huge = 2ul << 20;
  const char *mode = argc > 1 ? argv[1] : "small";
  char *m = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 1;
  char *p = (char *)(((size_t)m + huge - 1) & ~(huge - 1));
  madvise(p, n, strcmp(mode, "huge") == 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  double t0 = now(), c0, c1;
  long f0, f1;
  usage(&c0, &f0);
  if (strcmp(mode, "populate") == 0) {
    madvise(p, n, MADV_POPULATE_WRITE);
  } else {
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  }
  usage(&c1, &f1);
  double t1 = now();
  printf("%s: %.1f ms wall, %.1f ms cpu, %ld faults\n", mode, (t1 - t0) * 1e3, (c1 - c0) * 1e3, f1 - f0);
  return 0;
}
