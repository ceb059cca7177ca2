// The kernel's floor under the peer benchmark's write (issue 42): 128 MiB
// of float64 stored as 256 files of 512 KiB, laid out c/i/j as a Zarr v3
// store, by T threads that take rows of files in turn, with no Zarr code:
// no scan of the values, no encoding, only the system calls a file store
// must make. Beside it, bench/interleaved.py's write medians say how far
// above the kernel each contender is, and so what a ratio between two
// contenders can still become.
//   atomic  temporary file created, written, closed and renamed into place
//           (this package's file store, and tensorstore's);
//   create  the file itself created, written, closed (no rename).
// The source buffer is either 4 KiB pages (an R vector: R does not advise
// huge pages) or huge pages (NumPy advises them for arrays of 4 MiB and
// more), since the kernel's copy from it walks those pages.
//   cc -O2 -pthread -o write_floor bench/write_floor.c
//   ./write_floor <dir> [threads] [repeats]
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOTAL (128u << 20)
#define SIDE 16
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static void die(const char *s) {
  perror(s);
  exit(1);
}

struct job {
  const char *root;
  const char *src;
  int atomic, threads, index;
};

static void *writer(void *arg) {
  const struct job *j = arg;
  size_t sz = TOTAL / (SIDE * SIDE);
  char p[4096], t[4096];
  for (int i = j->index; i < SIDE; i += j->threads) {
    for (int k = 0; k < SIDE; k++) {
      const char *src = j->src + (size_t)(i * SIDE + k) * sz;
      snprintf(p, sizeof p, "%s/c/%d/%d", j->root, i, k);
      const char *name = p;
      if (j->atomic) {
        snprintf(t, sizeof t, "%s/c/%d/.tmp-%d", j->root, i, k);
        name = t;
      }
      int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) die(name);
      if (write(fd, src, sz) != (ssize_t)sz) die("write");
      close(fd);
      if (j->atomic && rename(t, p)) die("rename");
    }
  }
  return NULL;
}

// One write of the whole store; the folders are made and the old store
// removed before the clock starts, as the benchmark's own set-up does.
static double write_store(const char *root, const char *src, int atomic, int threads) {
  char p[4096];
  snprintf(p, sizeof p, "rm -rf '%s'", root);
  if (system(p)) die("rm");
  mkdir(root, 0755);
  snprintf(p, sizeof p, "%s/c", root);
  mkdir(p, 0755);
  for (int i = 0; i < SIDE; i++) {
    snprintf(p, sizeof p, "%s/c/%d", root, i);
    mkdir(p, 0755);
  }
  pthread_t tid[64];
  struct job jobs[64];
  double t0 = now();
  for (int k = 0; k < threads; k++) {
    jobs[k] = (struct job){root, src, atomic, threads, k};
    if (pthread_create(&tid[k], NULL, writer, &jobs[k])) die("pthread_create");
  }
  for (int k = 0; k < threads; k++) pthread_join(tid[k], NULL);
  return now() - t0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: write_floor <dir> [threads] [repeats]\n");
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 2, reps = argc > 3 ? atoi(argv[3]) : 9;
  if (threads < 1 || threads > 64) threads = 2;
  if (reps < 1 || reps > 99) reps = 9;
  char root[2048];
  snprintf(root, sizeof root, "%s/write_floor.zarr", argv[1]);
  char *small = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *huge = aligned_alloc(2u << 20, TOTAL);
  if (small == MAP_FAILED || !huge) die("alloc");
  madvise(small, TOTAL, MADV_NOHUGEPAGE);
  madvise(huge, TOTAL, MADV_HUGEPAGE);
  for (size_t i = 0; i < TOTAL; i++) small[i] = huge[i] = (char)(i * 2654435761u >> 24);
  const char *names[4] = {"atomic, 4 KiB source", "atomic, huge-page source", "create, 4 KiB source",
                          "create, huge-page source"};
  static double t[4][99];
  for (int r = 0; r < reps; r++)
    for (int w = 0; w < 4; w++) t[w][r] = write_store(root, w % 2 ? huge : small, w < 2, threads);
  for (int w = 0; w < 4; w++) {
    qsort(t[w], reps, sizeof(double), cmp);
    printf("%-26s %d thread(s): median %.4f s, fastest %.4f s\n", names[w], threads, t[w][reps / 2], t[w][0]);
  }
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd)) die("rm");
  return 0;
}
