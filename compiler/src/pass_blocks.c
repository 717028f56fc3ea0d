/* pass_blocks.c — the residencies: one block per live tensor, in the device arena.
 *
 * Each used tensor is resident on the device over its whole live range: one block,
 * its size the tensor's bytes rounded up to the device alignment (the in-core plan).
 * Persistent tensors' blocks carry SFC_BLOCK_PERSISTENT (their contents survive across
 * iterations). The schedule pass (pass_schedule.c) then splits a swapped tensor's range
 * into several device residencies and adds their host staging blocks (arena
 * SFC_ARENA_HOST); the tiler will add PARTIAL blocks holding one box. The lower bound
 * is the maximum over steps
 * of the device blocks' bytes (shared sweep, sfc/steps.h): no packing of these
 * blocks can use less.
 *
 * Reads: graph tensors (bytes, kind), live, config alignment. Writes: blocks,
 * n_blocks, lower_bound. O(tensors + steps).
 */
#include "passes.h"
#include "sfc/steps.h"

sfc_status_t sfc_pass_blocks(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  uint64_t align = ir->config->device.alignment;
  ir->blocks = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *ir->blocks);
  int64_t *diff = sfc_pool_calloc(&ir->pool, (size_t)ir->n_steps + 1, sizeof *diff);
  if (!ir->blocks || !diff)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %u blocks", g->n_tensors);
  uint32_t nb = 0;
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    const sfc_live_t *l = &ir->live[t];
    if (sfc_ir_tensor_unused(ir, t))
      continue;
    uint64_t bytes = (x->bytes + align - 1) & ~(align - 1); /* bytes <= 2^50, align <= 2^20 */
    ir->blocks[nb++] = (sfc_block_t){
        .tensor = t,
        .first_step = l->first_step,
        .last_step = l->last_step,
        .flags = sfc_kind_is_persistent(x->kind) ? SFC_BLOCK_PERSISTENT : 0,
        .box = SFC_PLAN_NONE,
        .arena = SFC_ARENA_DEVICE,
        .bytes = bytes,
    };
    sfc_sweep_add(diff, l->first_step, l->last_step, bytes);
  }
  ir->n_blocks = nb;
  ir->lower_bound = sfc_sweep_peak(diff, ir->n_steps, NULL);
  return SFC_OK;
}
