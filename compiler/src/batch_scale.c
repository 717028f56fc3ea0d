/* batch_scale.c — rescale a recorded iteration to another batch size.
 *
 * A framework can only record the batch that fits on the machine that runs the export,
 * but the question users ask is "what batch fits in 16 GB". Most of a training
 * iteration's memory is linear in the batch: every activation and activation gradient
 * has a batch dimension (possibly folded into another one, B*S rows in a transformer),
 * while params, their gradients and the optimizer state do not depend on it. The exporter
 * marks the first kind with batch_axis (it measures it by recording two batch sizes).
 *
 * Rules, with r = batch / graph->batch:
 *   - a tensor with batch_axis >= 0: shape[batch_axis] *= r (exact: the recorded dim must
 *     be a multiple of the recorded batch), bytes *= r (rounded up, at least 1);
 *   - an op that reads or writes such a tensor: flops *= r (rounded down),
 *     workspace_bytes and its synthetic tensor *= r (rounded up), and its time follows
 *     t(b) = a + c*b, the line the exporter fitted through the op's times at two
 *     recorded batches: time_us = a + (time_us - a) * r with a = time_fixed_us (the
 *     batch-independent part, clamped to [0, time_us]; 0 when the file has none, which
 *     is the plain linear rule time_us *= r). time_fixed_us itself does not change, so
 *     rescaling twice equals rescaling once. A time that would not be finite (a huge
 *     time_us times r) is an error;
 *   - everything else keeps its value.
 * Integer arithmetic is exact: x * n / b is computed as (x / b) * n + (x % b) * n / b with
 * every product overflow-checked, and each result is checked against the loader's limits
 * (SFC_MAX_TENSOR_BYTES, SFC_MAX_TOTAL_BYTES, SFC_MAX_ID for dims, 2^62 FLOPs). All new
 * values are computed into scratch arrays first, so the graph is unchanged on error.
 *
 * O(tensors + operands) time, O(tensors + ops) scratch.
 */
#include "batch_scale.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define FLOPS_MAX (UINT64_C(1) << 62)

/* *out = x * n / b, rounded up when round_up; false on overflow past limit. b >= 1. */
static bool scale_u64(uint64_t x, uint64_t n, uint64_t b, bool round_up, uint64_t limit,
                      uint64_t *out) {
  uint64_t q = x / b, r = x % b;
  if (q != 0 && n > UINT64_MAX / q)
    return false;
  uint64_t hi = q * n;
  if (r != 0 && n > UINT64_MAX / r)
    return false; /* r < b <= 2^53 and n <= 2^31: never, kept for the reader */
  uint64_t rn = r * n, lo = rn / b + (round_up && rn % b != 0 ? 1u : 0u);
  if (hi > UINT64_MAX - lo || hi + lo > limit)
    return false;
  *out = hi + lo;
  return true;
}

static const char *tensor_label(const sfc_tensor_t *t, char *buf, size_t n) {
  if (t->name[0])
    snprintf(buf, n, "tensor %" PRId64 " (\"%.60s\")", t->id, t->name);
  else
    snprintf(buf, n, "tensor %" PRId64, t->id);
  return buf;
}

sfc_status_t sfc_graph_batch_scale(sfc_graph_t *g, int64_t batch, sfc_error_t *err) {
  if (batch < 1 || batch > SFC_MAX_BATCH)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "--batch %" PRId64 ": must be between 1 and %" PRId64, batch,
                         SFC_MAX_BATCH);
  if (g->batch <= 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "--batch %" PRId64 ": the graph has no root \"batch\" field (the batch it "
                         "was recorded at; tools/sfc-export writes it)",
                         batch);
  if (batch == g->batch)
    return SFC_OK;
  const uint64_t n = (uint64_t)batch, b = (uint64_t)g->batch;
  uint64_t *bytes = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *bytes);
  int64_t *dim = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *dim);
  bool *touch = calloc(g->n_ops ? g->n_ops : 1, sizeof *touch);
  uint64_t *flops = calloc(g->n_ops ? g->n_ops : 1, sizeof *flops);
  uint64_t *ws = calloc(g->n_ops ? g->n_ops : 1, sizeof *ws);
  double *time = calloc(g->n_ops ? g->n_ops : 1, sizeof *time);
  sfc_status_t st = SFC_OK;
  char label[128];
  if (!bytes || !dim || !touch || !flops || !ws || !time) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "--batch: out of memory");
    goto done;
  }

  /* Tensors: new bytes and batch dim (synthetic workspaces are handled with their op). */
  for (uint32_t i = 0; i < g->n_tensors; i++) {
    const sfc_tensor_t *t = &g->tensors[i];
    bytes[i] = t->bytes;
    if (t->batch_axis < 0)
      continue;
    uint64_t d = (uint64_t)t->shape[t->batch_axis], nd;
    if (d % b != 0) {
      st = sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "--batch %" PRId64 ": %s has shape[%d] = %" PRIu64
                         ", not a multiple of the graph's batch %" PRIu64,
                         batch, tensor_label(t, label, sizeof label), t->batch_axis, d, b);
      goto done;
    }
    if (!scale_u64(d, n, b, false, (uint64_t)SFC_MAX_ID, &nd) ||
        !scale_u64(t->bytes, n, b, true, SFC_MAX_TENSOR_BYTES, &bytes[i])) {
      st = sfc_error_set(err, SFC_ERR_LIMIT,
                         "--batch %" PRId64 ": %s would have more than %" PRIu64
                         " bytes (1 PiB, the limit of one tensor)",
                         batch, tensor_label(t, label, sizeof label), SFC_MAX_TENSOR_BYTES);
      goto done;
    }
    if (bytes[i] == 0)
      bytes[i] = 1;
    dim[i] = (int64_t)nd;
  }

  /* Ops that touch a batch tensor scale their time, FLOPs and workspace. */
  const double r = (double)n / (double)b;
  for (uint32_t k = 0; k < g->n_ops; k++) {
    const sfc_op_t *op = &g->ops[k];
    for (uint32_t j = 0; j < op->n_inputs + op->n_outputs && !touch[k]; j++)
      touch[k] = g->tensors[sfc_op_operand(op, j)].batch_axis >= 0;
    flops[k] = op->flops;
    ws[k] = op->workspace_bytes;
    time[k] = op->time_us;
    if (!touch[k])
      continue;
    if (op->time_us >= 0) {
      double a = op->time_fixed_us;
      a = !(a > 0) ? 0 : a < op->time_us ? a : op->time_us; /* NaN -> 0 */
      time[k] = a + (op->time_us - a) * r;
      if (!isfinite(time[k])) {
        st = sfc_error_set(err, SFC_ERR_LIMIT,
                           "--batch %" PRId64 ": op %" PRId64 " (\"%.60s\"): its time_us would "
                           "not be a finite number",
                           batch, op->id, op->name);
        goto done;
      }
    }
    if (!scale_u64(op->flops, n, b, false, FLOPS_MAX, &flops[k]) ||
        !scale_u64(op->workspace_bytes, n, b, true, SFC_MAX_TENSOR_BYTES, &ws[k])) {
      st = sfc_error_set(err, SFC_ERR_LIMIT,
                         "--batch %" PRId64 ": op %" PRId64 " (\"%.60s\") would exceed the "
                         "limit of its flops (2^62) or workspace_bytes (1 PiB)",
                         batch, op->id, op->name);
      goto done;
    }
    if (op->workspace != SFC_PLAN_NONE)
      bytes[op->workspace] = ws[k] ? ws[k] : 1;
  }

  uint64_t total = 0;
  for (uint32_t i = 0; i < g->n_tensors; i++) {
    total += bytes[i]; /* each <= 2^50 and at most 2^24 of them: no overflow */
    if (total > SFC_MAX_TOTAL_BYTES) {
      st = sfc_error_set(err, SFC_ERR_LIMIT,
                         "--batch %" PRId64 ": the tensors would add up to more than %" PRIu64
                         " bytes (64 PiB, the limit of a graph)",
                         batch, SFC_MAX_TOTAL_BYTES);
      goto done;
    }
  }

  /* Commit. */
  for (uint32_t i = 0; i < g->n_tensors; i++) {
    sfc_tensor_t *t = &g->tensors[i];
    t->bytes = bytes[i];
    if (t->batch_axis >= 0)
      t->shape[t->batch_axis] = dim[i];
    if (t->flags & SFC_TENSOR_SYNTHETIC) /* a workspace: its shape is its bytes */
      t->shape[0] = (int64_t)t->bytes;
  }
  for (uint32_t k = 0; k < g->n_ops; k++) {
    sfc_op_t *op = &g->ops[k];
    if (!touch[k])
      continue;
    op->time_us = time[k];
    op->flops = flops[k];
    op->workspace_bytes = ws[k];
  }
  g->batch = batch;
done:
  free(bytes);
  free(dim);
  free(touch);
  free(flops);
  free(ws);
  free(time);
  return st;
}
