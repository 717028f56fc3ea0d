/* passes.h — every compiler pass has this one signature and one file.
 *
 * pipeline.c calls them in order; passes never call each other. Each file opens
 * with the algorithm, its source, the IR fields it reads and writes, and its cost.
 */
#ifndef SFC_PASSES_H
#define SFC_PASSES_H

#include "ir.h"

typedef sfc_status_t (*sfc_pass_fn)(sfc_ir_t *ir, sfc_error_t *err);

/* Helpers the schedule and slack passes share (defined in pass_schedule.c). */
/* Counting sort of the pairs (step, swap) by step: the swaps of step k are
 * (*out_list)[at[k] .. at[k + 1]), at the returned array; NULL when out of memory (then
 * nothing is allocated). Both arrays are the caller's to free. */
uint32_t *sfc_group_by_step(const uint32_t (*pairs)[2], uint32_t n, uint32_t steps,
                            uint32_t **out_list);
int sfc_cmp_u64(const void *a, const void *b); /* qsort's order of uint64_t keys */
/* FNV-1a one 64-bit word at a time, from SFC_HASH_SEED: the keys of the passes' memos
 * (the traffic LP's values and scale factors, the bound's chain). */
#define SFC_HASH_SEED 0xcbf29ce484222325ull
static inline uint64_t sfc_hash_mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull;
}
/* How step `step` touches `tensor`: its uses' SFC_ACCESS_* bits together (0: not at all). */
unsigned sfc_step_access(const sfc_ir_t *ir, uint32_t tensor, uint32_t step);
/* scheduler.prefetch_limit and a fixed scheduler.window (policy window only): *out =
 * [n_steps] the earliest step a swap-in read at step k may be issued before — no more
 * than prefetch_limit steps ahead of k, and no earlier than the first step r whose
 * variable sequence (the bytes of every step's operands, in order) from r through k
 * fits the window (k itself when step k alone does not) — or NULL when neither is set.
 * Returns false when out of memory. The caller frees *out. */
bool sfc_swap_in_floor(const sfc_ir_t *ir, uint32_t **out);

sfc_status_t sfc_pass_steps(sfc_ir_t *ir, sfc_error_t *err);    /* pass_steps.c */
sfc_status_t sfc_pass_tile(sfc_ir_t *ir, sfc_error_t *err);     /* tiler.c */
sfc_status_t sfc_pass_liveness(sfc_ir_t *ir, sfc_error_t *err); /* pass_liveness.c */
sfc_status_t sfc_pass_blocks(sfc_ir_t *ir, sfc_error_t *err);   /* pass_blocks.c */
sfc_status_t sfc_pass_schedule(sfc_ir_t *ir, sfc_error_t *err); /* pass_schedule.c */
sfc_status_t sfc_pass_pack(sfc_ir_t *ir, sfc_error_t *err);     /* pass_pack.c */
/* A paged arena (sfc_ir_paged): ir->page_peak_bytes from the blocks' offsets and the swaps
 * as plan invariant 59 counts them (a swap-out's block through that copy's issue step);
 * 0 otherwise. O(blocks log blocks). pass_pack.c */
sfc_status_t sfc_ir_page_peak(sfc_ir_t *ir, sfc_error_t *err);
/* The same count into *out, the IR untouched. */
sfc_status_t sfc_ir_count_pages(const sfc_ir_t *ir, uint64_t *out, sfc_error_t *err);
sfc_status_t sfc_pass_slack(sfc_ir_t *ir, sfc_error_t *err); /* pass_slack.c */
/* After the last round's slack pass (the pipeline; tests): undoes its moves when the plan
 * replays slower on sim with them (sets slack_reverted). Not a pass: two replays. Cannot
 * fail: a plan the evaluator refuses keeps its moves. */
void sfc_slack_judge(sfc_ir_t *ir);
/* After the pipeline's choice (pipeline; tests): copies issued ahead of one waited for
 * earlier move behind it, swap-outs move earlier towards their blocks' last writes, and
 * swap-ins ahead of copies read before them into free bytes of the arena, where the plan
 * then replays faster on sim (slack_delayed_in, slack_delayed_out, slack_advanced_out,
 * slack_advanced_in, slack_reorder_s). Not a pass: up to three times REORDER_WORK of
 * replays; the caller rebuilds the plan view. Errors: SFC_ERR_OUT_OF_MEMORY,
 * SFC_ERR_LIMIT. */
sfc_status_t sfc_slack_reorder(sfc_ir_t *ir, sfc_error_t *err);
sfc_status_t sfc_pass_plan(sfc_ir_t *ir, sfc_error_t *err);   /* pass_plan.c */
sfc_status_t sfc_pass_verify(sfc_ir_t *ir, sfc_error_t *err); /* pass_verify.c */
sfc_status_t sfc_pass_bound(sfc_ir_t *ir, sfc_error_t *err);  /* pass_bound.c */

/* Not a pass: the plan view builder the plan pass runs on ir->plan, and the
 * in-memory evaluator (evaluate.h) runs on a candidate, into its own pool. */
sfc_status_t sfc_plan_view_build(const sfc_ir_t *ir, sfc_plan_view_t *view, sfc_pool_t *pool,
                                 sfc_error_t *err);

#endif /* SFC_PASSES_H */
