/* evaluate.h — predict a candidate plan without writing a file.
 *
 * Schedulers and tuners (window: auto, the tile grid under tiling: auto) compare
 * candidates by calling sfc_evaluate on an IR whose blocks are packed (or at least
 * placed): it builds the plan view from the IR exactly as the plan pass does
 * (sfc_plan_view_build), serialises it in memory, loads it through the runtime's
 * reader (so every check the runtime makes on a real plan file applies), and replays
 * one iteration on the runtime's `sim` device — for a paged plan two, and the second is
 * the prediction: the steady state, the pages the first left mapped still mapped, as
 * `sfc simulate` reports it (each page mapped costs the host options->sim.page_map_s:
 * the pipeline's last prediction passes device.page_map_cost, its choices 0). Passes never
 * call each other: a tuner calls this function, not the passes after it.
 *
 *   sfc_eval_t e;
 *   SFC_TRY(sfc_evaluate(ir, NULL, &e, err));   // e.predicted_iteration_s, e.stall_s
 *
 * Cost: O(plan size) to build, write and validate, plus one sim iteration
 * (O(steps + swaps + deps); two, as above); nothing is kept.
 */
#ifndef SFC_EVALUATE_H
#define SFC_EVALUATE_H

#include "ir.h"
#include "sfcrt.h"

typedef struct sfc_eval {
  double predicted_iteration_s; /* sim: end of the last queue to drain */
  double compute_s;             /* sum of the steps' times: the iteration without stalls */
  double stall_s;               /* time the compute queue waited for copies */
  uint64_t stalls;              /* waits that had to wait */
  uint64_t swap_in_bytes;       /* traffic of one iteration */
  uint64_t swap_out_bytes;
  double h2d_busy_s, d2h_busy_s; /* time each copy engine moved data */
  uint64_t peak_device_bytes;    /* max over steps of live device block bytes */
  bool over_budget;              /* a paged arena whose page peak is over the budget (the
                                    sim replays it with a pool of that peak all the same) */
  uint64_t pages_mapped;         /* paged: pages mapped in the iteration predicted */
} sfc_eval_t;

/* Replays ir's plan view on the sim device. options: NULL for the defaults (the
 * link from the plan's META, page maps free); its device field is ignored (always
 * "sim"). Errors:
 * those of the plan builder, the runtime's loader (an IR whose view breaks a plan
 * invariant is SFC_ERR_VERIFY or SFC_ERR_BAD_INPUT with the loader's reason), and
 * SFC_ERR_OUT_OF_MEMORY. */
sfc_status_t sfc_evaluate(const sfc_ir_t *ir, const sfcrt_options_t *options, sfc_eval_t *out,
                          sfc_error_t *err);

/* As sfc_evaluate, and the start of every step on the sim clock (after its stall), in
 * seconds, into starts[0 .. ir->n_steps) when starts is not NULL. */
sfc_status_t sfc_evaluate_timeline(const sfc_ir_t *ir, const sfcrt_options_t *options,
                                   sfc_eval_t *out, double *starts, sfc_error_t *err);

/* Runs a sim session for the iteration a prediction reports: one; a paged replay two,
 * and the second (the steady state: the pages the first left mapped stay mapped). *out:
 * the session's stats, the counters that add up over iterations (stalls, swaps, bytes,
 * chunks mapped and unmapped, unmap waits) made that iteration's. sfc simulate and
 * sfc_evaluate both report this. */
sfc_status_t sfc_sim_steady(sfcrt_session_t *session, bool paged, sfcrt_stats_t *out,
                            sfc_error_t *err);

#endif /* SFC_EVALUATE_H */
