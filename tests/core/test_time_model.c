/* test_time_model.c — the device time model (compiler/src/time_model.h): the op class
 * table, how a graph's device matches a profile, the roofline pinned on a hand-made
 * graph through the whole compiler (step times, the plan's TIMED steps, the sim
 * replay), the measured path when the graph was recorded on the profile's device, and
 * what compile and simulate say about it (times_from). */
#include "check.h"
#include "graph_build.h"
#include "evaluate.h"
#include "pipeline.h"
#include "report.h"
#include "time_model.h"

static void test_op_classes(void) {
  bool known = false;
  CHECK_EQ_I64(sfc_op_class("convolution", &known), SFC_OP_DENSE);
  CHECK(known);
  CHECK_EQ_I64(sfc_op_class("convolution_backward", NULL), SFC_OP_DENSE);
  CHECK_EQ_I64(sfc_op_class("addmm", NULL), SFC_OP_DENSE);
  CHECK_EQ_I64(sfc_op_class("bmm", NULL), SFC_OP_DENSE);
  CHECK_EQ_I64(sfc_op_class("native_batch_norm_backward", &known), SFC_OP_ELEMENTWISE);
  CHECK(known);
  CHECK_EQ_I64(sfc_op_class("relu_", &known), SFC_OP_ELEMENTWISE); /* in place: relu */
  CHECK(known);
  CHECK_EQ_I64(sfc_op_class("add_", &known), SFC_OP_ELEMENTWISE);
  CHECK(known);
  CHECK_EQ_I64(sfc_op_class("detach", &known), SFC_OP_FREE);
  CHECK(known);
  CHECK_EQ_I64(sfc_op_class("detach_", NULL), SFC_OP_FREE);
  CHECK_EQ_I64(sfc_op_class("_reshape_alias", NULL), SFC_OP_FREE);
  CHECK_EQ_I64(sfc_op_class("as_strided", NULL), SFC_OP_FREE);
  CHECK_EQ_I64(sfc_op_class("empty", NULL), SFC_OP_FREE);
  CHECK_EQ_I64(sfc_op_class("clone", NULL), SFC_OP_ELEMENTWISE); /* a copy costs bytes */
  /* unknown types are elementwise, and say so */
  CHECK_EQ_I64(sfc_op_class("my_fused_thing", &known), SFC_OP_ELEMENTWISE);
  CHECK(!known);
  CHECK_EQ_I64(sfc_op_class("_", &known), SFC_OP_ELEMENTWISE);
  CHECK(!known);
  CHECK_EQ_I64(sfc_op_class("", &known), SFC_OP_ELEMENTWISE);
  CHECK(!known);
  CHECK_EQ_I64(sfc_op_class(NULL, &known), SFC_OP_ELEMENTWISE);
  CHECK(!known);
  CHECK_STR_EQ(sfc_op_class_name(SFC_OP_DENSE), "dense");
  CHECK_STR_EQ(sfc_op_class_name(SFC_OP_ELEMENTWISE), "elementwise");
  CHECK_STR_EQ(sfc_op_class_name(SFC_OP_FREE), "free");
}

static void test_device_matching(void) {
  static const struct {
    const char *device, *profile;
    bool match;
  } cases[] = {
      {"h200-pcie5", "h200-pcie5", true}, /* the profile's own name */
      {"H200-PCIe5", "h200-pcie5", true}, /* case aside */
      {"cuda:NVIDIA H200", "h200-pcie5", true},
      {"NVIDIA H200 NVL", "h200-pcie5", true},
      {"cuda:NVIDIA H100 80GB HBM3", "h200-pcie5", false},
      {"Tesla V100-SXM2-16GB", "v100-nvlink2", true},
      {"cuda:Tesla V100-SXM2-16GB", "a100-pcie4", false},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie4", true},
      {"NVIDIA A100-SXM4-80GB", "a100-pcie4", true}, /* the GPU model decides */
      {"NVIDIA RTX A1000", "a100-pcie4", false},     /* "a100" then a digit */
      {"NVIDIA GeForce RTX 2080 Ti", "rtx2080ti-pcie3", true},
      {"NVIDIA GeForce RTX 2080", "rtx2080ti-pcie3", false},
      {"cpu", "h200-pcie5", false},
      {"CPU", "v100-nvlink2", false},
      {"cpu:v100", "v100-nvlink2", false}, /* "cpu..." never matches */
      {"cuda:0", "h200-pcie5", false},     /* no model named */
      {"cuda", "h200-pcie5", false},
      {"", "h200-pcie5", false},
      {NULL, "h200-pcie5", false},
      {"h200-pcie5", "", false},
      {"h200-pcie5", NULL, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bool got = sfc_time_device_matches(cases[i].device, cases[i].profile);
    if (got != cases[i].match)
      fprintf(stderr, "  case %zu: '%s' vs '%s'\n", i, cases[i].device ? cases[i].device : "(null)",
              cases[i].profile ? cases[i].profile : "(null)");
    CHECK(got == cases[i].match);
  }
}

/* A made-up GPU with round numbers, so every time below is worked out by hand. */
static sfc_config_t gpu_config(void) {
  sfc_config_t c;
  sfc_config_defaults(&c);
  snprintf(c.device.name, sizeof c.device.name, "%s", "test-gpu");
  c.device.peak_flops = 1e12;         /* 1 TFLOP/s */
  c.device.memory_bytes_per_s = 1e11; /* 100 GB/s */
  c.device.launch_overhead_s = 2e-6;  /* 2 us per op that runs a kernel */
  c.device.dense_flops_efficiency = 0.5;
  c.device.dense_bytes_efficiency = 0.8;
  c.device.elementwise_flops_efficiency = 0.25;
  c.device.elementwise_bytes_efficiency = 0.5;
  c.device.alignment = 1;
  c.budget_bytes = 1ull << 30;
  return c;
}

/* Five ops, each with a measured (CPU) time of 1000 us the model must not use:
 *   op0 convolution  X(4e6 B) W(1e6 B) -> Y(2e6 B), 2e9 FLOPs
 *        flops 2e9 / (1e12 * 0.5) = 4000 us; bytes 7e6 / (1e11 * 0.8) = 87.5 us
 *        -> max 4000 + 2 = 4002 us
 *   op1 relu_        Y -> Y (in place: read and written, 2 * 2e6 B), no FLOPs
 *        bytes 4e6 / (1e11 * 0.5) = 80 us -> 80 + 2 = 82 us
 *   op2 view         Y -> V: free, 0 us (no launch either)
 *   op3 mm           A(1e6 B) B(1e6 B) -> C(1e6 B), 1e6 FLOPs
 *        flops 1e6 / 5e11 = 2 us; bytes 3e6 / 8e10 = 37.5 us -> memory-bound 39.5 us
 *   op4 weird_op     V(2e6 B) -> nothing, plus a 1e9 B workspace that does not count;
 *        unknown type -> elementwise: 2e6 / 5e10 = 40 us -> 42 us
 * Sum 4002 + 82 + 0 + 39.5 + 42 = 4165.5 us. */
static sfc_graph_t *hand_graph(const char *device) {
  sfc_graph_t *g = tg_new("roofline");
  g->device = sfc_pool_strdup(&g->pool, device);
  uint32_t X = tg_tensor(g, "X", 4000000, SFC_KIND_INPUT);
  uint32_t W = tg_tensor(g, "W", 1000000, SFC_KIND_PARAM);
  uint32_t Y = tg_tensor(g, "Y", 2000000, SFC_KIND_ACTIVATION);
  uint32_t V = tg_tensor(g, "V", 2000000, SFC_KIND_ACTIVATION);
  uint32_t A = tg_tensor(g, "A", 1000000, SFC_KIND_PARAM);
  uint32_t B = tg_tensor(g, "B", 1000000, SFC_KIND_PARAM);
  uint32_t C = tg_tensor(g, "C", 1000000, SFC_KIND_OUTPUT);
  static const char *const types[] = {"convolution", "relu_", "view", "mm", "weird_op"};
  uint32_t o[5];
  o[0] = tg_op(g, "conv", SFC_PHASE_FORWARD, 2, (uint32_t[]){X, W}, 1, &Y);
  o[1] = tg_op(g, "relu", SFC_PHASE_FORWARD, 1, &Y, 1, &Y);
  o[2] = tg_op(g, "view", SFC_PHASE_FORWARD, 1, &Y, 1, &V);
  o[3] = tg_op(g, "mm", SFC_PHASE_FORWARD, 2, (uint32_t[]){A, B}, 1, &C);
  o[4] = tg_op(g, "weird", SFC_PHASE_FORWARD, 1, &V, 0, NULL);
  tg_workspace(g, o[4], 1000000000);
  for (uint32_t i = 0; i < 5; i++) {
    g->ops[o[i]].type = types[i];
    g->ops[o[i]].time_us = 1000;
  }
  g->ops[o[0]].flops = 2000000000;
  g->ops[o[3]].flops = 1000000;
  return g;
}

static sfc_status_t compile(sfc_ir_t *ir, sfc_graph_t *g, const sfc_config_t *cfg,
                            sfc_error_t *err) {
  sfc_ir_init(ir, g, cfg);
  return sfc_compile_ir(ir, NULL, err);
}

static void test_roofline_on_hand_graph(void) {
  static const double want[] = {4002, 82, 0, 39.5, 42};
  sfc_config_t cfg = gpu_config();
  CHECK(sfc_time_model_ready(&cfg.device));
  sfc_graph_t *g = hand_graph("cpu");
  CHECK(sfc_time_op_bytes(g, &g->ops[1]) == 4e6);
  CHECK(sfc_time_op_bytes(g, &g->ops[4]) == 2e6); /* the workspace does not count */
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK_EQ_U64(ir.n_steps, 5);
  for (uint32_t s = 0; s < 5 && s < ir.n_steps; s++) {
    CHECK_NEAR(ir.steps[s].time_us, want[s], 1e-9);
    CHECK_NEAR(sfc_time_op_us(g, &g->ops[s], &cfg.device), want[s], 1e-9);
    CHECK_EQ_U64(ir.plan.steps[s].flags, SFC_STEP_TIMED); /* the plan carries every one */
    CHECK_NEAR(ir.plan.steps[s].time_us, want[s], 1e-9);
  }
  sfc_eval_t e;
  CHECK_OK(sfc_evaluate(&ir, NULL, &e, &err), err); /* the sim device charges them */
  CHECK_NEAR(e.compute_s, 4165.5e-6, 1e-12);
  CHECK_NEAR(e.predicted_iteration_s, 4165.5e-6, 1e-12);
  /* what compile and simulate say */
  char from[128], note[128];
  const char *modelled = sfc_ir_times_modelled_for(&ir);
  CHECK(modelled != NULL && strcmp(modelled, "test-gpu") == 0);
  CHECK_STR_EQ(sfc_times_from(g->device, 5, 5, modelled, from, sizeof from),
               "test-gpu (modelled: roofline)");
  CHECK_STR_EQ(sfc_times_note(g->device, 5, modelled, "test-gpu", note, sizeof note), "");
  CHECK_STR_EQ(sfc_times_note(g->device, 5, modelled, "a100-pcie4", note, sizeof note),
               ", not a100-pcie4 times (modelled for test-gpu)");
  CHECK(sfc_plan_times_modelled(&ir.plan));
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);

  /* a graph that names no device is modelled too */
  g = hand_graph("");
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK_NEAR(ir.steps[0].time_us, 4002, 1e-9);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);

  /* the efficiencies scale their terms: dense FLOPs at 1.0 halve op0's FLOP term */
  cfg.device.dense_flops_efficiency = 1;
  CHECK_NEAR(sfc_time_roofline_us(SFC_OP_DENSE, 2000000000, 7e6, &cfg.device), 2002, 1e-9);
  CHECK_NEAR(sfc_time_roofline_us(SFC_OP_FREE, 2000000000, 7e6, &cfg.device), 0, 0);
  cfg.device.dense_flops_efficiency = 0; /* not ready: measured times only */
  CHECK(!sfc_time_model_ready(&cfg.device));
}

/* Recorded on the profile's device: the measured times, and the model only for an op
 * the graph did not time. */
static void test_measured_when_devices_match(void) {
  sfc_config_t cfg = gpu_config();
  sfc_graph_t *g = hand_graph("cuda:Test GPU 80GB"); /* names the model "test" */
  CHECK(sfc_time_device_matches(g->device, "test-gpu"));
  g->ops[3].time_us = 7.5;
  sfc_ir_t ir;
  sfc_error_t err = {0};
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  static const double want[] = {1000, 1000, 1000, 7.5, 1000};
  for (uint32_t s = 0; s < 5 && s < ir.n_steps; s++) {
    CHECK_NEAR(ir.steps[s].time_us, want[s], 0);
    CHECK_NEAR(ir.plan.steps[s].time_us, want[s], 0);
  }
  char from[128], note[128];
  CHECK(sfc_ir_times_modelled_for(&ir) == NULL);
  CHECK_STR_EQ(sfc_times_from(g->device, 5, 5, NULL, from, sizeof from),
               "cuda:Test GPU 80GB (measured)");
  CHECK_STR_EQ(sfc_times_note(g->device, 5, NULL, "test-gpu", note, sizeof note), "");
  CHECK_STR_EQ(sfc_times_note(g->device, 5, NULL, "a100-pcie4", note, sizeof note),
               ", not a100-pcie4 times (measured on another device)");
  CHECK(!sfc_plan_times_modelled(&ir.plan));
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);

  /* one op untimed: its time comes from the roofline (op3: 39.5 us), the rest stay */
  g = hand_graph("test-gpu");
  g->ops[3].time_us = -1;
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK_NEAR(ir.steps[0].time_us, 1000, 0);
  CHECK_NEAR(ir.steps[3].time_us, 39.5, 1e-9);
  const char *modelled = sfc_ir_times_modelled_for(&ir);
  CHECK(modelled != NULL && strcmp(modelled, "test-gpu") == 0);
  CHECK_STR_EQ(sfc_times_from(g->device, 4, 5, modelled, from, sizeof from),
               "test-gpu (measured, 4 of 5 ops; the rest modelled: roofline)");
  CHECK(sfc_plan_times_modelled(&ir.plan));
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);

  /* a profile without the model's numbers keeps the measured times whatever the device */
  cfg.device.memory_bytes_per_s = 0;
  g = hand_graph("cpu");
  CHECK_OK(compile(&ir, g, &cfg, &err), err);
  CHECK_NEAR(ir.steps[0].time_us, 1000, 0);
  CHECK(sfc_ir_times_modelled_for(&ir) == NULL);
  CHECK_STR_EQ(sfc_times_from(g->device, 5, 5, NULL, from, sizeof from), "cpu (measured)");
  CHECK_STR_EQ(sfc_times_note(g->device, 5, NULL, "test-gpu", note, sizeof note),
               ", not test-gpu times (measured on another device)");
  CHECK_STR_EQ(sfc_times_note("", 5, NULL, "test-gpu", note, sizeof note),
               ", maybe not test-gpu times (the graph does not name its device)");
  CHECK_STR_EQ(sfc_times_from("", 0, 5, NULL, from, sizeof from), "none");
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

int main(void) {
  RUN(test_op_classes);
  RUN(test_device_matching);
  RUN(test_roofline_on_hand_graph);
  RUN(test_measured_when_devices_match);
  return check_summary();
}
