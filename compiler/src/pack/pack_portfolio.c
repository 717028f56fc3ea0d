/* pack_portfolio.c — "auto": run several packers, keep the smallest peak.
 *
 * The problem is first split at the times no lifetime crosses (pack_split.c). The
 * parts are packed one by one, the one with the largest lower bound first; a part
 * is done as soon as its peak reaches its target: its own lower bound (max live
 * bytes), which proves it optimal, or the peak the parts before it already need,
 * whichever is larger (the arena is that tall anyway), or with fit_is_enough the
 * capacity (a scheduled plan only has to fit its budget). For each part:
 *
 *   1. best-fit with offset lines (pack_bestfit.c, the seed's heuristic), under
 *      four preferences among the blocks that fit a line: the seed's longest
 *      lifetime, then size x lifetime, size, and start (pack_order.c);
 *   2. an iterated re-pack in the spirit of squeaky-wheel optimisation (Joslin &
 *      Clements, JAIR 1999): the blocks that stick out above the lower bound move
 *      to the front of a best-fit preference, stably, and best-fit runs again.
 *      The four preferences are four chains; the chain with the lowest peak goes
 *      next; a chain that has not improved for STALL_ROUNDS rounds, or whose
 *      order stops changing, is dropped;
 *   3. on parts too large for the exact search (> SEARCH_MAX_BLOCKS), where the
 *      chains stop at a quarter of the time: mirror-compaction (turn the best
 *      packing upside down, then greedy first fit in the order of the mirrored
 *      offsets: stranded blocks at the top sink into holes at the bottom; the
 *      peak does not grow without alignment), then randomised restarts of
 *      best-fit under the area preference with every key multiplied by
 *      exp(0.8 U(-1, 1)) (GRASP-style, Feo & Resende 1995), each restart that
 *      ties or beats the best mirror-compacted too. On iopddl/S_1 this reaches the
 *      lower bound where the chains stall at 1.0017 (docs/algorithms.md);
 *   4. greedy placement (pack_greedy.c) under the same four orders x both gap
 *      rules (lowest, tightest), each only when its modelled cost (pack_clock.h:
 *      about 15 ns per pair of time-overlapping blocks) fits the time left for the
 *      heuristics;
 *   5. the exact packers "mip" (parts up to opt->mip_max_blocks blocks) and
 *      "search" (parts up to SEARCH_MAX_BLOCKS blocks), when registered (looked
 *      up by name: no link dependency), given the best packing as their
 *      incumbent (pack.h's convention), within the time left.
 *
 * Time: steps 1-4 share half of opt->time_limit_s (default 10 s), step 5 the
 * rest; parts too large for step 5 give steps 1-4 the whole limit. A run starts
 * only when it is expected to end in time (the first best-fit run always does,
 * so a result exists). Each best-fit run is O(n log^2 n); each greedy run
 * (compaction included) O(sum k log k). Time is the work clock's (pack_clock.h:
 * each run charged its modelled cost) unless opt->wall_clock: the restarts draw
 * from a fixed seed and how many run depends on the input and the limit alone, so
 * the packing is the same on any machine under any load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "pack_clock.h"
#include "units.h"

#define STALL_ROUNDS      60   /* a re-pack chain without a better peak for this long stops */
#define SEARCH_MAX_BLOCKS 2000 /* the exact search is for a few hundred blocks */
#define RESTART_NOISE     0.8  /* area keys x exp(0.8 U(-1,1)): 0.45x..2.2x */

typedef struct best {
  uint64_t *offset; /* [count] the best packing so far */
  uint64_t peak, lower, target, bound;
  const char *algorithm;
  bool optimal;
  int verbose;
  sfc_pack_clock_t *clk; /* shared by the parts of one run */
} best_t;

static double now(const best_t *b) {
  return sfc_pack_clock_now(b->clk);
}

static bool done(const best_t *b) {
  return b->optimal || b->peak <= b->target;
}

/* Records p's current offsets when they beat the best. Returns true when they did. */
static bool keep(best_t *b, const sfc_pack_problem_t *p, const sfc_pack_result_t *r) {
  bool better = r->peak < b->peak || (r->optimal && r->peak == b->peak && !b->optimal);
  if (b->verbose > 0 && (better || b->verbose > 1))
    fprintf(stderr, "auto: %zu blocks: %-24s peak %llu (%.5f x lower bound)%s\n", p->count,
            r->algorithm, (unsigned long long)r->peak,
            b->lower ? (double)r->peak / (double)b->lower : 1.0, better ? " *" : "");
  if (!better)
    return false;
  b->peak = r->peak;
  b->algorithm = r->algorithm;
  b->optimal = r->optimal || r->peak == b->lower;
  if (r->best_bound > b->bound)
    b->bound = r->best_bound;
  for (size_t i = 0; i < p->count; i++)
    b->offset[i] = p->blocks[i].offset;
  return true;
}

/* Sum over blocks of the blocks overlapping it in time, halved: the pairs greedy
 * compares. O(n log n) with two sorted arrays. */
static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : (a > b);
}

static size_t count_le(const int64_t *v, size_t n, int64_t t, bool strict) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strict ? v[mid] < t : v[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static double overlap_pairs(const sfc_pack_problem_t *p) {
  size_t n = p->count;
  int64_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
  double pairs = 1e18; /* unknown: assume too many */
  if (s && e) {
    for (size_t i = 0; i < n; i++) {
      s[i] = p->blocks[i].start;
      e[i] = p->blocks[i].end;
    }
    qsort(s, n, sizeof *s, cmp_i64);
    qsort(e, n, sizeof *e, cmp_i64);
    pairs = 0;
    for (size_t i = 0; i < n; i++) /* starts before my end, minus ends by my start */
      pairs += (double)(count_le(s, n, p->blocks[i].end, true) -
                        count_le(e, n, p->blocks[i].start, false) - 1);
    pairs /= 2;
  }
  free(s);
  free(e);
  return pairs;
}

typedef struct keyed_off {
  uint64_t off;
  uint32_t id;
} keyed_off_t;

static int by_offset(const void *pa, const void *pb) {
  const keyed_off_t *x = pa, *y = pb;
  if (x->off != y->off)
    return x->off < y->off ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

typedef struct keyed_area {
  double area;
  uint64_t size;
  uint32_t id;
} keyed_area_t;

static int by_area_desc(const void *pa, const void *pb) {
  const keyed_area_t *x = pa, *y = pb;
  if (x->area != y->area)
    return x->area > y->area ? -1 : 1;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

typedef struct chain {
  uint32_t *order;
  uint64_t peak;
  int stall;
  bool alive;
} chain_t;

/* One re-pack round of chain c: blocks above the lower bound to the front. */
static sfc_status_t repack(sfc_pack_problem_t *p, chain_t *c, uint32_t *tmp, best_t *b,
                           sfc_error_t *err) {
  size_t n = p->count, m = 0;
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *x = &p->blocks[c->order[i]];
    if (x->offset + x->size > b->lower)
      tmp[m++] = c->order[i];
  }
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *x = &p->blocks[c->order[i]];
    if (x->offset + x->size <= b->lower)
      tmp[m++] = c->order[i];
  }
  if (memcmp(tmp, c->order, n * sizeof *tmp) == 0) {
    c->alive = false; /* a fixed point: the same order packs the same way */
    return SFC_OK;
  }
  memcpy(c->order, tmp, n * sizeof *tmp);
  sfc_pack_result_t r = {0};
  double t = sfc_clock_seconds();
  SFC_TRY(sfc_pack_best_fit_ordered(p, c->order, &r, err));
  sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_best_fit(n));
  r.algorithm = "best-fit+repack";
  keep(b, p, &r);
  if (r.peak < c->peak) {
    c->peak = r.peak;
    c->stall = 0;
  } else if (++c->stall >= STALL_ROUNDS) {
    c->alive = false;
  }
  return SFC_OK;
}

/* Mirror-compaction: greedy first fit (pack_greedy.c) in the order of the offsets
 * of p's packing turned upside down (offset' = peak - offset - size). When a
 * block's turn comes its mirrored offset is still free (every block placed before
 * it sat lower in the mirror and can only have moved down), so first fit puts it
 * there or lower: without alignment the peak never grows, and the blocks the
 * first packing left stranded at the top sink into the holes at the bottom (with
 * alignment the caller keeps the result only when it is better). One greedy
 * run: O(sum k log k). */
static sfc_status_t mirror_compact(sfc_pack_problem_t *p, uint64_t peak, uint32_t *order,
                                   sfc_pack_result_t *r, sfc_error_t *err) {
  size_t n = p->count;
  keyed_off_t *k = malloc((n ? n : 1) * sizeof *k);
  if (!k)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", n);
  for (size_t i = 0; i < n; i++)
    k[i] = (keyed_off_t){peak - p->blocks[i].offset - p->blocks[i].size, (uint32_t)i};
  qsort(k, n, sizeof *k, by_offset);
  for (size_t i = 0; i < n; i++)
    order[i] = k[i].id;
  free(k);
  *r = (sfc_pack_result_t){0};
  SFC_TRY(sfc_pack_greedy_ordered(p, order, SFC_PACK_GAP_FIRST, r, err));
  r->algorithm = "best-fit+mirror";
  return SFC_OK;
}

/* Mirror-compacts the best packing while that lowers its peak. */
static sfc_status_t compact_best(sfc_pack_problem_t *p, best_t *b, uint32_t *order, double *cost,
                                 double pairs, double deadline, sfc_error_t *err) {
  while (!done(b) && now(b) + *cost < deadline) {
    double t = sfc_clock_seconds();
    for (size_t i = 0; i < p->count; i++)
      p->blocks[i].offset = b->offset[i];
    sfc_pack_result_t r;
    SFC_TRY(mirror_compact(p, b->peak, order, &r, err));
    *cost = sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_greedy(p->count, pairs));
    if (!keep(b, p, &r))
      break;
  }
  return SFC_OK;
}

/* xorshift64*: a fixed seed, so a run is reproducible (on the work clock). */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(2685821657736338717);
}

/* Step 3 for parts too large for the exact search: mirror-compact the best
 * packing, then restart best-fit under the area preference with every key
 * multiplied by a random factor exp(RESTART_NOISE * U(-1, 1)) (randomised greedy
 * restarts, as in GRASP); a restart that ties or beats the best is
 * mirror-compacted too. greedy_s estimates one compaction (the greedy model), then
 * the last one's cost is used. */
static sfc_status_t polish(sfc_pack_problem_t *p, best_t *b, uint32_t *order, double pairs,
                           double bf_cost, double deadline, sfc_error_t *err) {
  size_t n = p->count;
  double greedy_s = sfc_pack_cost_greedy(n, pairs);
  SFC_TRY(compact_best(p, b, order, &greedy_s, pairs, deadline, err));
  keyed_area_t *k = malloc((n ? n : 1) * sizeof *k);
  if (!k)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", n);
  uint64_t seed = UINT64_C(0x9e3779b97f4a7c15);
  sfc_status_t st = SFC_OK;
  while (!done(b) && now(b) + bf_cost < deadline) {
    double t = sfc_clock_seconds();
    for (size_t i = 0; i < n; i++) {
      const sfc_pack_block_t *x = &p->blocks[i];
      double u = (double)(rng_next(&seed) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
      k[i] = (keyed_area_t){(double)x->size * (double)(x->end - x->start) * exp(RESTART_NOISE * u),
                            x->size, (uint32_t)i};
    }
    qsort(k, n, sizeof *k, by_area_desc);
    for (size_t i = 0; i < n; i++)
      order[i] = k[i].id;
    sfc_pack_result_t r = {0};
    if ((st = sfc_pack_best_fit_ordered(p, order, &r, err)) != SFC_OK)
      break;
    sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_best_fit(n));
    r.algorithm = "best-fit-area+random";
    uint64_t best_peak = b->peak;
    keep(b, p, &r);
    if (r.peak <= best_peak && now(b) + greedy_s < deadline) {
      t = sfc_clock_seconds();
      sfc_pack_result_t m;
      if ((st = mirror_compact(p, r.peak, order, &m, err)) != SFC_OK)
        break;
      greedy_s = sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_greedy(n, pairs));
      if (keep(b, p, &m) &&
          (st = compact_best(p, b, order, &greedy_s, pairs, deadline, err)) != SFC_OK)
        break;
    }
  }
  free(k);
  return st;
}

static const sfc_pack_order_t bf_orders[SFC_PACK_ORDER_COUNT] = {
    SFC_PACK_ORDER_LIFETIME, SFC_PACK_ORDER_AREA, SFC_PACK_ORDER_SIZE, SFC_PACK_ORDER_START};
static const char *const bf_names[SFC_PACK_ORDER_COUNT] = {"best-fit", "best-fit-area",
                                                           "best-fit-size", "best-fit-start"};
static const char *const greedy_names[SFC_PACK_ORDER_COUNT][2] = {
    {"greedy-size", "greedy-size-bestgap"},
    {"greedy-lifetime", "greedy-lifetime-bestgap"},
    {"greedy-area", "greedy-area-bestgap"},
    {"greedy-start", "greedy-start-bestgap"}};

static sfc_status_t heuristics(sfc_pack_problem_t *p, best_t *b, double deadline,
                               sfc_error_t *err) {
  size_t n = p->count;
  double t_start = now(b);
  chain_t ch[SFC_PACK_ORDER_COUNT] = {{0}};
  uint32_t *tmp = malloc(n * sizeof *tmp);
  sfc_status_t st = SFC_OK;
  if (!tmp)
    goto oom;
  /* 1. best-fit under four preferences; the first always runs, the others only
   * when one more run (as long as the first took) ends before the deadline */
  bool bf_ok = true;
  double bf_cost = 0;
  int last_k = -1;
  for (int k = 0; k < SFC_PACK_ORDER_COUNT && !done(b) && bf_ok; k++) {
    if (k > 0 && now(b) + bf_cost > deadline)
      break;
    double t = sfc_clock_seconds();
    chain_t *c = &ch[k];
    if (!(c->order = malloc(n * sizeof *c->order)))
      goto oom;
    if ((st = sfc_pack_order_make(p, bf_orders[k], c->order, err)) != SFC_OK)
      goto out;
    sfc_pack_result_t r = {0};
    st = sfc_pack_best_fit_ordered(p, c->order, &r, err);
    if (st == SFC_ERR_LIMIT) { /* too large for best-fit's index: greedy only */
      st = SFC_OK;
      bf_ok = false;
      break;
    }
    if (st != SFC_OK)
      goto out;
    double cost = sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_best_fit(n));
    r.algorithm = bf_names[k];
    keep(b, p, &r);
    c->peak = r.peak;
    c->alive = true;
    last_k = k;
    if (k == 0)
      bf_cost = cost;
  }
  /* 2. re-pack chains, the lowest peak first; on parts too large for the exact
   * search they stop at a quarter of the time left, leaving the rest to step 3 */
  bool large = n > SEARCH_MAX_BLOCKS;
  double chain_deadline = large ? t_start + (deadline - t_start) / 4 : deadline;
  chain_t *last = last_k >= 0 ? &ch[last_k] : NULL;
  while (!done(b)) {
    chain_t *c = NULL;
    for (int k = 0; k < SFC_PACK_ORDER_COUNT; k++)
      if (ch[k].alive && (!c || ch[k].peak < c->peak))
        c = &ch[k];
    if (!c || now(b) + bf_cost * (c == last ? 1 : 2) > chain_deadline)
      break;
    if (c != last) { /* p holds another chain's packing: re-pack from c's order */
      sfc_pack_result_t r = {0};
      double t = sfc_clock_seconds();
      if ((st = sfc_pack_best_fit_ordered(p, c->order, &r, err)) != SFC_OK)
        goto out;
      sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_best_fit(n));
    }
    if ((st = repack(p, c, tmp, b, err)) != SFC_OK)
      goto out;
    last = c;
  }
  /* 3. on large parts: mirror-compaction of the best packing, then perturbed
   * area-order restarts, until the deadline */
  double pairs = done(b) ? 0 : overlap_pairs(p);
  if (large && bf_ok && !done(b) &&
      (st = polish(p, b, tmp, pairs, bf_cost, deadline, err)) != SFC_OK)
    goto out;
  /* 4. greedy, when affordable */
  for (int k = 0; k < SFC_PACK_ORDER_COUNT && !done(b); k++) {
    /* (always one run when best-fit could not run: a packing must exist) */
    if (b->peak != UINT64_MAX && now(b) + sfc_pack_cost_greedy(n, pairs) > deadline) {
      if (b->verbose > 0)
        fprintf(stderr, "auto: %zu blocks: greedy skipped (%.3g overlapping pairs)\n", n, pairs);
      break;
    }
    if ((st = sfc_pack_order_make(p, (sfc_pack_order_t)k, tmp, err)) != SFC_OK)
      goto out;
    for (int g = 0; g < 2 && !done(b); g++) {
      sfc_pack_result_t r = {0};
      double t = sfc_clock_seconds();
      if ((st = sfc_pack_greedy_ordered(p, tmp, (sfc_pack_gap_t)g, &r, err)) != SFC_OK)
        goto out;
      sfc_pack_clock_spent(b->clk, t, sfc_pack_cost_greedy(n, pairs));
      r.algorithm = greedy_names[k][g];
      keep(b, p, &r);
    }
  }
  goto out;
oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", n);
out:
  for (int k = 0; k < SFC_PACK_ORDER_COUNT; k++)
    free(ch[k].order);
  free(tmp);
  return st;
}

static sfc_status_t exact(sfc_pack_problem_t *p, const sfc_pack_options_t *opt, best_t *b,
                          double deadline, sfc_error_t *err) {
  static const char *const names[] = {"mip", "search"};
  for (int k = 0; k < 2 && !b->optimal; k++) {
    const sfc_packer_t *x = sfc_packer_find(names[k]);
    double left = deadline - now(b);
    if (!x || left <= 0.05 || (k == 0 && p->count > opt->mip_max_blocks) ||
        (k == 1 && p->count > SEARCH_MAX_BLOCKS))
      continue;
    for (size_t i = 0; i < p->count; i++) /* the incumbent */
      p->blocks[i].offset = b->offset[i];
    /* Fitting a capacity is easier than minimising: when earlier parts already
     * need more than this part's lower bound, fit their peak (nothing lower
     * helps); over a capacity the caller gave, fit it; otherwise minimise with
     * no capacity, the incumbent bounding the peak (the search then tries the
     * lower bound first, which finds most optima fastest). */
    uint64_t goal = b->target > b->lower                       ? b->target
                    : p->capacity > 0 && b->peak > p->capacity ? p->capacity
                                                               : 0;
    bool fit = goal > 0;
    sfc_pack_problem_t q = *p;
    q.capacity = goal;
    sfc_pack_options_t o = *opt;
    o.time_limit_s = k == 0 && sfc_packer_find("search") ? left / 2 : left;
    o.backstop_s = sfc_pack_clock_backstop_left(b->clk); /* within this run's */
    o.minimize = !fit;
    sfc_pack_result_t r = {0};
    double t = sfc_clock_seconds();
    SFC_TRY(x->fn(&q, &o, &r, err));
    sfc_pack_clock_spent(b->clk, t, r.work_s);
    if (r.wall_stopped)
      b->clk->wall_stopped = true;
    if (!r.algorithm)
      r.algorithm = x->name;
    if (r.best_bound > b->bound)
      b->bound = r.best_bound;
    if (r.optimal && r.peak == b->peak && !keep(b, p, &r))
      b->optimal = true; /* the incumbent was optimal */
    else
      keep(b, p, &r);
  }
  return SFC_OK;
}

static sfc_status_t portfolio_part(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                                   uint64_t target, sfc_pack_clock_t *clk, sfc_pack_result_t *out,
                                   sfc_error_t *err) {
  size_t n = p->count;
  best_t b = {.offset = malloc((n ? n : 1) * sizeof(uint64_t)),
              .peak = UINT64_MAX,
              .lower = sfc_pack_lower_bound(p),
              .verbose = opt->verbose,
              .clk = clk};
  b.target = target > b.lower ? target : b.lower;
  if (opt->fit_is_enough && p->capacity > b.target)
    b.target = p->capacity; /* fitting is the goal: done as soon as the peak fits */
  b.bound = b.lower;
  if (!b.offset)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", n);
  double limit = opt->time_limit_s > 0 ? opt->time_limit_s : 10.0;
  /* parts too large for the exact packers have the whole limit for heuristics */
  sfc_status_t st = heuristics(p, &b, n > SEARCH_MAX_BLOCKS ? limit : limit / 2, err);
  if (st == SFC_OK && !done(&b))
    st = exact(p, opt, &b, limit, err);
  if (st == SFC_OK) {
    for (size_t i = 0; i < n; i++)
      p->blocks[i].offset = b.offset[i];
    out->peak = b.peak;
    out->algorithm = b.algorithm;
    out->optimal = b.optimal;
    out->best_bound = b.optimal ? b.peak : b.bound;
  }
  free(b.offset);
  return st;
}

typedef struct part_ref {
  uint64_t lower;
  size_t k;
} part_ref_t;

static int by_lower_desc(const void *pa, const void *pb) {
  const part_ref_t *x = pa, *y = pb;
  if (x->lower != y->lower)
    return x->lower > y->lower ? -1 : 1;
  return x->k < y->k ? -1 : (x->k > y->k);
}

sfc_status_t sfc_pack_auto(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                           sfc_pack_result_t *out, sfc_error_t *err) {
  sfc_pack_clock_t clk;
  sfc_pack_clock_start(&clk, opt->wall_clock, opt->time_limit_s > 0 ? opt->time_limit_s : 10.0,
                       opt->backstop_s);
  out->algorithm = "auto";
  out->peak = 0;
  if (p->count == 0) {
    out->optimal = true;
    return SFC_OK;
  }
  sfc_pack_parts_t parts;
  SFC_TRY(sfc_pack_split(p, &parts, err));
  if (opt->verbose > 0 && parts.count > 1)
    fprintf(stderr, "auto: %zu blocks in %zu independent parts\n", p->count, parts.count);
  if (parts.count == 1) {
    sfc_pack_parts_free(&parts);
    sfc_status_t st = portfolio_part(p, opt, 0, &clk, out, err);
    out->work_s = clk.wall ? 0 : clk.work;
    out->wall_stopped = clk.wall_stopped;
    return st;
  }
  size_t most = 0;
  for (size_t k = 0; k < parts.count; k++)
    if (parts.first[k + 1] - parts.first[k] > most)
      most = parts.first[k + 1] - parts.first[k];
  sfc_pack_block_t *sub = malloc(most * sizeof *sub);
  part_ref_t *ref = malloc(parts.count * sizeof *ref);
  sfc_status_t st = SFC_OK;
  if (!sub || !ref) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "auto: out of memory for %zu blocks", p->count);
    goto done;
  }
  for (size_t k = 0; k < parts.count; k++) {
    const uint32_t *ids = parts.blocks + parts.first[k];
    size_t m = parts.first[k + 1] - parts.first[k];
    for (size_t j = 0; j < m; j++)
      sub[j] = p->blocks[ids[j]];
    sfc_pack_problem_t part = {.blocks = sub, .count = m, .alignment = p->alignment};
    ref[k] = (part_ref_t){sfc_pack_lower_bound(&part), k};
  }
  qsort(ref, parts.count, sizeof *ref, by_lower_desc);
  bool peak_optimal = false;
  for (size_t j = 0; j < parts.count; j++) {
    size_t k = ref[j].k;
    const uint32_t *ids = parts.blocks + parts.first[k];
    size_t m = parts.first[k + 1] - parts.first[k];
    for (size_t i = 0; i < m; i++)
      sub[i] = p->blocks[ids[i]];
    sfc_pack_problem_t part = {
        .blocks = sub, .count = m, .alignment = p->alignment, .capacity = p->capacity};
    sfc_pack_result_t r = {0};
    if ((st = portfolio_part(&part, opt, out->peak, &clk, &r, err)) != SFC_OK)
      goto done;
    for (size_t i = 0; i < m; i++)
      p->blocks[ids[i]].offset = sub[i].offset;
    if (r.best_bound > out->best_bound)
      out->best_bound = r.best_bound;
    if (j == 0 || r.peak > out->peak) {
      out->peak = r.peak;
      out->algorithm = r.algorithm;
      peak_optimal = r.optimal;
    } else if (r.peak == out->peak && r.optimal) {
      peak_optimal = true;
    }
  }
  out->optimal = peak_optimal;
  out->work_s = clk.wall ? 0 : clk.work;
  out->wall_stopped = clk.wall_stopped;
done:
  free(sub);
  free(ref);
  sfc_pack_parts_free(&parts);
  return st;
}
