/* time_model.c — the device time model (time_model.h): op classes, device matching and
 * the roofline. O(operands) per op; the class lookup scans a table of ~100 names. */
#include "time_model.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sfc/steps.h"

typedef struct op_kind {
  const char *type; /* ATen op name as the exporter writes it (and sfc's own test names) */
  sfc_op_class_t cls;
} op_kind_t;

/* The one table. Dense: the FLOP-bound ops whose `flops` the exporter records. Free:
 * ops that only make a view or an uninitialised allocation (no kernel runs). Listed
 * elementwise: the memory-bound ops the bundled graphs use, so they count as known;
 * any other type is elementwise too. In-place forms ("relu_") fall back to their stem. */
static const op_kind_t kinds[] = {
    /* dense: convolution and matmul */
    {"convolution", SFC_OP_DENSE},
    {"convolution_backward", SFC_OP_DENSE},
    {"_convolution", SFC_OP_DENSE},
    {"cudnn_convolution", SFC_OP_DENSE},
    {"conv1d", SFC_OP_DENSE},
    {"conv2d", SFC_OP_DENSE},
    {"conv3d", SFC_OP_DENSE},
    {"conv1d_backward", SFC_OP_DENSE},
    {"conv2d_backward", SFC_OP_DENSE},
    {"conv3d_backward", SFC_OP_DENSE},
    {"conv_transpose1d", SFC_OP_DENSE},
    {"conv_transpose2d", SFC_OP_DENSE},
    {"conv_transpose3d", SFC_OP_DENSE},
    {"mm", SFC_OP_DENSE},
    {"addmm", SFC_OP_DENSE},
    {"bmm", SFC_OP_DENSE},
    {"baddbmm", SFC_OP_DENSE},
    {"addbmm", SFC_OP_DENSE},
    {"matmul", SFC_OP_DENSE},
    {"matmul_backward", SFC_OP_DENSE},
    {"linear", SFC_OP_DENSE},
    {"linear_backward", SFC_OP_DENSE},
    {"mv", SFC_OP_DENSE},
    {"addmv", SFC_OP_DENSE},
    {"einsum", SFC_OP_DENSE},
    {"_scaled_dot_product_flash_attention", SFC_OP_DENSE},
    {"_scaled_dot_product_flash_attention_backward", SFC_OP_DENSE},
    {"_scaled_dot_product_efficient_attention", SFC_OP_DENSE},
    {"_scaled_dot_product_efficient_attention_backward", SFC_OP_DENSE},
    /* free: views and allocations */
    {"detach", SFC_OP_FREE},
    {"alias", SFC_OP_FREE},
    {"view", SFC_OP_FREE},
    {"view_as", SFC_OP_FREE},
    {"_unsafe_view", SFC_OP_FREE},
    {"_reshape_alias", SFC_OP_FREE},
    {"reshape", SFC_OP_FREE},
    {"as_strided", SFC_OP_FREE},
    {"t", SFC_OP_FREE},
    {"transpose", SFC_OP_FREE},
    {"permute", SFC_OP_FREE},
    {"expand", SFC_OP_FREE},
    {"expand_as", SFC_OP_FREE},
    {"slice", SFC_OP_FREE},
    {"select", SFC_OP_FREE},
    {"narrow", SFC_OP_FREE},
    {"split", SFC_OP_FREE},
    {"split_with_sizes", SFC_OP_FREE},
    {"unbind", SFC_OP_FREE},
    {"chunk", SFC_OP_FREE},
    {"squeeze", SFC_OP_FREE},
    {"unsqueeze", SFC_OP_FREE},
    {"flatten", SFC_OP_FREE},
    {"flatten_backward", SFC_OP_FREE},
    {"unflatten", SFC_OP_FREE},
    {"unfold", SFC_OP_FREE},
    {"diagonal", SFC_OP_FREE},
    {"movedim", SFC_OP_FREE},
    {"contiguous", SFC_OP_FREE}, /* a copy, when one is needed, is recorded as clone */
    {"empty", SFC_OP_FREE},
    {"empty_like", SFC_OP_FREE},
    {"empty_strided", SFC_OP_FREE},
    {"new_empty", SFC_OP_FREE},
    {"new_empty_strided", SFC_OP_FREE},
    {"lift_fresh", SFC_OP_FREE},
    {"resize", SFC_OP_FREE},
    {"set", SFC_OP_FREE},
    /* elementwise: normalisation, activations, arithmetic, pooling, losses, copies */
    {"native_batch_norm", SFC_OP_ELEMENTWISE},
    {"native_batch_norm_backward", SFC_OP_ELEMENTWISE},
    {"batch_norm", SFC_OP_ELEMENTWISE},
    {"batch_norm_backward", SFC_OP_ELEMENTWISE},
    {"native_layer_norm", SFC_OP_ELEMENTWISE},
    {"native_layer_norm_backward", SFC_OP_ELEMENTWISE},
    {"native_group_norm", SFC_OP_ELEMENTWISE},
    {"native_group_norm_backward", SFC_OP_ELEMENTWISE},
    {"relu", SFC_OP_ELEMENTWISE},
    {"relu_backward", SFC_OP_ELEMENTWISE},
    {"threshold_backward", SFC_OP_ELEMENTWISE},
    {"hardtanh", SFC_OP_ELEMENTWISE},
    {"hardtanh_backward", SFC_OP_ELEMENTWISE},
    {"gelu", SFC_OP_ELEMENTWISE},
    {"gelu_backward", SFC_OP_ELEMENTWISE},
    {"sigmoid", SFC_OP_ELEMENTWISE},
    {"tanh", SFC_OP_ELEMENTWISE},
    {"add", SFC_OP_ELEMENTWISE},
    {"sub", SFC_OP_ELEMENTWISE},
    {"mul", SFC_OP_ELEMENTWISE},
    {"div", SFC_OP_ELEMENTWISE},
    {"sum", SFC_OP_ELEMENTWISE},
    {"sum_backward", SFC_OP_ELEMENTWISE},
    {"mean", SFC_OP_ELEMENTWISE},
    {"_softmax", SFC_OP_ELEMENTWISE},
    {"_softmax_backward_data", SFC_OP_ELEMENTWISE},
    {"_log_softmax", SFC_OP_ELEMENTWISE},
    {"_log_softmax_backward_data", SFC_OP_ELEMENTWISE},
    {"log_softmax", SFC_OP_ELEMENTWISE},
    {"log_softmax_backward", SFC_OP_ELEMENTWISE},
    {"nll_loss_forward", SFC_OP_ELEMENTWISE},
    {"nll_loss_backward", SFC_OP_ELEMENTWISE},
    {"nll_loss2d_forward", SFC_OP_ELEMENTWISE},
    {"nll_loss2d_backward", SFC_OP_ELEMENTWISE},
    {"nll_loss", SFC_OP_ELEMENTWISE},
    {"cross_entropy", SFC_OP_ELEMENTWISE},
    {"cross_entropy_backward", SFC_OP_ELEMENTWISE},
    {"max_pool2d", SFC_OP_ELEMENTWISE},
    {"max_pool2d_backward", SFC_OP_ELEMENTWISE},
    {"max_pool2d_with_indices", SFC_OP_ELEMENTWISE},
    {"max_pool2d_with_indices_backward", SFC_OP_ELEMENTWISE},
    {"avg_pool2d", SFC_OP_ELEMENTWISE},
    {"avg_pool2d_backward", SFC_OP_ELEMENTWISE},
    {"_adaptive_avg_pool2d", SFC_OP_ELEMENTWISE},
    {"_adaptive_avg_pool2d_backward", SFC_OP_ELEMENTWISE},
    {"embedding", SFC_OP_ELEMENTWISE},
    {"embedding_dense_backward", SFC_OP_ELEMENTWISE},
    {"bernoulli", SFC_OP_ELEMENTWISE},
    {"cat", SFC_OP_ELEMENTWISE},
    {"clone", SFC_OP_ELEMENTWISE},
    {"copy", SFC_OP_ELEMENTWISE},
    {"_to_copy", SFC_OP_ELEMENTWISE},
    {"zeros", SFC_OP_ELEMENTWISE},
    {"zeros_like", SFC_OP_ELEMENTWISE},
    {"ones_like", SFC_OP_ELEMENTWISE},
    {"fill", SFC_OP_ELEMENTWISE},
    {"zero", SFC_OP_ELEMENTWISE},
    {"arange", SFC_OP_ELEMENTWISE},
    {"sgd_update", SFC_OP_ELEMENTWISE},
};

static const op_kind_t *find_kind(const char *type, size_t len) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strlen(kinds[i].type) == len && memcmp(kinds[i].type, type, len) == 0)
      return &kinds[i];
  return NULL;
}

sfc_op_class_t sfc_op_class(const char *type, bool *known) {
  size_t len = type ? strlen(type) : 0;
  const op_kind_t *k = len ? find_kind(type, len) : NULL;
  if (!k && len > 1 && type[len - 1] == '_') /* in-place: "relu_" is relu */
    k = find_kind(type, len - 1);
  if (known)
    *known = k != NULL;
  return k ? k->cls : SFC_OP_ELEMENTWISE;
}

const char *sfc_op_class_name(sfc_op_class_t c) {
  switch (c) {
    case SFC_OP_DENSE:
      return "dense";
    case SFC_OP_ELEMENTWISE:
      return "elementwise";
    case SFC_OP_FREE:
      return "free";
  }
  return "unknown";
}

static char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool sfc_time_device_matches(const char *device, const char *profile_name) {
  if (!device || !*device || !profile_name || !*profile_name)
    return false;
  if (lower(device[0]) == 'c' && lower(device[1]) == 'p' && lower(device[2]) == 'u')
    return false; /* "cpu", "cpu:0", "CPU (x86_64)": never a GPU profile */
  size_t n = strlen(profile_name);
  bool same = strlen(device) == n;
  for (size_t i = 0; same && i < n; i++)
    same = lower(device[i]) == lower(profile_name[i]);
  if (same)
    return true;
  char model[SFC_NAME_BYTES], dev[256];
  size_t m = 0, d = 0;
  for (const char *c = profile_name; *c && *c != '-' && m + 1 < sizeof model; c++)
    if (alnum(lower(*c)))
      model[m++] = lower(*c);
  model[m] = '\0';
  for (const char *c = device; *c && d + 1 < sizeof dev; c++)
    if (alnum(lower(*c)))
      dev[d++] = lower(*c);
  dev[d] = '\0';
  if (m == 0)
    return false;
  for (const char *at = strstr(dev, model); at; at = strstr(at + 1, model))
    if (!(at[m] >= '0' && at[m] <= '9')) /* "a100" is not "a1000" */
      return true;
  return false;
}

static bool in_unit(double e) {
  return e > 0 && e <= 1; /* false for NaN */
}

bool sfc_time_model_ready(const sfc_profile_t *p) {
  return p && p->peak_flops > 0 && isfinite(p->peak_flops) && p->memory_bytes_per_s > 0 &&
         isfinite(p->memory_bytes_per_s) && p->launch_overhead_s >= 0 &&
         isfinite(p->launch_overhead_s) && in_unit(p->dense_flops_efficiency) &&
         in_unit(p->dense_bytes_efficiency) && in_unit(p->elementwise_flops_efficiency) &&
         in_unit(p->elementwise_bytes_efficiency);
}

double sfc_time_roofline_us(sfc_op_class_t c, uint64_t flops, double bytes,
                            const sfc_profile_t *p) {
  if (c == SFC_OP_FREE)
    return 0;
  bool dense = c == SFC_OP_DENSE;
  double e_flops = dense ? p->dense_flops_efficiency : p->elementwise_flops_efficiency;
  double e_bytes = dense ? p->dense_bytes_efficiency : p->elementwise_bytes_efficiency;
  double t_flops = (double)flops / (p->peak_flops * e_flops);
  double t_bytes = bytes / (p->memory_bytes_per_s * e_bytes);
  return ((t_flops > t_bytes ? t_flops : t_bytes) + p->launch_overhead_s) * 1e6;
}

double sfc_time_op_bytes(const sfc_graph_t *g, const sfc_op_t *op) {
  double bytes = 0;
  for (uint32_t i = 0; i < op->n_inputs; i++)
    bytes += (double)g->tensors[op->inputs[i]].bytes;
  for (uint32_t i = 0; i < op->n_outputs; i++)
    bytes += (double)g->tensors[op->outputs[i]].bytes;
  return bytes;
}

double sfc_time_op_us(const sfc_graph_t *g, const sfc_op_t *op, const sfc_profile_t *p) {
  double measured = sfc_op_time_us(op->time_us, 0, NULL);
  if (!sfc_time_model_ready(p) || (measured >= 0 && sfc_time_device_matches(g->device, p->name)))
    return measured;
  return sfc_time_roofline_us(sfc_op_class(op->type, NULL), op->flops, sfc_time_op_bytes(g, op), p);
}

bool sfc_plan_times_modelled(const sfc_plan_view_t *v) {
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    if (!(s->flags & SFC_STEP_TIMED) || s->op >= v->op_count)
      continue;
    double want =
        sfc_step_time_us(sfc_op_time_us(v->ops[s->op].time_us, 0, NULL), sfc_plan_step_share(v, k));
    if (!(want >= 0) || fabs(s->time_us - want) > 1e-9 * (want > 1 ? want : 1))
      return true;
  }
  return false;
}
