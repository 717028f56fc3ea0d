/* timeline.h — a plan over its steps, as an SVG (`sfc inspect PLAN --timeline OUT.svg`):
 *
 *   top:    device bytes live at each step, stacked by tensor kind (input, param,
 *           optimizer, activation, grad, workspace, output), the budget as a dashed line;
 *   middle: red ticks where the compute waits for copies, from one iteration replayed on
 *           the runtime's sim device (the plan's op times and link; none drawn, and the
 *           legend says so, when the replay fails);
 *   bottom: bytes of the swap-outs (above the axis) and swap-ins (below) issued before
 *           each step.
 * Plans of more than 1200 steps are drawn in 1200 columns: each column stacks the step of
 * most device bytes in it, and sums its copies and stalls. Every shape carries its numbers
 * as data-* attributes (data-step, data-kind, data-bytes, data-us) for scripts and tests.
 *
 *   SFC_TRY(sfc_timeline_write_file("t.svg", plan, "resnet50.plan", &err)); // outfile.h
 */
#ifndef SFC_TIMELINE_H
#define SFC_TIMELINE_H

#include "sfcrt.h"

sfc_status_t sfc_timeline_write_file(const char *path, const sfcrt_plan_t *plan, const char *title,
                                     sfc_error_t *err);

#endif /* SFC_TIMELINE_H */
