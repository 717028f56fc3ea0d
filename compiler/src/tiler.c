/* tiler.c — see tiler.h.
 *
 * Boxes (masked halo mode). For tile t, with O_t its part of the segment's output:
 *   1. need[output] = O_t; walk the forward ops backwards: an op's output box is the
 *      hull of what its outputs are needed on, its spatial inputs' boxes are what that
 *      box reads (the catalog's exact maps per H and W; N kept; C whole), hulled into
 *      their needs. need[] is every forward tensor's box.
 *   2. walk the backward ops forwards: a gradient's box is the box of the forward
 *      tensor whose data it is computed on (a convolution's or pooling's input gradient:
 *      that input's; threshold_backward's: the ReLU output's; a gradient sum: the hull
 *      of its terms; a channel slice: its source's). Outside its box the tile's gradient
 *      is zero, so readers treat it as zero there.
 * Boxes (seed halo mode): seed_tile_boxes, below; the forward segment as step 1 above.
 * Cost: O(ops in the segment) per tile.
 */
#include "tiler.h"

#include "passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfc/steps.h"
#include "tile_catalog.h"

#define NONE SFC_PLAN_NONE

static bool in_range(uint32_t i, uint32_t begin, uint32_t end) {
  return i >= begin && i < end;
}

static bool is_spatial(const sfc_tensor_t *t) {
  return t->ndim == 4;
}

/* A 4-D tensor whose shape does not account for its bytes (the graph format does not
 * check shape against bytes): the tiler sizes boxes from the shape, elements x bytes
 * per element, so a tiled op on it would claim bytes its blocks do not hold. */
static bool shape_disagrees(const sfc_tensor_t *t) {
  if (t->ndim != 4)
    return false;
  uint64_t n = 1;
  for (int a = 0; a < 4; a++) {
    if (t->shape[a] <= 0 || (uint64_t)t->shape[a] > t->bytes / n)
      return true; /* also n x shape past bytes: no overflow below */
    n *= (uint64_t)t->shape[a];
  }
  uint32_t e = sfc_dtype_bytes(t->dtype);
  return e ? n * e != t->bytes : t->bytes % n != 0;
}

/* Op j has an operand whose shape disagrees with its bytes, or computes data without
 * listing an output (the format allows it; an in-place op should list its tensor
 * there): its map has nothing to take a box from. */
static bool odd_op(const sfc_graph_t *g, uint32_t j) {
  const sfc_op_t *op = &g->ops[j];
  for (uint32_t k = 0; k < op->n_inputs; k++)
    if (shape_disagrees(&g->tensors[op->inputs[k]]))
      return true;
  for (uint32_t k = 0; k < op->n_outputs; k++)
    if (shape_disagrees(&g->tensors[op->outputs[k]]))
      return true;
  const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
  return op->n_outputs == 0 && e && e->cls != SFC_FT_VIEW;
}

/* The forward op whose segment op j would join: itself, or the op it is backward of. */
static uint32_t forward_of(const sfc_graph_t *g, uint32_t j) {
  const sfc_op_t *op = &g->ops[j];
  return op->phase == SFC_PHASE_FORWARD || op->backward_of == NONE ? j : op->backward_of;
}

/* whole[i]: forward op i stays out of FT segments because it, or a backward op of it,
 * is an odd_op. NULL when out of memory (the caller fails). */
static bool *whole_ops(const sfc_graph_t *g, sfc_pool_t *pool) {
  bool *whole = sfc_pool_calloc(pool, g->n_ops ? g->n_ops : 1, sizeof *whole);
  if (!whole)
    return NULL;
  for (uint32_t j = 0; j < g->n_ops; j++)
    if (odd_op(g, j))
      whole[forward_of(g, j)] = true;
  return whole;
}

/* whole_ops for one forward op f (O(ops): for messages). */
static bool odd_forward(const sfc_graph_t *g, uint32_t f) {
  for (uint32_t j = f; j < g->n_ops; j++)
    if (forward_of(g, j) == f && odd_op(g, j))
      return true;
  return false;
}

/* Scratch memory: an op's synthetic workspace (workspace_bytes; no shape), or a
 * workspace-kind tensor the exporter lists among an op's outputs (convolution_backward's
 * buffers). Inside a segment it is a per-tile buffer (PARTIAL) whose box is the step's
 * share of the whole op's (scale_scratch). */
static bool is_workspace(const sfc_graph_t *g, uint32_t t) {
  return g->tensors[t].kind == SFC_KIND_WORKSPACE;
}

static sfc_ft_box_t box_empty(void) {
  sfc_ft_box_t b;
  for (int a = 0; a < 4; a++)
    b.lo[a] = b.hi[a] = 0;
  return b;
}

static sfc_ft_box_t box_whole(const sfc_tensor_t *t) {
  sfc_ft_box_t b = box_empty();
  for (int a = 0; a < 4; a++)
    b.hi[a] = a < t->ndim ? t->shape[a] : 1;
  return b;
}

static bool box_is_empty(const sfc_ft_box_t *b) {
  for (int a = 0; a < 4; a++)
    if (b->lo[a] >= b->hi[a])
      return true;
  return false;
}

/* b's N, H, W with every channel of x (a gradient's box always spans its channels; a
 * sum may read its input through a channel slice, a cat's gradient). */
static sfc_ft_box_t all_channels(const sfc_ft_box_t *b, const sfc_tensor_t *x) {
  sfc_ft_box_t c = *b;
  if (!box_is_empty(&c)) {
    c.lo[1] = 0;
    c.hi[1] = x->shape[1];
  }
  return c;
}

static void box_hull(sfc_ft_box_t *into, const sfc_ft_box_t *b) {
  if (box_is_empty(b))
    return;
  if (box_is_empty(into)) {
    *into = *b;
    return;
  }
  for (int a = 0; a < 4; a++) {
    if (b->lo[a] < into->lo[a])
      into->lo[a] = b->lo[a];
    if (b->hi[a] > into->hi[a])
      into->hi[a] = b->hi[a];
  }
}

/* The share of tensor x's elements box b holds, measured as sfc/steps.h measures a plan
 * box (sfc_box_share: 1 for a box it cannot measure, an empty one among them). */
static double box_fraction(const sfc_tensor_t *x, const sfc_ft_box_t *b) {
  sfc_plan_box_t p = {.ndim = x->ndim < 4 ? x->ndim : 4};
  for (uint32_t a = 0; a < p.ndim; a++) {
    p.lo[a] = b->lo[a];
    p.hi[a] = b->hi[a];
  }
  return sfc_box_share(&p, x->shape, x->ndim);
}

/* Workspace x's box for a step that computes `share` of its op: [0, share of it)
 * rounded up, at least one element; scratch that is not flat stays whole. */
static sfc_ft_box_t scratch_box(const sfc_tensor_t *x, double share) {
  sfc_ft_box_t b = box_whole(x);
  if (x->ndim != 1)
    return b;
  double whole = (double)x->shape[0], n = ceil(whole * share);
  b.hi[0] = n < 1 ? 1 : n > whole ? (int64_t)whole : (int64_t)n;
  return b;
}

/* Scratch follows the tile. An op's workspace scales with its data as --image-size and
 * --batch scale it (linearly), so a tile step's scratch is its share of the whole op's:
 * the share sfc/steps.h gives the step's time (the first data operand, outputs then
 * inputs, whose box holds less than the whole tensor), rounded up, at least one element.
 * Sets boxes[k] of every flat workspace operand k of op to [0, that) elements. */
static void scale_scratch(const sfc_graph_t *g, const sfc_op_t *op, sfc_ft_box_t *boxes) {
  uint32_t nio = op->n_inputs + op->n_outputs;
  double share = 1;
  for (uint32_t i = 0; i < nio; i++) {
    uint32_t k = i < op->n_outputs ? op->n_inputs + i : i - op->n_outputs;
    uint32_t t = sfc_op_operand(op, k);
    if (is_workspace(g, t))
      continue;
    double r = box_fraction(&g->tensors[t], &boxes[k]);
    if (r < 1) {
      share = r;
      break;
    }
  }
  for (uint32_t k = 0; k < sfc_op_operand_count(op); k++) {
    uint32_t t = sfc_op_operand(op, k);
    if (is_workspace(g, t))
      boxes[k] = scratch_box(&g->tensors[t], share);
  }
}

uint32_t sfc_ft_tile_count(const sfc_ft_segment_t *s) {
  return s->grid[0] * s->grid[1] * s->grid[2] * s->grid[3];
}

uint64_t sfc_ft_box_bytes(const sfc_graph_t *g, uint32_t t, const sfc_ft_box_t *b) {
  const sfc_tensor_t *x = &g->tensors[t];
  if (box_is_empty(b))
    return 0;
  uint64_t total = 1, part = 1;
  for (int a = 0; a < x->ndim && a < 4; a++) {
    total *= (uint64_t)x->shape[a];
    part *= (uint64_t)(b->hi[a] - b->lo[a]);
  }
  if (total == 0)
    return 0;
  uint64_t elem = x->bytes / total; /* the exporter's bytes are elements x size */
  return elem ? elem * part : (x->bytes * part + total - 1) / total;
}

/* ---- op semantics -------------------------------------------------------------- */

/* A transposed convolution (the exporter records output_padding only for those): its
 * output o receives input i when o = i*s - p + j*d, the converse of a convolution, so
 * its maps are a convolution's with input and output exchanged. */
static bool is_transposed(const sfc_op_t *op) {
  return (op->attrs.present & SFC_ATTR_OUTPUT_PADDING) && strcmp(op->type, "convolution") == 0;
}

/* One spatial axis (0 = H, 1 = W) of a windowed op from input x to output y. */
static sfc_map_window_t op_window(const sfc_op_t *op, const sfc_tensor_t *x, const sfc_tensor_t *y,
                                  int axis) {
  const sfc_attrs_t *a = &op->attrs;
  bool pool = strcmp(op->type, "convolution") != 0;
  sfc_map_window_t w = {.n_in = x->shape[2 + axis], .n_out = y->shape[2 + axis]};
  w.k = (a->present & SFC_ATTR_KERNEL) ? a->kernel[axis] : 1;
  w.s = (a->present & SFC_ATTR_STRIDE) ? a->stride[axis] : (pool ? w.k : 1);
  w.p = (a->present & SFC_ATTR_PADDING) ? a->padding[axis] : 0;
  w.d = (a->present & SFC_ATTR_DILATION) ? a->dilation[axis] : 1;
  return w;
}

/* The catalog's box maps per H and W (N kept, C whole) of op from input x to output y:
 * forward, the box of x that output box `box` reads; inverse, the box of y whose reads
 * meet input box `box` (where a gradient on `box` needs the output gradient). */
static sfc_ft_box_t map_box(const sfc_op_t *op, sfc_ft_class_t cls, const sfc_tensor_t *x,
                            const sfc_tensor_t *y, const sfc_ft_box_t *box, bool inverse) {
  if (box_is_empty(box))
    return box_empty();
  sfc_ft_box_t b = box_whole(inverse ? y : x);
  b.lo[0] = box->lo[0];
  b.hi[0] = box->hi[0];
  for (int axis = 0; axis < 2; axis++) {
    int64_t lo = box->lo[2 + axis], hi = box->hi[2 + axis] - 1, rlo = lo, rhi = hi;
    int64_t n_in = x->shape[2 + axis], n_out = y->shape[2 + axis];
    bool any = true;
    switch (cls) {
      case SFC_FT_WINDOW: {
        sfc_map_window_t w = op_window(op, x, y, axis);
        if (is_transposed(op)) { /* the convolution from y to x: its maps exchanged */
          w.n_in = n_out;
          w.n_out = n_in;
          any = inverse ? sfc_map_window_in(&w, lo, hi, &rlo, &rhi)
                        : sfc_map_window_out(&w, lo, hi, &rlo, &rhi);
        } else {
          any = inverse ? sfc_map_window_out(&w, lo, hi, &rlo, &rhi)
                        : sfc_map_window_in(&w, lo, hi, &rlo, &rhi);
        }
        break;
      }
      case SFC_FT_UPSAMPLE_NEAREST:
        any = inverse ? sfc_map_nearest_out(n_in, n_out, lo, hi, &rlo, &rhi)
                      : sfc_map_nearest_in(n_in, n_out, lo, hi, &rlo, &rhi);
        break;
      case SFC_FT_UPSAMPLE_BILINEAR:
        any = inverse ? sfc_map_bilinear_out(n_in, n_out, lo, hi, &rlo, &rhi)
                      : sfc_map_bilinear_in(n_in, n_out, lo, hi, &rlo, &rhi);
        break;
      default: /* pointwise, cat, views: the same index */
        break;
    }
    if (!any)
      return box_empty();
    b.lo[2 + axis] = rlo;
    b.hi[2 + axis] = rhi + 1;
  }
  return b;
}

/* The box of spatial input x that op's output box `out` (of tensor y) reads. */
static sfc_ft_box_t input_box(const sfc_graph_t *g, const sfc_op_t *op, sfc_ft_class_t cls,
                              uint32_t xi, uint32_t yi, const sfc_ft_box_t *out) {
  return map_box(op, cls, &g->tensors[xi], &g->tensors[yi], out, false);
}

static bool forward_class_ok(sfc_ft_class_t c) {
  return c == SFC_FT_WINDOW || c == SFC_FT_POINTWISE || c == SFC_FT_UPSAMPLE_NEAREST ||
         c == SFC_FT_UPSAMPLE_BILINEAR || c == SFC_FT_CAT || c == SFC_FT_VIEW;
}

/* The backward ops the tiler knows, and where each gets its output box. */
typedef enum bwd_rule {
  BWD_UNKNOWN = 0,
  BWD_VIEW,      /* detach: no output */
  BWD_DATA_IN0,  /* conv / pool / upsample backward: grad of the forward op's input 0 */
  BWD_THRESHOLD, /* threshold_backward(dy, y): the ReLU output's box */
  BWD_SUM,       /* add of gradients: the hull of the terms */
  BWD_SLICE,     /* a channel slice of a gradient (cat's backward) */
} bwd_rule_t;

static bwd_rule_t backward_rule(const sfc_op_t *op) {
  const char *t = op->type;
  if (strcmp(t, "detach") == 0)
    return BWD_VIEW;
  if (strcmp(t, "convolution_backward") == 0 ||
      strcmp(t, "max_pool2d_with_indices_backward") == 0 || strcmp(t, "avg_pool2d_backward") == 0 ||
      strcmp(t, "upsample_nearest2d_backward") == 0 ||
      strcmp(t, "upsample_bilinear2d_backward") == 0)
    return BWD_DATA_IN0;
  if (strcmp(t, "threshold_backward") == 0)
    return BWD_THRESHOLD;
  if (strcmp(t, "add") == 0)
    return BWD_SUM;
  if (strcmp(t, "slice") == 0)
    return BWD_SLICE;
  return BWD_UNKNOWN;
}

/* The plan's record of op's map (plan format 1.5, sfc_plan_op_t.map and its window):
 * what the boxes of its tile steps follow, so the loader and the verifier can check them
 * (invariant 58). Forward ops by the catalog, backward ops by backward_rule; NONE for
 * ops with no map, or whose operands are not the 4-D tensors the map needs. */
void sfc_ft_op_map(const sfc_graph_t *g, uint32_t op_index, sfc_plan_op_t *rec) {
  const sfc_op_t *op = &g->ops[op_index];
  rec->map = SFC_MAP_NONE;
  memset(rec->kernel, 0, sizeof rec->kernel);
  memset(rec->stride, 0, sizeof rec->stride);
  memset(rec->padding, 0, sizeof rec->padding);
  memset(rec->dilation, 0, sizeof rec->dilation);
  bool io4 = op->n_inputs > 0 && op->n_outputs > 0 && is_spatial(&g->tensors[op->inputs[0]]) &&
             is_spatial(&g->tensors[op->outputs[0]]);
  if (op->phase == SFC_PHASE_FORWARD) {
    const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
    switch (e ? e->cls : SFC_FT_END) {
      case SFC_FT_WINDOW:
        if (!io4)
          return;
        rec->map = is_transposed(op) ? SFC_MAP_WINDOW_T : SFC_MAP_WINDOW;
        for (int a = 0; a < 2; a++) {
          sfc_map_window_t w =
              op_window(op, &g->tensors[op->inputs[0]], &g->tensors[op->outputs[0]], a);
          rec->kernel[a] = (int32_t)w.k;
          rec->stride[a] = (int32_t)w.s;
          rec->padding[a] = (int32_t)w.p;
          rec->dilation[a] = (int32_t)w.d;
        }
        return;
      case SFC_FT_POINTWISE:
        rec->map = SFC_MAP_POINTWISE;
        return;
      case SFC_FT_UPSAMPLE_NEAREST:
        rec->map = io4 ? SFC_MAP_NEAREST : SFC_MAP_NONE;
        return;
      case SFC_FT_UPSAMPLE_BILINEAR:
        rec->map = io4 ? SFC_MAP_BILINEAR : SFC_MAP_NONE;
        return;
      case SFC_FT_CAT:
        rec->map = SFC_MAP_CAT;
        return;
      case SFC_FT_VIEW:
        rec->map = SFC_MAP_VIEW;
        return;
      default:
        return;
    }
  }
  switch (backward_rule(op)) {
    case BWD_DATA_IN0: {
      if (op->backward_of == NONE || op->n_inputs == 0 || !is_spatial(&g->tensors[op->inputs[0]]))
        return;
      sfc_plan_op_t f;
      sfc_ft_op_map(g, op->backward_of, &f);
      if (f.map == SFC_MAP_WINDOW || f.map == SFC_MAP_WINDOW_T || f.map == SFC_MAP_NEAREST ||
          f.map == SFC_MAP_BILINEAR)
        rec->map = SFC_MAP_GRAD_DATA;
      return;
    }
    case BWD_THRESHOLD:
      rec->map = SFC_MAP_GRAD_POINTWISE;
      return;
    case BWD_SUM:
      rec->map = SFC_MAP_GRAD_SUM;
      return;
    case BWD_SLICE:
      rec->map = SFC_MAP_GRAD_SLICE;
      return;
    case BWD_VIEW:
      rec->map = SFC_MAP_VIEW;
      return;
    default:
      return;
  }
}

/* ---- analysis ------------------------------------------------------------------- */

static bool op_in_segment(const sfc_ft_segment_t *s, uint32_t i) {
  return in_range(i, s->fwd_begin, s->fwd_end) || in_range(i, s->bwd_begin, s->bwd_end);
}

sfc_status_t sfc_ft_analyze(const sfc_graph_t *g, const sfc_ft_segment_t *s, sfc_ft_info_t *info,
                            sfc_pool_t *pool, sfc_error_t *err) {
  uint32_t nt = g->n_tensors, no = g->n_ops;
  if (s->fwd_begin >= s->fwd_end || s->fwd_end > no || s->bwd_begin > s->bwd_end ||
      s->bwd_end > no || (s->bwd_begin < s->bwd_end && s->bwd_begin < s->fwd_end))
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "segment op ranges [%u, %u) [%u, %u) are invalid",
                         s->fwd_begin, s->fwd_end, s->bwd_begin, s->bwd_end);
  if (s->output >= nt || !is_spatial(&g->tensors[s->output]))
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "segment output is not a 4-D tensor");
  const sfc_tensor_t *out = &g->tensors[s->output];
  if (s->grid[1] != 1 || s->grid[0] < 1 || s->grid[2] < 1 || s->grid[3] < 1 ||
      (int64_t)s->grid[0] > out->shape[0] || (int64_t)s->grid[2] > out->shape[2] ||
      (int64_t)s->grid[3] > out->shape[3])
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "grid %ux%ux%ux%u does not fit the output's shape",
                         s->grid[0], s->grid[1], s->grid[2], s->grid[3]);
  info->role = sfc_pool_calloc(pool, nt ? nt : 1, sizeof *info->role);
  info->fwd_of = sfc_pool_calloc(pool, nt ? nt : 1, sizeof *info->fwd_of);
  info->recompute = sfc_pool_calloc(pool, no ? no : 1, sizeof *info->recompute);
  uint8_t *made = sfc_pool_calloc(pool, nt ? nt : 1, 1); /* 1 forward, 2 backward */
  bool *outside = sfc_pool_calloc(pool, nt ? nt : 1, sizeof *outside);
  bool *weight_grad = sfc_pool_calloc(pool, nt ? nt : 1, sizeof *weight_grad);
  if (!weight_grad || !info->role || !info->fwd_of || !info->recompute || !made || !outside)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory analysing a segment");
  for (uint32_t t = 0; t < nt; t++)
    info->fwd_of[t] = NONE;
  info->n_partial = 0;

  /* forward ops: known, forward, spatial data */
  for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
    if (op->phase != SFC_PHASE_FORWARD || !e || !forward_class_ok(e->cls))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "op %u (%s) cannot be tiled: %s", i, op->type,
                           !e ? "not in the op catalog" : e->why);
    if (op->attrs.groups < 0 || (is_transposed(op) && op->attrs.groups > 1))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "op %u (%s): grouped transposed windows are not tiled", i, op->type);
    for (uint32_t k = 0; k < op->n_outputs; k++) {
      if (!is_spatial(&g->tensors[op->outputs[k]]) && !is_workspace(g, op->outputs[k]))
        return sfc_error_set(err, SFC_ERR_BAD_INPUT, "op %u (%s) writes a tensor that is not 4-D",
                             i, op->type);
      made[op->outputs[k]] = 1;
    }
    if (op->workspace != NONE)
      made[op->workspace] = 1;
    for (uint32_t k = 0; k < sfc_op_operand_count(op); k++)
      if (g->tensors[sfc_op_operand(op, k)].ndim == 0 && !is_workspace(g, sfc_op_operand(op, k)))
        return sfc_error_set(err, SFC_ERR_BAD_INPUT, "op %u (%s) has an operand with no shape", i,
                             op->type);
  }
  if (made[s->output] != 1)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "the segment's output is not made by its ops");
  /* backward ops: each of a forward op inside (or a view / sum / slice), and every
   * backward op of a forward op inside is in the range */
  for (uint32_t i = 0; i < no; i++) {
    const sfc_op_t *op = &g->ops[i];
    bool in_b = in_range(i, s->bwd_begin, s->bwd_end);
    if (!in_b && op->backward_of != NONE && in_range(op->backward_of, s->fwd_begin, s->fwd_end) &&
        op->n_outputs > 0)
      return sfc_error_set(
          err, SFC_ERR_BAD_INPUT,
          "op %u (%s), a backward op of the segment, is outside its backward range", i, op->type);
    if (!in_b)
      continue;
    bwd_rule_t r = backward_rule(op);
    if (op->phase != SFC_PHASE_BACKWARD || r == BWD_UNKNOWN)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "backward op %u (%s) cannot be tiled", i,
                           op->type);
    if (r == BWD_DATA_IN0 || r == BWD_THRESHOLD) {
      if (op->backward_of == NONE || !in_range(op->backward_of, s->fwd_begin, s->fwd_end))
        return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "backward op %u (%s) belongs to no forward op of the segment", i,
                             op->type);
    }
    for (uint32_t k = 0; k < op->n_outputs; k++) {
      made[op->outputs[k]] = made[op->outputs[k]] ? made[op->outputs[k]] : 2;
      if (r == BWD_DATA_IN0) { /* all but the input's gradient: weights', summed */
        const sfc_tensor_t *fx = &g->tensors[g->ops[op->backward_of].inputs[0]];
        const sfc_tensor_t *x = &g->tensors[op->outputs[k]];
        weight_grad[op->outputs[k]] =
            !(k == 0 && x->ndim == 4 && memcmp(x->shape, fx->shape, 4 * sizeof x->shape[0]) == 0) &&
            !is_workspace(g, op->outputs[k]);
      }
    }
    if (op->workspace != NONE)
      made[op->workspace] = 2;
  }
  /* tensors touched outside the segment's ops; a tensor the forward ops write must not
   * be written outside them (an in-place op on a checkpoint would run once per tile) */
  for (uint32_t i = 0; i < no; i++) {
    if (op_in_segment(s, i))
      continue;
    const sfc_op_t *op = &g->ops[i];
    for (uint32_t k = 0; k < sfc_op_operand_count(op); k++)
      outside[sfc_op_operand(op, k)] = true;
    for (uint32_t k = 0; k < op->n_outputs; k++)
      if (made[op->outputs[k]] == 1)
        return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "tensor %u (%s) is written inside the segment and by op %u (%s) "
                             "outside it",
                             op->outputs[k], g->tensors[op->outputs[k]].name, i, op->type);
  }
  /* roles: what is made inside and used only inside is recomputed, unless the op that
   * makes it also makes a kept tensor (then everything it makes is kept) */
  for (uint32_t i = s->fwd_begin; i < s->fwd_end || i < s->bwd_end; i++) {
    if (!op_in_segment(s, i))
      continue;
    const sfc_op_t *op = &g->ops[i];
    for (uint32_t k = 0; k < sfc_op_operand_count(op); k++) {
      uint32_t t = sfc_op_operand(op, k);
      const sfc_tensor_t *x = &g->tensors[t];
      if (info->role[t])
        continue;
      if (!made[t])
        info->role[t] =
            is_spatial(x) && k < op->n_inputs ? SFC_FT_ROLE_CHECKPOINT : SFC_FT_ROLE_WHOLE;
      else if (made[t] == 1)
        info->role[t] =
            (outside[t] || (x->flags & SFC_TENSOR_PERSISTENT) || x->kind == SFC_KIND_OUTPUT)
                ? SFC_FT_ROLE_CHECKPOINT
                : SFC_FT_ROLE_PARTIAL;
      else
        info->role[t] = outside[t] || x->kind == SFC_KIND_OUTPUT || weight_grad[t]
                            ? SFC_FT_ROLE_ACCUMULATE
                            : SFC_FT_ROLE_PARTIAL;
    }
  }
  /* params and other non-spatial inputs of forward ops are whole even if "spatial"-ranked
   * (a 4-D weight): a tensor is a checkpoint only when it is some op's data input */
  for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
    uint32_t data_inputs = e->cls == SFC_FT_WINDOW ? 1u : op->n_inputs;
    for (uint32_t k = data_inputs; k < op->n_inputs; k++)
      if (!made[op->inputs[k]])
        info->role[op->inputs[k]] = SFC_FT_ROLE_WHOLE;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++) {
      const sfc_op_t *op = &g->ops[i];
      bool kept = false;
      for (uint32_t k = 0; k < op->n_outputs; k++)
        kept |= info->role[op->outputs[k]] == SFC_FT_ROLE_CHECKPOINT;
      for (uint32_t k = 0; kept && k < op->n_outputs; k++)
        if (info->role[op->outputs[k]] == SFC_FT_ROLE_PARTIAL &&
            !is_workspace(g, op->outputs[k])) { /* scratch is never kept */
          info->role[op->outputs[k]] = SFC_FT_ROLE_CHECKPOINT;
          changed = true;
        }
    }
  }
  /* a kept tensor made inside must be cut exactly like the output */
  for (uint32_t t = 0; t < nt; t++) {
    if (made[t] == 1 && info->role[t] == SFC_FT_ROLE_CHECKPOINT) {
      const sfc_tensor_t *x = &g->tensors[t];
      if (x->shape[0] != out->shape[0] || x->shape[2] != out->shape[2] ||
          x->shape[3] != out->shape[3])
        return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "tensor %u (%s), made inside the segment, is used outside it but is "
                             "not shaped like the output",
                             t, x->name);
    }
    if (made[t] == 2 && info->role[t] == SFC_FT_ROLE_ACCUMULATE && is_spatial(&g->tensors[t]) &&
        g->tensors[t].kind != SFC_KIND_GRAD)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "tensor %u (%s), made by the segment's backward, is used outside it", t,
                           g->tensors[t].name);
    if (info->role[t] == SFC_FT_ROLE_PARTIAL)
      info->n_partial++;
  }
  /* seed mode computes a gradient the segment hands on once per tile, on the tile's
   * disjoint part only: no op of the segment may read more of it */
  for (uint32_t i = s->bwd_begin; s->halo == SFC_HALO_SEED && i < s->bwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    if (backward_rule(op) == BWD_VIEW)
      continue;
    for (uint32_t k = 0; k < op->n_inputs; k++) {
      uint32_t t = op->inputs[k];
      if (made[t] == 2 && info->role[t] == SFC_FT_ROLE_ACCUMULATE && !weight_grad[t] &&
          is_spatial(&g->tensors[t]))
        return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "tiling.halo seed: gradient %u (%s) is handed on by the segment and "
                             "also read by its op %u (%s); seed tiles compute it only on their "
                             "disjoint part (use halo masked)",
                             t, g->tensors[t].name, i, op->type);
    }
  }
  if (s->halo > SFC_HALO_SEED)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "segment halo mode %u is unknown", s->halo);
  /* the forward ops the backward reruns: those whose every output is recomputed */
  for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    bool all = op->n_outputs > 0;
    for (uint32_t k = 0; k < op->n_outputs; k++)
      all &= info->role[op->outputs[k]] == SFC_FT_ROLE_PARTIAL;
    info->recompute[i] = all && s->bwd_begin < s->bwd_end;
  }
  for (uint32_t t = 0; t < nt; t++)
    if (made[t] == 1 || (info->role[t] && !made[t]))
      info->fwd_of[t] = t;
  return SFC_OK;
}

/* ---- boxes ---------------------------------------------------------------------- */

/* Tile `tile`'s disjoint part of a 4-D tensor x: the grid applied to x's own shape
 * (tile index row-major over N, C, H, W; channels whole). Over the tiles these cover x
 * exactly once. */
static sfc_ft_box_t part_box(const sfc_tensor_t *x, const sfc_ft_segment_t *s, uint32_t tile) {
  sfc_ft_box_t o = box_whole(x);
  uint32_t rest = tile;
  for (int a = 3; a >= 0; a--) {
    uint32_t n = s->grid[a], i = rest % n;
    rest /= n;
    if (a == 1)
      continue;
    int64_t len = x->shape[a];
    o.lo[a] = len * (int64_t)i / (int64_t)n;
    o.hi[a] = len * (int64_t)(i + 1) / (int64_t)n;
  }
  return o;
}

/* The hull of op's outputs' boxes, its scratch aside (a transposed convolution on the
 * CPU lists its columns buffer among its outputs: whole in every tile). */
static sfc_ft_box_t outputs_hull(const sfc_graph_t *g, const sfc_op_t *op,
                                 const sfc_ft_box_t *boxes) {
  sfc_ft_box_t ob = box_empty();
  for (uint32_t k = 0; k < op->n_outputs; k++)
    if (!is_workspace(g, op->outputs[k]))
      box_hull(&ob, &boxes[op->outputs[k]]);
  return ob;
}

/* One forward op's share of a tile's receptive field: its outputs' boxes widen to
 * every channel of the hull of what is needed of them (ob), and each spatial data input
 * that is not whole needs the box the op reads for ob. */
static void receptive_field(const sfc_graph_t *g, const sfc_ft_info_t *info, const sfc_op_t *op,
                            const sfc_ft_box_t *ob, sfc_ft_box_t *boxes) {
  /* scratch: the step's share of the op's (scale_scratch), the share of its first output */
  double share = 1;
  for (uint32_t k = 0; k < op->n_outputs && share >= 1; k++)
    if (!is_workspace(g, op->outputs[k])) {
      sfc_ft_box_t b = all_channels(ob, &g->tensors[op->outputs[k]]);
      share = box_fraction(&g->tensors[op->outputs[k]], &b);
    }
  for (uint32_t k = 0; k < sfc_op_operand_count(op); k++) {
    uint32_t t = sfc_op_operand(op, k);
    if (k >= op->n_inputs && is_workspace(g, t)) {
      sfc_ft_box_t b = scratch_box(&g->tensors[t], share);
      box_hull(&boxes[t], &b);
    }
  }
  for (uint32_t k = 0; k < op->n_outputs; k++) {
    uint32_t t = op->outputs[k];
    if (is_workspace(g, t))
      continue;
    sfc_ft_box_t b = *ob;
    b.lo[1] = 0;
    b.hi[1] = g->tensors[t].shape[1];
    box_hull(&boxes[t], &b);
  }
  const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
  uint32_t data_inputs = e->cls == SFC_FT_WINDOW ? 1u : op->n_inputs;
  for (uint32_t k = 0; k < data_inputs; k++) {
    uint32_t x = op->inputs[k];
    if (info->role[x] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[x]))
      continue;
    sfc_ft_box_t b = input_box(g, op, e->cls, x, op->outputs[0], ob);
    box_hull(&boxes[x], &b);
  }
}

/* Step 1: the forward receptive fields of O_t (both modes' forward segment). */
void sfc_ft_tile_boxes_forward(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                               const sfc_ft_info_t *info, uint32_t tile, sfc_ft_box_t *boxes) {
  for (uint32_t t = 0; t < g->n_tensors; t++)
    boxes[t] = info->role[t] == SFC_FT_ROLE_WHOLE ? box_whole(&g->tensors[t]) : box_empty();
  boxes[s->output] = part_box(&g->tensors[s->output], s, tile);
  /* 1. forward receptive fields, backwards over the forward ops */
  for (uint32_t i = s->fwd_end; i-- > s->fwd_begin;) {
    const sfc_op_t *op = &g->ops[i];
    sfc_ft_box_t ob = outputs_hull(g, op, boxes);
    if (op->n_outputs == 0) /* a view: reads what its input is needed on */
      continue;
    receptive_field(g, info, op, &ob, boxes);
  }
}

static void seed_tile_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                            const sfc_ft_info_t *info, uint32_t tile, sfc_ft_box_t *boxes);

/* Tensor t is written by a backward op of segment s before op `before`. */
static bool made_before(const sfc_graph_t *g, const sfc_ft_segment_t *s, uint32_t t,
                        uint32_t before) {
  for (uint32_t i = s->bwd_begin; i < before && i < s->bwd_end; i++)
    for (uint32_t k = 0; k < g->ops[i].n_outputs; k++)
      if (g->ops[i].outputs[k] == t)
        return true;
  return false;
}

void sfc_ft_tile_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s, const sfc_ft_info_t *info,
                       uint32_t tile, sfc_ft_box_t *boxes) {
  if (s->halo == SFC_HALO_SEED) {
    seed_tile_boxes(g, s, info, tile, boxes);
    return;
  }
  sfc_ft_tile_boxes_forward(g, s, info, tile, boxes);
  /* 2. gradients, forwards over the backward ops: each output gets the box its op
   * computes (sfc_ft_op_boxes), hulled over the ops that make it */
  sfc_ft_box_t ob[8];
  for (uint32_t i = s->bwd_begin; i < s->bwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    uint32_t m = sfc_op_operand_count(op);
    if (m > 8)
      continue; /* analyse refused such ops */
    bwd_rule_t r = backward_rule(op);
    uint32_t dy = op->n_inputs ? op->inputs[0] : NONE;
    if (dy != NONE && info->role[dy] == SFC_FT_ROLE_CHECKPOINT && box_is_empty(&boxes[dy])) {
      /* the output's gradient, made outside: this tile's part of it is the output's */
      uint32_t y = r == BWD_THRESHOLD && op->n_inputs > 1 ? op->inputs[1]
                   : r == BWD_DATA_IN0                    ? g->ops[op->backward_of].outputs[0]
                                                          : NONE;
      if (y != NONE && g->tensors[y].ndim == 4 && g->tensors[dy].ndim == 4) {
        boxes[dy] = boxes[y];
        boxes[dy].lo[1] = 0;
        boxes[dy].hi[1] = g->tensors[dy].shape[1];
      }
    }
    if (r == BWD_SUM)
      for (uint32_t k = 0; k < op->n_inputs; k++) {
        /* a gradient made outside the segment that only a sum reads here (a residual
         * add's other branch): each tile adds its disjoint part, so the tiles add all
         * of it exactly once (an empty box would drop it from the sum) */
        uint32_t t = op->inputs[k];
        if (info->role[t] == SFC_FT_ROLE_CHECKPOINT && box_is_empty(&boxes[t]) &&
            g->tensors[t].ndim == 4 && !made_before(g, s, t, i))
          boxes[t] = part_box(&g->tensors[t], s, tile);
      }
    sfc_ft_op_boxes(g, s, info, boxes, i, ob, NULL, NULL);
    for (uint32_t k = 0; k < op->n_outputs; k++)
      box_hull(&boxes[op->outputs[k]], &ob[op->n_inputs + k]);
  }
}

static void op_boxes(const sfc_graph_t *g, const sfc_ft_info_t *info, const sfc_ft_box_t *tb,
                     uint32_t op_index, sfc_ft_box_t *boxes, uint32_t (*pad_lo)[4],
                     uint32_t (*pad_hi)[4]);

void sfc_ft_op_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s, const sfc_ft_info_t *info,
                     const sfc_ft_box_t *tb, uint32_t op_index, sfc_ft_box_t *boxes,
                     uint32_t (*pad_lo)[4], uint32_t (*pad_hi)[4]) {
  (void)s;
  op_boxes(g, info, tb, op_index, boxes, pad_lo, pad_hi);
  scale_scratch(g, &g->ops[op_index], boxes);
}

static void op_boxes(const sfc_graph_t *g, const sfc_ft_info_t *info, const sfc_ft_box_t *tb,
                     uint32_t op_index, sfc_ft_box_t *boxes, uint32_t (*pad_lo)[4],
                     uint32_t (*pad_hi)[4]) {
  const sfc_op_t *op = &g->ops[op_index];
  uint32_t m = sfc_op_operand_count(op);
  for (uint32_t k = 0; k < m; k++) {
    uint32_t t = sfc_op_operand(op, k);
    boxes[k] = info->role[t] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[t])
                   ? box_whole(&g->tensors[t])
                   : tb[t];
    if (pad_lo)
      memset(pad_lo[k], 0, sizeof pad_lo[k]);
    if (pad_hi)
      memset(pad_hi[k], 0, sizeof pad_hi[k]);
  }
  /* the forward op whose window, inputs and output this step's data boxes follow, and
   * the output box they follow from */
  const sfc_op_t *f = NULL;
  sfc_ft_box_t fo = box_empty();
  uint32_t x_slot = NONE, dx_slot = NONE; /* operands on the input's read box */
  uint32_t idx_slot = NONE;               /* operands on the output box */
  uint32_t dy_slot = NONE;
  if (op->phase == SFC_PHASE_FORWARD) {
    const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
    if (op->n_outputs == 0 || !e)
      return; /* a view reads its input's box */
    f = op;
    fo = outputs_hull(g, op, tb);
    for (uint32_t k = 0; k < op->n_outputs; k++)
      boxes[op->n_inputs + k] = is_workspace(g, op->outputs[k])
                                    ? box_whole(&g->tensors[op->outputs[k]])
                                    : all_channels(&fo, &g->tensors[op->outputs[k]]);
    uint32_t data_inputs = e->cls == SFC_FT_WINDOW ? 1u : op->n_inputs;
    for (uint32_t k = 0; k < data_inputs; k++) {
      uint32_t x = op->inputs[k];
      if (info->role[x] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[x]))
        continue;
      boxes[k] = input_box(g, op, e->cls, x, op->outputs[0], &fo);
      if (e->cls == SFC_FT_WINDOW && k == 0)
        x_slot = 0;
    }
  } else {
    bwd_rule_t r = backward_rule(op);
    if (r == BWD_DATA_IN0) {
      f = &g->ops[op->backward_of];
      dy_slot = 0;
      fo = tb[op->inputs[0]]; /* the gradient's own box: where it can be nonzero */
      sfc_ft_box_t xb =
          input_box(g, f, sfc_ft_lookup(f->type)->cls, f->inputs[0], f->outputs[0], &fo);
      boxes[0] = fo;
      for (uint32_t k = 1; k < op->n_inputs; k++) {
        uint32_t t = op->inputs[k];
        if (t == f->inputs[0]) {
          boxes[k] = xb;
          x_slot = k;
        } else if (is_spatial(&g->tensors[t]) && info->role[t] != SFC_FT_ROLE_WHOLE) {
          boxes[k] = fo; /* max pooling's indices: shaped like the output */
          idx_slot = k;
        }
      }
      const sfc_tensor_t *fx = &g->tensors[f->inputs[0]];
      for (uint32_t k = 0; k < op->n_outputs; k++) {
        const sfc_tensor_t *x = &g->tensors[op->outputs[k]];
        if (k == 0 && x->ndim == 4 && memcmp(x->shape, fx->shape, sizeof x->shape[0] * 4) == 0 &&
            info->role[op->outputs[k]] != SFC_FT_ROLE_WHOLE) {
          boxes[op->n_inputs] = xb;
          dx_slot = op->n_inputs;
        } else {
          boxes[op->n_inputs + k] = box_whole(x);
        }
      }
    } else if (r == BWD_THRESHOLD) {
      sfc_ft_box_t b = tb[op->inputs[0]];
      for (uint32_t k = 0; k < m; k++)
        if (is_spatial(&g->tensors[sfc_op_operand(op, k)]))
          boxes[k] = b;
    } else if (r == BWD_SUM) {
      /* the inputs' hull on N, H, W; every channel of the sum (an input may be read
       * through a channel slice: a cat's gradient) */
      sfc_ft_box_t b = box_empty();
      for (uint32_t k = 0; k < op->n_inputs; k++)
        box_hull(&b, &tb[op->inputs[k]]);
      for (uint32_t k = 0; k < op->n_outputs; k++)
        boxes[op->n_inputs + k] = all_channels(&b, &g->tensors[op->outputs[k]]);
    } else if (r == BWD_SLICE && op->n_inputs > 0) {
      sfc_ft_box_t b = tb[op->inputs[0]];
      for (uint32_t k = 0; k < op->n_outputs; k++) {
        sfc_ft_box_t c = b;
        if (!box_is_empty(&c)) {
          c.lo[1] = 0;
          c.hi[1] = g->tensors[op->outputs[k]].shape[1];
        }
        boxes[op->n_inputs + k] = c;
      }
    }
  }
  (void)idx_slot;
  (void)dy_slot;
  /* the zeros a window supplies around its read box */
  if (!f || !pad_lo || !pad_hi || sfc_ft_lookup(f->type)->cls != SFC_FT_WINDOW || is_transposed(f))
    return; /* a transposed window reads no zeros: its box is every input that feeds */
  for (uint32_t slot = 0; slot < 2; slot++) {
    uint32_t k = slot == 0 ? x_slot : dx_slot;
    if (k == NONE || box_is_empty(&boxes[k]) || box_is_empty(&fo))
      continue;
    for (int axis = 0; axis < 2; axis++) {
      sfc_map_window_t w =
          op_window(f, &g->tensors[f->inputs[0]], &g->tensors[f->outputs[0]], axis);
      sfc_map_window_pads(&w, fo.lo[2 + axis], fo.hi[2 + axis], boxes[k].lo[2 + axis],
                          boxes[k].hi[2 + axis], &pad_lo[k][2 + axis], &pad_hi[k][2 + axis]);
    }
  }
}

/* ---- seed halo mode ------------------------------------------------------------ */

static bool is_conv_backward(const sfc_op_t *op) {
  return strcmp(op->type, "convolution_backward") == 0;
}

/* Output k of backward op `op` is a data gradient (the gradient of a tiled forward
 * tensor), not a weight's, a bias's or scratch. */
static bool data_grad(const sfc_graph_t *g, const sfc_ft_info_t *info, const sfc_op_t *op,
                      uint32_t k) {
  if (k >= op->n_outputs)
    return false;
  uint32_t t = op->outputs[k];
  const sfc_tensor_t *x = &g->tensors[t];
  if (!is_spatial(x) || info->role[t] == SFC_FT_ROLE_WHOLE || is_workspace(g, t))
    return false;
  switch (backward_rule(op)) {
    case BWD_DATA_IN0: {
      const sfc_tensor_t *fx = &g->tensors[g->ops[op->backward_of].inputs[0]];
      return k == 0 && memcmp(x->shape, fx->shape, 4 * sizeof x->shape[0]) == 0;
    }
    case BWD_THRESHOLD:
    case BWD_SUM:
    case BWD_SLICE:
      return true;
    default:
      return false;
  }
}

/* A convolution_backward that computes a weight's or a bias's gradient. */
static bool has_weight_grads(const sfc_graph_t *g, const sfc_ft_info_t *info, const sfc_op_t *op) {
  if (!is_conv_backward(op))
    return false;
  for (uint32_t k = 0; k < op->n_outputs; k++)
    if (!data_grad(g, info, op, k) && !is_workspace(g, op->outputs[k]))
      return true;
  return false;
}

/* The box of forward op f's output gradient that its input gradient on box `in` (of f's
 * input 0) reads: the catalog's backward maps. */
static sfc_ft_box_t grad_out_box(const sfc_graph_t *g, const sfc_op_t *f, const sfc_ft_box_t *in) {
  return map_box(f, sfc_ft_lookup(f->type)->cls, &g->tensors[f->inputs[0]],
                 &g->tensors[f->outputs[0]], in, true);
}

/* The input operand of op (a backward op of f) that is f's input 0, or NONE. */
static uint32_t forward_input_slot(const sfc_op_t *op, const sfc_op_t *f) {
  for (uint32_t k = 1; k < op->n_inputs; k++)
    if (op->inputs[k] == f->inputs[0])
      return k;
  return NONE;
}

/* Seed boxes of tile `tile` (see tiler.h). Cost: O(ops in the segment).
 *   1. every gradient the segment hands on: its own disjoint tile (part_box); walking
 *      the backward ops backwards, each input of an op gets what the op reads of it to
 *      compute its outputs on their boxes, hulled over its readers: an input gradient on
 *      box B reads the output gradient on the outputs that read B (the backward halo),
 *      the indices there, the forward input on B (for its shape only); a weight gradient
 *      reads the output gradient on its disjoint tile and the forward input on what that
 *      reads; pointwise ops, sums and slices read their output's box;
 *   2. walking the recomputed forward ops backwards, each forward input gets what the op
 *      reads to make its outputs' boxes (a forward halo of the haloed boxes). */
static void seed_tile_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                            const sfc_ft_info_t *info, uint32_t tile, sfc_ft_box_t *boxes) {
  for (uint32_t t = 0; t < g->n_tensors; t++)
    boxes[t] = info->role[t] == SFC_FT_ROLE_WHOLE ? box_whole(&g->tensors[t]) : box_empty();
  for (uint32_t i = s->bwd_begin; i < s->bwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    for (uint32_t k = 0; k < op->n_outputs; k++)
      if (data_grad(g, info, op, k) && info->role[op->outputs[k]] == SFC_FT_ROLE_ACCUMULATE)
        boxes[op->outputs[k]] = part_box(&g->tensors[op->outputs[k]], s, tile);
  }
  for (uint32_t i = s->bwd_end; i-- > s->bwd_begin;) {
    const sfc_op_t *op = &g->ops[i];
    if (op->n_outputs == 0)
      continue;
    sfc_ft_box_t ob = data_grad(g, info, op, 0) ? boxes[op->outputs[0]] : box_empty();
    switch (backward_rule(op)) {
      case BWD_DATA_IN0: {
        const sfc_op_t *f = &g->ops[op->backward_of];
        uint32_t xs = forward_input_slot(op, f);
        if (!box_is_empty(&ob)) {
          sfc_ft_box_t need = grad_out_box(g, f, &ob);
          box_hull(&boxes[op->inputs[0]], &need);
          for (uint32_t k = 1; k < op->n_inputs; k++) {
            uint32_t t = op->inputs[k];
            if (info->role[t] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[t]))
              continue;
            box_hull(&boxes[t], k == xs ? &ob : &need); /* the input; max pooling's indices */
          }
        }
        if (has_weight_grads(g, info, op)) {
          sfc_ft_box_t d = part_box(&g->tensors[op->inputs[0]], s, tile);
          box_hull(&boxes[op->inputs[0]], &d);
          uint32_t x = f->inputs[0];
          if (xs != NONE && info->role[x] != SFC_FT_ROLE_WHOLE) {
            sfc_ft_box_t xb = input_box(g, f, SFC_FT_WINDOW, x, f->outputs[0], &d);
            box_hull(&boxes[x], &xb);
          }
        }
        break;
      }
      case BWD_THRESHOLD:
      case BWD_SUM:
        for (uint32_t k = 0; k < op->n_inputs; k++)
          if (is_spatial(&g->tensors[op->inputs[k]]) &&
              info->role[op->inputs[k]] != SFC_FT_ROLE_WHOLE) {
            sfc_ft_box_t c = all_channels(&ob, &g->tensors[op->inputs[k]]);
            box_hull(&boxes[op->inputs[k]], &c); /* a sum may read a channel slice */
          }
        break;
      case BWD_SLICE:
        if (op->n_inputs > 0 && !box_is_empty(&ob)) {
          sfc_ft_box_t c = ob;
          c.lo[1] = 0;
          c.hi[1] = g->tensors[op->inputs[0]].shape[1];
          box_hull(&boxes[op->inputs[0]], &c);
        }
        break;
      default:
        break;
    }
  }
  for (uint32_t i = s->fwd_end; i-- > s->fwd_begin;) {
    const sfc_op_t *op = &g->ops[i];
    if (!info->recompute[i] || op->n_outputs == 0)
      continue;
    sfc_ft_box_t ob = outputs_hull(g, op, boxes);
    if (box_is_empty(&ob))
      continue;
    receptive_field(g, info, op, &ob, boxes);
  }
}

/* Which part of a backward op a seed step runs. */
enum { PART_ALL = 0, PART_DATA = 1, PART_WEIGHT = 2 };

/* Seed boxes of op op_index's operands in backward tile `tile` (tensor boxes tb from
 * seed_tile_boxes): PART_DATA of a convolution_backward computes the input gradient on
 * its box from the output gradient on what that reads, PART_WEIGHT the weight and bias
 * gradients from the output gradient on its disjoint tile and the input on what that
 * reads (with the window's zeros); skip[k]: output k is not computed by the step (its box
 * is empty). Other ops as seed_tile_boxes reads them (PART_ALL); forward ops as in masked
 * mode (on the seed boxes). */
static void seed_op_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                          const sfc_ft_info_t *info, const sfc_ft_box_t *tb, uint32_t tile,
                          uint32_t op_index, int part, sfc_ft_box_t *boxes, uint32_t (*pad_lo)[4],
                          uint32_t (*pad_hi)[4], bool *skip) {
  const sfc_op_t *op = &g->ops[op_index];
  uint32_t m = sfc_op_operand_count(op);
  for (uint32_t k = 0; k < m; k++)
    skip[k] = false;
  sfc_ft_op_boxes(g, s, info, tb, op_index, boxes, pad_lo, pad_hi); /* forward ops; defaults */
  if (op->phase == SFC_PHASE_FORWARD || op->n_outputs == 0)
    return;
  for (uint32_t k = 0; k < m; k++) {
    uint32_t t = sfc_op_operand(op, k);
    boxes[k] = info->role[t] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[t])
                   ? box_whole(&g->tensors[t])
                   : tb[t];
    memset(pad_lo[k], 0, sizeof pad_lo[k]);
    memset(pad_hi[k], 0, sizeof pad_hi[k]);
  }
  sfc_ft_box_t ob = data_grad(g, info, op, 0) ? tb[op->outputs[0]] : box_empty();
  switch (backward_rule(op)) {
    case BWD_DATA_IN0: {
      const sfc_op_t *f = &g->ops[op->backward_of];
      bool conv = is_conv_backward(op), weight = conv && part == PART_WEIGHT;
      sfc_ft_box_t d =
          weight ? part_box(&g->tensors[op->inputs[0]], s, tile) : grad_out_box(g, f, &ob);
      /* in the output gradient's own channels (1.6): it may be read through a channel
       * view of a wider tensor (a cat's gradient), whose box spans that tensor's */
      boxes[0] = all_channels(&d, &g->tensors[op->inputs[0]]);
      uint32_t xs = forward_input_slot(op, f);
      for (uint32_t k = 1; k < op->n_inputs; k++) {
        uint32_t t = op->inputs[k];
        if (info->role[t] == SFC_FT_ROLE_WHOLE || !is_spatial(&g->tensors[t]))
          continue;
        if (k != xs)
          boxes[k] = d; /* max pooling's indices: shaped like the output */
        else if (!weight)
          boxes[k] = ob; /* the input gradient's geometry; not read */
        else
          boxes[k] = input_box(g, f, SFC_FT_WINDOW, t, f->outputs[0], &d);
      }
      for (uint32_t k = 0; k < op->n_outputs; k++) {
        uint32_t j = op->n_inputs + k, t = op->outputs[k];
        if (data_grad(g, info, op, k)) {
          boxes[j] = ob;
          skip[j] = weight;
        } else {
          boxes[j] = box_whole(&g->tensors[t]);
          skip[j] = conv && part == PART_DATA && !is_workspace(g, t);
        }
      }
      if (weight && xs != NONE && !box_is_empty(&boxes[xs]) && !box_is_empty(&d) &&
          !is_transposed(f))
        for (int axis = 0; axis < 2; axis++) {
          sfc_map_window_t w =
              op_window(f, &g->tensors[f->inputs[0]], &g->tensors[f->outputs[0]], axis);
          sfc_map_window_pads(&w, d.lo[2 + axis], d.hi[2 + axis], boxes[xs].lo[2 + axis],
                              boxes[xs].hi[2 + axis], &pad_lo[xs][2 + axis], &pad_hi[xs][2 + axis]);
        }
      break;
    }
    case BWD_THRESHOLD:
    case BWD_SUM:
      for (uint32_t k = 0; k < m; k++)
        if (is_spatial(&g->tensors[sfc_op_operand(op, k)]) &&
            info->role[sfc_op_operand(op, k)] != SFC_FT_ROLE_WHOLE)
          boxes[k] = all_channels(&ob, &g->tensors[sfc_op_operand(op, k)]);
      break;
    case BWD_SLICE:
      if (op->n_inputs > 0) {
        boxes[0] = ob;
        if (!box_is_empty(&ob)) {
          boxes[0].lo[1] = 0;
          boxes[0].hi[1] = g->tensors[op->inputs[0]].shape[1];
        }
      }
      for (uint32_t k = 0; k < op->n_outputs; k++)
        boxes[op->n_inputs + k] = ob;
      break;
    default:
      break;
  }
  scale_scratch(g, op, boxes);
}

/* The bytes of the PARTIAL tensors' boxes in tile `tile`: seed mode, the larger of the
 * forward segment's tile and the backward's. */
static uint64_t tile_partial_bytes(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                                   const sfc_ft_info_t *info, uint32_t tile,
                                   sfc_ft_box_t *scratch) {
  uint64_t best = 0;
  for (int pass = 0; pass < (s->halo == SFC_HALO_SEED ? 2 : 1); pass++) {
    if (pass == 0)
      sfc_ft_tile_boxes(g, s, info, tile, scratch);
    else
      sfc_ft_tile_boxes_forward(g, s, info, tile, scratch);
    uint64_t sum = 0;
    for (uint32_t t = 0; t < g->n_tensors; t++)
      if (info->role[t] == SFC_FT_ROLE_PARTIAL)
        sum += sfc_ft_box_bytes(g, t, &scratch[t]);
    best = sum > best ? sum : best;
  }
  return best;
}

static uint64_t partial_peak(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                             const sfc_ft_info_t *info, sfc_ft_box_t *scratch, uint64_t limit) {
  uint64_t peak = 0;
  uint32_t n = sfc_ft_tile_count(s);
  for (uint32_t tile = 0; tile < n; tile++) {
    uint64_t sum = tile_partial_bytes(g, s, info, tile, scratch);
    if (sum > peak)
      peak = sum;
    if (peak > limit)
      break; /* over: the rest cannot bring it back */
  }
  return peak;
}

uint64_t sfc_ft_partial_peak(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                             const sfc_ft_info_t *info, sfc_ft_box_t *scratch) {
  return partial_peak(g, s, info, scratch, UINT64_MAX);
}

/* ---- the IR rewrite ------------------------------------------------------------- */

typedef struct rewriter {
  sfc_ir_t *ir;
  sfc_step_t *steps;
  uint32_t n_steps, cap_steps;
  sfc_use_t *uses;
  uint32_t n_uses, cap_uses;
  sfc_plan_box_t *boxes;
  uint32_t n_boxes, cap_boxes;
  uint32_t *acc; /* [n_tensors] the plan segment + 1 that last accumulated the tensor */
} rewriter_t;

static bool grow(sfc_pool_t *pool, void **p, uint32_t *cap, uint32_t need, size_t size) {
  if (need <= *cap)
    return true;
  uint64_t n = *cap ? *cap : 64;
  while (n < need)
    n *= 2;
  if (n > SFC_PLAN_MAX_RECORDS)
    n = need;
  if (need > SFC_PLAN_MAX_RECORDS)
    return false;
  void *q = sfc_pool_calloc(pool, (size_t)n, size);
  if (!q)
    return false;
  if (*cap)
    memcpy(q, *p, (size_t)*cap * size);
  *p = q;
  *cap = (uint32_t)n;
  return true;
}

/* Appends a copy of the steps pass's step for op i; boxes from the tile when `tb`; in a
 * seed segment's backward, `part` of the op (PART_*), its time `factor` of the op's. */
static sfc_status_t emit_step(rewriter_t *w, const sfc_step_t *src, const sfc_ft_segment_t *s,
                              const sfc_ft_info_t *info, const sfc_ft_box_t *tb, uint32_t seg,
                              uint32_t tile, uint32_t flags, int part, double factor,
                              sfc_error_t *err) {
  sfc_ir_t *ir = w->ir;
  const sfc_graph_t *g = ir->graph;
  const sfc_op_t *op = &g->ops[src->op];
  uint32_t m = src->use_count;
  if (!grow(&ir->pool, (void **)&w->steps, &w->cap_steps, w->n_steps + 1, sizeof *w->steps) ||
      !grow(&ir->pool, (void **)&w->uses, &w->cap_uses, w->n_uses + m, sizeof *w->uses) ||
      !grow(&ir->pool, (void **)&w->boxes, &w->cap_boxes, w->n_boxes + m, sizeof *w->boxes))
    return sfc_error_set(err, SFC_ERR_LIMIT, "tiling makes more steps than a plan can hold");
  sfc_step_t st = *src;
  st.use_begin = w->n_uses;
  st.flags = flags;
  if (tb) {
    sfc_ft_box_t ob[SFC_MAX_OP_OPERANDS > 64 ? 64 : SFC_MAX_OP_OPERANDS];
    uint32_t pl[64][4], ph[64][4];
    bool skip[64] = {false};
    if (m > 64)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "op %u has too many operands to tile", src->op);
    if (s->halo == SFC_HALO_SEED && !(flags & SFC_STEP_RECOMPUTE) && op->phase != SFC_PHASE_FORWARD)
      seed_op_boxes(g, s, info, tb, tile, src->op, part, ob, pl, ph, skip);
    else
      sfc_ft_op_boxes(g, s, info, tb, src->op, ob, pl, ph);
    st.segment = seg;
    st.tile = tile;
    double share = 1;
    for (uint32_t k = 0; k < m; k++) {
      sfc_use_t u = ir->uses[src->use_begin + k];
      const sfc_tensor_t *x = &g->tensors[u.tensor];
      uint8_t role = info->role[u.tensor];
      if (role == SFC_FT_ROLE_ACCUMULATE && k >= op->n_inputs) {
        /* the segment's first step writing it zero-fills and adds (a write); later ones
         * read too */
        u.access = w->acc[u.tensor] == seg + 1 ? SFC_ACCESS_RW : SFC_ACCESS_WRITE;
        w->acc[u.tensor] = seg + 1;
        u.flags |= SFC_USE_ACCUMULATE;
      }
      if (role == SFC_FT_ROLE_PARTIAL)
        u.flags |= SFC_USE_PARTIAL;
      /* every operand of a tiled step has a box (the plan's one per operand): its tile
       * box, or the whole tensor */
      bool boxed = role != SFC_FT_ROLE_WHOLE && role != SFC_FT_ROLE_NONE &&
                   (x->ndim == 4 || (role == SFC_FT_ROLE_PARTIAL && is_workspace(g, u.tensor)));
      sfc_plan_box_t b = {.tensor = u.tensor, .ndim = x->ndim < 4 ? x->ndim : 4};
      for (uint32_t a = 0; a < b.ndim; a++) {
        b.lo[a] = boxed ? ob[k].lo[a] : 0;
        b.hi[a] = !boxed ? x->shape[a] : ob[k].hi[a] > ob[k].lo[a] ? ob[k].hi[a] : ob[k].lo[a];
        b.pad_lo[a] = boxed ? pl[k][a] : 0;
        b.pad_hi[a] = boxed ? ph[k][a] : 0;
        if (skip[k]) /* not computed by this step: an empty box (inside its buffer's) */
          b.hi[a] = b.lo[a];
      }
      u.box = w->n_boxes;
      w->boxes[w->n_boxes++] = b;
      w->uses[w->n_uses++] = u;
    }
    /* the step's share of the op: sfc/steps.h's rule (outputs first, then inputs); a
     * part of a convolution_backward: its factor of the op times its input gradient's
     * share (PART_DATA) or its output gradient's (PART_WEIGHT) */
    uint32_t nio = op->n_inputs + op->n_outputs;
    if (part != PART_ALL) {
      uint32_t j = part == PART_DATA ? op->n_inputs : 0;
      const sfc_use_t *u = &w->uses[st.use_begin + j];
      const sfc_tensor_t *x = &g->tensors[u->tensor];
      share = factor * sfc_box_share(&w->boxes[u->box], x->shape, x->ndim);
      nio = 0;
    }
    for (uint32_t i = 0; i < nio; i++) {
      uint32_t j = i < op->n_outputs ? op->n_inputs + i : i - op->n_outputs;
      const sfc_use_t *u = &w->uses[st.use_begin + j];
      const sfc_tensor_t *x = &g->tensors[u->tensor];
      double r = sfc_box_share(&w->boxes[u->box], x->shape, x->ndim);
      if (r < 1) {
        share = r;
        break;
      }
    }
    /* the step's time: its share of the op (sfc/steps.h); src holds the whole op's */
    st.time_us = src->time_us < 0 ? src->time_us : src->time_us * share;
  } else {
    memcpy(&w->uses[w->n_uses], &ir->uses[src->use_begin], m * sizeof *w->uses);
    for (uint32_t k = 0; k < m; k++)
      if (w->uses[w->n_uses + k].box != SFC_PLAN_NONE)
        return sfc_error_set(err, SFC_ERR_BAD_INPUT, "steps were tiled already");
    w->n_uses += m;
  }
  st.use_count = m;
  w->steps[w->n_steps++] = st;
  return SFC_OK;
}

sfc_status_t sfc_ft_rewrite(sfc_ir_t *ir, const sfc_ft_segment_t *segments, uint32_t n,
                            sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  if (ir->n_steps != g->n_ops || ir->n_boxes != 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "the tiler runs once, on the steps pass's output");
  rewriter_t w = {.ir = ir};
  w.acc = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *w.acc);
  sfc_ft_info_t *info = sfc_pool_calloc(&ir->pool, n ? n : 1, sizeof *info);
  sfc_ft_box_t *tb = sfc_pool_calloc(&ir->pool, g->n_tensors ? g->n_tensors : 1, sizeof *tb);
  /* which segment starts at each op, forward or backward */
  uint32_t *fwd_at = sfc_pool_calloc(&ir->pool, g->n_ops + 1, sizeof *fwd_at);
  uint32_t *bwd_at = sfc_pool_calloc(&ir->pool, g->n_ops + 1, sizeof *bwd_at);
  if (!info || !tb || !fwd_at || !bwd_at || !w.acc)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory tiling");
  for (uint32_t i = 0; i <= g->n_ops; i++)
    fwd_at[i] = bwd_at[i] = NONE;
  for (uint32_t k = 0; k < n; k++) {
    sfc_status_t st = sfc_ft_analyze(g, &segments[k], &info[k], &ir->pool, err);
    if (st != SFC_OK)
      return st;
    if (k > 0 && (segments[k].fwd_begin < segments[k - 1].fwd_end ||
                  (segments[k].bwd_begin < segments[k].bwd_end &&
                   segments[k - 1].bwd_begin < segments[k - 1].bwd_end &&
                   segments[k].bwd_end > segments[k - 1].bwd_begin)))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "segments %u and %u overlap or are unsorted",
                           k - 1, k);
    fwd_at[segments[k].fwd_begin] = k;
    if (segments[k].bwd_begin < segments[k].bwd_end)
      bwd_at[segments[k].bwd_begin] = k;
  }
  uint32_t seg_index = 0; /* plan segments: forward and backward ones, in step order */
  sfc_plan_segment_t *plan_segs = sfc_pool_calloc(&ir->pool, 2 * (size_t)n + 1, sizeof *plan_segs);
  uint32_t *fwd_index = sfc_pool_calloc(&ir->pool, n + 1, sizeof *fwd_index);
  if (!plan_segs || !fwd_index)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory tiling");
  for (uint32_t i = 0; i < g->n_ops;) {
    uint32_t k = fwd_at[i] != NONE ? fwd_at[i] : bwd_at[i];
    if (k == NONE) {
      sfc_status_t st =
          emit_step(&w, &ir->steps[i], NULL, NULL, NULL, NONE, NONE, 0, PART_ALL, 1, err);
      if (st != SFC_OK)
        return st;
      i++;
      continue;
    }
    const sfc_ft_segment_t *s = &segments[k];
    bool fwd = fwd_at[i] == k;
    uint32_t tiles = sfc_ft_tile_count(s);
    sfc_plan_segment_t *ps = &plan_segs[seg_index];
    *ps = (sfc_plan_segment_t){.first_step = w.n_steps,
                               .first_op = fwd ? s->fwd_begin : s->bwd_begin,
                               .op_count =
                                   fwd ? s->fwd_end - s->fwd_begin : s->bwd_end - s->bwd_begin,
                               .tile_count = tiles,
                               .flags = (fwd ? 0 : SFC_SEGMENT_BACKWARD) |
                                        (s->halo == SFC_HALO_SEED ? SFC_SEGMENT_SEED_HALO : 0),
                               .forward_segment = fwd ? 0 : fwd_index[k]};
    for (int a = 0; a < 4; a++)
      ps->grid[a] = s->grid[a];
    if (fwd)
      fwd_index[k] = seg_index;
    for (uint32_t t = 0; t < tiles; t++) {
      if (fwd)
        sfc_ft_tile_boxes_forward(g, s, &info[k], t, tb);
      else
        sfc_ft_tile_boxes(g, s, &info[k], t, tb);
      if (!fwd)
        for (uint32_t j = s->fwd_begin; j < s->fwd_end; j++)
          if (info[k].recompute[j]) {
            sfc_status_t st = emit_step(&w, &ir->steps[j], s, &info[k], tb, seg_index, t,
                                        SFC_STEP_RECOMPUTE, PART_ALL, 1, err);
            if (st != SFC_OK)
              return st;
          }
      uint32_t b = fwd ? s->fwd_begin : s->bwd_begin, e = fwd ? s->fwd_end : s->bwd_end;
      for (uint32_t j = b; j < e; j++) {
        const sfc_op_t *op = &g->ops[j];
        sfc_status_t st = SFC_OK;
        if (!fwd && s->halo == SFC_HALO_SEED && has_weight_grads(g, &info[k], op)) {
          /* the input gradient from the haloed output gradient, then the weight's and
           * the bias's from its disjoint tile: about half the op each */
          bool data = data_grad(g, &info[k], op, 0);
          if (data)
            st =
                emit_step(&w, &ir->steps[j], s, &info[k], tb, seg_index, t, 0, PART_DATA, 0.5, err);
          if (st == SFC_OK)
            st = emit_step(&w, &ir->steps[j], s, &info[k], tb, seg_index, t, 0, PART_WEIGHT,
                           data ? 0.5 : 1, err);
        } else {
          st = emit_step(&w, &ir->steps[j], s, &info[k], tb, seg_index, t, 0, PART_ALL, 1, err);
        }
        if (st != SFC_OK)
          return st;
      }
    }
    plan_segs[seg_index].step_count = w.n_steps - plan_segs[seg_index].first_step;
    seg_index++;
    i = fwd ? s->fwd_end : s->bwd_end;
  }
  ir->steps = w.steps;
  ir->n_steps = w.n_steps;
  ir->uses = w.uses;
  ir->n_uses = w.n_uses;
  ir->boxes = w.boxes;
  ir->n_boxes = ir->n_use_boxes = w.n_boxes;
  ir->segments = plan_segs;
  ir->n_segments = seg_index;
  return SFC_OK;
}

/* ---- the partitioner ------------------------------------------------------------ */

static bool forward_tileable(const sfc_graph_t *g, uint32_t i) {
  const sfc_op_t *op = &g->ops[i];
  const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);
  if (op->phase != SFC_PHASE_FORWARD || !e || !forward_class_ok(e->cls))
    return false;
  if (g->inplace.untiled && g->inplace.untiled[i]) /* --inplace wrote it or its gradient */
    return false;
  for (uint32_t k = 0; k < op->n_outputs; k++)
    if (!is_spatial(&g->tensors[op->outputs[k]]) && !is_workspace(g, op->outputs[k]))
      return false;
  return true;
}

/* The segment [b, e) would have: its output (the last op's first output) and its
 * backward range (every backward op of its ops, and what lies between). */
static bool segment_of(const sfc_graph_t *g, uint32_t b, uint32_t e, sfc_ft_segment_t *s) {
  uint32_t last = e;
  while (last > b && g->ops[last - 1].n_outputs == 0)
    last--;
  if (last == b)
    return false;
  *s = (sfc_ft_segment_t){
      .fwd_begin = b, .fwd_end = e, .output = g->ops[last - 1].outputs[0], .grid = {1, 1, 1, 1}};
  uint32_t lo = NONE, hi = 0;
  for (uint32_t i = e; i < g->n_ops; i++) {
    const sfc_op_t *op = &g->ops[i];
    if (op->backward_of != NONE && in_range(op->backward_of, b, e) && op->n_outputs > 0) {
      lo = lo == NONE ? i : lo;
      hi = i + 1;
    }
  }
  s->bwd_begin = lo == NONE ? e : lo;
  s->bwd_end = lo == NONE ? e : hi;
  return true;
}

/* The partial peak over a sample of tiles: rows and columns 0, 1, the middle and the
 * last (interior tiles carry the full halo, edge ones the uneven remainders). */
static uint64_t sampled_peak(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                             const sfc_ft_info_t *info, sfc_ft_box_t *scratch, uint64_t limit) {
  uint32_t gh = s->grid[2], gw = s->grid[3];
  uint32_t rows[4] = {0, 1, gh / 2, gh - 1}, cols[4] = {0, 1, gw / 2, gw - 1};
  uint64_t peak = 0;
  for (int i = 0; i < 4 && peak <= limit; i++)
    for (int j = 0; j < 4 && peak <= limit; j++) {
      if (rows[i] >= gh || cols[j] >= gw)
        continue;
      uint64_t sum = tile_partial_bytes(g, s, info, rows[i] * gw + cols[j], scratch);
      peak = sum > peak ? sum : peak;
    }
  return peak;
}

/* The smallest grid whose tiles' recomputed tensors fit tile_bytes: near-square spatial
 * grids (k x k, k+1 x k) by tile count, found by bisection (the peak falls as tiles
 * shrink), then the batch split in halves; within max_tiles and min_tile. */
/* The tile at index j along grid axis a and 0 along the others (row-major over the
 * grid): the scans below walk one axis at a time. */
static uint32_t tile_along(const sfc_ft_segment_t *s, int a, uint32_t j) {
  uint32_t tile = j;
  for (int b = a + 1; b < 4; b++)
    tile *= s->grid[b];
  return tile;
}

/* A forward segment writes each tensor it hands on once: its output on a partition, and
 * any other tensor it makes and keeps (a CHECKPOINT read after the segment: a branch
 * leaving it, as a residual's input or a U-Net skip) on the tiles' receptive fields,
 * which must then be a partition too (a pooling without halo), not overlap (invariant
 * 40). The boxes are products of per-axis ranges that depend on the tile's index along
 * that axis only, so each axis is checked on its own: consecutive ranges must abut and
 * span the tensor. */
static bool kept_disjoint(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                          const sfc_ft_info_t *info, sfc_ft_box_t *scratch) {
  uint32_t producer = NONE;
  for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++)
    for (uint32_t k = 0; k < g->ops[i].n_outputs; k++)
      if (g->ops[i].outputs[k] == s->output)
        producer = i;
  for (uint32_t i = s->fwd_begin; i < s->fwd_end; i++) {
    const sfc_op_t *op = &g->ops[i];
    if (i == producer)
      continue; /* the output and its siblings share the output's partition */
    for (uint32_t k = 0; k < op->n_outputs; k++) {
      uint32_t t = op->outputs[k];
      const sfc_tensor_t *x = &g->tensors[t];
      if (info->role[t] != SFC_FT_ROLE_CHECKPOINT || !is_spatial(x))
        continue;
      for (int a = 0; a < 4; a++) {
        if (a == 1 || s->grid[a] == 1)
          continue;
        int64_t at = 0;
        for (uint32_t j = 0; j < s->grid[a]; j++) {
          sfc_ft_tile_boxes_forward(g, s, info, tile_along(s, a, j), scratch);
          if (scratch[t].lo[a] != at)
            return false;
          at = scratch[t].hi[a];
        }
        if (at != x->shape[a])
          return false;
      }
    }
  }
  return true;
}

/* Whether tensor t, an input of backward op i of s, is a gradient the tiles accumulate
 * whole (role ACCUMULATE: also used outside the segment) that i computes from (a view,
 * such as the detach of a weight gradient, reads no bytes) after the segment's backward
 * made (part of) it. */
static bool reads_accumulated(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                              const sfc_ft_info_t *info, uint32_t i, uint32_t t) {
  return g->ops[i].n_outputs > 0 && info->role[t] == SFC_FT_ROLE_ACCUMULATE &&
         is_spatial(&g->tensors[t]) && made_before(g, s, t, i);
}

/* Whether a gradient the tiles accumulate into a whole tensor (role ACCUMULATE: it is
 * also used outside the segment) may be read by the segment's own backward ops: only
 * when the tiles' boxes of it are disjoint. A backward op of tile t reads it while the
 * loop is under way; where an earlier tile's box overlaps t's, the bytes hold that
 * tile's contribution too, and t propagates it a second time. In masked mode a
 * gradient's box is the receptive field of the tile's output part, and neighbours'
 * overlap: a U-Net decoder's cat gradient, read in parts by the up-convolution and
 * summed whole into the skip, gave up.3's weight gradient 2e3 x its size (found by
 * sfc-train on the bundled U-Net in float64). Such a segment is not taken; its run is cut before
 * the tensor. O(grid rows + columns + batch tiles) box computations. */
static bool accumulated_reads_disjoint(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                                       const sfc_ft_info_t *info, sfc_ft_box_t *scratch) {
  enum { MAX_READ = 16 };
  uint32_t ts[MAX_READ], nt = 0;
  for (uint32_t i = s->bwd_begin; i < s->bwd_end; i++)
    for (uint32_t k = 0; k < g->ops[i].n_inputs; k++) {
      uint32_t t = g->ops[i].inputs[k];
      if (!reads_accumulated(g, s, info, i, t))
        continue;
      bool seen = false;
      for (uint32_t q = 0; q < nt && !seen; q++)
        seen = ts[q] == t;
      if (seen)
        continue;
      if (nt == MAX_READ)
        return false; /* more than any real segment has: refuse rather than guess */
      ts[nt++] = t;
    }
  for (int a = 0; a < 4 && nt; a++) {
    if (a == 1 || s->grid[a] == 1)
      continue;
    int64_t at[MAX_READ];
    for (uint32_t q = 0; q < nt; q++)
      at[q] = INT64_MIN;
    for (uint32_t j = 0; j < s->grid[a]; j++) {
      sfc_ft_tile_boxes(g, s, info, tile_along(s, a, j), scratch); /* once for every tensor */
      for (uint32_t q = 0; q < nt; q++) {
        const sfc_ft_box_t *x = &scratch[ts[q]];
        if (box_is_empty(x))
          continue;
        if (x->lo[a] < at[q])
          return false;
        at[q] = x->hi[a];
      }
    }
  }
  return true;
}

static bool choose_grid(const sfc_graph_t *g, sfc_ft_segment_t *s, const sfc_ft_info_t *info,
                        uint64_t tile_bytes, uint32_t max_tiles, uint32_t min_tile,
                        sfc_ft_box_t *scratch) {
  const sfc_tensor_t *out = &g->tensors[s->output];
  int64_t H = out->shape[2], W = out->shape[3], N = out->shape[0];
  uint32_t cand[2 * 1024][2], nc = 0; /* (gh, gw) */
  for (uint32_t k = 1; nc + 2 <= 2 * 1024; k++) {
    uint32_t opts[2][2] = {{k, k}, {k + 1, k}};
    bool any = false;
    for (int o = 0; o < 2; o++) {
      uint32_t gh = opts[o][0], gw = opts[o][1];
      if ((uint64_t)gh * gw > max_tiles || (int64_t)gh > H || (int64_t)gw > W ||
          (gh > 1 && H / gh < (int64_t)min_tile) || (gw > 1 && W / gw < (int64_t)min_tile))
        continue;
      cand[nc][0] = gh;
      cand[nc][1] = gw;
      nc++;
      any = true;
    }
    if (!any)
      break;
  }
  s->grid[0] = 1;
  if (nc == 0) {
    s->grid[2] = s->grid[3] = 1;
    return false;
  }
  uint32_t lo = 0, hi = nc - 1; /* the first candidate that fits, if the last one does */
  s->grid[2] = cand[hi][0];
  s->grid[3] = cand[hi][1];
  if (sampled_peak(g, s, info, scratch, tile_bytes) > tile_bytes) {
    /* the finest spatial grid is not enough: split the batch too */
    for (uint32_t gn = 2; (int64_t)gn <= N && (uint64_t)gn * cand[hi][0] * cand[hi][1] <= max_tiles;
         gn *= 2) {
      s->grid[0] = gn;
      if (sampled_peak(g, s, info, scratch, tile_bytes) <= tile_bytes)
        return true;
    }
    s->grid[0] = 1;
    return false;
  }
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    s->grid[2] = cand[mid][0];
    s->grid[3] = cand[mid][1];
    if (sampled_peak(g, s, info, scratch, tile_bytes) <= tile_bytes)
      hi = mid;
    else
      lo = mid + 1;
  }
  s->grid[2] = cand[lo][0];
  s->grid[3] = cand[lo][1];
  return true;
}

sfc_status_t sfc_ft_partition(const sfc_graph_t *g, uint64_t tile_bytes, uint64_t checkpoint_bytes,
                              uint32_t max_tiles, uint32_t min_tile, bool all,
                              sfc_ft_segment_t **segments, uint32_t *n, sfc_pool_t *pool,
                              sfc_error_t *err) {
  return sfc_ft_partition_halo(g, SFC_HALO_MASKED, tile_bytes, checkpoint_bytes, max_tiles,
                               min_tile, all, segments, n, pool, err);
}

sfc_status_t sfc_ft_partition_halo(const sfc_graph_t *g, uint8_t halo, uint64_t tile_bytes,
                                   uint64_t checkpoint_bytes, uint32_t max_tiles, uint32_t min_tile,
                                   bool all, sfc_ft_segment_t **segments, uint32_t *n,
                                   sfc_pool_t *pool, sfc_error_t *err) {
  sfc_ft_partition_opts_t o = {.halo = halo,
                               .tile_bytes = tile_bytes,
                               .checkpoint_bytes = checkpoint_bytes,
                               .max_tiles = max_tiles,
                               .min_tile = min_tile,
                               .all = all};
  return sfc_ft_partition_with(g, &o, segments, n, pool, err);
}

sfc_ft_partition_opts_t sfc_ft_partition_config(const sfc_config_t *cfg, uint64_t tile_bytes,
                                                uint64_t checkpoint_bytes) {
  return (sfc_ft_partition_opts_t){.halo = (uint8_t)cfg->tiling.halo,
                                   .tile_bytes = tile_bytes,
                                   .checkpoint_bytes = checkpoint_bytes,
                                   .max_tiles = cfg->tiling.max_tiles,
                                   .min_tile = cfg->tiling.min_tile,
                                   .grid = {cfg->tiling.grid[0], cfg->tiling.grid[1]},
                                   .longest = cfg->tiling.segments == SFC_SEGMENTS_LONGEST};
}

/* tiling.grid: whether the output of s can take a forced grid of gh x gw tiles (at least
 * one row and column per tile, and min_tile of each unless the grid is 1 along it). */
static bool grid_takes(const sfc_graph_t *g, const sfc_ft_segment_t *s, uint32_t gh, uint32_t gw,
                       uint32_t min_tile) {
  const sfc_tensor_t *out = &g->tensors[s->output];
  int64_t H = out->shape[2], W = out->shape[3];
  return (int64_t)gh <= H && (int64_t)gw <= W && (gh == 1 || H / gh >= (int64_t)min_tile) &&
         (gw == 1 || W / gw >= (int64_t)min_tile);
}

/* The error of a forced grid that segment s's output cannot take. */
static sfc_status_t grid_error(const sfc_graph_t *g, const sfc_ft_segment_t *s, uint32_t gh,
                               uint32_t gw, uint32_t min_tile, bool longest, sfc_error_t *err) {
  const sfc_tensor_t *out = &g->tensors[s->output];
  int64_t H = out->shape[2], W = out->shape[3];
  uint32_t first = s->fwd_begin, last = s->fwd_end - 1;
  const char *a = g->ops[first].name ? g->ops[first].name : "?";
  const char *z = g->ops[last].name ? g->ops[last].name : "?";
  char what[200], why[120];
  if (first == last)
    snprintf(what, sizeof what, "\"%s\" (op %u)", a, (unsigned)first);
  else
    snprintf(what, sizeof what, "\"%s\" .. \"%s\" (ops %u..%u)", a, z, (unsigned)first,
             (unsigned)last);
  if ((int64_t)gh > H || (int64_t)gw > W)
    snprintf(why, sizeof why, "fewer %s than the grid", (int64_t)gh > H ? "rows" : "columns");
  else
    snprintf(why, sizeof why, "tiles of %lld x %lld, under tiling.min_tile = %u",
             (long long)(H / gh), (long long)(W / gw), (unsigned)min_tile);
  return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                       "tiling.grid: %ux%u does not fit %s %s: its output is %lld x %lld: %s",
                       (unsigned)gh, (unsigned)gw, longest ? "the tileable run" : "the segment",
                       what, (long long)H, (long long)W, why);
}

sfc_status_t sfc_ft_partition_with(const sfc_graph_t *g, const sfc_ft_partition_opts_t *opts,
                                   sfc_ft_segment_t **segments, uint32_t *n, sfc_pool_t *pool,
                                   sfc_error_t *err) {
  *n = 0;
  *segments = NULL;
  const uint32_t gh = opts->grid[0], gw = opts->grid[1];
  const bool forced = gh > 0 && gw > 0, longest = opts->longest;
  sfc_pool_t scratch_pool = {0};
  sfc_ft_box_t *scratch = sfc_pool_calloc(pool, g->n_tensors ? g->n_tensors : 1, sizeof *scratch);
  sfc_ft_segment_t *out = sfc_pool_calloc(pool, g->n_ops ? g->n_ops : 1, sizeof *out);
  if (!scratch || !out)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory partitioning");
  bool *whole = whole_ops(g, pool);
  if (!whole)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory partitioning");
  uint32_t count = 0, prev_bwd_begin = NONE;
  for (uint32_t b = 0; b < g->n_ops;) {
    if (whole[b] || !forward_tileable(g, b)) {
      b++;
      continue;
    }
    uint32_t e = b;
    while (e < g->n_ops && !whole[e] && forward_tileable(g, e))
      e++;
    /* grow the segment from b while it stays tileable within tile_bytes; keep the
     * longest that fits (or, when none fits, the shortest the tiler accepts; under
     * `longest`, the longest it accepts) */
    sfc_ft_segment_t s, best = {0}, bad = {0};
    sfc_ft_info_t info;
    uint32_t best_end = 0, bad_end = 0;
    bool best_fits = false;
    for (uint32_t end = b + 1; end <= e; end++) {
      if (!segment_of(g, b, end, &s))
        continue;
      s.halo = opts->halo;
      sfc_error_t ignored = {0};
      sfc_pool_free_all(&scratch_pool);
      if (sfc_ft_analyze(g, &s, &info, &scratch_pool, &ignored) != SFC_OK)
        continue;
      /* backward ranges of consecutive segments run in the opposite order */
      if (s.bwd_begin < s.bwd_end && prev_bwd_begin != NONE && s.bwd_end > prev_bwd_begin)
        continue;
      /* a segment may end only where its output can be kept (a checkpoint), or where
       * the run ends */
      if (!longest && end < e && g->tensors[s.output].bytes > opts->checkpoint_bytes)
        continue;
      bool fits;
      if (forced) { /* tiling.grid: this grid or no segment ending here */
        if (!grid_takes(g, &s, gh, gw, opts->min_tile)) {
          bad = s;
          bad_end = end;
          continue;
        }
        s.grid[2] = gh;
        s.grid[3] = gw;
        fits = sampled_peak(g, &s, &info, scratch, opts->tile_bytes) <= opts->tile_bytes;
      } else {
        fits =
            choose_grid(g, &s, &info, opts->tile_bytes, opts->max_tiles, opts->min_tile, scratch);
      }
      if (!kept_disjoint(g, &s, &info, scratch))
        continue; /* a kept branch its tiles would write twice */
      if (!accumulated_reads_disjoint(g, &s, &info, scratch))
        continue; /* a whole gradient its own tiles would read with the others' parts */
      if (fits || !best_end || longest) {
        best = s;
        best_end = end;
        best_fits = fits;
      }
    }
    /* a forced grid the run's longest accepted segment (under `longest`), or every
     * segment from b, cannot take */
    if (bad_end && (longest ? bad_end > best_end : !best_end)) {
      sfc_pool_free_all(&scratch_pool);
      return grid_error(g, &bad, gh, gw, opts->min_tile, longest, err);
    }
    if (!best_end) {
      b++;
      continue;
    }
    uint32_t end = best_end;
    s = best;
    bool fits = best_fits;
    bool tiled = sfc_ft_tile_count(&s) > 1;
    if (tiled || forced || (opts->all && fits)) {
      out[count++] = s;
      if (s.bwd_begin < s.bwd_end)
        prev_bwd_begin = s.bwd_begin;
    }
    b = end;
  }
  sfc_pool_free_all(&scratch_pool);
  *segments = out;
  *n = count;
  return SFC_OK;
}

/* ---- why a step stays whole ------------------------------------------------------ */

/* "\"name\" (type)" of op i, or with `why`, "\"name\" (type: why)", for the hint. */
static void op_shown(const sfc_graph_t *g, uint32_t i, const char *why, char *buf, size_t n) {
  const sfc_op_t *op = &g->ops[i];
  char name[SFC_NAME_SHOWN_BYTES];
  snprintf(buf, n, "\"%s\" (%s%s%s)", sfc_name_shown(op->name, name), op->type, why ? ": " : "",
           why ? why : "");
}

/* The catalog's reason op i is not tileable (an end, or unknown). */
static const char *not_tileable_why(const sfc_graph_t *g, uint32_t i) {
  if (g->inplace.untiled && g->inplace.untiled[i])
    return "written in place by --inplace (it or its gradient)";
  const sfc_ft_entry_t *e = sfc_ft_lookup(g->ops[i].type);
  return !e ? "not in the FT op catalog" : e->why;
}

/* Op i reads or writes a 4-D tensor (bookkeeping such as batch norm's counter does not). */
static bool touches_spatial(const sfc_graph_t *g, uint32_t i) {
  const sfc_op_t *op = &g->ops[i];
  for (uint32_t k = 0; k < op->n_inputs + op->n_outputs; k++)
    if (is_spatial(&g->tensors[k < op->n_inputs ? op->inputs[k] : op->outputs[k - op->n_inputs]]))
      return true;
  return false;
}

bool sfc_ft_why_whole(const sfc_graph_t *g, uint32_t i, char *buf, size_t n) {
  if (!buf || n == 0 || i >= g->n_ops)
    return false;
  buf[0] = '\0';
  const sfc_op_t *op = &g->ops[i];
  uint32_t f = op->phase == SFC_PHASE_BACKWARD && op->backward_of != NONE ? op->backward_of : i;
  const sfc_op_t *fo = &g->ops[f];
  if (fo->phase != SFC_PHASE_FORWARD || fo->n_outputs == 0 ||
      !is_spatial(&g->tensors[fo->outputs[0]]))
    return false; /* not a spatial op: tiling is not the question */
  char a[SFC_NAME_SHOWN_BYTES + 160], b[SFC_NAME_SHOWN_BYTES + 160];
  if (forward_tileable(g, f) && odd_forward(g, f)) { /* the partitioner's whole_ops */
    op_shown(g, f, NULL, a, sizeof a);
    snprintf(buf, n,
             "%s runs whole: it or its backward op has a 4-D operand whose shape does not "
             "account for its bytes, or lists no output",
             a);
    return true;
  }
  if (!forward_tileable(g, f)) {
    op_shown(g, f, not_tileable_why(g, f), a, sizeof a);
    if (f != i) {
      op_shown(g, i, NULL, b, sizeof b);
      snprintf(buf, n, "%s runs whole: its forward op %s ends FT segments", b, a);
    } else {
      snprintf(buf, n, "%s runs whole: it ends FT segments", a);
    }
    return true;
  }
  uint32_t lo = f, hi = f + 1; /* the run of tileable ops around f: [lo, hi) */
  while (lo > 0 && forward_tileable(g, lo - 1))
    lo--;
  while (hi < g->n_ops && forward_tileable(g, hi))
    hi++;
  /* the ops that bound it, past bookkeeping on no spatial tensor */
  uint32_t p = lo, q = hi;
  while (p > 0 && !touches_spatial(g, p - 1))
    p--;
  while (q < g->n_ops && !touches_spatial(g, q))
    q++;
  if (p == 0 || q >= g->n_ops || g->ops[p - 1].phase != SFC_PHASE_FORWARD ||
      g->ops[q].phase != SFC_PHASE_FORWARD)
    return false; /* the run reaches the graph's start or the loss: not bounded by ends */
  char c[SFC_NAME_SHOWN_BYTES + 160];
  op_shown(g, f, NULL, a, sizeof a);
  op_shown(g, p - 1, not_tileable_why(g, p - 1), b, sizeof b);
  op_shown(g, q, not_tileable_why(g, q), c, sizeof c);
  snprintf(buf, n,
           "%s can run in tiles, but the tileable ops around it (ops %u..%u) lie between %s "
           "and %s, and a segment's inputs and output stay whole on the device while its "
           "tiles run",
           a, (unsigned)lo, (unsigned)(hi - 1), b, c);
  return true;
}

/* ---- the pass -------------------------------------------------------------------- */

/* tiling.mode on: the partitioner's segments end where the output takes at most 1/8 of
 * the device budget, and each is tiled to the smallest grid whose one tile's recomputed
 * tensors take at most 1/16 of it (of 1 GiB without a budget); tiling.grid forces the
 * grid instead, tiling.segments longest keeps whole runs. auto: the segments the
 * pipeline's grid tuner chose (tune_tiling, given in tile_given), or none; off: none.
 * tiling.halo seed makes every segment a seed one (given ones too, though the tuner
 * already sized them with the configured halo). */
sfc_status_t sfc_pass_tile(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_config_t *cfg = ir->config;
  if (ir->n_tile_given) {
    if (cfg->tiling.halo != SFC_HALO_SEED)
      return sfc_ft_rewrite(ir, ir->tile_given, ir->n_tile_given, err);
    /* tiling.halo seed: the given segments (the grid tuner's) get the seed's boxes */
    sfc_ft_segment_t *segs = sfc_pool_calloc(&ir->pool, ir->n_tile_given, sizeof *segs);
    if (!segs)
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory tiling");
    for (uint32_t k = 0; k < ir->n_tile_given; k++) {
      segs[k] = ir->tile_given[k];
      segs[k].halo = SFC_HALO_SEED;
    }
    return sfc_ft_rewrite(ir, segs, ir->n_tile_given, err);
  }
  if (cfg->tiling.mode != SFC_TILING_ON)
    return SFC_OK;
  uint64_t budget = cfg->budget_bytes ? cfg->budget_bytes : UINT64_C(1) << 30;
  sfc_ft_segment_t *segs = NULL;
  uint32_t n = 0;
  sfc_ft_partition_opts_t o = sfc_ft_partition_config(cfg, budget / 16, budget / 8);
  sfc_status_t st = sfc_ft_partition_with(ir->graph, &o, &segs, &n, &ir->pool, err);
  if (st == SFC_ERR_BAD_INPUT)
    sfc_error_prefix(err, cfg->source); /* a tiling.grid the graph cannot take */
  if (st != SFC_OK || n == 0)
    return st;
  return sfc_ft_rewrite(ir, segs, n, err);
}

/* ---- per-tile tensors' runs --------------------------------------------------------- */

/* A run whose steps touch no element still needs a buffer its (empty) boxes lie in:
 * one element at their corner (a block holds a non-empty box). */
static void emit_run(const sfc_graph_t *g, sfc_ft_run_fn fn, void *ctx, uint32_t t, uint32_t first,
                     uint32_t last, sfc_plan_box_t *hull, bool any) {
  if (!any)
    for (uint32_t a = 0; a < hull->ndim; a++) {
      int64_t len = g->tensors[t].shape[a];
      if (hull->hi[a] > hull->lo[a])
        continue;
      if (hull->lo[a] >= len)
        hull->lo[a] = len - 1;
      hull->hi[a] = hull->lo[a] + 1;
    }
  fn(ctx, t, first, last, hull);
}

sfc_status_t sfc_ft_partial_runs(const sfc_ir_t *ir, sfc_ft_run_fn fn, void *ctx,
                                 sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  typedef struct run {
    uint32_t first, last, segment, tile;
    sfc_plan_box_t hull;
    bool open, any; /* any: the hull holds a box with elements */
  } run_t;
  run_t *r = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *r);
  if (!r)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for per-tile tensors");
  for (uint32_t s = 0; s < ir->n_steps; s++) {
    const sfc_step_t *st = &ir->steps[s];
    for (uint32_t k = 0; k < st->use_count; k++) {
      const sfc_use_t *u = &ir->uses[st->use_begin + k];
      if (!(u->flags & SFC_USE_PARTIAL) || u->box == NONE)
        continue;
      run_t *x = &r[u->tensor];
      const sfc_plan_box_t *b = &ir->boxes[u->box];
      bool elems = b->ndim > 0;
      for (uint32_t a = 0; a < b->ndim; a++)
        elems &= b->hi[a] > b->lo[a];
      if (x->open && x->segment == st->segment && x->tile == st->tile) {
        x->last = s;
        x->any |= elems;
        /* an empty box (seed: an output the step does not compute) lies in the hull too,
         * as the verifiers want every step's box inside its buffer's */
        for (uint32_t a = 0; a < x->hull.ndim; a++) {
          x->hull.lo[a] = b->lo[a] < x->hull.lo[a] ? b->lo[a] : x->hull.lo[a];
          x->hull.hi[a] = b->hi[a] > x->hull.hi[a] ? b->hi[a] : x->hull.hi[a];
        }
        continue;
      }
      if (x->open)
        emit_run(g, fn, ctx, u->tensor, x->first, x->last, &x->hull, x->any);
      *x = (run_t){.first = s,
                   .last = s,
                   .segment = st->segment,
                   .tile = st->tile,
                   .hull = *b,
                   .open = true,
                   .any = elems};
      memset(x->hull.pad_lo, 0, sizeof x->hull.pad_lo);
      memset(x->hull.pad_hi, 0, sizeof x->hull.pad_hi);
    }
  }
  for (uint32_t t = 0; t < g->n_tensors; t++)
    if (r[t].open)
      emit_run(g, fn, ctx, t, r[t].first, r[t].last, &r[t].hull, r[t].any);
  free(r);
  return SFC_OK;
}

uint64_t sfc_ft_plan_box_bytes(const sfc_tensor_t *x, const sfc_plan_box_t *b) {
  uint64_t total = 1, part = 1;
  for (uint32_t a = 0; a < x->ndim && a < SFC_PLAN_BOX_DIMS; a++) {
    total *= (uint64_t)x->shape[a];
    part *= (uint64_t)(b->hi[a] - b->lo[a]);
  }
  if (total == 0 || part == 0)
    return 0;
  uint64_t elem = x->bytes / total;
  return elem ? elem * part : (x->bytes * part + total - 1) / total;
}

uint32_t sfc_ft_mark_partial(const sfc_ir_t *ir, bool *partial) {
  uint32_t n = 0;
  for (uint32_t u = 0; u < ir->n_uses; u++)
    if ((ir->uses[u].flags & SFC_USE_PARTIAL) && !partial[ir->uses[u].tensor]) {
      partial[ir->uses[u].tensor] = true;
      n++;
    }
  return n;
}
