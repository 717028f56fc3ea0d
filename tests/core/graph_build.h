/* graph_build.h — build an sfc_graph_t in code for core tests (no JSON loader).
 *
 *   sfc_graph_t *g = tg_new("chain");
 *   uint32_t a = tg_tensor(g, "A", 100, SFC_KIND_ACTIVATION);
 *   tg_op(g, "op0", SFC_PHASE_FORWARD, 0, NULL, 1, (uint32_t[]){a});
 *   ...
 *   sfc_graph_destroy(g);
 *
 * Capacity is fixed per graph (TG_MAX_*); the builder aborts the test on misuse.
 */
#ifndef SFC_TEST_GRAPH_BUILD_H
#define SFC_TEST_GRAPH_BUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define TG_MAX_TENSORS 4096
#define TG_MAX_OPS     4096

static inline sfc_graph_t *tg_new(const char *name) {
  sfc_graph_t *g = calloc(1, sizeof *g);
  if (!g)
    abort();
  g->name = sfc_pool_strdup(&g->pool, name);
  g->tensors = sfc_pool_calloc(&g->pool, TG_MAX_TENSORS, sizeof *g->tensors);
  g->ops = sfc_pool_calloc(&g->pool, TG_MAX_OPS, sizeof *g->ops);
  if (!g->name || !g->tensors || !g->ops)
    abort();
  return g;
}

static inline uint32_t tg_tensor(sfc_graph_t *g, const char *name, uint64_t bytes,
                                 sfc_tensor_kind_t kind) {
  if (g->n_tensors >= TG_MAX_TENSORS)
    abort();
  uint32_t t = g->n_tensors++;
  g->n_file_tensors = g->n_tensors;
  sfc_tensor_t *x = &g->tensors[t];
  x->id = t;
  x->name = sfc_pool_strdup(&g->pool, name);
  x->bytes = bytes;
  x->kind = kind;
  x->batch_axis = -1;
  x->flags = sfc_kind_is_persistent(kind) ? SFC_TENSOR_PERSISTENT : 0;
  return t;
}

static inline uint32_t tg_op(sfc_graph_t *g, const char *name, sfc_phase_t phase, uint32_t n_in,
                             const uint32_t *in, uint32_t n_out, const uint32_t *out) {
  if (g->n_ops >= TG_MAX_OPS)
    abort();
  uint32_t o = g->n_ops++;
  sfc_op_t *op = &g->ops[o];
  op->id = o;
  op->name = sfc_pool_strdup(&g->pool, name);
  op->type = sfc_pool_strdup(&g->pool, "test");
  op->phase = phase;
  op->inputs = sfc_pool_calloc(&g->pool, n_in + 1u, sizeof(uint32_t));
  op->outputs = sfc_pool_calloc(&g->pool, n_out + 1u, sizeof(uint32_t));
  if (n_in)
    memcpy(op->inputs, in, n_in * sizeof(uint32_t));
  if (n_out)
    memcpy(op->outputs, out, n_out * sizeof(uint32_t));
  op->n_inputs = n_in;
  op->n_outputs = n_out;
  op->workspace = SFC_PLAN_NONE;
  op->backward_of = SFC_PLAN_NONE;
  op->time_us = -1;
  return o;
}

/* A 4-D tensor (N, C, H, W) of elements of elem_bytes (dtype f64 when 8, else f32). */
static inline uint32_t tg_tensor4(sfc_graph_t *g, const char *name, sfc_tensor_kind_t kind,
                                  uint64_t elem_bytes, int64_t n, int64_t c, int64_t h, int64_t w) {
  uint32_t t = tg_tensor(g, name, (uint64_t)(n * c * h * w) * elem_bytes, kind);
  sfc_tensor_t *x = &g->tensors[t];
  x->dtype = elem_bytes == 8 ? SFC_DTYPE_F64 : SFC_DTYPE_F32;
  x->ndim = 4;
  x->shape[0] = n;
  x->shape[1] = c;
  x->shape[2] = h;
  x->shape[3] = w;
  return t;
}

/* Gives op o a workspace tensor of `bytes`, as the loader does for workspace_bytes. */
static inline void tg_workspace(sfc_graph_t *g, uint32_t o, uint64_t bytes) {
  uint32_t t = tg_tensor(g, "ws", bytes, SFC_KIND_WORKSPACE);
  g->n_file_tensors--;
  g->tensors[t].id = -1;
  g->tensors[t].flags |= SFC_TENSOR_SYNTHETIC;
  g->ops[o].workspace = t;
  g->ops[o].workspace_bytes = bytes;
}

#endif /* SFC_TEST_GRAPH_BUILD_H */
