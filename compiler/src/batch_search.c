/* batch_search.c — see batch_search.h. */
#include "batch_search.h"

#include "batch_scale.h"
#include "pipeline.h"

sfc_status_t sfc_batch_probe(sfc_graph_t *g, const sfc_config_t *cfg, int64_t batch, bool full,
                             sfc_batch_probe_t *out, sfc_error_t *err) {
  *out = (sfc_batch_probe_t){0};
  SFC_TRY(sfc_graph_batch_scale(g, batch, err));
  sfc_ir_t ir;
  sfc_ir_init(&ir, g, cfg);
  sfc_compile_options_t opt = {.stop_after = full ? NULL : "schedule"};
  sfc_status_t st = sfc_compile_ir(&ir, &opt, err);
  if (st == SFC_OK) {
    out->floor_fits = !ir.schedule_infeasible;
    out->floor_bytes = ir.schedule_floor;
    out->in_core_s = ir.compute_s;
    if (full) {
      out->fits = ir.fits_budget;
      out->predicted_s = ir.predicted_iteration_s;
      out->arena_bytes = ir.arena_bytes;
    }
  }
  sfc_ir_deinit(&ir);
  return st;
}

sfc_status_t sfc_batch_floor_limit(sfc_graph_t *g, const sfc_config_t *cfg, int64_t lo, int64_t hi,
                                   int64_t *out, sfc_error_t *err) {
  int64_t at = g->batch, ok = lo - 1; /* the floor fits at ok (or ok == 0), not at hi */
  sfc_status_t st = SFC_OK;
  while (st == SFC_OK && hi - ok > 1) {
    int64_t mid = ok + (hi - ok) / 2;
    sfc_batch_probe_t p;
    st = sfc_batch_probe(g, cfg, mid, false, &p, err);
    if (st == SFC_OK && p.floor_fits)
      ok = mid;
    else if (st == SFC_OK)
      hi = mid;
  }
  sfc_error_t ignored;
  if (sfc_graph_batch_scale(g, at, st == SFC_OK ? err : &ignored) != SFC_OK && st == SFC_OK)
    st = SFC_ERR_INTERNAL;
  *out = ok;
  return st;
}
