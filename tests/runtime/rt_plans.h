/* rt_plans.h — hand-built swap plans for the runtime tests (rt_plans.c), valid and
 * deliberately broken; also written to tests/data/runtime/ by make_rt_plans.
 *
 * The swap plan (256-byte tensors, alignment 64):
 *
 *   step  op      reads       writes      blocks (offset, live steps)
 *   0     make_b  x@0         b@256       x [0,3] persistent, b [0,0]
 *         -- swap-out b (256 -> host 0), waits step 0
 *   1     make_a  x@0         a@256       a [1,2]: reuses b's bytes, waits the swap-out
 *   2     use_a   a@256       c@512       c [2,3]
 *         -- swap-in b (host 0 -> 256), waits the swap-out and step 2 (a's last reader)
 *   3     join    c@512 b@256 d@768       b' [3,3] SWAPPED_IN: back-to-back reuse of
 *                                         a's block by a swap-in; waits the swap-in
 */
#ifndef SFC_TEST_RT_PLANS_H
#define SFC_TEST_RT_PLANS_H

#include "plan_builder.h"

typedef enum rt_swap_variant {
  RT_VALID = 0,
  RT_NO_WAIT_STEP1_ON_OUT, /* early reuse: step 1 overwrites b before the swap-out copied it */
  RT_NO_WAIT_IN_ON_STEP2,  /* early reuse by a swap-in: a is overwritten before step 2 reads it */
  RT_NO_WAIT_STEP3_ON_IN,  /* missing wait: step 3 reads b' before the swap-in landed */
  RT_LOST_SWAP_OUT,        /* the swap-out copies nothing: the swap-in brings garbage */
  RT_OVERLAP_C_ON_X,       /* c placed over x while both are live */
  RT_NO_WAIT_IN_ON_OUT,    /* redundant: the swap-in waits step 2, which waits the swap-out */
} rt_swap_variant_t;

/* Appends the swap plan, broken as `variant` says, to an empty builder. */
void rt_swap_plan(pb_t *b, int variant);

#endif /* SFC_TEST_RT_PLANS_H */
