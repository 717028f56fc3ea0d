/* pass_steps.c — the step sequence: one compute step per op, in graph order.
 *
 * The FT-segment tiler will replace the steps of a tiled segment with one step
 * per (tile, op); until then a step is an op.
 * Reads: graph->ops. Writes: steps, n_steps. O(ops).
 */
#include "passes.h"

sfc_status_t sfc_pass_steps(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  ir->steps = sfc_pool_calloc(&ir->pool, g->n_ops, sizeof *ir->steps);
  if (!ir->steps)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %u steps", g->n_ops);
  for (uint32_t i = 0; i < g->n_ops; i++)
    ir->steps[i] = (sfc_step_t){.op = i, .segment = SFC_PLAN_NONE, .tile = SFC_PLAN_NONE};
  ir->n_steps = g->n_ops;
  return SFC_OK;
}
