/* pack_clock.h — the clock the anytime packers ("auto", "search", "mip") stop by.
 *
 * A packer that stops at a time limit measured on the wall clock gives a result that
 * depends on the machine and its load: a busy machine runs fewer restarts, and the
 * compiler's plan changes with it. By default (sfc_pack_options_t.wall_clock false)
 * the limit is measured on the *work clock* instead: every run a packer makes is
 * charged its modelled cost (the models below, in seconds of the machine they were
 * calibrated on: a 2-core x86-64 VM, 2026-11), so the same input and limit do the same
 * work and give the same packing anywhere; a faster machine only finishes sooner. The
 * wall clock stays as a backstop: past SFC_PACK_WALL_FACTOR x the limit (plus a second)
 * a run stops anyway and reports `wall_stopped` — its result may then depend on the
 * machine (a model far below a run's real cost, or a machine far slower than the one
 * calibrated).
 *
 * The models (docs/algorithms.md "The work clock"), from runs on minimalloc's
 * challenging set and the idealloc traces (56 to 62,185 blocks):
 *   best-fit       6 ns x n log2(n)^2 + 200 ns x n     (measured 3.6-8.2 ns x n log2^2 n)
 *   greedy          15 ns per pair of time-overlapping blocks + 100 ns x n
 *                                                     (measured 8-36 ns per pair)
 *   search          0.6 ns per block or section a node visits (counted as it runs:
 *                   candidates, overlaps, section floors; measured 0.37-0.6 ns on
 *                   minimalloc A, C, F, K and idealloc G_1, 154-816 blocks)
 *   mip             5 us + 60 ns x rows per simplex iteration (cuts and node work
 *                   included; measured 56 us at 778 rows), 20 us per node
 */
#ifndef SFC_PACK_CLOCK_H
#define SFC_PACK_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFC_PACK_WALL_FACTOR 4.0 /* the wall-clock backstop: 4 x the limit + 1 s */

typedef struct sfc_pack_clock {
  bool wall;         /* measure on the wall clock (sfc_pack_options_t.wall_clock) */
  double t0;         /* wall time at the start */
  double work;       /* work clock: modelled seconds charged so far */
  double backstop;   /* work clock: wall seconds after which it reads +infinity */
  bool wall_stopped; /* the backstop was reached */
} sfc_pack_clock_t;

/* Starts a clock for a run limited to limit_s seconds, its backstop backstop_s wall
 * seconds away (<= 0: SFC_PACK_WALL_FACTOR x limit_s + 1 s). */
void sfc_pack_clock_start(sfc_pack_clock_t *c, bool wall, double limit_s, double backstop_s);

/* The wall seconds left before c's backstop (at least 1 ms): a run started inside
 * another gets no more. */
double sfc_pack_clock_backstop_left(const sfc_pack_clock_t *c);

/* Seconds since the start: wall time, or the work charged (+infinity once the
 * backstop is passed). Deterministic on the work clock until then. */
double sfc_pack_clock_now(sfc_pack_clock_t *c);

/* After a run that started at wall time t_wall (sfc_clock_seconds()) and whose
 * modelled cost is model_s: charges the work clock with model_s and returns it, or
 * returns the wall time the run took. What a caller uses to predict the next run. */
double sfc_pack_clock_spent(sfc_pack_clock_t *c, double t_wall, double model_s);

double sfc_pack_cost_best_fit(size_t n);
double sfc_pack_cost_greedy(size_t n, double pairs);
double sfc_pack_cost_search(uint64_t units);
double sfc_pack_cost_mip(double iterations, double rows, double nodes);

#endif
