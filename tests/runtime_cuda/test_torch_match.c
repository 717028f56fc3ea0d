/* test_torch_match.c — the PyTorch allocator's matcher on the host: malloc'ed arena,
 * counting fallback. Exact replay, each fallback reason, frees, stats, recording with
 * hand-derived clocks, the pointer table against a reference, and the two-run flow
 * (record -> CSV -> the compiler's CSV reader and packer, checked by sfc_pack_check ->
 * packed CSV -> replay) entirely on the host. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pack.h"
#include "pack_csv.h"
#include "torch_match.h"

/* The fallback: malloc with a live count; its pointers are never in the arena. */
static long fb_live, fb_calls, fb_frees;
static int fb_fail;
static void *fb_alloc(void *user, size_t size) {
  fb_calls++;
  if (fb_fail)
    return NULL;
  fb_live++;
  return malloc(size);
}
static void fb_free(void *user, void *ptr, size_t size) {
  fb_live--;
  fb_frees++;
  free(ptr);
}
static void fb_reset(void) {
  fb_live = fb_calls = fb_frees = 0;
  fb_fail = 0;
}

/* A hand-packed 4-request iteration (times from the request clock):
 *   k  lower upper size offset     a(0) b(1) free a(2) c(3) d(4) free b(5) free c(6) free d(7)
 *   0    0    2   256    0         c may reuse a's bytes; d overlaps b and c in time.
 *   1    1    5   512  256
 *   2    3    6   256    0
 *   3    4    7   128  768
 * Arena = 896. */
static const sfcrt_torch_block_t plan4[4] = {
    {0, 2, 256, 0}, {1, 5, 512, 256}, {3, 6, 256, 0}, {4, 7, 128, 768}};

static void check_plan4_valid(void) {
  sfc_pack_block_t b[4];
  for (int i = 0; i < 4; i++)
    b[i] = (sfc_pack_block_t){.size = plan4[i].size,
                              .start = (int64_t)plan4[i].lower,
                              .end = (int64_t)plan4[i].upper,
                              .offset = plan4[i].offset};
  sfc_pack_problem_t p = {.blocks = b, .count = 4, .alignment = 128};
  uint64_t peak = 0;
  sfc_error_t err;
  CHECK_EQ_U64(sfc_pack_check(&p, &peak, NULL, &err), SFC_OK);
  CHECK_EQ_U64(peak, 896);
}

static void make_replay(sfcrt_torch_match_t *m, char *arena) {
  sfcrt_torch_trace_t t = {.count = 4, .has_offsets = true, .capacity_ = 4};
  t.blocks = malloc(sizeof(plan4));
  memcpy(t.blocks, plan4, sizeof(plan4));
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_match_init_replay(m, &t, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  CHECK(t.blocks == NULL); /* ownership moved */
  CHECK_EQ_U64(m->stats.arena_bytes, 896);
  sfcrt_torch_match_set_arena(m, arena);
}

/* The iteration of plan4, in its exact order; returns the four pointers. */
static void run_plan4(sfcrt_torch_match_t *m, void *p[4], const size_t sizes[4]) {
  sfcrt_torch_match_iteration_begin(m, NULL);
  p[0] = sfcrt_torch_match_alloc(m, sizes[0]);
  p[1] = sfcrt_torch_match_alloc(m, sizes[1]);
  sfcrt_torch_match_free(m, p[0], sizes[0]);
  p[2] = sfcrt_torch_match_alloc(m, sizes[2]);
  p[3] = sfcrt_torch_match_alloc(m, sizes[3]);
  sfcrt_torch_match_free(m, p[1], sizes[1]);
  sfcrt_torch_match_free(m, p[2], sizes[2]);
  sfcrt_torch_match_free(m, p[3], sizes[3]);
}

static const size_t exact[4] = {256, 512, 256, 128};

static void test_exact_replay(void) {
  static char arena[896];
  sfcrt_torch_match_t m;
  fb_reset();
  check_plan4_valid();
  make_replay(&m, arena);
  for (int it = 0; it < 3; it++) {
    void *p[4];
    run_plan4(&m, p, exact);
    CHECK(p[0] == arena + 0 && p[1] == arena + 256 && p[2] == arena + 0 && p[3] == arena + 768);
    CHECK_EQ_U64(m.live_count, 0);
  }
  CHECK_EQ_U64(m.stats.iterations, 3);
  CHECK_EQ_U64(m.stats.requests, 12);
  CHECK_EQ_U64(m.stats.planned, 12);
  CHECK_EQ_U64(m.stats.fallback, 0);
  CHECK_EQ_U64(m.stats.frees, 12);
  CHECK_EQ_U64(m.stats.fallback_frees + m.stats.unknown_frees, 0);
  CHECK_EQ_U64(m.stats.short_iterations, 0);
  CHECK_EQ_U64(fb_calls, 0);
  sfcrt_torch_match_deinit(&m);
}

static int in_arena(const void *p, const char *arena) {
  return (const char *)p >= arena && (const char *)p < arena + 896;
}

static void test_size_mismatch(void) {
  static char arena[896];
  sfcrt_torch_match_t m;
  fb_reset();
  make_replay(&m, arena);
  const size_t sizes[4] = {256, 512, 300, 128}; /* request 2 is bigger than profiled */
  void *p[4];
  run_plan4(&m, p, sizes);
  CHECK(p[0] == arena && p[1] == arena + 256 && p[3] == arena + 768); /* 3 still planned */
  CHECK(p[2] != NULL && !in_arena(p[2], arena));
  CHECK_EQ_U64(m.stats.planned, 3);
  CHECK_EQ_U64(m.stats.fallback, 1);
  CHECK_EQ_U64(m.stats.fallback_size, 1);
  CHECK_EQ_U64(m.stats.fallback_frees, 1); /* p[2] went back to the fallback */
  CHECK_EQ_U64(fb_live, 0);
  CHECK_EQ_U64(m.stats.fallback_bytes_peak, 300);
  CHECK_EQ_U64(m.stats.fallback_bytes_live, 0);
  /* smaller is a mismatch too */
  const size_t smaller[4] = {255, 512, 256, 128};
  run_plan4(&m, p, smaller);
  CHECK(!in_arena(p[0], arena) && p[2] == arena);
  CHECK_EQ_U64(m.stats.fallback_size, 2);
  sfcrt_torch_match_deinit(&m);
}

static void test_extra_and_short(void) {
  static char arena[896];
  sfcrt_torch_match_t m;
  fb_reset();
  make_replay(&m, arena);
  void *p[4];
  run_plan4(&m, p, exact);
  void *x = sfcrt_torch_match_alloc(&m, 256); /* a 5th request */
  void *y = sfcrt_torch_match_alloc(&m, 64);
  CHECK(x && y && !in_arena(x, arena) && !in_arena(y, arena));
  CHECK_EQ_U64(m.stats.fallback_extra, 2);
  sfcrt_torch_match_free(&m, x, 256);
  sfcrt_torch_match_free(&m, y, 64);
  CHECK_EQ_U64(fb_live, 0);
  /* an iteration with only 2 requests, then a new one: counted as short */
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *a = sfcrt_torch_match_alloc(&m, 256);
  void *b = sfcrt_torch_match_alloc(&m, 512);
  CHECK(a == arena && b == arena + 256);
  sfcrt_torch_match_free(&m, a, 256);
  sfcrt_torch_match_free(&m, b, 512);
  run_plan4(&m, p, exact);
  CHECK_EQ_U64(m.stats.short_iterations, 1);
  CHECK_EQ_U64(m.stats.planned, 4 + 2 + 4);
  sfcrt_torch_match_deinit(&m);
}

/* The framework frees block 0 late: request 2 (planned at a's offset) conflicts. */
static void test_conflict(void) {
  static char arena[896];
  sfcrt_torch_match_t m;
  fb_reset();
  make_replay(&m, arena);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *a = sfcrt_torch_match_alloc(&m, 256);
  void *b = sfcrt_torch_match_alloc(&m, 512);
  void *c = sfcrt_torch_match_alloc(&m, 256); /* a still live: conflict */
  void *d = sfcrt_torch_match_alloc(&m, 128);
  CHECK(a == arena && b == arena + 256 && d == arena + 768);
  CHECK(c && !in_arena(c, arena));
  CHECK_EQ_U64(m.stats.fallback_conflict, 1);
  memset(a, 1, 256); /* a and c do not share bytes: writing c leaves a intact */
  memset(c, 2, 256);
  CHECK(((unsigned char *)a)[255] == 1);
  sfcrt_torch_match_free(&m, a, 256);
  sfcrt_torch_match_free(&m, b, 512);
  sfcrt_torch_match_free(&m, c, 256);
  sfcrt_torch_match_free(&m, d, 128);
  /* a block kept across the iteration boundary conflicts with its own slot next time */
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *a1 = sfcrt_torch_match_alloc(&m, 256);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *a2 = sfcrt_torch_match_alloc(&m, 256);
  CHECK(a1 == arena && a2 != NULL && !in_arena(a2, arena));
  CHECK_EQ_U64(m.stats.fallback_conflict, 2);
  sfcrt_torch_match_free(&m, a1, 256);
  sfcrt_torch_match_free(&m, a2, 256);
  CHECK_EQ_U64(fb_live, 0);
  CHECK_EQ_U64(m.live_count, 0);
  sfcrt_torch_match_deinit(&m);
}

static void test_outside_unknown_failed(void) {
  static char arena[896];
  sfcrt_torch_match_t m;
  fb_reset();
  make_replay(&m, arena);
  void *w = sfcrt_torch_match_alloc(&m, 256); /* before the first iteration_begin */
  CHECK(w && !in_arena(w, arena));
  CHECK_EQ_U64(m.stats.fallback_outside, 1);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  CHECK(sfcrt_torch_match_alloc(&m, 0) == NULL); /* 0 bytes: not a request */
  CHECK_EQ_U64(m.stats.requests, 1);
  void *a = sfcrt_torch_match_alloc(&m, 256);
  CHECK(a == arena);
  sfcrt_torch_match_free(&m, arena + 8, 256); /* inside the arena, not a live block */
  CHECK_EQ_U64(m.stats.unknown_frees, 1);
  sfcrt_torch_match_free(&m, NULL, 0); /* ignored */
  fb_fail = 1;
  CHECK(sfcrt_torch_match_alloc(&m, 1000) == NULL); /* request 1: size mismatch, fallback fails */
  CHECK_EQ_U64(m.stats.failed, 1);
  fb_fail = 0;
  sfcrt_torch_match_free(&m, a, 256);
  sfcrt_torch_match_free(&m, w, 256);
  CHECK_EQ_U64(m.stats.frees, 3);
  CHECK_EQ_U64(m.stats.fallback, m.stats.fallback_size + m.stats.fallback_extra +
                                     m.stats.fallback_conflict + m.stats.fallback_outside);
  CHECK_EQ_U64(fb_live, 0);
  sfcrt_torch_match_deinit(&m);
  /* replay refuses a trace without offsets */
  sfcrt_torch_trace_t t = {.count = 0, .has_offsets = false};
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_match_init_replay(&m, &t, fb_alloc, fb_free, NULL, NULL, &err),
               SFC_ERR_BAD_INPUT);
  CHECK(strstr(err.message, "offset") != NULL);
  sfcrt_torch_match_deinit(&m);
}

/* Record: alloc a(100) b(200), free a, alloc c(300), free b, [c live], next begin.
 * Clock: a [0,2), b [1,4), c [3,5) — derived by hand from "tick after every event". */
static void test_record(void) {
  sfcrt_torch_match_t m;
  sfc_error_t err;
  fb_reset();
  CHECK_EQ_U64(sfcrt_torch_match_init_record(&m, 8, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_torch_match_record_finish(&m, &err), SFC_ERR_STATE); /* nothing begun */
  void *early = sfcrt_torch_match_alloc(&m, 64); /* before the first begin: not recorded */
  bool done = true;
  sfcrt_torch_match_iteration_begin(&m, &done);
  CHECK(!done);
  void *a = sfcrt_torch_match_alloc(&m, 100);
  void *b = sfcrt_torch_match_alloc(&m, 200);
  sfcrt_torch_match_free(&m, a, 100);
  sfcrt_torch_match_free(&m, early, 64); /* not recorded: no tick */
  void *c = sfcrt_torch_match_alloc(&m, 300);
  sfcrt_torch_match_free(&m, b, 200);
  sfcrt_torch_match_iteration_begin(&m, &done);
  CHECK(done);
  CHECK_EQ_U64(m.rec_count, 3);
  const sfcrt_torch_block_t want[3] = {{0, 2, 100, 0}, {1, 4, 200, 0}, {3, 5, 300, 0}};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_U64(m.rec[i].lower, want[i].lower);
    CHECK_EQ_U64(m.rec[i].upper, want[i].upper);
    CHECK_EQ_U64(m.rec[i].size, want[i].size);
  }
  CHECK_EQ_U64(m.stats.recorded, 3);
  /* the second iteration is not recorded; c's free after the end changes nothing */
  void *d = sfcrt_torch_match_alloc(&m, 1);
  sfcrt_torch_match_free(&m, c, 300);
  sfcrt_torch_match_free(&m, d, 1);
  CHECK_EQ_U64(m.rec_count, 3);
  CHECK_EQ_U64(m.rec[2].upper, 5);
  CHECK_EQ_U64(sfcrt_torch_match_record_finish(&m, &err), SFC_OK);
  CHECK_EQ_U64(m.stats.fallback, 5); /* record mode serves everything from the fallback */
  CHECK_EQ_U64(fb_live, 0);
  sfcrt_torch_match_deinit(&m);

  /* overflow: 3 requests with room for 2 */
  fb_reset();
  CHECK_EQ_U64(sfcrt_torch_match_init_record(&m, 2, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *q[3];
  for (int i = 0; i < 3; i++)
    q[i] = sfcrt_torch_match_alloc(&m, 10);
  CHECK_EQ_U64(sfcrt_torch_match_record_finish(&m, &err), SFC_ERR_LIMIT);
  CHECK(strstr(err.message, "SFCRT_TORCH_MAX_REQUESTS") != NULL);
  CHECK_EQ_U64(m.stats.recorded, 0);
  for (int i = 0; i < 3; i++)
    sfcrt_torch_match_free(&m, q[i], 10);
  sfcrt_torch_match_deinit(&m);
  CHECK_EQ_U64(sfcrt_torch_match_init_record(&m, 0, fb_alloc, fb_free, NULL, NULL, &err),
               SFC_ERR_LIMIT);
  sfcrt_torch_match_deinit(&m);
}

/* The pointer table against a reference (linear search), through thousands of random
 * allocations and frees in random order: every free must close the right request. */
static void test_record_table(void) {
  enum { N = 5000 };
  sfcrt_torch_match_t m;
  sfc_error_t err;
  fb_reset();
  CHECK_EQ_U64(sfcrt_torch_match_init_record(&m, N, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  static void *live[N];
  static uint32_t live_k[N];
  static uint64_t want_upper[N];
  size_t nlive = 0, made = 0;
  uint64_t clock = 0, x = 99;
  while (made < N || nlive > 0) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    bool do_alloc = made < N && (nlive == 0 || (x >> 40) % 3 != 0);
    if (do_alloc) {
      live[nlive] = sfcrt_torch_match_alloc(&m, 1 + (x >> 50) % 64);
      live_k[nlive++] = (uint32_t)made++;
      clock++;
    } else {
      size_t i = (size_t)(x >> 33) % nlive;
      want_upper[live_k[i]] = clock++; /* the free happens at clock, then it ticks */
      sfcrt_torch_match_free(&m, live[i], 1);
      live[i] = live[--nlive];
      live_k[i] = live_k[nlive];
    }
  }
  int bad = 0;
  for (size_t k = 0; k < N; k++)
    bad += m.rec[k].upper != want_upper[k] || m.rec[k].lower >= m.rec[k].upper;
  CHECK_EQ_U64(bad, 0);
  CHECK_EQ_U64(m.clock, 2 * N);
  CHECK_EQ_U64(fb_live, 0);
  sfcrt_torch_match_deinit(&m);
}

/* One iteration of the two-run flow's small "model": 6 requests of sz with a
 * forward/backward shape (request 1 is freed before requests 3..5 are made). Both runs
 * make exactly this sequence. */
static void model_iteration(sfcrt_torch_match_t *m, const size_t sz[6]) {
  void *p[6];
  for (int i = 0; i < 3; i++)
    p[i] = sfcrt_torch_match_alloc(m, sz[i]);
  sfcrt_torch_match_free(m, p[1], sz[1]);
  for (int i = 3; i < 6; i++)
    p[i] = sfcrt_torch_match_alloc(m, sz[i]);
  for (int i = 0; i < 6; i++)
    if (i != 1)
      sfcrt_torch_match_free(m, p[i], sz[i]);
}

/* Record -> CSV -> compiler's reader -> greedy packer (checked) -> packed CSV ->
 * replay: the second run is served entirely from the plan. */
static void test_two_run_flow(void) {
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char trace[512], packed[512];
  snprintf(trace, sizeof(trace), "%s/sfc_torch_trace_%d.csv", dir, (int)getpid());
  snprintf(packed, sizeof(packed), "%s/sfc_torch_packed_%d.csv", dir, (int)getpid());
  sfcrt_torch_match_t m;
  sfc_error_t err;
  fb_reset();
  /* run 1: a small "model": 6 requests with a forward/backward shape */
  static const size_t sz[6] = {1024, 2048, 512, 2048, 1024, 4096};
  CHECK_EQ_U64(sfcrt_torch_match_init_record(&m, 64, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  for (int it = 0; it < 2; it++) {
    bool done = false;
    sfcrt_torch_match_iteration_begin(&m, &done);
    if (done)
      CHECK_EQ_U64(sfcrt_torch_trace_write_file(trace, m.rec, m.rec_count, false, &err), SFC_OK);
    model_iteration(&m, sz);
  }
  sfcrt_torch_match_deinit(&m);

  /* sfc pack's half, through the compiler's own CSV reader and packer */
  sfc_pack_csv_t csv;
  CHECK_EQ_U64(sfc_pack_csv_read_file(trace, &csv, &err), SFC_OK);
  CHECK_EQ_U64(csv.count, 6);
  CHECK(!csv.has_offsets);
  for (size_t i = 0; i < csv.count; i++)
    CHECK_EQ_U64(csv.blocks[i].size, sz[i]);
  sfc_pack_problem_t prob = {.blocks = csv.blocks, .count = csv.count, .alignment = 512};
  sfc_pack_result_t res;
  CHECK_EQ_U64(sfc_pack_run("greedy-size", &prob, NULL, &res, &err), SFC_OK);
  uint64_t peak = 0;
  CHECK_EQ_U64(sfc_pack_check(&prob, &peak, NULL, &err), SFC_OK);
  FILE *f = fopen(packed, "w");
  CHECK(f != NULL);
  if (f) {
    sfc_pack_csv_write(f, &csv, true);
    fclose(f);
  }
  sfc_pack_csv_free(&csv);

  /* run 2 */
  sfcrt_torch_trace_t plan;
  CHECK_EQ_U64(sfcrt_torch_trace_read_file(packed, true, NULL, &plan, &err), SFC_OK);
  CHECK_EQ_U64(plan.count, 6);
  CHECK_EQ_U64(sfcrt_torch_trace_arena_bytes(&plan), peak);
  char *arena = malloc(peak);
  CHECK_EQ_U64(sfcrt_torch_match_init_replay(&m, &plan, fb_alloc, fb_free, NULL, NULL, &err),
               SFC_OK);
  sfcrt_torch_match_set_arena(&m, arena);
  for (int it = 0; it < 3; it++) {
    sfcrt_torch_match_iteration_begin(&m, NULL);
    model_iteration(&m, sz);
  }
  CHECK_EQ_U64(m.stats.planned, 18);
  CHECK_EQ_U64(m.stats.fallback, 0);
  sfcrt_torch_match_deinit(&m);
  free(arena);
  remove(trace);
  remove(packed);
}

/* Streams (issue 13, item 4): planned memory freed on one stream and handed to a
 * request on another makes that stream wait for the free; same-stream reuse does not.
 * A recording sync callback stands in for the device's events. */
static struct {
  long freed, reuses;
  uint64_t k[16];
  void *stream[16], *old[16];
  int recorded[16];
  sfc_status_t fail;
} sy;
static int sy_freed(void *user, uint64_t k, void *stream) {
  sy.freed++;
  return k % 2 == 0; /* pretend an event was recorded for even requests */
}
static sfc_status_t sy_reuse(void *user, void *stream, uint64_t k, void *old_stream, int recorded) {
  if (sy.reuses < 16) {
    sy.k[sy.reuses] = k;
    sy.stream[sy.reuses] = stream;
    sy.old[sy.reuses] = old_stream;
    sy.recorded[sy.reuses] = recorded;
  }
  sy.reuses++;
  return sy.fail;
}

static void test_streams(void) {
  static char arena[896];
  void *A = (void *)0xA, *B = (void *)0xB;
  sfcrt_torch_match_t m;
  fb_reset();
  memset(&sy, 0, sizeof(sy));
  make_replay(&m, arena);
  sfcrt_torch_sync_t sync = {sy_freed, sy_reuse, NULL};
  sfcrt_torch_match_set_sync(&m, &sync);
  void *p[4];
  /* plan4's order; requests 0 and 1 on A, 2 and 3 on B: 2 reuses 0's bytes */
  for (int it = 0; it < 2; it++) {
    sfcrt_torch_match_iteration_begin(&m, NULL);
    p[0] = sfcrt_torch_match_alloc_on(&m, 256, A);
    p[1] = sfcrt_torch_match_alloc_on(&m, 512, A);
    sfcrt_torch_match_free_on(&m, p[0], 256, A);
    p[2] = sfcrt_torch_match_alloc_on(&m, 256, B);
    p[3] = sfcrt_torch_match_alloc_on(&m, 128, B);
    sfcrt_torch_match_free_on(&m, p[1], 512, A);
    sfcrt_torch_match_free_on(&m, p[2], 256, B);
    sfcrt_torch_match_free_on(&m, p[3], 128, B);
    CHECK(p[0] == arena && p[2] == arena);
    if (it == 0) {
      /* one wait: request 2 (B) after request 0's free on A (even: recorded) */
      CHECK_EQ_U64(sy.reuses, 1);
      CHECK(sy.k[0] == 0 && sy.stream[0] == B && sy.old[0] == A && sy.recorded[0] == 1);
    }
  }
  /* iteration 2: request 0 (A) waits for request 2's free on B, request 2 (B) for
   * request 0's free on A again */
  CHECK_EQ_U64(sy.reuses, 3);
  CHECK(sy.k[1] == 2 && sy.stream[1] == A && sy.old[1] == B);
  CHECK(sy.k[2] == 0 && sy.stream[2] == B && sy.old[2] == A);
  CHECK_EQ_U64(m.stats.stream_waits, 3);
  CHECK_EQ_U64(sy.freed, 8);
  CHECK_EQ_U64(m.stats.planned, 8);
  CHECK_EQ_U64(m.retired_count, 3); /* [0,256) B, [256,768) A, [768,896) B */
  /* a failing wait sends the request to the fallback, and the range keeps its history */
  sy.fail = SFC_ERR_DEVICE;
  sfcrt_torch_match_iteration_begin(&m, NULL);
  p[0] = sfcrt_torch_match_alloc_on(&m, 256, A);
  CHECK(!in_arena(p[0], arena));
  CHECK_EQ_U64(m.stats.fallback_stream, 1);
  CHECK_EQ_U64(m.retired_count, 3);
  sfcrt_torch_match_free_on(&m, p[0], 256, A);
  sfcrt_torch_match_deinit(&m);
  CHECK_EQ_U64(fb_live, 0);
}

/* Partial overlaps: retired ranges are trimmed and split by each reuse. */
static void test_streams_split(void) {
  static char arena[1024];
  static const sfcrt_torch_block_t plan3[3] = {{0, 1, 1024, 0}, {2, 3, 256, 256}, {4, 5, 1024, 0}};
  void *A = (void *)0xA, *B = (void *)0xB, *C = (void *)0xC;
  sfcrt_torch_trace_t t = {.count = 3, .has_offsets = true, .capacity_ = 3};
  t.blocks = malloc(sizeof(plan3));
  memcpy(t.blocks, plan3, sizeof(plan3));
  sfcrt_torch_match_t m;
  sfc_error_t err;
  fb_reset();
  memset(&sy, 0, sizeof(sy));
  CHECK_EQ_U64(sfcrt_torch_match_init_replay(&m, &t, fb_alloc, fb_free, NULL, NULL, &err), SFC_OK);
  sfcrt_torch_match_set_arena(&m, arena);
  sfcrt_torch_sync_t sync = {sy_freed, sy_reuse, NULL};
  sfcrt_torch_match_set_sync(&m, &sync);
  sfcrt_torch_match_iteration_begin(&m, NULL);
  void *a = sfcrt_torch_match_alloc_on(&m, 1024, A);
  sfcrt_torch_match_free_on(&m, a, 1024, A);
  CHECK_EQ_U64(m.retired_count, 1);
  void *b = sfcrt_torch_match_alloc_on(&m, 256, B); /* [256,512) splits A's range */
  CHECK(b == arena + 256);
  CHECK_EQ_U64(m.retired_count, 2);
  CHECK(m.retired[0].offset == 0 && m.retired[0].end == 256 && m.retired[0].stream == A);
  CHECK(m.retired[1].offset == 512 && m.retired[1].end == 1024 && m.retired[1].stream == A);
  sfcrt_torch_match_free_on(&m, b, 256, B);
  CHECK_EQ_U64(m.retired_count, 3);
  void *c = sfcrt_torch_match_alloc_on(&m, 1024, C); /* meets all three */
  CHECK(c == arena);
  CHECK_EQ_U64(m.retired_count, 0);
  CHECK_EQ_U64(sy.reuses, 4); /* b after A; c after A, B, A */
  CHECK(sy.old[1] == A && sy.old[2] == B && sy.old[3] == A && sy.k[2] == 1);
  sfcrt_torch_match_free_on(&m, c, 1024, C);
  /* same stream: no wait */
  sfcrt_torch_match_iteration_begin(&m, NULL);
  a = sfcrt_torch_match_alloc_on(&m, 1024, C);
  CHECK_EQ_U64(sy.reuses, 4);
  sfcrt_torch_match_free_on(&m, a, 1024, C);
  CHECK_EQ_U64(m.stats.stream_waits, 4);
  sfcrt_torch_match_deinit(&m);
}

int main(void) {
  RUN(test_streams);
  RUN(test_streams_split);
  RUN(test_exact_replay);
  RUN(test_size_mismatch);
  RUN(test_extra_and_short);
  RUN(test_conflict);
  RUN(test_outside_unknown_failed);
  RUN(test_record);
  RUN(test_record_table);
  RUN(test_two_run_flow);
  return check_summary();
}
