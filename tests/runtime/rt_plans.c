/* rt_plans.c — the swap plan of rt_plans.h and its broken variants. */
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
