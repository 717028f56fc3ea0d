/* test_pipeline.c — liveness, blocks, packing and the plan view on graphs built in
 * code, with expected numbers worked out by hand; seeded random graphs through the
 * whole pipeline, each plan checked by the verifier. */
#include "check.h"
#include "test_rand.h"
#include "graph_build.h"
#include "evaluate.h"
#include "pipeline.h"
#include "verify.h"

static sfc_config_t make_config(uint64_t alignment, uint64_t budget) {
  sfc_config_t c;
  sfc_config_defaults(&c); /* scheduler and tiling at their defaults */
  strcpy(c.device.name, "test");
  c.device.alignment = alignment;
  c.budget_bytes = budget;
  strcpy(c.packer.algorithm, "auto");
  return c;
}

static sfc_status_t compile(sfc_ir_t *ir, sfc_graph_t *g, const sfc_config_t *cfg,
                            sfc_error_t *err) {
  sfc_ir_init(ir, g, cfg);
  return sfc_compile_ir(ir, NULL, err);
}

/* A [0,1], B [1,2], C [2,3]: the leading-gap case through the whole compiler. */
static void test_leading_gap_graph(void) {
  sfc_graph_t *g = tg_new("leading-gap");
  uint32_t A = tg_tensor(g, "A", 100, SFC_KIND_ACTIVATION);
  uint32_t B = tg_tensor(g, "B", 80, SFC_KIND_ACTIVATION);
  uint32_t C = tg_tensor(g, "C", 60, SFC_KIND_ACTIVATION);
  tg_op(g, "op0", SFC_PHASE_FORWARD, 0, NULL, 1, &A);
  tg_op(g, "op1", SFC_PHASE_FORWARD, 1, &A, 1, &B);
  tg_op(g, "op2", SFC_PHASE_FORWARD, 1, &B, 1, &C);
  tg_op(g, "op3", SFC_PHASE_FORWARD, 1, &C, 0, NULL);
  sfc_config_t cfg = make_config(1, 1000);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK_EQ_U64(ir.live[A].first_step, 0);
  CHECK_EQ_U64(ir.live[A].last_step, 1);
  CHECK_EQ_U64(ir.live[C].first_step, 2);
  CHECK_EQ_U64(ir.live[C].last_step, 3);
  CHECK_EQ_U64(ir.live_bytes[0], 100);
  CHECK_EQ_U64(ir.live_bytes[1], 180);
  CHECK_EQ_U64(ir.live_bytes[2], 140);
  CHECK_EQ_U64(ir.live_bytes[3], 60);
  CHECK_EQ_U64(ir.in_core_peak, 180);
  CHECK_EQ_U64(ir.lower_bound, 180);
  CHECK_EQ_U64(ir.arena_bytes, 180);
  CHECK(ir.fits_budget);
  CHECK_EQ_U64(ir.plan.block_count, 3);
  CHECK_EQ_U64(ir.plan.step_count, 4);
  CHECK_EQ_U64(ir.plan.header.arena_bytes, 180);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* Step times and the in-memory evaluator: ops timed 10, 20, 30 us and one untimed.
 * Every timed step carries its time (TIMED in the plan), the untimed one does not;
 * the sim replay of the IR (no swaps) predicts the sum, 60 us, with no stall and no
 * traffic, and the peak is the packed arena's live bytes (180). */
static void test_step_times_and_evaluate(void) {
  sfc_graph_t *g = tg_new("timed");
  uint32_t A = tg_tensor(g, "A", 100, SFC_KIND_ACTIVATION);
  uint32_t B = tg_tensor(g, "B", 80, SFC_KIND_ACTIVATION);
  uint32_t C = tg_tensor(g, "C", 60, SFC_KIND_ACTIVATION);
  tg_op(g, "op0", SFC_PHASE_FORWARD, 0, NULL, 1, &A);
  tg_op(g, "op1", SFC_PHASE_FORWARD, 1, &A, 1, &B);
  tg_op(g, "op2", SFC_PHASE_FORWARD, 1, &B, 1, &C);
  tg_op(g, "op3", SFC_PHASE_FORWARD, 1, &C, 0, NULL);
  g->ops[0].time_us = 10;
  g->ops[1].time_us = 20;
  g->ops[2].time_us = 30; /* op3 stays unknown (-1) */
  sfc_config_t cfg = make_config(1, 1000);
  cfg.device.memory_bytes_per_s = 0; /* no device time model: the graph's times as they are */
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK(ir.steps[1].time_us == 20.0);
  CHECK(ir.steps[3].time_us < 0);
  CHECK_EQ_U64(ir.plan.steps[2].flags, SFC_STEP_TIMED);
  CHECK(ir.plan.steps[2].time_us == 30.0);
  CHECK_EQ_U64(ir.plan.steps[3].flags, 0);
  sfc_eval_t e;
  CHECK_OK(sfc_evaluate(&ir, NULL, &e, &err), err);
  CHECK_NEAR(e.predicted_iteration_s, 60e-6, 1e-12);
  CHECK_NEAR(e.compute_s, 60e-6, 1e-12);
  CHECK_EQ_U64(e.stalls, 0);
  CHECK_EQ_U64(e.swap_in_bytes + e.swap_out_bytes, 0);
  CHECK_EQ_U64(e.peak_device_bytes, 180);
  /* a candidate the runtime's loader refuses is an error, not a prediction */
  ir.blocks[1].offset = 0; /* B collides with A at step 1 */
  CHECK(sfc_evaluate(&ir, NULL, &e, &err) != SFC_OK);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* Persistent tensors live everywhere; an output lives to the end; an unused
 * activation gets no block; a workspace lives in its op's step; an in-place
 * update extends the range; alignment rounds every block. */
static void test_lifetime_rules(void) {
  sfc_graph_t *g = tg_new("rules");
  uint32_t x = tg_tensor(g, "x", 1000, SFC_KIND_INPUT);
  uint32_t w = tg_tensor(g, "w", 300, SFC_KIND_PARAM);
  uint32_t h = tg_tensor(g, "h", 500, SFC_KIND_ACTIVATION);
  uint32_t loss = tg_tensor(g, "loss", 4, SFC_KIND_OUTPUT);
  uint32_t gw = tg_tensor(g, "gw", 300, SFC_KIND_GRAD);
  uint32_t unused = tg_tensor(g, "unused", 77, SFC_KIND_ACTIVATION);
  uint32_t in0[] = {x, w};
  uint32_t o0 = tg_op(g, "fc", SFC_PHASE_FORWARD, 2, in0, 1, &h);
  tg_workspace(g, o0, 256);
  tg_op(g, "relu_", SFC_PHASE_FORWARD, 1, &h, 1, &h); /* in place */
  tg_op(g, "loss", SFC_PHASE_LOSS, 1, &h, 1, &loss);
  uint32_t in3[] = {loss, h};
  tg_op(g, "fc_bwd", SFC_PHASE_BACKWARD, 2, in3, 1, &gw);
  uint32_t in4[] = {w, gw};
  tg_op(g, "sgd", SFC_PHASE_UPDATE, 2, in4, 1, &w);
  sfc_config_t cfg = make_config(256, 1 << 20);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  const sfc_live_t *t = ir.live;
  CHECK_EQ_U64(t[x].first_step, 0);
  CHECK_EQ_U64(t[x].last_step, 4);
  CHECK_EQ_U64(t[w].last_step, 4);
  CHECK_EQ_U64(t[h].first_step, 0);
  CHECK_EQ_U64(t[h].last_step, 3);
  CHECK_EQ_U64(t[loss].first_step, 2);
  CHECK_EQ_U64(t[loss].last_step, 4); /* outputs live to the end */
  CHECK_EQ_U64(t[gw].first_step, 3);
  CHECK_EQ_U64(t[gw].last_step, 4);
  CHECK(sfc_ir_tensor_unused(&ir, unused));
  CHECK(ir.plan.tensors[unused].flags & SFC_TENSOR_UNUSED);
  /* every use step, sorted and distinct (h is read and written by relu_ at step 1) */
  CHECK_EQ_U64(t[h].use_count, 4);
  for (uint32_t k = 0; k < 4; k++)
    CHECK_EQ_U64(ir.use_steps[t[h].use_begin + k], k);
  CHECK_EQ_U64(t[w].use_count, 2); /* fc and sgd: persistent, but used at 0 and 4 only */
  CHECK_EQ_U64(ir.use_steps[t[w].use_begin + 1], 4);
  CHECK_EQ_U64(t[unused].use_count, 0);
  /* accesses: fc reads x, w and writes h and its workspace; relu_ and sgd are in place */
  const sfc_use_t *u = &ir.uses[ir.steps[0].use_begin];
  CHECK_EQ_U64(ir.steps[0].use_count, 4);
  CHECK_EQ_U64(u[0].access, SFC_ACCESS_READ);
  CHECK_EQ_U64(u[2].access, SFC_ACCESS_WRITE);
  CHECK_EQ_U64(u[3].tensor, g->ops[o0].workspace);
  CHECK_EQ_U64(u[3].access, SFC_ACCESS_WRITE);
  u = &ir.uses[ir.steps[1].use_begin];
  CHECK_EQ_U64(u[0].access, SFC_ACCESS_RW);
  CHECK_EQ_U64(u[1].access, SFC_ACCESS_RW);
  u = &ir.uses[ir.steps[4].use_begin];
  CHECK_EQ_U64(u[0].tensor, w);
  CHECK_EQ_U64(u[0].access, SFC_ACCESS_RW);
  CHECK_EQ_U64(u[1].access, SFC_ACCESS_READ);
  uint32_t ws = g->ops[o0].workspace;
  CHECK_EQ_U64(t[ws].first_step, 0);
  CHECK_EQ_U64(t[ws].last_step, 0);
  /* logical live bytes: step 0 = x + w + h + ws, step 3 = x + w + h + loss + gw */
  CHECK_EQ_U64(ir.live_bytes[0], 1000 + 300 + 500 + 256);
  CHECK_EQ_U64(ir.live_bytes[3], 1000 + 300 + 500 + 4 + 300);
  CHECK_EQ_U64(ir.in_core_peak, 2104);
  /* aligned: x 1024, w 512, h 512, loss 256, gw 512, ws 256 */
  CHECK_EQ_U64(ir.lower_bound, 1024 + 512 + 512 + 256 + 512);
  CHECK_EQ_U64(ir.n_blocks, 6);
  CHECK(ir.arena_bytes >= ir.lower_bound);
  for (uint32_t b = 0; b < ir.n_blocks; b++) {
    CHECK_EQ_U64(ir.blocks[b].offset % 256, 0);
    bool persistent = sfc_kind_is_persistent(g->tensors[ir.blocks[b].tensor].kind);
    CHECK(!!(ir.blocks[b].flags & SFC_BLOCK_PERSISTENT) == persistent);
  }
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

static void test_over_budget_is_a_result(void) {
  sfc_graph_t *g = tg_new("big");
  uint32_t a = tg_tensor(g, "a", 4096, SFC_KIND_ACTIVATION);
  tg_op(g, "make", SFC_PHASE_FORWARD, 0, NULL, 1, &a);
  sfc_config_t cfg = make_config(256, 1024);
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK(!ir.fits_budget);
  CHECK(ir.plan.header.flags & SFC_PLAN_OVER_BUDGET);
  CHECK_EQ_U64(sfc_verify_plan(&ir.plan, true, NULL, &err), SFC_ERR_VERIFY);
  CHECK_STR_EQ(err.message, "the arena needs 4096 bytes, more than the budget of 1024");
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(uint32_t n) {
  return (uint32_t)(test_rand_next(&rng) % n);
}

/* A random training-like iteration: params, a forward chain with skips, a loss,
 * a backward pass reading saved activations in reverse, updates. */
static sfc_graph_t *random_graph(int layers) {
  sfc_graph_t *g = tg_new("random");
  uint32_t x = tg_tensor(g, "x", 1 + rnd(1 << 16), SFC_KIND_INPUT);
  uint32_t acts[256], params[256], prev = x;
  for (int i = 0; i < layers; i++) {
    params[i] = tg_tensor(g, "w", 1 + rnd(1 << 14), SFC_KIND_PARAM);
    acts[i] = tg_tensor(g, "a", 1 + rnd(1 << 18), SFC_KIND_ACTIVATION);
    uint32_t skip = i > 2 && rnd(3) == 0 ? acts[rnd((uint32_t)i)] : prev;
    uint32_t in[] = {prev, params[i], skip};
    uint32_t o = tg_op(g, "fwd", SFC_PHASE_FORWARD, 3, in, 1, &acts[i]);
    if (rnd(4) == 0)
      tg_workspace(g, o, 1 + rnd(1 << 15));
    prev = acts[i];
  }
  uint32_t loss = tg_tensor(g, "loss", 4, SFC_KIND_OUTPUT);
  tg_op(g, "loss", SFC_PHASE_LOSS, 1, &prev, 1, &loss);
  uint32_t grad = loss;
  for (int i = layers - 1; i >= 0; i--) {
    uint32_t gi = tg_tensor(g, "g", g->tensors[acts[i]].bytes, SFC_KIND_GRAD);
    uint32_t gw = tg_tensor(g, "gw", g->tensors[params[i]].bytes, SFC_KIND_GRAD);
    uint32_t in[] = {grad, acts[i], params[i]}, out[] = {gi, gw};
    tg_op(g, "bwd", SFC_PHASE_BACKWARD, 3, in, 2, out);
    uint32_t uin[] = {params[i], gw};
    tg_op(g, "sgd", SFC_PHASE_UPDATE, 2, uin, 1, &params[i]);
    grad = gi;
  }
  return g;
}

static void test_random_graphs_verify(void) {
  for (int round = 0; round < 40; round++) {
    sfc_graph_t *g = random_graph(2 + (int)rnd(120));
    sfc_config_t cfg = make_config(round % 2 ? 256 : 1, UINT64_C(1) << 40);
    sfc_ir_t ir;
    sfc_error_t err = {0};
    CHECK_OK(compile(&ir, g, &cfg, &err), err);
    CHECK(ir.lower_bound >= ir.in_core_peak);
    CHECK(ir.arena_bytes >= ir.lower_bound);
    sfc_verify_stats_t st;
    CHECK_OK(sfc_verify_plan(&ir.plan, true, &st, &err), err);
    CHECK_EQ_U64(st.steps, g->n_ops);
    sfc_ir_deinit(&ir);
    sfc_graph_destroy(g);
  }
}

int main(void) {
  RUN(test_leading_gap_graph);
  RUN(test_step_times_and_evaluate);
  RUN(test_lifetime_rules);
  RUN(test_over_budget_is_a_result);
  RUN(test_random_graphs_verify);
  return check_summary();
}
