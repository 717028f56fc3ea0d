/* test_rt_random.c — seeded random swap plans, valid by construction, replayed on
 * `host` with integrity under random queue delays; then each with one essential wait
 * removed (a step no longer waits for its swap-in) must be caught.
 *
 * Generator (per seed, xorshift64*): n ops in a chain; op k reads t(k-1) and, half the
 * time, a random older tensor (a skip connection), and writes t(k) of 1..256 bytes.
 * Each tensor is resident from its producer to its last reader, except that a gap of
 * at least 3 steps between two consecutive uses is, half the time, spent on the host:
 * swap-out issued right after the earlier use (waiting for it), swap-in issued at a
 * random step before the later use (waiting for the swap-out), and the later use waits
 * for the swap-in. Residencies get 256-byte slots first-fit by start step, so slots are
 * reused by other tensors; whoever writes a reused slot first (a step or a swap-in)
 * waits for the previous occupant's swap-out, and a swap-in also for the previous
 * occupant's last step. Every plan goes through the reader's validator before replay.
 */
#include "rt_test_util.h"

#define MAX_N     48
#define MAX_RES   (4 * MAX_N)
#define SLOT      256
#define MAX_SLOTS MAX_RES

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

typedef struct res {
  uint32_t tensor, first, last; /* steps */
  int swapped_in;               /* filled by a swap-in issued before `first` */
  uint32_t out_after;           /* swapped out after `last` (its swap-out issue step), or 0 */
  uint32_t slot, block, swap_in, swap_out;
  int prev;              /* previous occupant residency of the slot, -1 none */
  uint32_t first_reader; /* the first step that uses this residency */
} res_t;

typedef struct gen {
  uint32_t n;
  uint32_t reads[MAX_N][2], read_count[MAX_N];
  res_t res[MAX_RES];
  uint32_t res_count;
  uint32_t victim_step; /* the first step whose swap-in wait is essential, or NONE */
} gen_t;

/* Builds the plan into b; when `broken`, leaves out the victim step's swap-in wait. */
static void random_plan(pb_t *b, gen_t *g, uint64_t seed, int broken) {
  rng_state = seed * 0x9E3779B97F4A7C15u + 1;
  memset(g, 0, sizeof *g);
  g->n = 8 + below(MAX_N - 8);
  uint32_t n = g->n;
  uint32_t x = pb_tensor(b, "x", 64, SFC_KIND_INPUT);
  uint32_t t[MAX_N];
  char name[32];
  for (uint32_t k = 0; k < n; k++) {
    snprintf(name, sizeof name, "t%u", k);
    t[k] = pb_tensor(b, name, 1 + below(SLOT), k == n - 1 ? SFC_KIND_OUTPUT : SFC_KIND_ACTIVATION);
    g->read_count[k] = 0;
    if (k > 0)
      g->reads[k][g->read_count[k]++] = k - 1;
    if (k > 2 && below(2))
      g->reads[k][g->read_count[k]++] = below(k - 1);
  }
  /* uses of tensor j: its producer step j, then the steps that read it */
  for (uint32_t j = 0; j < n; j++) {
    uint32_t uses[MAX_N], u = 0;
    uses[u++] = j;
    for (uint32_t k = j + 1; k < n; k++)
      for (uint32_t i = 0; i < g->read_count[k]; i++)
        if (g->reads[k][i] == j && uses[u - 1] != k)
          uses[u++] = k;
    res_t *r = &g->res[g->res_count++];
    *r = (res_t){.tensor = j, .first = j, .last = j, .prev = -1, .first_reader = j};
    for (uint32_t i = 1; i < u; i++) {
      if (uses[i] - uses[i - 1] >= 3 && below(2)) {
        r->out_after = uses[i - 1] + 1;
        uint32_t in = uses[i - 1] + 2 + below(uses[i] - uses[i - 1] - 1);
        r = &g->res[g->res_count++];
        *r = (res_t){.tensor = j,
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
  uint32_t order[MAX_RES];
  for (uint32_t i = 0; i < g->res_count; i++)
    order[i] = i;
  for (uint32_t i = 1; i < g->res_count; i++)
    for (uint32_t k = i; k > 0 && g->res[order[k - 1]].first > g->res[order[k]].first; k--) {
      uint32_t tmp = order[k];
      order[k] = order[k - 1];
      order[k - 1] = tmp;
    }
  int slot_last[MAX_SLOTS];
  uint32_t slots = 0;
  for (uint32_t i = 0; i < g->res_count; i++) {
    res_t *r = &g->res[order[i]];
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
    res_t *r = &g->res[i];
    r->block = pb_block(b, t[r->tensor], 64 + (uint64_t)r->slot * SLOT, SLOT, r->first, r->last,
                        r->swapped_in ? SFC_BLOCK_SWAPPED_IN : 0);
  }
  /* steps: operands are (inputs..., output); each reads the residency live at k */
  uint32_t steps[MAX_N];
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
      res_t *r = &g->res[i];
      if (r->out_after != step)
        continue;
      uint32_t hb = pb_host_block(b, t[r->tensor], (uint64_t)host++ * SLOT, SLOT, step, n - 1);
      r->swap_out = pb_swap(b, SFC_SWAP_OUT, r->block, hb, step);
      pb_dep(b, SFC_NODE_SWAP, r->swap_out, SFC_NODE_STEP, steps[r->last]);
      /* its swap-in is the next residency of the tensor */
      res_t *next = r + 1;
      next->swap_out = hb; /* remember the host block for the swap-in */
    }
    for (uint32_t i = 0; i < g->res_count; i++) {
      res_t *r = &g->res[i];
      if (!r->swapped_in || r->first != step)
        continue;
      r->swap_in = pb_swap(b, SFC_SWAP_IN, r->block, r->swap_out, step);
      pb_dep(b, SFC_NODE_SWAP, r->swap_in, SFC_NODE_SWAP, (r - 1)->swap_out);
      if (r->prev >= 0) {
        res_t *p = &g->res[r->prev];
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
      res_t *r = &g->res[candidate];
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
      res_t *r = &g->res[i];
      if (r->swapped_in && r->first_reader == k && !(remove && i == candidate))
        pb_dep(b, SFC_NODE_STEP, steps[k], SFC_NODE_SWAP, r->swap_in);
      if (!r->swapped_in && r->first == k && r->prev >= 0 && g->res[r->prev].out_after)
        pb_dep(b, SFC_NODE_STEP, steps[k], SFC_NODE_SWAP, g->res[r->prev].swap_out);
    }
  }
  pb_fit_arenas(b);
}

static void test_random_valid(void) {
  uint32_t swaps = 0, reused = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    pb_t *b = pb_new();
    gen_t g;
    random_plan(b, &g, seed, 0);
    sfcrt_plan_t *plan = rt_load(b);
    if (!plan) {
      fprintf(stderr, "  seed %llu: invalid plan\n", (unsigned long long)seed);
      pb_free(b);
      continue;
    }
    const sfc_plan_view_t *v = sfcrt_plan_view(plan);
    swaps += v->swap_count;
    for (uint32_t i = 0; i < g.res_count; i++)
      reused += g.res[i].prev >= 0 && g.res[g.res[i].prev].tensor != g.res[i].tensor;
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    for (int q = 0; q < 3; q++)
      opt.host.delay_us[q] = (uint32_t)(rnd() % 3) * 100;
    sfc_error_t err;
    sfc_status_t st = rt_replay(v, &opt, 2, NULL, &err);
    CHECK_OK(st, err);
    if (st != SFC_OK)
      fprintf(stderr, "  seed %llu\n", (unsigned long long)seed);
    sfcrt_plan_destroy(plan);
    pb_free(b);
  }
  fprintf(stderr, "  40 plans, %u swaps, %u slots reused by another tensor\n", swaps, reused);
  CHECK(swaps > 40);
  CHECK(reused > 40);
}

static void test_random_missing_wait(void) {
  uint32_t tried = 0;
  for (uint64_t seed = 1; seed <= 40 && tried < 10; seed++) {
    pb_t *b = pb_new();
    gen_t g;
    random_plan(b, &g, seed, 1);
    if (g.victim_step == SFC_PLAN_NONE) {
      pb_free(b);
      continue;
    }
    tried++;
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    opt.host.delay_us[SFCRT_QUEUE_H2D] = 20000;
    sfc_error_t err;
    CHECK_EQ_I64(rt_replay(pb_view(b), &opt, 1, NULL, &err), SFC_ERR_INTEGRITY);
    char want[64];
    snprintf(want, sizeof want, "step %u (op 'op%u')", g.victim_step, g.victim_step);
    CHECK_CONTAINS(err.message, want);
    pb_free(b);
  }
  fprintf(stderr, "  %u plans with one missing wait, each caught at its step\n", tried);
  CHECK(tried >= 5);
}

int main(void) {
  RUN(test_random_valid);
  RUN(test_random_missing_wait);
  return check_summary();
}
