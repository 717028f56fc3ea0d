/* pass_bound.c — the chain bound: a tighter lower bound on any swap schedule's time.
 *
 * The schedule pass's bound splits the iteration once, at the step k where the most
 * bytes must be off the device. This pass splits it at any chain of steps
 * 0 = s_0 < s_1 < ... < s_r = n and adds a lower bound of every piece
 * [start of a, start of b): the compute of steps a .. b-1 plus the time the compute
 * queue must stand still while the copies that cannot run beside it move. The proof
 * (docs/algorithms.md "The time bound") rests on the plan's physical rules:
 *
 * - While step j runs its operands O_j (inputs, outputs, workspace) occupy their
 *   blocks, and a copy's block is occupied from its issue until it completes. A
 *   swap-in moving bytes during step j writes bytes no operand of j holds (rule 54
 *   would make it wait for j otherwise) for a tensor read after j, so at most
 *   cin_j = min(h2d * t_j, B - O_j, L_j) bytes arrive while j runs (L_j: the bytes
 *   live at j, not operands of j, used after j). A swap-out moving bytes during j reads
 *   a block written before j (rule 51) beside the blocks j writes (W_j), and the copies
 *   counted below save values written before j (or not persistent: a clean persistent
 *   tensor's home holds it), so at most cout_j = min(d2h * t_j, B - W_j, D_j) bytes
 *   leave while j runs (D_j: those values' bytes live at j). Copies during a stall are
 *   bounded by the link alone.
 * - need_in(a, b): at the start of step a the device holds O_a and at most B - O_a
 *   bytes more, so of the tensors live at a that are read again by step b, at least
 *   O_a + (their bytes not in O_a) - B are absent and must arrive within the piece.
 * - need_out(a, b): at the start of step b, of the tensors live at b and read after
 *   b whose last write before b is at a step >= a (or, for a = 0, that are not clean
 *   persistent tensors, which their home holds), at least O_b + their bytes - B are
 *   absent, and left within the piece (after their write, before b).
 * - Forced copies (forced() below): a tensor larger than B - O_j holds no byte of the
 *   device while j runs, so its copies fall wholly into the windows around such steps,
 *   beside the compute of the steps inside those windows only. A forced copy whose
 *   stretch begins at a use at or after a is not one of the copies need_in counts
 *   (those arrive before their tensor's first read after a): forced_after adds to it.
 * - Whole tensors (atoms() below): blocks are whole, so the bytes need_in counts are
 *   whole tensors, each with a copy that the compute of a .. its read hides only in part.
 * - piece(a, b) = compute(a .. b-1) + max((need_out - sum cout) / d2h,
 *   (need_in + forced_after - sum cin) / h2d, (forced_out - sum cout after a) / d2h,
 *   (forced_in - sum cin after a) / h2d, the duplex terms (stall()), atom(a, b)), each
 *   shortfall >= 0: what the copies beside the steps of the piece cannot move, they move
 *   while the compute queue waits.
 *
 * The pieces are disjoint intervals of the iteration, so the longest chain (dynamic
 * programming over split points, O(P^2)) is a lower bound; the one-split bound of the
 * schedule pass is a chain of two pieces with looser terms, and the larger of the two
 * is kept. Tensors the tiler made per-tile count nowhere (less counted only weakens the
 * bound). Split points: every step up to MAX_POINTS, else evenly spaced steps (fewer
 * points only weaken it), fewer again while the pairs to fill exceed MAX_WORK.
 * Memory: six P x P tables of doubles (113 MB at P = 1536).
 * Runs after predict, for every plan a compile finishes (the memo keeps the chain for the
 * next one): the bound is reported, never used to choose a plan.
 *
 * Reads: config (budget, link), graph tensors, steps (time_us), uses, live, use_steps,
 * schedule_floor, schedule_infeasible, arena_bytes. Writes: plan.meta.time_bound_s,
 * time_bound_s, time_bound_split_s, and step_bound_s (each step's least start: the chain
 * to the last point at or before it; report.c's "behind the bound" compares the replay's
 * starts with it).
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tiler.h"

#define NONE       SFC_PLAN_NONE
#define MAX_POINTS 1536u
#define MAX_WORK   16000000.0 /* (stretch, point) pairs filled */

typedef struct bound {
  const sfc_ir_t *ir;
  uint32_t n, np;         /* steps, split points */
  uint32_t *at;           /* [np] step of each point: 0 = at[0] < .. < at[np-1] = n */
  uint32_t *ceil_pt;      /* [n + 1] the first point at or after a step */
  uint32_t *floor_pt;     /* [n + 1] the last point at or before a step */
  double *in;             /* [np * np] row a: bytes live at a, next read at point b */
  double *out;            /* [np * np] row b: bytes live at b, last written at point a */
  double *ops;            /* [n] O_j */
  double *written;        /* [n] W_j */
  double *later;          /* [n + 1] sweep of L_j */
  double *dirty;          /* [n + 1] sweep of the bytes a needed swap-out could move at j */
  double *dirty_ops;      /* [n] of them among j's operands (read, not written, at j) */
  double *c, *cin, *cout; /* [n + 1] prefix sums: compute s, swap-in and swap-out capacity */
  bool *partial;          /* [tensors] per-tile tensors */
  double work;            /* (stretch, point) pairs for the points chosen */
  double *room;           /* [levels * n] sparse table: min over 2^l steps of B - O_j */
  uint32_t levels;
  double *fin, *fout; /* [np * np] forced copies' bytes (see forced_in / forced_out) */
  double *fin_after;  /* [np * np] the forced copies in whose stretch begins at a point */
  double *atom;       /* [np * np] whole tensors' least stall (atoms()) */
  struct stretch *st; /* [n_st] every stretch (atoms()) */
  uint32_t n_st;
  uint32_t out_t, out_lw; /* the last write whose forced copy out is counted */
} bound_t;

static void bound_free(bound_t *b) {
  free(b->at);
  free(b->ceil_pt);
  free(b->floor_pt);
  free(b->in);
  free(b->out);
  free(b->ops);
  free(b->written);
  free(b->later);
  free(b->dirty);
  free(b->dirty_ops);
  free(b->c);
  free(b->cin);
  free(b->cout);
  free(b->partial);
  free(b->room);
  free(b->fin);
  free(b->fin_after);
  free(b->atom);
  free(b->st);
  free(b->fout);
}

/* Calls fn for each stretch (from .. to) of steps strictly between two uses of a
 * tensor whose second use reads it (or before its first use, when that use reads a
 * value made before the iteration), with that use's step and the tensor's last write
 * before the stretch (NONE: none this iteration). A stretch before a use that only
 * writes holds no value anyone reads: nothing needs to move there. */
typedef void (*stretch_fn)(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to,
                           uint32_t next, uint32_t last_write);

static void for_stretches(bound_t *b, stretch_fn fn) {
  const sfc_ir_t *ir = b->ir;
  for (uint32_t t = 0; t < ir->graph->n_tensors; t++) {
    const sfc_live_t *l = &ir->live[t];
    if (b->partial[t] || l->first_step == NONE || l->use_count == 0)
      continue;
    const uint32_t *us = &ir->use_steps[l->use_begin];
    double bytes = (double)ir->graph->tensors[t].bytes;
    uint32_t lw = NONE;
    unsigned acc = sfc_step_access(ir, t, us[0]);
    if ((acc & SFC_ACCESS_READ) && us[0] > 0) /* its value predates the iteration */
      fn(b, t, bytes, 0, us[0] - 1, us[0], NONE);
    for (uint32_t i = 0; i + 1 < l->use_count; i++) {
      if (acc & SFC_ACCESS_WRITE)
        lw = us[i];
      acc = sfc_step_access(ir, t, us[i + 1]);
      if (us[i + 1] > us[i] + 1 && (acc & SFC_ACCESS_READ))
        fn(b, t, bytes, us[i] + 1, us[i + 1] - 1, us[i + 1], lw);
    }
  }
}

static void count_work(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to,
                       uint32_t next, uint32_t last_write) {
  (void)t, (void)bytes, (void)next, (void)last_write;
  uint32_t p0 = b->ceil_pt[from], p1 = b->floor_pt[to];
  if (p1 >= p0)
    b->work += p1 - p0 + 1;
}

/* The least B - O_j over steps lo .. hi (sparse table, O(1)). */
static double room_min(const bound_t *b, uint32_t lo, uint32_t hi) {
  uint32_t l = 0;
  while ((2u << l) <= hi - lo + 1)
    l++;
  const double *r = &b->room[(size_t)l * b->n];
  double x = r[lo], y = r[hi + 1 - (1u << l)];
  return x < y ? x : y;
}

/* The last (or first) step in from .. to beside whose operands `bytes` do not fit, or
 * NONE: a tensor of that size holds no byte of the device while such a step runs. */
static uint32_t blocking_step(const bound_t *b, uint32_t from, uint32_t to, double bytes,
                              bool last) {
  if (room_min(b, from, to) >= bytes)
    return NONE;
  uint32_t lo = from, hi = to;
  while (lo < hi) {
    uint32_t mid = last ? lo + (hi - lo + 1) / 2 : lo + (hi - lo) / 2;
    if (last ? room_min(b, mid, to) < bytes : room_min(b, from, mid) < bytes)
      last ? (lo = mid) : (hi = mid);
    else
      last ? (hi = mid - 1) : (lo = mid + 1);
  }
  return lo;
}

/* Forced copies. A tensor X (not an operand of step j, so j lies in a stretch of X) with
 * bytes > B - O_j holds no byte of the device while j runs: not resident, not the
 * destination of a swap-in in flight, not the source of a swap-out still copying (each
 * occupies its block, and the operands of j occupy theirs). So for the read that ends
 * the stretch, all of X arrives after the last such step j* ends and before the read
 * starts: within any piece [a, b) with a <= j* and next <= b, and beside no compute
 * but that of steps after a. And for the value X holds (written at w in this
 * iteration), all of it left after w and before the first such step j1 starts: within
 * any piece with a <= w and j1 <= b, counted once per write. fin / fout get the bytes
 * at (a's point, b's point); chain() sums them over a >= and b <= each cell. */
static void forced(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to, uint32_t next,
                   uint32_t last_write) {
  uint32_t np = b->np;
  uint32_t j = blocking_step(b, from, to, bytes, true);
  if (j == NONE)
    return;
  b->fin[(size_t)b->floor_pt[j] * np + b->ceil_pt[next]] += bytes;
  if (from > 0) /* the stretch begins after a use at from - 1 (else: before the iteration) */
    b->fin_after[(size_t)b->floor_pt[from - 1] * np + b->ceil_pt[next]] += bytes;
  if (last_write == NONE || (b->out_t == t && b->out_lw == last_write))
    return;
  j = blocking_step(b, from, to, bytes, false);
  b->fout[(size_t)b->floor_pt[last_write] * np + b->ceil_pt[j]] += bytes;
  b->out_t = t, b->out_lw = last_write;
}

static void fill(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to, uint32_t next,
                 uint32_t last_write) {
  const sfc_ir_t *ir = b->ir;
  b->later[from] += bytes;
  b->later[to + 1] -= bytes;
  forced(b, t, bytes, from, to, next, last_write);
  /* needs no copy out: a persistent tensor nothing wrote yet (its home holds it) */
  bool clean = last_write == NONE && (ir->graph->tensors[t].flags & SFC_TENSOR_PERSISTENT);
  if (!clean) {
    b->dirty[from] += bytes;
    b->dirty[to + 1] -= bytes;
  }
  uint32_t p0 = b->ceil_pt[from], p1 = b->floor_pt[to];
  if (p1 < p0)
    return;
  uint32_t np = b->np, next_pt = b->ceil_pt[next];
  uint32_t lw_pt = last_write == NONE ? 0 : b->floor_pt[last_write];
  for (uint32_t p = p0; p <= p1; p++) {
    b->in[(size_t)p * np + next_pt] += bytes;
    if (!clean)
      b->out[(size_t)p * np + lw_pt] += bytes;
  }
}

typedef struct stretch {
  double bytes;
  uint32_t from, to, next;
} stretch_t;

static void count_stretch(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to,
                          uint32_t next, uint32_t last_write) {
  (void)t, (void)bytes, (void)from, (void)to, (void)next, (void)last_write;
  b->n_st++;
}

static void keep_stretch(bound_t *b, uint32_t t, double bytes, uint32_t from, uint32_t to,
                         uint32_t next, uint32_t last_write) {
  (void)t, (void)last_write;
  b->st[b->n_st++] = (stretch_t){bytes, from, to, next};
}

static int by_from(const void *x, const void *y) { /* a total order: the same on every libc */
  const stretch_t *a = x, *c = y;
  if (a->from != c->from)
    return a->from < c->from ? -1 : 1;
  if (a->to != c->to)
    return a->to < c->to ? -1 : 1;
  if (a->next != c->next)
    return a->next < c->next ? -1 : 1;
  return (a->bytes > c->bytes) - (a->bytes < c->bytes);
}

/* A stretch's slack key and id, sorted once (atoms()). */
typedef struct slack_key {
  double key;
  uint32_t id;
} slack_key_t;

static int by_slack_key(const void *x, const void *y) {
  const slack_key_t *a = x, *c = y;
  if (a->key != c->key)
    return a->key < c->key ? -1 : 1;
  return (a->id > c->id) - (a->id < c->id);
}

/* Merges the sorted run add[0 .. na) into the sorted list[0 .. n). */
static uint32_t merge_in(uint64_t *list, uint32_t n, const uint64_t *add, uint32_t na) {
  uint32_t i = n, j = na, o = n + na;
  while (j > 0)
    list[--o] = i > 0 && list[i - 1] > add[j - 1] ? list[--i] : add[--j];
  return n + na;
}

/* Whole tensors (2026-11-28). At the start of step a the device holds O_a and at most
 * B - O_a bytes of the tensors live at a, read again after a (L_a): of them, tensors of
 * at least E_a = O_a + |L_a| - B bytes hold no byte of the device (not resident, no
 * swap-in in flight or reserved: blocks are whole). Such a tensor X, next read at r_X,
 * arrives by one copy that starts after the start of a and ends before r_X starts, and
 * the compute queue runs only steps a .. r_X - 1 meanwhile: it stalls at least
 * slack_X = |X| / H2D - compute(a .. r_X - 1) within [start of a, start of r_X). Within
 * a piece [a, b), the tensors read after b cost nothing there, so the piece stalls at
 * least the least s such that the tensors read after b and those with slack_X <= s
 * weigh E_a together (a quantile by slack; need_in counts the same bytes as a sum,
 * this counts their sizes). atom[a][b] gets it, for every pair of points.
 * The stretches open at a point are kept in two sorted lists, by slack rank (slack_X +
 * the compute before a does not depend on a, so the stretches are ranked once) and by
 * (next read, id), merged point by point; a Fenwick tree over the first list's positions
 * finds the quantile as b passes reads. */
typedef struct atoms_scratch {
  uint64_t *by_s, *by_n, *add_s, *add_n; /* open at a point: slack ranks; next << 32 | id */
  uint32_t *id_of, *rank_of, *pos; /* rank -> stretch, stretch -> rank, -> place in by_s + 1 */
  slack_key_t *keys;
  double *fen;
} atoms_scratch_t;

static void atoms(bound_t *b, uint64_t budget, atoms_scratch_t *w) {
  const sfc_config_t *cfg = b->ir->config;
  double B = (double)budget, h2d = cfg->device.h2d_bytes_per_s;
  uint32_t np = b->np, next_st = 0, k = 0;
  if (h2d <= 0)
    return;
  for (uint32_t i = 0; i < b->n_st; i++)
    w->keys[i] = (slack_key_t){b->st[i].bytes / h2d - b->c[b->st[i].next], i};
  qsort(w->keys, b->n_st, sizeof *w->keys, by_slack_key);
  for (uint32_t r = 0; r < b->n_st; r++)
    w->id_of[r] = w->keys[r].id, w->rank_of[w->keys[r].id] = r;
  for (uint32_t p = 0; p + 1 < np; p++) {
    uint32_t a = b->at[p], m = 0, na = 0;
    for (uint32_t i = 0; i < k; i++) /* the stretches still open at a, in order */
      if (b->st[w->id_of[w->by_s[i]]].to >= a)
        w->by_s[m++] = w->by_s[i];
    for (uint32_t i = 0, mn = 0; i < k; i++)
      if (b->st[(uint32_t)w->by_n[i]].to >= a)
        w->by_n[mn++] = w->by_n[i];
    for (; next_st < b->n_st && b->st[next_st].from <= a; next_st++)
      if (b->st[next_st].to >= a) {
        w->add_s[na] = w->rank_of[next_st];
        w->add_n[na++] = (uint64_t)b->st[next_st].next << 32 | next_st;
      }
    qsort(w->add_s, na, sizeof *w->add_s, sfc_cmp_u64);
    qsort(w->add_n, na, sizeof *w->add_n, sfc_cmp_u64);
    merge_in(w->by_s, m, w->add_s, na);
    k = merge_in(w->by_n, m, w->add_n, na);
    double sum = 0;
    for (uint32_t r = 0; r < k; r++) {
      uint32_t x = w->id_of[w->by_s[r]];
      w->pos[x] = r + 1;
      sum += b->st[x].bytes;
    }
    double E = b->ops[a] + sum - B;
    if (E <= 0 || k == 0)
      continue;
    memset(w->fen, 0, ((size_t)k + 1) * sizeof *w->fen);
    uint32_t top = 1, j = 0;
    while (top * 2 <= k)
      top *= 2;
    double free_bytes = sum, s = 0;
    for (uint32_t q = p + 1; q < np; q++) {
      bool changed = false;
      for (; j < k && (uint32_t)(w->by_n[j] >> 32) <= b->at[q]; j++) {
        uint32_t x = (uint32_t)w->by_n[j];
        for (uint32_t r = w->pos[x]; r <= k; r += r & -r)
          w->fen[r] += b->st[x].bytes;
        free_bytes -= b->st[x].bytes;
        changed = true;
      }
      if (changed) {
        double need = E - free_bytes;
        s = 0;
        if (need > 0) {
          uint32_t at = 0; /* the last place whose prefix stays below need */
          double acc = 0;
          for (uint32_t step = top; step; step >>= 1)
            if (at + step <= k && acc + w->fen[at + step] < need)
              at += step, acc += w->fen[at];
          double slack = w->keys[w->by_s[at < k ? at : k - 1]].key + b->c[a];
          s = slack > 0 ? slack : 0;
        }
      }
      b->atom[(size_t)p * np + q] = s;
    }
  }
}

static bool choose_points(bound_t *b, uint32_t np) {
  uint32_t n = b->n;
  b->np = np;
  for (uint32_t i = 0; i < np; i++)
    b->at[i] = (uint32_t)((uint64_t)i * n / (np - 1));
  for (uint32_t i = 0, s = 0; s <= n; s++) {
    while (b->at[i] < s)
      i++;
    b->ceil_pt[s] = i;
  }
  for (uint32_t i = np - 1, s = n + 1; s-- > 0;) {
    while (b->at[i] > s)
      i--;
    b->floor_pt[s] = i;
  }
  b->work = 0;
  for_stretches(b, count_work);
  return b->work <= MAX_WORK;
}

/* Per-step operand bytes and the copy capacity beside each step, as prefix sums. */
static void capacities(bound_t *b, uint64_t budget) {
  const sfc_ir_t *ir = b->ir;
  const sfc_config_t *cfg = ir->config;
  double B = (double)budget, live = 0, dirty = 0;
  b->c[0] = b->cin[0] = b->cout[0] = 0;
  for (uint32_t j = 0; j < b->n; j++) {
    live += b->later[j];
    dirty += b->dirty[j];
    double t = ir->steps[j].time_us > 0 ? ir->steps[j].time_us * 1e-6 : 0;
    double in = cfg->device.h2d_bytes_per_s * t, out = cfg->device.d2h_bytes_per_s * t;
    double room = B - b->ops[j], wroom = B - b->written[j];
    in = in < room ? in : room;
    in = in < live ? in : live;
    out = out < wroom ? out : wroom;
    out = out < dirty + b->dirty_ops[j] ? out : dirty + b->dirty_ops[j];
    b->c[j + 1] = b->c[j] + t;
    b->cin[j + 1] = b->cin[j] + (in > 0 ? in : 0);
    b->cout[j + 1] = b->cout[j] + (out > 0 ? out : 0);
  }
}

/* B - O_j for every step, and the sparse table over it. */
static void rooms(bound_t *b, uint64_t budget) {
  uint32_t n = b->n;
  b->out_t = b->out_lw = NONE;
  for (uint32_t j = 0; j < n; j++)
    b->room[j] = (double)budget - b->ops[j];
  for (uint32_t l = 1; l <= b->levels; l++) {
    const double *lo = &b->room[(size_t)(l - 1) * n];
    double *r = &b->room[(size_t)l * n];
    for (uint32_t j = 0; j + (1u << l) <= n; j++)
      r[j] = lo[j] < lo[j + (1u << (l - 1))] ? lo[j] : lo[j + (1u << (l - 1))];
  }
}

/* O_j and W_j; and the operands read, not written, at j whose value a needed swap-out
 * could be copying (written earlier in the iteration, or not a persistent tensor's:
 * the clean ones' home holds them). wrote: [tensors] scratch. */
static void operands(bound_t *b, uint32_t *seen, bool *wrote) {
  const sfc_ir_t *ir = b->ir;
  for (uint32_t t = 0; t < ir->graph->n_tensors; t++)
    seen[t] = NONE, wrote[t] = false;
  for (uint32_t j = 0; j < b->n; j++) {
    const sfc_step_t *s = &ir->steps[j];
    for (uint32_t i = 0; i < s->use_count; i++) {
      const sfc_use_t *u = &ir->uses[s->use_begin + i];
      if (u->box != NONE || b->partial[u->tensor] || seen[u->tensor] == j)
        continue;
      seen[u->tensor] = j;
      const sfc_tensor_t *x = &ir->graph->tensors[u->tensor];
      double bytes = (double)x->bytes;
      bool writes = false;
      b->ops[j] += bytes;
      for (uint32_t k = 0; k < s->use_count && !writes; k++) {
        const sfc_use_t *v = &ir->uses[s->use_begin + k];
        writes = v->tensor == u->tensor && (v->access & SFC_ACCESS_WRITE);
      }
      if (writes)
        b->written[j] += bytes;
      else if (wrote[u->tensor] || !(x->flags & SFC_TENSOR_PERSISTENT))
        b->dirty_ops[j] += bytes;
    }
    for (uint32_t i = 0; i < s->use_count; i++)
      if (ir->uses[s->use_begin + i].access & SFC_ACCESS_WRITE)
        wrote[ir->uses[s->use_begin + i].tensor] = true;
  }
}

/* One direction's copies in a piece: at least `need` bytes move within it and, of them,
 * the `forced` bytes beside no compute but that of the piece's steps after its first;
 * beside the compute at most `cap` bytes (`cap_late` beside the steps after the first). */
typedef struct copies {
  double need, more, forced, cap, cap_late;
} copies_t;

/* The least stall of a piece: what the copies beside its compute (c seconds) cannot
 * move. In link-seconds (bytes / bandwidth) each direction must do w = max(need,
 * forced) / bw, and beside the compute at most W = cap / bw of it, and of the forced
 * bytes at most cap_late / bw: the rest waits, stall >= max(need - cap, forced -
 * cap_late) / bw. While both copy engines move data, the copy the sim device placed
 * first runs at its bandwidth and the other at duplex x its own (the overlap is charged
 * to the copy issued later), so per second of any interval the two together do at most
 * kappa = 1 + duplex link-seconds of work, and each alone at most 1 (until 2026-11-28
 * this said 2 duplex, as if both slowed down: a plan whose swap-out ran beside an
 * earlier swap-in replayed below that bound, test_random_budgets at 3,000 rounds): beside the
 * compute at most min(kappa c, W_out + W_in), so stall >= (w_out + w_in - min(kappa c,
 * W_out + W_in)) / kappa; the same for the forced bytes alone, beside the compute of
 * the steps after the first (c_late) and their capacities. With duplex 1 those terms
 * bind only through the forced bytes' smaller capacity. */
typedef struct work {
  double w, cap, forced, cap_late; /* link-seconds */
} work_t;

/* One direction's shortfalls: term[0] of the bytes it needs, term[1] of the forced ones. */
static void direction(const copies_t *x, double bw, work_t *k, double *term) {
  if (bw <= 0) {
    *k = (work_t){0, 0, 0, 0};
    term[0] = term[1] = 0;
    return;
  }
  double need = (x->need > 0 ? x->need : 0) + x->more;
  *k = (work_t){(need > x->forced ? need : x->forced) / bw, x->cap / bw, x->forced / bw,
                x->cap_late / bw};
  term[0] = (need - x->cap) / bw;
  term[1] = k->forced - k->cap_late;
}

/* Both directions' work beside c seconds of compute, at most kappa link-seconds a
 * second and cap of each: what is left waits. */
static double together(double w, double cap, double c, double kappa) {
  double beside = cap < kappa * c ? cap : kappa * c;
  return (w - beside) / kappa;
}

/* c: the piece's compute; c_late: its steps' after the first (the forced bytes move
 * beside those only, so the duplex rule applies to them alone there too). *why: the
 * term that sets it (sfc_wait_why_t; the first of equal ones). */
static double stall(const copies_t *in, double h2d, const copies_t *out, double d2h, double c,
                    double c_late, double kappa, uint8_t *why) {
  work_t i, o;
  double term[SFC_WAIT_WHOLE];
  direction(in, h2d, &i, &term[SFC_WAIT_IN]);
  direction(out, d2h, &o, &term[SFC_WAIT_OUT]);
  term[SFC_WAIT_BOTH] = together(i.w + o.w, i.cap + o.cap, c, kappa);
  term[SFC_WAIT_BOTH_FORCED] =
      together(i.forced + o.forced, i.cap_late + o.cap_late, c_late, kappa);
  uint8_t at = 0;
  for (uint8_t k = 1; k < SFC_WAIT_WHOLE; k++)
    at = term[k] > term[at] ? k : at;
  *why = at;
  return term[at] > 0 ? term[at] : 0;
}

/* The least stall of the piece [at[p], at[q]) (the file comment); *compute_s its compute,
 * *why the term that sets the stall and *bytes (unless NULL) that term's bytes. */
static double piece(const bound_t *b, uint32_t p, uint32_t q, double B, double h2d, double d2h,
                    double kappa, double *compute_s, uint8_t *why, double *bytes) {
  uint32_t np = b->np, sa = b->at[p], sb = b->at[q];
  double o_b = sb < b->n ? b->ops[sb] : 0;
  double need_in = b->ops[sa] + b->in[(size_t)p * np + q] - B;
  double need_out = sb < b->n ? o_b + b->out[(size_t)q * np + p] - B : 0;
  double c = b->c[sb] - b->c[sa];
  const copies_t in = {need_in, b->fin_after[(size_t)p * np + q], b->fin[(size_t)p * np + q],
                       b->cin[sb] - b->cin[sa], b->cin[sb] - b->cin[sa + 1]};
  const copies_t out = {need_out, 0, b->fout[(size_t)p * np + q], b->cout[sb] - b->cout[sa],
                        b->cout[sb] - b->cout[sa + 1]};
  double st = stall(&in, h2d, &out, d2h, c, b->c[sb] - b->c[sa + 1], kappa, why);
  if (b->atom[(size_t)p * np + q] > st) {
    st = b->atom[(size_t)p * np + q];
    *why = SFC_WAIT_WHOLE;
  }
  if (bytes) {
    double ni = (need_in > 0 ? need_in : 0) + in.more, no = need_out > 0 ? need_out : 0;
    double by[SFC_WAIT_COUNT] = {ni,
                                 in.forced,
                                 no,
                                 out.forced,
                                 (ni > in.forced ? ni : in.forced) +
                                     (no > out.forced ? no : out.forced),
                                 in.forced + out.forced,
                                 0};
    *bytes = by[*why];
  }
  *compute_s = c;
  return st;
}

/* Both directions' work per second, at most (stall()). */
static double kappa_of(const sfc_config_t *cfg) {
  double duplex = cfg->device.duplex_factor > 0 && cfg->device.duplex_factor < 1
                      ? cfg->device.duplex_factor
                      : 1;
  return 1 + duplex;
}

static double chain(bound_t *b, uint64_t budget, double *best, uint32_t *from) {
  const sfc_config_t *cfg = b->ir->config;
  double B = (double)budget, h2d = cfg->device.h2d_bytes_per_s, d2h = cfg->device.d2h_bytes_per_s;
  double kappa = kappa_of(cfg);
  uint32_t np = b->np;
  for (uint32_t a = 0; a < np; a++) { /* in: prefix over b; out: suffix over a */
    double *row = &b->in[(size_t)a * np];
    for (uint32_t p = 1; p < np; p++)
      row[p] += row[p - 1];
    row = &b->out[(size_t)a * np];
    for (uint32_t p = np - 1; p-- > 0;)
      row[p] += row[p + 1];
    double *fi = &b->fin[(size_t)a * np], *fo = &b->fout[(size_t)a * np];
    double *fa = &b->fin_after[(size_t)a * np];
    for (uint32_t p = 1; p < np; p++) /* forced: prefix over b, then suffix over a */
      fi[p] += fi[p - 1], fo[p] += fo[p - 1], fa[p] += fa[p - 1];
  }
  for (uint32_t a = np - 1; a-- > 0;)
    for (uint32_t p = 0; p < np; p++) {
      b->fin[(size_t)a * np + p] += b->fin[(size_t)(a + 1) * np + p];
      b->fin_after[(size_t)a * np + p] += b->fin_after[(size_t)(a + 1) * np + p];
      b->fout[(size_t)a * np + p] += b->fout[(size_t)(a + 1) * np + p];
    }
  best[0] = 0;
  from[0] = 0;
  for (uint32_t q = 1; q < np; q++) {
    best[q] = 0;
    from[q] = 0;
    for (uint32_t p = 0; p < q; p++) {
      double c;
      uint8_t why;
      double st = piece(b, p, q, B, h2d, d2h, kappa, &c, &why, NULL);
      double t = best[p] + c + st;
      if (t > best[q])
        best[q] = t, from[q] = p;
    }
  }
  return best[np - 1];
}

/* The pieces of the longest chain (from[]: each point's predecessor on it) that wait, in
 * step order, into ir->bound_waits. */
static sfc_status_t keep_waits(sfc_ir_t *ir, const bound_t *b, uint64_t budget,
                               const uint32_t *from, sfc_error_t *err) {
  const sfc_config_t *cfg = ir->config;
  uint32_t n = 0;
  for (uint32_t q = b->np - 1; q > 0; q = from[q])
    n++;
  sfc_bound_wait_t *w = realloc(ir->bound_waits, ((size_t)n + 1) * sizeof *w);
  if (!w)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory keeping the bound's waits");
  ir->bound_waits = w;
  uint32_t k = n;
  for (uint32_t q = b->np - 1; q > 0; q = from[q]) {
    uint32_t p = from[q];
    double c, bytes;
    uint8_t why;
    double st = piece(b, p, q, (double)budget, cfg->device.h2d_bytes_per_s,
                      cfg->device.d2h_bytes_per_s, kappa_of(cfg), &c, &why, &bytes);
    w[--k] = (sfc_bound_wait_t){b->at[p], b->at[q], c, st, bytes, why};
  }
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++)
    if (w[i].stall_s > 1e-12) /* a picosecond: the sums' rounding, not a wait */
      w[kept++] = w[i];
  ir->n_bound_waits = kept;
  return SFC_OK;
}

/* The least start of every step: the chain to the last point at or before it (compute
 * runs in order, so a step starts no earlier than that point's step); the end gets the
 * whole bound. */
static sfc_status_t keep_starts(sfc_ir_t *ir, const bound_t *b, const double *best,
                                sfc_error_t *err) {
  uint32_t n = b->n;
  double *s = realloc(ir->step_bound_s, ((size_t)n + 1) * sizeof *s);
  if (!s)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory bounding the step starts");
  ir->step_bound_s = s;
  for (uint32_t k = 0; k < n; k++)
    s[k] = best[b->floor_pt[k]];
  s[n] = ir->time_bound_s;
  ir->step_bound_n = n + 1;
  return SFC_OK;
}

/* The bits of a double, to hash. */
static uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* A hash of everything the chain reads: the budget it bounds for, the links, the steps'
 * times and uses (liveness and the per-tile marks follow from them), the tensors' bytes,
 * kinds and flags. Every plan a compile finishes (each window final, the rerun of the
 * best) has the same steps for the same budget, so the chain is the same, and the memo
 * (ir->bound_memo) saves its time: ResNet-50 at batch 1440 on v100-nvlink2 ran the pass 5
 * times, 1.27 s of a 15 s compile. Never 0. */
static uint64_t chain_key(const sfc_ir_t *ir, uint64_t budget) {
  const sfc_config_t *cfg = ir->config;
  uint64_t h = SFC_HASH_SEED;
  h = sfc_hash_mix(h, budget);
  h = sfc_hash_mix(h, bits_of(cfg->device.h2d_bytes_per_s));
  h = sfc_hash_mix(h, bits_of(cfg->device.d2h_bytes_per_s));
  h = sfc_hash_mix(h, bits_of(kappa_of(cfg)));
  h = sfc_hash_mix(h, ir->n_steps);
  for (uint32_t k = 0; k < ir->n_steps; k++) {
    const sfc_step_t *st = &ir->steps[k];
    h = sfc_hash_mix(h, bits_of(st->time_us));
    h = sfc_hash_mix(h, st->use_count);
    for (uint32_t i = 0; i < st->use_count; i++) {
      const sfc_use_t *u = &ir->uses[st->use_begin + i];
      h = sfc_hash_mix(h, (uint64_t)u->tensor << 32 | u->box);
      h = sfc_hash_mix(h, (uint64_t)u->access << 8 | u->flags);
    }
  }
  for (uint32_t t = 0; t < ir->graph->n_tensors; t++) {
    const sfc_tensor_t *x = &ir->graph->tensors[t];
    h = sfc_hash_mix(h, x->bytes);
    h = sfc_hash_mix(h, (uint64_t)x->kind << 32 | x->flags);
  }
  return h ? h : 1;
}

/* The steps' least starts and the waits from the memo, as the pass would write them. */
static sfc_status_t from_memo(sfc_ir_t *ir, sfc_error_t *err) {
  const struct sfc_bound_memo *m = &ir->bound_memo;
  uint32_t n = ir->n_steps;
  if (m->chain_s > ir->time_bound_s)
    ir->time_bound_s = m->chain_s;
  ir->plan.meta.time_bound_s = ir->time_bound_s;
  double *s = realloc(ir->step_bound_s, ((size_t)n + 1) * sizeof *s);
  if (!s)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory bounding the step starts");
  ir->step_bound_s = s;
  memcpy(s, m->starts, (size_t)n * sizeof *s);
  s[n] = ir->time_bound_s;
  ir->step_bound_n = n + 1;
  if (m->chain_s >= ir->time_bound_s) { /* the chain is the bound printed */
    sfc_bound_wait_t *w = realloc(ir->bound_waits, ((size_t)m->n_waits + 1) * sizeof *w);
    if (!w)
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory keeping the bound's waits");
    ir->bound_waits = w;
    memcpy(w, m->waits, (size_t)m->n_waits * sizeof *w);
    ir->n_bound_waits = m->n_waits;
  }
  return SFC_OK;
}

/* Keeps the chain just computed (its starts and its waits, in ir) for the next plan;
 * without memory, none is kept (the next one computes it again). */
static void to_memo(sfc_ir_t *ir, uint64_t key, double chain_s) {
  struct sfc_bound_memo *m = &ir->bound_memo;
  size_t n = ir->n_steps, nw = ir->n_bound_waits;
  double *s = realloc(m->starts, (n + 1) * sizeof *s);
  if (s)
    m->starts = s;
  sfc_bound_wait_t *w = s ? realloc(m->waits, (nw + 1) * sizeof *w) : NULL;
  if (w)
    m->waits = w;
  m->key = 0;
  if (!s || !w)
    return;
  memcpy(s, ir->step_bound_s, n * sizeof *s);
  memcpy(w, ir->bound_waits, nw * sizeof *w);
  m->n_waits = (uint32_t)nw;
  m->chain_s = chain_s;
  m->key = key;
}

sfc_status_t sfc_pass_bound(sfc_ir_t *ir, sfc_error_t *err) {
  ir->step_bound_n = 0;
  ir->n_bound_waits = 0;
  ir->time_bound_split_s = ir->time_bound_s;
  ir->plan.meta.time_bound_s = ir->time_bound_s;
  uint64_t budget = ir->schedule_infeasible ? ir->schedule_floor : ir->config->budget_bytes;
  if (ir->schedule_infeasible && ir->arena_bytes > budget)
    budget = ir->arena_bytes; /* the bound holds for plans within their arena */
  if (budget == 0 || ir->n_steps == 0)
    return SFC_OK;
  uint64_t key = chain_key(ir, budget);
  if (ir->bound_memo.key == key) {
    ir->bound_memo.hits++;
    return from_memo(ir, err);
  }
  bound_t b = {.ir = ir, .n = ir->n_steps};
  uint32_t n = b.n, np = n + 1 < MAX_POINTS ? n + 1 : MAX_POINTS;
  size_t steps = (size_t)n + 1;
  b.at = malloc(np * sizeof *b.at);
  b.ceil_pt = malloc(steps * sizeof *b.ceil_pt);
  b.floor_pt = malloc(steps * sizeof *b.floor_pt);
  b.ops = calloc(steps, sizeof *b.ops);
  b.written = calloc(steps, sizeof *b.written);
  b.later = calloc(steps + 1, sizeof *b.later);
  b.dirty = calloc(steps + 1, sizeof *b.dirty);
  b.dirty_ops = calloc(steps, sizeof *b.dirty_ops);
  b.c = malloc(steps * sizeof *b.c);
  b.cin = malloc(steps * sizeof *b.cin);
  b.cout = malloc(steps * sizeof *b.cout);
  b.partial = calloc((size_t)ir->graph->n_tensors + 1, sizeof *b.partial);
  uint32_t *seen = malloc(((size_t)ir->graph->n_tensors + 1) * sizeof *seen);
  bool *wrote = malloc(((size_t)ir->graph->n_tensors + 1) * sizeof *wrote);
  bool ok = b.at && b.ceil_pt && b.floor_pt && b.ops && b.written && b.later && b.dirty &&
            b.dirty_ops && wrote && b.c && b.cin && b.cout && b.partial && seen;
  if (ok) {
    sfc_ft_mark_partial(ir, b.partial);
    while (!choose_points(&b, np) && np > 16)
      np /= 2;
    b.in = calloc((size_t)np * np, sizeof *b.in);
    b.out = calloc((size_t)np * np, sizeof *b.out);
    b.fin = calloc((size_t)np * np, sizeof *b.fin);
    b.fin_after = calloc((size_t)np * np, sizeof *b.fin_after);
    b.atom = calloc((size_t)np * np, sizeof *b.atom);
    b.fout = calloc((size_t)np * np, sizeof *b.fout);
    while ((2u << b.levels) <= n)
      b.levels++;
    b.room = malloc(((size_t)b.levels + 1) * n * sizeof *b.room);
    ok = b.in && b.out && b.fin && b.fin_after && b.atom && b.fout && b.room;
  }
  double *best = ok ? malloc(np * sizeof *best) : NULL;
  uint32_t *from = best ? malloc(np * sizeof *from) : NULL;
  if (!from) {
    free(best);
    free(seen);
    free(wrote);
    bound_free(&b);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory bounding the iteration time");
  }
  operands(&b, seen, wrote);
  rooms(&b, budget);
  for_stretches(&b, fill);
  capacities(&b, budget);
  b.n_st = 0;
  for_stretches(&b, count_stretch);
  size_t n_st = b.n_st;
  b.st = malloc((n_st + 1) * sizeof *b.st);
  size_t sz = n_st + 1;
  atoms_scratch_t w = {
      malloc(sz * sizeof *w.by_s),  malloc(sz * sizeof *w.by_n),  malloc(sz * sizeof *w.add_s),
      malloc(sz * sizeof *w.add_n), malloc(sz * sizeof *w.id_of), malloc(sz * sizeof *w.rank_of),
      malloc(sz * sizeof *w.pos),   malloc(sz * sizeof *w.keys),  malloc(sz * sizeof *w.fen)};
  if (b.st && w.by_s && w.by_n && w.add_s && w.add_n && w.id_of && w.rank_of && w.pos && w.keys &&
      w.fen) {
    b.n_st = 0;
    for_stretches(&b, keep_stretch);
    qsort(b.st, b.n_st, sizeof *b.st, by_from);
    atoms(&b, budget, &w);
  } else {
    ok = false;
  }
  free(w.by_s), free(w.by_n), free(w.add_s), free(w.add_n), free(w.id_of), free(w.rank_of);
  free(w.pos), free(w.keys), free(w.fen);
  if (!ok) {
    free(best), free(from), free(seen), free(wrote);
    bound_free(&b);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory bounding the iteration time");
  }
  double t = chain(&b, budget, best, from);
  if (t > ir->time_bound_s)
    ir->time_bound_s = t;
  ir->plan.meta.time_bound_s = ir->time_bound_s; /* plan format 1.4: sfc simulate prints it */
  sfc_status_t st = keep_starts(ir, &b, best, err);
  if (st == SFC_OK) /* the next plan's too */
    st = keep_waits(ir, &b, budget, from, err);
  if (st == SFC_OK)
    to_memo(ir, key, t);
  if (t < ir->time_bound_s) /* the chain is the bound printed only when it is the larger */
    ir->n_bound_waits = 0;
  free(best);
  free(from);
  free(seen);
  free(wrote);
  bound_free(&b);
  return st;
}
