/* sfc/steps.h — step arithmetic the compiler and the runtime share, so they cannot
 * drift apart: how long a step takes, and how many bytes are live at each step.
 *
 * Step time. The compiler writes each step's predicted duration into STEPS.time_us
 * (flag SFC_STEP_TIMED) with sfc_step_time_us; the sim device charges a timed step
 * exactly that, and applies the same rule to the plan's op for a step the plan did not
 * time (plans older than 1.1, or ops with no time the compiler could know).
 *
 * Live-bytes sweep. A difference array over steps [0, n): sfc_sweep_add marks a range
 * of steps as holding `bytes`, sfc_sweep_peak turns the marks into the bytes live at
 * every step and returns their maximum. Used for the in-core peak, the lower bound,
 * the verifier's budget check and the runtime's peak. O(ranges + steps).
 */
#ifndef SFC_STEPS_H
#define SFC_STEPS_H

#include <stdint.h>

#include "sfc/plan_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an op's time comes from when the graph measured none. */
typedef struct sfc_time_rule {
  double flops_per_s;   /* > 0: an op with flops and no time takes flops / flops_per_s */
  double default_op_us; /* >= 0: any other op without a time; < 0: unknown */
} sfc_time_rule_t;

/* An op's whole duration in µs: time_us when it is finite and >= 0; else flops /
 * flops_per_s when both are > 0; else rule->default_op_us when >= 0; else -1
 * (unknown). rule may be NULL (no fallback). */
double sfc_op_time_us(double time_us, uint64_t flops, const sfc_time_rule_t *rule);

/* A step computing `share` (0 < share <= 1) of its op's output: share * op_us; -1
 * when op_us is unknown (< 0). */
double sfc_step_time_us(double op_us, double share);

/* The share of its op step `step` of the plan computes: for a tiled step, the volume
 * of the first operand's box (outputs first, then inputs) that is smaller than its
 * tensor, over that tensor's volume (a backward op whose outputs are whole weight
 * gradients takes its share from its output-gradient input); 1 otherwise (and for any
 * box the shapes cannot measure). */
double sfc_plan_step_share(const sfc_plan_view_t *v, uint32_t step);

/* Volume of box over a tensor of shape[ndim]; 1 for a box the shape cannot measure. */
double sfc_box_share(const sfc_plan_box_t *box, const int64_t *shape, uint32_t ndim);

/* diff has n + 1 entries, zeroed before the first add; first <= last < n. */
static inline void sfc_sweep_add(int64_t *diff, uint32_t first, uint32_t last, uint64_t bytes) {
  diff[first] += (int64_t)bytes;
  diff[(uint64_t)last + 1] -= (int64_t)bytes;
}

/* Prefix sums of diff[0 .. n): the bytes live at each step go to live[k] when live is
 * not NULL; returns their maximum (0 when n is 0). Callers keep the total below 2^63. */
uint64_t sfc_sweep_peak(const int64_t *diff, uint32_t n, uint64_t *live);

#ifdef __cplusplus
}
#endif

#endif /* SFC_STEPS_H */
