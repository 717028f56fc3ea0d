/* ir.c — lifetime of the IR and the graph. Everything lives in pools but the IR's two
 * per-step timelines (step_bound_s, step_start_s), the bound's waits, which each round
 * rewrites, and the bound pass's memo of them. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

void sfc_ir_init(sfc_ir_t *ir, sfc_graph_t *graph, const sfc_config_t *config) {
  memset(ir, 0, sizeof *ir);
  ir->graph = graph;
  ir->config = config;
}

void sfc_ir_deinit(sfc_ir_t *ir) {
  free(ir->step_bound_s); /* malloc'd: rewritten by every round, not pool memory */
  free(ir->step_start_s);
  free(ir->bound_waits);
  free(ir->bound_memo.starts);
  free(ir->bound_memo.waits);
  sfc_pool_free_all(&ir->pool);
  memset(ir, 0, sizeof *ir);
}

void sfc_graph_destroy(sfc_graph_t *graph) {
  if (!graph)
    return;
  sfc_pool_t pool = graph->pool; /* the graph struct itself may live in its own pool */
  sfc_pool_free_all(&pool);
  free(graph);
}

void sfc_ir_tiling_counts(const sfc_ir_t *ir, uint32_t *segments, uint32_t *tiles,
                          uint32_t *recomputed) {
  *segments = *tiles = *recomputed = 0;
  for (uint32_t k = 0; k < ir->n_segments; k++)
    if (!(ir->segments[k].flags & SFC_SEGMENT_BACKWARD)) {
      (*segments)++;
      *tiles += ir->segments[k].tile_count;
    }
  for (uint32_t s = 0; s < ir->n_steps; s++)
    *recomputed += (ir->steps[s].flags & SFC_STEP_RECOMPUTE) != 0;
}
