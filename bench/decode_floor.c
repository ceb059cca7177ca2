// The floor of a full read of the peers' 4096 x 4096 float64 arrays
// (issue 21): what any client of libzstd pays on this machine's cores to
// decode every chunk and put its elements into a reused column-major
// result, with no Zarr code at all (no metadata, keys, plans or pools).
// The compressed chunks are read into memory once, at load, so the floor
// has no file system in it; the raw layout reads its files every time,
// since reading them is all its read does.
// Per layout and order, one run prints (seconds, wall):
//   decode   every chunk decompressed into its thread's buffer, nothing else
//   scatter  the copy (order F: 256 columns of 2 KiB per chunk) or the
//            transpose (order C) of 256 decoded chunks (128 MiB) into the result
//   fused    both, chunk by chunk (decoded into the thread's buffer, which
//            stays in cache, then scattered): the floor a client is held to
//   fused1   fused on one thread
// Uncompressed (raw) chunks: "decode" is open + read + close into the
// thread's buffer; "fused" in order F is one readv of the file straight
// into the chunk's 256 columns of the result (what a store of R's own
// order allows, and the rows of a C-order result alike).
// Chunks are handed out by an atomic counter to FLOOR_THREADS threads
// (default 2), so both cores are busy from the first chunk to the last.
// Arrays: Zarr v3, chunk keys c/i/j, chunks 256 x 256 of float64; "chunks"
// (one file per chunk) or "shard" (4 x 4 shards of 4 x 4 inner chunks,
// index of (offset, nbytes) pairs at the end, then a crc32c).
// Build against the libzstd the crate links (zstd-sys builds libzstd.a,
// 1.5.7; its header is in the zstd-sys source):
//   cc -O3 -march=native -pthread -I<zstd lib dir> -o decode_floor bench/decode_floor.c <libzstd.a>
// Usage:
//   decode_floor <array dir> <chunks|shard> <zstd|raw> <F|C> [repeats]
//   decode_floor serve    (lines "<dir> <chunks|shard> <zstd|raw> <F|C>" on
//                          stdin, one JSON line back per run; the arrays
//                          stay loaded between lines: bench/decode_floor.py)
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define N 4096
#define CH 256
#define NC (N / CH)
#define NCHUNKS (NC * NC)
#define CHBYTES ((size_t)CH * CH * 8)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static void die(const char *s) {
  perror(s);
  exit(1);
}

typedef struct {
  char dir[4096];
  int zstd, corder;
  void *frame[NCHUNKS]; // compressed chunk (zstd) in memory
  size_t size[NCHUNKS];
  char path[NCHUNKS][4200]; // chunk file (raw)
} Array;

static void *slurp(const char *p, size_t *n) {
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(p);
  struct stat st;
  if (fstat(fd, &st)) die("fstat");
  void *b = malloc(st.st_size ? st.st_size : 1);
  if (read(fd, b, st.st_size) != st.st_size) die("read");
  close(fd);
  *n = st.st_size;
  return b;
}

static Array *load(const char *dir, int shard, int zstd, int corder) {
  Array *a = calloc(1, sizeof *a);
  snprintf(a->dir, sizeof a->dir, "%s", dir);
  a->zstd = zstd;
  a->corder = corder;
  char p[4200];
  if (!shard) {
    for (int i = 0; i < NC; i++)
      for (int j = 0; j < NC; j++) {
        int k = i * NC + j;
        snprintf(a->path[k], sizeof a->path[k], "%s/c/%d/%d", dir, i, j);
        if (zstd) a->frame[k] = slurp(a->path[k], &a->size[k]);
      }
    return a;
  }
  // 4 x 4 shards of 4 x 4 inner chunks; inner chunk (u, v) of shard (s, t)
  // is chunk (4s + u, 4t + v).
  for (int s = 0; s < 4; s++)
    for (int t = 0; t < 4; t++) {
      size_t n;
      snprintf(p, sizeof p, "%s/c/%d/%d", dir, s, t);
      unsigned char *b = slurp(p, &n);
      const unsigned char *ix = b + n - 4 - 16 * 16;
      for (int u = 0; u < 4; u++)
        for (int v = 0; v < 4; v++) {
          uint64_t off, len;
          memcpy(&off, ix + (u * 4 + v) * 16, 8);
          memcpy(&len, ix + (u * 4 + v) * 16 + 8, 8);
          int k = (4 * s + u) * NC + (4 * t + v);
          a->frame[k] = malloc(len);
          memcpy(a->frame[k], b + off, len);
          a->size[k] = len;
        }
      free(b);
    }
  return a;
}

// Chunk k's elements into the result: columns of 2 KiB (F) or a transpose
// in 32 x 32 tiles (C: chunk element (r, c) at r * CH + c).
static void scatter(const double *src, double *out, int k, int corder) {
  size_t r0 = (size_t)(k / NC) * CH, c0 = (size_t)(k % NC) * CH;
  double *o = out + r0 + c0 * N;
  if (!corder) {
    for (int c = 0; c < CH; c++) memcpy(o + (size_t)c * N, src + (size_t)c * CH, CH * 8);
    return;
  }
  for (int rb = 0; rb < CH; rb += 32)
    for (int cb = 0; cb < CH; cb += 32)
      for (int c = cb; c < cb + 32; c++) {
        double *oc = o + (size_t)c * N + rb;
        const double *s = src + (size_t)rb * CH + c;
        for (int r = 0; r < 32; r++) oc[r] = s[(size_t)r * CH];
      }
}

enum { DECODE, SCATTER, FUSED };
typedef struct {
  Array *a;
  int what;
  double *out;
  double **decoded; // SCATTER's sources
  atomic_int next;
} Job;

static void decode_one(Array *a, ZSTD_DCtx *dc, int k, double *buf) {
  if (a->zstd) {
    size_t r = ZSTD_decompressDCtx(dc, buf, CHBYTES, a->frame[k], a->size[k]);
    if (ZSTD_isError(r) || r != CHBYTES) {
      fprintf(stderr, "chunk %d: %s\n", k, ZSTD_getErrorName(r));
      exit(1);
    }
    return;
  }
  int fd = open(a->path[k], O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(a->path[k]);
  if (read(fd, buf, CHBYTES) != (ssize_t)CHBYTES) die("read");
  close(fd);
}

// An uncompressed chunk whose columns are the result's (F, or rows of a
// C-order result) is read by one readv into its 256 places: no buffer.
static void read_straight(Array *a, double *out, int k) {
  size_t r0 = (size_t)(k / NC) * CH, c0 = (size_t)(k % NC) * CH;
  struct iovec iov[CH];
  for (int c = 0; c < CH; c++) {
    iov[c].iov_base = out + r0 + (c0 + c) * N;
    iov[c].iov_len = CH * 8;
  }
  int fd = open(a->path[k], O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(a->path[k]);
  if (readv(fd, iov, CH) != (ssize_t)CHBYTES) die("readv");
  close(fd);
}

static void *worker(void *arg) {
  Job *j = arg;
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  double *buf = aligned_alloc(64, CHBYTES);
  memset(buf, 0, CHBYTES);
  int k;
  while ((k = atomic_fetch_add(&j->next, 1)) < NCHUNKS) {
    if (j->what == SCATTER) {
      scatter(j->decoded[k], j->out, k, j->a->corder);
      continue;
    }
    if (j->what == FUSED && !j->a->zstd && !j->a->corder) {
      read_straight(j->a, j->out, k);
      continue;
    }
    decode_one(j->a, dc, k, buf);
    if (j->what == FUSED) scatter(buf, j->out, k, j->a->corder);
  }
  free(buf);
  ZSTD_freeDCtx(dc);
  return NULL;
}

static int nthreads(void) {
  const char *e = getenv("FLOOR_THREADS");
  return e && atoi(e) > 0 ? atoi(e) : 2;
}

static double run(Array *a, int what, double *out, double **decoded, int threads) {
  Job j = {.a = a, .what = what, .out = out, .decoded = decoded};
  atomic_init(&j.next, 0);
  pthread_t t[64];
  double t0 = now();
  for (int i = 1; i < threads; i++) pthread_create(&t[i], NULL, worker, &j);
  worker(&j);
  for (int i = 1; i < threads; i++) pthread_join(t[i], NULL);
  return now() - t0;
}

static double *out_buf, **decoded_bufs;

static void setup(void) {
  if (out_buf) return;
  out_buf = aligned_alloc(4096, (size_t)N * N * 8);
  memset(out_buf, 0, (size_t)N * N * 8); // faulted once: the result is reused
  decoded_bufs = malloc(NCHUNKS * sizeof *decoded_bufs);
  for (int k = 0; k < NCHUNKS; k++) {
    decoded_bufs[k] = aligned_alloc(64, CHBYTES);
    for (size_t i = 0; i < CH * CH; i++) decoded_bufs[k][i] = (double)(k + i);
  }
}

static void once(Array *a, double r[4]) {
  int th = nthreads();
  r[0] = run(a, DECODE, out_buf, NULL, th);
  r[1] = run(a, SCATTER, out_buf, decoded_bufs, th);
  r[2] = run(a, FUSED, out_buf, NULL, th);
  r[3] = run(a, FUSED, out_buf, NULL, 1);
}

static int cmpd(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static Array *parse(const char *dir, const char *mode, const char *codec, const char *order) {
  return load(dir, !strcmp(mode, "shard"), !strcmp(codec, "zstd"), !strcmp(order, "C"));
}

int main(int argc, char **argv) {
  setup();
  if (argc == 2 && !strcmp(argv[1], "serve")) {
    struct { char key[8400]; Array *a; } cache[32];
    int ncache = 0;
    char line[8400], dir[4096], mode[16], codec[16], order[4];
    while (fgets(line, sizeof line, stdin)) {
      if (sscanf(line, "%4095s %15s %15s %3s", dir, mode, codec, order) != 4) break;
      Array *a = NULL;
      for (int i = 0; i < ncache; i++)
        if (!strcmp(cache[i].key, line)) a = cache[i].a;
      if (!a) {
        a = parse(dir, mode, codec, order);
        if (ncache < 32) {
          snprintf(cache[ncache].key, sizeof cache[ncache].key, "%s", line);
          cache[ncache++].a = a;
        }
      }
      double r[4];
      once(a, r);
      printf("{\"decode\": %.6f, \"scatter\": %.6f, \"fused\": %.6f, \"fused1\": %.6f}\n", r[0],
             r[1], r[2], r[3]);
      fflush(stdout);
    }
    return 0;
  }
  if (argc < 5) {
    fprintf(stderr, "usage: %s <dir> <chunks|shard> <zstd|raw> <F|C> [repeats] | serve\n", argv[0]);
    return 2;
  }
  int reps = argc > 5 ? atoi(argv[5]) : 5;
  Array *a = parse(argv[1], argv[2], argv[3], argv[4]);
  double r[4], m[4][64];
  once(a, r); // warm-up
  if (reps > 64) reps = 64;
  for (int i = 0; i < reps; i++) {
    once(a, r);
    for (int w = 0; w < 4; w++) m[w][i] = r[w];
  }
  const char *name[4] = {"decode", "scatter", "fused", "fused1"};
  for (int w = 0; w < 4; w++) {
    qsort(m[w], reps, sizeof(double), cmpd);
    printf("%-8s %.4f s (median of %d, %d threads)\n", name[w], m[w][reps / 2], reps,
           w == 3 ? 1 : nthreads());
  }
  return 0;
}
