/* test_batch_scale.c — sfc_graph_batch_scale on hand-built graphs with hand-derived
 * numbers: what scales (batch tensors' bytes and batch dim; time, FLOPs and workspace of
 * ops touching them), what does not (params, optimizer state, batch-free tensors, ops
 * on them only), rounding, the no-op case, the fixed part of op times (time_fixed_us:
 * t(N) = a + (t - a) * N / b, clamped, NaN-safe, composable), and every error (no batch,
 * a batch dim that is not a multiple, overflow past the loader's limits, a time that
 * would not be finite) leaving the graph unchanged. */
#include <math.h>

#include "../core/graph_build.h"
#include "batch_scale.h"
#include "check.h"

/* x[4,3] (input, batch 0) -> op0 (reads w) -> h[4,10] (batch) -> op1 -> loss;
 * op2 (update) writes w from g (grad of w, no batch). Recorded batch 4. */
typedef struct fixture {
  sfc_graph_t *g;
  uint32_t x, w, h, loss, gw, m, odd, op0, op1, op2;
} fixture_t;

static void set_shape(sfc_graph_t *g, uint32_t t, int ndim, const int64_t *dims, int axis) {
  g->tensors[t].ndim = (uint8_t)ndim;
  for (int i = 0; i < ndim; i++)
    g->tensors[t].shape[i] = dims[i];
  g->tensors[t].batch_axis = (int8_t)axis;
}

static fixture_t make(void) {
  fixture_t f;
  sfc_graph_t *g = f.g = tg_new("scale");
  g->batch = 4;
  f.x = tg_tensor(g, "x", 48, SFC_KIND_INPUT);
  set_shape(g, f.x, 2, (int64_t[]){4, 3}, 0);
  f.w = tg_tensor(g, "w", 120, SFC_KIND_PARAM);
  set_shape(g, f.w, 2, (int64_t[]){3, 10}, -1);
  f.m = tg_tensor(g, "w.momentum", 120, SFC_KIND_OPTIMIZER);
  f.h = tg_tensor(g, "h", 160, SFC_KIND_ACTIVATION);
  set_shape(g, f.h, 3, (int64_t[]){2, 8, 10}, 1); /* batch folded: 8 = 4 * 2 on axis 1 */
  f.odd = tg_tensor(g, "odd", 7, SFC_KIND_ACTIVATION);
  set_shape(g, f.odd, 1, (int64_t[]){4}, 0); /* 7 bytes for batch 4: rounding */
  f.loss = tg_tensor(g, "loss", 4, SFC_KIND_OUTPUT);
  f.gw = tg_tensor(g, "gw", 120, SFC_KIND_GRAD);
  f.op0 =
      tg_op(g, "op0", SFC_PHASE_FORWARD, 2, (uint32_t[]){f.x, f.w}, 2, (uint32_t[]){f.h, f.odd});
  f.op1 = tg_op(g, "op1", SFC_PHASE_LOSS, 1, (uint32_t[]){f.h}, 2, (uint32_t[]){f.loss, f.gw});
  f.op2 =
      tg_op(g, "op2", SFC_PHASE_UPDATE, 3, (uint32_t[]){f.w, f.m, f.gw}, 2, (uint32_t[]){f.w, f.m});
  g->ops[f.op0].time_us = 10.0;
  g->ops[f.op0].flops = 240;
  g->ops[f.op1].time_us = 3.0;
  g->ops[f.op1].flops = 5;
  g->ops[f.op2].time_us = 2.0;
  g->ops[f.op2].flops = 99;
  tg_workspace(g, f.op0, 1000);
  tg_workspace(g, f.op2, 64);
  return f;
}

static void test_scales_batch_tensors_only(void) {
  fixture_t f = make();
  sfc_graph_t *g = f.g;
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_batch_scale(g, 10, &err), err);
  CHECK_EQ_I64(g->batch, 10);
  /* 48 * 10/4 = 120; shape 4 -> 10 */
  CHECK_EQ_U64(g->tensors[f.x].bytes, 120);
  CHECK_EQ_I64(g->tensors[f.x].shape[0], 10);
  CHECK_EQ_I64(g->tensors[f.x].shape[1], 3);
  /* folded axis: 8 -> 20, bytes 160 -> 400, other dims untouched */
  CHECK_EQ_I64(g->tensors[f.h].shape[0], 2);
  CHECK_EQ_I64(g->tensors[f.h].shape[1], 20);
  CHECK_EQ_U64(g->tensors[f.h].bytes, 400);
  /* 7 * 10/4 = 17.5 -> rounded up to 18 */
  CHECK_EQ_U64(g->tensors[f.odd].bytes, 18);
  /* params, optimizer state, grads of params, the loss: unchanged */
  CHECK_EQ_U64(g->tensors[f.w].bytes, 120);
  CHECK_EQ_U64(g->tensors[f.m].bytes, 120);
  CHECK_EQ_U64(g->tensors[f.gw].bytes, 120);
  CHECK_EQ_U64(g->tensors[f.loss].bytes, 4);
  /* op0 and op1 touch batch tensors: time and flops * 2.5, op0's workspace too */
  CHECK_NEAR(g->ops[f.op0].time_us, 25.0, 1e-9);
  CHECK_EQ_U64(g->ops[f.op0].flops, 600);
  CHECK_EQ_U64(g->ops[f.op0].workspace_bytes, 2500);
  CHECK_EQ_U64(g->tensors[g->ops[f.op0].workspace].bytes, 2500);
  CHECK_NEAR(g->ops[f.op1].time_us, 7.5, 1e-9);
  CHECK_EQ_U64(g->ops[f.op1].flops, 12); /* 12.5 rounded down */
  /* op2 (the update) touches no batch tensor */
  CHECK_NEAR(g->ops[f.op2].time_us, 2.0, 1e-9);
  CHECK_EQ_U64(g->ops[f.op2].flops, 99);
  CHECK_EQ_U64(g->tensors[g->ops[f.op2].workspace].bytes, 64);
  sfc_graph_destroy(g);
}

static void test_scale_down_and_back(void) {
  fixture_t f = make();
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_batch_scale(f.g, 1, &err), err);
  CHECK_EQ_U64(f.g->tensors[f.x].bytes, 12);
  CHECK_EQ_I64(f.g->tensors[f.h].shape[1], 2);
  CHECK_EQ_U64(f.g->tensors[f.odd].bytes, 2); /* 7/4 = 1.75 -> 2 */
  CHECK_OK(sfc_graph_batch_scale(f.g, 4, &err), err);
  CHECK_EQ_U64(f.g->tensors[f.x].bytes, 48);
  CHECK_EQ_U64(f.g->tensors[f.h].bytes, 160);
  CHECK_NEAR(f.g->ops[f.op0].time_us, 10.0, 1e-9);
  sfc_graph_destroy(f.g);
}

static void test_same_batch_is_a_no_op(void) {
  fixture_t f = make();
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_batch_scale(f.g, 4, &err), err);
  CHECK_EQ_U64(f.g->tensors[f.odd].bytes, 7);
  CHECK_NEAR(f.g->ops[f.op0].time_us, 10.0, 1e-9);
  sfc_graph_destroy(f.g);
}

/* The graph is byte-for-byte what make() built: errors change nothing. */
static void check_untouched(const fixture_t *f) {
  CHECK_EQ_I64(f->g->batch, 4);
  CHECK_EQ_U64(f->g->tensors[f->x].bytes, 48);
  CHECK_EQ_I64(f->g->tensors[f->x].shape[0], 4);
  CHECK_EQ_U64(f->g->tensors[f->h].bytes, 160);
  CHECK_NEAR(f->g->ops[f->op0].time_us, 10.0, 1e-9);
  CHECK_EQ_U64(f->g->ops[f->op0].flops, 240);
}

static void test_errors(void) {
  sfc_error_t err = {0};
  fixture_t f = make();
  f.g->batch = 0;
  CHECK(sfc_graph_batch_scale(f.g, 8, &err) == SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message, "no root \"batch\" field");
  f.g->batch = 4;
  check_untouched(&f);

  CHECK(sfc_graph_batch_scale(f.g, 0, &err) == SFC_ERR_INVALID_ARGUMENT);
  CHECK(sfc_graph_batch_scale(f.g, SFC_MAX_BATCH + 1, &err) == SFC_ERR_INVALID_ARGUMENT);
  check_untouched(&f);

  /* a batch dim that is not a multiple of the recorded batch */
  f.g->tensors[f.h].shape[1] = 6;
  CHECK(sfc_graph_batch_scale(f.g, 8, &err) == SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message,
                 "tensor 3 (\"h\") has shape[1] = 6, not a multiple of the graph's batch 4");
  f.g->tensors[f.h].shape[1] = 8;
  check_untouched(&f);

  /* 2^40 bytes at batch 4 -> 2^40 * 2^31 / 4 = 2^69: past 1 PiB, and past 2^64 */
  f.g->tensors[f.h].bytes = UINT64_C(1) << 40;
  CHECK(sfc_graph_batch_scale(f.g, SFC_MAX_BATCH, &err) == SFC_ERR_LIMIT);
  CHECK_CONTAINS(err.message, "(\"h\") would have more than 1125899906842624 bytes");
  /* just at the limit: 2^48 * 4 = 2^50 is allowed, 2^48 * 5 is not */
  f.g->tensors[f.h].bytes = UINT64_C(1) << 48;
  CHECK(sfc_graph_batch_scale(f.g, 20, &err) == SFC_ERR_LIMIT);
  CHECK_EQ_U64(f.g->tensors[f.h].bytes, UINT64_C(1) << 48);
  CHECK_EQ_I64(f.g->batch, 4);
  CHECK_OK(sfc_graph_batch_scale(f.g, 16, &err), err);
  CHECK_EQ_U64(f.g->tensors[f.h].bytes, UINT64_C(1) << 50);
  sfc_graph_destroy(f.g);

  /* FLOPs past 2^62 */
  f = make();
  f.g->ops[f.op0].flops = UINT64_C(1) << 61;
  CHECK(sfc_graph_batch_scale(f.g, 12, &err) == SFC_ERR_LIMIT);
  CHECK_CONTAINS(err.message, "op 0 (\"op0\")");
  CHECK_EQ_U64(f.g->ops[f.op0].flops, UINT64_C(1) << 61);
  sfc_graph_destroy(f.g);

  /* many tensors that each fit but together pass 2^56 */
  f = make();
  for (int i = 0; i < 80; i++) {
    uint32_t t = tg_tensor(f.g, "big", UINT64_C(1) << 48, SFC_KIND_ACTIVATION);
    set_shape(f.g, t, 1, (int64_t[]){4}, 0);
  }
  f.g->n_file_tensors = f.g->n_tensors;
  CHECK(sfc_graph_batch_scale(f.g, 16, &err) == SFC_ERR_LIMIT);
  CHECK_CONTAINS(err.message, "add up to more than");
  CHECK_EQ_U64(f.g->tensors[f.x].bytes, 48);
  sfc_graph_destroy(f.g);
}

/* t(b) = a + c*b through the recorded point: a = time_fixed_us stays, the rest scales. */
static void test_fixed_time(void) {
  fixture_t f = make();
  sfc_graph_t *g = f.g;
  sfc_error_t err = {0};
  g->ops[f.op0].time_fixed_us = 4.0; /* 10 = 4 + 6 at batch 4 */
  g->ops[f.op1].time_fixed_us = 3.0; /* all of it fixed */
  g->ops[f.op2].time_fixed_us = 1.0; /* no batch tensor: ignored */
  CHECK_OK(sfc_graph_batch_scale(g, 10, &err), err);
  CHECK_NEAR(g->ops[f.op0].time_us, 19.0, 1e-9); /* 4 + 6 * 10/4 */
  CHECK_NEAR(g->ops[f.op1].time_us, 3.0, 1e-9);
  CHECK_NEAR(g->ops[f.op2].time_us, 2.0, 1e-9);
  CHECK_NEAR(g->ops[f.op0].time_fixed_us, 4.0, 1e-9);
  /* 10 -> 2 equals 4 -> 2 directly: 4 + 6 * 2/4 = 7 (and 4 + 15 * 2/10 = 7) */
  CHECK_OK(sfc_graph_batch_scale(g, 2, &err), err);
  CHECK_NEAR(g->ops[f.op0].time_us, 7.0, 1e-9);
  CHECK_NEAR(g->ops[f.op1].time_us, 3.0, 1e-9);
  /* flops and bytes are not affected by the fixed part: 240 * 2/4 */
  CHECK_EQ_U64(g->ops[f.op0].flops, 120);
  sfc_graph_destroy(g);

  /* out-of-range fixed parts (a graph built in code; the loader refuses them) are
   * clamped to [0, time_us]; NaN counts as 0, the linear rule */
  f = make();
  f.g->ops[f.op0].time_fixed_us = 50.0; /* > time_us 10: all fixed */
  f.g->ops[f.op1].time_fixed_us = NAN;  /* 3 * 8/4 */
  CHECK_OK(sfc_graph_batch_scale(f.g, 8, &err), err);
  CHECK_NEAR(f.g->ops[f.op0].time_us, 10.0, 1e-9);
  CHECK_NEAR(f.g->ops[f.op1].time_us, 6.0, 1e-9);
  sfc_graph_destroy(f.g);
  f = make();
  f.g->ops[f.op0].time_fixed_us = -5.0; /* 10 * 8/4 */
  CHECK_OK(sfc_graph_batch_scale(f.g, 8, &err), err);
  CHECK_NEAR(f.g->ops[f.op0].time_us, 20.0, 1e-9);
  sfc_graph_destroy(f.g);
}

/* 1e300 us * 2^31/4 is not a finite double: an error, the graph unchanged; the same
 * time entirely fixed does not grow and is fine. */
static void test_time_overflow(void) {
  fixture_t f = make();
  sfc_error_t err = {0};
  f.g->ops[f.op1].time_us = 1e300;
  CHECK(sfc_graph_batch_scale(f.g, SFC_MAX_BATCH, &err) == SFC_ERR_LIMIT);
  CHECK_CONTAINS(err.message, "op 1 (\"op1\"): its time_us would not be a finite number");
  CHECK_NEAR(f.g->ops[f.op1].time_us, 1e300, 1e285);
  CHECK_EQ_I64(f.g->batch, 4);
  CHECK_EQ_U64(f.g->tensors[f.x].bytes, 48);
  f.g->ops[f.op1].time_fixed_us = 1e300;
  CHECK_OK(sfc_graph_batch_scale(f.g, SFC_MAX_BATCH, &err), err);
  CHECK_NEAR(f.g->ops[f.op1].time_us, 1e300, 1e285);
  sfc_graph_destroy(f.g);
}

int main(void) {
  RUN(test_scales_batch_tensors_only);
  RUN(test_scale_down_and_back);
  RUN(test_same_batch_is_a_no_op);
  RUN(test_errors);
  RUN(test_fixed_time);
  RUN(test_time_overflow);
  return check_summary();
}
