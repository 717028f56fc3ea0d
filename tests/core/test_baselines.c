/* test_baselines.c — the baseline policies of the schedule pass (pass_schedule.c):
 * vdnn and lms on a forward/backward graph worked out by hand (which tensors leave,
 * every copy's issue step and the steps that wait); the LMS tuner's choice checked
 * against compiles with fixed parameters (its n is the largest that fits, its l the
 * largest doubling that still fits); seeded random graphs under both policies, every
 * plan verified and replayed on sim. */
#include "check.h"
#include "graph_build.h"
#include "pipeline.h"
#include "random_graph.h"
#include "test_rand.h"
#include "verify.h"

static sfc_config_t make_config(uint64_t budget, sfc_sched_policy_t policy) {
  sfc_config_t c;
  sfc_config_defaults(&c);
  strcpy(c.device.name, "test");
  c.device.alignment = 1;
  c.budget_bytes = budget;
  c.device.copy_latency_s = 0;
  c.device.h2d_bytes_per_s = c.device.d2h_bytes_per_s = 1e7; /* 100 B per 10 us */
  strcpy(c.packer.algorithm, "best-fit");
  c.scheduler.policy = policy;
  return c;
}

/* Compiles g; fixed_n and fixed_l > 0 skip the LMS tuner. */
static sfc_status_t compile(sfc_ir_t *ir, sfc_graph_t *g, const sfc_config_t *cfg, uint32_t fixed_n,
                            uint32_t fixed_l, sfc_error_t *err) {
  sfc_ir_init(ir, g, cfg);
  ir->lms_fixed_threshold = fixed_n;
  ir->lms_fixed_ahead = fixed_l;
  return sfc_compile_ir(ir, NULL, err);
}

/* The plan's swap of tensor t in direction d (the only one), or NULL. */
static const sfc_plan_swap_t *find_swap(const sfc_ir_t *ir, uint32_t t, uint32_t d) {
  const sfc_plan_swap_t *found = NULL;
  for (uint32_t i = 0; i < ir->plan.swap_count; i++)
    if (ir->plan.swaps[i].tensor == t && ir->plan.swaps[i].direction == d) {
      CHECK(found == NULL);
      found = &ir->plan.swaps[i];
    }
  return found;
}

/* Whether step k waits for the swap sw. */
static bool step_waits(const sfc_ir_t *ir, uint32_t k, const sfc_plan_swap_t *sw) {
  const sfc_plan_step_t *st = &ir->plan.steps[k];
  for (uint32_t j = 0; j < st->dep_count; j++) {
    sfc_plan_dep_t d = ir->plan.deps[st->dep_begin + j];
    if (d.node_kind == SFC_NODE_SWAP && &ir->plan.swaps[d.index] == sw)
      return true;
  }
  return false;
}

/* Checks tensor t leaves before step w (step w waits for the copy) and comes back
 * before step r (issued then; step `use` waits for it). */
static void check_round_trip(const sfc_ir_t *ir, uint32_t t, uint32_t w, uint32_t r, uint32_t use) {
  const sfc_plan_swap_t *out = find_swap(ir, t, SFC_SWAP_OUT);
  const sfc_plan_swap_t *in = find_swap(ir, t, SFC_SWAP_IN);
  CHECK(out && in);
  if (!out || !in)
    return;
  CHECK_EQ_U64(ir->plan.blocks[out->device_block].last_step, w - 1);
  CHECK(step_waits(ir, w, out));
  CHECK_EQ_U64(in->issue_step, r);
  CHECK_EQ_U64(ir->plan.blocks[in->device_block].first_step, r);
  CHECK(step_waits(ir, use, in));
}

/* Forward A, B, C, loss L; backward reads C, B and A again. Every op takes 0 us.
 *   step  0 A   1 A B   2 A B C   3 A B C L   4 A B C L gC   5 A B gC gB   6 A gB gA
 *   live  1000  2000    2100      2110        2120           2020          1020
 * (A, B 1000 B; C 100; L, gC, gB, gA 10.) Gaps of two steps or more that a read ends:
 * A (1, 6), B (2, 5); C's are one step each. */
enum { A, B, C, L, GC, GB, GA };
static sfc_graph_t *fb_graph(void) {
  sfc_graph_t *g = tg_new("fb");
  tg_tensor(g, "A", 1000, SFC_KIND_ACTIVATION);
  tg_tensor(g, "B", 1000, SFC_KIND_ACTIVATION);
  tg_tensor(g, "C", 100, SFC_KIND_ACTIVATION);
  tg_tensor(g, "L", 10, SFC_KIND_ACTIVATION);
  tg_tensor(g, "gC", 10, SFC_KIND_GRAD);
  tg_tensor(g, "gB", 10, SFC_KIND_GRAD);
  tg_tensor(g, "gA", 10, SFC_KIND_GRAD);
  tg_op(g, "op0", SFC_PHASE_FORWARD, 0, NULL, 1, (uint32_t[]){A});
  tg_op(g, "op1", SFC_PHASE_FORWARD, 1, (uint32_t[]){A}, 1, (uint32_t[]){B});
  tg_op(g, "op2", SFC_PHASE_FORWARD, 1, (uint32_t[]){B}, 1, (uint32_t[]){C});
  tg_op(g, "op3", SFC_PHASE_LOSS, 1, (uint32_t[]){C}, 1, (uint32_t[]){L});
  tg_op(g, "op4", SFC_PHASE_BACKWARD, 2, (uint32_t[]){L, C}, 1, (uint32_t[]){GC});
  tg_op(g, "op5", SFC_PHASE_BACKWARD, 2, (uint32_t[]){GC, B}, 1, (uint32_t[]){GB});
  tg_op(g, "op6", SFC_PHASE_BACKWARD, 2, (uint32_t[]){GB, A}, 1, (uint32_t[]){GA});
  g->device = "test";
  for (uint32_t o = 0; o < g->n_ops; o++)
    g->ops[o].time_us = 0;
  return g;
}

/* vdnn: A and B (forward outputs read again by backward ops) leave after their last
 * forward use, the next step waiting for each copy, and come back one step ahead of
 * their backward use: A leaves before 2 and is issued before 5 (for step 6), B leaves
 * before 3 and is issued before 4 (for step 5). Live after: 1000, 2000, 1100, 110,
 * 1120, 2020, 1020. The budget plays no part (the same swaps at 2115); a plan whose
 * in-core blocks fit swaps nothing. */
static void test_vdnn(void) {
  sfc_graph_t *g = fb_graph();
  sfc_config_t cfg = make_config(2050, SFC_SCHED_VDNN);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
  CHECK_EQ_U64(ir.n_swaps, 4);
  CHECK_EQ_U64(ir.swapped_tensors, 2);
  check_round_trip(&ir, A, 2, 5, 6);
  check_round_trip(&ir, B, 3, 4, 5);
  CHECK_EQ_U64(ir.lower_bound, 2020);
  CHECK(ir.fits_budget);
  CHECK_OK(sfc_verify_plan(&ir.plan, true, NULL, &err), err);
  sfc_ir_deinit(&ir);
  /* the same swaps at a budget nearer the in-core peak: vdnn ignores it */
  cfg.budget_bytes = 2115;
  CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
  CHECK_EQ_U64(ir.n_swaps, 4);
  sfc_ir_deinit(&ir);
  /* and none when the in-core plan fits */
  cfg.budget_bytes = 2120;
  CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
  CHECK_EQ_U64(ir.n_swaps, 0);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* lms with fixed n and l: a gap longer than n leaves right after its use (no op time
 * hides a copy, so the time-aware swap-out is waited for at once) and comes back l
 * steps ahead of its next use, never before the step after it left. */
static void test_lms_fixed(void) {
  sfc_graph_t *g = fb_graph();
  sfc_config_t cfg = make_config(2050, SFC_SCHED_LMS);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, 2, 1, &err), err); /* A (5 > 2) and B (3 > 2) */
  CHECK_EQ_U64(ir.n_swaps, 4);
  check_round_trip(&ir, A, 2, 5, 6);
  check_round_trip(&ir, B, 3, 4, 5);
  CHECK_EQ_U64(ir.lms_threshold, 2);
  CHECK_EQ_U64(ir.lms_ahead, 1);
  sfc_ir_deinit(&ir);
  CHECK_OK(compile(&ir, g, &cfg, 3, 2, &err), err); /* A only, back two steps ahead */
  CHECK_EQ_U64(ir.n_swaps, 2);
  check_round_trip(&ir, A, 2, 4, 6);
  CHECK_EQ_U64(ir.lower_bound, 2120); /* step 4: A is back beside B, C, L, gC */
  CHECK(!ir.fits_budget);
  CHECK_OK(sfc_verify_plan(&ir.plan, false, NULL, &err), err);
  sfc_ir_deinit(&ir);
  CHECK_OK(compile(&ir, g, &cfg, 5, 1, &err), err); /* no gap is longer than 5 */
  CHECK_EQ_U64(ir.n_swaps, 0);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* The tuner at 2100 B: steps 3 and 4 (2110, 2120) are over. n = 4 (A only, l = 1:
 * absent 2..4) fits, n = 5 swaps nothing; with n = 4, l = 2 brings A back before step
 * 4 (2120 again): l stays 1. At 1500 B nothing fits (step 1 holds A and B for its own
 * use): the tuner falls back to n = 1, l = 1 and the plan does not fit. */
static void test_lms_tuner_by_hand(void) {
  sfc_graph_t *g = fb_graph();
  sfc_config_t cfg = make_config(2100, SFC_SCHED_LMS);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
  CHECK_EQ_U64(ir.lms_threshold, 4);
  CHECK_EQ_U64(ir.lms_ahead, 1);
  CHECK_EQ_U64(ir.n_swaps, 2);
  check_round_trip(&ir, A, 2, 5, 6);
  CHECK(ir.fits_budget);
  sfc_ir_deinit(&ir);
  cfg.budget_bytes = 1500;
  CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
  CHECK_EQ_U64(ir.lms_threshold, 1);
  CHECK_EQ_U64(ir.lms_ahead, 1);
  CHECK(!ir.fits_budget);
  CHECK_OK(sfc_verify_plan(&ir.plan, false, NULL, &err), err);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

static uint64_t rng = 0x5DEECE66Dull;
static uint32_t rnd(uint32_t n) {
  return (uint32_t)(test_rand_next(&rng) % n);
}

/* The device live peak of g's plan under lms with fixed n and l (the schedule does not
 * depend on the budget then). */
static uint64_t lms_peak(sfc_graph_t *g, const sfc_config_t *cfg, uint32_t n, uint32_t l) {
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, cfg, n, l, &err), err);
  uint64_t peak = ir.lower_bound;
  sfc_ir_deinit(&ir);
  return peak;
}

/* Random graphs at random budgets under vdnn and lms: every plan verifies (with its
 * budget when it fits) and replays on sim; the tuner's n is the largest whose plan's
 * live peak fits the target it tuned for (n + 1 does not) and its l the largest
 * doubling that fits with n (2l does not), both checked by compiles with fixed n, l. */
static void test_random(void) {
  uint32_t plans = 0, swaps = 0, fit = 0, tuned = 0;
  for (int round = 0; round < 40; round++) {
    sfc_graph_t *g = rg_training_graph(&rng, 2 + (int)rnd(50), "test");
    sfc_config_t cfg = make_config(UINT64_C(1) << 40, SFC_SCHED_NONE);
    cfg.device.alignment = round % 2 ? 256 : 1;
    cfg.device.h2d_bytes_per_s = cfg.device.d2h_bytes_per_s = 1e8 * (1 + rnd(100));
    sfc_ir_t ir;
    sfc_error_t err = {0};
    CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
    uint64_t in_core = ir.lower_bound;
    sfc_ir_deinit(&ir);
    cfg.budget_bytes = in_core / 3 + (uint64_t)rnd(1000) * (in_core - in_core / 3) / 1000;
    for (int p = 0; p < 2; p++) {
      cfg.scheduler.policy = p ? SFC_SCHED_LMS : SFC_SCHED_VDNN;
      CHECK_OK(compile(&ir, g, &cfg, 0, 0, &err), err);
      CHECK(ir.fits_budget == (ir.arena_bytes <= cfg.budget_bytes));
      CHECK_OK(sfc_verify_plan(&ir.plan, ir.fits_budget, NULL, &err), err);
      CHECK(ir.predicted);
      CHECK(ir.predicted_iteration_s >= ir.compute_s * (1 - 1e-9));
      plans++;
      swaps += ir.n_swaps;
      fit += ir.fits_budget;
      uint64_t target = ir.schedule_budget ? ir.schedule_budget : cfg.budget_bytes;
      uint32_t n = ir.lms_threshold, l = ir.lms_ahead;
      bool swapped = ir.lower_bound < in_core || ir.n_swaps > 0;
      bool fits_target = ir.lower_bound <= target;
      sfc_ir_deinit(&ir);
      if (p == 0 || !swapped || !fits_target)
        continue;
      tuned++;
      CHECK(lms_peak(g, &cfg, n, l) <= target);
      if (n + 1 < g->n_ops)
        CHECK(lms_peak(g, &cfg, n + 1, 1) > target);
      if (2 * l < g->n_ops)
        CHECK(lms_peak(g, &cfg, n, 2 * l) > target);
    }
    sfc_graph_destroy(g);
  }
  fprintf(stderr, "  %u plans, %u swaps, %u fit, %u lms tunings checked\n", plans, swaps, fit,
          tuned);
  CHECK(swaps > 100);
  CHECK(fit > 0 && tuned > 5);
}

int main(void) {
  RUN(test_vdnn);
  RUN(test_lms_fixed);
  RUN(test_lms_tuner_by_hand);
  RUN(test_random);
  return check_summary();
}
