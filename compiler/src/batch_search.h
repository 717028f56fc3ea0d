/* batch_search.h — the largest batch a budget allows (sfc compile's floor line, sfc
 * maxbatch). Each probe rescales the graph in place (batch_scale.h) and runs the
 * pipeline; every function leaves the graph at the batch it had on entry (or reports
 * that it could not).
 *
 *   int64_t b;
 *   SFC_TRY(sfc_batch_floor_limit(graph, &cfg, 1, 4096, &b, err)); // largest in [1, 4095]
 *
 * The schedule floor (ir.h schedule_floor) grows with the batch, so its limit is found
 * by bisection exactly; whether a whole plan fits (its packed arena) is assumed monotone
 * in the batch too, which packing does not promise: sfc maxbatch says so.
 */
#ifndef SFC_BATCH_SEARCH_H
#define SFC_BATCH_SEARCH_H

#include <stdint.h>

#include "config.h"
#include "ir.h"

/* What one batch gives. */
typedef struct sfc_batch_probe {
  bool floor_fits;      /* some schedule can reach the budget (schedule floor <= budget) */
  bool fits;            /* full: the packed plan fits the budget */
  double predicted_s;   /* full: predicted iteration (sim) */
  double in_core_s;     /* the steps' times summed: the iteration with unlimited memory */
  uint64_t floor_bytes; /* the schedule floor (0 when nothing is scheduled) */
  uint64_t arena_bytes; /* full: the packed device arena */
} sfc_batch_probe_t;

/* Rescales g to `batch` and compiles it under cfg: `full` runs every pass, otherwise the
 * passes up to schedule (fast: no packing; fits and predicted_s are not set). Leaves g at
 * `batch`. */
sfc_status_t sfc_batch_probe(sfc_graph_t *g, const sfc_config_t *cfg, int64_t batch, bool full,
                             sfc_batch_probe_t *out, sfc_error_t *err);

/* The largest batch in [lo, hi) whose schedule floor fits cfg's budget, by bisection,
 * given that it fits at lo - 1 or lo == 1 (*out = lo - 1 when none does: 0 when not even
 * batch 1). Restores g's batch. */
sfc_status_t sfc_batch_floor_limit(sfc_graph_t *g, const sfc_config_t *cfg, int64_t lo, int64_t hi,
                                   int64_t *out, sfc_error_t *err);

#endif /* SFC_BATCH_SEARCH_H */
