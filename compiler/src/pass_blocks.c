/* pass_blocks.c — the residencies: one block per live tensor, in the device arena.
 *
 * Each used tensor is resident on the device over its whole live range: one block,
 * its size the tensor's bytes rounded up to the device alignment (the in-core plan).
 * Persistent tensors' blocks carry SFC_BLOCK_PERSISTENT (their contents survive across
 * iterations). The schedule pass (pass_schedule.c) then splits a swapped tensor's range
 * into several device residencies and adds their host staging blocks (arena
 * SFC_ARENA_HOST). A tensor the tiler made per-tile (its uses flagged
 * SFC_USE_PARTIAL) gets instead one PARTIAL block per tile that uses it: the hull of the
 * tile's boxes of it (appended to boxes), live over that tile's steps. The lower bound
 * is the maximum over steps of the device blocks' bytes (shared sweep, sfc/steps.h): no
 * packing of these blocks can use less.
 *
 * Reads: graph tensors (bytes, kind, shape), live, steps, uses, boxes, config alignment.
 * Writes: blocks, n_blocks, boxes (after the tiler's n_use_boxes: each run replaces its
 * own), n_boxes, cap_boxes, lower_bound. O(tensors + uses).
 */
#include <string.h>

#include "passes.h"
#include "sfc/steps.h"
#include "tiler.h"

typedef struct runs_ctx {
  sfc_ir_t *ir;
  uint32_t nb;
  int64_t *diff;
} runs_ctx_t;

/* One PARTIAL block per run of a per-tile tensor (tiler.h), its box appended. */
static void add_run(void *p, uint32_t tensor, uint32_t first, uint32_t last,
                    const sfc_plan_box_t *hull) {
  runs_ctx_t *c = p;
  sfc_ir_t *ir = c->ir;
  uint64_t align = ir->config->device.alignment;
  uint64_t bytes = sfc_ft_plan_box_bytes(&ir->graph->tensors[tensor], hull);
  bytes = (bytes + align - 1) & ~(align - 1);
  ir->boxes[ir->n_boxes] = *hull;
  ir->blocks[c->nb++] = (sfc_block_t){.tensor = tensor,
                                      .first_step = first,
                                      .last_step = last,
                                      .flags = SFC_BLOCK_PARTIAL,
                                      .box = ir->n_boxes++,
                                      .arena = SFC_ARENA_DEVICE,
                                      .bytes = bytes};
  sfc_sweep_add(c->diff, first, last, bytes);
}

sfc_status_t sfc_pass_blocks(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  uint64_t align = ir->config->device.alignment;
  /* per-tile tensors, and how many (tensor, tile) runs they have at most */
  bool *partial = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *partial);
  if (!partial)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %u blocks", g->n_tensors);
  uint64_t partial_uses = 0;
  for (uint32_t u = 0; u < ir->n_uses; u++)
    if (ir->uses[u].flags & SFC_USE_PARTIAL) {
      partial[ir->uses[u].tensor] = true;
      partial_uses++;
    }
  if ((uint64_t)g->n_tensors + partial_uses > SFC_PLAN_MAX_RECORDS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "too many per-tile blocks for a plan");
  ir->blocks = sfc_pool_calloc(&ir->pool, g->n_tensors + partial_uses + 1, sizeof *ir->blocks);
  int64_t *diff = sfc_pool_calloc(&ir->pool, (size_t)ir->n_steps + 1, sizeof *diff);
  if (!ir->blocks || !diff)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %u blocks", g->n_tensors);
  uint32_t nb = 0;
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    const sfc_live_t *l = &ir->live[t];
    if (sfc_ir_tensor_unused(ir, t) || partial[t])
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
  /* a rerun (every schedule round) replaces the per-tile buffers' boxes of the last run:
   * appending them again grew a tiled U-Net's plan to 639,032 boxes (43,580 in use) */
  ir->n_boxes = ir->n_use_boxes;
  if (partial_uses) { /* room for a block and a box per run: at most one per use */
    if ((uint64_t)ir->n_use_boxes + partial_uses > ir->cap_boxes) {
      uint32_t cap = ir->n_use_boxes + (uint32_t)partial_uses;
      sfc_plan_box_t *boxes = sfc_pool_calloc(&ir->pool, cap, sizeof *boxes);
      if (!boxes)
        return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for per-tile blocks");
      memcpy(boxes, ir->boxes, ir->n_use_boxes * sizeof *boxes);
      ir->boxes = boxes;
      ir->cap_boxes = cap;
    }
    runs_ctx_t c = {.ir = ir, .nb = nb, .diff = diff};
    sfc_status_t st = sfc_ft_partial_runs(ir, add_run, &c, err);
    if (st != SFC_OK)
      return st;
    nb = c.nb;
  }
  ir->n_blocks = nb;
  ir->lower_bound = sfc_sweep_peak(diff, ir->n_steps, NULL);
  return SFC_OK;
}
