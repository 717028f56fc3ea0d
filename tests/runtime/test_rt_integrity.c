/* test_rt_integrity.c — hand-built swap plans replayed on `host` in integrity mode:
 * the valid ones pass for several iterations, and each deliberately broken one
 * (built by bypassing the validator, see rt_test_util.h) is caught with a precise
 * SFC_ERR_INTEGRITY message. Broken plans that race use the host device's lag knob
 * (options.host.lag), which holds the racing side back as far as the plan's waits
 * allow, so detection does not depend on timing.
 *
 * The swap plan is described in rt_plans.h.
 */
#include "rt_plans.h"
#include "rt_test_util.h"

static void test_valid_swap_plan(void) {
  pb_t *b = pb_new();
  rt_swap_plan(b, RT_VALID);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  sfcrt_stats_t st;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 4, &st, &err), err);
  CHECK_EQ_U64(st.swaps_in, 4);
  CHECK_EQ_U64(st.bytes_swapped_out, 4 * 256);
  /* The same plan with every queue slowed in turn, and with copies or steps held
   * back as far as the waits allow: correct deps never race (nor deadlock). */
  for (int q = 0; q < 5; q++) {
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    if (q < 3)
      opt.host.delay_us[q] = 2000;
    else
      opt.host.lag = q == 3 ? SFCRT_HOST_LAG_COPIES : SFCRT_HOST_LAG_COMPUTE;
    CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, NULL, &err), err);
  }
  /* lag needs integrity mode */
  sfcrt_options_init(&opt);
  opt.host.lag = SFCRT_HOST_LAG_COPIES;
  CHECK_EQ_I64(rt_replay(sfcrt_plan_view(plan), &opt, 1, NULL, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "host: options.host.lag must be 1 or 2 and needs integrity mode");
  /* A dependency implied by others may be left out: no false alarm. */
  pb_t *b2 = pb_new();
  rt_swap_plan(b2, RT_NO_WAIT_IN_ON_OUT);
  sfcrt_plan_t *plan2 = rt_load(b2);
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  opt.host.delay_us[SFCRT_QUEUE_D2H] = 5000;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan2), &opt, 2, NULL, &err), err);
  opt.host.delay_us[SFCRT_QUEUE_D2H] = 0;
  for (int lag = SFCRT_HOST_LAG_COPIES; lag <= SFCRT_HOST_LAG_COMPUTE; lag++) {
    opt.host.lag = lag;
    CHECK_OK(rt_replay(sfcrt_plan_view(plan2), &opt, 2, NULL, &err), err);
  }
  sfcrt_plan_destroy(plan2);
  pb_free(b2);
  /* And without integrity (real copies, no patterns). */
  sfcrt_options_init(&opt);
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, NULL, &err), err);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* A swap-out whose swap-in was cancelled because the tensor's block stayed resident
 * and is read again in place (the host copy is written and never read back). */
static void test_swap_cancelled_by_reuse(void) {
  pb_t *b = pb_new();
  const uint64_t T = 256;
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t bt = pb_tensor(b, "b", T, SFC_KIND_ACTIVATION);
  uint32_t a = pb_tensor(b, "a", T, SFC_KIND_ACTIVATION);
  uint32_t d = pb_tensor(b, "d", T, SFC_KIND_OUTPUT);
  uint32_t op0 = pb_op(b, "make_b", PB_LIST(x), PB_LIST(bt));
  uint32_t op1 = pb_op(b, "make_a", PB_LIST(x), PB_LIST(a));
  uint32_t op2 = pb_op(b, "join", PB_LIST(a, bt), PB_LIST(d));
  uint32_t X = pb_block(b, x, 0, T, 0, 2, SFC_BLOCK_PERSISTENT);
  uint32_t B = pb_block(b, bt, 256, T, 0, 2, 0);
  uint32_t A = pb_block(b, a, 512, T, 1, 2, 0);
  uint32_t D = pb_block(b, d, 768, T, 2, 2, 0);
  uint32_t HB = pb_host_block(b, bt, 0, T, 1, 2);
  uint32_t s0 = pb_step(b, op0, PB_LIST(X, B));
  pb_step(b, op1, PB_LIST(X, A));
  pb_step(b, op2, PB_LIST(A, B, D));
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, B, HB, 1);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  pb_fit_arenas(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  opt.host.delay_us[SFCRT_QUEUE_D2H] = 2000; /* the copy still reads b while step 2 does */
  sfcrt_stats_t st;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  CHECK_EQ_U64(st.swaps_out, 3);
  CHECK_EQ_U64(st.swaps_in, 0);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

typedef struct broken {
  const char *label;
  int variant;
  int lag;                /* options.host.lag: which side of the race is held back */
  sfc_status_t validator; /* what the reader says about the plan (it rejects them all) */
  const char *message;    /* the meaningful part of the integrity error */
} broken_t;

static const broken_t broken[] = {
    {"early reuse: step 1 does not wait for b's swap-out", RT_NO_WAIT_STEP1_ON_OUT,
     SFCRT_HOST_LAG_COPIES, SFC_ERR_VERIFY,
     "step 3 (op 'join'): input 1 tensor 1 'b' (block 4) byte 0 of 256: found "},
    {"early reuse by a swap-in: it does not wait for step 2", RT_NO_WAIT_IN_ON_STEP2,
     SFCRT_HOST_LAG_COMPUTE, SFC_ERR_VERIFY,
     /* the swap-in lands before step 1 fills a over it: b' is lost at step 3 */
     "step 3 (op 'join'): input 1 tensor 1 'b' (block 4) byte 0 of 256: found "},
    {"missing wait: step 3 does not wait for the swap-in", RT_NO_WAIT_STEP3_ON_IN,
     SFCRT_HOST_LAG_COPIES, SFC_ERR_VERIFY,
     "step 3 (op 'join'): input 1 tensor 1 'b' (block 4) byte 0 of 256: found "},
    {"lost swap: the swap-out copies nothing", RT_LOST_SWAP_OUT, 0, SFC_ERR_VERIFY,
     "step 3 (op 'join'): input 1 tensor 1 'b' (block 4) byte 0 of 256: found 0x0000000000000000"},
    {"overlap: c over x", RT_OVERLAP_C_ON_X, 0, SFC_ERR_VERIFY,
     "iteration 0 end: tensor 0 'x' (block 0) byte 0 of 256"},
};

static void test_broken_plans(void) {
  for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
    const broken_t *r = &broken[i];
    pb_t *b = pb_new();
    rt_swap_plan(b, r->variant);
    const sfc_plan_view_t *v = pb_view(b);
    sfc_error_t verr;
    int before = check_failures_;
    CHECK_EQ_I64(sfcrt_plan_validate(v, NULL, &verr), r->validator);
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    opt.host.lag = r->lag;
    sfc_error_t err;
    sfc_status_t st = rt_replay(v, &opt, 2, NULL, &err);
    CHECK_EQ_I64(st, SFC_ERR_INTEGRITY);
    CHECK_CONTAINS(err.message, r->message);
    fprintf(stderr, "  %s\n    -> %s\n", r->label, err.message);
    if (check_failures_ != before)
      fprintf(stderr, "  in row: %s\n", r->label);
    pb_free(b);
  }
}

/* A session that failed keeps failing with the same error, and destroys cleanly. */
static void test_failure_sticks(void) {
  pb_t *b = pb_new();
  rt_swap_plan(b, RT_LOST_SWAP_OUT);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  sfcrt_session_t *s;
  sfc_error_t err, err2;
  CHECK_OK(sfcrt_session_create_view(pb_view(b), &opt, &s, &err), err);
  CHECK_OK(sfcrt_iteration_begin(s, &err), err);
  const sfcrt_step_t *st;
  sfc_status_t status;
  while ((status = sfcrt_step_next(s, &st, &err)) == SFC_OK && st)
    if ((status = sfcrt_step_done(s, &err)) != SFC_OK)
      break;
  if (status == SFC_OK)
    status = sfcrt_iteration_end(s, &err);
  CHECK_EQ_I64(status, SFC_ERR_INTEGRITY);
  CHECK_EQ_I64(sfcrt_iteration_begin(s, &err2), SFC_ERR_INTEGRITY);
  CHECK_STR_EQ(err2.message, err.message);
  CHECK_EQ_I64(sfcrt_step_next(s, &st, &err2), SFC_ERR_INTEGRITY);
  sfcrt_session_destroy(s);
  pb_free(b);
}

int main(void) {
  RUN(test_valid_swap_plan);
  RUN(test_swap_cancelled_by_reuse);
  RUN(test_broken_plans);
  RUN(test_failure_sticks);
  return check_summary();
}
