/* verify.h — the compiler's verifier: checks any plan view against the invariants
 * of sfc/plan_format.h, independently of the runtime's loader.
 *
 *   sfc_verify_stats_t stats;
 *   if (sfc_verify_plan(view, true, &stats, &err) != SFC_OK)
 *     ...   // SFC_ERR_VERIFY: "step 12 (op 7 \"conv2\"): operand 1 ..."
 *
 * Checked, in order (the first violation is reported):
 *  1. references: every index in range, op operand lists and step operand lists
 *     consistent, swaps sorted by issue_step, strings terminated;
 *  2. blocks: offset aligned, offset + bytes <= arena (host blocks: host arena),
 *     bytes >= the tensor's bytes, step range inside the plan;
 *  3. no live overlap: no two blocks of one arena whose step ranges intersect
 *     share a byte (O(n log n) sweep);
 *  4. every use resident: each step operand is a block of that tensor live at that
 *     step; a swapped-in block is filled by exactly one swap-in that completes
 *     before any step uses it; a swap-in's host copy was written by a swap-out that
 *     completed before it; a swap-out starts after the steps that wrote its block;
 *  5. events ordered: every dependency points backwards in issue order, and when a
 *     block reuses bytes of an earlier block, every step and copy that touched the
 *     earlier one completes before the new one is written. "Completes before" is
 *     decided with vector clocks over the three queues (compute, H2D, D2H);
 *  6. budget (when check_budget): arena_bytes <= budget_bytes, host likewise.
 * Cross-iteration reuse is safe by the runtime's rule that an iteration ends only
 * after both copy queues drained (docs/plan-format.md).
 */
#ifndef SFC_VERIFY_H
#define SFC_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "sfc/plan_format.h"
#include "sfc/status.h"

typedef struct sfc_verify_stats {
  uint32_t blocks, host_blocks, steps, swaps, deps;
  uint64_t reuse_checks; /* (earlier block, later block) byte-sharing pairs checked */
} sfc_verify_stats_t;

sfc_status_t sfc_verify_plan(const sfc_plan_view_t *view, bool check_budget,
                             sfc_verify_stats_t *out_stats, sfc_error_t *err);

#endif /* SFC_VERIFY_H */
