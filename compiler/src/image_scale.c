/* image_scale.c — see image_scale.h. */
#include "image_scale.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tile_catalog.h"

static int64_t numel(const int64_t *shape, uint8_t ndim) {
  int64_t n = 1;
  for (uint8_t a = 0; a < ndim; a++)
    n *= shape[a];
  return n;
}

/* A window op's output length from input length n (PyTorch's rule, ceil_mode too). */
static int64_t window_out(const sfc_op_t *op, int axis, int64_t n) {
  const sfc_attrs_t *a = &op->attrs;
  bool pool = strcmp(op->type, "convolution") != 0;
  int64_t k = (a->present & SFC_ATTR_KERNEL) ? a->kernel[axis] : 1;
  int64_t s = (a->present & SFC_ATTR_STRIDE) ? a->stride[axis] : (pool ? k : 1);
  int64_t p = (a->present & SFC_ATTR_PADDING) ? a->padding[axis] : 0;
  int64_t d = (a->present & SFC_ATTR_DILATION) ? a->dilation[axis] : 1;
  if (a->present & SFC_ATTR_OUTPUT_PADDING) /* transposed (the exporter's convention) */
    return (n - 1) * s - 2 * p + d * (k - 1) + a->output_padding[axis] + 1;
  int64_t span = n + 2 * p - d * (k - 1) - 1;
  if (span < 0 || s <= 0)
    return 0;
  int64_t out = span / s + 1;
  if (a->ceil_mode && span % s != 0) {
    out++;
    if ((out - 1) * s >= n + p) /* the last window must start inside the input or left pad */
      out--;
  }
  return out;
}

static bool same_nhw(const sfc_tensor_t *a, const sfc_tensor_t *b) {
  return a->ndim == 4 && b->ndim == 4 && a->shape[0] == b->shape[0] && a->shape[2] == b->shape[2] &&
         a->shape[3] == b->shape[3];
}

typedef struct scaler {
  const sfc_graph_t *g;
  int64_t (*shape)[SFC_PLAN_MAX_DIMS]; /* [n_tensors] new shapes */
  bool *done;                          /* [n_tensors] sized */
  int64_t size;
  sfc_error_t *err;
} scaler_t;

/* The new H, W of op output t (4-D); false with err set when no rule sizes it. */
static bool size_output(scaler_t *c, const sfc_op_t *op, uint32_t t) {
  const sfc_graph_t *g = c->g;
  const sfc_tensor_t *y = &g->tensors[t];
  const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
  int64_t *ny = c->shape[t];
  /* windows and upsampling: from their data input */
  if (e &&
      (e->cls == SFC_FT_WINDOW || e->cls == SFC_FT_UPSAMPLE_NEAREST ||
       e->cls == SFC_FT_UPSAMPLE_BILINEAR) &&
      op->n_inputs > 0 && g->tensors[op->inputs[0]].ndim == 4) {
    const sfc_tensor_t *x = &g->tensors[op->inputs[0]];
    const int64_t *nx = c->shape[op->inputs[0]];
    for (int axis = 0; axis < 2; axis++) {
      if (e->cls == SFC_FT_WINDOW) {
        ny[2 + axis] = window_out(op, axis, nx[2 + axis]);
      } else {
        int64_t o = y->shape[2 + axis], i = x->shape[2 + axis];
        if (i <= 0 || o % i != 0) {
          sfc_error_set(c->err, SFC_ERR_BAD_INPUT,
                        "--image-size %" PRId64 ": op %" PRId64 " (%s) upsamples %" PRId64
                        " to %" PRId64 ", not by an integer factor",
                        c->size, op->id, op->type, i, o);
          return false;
        }
        ny[2 + axis] = nx[2 + axis] * (o / i);
      }
      if (ny[2 + axis] <= 0) {
        sfc_error_set(c->err, SFC_ERR_BAD_INPUT,
                      "--image-size %" PRId64 ": op %" PRId64 " (%s) has no output at that size",
                      c->size, op->id, op->type);
        return false;
      }
    }
    return true;
  }
  if (strcmp(op->type, "_adaptive_avg_pool2d") == 0 || strcmp(op->type, "adaptive_avg_pool2d") == 0)
    return true; /* its output size is an argument */
  if (y->shape[2] == 1 && y->shape[3] == 1 &&
      (strcmp(op->type, "mean") == 0 || strcmp(op->type, "sum") == 0 ||
       strcmp(op->type, "amax") == 0))
    return true; /* a global reduction (keepdim): 1 x 1 at any size */
  /* shaped like an input: that input's new H, W (channels stay) */
  bool found = false;
  for (uint32_t k = 0; k < op->n_inputs; k++) {
    uint32_t x = op->inputs[k];
    if (!same_nhw(&g->tensors[x], y) || !c->done[x])
      continue;
    if (found && (ny[2] != c->shape[x][2] || ny[3] != c->shape[x][3])) {
      sfc_error_set(c->err, SFC_ERR_BAD_INPUT,
                    "--image-size %" PRId64 ": op %" PRId64 " (%s): output \"%.60s\" is shaped "
                    "like inputs that scale differently",
                    c->size, op->id, op->type, y->name);
      return false;
    }
    ny[2] = c->shape[x][2];
    ny[3] = c->shape[x][3];
    found = true;
  }
  if (found)
    return true;
  /* a gradient shaped like the input of the op it differentiates */
  if (op->backward_of != SFC_PLAN_NONE) {
    const sfc_op_t *f = &g->ops[op->backward_of];
    for (uint32_t k = 0; k < f->n_inputs; k++) {
      uint32_t x = f->inputs[k];
      if (same_nhw(&g->tensors[x], y) && c->done[x]) {
        ny[2] = c->shape[x][2];
        ny[3] = c->shape[x][3];
        return true;
      }
    }
  }
  sfc_error_set(c->err, SFC_ERR_BAD_INPUT,
                "--image-size %" PRId64 ": op %" PRId64 " (%s) makes \"%.60s\" (%" PRId64
                "x%" PRId64 ") by a rule sfc does not know; it cannot be rescaled",
                c->size, op->id, op->type, y->name, y->shape[2], y->shape[3]);
  return false;
}

sfc_status_t sfc_graph_image_scale(sfc_graph_t *g, int64_t size, sfc_error_t *err) {
  if (size < 1 || size > SFC_MAX_IMAGE_SIZE)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "--image-size %" PRId64 ": must be between 1 and %" PRId64, size,
                         SFC_MAX_IMAGE_SIZE);
  uint32_t image = SFC_PLAN_NONE;
  for (uint32_t t = 0; t < g->n_tensors && image == SFC_PLAN_NONE; t++)
    if (g->tensors[t].kind == SFC_KIND_INPUT && g->tensors[t].ndim == 4)
      image = t;
  if (image == SFC_PLAN_NONE)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "--image-size %" PRId64 ": the graph has no 4-D input (an image batch)",
                         size);
  int64_t h0 = g->tensors[image].shape[2], w0 = g->tensors[image].shape[3];
  if (h0 != w0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "--image-size %" PRId64 ": the input \"%.60s\" is %" PRId64 "x%" PRId64
                         ", not square",
                         size, g->tensors[image].name, h0, w0);
  if (size == h0)
    return SFC_OK;
  scaler_t c = {.g = g, .size = size, .err = err};
  c.shape = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *c.shape);
  c.done = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *c.done);
  double *ratio = calloc(g->n_ops ? g->n_ops : 1, sizeof *ratio);
  sfc_status_t st = SFC_OK;
  if (!c.shape || !c.done || !ratio) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "--image-size: out of memory");
    goto done;
  }
  /* inputs: images (4-D) and per-pixel targets (3-D) of the image's size */
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    memcpy(c.shape[t], x->shape, sizeof c.shape[t]);
    bool made = false;
    for (uint32_t i = 0; i < g->n_ops && !made; i++)
      for (uint32_t k = 0; k < g->ops[i].n_outputs && !made; k++)
        made = g->ops[i].outputs[k] == t;
    c.done[t] = !made || x->ndim != 4 || (x->flags & SFC_TENSOR_PERSISTENT);
    if (x->kind == SFC_KIND_INPUT && x->ndim >= 3 && x->shape[x->ndim - 2] == h0 &&
        x->shape[x->ndim - 1] == w0) {
      c.shape[t][x->ndim - 2] = size;
      c.shape[t][x->ndim - 1] = size;
    }
  }
  for (uint32_t i = 0; i < g->n_ops && st == SFC_OK; i++) {
    const sfc_op_t *op = &g->ops[i];
    for (uint32_t k = 0; k < op->n_outputs && st == SFC_OK; k++) {
      uint32_t t = op->outputs[k];
      if (c.done[t])
        continue; /* an in-place output, sized by its first writer */
      if (!size_output(&c, op, t))
        st = err ? err->status : SFC_ERR_BAD_INPUT;
      c.done[t] = true;
    }
    /* the op's work scales with its largest-growing 4-D operand (a convolution's
     * weight gradient does not grow; the output gradient it sums over does) */
    ratio[i] = 1;
    for (uint32_t k = 0; k < sfc_op_operand_count(op); k++) {
      uint32_t t = sfc_op_operand(op, k);
      const sfc_tensor_t *x = &g->tensors[t];
      if (x->ndim == 4 && numel(x->shape, 4) > 0) {
        double r = (double)numel(c.shape[t], 4) / (double)numel(x->shape, 4);
        ratio[i] = r > ratio[i] ? r : ratio[i];
      }
    }
  }
  if (st != SFC_OK)
    goto done;
  /* bytes follow the element count; check the limits before changing anything */
  uint64_t total = 0;
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    if (x->ndim == 0 || (x->flags & SFC_TENSOR_SYNTHETIC))
      continue;
    int64_t n0 = numel(x->shape, x->ndim);
    long double n1 = 1;
    for (uint8_t a = 0; a < x->ndim; a++)
      n1 *= (long double)c.shape[t][a];
    long double b = n0 > 0 ? (long double)x->bytes * n1 / (long double)n0 : (long double)x->bytes;
    if (b > (long double)SFC_MAX_TENSOR_BYTES) {
      st = sfc_error_set(err, SFC_ERR_LIMIT,
                         "--image-size %" PRId64 ": tensor \"%.60s\" would have more than 1 PiB",
                         size, x->name);
      goto done;
    }
    total += (uint64_t)ceill(b);
  }
  if (total > SFC_MAX_TOTAL_BYTES) {
    st = sfc_error_set(err, SFC_ERR_LIMIT,
                       "--image-size %" PRId64 ": the graph would hold more than 64 PiB", size);
    goto done;
  }
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    sfc_tensor_t *x = &g->tensors[t];
    if (x->ndim == 0 || (x->flags & SFC_TENSOR_SYNTHETIC))
      continue;
    int64_t n0 = numel(x->shape, x->ndim), n1 = numel(c.shape[t], x->ndim);
    if (n0 > 0 && n1 != n0) {
      uint64_t elem = x->bytes / (uint64_t)n0;
      x->bytes = x->bytes % (uint64_t)n0 == 0
                     ? elem * (uint64_t)n1
                     : (uint64_t)ceill((long double)x->bytes * n1 / (long double)n0);
      if (x->bytes == 0)
        x->bytes = 1;
    }
    memcpy(x->shape, c.shape[t], sizeof x->shape);
  }
  for (uint32_t i = 0; i < g->n_ops; i++) {
    sfc_op_t *op = &g->ops[i];
    double r = ratio[i];
    op->flops = (uint64_t)((double)op->flops * r);
    if (op->time_us >= 0) {
      double a = op->time_fixed_us;
      a = !(a > 0) ? 0 : a < op->time_us ? a : op->time_us;
      op->time_us = a + (op->time_us - a) * r;
    }
    if (op->workspace_bytes) {
      double w = ceil((double)op->workspace_bytes * r);
      op->workspace_bytes = w < 1                              ? 1
                            : w > (double)SFC_MAX_TENSOR_BYTES ? SFC_MAX_TENSOR_BYTES
                                                               : (uint64_t)w;
      if (op->workspace != SFC_PLAN_NONE) {
        g->tensors[op->workspace].bytes = op->workspace_bytes;
        g->tensors[op->workspace].shape[0] = (int64_t)op->workspace_bytes; /* bytes, 1-D */
      }
    }
  }
done:
  free(c.shape);
  free(c.done);
  free(ratio);
  return st;
}
