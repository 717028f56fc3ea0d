/* verify.h — the compiler's verifier: checks any plan view against the invariants
 * of docs/plan-format.md ("Invariants" 4-58), independently of the runtime's loader
 * (runtime/src/plan_validate.c enforces the same list with its own code; the two
 * share only sfc/plan_format.h). tests/plan/test_plan_rules.c runs both on one file
 * per invariant; the mutant census (tests/plan/plan_mutants.c) checks they agree.
 *
 *   sfc_verify_stats_t stats;
 *   if (sfc_verify_plan(view, true, &stats, &err) != SFC_OK)
 *     ...   // SFC_ERR_VERIFY: "step 12 (op 7 \"conv2\"): operand 1 ..."
 *
 * Checked, in order (the first violation is reported):
 *  1. references (4-13): every index in range, enums known, strings terminated;
 *  2. the header's over-budget flag (14);
 *  3. blocks (15-29): step ranges, alignment, arena bounds, sizes, EXTERNAL,
 *     PERSISTENT and UNUSED rules, PARTIAL boxes; no live overlap in either arena
 *     (18, 19; O(n log n) sweep);
 *  4. steps (30-33, 36-38): operands of the right tensor, resident, boxes, PARTIAL
 *     containment, TIMED durations, tiles with boxes;
 *  5. segments and boxes (35, 36, 39, 40): grid, order, boxes inside their tensors,
 *     each handed-on tiled output covered exactly once; ops' maps (57) and each tile
 *     step's boxes exactly those its op's map requires (58);
 *  6. order (41, 49): swaps sorted, deps backwards in issue order; then vector clocks
 *     over the three queues (compute, H2D, D2H) decide "completes before";
 *  7. swaps (42-47): tensor, bytes, host part, issue steps, SWAPPED_IN fills;
 *  8. data flow (34, 48, 50): produced blocks written first, swapped-in blocks read
 *     after their swap-in;
 *  9. copies (51-53): a swap-out after the last write of its block, a swap-in after
 *     the swap-out that wrote its host copy, no write under a running copy;
 * 10. reuse (54, 55): when a block reuses bytes of an earlier block, every step and
 *     copy that touched the earlier one completes before the new one is touched;
 * 11. budget (when check_budget, not an invariant): arena_bytes <= budget_bytes, host
 *     likewise.
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
