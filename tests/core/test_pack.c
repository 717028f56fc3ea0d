/* test_pack.c — the packer interface, lower bound, checker and greedy-by-size. */
#include <string.h>

#include "check.h"
#include "test_rand.h"
#include "pack.h"

#define B(size_, start_, end_)                                                                     \
  { .size = (size_), .start = (start_), .end = (end_) }

static uint64_t run(sfc_pack_block_t *b, size_t n, uint64_t align, sfc_pack_result_t *r) {
  sfc_pack_problem_t p = {.blocks = b, .count = n, .alignment = align};
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("greedy-size", &p, NULL, r, &err), err);
  return r->peak;
}

/* The leading-gap case: C slides under B beside A. Inclusive step ranges
 * A [0,1], B [1,2], C [2,3] are the half-open lifetimes below. */
static void test_leading_gap(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(80, 1, 3), B(60, 2, 4)};
  sfc_pack_result_t r;
  CHECK_EQ_U64(run(b, 3, 1, &r), 180);
  CHECK_EQ_U64(b[0].offset, 0);
  CHECK_EQ_U64(b[1].offset, 100);
  CHECK_EQ_U64(b[2].offset, 0);
  CHECK_EQ_U64(r.lower_bound, 180);
  CHECK(r.optimal);
  CHECK_STR_EQ(r.algorithm, "greedy-size");
}

/* Half-open lifetimes: a block freed at t and one allocated at t share bytes. */
static void test_half_open_reuse(void) {
  sfc_pack_block_t b[] = {B(64, 0, 5), B(64, 5, 9), B(32, 9, 10)};
  sfc_pack_result_t r;
  CHECK_EQ_U64(run(b, 3, 1, &r), 64);
  CHECK_EQ_U64(r.lower_bound, 64);
}

static void test_alignment(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(10, 0, 2), B(1, 1, 2)};
  sfc_pack_result_t r;
  run(b, 3, 256, &r);
  for (int i = 0; i < 3; i++)
    CHECK_EQ_U64(b[i].offset % 256, 0);
  CHECK_EQ_U64(r.peak, 512 + 1);              /* 100 -> [0,256), 10 -> [256,512), 1 -> 512 */
  CHECK_EQ_U64(r.lower_bound, 3 * 256 - 255); /* aligned, minus the 1-byte block's padding */
}

/* A model-like trace in the spirit of TFLite Micro's planner tests: a chain with
 * one long skip connection; greedy reaches the lower bound. */
static void test_chain_with_skip(void) {
  sfc_pack_block_t b[] = {B(1000, 0, 6), B(500, 1, 2), B(500, 2, 3),
                          B(200, 3, 4),  B(200, 4, 5), B(800, 5, 7)};
  sfc_pack_result_t r;
  run(b, 6, 1, &r);
  CHECK_EQ_U64(r.lower_bound, 1800);
  CHECK_EQ_U64(r.peak, 1800);
}

static void test_empty_problem(void) {
  sfc_pack_result_t r;
  CHECK_EQ_U64(run(NULL, 0, 1, &r), 0);
  CHECK_EQ_U64(r.lower_bound, 0);
}

static void test_invalid_problems(void) {
  sfc_error_t err;
  sfc_pack_result_t r;
  sfc_pack_block_t zero[] = {B(0, 0, 1)}, empty[] = {B(8, 3, 3)}, ok[] = {B(8, 0, 1)};
  sfc_pack_problem_t p = {.blocks = zero, .count = 1, .alignment = 1};
  CHECK_EQ_U64(sfc_pack_run("greedy-size", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "block 0: size is 0");
  p.blocks = empty;
  CHECK_EQ_U64(sfc_pack_run("greedy-size", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "block 0: lifetime [3, 3) is empty");
  p.blocks = ok;
  p.alignment = 3;
  CHECK_EQ_U64(sfc_pack_run("greedy-size", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "alignment 3 is not a power of two");
  p.alignment = 1;
  CHECK_EQ_U64(sfc_pack_run("no-such-packer", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "unknown packer 'no-such-packer'");
}

static void test_checker_catches_overlap(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(80, 1, 3), B(60, 2, 4)};
  b[0].offset = 0;
  b[1].offset = 50; /* overlaps A at time 1 */
  b[2].offset = 200;
  sfc_pack_problem_t p = {.blocks = b, .count = 3, .alignment = 1};
  sfc_error_t err;
  uint32_t pair[2];
  CHECK_EQ_U64(sfc_pack_check(&p, NULL, pair, &err), SFC_ERR_VERIFY);
  CHECK_STR_EQ(err.message,
               "blocks 0 [0, 100) and 1 [50, 130) overlap in bytes while both live at time 1");
  CHECK_EQ_U64(pair[0], 0);
  CHECK_EQ_U64(pair[1], 1);
  b[1].offset = 100;
  b[2].offset = 3; /* misaligned for alignment 2 */
  p.alignment = 2;
  CHECK_EQ_U64(sfc_pack_check(&p, NULL, pair, &err), SFC_ERR_VERIFY);
  CHECK_STR_EQ(err.message, "block 2: offset 3 is not a multiple of the alignment 2");
}

/* Same offsets, disjoint lifetimes: legal, and the check must stay fast (no n^2). */
static void test_checker_many_reuses(void) {
  enum { N = 100000 };
  static sfc_pack_block_t b[N];
  for (int i = 0; i < N; i++)
    b[i] = (sfc_pack_block_t){.size = 4096, .start = i, .end = i + 1, .offset = 0};
  sfc_pack_problem_t p = {.blocks = b, .count = N, .alignment = 1};
  sfc_error_t err;
  uint64_t peak;
  CHECK_OK(sfc_pack_check(&p, &peak, NULL, &err), err);
  CHECK_EQ_U64(peak, 4096);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

/* Seeded random instances: every packing passes the checker (inside sfc_pack_run)
 * and lies between the lower bound and the sum of sizes. */
static void test_random_instances(void) {
  enum { N = 300 };
  static sfc_pack_block_t b[N];
  for (int round = 0; round < 50; round++) {
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
      int64_t s = (int64_t)(test_rand_next(&rng) % 200);
      b[i] = (sfc_pack_block_t){.size = 1 + test_rand_next(&rng) % 5000,
                                .start = s,
                                .end = s + 1 + (int64_t)(test_rand_next(&rng) % 30)};
      sum += b[i].size;
    }
    sfc_pack_result_t r;
    run(b, N, 1, &r);
    CHECK(r.peak >= r.lower_bound);
    CHECK(r.peak <= sum);
  }
}

/* sfc_pack_page_peak: the leading-gap packing (A 100 B at 0 over [0,2), B 80 at 100 over
 * [1,3), C 60 at 0 over [2,4)) by hand. Pages of 64: A touches 0-1, B 1-2, C 0; at time 1
 * pages 0, 1, 2 -> 192. Pages of 100: A 0, B 1, C 0 -> 200. Pages of 1: the live bytes, 180.
 * One page larger than everything: 1000. Then a free and an allocation at the same time on
 * two pages count one page (frees first), page 0 is refused, and no blocks give 0. */
static void test_page_peak(void) {
  sfc_pack_block_t b[3] = {{.size = 100, .start = 0, .end = 2, .offset = 0},
                           {.size = 80, .start = 1, .end = 3, .offset = 100},
                           {.size = 60, .start = 2, .end = 4, .offset = 0}};
  sfc_pack_problem_t p = {.blocks = b, .count = 3, .alignment = 1};
  sfc_error_t err = {0};
  uint64_t peak = 0;
  const uint64_t page[4] = {64, 100, 1, 1000}, want[4] = {192, 200, 180, 1000};
  for (int i = 0; i < 4; i++) {
    CHECK_OK(sfc_pack_page_peak(&p, page[i], &peak, &err), err);
    CHECK_EQ_U64(peak, want[i]);
  }
  sfc_pack_block_t h[2] = {{.size = 10, .start = 0, .end = 1, .offset = 0},
                           {.size = 10, .start = 1, .end = 2, .offset = 10}};
  sfc_pack_problem_t q = {.blocks = h, .count = 2, .alignment = 1};
  CHECK_OK(sfc_pack_page_peak(&q, 10, &peak, &err), err);
  CHECK_EQ_U64(peak, 10);
  CHECK(sfc_pack_page_peak(&q, 0, &peak, &err) == SFC_ERR_INVALID_ARGUMENT);
  q.count = 0;
  CHECK_OK(sfc_pack_page_peak(&q, 4096, &peak, &err), err);
  CHECK_EQ_U64(peak, 0);
}

/* sfc_pack_page_peak against brute force on random packings: at every time, the pages the
 * live blocks touch, counted one by one. */
static void test_page_peak_random(void) {
  enum { N = 40, T = 30 };
  static sfc_pack_block_t b[N];
  static unsigned char touched[T][128];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < N; i++) {
      int64_t s = (int64_t)(test_rand_next(&rng) % (T - 1));
      b[i] = (sfc_pack_block_t){.size = 1 + test_rand_next(&rng) % 300,
                                .start = s,
                                .end = s + 1 +
                                       (int64_t)(test_rand_next(&rng) % (uint64_t)(T - s - 1))};
    }
    sfc_pack_result_t r;
    run(b, N, 1, &r);
    CHECK(r.peak <= N * 300); /* at most 12000 bytes: page indices below 750 < 128 * 8 */
    uint64_t page = 16 + test_rand_next(&rng) % 512, want = 0;
    memset(touched, 0, sizeof touched);
    for (int t = 0; t < T; t++) {
      uint64_t pages = 0;
      for (int i = 0; i < N; i++)
        if (b[i].start <= t && t < b[i].end)
          for (uint64_t q = b[i].offset / page; q <= (b[i].offset + b[i].size - 1) / page; q++)
            if (!(touched[t][q / 8] & (1u << (q % 8)))) {
              touched[t][q / 8] |= (unsigned char)(1u << (q % 8));
              pages++;
            }
      if (pages * page > want)
        want = pages * page;
    }
    sfc_pack_problem_t p = {.blocks = b, .count = N, .alignment = 1};
    sfc_error_t err = {0};
    uint64_t got = 0;
    CHECK_OK(sfc_pack_page_peak(&p, page, &got, &err), err);
    CHECK_EQ_U64(got, want);
  }
}

/* Pre-placed blocks (TFLite Micro's offline offsets) stay where they were given and
 * the others go around them, whatever packer is asked for. A 100-byte block fixed
 * at 64 over [0,4): B(64,[0,2)) fits below it at 0; C(50,[1,3)) meets both, so it
 * goes above A, at 164. Peak 214. */
static void test_preplaced(void) {
  static const char *packers[] = {"greedy-size", "greedy-area-bestgap", "best-fit", "auto"};
  for (size_t k = 0; k < sizeof packers / sizeof packers[0]; k++) {
    sfc_pack_block_t b[] = {B(100, 0, 4), B(64, 0, 2), B(50, 1, 3)};
    b[0].offset = 64;
    b[0].fixed = true;
    sfc_pack_problem_t p = {.blocks = b, .count = 3, .alignment = 1};
    sfc_pack_result_t r;
    sfc_error_t err = {0};
    CHECK_OK(sfc_pack_run(packers[k], &p, NULL, &r, &err), err);
    CHECK_EQ_U64(b[0].offset, 64);
    CHECK_EQ_U64(b[1].offset, 0);
    CHECK_EQ_U64(b[2].offset, 164);
    CHECK_EQ_U64(r.peak, 214);
    CHECK(strncmp(r.algorithm, "greedy", 6) == 0); /* only the greedy family keeps them */
  }
  /* a misaligned pre-placed offset, and two that collide, are refused */
  sfc_pack_block_t b[] = {B(100, 0, 4), B(64, 0, 2)};
  b[0].fixed = b[1].fixed = true;
  b[0].offset = 3;
  sfc_pack_problem_t p = {.blocks = b, .count = 2, .alignment = 4};
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  CHECK_EQ_I64(sfc_pack_run("greedy-size", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "block 0: pre-placed offset 3 is not a multiple of 4");
  b[0].offset = 32;
  CHECK_EQ_I64(sfc_pack_run("best-fit", &p, NULL, &r, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "pre-placed blocks 0 and 1 overlap in time and bytes");
}

int main(void) {
  RUN(test_leading_gap);
  RUN(test_preplaced);
  RUN(test_half_open_reuse);
  RUN(test_alignment);
  RUN(test_chain_with_skip);
  RUN(test_empty_problem);
  RUN(test_invalid_problems);
  RUN(test_checker_catches_overlap);
  RUN(test_checker_many_reuses);
  RUN(test_random_instances);
  RUN(test_page_peak);
  RUN(test_page_peak_random);
  return check_summary();
}
