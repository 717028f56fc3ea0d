/* pack_search.c — exact DSA by depth-first search over canonical placements, after
 * MiniMalloc (M. Moffitt, "MiniMalloc: a lightweight memory allocator for hardware-
 * accelerated machine learning", ASPLOS 2023; the algorithm as the paper and its
 * public description give it; the code is this project's own).
 *
 * Canonical placements. Push every block of a packing down until it rests on a
 * block below it or on 0, and list the blocks by offset: each one's offset is then
 * the highest top of the time-overlapping blocks listed before it. So the search
 * only has to choose an order: it places one block at a time at its "min offset"
 * (the highest top among placed blocks overlapping it, rounded up to the
 * alignment), in non-decreasing (offset, preorder rank) — every packing has exactly
 * one such sequence, and no two branches build the same packing.
 *
 * Time sections (pack_sections.c): the live set just before each distinct free
 * time is a section, and a block covers a contiguous range of sections; two blocks
 * overlap in time iff their ranges intersect. (Sections that are subsets of others
 * still count: their floor can be higher than their superset's.) Per
 * section the search keeps the floor (nothing unplaced in it can go lower: the top
 * of the last block placed in it, or the least min offset of its unplaced blocks)
 * and the total size of its unplaced blocks, which all overlap each other and so
 * stack above the floor. Pruning (after each placement at offset x):
 *   - load: max(floor, x) + unplaced total > capacity in any section;
 *   - dominance: a block whose min offset is >= the lowest top any unplaced block
 *     could reach (min over unplaced of min offset + size) is not tried: that block
 *     would fit in the gap below it, so a packing at least as good places it first;
 *   - hatless: when no unplaced block overlaps the block just placed and the
 *     subtree fails, no other choice at this node can succeed (that block is
 *     placed as low as it can go and constrains nobody);
 *   - decomposition: when no unplaced block crosses a section boundary any more, the
 *     two sides are independent and are solved one after the other (and at the start,
 *     where no block at all crosses a boundary).
 * Restarts: the search runs under a node limit with three static preorders (time
 * width, area, section total — MiniMalloc's WAT, TAW, TWA), doubling the limit each
 * round, so one lucky ordering ends the search early. A run that ends without
 * hitting the limit is a proof: no packing within the capacity exists.
 *
 * Modes (pack.h): with a capacity, find any packing <= it; minimise: start from the
 * incumbent, try the lower bound first, then bisect between the proven bound and
 * the best peak, each try with a share of the remaining time (a capacity that timed
 * out is not tried again while a higher one is untried); every proof of
 * infeasibility raises best_bound. Anytime: the best packing found is returned when
 * the time limit expires.
 *
 * Cost: exponential in the worst case; O(n + S + overlaps) per node for n blocks and
 * S sections. Memory O(n + S + pairs), pairs = time-overlapping pairs (bounded:
 * larger problems get the incumbent back unchanged).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack_clock.h"
#include "pack_exact.h"
#include "units.h"
#include "pack_sections.h"

#define NONE              UINT64_MAX
#define SEARCH_MAX_BLOCKS 5000u /* recursion depth = blocks, a few hundred bytes each */
#define SEARCH_MAX_PAIRS  (UINT64_C(1) << 25) /* overlap lists, section lists */

enum { FOUND, NOT_FOUND, ABORTED, TIMED_OUT };

typedef struct undo {
  uint32_t id; /* block (min offset) or section (floor) */
  uint64_t old;
} undo_t;

typedef struct cand {
  uint64_t off;
  uint32_t rank, id;
} cand_t;

/* Preorders: MiniMalloc's WAT, TAW, TWA (W = lifetime width, A = area, T = the
 * largest unplaced total of the block's sections; all descending, then index).
 * Each part of a split is ranked afresh, with the totals of that moment. */
typedef struct pre {
  double w, a, t;
  uint32_t id;
} pre_t;

static int pre_cmp_keys(const pre_t *x, const pre_t *y, const char *keys) {
  for (const char *k = keys; *k; k++) {
    double u = *k == 'W' ? x->w : *k == 'A' ? x->a : x->t;
    double v = *k == 'W' ? y->w : *k == 'A' ? y->a : y->t;
    if (u != v)
      return u > v ? -1 : 1;
  }
  return x->id < y->id ? -1 : (x->id > y->id);
}

static int pre_wat(const void *a, const void *b) {
  return pre_cmp_keys(a, b, "WAT");
}
static int pre_taw(const void *a, const void *b) {
  return pre_cmp_keys(a, b, "TAW");
}
static int pre_twa(const void *a, const void *b) {
  return pre_cmp_keys(a, b, "TWA");
}

static int (*const preorders[])(const void *, const void *) = {pre_wat, pre_taw, pre_twa};
#define N_PREORDERS 3

typedef struct search {
  uint32_t n, nsec;
  sfc_pack_sections_t sec;
  uint64_t align, cap;
  const uint64_t *size; /* [n] */
  uint32_t *rank;       /* [n] position in the preorder of the block's part */
  pre_t *pre;           /* [n] scratch for ranking */
  const sfc_pack_block_t *blocks;
  int heuristic; /* index into preorders[] */
  /* state, restored on every return */
  uint64_t *off, *minoff;  /* [n] NONE = unplaced */
  uint64_t *floor, *total; /* [nsec] */
  uint32_t *cut;           /* [nsec] */
  uint64_t *sol;           /* [n] offsets of the last packing found */
  undo_t *um, *uf;         /* undo logs: min offsets, floors */
  size_t um_n, um_cap, uf_n, uf_cap;
  cand_t *cand; /* candidate stack, one frame per search node */
  size_t cand_n, cand_cap;
  uint32_t *ids; /* partition lists, one frame per split */
  size_t ids_n, ids_cap;
  uint32_t *stamp, *affected; /* [nsec] dedup of sections touched by one placement */
  uint32_t stamp_now;
  int64_t nodes_left;
  uint64_t nodes;
  uint64_t work_limit; /* nodes in all, 0: none (sfc_pack_options_t) */
  double deadline;     /* on the clock */
  sfc_pack_clock_t clk;
  uint64_t units; /* the work done: blocks and sections visited (the work clock's count) */
  bool timed_out, oom;
} search_t;

/* The clock's reading: on the work clock, the blocks and sections visited so far
 * (units) at their modelled cost. */
static double s_now(search_t *s) {
  s->clk.work = sfc_pack_cost_search(s->units);
  return sfc_pack_clock_now(&s->clk);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return true;
  size_t c = *cap ? *cap : 256;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q)
    return false;
  *p = q;
  *cap = c;
  return true;
}

static uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) & ~(a - 1);
}

/* --- the search ---------------------------------------------------------------- */

static bool log_min(search_t *s, uint32_t id) {
  if (!grow((void **)&s->um, &s->um_cap, s->um_n + 1, sizeof *s->um))
    return false;
  s->um[s->um_n++] = (undo_t){id, s->minoff[id]};
  return true;
}

static bool log_floor(search_t *s, uint32_t sec) {
  if (!grow((void **)&s->uf, &s->uf_cap, s->uf_n + 1, sizeof *s->uf))
    return false;
  s->uf[s->uf_n++] = (undo_t){sec, s->floor[sec]};
  return true;
}

/* Places block i at x and propagates: min offsets of unplaced overlapping blocks,
 * floors and totals of sections. Undone by unplace() with the log marks. */
static bool place(search_t *s, uint32_t i, uint64_t x, bool *out_hatless) {
  uint64_t h = x + s->size[i];
  s->off[i] = x;
  uint32_t naff = 0;
  bool hatless = true;
  if (++s->stamp_now == 0) {
    memset(s->stamp, 0, s->nsec * sizeof *s->stamp);
    s->stamp_now = 1;
  }
  s->units += s->sec.overlap_start[i + 1] - s->sec.overlap_start[i] + s->sec.hi[i] - s->sec.lo[i];
  for (uint32_t k = s->sec.overlap_start[i]; k < s->sec.overlap_start[i + 1]; k++) {
    uint32_t o = s->sec.overlap[k];
    if (s->off[o] != NONE)
      continue;
    hatless = false;
    if (s->minoff[o] >= h)
      continue;
    if (!log_min(s, o))
      return false;
    uint64_t m = align_up(h, s->align);
    s->minoff[o] = m;
    s->units += s->sec.hi[o] - s->sec.lo[o];
    /* Only a section whose floor is below o's new min offset can rise. */
    for (uint32_t c = s->sec.lo[o]; c < s->sec.hi[o]; c++)
      if (s->floor[c] < m && s->stamp[c] != s->stamp_now) {
        s->stamp[c] = s->stamp_now;
        s->affected[naff++] = c;
      }
  }
  for (uint32_t c = s->sec.lo[i]; c < s->sec.hi[i]; c++) {
    if (!log_floor(s, c))
      return false;
    s->floor[c] = h;
    s->total[c] -= s->size[i];
  }
  for (uint32_t k = 0; k < naff; k++) {
    uint32_t c = s->affected[k];
    uint64_t m = NONE;
    s->units += s->sec.member_start[c + 1] - s->sec.member_start[c];
    for (uint32_t j = s->sec.member_start[c]; j < s->sec.member_start[c + 1] && m > s->floor[c];
         j++) {
      uint32_t b = s->sec.member[j];
      if (s->off[b] == NONE && s->minoff[b] < m)
        m = s->minoff[b];
    }
    if (m != NONE && s->floor[c] < m) {
      if (!log_floor(s, c))
        return false;
      s->floor[c] = m;
    }
  }
  *out_hatless = hatless;
  return true;
}

static void unplace(search_t *s, uint32_t i, size_t um_mark, size_t uf_mark) {
  while (s->uf_n > uf_mark) {
    s->uf_n--;
    s->floor[s->uf[s->uf_n].id] = s->uf[s->uf_n].old;
  }
  while (s->um_n > um_mark) {
    s->um_n--;
    s->minoff[s->um[s->um_n].id] = s->um[s->um_n].old;
  }
  for (uint32_t c = s->sec.lo[i]; c < s->sec.hi[i]; c++)
    s->total[c] += s->size[i];
  s->off[i] = NONE;
}

/* Load pruning over the partition's sections after a placement at x. */
static bool feasible(search_t *s, uint32_t slo, uint32_t shi, uint64_t x) {
  s->units += shi - slo;
  for (uint32_t c = slo; c < shi; c++) {
    uint64_t f = s->floor[c] > x ? s->floor[c] : x;
    if (f + s->total[c] > s->cap)
      return false;
  }
  return true;
}

static int cand_cmp(const void *pa, const void *pb) {
  const cand_t *a = pa, *b = pb;
  if (a->off != b->off)
    return a->off < b->off ? -1 : 1;
  return a->rank < b->rank ? -1 : (a->rank > b->rank);
}

static int solve_split(search_t *s, uint32_t slo, uint32_t shi, size_t pbase, uint32_t pn);

/* One node: the partition is sections [slo, shi) and the blocks ids[pbase .. +pn)
 * (placed ones are skipped); the last placement was (min_off, min_rank). */
static int search_node(search_t *s, uint32_t slo, uint32_t shi, size_t pbase, uint32_t pn,
                       uint64_t min_off, uint32_t min_rank) {
  if (s->nodes_left-- <= 0)
    return ABORTED;
  ++s->nodes;
  /* the clock every 16 nodes: a node costs up to O(n) (about 10 us at a thousand
   * blocks), and every 1024 overshot a one-second deadline by ten seconds */
  if ((s->work_limit && s->nodes > s->work_limit) ||
      ((s->nodes & 15) == 0 && s_now(s) > s->deadline))
    s->timed_out = true;
  if (s->timed_out)
    return TIMED_OUT;
  uint64_t min_top = NONE;
  uint32_t left = 0;
  s->units += 2 * (uint64_t)pn + 1;
  for (uint32_t k = 0; k < pn; k++) {
    uint32_t i = s->ids[pbase + k];
    if (s->off[i] != NONE)
      continue;
    left++;
    if (s->minoff[i] + s->size[i] < min_top)
      min_top = s->minoff[i] + s->size[i];
  }
  if (left == 0)
    return FOUND;
  size_t cbase = s->cand_n;
  if (!grow((void **)&s->cand, &s->cand_cap, cbase + left, sizeof *s->cand)) {
    s->oom = true;
    return ABORTED;
  }
  for (uint32_t k = 0; k < pn; k++) {
    uint32_t i = s->ids[pbase + k];
    uint64_t m = s->minoff[i];
    if (s->off[i] != NONE || m >= min_top) /* dominance */
      continue;
    if (m < min_off || (m == min_off && s->rank[i] < min_rank)) /* canonical order */
      continue;
    s->cand[s->cand_n++] = (cand_t){m, s->rank[i], i};
  }
  size_t nc = s->cand_n - cbase;
  qsort(s->cand + cbase, nc, sizeof *s->cand, cand_cmp);
  int st = NOT_FOUND;
  for (size_t c = 0; c < nc && st == NOT_FOUND; c++) {
    uint32_t i = s->cand[cbase + c].id;
    uint64_t x = s->minoff[i];
    if (x + s->size[i] > s->cap)
      continue;
    size_t um_mark = s->um_n, uf_mark = s->uf_n;
    bool hatless = false;
    if (!place(s, i, x, &hatless)) {
      s->oom = true;
      st = ABORTED;
    } else if (feasible(s, slo, shi, x)) {
      /* A boundary that no unplaced block crosses any more splits the partition. */
      bool split = false;
      for (uint32_t b = s->sec.lo[i]; b + 1 < s->sec.hi[i]; b++)
        if (--s->cut[b] == 0)
          split = true;
      st = split ? solve_split(s, slo, shi, pbase, pn)
                 : search_node(s, slo, shi, pbase, pn, x, s->rank[i]);
      for (uint32_t b = s->sec.lo[i]; b + 1 < s->sec.hi[i]; b++)
        s->cut[b]++;
    }
    unplace(s, i, um_mark, uf_mark);
    if (st == FOUND)
      s->sol[i] = x;
    if (hatless)
      break; /* nothing overlaps i any more: no other choice here does better */
  }
  s->cand_n = cbase;
  return st;
}

/* Solves the unplaced blocks of a partition as independent parts separated by the
 * boundaries no unplaced block crosses. */
static int solve_split(search_t *s, uint32_t slo, uint32_t shi, size_t pbase, uint32_t pn) {
  uint32_t a = slo;
  int st = FOUND;
  while (a < shi && st == FOUND) {
    uint32_t b = a;
    while (b + 1 < shi && s->cut[b] != 0)
      b++;
    b++; /* part [a, b) */
    size_t base = s->ids_n;
    s->units += pn;
    if (!grow((void **)&s->ids, &s->ids_cap, base + pn, sizeof *s->ids)) {
      s->oom = true;
      return ABORTED;
    }
    for (uint32_t k = 0; k < pn; k++) {
      uint32_t i = s->ids[pbase + k];
      if (s->off[i] == NONE && s->sec.lo[i] < b && a < s->sec.hi[i])
        s->ids[s->ids_n++] = i;
    }
    uint32_t cnt = (uint32_t)(s->ids_n - base);
    if (cnt > 0) {
      if (!grow((void **)&s->ids, &s->ids_cap, s->ids_n + cnt, sizeof *s->ids)) {
        s->oom = true;
        return ABORTED;
      }
      uint32_t *old = s->ids + base + cnt; /* the ranks the caller's part used */
      for (uint32_t k = 0; k < cnt; k++) {
        uint32_t i = s->ids[base + k];
        old[k] = s->rank[i];
        const sfc_pack_block_t *blk = &s->blocks[i];
        double t = 0;
        for (uint32_t c = s->sec.lo[i]; c < s->sec.hi[i]; c++)
          if ((double)s->total[c] > t)
            t = (double)s->total[c];
        double w = (double)blk->end - (double)blk->start;
        s->pre[k] = (pre_t){w, w * (double)blk->size, t, i};
      }
      s->ids_n += cnt;
      qsort(s->pre, cnt, sizeof *s->pre, preorders[s->heuristic]);
      for (uint32_t k = 0; k < cnt; k++)
        s->rank[s->pre[k].id] = k;
      st = search_node(s, a, b, base, cnt, 0, 0);
      old = s->ids + base + cnt;
      for (uint32_t k = 0; k < cnt; k++)
        s->rank[s->ids[base + k]] = old[k];
    }
    s->ids_n = base;
    a = b;
  }
  return st;
}

/* --- set-up -------------------------------------------------------------------- */

static void reset_state(search_t *s) {
  for (uint32_t i = 0; i < s->n; i++) {
    s->off[i] = NONE;
    s->minoff[i] = 0;
  }
  memset(s->floor, 0, s->nsec * sizeof *s->floor);
  memcpy(s->total, s->sec.total, s->nsec * sizeof *s->total);
  memcpy(s->cut, s->sec.cut, s->nsec * sizeof *s->cut);
}

/* One capacity: rounds of the three preorders under a doubling node limit. FOUND
 * (s->sol holds it), NOT_FOUND (proven infeasible), TIMED_OUT or ABORTED (memory). */
static int attempt(search_t *s, uint64_t cap, double deadline) {
  s->cap = cap;
  s->deadline = deadline;
  s->timed_out = false;
  int64_t limit = s->n;
  for (;;) {
    limit = limit > INT64_MAX / 2 ? INT64_MAX : limit * 2;
    for (int h = 0; h < N_PREORDERS; h++) {
      s->heuristic = h;
      reset_state(s);
      s->nodes_left = limit;
      s->ids_n = 0;
      for (uint32_t i = 0; i < s->n; i++)
        s->ids[s->ids_n++] = i;
      int st = solve_split(s, 0, s->nsec, 0, s->n);
      if (s->oom)
        return ABORTED;
      if (st != ABORTED)
        return st;
      if (s_now(s) > deadline)
        return TIMED_OUT;
    }
  }
}

static void search_free(search_t *s) {
  sfc_pack_sections_free(&s->sec);
  free(s->rank);
  free(s->off);
  free(s->minoff);
  free(s->floor);
  free(s->total);
  free(s->cut);
  free(s->sol);
  free(s->um);
  free(s->uf);
  free(s->cand);
  free(s->ids);
  free(s->stamp);
  free(s->affected);
}

static uint64_t peak_of(const uint64_t *off, const uint64_t *size, uint32_t n) {
  uint64_t peak = 0;
  for (uint32_t i = 0; i < n; i++)
    if (off[i] + size[i] > peak)
      peak = off[i] + size[i];
  return peak;
}

static const char *status_word(int st) {
  return st == FOUND ? "found" : st == NOT_FOUND ? "infeasible" : "timed out";
}

sfc_status_t sfc_pack_search(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                             sfc_pack_result_t *out, sfc_error_t *err) {
  double limit = opt && opt->time_limit_s > 0 ? opt->time_limit_s : SFC_PACK_EXACT_DEFAULT_S;
  double deadline = limit;
  int verbose = opt ? opt->verbose : 0;
  bool minimize = p->capacity == 0 || (opt && opt->minimize);
  out->algorithm = "search";
  out->peak = 0;
  if (p->count == 0)
    return SFC_OK;
  uint64_t best;
  SFC_TRY(sfc_pack_exact_incumbent(p, &best, err));
  out->peak = best;
  if (!minimize && best <= p->capacity)
    return SFC_OK;
  if (p->count > SEARCH_MAX_BLOCKS) {
    if (verbose > 0)
      fprintf(stderr, "search: %zu blocks, more than %u: keeping the incumbent\n", p->count,
              SEARCH_MAX_BLOCKS);
    return SFC_OK;
  }
  uint32_t n = (uint32_t)p->count;
  search_t s = {.n = n,
                .align = p->alignment ? p->alignment : 1,
                .blocks = p->blocks,
                .work_limit = opt ? opt->work_limit : 0};
  sfc_pack_clock_start(&s.clk, opt && opt->wall_clock, limit, opt ? opt->backstop_s : 0);
  uint64_t *size = malloc(n * sizeof *size);
  pre_t *pre = malloc(n * sizeof *pre);
  s.size = size;
  s.pre = pre;
  sfc_status_t st = SFC_OK;
  if (!size || !pre)
    goto oom;
  for (uint32_t i = 0; i < n; i++)
    size[i] = p->blocks[i].size;
  sfc_error_t why;
  st = sfc_pack_sections_build(p, SEARCH_MAX_PAIRS, &s.sec, &why);
  if (st == SFC_ERR_LIMIT) {
    if (verbose > 0)
      fprintf(stderr, "search: %s: keeping the incumbent\n", why.message);
    st = SFC_OK;
    goto done;
  }
  if (st != SFC_OK)
    goto oom;
  s.nsec = s.sec.count;
  size_t ns = s.nsec ? s.nsec : 1;
  s.rank = malloc(n * sizeof *s.rank);
  s.off = malloc(n * sizeof *s.off);
  s.minoff = malloc(n * sizeof *s.minoff);
  s.sol = malloc(n * sizeof *s.sol);
  s.floor = malloc(ns * sizeof *s.floor);
  s.total = malloc(ns * sizeof *s.total);
  s.cut = malloc(ns * sizeof *s.cut);
  s.stamp = calloc(ns, sizeof *s.stamp);
  s.affected = malloc(ns * sizeof *s.affected);
  if (!s.rank || !s.off || !s.minoff || !s.sol || !s.floor || !s.total || !s.cut || !s.stamp ||
      !s.affected || !grow((void **)&s.ids, &s.ids_cap, 4 * (size_t)n, sizeof *s.ids))
    goto oom;

  /* Lower bound on any peak: the largest section total, the largest block. */
  uint64_t lo = 0;
  for (uint32_t c = 0; c < s.nsec; c++)
    if (s.sec.total[c] > lo)
      lo = s.sec.total[c];
  /* When every size is a multiple of the alignment, every canonical peak is a sum
   * of sizes: a multiple of their gcd, the step of the capacities worth trying. */
  uint64_t unit = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t x = unit, y = size[i];
    while (y) {
      uint64_t t = x % y;
      x = y;
      y = t;
    }
    unit = size[i] % s.align == 0 ? x : 1;
    if (unit == 1)
      break;
  }
  lo = (lo + unit - 1) / unit * unit;
  uint64_t *best_off = malloc(n * sizeof *best_off);
  if (!best_off)
    goto oom;
  for (uint32_t i = 0; i < n; i++)
    best_off[i] = p->blocks[i].offset;

  int r;
  if (!minimize) {
    r = attempt(&s, p->capacity, deadline);
    if (verbose > 0)
      fprintf(stderr, "search: capacity %" PRIu64 ": %s after %.2f s, %" PRIu64 " nodes\n",
              p->capacity, status_word(r), s_now(&s), s.nodes);
    if (r == FOUND) {
      memcpy(best_off, s.sol, n * sizeof *best_off);
      best = peak_of(best_off, size, n);
    } else if (r == NOT_FOUND && p->capacity + 1 > lo) {
      lo = p->capacity + 1;
    }
  } else {
    /* Bisection between what is proven (lo) and what is found (best), the lower
     * bound first with a quarter of the time, then each try with a third of what
     * is left. A try that times out marks its capacity as hard: the next ones aim
     * between it and the best peak; once that range is empty, the hard marks are
     * forgotten and the remaining time goes to the capacity just below the best. */
    uint64_t hard = 0; /* every capacity <= hard timed out (0: none) */
    bool first = true;
    while (lo < best) {
      double now = s_now(&s);
      if (now >= deadline || (s.work_limit && s.nodes >= s.work_limit))
        break;
      uint64_t from = hard >= lo ? (hard / unit + 1) * unit : lo;
      if (!first && from >= best) {
        from = best - unit;
        hard = 0;
      }
      if (from < lo)
        break;
      uint64_t target = first ? lo : from + (best - unit - from) / unit / 2 * unit;
      double slice = (deadline - now) * (first ? 0.25 : 0.34);
      first = false;
      if (slice < 0.05)
        slice = deadline - now;
      r = attempt(&s, target, now + slice);
      if (verbose > 0)
        fprintf(stderr,
                "search: capacity %" PRIu64 ": %s after %.2f s, %" PRIu64 " nodes (best %" PRIu64
                ", bound %" PRIu64 ")\n",
                target, status_word(r), s_now(&s), s.nodes, best, lo);
      if (r == ABORTED)
        break;
      if (r == FOUND) {
        uint64_t peak = peak_of(s.sol, size, n);
        if (peak < best) {
          best = peak;
          memcpy(best_off, s.sol, n * sizeof *best_off);
        }
      } else if (r == NOT_FOUND) {
        lo = (target / unit + 1) * unit;
      } else if (target > hard) {
        hard = target;
      }
    }
  }
  for (uint32_t i = 0; i < n; i++)
    p->blocks[i].offset = best_off[i];
  free(best_off);
  out->peak = best;
  out->best_bound = lo < best ? lo : best;
  out->optimal = lo >= best;
  s_now(&s);
  out->work_s = s.clk.wall ? 0 : s.clk.work;
  out->wall_stopped = s.clk.wall_stopped;
  if (s.oom)
    goto oom;
  goto done;
oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "search: out of memory for %u blocks", n);
done:
  search_free(&s);
  free(size);
  free(pre);
  return st;
}
