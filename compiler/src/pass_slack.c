/* pass_slack.c — copies into the packed arena's slack: after packing, every swap-in is
 * issued as early as some bytes it can land in are free, and every swap-out is waited
 * for as late as the bytes it leaves are not needed (docs/algorithms.md "Slack").
 *
 * Why. The schedule pass moves swap-ins earlier (and swap-out waits later) by live
 * bytes per step, before any offset exists: room the live bytes have is often not one
 * hole of the size a block needs, so the plan packs over the budget and the pipeline's
 * margin rounds keep room free from the early swap-ins, which then stall. This pass runs
 * on the packed plan, where every block has its offset: a block grows only into bytes no
 * other block holds at those steps, so the plan stays within the arena packed (or the
 * budget, when that is larger), and the copies get the time the holes give them.
 *
 * Moves (the baselines' plans are left as their systems made them):
 *   - A swap-out's source block (its last step w - 1, step w waiting for the copy) grows
 *     at its offset to the step before the next block that shares any of its bytes
 *     begins, keeping one step absent before the tensor's next residency (and step w'
 *     within the iteration): step w' waits instead. A later wait never stalls more.
 *     Swap-in destinations in the way move aside first (2026-11-28, clear_occupants):
 *     earliest first, each to the best-fit hole over its own steps with the source grown,
 *     until one is not a destination or finds no hole.
 *   - Then, by reader (the step that waits for the copy), a swap-in's destination block
 *     (from its issue step r to its last step L) starts at the earliest step a with a
 *     hole — bytes in [0, top) no other block holds at any step of [a, L] — at least its
 *     size, the smallest such hole (best fit), keeping one step absent after the tensor's
 *     previous residency, and not ahead of the swap-in before it in reader order (the
 *     H2D engine serves them in issue order), nor before the floor that
 *     scheduler.prefetch_limit and a fixed window set (sfc_swap_in_floor). A hole for
 *     [a, L] is one for [a + 1, L] too, so a is found by binary search; its own bytes
 *     are always one (a = r).
 * Dependencies follow the schedule pass's rules with the new steps: a swap-in issued
 * before step r waits for step r - 1 (every earlier occupant of its bytes ended by then
 * and compute runs in order), for the swap-out that wrote its host copy, and for the
 * swap-outs step r waits for whose blocks share its bytes (they ended at r - 1, their
 * copies may still read them); a step waits for the swap-outs whose waits moved to it and
 * the swap-ins it reads. The swaps of one issue step are ordered by reader (the plan keeps
 * the IR's order within a step). The verifier checks the result like any plan. The
 * moves are undone when the plan replays slower on sim with them (sfc_slack_judge, below,
 * which the pipeline runs after the last round); test_schedule's test_slack and
 * test_slack_undone check both on random graphs.
 *
 * After the pipeline has chosen its plan, sfc_slack_reorder (below, docs/algorithms.md
 * "Reorder") puts each copy engine's queue closer to the order its copies are waited
 * for: a copy issued before one with an earlier waiter (a swap-in's first reader, the step
 * that waits for a swap-out) is tried behind each such copy, at that copy's issue step,
 * and kept at the place where the plan replays fastest on sim, if faster than before;
 * repeated while something moves, within REORDER_WORK. Issuing later only shortens a
 * swap-in's block at its offset and leaves a swap-out's block as it is, so the packing
 * and the budget hold; the dependencies are rebuilt as below, and each trial is undone with
 * the snapshot sfc_slack_judge uses (slack_undo). Then each swap-out, by waiter, is tried
 * earlier (advance_outs): right after the last step that writes its block (the steps after
 * only read it, and a copy may read beside them, rule 53), no earlier than its host block
 * (the schedule pass reserves it from there), and behind each copy waited for no later that
 * is issued in between; kept where the plan replays fastest, if faster, within another
 * REORDER_WORK. Its block is untouched; its dependency on the step before its issue step
 * moves with it (rebuild_deps). Last, each swap-in, by reader, is tried ahead of copies
 * read before it (advance_ins): a copy the budget forces to wait for a step leaves the H2D
 * engine idle while that step runs, so at the step before the issue step of each copy
 * with an earlier reader (the AHEAD_PLACES nearest), its destination block moved to the
 * best-fit hole from there to its last step (as move_issues finds one); kept where the
 * plan replays fastest, if faster, within a third REORDER_WORK. Contiguous arenas only.
 *
 * Cost: O(device blocks) per look for a hole or a next occupant, so O(swaps x blocks x
 * log steps) in all, bounded by SLACK_WORK block visits (then the copies not reached keep
 * their places); O(steps + swaps + deps) to rebuild the dependencies; a copy of the
 * blocks and swaps; the judgement two sim replays (evaluate.h).
 *
 * Reads: config (policy, budget, prefetch_limit, window), blocks (offsets), swaps, deps,
 * steps' deps, n_steps, arena_bytes, schedule_no_slack. Writes: blocks' first_step and offset
 * (swap-in destinations) and last_step (swap-out sources), swaps' issue_step and order, deps,
 * n_deps, steps' dep_begin/dep_count, arena_bytes (when a block moved into the budget's
 * headroom; packing_optimal is then false), slack_moved_in, slack_moved_out,
 * slack_undo (a copy of what the moves change; not for the tuners' candidates,
 * pack_fast), and sfc_slack_judge slack_reverted; sfc_slack_reorder the swaps' issue
 * steps and order, swap-in blocks' first_step (and offset, issued ahead), deps, steps'
 * dep ranges, arena_bytes (as above), slack_delayed_in, slack_delayed_out,
 * slack_advanced_out, slack_advanced_in and slack_reorder_s. Changes nothing when the
 * plan has no swaps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate.h"
#include "passes.h"

#define NONE SFC_PLAN_NONE
/* Blocks the pass may visit in all: past it, the copies not moved yet stay where the
 * schedule pass put them (a deterministic bound on its time: about 0.1 s on a 2-core
 * machine; ResNet-50 at batch 1440 needs under 2 % of it, a 55,151-step graph far more) */
#define SLACK_WORK 60000000u

typedef struct slack {
  sfc_ir_t *ir;
  uint32_t *dev; /* [n_dev] device blocks with bytes, by offset */
  uint32_t n_dev;
  uint32_t *waiter; /* [n_swaps] OUT: the step that waits for it; IN: its first reader */
  uint32_t *by_blk; /* [n_by] device blocks by (tensor, first_step) */
  uint32_t n_by;
  uint32_t *pos;      /* [n_blocks] a device block's place in by_blk */
  uint64_t top;       /* blocks may move below it: the arena, or the budget it fits */
  uint64_t work;      /* blocks visited so far (SLACK_WORK) */
  bool *movable;      /* [n_blocks] a swap-in's destination: it may take another offset */
  uint32_t *in_floor; /* [n_steps] sfc_swap_in_floor, NULL: no limit */
  /* a paged arena: at most how many pages the live blocks touch at each step (exact
   * before the moves, then raised by every page of each block that grows: an upper
   * bound), and the budget's pages; NULL when the arena is contiguous */
  uint32_t *pages_at; /* [n_steps] */
  uint64_t page, page_cap;
} slack_t;

/* Pages block x touches (0 for no bytes). */
static uint64_t block_pages(const slack_t *s, const sfc_block_t *x) {
  return x->bytes && s->page ? (x->offset + x->bytes - 1) / s->page - x->offset / s->page + 1 : 0;
}

/* A paged arena: pages_at[k], the pages the live device blocks touch at step k, as plan
 * invariant 59 counts them (a swap-out's block through that copy's issue step): per step,
 * the blocks that begin add their pages to a count per page and those that end take
 * theirs away. O(steps + the blocks' pages). False when out of memory. */
static bool count_pages(slack_t *s) {
  const sfc_ir_t *ir = s->ir;
  uint32_t n = ir->n_steps;
  uint64_t top = ir->arena_bytes > s->top ? ir->arena_bytes : s->top;
  size_t np = (size_t)(top / s->page) + 2;
  uint32_t *end = malloc(((size_t)ir->n_blocks + 1) * sizeof *end);
  uint32_t *refs = calloc(np, sizeof *refs);
  uint32_t *by_start = malloc(((size_t)s->n_dev + 1) * sizeof *by_start);
  uint32_t *by_end = malloc(((size_t)s->n_dev + 1) * sizeof *by_end);
  s->pages_at = calloc((size_t)n + 1, sizeof *s->pages_at);
  bool ok = end && refs && by_start && by_end && s->pages_at;
  if (ok) {
    for (uint32_t i = 0; i < ir->n_blocks; i++)
      end[i] = ir->blocks[i].last_step;
    for (uint32_t w = 0; w < ir->n_swaps; w++) {
      const sfc_swap_t *x = &ir->swaps[w];
      uint32_t at = x->issue_step < n ? x->issue_step : (n ? n - 1 : 0);
      if (x->direction == SFC_SWAP_OUT && at > end[x->device_block])
        end[x->device_block] = at;
    }
    /* counting sorts of dev[] by first step and by end */
    uint32_t *c = calloc((size_t)n + 2, sizeof *c), *d = calloc((size_t)n + 2, sizeof *d);
    ok = c && d;
    for (uint32_t i = 0; ok && i < s->n_dev; i++) {
      c[ir->blocks[s->dev[i]].first_step + 1]++;
      d[end[s->dev[i]] + 1]++;
    }
    for (uint32_t k = 0; ok && k <= n; k++)
      c[k + 1] += c[k], d[k + 1] += d[k];
    for (uint32_t i = 0; ok && i < s->n_dev; i++) {
      by_start[c[ir->blocks[s->dev[i]].first_step]++] = s->dev[i];
      by_end[d[end[s->dev[i]]]++] = s->dev[i];
    }
    free(c);
    free(d);
    uint32_t used = 0, i = 0, j = 0;
    for (uint32_t k = 0; ok && k < n; k++) {
      for (; i < s->n_dev && ir->blocks[by_start[i]].first_step == k; i++) {
        const sfc_block_t *b = &ir->blocks[by_start[i]];
        for (uint64_t p = b->offset / s->page; p <= (b->offset + b->bytes - 1) / s->page; p++)
          used += refs[p]++ == 0;
      }
      s->pages_at[k] = used;
      for (; j < s->n_dev && end[by_end[j]] == k; j++) {
        const sfc_block_t *b = &ir->blocks[by_end[j]];
        for (uint64_t p = b->offset / s->page; p <= (b->offset + b->bytes - 1) / s->page; p++)
          used -= --refs[p] == 0;
      }
    }
  }
  free(end);
  free(refs);
  free(by_start);
  free(by_end);
  return ok;
}

/* A paged arena: whether `pages` more pages fit the budget at every step of [from, to). */
static bool pages_fit(const slack_t *s, uint64_t pages, uint32_t from, uint32_t to) {
  if (!s->pages_at)
    return true;
  for (uint32_t t = from; t < to; t++)
    if (s->pages_at[t] + pages > s->page_cap)
      return false;
  return true;
}

static void pages_add(slack_t *s, uint64_t pages, uint32_t from, uint32_t to) {
  if (s->pages_at)
    for (uint32_t t = from; t < to; t++)
      s->pages_at[t] += (uint32_t)pages;
}

static bool shares(const sfc_block_t *a, const sfc_block_t *b) {
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* The first block to begin after step `after` and by step `by` that shares any of block
 * x's bytes (the earliest; the first by offset among equals), or NONE. */
static uint32_t first_occupant(slack_t *s, uint32_t x, uint32_t after, uint32_t by) {
  const sfc_ir_t *ir = s->ir;
  const sfc_block_t *a = &ir->blocks[x];
  uint32_t best = NONE, i = 0;
  for (; i < s->n_dev; i++) {
    const sfc_block_t *b = &ir->blocks[s->dev[i]];
    if (b->offset >= a->offset + a->bytes)
      break; /* by offset: none further on shares */
    if (s->dev[i] != x && shares(a, b) && b->first_step > after && b->first_step <= by &&
        (best == NONE || b->first_step < ir->blocks[best].first_step))
      best = s->dev[i];
  }
  s->work += i;
  return best;
}

/* The first step of the first block after block x that shares any of its bytes (n: none). */
static uint32_t next_occupant(slack_t *s, uint32_t x) {
  uint32_t y = first_occupant(s, x, s->ir->blocks[x].last_step, UINT32_MAX);
  return y == NONE ? s->ir->n_steps : s->ir->blocks[y].first_step;
}

/* A hole for block x over steps [a, last of x]: the offset of the smallest run of free
 * bytes in [0, top) at least x's size that no other device block live at any of those
 * steps holds (best fit keeps large holes for large blocks), or UINT64_MAX. */
static uint64_t hole(slack_t *s, uint32_t x, uint32_t a) {
  const sfc_ir_t *ir = s->ir;
  const sfc_block_t *d = &ir->blocks[x];
  uint64_t best = UINT64_MAX, best_len = UINT64_MAX, end = 0;
  for (uint32_t i = 0; i < s->n_dev; i++) { /* by offset: the sweep needs no sort */
    const sfc_block_t *b = &ir->blocks[s->dev[i]];
    if (s->dev[i] == x || b->first_step > d->last_step || b->last_step < a)
      continue;
    if (b->offset > end && b->offset - end >= d->bytes && b->offset - end < best_len) {
      best = end;
      best_len = b->offset - end;
    }
    if (b->offset + b->bytes > end)
      end = b->offset + b->bytes;
  }
  if (s->top > end && s->top - end >= d->bytes && s->top - end < best_len)
    best = end;
  s->work += s->n_dev;
  return best;
}

/* Block x moved: its place in dev[] by offset again. */
static void resort(slack_t *s, uint32_t x) {
  uint32_t i = 0;
  while (s->dev[i] != x)
    i++;
  memmove(&s->dev[i], &s->dev[i + 1], (s->n_dev - i - 1) * sizeof *s->dev);
  uint64_t off = s->ir->blocks[x].offset;
  uint32_t j = 0;
  while (j < s->n_dev - 1 && s->ir->blocks[s->dev[j]].offset <= off)
    j++;
  memmove(&s->dev[j + 1], &s->dev[j], (s->n_dev - 1 - j) * sizeof *s->dev);
  s->dev[j] = x;
}

/* A sort key and the block it stands for (by key, then index: a total order). */
typedef struct keyed {
  uint64_t key;
  uint32_t index;
} keyed_t;

static int cmp_keyed(const void *pa, const void *pb) {
  const keyed_t *a = pa, *b = pb;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* list[0 .. n) sorted by key(block); false when out of memory. */
static bool sort_blocks(const sfc_ir_t *ir, uint32_t *list, uint32_t n, bool by_offset) {
  keyed_t *k = malloc(((size_t)n + 1) * sizeof *k);
  if (!k)
    return false;
  for (uint32_t i = 0; i < n; i++) {
    const sfc_block_t *b = &ir->blocks[list[i]];
    k[i] = (keyed_t){by_offset ? b->offset : (uint64_t)b->tensor << 32 | b->first_step, list[i]};
  }
  qsort(k, n, sizeof *k, cmp_keyed);
  for (uint32_t i = 0; i < n; i++)
    list[i] = k[i].index;
  free(k);
  return true;
}

/* The tensor's device block before (dir -1) or after (+1) block x, or NONE. */
static uint32_t neighbour(const slack_t *s, uint32_t x, int dir) {
  const sfc_ir_t *ir = s->ir;
  uint32_t p = s->pos[x];
  if (p == NONE || (dir < 0 && p == 0) || (dir > 0 && p + 1 >= s->n_by))
    return NONE;
  uint32_t y = s->by_blk[dir < 0 ? p - 1 : p + 1];
  const sfc_block_t *b = &ir->blocks[y];
  return b->tensor == ir->blocks[x].tensor ? y : NONE;
}

/* Makes room for swap-out source block x to stay until step `last`: the swap-in
 * destinations that begin in its bytes after its last step and by `last` move, earliest
 * first, to the best-fit hole over their own steps with x grown (their steps and copies
 * stay; rebuild_deps makes them wait for the swap-outs whose bytes they take now). Stops
 * at a block that is not one or finds no hole. Returns the step x may now hold to (at
 * least its last step). */
static uint32_t clear_occupants(slack_t *s, uint32_t x, uint32_t last) {
  sfc_ir_t *ir = s->ir;
  sfc_block_t *a = &ir->blocks[x];
  uint32_t keep = a->last_step, reach = last, y;
  a->last_step = last; /* grown: hole() sees x over the steps it would hold */
  while ((y = first_occupant(s, x, keep, last)) != NONE) {
    uint64_t off = s->movable[y] ? hole(s, y, ir->blocks[y].first_step) : UINT64_MAX;
    if (off == UINT64_MAX || s->work > SLACK_WORK) {
      reach = ir->blocks[y].first_step - 1;
      break;
    }
    ir->blocks[y].offset = off;
    resort(s, y);
    ir->slack_relocated++;
  }
  a->last_step = keep;
  return reach;
}

/* Swap-out waits later (the file comment). */
static void move_waits(slack_t *s) {
  sfc_ir_t *ir = s->ir;
  for (uint32_t i = 0; i < ir->n_swaps; i++) {
    sfc_swap_t *w = &ir->swaps[i];
    uint32_t x = w->device_block, k = s->waiter[i];
    if (s->work > SLACK_WORK)
      break;
    if (w->direction != SFC_SWAP_OUT || k == NONE)
      continue;
    sfc_block_t *b = &ir->blocks[x];
    if (b->last_step + 1 != k)
      continue; /* not the schedule pass's shape: leave it */
    /* the last step it may hold: before the next block sharing its bytes, and with one
     * step absent before the tensor's next residency (or step w' before the end) */
    uint32_t next = neighbour(s, x, +1), occ = next_occupant(s, x);
    uint32_t cap = next != NONE ? ir->blocks[next].first_step : ir->n_steps;
    uint32_t last = cap >= 2 ? cap - 2 : 0;
    if (occ - 1 < last && last > b->last_step && !s->pages_at) /* (paged: they stay) */
      occ = clear_occupants(s, x, last) + 1; /* the swap-ins in the way move aside */
    if (occ - 1 < last)
      last = occ - 1;
    if (s->pages_at) { /* a paged arena: while its pages fit the budget */
      uint64_t np = block_pages(s, b);
      uint32_t ok = b->last_step;
      while (ok < last && pages_fit(s, np, ok + 1, ok + 2))
        ok++;
      last = ok;
      pages_add(s, np, b->last_step + 1, last + 1);
    }
    if (last > b->last_step) {
      b->last_step = last;
      s->waiter[i] = last + 1;
      ir->slack_moved_out++;
    }
  }
}

/* Whether swap-in destination x may begin at step a: a hole from a to its end, and in a
 * paged arena its np pages within the budget's at the steps it gains — and at its own
 * steps too when the hole is not at its offset (its pages there are new). */
static bool issue_fits(slack_t *s, uint32_t x, uint32_t a, uint64_t np) {
  const sfc_block_t *b = &s->ir->blocks[x];
  uint64_t off = hole(s, x, a);
  if (off == UINT64_MAX)
    return false;
  return pages_fit(s, np, a, off == b->offset ? b->first_step : b->last_step + 1);
}

/* Swap-ins earlier (the file comment). */
static bool move_issues(slack_t *s) {
  sfc_ir_t *ir = s->ir;
  uint64_t *keys = malloc(((size_t)ir->n_swaps + 1) * sizeof *keys);
  if (!keys)
    return false;
  uint32_t n = 0;
  for (uint32_t i = 0; i < ir->n_swaps; i++)
    if (ir->swaps[i].direction == SFC_SWAP_IN && s->waiter[i] != NONE)
      keys[n++] = (uint64_t)s->waiter[i] << 32 | i;
  qsort(keys, n, sizeof *keys, sfc_cmp_u64);
  uint32_t floor_r = 0;
  for (uint32_t j = 0; j < n && s->work <= SLACK_WORK; j++) {
    sfc_swap_t *w = &ir->swaps[(uint32_t)keys[j]];
    uint32_t x = w->device_block;
    sfc_block_t *b = &ir->blocks[x];
    if (b->first_step != w->issue_step) {
      floor_r = w->issue_step > floor_r ? w->issue_step : floor_r;
      continue; /* not the schedule pass's shape: leave it */
    }
    uint32_t prev = neighbour(s, x, -1);
    uint32_t lo = floor_r;
    if (prev != NONE && ir->blocks[prev].last_step + 2 > lo)
      lo = ir->blocks[prev].last_step + 2; /* one absent step stays */
    uint32_t reader = (uint32_t)(keys[j] >> 32);
    if (s->in_floor && s->in_floor[reader] > lo)
      lo = s->in_floor[reader]; /* prefetch_limit, a fixed window */
    /* the earliest issue step with a hole from there to the block's end (a hole for
     * [r, last] is one for [r + 1, last] too: binary search); its own bytes are one */
    uint32_t a = lo, z = b->first_step;
    uint64_t np = block_pages(s, b) + 1; /* (paged: a new offset may straddle one more) */
    while (a < z) {
      uint32_t mid = a + (z - a) / 2;
      if (issue_fits(s, x, mid, np))
        z = mid;
      else
        a = mid + 1;
    }
    if (a < b->first_step && issue_fits(s, x, a, np)) {
      uint64_t off = hole(s, x, a);
      pages_add(s, np, a, off == b->offset ? b->first_step : b->last_step + 1);
      b->offset = off;
      b->first_step = a;
      w->issue_step = a;
      ir->slack_moved_in++;
      resort(s, x);
    }
    floor_r = w->issue_step;
  }
  free(keys);
  return true;
}

static sfc_status_t oom(sfc_error_t *err) {
  return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory moving copies into slack");
}

/* The dependencies again, from the moved issue and wait steps (the file comment). */
static sfc_status_t rebuild_deps(slack_t *s, sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  uint32_t n = ir->n_steps, ns = ir->n_swaps;
  /* the swap-outs each step waits for now */
  uint32_t(*pairs)[2] = malloc(((size_t)ns + 1) * sizeof *pairs);
  uint32_t *writer = malloc(((size_t)ns + 1) * sizeof *writer);
  uint32_t *out_list = NULL, *out_at = NULL, n_out = 0;
  if (pairs && writer) {
    for (uint32_t i = 0; i < ns; i++) {
      writer[i] = NONE;
      if (ir->swaps[i].direction == SFC_SWAP_OUT && s->waiter[i] != NONE) {
        pairs[n_out][0] = s->waiter[i];
        pairs[n_out++][1] = i;
      }
    }
    out_at = sfc_group_by_step((const uint32_t(*)[2])pairs, n_out, n, &out_list);
  }
  free(pairs);
  if (!out_at) {
    free(writer);
    return oom(err);
  }
  /* a swap-in's writer: the swap-out of its tensor it waited for */
  uint64_t total = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const sfc_swap_t *w = &ir->swaps[i];
    if (w->direction == SFC_SWAP_OUT) {
      total += w->dep_count;
      continue;
    }
    for (uint32_t j = 0; j < w->dep_count; j++) {
      const sfc_dep_t *d = &ir->deps[w->dep_begin + j];
      if (d->kind == SFC_NODE_SWAP && ir->swaps[d->index].direction == SFC_SWAP_OUT &&
          ir->swaps[d->index].tensor == w->tensor)
        writer[i] = d->index;
    }
    total += (w->issue_step > 0) + (writer[i] != NONE);
    for (uint32_t j = out_at[w->issue_step]; j < out_at[w->issue_step + 1]; j++)
      total +=
          shares(&ir->blocks[w->device_block], &ir->blocks[ir->swaps[out_list[j]].device_block]);
  }
  /* steps: the swap-outs they wait for now, and the swap-ins they read (as before) */
  for (uint32_t k = 0; k < n; k++) {
    total += out_at[k + 1] - out_at[k];
    for (uint32_t j = 0; j < ir->steps[k].dep_count; j++) {
      const sfc_dep_t *d = &ir->deps[ir->steps[k].dep_begin + j];
      total += !(d->kind == SFC_NODE_SWAP && ir->swaps[d->index].direction == SFC_SWAP_OUT);
    }
  }
  sfc_dep_t *deps =
      total > SFC_PLAN_MAX_RECORDS ? NULL : sfc_pool_calloc(&ir->pool, total + 1, sizeof *deps);
  if (!deps) {
    free(out_at);
    free(out_list);
    free(writer);
    return total > SFC_PLAN_MAX_RECORDS
               ? sfc_error_set(err, SFC_ERR_LIMIT, "%llu swap dependencies exceed the plan limit",
                               (unsigned long long)total)
               : oom(err);
  }
  uint32_t at = 0;
  for (uint32_t i = 0; i < ns; i++) {
    sfc_swap_t *w = &ir->swaps[i];
    uint32_t begin = at;
    if (w->direction == SFC_SWAP_OUT) {
      for (uint32_t j = 0; j < w->dep_count; j++) {
        sfc_dep_t d = ir->deps[w->dep_begin + j];
        if (d.kind == SFC_NODE_STEP && d.index >= w->issue_step) /* issued earlier now */
          d.index = w->issue_step - 1;
        deps[at++] = d;
      }
    } else {
      uint32_t r = w->issue_step;
      if (r > 0)
        deps[at++] = (sfc_dep_t){SFC_NODE_STEP, r - 1};
      if (writer[i] != NONE)
        deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, writer[i]};
      for (uint32_t j = out_at[r]; j < out_at[r + 1]; j++)
        if (shares(&ir->blocks[w->device_block], &ir->blocks[ir->swaps[out_list[j]].device_block]))
          deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, out_list[j]};
    }
    w->dep_begin = begin;
    w->dep_count = at - begin;
  }
  for (uint32_t k = 0; k < n; k++) {
    sfc_step_t *st = &ir->steps[k];
    uint32_t begin = at;
    for (uint32_t j = out_at[k]; j < out_at[k + 1]; j++)
      deps[at++] = (sfc_dep_t){SFC_NODE_SWAP, out_list[j]};
    for (uint32_t j = 0; j < st->dep_count; j++) {
      const sfc_dep_t *d = &ir->deps[st->dep_begin + j];
      if (!(d->kind == SFC_NODE_SWAP && ir->swaps[d->index].direction == SFC_SWAP_OUT))
        deps[at++] = *d;
    }
    st->dep_begin = begin;
    st->dep_count = at - begin;
  }
  ir->deps = deps;
  ir->n_deps = at;
  /* the plan orders the swaps of one issue step as the IR does (then by dependency), and
   * the H2D engine serves them in that order: swap-ins by reader, as they were moved */
  uint64_t *keys = malloc(((size_t)ns + 1) * sizeof *keys);
  sfc_swap_t *old = malloc(((size_t)ns + 1) * sizeof *old);
  if (!keys || !old) {
    free(keys);
    free(old);
    free(out_at);
    free(out_list);
    free(writer);
    return oom(err);
  }
  for (uint32_t i = 0; i < ns; i++) { /* (issue step, reader or n for a swap-out, index) */
    uint32_t k = ir->swaps[i].direction == SFC_SWAP_IN && s->waiter[i] != NONE ? s->waiter[i] : n;
    keys[i] = (uint64_t)ir->swaps[i].issue_step << 43 | (uint64_t)k << 22 | i;
  }
  if (n < (1u << 21) && ns < (1u << 22)) { /* the keys' fields hold them */
    qsort(keys, ns, sizeof *keys, sfc_cmp_u64);
    memcpy(old, ir->swaps, (size_t)ns * sizeof *old);
    for (uint32_t j = 0; j < ns; j++) {
      uint32_t i = (uint32_t)(keys[j] & ((1u << 22) - 1));
      ir->swaps[j] = old[i];
      writer[i] = j; /* reused: old index -> new */
    }
    for (uint32_t j = 0; j < at; j++)
      if (deps[j].kind == SFC_NODE_SWAP)
        deps[j].index = writer[deps[j].index];
  }
  free(keys);
  free(old);
  free(out_at);
  free(out_list);
  free(writer);
  return SFC_OK;
}

/* waiter[i]: the first step that waits for swap i (a swap-in's reader, the step that waits
 * for a swap-out), or NONE. */
static void find_waiters(slack_t *s) {
  const sfc_ir_t *ir = s->ir;
  for (uint32_t i = 0; i < ir->n_swaps; i++)
    s->waiter[i] = NONE;
  for (uint32_t k = 0; k < ir->n_steps; k++)
    for (uint32_t j = 0; j < ir->steps[k].dep_count; j++) {
      const sfc_dep_t *d = &ir->deps[ir->steps[k].dep_begin + j];
      if (d->kind == SFC_NODE_SWAP && s->waiter[d->index] == NONE)
        s->waiter[d->index] = k;
    }
}

static void slack_free(slack_t *s) {
  free(s->dev);
  free(s->waiter);
  free(s->by_blk);
  free(s->pos);
  free(s->movable);
  free(s->in_floor);
  free(s->pages_at);
}

/* The device blocks as the moves look them up: dev (with bytes, by offset), by_blk and
 * pos (by tensor and first step), top. False when out of memory. */
static bool index_blocks(slack_t *s) {
  sfc_ir_t *ir = s->ir;
  s->dev = malloc(((size_t)ir->n_blocks + 1) * sizeof *s->dev);
  s->by_blk = malloc(((size_t)ir->n_blocks + 1) * sizeof *s->by_blk);
  s->pos = malloc(((size_t)ir->n_blocks + 1) * sizeof *s->pos);
  if (!s->dev || !s->by_blk || !s->pos)
    return false;
  uint32_t n_by = 0;
  s->n_dev = 0;
  for (uint32_t b = 0; b < ir->n_blocks; b++) {
    s->pos[b] = NONE;
    if (ir->blocks[b].arena != SFC_ARENA_DEVICE)
      continue;
    s->by_blk[n_by++] = b;
    if (ir->blocks[b].bytes > 0)
      s->dev[s->n_dev++] = b;
  }
  s->n_by = n_by;
  if (!sort_blocks(ir, s->dev, s->n_dev, true) || !sort_blocks(ir, s->by_blk, n_by, false))
    return false;
  for (uint32_t p = 0; p < n_by; p++)
    s->pos[s->by_blk[p]] = p;
  uint64_t budget = ir->config->budget_bytes;
  s->top = ir->arena_bytes < budget ? budget : ir->arena_bytes;
  return true;
}

/* A block moved above the packed arena's peak (within the budget) raises it. */
static void raise_arena(slack_t *s) {
  sfc_ir_t *ir = s->ir;
  for (uint32_t i = 0; i < s->n_dev; i++) {
    const sfc_block_t *b = &ir->blocks[s->dev[i]];
    if (b->offset + b->bytes > ir->arena_bytes) {
      ir->arena_bytes = b->offset + b->bytes;
      ir->packing_optimal = false; /* the packer's proof was for the arena it packed */
    }
  }
}

static sfc_status_t slack_moves(sfc_ir_t *ir, sfc_error_t *err) {
  slack_t s = {.ir = ir};
  s.waiter = malloc(((size_t)ir->n_swaps + 1) * sizeof *s.waiter);
  s.movable = calloc((size_t)ir->n_blocks + 1, sizeof *s.movable);
  if (!s.waiter || !s.movable || !index_blocks(&s)) {
    slack_free(&s);
    return oom(err);
  }
  for (uint32_t i = 0; i < ir->n_swaps; i++)   /* (moving any block instead: 1440 and 1783 */
    if (ir->swaps[i].direction == SFC_SWAP_IN) /* replayed slower, 1700 faster) */
      s.movable[ir->swaps[i].device_block] = !ir->blocks[ir->swaps[i].device_block].placed;
  find_waiters(&s);
  uint64_t budget = ir->config->budget_bytes;
  if (sfc_ir_paged(ir)) {
    s.page = ir->config->arena.page_bytes;
    s.page_cap = budget / s.page;
    if (!count_pages(&s)) {
      slack_free(&s);
      return oom(err);
    }
  }
  sfc_status_t st = SFC_OK;
  move_waits(&s);
  if (!sfc_swap_in_floor(ir, &s.in_floor) || !move_issues(&s))
    st = oom(err);
  if (st == SFC_OK && (ir->slack_moved_in || ir->slack_moved_out || ir->slack_relocated))
    st = rebuild_deps(&s, err);
  raise_arena(&s);
  slack_free(&s);
  return st;
}

/* What the moves changed, to put back when they made the replay slower: the blocks, the
 * swaps (their order too), the steps' dependency ranges, the deps array (the IR pool's:
 * rebuild_deps allocates a new one, so the old one stays valid), the arena size. One per
 * IR, in its pool, grown when a round has more blocks, swaps or steps (ir->slack_undo). */
typedef struct snapshot {
  sfc_block_t *blocks;
  sfc_swap_t *swaps;
  uint32_t (*step_deps)[2];
  uint32_t cap_blocks, cap_swaps, cap_steps;
  sfc_dep_t *deps;
  uint32_t n_deps;
  uint32_t moved_in, moved_out;
  uint64_t arena_bytes;
  bool packing_optimal;
  bool valid; /* the last run of the pass moved something and kept this */
} snapshot_t;

static snapshot_t *snapshot_take(sfc_ir_t *ir) {
  snapshot_t *p = ir->slack_undo;
  if (!p && !(p = ir->slack_undo = sfc_pool_calloc(&ir->pool, 1, sizeof *p)))
    return NULL;
  if (p->cap_blocks < ir->n_blocks) {
    p->blocks = sfc_pool_calloc(&ir->pool, (size_t)ir->n_blocks + 1, sizeof *p->blocks);
    p->cap_blocks = p->blocks ? ir->n_blocks : 0;
  }
  if (p->cap_swaps < ir->n_swaps) {
    p->swaps = sfc_pool_calloc(&ir->pool, (size_t)ir->n_swaps + 1, sizeof *p->swaps);
    p->cap_swaps = p->swaps ? ir->n_swaps : 0;
  }
  if (p->cap_steps < ir->n_steps) {
    p->step_deps = sfc_pool_calloc(&ir->pool, (size_t)ir->n_steps + 1, sizeof *p->step_deps);
    p->cap_steps = p->step_deps ? ir->n_steps : 0;
  }
  if (p->cap_blocks < ir->n_blocks || p->cap_swaps < ir->n_swaps || p->cap_steps < ir->n_steps)
    return NULL;
  memcpy(p->blocks, ir->blocks, (size_t)ir->n_blocks * sizeof *p->blocks);
  memcpy(p->swaps, ir->swaps, (size_t)ir->n_swaps * sizeof *p->swaps);
  for (uint32_t k = 0; k < ir->n_steps; k++)
    p->step_deps[k][0] = ir->steps[k].dep_begin, p->step_deps[k][1] = ir->steps[k].dep_count;
  p->deps = ir->deps;
  p->n_deps = ir->n_deps;
  p->moved_in = ir->slack_moved_in;
  p->moved_out = ir->slack_moved_out;
  p->arena_bytes = ir->arena_bytes;
  p->packing_optimal = ir->packing_optimal;
  return p;
}

static void swap_bytes(void *a, void *b, size_t n) {
  unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++) {
    unsigned char t = x[i];
    x[i] = y[i];
    y[i] = t;
  }
}

/* Exchanges the IR's state with the snapshot's: twice is the identity. */
static void snapshot_swap(sfc_ir_t *ir, snapshot_t *p) {
  swap_bytes(ir->blocks, p->blocks, (size_t)ir->n_blocks * sizeof *p->blocks);
  swap_bytes(ir->swaps, p->swaps, (size_t)ir->n_swaps * sizeof *p->swaps);
  for (uint32_t k = 0; k < ir->n_steps; k++) {
    uint32_t b = ir->steps[k].dep_begin, c = ir->steps[k].dep_count;
    ir->steps[k].dep_begin = p->step_deps[k][0], ir->steps[k].dep_count = p->step_deps[k][1];
    p->step_deps[k][0] = b, p->step_deps[k][1] = c;
  }
  sfc_dep_t *d = ir->deps;
  ir->deps = p->deps, p->deps = d;
  uint32_t n = ir->n_deps, mi = ir->slack_moved_in, mo = ir->slack_moved_out;
  ir->n_deps = p->n_deps, p->n_deps = n;
  ir->slack_moved_in = p->moved_in, p->moved_in = mi;
  ir->slack_moved_out = p->moved_out, p->moved_out = mo;
  uint64_t a = ir->arena_bytes;
  ir->arena_bytes = p->arena_bytes, p->arena_bytes = a;
  bool o = ir->packing_optimal;
  ir->packing_optimal = p->packing_optimal, p->packing_optimal = o;
}

/* Keeps a copy of what the moves change (not for the tuners' candidates, pack_fast: their
 * own replay ranks them), for sfc_slack_judge. */
sfc_status_t sfc_pass_slack(sfc_ir_t *ir, sfc_error_t *err) {
  ir->slack_moved_in = ir->slack_moved_out = ir->slack_relocated = 0;
  ir->slack_reverted = false;
  snapshot_t *snap = ir->slack_undo;
  if (snap)
    snap->valid = false;
  if (ir->n_swaps == 0 || ir->schedule_no_slack ||
      ir->config->scheduler.policy != SFC_SCHED_WINDOW) /* the baselines stay theirs */
    return SFC_OK;
  if (!ir->pack_fast && !(snap = snapshot_take(ir)))
    return oom(err);
  sfc_status_t st = slack_moves(ir, err);
  if (st == SFC_OK && snap && !ir->pack_fast)
    snap->valid = ir->slack_moved_in || ir->slack_moved_out;
  return st;
}

/* The moves are kept only when the plan replays on sim no slower than without them (an
 * earlier swap-in can wait there for a swap-out that shares its bytes and hold up the
 * H2D engine's queue behind it): the pass never makes a plan slower. Two replays, so the
 * pipeline judges the last round's moves only (its earlier rounds are judged by what
 * they pack to). A plan the evaluator refuses keeps the moves unjudged. */
void sfc_slack_judge(sfc_ir_t *ir) {
  snapshot_t *snap = ir->slack_undo;
  if (!snap || !snap->valid)
    return;
  snap->valid = false;
  sfc_eval_t before, after;
  sfc_error_t ignored = {0};
  if (sfc_evaluate(ir, NULL, &after, &ignored) != SFC_OK)
    return;
  snapshot_swap(ir, snap); /* the IR without the moves */
  /* (a paged arena: moves that took its pages over the budget are undone too) */
  if (sfc_evaluate(ir, NULL, &before, &ignored) == SFC_OK &&
      (after.predicted_iteration_s > before.predicted_iteration_s ||
       (after.over_budget && !before.over_budget))) {
    ir->slack_reverted = true;
    return;
  }
  snapshot_swap(ir, snap); /* the moves back */
}

/* ---- the H2D queue in reader order (sfc_slack_reorder) -------------------------- */

/* Work (steps + swaps + dependencies per replay, summed) the trials may take in all (each
 * move kept replays once more, uncounted): past
 * it the queues stay as they are (0.1-0.5 s on ResNet-50, 0.55 s on the 55,151-step graph,
 * on a 2-core machine). A deterministic count, not a clock: the plan depends on the
 * inputs alone. */
#define REORDER_WORK 250000.0

static int cmp_u32(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return a < b ? -1 : a > b;
}

/* keys[0 .. n): (waiter << 32 | swap) of one direction's copies some step waits for,
 * sorted: the order the engine should serve them in. */
static uint32_t queue_keys(slack_t *s, uint8_t direction, uint64_t *keys) {
  const sfc_ir_t *ir = s->ir;
  find_waiters(s);
  uint32_t n = 0;
  for (uint32_t i = 0; i < ir->n_swaps; i++)
    if (ir->swaps[i].direction == direction && s->waiter[i] != NONE)
      keys[n++] = (uint64_t)s->waiter[i] << 32 | i;
  qsort(keys, n, sizeof *keys, sfc_cmp_u64);
  return n;
}

/* Issues copy i at `step` (a swap-in's block begins there too) and replays the plan:
 * its time, or INFINITY when the evaluator refuses it. */
static sfc_status_t try_issue(slack_t *s, uint32_t i, uint32_t step, double *time,
                              sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  sfc_swap_t *w = &ir->swaps[i];
  w->issue_step = step;
  if (w->direction == SFC_SWAP_IN)
    ir->blocks[w->device_block].first_step = step;
  SFC_TRY(rebuild_deps(s, err));
  sfc_eval_t e;
  sfc_error_t ignored = {0};
  /* a paged arena: a swap-out issued later holds its pages longer (invariant 59) */
  *time = sfc_evaluate(ir, NULL, &e, &ignored) == SFC_OK && !e.over_budget ? e.predicted_iteration_s
                                                                           : INFINITY;
  return SFC_OK;
}

/* Copy i tried at each of places[0 .. np) (repeats skipped) while the work bound allows,
 * each trial replayed on sim and undone with the snapshot; then issued at the fastest
 * place if that beats *best (*best becomes its time, *moved true). */
static sfc_status_t best_place(slack_t *s, snapshot_t *undo, uint32_t i, uint32_t *places,
                               uint32_t np, double per, double *work, double *best, bool *moved,
                               sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  *moved = false;
  qsort(places, np, sizeof *places, cmp_u32);
  uint32_t chosen = NONE;
  double chosen_s = *best;
  for (uint32_t p = 0; p < np && *work + per <= REORDER_WORK; p++) {
    if (p > 0 && places[p] == places[p - 1])
      continue;
    if (!snapshot_take(ir))
      return oom(err);
    double time;
    sfc_status_t st = try_issue(s, i, places[p], &time, err);
    *work += per;
    snapshot_swap(ir, undo); /* the plan as it was */
    if (st != SFC_OK)
      return st;
    if (time < chosen_s)
      chosen = places[p], chosen_s = time;
  }
  if (chosen == NONE)
    return SFC_OK;
  double time;
  SFC_TRY(try_issue(s, i, chosen, &time, err)); /* the trial again (not counted) */
  *best = time;
  *moved = true;
  return SFC_OK;
}

/* The earliest step swap-out i may be issued before: right after the last step before its
 * issue that writes its block (the value is final then: the steps after only read it, and
 * a copy may read beside them, rule 53), with its host block live there (the schedule pass
 * reserves it from there). NONE when that is not earlier than now. */
static uint32_t earliest_out(const sfc_ir_t *ir, const sfc_swap_t *w) {
  const sfc_block_t *b = &ir->blocks[w->device_block], *h = &ir->blocks[w->host_block];
  for (uint32_t k = w->issue_step; k-- > b->first_step;)
    if (sfc_step_access(ir, w->tensor, k) & SFC_ACCESS_WRITE) {
      uint32_t r = k + 1 > h->first_step ? k + 1 : h->first_step;
      return r < w->issue_step ? r : NONE;
    }
  return NONE; /* filled by a swap-in and never written since: no swap-out to move */
}

/* Swap-outs issued earlier, towards the last write of their blocks (the file comment):
 * in waiter order, each tried at its earliest step and behind each copy waited for no
 * later that is issued in between; kept where the plan replays fastest, if faster. */
static sfc_status_t advance_outs(slack_t *s, snapshot_t *undo, uint64_t *keys, uint32_t *places,
                                 double *best, sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  double work = 0, per = (double)ir->n_steps + ir->n_swaps + ir->n_deps;
  uint32_t n = queue_keys(s, SFC_SWAP_OUT, keys);
  for (uint32_t j = 0; j < n && work + per <= REORDER_WORK; j++) {
    uint32_t i = (uint32_t)keys[j], waiter = (uint32_t)(keys[j] >> 32);
    const sfc_swap_t *w = &ir->swaps[i];
    uint32_t lo = earliest_out(ir, w), np = 0;
    if (lo == NONE)
      continue;
    places[np++] = lo;
    for (uint32_t q = 0; q < n && (uint32_t)(keys[q] >> 32) <= waiter; q++) {
      uint32_t r = ir->swaps[(uint32_t)keys[q]].issue_step;
      if (q != j && r > lo && r < w->issue_step)
        places[np++] = r;
    }
    bool moved;
    SFC_TRY(best_place(s, undo, i, places, np, per, &work, best, &moved, err));
    if (!moved)
      continue;
    ir->slack_advanced_out++;
    n = queue_keys(s, SFC_SWAP_OUT, keys);
  }
  return SFC_OK;
}

/* Places a swap-in is tried at, ahead of copies waited for before it: at most this many,
 * the nearest to its issue step. */
#define AHEAD_PLACES 4u

/* Swap-ins issued earlier, ahead of copies waited for before them (the file comment): in
 * reader order, each tried at the step before the issue step of each copy with an
 * earlier reader issued between its earliest step and its own (the AHEAD_PLACES nearest),
 * its block at the best-fit hole from there to its last step; kept where the plan
 * replays fastest, if faster. A contiguous arena only (a paged one would count pages). */
static sfc_status_t advance_ins(slack_t *s, snapshot_t *undo, uint64_t *keys, uint32_t *places,
                                double *best, sfc_error_t *err) {
  sfc_ir_t *ir = s->ir;
  if (sfc_ir_paged(ir))
    return SFC_OK;
  if (!index_blocks(s) || !sfc_swap_in_floor(ir, &s->in_floor))
    return oom(err);
  double work = 0, per = (double)ir->n_steps + ir->n_swaps + ir->n_deps;
  uint32_t n = queue_keys(s, SFC_SWAP_IN, keys);
  for (uint32_t j = 0; j < n && work + per <= REORDER_WORK; j++) {
    uint32_t i = (uint32_t)keys[j], waiter = (uint32_t)(keys[j] >> 32);
    sfc_swap_t *w = &ir->swaps[i];
    uint32_t x = w->device_block;
    sfc_block_t *b = &ir->blocks[x];
    if (b->first_step != w->issue_step || b->placed)
      continue; /* not the schedule pass's shape: leave it */
    uint32_t prev = neighbour(s, x, -1), lo = 0;
    if (prev != NONE)
      lo = ir->blocks[prev].last_step + 2; /* one absent step stays */
    if (s->in_floor && s->in_floor[waiter] > lo)
      lo = s->in_floor[waiter]; /* prefetch_limit, a fixed window */
    uint32_t np = 0;
    for (uint32_t q = 0; q < j; q++) {
      uint32_t r = ir->swaps[(uint32_t)keys[q]].issue_step;
      if ((uint32_t)(keys[q] >> 32) < waiter && r > lo && r <= w->issue_step)
        places[np++] = r - 1;
    }
    qsort(places, np, sizeof *places, cmp_u32);
    uint32_t from = np > AHEAD_PLACES ? np - AHEAD_PLACES : 0;
    uint32_t chosen = NONE;
    uint64_t chosen_off = 0;
    double chosen_s = *best;
    for (uint32_t p = from; p < np && work + per <= REORDER_WORK; p++) {
      if (p > from && places[p] == places[p - 1])
        continue; /* every place is before the issue step (r - 1, r <= it) */
      uint64_t off = hole(s, x, places[p]);
      if (off == UINT64_MAX)
        continue;
      if (!snapshot_take(ir))
        return oom(err);
      b->offset = off;
      raise_arena(s); /* the hole may lie in the budget's headroom */
      double time;
      sfc_status_t st = try_issue(s, i, places[p], &time, err);
      work += per;
      snapshot_swap(ir, undo); /* the plan as it was */
      if (st != SFC_OK)
        return st;
      if (time < chosen_s)
        chosen = places[p], chosen_off = off, chosen_s = time;
    }
    if (chosen == NONE)
      continue;
    b->offset = chosen_off;
    raise_arena(s);
    double time;
    SFC_TRY(try_issue(s, i, chosen, &time, err)); /* the trial again (not counted) */
    *best = time;
    resort(s, x);
    ir->slack_advanced_in++;
    n = queue_keys(s, SFC_SWAP_IN, keys);
  }
  return SFC_OK;
}

sfc_status_t sfc_slack_reorder(sfc_ir_t *ir, sfc_error_t *err) {
  ir->slack_delayed_in = ir->slack_delayed_out = ir->slack_advanced_out = 0;
  ir->slack_advanced_in = 0;
  ir->slack_reorder_s[0] = ir->slack_reorder_s[1] = 0;
  if (ir->n_swaps == 0 || ir->schedule_no_slack || ir->schedule_no_reorder || ir->pack_fast ||
      ir->config->scheduler.policy != SFC_SCHED_WINDOW)
    return SFC_OK;
  sfc_eval_t e;
  sfc_error_t ignored = {0};
  if (!ir->predicted && sfc_evaluate(ir, NULL, &e, &ignored) != SFC_OK)
    return SFC_OK; /* a plan the evaluator refuses stays as it is (verify says why) */
  double best = ir->predicted ? ir->predicted_iteration_s : e.predicted_iteration_s;
  ir->slack_reorder_s[0] = best;
  slack_t s = {.ir = ir};
  snapshot_t *undo = snapshot_take(ir); /* each trial's undo: the slack pass's own */
  uint64_t *keys = malloc(((size_t)ir->n_swaps + 1) * sizeof *keys);
  uint32_t *places = malloc(((size_t)ir->n_swaps + 1) * sizeof *places);
  s.waiter = malloc(((size_t)ir->n_swaps + 1) * sizeof *s.waiter);
  sfc_status_t st = SFC_OK;
  if (!undo || !keys || !places || !s.waiter)
    st = oom(err);
  double work = 0, per = (double)ir->n_steps + ir->n_swaps + ir->n_deps;
  bool again = st == SFC_OK;
  while (again && work + per <= REORDER_WORK) {
    again = false;
    for (int dir = 0; dir < 2 && st == SFC_OK; dir++) {
      uint8_t direction = dir == 0 ? SFC_SWAP_IN : SFC_SWAP_OUT;
      uint32_t n = queue_keys(&s, direction, keys);
      for (uint32_t j = 0; j < n && st == SFC_OK && work + per <= REORDER_WORK; j++) {
        uint32_t i = (uint32_t)keys[j], waiter = (uint32_t)(keys[j] >> 32);
        const sfc_swap_t *w = &ir->swaps[i];
        if (direction == SFC_SWAP_IN && ir->blocks[w->device_block].first_step != w->issue_step)
          continue; /* not the schedule pass's shape: leave it */
        /* the places behind each copy waited for earlier but issued later */
        uint32_t np = 0;
        for (uint32_t q = 0; q < j && (uint32_t)(keys[q] >> 32) < waiter; q++) {
          uint32_t r = ir->swaps[(uint32_t)keys[q]].issue_step;
          if (r > w->issue_step && r <= waiter)
            places[np++] = r;
        }
        if (np == 0)
          continue;
        bool moved;
        st = best_place(&s, undo, i, places, np, per, &work, &best, &moved, err);
        if (st != SFC_OK || !moved)
          continue;
        *(direction == SFC_SWAP_IN ? &ir->slack_delayed_in : &ir->slack_delayed_out) += 1;
        again = true;
        n = queue_keys(&s, direction, keys); /* the swaps' order changed */
      }
    }
  }
  if (st == SFC_OK && undo)
    st = advance_outs(&s, undo, keys, places, &best, err);
  if (st == SFC_OK && undo)
    st = advance_ins(&s, undo, keys, places, &best, err);
  ir->slack_reorder_s[1] = best;
  if (undo)
    undo->valid = false; /* nothing for sfc_slack_judge to undo */
  free(keys);
  free(places);
  slack_free(&s);
  return st;
}
