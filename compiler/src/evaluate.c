/* evaluate.c — build, load and replay a candidate plan on the sim device, in memory
 * (see evaluate.h). */
#include "evaluate.h"

#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "passes.h"

sfc_status_t sfc_sim_steady(sfcrt_session_t *session, bool paged, sfcrt_stats_t *out,
                            sfc_error_t *err) {
  sfcrt_stats_t first = {0};
  sfc_status_t st = sfcrt_session_run(session, 1, err);
  if (st == SFC_OK && paged) {
    sfcrt_session_stats(session, &first);
    st = sfcrt_session_run(session, 1, err);
  }
  if (st != SFC_OK)
    return st;
  sfcrt_session_stats(session, out);
  out->stalls -= first.stalls;
  out->stall_us -= first.stall_us;
  out->swaps_in -= first.swaps_in;
  out->swaps_out -= first.swaps_out;
  out->bytes_swapped_in -= first.bytes_swapped_in;
  out->bytes_swapped_out -= first.bytes_swapped_out;
  out->chunks_mapped -= first.chunks_mapped;
  out->chunks_unmapped -= first.chunks_unmapped;
  out->unmap_waits -= first.unmap_waits;
  return SFC_OK;
}

sfc_status_t sfc_evaluate(const sfc_ir_t *ir, const sfcrt_options_t *options, sfc_eval_t *out,
                          sfc_error_t *err) {
  return sfc_evaluate_timeline(ir, options, out, NULL, err);
}

sfc_status_t sfc_evaluate_timeline(const sfc_ir_t *ir, const sfcrt_options_t *options,
                                   sfc_eval_t *out, double *starts, sfc_error_t *err) {
  memset(out, 0, sizeof *out);
  sfc_pool_t pool = {0};
  sfc_plan_view_t view;
  sfcrt_plan_t *plan = NULL;
  sfcrt_session_t *session = NULL;
  sfcrt_options_t opt;
  if (options)
    opt = *options;
  else
    sfcrt_options_init(&opt);
  opt.device = "sim";
  sfc_status_t st = sfc_plan_view_build(ir, &view, &pool, err);
  if (st == SFC_OK) /* validated as a load would, without the file round trip */
    st = sfcrt_plan_wrap_view(&view, NULL, &plan, err);
  if (st == SFC_OK)
    st = sfcrt_session_create(plan, &opt, &session, err);
  bool paged = st == SFC_OK && (opt.sim.paged || sfc_plan_paged(&view));
  sfcrt_stats_t s;
  if (st == SFC_OK)
    st = sfc_sim_steady(session, paged, &s, err);
  if (st == SFC_OK) {
    *out = (sfc_eval_t){.predicted_iteration_s = s.predicted_iteration_us * 1e-6,
                        .compute_s = s.compute_us * 1e-6,
                        .stall_s = s.stall_us * 1e-6,
                        .stalls = s.stalls,
                        .swap_in_bytes = s.bytes_swapped_in,
                        .swap_out_bytes = s.bytes_swapped_out,
                        .h2d_busy_s = s.h2d_busy_us * 1e-6,
                        .d2h_busy_s = s.d2h_busy_us * 1e-6,
                        .peak_device_bytes = s.peak_device_bytes,
                        .over_budget =
                            sfc_plan_paged(&view) && (view.header.flags & SFC_PLAN_OVER_BUDGET),
                        .pages_mapped = paged ? s.chunks_mapped : 0};
    if (starts && s.step_start_us && s.step_count == ir->n_steps)
      for (uint32_t k = 0; k < s.step_count; k++)
        starts[k] = s.step_start_us[k] * 1e-6;
    else if (starts)
      st = sfc_error_set(err, SFC_ERR_INTERNAL, "evaluate: the replay has %u steps, the IR %u",
                         s.step_count, ir->n_steps);
  } else {
    sfc_error_prefix(err, "evaluate");
  }
  sfcrt_session_destroy(session);
  sfcrt_plan_destroy(plan);
  sfc_pool_free_all(&pool);
  return st;
}
