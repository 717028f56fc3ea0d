/* steps.c — the step time rule and the live-bytes sweep (sfc/steps.h). */
#include "sfc/steps.h"

#include <math.h>

double sfc_op_time_us(double time_us, uint64_t flops, const sfc_time_rule_t *rule) {
  if (time_us >= 0 && isfinite(time_us))
    return time_us;
  if (rule && flops > 0 && rule->flops_per_s > 0 && isfinite(rule->flops_per_s))
    return (double)flops / rule->flops_per_s * 1e6;
  if (rule && rule->default_op_us >= 0 && isfinite(rule->default_op_us))
    return rule->default_op_us;
  return -1;
}

double sfc_step_time_us(double op_us, double share) {
  if (op_us < 0)
    return -1;
  if (!(share > 0 && share <= 1))
    share = 1;
  return op_us * share;
}

double sfc_box_share(const sfc_plan_box_t *box, const int64_t *shape, uint32_t ndim) {
  if (box->ndim == 0 || box->ndim > SFC_PLAN_BOX_DIMS || box->ndim > ndim)
    return 1;
  double share = 1;
  for (uint32_t d = 0; d < box->ndim; d++) {
    int64_t extent = box->hi[d] - box->lo[d];
    if (shape[d] <= 0 || extent <= 0 || extent > shape[d])
      return 1;
    share *= (double)extent / (double)shape[d];
  }
  return share;
}

double sfc_plan_step_share(const sfc_plan_view_t *v, uint32_t step) {
  const sfc_plan_step_t *s = &v->steps[step];
  if (s->box_begin == SFC_PLAN_NONE || s->op >= v->op_count)
    return 1;
  const sfc_plan_op_t *op = &v->ops[s->op];
  uint32_t n = (uint32_t)op->input_count + op->output_count;
  for (uint32_t i = 0; i < n; i++) { /* outputs first, then inputs */
    uint32_t j = i < op->output_count ? op->input_count + i : i - op->output_count;
    uint64_t b = (uint64_t)s->box_begin + j;
    if (b >= v->box_count || v->boxes[b].tensor >= v->tensor_count)
      return 1;
    const sfc_plan_tensor_t *t = &v->tensors[v->boxes[b].tensor];
    double share = sfc_box_share(&v->boxes[b], t->shape, t->ndim);
    if (share < 1)
      return share;
  }
  return 1;
}

uint64_t sfc_sweep_peak(const int64_t *diff, uint32_t n, uint64_t *live) {
  int64_t x = 0;
  uint64_t peak = 0;
  for (uint32_t k = 0; k < n; k++) {
    x += diff[k];
    if (live)
      live[k] = (uint64_t)x;
    if ((uint64_t)x > peak)
      peak = (uint64_t)x;
  }
  return peak;
}
