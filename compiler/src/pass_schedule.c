/* pass_schedule.c — the residency scheduler: which tensors leave the device between
 * two uses, when their copies run, and the waits that order them (scheduler.policy
 * window; seed out-of-core-window-scheduling §3, with op times instead of bytes;
 * docs/algorithms.md "Window scheduler").
 *
 * Model. A candidate is a gap of a non-persistent tensor (activation or grad; not a
 * workspace, an output or a persistent tensor) between two consecutive use steps
 * u0 < u1 where u1 reads it. Evicting the gap:
 *   - swap-out issued before step u0 + 1, waiting for step u0 (its last use before);
 *     step w_out (> u0) waits for the copy to complete before it starts, so the
 *     residency before the gap is [.., w_out - 1]: a swapped-out block stays
 *     occupied until its D2H copy completes;
 *   - swap-in issued before step r_in (> w_out), waiting for step r_in - 1 (every
 *     earlier occupant of its bytes ended by then, and compute runs in order), for the
 *     swap-out that wrote the host copy, and for the swap-outs step r_in waits for
 *     (their blocks ended at r_in - 1 too, but their copies may still read them); its
 *     destination is occupied from its issue: [r_in, ..], flagged SWAPPED_IN; step u1
 *     waits for it;
 *   - the tensor is absent at steps w_out .. r_in - 1 (so a gap of 2 steps can go).
 * A residency that only read the tensor since its swap-in needs no second swap-out
 * (the host copy is still valid): its block ends at its last use u0, and the tensor
 * is absent from u0 + 1. Each swapped tensor has one host staging block (arena HOST)
 * from the step after its last write before its first swap-out (out_issue: the reorder
 * may issue that copy there) to its last swap-in's reader; the pack pass places them in
 * the pinned arena within host.staging_budget.
 *
 * Time. With step times t (unknown = 0) and copy times T = latency + bytes / bandwidth
 * (the profile's D2H and H2D), a gap is hideable when w_out, the first step whose
 * start comes T_out of compute after step u0 + 1 starts, and r_in, the latest step
 * from whose start T_in of compute remains before u1, leave a step absent. Otherwise
 * the gap's compute is split between the two copies in proportion to their times.
 *
 * Selection. Live device bytes per step (aligned block sizes) sit in a segment tree
 * with range add and maximum. While the maximum exceeds the budget, take the step k
 * with the largest excess (the first such step) and evict there:
 *   1. the hideable gap whose time-aware absent steps contain k, with the largest
 *      bytes x gap length (ties: the longest absent interval, then the first gap);
 *   2. else, in the same order, a gap that can still cover k at all: a non-hideable
 *      gap at its split, or one side of a gap widened to its maximum (swap-out
 *      waited for right after u0, or swap-in issued right before u1), stalling more.
 *   With schedule_rank_only (a window: auto candidate), the best ranked of 1 and 2:
 *   over a slow link, where little hides, preferring what hides costs traffic. With
 *   schedule_traffic_lp too, the values of a linear program of the fewest bytes copied
 *   (traffic_lp) rank the gaps before the priority. The priority bytes x length per copy
 *   (SFC_PRIORITY_AREA_COPY, after the LP only) counts a gap twice when it needs no
 *   swap-out, the tensor not written since its previous gap (as the LP counts it): a
 *   clean tensor can leave for one copy where a written one of the same bytes and gap
 *   costs two (ResNet-50 at 50 % on v100-nvlink2: 1.1451 -> 1.0879 of the bound).
 * Each choice is an item taken once from one of two "stabbing" trees (each interval
 * stored at O(log n) canonical nodes, lists in priority order with a cursor past
 * taken items), so the loop is O((gaps + steps) log steps), gaps <= uses. With a
 * host.staging_budget (at or above the least any plan stages), a third tree holds the
 * pinned bytes per step of the chosen gaps' host blocks (emit_schedule's spans) and a
 * gap that would push a step over it is passed over (for good: those bytes only grow);
 * when nothing else covers step k, the one of them covering k that goes least over it is
 * chosen anyway (the device budget first) and every gap passed over is back. Then, latest
 * choice first, every gap the budget holds without is given back (an early choice is
 * often covered by later, larger ones), which saves copies.
 * Timing, after the choice, within the target less schedule_prefetch_margin: the
 * swap-ins move earlier (prefetch: deadlines from the H2D queue, room given nearest
 * reader first, issue order kept in reader order) and, with schedule_lazy_waits, the
 * steps that wait for swap-outs move later (lazy_waits: towards the end of each copy
 * in the D2H queue), each only where the live bytes have room; with
 * schedule_sorted_waits too, the waits are then traded so that the swap-outs queued
 * first are waited for first (sort_waits).
 * The floor is the maximum over steps of the bytes left when every gap is evicted as
 * widely as it can be (persistent tensors, the step's own operands, workspaces,
 * outputs, copies in flight): the loop always reaches any target at or above it. A
 * budget below it sets schedule_infeasible, and the pass schedules for the floor (the
 * plan closest to the budget; the CLI says so and exits 1).
 *
 * Bound (docs/algorithms.md): with X_k the bytes live at step k in-core that are used
 * again after k, minus the budget (>= 0), every swap schedule takes at least
 * max(compute before k, X_k / D2H) + max(compute from k on, X_k / H2D), and at least
 * the compute time: time_bound_s is the maximum over k (for the floor when the
 * budget is below it).
 *
 * Limits: scheduler.prefetch_limit and a fixed scheduler.window give every step a floor
 * (sfc_swap_in_floor): no swap-in read at step k is issued before floor[k] — the
 * time-aware r_t, the prefetch and a homed tensor's load (limit_heads) all respect it.
 *
 * Reads: config (scheduler.policy, window, prefetch_limit, budget, link,
 * host.staging_budget), graph tensors
 * (bytes, kind), steps (time_us), uses, live, live_bytes, use_steps, blocks,
 * schedule_budget. Writes: blocks, n_blocks, lower_bound, swaps, n_swaps, deps, n_deps,
 * steps' dep_begin/dep_count, the schedule_* and swap statistics, staging_least(_step),
 * traffic_lp_* (with schedule_traffic_lp),
 * host_lower_bound,
 * compute_s, time_bound_s. Changes nothing else when the policy is none or the blocks
 * already fit the budget.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "oset.h"
#include "passes.h"

/* A paged arena: pages the first round keeps unplanned (sfc_pass_schedule). 16 pages of
 * 2 MiB took ResNet-50 at batch 1440 in 16 GiB (v100-nvlink2) from 1.0632 to 1.0435 of
 * its time bound in the prototype of 2026-11-29 (docs/algorithms.md). */
#define PAGED_SLACK 16u
#include "tiler.h"
#include "sfc/steps.h"

#define NONE SFC_PLAN_NONE

/* ---- live bytes per step: range add, maximum, leftmost argmax ------------------ */

typedef struct maxtree {
  int64_t *t; /* [2p] max of the subtree, including d of the node itself */
  int64_t *d; /* [p] pending add of the whole subtree */
  uint32_t p;
} maxtree_t;

static void mt_apply(maxtree_t *m, uint32_t x, int64_t v) {
  m->t[x] += v;
  if (x < m->p)
    m->d[x] += v;
}

static void mt_pull(maxtree_t *m, uint32_t x) {
  for (x >>= 1; x >= 1; x >>= 1) {
    int64_t a = m->t[2 * x], b = m->t[2 * x + 1];
    m->t[x] = (a > b ? a : b) + m->d[x];
  }
}

/* Adds v to steps [l, r]. */
static void mt_add(maxtree_t *m, uint32_t l, uint32_t r, int64_t v) {
  if (l > r)
    return;
  uint32_t l0 = l + m->p, r0 = r + m->p;
  for (uint32_t a = l + m->p, b = r + m->p + 1; a < b; a >>= 1, b >>= 1) {
    if (a & 1)
      mt_apply(m, a++, v);
    if (b & 1)
      mt_apply(m, --b, v);
  }
  mt_pull(m, l0);
  mt_pull(m, r0);
}

/* The first step holding the maximum. */
static uint32_t mt_argmax(const maxtree_t *m) {
  uint32_t x = 1;
  while (x < m->p) {
    int64_t want = m->t[x] - m->d[x];
    x = m->t[2 * x] == want ? 2 * x : 2 * x + 1;
  }
  return x - m->p;
}

/* The value at step k. */
static int64_t mt_get(const maxtree_t *m, uint32_t k) {
  int64_t v = m->t[k + m->p];
  for (uint32_t x = (k + m->p) >> 1; x >= 1; x >>= 1)
    v += m->d[x];
  return v;
}

/* The maximum over steps [l, r] (x covers [xl, xr]). */
static int64_t mt_query(const maxtree_t *m, uint32_t x, uint32_t xl, uint32_t xr, uint32_t l,
                        uint32_t r) {
  if (r < xl || xr < l)
    return INT64_MIN / 4;
  if (l <= xl && xr <= r)
    return m->t[x];
  uint32_t mid = xl + (xr - xl) / 2;
  int64_t a = mt_query(m, 2 * x, xl, mid, l, r), b = mt_query(m, 2 * x + 1, mid + 1, xr, l, r);
  return (a > b ? a : b) + m->d[x];
}

static int64_t mt_max(const maxtree_t *m, uint32_t l, uint32_t r) {
  return l > r ? INT64_MIN / 4 : mt_query(m, 1, 0, m->p - 1, l, r);
}

/* ---- stabbing lists: the best untaken item whose interval contains a step ------- */

typedef struct stab {
  uint32_t p;
  uint32_t *start;  /* [2p + 1] node x's items: list[start[x] .. start[x + 1]) */
  uint32_t *cursor; /* [2p] first entry of node x not known taken */
  uint32_t *list;   /* item ids, each node's in priority order */
} stab_t;

typedef struct item {
  uint32_t gap;
  uint32_t lo, hi; /* steps, inclusive */
  uint32_t rank;   /* position in priority order: lower is better */
  uint8_t kind;    /* ITEM_* */
  bool taken;
} item_t;

enum { ITEM_HIDDEN, ITEM_SPLIT, ITEM_LEFT, ITEM_RIGHT };

/* Stores each item of order[0 .. n) (priority order) at its canonical nodes. */
static bool stab_build(stab_t *s, uint32_t p, const item_t *items, const uint32_t *order,
                       uint32_t n) {
  s->p = p;
  s->start = calloc(2 * (size_t)p + 1, sizeof *s->start);
  s->cursor = calloc(2 * (size_t)p, sizeof *s->cursor);
  size_t total = 0;
  if (!s->start || !s->cursor)
    return false;
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t i = 0; i < n; i++) {
      const item_t *it = &items[order[i]];
      for (uint32_t a = it->lo + p, b = it->hi + p + 1; a < b; a >>= 1, b >>= 1) {
        if (a & 1) {
          if (pass == 0)
            s->start[a + 1]++;
          else
            s->list[s->cursor[a]++] = order[i];
          a++;
        }
        if (b & 1) {
          --b;
          if (pass == 0)
            s->start[b + 1]++;
          else
            s->list[s->cursor[b]++] = order[i];
        }
      }
    }
    if (pass == 0) {
      for (uint32_t x = 0; x < 2 * p; x++)
        s->start[x + 1] += s->start[x];
      total = s->start[2 * p];
      s->list = malloc((total ? total : 1) * sizeof *s->list);
      if (!s->list)
        return false;
      memcpy(s->cursor, s->start, 2 * (size_t)p * sizeof *s->cursor);
    }
  }
  memcpy(s->cursor, s->start, 2 * (size_t)p * sizeof *s->cursor);
  return true;
}

static void stab_free(stab_t *s) {
  free(s->start);
  free(s->cursor);
  free(s->list);
}

/* The untaken item of best rank containing step k, or NONE. Amortised O(log n). */
static uint32_t stab_query(stab_t *s, const item_t *items, uint32_t k) {
  uint32_t best = NONE;
  for (uint32_t x = k + s->p; x >= 1; x >>= 1) {
    while (s->cursor[x] < s->start[x + 1] && items[s->list[s->cursor[x]]].taken)
      s->cursor[x]++;
    if (s->cursor[x] < s->start[x + 1]) {
      uint32_t i = s->list[s->cursor[x]];
      if (best == NONE || items[i].rank < items[best].rank)
        best = i;
    }
  }
  return best;
}

/* ---- gaps ---------------------------------------------------------------------- */

enum { GAP_MID, GAP_HEAD, GAP_TAIL };

typedef struct gap {
  uint32_t tensor;
  uint32_t use;      /* u0 is the tensor's use `use`, u1 its use `use + 1`; HEAD: UINT32_MAX
                        (before use 0), TAIL: the last use */
  uint32_t u0, u1;   /* u1 - u0 >= 2; HEAD: u0 = UINT32_MAX (before step 0), u1 = the first
                        use >= 1; TAIL: u0 = the last use <= n - 2, u1 = n (no swap-in) */
  uint8_t end;       /* GAP_*: HEAD and TAIL only for tensors homed on the host */
  uint64_t bytes;    /* the device block's (aligned) */
  uint32_t w_t, r_t; /* time-aware w_out and r_in */
  bool hideable;
  uint32_t item[4]; /* its items by ITEM_* kind, NONE when it has none */
  /* state */
  bool chosen, need;    /* need: a swap-out (something wrote the tensor since) */
  uint32_t w_out, r_in; /* current; w_out only when need */
  uint32_t seq;         /* choice order (1, 2, ...), 0 before */
} gap_t;

typedef struct sched {
  sfc_ir_t *ir;
  uint32_t n;          /* steps */
  double *prefix;      /* [n + 1] compute time (us) of steps before k */
  uint32_t *in_floor;  /* [n] the earliest issue step of a swap-in read at step k
                          (sfc_swap_in_floor), NULL: no limit */
  uint32_t *blk;       /* [tensors] its device block, NONE */
  uint32_t *write_pre; /* [n_use_steps + 1] writes among use_steps[0 .. j) */
  uint8_t *first_acc;  /* [tensors] access bits of its first use step */
  gap_t *gaps;
  uint32_t n_gaps;
  item_t *items;
  uint32_t n_items;
  maxtree_t live;
  sfc_oset_t chosen; /* chosen gaps keyed by (tensor << 32 | use) */
  /* host.staging_budget (select_gaps): pinned bytes per step of the chosen gaps' host
   * blocks, each tensor's block span so far ([hlo, hhi], hlo NONE before any) */
  bool host_on;
  int64_t host_cap;
  maxtree_t host;
  uint32_t *hlo, *hhi;
} sched_t;

/* The first absent step the gap can have (HEAD: step 0). */
static uint32_t gap_lo(const gap_t *g) {
  return g->end == GAP_HEAD ? 0 : g->u0 + 1;
}

/* The step before which gap g's swap-out is issued: right after the tensor's last write
 * at or before u0, so the D2H engine starts as soon as the value is final (the steps
 * between only read it, and a copy may read beside them: rule 53 orders writes only);
 * u0 + 1 for the baselines, whose systems copy after the use. A gap with no write before
 * it in this iteration (its residency only read) needs no swap-out. */
static uint32_t out_issue(const sched_t *s, const gap_t *g) {
  if (s->ir->config->scheduler.policy != SFC_SCHED_WINDOW || g->end == GAP_HEAD)
    return g->u0 + 1;
  uint32_t base = s->ir->live[g->tensor].use_begin;
  for (uint32_t j = g->use + 1; j-- > 0;)
    if (s->write_pre[base + j + 1] > s->write_pre[base + j])
      return s->ir->use_steps[base + j] + 1;
  return g->u0 + 1;
}

/* The first use after the gap's (HEAD: use 0). */
static uint32_t next_use(const gap_t *g) {
  return g->end == GAP_HEAD ? 0 : g->use + 1;
}

static uint64_t gap_key(const gap_t *g) { /* HEAD before the tensor's other gaps */
  return (uint64_t)g->tensor << 32 | next_use(g);
}

/* Writes among the tensor's uses [a, b] (indices into its use list). */
static uint32_t writes_between(const sched_t *s, uint32_t t, uint32_t a, uint32_t b) {
  uint32_t base = s->ir->live[t].use_begin;
  return a > b ? 0 : s->write_pre[base + b + 1] - s->write_pre[base + a];
}

static double span_us(const sched_t *s, uint32_t a, uint32_t b) { /* steps [a, b) */
  return b > a ? s->prefix[b] - s->prefix[a] : 0;
}

/* Smallest s in [lo, hi] with span(from, s) >= need, or NONE. */
static uint32_t first_covering(const sched_t *s, uint32_t from, uint32_t lo, uint32_t hi,
                               double need) {
  if (lo > hi || span_us(s, from, hi) < need)
    return NONE;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (span_us(s, from, mid) >= need)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Largest r in [lo, hi] with span(r, to) >= need, or NONE. */
static uint32_t last_covering(const sched_t *s, uint32_t to, uint32_t lo, uint32_t hi,
                              double need) {
  if (lo > hi || span_us(s, lo, to) < need)
    return NONE;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (span_us(s, mid, to) >= need)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

bool sfc_swap_in_floor(const sfc_ir_t *ir, uint32_t **out) {
  const sfc_config_t *cfg = ir->config;
  uint32_t n = ir->n_steps, limit = cfg->scheduler.prefetch_limit;
  uint64_t window = cfg->scheduler.window_auto ? 0 : cfg->scheduler.window_bytes;
  *out = NULL;
  if (cfg->scheduler.policy != SFC_SCHED_WINDOW || (limit == 0 && window == 0) || n == 0)
    return true;
  uint32_t *floor = malloc((size_t)n * sizeof *floor);
  uint64_t *seq = malloc(((size_t)n + 1) * sizeof *seq); /* variable-sequence bytes before k */
  if (!floor || !seq) {
    free(floor);
    free(seq);
    return false;
  }
  seq[0] = 0;
  for (uint32_t k = 0; k < n; k++) {
    const sfc_step_t *st = &ir->steps[k];
    uint64_t sum = seq[k];
    for (uint32_t i = 0; i < st->use_count; i++) {
      const sfc_use_t *u = &ir->uses[st->use_begin + i];
      const sfc_tensor_t *x = &ir->graph->tensors[u->tensor];
      uint64_t b = u->box == NONE ? x->bytes : sfc_ft_plan_box_bytes(x, &ir->boxes[u->box]);
      sum = b > UINT64_MAX - sum ? UINT64_MAX : sum + b;
    }
    seq[k + 1] = sum;
  }
  for (uint32_t k = 0, r = 0; k < n; k++) {
    uint32_t f = limit && k > limit ? k - limit : 0;
    if (window) { /* the first r whose sequence from step r through step k fits the window */
      while (r < k && seq[k + 1] - seq[r] > window)
        r++;
      if (seq[k + 1] - seq[r] > window)
        r = k; /* the reader alone is larger: issued just before it */
      f = r > f ? r : f;
    }
    floor[k] = f;
  }
  free(seq);
  *out = floor;
  return true;
}

/* The time-aware w_out and r_in of a gap (see the file comment). */
static void place_copies(const sched_t *s, gap_t *g) {
  const sfc_config_t *cfg = s->ir->config;
  double bytes = (double)s->ir->graph->tensors[g->tensor].bytes;
  double lat = cfg->device.copy_latency_s > 0 ? cfg->device.copy_latency_s * 1e6 : 0;
  double t_out =
      lat + (cfg->device.d2h_bytes_per_s > 0 ? bytes / cfg->device.d2h_bytes_per_s * 1e6 : 0);
  double t_in =
      lat + (cfg->device.h2d_bytes_per_s > 0 ? bytes / cfg->device.h2d_bytes_per_s * 1e6 : 0);
  uint32_t a = gap_lo(g), b = g->u1;
  if (g->end == GAP_HEAD) { /* a swap-in only: from the home, before the first use */
    uint32_t r = last_covering(s, b, 1, b, t_in);
    g->hideable = r != NONE;
    g->w_t = 0;
    g->r_t = r != NONE ? r : 1; /* absent at step 0 only, the rest of the copy stalls */
    if (s->in_floor && g->r_t < s->in_floor[b]) { /* the limits: later, it stalls more */
      g->hideable = false;
      g->r_t = s->in_floor[b] > 1 ? s->in_floor[b] : 1;
    }
    return;
  }
  if (g->end == GAP_TAIL) { /* a swap-out only: into the home, after the last use */
    uint32_t w = first_covering(s, a, a, b - 1, t_out);
    g->hideable = w != NONE;
    g->w_t = w != NONE ? w : b - 1;
    g->r_t = b;
    return;
  }
  uint32_t w = first_covering(s, a, a, b - 1, t_out);
  uint32_t r = last_covering(s, b, a, b, t_in);
  if (r != NONE && s->in_floor && r < s->in_floor[b])
    r = NONE; /* hidden only by a swap-in issued earlier than the limits allow */
  g->hideable = w != NONE && r != NONE && r > w;
  if (g->hideable) {
    g->w_t = w;
    g->r_t = r;
    return;
  }
  double c = span_us(s, a, b), sum = t_out + t_in;
  double need_out = sum > 0 ? c * (t_out / sum) : 0, need_in = sum > 0 ? c * (t_in / sum) : 0;
  w = first_covering(s, a, a, b - 1, need_out);
  g->w_t = w == NONE ? b - 1 : w;
  r = last_covering(s, b, g->w_t + 1, b, need_in);
  g->r_t = r == NONE ? g->w_t + 1 : r;
  if (s->in_floor && g->r_t < s->in_floor[b])
    g->r_t = s->in_floor[b]; /* the limits: later, and the copy stalls more */
}

/* The gap's current absent steps [*lo, *hi] (empty when *lo > *hi). */
static void absent(const gap_t *g, uint32_t *lo, uint32_t *hi) {
  *lo = g->need ? g->w_out : gap_lo(g);
  *hi = g->r_in - 1;
}

static void take_item(sched_t *s, gap_t *g, int kind) {
  if (g->item[kind] != NONE)
    s->items[g->item[kind]].taken = true;
}

/* Moves the gap's copies to w_out and r_in, which only adds absent steps: lowers the
 * live bytes on the steps it adds. */
static void widen(sched_t *s, gap_t *g, uint32_t w_out, uint32_t r_in) {
  bool had = g->chosen;
  uint32_t lo0 = 0, hi0 = 0, lo, hi;
  if (had)
    absent(g, &lo0, &hi0);
  g->w_out = w_out;
  g->r_in = r_in;
  absent(g, &lo, &hi);
  int64_t v = -(int64_t)g->bytes;
  if (!had) {
    mt_add(&s->live, lo, hi, v);
    return;
  }
  if (lo < lo0)
    mt_add(&s->live, lo, lo0 - 1, v);
  if (hi > hi0)
    mt_add(&s->live, hi0 + 1, hi, v);
}

/* A read-only residency since the previous swap-in: the gap's swap-out goes, and the
 * tensor leaves right after its last use. */
static void drop_swap_out(sched_t *s, gap_t *g) {
  uint32_t lo, hi;
  absent(g, &lo, &hi);
  g->need = false;
  if (lo > gap_lo(g))
    mt_add(&s->live, gap_lo(g), lo - 1, -(int64_t)g->bytes);
  take_item(s, g, ITEM_LEFT);
}

/* Chooses gap g with copies at w_out and r_in. */
static void choose(sched_t *s, uint32_t gi, uint32_t w_out, uint32_t r_in) {
  gap_t *g = &s->gaps[gi];
  uint64_t key = gap_key(g);
  uint32_t p = sfc_oset_prev(&s->chosen, key, gi), q = sfc_oset_next(&s->chosen, key, gi);
  if (p != SFC_OSET_NONE && s->gaps[p].tensor != g->tensor)
    p = SFC_OSET_NONE;
  if (q != SFC_OSET_NONE && s->gaps[q].tensor != g->tensor)
    q = SFC_OSET_NONE;
  /* The residency before the gap holds uses (p.use + 1 .. use], or [0 .. use]; before a
   * HEAD there is none (the home holds the tensor) */
  g->need =
      g->end != GAP_HEAD &&
      writes_between(s, g->tensor, p == SFC_OSET_NONE ? 0 : next_use(&s->gaps[p]), g->use) > 0;
  widen(s, g, w_out, r_in);
  g->chosen = true;
  sfc_oset_insert(&s->chosen, key, gi);
  take_item(s, g, ITEM_HIDDEN);
  take_item(s, g, ITEM_SPLIT);
  if (!g->need)
    take_item(s, g, ITEM_LEFT);
  if (q != SFC_OSET_NONE && s->gaps[q].need &&
      writes_between(s, g->tensor, next_use(g), s->gaps[q].use) == 0)
    drop_swap_out(s, &s->gaps[q]);
}

/* Gives up gap gi when the steps it frees stay within target without it (the next
 * chosen gap of the tensor may need its swap-out back). */
static bool unchoose(sched_t *s, uint32_t gi, int64_t target) {
  gap_t *g = &s->gaps[gi];
  uint64_t key = gap_key(g);
  uint32_t p = sfc_oset_prev(&s->chosen, key, gi), q = sfc_oset_next(&s->chosen, key, gi);
  if (p != SFC_OSET_NONE && s->gaps[p].tensor != g->tensor)
    p = SFC_OSET_NONE;
  if (q != SFC_OSET_NONE && s->gaps[q].tensor != g->tensor)
    q = SFC_OSET_NONE;
  int64_t v = (int64_t)g->bytes;
  uint32_t lo, hi, qlo = 1, qhi = 0;
  absent(g, &lo, &hi);
  if (mt_max(&s->live, lo, hi) + v > target)
    return false;
  gap_t *x = q == SFC_OSET_NONE ? NULL : &s->gaps[q];
  bool back =
      x && !x->need &&
      writes_between(s, g->tensor, p == SFC_OSET_NONE ? 0 : next_use(&s->gaps[p]), x->use) > 0;
  if (back) {
    qlo = gap_lo(x);
    qhi = x->w_out - 1;
    if (mt_max(&s->live, qlo, qhi) + v > target)
      return false;
  }
  mt_add(&s->live, lo, hi, v);
  if (back) {
    x->need = true;
    mt_add(&s->live, qlo, qhi, v);
  }
  g->chosen = false;
  sfc_oset_erase(&s->chosen, key, gi);
  return true;
}

unsigned sfc_step_access(const sfc_ir_t *ir, uint32_t tensor, uint32_t step) {
  const sfc_step_t *s = &ir->steps[step];
  unsigned a = 0;
  for (uint32_t i = 0; i < s->use_count; i++)
    if (ir->uses[s->use_begin + i].tensor == tensor)
      a |= ir->uses[s->use_begin + i].access;
  return a;
}

int sfc_cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* The first step s in [lo, hi + 1] such that steps [s, hi] all stay <= target with v
 * more bytes (hi + 1: not even hi). */
static uint32_t earliest_room(const sched_t *s, uint32_t lo, uint32_t hi, int64_t v,
                              int64_t target) {
  uint32_t a = lo, b = hi + 1;
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (mt_max(&s->live, mid, hi) + v <= target)
      b = mid;
    else
      a = mid + 1;
  }
  return a;
}

/* scheduler.prefetch_limit, a fixed window (in_floor): a homed tensor that has a chosen
 * gap is brought from its home at step 0 unless its HEAD gap is chosen too; where its
 * first use reads it further ahead than the limits allow, the HEAD gap is chosen with
 * its swap-in at the limit (fewer live bytes: the target still holds). Returns false
 * when out of memory. */
static bool limit_heads(sched_t *s) {
  if (!s->in_floor)
    return true;
  uint8_t *swapped = calloc((size_t)s->ir->graph->n_tensors + 1, 1);
  if (!swapped)
    return false;
  for (uint32_t i = 0; i < s->n_gaps; i++)
    swapped[s->gaps[i].tensor] |= s->gaps[i].chosen;
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    const gap_t *g = &s->gaps[i]; /* a HEAD's u1 is a step (a TAIL's is n) */
    if (g->end == GAP_HEAD && !g->chosen && swapped[g->tensor] && s->in_floor[g->u1] > 0 &&
        (s->first_acc[g->tensor] & SFC_ACCESS_READ))
      choose(s, i, 0, s->in_floor[g->u1]);
  }
  free(swapped);
  return true;
}

/* Swap-ins complete in issue order, so one may wait behind others: on the compute
 * timeline without stalls, swap-in j (in reader order) must start by
 * s_j = min(start of step u1_j, s_(j+1)) - T_in_j (computed from the last reader back).
 * Then, nearest reader first, each moves earlier towards the last step that starts by
 * s_j, but not ahead of the previous swap-in's issue step (the queue serves them in
 * reader order), as far as the budget allows (the seed's window, which reaches ahead as
 * far as memory allows); one absent step stays. Nearest first: the room goes to the
 * swap-ins the backward pass needs soonest. Returns whether any moved. */
static bool prefetch(sched_t *s, int64_t target) {
  const sfc_config_t *cfg = s->ir->config;
  uint32_t n = 0;
  bool moved = false;
  uint64_t *keys = malloc(((size_t)s->n_gaps + 1) * sizeof *keys);
  double *by = malloc(((size_t)s->n_gaps + 1) * sizeof *by);
  if (!keys || !by) {
    free(keys);
    free(by);
    return false; /* an optimisation: without memory, the swap-ins stay where they are */
  }
  for (uint32_t i = 0; i < s->n_gaps; i++)
    if (s->gaps[i].chosen && s->gaps[i].end != GAP_TAIL) /* a TAIL has no swap-in */
      keys[n++] = (uint64_t)s->gaps[i].u1 << 32 | i;
  qsort(keys, n, sizeof *keys, sfc_cmp_u64);
  double next = INFINITY;
  double lat = cfg->device.copy_latency_s > 0 ? cfg->device.copy_latency_s * 1e6 : 0;
  double bw = cfg->device.h2d_bytes_per_s;
  for (uint32_t j = n; j-- > 0;) {
    gap_t *g = &s->gaps[(uint32_t)keys[j]];
    double t_in = lat + (bw > 0 ? (double)s->ir->graph->tensors[g->tensor].bytes / bw * 1e6 : 0);
    double start = (s->prefix[g->u1] < next ? s->prefix[g->u1] : next) - t_in;
    next = start;
    by[j] = start;
  }
  uint32_t floor_r = 0; /* the previous swap-in's issue step */
  for (uint32_t j = 0; j < n; j++) {
    gap_t *g = &s->gaps[(uint32_t)keys[j]];
    double start = by[j];
    uint32_t lo, hi;
    absent(g, &lo, &hi);
    uint32_t a = lo + 1, b = g->r_in; /* the last r in [lo + 1, r_in] starting by then */
    while (a < b) {
      uint32_t mid = a + (b - a + 1) / 2;
      if (s->prefix[mid] <= start)
        a = mid;
      else
        b = mid - 1;
    }
    if (a < floor_r) /* not ahead of a swap-in whose reader comes first */
      a = floor_r;
    if (s->in_floor && a < s->in_floor[g->u1]) /* nor earlier than the limits allow */
      a = s->in_floor[g->u1];
    if (a >= g->r_in) {
      floor_r = g->r_in;
      continue;
    }
    uint32_t r = earliest_room(s, a, hi, (int64_t)g->bytes, target);
    if (r <= hi) {
      mt_add(&s->live, r, hi, (int64_t)g->bytes);
      g->r_in = r;
      moved = true;
    }
    floor_r = g->r_in;
  }
  free(keys);
  free(by);
  return moved;
}

/* The latest step w in [lo, hi] such that steps [lo, w - 1] all stay <= target with v
 * more bytes (lo: none of them). */
static uint32_t latest_room(const sched_t *s, uint32_t lo, uint32_t hi, int64_t v, int64_t target) {
  uint32_t a = lo, b = hi;
  while (a < b) {
    uint32_t mid = a + (b - a + 1) / 2;
    if (mt_max(&s->live, lo, mid - 1) + v <= target)
      a = mid;
    else
      b = mid - 1;
  }
  return a;
}

/* The chosen swap-outs in D2H queue order (by last use u0, then gap): (u0 << 32 | gap)
 * keys, *n of them; NULL when out of memory. */
static uint64_t *swap_out_queue(const sched_t *s, uint32_t *n) {
  uint64_t *keys = malloc(((size_t)s->n_gaps + 1) * sizeof *keys);
  if (!keys)
    return NULL;
  *n = 0;
  for (uint32_t i = 0; i < s->n_gaps; i++)
    if (s->gaps[i].chosen && s->gaps[i].need)
      keys[(*n)++] = (uint64_t)s->gaps[i].u0 << 32 | i;
  qsort(keys, *n, sizeof *keys, sfc_cmp_u64);
  return keys;
}

/* With schedule_sorted_waits, after lazy_waits (whose room goes to the swap-outs in
 * queue order, which leaves later ones waited for early): swap-outs complete in queue
 * order (issue order: by last use u0), so a wait for one queued late at an early step
 * stalls while copies waited for later go first. Where
 * an earlier-queued swap-out i is waited for after a later-queued j (w_i > w_j), the
 * two trade wait steps when both stay within their gaps and the budget holds: the
 * live bytes over [w_j, w_i - 1] change by bytes_j - bytes_i. Insertion order over the
 * queue, each looking back at most SORT_WINDOW places. Returns whether any moved. */
#define SORT_WINDOW 256u
static bool sort_waits(sched_t *s, int64_t target) {
  uint32_t n = 0;
  bool moved = false;
  uint64_t *keys = swap_out_queue(s, &n);
  if (!keys)
    return false;
  for (uint32_t j = 1; j < n; j++) {
    gap_t *gj = &s->gaps[(uint32_t)keys[j]];
    for (uint32_t i = j > SORT_WINDOW ? j - SORT_WINDOW : 0; i < j; i++) {
      gap_t *gi = &s->gaps[(uint32_t)keys[i]];
      uint32_t wi = gi->w_out, wj = gj->w_out;
      if (wi <= wj || wj < gap_lo(gi) || wi > gj->r_in - 1)
        continue;
      int64_t d = (int64_t)gj->bytes - (int64_t)gi->bytes;
      if (d > 0 && mt_max(&s->live, wj, wi - 1) + d > target)
        continue;
      if (d != 0)
        mt_add(&s->live, wj, wi - 1, d);
      gi->w_out = wj;
      gj->w_out = wi;
      moved = true;
    }
  }
  free(keys);
  return moved;
}

/* Swap-outs complete in issue order too: on the compute timeline without stalls,
 * swap-out j ends at e_j = max(e_(j-1), start of step u0_j + 1) + T_out_j. Each step
 * w_out that waits for one before it ends stalls, so in issue order each wait moves
 * later, towards the first step that starts at e_j (never past r_in - 1), as far as
 * the budget has room. Returns whether any moved. */
static bool lazy_waits(sched_t *s, int64_t target) {
  const sfc_config_t *cfg = s->ir->config;
  uint32_t n = 0;
  bool moved = false;
  uint64_t *keys = swap_out_queue(s, &n);
  if (!keys)
    return false;
  double lat = cfg->device.copy_latency_s > 0 ? cfg->device.copy_latency_s * 1e6 : 0;
  double bw = cfg->device.d2h_bytes_per_s, end = 0;
  for (uint32_t j = 0; j < n; j++) {
    gap_t *g = &s->gaps[(uint32_t)keys[j]];
    double t_out = lat + (bw > 0 ? (double)s->ir->graph->tensors[g->tensor].bytes / bw * 1e6 : 0);
    double begin = s->prefix[g->u0 + 1];
    end = (end > begin ? end : begin) + t_out;
    uint32_t a = g->w_out, b = g->r_in - 1; /* the first step in [w_out, r_in - 1] from end */
    while (a < b) {
      uint32_t mid = a + (b - a) / 2;
      if (s->prefix[mid] >= end)
        b = mid;
      else
        a = mid + 1;
    }
    if (a <= g->w_out)
      continue;
    uint32_t w = latest_room(s, g->w_out, a, (int64_t)g->bytes, target);
    if (w > g->w_out) {
      mt_add(&s->live, g->w_out, w - 1, (int64_t)g->bytes);
      g->w_out = w;
      moved = true;
    }
  }
  free(keys);
  return moved;
}

static bool homed(const sfc_block_t *b);

/* The host block span choosing gap g would give its tensor (emit_schedule's): a home
 * lives at every step; a swapped tensor's block from its first swap-out's earliest issue
 * (out_issue) to its last swap-in's reader. */
static void host_span(const sched_t *s, const gap_t *g, uint32_t *lo, uint32_t *hi) {
  uint32_t t = g->tensor;
  if (homed(&s->ir->blocks[s->blk[t]])) {
    *lo = 0;
    *hi = s->n - 1;
  } else {
    *lo = out_issue(s, g);
    *hi = g->u1;
  }
  if (s->hlo[t] != NONE) {
    *lo = s->hlo[t] < *lo ? s->hlo[t] : *lo;
    *hi = s->hhi[t] > *hi ? s->hhi[t] : *hi;
  }
}

/* How far choosing gap g would take the pinned bytes over host.staging_budget at its
 * worst step (<= 0: within it; a gap already chosen, widened, adds none). */
static int64_t host_over(const sched_t *s, const gap_t *g) {
  uint32_t lo, hi, t = g->tensor;
  if (!s->host_on || g->chosen)
    return INT64_MIN / 4;
  host_span(s, g, &lo, &hi);
  int64_t worst;
  if (s->hlo[t] == NONE) {
    worst = mt_max(&s->host, lo, hi);
  } else { /* the steps the span adds: before its old start, after its old end */
    worst = mt_max(&s->host, s->hhi[t] + 1, hi);
    if (lo < s->hlo[t]) {
      int64_t w = mt_max(&s->host, lo, s->hlo[t] - 1);
      worst = w > worst ? w : worst;
    }
  }
  return worst + (int64_t)g->bytes - s->host_cap;
}

static bool host_room(const sched_t *s, const gap_t *g) {
  return host_over(s, g) <= 0;
}

/* Adds gap g's host block span (before it is chosen). */
static void host_take(sched_t *s, const gap_t *g) {
  uint32_t lo, hi, t = g->tensor;
  if (!s->host_on || g->chosen)
    return;
  host_span(s, g, &lo, &hi);
  int64_t v = (int64_t)g->bytes;
  if (s->hlo[t] == NONE) {
    mt_add(&s->host, lo, hi, v);
  } else {
    if (lo < s->hlo[t])
      mt_add(&s->host, lo, s->hlo[t] - 1, v);
    if (hi > s->hhi[t])
      mt_add(&s->host, s->hhi[t] + 1, hi, v);
  }
  s->hlo[t] = lo;
  s->hhi[t] = hi;
}

/* Applies item i at the step it was found for. */
static void apply_item(sched_t *s, uint32_t i) {
  item_t *it = &s->items[i];
  gap_t *g = &s->gaps[it->gap];
  it->taken = true;
  uint32_t w = g->chosen ? g->w_out : g->w_t, r = g->chosen ? g->r_in : g->r_t;
  if (it->kind == ITEM_LEFT)
    w = gap_lo(g);
  else if (it->kind == ITEM_RIGHT)
    r = g->u1;
  if (g->chosen) {
    widen(s, g, w, r);
  } else {
    host_take(s, g);
    choose(s, it->gap, w, r);
  }
}

/* ---- building the gaps and the items ------------------------------------------- */

/* Priority: the traffic LP's value (schedule_traffic_lp; else 0), the largest bytes, then
 * the longest interval, then the first gap. */
typedef struct item_key {
  uint64_t lp, bytes;
  uint32_t length, gap, kind, id;
} item_key_t;

static int cmp_item_key(const void *pa, const void *pb) {
  const item_key_t *a = pa, *b = pb;
  if (a->lp != b->lp)
    return a->lp > b->lp ? -1 : 1;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  if (a->length != b->length)
    return a->length > b->length ? -1 : 1;
  if (a->gap != b->gap)
    return a->gap < b->gap ? -1 : 1;
  return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static uint32_t add_item(sched_t *s, uint32_t gi, int kind, uint32_t lo, uint32_t hi) {
  if (lo > hi)
    return NONE;
  s->items[s->n_items] = (item_t){.gap = gi, .lo = lo, .hi = hi, .kind = (uint8_t)kind};
  return s->n_items++;
}

/* A block whose tensor may leave the device: an activation's or a gradient's, or a
 * persistent tensor's whole block (its home moves to the host: homed()). */
static bool is_candidate(const sfc_ir_t *ir, const sfc_block_t *b) {
  sfc_tensor_kind_t kind = ir->graph->tensors[b->tensor].kind;
  if (b->arena != SFC_ARENA_DEVICE || b->placed || b->bytes == 0 ||
      (b->flags & (SFC_BLOCK_PARTIAL | SFC_BLOCK_EXTERNAL)))
    return false;
  if (b->flags & SFC_BLOCK_PERSISTENT)
    return true;
  return kind == SFC_KIND_ACTIVATION || kind == SFC_KIND_GRAD;
}

/* A candidate's tensor is homed on the host when any of its gaps is chosen. */
static bool homed(const sfc_block_t *b) {
  return (b->flags & SFC_BLOCK_PERSISTENT) != 0;
}

static sfc_status_t oom(sfc_error_t *err) {
  return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory scheduling residencies");
}

/* ---- the time bound ------------------------------------------------------------ */

typedef struct bound_ctx {
  const sfc_graph_t *g;
  int64_t *diff;
} bound_ctx_t;

/* A per-tile buffer is used again after k over its run but its last step. */
static void bound_run(void *p, uint32_t tensor, uint32_t first, uint32_t last,
                      const sfc_plan_box_t *hull) {
  bound_ctx_t *c = p;
  if (last > first)
    sfc_sweep_add(c->diff, first, last - 1, sfc_ft_plan_box_bytes(&c->g->tensors[tensor], hull));
}

/* The bound for schedules within `budget` (0: none). */
static sfc_status_t time_bound(sfc_ir_t *ir, const double *prefix, uint64_t budget,
                               sfc_error_t *err) {
  uint32_t n = ir->n_steps;
  const sfc_config_t *cfg = ir->config;
  double total = prefix[n] * 1e-6;
  ir->compute_s = total;
  ir->time_bound_s = total;
  if (budget == 0)
    return SFC_OK;
  int64_t *diff = calloc((size_t)n + 1, sizeof *diff);
  if (!diff)
    return oom(err);
  bool *partial = calloc(ir->graph->n_tensors + 1u, sizeof *partial);
  if (!partial) {
    free(diff);
    return oom(err);
  }
  bool any_partial = sfc_ft_mark_partial(ir, partial) > 0;
  /* clean[k]: the bytes of persistent tensors used after k that nothing wrote at or
   * before k: their home holds them, so they leave at k without a swap-out */
  int64_t *clean = calloc((size_t)n + 1, sizeof *clean);
  uint32_t *first_write = malloc(((size_t)ir->graph->n_tensors + 1) * sizeof *first_write);
  if (!clean || !first_write) {
    free(diff);
    free(partial);
    free(clean);
    free(first_write);
    return oom(err);
  }
  for (uint32_t t = 0; t < ir->graph->n_tensors; t++)
    first_write[t] = NONE;
  for (uint32_t k = n; k-- > 0;)
    for (uint32_t i = 0; i < ir->steps[k].use_count; i++)
      if (ir->uses[ir->steps[k].use_begin + i].access & SFC_ACCESS_WRITE)
        first_write[ir->uses[ir->steps[k].use_begin + i].tensor] = k;
  for (uint32_t t = 0; t < ir->graph->n_tensors; t++) {
    const sfc_live_t *l = &ir->live[t];
    if (l->first_step == NONE || l->use_count == 0 || partial[t])
      continue;
    uint32_t last_use = ir->use_steps[l->use_begin + l->use_count - 1];
    if (last_use > l->first_step) /* live at k and used after k: k in [first, last_use) */
      sfc_sweep_add(diff, l->first_step, last_use - 1, ir->graph->tensors[t].bytes);
    uint32_t w = first_write[t] < last_use ? first_write[t] : last_use;
    if ((ir->graph->tensors[t].flags & SFC_TENSOR_PERSISTENT) && w > l->first_step)
      sfc_sweep_add(clean, l->first_step, w - 1, ir->graph->tensors[t].bytes);
  }
  free(first_write);
  free(partial);
  if (any_partial) { /* a tile's buffer: its box, over its tile's run */
    bound_ctx_t bc = {ir->graph, diff};
    sfc_status_t st = sfc_ft_partial_runs(ir, bound_run, &bc, err);
    if (st != SFC_OK) {
      free(diff);
      free(clean);
      return st;
    }
  }
  double d2h = cfg->device.d2h_bytes_per_s, h2d = cfg->device.h2d_bytes_per_s;
  int64_t x = 0, y = 0;
  for (uint32_t k = 0; k < n; k++) {
    x += diff[k];
    y += clean[k];
    if ((uint64_t)x <= budget)
      continue;
    double over = (double)((uint64_t)x - budget);
    double dirty = over > (double)y ? over - (double)y : 0; /* must be copied out first */
    double before = prefix[k] * 1e-6, after = total - before;
    double out = d2h > 0 ? dirty / d2h : 0, in = h2d > 0 ? over / h2d : 0;
    double t = (before > out ? before : out) + (after > in ? after : in);
    if (t > ir->time_bound_s)
      ir->time_bound_s = t;
  }
  free(diff);
  free(clean);
  return SFC_OK;
}

/* ---- the IR the choice describes ----------------------------------------------- */

/* passes.h */
uint32_t *sfc_group_by_step(const uint32_t (*pairs)[2], uint32_t n, uint32_t steps,
                            uint32_t **out_list) {
  uint32_t *at = calloc((size_t)steps + 2, sizeof *at);
  uint32_t *list = malloc(((size_t)n + 1) * sizeof *list);
  if (!at || !list) {
    free(at);
    free(list);
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++)
    at[pairs[i][0] + 1]++;
  for (uint32_t k = 0; k < steps; k++)
    at[k + 1] += at[k];
  for (uint32_t i = 0; i < n; i++)
    list[at[pairs[i][0]]++] = pairs[i][1];
  for (uint32_t k = steps; k > 0; k--)
    at[k] = at[k - 1];
  at[0] = 0;
  *out_list = list;
  return at;
}

/* Rewrites blocks, swaps and deps from the chosen gaps (in (tensor, use) order):
 *   swap-out: issued before u0 + 1, waits for step u0; step w_out waits for it;
 *   swap-in:  issued before r_in, waits for step r_in - 1, for the swap-out that
 *             wrote its host copy and for every swap-out step r_in waits for (their
 *             blocks ended at r_in - 1, so the destination may reuse their bytes);
 *             step u1 waits for it.
 * A homed (persistent) tensor's host block is its home: PERSISTENT, live at every
 * step, holding the tensor between iterations. Its first residency comes from the
 * home (a HEAD gap's swap-in, else one issued before step 0 when its first use reads
 * it), and unless a TAIL gap ended it, its last residency lasts to the end and goes
 * back home after its last use when anything wrote it since it arrived. */
static sfc_status_t emit_schedule(sched_t *s, const uint32_t *chosen, uint32_t n_chosen,
                                  sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  uint32_t n_swapped = 0, n = ir->n_steps;
  for (uint32_t i = 0; i < n_chosen; i++)
    n_swapped += i == 0 || s->gaps[chosen[i]].tensor != s->gaps[chosen[i - 1]].tensor;
  /* at most: a device block per gap and one host block per tensor; two swaps per gap,
   * two more per homed tensor */
  uint64_t nb = (uint64_t)ir->n_blocks + n_chosen + n_swapped;
  size_t ns = 2 * (size_t)n_chosen + 2 * (size_t)n_swapped + 1;
  sfc_block_t *blocks = sfc_pool_calloc(&ir->pool, nb, sizeof *blocks);
  sfc_block_t *host = malloc(((size_t)n_swapped + 1) * sizeof *host);
  sfc_swap_t *swaps = sfc_pool_calloc(&ir->pool, ns, sizeof *swaps);
  uint32_t(*waits)[2] = malloc(2 * ns * sizeof *waits); /* (step, swap): outs, then ins */
  uint32_t(*in_waits)[2] = malloc(ns * sizeof *in_waits);
  uint32_t *writer = malloc(ns * sizeof *writer); /* a swap-in's host copy, or NONE */
  uint32_t *first = calloc((size_t)ir->graph->n_tensors + 1, sizeof *first); /* chosen[] run */
  uint32_t *out_list = NULL, *out_at = NULL, *step_list = NULL, *step_at = NULL;
  sfc_dep_t *deps = NULL;
  sfc_status_t st = SFC_OK;
  if (!blocks || !host || !swaps || !waits || !in_waits || !writer || !first) {
    st = oom(err);
    goto done;
  }
  for (uint32_t t = 0; t <= ir->graph->n_tensors; t++)
    first[t] = NONE;
  for (uint32_t i = n_chosen; i-- > 0;)
    first[s->gaps[chosen[i]].tensor] = i;
  uint32_t b_out = 0, n_sw = 0, n_out = 0, n_in = 0, n_host = 0;
  uint64_t out_bytes = 0, in_bytes = 0;
#define SWAP(dir, blk, step)                                                                       \
  (swaps[n_sw] = (sfc_swap_t){.tensor = t,                                                         \
                              .device_block = (blk),                                               \
                              .host_block = h,                                                     \
                              .issue_step = (step),                                                \
                              .direction = (dir)},                                                 \
   n_sw++)
  for (uint32_t b = 0; b < ir->n_blocks; b++) {
    const sfc_block_t *x = &ir->blocks[b];
    uint32_t c = x->arena == SFC_ARENA_DEVICE ? first[x->tensor] : NONE;
    if (c == NONE || s->blk[x->tensor] != b) {
      blocks[b_out++] = *x;
      continue;
    }
    uint32_t t = x->tensor, h = n_host++, last_out = NONE, cur = NONE, i = c;
    uint64_t tb = ir->graph->tensors[t].bytes;
    bool home = homed(x);
    const sfc_live_t *l = &ir->live[t];
    sfc_block_t base = *x;
    base.flags &= ~SFC_BLOCK_PERSISTENT;
    host[h] = (sfc_block_t){.tensor = t,
                            .first_step = home ? 0 : out_issue(s, &s->gaps[chosen[c]]),
                            .last_step = n - 1,
                            .flags = home ? SFC_BLOCK_PERSISTENT : 0,
                            .box = NONE,
                            .arena = SFC_ARENA_HOST,
                            .bytes = x->bytes};
    if (!home || s->gaps[chosen[c]].end != GAP_HEAD) {
      cur = b_out++;
      blocks[cur] = base;
      uint32_t u = ir->use_steps[l->use_begin];
      if (home && !(s->first_acc[t] & SFC_ACCESS_READ)) {
        blocks[cur].first_step = u; /* written first: nothing to bring from home */
      } else if (home) {
        blocks[cur].flags |= SFC_BLOCK_SWAPPED_IN;
        writer[n_sw] = NONE;
        in_waits[n_in][0] = u;
        in_waits[n_in++][1] = SWAP(SFC_SWAP_IN, cur, 0);
        in_bytes += tb;
      }
    }
    for (; i < n_chosen && s->gaps[chosen[i]].tensor == t; i++) {
      const gap_t *g = &s->gaps[chosen[i]];
      if (g->end != GAP_HEAD) {
        blocks[cur].last_step = g->need ? g->w_out - 1 : g->u0;
        if (g->need) {
          waits[n_out][0] = g->w_out;
          last_out = waits[n_out++][1] = SWAP(SFC_SWAP_OUT, cur, g->u0 + 1);
          out_bytes += tb;
        }
      }
      if (g->end == GAP_TAIL) {
        cur = NONE;
        continue;
      }
      uint32_t next = b_out++;
      blocks[next] = base;
      blocks[next].first_step = g->r_in;
      blocks[next].flags |= SFC_BLOCK_SWAPPED_IN;
      writer[n_sw] = last_out;
      in_waits[n_in][0] = g->u1;
      in_waits[n_in++][1] = SWAP(SFC_SWAP_IN, next, g->r_in);
      in_bytes += tb;
      if (!home)
        host[h].last_step = g->u1;
      cur = next;
    }
    if (home && cur != NONE) { /* the last residency lasts to the end */
      uint32_t from = i > c ? next_use(&s->gaps[chosen[i - 1]]) : 0;
      if (writes_between(s, t, from, l->use_count - 1) > 0) {
        SWAP(SFC_SWAP_OUT, cur, ir->use_steps[l->use_begin + l->use_count - 1] + 1);
        out_bytes += tb; /* nothing waits for it: its block lasts to the end */
      }
    }
  }
#undef SWAP
  for (uint32_t h = 0; h < n_host; h++)
    blocks[b_out + h] = host[h];
  for (uint32_t i = 0; i < n_sw; i++)
    swaps[i].host_block += b_out;
  /* the swap-outs each step waits for; then every dependency, swaps' first */
  out_at = sfc_group_by_step((const uint32_t(*)[2])waits, n_out, n, &out_list);
  if (!out_at) {
    st = oom(err);
    goto done;
  }
  uint64_t n_deps = n_sw + (uint64_t)n_out + n_in; /* swaps: step + writer; steps: outs + ins */
  for (uint32_t i = 0; i < n_sw; i++)
    if (swaps[i].direction == SFC_SWAP_IN)
      n_deps += 2 + out_at[swaps[i].issue_step + 1] - out_at[swaps[i].issue_step];
  if (n_deps > SFC_PLAN_MAX_RECORDS) {
    st = sfc_error_set(err, SFC_ERR_LIMIT, "%llu swap dependencies exceed the plan limit",
                       (unsigned long long)n_deps);
    goto done;
  }
  deps = sfc_pool_calloc(&ir->pool, n_deps + 1, sizeof *deps);
  if (!deps) {
    st = oom(err);
    goto done;
  }
  uint32_t at = 0, n_wait = n_out;
  for (uint32_t i = 0; i < n_sw; i++) {
    sfc_swap_t *w = &swaps[i];
    uint32_t r = w->issue_step;
    w->dep_begin = at;
    if (r > 0) /* before step 0 nothing of this iteration ran */
      deps[at++] = (sfc_dep_t){SFC_NODE_STEP, r - 1};
    if (w->direction == SFC_SWAP_IN) {
      if (writer[i] != NONE) /* none: the home holds the tensor since the last iteration */
        deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, writer[i]};
      for (uint32_t j = out_at[r]; j < out_at[r + 1]; j++)
        deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, out_list[j]};
    }
    w->dep_count = at - w->dep_begin;
  }
  /* steps: the swap-outs they wait for, then the swap-ins their reads wait for */
  for (uint32_t i = 0; i < n_in; i++) {
    waits[n_wait][0] = in_waits[i][0];
    waits[n_wait++][1] = in_waits[i][1];
  }
  step_at = sfc_group_by_step((const uint32_t(*)[2])waits, n_wait, n, &step_list);
  if (!step_at) {
    st = oom(err);
    goto done;
  }
  for (uint32_t k = 0; k < n; k++) {
    ir->steps[k].dep_begin = at;
    ir->steps[k].dep_count = step_at[k + 1] - step_at[k];
    for (uint32_t j = step_at[k]; j < step_at[k + 1]; j++)
      deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, step_list[j]};
  }
  ir->blocks = blocks;
  ir->n_blocks = b_out + n_host;
  ir->swaps = swaps;
  ir->n_swaps = n_sw;
  ir->deps = deps;
  ir->n_deps = at;
  ir->swapped_tensors = n_swapped;
  ir->swap_out_bytes = out_bytes;
  ir->swap_in_bytes = in_bytes;
done:
  free(host);
  free(waits);
  free(in_waits);
  free(writer);
  free(first);
  free(out_list);
  free(out_at);
  free(step_list);
  free(step_at);
  return st;
}

/* ---- baselines (scheduler.policy vdnn, lms) ------------------------------------ */

static sfc_phase_t step_phase(const sfc_ir_t *ir, uint32_t k) {
  return ir->graph->ops[ir->steps[k].op].phase;
}

/* Undoes every choice: the live bytes back to live[], no gap chosen. */
static void clear_choice(sched_t *s, const int64_t *live) {
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    gap_t *g = &s->gaps[i];
    if (g->chosen)
      sfc_oset_erase(&s->chosen, gap_key(g), i);
    g->chosen = g->need = false;
    g->seq = 0;
  }
  uint32_t p = s->live.p;
  memset(s->live.d, 0, (size_t)p * sizeof *s->live.d);
  for (uint32_t x = 0; x < p; x++)
    s->live.t[p + x] = x < s->n ? live[x] : INT64_MIN / 4;
  for (uint32_t x = p - 1; x >= 1; x--)
    s->live.t[x] =
        s->live.t[2 * x] > s->live.t[2 * x + 1] ? s->live.t[2 * x] : s->live.t[2 * x + 1];
}

/* vDNN (Rhu et al., MICRO 2016, vDNN_all): every activation a forward op produced and
 * a backward op reads again leaves the device after its last forward use, and the next
 * step waits for the copy (vDNN synchronises each layer with its offload); it comes
 * back one step before its first backward use. The budget plays no part: a plan that
 * still exceeds it does not fit. */
static void select_vdnn(sched_t *s) {
  const sfc_ir_t *ir = s->ir;
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    gap_t *g = &s->gaps[i];
    if (g->end != GAP_MID)
      continue;
    sfc_phase_t a = step_phase(ir, g->u0), b = step_phase(ir, g->u1);
    if (ir->graph->tensors[g->tensor].kind != SFC_KIND_ACTIVATION ||
        (a != SFC_PHASE_FORWARD && a != SFC_PHASE_LOSS) || b != SFC_PHASE_BACKWARD)
      continue;
    uint32_t w = g->u0 + 1, r = g->u1 - 1 > w ? g->u1 - 1 : g->u1;
    choose(s, i, w, r);
  }
}

/* LMS (TFLMS, Le et al. 2018): a tensor leaves after a use whose next use is more than
 * n steps away (its copy frees the block when it completes: the time-aware w_out) and
 * its swap-in is issued l steps before that use. */
static void select_lms(sched_t *s, uint32_t n, uint32_t l) {
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    gap_t *g = &s->gaps[i];
    if (g->end != GAP_MID || homed(&s->ir->blocks[s->blk[g->tensor]]) || g->u1 - g->u0 <= n)
      continue; /* TFLMS swaps the tensors ops make, never the variables */
    uint32_t w = g->w_t > g->u0 ? g->w_t : g->u0 + 1;
    uint32_t r = g->u1 > l ? g->u1 - l : 0;
    if (r <= w)
      r = w + 1;
    choose(s, i, w, r);
  }
}

/* LMS's auto-tuner: the largest threshold n whose plan's live bytes fit the target with
 * l = 1 (binary search: a larger n swaps less), then the largest l (doubling) that
 * still fits with that n (a swap-in further ahead stalls less). When nothing fits, n = 1
 * and l = 1: the most LMS can swap. Leaves that choice applied. */
static void tune_lms(sched_t *s, const int64_t *live, int64_t target) {
  if (s->ir->lms_fixed_threshold && s->ir->lms_fixed_ahead) {
    select_lms(s, s->ir->lms_fixed_threshold, s->ir->lms_fixed_ahead);
    s->ir->lms_threshold = s->ir->lms_fixed_threshold;
    s->ir->lms_ahead = s->ir->lms_fixed_ahead;
    return;
  }
  uint32_t lo = 1, hi = s->n, best = 0; /* fits(n) is monotone in practice: search it */
  while (lo <= hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    clear_choice(s, live);
    select_lms(s, mid, 1);
    if (s->live.t[1] <= target) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  uint32_t n = best ? best : 1, l = 1;
  for (uint32_t next = 2; best && next < s->n; next *= 2) {
    clear_choice(s, live);
    select_lms(s, n, next);
    if (s->live.t[1] > target)
      break;
    l = next;
  }
  clear_choice(s, live);
  select_lms(s, n, l);
  s->ir->lms_threshold = n;
  s->ir->lms_ahead = l;
}

/* ---- the pass ------------------------------------------------------------------ */

static void sched_free(sched_t *s) {
  free(s->prefix);
  free(s->in_floor);
  free(s->blk);
  free(s->write_pre);
  free(s->first_acc);
  free(s->gaps);
  free(s->items);
  free(s->live.t);
  free(s->live.d);
  free(s->host.t);
  free(s->host.d);
  free(s->hlo);
  free(s->hhi);
  sfc_oset_deinit(&s->chosen);
}

/* Live device bytes per step, the floor and its parts, the tensors' blocks. */
static sfc_status_t measure(sched_t *s, int64_t *live, sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  uint32_t n = s->n;
  int64_t *diff = calloc((size_t)n + 1, sizeof *diff);
  if (!diff)
    return oom(err);
  for (uint32_t b = 0; b < ir->n_blocks; b++) {
    const sfc_block_t *x = &ir->blocks[b];
    if (x->arena == SFC_ARENA_DEVICE)
      sfc_sweep_add(diff, x->first_step, x->last_step, x->bytes);
  }
  sfc_sweep_peak(diff, n, (uint64_t *)live);
  memset(diff, 0, ((size_t)n + 1) * sizeof *diff);
  for (uint32_t i = 0; i < s->n_gaps; i++)
    sfc_sweep_add(diff, gap_lo(&s->gaps[i]), s->gaps[i].u1 - 1, s->gaps[i].bytes);
  int64_t x = 0, best = -1;
  uint32_t at = 0;
  for (uint32_t k = 0; k < n; k++) {
    x += diff[k];
    if (live[k] - x > best) {
      best = live[k] - x;
      at = k;
    }
  }
  free(diff);
  ir->schedule_floor = (uint64_t)(best < 0 ? 0 : best);
  ir->schedule_floor_step = at;
  /* the floor's parts: persistent tensors no gap takes off step `at` (those it uses
   * among them), the step's other operands, and the rest */
  uint64_t persistent = 0, operands = 0;
  bool *away = calloc((size_t)ir->graph->n_tensors + 1, sizeof *away);
  if (!away)
    return oom(err);
  for (uint32_t i = 0; i < s->n_gaps; i++)
    if (gap_lo(&s->gaps[i]) <= at && at < s->gaps[i].u1)
      away[s->gaps[i].tensor] = true;
  for (uint32_t b = 0; b < ir->n_blocks; b++)
    if (ir->blocks[b].arena == SFC_ARENA_DEVICE && (ir->blocks[b].flags & SFC_BLOCK_PERSISTENT) &&
        !away[ir->blocks[b].tensor])
      persistent += ir->blocks[b].bytes;
  free(away);
  const sfc_step_t *st = &ir->steps[at];
  for (uint32_t k = 0; k < st->use_count; k++) {
    uint32_t t = ir->uses[st->use_begin + k].tensor, b = s->blk[t];
    bool seen = false;
    for (uint32_t j = 0; j < k; j++)
      seen = seen || ir->uses[st->use_begin + j].tensor == t;
    if (!seen && b != NONE && !(ir->blocks[b].flags & SFC_BLOCK_PERSISTENT))
      operands += ir->blocks[b].bytes;
  }
  ir->schedule_floor_persistent = persistent;
  ir->schedule_floor_operands = operands;
  return SFC_OK;
}

/* Late homes. A persistent tensor whose home moves to the host goes back there after its
 * last write, before the iteration ends; when the compute after that write is shorter
 * than the copy, the iteration waits for it (an optimizer's update near the end: the
 * copies of the state it wrote drain after the last step). schedule_late_s gets those
 * copies' time beyond the compute after them, summed: a gauge of what homing them would
 * cost the iteration's end (window: auto tries the flag where it is 1 % of the compute). With
 * schedule_late_homes (a window: auto candidate) such a tensor's gaps are not hideable: the
 * selection takes them only where no hideable gap covers the step, and evicts something else first.
 * acc: access bits of each (tensor, use step), as find_gaps has them. */
static bool late_homes(sched_t *s, const uint8_t *acc) {
  sfc_ir_t *ir = s->ir;
  const sfc_config_t *cfg = ir->config;
  uint32_t nt = ir->graph->n_tensors;
  double lat = cfg->device.copy_latency_s > 0 ? cfg->device.copy_latency_s * 1e6 : 0;
  ir->schedule_late_s = 0;
  if (cfg->device.d2h_bytes_per_s <= 0)
    return true;
  bool *late = calloc((size_t)nt + 1, sizeof *late);
  if (!late)
    return false;
  for (uint32_t t = 0; t < nt; t++) {
    uint32_t b = s->blk[t];
    if (b == NONE || !is_candidate(ir, &ir->blocks[b]) || !homed(&ir->blocks[b]))
      continue;
    const sfc_live_t *l = &ir->live[t];
    uint32_t w = NONE;
    for (uint32_t i = l->use_count; i-- > 0 && w == NONE;)
      if (acc[l->use_begin + i] & SFC_ACCESS_WRITE)
        w = ir->use_steps[l->use_begin + i];
    double copy = lat + (double)ir->graph->tensors[t].bytes / cfg->device.d2h_bytes_per_s * 1e6;
    double after = w != NONE ? span_us(s, w + 1, s->n) : 0;
    late[t] = w != NONE && after < copy;
    if (late[t])
      ir->schedule_late_s += (copy - after) * 1e-6;
  }
  for (uint32_t i = 0; i < s->n_gaps && ir->schedule_late_homes; i++)
    if (late[s->gaps[i].tensor])
      s->gaps[i].hideable = false;
  free(late);
  return true;
}

/* The tensors' gaps of 2 steps or more, with their copy times placed. */
static sfc_status_t find_gaps(sched_t *s, sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  uint32_t nt = ir->graph->n_tensors, nus = 0;
  for (uint32_t t = 0; t < nt; t++)
    nus += ir->live[t].use_count;
  s->blk = malloc(((size_t)nt + 1) * sizeof *s->blk);
  s->write_pre = calloc((size_t)nus + 1, sizeof *s->write_pre);
  uint32_t *cur = calloc((size_t)nt + 1, sizeof *cur);
  uint8_t *acc = calloc((size_t)nus + 1, 1); /* access bits of each (tensor, use step) */
  if (!s->blk || !s->write_pre || !cur || !acc) {
    free(cur);
    free(acc);
    return oom(err);
  }
  for (uint32_t t = 0; t < nt; t++)
    s->blk[t] = NONE;
  for (uint32_t b = 0; b < ir->n_blocks; b++)
    if (ir->blocks[b].arena == SFC_ARENA_DEVICE && s->blk[ir->blocks[b].tensor] == NONE)
      s->blk[ir->blocks[b].tensor] = b;
  /* write_pre[j + 1] - write_pre[j]: the use step use_steps[j] of its tensor writes */
  for (uint32_t k = 0; k < s->n; k++) {
    const sfc_step_t *st = &ir->steps[k];
    for (uint32_t i = 0; i < st->use_count; i++) {
      const sfc_use_t *u = &ir->uses[st->use_begin + i];
      const sfc_live_t *l = &ir->live[u->tensor];
      while (ir->use_steps[l->use_begin + cur[u->tensor]] < k)
        cur[u->tensor]++;
      acc[l->use_begin + cur[u->tensor]] |= u->access;
    }
  }
  free(cur);
  for (uint32_t j = 0; j < nus; j++)
    s->write_pre[j + 1] = s->write_pre[j] + ((acc[j] & SFC_ACCESS_WRITE) != 0);
  s->first_acc = calloc((size_t)nt + 1, 1);
  if (!s->first_acc) {
    free(acc);
    return oom(err);
  }
  for (uint32_t t = 0; t < nt; t++)
    if (ir->live[t].use_count)
      s->first_acc[t] = acc[ir->live[t].use_begin];
  uint32_t n_gaps = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t t = 0; t < nt; t++) {
      uint32_t b = s->blk[t];
      if (b == NONE || !is_candidate(ir, &ir->blocks[b]))
        continue;
      const sfc_live_t *l = &ir->live[t];
      bool home = homed(&ir->blocks[b]);
      if (l->use_count == 0 || (!home && !(acc[l->use_begin] & SFC_ACCESS_WRITE)))
        continue; /* no producer to make the first host copy from */
      uint32_t first = ir->use_steps[l->use_begin],
               last = ir->use_steps[l->use_begin + l->use_count - 1];
      /* a homed tensor comes from the host before its first use (when that reads it) and
       * goes back after its last */
      if (home && first >= 1 && (acc[l->use_begin] & SFC_ACCESS_READ)) {
        if (pass == 1) {
          gap_t *g = &s->gaps[n_gaps];
          *g = (gap_t){.tensor = t,
                       .use = UINT32_MAX,
                       .u0 = UINT32_MAX,
                       .u1 = first,
                       .end = GAP_HEAD,
                       .bytes = ir->blocks[b].bytes};
          place_copies(s, g);
        }
        n_gaps++;
      }
      for (uint32_t i = 0; i + 1 < l->use_count; i++) {
        uint32_t u0 = ir->use_steps[l->use_begin + i], u1 = ir->use_steps[l->use_begin + i + 1];
        /* at least one absent step; and u1 reads what comes back (a step that only
         * writes the tensor again needs no copy: that value is dead, not swapped) */
        if (u1 - u0 < 2 || !(acc[l->use_begin + i + 1] & SFC_ACCESS_READ))
          continue;
        if (pass == 1) {
          gap_t *g = &s->gaps[n_gaps];
          *g = (gap_t){.tensor = t, .use = i, .u0 = u0, .u1 = u1, .bytes = ir->blocks[b].bytes};
          place_copies(s, g);
        }
        n_gaps++;
      }
      if (home && last + 2 <= s->n) {
        if (pass == 1) {
          gap_t *g = &s->gaps[n_gaps];
          *g = (gap_t){.tensor = t,
                       .use = l->use_count - 1,
                       .u0 = last,
                       .u1 = s->n,
                       .end = GAP_TAIL,
                       .bytes = ir->blocks[b].bytes};
          place_copies(s, g);
        }
        n_gaps++;
      }
    }
    if (pass == 0) {
      s->gaps = malloc(((size_t)n_gaps + 1) * sizeof *s->gaps);
      s->items = malloc(((size_t)3 * n_gaps + 1) * sizeof *s->items);
      if (!s->gaps || !s->items) {
        free(acc);
        return oom(err);
      }
      n_gaps = 0;
    }
  }
  s->n_gaps = n_gaps;
  if (!late_homes(s, acc)) {
    free(acc);
    return oom(err);
  }
  free(acc);
  return SFC_OK;
}

static void reset_schedule(sfc_ir_t *ir) {
  ir->swaps = NULL;
  ir->deps = NULL;
  ir->n_swaps = ir->n_deps = ir->swapped_tensors = 0;
  ir->swap_out_bytes = ir->swap_in_bytes = 0;
  ir->schedule_floor = ir->schedule_floor_persistent = ir->schedule_floor_operands = 0;
  ir->schedule_floor_step = 0;
  ir->schedule_infeasible = false;
  ir->staging_least = 0;
  ir->staging_least_step = 0;
  ir->host_lower_bound = 0;
  ir->schedule_prefetched = false;
  ir->lms_threshold = ir->lms_ahead = 0;
  for (uint32_t k = 0; k < ir->n_steps; k++)
    ir->steps[k].dep_begin = ir->steps[k].dep_count = 0;
}

/* The live-bytes tree from live[0 .. n). */
static bool build_live(sched_t *s, const int64_t *live) {
  uint32_t p = 1;
  while (p < s->n)
    p <<= 1;
  s->live.p = p;
  s->live.t = calloc(2 * (size_t)p, sizeof *s->live.t);
  s->live.d = calloc((size_t)p, sizeof *s->live.d);
  if (!s->live.t || !s->live.d)
    return false;
  for (uint32_t x = 0; x < p; x++)
    s->live.t[p + x] = x < s->n ? live[x] : INT64_MIN / 4;
  for (uint32_t x = p - 1; x >= 1; x--)
    s->live.t[x] =
        s->live.t[2 * x] > s->live.t[2 * x + 1] ? s->live.t[2 * x] : s->live.t[2 * x + 1];
  return true;
}

/* The pinned bytes per step (none yet) for host.staging_budget. */
static bool init_host(sched_t *s) {
  s->host.p = s->live.p;
  s->host.t = calloc(2 * (size_t)s->host.p, sizeof *s->host.t);
  s->host.d = calloc((size_t)s->host.p, sizeof *s->host.d);
  s->hlo = malloc(((size_t)s->ir->graph->n_tensors + 1) * sizeof *s->hlo);
  s->hhi = calloc((size_t)s->ir->graph->n_tensors + 1, sizeof *s->hhi);
  if (!s->host.t || !s->host.d || !s->hlo || !s->hhi)
    return false;
  for (uint32_t t = 0; t <= s->ir->graph->n_tensors; t++)
    s->hlo[t] = NONE;
  s->host_on = true;
  s->host_cap = (int64_t)s->ir->config->host.staging_budget_bytes;
  return true;
}

/* A sort key: `first` (saturated at 2^23 - 1), ties broken by bytes (in 16 MiB units,
 * saturated at 2^40 - 1). */
static uint64_t then_bytes(uint64_t first, uint64_t bytes) {
  uint64_t hi = first < (UINT64_C(1) << 23) ? first : (UINT64_C(1) << 23) - 1;
  uint64_t lo = bytes >> 24 < (UINT64_C(1) << 40) ? bytes >> 24 : (UINT64_C(1) << 40) - 1;
  return hi << 40 | lo;
}

static double lp_gap_cost(const sched_t *s, uint32_t i);

/* Each gap's items (its time-aware interval: hidden or split; and the two widenings),
 * ranked, and the two trees: hidden intervals in ta, everything else in tb. */
static bool build_items(sched_t *s, stab_t *ta, stab_t *tb) {
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    gap_t *g = &s->gaps[i];
    for (int k = 0; k < 4; k++)
      g->item[k] = NONE;
    uint32_t lo = g->w_t, hi = g->r_t - 1;
    int kind = g->hideable ? ITEM_HIDDEN : ITEM_SPLIT;
    if (g->end == GAP_HEAD)
      lo = 0; /* no swap-out: absent from step 0 */
    g->item[kind] = add_item(s, i, kind, lo, hi);
    if (g->end != GAP_HEAD) /* a HEAD has no left side, a TAIL no right (empty) */
      g->item[ITEM_LEFT] = add_item(s, i, ITEM_LEFT, gap_lo(g), lo - 1);
    g->item[ITEM_RIGHT] = add_item(s, i, ITEM_RIGHT, hi + 1, g->u1 - 1);
  }
  item_key_t *keys = malloc(((size_t)s->n_items + 1) * sizeof *keys);
  uint32_t *order = malloc(((size_t)s->n_items + 1) * 2 * sizeof *order);
  bool ok = keys && order;
  if (ok) {
    for (uint32_t i = 0; i < s->n_items; i++) {
      const item_t *it = &s->items[i];
      const gap_t *g = &s->gaps[it->gap];
      uint64_t len = g->u1 - g->u0; /* bytes x gap length: saturates past 2^64 */
      uint64_t area = g->bytes > UINT64_MAX / len ? UINT64_MAX : g->bytes * len;
      if (s->ir->schedule_priority == SFC_PRIORITY_LENGTH) /* length first, bytes break ties */
        area = then_bytes(len, g->bytes);
      else if (s->ir->schedule_priority == SFC_PRIORITY_BYTES)
        area = g->bytes;
      else if (s->ir->schedule_priority == SFC_PRIORITY_RECENT) /* last used latest first */
        area =
            then_bytes(g->u0 == UINT32_MAX ? 0 : (uint64_t)g->u0 + 1 /* a HEAD: none */, g->bytes);
      else if (s->ir->schedule_priority == SFC_PRIORITY_AREA_COPY &&
               lp_gap_cost(s, it->gap) == (double)g->bytes)   /* a middle gap, its swap-in only */
        area = area > UINT64_MAX / 2 ? UINT64_MAX : area * 2; /* one copy, not two */
      /* the LP's value in millionths: what it takes whole first, then its fractions */
      const double *x =
          s->ir->schedule_traffic_lp && !s->ir->traffic_lp_none && s->ir->traffic_lp_n == s->n_gaps
              ? s->ir->traffic_lp_x
              : NULL;
      uint64_t lp = x && x[it->gap] > 0 ? (uint64_t)llround(x[it->gap] * 1e6) : 0;
      keys[i] = (item_key_t){lp, area, it->hi - it->lo, it->gap, it->kind, i};
    }
    qsort(keys, s->n_items, sizeof *keys, cmp_item_key);
    uint32_t na = 0, nb = 0, *order_b = order + s->n_items + 1;
    for (uint32_t r = 0; r < s->n_items; r++) {
      uint32_t i = keys[r].id;
      s->items[i].rank = r;
      if (s->items[i].kind == ITEM_HIDDEN)
        order[na++] = i;
      else
        order_b[nb++] = i;
    }
    ok = stab_build(ta, s->live.p, s->items, order, na) &&
         stab_build(tb, s->live.p, s->items, order_b, nb);
  }
  free(keys);
  free(order);
  return ok;
}

/* ---- the traffic LP ------------------------------------------------------------ */

/* Deterministic limits: past them the LP is not solved (traffic_lp_none). */
#define TRAFFIC_LP_MAX_NZ 2000000u /* coverage entries */
#define TRAFFIC_LP_MAX_IT 200000   /* simplex iterations */

/* The bytes evicting gap i copies, as the LP counts them: its swap-in, and its swap-out
 * where the tensor was written since its previous gap (since the iteration began, for its
 * first); a homed tensor's HEAD and TAIL copies are its home's (home_cost). */
static double lp_gap_cost(const sched_t *s, uint32_t i) {
  const gap_t *g = &s->gaps[i];
  if (g->end != GAP_MID)
    return 0;
  uint32_t from = 0;
  if (i > 0 && s->gaps[i - 1].tensor == g->tensor)
    from = next_use(&s->gaps[i - 1]);
  double bytes = (double)g->bytes;
  return bytes + (writes_between(s, g->tensor, from, g->use) ? bytes : 0);
}

/* A homed tensor's round trip: in before its first use (when that reads it), back home
 * after its last write (when anything writes it). */
static double home_cost(const sched_t *s, uint32_t t) {
  const sfc_live_t *l = &s->ir->live[t];
  double bytes = (double)s->ir->blocks[s->blk[t]].bytes;
  return ((s->first_acc[t] & SFC_ACCESS_READ) ? bytes : 0) +
         (writes_between(s, t, 0, l->use_count - 1) ? bytes : 0);
}

/* What the LP's values were solved for: the target, and every gap (FNV-1a). */
static uint64_t traffic_lp_key(const sched_t *s, int64_t target) {
  uint64_t h = SFC_HASH_SEED;
#define MIX(v) (h = sfc_hash_mix(h, (uint64_t)(v)))
  MIX(target);
  MIX(s->n);
  MIX(s->n_gaps);
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    const gap_t *g = &s->gaps[i];
    MIX(g->tensor);
    MIX(g->u0);
    MIX(g->u1);
    MIX(g->bytes);
  }
#undef MIX
  return h ? h : 1;
}

/* A column's entries mixed into h (FNV-1a of index, length, rows and value bits). */
static uint64_t mix_column(uint64_t h, int j, int len, const int *ind, const double *val) {
  h = sfc_hash_mix(h, (uint64_t)j);
  h = sfc_hash_mix(h, (uint64_t)len);
  for (int q = 1; q <= len; q++) {
    uint64_t bits;
    memcpy(&bits, &val[q], sizeof bits);
    h = sfc_hash_mix(h, (uint64_t)ind[q]);
    h = sfc_hash_mix(h, bits);
  }
  return h;
}

/* The traffic LP (schedule_traffic_lp). The fewest bytes copied that bring every step
 * within the target, relaxed: a fraction x_g in [0, 1] per gap; for every step k over
 * the target, the gaps whose widest absent steps [gap_lo, u1 - 1] contain k cover its
 * excess, sum bytes_g x_g >= live_k - target; a gap costs lp_gap_cost, and a homed
 * tensor's gaps are at most its home column h_t, which costs home_cost once. GLPK's
 * dual simplex from the all-zero start (dual feasible: the costs are not negative),
 * without GLPK's presolver: on these LPs (ResNet-50 b4 at 30 %: 2,714 rows, 843,000
 * entries) it took 3.1 s of a solve's 3.5, and the simplex reaches the same optimum
 * (the same iterations, the same plans) alone in 0.4 s. The values rank the gaps before the
 * priority (build_items): what the LP evicts whole first, then its fractions, then the
 * rest. Its least is not a bound on any plan (the costs guess which swap-outs a plan
 * needs; the plan evicts by time-aware intervals): it is a ranking. Solved once per
 * target and set of gaps, kept in the IR for the next candidate or round. Returns false
 * on out of memory only. The last four solves are kept (traffic_lp_seen): the rounds
 * and the tuner's candidates come back to a target. */
static bool traffic_lp(sched_t *s, int64_t target) {
  sfc_ir_t *ir = s->ir;
  uint64_t key = traffic_lp_key(s, target);
  if (ir->traffic_lp_key == key)
    return true;
  const uint32_t n_seen = sizeof ir->traffic_lp_seen / sizeof ir->traffic_lp_seen[0];
  sfc_lp_seen_t now = {ir->traffic_lp_x, ir->traffic_lp_key, ir->traffic_lp_n, ir->traffic_lp_none,
                       ir->traffic_lp_bytes};
  uint32_t slot = ir->traffic_lp_seen_next;
  for (uint32_t i = 0; i < n_seen; i++)
    if (ir->traffic_lp_seen[i].key == key)
      slot = i;
  sfc_lp_seen_t was = ir->traffic_lp_seen[slot];
  if (now.key != 0 || was.key == key) { /* the current solve kept, in the slot */
    ir->traffic_lp_seen[slot] = now;
    if (was.key != key)
      ir->traffic_lp_seen_next = (slot + 1) % n_seen;
  }
  if (was.key == key) { /* solved before for this target and these gaps */
    ir->traffic_lp_x = was.x;
    ir->traffic_lp_key = was.key;
    ir->traffic_lp_n = was.n;
    ir->traffic_lp_none = was.none;
    ir->traffic_lp_bytes = was.bytes;
    return true;
  }
  ir->traffic_lp_key = key;
  ir->traffic_lp_none = true;
  ir->traffic_lp_x = NULL;
  ir->traffic_lp_n = 0;
  ir->traffic_lp_bytes = 0;
  uint32_t n = s->n, nt = ir->graph->n_tensors;
  int *row = malloc(((size_t)n + 1) * sizeof *row);         /* step -> row, 0: within */
  uint32_t *over = calloc((size_t)n + 1, sizeof *over);     /* steps over before k */
  int *col = malloc(((size_t)s->n_gaps + 1) * sizeof *col); /* gap -> column, 0: none */
  int *hcol = calloc((size_t)nt + 1, sizeof *hcol);         /* homed tensor -> column */
  bool ok = row && over && col && hcol;
  int *ind = NULL;
  double *val = NULL;
  glp_prob *lp = NULL;
  int prev_term = glp_term_out(GLP_OFF);
  uint64_t matrix = SFC_HASH_SEED; /* FNV-1a of every column set below */
  if (!ok)
    goto done;
  int rows = 0;
  double unit = 1.0 / (1024.0 * 1024.0); /* MiB: the simplex's numbers near 1 */
  for (uint32_t k = 0; k < n; k++) {
    int64_t e = mt_get(&s->live, k) - target;
    row[k] = e > 0 ? ++rows : 0;
    over[k + 1] = over[k] + (e > 0);
  }
  if (rows == 0)
    goto done;
  uint64_t nz = 0;
  int cols = 0, homes = 0, max_len = 2;
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    const gap_t *g = &s->gaps[i];
    uint32_t c = over[g->u1] - over[gap_lo(g)];
    col[i] = c ? ++cols : 0;
    nz += c;
    max_len = (int)c + 1 > max_len ? (int)c + 1 : max_len;
    if (c && homed(&ir->blocks[s->blk[g->tensor]]) && !hcol[g->tensor])
      hcol[g->tensor] = ++homes; /* numbered after the gaps' columns below */
  }
  int links = 0; /* x_g - h_t <= 0: a row per homed gap, in gap order */
  for (uint32_t i = 0, run = 0; i < s->n_gaps; i++) {
    bool linked = col[i] && hcol[s->gaps[i].tensor];
    links += linked;
    /* a tensor's gaps are consecutive: its home column has `run` entries */
    run = i > 0 && s->gaps[i - 1].tensor == s->gaps[i].tensor ? run + linked : linked;
    max_len = (int)run + 1 > max_len ? (int)run + 1 : max_len;
  }
  if (cols == 0 || nz > TRAFFIC_LP_MAX_NZ)
    goto done;
  ind = malloc(((size_t)max_len + 2) * sizeof *ind); /* GLPK's arrays start at 1 */
  val = malloc(((size_t)max_len + 2) * sizeof *val);
  lp = glp_create_prob();
  if (!ind || !val || !lp) {
    ok = false;
    goto done;
  }
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_rows(lp, rows + links);
  glp_add_cols(lp, cols + homes);
  for (uint32_t k = 0; k < n; k++)
    if (row[k])
      glp_set_row_bnds(lp, row[k], GLP_LO, (double)(mt_get(&s->live, k) - target) * unit, 0);
  for (int r = rows + 1; r <= rows + links; r++)
    glp_set_row_bnds(lp, r, GLP_UP, 0, 0);
  int link = rows;
  for (uint32_t i = 0; i < s->n_gaps; i++) {
    const gap_t *g = &s->gaps[i];
    if (!col[i])
      continue;
    int len = 0;
    for (uint32_t k = gap_lo(g); k < g->u1; k++)
      if (row[k])
        ind[++len] = row[k], val[len] = (double)g->bytes * unit;
    if (hcol[g->tensor])
      ind[++len] = ++link, val[len] = 1;
    glp_set_mat_col(lp, col[i], len, ind, val);
    matrix = mix_column(matrix, col[i], len, ind, val);
    glp_set_col_bnds(lp, col[i], GLP_DB, 0, 1);
    glp_set_obj_coef(lp, col[i], lp_gap_cost(s, i) * unit);
  }
  link = rows; /* the home columns: -1 in each of their gaps' link rows */
  for (uint32_t i = 0; i < s->n_gaps;) {
    uint32_t t = s->gaps[i].tensor;
    int len = 0;
    for (; i < s->n_gaps && s->gaps[i].tensor == t; i++)
      if (col[i] && hcol[t])
        ind[++len] = ++link, val[len] = -1;
    if (!hcol[t])
      continue;
    glp_set_mat_col(lp, cols + hcol[t], len, ind, val);
    matrix = mix_column(matrix, cols + hcol[t], len, ind, val);
    glp_set_col_bnds(lp, cols + hcol[t], GLP_DB, 0, 1);
    glp_set_obj_coef(lp, cols + hcol[t], home_cost(s, t) * unit);
  }
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  sp.meth = GLP_DUALP;
  sp.presolve = GLP_OFF; /* the fresh problem's basis (every row basic) is valid */
  sp.it_lim = TRAFFIC_LP_MAX_IT;
  /* GLPK's scaling looks at the matrix alone, and took 3 s of each of a tiled U-Net's
   * seven solves (1.5 million entries): an LP with the last one's matrix gets its
   * factors, the same numbers glp_scale_prob gives it */
  int m = rows + links, nc = cols + homes;
  matrix = sfc_hash_mix(matrix, (uint64_t)m);
  matrix = sfc_hash_mix(matrix, (uint64_t)nc);
  if (matrix != 0 && matrix == ir->traffic_lp_matrix) {
    for (int r = 1; r <= m; r++)
      glp_set_rii(lp, r, ir->traffic_lp_rii[r]);
    for (int c = 1; c <= nc; c++)
      glp_set_sjj(lp, c, ir->traffic_lp_sjj[c]);
  } else {
    glp_scale_prob(lp, GLP_SF_AUTO);
    double *rii = sfc_pool_calloc(&ir->pool, (size_t)m + 1, sizeof *rii);
    double *sjj = sfc_pool_calloc(&ir->pool, (size_t)nc + 1, sizeof *sjj);
    ir->traffic_lp_matrix = rii && sjj ? matrix : 0; /* out of memory: not kept */
    for (int r = 1; rii && sjj && r <= m; r++)
      rii[r] = glp_get_rii(lp, r);
    for (int c = 1; rii && sjj && c <= nc; c++)
      sjj[c] = glp_get_sjj(lp, c);
    ir->traffic_lp_rii = rii;
    ir->traffic_lp_sjj = sjj;
  }
  if (glp_simplex(lp, &sp) != 0 || glp_get_status(lp) != GLP_OPT)
    goto done;
  double *x = sfc_pool_calloc(&ir->pool, (size_t)s->n_gaps + 1, sizeof *x);
  if (!x) {
    ok = false;
    goto done;
  }
  for (uint32_t i = 0; i < s->n_gaps; i++)
    x[i] = col[i] ? glp_get_col_prim(lp, col[i]) : 0;
  ir->traffic_lp_x = x;
  ir->traffic_lp_n = s->n_gaps;
  ir->traffic_lp_none = false;
  ir->traffic_lp_bytes = glp_get_obj_val(lp) / unit;
done:
  if (lp)
    glp_delete_prob(lp);
  glp_term_out(prev_term);
  free(row), free(over), free(col), free(hcol), free(ind), free(val);
  if (!ok)
    ir->traffic_lp_key = 0; /* out of memory: nothing kept */
  return ok;
}

/* The loop of the file comment, then the pruning; ends with every step <= target. */
static sfc_status_t select_gaps(sched_t *s, stab_t *ta, stab_t *tb, int64_t target,
                                sfc_error_t *err) {
  uint32_t n_seq = 0, n_skipped = 0;
  uint32_t *skipped = NULL; /* items passed over for host.staging_budget */
  while (s->live.t[1] > target) {
    uint32_t k = mt_argmax(&s->live), i;
    for (;;) {
      i = stab_query(ta, s->items, k);
      if (s->ir->schedule_rank_only) { /* the better ranked of the two trees' best */
        uint32_t j = stab_query(tb, s->items, k);
        if (i == NONE || (j != NONE && s->items[j].rank < s->items[i].rank))
          i = j;
      } else if (i == NONE) {
        i = stab_query(tb, s->items, k);
      }
      if (i == NONE || host_room(s, &s->gaps[s->items[i].gap]))
        break;
      /* the pinned bytes only grow while choosing: it will not fit later either */
      if (!skipped && !(skipped = malloc(((size_t)s->n_items + 1) * sizeof *skipped)))
        return oom(err);
      s->items[i].taken = true;
      skipped[n_skipped++] = i;
    }
    if (i == NONE && n_skipped) {
      /* nothing within the staging budget covers step k: the device budget comes first.
       * Of the items passed over that cover k, the one that goes least over the staging
       * budget is taken (the best ranked among equals; the CLI says what the plan
       * stages); every item passed over is back, checked again when it comes up */
      int64_t least = INT64_MAX;
      for (uint32_t j = 0; j < n_skipped; j++) {
        const item_t *it = &s->items[skipped[j]];
        int64_t over = it->lo <= k && k <= it->hi ? host_over(s, &s->gaps[it->gap]) : INT64_MAX;
        if (over < least || (over == least && i != NONE && it->rank < s->items[i].rank)) {
          least = over;
          i = skipped[j];
        }
      }
      for (uint32_t j = 0; j < n_skipped; j++)
        s->items[skipped[j]].taken = false;
      n_skipped = 0;
      memcpy(ta->cursor, ta->start, 2 * (size_t)ta->p * sizeof *ta->cursor);
      memcpy(tb->cursor, tb->start, 2 * (size_t)tb->p * sizeof *tb->cursor);
    }
    if (i == NONE) { /* the floor says this cannot happen */
      free(skipped);
      return sfc_error_set(err, SFC_ERR_INTERNAL,
                           "schedule: nothing can leave step %u (%lld bytes live, floor %llu)", k,
                           (long long)mt_get(&s->live, k),
                           (unsigned long long)s->ir->schedule_floor);
    }
    apply_item(s, i);
    gap_t *g = &s->gaps[s->items[i].gap];
    if (!g->seq)
      g->seq = ++n_seq;
  }
  free(skipped);
  uint32_t *by_seq = malloc(((size_t)n_seq + 1) * sizeof *by_seq);
  if (!by_seq)
    return oom(err);
  for (uint32_t i = 0; i < s->n_gaps; i++)
    if (s->gaps[i].chosen)
      by_seq[s->gaps[i].seq - 1] = i;
  for (uint32_t a = n_seq; a-- > 0;)
    unchoose(s, by_seq[a], target);
  free(by_seq);
  if (!limit_heads(s))
    return oom(err);
  if (!s->ir->schedule_no_prefetch) { /* the room they fill keeps the margin free */
    int64_t m = (int64_t)s->ir->schedule_prefetch_margin, room = m < target ? target - m : 0;
    s->ir->schedule_prefetched = prefetch(s, room);
    if (s->ir->schedule_lazy_waits && lazy_waits(s, room))
      s->ir->schedule_prefetched = true;
    if (s->ir->schedule_sorted_waits && sort_waits(s, room))
      s->ir->schedule_prefetched = true;
  }
  return SFC_OK;
}

sfc_status_t sfc_pass_schedule(sfc_ir_t *ir, sfc_error_t *err) {
  reset_schedule(ir);
  sched_t s = {.ir = ir, .n = ir->n_steps};
  s.prefix = malloc(((size_t)s.n + 1) * sizeof *s.prefix);
  if (!s.prefix)
    return oom(err);
  s.prefix[0] = 0;
  for (uint32_t k = 0; k < s.n; k++)
    s.prefix[k + 1] = s.prefix[k] + (ir->steps[k].time_us > 0 ? ir->steps[k].time_us : 0);
  uint64_t budget = ir->schedule_budget ? ir->schedule_budget : ir->config->budget_bytes;
  /* a paged arena: the first round plans for PAGED_SLACK pages less, which page rounding
   * (blocks that share a page count it once, one that straddles a boundary one more) then
   * spends, instead of sending the plan through the margin rounds */
  uint64_t delta = PAGED_SLACK * ir->config->arena.page_bytes;
  if (!ir->schedule_budget && sfc_ir_paged(ir) && ir->lower_bound > budget && budget > 2 * delta)
    budget -= delta;
  sfc_sched_policy_t policy = ir->config->scheduler.policy;
  for (uint32_t k = 0; ir->config->budget_bytes && k < s.n; k++)
    if (ir->live_bytes[k] > ir->config->budget_bytes &&
        ir->live_bytes[k] - ir->config->budget_bytes > ir->staging_least) {
      ir->staging_least = ir->live_bytes[k] - ir->config->budget_bytes;
      ir->staging_least_step = k;
    }
  if (policy == SFC_SCHED_NONE || budget == 0 || ir->lower_bound <= budget) {
    sfc_status_t st = time_bound(ir, s.prefix, ir->config->budget_bytes, err);
    free(s.prefix);
    return st;
  }
  sfc_status_t st = SFC_OK;

  int64_t *live = calloc((size_t)s.n + 1, sizeof *live);
  stab_t ta = {0}, tb = {0};
  uint32_t *chosen = NULL;
  if (!live || !sfc_swap_in_floor(ir, &s.in_floor)) {
    st = oom(err);
    goto done;
  }
  st = find_gaps(&s, err);
  if (st == SFC_OK && !sfc_oset_init(&s.chosen, s.n_gaps + 1))
    st = oom(err);
  if (st == SFC_OK)
    st = measure(&s, live, err);
  if (st == SFC_OK && !build_live(&s, live))
    st = oom(err);
  /* the traffic LP for the target select_gaps gets (the floor below it) */
  if (st == SFC_OK && policy == SFC_SCHED_WINDOW && ir->schedule_traffic_lp &&
      !traffic_lp(&s, (int64_t)(budget > ir->schedule_floor ? budget : ir->schedule_floor)))
    st = oom(err);
  if (st == SFC_OK && !build_items(&s, &ta, &tb))
    st = oom(err);
  if (st != SFC_OK)
    goto done;
  /* below the floor nothing reaches the budget: schedule for the floor (the plan
   * closest to the budget) and say so; a fragmentation round may ask for less than
   * the user's budget, and then gets the floor too */
  if (policy == SFC_SCHED_VDNN) {
    select_vdnn(&s);
  } else if (policy == SFC_SCHED_LMS) {
    tune_lms(&s, live, (int64_t)budget);
  } else {
    ir->schedule_infeasible = ir->config->budget_bytes < ir->schedule_floor;
    /* below the least any plan stages (the CLI says so) there is nothing to plan for */
    uint64_t staging = ir->config->host.staging_budget_bytes;
    if (staging && staging >= ir->staging_least && !init_host(&s))
      st = oom(err);
    if (st == SFC_OK)
      st = select_gaps(&s, &ta, &tb,
                       (int64_t)(budget > ir->schedule_floor ? budget : ir->schedule_floor), err);
  }
  chosen = malloc(((size_t)s.n_gaps + 1) * sizeof *chosen);
  if (st == SFC_OK && !chosen)
    st = oom(err);
  if (st == SFC_OK) { /* in (tensor, use) order: the gaps were made in that order */
    uint32_t n_chosen = 0;
    for (uint32_t i = 0; i < s.n_gaps; i++)
      if (s.gaps[i].chosen)
        chosen[n_chosen++] = i;
    st = emit_schedule(&s, chosen, n_chosen, err);
  }
  if (st == SFC_OK) /* the lower bounds of the two arenas' blocks as they are now */
    for (int arena = 0; arena < SFC_ARENA_COUNT; arena++) {
      memset(live, 0, ((size_t)s.n + 1) * sizeof *live);
      for (uint32_t b = 0; b < ir->n_blocks; b++)
        if (ir->blocks[b].arena == (sfc_arena_t)arena)
          sfc_sweep_add(live, ir->blocks[b].first_step, ir->blocks[b].last_step,
                        ir->blocks[b].bytes);
      *(arena == SFC_ARENA_DEVICE ? &ir->lower_bound : &ir->host_lower_bound) =
          sfc_sweep_peak(live, s.n, NULL);
    }
  if (st == SFC_OK) /* below the floor: the bound of the floor the plan was made for */
    st = time_bound(ir, s.prefix,
                    ir->schedule_infeasible ? ir->schedule_floor : ir->config->budget_bytes, err);
done:
  stab_free(&ta);
  stab_free(&tb);
  free(chosen);
  free(live);
  sched_free(&s);
  return st;
}
