/* report.h — what the compiler prints for people: the compile summary and IR dumps. */
#ifndef SFC_REPORT_H
#define SFC_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

/* Where the op times of a prediction come from, as `sfc compile` and `sfc simulate`
 * print it (and as "times_from" in --json). modelled_for is the profile whose device
 * time model (time_model.h) gave some of the step times, or NULL when none did:
 *   - "PROFILE (modelled: roofline)": modelled_for, and the graph's device is not that
 *     profile's (or no op has a measured time);
 *   - "DEVICE (measured, K of N ops; the rest modelled: roofline)": recorded on the
 *     profile's device, K of the N ops timed, the rest modelled;
 *   - with modelled_for NULL: "none" when no op has a measured time, "DEVICE (measured)"
 *     when every op has one, "DEVICE (measured, K of N ops)" when only K of N do.
 * DEVICE is the graph's `device` field (the plan's META times_device), or "unknown
 * device" when it records none. Returns buf. */
const char *sfc_times_from(const char *device, uint32_t measured, uint32_t ops,
                           const char *modelled_for, char *buf, size_t buf_bytes);

/* The note that follows times_from in a human summary when the times may not be
 * PROFILE's (the profile compiled or simulated for): with modelled_for, ", not PROFILE
 * times (modelled for MODELLED_FOR)" when the two differ; without, ", not PROFILE times
 * (measured on another device)" or ", maybe not PROFILE times (...)" when the device is
 * not recorded; "" otherwise. Returns buf. */
const char *sfc_times_note(const char *device, uint32_t measured, const char *modelled_for,
                           const char *profile, char *buf, size_t buf_bytes);

/* The profile whose time model gave some of ir's step times (its config's profile name),
 * or NULL when every step time is the graph's measured one or unknown. */
const char *sfc_ir_times_modelled_for(const sfc_ir_t *ir);

/* The number of ops of g with a measured time (time_us >= 0). */
uint32_t sfc_graph_measured_ops(const sfc_graph_t *g);

/* Where a replay falls behind the time bound, for good (docs/algorithms.md "Behind the
 * bound"): with lag(k) = step k's start on sim minus the least start any schedule within
 * the budget gives it (ir->step_bound_s), and kept(k) = the least lag from step k to the
 * end (time lost before k and never made up), the steps before which kept grows most —
 * at most max of them, the largest growth first (then the earlier step), each with its
 * growth in seconds; step n_steps stands for the end (the copies draining after the last
 * step starts). *total gets the lag at the end, predicted minus the bound: the growths
 * sum to it; *early the steps the replay starts before their least start (beyond
 * rounding), which the bound's proof rules out: nonzero is a bug. Returns how many (0,
 * *total and *early 0: no replay, no per-step bound in ir, or a plan over its budget, for
 * which the bound does not hold). */
typedef struct sfc_behind {
  uint32_t step;
  double seconds;
} sfc_behind_t;

uint32_t sfc_behind_bound(const sfc_ir_t *ir, sfc_behind_t *out, uint32_t max, double *total,
                          uint32_t *early);

/* Where the time bound itself waits (docs/algorithms.md "The time bound"): the pieces of
 * its chain with the longest least stalls (ir->bound_waits), at most max of them, the
 * longest first (then the earlier piece). Returns how many (0 when the printed bound is
 * not the chain's, or it waits nowhere). */
uint32_t sfc_bound_waits_top(const sfc_ir_t *ir, sfc_bound_wait_t *out, uint32_t max);

/* A wait's reason as a JSON word ("in", "in_forced", "out", "out_forced", "both",
 * "both_forced", "whole_tensor"), and as the words of the summary's line, with its
 * bytes (buf: at least 96 bytes). */
const char *sfc_wait_why_name(uint8_t why);
const char *sfc_wait_why_text(const sfc_bound_wait_t *w, char *buf, size_t buf_bytes);

/* The summary `sfc compile` prints (see docs/cli.md). plan_path/plan_bytes may be
 * NULL/0 when no plan was written; plan_path is printed as given (the CLI passes it
 * escaped: sfc_cli_path_shown). */
void sfc_report_compile(const sfc_ir_t *ir, double seconds, const char *plan_path,
                        uint64_t plan_bytes, FILE *out);

/* The IR after a pass, for --dump-after: steps, tensors with live ranges, blocks. */
void sfc_report_dump_ir(const sfc_ir_t *ir, const char *after_pass, FILE *out);

#endif /* SFC_REPORT_H */
