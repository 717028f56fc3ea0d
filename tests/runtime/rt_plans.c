/* rt_plans.c — the swap plan of rt_plans.h and its broken variants, and the seeded
 * random swap plans (rt_random_plan). */
#include <stdio.h>
#include <string.h>

#include "rt_plans.h"

void rt_swap_plan(pb_t *b, int variant) {
  const uint64_t T = 256;
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t bt = pb_tensor(b, "b", T, SFC_KIND_ACTIVATION);
  uint32_t a = pb_tensor(b, "a", T, SFC_KIND_ACTIVATION);
  uint32_t c = pb_tensor(b, "c", T, SFC_KIND_ACTIVATION);
  uint32_t d = pb_tensor(b, "d", T, SFC_KIND_OUTPUT);
  uint32_t op0 = pb_op(b, "make_b", PB_LIST(x), PB_LIST(bt));
  uint32_t op1 = pb_op(b, "make_a", PB_LIST(x), PB_LIST(a));
  uint32_t op2 = pb_op(b, "use_a", PB_LIST(a), PB_LIST(c));
  uint32_t op3 = pb_op(b, "join", PB_LIST(c, bt), PB_LIST(d));
  uint32_t X = pb_block(b, x, 0, T, 0, 3, SFC_BLOCK_PERSISTENT);
  uint32_t B1 = pb_block(b, bt, 256, T, 0, 0, 0);
  uint32_t A = pb_block(b, a, 256, T, 1, 2, 0);
  uint32_t C = pb_block(b, c, variant == RT_OVERLAP_C_ON_X ? 0 : 512, T, 2, 3, 0);
  uint32_t B2 = pb_block(b, bt, 256, T, 3, 3, SFC_BLOCK_SWAPPED_IN);
  uint32_t D = pb_block(b, d, 768, T, 3, 3, 0);
  uint32_t HB = pb_host_block(b, bt, 0, T, 1, 3);
  uint32_t s0 = pb_step(b, op0, PB_LIST(X, B1));
  uint32_t s1 = pb_step(b, op1, PB_LIST(X, A));
  uint32_t s2 = pb_step(b, op2, PB_LIST(A, C));
  uint32_t s3 = pb_step(b, op3, PB_LIST(C, B2, D));
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, B1, HB, 1);
  uint32_t in = pb_swap(b, SFC_SWAP_IN, B2, HB, 3);
  if (variant == RT_LOST_SWAP_OUT)
    pb_swap_at(b, out)->bytes = 0;
  if (variant != RT_NO_WAIT_OUT_ON_STEP0)
    pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  if (variant != RT_NO_WAIT_STEP1_ON_OUT)
    pb_dep(b, SFC_NODE_STEP, s1, SFC_NODE_SWAP, out);
  if (variant != RT_NO_WAIT_IN_ON_OUT)
    pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_SWAP, out);
  if (variant != RT_NO_WAIT_IN_ON_STEP2)
    pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_STEP, s2);
  if (variant != RT_NO_WAIT_STEP3_ON_IN)
    pb_dep(b, SFC_NODE_STEP, s3, SFC_NODE_SWAP, in);
  pb_fit_arenas(b);
}

void rt_external_plan(pb_t *b) {
  pb_simple_chain(b, 3);
  pb_tensor_at(b, 0)->flags |= SFC_TENSOR_EXTERNAL;
  sfc_plan_block_t *x = pb_block_at(b, 0);
  x->flags = SFC_BLOCK_EXTERNAL | SFC_BLOCK_PERSISTENT;
  x->offset = 0;
  x->bytes = 0;
}

/* ---- seeded random swap plans ---------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}
static uint32_t below(uint32_t n) {
  return (uint32_t)(rnd() % n);
}

void rt_random_plan(pb_t *b, rt_gen_t *g, uint64_t seed, int broken) {
  rng_state = seed * 0x9E3779B97F4A7C15u + 1;
  memset(g, 0, sizeof *g);
  g->n = 8 + below(RT_MAX_N - 8);
  uint32_t n = g->n;
  uint32_t x = pb_tensor(b, "x", 64, SFC_KIND_INPUT);
  uint32_t t[RT_MAX_N];
  char name[32];
  for (uint32_t k = 0; k < n; k++) {
    snprintf(name, sizeof name, "t%u", k);
    t[k] =
        pb_tensor(b, name, 1 + below(RT_SLOT), k == n - 1 ? SFC_KIND_OUTPUT : SFC_KIND_ACTIVATION);
    g->read_count[k] = 0;
    if (k > 0)
      g->reads[k][g->read_count[k]++] = k - 1;
    if (k > 2 && below(2))
      g->reads[k][g->read_count[k]++] = below(k - 1);
  }
  /* uses of tensor j: its producer step j, then the steps that read it */
  for (uint32_t j = 0; j < n; j++) {
    uint32_t uses[RT_MAX_N], u = 0;
    uses[u++] = j;
    for (uint32_t k = j + 1; k < n; k++)
      for (uint32_t i = 0; i < g->read_count[k]; i++)
        if (g->reads[k][i] == j && uses[u - 1] != k)
          uses[u++] = k;
    rt_res_t *r = &g->res[g->res_count++];
    *r = (rt_res_t){.tensor = j, .first = j, .last = j, .prev = -1, .first_reader = j};
    for (uint32_t i = 1; i < u; i++) {
      if (uses[i] - uses[i - 1] >= 3 && below(2)) {
        r->out_after = uses[i - 1] + 1;
        uint32_t in = uses[i - 1] + 2 + below(uses[i] - uses[i - 1] - 1);
        r = &g->res[g->res_count++];
        *r = (rt_res_t){.tensor = j,
                        .first = in,
                        .last = uses[i],
                        .swapped_in = 1,
                        .prev = -1,
                        .first_reader = uses[i]};
      } else {
        r->last = uses[i];
      }
    }
  }
  /* slots, first fit by start (residencies are in producer order; sort by first) */
  uint32_t order[RT_MAX_RES];
  for (uint32_t i = 0; i < g->res_count; i++)
    order[i] = i;
  for (uint32_t i = 1; i < g->res_count; i++)
    for (uint32_t k = i; k > 0 && g->res[order[k - 1]].first > g->res[order[k]].first; k--) {
      uint32_t tmp = order[k];
      order[k] = order[k - 1];
      order[k - 1] = tmp;
    }
  int slot_last[RT_MAX_RES];
  uint32_t slots = 0;
  for (uint32_t i = 0; i < g->res_count; i++) {
    rt_res_t *r = &g->res[order[i]];
    uint32_t s = 0;
    while (s < slots && g->res[slot_last[s]].last >= r->first)
      s++;
    if (s == slots)
      slot_last[slots++] = -1;
    else
      r->prev = slot_last[s];
    r->slot = s;
    slot_last[s] = (int)order[i];
  }
  uint32_t X = pb_block(b, x, 0, 64, 0, n - 1, SFC_BLOCK_PERSISTENT);
  for (uint32_t i = 0; i < g->res_count; i++) {
    rt_res_t *r = &g->res[i];
    r->block = pb_block(b, t[r->tensor], 64 + (uint64_t)r->slot * RT_SLOT, RT_SLOT, r->first,
                        r->last, r->swapped_in ? SFC_BLOCK_SWAPPED_IN : 0);
  }
  /* steps: operands are (inputs..., output); each reads the residency live at k */
  uint32_t steps[RT_MAX_N];
  for (uint32_t k = 0; k < n; k++) {
    uint32_t in[3], blocks[3], nin = 0;
    if (k == 0)
      in[nin++] = x;
    for (uint32_t i = 0; i < g->read_count[k]; i++)
      in[nin++] = t[g->reads[k][i]];
    snprintf(name, sizeof name, "op%u", k);
    uint32_t op = pb_op(b, name, in, nin, &t[k], 1);
    for (uint32_t i = 0; i < nin; i++) {
      blocks[i] = X;
      for (uint32_t q = 0; q < g->res_count; q++)
        if (t[g->res[q].tensor] == in[i] && g->res[q].first <= k && k <= g->res[q].last)
          blocks[i] = g->res[q].block;
    }
    blocks[nin] = 0;
    for (uint32_t q = 0; q < g->res_count; q++)
      if (g->res[q].tensor == k && g->res[q].first == k)
        blocks[nin] = g->res[q].block;
    steps[k] = pb_step(b, op, blocks, nin + 1);
  }
  /* swaps sorted by issue step, swap-outs before swap-ins at the same step */
  uint32_t host = 0;
  for (uint32_t step = 1; step <= n; step++) {
    for (uint32_t i = 0; i < g->res_count; i++) {
      rt_res_t *r = &g->res[i];
      if (r->out_after != step)
        continue;
      uint32_t hb =
          pb_host_block(b, t[r->tensor], (uint64_t)host++ * RT_SLOT, RT_SLOT, step, n - 1);
      r->swap_out = pb_swap(b, SFC_SWAP_OUT, r->block, hb, step);
      pb_dep(b, SFC_NODE_SWAP, r->swap_out, SFC_NODE_STEP, steps[r->last]);
      /* its swap-in is the next residency of the tensor */
      rt_res_t *next = r + 1;
      next->swap_out = hb; /* remember the host block for the swap-in */
    }
    for (uint32_t i = 0; i < g->res_count; i++) {
      rt_res_t *r = &g->res[i];
      if (!r->swapped_in || r->first != step)
        continue;
      r->swap_in = pb_swap(b, SFC_SWAP_IN, r->block, r->swap_out, step);
      pb_dep(b, SFC_NODE_SWAP, r->swap_in, SFC_NODE_SWAP, (r - 1)->swap_out);
      if (r->prev >= 0) {
        rt_res_t *p = &g->res[r->prev];
        pb_dep(b, SFC_NODE_SWAP, r->swap_in, SFC_NODE_STEP, steps[p->last]);
        if (p->out_after)
          pb_dep(b, SFC_NODE_SWAP, r->swap_in, SFC_NODE_SWAP, p->swap_out);
      }
    }
  }
  /* steps: wait for the swap-ins of their inputs, and a producer for the previous
   * occupant's swap-out of its output slot */
  g->victim_step = SFC_PLAN_NONE;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t waits = 0, candidate = SFC_PLAN_NONE;
    for (uint32_t i = 0; i < g->res_count; i++)
      if (g->res[i].swapped_in && g->res[i].first_reader == k) {
        waits++;
        candidate = i;
      }
    /* Leaving out this wait is a sure race only when nothing else orders the swap-in
     * before step k: no earlier step waits for a swap-in issued at or after it (the
     * H2D queue is in order), and the slot held another tensor (or nothing) before. */
    if (waits == 1) {
      rt_res_t *r = &g->res[candidate];
      if (r->prev >= 0 && g->res[r->prev].tensor == r->tensor)
        candidate = SFC_PLAN_NONE;
      for (uint32_t i = 0; i < g->res_count && candidate != SFC_PLAN_NONE; i++)
        if (g->res[i].swapped_in && g->res[i].first_reader < k && g->res[i].first >= r->first)
          candidate = SFC_PLAN_NONE;
    } else {
      candidate = SFC_PLAN_NONE;
    }
    int remove = broken && candidate != SFC_PLAN_NONE && g->victim_step == SFC_PLAN_NONE;
    if (candidate != SFC_PLAN_NONE && g->victim_step == SFC_PLAN_NONE)
      g->victim_step = k;
    for (uint32_t i = 0; i < g->res_count; i++) {
      rt_res_t *r = &g->res[i];
      if (r->swapped_in && r->first_reader == k && !(remove && i == candidate))
        pb_dep(b, SFC_NODE_STEP, steps[k], SFC_NODE_SWAP, r->swap_in);
      if (!r->swapped_in && r->first == k && r->prev >= 0 && g->res[r->prev].out_after)
        pb_dep(b, SFC_NODE_STEP, steps[k], SFC_NODE_SWAP, g->res[r->prev].swap_out);
    }
  }
  pb_fit_arenas(b);
}
