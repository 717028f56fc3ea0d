/* test_verify.c — the compiler's verifier on hand-built plan views: a valid plan
 * with a swap-out/swap-in round trip, then the same plan with one rule broken at a
 * time, each with its exact message. */
#include "check.h"
#include "verify.h"

/* X is produced at step 0, swapped out before step 1, its bytes reused by Y over
 * steps 1-2, and swapped back in (into a new block at the same offset) before
 * step 3, which reads X and Z.
 *
 *   op0: -> X     op1: -> Y     op2: Y -> Z     op3: X, Z ->
 *   BLOCKS: 0 X [0,0] @0   1 Y [1,2] @0   2 X [3,3] @0 swapped-in   3 Z [2,3] @64
 *   HOST_BLOCKS: 0 X [1,3] @0
 *   SWAPS: 0 out X (issue before step 1, after step 0)
 *          1 in  X (issue before step 3, after the host copy and Y's last use)
 *   deps:  step 1 waits for swap 0 (Y reuses X's bytes)
 *          step 3 waits for swap 1 (its input)
 */
typedef struct fixture {
  char strings[64];
  sfc_plan_tensor_t tensors[3];
  sfc_plan_op_t ops[4];
  uint32_t op_operands[6];
  sfc_plan_block_t blocks[4];
  sfc_plan_block_t host_blocks[1];
  sfc_plan_step_t steps[4];
  uint32_t step_operands[6];
  sfc_plan_swap_t swaps[2];
  sfc_plan_dep_t deps[8];
  sfc_plan_view_t v;
} fixture_t;

static void build(fixture_t *f) {
  memset(f, 0, sizeof *f);
  /* strings: "" X Y Z op0 op1 op2 op3 t */
  static const char s[] = "\0X\0Y\0Z\0op0\0op1\0op2\0op3\0t";
  memcpy(f->strings, s, sizeof s);
  uint32_t name_x = 1, name_y = 3, name_z = 5, name_op = 7, type = 23;
  uint32_t tn[3] = {name_x, name_y, name_z};
  for (int t = 0; t < 3; t++)
    f->tensors[t] = (sfc_plan_tensor_t){
        .graph_id = t, .bytes = 64, .name = tn[t], .kind = SFC_KIND_ACTIVATION, .batch_axis = -1};
  /* op operands: op0 out X; op1 out Y; op2 in Y out Z; op3 in X, Z */
  uint32_t opnd[6] = {0, 1, 1, 2, 0, 2};
  memcpy(f->op_operands, opnd, sizeof opnd);
  uint16_t nin[4] = {0, 0, 1, 2}, nout[4] = {1, 1, 1, 0};
  uint32_t begin[4] = {0, 1, 2, 4};
  for (int o = 0; o < 4; o++)
    f->ops[o] = (sfc_plan_op_t){.graph_id = o,
                                .name = name_op + 4u * (uint32_t)o,
                                .type = type,
                                .operand_begin = begin[o],
                                .input_count = nin[o],
                                .output_count = nout[o],
                                .backward_of = SFC_PLAN_NONE,
                                .time_us = 1.0};
  f->blocks[0] =
      (sfc_plan_block_t){.offset = 0, .bytes = 64, .tensor = 0, .first_step = 0, .last_step = 0};
  f->blocks[1] =
      (sfc_plan_block_t){.offset = 0, .bytes = 64, .tensor = 1, .first_step = 1, .last_step = 2};
  f->blocks[2] = (sfc_plan_block_t){.offset = 0,
                                    .bytes = 64,
                                    .tensor = 0,
                                    .first_step = 3,
                                    .last_step = 3,
                                    .flags = SFC_BLOCK_SWAPPED_IN};
  f->blocks[3] =
      (sfc_plan_block_t){.offset = 64, .bytes = 64, .tensor = 2, .first_step = 2, .last_step = 3};
  f->host_blocks[0] =
      (sfc_plan_block_t){.offset = 0, .bytes = 64, .tensor = 0, .first_step = 1, .last_step = 3};
  /* step operands (blocks): step0 X->B0; step1 Y->B1; step2 Y->B1, Z->B3;
   * step3 X->B2, Z->B3 */
  uint32_t so[6] = {0, 1, 1, 3, 2, 3};
  memcpy(f->step_operands, so, sizeof so);
  /* deps: [0] swap0 <- step0; [1] step1 <- swap0; [2] swap1 <- swap0;
   * [3] swap1 <- step2; [4] step3 <- swap1 */
  f->deps[0] = (sfc_plan_dep_t){SFC_NODE_STEP, 0};
  f->deps[1] = (sfc_plan_dep_t){SFC_NODE_SWAP, 0};
  f->deps[2] = (sfc_plan_dep_t){SFC_NODE_SWAP, 0};
  f->deps[3] = (sfc_plan_dep_t){SFC_NODE_STEP, 2};
  f->deps[4] = (sfc_plan_dep_t){SFC_NODE_SWAP, 1};
  for (uint32_t k = 0; k < 4; k++)
    f->steps[k] = (sfc_plan_step_t){.op = k,
                                    .segment = SFC_PLAN_NONE,
                                    .tile = SFC_PLAN_NONE,
                                    .operand_begin = begin[k],
                                    .box_begin = SFC_PLAN_NONE};
  f->steps[1].dep_begin = 1;
  f->steps[1].dep_count = 1;
  f->steps[3].dep_begin = 4;
  f->steps[3].dep_count = 1;
  f->swaps[0] = (sfc_plan_swap_t){.bytes = 64,
                                  .tensor = 0,
                                  .device_block = 0,
                                  .host_block = 0,
                                  .issue_step = 1,
                                  .dep_begin = 0,
                                  .dep_count = 1,
                                  .direction = SFC_SWAP_OUT};
  f->swaps[1] = (sfc_plan_swap_t){.bytes = 64,
                                  .tensor = 0,
                                  .device_block = 2,
                                  .host_block = 0,
                                  .issue_step = 3,
                                  .dep_begin = 2,
                                  .dep_count = 2,
                                  .direction = SFC_SWAP_IN};
  sfc_plan_view_t *v = &f->v;
  v->header.alignment = 64;
  v->header.arena_bytes = 128;
  v->header.host_arena_bytes = 64;
  v->header.budget_bytes = 128;
  v->strings = f->strings;
  v->strings_bytes = sizeof s;
  v->tensors = f->tensors;
  v->tensor_count = 3;
  v->ops = f->ops;
  v->op_count = 4;
  v->op_operands = f->op_operands;
  v->op_operand_count = 6;
  v->blocks = f->blocks;
  v->block_count = 4;
  v->host_blocks = f->host_blocks;
  v->host_block_count = 1;
  v->steps = f->steps;
  v->step_count = 4;
  v->step_operands = f->step_operands;
  v->step_operand_count = 6;
  v->swaps = f->swaps;
  v->swap_count = 2;
  v->deps = f->deps;
  v->dep_count = 5;
}

static fixture_t f;

static void expect(const char *why) {
  sfc_error_t err = {0};
  sfc_status_t st = sfc_verify_plan(&f.v, true, NULL, &err);
  CHECK_EQ_U64(st, SFC_ERR_VERIFY);
  CHECK_STR_EQ(err.message, why);
}

static void test_valid_round_trip(void) {
  build(&f);
  sfc_error_t err = {0};
  sfc_verify_stats_t st;
  CHECK_OK(sfc_verify_plan(&f.v, true, &st, &err), err);
  CHECK_EQ_U64(st.swaps, 2);
  CHECK_EQ_U64(st.reuse_checks, 2); /* Y after X, swapped-in X after Y */
}

static void test_reuse_without_waiting_for_swap_out(void) {
  build(&f);
  f.steps[1].dep_count = 0;
  expect("BLOCKS[1] (tensor 1 \"Y\") reuses bytes of BLOCKS[0] (tensor 0 \"X\"), but step 1 "
         "(op \"op1\") does not wait for swap-out 0 of tensor 0 \"X\"");
}

/* Y moves to its own bytes so nothing orders swap 1 after swap 0 transitively
 * (in the base fixture step 1 waits for swap 0 and swap 1 for step 2, which
 * already implies the host copy is complete). */
static void test_swap_in_before_host_copy(void) {
  build(&f);
  f.blocks[1].offset = 128;
  f.v.header.arena_bytes = f.v.header.budget_bytes = 192;
  f.steps[1].dep_count = 0;
  f.swaps[1].dep_begin = 3; /* keep only the dep on step 2 */
  f.swaps[1].dep_count = 1;
  expect("swap-in 1 of tensor 0 \"X\" does not wait for swap-out 0 of tensor 0 \"X\" (its host "
         "copy must be complete)");
}

static void test_swap_in_over_live_bytes(void) {
  build(&f);
  f.swaps[1].dep_count = 1; /* keep only the dep on swap 0 */
  expect("BLOCKS[2] (tensor 0 \"X\") reuses bytes of BLOCKS[1] (tensor 1 \"Y\"), but swap-in 1 "
         "of tensor 0 \"X\" does not wait for step 2 (op \"op2\")");
}

static void test_use_before_swap_in(void) {
  build(&f);
  f.steps[3].dep_count = 0;
  expect("step 3 (op \"op3\") does not wait for swap-in 1 of tensor 0 \"X\" (a use must wait for "
         "its swap-in)");
}

static void test_swap_out_before_write(void) {
  build(&f);
  f.swaps[0].dep_count = 0;
  expect("swap-out 0 of tensor 0 \"X\" does not wait for step 0 (op \"op0\") (the tensor must be "
         "written before it is copied out)");
}

static void test_dep_forward(void) {
  build(&f);
  f.deps[0] = (sfc_plan_dep_t){SFC_NODE_STEP, 1}; /* swap 0 (before step 1) on step 1 */
  expect("swap-out 0 of tensor 0 \"X\" depends on a step 1 issued after it");
}

static void test_live_overlap(void) {
  build(&f);
  f.blocks[3].offset = 0; /* Z over Y at step 2 */
  expect("BLOCKS[1] (tensor 1 \"Y\") and BLOCKS[3] (tensor 2 \"Z\") share bytes [0, 64) while "
         "both are live at step 2");
}

static void test_past_arena_and_misaligned(void) {
  build(&f);
  f.blocks[3].offset = 128;
  expect("BLOCKS[3] (tensor 2 \"Z\"): [128, +64) runs past the arena of 128 bytes");
  build(&f);
  f.blocks[3].offset = 96;
  expect("BLOCKS[3] (tensor 2 \"Z\"): offset 96 is not a multiple of the alignment 64");
}

static void test_use_not_resident(void) {
  build(&f);
  f.step_operands[4] = 0; /* step 3 reads X from block 0, which ended at step 0 */
  expect("step 3 (op \"op3\"): tensor 0 \"X\" is not resident: BLOCKS[0] lives over steps "
         "[0, 0]");
  build(&f);
  f.step_operands[3] = 1; /* step 2's output Z written into Y's block */
  expect("step 2 (op \"op2\"): operand 1 is tensor 2 \"Z\" but BLOCKS[1] holds tensor 1 \"Y\"");
}

static void test_swapped_in_block_without_swap(void) {
  build(&f);
  f.v.swap_count = 1; /* drop the swap-in and the step's wait for it */
  f.steps[3].dep_count = 0;
  f.v.dep_count = 4;
  expect("BLOCKS[2] (tensor 0 \"X\") is marked swapped-in but no swap-in fills it");
}

static void test_budget(void) {
  build(&f);
  f.v.header.budget_bytes = 100;
  expect("header: the over-budget flag is clear but the arena of 128 bytes is over the budget");
  f.v.header.flags = SFC_PLAN_OVER_BUDGET; /* the compiler says so: a result, not a bug */
  expect("the arena needs 128 bytes, more than the budget of 100");
  sfc_error_t err = {0};
  CHECK_OK(sfc_verify_plan(&f.v, false, NULL, &err), err); /* invariants alone hold */
}

static void test_unsorted_swaps(void) {
  build(&f);
  f.swaps[0].issue_step = 3;
  f.swaps[1].issue_step = 1;
  expect("swap 1: swaps are not sorted by issue_step");
}

int main(void) {
  RUN(test_valid_round_trip);
  RUN(test_reuse_without_waiting_for_swap_out);
  RUN(test_swap_in_before_host_copy);
  RUN(test_swap_in_over_live_bytes);
  RUN(test_use_before_swap_in);
  RUN(test_swap_out_before_write);
  RUN(test_dep_forward);
  RUN(test_live_overlap);
  RUN(test_past_arena_and_misaligned);
  RUN(test_use_not_resident);
  RUN(test_swapped_in_block_without_swap);
  RUN(test_budget);
  RUN(test_unsorted_swaps);
  return check_summary();
}
