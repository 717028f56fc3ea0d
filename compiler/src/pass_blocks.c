/* pass_blocks.c — the device arena's blocks: one per live tensor residency.
 *
 * With no swapping (scheduler policy none, or until the window scheduler lands)
 * each used tensor is resident over its whole live range: one block, its size the
 * tensor's bytes rounded up to the device alignment. Persistent tensors' blocks
 * carry SFC_BLOCK_PERSISTENT (their contents survive across iterations). The lower
 * bound is the maximum over steps of the live blocks' bytes: no packing of these
 * blocks can use less.
 *
 * Reads: graph tensors (liveness fields), config alignment. Writes: blocks,
 * n_blocks, lower_bound. O(tensors + steps).
 */
#include "passes.h"

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
    if (x->flags & SFC_TENSOR_UNUSED)
      continue;
    uint64_t bytes = (x->bytes + align - 1) & ~(align - 1); /* bytes <= 2^50, align <= 2^20 */
    ir->blocks[nb++] = (sfc_block_t){
        .tensor = t,
        .first_step = x->first_step,
        .last_step = x->last_step,
        .flags = sfc_kind_is_persistent(x->kind) ? SFC_BLOCK_PERSISTENT : 0,
        .bytes = bytes,
    };
    diff[x->first_step] += (int64_t)bytes;
    diff[x->last_step + 1] -= (int64_t)bytes;
  }
  ir->n_blocks = nb;
  int64_t live = 0;
  ir->lower_bound = 0;
  for (uint32_t s = 0; s < ir->n_steps; s++) {
    live += diff[s];
    if ((uint64_t)live > ir->lower_bound)
      ir->lower_bound = (uint64_t)live;
  }
  return SFC_OK;
}
