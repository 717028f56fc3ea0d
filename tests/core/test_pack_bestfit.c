/* test_pack_bestfit.c — best-fit with offset lines, the greedy orders and gap rules,
 * and the decomposition. Expected offsets and peaks are derived by hand in the
 * comments (the seed's rules applied step by step); every packing is also checked
 * by a brute-force O(n^2) overlap test written here, independent of sfc_pack_check. */
#include "check.h"
#include "test_rand.h"
#include "pack.h"

#define B(size_, start_, end_)                                                                     \
  { .size = (size_), .start = (start_), .end = (end_) }

/* Every pair that overlaps in time must be disjoint in bytes; offsets aligned.
 * Returns the peak, or UINT64_MAX on a collision. */
static uint64_t brute_peak(const sfc_pack_block_t *b, size_t n, uint64_t align) {
  uint64_t peak = 0;
  for (size_t i = 0; i < n; i++) {
    if (b[i].offset % align != 0)
      return UINT64_MAX;
    if (b[i].offset + b[i].size > peak)
      peak = b[i].offset + b[i].size;
    for (size_t j = i + 1; j < n; j++)
      if (b[i].start < b[j].end && b[j].start < b[i].end && b[i].offset < b[j].offset + b[j].size &&
          b[j].offset < b[i].offset + b[i].size)
        return UINT64_MAX;
  }
  return peak;
}

static uint64_t pack(const char *name, sfc_pack_block_t *b, size_t n, uint64_t align,
                     sfc_pack_result_t *r) {
  sfc_pack_problem_t p = {.blocks = b, .count = n, .alignment = align};
  sfc_error_t err = {0};
  sfc_pack_options_t opt = {.time_limit_s = 2, .mip_max_blocks = 12};
  CHECK_OK(sfc_pack_run(name, &p, &opt, r, &err), err);
  CHECK_EQ_U64(brute_peak(b, n, align), r->peak);
  return r->peak;
}

/* The leading-gap case. Best-fit: line [0,4)@0 takes the longest-lived block;
 * all live 2 steps, so the largest, A, at 0: lines [0,2)@100 [2,4)@0. The lowest,
 * [2,4)@0, holds only C: at 0, line [2,4)@60. Nothing lies inside [2,4) any more
 * (B is [1,3)): lift to 100 and merge into [0,4)@100; B at 100. Peak 180. */
static void test_bestfit_leading_gap(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(80, 1, 3), B(60, 2, 4)};
  sfc_pack_result_t r;
  CHECK_EQ_U64(pack("best-fit", b, 3, 1, &r), 180);
  CHECK_EQ_U64(b[0].offset, 0);
  CHECK_EQ_U64(b[1].offset, 100);
  CHECK_EQ_U64(b[2].offset, 0);
  CHECK(r.optimal);
  CHECK_STR_EQ(r.algorithm, "best-fit");
}

/* Best-fit beats greedy-size. b0 3 [0,1), b1 4 [2,4), b2 1 [1,4), b3 3 [0,2);
 * live: t0 6, t1 4, t2 5, t3 5: lower bound 6.
 * greedy-size: b1 at 0; b0 (3, earlier index than b3) at 0; b3 above b0 at 3;
 * b2 [1,4) meets b1 [0,4) and b3 [3,6): at 6. Peak 7.
 * best-fit: [0,4)@0 takes b2 (lifetime 3) at 0 -> [0,1)@0 [1,4)@1; [0,1)@0 takes
 * b0 -> [0,1)@3; [1,4)@1 takes b1 at 1 -> [1,2)@1 [2,4)@5; [1,2)@1 holds nothing,
 * lifts to 3 and merges into [0,2)@3; b3 at 3. Peak 6 = lower bound. */
static void test_bestfit_beats_greedy(void) {
  sfc_pack_block_t g[] = {B(3, 0, 1), B(4, 2, 4), B(1, 1, 4), B(3, 0, 2)};
  sfc_pack_block_t f[] = {B(3, 0, 1), B(4, 2, 4), B(1, 1, 4), B(3, 0, 2)};
  sfc_pack_result_t r;
  CHECK_EQ_U64(pack("greedy-size", g, 4, 1, &r), 7);
  CHECK_EQ_U64(r.lower_bound, 6);
  CHECK_EQ_U64(g[2].offset, 6);
  CHECK_EQ_U64(pack("best-fit", f, 4, 1, &r), 6);
  CHECK(r.optimal);
  CHECK_EQ_U64(f[0].offset, 0);
  CHECK_EQ_U64(f[1].offset, 1);
  CHECK_EQ_U64(f[2].offset, 0);
  CHECK_EQ_U64(f[3].offset, 3);
}

/* Greedy beats best-fit, so the portfolio needs both. b0 3 [3,6), b1 3 [2,5),
 * b2 3 [0,2), b3 2 [1,3); live 3,5,5,6,6,3: lower bound 6.
 * best-fit: b0 (lifetime 3, ties b1 on size, lower index) at 0 -> [0,3)@0
 * [3,6)@3; [0,3)@0 takes b2 (lifetime 2 like b3, larger) -> [0,2)@3 [2,3)@0
 * [3,6)@3; [2,3)@0 holds nothing: lift to 3, one line [0,6)@3; b1 at 3 ->
 * [0,2)@3 [2,5)@6 [5,6)@3; b3 [1,3) fits nowhere until [0,2) lifts into
 * [0,5)@6: b3 at 6. Peak 8.
 * greedy-size (size, then start): b2 0; b1 [2,5) meets nothing placed: 0; b0
 * [3,6) meets b1: 3; b3 [1,3) meets b2 [0,3) and b1 [0,3): 3. Peak 6.
 * greedy-start: b2 0; b3 meets b2: 3; b1 meets b3 [3,5) only, the gap [0,3)
 * holds it: 0; b0 meets b1 [0,3): 3. Peak 6. auto must reach 6. */
static void test_greedy_beats_bestfit(void) {
  sfc_pack_block_t f[] = {B(3, 3, 6), B(3, 2, 5), B(3, 0, 2), B(2, 1, 3)};
  sfc_pack_block_t s[] = {B(3, 3, 6), B(3, 2, 5), B(3, 0, 2), B(2, 1, 3)};
  sfc_pack_block_t g[] = {B(3, 3, 6), B(3, 2, 5), B(3, 0, 2), B(2, 1, 3)};
  sfc_pack_block_t a[] = {B(3, 3, 6), B(3, 2, 5), B(3, 0, 2), B(2, 1, 3)};
  sfc_pack_result_t r;
  CHECK_EQ_U64(pack("best-fit", f, 4, 1, &r), 8);
  CHECK_EQ_U64(f[0].offset, 0);
  CHECK_EQ_U64(f[1].offset, 3);
  CHECK_EQ_U64(f[2].offset, 0);
  CHECK_EQ_U64(f[3].offset, 6);
  CHECK_EQ_U64(pack("greedy-size", g, 4, 1, &r), 6);
  CHECK_EQ_U64(g[3].offset, 3);
  CHECK_EQ_U64(pack("greedy-start", s, 4, 1, &r), 6);
  CHECK_EQ_U64(s[2].offset, 0);
  CHECK_EQ_U64(s[3].offset, 3);
  CHECK_EQ_U64(s[1].offset, 0);
  CHECK_EQ_U64(s[0].offset, 3);
  CHECK_EQ_U64(pack("auto", a, 4, 1, &r), 6);
  CHECK(r.optimal);
}

/* Tightest gap vs lowest gap, in size order: P 10 [0,4) at 0; Q 8 [0,1) over P
 * at 10; R 6 [0,4) over Q at 18; S 5 [0,1) at 24. T 4 [2,3) meets P [0,10) and
 * R [18,24): the only gap [10,18) takes it under both rules: 10. U 3 [2,4) meets
 * P, T [10,14), R: the only gap [14,18): 14. W 1 [3,4) meets P, U [14,17), R (T
 * has ended): gaps [10,14) (4 wide) and [17,18) (1 wide): lowest 10, tightest 17. */
static void test_gap_rules(void) {
  sfc_pack_block_t base[] = {B(10, 0, 4), B(8, 0, 1), B(6, 0, 4), B(5, 0, 1),
                             B(4, 2, 3),  B(3, 2, 4), B(1, 3, 4)};
  sfc_pack_block_t lo[7], ti[7];
  for (int i = 0; i < 7; i++)
    lo[i] = ti[i] = base[i];
  sfc_pack_result_t r;
  pack("greedy-size", lo, 7, 1, &r);
  pack("greedy-size-bestgap", ti, 7, 1, &r);
  CHECK_EQ_U64(lo[0].offset, 0);
  CHECK_EQ_U64(lo[1].offset, 10);
  CHECK_EQ_U64(lo[2].offset, 18);
  CHECK_EQ_U64(lo[3].offset, 24);
  CHECK_EQ_U64(lo[4].offset, 10);
  CHECK_EQ_U64(lo[5].offset, 14);
  CHECK_EQ_U64(lo[6].offset, 10);
  CHECK_EQ_U64(ti[4].offset, 10);
  CHECK_EQ_U64(ti[5].offset, 14);
  CHECK_EQ_U64(ti[6].offset, 17);
}

/* Lines lift to the LOWER neighbour. A 10 [0,2), D 2 [2,4), C 4 [3,5): all live
 * 2 steps, so by size: A at 0 -> [0,2)@10 [2,5)@0; [2,5)@0 takes C (larger than
 * D) -> [2,3)@0 [3,5)@4; [2,3)@0 holds nothing, its neighbours are at 10 and 4:
 * it lifts to 4 and merges into [2,5)@4, where D lands at 4. Peak 10 = lower
 * bound (lifting to 10 instead would put D at 10: peak 12). */
static void test_bestfit_lifts_to_lower_neighbour(void) {
  sfc_pack_block_t b[] = {B(10, 0, 2), B(2, 2, 4), B(4, 3, 5)};
  sfc_pack_result_t r;
  pack("best-fit", b, 3, 1, &r);
  CHECK_EQ_U64(b[0].offset, 0);
  CHECK_EQ_U64(b[2].offset, 0);
  CHECK_EQ_U64(b[1].offset, 4);
  CHECK_EQ_U64(r.peak, 10);
  CHECK_EQ_U64(r.lower_bound, 10);
}

/* Alignment: heights stay multiples of 256, the peak counts the last real size.
 * Lines: [0,2)@0 takes 100 (longest-lived, larger) -> @256, then 10 -> @512, then
 * 1 [1,2) at 512: peak 513. Lower bound: 3 x 256 aligned bytes live at t=1, minus
 * the largest padding (255, of the 1-byte block): 513, so the peak is optimal. */
static void test_bestfit_alignment(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(10, 0, 2), B(1, 1, 2)};
  sfc_pack_result_t r;
  pack("best-fit", b, 3, 256, &r);
  CHECK_EQ_U64(b[0].offset, 0);
  CHECK_EQ_U64(b[1].offset, 256);
  CHECK_EQ_U64(b[2].offset, 512);
  CHECK_EQ_U64(r.peak, 513);
  CHECK_EQ_U64(r.lower_bound, 513);
  CHECK(r.optimal);
}

static void test_orders(void) {
  sfc_pack_block_t b[] = {B(5, 0, 10), B(50, 3, 4), B(20, 1, 5), B(20, 0, 2)};
  sfc_pack_problem_t p = {.blocks = b, .count = 4, .alignment = 1};
  sfc_error_t err;
  uint32_t o[4];
  CHECK_OK(sfc_pack_order_make(&p, SFC_PACK_ORDER_SIZE, o, &err), err);
  CHECK(o[0] == 1 && o[1] == 3 && o[2] == 2 && o[3] == 0); /* 50; 20 start 0; 20 start 1 */
  CHECK_OK(sfc_pack_order_make(&p, SFC_PACK_ORDER_LIFETIME, o, &err), err);
  CHECK(o[0] == 0 && o[1] == 2 && o[2] == 3 && o[3] == 1); /* 10, 4, 2, 1 */
  CHECK_OK(sfc_pack_order_make(&p, SFC_PACK_ORDER_AREA, o, &err), err);
  CHECK(o[0] == 2 && o[1] == 1 && o[2] == 0 && o[3] == 3); /* 80, 50 (size 50), 50, 40 */
  CHECK_OK(sfc_pack_order_make(&p, SFC_PACK_ORDER_START, o, &err), err);
  CHECK(o[0] == 3 && o[1] == 0 && o[2] == 2 && o[3] == 1); /* 0 (20), 0 (5), 1, 3 */
}

/* Decomposition: cuts where no lifetime crosses, half-open (end 3 = start 3 cuts). */
static void test_split(void) {
  sfc_pack_block_t b[] = {B(7, 4, 6), B(1, 0, 2), B(2, 1, 3), B(3, 3, 5), B(9, 6, 7)};
  sfc_pack_problem_t p = {.blocks = b, .count = 5, .alignment = 1};
  sfc_pack_parts_t parts;
  sfc_error_t err;
  CHECK_OK(sfc_pack_split(&p, &parts, &err), err);
  CHECK_EQ_U64(parts.count, 3); /* {1,2} | {3,0} | {4} */
  CHECK_EQ_U64(parts.first[0], 0);
  CHECK_EQ_U64(parts.first[1], 2);
  CHECK_EQ_U64(parts.first[2], 4);
  CHECK_EQ_U64(parts.first[3], 5);
  CHECK(parts.blocks[0] == 1 && parts.blocks[1] == 2);
  CHECK(parts.blocks[2] == 3 && parts.blocks[3] == 0);
  CHECK(parts.blocks[4] == 4);
  sfc_pack_parts_free(&parts);
  /* packed part by part from offset 0: peaks 3, 10, 9 -> 10, each part optimal */
  sfc_pack_result_t r = {0};
  CHECK_OK(sfc_pack_run_split(&p, NULL, sfc_pack_greedy_size, &r, &err), err);
  CHECK_EQ_U64(r.peak, 10);
  CHECK(r.optimal);
  CHECK_EQ_U64(brute_peak(b, 5, 1), 10);
  CHECK_EQ_U64(b[4].offset, 0);
  /* one block spanning everything: one part */
  sfc_pack_block_t c[] = {B(1, 0, 9), B(1, 0, 2), B(1, 5, 6)};
  p.blocks = c;
  p.count = 3;
  CHECK_OK(sfc_pack_split(&p, &parts, &err), err);
  CHECK_EQ_U64(parts.count, 1);
  sfc_pack_parts_free(&parts);
  p.count = 0;
  CHECK_OK(sfc_pack_split(&p, &parts, &err), err);
  CHECK_EQ_U64(parts.count, 0);
  sfc_pack_parts_free(&parts);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;

/* Seeded random instances through every registered packer (exact ones with a
 * short time limit on small instances only): the brute-force check holds, the
 * peak lies between the lower bound and the sum of sizes, and auto is never
 * worse than any greedy order (it runs each on every part, and greedy on the
 * whole problem packs each part as it would alone). */
static void test_every_packer_random(void) {
  enum { N = 120 };
  static sfc_pack_block_t base[N], b[N];
  size_t n_packers;
  const sfc_packer_t *all = sfc_packers(&n_packers);
  for (int round = 0; round < 30; round++) {
    size_t n = round < 10 ? 8 + round : N; /* small ones for the exact packers */
    uint64_t sum = 0, align = round % 3 == 0 ? 8 : 1;
    for (size_t i = 0; i < n; i++) {
      int64_t s = (int64_t)(test_rand_next(&rng) % 60);
      base[i] = (sfc_pack_block_t){.size = 1 + test_rand_next(&rng) % 1000,
                                   .start = s,
                                   .end = s + 1 + (int64_t)(test_rand_next(&rng) % 20)};
      sum += (base[i].size + align - 1) / align * align;
    }
    uint64_t best_heuristic = UINT64_MAX, auto_peak = 0;
    for (size_t k = 0; k < n_packers; k++) {
      bool exact = strcmp(all[k].name, "mip") == 0 || strcmp(all[k].name, "search") == 0;
      if (exact && n > 12)
        continue;
      for (size_t i = 0; i < n; i++)
        b[i] = base[i];
      sfc_pack_result_t r;
      uint64_t peak = pack(all[k].name, b, n, align, &r);
      CHECK(peak >= r.lower_bound);
      CHECK(peak <= sum);
      if (strcmp(all[k].name, "auto") == 0)
        auto_peak = peak;
      else if (strncmp(all[k].name, "greedy-", 7) == 0 && peak < best_heuristic)
        best_heuristic = peak;
    }
    CHECK(auto_peak <= best_heuristic);
  }
}

int main(void) {
  RUN(test_bestfit_leading_gap);
  RUN(test_bestfit_beats_greedy);
  RUN(test_greedy_beats_bestfit);
  RUN(test_gap_rules);
  RUN(test_bestfit_lifts_to_lower_neighbour);
  RUN(test_bestfit_alignment);
  RUN(test_orders);
  RUN(test_split);
  RUN(test_every_packer_random);
  return check_summary();
}
