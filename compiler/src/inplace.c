/* inplace.c — elementwise results written into a dying input (inplace.h). */
#include <stdlib.h>
#include <string.h>

#include "inplace.h"

#define NONE SFC_PLAN_NONE

static const char *const inplace_types[] = {
    "add",
    "sub",
    "mul",
    "div",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "leaky_relu_backward",
    "hardtanh_backward",
    "native_dropout_backward",
};

bool sfc_inplace_type(const char *type) {
  for (size_t k = 0; k < sizeof inplace_types / sizeof inplace_types[0]; k++)
    if (strcmp(type, inplace_types[k]) == 0)
      return true;
  return false;
}

static bool same_layout(const sfc_tensor_t *a, const sfc_tensor_t *b) {
  return a->kind == b->kind && a->bytes == b->bytes && a->dtype == b->dtype &&
         a->batch_axis == b->batch_axis && a->dtype != SFC_DTYPE_UNKNOWN && a->ndim > 0 &&
         a->ndim == b->ndim && memcmp(a->shape, b->shape, a->ndim * sizeof a->shape[0]) == 0;
}

sfc_status_t sfc_graph_inplace(sfc_graph_t *g, sfc_inplace_t *out, sfc_error_t *err) {
  memset(out, 0, sizeof *out);
  uint32_t n = g->n_tensors;
  uint32_t *first = malloc((size_t)n * sizeof *first), *last = malloc((size_t)n * sizeof *last),
           *into = malloc((size_t)n * sizeof *into);
  uint8_t *untiled = sfc_pool_calloc(&g->pool, g->n_ops ? g->n_ops : 1, 1);
  if (!first || !last || !into || !untiled) {
    free(first);
    free(last);
    free(into);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "--inplace: out of memory");
  }
  for (uint32_t t = 0; t < n; t++) {
    first[t] = last[t] = NONE;
    into[t] = t;
  }
  for (uint32_t o = 0; o < g->n_ops; o++) { /* first and last op touching each tensor */
    const sfc_op_t *op = &g->ops[o];
    for (uint32_t side = 0; side < 3; side++) {
      const uint32_t *ts = side == 0 ? op->inputs : side == 1 ? op->outputs : &op->workspace;
      uint32_t m = side == 0 ? op->n_inputs : side == 1 ? op->n_outputs : op->workspace != NONE;
      for (uint32_t k = 0; k < m; k++) {
        if (first[ts[k]] == NONE)
          first[ts[k]] = o;
        last[ts[k]] = o;
      }
    }
  }
  for (uint32_t o = 0; o < g->n_ops; o++) {
    sfc_op_t *op = &g->ops[o];
    for (uint32_t k = 0; k < op->n_inputs; k++) /* earlier merges, followed */
      op->inputs[k] = into[op->inputs[k]];
    for (uint32_t k = 0; k < op->n_outputs; k++)
      op->outputs[k] = into[op->outputs[k]];
    if (op->n_outputs != 1 || !sfc_inplace_type(op->type))
      continue;
    uint32_t r = op->outputs[0];
    const sfc_tensor_t *rt = &g->tensors[r];
    if ((rt->flags & SFC_TENSOR_PERSISTENT) || rt->kind == SFC_KIND_OUTPUT || first[r] != o ||
        sfc_op_reads(op, r))
      continue;
    for (uint32_t k = 0; k < op->n_inputs; k++) {
      uint32_t i = op->inputs[k];
      const sfc_tensor_t *it = &g->tensors[i];
      if ((it->flags & SFC_TENSOR_PERSISTENT) || last[i] != o || !same_layout(it, rt))
        continue;
      op->outputs[0] = i; /* the op writes i; later references to r follow */
      into[r] = i;
      last[i] = last[r];
      /* out of FT segments: the tiler derives a tile's boxes tensor by tensor, and a
       * tensor holding two values in one segment gave a backward step empty boxes */
      untiled[op->phase == SFC_PHASE_FORWARD || op->backward_of == SFC_PLAN_NONE
                  ? o
                  : op->backward_of] = 1;
      out->untiled = untiled;
      out->ops++;
      out->bytes += rt->bytes;
      break;
    }
  }
  free(first);
  free(last);
  free(into);
  return SFC_OK;
}
