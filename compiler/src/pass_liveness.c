/* pass_liveness.c — each tensor's live step range, bytes live per step, in-core peak.
 *
 * A persistent tensor (input, param, optimizer) lives over every step. Any other
 * tensor lives from the first step that touches it (the loader guarantees that is
 * a write) to the last step that touches it; an `output` tensor (the loss) lives
 * to the end of the iteration so the framework can read it. A non-persistent
 * tensor no step touches is marked SFC_TENSOR_UNUSED and gets no range.
 * Live bytes per step come from a difference array over the ranges; the in-core
 * peak is their maximum: the memory the iteration needs with nothing swapped.
 *
 * Reads: graph, steps. Writes: tensors' first_step/last_step/UNUSED flag,
 * live_bytes, in_core_peak. O(steps + operands + tensors).
 */
#include "passes.h"

sfc_status_t sfc_pass_liveness(sfc_ir_t *ir, sfc_error_t *err) {
  sfc_graph_t *g = ir->graph;
  uint32_t n = ir->n_steps;
  if (n == 0)
    return sfc_error_set(err, SFC_ERR_INTERNAL, "liveness: no steps");
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    sfc_tensor_t *x = &g->tensors[t];
    x->first_step = x->last_step = SFC_PLAN_NONE;
    x->flags &= ~SFC_TENSOR_UNUSED;
  }
  for (uint32_t s = 0; s < n; s++) {
    const sfc_op_t *op = &g->ops[ir->steps[s].op];
    for (uint32_t i = 0, m = sfc_op_operand_count(op); i < m; i++) {
      sfc_tensor_t *x = &g->tensors[sfc_op_operand(op, i)];
      if (x->first_step == SFC_PLAN_NONE)
        x->first_step = s;
      x->last_step = s;
    }
  }

  /* Difference array: +bytes at first_step, -bytes after last_step. */
  int64_t *diff = sfc_pool_calloc(&ir->pool, (size_t)n + 1, sizeof *diff);
  ir->live_bytes = sfc_pool_calloc(&ir->pool, n, sizeof *ir->live_bytes);
  if (!diff || !ir->live_bytes)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for liveness of %u steps", n);
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    sfc_tensor_t *x = &g->tensors[t];
    if (sfc_kind_is_persistent(x->kind)) {
      x->first_step = 0;
      x->last_step = n - 1;
    } else if (x->first_step == SFC_PLAN_NONE) {
      x->flags |= SFC_TENSOR_UNUSED;
      continue;
    } else if (x->kind == SFC_KIND_OUTPUT) {
      x->last_step = n - 1;
    }
    /* bytes <= 2^50 and their total <= 2^56 (loader limits): no overflow in int64. */
    diff[x->first_step] += (int64_t)x->bytes;
    diff[x->last_step + 1] -= (int64_t)x->bytes;
  }
  int64_t live = 0;
  ir->in_core_peak = 0;
  for (uint32_t s = 0; s < n; s++) {
    live += diff[s];
    ir->live_bytes[s] = (uint64_t)live;
    if ((uint64_t)live > ir->in_core_peak)
      ir->in_core_peak = (uint64_t)live;
  }
  return SFC_OK;
}
