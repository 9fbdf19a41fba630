/* alloc_tracker: an LD_PRELOAD library that counts the bytes PyTorch's CPU allocator holds.
 *
 * PyTorch (c10::alloc_cpu) allocates every CPU tensor with posix_memalign(64, n) and releases
 * it with free(); oneDNN uses the same calls for its scratch buffers. This library wraps
 * posix_memalign, aligned_alloc, memalign, free and realloc (realloc only so that a tracked
 * pointer that is reallocated keeps correct bookkeeping; plain malloc/calloc are not counted)
 * and keeps, by *requested* size:
 *   live bytes, the peak of live bytes since the last reset, live allocation count,
 *   and optionally a trace of every tracked alloc/free.
 *
 * API (C, for Python's ctypes: ctypes.CDLL(None).tracker_live() once preloaded):
 *   int      tracker_active(void);          1 (proves the library is preloaded)
 *   uint64_t tracker_live(void);            bytes live now
 *   uint64_t tracker_peak(void);            highest live bytes since the last reset
 *   void     tracker_reset_peak(void);      peak := live
 *   uint64_t tracker_live_count(void);      tracked allocations live now
 *   uint64_t tracker_total_allocs(void);    tracked allocations since load
 *   int      tracker_trace_start(const char *path);  0, or -1 (cannot open / already tracing)
 *   int      tracker_trace_start_with_live(const char *path);  the same, but first writes an
 *            'a' line for every allocation live at the start (in table order, not id order;
 *            alignment 0 for blocks that came from realloc)
 *   int      tracker_trace_mark(const char *text);  writes "# text" into the trace; -1 if none
 *   int64_t  tracker_trace_stop(void);      events written, or -1 if not tracing
 *
 * Trace format (text, one event per line; tools/capture_trace.py compresses it):
 *   a <id> <size> <alignment>     allocation number <id> (ids count from 1 since load)
 *   f <id>                        free of allocation <id>
 *   # <text>                      a mark (tracker_trace_mark), e.g. "# phase backward"
 * Frees of allocations older than the trace are skipped, unless it started "with_live".
 *
 * Thread safety: every entry point takes one mutex; counters and the pointer table are
 * consistent across threads. The library never calls malloc itself (its table lives in
 * mmap'ed memory and the trace goes through write(2) from a static buffer), so it cannot
 * recurse into itself. Limit: 4M simultaneously live tracked allocations (then it aborts).
 *
 * Build: cc -shared -fPIC -O2 -o liboomguard_alloc_tracker.so tools/alloc_tracker.c -ldl -lpthread
 * (tests/CMakeLists.txt builds the same as target oomguard_alloc_tracker.)
 * With -DALLOC_TRACKER_SELF_TEST it becomes a test program (see the end of this file).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- the real functions ---------------------------------------------------------------- */

typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*free_fn)(void *);
typedef void *(*realloc_fn)(void *, size_t);

static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;
static memalign_fn real_memalign;
static free_fn real_free;
static realloc_fn real_realloc;

/* glibc's own entry points, used only while dlsym itself is running. */
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static __thread int resolving;

static void resolve(void) {
  if (real_free) return;
  resolving = 1;
  real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (aligned_alloc_fn)dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
  real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
  free_fn f = (free_fn)dlsym(RTLD_NEXT, "free");
  resolving = 0;
  __atomic_store_n(&real_free, f, __ATOMIC_RELEASE);
}

/* ---- pointer table: open addressing, linear probing, backward-shift deletion -------------- */

typedef struct {
  uintptr_t ptr; /* 0 = empty */
  uint64_t size;
  uint64_t id;
  uint64_t align;
} entry_t;

#define TABLE_BITS 23 /* 8M slots x 32 B = 256 MiB of address space, touched lazily */
#define TABLE_SLOTS ((size_t)1 << TABLE_BITS)
#define TABLE_MAX_LIVE (TABLE_SLOTS / 2)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *table;
static uint64_t live_bytes, peak_bytes, live_count, total_allocs, next_id = 1;

static size_t slot_of(uintptr_t p) {
  uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> (64 - TABLE_BITS));
}

static int table_init(void) {
  if (table) return 1;
  void *m = mmap(NULL, TABLE_SLOTS * sizeof(entry_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 0;
  table = (entry_t *)m;
  return 1;
}

/* ---- trace buffer ---------------------------------------------------------------------------- */

static int trace_fd = -1;
static int64_t trace_events;
static char trace_buf[1 << 20];
static size_t trace_len;
static uint64_t trace_first_id; /* frees of ids below this are not traced */

static void trace_flush(void) {
  size_t off = 0;
  while (off < trace_len) {
    ssize_t w = write(trace_fd, trace_buf + off, trace_len - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      break; /* disk full: drop the rest rather than crash the traced program */
    }
    off += (size_t)w;
  }
  trace_len = 0;
}

static char *put_u64(char *out, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *out++ = tmp[--n];
  return out;
}

/* REQUIRES: lock held, trace_fd >= 0. */
static void trace_event(char op, uint64_t id, uint64_t size, uint64_t align) {
  if (trace_len + 80 > sizeof trace_buf) trace_flush();
  char *p = trace_buf + trace_len;
  *p++ = op;
  *p++ = ' ';
  p = put_u64(p, id);
  if (op == 'a') {
    *p++ = ' ';
    p = put_u64(p, size);
    *p++ = ' ';
    p = put_u64(p, align);
  }
  *p++ = '\n';
  trace_len = (size_t)(p - trace_buf);
  trace_events++;
}

/* ---- bookkeeping ----------------------------------------------------------------------------- */

static void record_alloc(void *ptr, size_t size, size_t align) {
  if (!ptr) return;
  pthread_mutex_lock(&lock);
  if (!table_init() || live_count >= TABLE_MAX_LIVE) {
    pthread_mutex_unlock(&lock);
    static const char msg[] = "alloc_tracker: pointer table full or unavailable\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    abort();
  }
  size_t i = slot_of((uintptr_t)ptr);
  while (table[i].ptr && table[i].ptr != (uintptr_t)ptr) i = (i + 1) & (TABLE_SLOTS - 1);
  if (table[i].ptr == (uintptr_t)ptr) {
    /* A stale entry (its free went around us): replace it. */
    live_bytes -= table[i].size;
    live_count--;
  }
  uint64_t id = next_id++;
  table[i].ptr = (uintptr_t)ptr;
  table[i].size = size;
  table[i].id = id;
  table[i].align = align;
  live_bytes += size;
  live_count++;
  total_allocs++;
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  if (trace_fd >= 0) trace_event('a', id, size, align);
  pthread_mutex_unlock(&lock);
}

/* Returns 1 if ptr was tracked (and forgets it). */
static int record_free(void *ptr) {
  if (!ptr) return 0;
  int found = 0;
  pthread_mutex_lock(&lock);
  if (table && live_count) {
    size_t i = slot_of((uintptr_t)ptr);
    while (table[i].ptr && table[i].ptr != (uintptr_t)ptr) i = (i + 1) & (TABLE_SLOTS - 1);
    if (table[i].ptr == (uintptr_t)ptr) {
      found = 1;
      live_bytes -= table[i].size;
      live_count--;
      if (trace_fd >= 0 && table[i].id >= trace_first_id) trace_event('f', table[i].id, 0, 0);
      /* Backward-shift deletion keeps every probe chain intact without tombstones. */
      size_t hole = i, j = i;
      for (;;) {
        j = (j + 1) & (TABLE_SLOTS - 1);
        if (!table[j].ptr) break;
        size_t home = slot_of(table[j].ptr);
        /* Move j into the hole unless its home lies cyclically in (hole, j]. */
        int home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
          table[hole] = table[j];
          hole = j;
        }
      }
      table[hole].ptr = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return found;
}

/* ---- the wrappers ------------------------------------------------------------------------- */

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  resolve();
  int rc = real_posix_memalign(out, align, size);
  if (rc == 0) record_alloc(*out, size, align);
  return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size) {
  resolve();
  void *p = real_aligned_alloc(align, size);
  record_alloc(p, size, align);
  return p;
}

EXPORT void *memalign(size_t align, size_t size) {
  if (resolving) return __libc_memalign(align, size);
  resolve();
  void *p = real_memalign(align, size);
  record_alloc(p, size, align);
  return p;
}

EXPORT void free(void *ptr) {
  if (!ptr) return;
  free_fn f = __atomic_load_n(&real_free, __ATOMIC_ACQUIRE);
  if (!f) {
    if (resolving) {
      __libc_free(ptr);
      return;
    }
    resolve();
    f = real_free;
  }
  record_free(ptr);
  f(ptr);
}

EXPORT void *realloc(void *ptr, size_t size) {
  if (resolving) return __libc_realloc(ptr, size);
  resolve();
  if (!ptr) return real_realloc(ptr, size); /* a plain malloc: not counted */
  /* Look up without removing first: most reallocs are of untracked malloc blocks. */
  int tracked = 0;
  pthread_mutex_lock(&lock);
  if (table && live_count) {
    size_t i = slot_of((uintptr_t)ptr);
    while (table[i].ptr && table[i].ptr != (uintptr_t)ptr) i = (i + 1) & (TABLE_SLOTS - 1);
    if (table[i].ptr == (uintptr_t)ptr) {
      tracked = 1;
    }
  }
  pthread_mutex_unlock(&lock);
  if (!tracked) return real_realloc(ptr, size);
  void *q = real_realloc(ptr, size);
  if (!q && size) return NULL; /* failed: the old block is still live and tracked */
  record_free(ptr);
  if (q) record_alloc(q, size, 0);
  return q;
}

/* ---- the API ----------------------------------------------------------------------------------- */

EXPORT int tracker_active(void) { return 1; }

EXPORT uint64_t tracker_live(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = live_bytes;
  pthread_mutex_unlock(&lock);
  return v;
}

EXPORT uint64_t tracker_peak(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = peak_bytes;
  pthread_mutex_unlock(&lock);
  return v;
}

EXPORT void tracker_reset_peak(void) {
  pthread_mutex_lock(&lock);
  peak_bytes = live_bytes;
  pthread_mutex_unlock(&lock);
}

EXPORT uint64_t tracker_live_count(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = live_count;
  pthread_mutex_unlock(&lock);
  return v;
}

EXPORT uint64_t tracker_total_allocs(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = total_allocs;
  pthread_mutex_unlock(&lock);
  return v;
}

static int trace_start(const char *path, int include_live) {
  /* open(2) does not allocate; do it outside the lock anyway. */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  pthread_mutex_lock(&lock);
  if (trace_fd >= 0) {
    pthread_mutex_unlock(&lock);
    close(fd);
    return -1;
  }
  trace_fd = fd;
  trace_events = 0;
  trace_len = 0;
  trace_first_id = include_live ? 0 : next_id;
  if (include_live && table && live_count) {
    for (size_t i = 0; i < TABLE_SLOTS; i++) {
      if (table[i].ptr) trace_event('a', table[i].id, table[i].size, table[i].align);
    }
  }
  pthread_mutex_unlock(&lock);
  return 0;
}

EXPORT int tracker_trace_start(const char *path) { return trace_start(path, 0); }

EXPORT int tracker_trace_start_with_live(const char *path) { return trace_start(path, 1); }

EXPORT int tracker_trace_mark(const char *text) {
  pthread_mutex_lock(&lock);
  if (trace_fd < 0) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  size_t n = strnlen(text, 200);
  if (trace_len + n + 4 > sizeof trace_buf) trace_flush();
  char *p = trace_buf + trace_len;
  *p++ = '#';
  *p++ = ' ';
  for (size_t i = 0; i < n; i++) *p++ = text[i] == '\n' ? ' ' : text[i];
  *p++ = '\n';
  trace_len = (size_t)(p - trace_buf);
  pthread_mutex_unlock(&lock);
  return 0;
}

EXPORT int64_t tracker_trace_stop(void) {
  pthread_mutex_lock(&lock);
  if (trace_fd < 0) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  trace_flush();
  int fd = trace_fd;
  trace_fd = -1;
  int64_t n = trace_events;
  pthread_mutex_unlock(&lock);
  close(fd);
  return n;
}

#ifdef ALLOC_TRACKER_SELF_TEST
/* A test program: linked into the executable, these definitions interpose libc's exactly as
 * LD_PRELOAD does. Checks exact counts for each entry point, peak/reset, realloc, untracked
 * malloc, 8 threads, table collisions, and the trace. Prints one line per failure; exit 0 if
 * all pass. */
#include <assert.h>

static int failures;
#define CHECK_EQ(a, b)                                                                        \
  do {                                                                                        \
    unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b);          \
    if (va_ != vb_) {                                                                         \
      fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, #a, va_, \
              #b, vb_);                                                                       \
      failures++;                                                                             \
    }                                                                                         \
  } while (0)

static void *thread_body(void *arg) {
  size_t seed = (size_t)arg;
  void *ptrs[64];
  for (int round = 0; round < 2000; round++) {
    for (int i = 0; i < 64; i++) {
      if (posix_memalign(&ptrs[i], 64, 100 + (seed * 7 + (size_t)i) % 1000)) abort();
    }
    for (int i = 0; i < 64; i++) free(ptrs[i]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  uint64_t base = tracker_live(), base_count = tracker_live_count();
  void *a = NULL;
  CHECK_EQ(posix_memalign(&a, 64, 1000), 0);
  CHECK_EQ((uintptr_t)a % 64, 0);
  void *b = aligned_alloc(128, 4096);
  void *c = memalign(256, 333);
  CHECK_EQ(tracker_live() - base, 1000 + 4096 + 333);
  CHECK_EQ(tracker_live_count() - base_count, 3);
  void *m = malloc(5000); /* plain malloc is not counted */
  CHECK_EQ(tracker_live() - base, 1000 + 4096 + 333);
  tracker_reset_peak();
  CHECK_EQ(tracker_peak(), tracker_live());
  free(b);
  CHECK_EQ(tracker_live() - base, 1000 + 333);
  CHECK_EQ(tracker_peak() - base, 1000 + 4096 + 333); /* the peak stays */
  tracker_reset_peak();
  CHECK_EQ(tracker_peak() - base, 1000 + 333);
  /* realloc of a tracked block moves its bookkeeping; of an untracked one changes nothing. */
  a = realloc(a, 3000);
  CHECK_EQ(tracker_live() - base, 3000 + 333);
  m = realloc(m, 9000);
  CHECK_EQ(tracker_live() - base, 3000 + 333);
  void *z = realloc(c, 0); /* glibc: frees c */
  CHECK_EQ(tracker_live() - base, 3000);
  free(z);
  free(m);
  free(a);
  free(NULL);
  CHECK_EQ(tracker_live(), base);
  CHECK_EQ(tracker_live_count(), base_count);

  /* Many live blocks at once exercise probing and backward-shift deletion. */
  enum { N = 20000 };
  static void *many[N];
  uint64_t expect = 0;
  for (int i = 0; i < N; i++) {
    if (posix_memalign(&many[i], 64, (size_t)i + 1)) abort();
    expect += (uint64_t)i + 1;
  }
  CHECK_EQ(tracker_live() - base, expect);
  for (int i = 0; i < N; i += 2) {
    free(many[i]);
    expect -= (uint64_t)i + 1;
  }
  CHECK_EQ(tracker_live() - base, expect);
  for (int i = 1; i < N; i += 2) free(many[i]);
  CHECK_EQ(tracker_live(), base);

  /* Threads: every byte allocated is freed, the peak is bounded by 8 threads' worth. */
  tracker_reset_peak();
  pthread_t th[8];
  for (size_t t = 0; t < 8; t++) pthread_create(&th[t], NULL, thread_body, (void *)t);
  for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
  CHECK_EQ(tracker_live(), base);
  CHECK_EQ(tracker_live_count(), base_count);
  if (tracker_peak() - base > 8ull * 64 * 1100 || tracker_peak() == base) {
    fprintf(stderr, "thread peak %llu out of range\n", (unsigned long long)(tracker_peak() - base));
    failures++;
  }

  /* Trace: two allocs, one free, in order, with ids; a free of an older block is skipped. */
  const char *path = argc > 1 ? argv[1] : "/tmp/alloc_tracker_self_test.trace";
  void *old = NULL;
  if (posix_memalign(&old, 64, 10)) abort();
  CHECK_EQ(tracker_trace_start(path), 0);
  CHECK_EQ(tracker_trace_start(path), (unsigned long long)-1);
  void *t1 = NULL;
  if (posix_memalign(&t1, 64, 777)) abort();
  void *t2 = aligned_alloc(4096, 8192);
  CHECK_EQ(tracker_trace_mark("phase x"), 0);
  free(t1);
  free(old);
  CHECK_EQ(tracker_trace_stop(), 3);
  CHECK_EQ(tracker_trace_mark("too late"), (unsigned long long)-1);
  CHECK_EQ(tracker_trace_stop(), (unsigned long long)-1);
  free(t2);
  char text[256] = {0};
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  unsigned long long id1, id2, idf, s1, s2, al1, al2;
  if (sscanf(text, "a %llu %llu %llu\na %llu %llu %llu\n# phase x\nf %llu\n", &id1, &s1, &al1,
             &id2, &s2, &al2, &idf) != 7) {
    fprintf(stderr, "unexpected trace:\n%s", text);
    failures++;
  } else {
    CHECK_EQ(s1, 777);
    CHECK_EQ(al1, 64);
    CHECK_EQ(s2, 8192);
    CHECK_EQ(al2, 4096);
    CHECK_EQ(id2, id1 + 1);
    CHECK_EQ(idf, id1);
  }
  /* with_live: the live block appears first, and its free is traced. */
  void *pre = NULL;
  if (posix_memalign(&pre, 64, 4242)) abort();
  uint64_t live_blocks = tracker_live_count();
  CHECK_EQ(tracker_trace_start_with_live(path), 0);
  free(pre);
  CHECK_EQ(tracker_trace_stop(), live_blocks + 1);
  f = fopen(path, "r");
  if (!f) return 1;
  n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  if (!strstr(text, " 4242 64\n")) {
    fprintf(stderr, "live block missing from trace:\n%s", text);
    failures++;
  }
  if (failures) return 1;
  printf("alloc_tracker self-test passed\n");
  return 0;
}
#endif
