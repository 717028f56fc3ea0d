/* pass_steps.c — the step sequence and what each step touches.
 *
 * One compute step per op, in graph order (the FT-segment tiler will replace the
 * steps of a tiled segment with one step per (tile, op)). Each step gets its uses:
 * one per op operand in the op's order (inputs, outputs, then the workspace), the
 * whole tensor, with its access — read for an input, write for an output or the
 * workspace, read-write for a tensor that is both an input and an output of the op
 * (an in-place op). This is the only pass after loading that reads the graph's
 * operand lists; every later pass reads uses.
 *
 * Each step's predicted duration is its op's time on the profile (time_model.h: the
 * measured time_us when the graph was recorded on the profile's device, else the
 * roofline of the op's FLOPs and bytes), scaled by the step's share of the op (1 here;
 * sfc/steps.h); unknown (< 0) only when neither applies, so the sim device's own
 * fallbacks (FLOP rate, default op time) still apply.
 *
 * Reads: graph->ops. Writes: steps, n_steps, uses, n_uses. O(ops + operands).
 */
#include "passes.h"
#include "sfc/steps.h"
#include "time_model.h"

sfc_status_t sfc_pass_steps(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  uint64_t n_uses = 0;
  for (uint32_t i = 0; i < g->n_ops; i++)
    n_uses += sfc_op_operand_count(&g->ops[i]);
  if (n_uses > SFC_PLAN_MAX_RECORDS) /* the loader's operand limit keeps this far below */
    return sfc_error_set(err, SFC_ERR_LIMIT, "%llu operands exceed the plan limit",
                         (unsigned long long)n_uses);
  ir->steps = sfc_pool_calloc(&ir->pool, g->n_ops ? g->n_ops : 1, sizeof *ir->steps);
  ir->uses = sfc_pool_calloc(&ir->pool, n_uses ? n_uses : 1, sizeof *ir->uses);
  if (!ir->steps || !ir->uses)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %u steps", g->n_ops);
  uint32_t u = 0;
  for (uint32_t i = 0; i < g->n_ops; i++) {
    const sfc_op_t *op = &g->ops[i];
    uint32_t m = sfc_op_operand_count(op);
    ir->steps[i] =
        (sfc_step_t){.op = i,
                     .segment = SFC_PLAN_NONE,
                     .tile = SFC_PLAN_NONE,
                     .use_begin = u,
                     .use_count = m,
                     .time_us = sfc_step_time_us(sfc_time_op_us(g, op, &ir->config->device), 1)};
    for (uint32_t k = 0; k < m; k++) {
      uint32_t t = sfc_op_operand(op, k);
      uint8_t access = k < op->n_inputs ? SFC_ACCESS_READ : SFC_ACCESS_WRITE;
      if ((access == SFC_ACCESS_READ && sfc_op_writes(op, t)) ||
          (access == SFC_ACCESS_WRITE && k < op->n_inputs + op->n_outputs && sfc_op_reads(op, t)))
        access = SFC_ACCESS_RW;
      ir->uses[u++] = (sfc_use_t){.tensor = t, .box = SFC_PLAN_NONE, .access = access};
    }
  }
  ir->n_steps = g->n_ops;
  ir->n_uses = u;
  return SFC_OK;
}
