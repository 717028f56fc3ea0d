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
  RT_NO_WAIT_OUT_ON_STEP0, /* the swap-out may copy b before step 0 wrote it */
} rt_swap_variant_t;

/* Appends the swap plan, broken as `variant` says, to an empty builder. */
void rt_swap_plan(pb_t *b, int variant);

/* Appends pb_simple_chain(3) whose input x (tensor 0, block 0) is external: framework
 * memory the caller binds (sfcrt_session_bind), persistent, no arena bytes. */
void rt_external_plan(pb_t *b);

/* Seeded random swap plans (test_rt_random.c, bench_rt_replay.c).
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
#define RT_MAX_N   48
#define RT_MAX_RES (4 * RT_MAX_N)
#define RT_SLOT    256

typedef struct rt_res {
  uint32_t tensor, first, last; /* steps */
  int swapped_in;               /* filled by a swap-in issued before `first` */
  uint32_t out_after;           /* swapped out after `last` (its swap-out issue step), or 0 */
  uint32_t slot, block, swap_in, swap_out;
  int prev;              /* previous occupant residency of the slot, -1 none */
  uint32_t first_reader; /* the first step that uses this residency */
} rt_res_t;

typedef struct rt_gen {
  uint32_t n;
  uint32_t reads[RT_MAX_N][2], read_count[RT_MAX_N];
  rt_res_t res[RT_MAX_RES];
  uint32_t res_count;
  uint32_t victim_step; /* the first step whose swap-in wait is essential, or NONE */
} rt_gen_t;

/* Builds the random plan of `seed` into an empty builder; when `broken`, leaves out
 * the wait of g->victim_step for its swap-in (when the seed has such a step). */
void rt_random_plan(pb_t *b, rt_gen_t *g, uint64_t seed, int broken);

#endif /* SFC_TEST_RT_PLANS_H */
