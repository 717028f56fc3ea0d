/* pass_liveness.c — each tensor's uses and live step range, bytes live per step,
 * in-core peak.
 *
 * From the steps' uses: every tensor's use steps (sorted, distinct; the window
 * scheduler needs every use, not only the first and last), its first and last step.
 * A persistent tensor (input, param, optimizer) lives over every step. Any other
 * tensor lives from the first step that touches it (the loader guarantees that is a
 * write) to the last; an `output` tensor (the loss) lives to the end of the iteration
 * so the framework can read it. A non-persistent tensor no step touches has no range
 * (first_step SFC_PLAN_NONE): the plan marks it SFC_TENSOR_UNUSED and it gets no block.
 * Live bytes per step come from the shared sweep (sfc/steps.h); a tensor the tiler made
 * per tile counts, over each tile's run of steps, only its box there. The in-core peak
 * is their maximum: the memory the iteration needs with nothing swapped.
 *
 * Reads: graph tensors (bytes, kind), steps, uses. Writes: live, use_steps,
 * live_bytes, in_core_peak. O(steps + uses + tensors).
 */
#include "passes.h"
#include "sfc/steps.h"
#include "tiler.h"

typedef struct runs_ctx {
  const sfc_graph_t *g;
  int64_t *diff;
} runs_ctx_t;

/* A per-tile tensor is live, over each run of its tile's steps, for its box's bytes. */
static void add_run(void *p, uint32_t tensor, uint32_t first, uint32_t last,
                    const sfc_plan_box_t *hull) {
  runs_ctx_t *c = p;
  sfc_sweep_add(c->diff, first, last, sfc_ft_plan_box_bytes(&c->g->tensors[tensor], hull));
}

sfc_status_t sfc_pass_liveness(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  uint32_t n = ir->n_steps;
  if (n == 0)
    return sfc_error_set(err, SFC_ERR_INTERNAL, "liveness: no steps");
  sfc_live_t *live = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *live);
  uint32_t *use_steps = sfc_pool_calloc(&ir->pool, ir->n_uses ? ir->n_uses : 1, sizeof *use_steps);
  int64_t *diff = sfc_pool_calloc(&ir->pool, (size_t)n + 1, sizeof *diff);
  ir->live_bytes = sfc_pool_calloc(&ir->pool, n, sizeof *ir->live_bytes);
  if (!live || !use_steps || !diff || !ir->live_bytes)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for liveness of %u steps", n);
  for (uint32_t t = 0; t < g->n_tensors; t++)
    live[t].first_step = live[t].last_step = SFC_PLAN_NONE;
  /* tensors the tiler made per tile: their bytes are their tiles' boxes' */
  bool *partial = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *partial);
  if (!partial)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for liveness of %u steps", n);
  bool any_partial = sfc_ft_mark_partial(ir, partial) > 0;

  /* Count each tensor's distinct use steps (steps come in order, so a repeat within
   * one step is the previous entry), lay the lists out, then fill them. */
  for (uint32_t s = 0; s < n; s++)
    for (uint32_t k = 0; k < ir->steps[s].use_count; k++) {
      sfc_live_t *x = &live[ir->uses[ir->steps[s].use_begin + k].tensor];
      if (x->last_step != s) {
        if (x->first_step == SFC_PLAN_NONE)
          x->first_step = s;
        x->last_step = s;
        x->use_count++;
      }
    }
  uint32_t at = 0;
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    live[t].use_begin = at;
    at += live[t].use_count;
    live[t].use_count = 0;
  }
  for (uint32_t s = 0; s < n; s++)
    for (uint32_t k = 0; k < ir->steps[s].use_count; k++) {
      sfc_live_t *x = &live[ir->uses[ir->steps[s].use_begin + k].tensor];
      if (x->use_count == 0 || use_steps[x->use_begin + x->use_count - 1] != s)
        use_steps[x->use_begin + x->use_count++] = s;
    }

  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    sfc_live_t *l = &live[t];
    if (sfc_kind_is_persistent(x->kind)) {
      l->first_step = 0;
      l->last_step = n - 1;
    } else if (l->first_step == SFC_PLAN_NONE) {
      continue;
    } else if (x->kind == SFC_KIND_OUTPUT) {
      l->last_step = n - 1;
    }
    /* bytes <= 2^50 and their total <= 2^56 (loader limits): no overflow in int64. */
    if (!partial[t])
      sfc_sweep_add(diff, l->first_step, l->last_step, x->bytes);
  }
  runs_ctx_t rc = {g, diff};
  if (any_partial) {
    sfc_status_t st = sfc_ft_partial_runs(ir, add_run, &rc, err);
    if (st != SFC_OK)
      return st;
  }
  ir->live = live;
  ir->use_steps = use_steps;
  ir->in_core_peak = sfc_sweep_peak(diff, n, ir->live_bytes);
  return SFC_OK;
}
