/* batch_scale.h — rescale a loaded graph to another batch size (`sfc compile --batch N`).
 *
 *   if (sfc_graph_batch_scale(graph, 256, &err) != SFC_OK) ...   // after load, before the pipeline
 *
 * The graph must carry the root field "batch" (the batch it was recorded at; sfc-export
 * writes it). See batch_scale.c for the rules and docs/exporter.md for the measured error.
 */
#ifndef SFC_BATCH_SCALE_H
#define SFC_BATCH_SCALE_H

#include <stdint.h>

#include "ir.h"

/* Largest batch `--batch` accepts. */
#define SFC_MAX_BATCH (INT64_C(1) << 31)

/* Scales every tensor with batch_axis >= 0 (bytes and shape[batch_axis]) and the FLOPs
 * and workspace of every op that touches one by batch / graph->batch, and that op's time
 * by the same ratio except for its batch-independent part time_fixed_us; sets
 * graph->batch = batch. Params, optimizer state and other tensors keep their size.
 * SFC_ERR_BAD_INPUT when the graph has no "batch" or a batch dim is not a multiple of
 * it; SFC_ERR_LIMIT when a scaled size passes the loader's limits (ir.h) or a time
 * would not be finite; the graph is unchanged on error. O(tensors + operands). */
sfc_status_t sfc_graph_batch_scale(sfc_graph_t *graph, int64_t batch, sfc_error_t *err);

#endif /* SFC_BATCH_SCALE_H */
