/* pass_verify.c — the compiler's verifier (see verify.h for the list of invariants).
 *
 * A second implementation of the rules of docs/plan-format.md ("Invariants", numbered
 * 4-58 in messages' order below), independent of the runtime's loader
 * (runtime/src/plan_validate.c): it shares only sfc/plan_format.h and the index maps of
 * sfc/box_map.h (which the tiler uses too). It takes a view in
 * memory, so the file-structure rules (1-3) are the loader's alone.
 *
 * Happens-before. Work runs on three in-order queues: compute (steps), H2D
 * (swap-ins) and D2H (swap-outs). Each node gets a vector clock: for every queue,
 * how many of its nodes are known complete when this node starts. A node inherits
 * the clock of the previous node on its own queue (queues run in order) and of each
 * dependency (plus the dependency itself). X completes before Y starts iff
 * clock(Y)[queue(X)] >= seq(X). One pass in issue order: O(nodes + deps).
 *
 * Block reuse. Blocks of one arena are visited by first step; an interval map of
 * "which block last occupied these bytes" (an ordered set of byte segments) yields
 * the direct predecessors of each block's bytes. Checking each block only against
 * its direct predecessors suffices: every access to a block completes after the
 * block's first access (data-flow rules 34, 48, 50-52), so "before the first access
 * of B" is transitive along the chain. A block nothing touches would break that
 * chain, so such blocks are left out of the map (they constrain nothing).
 * O((blocks + segments) log blocks).
 *
 * Tiled outputs. The tiles' boxes of a handed-on output cover it exactly once iff
 * the sum over the boxes of their signed corner indicators (+1 at lower corners,
 * alternating with each upper coordinate) equals the tensor's own: sort all corners,
 * add the signs per point, every sum must be zero. O(m log m) for m boxes.
 */
#include "verify.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oset.h"
#include "sfc/box_map.h"
#include "pack.h"
#include "passes.h"

#define NONE SFC_PLAN_NONE
enum { Q_COMPUTE = 0, Q_H2D = 1, Q_D2H = 2 };

typedef struct vctx {
  const sfc_plan_view_t *v;
  sfc_error_t *err;
  uint32_t (*vc_step)[3];   /* [step_count] */
  uint32_t (*vc_swap)[3];   /* [swap_count] */
  uint32_t *swap_seq;       /* [swap_count] position in its queue, 1-based */
  uint32_t *first_use;      /* [block_count] first step using the block */
  uint32_t *last_use;       /* [block_count] last step using the block */
  uint32_t *filler;         /* [block_count] the swap-in writing the block */
  uint32_t *last_out;       /* [block_count] the last swap-out reading the block */
  uint32_t *first_reads;    /* [block_count] 1 when the first step using it reads it */
  uint32_t *host_first_out; /* [host_block_count] first swap-out writing the host block */
  uint32_t *host_last_out;  /* [host_block_count] */
  uint32_t *host_last_in;   /* [host_block_count] last swap-in reading the host block */
  uint32_t *home;           /* [tensor_count] the PERSISTENT host block of a homed tensor */
  sfc_verify_stats_t stats;
} vctx_t;

typedef struct node {
  uint32_t kind; /* SFC_NODE_STEP or SFC_NODE_SWAP */
  uint32_t index;
} node_t;

static sfc_status_t fail(vctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static sfc_status_t fail(vctx_t *c, const char *fmt, ...) {
  char msg[SFC_ERROR_MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sfc_error_set(c->err, SFC_ERR_VERIFY, "%s", msg);
}

static sfc_status_t no_memory(vctx_t *c) {
  return sfc_error_set(c->err, SFC_ERR_OUT_OF_MEMORY, "verify: out of memory");
}

static const char *tname(const vctx_t *c, uint32_t t) {
  return t < c->v->tensor_count ? sfc_plan_string(c->v, c->v->tensors[t].name) : "?";
}

static const char *oname(const vctx_t *c, uint32_t o) {
  return o < c->v->op_count ? sfc_plan_string(c->v, c->v->ops[o].name) : "?";
}

static uint32_t op_operand_count(const sfc_plan_op_t *op) {
  return (uint32_t)op->input_count + op->output_count + op->temp_count;
}

static bool live_at(const sfc_plan_block_t *b, uint32_t step) {
  return b->first_step <= step && step <= b->last_step;
}

static uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* ---- 4-13. references ------------------------------------------------------- */

static bool str_ok(const sfc_plan_view_t *v, uint32_t ref) {
  return ref < v->strings_bytes;
}

/* [begin, begin + count) within n entries. */
static bool span_ok(uint32_t begin, uint64_t count, uint64_t n) {
  return (uint64_t)begin + count <= n;
}

static sfc_status_t check_graph_refs(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  if (v->strings_bytes == 0 || !v->strings || v->strings[0] != '\0' ||
      v->strings[v->strings_bytes - 1] != '\0')
    return fail(c, "strings: the table must start and end with a NUL byte");
  const uint32_t meta[4] = {v->meta.graph_name, v->meta.profile_name, v->meta.generator,
                            v->meta.times_device};
  static const char *const meta_names[4] = {"graph_name", "profile_name", "generator",
                                            "times_device"};
  for (int i = 0; i < 4; i++)
    if (!str_ok(v, meta[i]))
      return fail(c, "meta: %s is string %u, past the %" PRIu64 "-byte string table", meta_names[i],
                  meta[i], v->strings_bytes);
  uint32_t a = v->header.alignment;
  if (a == 0 || (a & (a - 1)) != 0)
    return fail(c, "header: alignment %u is not a power of two", a);
  if (v->header.arena_bytes > SFC_PLAN_MAX_ARENA_BYTES ||
      v->header.host_arena_bytes > SFC_PLAN_MAX_ARENA_BYTES ||
      v->meta.va_chunk_bytes > SFC_PLAN_MAX_ARENA_BYTES)
    return fail(c,
                "header: arena %" PRIu64 ", host arena %" PRIu64 " or VA chunk %" PRIu64
                " bytes is over the %" PRIu64 "-byte limit",
                v->header.arena_bytes, v->header.host_arena_bytes, v->meta.va_chunk_bytes,
                SFC_PLAN_MAX_ARENA_BYTES);
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    const sfc_plan_tensor_t *x = &v->tensors[t];
    if (!str_ok(v, x->name))
      return fail(c, "tensor %u: name is string %u, past the string table", t, x->name);
    if (x->kind >= SFC_KIND_COUNT)
      return fail(c, "tensor %u: kind %u is not a tensor kind", t, x->kind);
    if (x->dtype >= SFC_DTYPE_COUNT)
      return fail(c, "tensor %u: dtype %u is not a dtype", t, x->dtype);
    if (x->ndim > SFC_PLAN_MAX_DIMS)
      return fail(c, "tensor %u: rank %u is over %d", t, x->ndim, SFC_PLAN_MAX_DIMS);
    if (x->batch_axis < -1 || x->batch_axis >= (int)x->ndim)
      return fail(c, "tensor %u: batch axis %d is not an axis of its %u", t, x->batch_axis,
                  x->ndim);
  }
  for (uint32_t o = 0; o < v->op_count; o++) {
    const sfc_plan_op_t *op = &v->ops[o];
    if (!str_ok(v, op->name) || !str_ok(v, op->type))
      return fail(c, "op %u: name or type past the string table", o);
    if (op->phase >= SFC_PHASE_COUNT)
      return fail(c, "op %u (\"%s\"): phase %u is not a phase", o, oname(c, o), op->phase);
    if (!span_ok(op->operand_begin, op_operand_count(op), v->op_operand_count))
      return fail(c, "op %u (\"%s\"): operands run past the operand list", o, oname(c, o));
    if (op->backward_of != NONE && op->backward_of >= v->op_count)
      return fail(c, "op %u (\"%s\"): backward_of %u is not an op", o, oname(c, o),
                  op->backward_of);
  }
  for (uint32_t i = 0; i < v->op_operand_count; i++)
    if (v->op_operands[i] >= v->tensor_count)
      return fail(c, "op operand %u: tensor %u does not exist", i, v->op_operands[i]);
  return SFC_OK;
}

static sfc_status_t check_block_refs(vctx_t *c, const char *what, const sfc_plan_block_t *blocks,
                                     uint32_t n) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t b = 0; b < n; b++) {
    const sfc_plan_block_t *x = &blocks[b];
    if (x->tensor >= v->tensor_count)
      return fail(c, "%s[%u]: tensor %u does not exist", what, b, x->tensor);
    if (x->first_step >= v->step_count || x->last_step >= v->step_count)
      return fail(c, "%s[%u] (tensor %u \"%s\"): steps [%u, %u] are not inside [0, %u)", what, b,
                  x->tensor, tname(c, x->tensor), x->first_step, x->last_step, v->step_count);
    if ((x->flags & SFC_BLOCK_PARTIAL) && x->box >= v->box_count)
      return fail(c, "%s[%u] (tensor %u \"%s\"): box %u does not exist", what, b, x->tensor,
                  tname(c, x->tensor), x->box);
  }
  return SFC_OK;
}

static sfc_status_t check_schedule_refs(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t s = 0; s < v->step_count; s++) {
    const sfc_plan_step_t *st = &v->steps[s];
    if (st->op >= v->op_count)
      return fail(c, "step %u: op %u does not exist", s, st->op);
    uint32_t m = op_operand_count(&v->ops[st->op]);
    if (st->segment == NONE && st->tile != NONE)
      return fail(c, "step %u: tile %u without a segment", s, st->tile);
    if (st->segment != NONE &&
        (st->segment >= v->segment_count || st->tile >= v->segments[st->segment].tile_count))
      return fail(c, "step %u: segment %u tile %u does not exist", s, st->segment, st->tile);
    if (!span_ok(st->operand_begin, m, v->step_operand_count))
      return fail(c, "step %u: operands run past the step operand list", s);
    if (st->box_begin != NONE && !span_ok(st->box_begin, m, v->box_count))
      return fail(c, "step %u: boxes run past the box list", s);
    if (!span_ok(st->dep_begin, st->dep_count, v->dep_count))
      return fail(c, "step %u: dependencies run past the dependency list", s);
  }
  for (uint32_t i = 0; i < v->step_operand_count; i++)
    if (v->step_operands[i] >= v->block_count)
      return fail(c, "step operand %u: block %u does not exist", i, v->step_operands[i]);
  for (uint32_t j = 0; j < v->swap_count; j++) {
    const sfc_plan_swap_t *w = &v->swaps[j];
    if (w->tensor >= v->tensor_count || w->device_block >= v->block_count ||
        w->host_block >= v->host_block_count)
      return fail(c, "swap %u: tensor %u, device block %u or host block %u does not exist", j,
                  w->tensor, w->device_block, w->host_block);
    if (w->direction != SFC_SWAP_OUT && w->direction != SFC_SWAP_IN)
      return fail(c, "swap %u: direction %u is neither out (1) nor in (2)", j, w->direction);
    if (w->issue_step > v->step_count)
      return fail(c, "swap %u: issue_step %u is past the last step", j, w->issue_step);
    if (!span_ok(w->dep_begin, w->dep_count, v->dep_count))
      return fail(c, "swap %u: dependencies run past the dependency list", j);
  }
  for (uint32_t d = 0; d < v->dep_count; d++) {
    const sfc_plan_dep_t *x = &v->deps[d];
    uint32_t limit = x->node_kind == SFC_NODE_STEP   ? v->step_count
                     : x->node_kind == SFC_NODE_SWAP ? v->swap_count
                                                     : 0;
    if (limit == 0 && x->node_kind != SFC_NODE_STEP && x->node_kind != SFC_NODE_SWAP)
      return fail(c, "dependency %u: node kind %u is neither a step (0) nor a swap (1)", d,
                  x->node_kind);
    if (x->index >= limit)
      return fail(c, "dependency %u: %s %u does not exist (%u %ss)", d,
                  x->node_kind == SFC_NODE_STEP ? "step" : "swap", x->index, limit,
                  x->node_kind == SFC_NODE_STEP ? "step" : "swap");
  }
  for (uint32_t g = 0; g < v->segment_count; g++) {
    const sfc_plan_segment_t *x = &v->segments[g];
    if (!span_ok(x->first_step, x->step_count, v->step_count))
      return fail(c, "segment %u: steps [%u, %" PRIu64 ") run past the last step (%u steps)", g,
                  x->first_step, (uint64_t)x->first_step + x->step_count, v->step_count);
    if (!span_ok(x->first_op, x->op_count, v->op_count))
      return fail(c, "segment %u: ops [%u, %" PRIu64 ") run past the last op (%u ops)", g,
                  x->first_op, (uint64_t)x->first_op + x->op_count, v->op_count);
    if (x->flags & ~(SFC_SEGMENT_BACKWARD | SFC_SEGMENT_SEED_HALO))
      return fail(c, "segment %u: unknown flags 0x%x", g, x->flags);
    if ((x->flags & SFC_SEGMENT_BACKWARD) ? x->forward_segment >= g : x->forward_segment != 0)
      return fail(c, "segment %u: forward segment %u %s", g, x->forward_segment,
                  (x->flags & SFC_SEGMENT_BACKWARD) ? "is not an earlier segment"
                                                    : "named, but the segment is not backward");
  }
  for (uint32_t b = 0; b < v->box_count; b++) {
    const sfc_plan_box_t *x = &v->boxes[b];
    if (x->tensor >= v->tensor_count)
      return fail(c, "box %u: tensor %u does not exist", b, x->tensor);
    if (x->ndim == 0 || x->ndim > SFC_PLAN_BOX_DIMS)
      return fail(c, "box %u: rank %u is not 1 to %d", b, x->ndim, SFC_PLAN_BOX_DIMS);
  }
  return SFC_OK;
}

/* ---- 14. header ------------------------------------------------------------- */

static sfc_status_t check_header(vctx_t *c) {
  const sfc_plan_header_t *h = &c->v->header;
  uint64_t need = sfc_plan_device_need(c->v); /* 1.7: a paged arena's page peak */
  bool over = h->budget_bytes && need > h->budget_bytes;
  if (over != ((h->flags & SFC_PLAN_OVER_BUDGET) != 0))
    return fail(c, "header: the over-budget flag is %s but the %s of %" PRIu64 " bytes %s",
                over ? "clear" : "set", sfc_plan_paged(c->v) ? "paged arena's page peak" : "arena",
                need, over ? "is over the budget" : "fits the budget (or there is none)");
  return SFC_OK;
}

/* ---- 59. a paged arena's page peak (1.7) ------------------------------------ */

/* The device blocks as a packing problem, whose page peak the packers' own sweep
 * computes (sfc_pack_page_peak): a block lives over [first_step, last + 1), last its
 * last_step or the issue step of a later swap-out of it (the runtime ends the block at
 * that copy, issued before the step; an end-of-iteration copy at the last step). */
static sfc_status_t check_pages(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  if (!sfc_plan_paged(v)) {
    if (v->header.version_minor >= 7 && v->meta.page_peak_bytes != 0)
      return fail(c, "meta: page peak %" PRIu64 " bytes, but the arena is not paged (must be 0)",
                  v->meta.page_peak_bytes);
    return SFC_OK;
  }
  uint64_t page = v->meta.va_chunk_bytes, need = 0;
  if (page == 0)
    return fail(c, "meta: the arena is paged but its page size (va_chunk_bytes) is 0");
  sfc_pack_block_t *pb = malloc((v->block_count + 1u) * sizeof *pb);
  if (!pb)
    return no_memory(c);
  size_t n = 0;
  for (uint32_t i = 0; i < v->block_count; i++)
    pb[i] = (sfc_pack_block_t){.size = v->blocks[i].bytes,
                               .start = v->blocks[i].first_step,
                               .end = (int64_t)v->blocks[i].last_step + 1,
                               .offset = v->blocks[i].offset};
  for (uint32_t w = 0; w < v->swap_count; w++) {
    const sfc_plan_swap_t *x = &v->swaps[w];
    int64_t at = x->issue_step < v->step_count ? x->issue_step : (int64_t)v->step_count - 1;
    if (x->direction == SFC_SWAP_OUT && at + 1 > pb[x->device_block].end)
      pb[x->device_block].end = at + 1;
  }
  for (uint32_t i = 0; i < v->block_count; i++)
    if (pb[i].size > 0)
      pb[n++] = pb[i];
  sfc_pack_problem_t p = {.blocks = pb, .count = n, .alignment = 1};
  sfc_error_t e;
  sfc_status_t st = sfc_pack_page_peak(&p, page, &need, &e);
  free(pb);
  if (st == SFC_ERR_OUT_OF_MEMORY)
    return no_memory(c);
  if (st != SFC_OK)
    return fail(c, "meta: the page peak cannot be computed: %s", e.message);
  if (need != v->meta.page_peak_bytes)
    return fail(c,
                "meta: page peak %" PRIu64
                " bytes, but the live device blocks touch at most %" PRIu64 " bytes of %" PRIu64
                "-byte pages",
                v->meta.page_peak_bytes, need, page);
  return SFC_OK;
}

/* ---- 15-29. blocks ---------------------------------------------------------- */

/* Bytes per element of x: the dtype's, else x's bytes over its element count, up. */
static uint64_t element_size(const sfc_plan_tensor_t *x) {
  uint64_t e = sfc_dtype_bytes(x->dtype);
  if (e)
    return e;
  uint64_t n = 1;
  for (uint32_t d = 0; d < x->ndim; d++)
    n = mul_sat(n, x->shape[d] > 0 ? (uint64_t)x->shape[d] : 0);
  return n ? (x->bytes / n) + (x->bytes % n ? 1 : 0) : x->bytes;
}

static uint64_t box_volume(const sfc_plan_box_t *b) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < b->ndim; d++)
    n = mul_sat(n, b->hi[d] > b->lo[d] ? (uint64_t)(b->hi[d] - b->lo[d]) : 0);
  return n;
}

/* What a block holds: its tensor's bytes, or (PARTIAL) its box's. */
static uint64_t held_bytes(const sfc_plan_view_t *v, const sfc_plan_block_t *b) {
  const sfc_plan_tensor_t *x = &v->tensors[b->tensor];
  if (!(b->flags & SFC_BLOCK_PARTIAL))
    return x->bytes;
  return mul_sat(box_volume(&v->boxes[b->box]), element_size(x));
}

static bool same_box(const sfc_plan_box_t *a, const sfc_plan_box_t *b) {
  if (a->ndim != b->ndim)
    return false;
  for (uint32_t d = 0; d < a->ndim; d++)
    if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
      return false;
  return true;
}

static sfc_status_t check_partial(vctx_t *c, const char *what, uint32_t b,
                                  const sfc_plan_block_t *x) {
  const sfc_plan_view_t *v = c->v;
  const sfc_plan_box_t *box = &v->boxes[x->box];
  const sfc_plan_tensor_t *t = &v->tensors[x->tensor];
  if (box->tensor != x->tensor || box->ndim != t->ndim)
    return fail(c,
                "%s[%u] (tensor %u \"%s\"): partial, but box %u (of tensor %u, rank %u) is not a "
                "box of its tensor (rank %u)",
                what, b, x->tensor, tname(c, x->tensor), x->box, box->tensor, box->ndim, t->ndim);
  for (uint32_t d = 0; d < box->ndim; d++)
    if (box->lo[d] < 0 || box->lo[d] >= box->hi[d] || box->hi[d] > t->shape[d])
      return fail(c,
                  "%s[%u] (tensor %u \"%s\"): partial box %u spans [%" PRId64 ", %" PRId64
                  ") on axis %u: empty or outside the tensor's %" PRId64,
                  what, b, x->tensor, tname(c, x->tensor), x->box, box->lo[d], box->hi[d], d,
                  t->shape[d]);
  uint64_t need = held_bytes(v, x);
  if (x->bytes < need)
    return fail(c,
                "%s[%u] (tensor %u \"%s\"): %" PRIu64 " bytes hold only part of box %u (%" PRIu64
                " bytes)",
                what, b, x->tensor, tname(c, x->tensor), x->bytes, x->box, need);
  return SFC_OK;
}

static sfc_status_t check_arena(vctx_t *c, const char *what, const sfc_plan_block_t *blocks,
                                uint32_t n, uint64_t arena, uint64_t align, bool device) {
  const sfc_plan_view_t *v = c->v;
  uint32_t *home = NULL; /* device: the one block of each persistent tensor */
  if (device) {
    home = malloc((v->tensor_count ? v->tensor_count : 1) * sizeof *home);
    if (!home)
      return no_memory(c);
    for (uint32_t t = 0; t < v->tensor_count; t++)
      home[t] = NONE;
  }
  sfc_status_t st = SFC_OK;
  for (uint32_t b = 0; b < n && st == SFC_OK; b++) {
    const sfc_plan_block_t *x = &blocks[b];
    const sfc_plan_tensor_t *t = &v->tensors[x->tensor];
    const char *name = tname(c, x->tensor);
    bool ext = device && (x->flags & SFC_BLOCK_EXTERNAL);
    if (x->first_step > x->last_step)
      st = fail(c, "%s[%u] (tensor %u \"%s\"): steps [%u, %u] run backwards", what, b, x->tensor,
                name, x->first_step, x->last_step);
    else if (t->flags & SFC_TENSOR_UNUSED)
      st = fail(c, "%s[%u] (tensor %u \"%s\"): the tensor is marked unused but has a block", what,
                b, x->tensor, name);
    else if (ext && (x->offset || x->bytes))
      st = fail(c, "%s[%u] (tensor %u \"%s\"): external, so offset and bytes must be 0", what, b,
                x->tensor, name);
    else if (ext && (x->flags & SFC_BLOCK_PARTIAL))
      st = fail(c, "%s[%u] (tensor %u \"%s\"): external blocks hold the whole tensor, not a box",
                what, b, x->tensor, name);
    else if (device && ext != ((t->flags & SFC_TENSOR_EXTERNAL) != 0))
      st = fail(c, "%s[%u] (tensor %u \"%s\"): the block is %sexternal but the tensor is %s", what,
                b, x->tensor, name, ext ? "" : "not ", ext ? "not" : "external");
    else if (!ext && x->offset % align != 0)
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): offset %" PRIu64
                " is not a multiple of the alignment %" PRIu64,
                what, b, x->tensor, name, x->offset, align);
    else if (!ext && (x->offset > arena || x->bytes > arena - x->offset))
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): [%" PRIu64 ", +%" PRIu64
                ") runs past the arena of %" PRIu64 " bytes",
                what, b, x->tensor, name, x->offset, x->bytes, arena);
    else if (!ext && (x->flags & SFC_BLOCK_PARTIAL))
      st = check_partial(c, what, b, x);
    else if (!ext && device && x->bytes < t->bytes)
      st = fail(c, "%s[%u] (tensor %u \"%s\"): %" PRIu64 " bytes hold a %" PRIu64 "-byte tensor",
                what, b, x->tensor, name, x->bytes, t->bytes);
    if (st != SFC_OK)
      continue;
    bool keep = x->flags & SFC_BLOCK_PERSISTENT, persistent = t->flags & SFC_TENSOR_PERSISTENT;
    uint32_t at_home = c->home[x->tensor];
    if (keep && (x->first_step != 0 || x->last_step + 1 != v->step_count))
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): persistent, so it must live over every step, not "
                "[%u, %u]",
                what, b, x->tensor, name, x->first_step, x->last_step);
    else if (keep && !persistent)
      st = fail(c, "%s[%u] (tensor %u \"%s\"): a persistent block of a tensor that is not", what, b,
                x->tensor, name);
    else if (!device && keep && ((x->flags & SFC_BLOCK_PARTIAL) || x->bytes < t->bytes))
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): a home of %" PRIu64 " bytes%s cannot hold the "
                "%" PRIu64 "-byte tensor",
                what, b, x->tensor, name, x->bytes,
                (x->flags & SFC_BLOCK_PARTIAL) ? " (partial)" : "", t->bytes);
    else if (!device && keep && (t->flags & SFC_TENSOR_EXTERNAL))
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): an external tensor's home is framework memory, not "
                "a persistent host block",
                what, b, x->tensor, name);
    else if (!device && keep && at_home != b)
      st = fail(c, "tensor %u \"%s\" has two homes (%s[%u] and %s[%u])", x->tensor, name, what,
                at_home, what, b);
    else if (!device)
      continue;
    else if (persistent && at_home != NONE && keep)
      st =
          fail(c, "%s[%u] (tensor %u \"%s\"): persistent, but the tensor's home is HOST_BLOCKS[%u]",
               what, b, x->tensor, name, at_home);
    else if (persistent && at_home != NONE)
      continue; /* a residency of a tensor homed on the host: any number of them */
    else if (persistent && !keep && !ext)
      st = fail(c,
                "%s[%u] (tensor %u \"%s\"): the tensor is persistent but its block is not: its "
                "contents would not survive the iteration",
                what, b, x->tensor, name);
    else if (persistent && home[x->tensor] != NONE)
      st = fail(c, "tensor %u \"%s\" is persistent but has two blocks (%s[%u] and %s[%u])",
                x->tensor, name, what, home[x->tensor], what, b);
    else if (persistent)
      home[x->tensor] = b;
  }
  free(home);
  SFC_TRY(st);
  /* 18, 19. No live overlap: the packing checker on [first, last + 1); externals out. */
  sfc_pack_block_t *pb = malloc((n ? n : 1) * sizeof *pb);
  uint32_t *map = malloc((n ? n : 1) * sizeof *map);
  if (!pb || !map) {
    free(pb);
    free(map);
    return no_memory(c);
  }
  size_t m = 0;
  for (uint32_t b = 0; b < n; b++) {
    if ((device && (blocks[b].flags & SFC_BLOCK_EXTERNAL)) || blocks[b].bytes == 0)
      continue;
    pb[m] = (sfc_pack_block_t){.size = blocks[b].bytes,
                               .start = blocks[b].first_step,
                               .end = (int64_t)blocks[b].last_step + 1,
                               .offset = blocks[b].offset};
    map[m++] = b;
  }
  sfc_pack_problem_t p = {.blocks = pb, .count = m, .alignment = 1};
  uint32_t pair[2];
  sfc_error_t sub;
  st = sfc_pack_check(&p, NULL, pair, &sub);
  if (st != SFC_OK && pair[0] != UINT32_MAX) {
    const sfc_plan_block_t *x = &blocks[map[pair[0]]], *y = &blocks[map[pair[1]]];
    uint64_t lo = x->offset > y->offset ? x->offset : y->offset;
    uint64_t hi =
        x->offset + x->bytes < y->offset + y->bytes ? x->offset + x->bytes : y->offset + y->bytes;
    uint32_t step = x->first_step > y->first_step ? x->first_step : y->first_step;
    st = fail(c,
              "%s[%u] (tensor %u \"%s\") and %s[%u] (tensor %u \"%s\") share bytes [%" PRIu64
              ", %" PRIu64 ") while both are live at step %u",
              what, map[pair[0]], x->tensor, tname(c, x->tensor), what, map[pair[1]], y->tensor,
              tname(c, y->tensor), lo, hi, step);
  } else if (st != SFC_OK) {
    st = sfc_error_set(c->err, st, "%s: %s", what, sub.message);
  }
  free(pb);
  free(map);
  return st;
}

/* ---- 30-33, 37, 38. step operands ------------------------------------------- */

static bool box_within(const sfc_plan_box_t *inner, const sfc_plan_box_t *outer) {
  if (inner->ndim != outer->ndim)
    return false;
  for (uint32_t d = 0; d < inner->ndim; d++)
    if (inner->lo[d] < outer->lo[d] || inner->hi[d] > outer->hi[d])
      return false;
  return true;
}

static sfc_status_t check_uses_acc(vctx_t *c, uint32_t *acc);

/* 1.2: step s's output operand i is accumulated and reads what earlier tiles added:
 * an output of a BACKWARD segment's step in a whole block, not the segment's first step
 * to write that tensor (acc[t]: the segment + 1 that last accumulated t). */
static bool accumulates_again(const sfc_plan_view_t *v, uint32_t s, uint32_t i, uint32_t *acc) {
  const sfc_plan_step_t *st = &v->steps[s];
  const sfc_plan_op_t *op = &v->ops[st->op];
  if (i < op->input_count || i >= (uint32_t)op->input_count + op->output_count ||
      st->segment == NONE || !(v->segments[st->segment].flags & SFC_SEGMENT_BACKWARD) ||
      (v->blocks[v->step_operands[st->operand_begin + i]].flags & SFC_BLOCK_PARTIAL))
    return false;
  uint32_t t = v->op_operands[op->operand_begin + i];
  bool again = acc[t] == st->segment + 1;
  acc[t] = st->segment + 1;
  return again;
}

/* Step operands name live blocks of the right tensor; record each block's uses. */
static sfc_status_t check_uses(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  uint32_t *acc = calloc(v->tensor_count + 1u, sizeof *acc);
  if (!acc)
    return no_memory(c);
  sfc_status_t status = check_uses_acc(c, acc);
  free(acc);
  return status;
}

static sfc_status_t check_uses_acc(vctx_t *c, uint32_t *acc) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t s = 0; s < v->step_count; s++) {
    const sfc_plan_step_t *st = &v->steps[s];
    const sfc_plan_op_t *op = &v->ops[st->op];
    const char *on = oname(c, st->op);
    for (uint32_t i = 0, m = op_operand_count(op); i < m; i++) {
      uint32_t b = v->step_operands[st->operand_begin + i];
      uint32_t t = v->op_operands[op->operand_begin + i];
      const sfc_plan_block_t *x = &v->blocks[b];
      if (x->tensor != t)
        return fail(c,
                    "step %u (op \"%s\"): operand %u is tensor %u \"%s\" but BLOCKS[%u] "
                    "holds tensor %u \"%s\"",
                    s, on, i, t, tname(c, t), b, x->tensor, tname(c, x->tensor));
      if (!live_at(x, s))
        return fail(c,
                    "step %u (op \"%s\"): tensor %u \"%s\" is not resident: BLOCKS[%u] "
                    "lives over steps [%u, %u]",
                    s, on, t, tname(c, t), b, x->first_step, x->last_step);
      const sfc_plan_box_t *box = st->box_begin == NONE ? NULL : &v->boxes[st->box_begin + i];
      if (box && box->tensor != t)
        return fail(c, "step %u (op \"%s\"): operand %u (tensor %u) has box %u of tensor %u", s, on,
                    i, t, st->box_begin + i, box->tensor);
      if ((x->flags & SFC_BLOCK_PARTIAL) && !box)
        return fail(c,
                    "step %u (op \"%s\"): operand %u is partial BLOCKS[%u] but the step has no "
                    "boxes",
                    s, on, i, b);
      if ((x->flags & SFC_BLOCK_PARTIAL) && !box_within(box, &v->boxes[x->box]))
        return fail(c,
                    "step %u (op \"%s\"): operand %u touches box %u, which partial BLOCKS[%u] "
                    "(box %u) does not hold",
                    s, on, i, st->box_begin + i, b, x->box);
      if (c->first_use[b] == NONE) {
        c->first_use[b] = s;
        c->first_reads[b] = 0;
      }
      if (c->first_use[b] == s && (i < op->input_count || accumulates_again(v, s, i, acc)))
        c->first_reads[b] = 1;
      c->last_use[b] = s;
    }
    if ((st->flags & SFC_STEP_TIMED) ? !(isfinite(st->time_us) && st->time_us >= 0)
                                     : st->time_us != 0)
      return fail(c, "step %u (op \"%s\"): time %g us is not allowed for a%s step", s, on,
                  st->time_us, (st->flags & SFC_STEP_TIMED) ? " timed" : "n untimed");
    if (st->segment != NONE) {
      const sfc_plan_segment_t *g = &v->segments[st->segment];
      if (s < g->first_step || s - g->first_step >= g->step_count)
        return fail(c, "step %u (op \"%s\"): names segment %u, which spans steps [%u, %" PRIu64 ")",
                    s, on, st->segment, g->first_step, (uint64_t)g->first_step + g->step_count);
      bool recompute = (st->flags & SFC_STEP_RECOMPUTE) != 0;
      if (recompute && !(g->flags & SFC_SEGMENT_BACKWARD))
        return fail(c, "step %u (op \"%s\"): recomputes in segment %u, which is not backward", s,
                    on, st->segment);
      const sfc_plan_segment_t *og = recompute ? &v->segments[g->forward_segment] : g;
      if (st->op < og->first_op || st->op - og->first_op >= og->op_count)
        return fail(c, "step %u (op \"%s\"): op %u is not one of segment %u's ops", s, on, st->op,
                    recompute ? g->forward_segment : st->segment);
      if (st->box_begin == NONE)
        return fail(c, "step %u (op \"%s\"): tile %u of segment %u has no boxes", s, on, st->tile,
                    st->segment);
    }
  }
  return SFC_OK;
}

/* ---- 35, 36, 39, 40. segments and boxes ------------------------------------- */

typedef struct vertex {
  int64_t at[SFC_PLAN_BOX_DIMS];
  int sign;
} vertex_t;

static int vertex_cmp(const void *pa, const void *pb) {
  const vertex_t *a = pa, *b = pb;
  for (int d = 0; d < SFC_PLAN_BOX_DIMS; d++)
    if (a->at[d] != b->at[d])
      return a->at[d] < b->at[d] ? -1 : 1;
  return 0;
}

/* The 16 signed corners of box b of tensor x (b NULL: all of x, signs negated). Axes
 * past the box's rank span the whole tensor; axes past the tensor's rank are [0, 1). */
static void vertices(const sfc_plan_tensor_t *x, const sfc_plan_box_t *b, vertex_t *out) {
  for (int corner = 0; corner < 16; corner++) {
    int sign = b ? 1 : -1;
    for (uint32_t d = 0; d < SFC_PLAN_BOX_DIMS; d++) {
      int64_t lo = 0, hi = d < x->ndim ? x->shape[d] : 1;
      if (b && d < b->ndim) {
        lo = b->lo[d];
        hi = b->hi[d];
      }
      bool upper = (corner >> d) & 1;
      out[corner].at[d] = upper ? hi : lo;
      if (upper)
        sign = -sign;
    }
    out[corner].sign = sign;
  }
}

typedef struct tile_out {
  uint32_t segment, tensor, tile, box;
} tile_out_t;

static int tile_out_cmp(const void *pa, const void *pb) {
  const tile_out_t *a = pa, *b = pb;
  if (a->segment != b->segment)
    return a->segment < b->segment ? -1 : 1;
  if (a->tensor != b->tensor)
    return a->tensor < b->tensor ? -1 : 1;
  if (a->tile != b->tile)
    return a->tile < b->tile ? -1 : 1;
  return a->box < b->box ? -1 : (a->box > b->box);
}

static bool box_same(const sfc_plan_box_t *a, const sfc_plan_box_t *b) {
  if (a->ndim != b->ndim)
    return false;
  for (uint32_t d = 0; d < a->ndim && d < SFC_PLAN_BOX_DIMS; d++)
    if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
      return false;
  return true;
}

/* Outputs of a segment that something outside it sees must be computed once, whole. */
static sfc_status_t check_tile_outputs(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  if (v->segment_count == 0)
    return SFC_OK;
  /* where[t]: the segment (NONE: untiled) of the first step naming t; outside[t]: some
   * step of another segment, or an untiled step, names it too. */
  uint32_t *where = malloc((v->tensor_count ? v->tensor_count : 1) * sizeof *where);
  bool *outside = calloc(v->tensor_count ? v->tensor_count : 1, sizeof *outside);
  bool *seen = calloc(v->tensor_count ? v->tensor_count : 1, sizeof *seen);
  size_t count = 0;
  for (uint32_t s = 0; where && outside && seen && s < v->step_count; s++) {
    const sfc_plan_op_t *op = &v->ops[v->steps[s].op];
    for (uint32_t i = 0, m = op_operand_count(op); i < m; i++) {
      uint32_t t = v->op_operands[op->operand_begin + i];
      if (!seen[t]) {
        seen[t] = true;
        where[t] = v->steps[s].segment;
      } else if (where[t] != v->steps[s].segment) {
        outside[t] = true;
      }
    }
    if (v->steps[s].segment != NONE)
      count += op->output_count;
  }
  tile_out_t *outs = where && outside && seen ? malloc((count ? count : 1) * sizeof *outs) : NULL;
  if (!outs) {
    free(where);
    free(outside);
    free(seen);
    return no_memory(c);
  }
  size_t n = 0;
  for (uint32_t s = 0; s < v->step_count; s++) {
    const sfc_plan_step_t *st = &v->steps[s];
    /* a backward segment's outputs are summed over its tiles or per tile (1.2) */
    if (st->segment == NONE || (v->segments[st->segment].flags & SFC_SEGMENT_BACKWARD))
      continue;
    const sfc_plan_op_t *op = &v->ops[st->op];
    for (uint32_t i = op->input_count; i < (uint32_t)op->input_count + op->output_count; i++) {
      uint32_t t = v->op_operands[op->operand_begin + i];
      const sfc_plan_tensor_t *x = &v->tensors[t];
      if (v->blocks[v->step_operands[st->operand_begin + i]].flags & SFC_BLOCK_PARTIAL)
        continue; /* a per-tile buffer: not handed on */
      bool handed_on = outside[t] || x->kind == SFC_KIND_OUTPUT ||
                       (x->flags & (SFC_TENSOR_PERSISTENT | SFC_TENSOR_EXTERNAL));
      if (handed_on)
        outs[n++] = (tile_out_t){st->segment, t, st->tile, st->box_begin + i};
    }
  }
  free(where);
  free(outside);
  free(seen);
  qsort(outs, n, sizeof *outs, tile_out_cmp);
  sfc_status_t status = SFC_OK;
  for (size_t i = 0, j; i < n && status == SFC_OK; i = j) {
    for (j = i; j < n && outs[j].segment == outs[i].segment && outs[j].tensor == outs[i].tensor;)
      j++;
    const sfc_plan_tensor_t *x = &v->tensors[outs[i].tensor];
    vertex_t *vx = malloc((j - i + 1) * 16 * sizeof *vx);
    if (!vx) {
      status = no_memory(c);
      break;
    }
    vertices(x, NULL, vx);
    uint64_t sum = 0;
    size_t kept = 1;
    for (size_t k = i; k < j; k++) {
      /* a tile writing the same box again (an in-place op) computes no new part */
      bool again = false;
      for (size_t q = k; q-- > i && outs[q].tile == outs[k].tile && !again;)
        again = box_same(&v->boxes[outs[q].box], &v->boxes[outs[k].box]);
      if (again)
        continue;
      vertices(x, &v->boxes[outs[k].box], vx + 16 * kept++);
      uint64_t vol = box_volume(&v->boxes[outs[k].box]);
      sum = sum > UINT64_MAX - vol ? UINT64_MAX : sum + vol;
    }
    size_t nv = kept * 16;
    qsort(vx, nv, sizeof *vx, vertex_cmp);
    bool exact = true;
    for (size_t a = 0, b; a < nv && exact; a = b) {
      long total = 0;
      for (b = a; b < nv && vertex_cmp(&vx[a], &vx[b]) == 0; b++)
        total += vx[b].sign;
      exact = total == 0;
    }
    free(vx);
    if (!exact) {
      uint64_t whole = 1;
      for (uint32_t d = 0; d < x->ndim && d < SFC_PLAN_BOX_DIMS; d++)
        whole = mul_sat(whole, x->shape[d] > 0 ? (uint64_t)x->shape[d] : 0);
      status = fail(c,
                    "segment %u: its tiles compute %" PRIu64 " elements of tensor %u \"%s\", "
                    "which has %" PRIu64 ", not each exactly once",
                    outs[i].segment, sum, outs[i].tensor, tname(c, outs[i].tensor), whole);
    }
  }
  free(outs);
  return status;
}

static sfc_status_t check_segments(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t g = 0; g < v->segment_count; g++) {
    const sfc_plan_segment_t *x = &v->segments[g];
    uint64_t tiles = 1;
    for (int d = 0; d < SFC_PLAN_BOX_DIMS; d++)
      tiles = mul_sat(tiles, x->grid[d]);
    if (tiles != x->tile_count)
      return fail(c, "segment %u: %u tiles, but its grid %ux%ux%ux%u has %" PRIu64, g,
                  x->tile_count, x->grid[0], x->grid[1], x->grid[2], x->grid[3], tiles);
    if (g > 0 &&
        x->first_step < (uint64_t)v->segments[g - 1].first_step + v->segments[g - 1].step_count)
      return fail(c, "segment %u: starts at step %u, before segment %u ends", g, x->first_step,
                  g - 1);
    for (uint32_t s = x->first_step; s - x->first_step < x->step_count; s++)
      if (v->steps[s].segment != g)
        return fail(c, "segment %u spans step %u, which does not name it", g, s);
  }
  for (uint32_t b = 0; b < v->box_count; b++) {
    const sfc_plan_box_t *x = &v->boxes[b];
    const sfc_plan_tensor_t *t = &v->tensors[x->tensor];
    if (x->ndim > t->ndim)
      return fail(c, "box %u: rank %u, but tensor %u \"%s\" has rank %u", b, x->ndim, x->tensor,
                  tname(c, x->tensor), t->ndim);
    for (uint32_t d = 0; d < x->ndim; d++)
      if (x->lo[d] > x->hi[d])
        return fail(c, "box %u: dimension %u has lo %" PRId64 " > hi %" PRId64, b, d, x->lo[d],
                    x->hi[d]);
      else if (x->lo[d] < 0 || x->hi[d] > t->shape[d])
        return fail(c,
                    "box %u: dimension %u spans [%" PRId64 ", %" PRId64
                    "), outside tensor %u \"%s\" (%" PRId64 ")",
                    b, d, x->lo[d], x->hi[d], x->tensor, tname(c, x->tensor), t->shape[d]);
  }
  return check_tile_outputs(c);
}

/* ---- 57, 58. op maps and tile geometry ---------------------------------------- */

/* A part of a 4-D tensor: per axis [lo, hi) and the zeros around it; `none` when
 * empty (nothing of the tensor). */
typedef struct part4 {
  bool none;
  int64_t lo[4], hi[4];
  uint32_t zl[4], zh[4];
} part4_t;

static const part4_t NOTHING = {.none = true};

static const sfc_plan_tensor_t *operand_tensor(const vctx_t *c, const sfc_plan_op_t *op,
                                               uint32_t j) {
  return &c->v->tensors[c->v->op_operands[op->operand_begin + j]];
}

static bool rank4(const sfc_plan_tensor_t *x) {
  return x->ndim == 4;
}

static int64_t extent(const sfc_plan_tensor_t *x, uint32_t d) {
  return d < x->ndim ? x->shape[d] : 1;
}

/* The whole of x. */
static part4_t part_whole(const sfc_plan_tensor_t *x) {
  part4_t p = {.none = false};
  for (uint32_t d = 0; d < 4; d++)
    p.hi[d] = extent(x, d);
  for (uint32_t d = 0; d < 4; d++)
    p.none |= p.hi[d] == 0;
  return p;
}

/* The part a BOXES record names (axes past its rank whole). */
static part4_t part_of_box(const vctx_t *c, const sfc_plan_box_t *b) {
  const sfc_plan_tensor_t *x = &c->v->tensors[b->tensor];
  part4_t p = part_whole(x);
  for (uint32_t d = 0; d < b->ndim && d < 4; d++) {
    p.lo[d] = b->lo[d];
    p.hi[d] = b->hi[d];
    p.zl[d] = b->pad_lo[d];
    p.zh[d] = b->pad_hi[d];
  }
  p.none = false;
  for (uint32_t d = 0; d < 4; d++)
    p.none |= p.lo[d] >= p.hi[d];
  return p;
}

/* p's batch, height and width over tensor x, all its channels, no zeros. */
static part4_t like(const part4_t *p, const sfc_plan_tensor_t *x) {
  if (p->none)
    return NOTHING;
  part4_t r = {.none = false};
  for (uint32_t d = 0; d < 4; d++) {
    r.lo[d] = d == 1 ? 0 : p->lo[d];
    r.hi[d] = d == 1 ? extent(x, 1) : p->hi[d];
  }
  return r;
}

static bool part_eq(const part4_t *a, const part4_t *b) {
  if (a->none || b->none)
    return a->none == b->none;
  for (uint32_t d = 0; d < 4; d++)
    if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d] || a->zl[d] != b->zl[d] ||
        a->zh[d] != b->zh[d])
      return false;
  return true;
}

/* Through the map of forward op f (input x, output y), one spatial axis at a time:
 * forward, the part of x outputs `p` read (with a window's zeros); backward, the part
 * of y whose reads meet part `p` of x. */
static part4_t through(const sfc_plan_op_t *f, const sfc_plan_tensor_t *x,
                       const sfc_plan_tensor_t *y, const part4_t *p, bool backward) {
  part4_t r = like(p, backward ? y : x);
  if (r.none)
    return NOTHING;
  for (uint32_t a = 0; a < 2; a++) {
    uint32_t d = 2 + a;
    int64_t first = p->lo[d], last = p->hi[d] - 1, lo = 0, hi = -1;
    bool ok;
    if (f->map == SFC_MAP_WINDOW || f->map == SFC_MAP_WINDOW_T) {
      /* transposed: y's element o gets x's i when o = i*s - p + j*d, a convolution from
       * y to x, so the lengths and the two maps exchange (and no zeros are read) */
      bool t = f->map == SFC_MAP_WINDOW_T;
      sfc_map_window_t w = {.n_in = (t ? y : x)->shape[d],
                            .n_out = (t ? x : y)->shape[d],
                            .k = f->kernel[a],
                            .s = f->stride[a],
                            .p = f->padding[a],
                            .d = f->dilation[a]};
      ok = backward != t ? sfc_map_window_out(&w, first, last, &lo, &hi)
                         : sfc_map_window_in(&w, first, last, &lo, &hi);
      if (ok && !backward && !t)
        sfc_map_window_pads(&w, first, last + 1, lo, hi + 1, &r.zl[d], &r.zh[d]);
    } else if (f->map == SFC_MAP_NEAREST) {
      ok = backward ? sfc_map_nearest_out(x->shape[d], y->shape[d], first, last, &lo, &hi)
                    : sfc_map_nearest_in(x->shape[d], y->shape[d], first, last, &lo, &hi);
    } else {
      ok = backward ? sfc_map_bilinear_out(x->shape[d], y->shape[d], first, last, &lo, &hi)
                    : sfc_map_bilinear_in(x->shape[d], y->shape[d], first, last, &lo, &hi);
    }
    if (!ok)
      return NOTHING;
    r.lo[d] = lo;
    r.hi[d] = hi + 1;
  }
  return r;
}

static bool has_window(const sfc_plan_op_t *op) {
  return op->map == SFC_MAP_WINDOW || op->map == SFC_MAP_WINDOW_T || op->map == SFC_MAP_NEAREST ||
         op->map == SFC_MAP_BILINEAR;
}

static sfc_status_t check_op_maps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t o = 0; o < v->op_count; o++) {
    const sfc_plan_op_t *op = &v->ops[o];
    if (op->map > SFC_MAP_MAX)
      return fail(c, "op %u \"%s\": map %u is unknown", o, oname(c, o), op->map);
    bool window = op->map == SFC_MAP_WINDOW || op->map == SFC_MAP_WINDOW_T;
    for (uint32_t a = 0; a < 2; a++) {
      bool ok = window ? op->kernel[a] > 0 && op->stride[a] > 0 && op->padding[a] >= 0 &&
                             op->dilation[a] > 0
                       : (op->kernel[a] | op->stride[a] | op->padding[a] | op->dilation[a]) == 0;
      if (!ok)
        return fail(c, "op %u \"%s\": %s (axis %u: kernel %d, stride %d, padding %d, dilation %d)",
                    o, oname(c, o),
                    window ? "a window needs kernel, stride, dilation >= 1 and padding >= 0"
                           : "a window on an op whose map is not WINDOW or WINDOW_T",
                    a, op->kernel[a], op->stride[a], op->padding[a], op->dilation[a]);
    }
    const sfc_plan_op_t *f = op;
    if (op->map == SFC_MAP_GRAD_DATA) {
      if (op->backward_of == NONE || !has_window(&v->ops[op->backward_of]))
        return fail(c,
                    "op %u \"%s\": a GRAD_DATA map whose backward_of is no WINDOW, "
                    "WINDOW_T, NEAREST or BILINEAR op",
                    o, oname(c, o));
      if (op->input_count < 1 || !rank4(operand_tensor(c, op, 0)))
        return fail(c, "op %u \"%s\": a GRAD_DATA map needs a 4-D input 0", o, oname(c, o));
      f = &v->ops[op->backward_of];
    } else if (!has_window(op)) {
      continue;
    }
    if (f->input_count < 1 || f->output_count < 1 || !rank4(operand_tensor(c, f, 0)) ||
        !rank4(operand_tensor(c, f, f->input_count)))
      return fail(c, "op %u \"%s\": its map needs a 4-D input 0 and output 0%s", o, oname(c, o),
                  f == op ? "" : " of the forward op");
  }
  return SFC_OK;
}

/* One required part per operand of a tile step; `free` where the map leaves it. */
typedef struct need {
  bool bound;
  part4_t part;
} need_t;

/* The parts step s's operands must have (58), from the parts `got` they have: the free
 * ones (what the tile computes) decide the rest. */
static void tile_needs(const vctx_t *c, const sfc_plan_step_t *s, const part4_t *got,
                       need_t *need) {
  const sfc_plan_view_t *v = c->v;
  const sfc_plan_op_t *op = &v->ops[s->op];
  uint32_t ni = op->input_count, n = ni + op->output_count;
  bool seed = v->segments[s->segment].flags & SFC_SEGMENT_SEED_HALO;
  for (uint32_t j = 0; j < op_operand_count(op); j++)
    need[j].bound = false;
#define NEED(j, p) (need[j] = (need_t){.bound = true, .part = (p)})
  if (op->map == SFC_MAP_GRAD_POINTWISE || (op->map == SFC_MAP_GRAD_SUM && seed)) {
    const part4_t *first = NULL;
    for (uint32_t j = 0; j < n; j++)
      if (rank4(operand_tensor(c, op, j))) {
        first = first ? first : &got[j];
        NEED(j, like(first, operand_tensor(c, op, j)));
      }
  } else if (op->map == SFC_MAP_GRAD_SUM) {
    part4_t hull = NOTHING;
    for (uint32_t j = 0; j < ni; j++) {
      if (!rank4(operand_tensor(c, op, j)) || got[j].none)
        continue;
      NEED(j, like(&got[j], operand_tensor(c, op, j)));
      for (uint32_t d = 0; d < 4 && !hull.none; d++) {
        hull.lo[d] = got[j].lo[d] < hull.lo[d] ? got[j].lo[d] : hull.lo[d];
        hull.hi[d] = got[j].hi[d] > hull.hi[d] ? got[j].hi[d] : hull.hi[d];
      }
      if (hull.none)
        hull = got[j];
    }
    for (uint32_t j = ni; j < n; j++)
      if (rank4(operand_tensor(c, op, j)))
        NEED(j, like(&hull, operand_tensor(c, op, j)));
  } else if (op->map == SFC_MAP_GRAD_SLICE) {
    if (ni > 0 && rank4(operand_tensor(c, op, 0)))
      for (uint32_t j = 0; j < n; j++)
        if (j == 0 || (j >= ni && rank4(operand_tensor(c, op, j))))
          NEED(j, like(&got[0], operand_tensor(c, op, j)));
  } else if (op->map == SFC_MAP_GRAD_DATA) {
    const sfc_plan_op_t *f = &v->ops[op->backward_of];
    uint32_t fx = v->op_operands[f->operand_begin];
    const sfc_plan_tensor_t *x = &v->tensors[fx], *y = operand_tensor(c, f, f->input_count);
    /* which operand is which: f's input (the first later input naming it), the input's
     * gradient (output 0 shaped like it), max pooling's indices (shaped like y) */
    uint32_t input = NONE, grad_in = NONE;
    for (uint32_t j = ni; j-- > 1;)
      if (v->op_operands[op->operand_begin + j] == fx)
        input = j;
    const sfc_plan_tensor_t *g0 = op->output_count ? operand_tensor(c, op, ni) : NULL;
    if (g0 && rank4(g0) && memcmp(g0->shape, x->shape, sizeof x->shape[0] * 4) == 0)
      grad_in = ni;
    bool weight_part = false;
    for (uint32_t j = ni; j < n; j++)
      weight_part |=
          j != grad_in && operand_tensor(c, op, j)->kind != SFC_KIND_WORKSPACE && !got[j].none;
    NEED(0, like(&got[0], operand_tensor(c, op, 0)));
    part4_t read = through(f, x, y, &got[0], false);
    bool exact = seed && !weight_part && grad_in != NONE; /* seed: grad input exact */
    if (exact) { /* in input 0's own channels (1.6; 1.5 wrote y's: a channel view's) */
      part4_t m = through(f, x, y, &got[grad_in], true);
      NEED(0, v->header.version_minor >= 6 ? like(&m, operand_tensor(c, op, 0)) : m);
    }
    if (input != NONE)
      NEED(input, exact ? like(&got[grad_in], x) : read);
    if (grad_in != NONE && !exact)
      NEED(grad_in, seed ? NOTHING : read);
    for (uint32_t j = 1; j < ni; j++) {
      const sfc_plan_tensor_t *t = operand_tensor(c, op, j);
      if (j == input)
        continue;
      bool indices = rank4(t) && memcmp(t->shape, y->shape, sizeof y->shape[0] * 4) == 0;
      NEED(j, indices ? like(&got[0], t) : part_whole(t));
    }
    for (uint32_t j = ni; j < n; j++)
      if (j != grad_in && operand_tensor(c, op, j)->kind != SFC_KIND_WORKSPACE &&
          (!seed || weight_part))
        NEED(j, part_whole(operand_tensor(c, op, j)));
  } else if (op->map != SFC_MAP_NONE && op->map != SFC_MAP_VIEW) {
    /* forward: the outputs share one part; each input is what that part reads */
    const part4_t *out = &NOTHING;
    for (uint32_t j = ni; j < n && out->none; j++)
      if (rank4(operand_tensor(c, op, j)))
        out = &got[j];
    for (uint32_t j = ni; j < n; j++)
      if (rank4(operand_tensor(c, op, j)))
        NEED(j, like(out, operand_tensor(c, op, j)));
    bool mapped = has_window(op);
    for (uint32_t j = 0; j < ni; j++) {
      const sfc_plan_tensor_t *t = operand_tensor(c, op, j);
      if (!rank4(t) || (mapped && j > 0))
        NEED(j, part_whole(t));
      else if (mapped)
        NEED(j, through(op, t, operand_tensor(c, op, ni), out, false));
      else
        NEED(j, like(out, t));
    }
  }
#undef NEED
}

static void show_part(char *buf, size_t cap, const part4_t *p) {
  if (p->none) {
    snprintf(buf, cap, "nothing");
    return;
  }
  snprintf(buf, cap,
           "N[%" PRId64 ",%" PRId64 ") C[%" PRId64 ",%" PRId64 ") H[%" PRId64 ",%" PRId64
           ")+%u/%u W[%" PRId64 ",%" PRId64 ")+%u/%u",
           p->lo[0], p->hi[0], p->lo[1], p->hi[1], p->lo[2], p->hi[2], p->zl[2], p->zh[2], p->lo[3],
           p->hi[3], p->zl[3], p->zh[3]);
}

static sfc_status_t check_tile_geometry(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  uint32_t widest = 1;
  for (uint32_t o = 0; o < v->op_count; o++)
    widest = op_operand_count(&v->ops[o]) > widest ? op_operand_count(&v->ops[o]) : widest;
  part4_t *got = malloc(widest * sizeof *got);
  need_t *need = malloc(widest * sizeof *need);
  sfc_status_t st = SFC_OK;
  uint64_t taps = 0; /* the window taps the maps walk, bounded (SFC_PLAN_MAX_MAP_TAPS) */
  if (!got || !need)
    st = no_memory(c);
  for (uint32_t k = 0; st == SFC_OK && k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *op = &v->ops[s->op];
    if (s->segment == NONE || op->map == SFC_MAP_NONE || op->map == SFC_MAP_VIEW)
      continue;
    const sfc_plan_op_t *win = op->map == SFC_MAP_GRAD_DATA ? &v->ops[op->backward_of] : op;
    if (win->map == SFC_MAP_WINDOW || win->map == SFC_MAP_WINDOW_T) {
      taps +=
          ((uint64_t)(uint32_t)win->kernel[0] + (uint32_t)win->kernel[1]) * op_operand_count(op);
      if (taps > SFC_PLAN_MAX_MAP_TAPS) {
        st = fail(c,
                  "step %u: checking the tiles' boxes would walk more than %" PRIu64
                  " window taps (op %u \"%s\" has a %dx%d window)",
                  k, SFC_PLAN_MAX_MAP_TAPS, s->op, oname(c, s->op), win->kernel[0], win->kernel[1]);
        break;
      }
    }
    for (uint32_t j = 0; j < op_operand_count(op); j++)
      got[j] = part_of_box(c, &v->boxes[s->box_begin + j]);
    tile_needs(c, s, got, need);
    for (uint32_t j = 0; j < op_operand_count(op); j++) {
      if (!need[j].bound || part_eq(&got[j], &need[j].part))
        continue;
      char a[192], b[192];
      uint32_t t = v->op_operands[op->operand_begin + j];
      show_part(a, sizeof a, &got[j]);
      show_part(b, sizeof b, &need[j].part);
      st = fail(c,
                "step %u (op %u \"%s\", tile %u of segment %u): operand %u, tensor %u \"%s\", "
                "has the box %s where the op's map requires %s",
                k, s->op, oname(c, s->op), s->tile, s->segment, j, t, tname(c, t), a, b);
      break;
    }
  }
  free(got);
  free(need);
  return st;
}

/* ---- 41, 49. order ------------------------------------------------------------ */

static uint32_t queue_of(const vctx_t *c, node_t n) {
  if (n.kind == SFC_NODE_STEP)
    return Q_COMPUTE;
  return c->v->swaps[n.index].direction == SFC_SWAP_IN ? Q_H2D : Q_D2H;
}

static uint32_t seq_of(const vctx_t *c, node_t n) {
  return n.kind == SFC_NODE_STEP ? n.index + 1 : c->swap_seq[n.index];
}

static uint32_t *vc_of(const vctx_t *c, node_t n) {
  return n.kind == SFC_NODE_STEP ? c->vc_step[n.index] : c->vc_swap[n.index];
}

/* x completes before y starts. */
static bool happens_before(const vctx_t *c, node_t x, node_t y) {
  return vc_of(c, y)[queue_of(c, x)] >= seq_of(c, x);
}

static const char *node_label(const vctx_t *c, node_t n, char *buf, size_t cap) {
  if (n.kind == SFC_NODE_STEP)
    snprintf(buf, cap, "step %u (op \"%s\")", n.index, oname(c, c->v->steps[n.index].op));
  else
    snprintf(buf, cap, "swap-%s %u of tensor %u \"%s\"",
             c->v->swaps[n.index].direction == SFC_SWAP_IN ? "in" : "out", n.index,
             c->v->swaps[n.index].tensor, tname(c, c->v->swaps[n.index].tensor));
  return buf;
}

static sfc_status_t require_hb(vctx_t *c, node_t x, node_t y, const char *why) {
  if (happens_before(c, x, y))
    return SFC_OK;
  char a[160], b[160];
  return fail(c, "%s does not wait for %s (%s)", node_label(c, y, b, sizeof b),
              node_label(c, x, a, sizeof a), why);
}

/* Issue position of a dependency relative to the node that lists it. */
static bool dep_is_earlier(const vctx_t *c, sfc_plan_dep_t d, node_t n) {
  const sfc_plan_view_t *v = c->v;
  uint32_t n_issue = n.kind == SFC_NODE_STEP ? n.index : v->swaps[n.index].issue_step;
  if (d.node_kind == SFC_NODE_STEP)
    return d.index < n_issue; /* a step is issued after the swaps at its own index */
  uint32_t d_issue = v->swaps[d.index].issue_step;
  if (n.kind == SFC_NODE_STEP)
    return d_issue <= n_issue;
  return d.index < n.index; /* swaps are issued in array order */
}

static sfc_status_t visit(vctx_t *c, node_t n, uint32_t last_seen[3][3], uint32_t begin,
                          uint32_t count) {
  uint32_t q = queue_of(c, n), *vc = vc_of(c, n);
  memcpy(vc, last_seen[q], sizeof last_seen[q]);
  vc[q] = seq_of(c, n) - 1;
  for (uint32_t i = 0; i < count; i++) {
    sfc_plan_dep_t d = c->v->deps[begin + i];
    if (!dep_is_earlier(c, d, n)) {
      char a[160];
      return fail(c, "%s depends on a %s %u issued after it", node_label(c, n, a, sizeof a),
                  d.node_kind == SFC_NODE_STEP ? "step" : "swap", d.index);
    }
    node_t dn = {d.node_kind, d.index};
    const uint32_t *dvc = vc_of(c, dn);
    for (int k = 0; k < 3; k++)
      if (dvc[k] > vc[k])
        vc[k] = dvc[k];
    uint32_t dq = queue_of(c, dn), ds = seq_of(c, dn);
    if (ds > vc[dq])
      vc[dq] = ds;
  }
  memcpy(last_seen[q], vc, sizeof last_seen[q]);
  last_seen[q][q] = seq_of(c, n);
  c->stats.deps += count;
  return SFC_OK;
}

static sfc_status_t compute_clocks(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t j = 1; j < v->swap_count; j++)
    if (v->swaps[j].issue_step < v->swaps[j - 1].issue_step)
      return fail(c, "swap %u: swaps are not sorted by issue_step", j);
  uint32_t n_in = 0, n_out = 0;
  for (uint32_t j = 0; j < v->swap_count; j++)
    c->swap_seq[j] = v->swaps[j].direction == SFC_SWAP_IN ? ++n_in : ++n_out;
  uint32_t last_seen[3][3] = {{0}};
  uint32_t j = 0;
  for (uint32_t k = 0; k <= v->step_count; k++) {
    for (; j < v->swap_count && v->swaps[j].issue_step == k; j++)
      SFC_TRY(visit(c, (node_t){SFC_NODE_SWAP, j}, last_seen, v->swaps[j].dep_begin,
                    v->swaps[j].dep_count));
    if (k < v->step_count)
      SFC_TRY(visit(c, (node_t){SFC_NODE_STEP, k}, last_seen, v->steps[k].dep_begin,
                    v->steps[k].dep_count));
  }
  return SFC_OK;
}

/* ---- 42-47, 51-53. swaps ------------------------------------------------------ */

static sfc_status_t check_swap_records(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t j = 0; j < v->swap_count; j++) {
    const sfc_plan_swap_t *w = &v->swaps[j];
    const sfc_plan_block_t *db = &v->blocks[w->device_block], *hb = &v->host_blocks[w->host_block];
    const char *tn = tname(c, w->tensor);
    const char *dir = w->direction == SFC_SWAP_IN ? "in" : "out";
    uint32_t k = w->issue_step;
    if (db->tensor != w->tensor || hb->tensor != w->tensor)
      return fail(c,
                  "swap %u of tensor %u \"%s\": BLOCKS[%u] holds tensor %u and HOST_BLOCKS[%u] "
                  "tensor %u",
                  j, w->tensor, tn, w->device_block, db->tensor, w->host_block, hb->tensor);
    uint64_t held = held_bytes(v, db);
    if (w->bytes != held)
      return fail(c,
                  "swap-%s %u of tensor %u \"%s\": copies %" PRIu64 " bytes of BLOCKS[%u], which "
                  "holds %" PRIu64,
                  dir, j, w->tensor, tn, w->bytes, w->device_block, held);
    bool dp = db->flags & SFC_BLOCK_PARTIAL, hp = hb->flags & SFC_BLOCK_PARTIAL;
    if (dp != hp || (dp && !same_box(&v->boxes[db->box], &v->boxes[hb->box])))
      return fail(c,
                  "swap-%s %u of tensor %u \"%s\": BLOCKS[%u] and HOST_BLOCKS[%u] hold different "
                  "parts of the tensor",
                  dir, j, w->tensor, tn, w->device_block, w->host_block);
    if (hb->bytes < w->bytes)
      return fail(c,
                  "swap-%s %u of tensor %u \"%s\": HOST_BLOCKS[%u] has %" PRIu64
                  " bytes for a %" PRIu64 "-byte copy",
                  dir, j, w->tensor, tn, w->host_block, hb->bytes, w->bytes);
    if (w->direction == SFC_SWAP_IN) {
      if (k >= v->step_count || !live_at(db, k) || !live_at(hb, k))
        return fail(c,
                    "swap-in %u of tensor %u \"%s\" before step %u: its device and host blocks "
                    "must both be live at that step",
                    j, w->tensor, tn, k);
      if (!(db->flags & SFC_BLOCK_SWAPPED_IN))
        return fail(c,
                    "swap-in %u of tensor %u \"%s\" writes BLOCKS[%u], which is not marked "
                    "swapped-in",
                    j, w->tensor, tn, w->device_block);
      if (c->filler[w->device_block] != NONE)
        return fail(c, "BLOCKS[%u] (tensor %u \"%s\") is filled by two swap-ins (%u and %u)",
                    w->device_block, w->tensor, tn, c->filler[w->device_block], j);
      c->filler[w->device_block] = j;
    } else {
      uint32_t hk = k < v->step_count ? k : v->step_count - 1;
      if (k == 0 || !live_at(db, k - 1) || !live_at(hb, hk))
        return fail(c,
                    "swap-out %u of tensor %u \"%s\" before step %u: its device block must be "
                    "live at the step before and its host block at that step",
                    j, w->tensor, tn, k);
    }
  }
  for (uint32_t b = 0; b < v->block_count; b++)
    if ((v->blocks[b].flags & SFC_BLOCK_SWAPPED_IN) && c->filler[b] == NONE)
      return fail(c, "BLOCKS[%u] (tensor %u \"%s\") is marked swapped-in but no swap-in fills it",
                  b, v->blocks[b].tensor, tname(c, v->blocks[b].tensor));
  return SFC_OK;
}

/* 51-53 in issue order: a swap-out copies written data and a swap-in a complete host
 * copy; nothing writes a block or host block while a copy still reads it. */
static sfc_status_t check_copy_order(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  node_t *writer = malloc((v->block_count ? v->block_count : 1) * sizeof *writer);
  uint32_t *dirty = malloc((v->block_count ? v->block_count : 1) * sizeof *dirty);
  if (!writer || !dirty) {
    free(writer);
    free(dirty);
    return no_memory(c);
  }
  for (uint32_t b = 0; b < v->block_count; b++) {
    writer[b] = (node_t){NONE, NONE};
    dirty[b] = NONE; /* the step that wrote it since its last copy */
  }
  sfc_status_t st = SFC_OK;
  uint32_t j = 0;
  for (uint32_t k = 0; k <= v->step_count && st == SFC_OK; k++) {
    for (; j < v->swap_count && v->swaps[j].issue_step == k && st == SFC_OK; j++) {
      const sfc_plan_swap_t *w = &v->swaps[j];
      node_t me = {SFC_NODE_SWAP, j};
      uint32_t b = w->device_block, h = w->host_block, home = c->home[w->tensor];
      dirty[b] = NONE;
      if (home != NONE && h != home) {
        st = fail(c,
                  "swap %u of tensor %u \"%s\" goes through HOST_BLOCKS[%u], not its home "
                  "HOST_BLOCKS[%u]",
                  j, w->tensor, tname(c, w->tensor), h, home);
        break;
      }
      if (w->direction == SFC_SWAP_OUT) {
        if (writer[b].kind != NONE)
          st = require_hb(c, writer[b], me, "the tensor must be written before it is copied out");
        else if (!(v->blocks[b].flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL)))
          st = fail(c, "swap-out %u of tensor %u \"%s\" copies BLOCKS[%u] before anything wrote it",
                    j, w->tensor, tname(c, w->tensor), b);
        if (st == SFC_OK && c->host_last_in[h] != NONE)
          st = require_hb(c, (node_t){SFC_NODE_SWAP, c->host_last_in[h]}, me,
                          "a swap-in still reads the host block it overwrites");
        c->last_out[b] = j;
        if (c->host_first_out[h] == NONE)
          c->host_first_out[h] = j;
        c->host_last_out[h] = j;
      } else {
        if (c->host_last_out[h] == NONE && home != NONE)
          ; /* the home holds the tensor since the last iteration */
        else if (c->host_last_out[h] == NONE)
          st = fail(c,
                    "swap-in %u of tensor %u \"%s\" reads HOST_BLOCKS[%u], which no earlier "
                    "swap-out wrote",
                    j, w->tensor, tname(c, w->tensor), h);
        else
          st = require_hb(c, (node_t){SFC_NODE_SWAP, c->host_last_out[h]}, me,
                          "its host copy must be complete");
        c->host_last_in[h] = j;
        writer[b] = me;
      }
    }
    if (k == v->step_count || st != SFC_OK)
      break;
    const sfc_plan_op_t *op = &v->ops[v->steps[k].op];
    for (uint32_t i = op->input_count, m = op_operand_count(op); i < m && st == SFC_OK; i++) {
      uint32_t b = v->step_operands[v->steps[k].operand_begin + i];
      if (c->last_out[b] != NONE)
        st = require_hb(c, (node_t){SFC_NODE_SWAP, c->last_out[b]}, (node_t){SFC_NODE_STEP, k},
                        "a swap-out may still be reading the block it writes");
      writer[b] = (node_t){SFC_NODE_STEP, k};
      dirty[b] = k;
    }
  }
  /* 56: what a step wrote into a homed tensor's residency goes home */
  for (uint32_t b = 0; b < v->block_count && st == SFC_OK; b++) {
    uint32_t t = v->blocks[b].tensor;
    if (dirty[b] != NONE && c->home[t] != NONE)
      st = fail(c,
                "step %u writes BLOCKS[%u] (tensor %u \"%s\") and no swap-out after it takes the "
                "write to its home HOST_BLOCKS[%u]: the update would be lost",
                dirty[b], b, t, tname(c, t), c->home[t]);
  }
  free(writer);
  free(dirty);
  return st;
}

/* ---- 34, 48, 50. where each device block's data comes from ------------------- */

static sfc_status_t check_data_flow(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t b = 0; b < v->block_count; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    uint32_t use = c->first_use[b];
    const char *tn = tname(c, x->tensor);
    if (x->flags & SFC_BLOCK_SWAPPED_IN) {
      if (use == NONE)
        return fail(c,
                    "BLOCKS[%u] (tensor %u \"%s\") is swapped in but no step reads it: nothing "
                    "orders its end after the copy",
                    b, x->tensor, tn);
      if (!c->first_reads[b])
        return fail(c,
                    "BLOCKS[%u] (tensor %u \"%s\") is swapped in but its first use, step %u, "
                    "only writes it",
                    b, x->tensor, tn, use);
      SFC_TRY(require_hb(c, (node_t){SFC_NODE_SWAP, c->filler[b]}, (node_t){SFC_NODE_STEP, use},
                         "a use must wait for its swap-in"));
    } else if (!(x->flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL)) && use != NONE &&
               c->first_reads[b]) {
      return fail(c,
                  "step %u (op \"%s\") reads BLOCKS[%u] (tensor %u \"%s\") before any step wrote "
                  "it",
                  use, oname(c, v->steps[use].op), b, x->tensor, tn);
    }
  }
  return SFC_OK;
}

/* ---- 54, 55. reuse of arena bytes --------------------------------------------- */

/* The node that first touches a block, or kind NONE when nothing touches it. */
static node_t writer_of(const vctx_t *c, bool host, uint32_t b) {
  if (host)
    return (node_t){c->host_first_out[b] == NONE ? NONE : SFC_NODE_SWAP, c->host_first_out[b]};
  if (c->filler[b] != NONE)
    return (node_t){SFC_NODE_SWAP, c->filler[b]};
  return (node_t){c->first_use[b] == NONE ? NONE : SFC_NODE_STEP, c->first_use[b]};
}

/* Everything that touched block a completes before block b is first touched. */
static sfc_status_t check_reuse_pair(vctx_t *c, bool host, uint32_t a, uint32_t b) {
  node_t w = writer_of(c, host, b);
  if (w.kind == NONE)
    return SFC_OK;
  c->stats.reuse_checks++;
  node_t acc[3];
  int n = 0;
  if (host) {
    if (c->host_last_out[a] != NONE)
      acc[n++] = (node_t){SFC_NODE_SWAP, c->host_last_out[a]};
    if (c->host_last_in[a] != NONE)
      acc[n++] = (node_t){SFC_NODE_SWAP, c->host_last_in[a]};
  } else {
    if (c->last_use[a] != NONE)
      acc[n++] = (node_t){SFC_NODE_STEP, c->last_use[a]};
    if (c->last_out[a] != NONE)
      acc[n++] = (node_t){SFC_NODE_SWAP, c->last_out[a]};
    if (c->filler[a] != NONE)
      acc[n++] = (node_t){SFC_NODE_SWAP, c->filler[a]};
  }
  for (int i = 0; i < n; i++) {
    if (happens_before(c, acc[i], w))
      continue;
    const sfc_plan_block_t *blocks = host ? c->v->host_blocks : c->v->blocks;
    char x[160], y[160];
    return fail(c,
                "%s[%u] (tensor %u \"%s\") reuses bytes of %s[%u] (tensor %u \"%s\"), but %s "
                "does not wait for %s",
                host ? "HOST_BLOCKS" : "BLOCKS", b, blocks[b].tensor, tname(c, blocks[b].tensor),
                host ? "HOST_BLOCKS" : "BLOCKS", a, blocks[a].tensor, tname(c, blocks[a].tensor),
                node_label(c, w, y, sizeof y), node_label(c, acc[i], x, sizeof x));
  }
  return SFC_OK;
}

typedef struct order_item {
  uint32_t first_step, block;
} order_item_t;

static int by_first_step(const void *pa, const void *pb) {
  const order_item_t *a = pa, *b = pb;
  if (a->first_step != b->first_step)
    return a->first_step < b->first_step ? -1 : 1;
  return a->block < b->block ? -1 : (a->block > b->block);
}

/* Interval map over bytes: segment ids keyed by their low byte in an ordered set. */
static sfc_status_t check_reuse(vctx_t *c, bool host) {
  const sfc_plan_block_t *blocks = host ? c->v->host_blocks : c->v->blocks;
  uint32_t n = host ? c->v->host_block_count : c->v->block_count;
  if (n == 0)
    return SFC_OK;
  uint32_t cap = 2 * n + 1;
  order_item_t *order = malloc(n * sizeof *order);
  uint64_t *seg_hi = malloc(cap * sizeof *seg_hi);
  uint32_t *seg_block = malloc(cap * sizeof *seg_block);
  uint32_t *stamp = malloc(n * sizeof *stamp);
  sfc_oset_t segs = {0};
  bool ok = order && seg_hi && seg_block && stamp && sfc_oset_init(&segs, cap);
  sfc_status_t st = ok ? SFC_OK : no_memory(c);
  uint32_t m = 0, next_id = 0;
  for (uint32_t b = 0; ok && b < n; b++) {
    stamp[b] = NONE;
    bool ext = !host && (blocks[b].flags & SFC_BLOCK_EXTERNAL);
    if (!ext && blocks[b].bytes > 0 && writer_of(c, host, b).kind != NONE) /* touched */
      order[m++] = (order_item_t){blocks[b].first_step, b};
  }
  if (ok)
    qsort(order, m, sizeof *order, by_first_step);
  for (uint32_t i = 0; ok && i < m && st == SFC_OK; i++) {
    uint32_t b = order[i].block;
    uint64_t lo = blocks[b].offset, hi = lo + blocks[b].bytes;
    /* Start at the segment containing lo if there is one, else the first above lo. */
    uint32_t s = sfc_oset_prev(&segs, lo, UINT32_MAX); /* last segment starting <= lo */
    if (s == SFC_OSET_NONE)
      s = sfc_oset_next(&segs, lo, UINT32_MAX);
    else if (seg_hi[s] <= lo)
      s = sfc_oset_next(&segs, segs.key[s], s);
    while (s != SFC_OSET_NONE && segs.key[s] < hi && st == SFC_OK) {
      uint32_t next = sfc_oset_next(&segs, segs.key[s], s);
      uint32_t a = seg_block[s];
      if (stamp[a] != b) {
        stamp[a] = b;
        st = check_reuse_pair(c, host, a, b);
      }
      uint64_t s_lo = segs.key[s], s_hi = seg_hi[s];
      sfc_oset_erase(&segs, s_lo, s);
      if (s_lo < lo) { /* keep the part below b */
        seg_hi[s] = lo;
        sfc_oset_insert(&segs, s_lo, s);
      }
      if (s_hi > hi) { /* keep the part above b */
        uint32_t r = next_id++;
        seg_hi[r] = s_hi;
        seg_block[r] = a;
        sfc_oset_insert(&segs, hi, r);
      }
      s = next;
    }
    uint32_t id = next_id++;
    seg_hi[id] = hi;
    seg_block[id] = b;
    sfc_oset_insert(&segs, lo, id);
  }
  sfc_oset_deinit(&segs);
  free(order);
  free(seg_hi);
  free(seg_block);
  free(stamp);
  return st;
}

/* ---- driver -------------------------------------------------------------------- */

sfc_status_t sfc_verify_plan(const sfc_plan_view_t *v, bool check_budget,
                             sfc_verify_stats_t *out_stats, sfc_error_t *err) {
  vctx_t c = {.v = v, .err = err};
  c.stats = (sfc_verify_stats_t){.blocks = v->block_count,
                                 .host_blocks = v->host_block_count,
                                 .steps = v->step_count,
                                 .swaps = v->swap_count};
  SFC_TRY(check_graph_refs(&c));
  SFC_TRY(check_block_refs(&c, "BLOCKS", v->blocks, v->block_count));
  SFC_TRY(check_block_refs(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count));
  SFC_TRY(check_schedule_refs(&c));
  SFC_TRY(check_header(&c));
  c.home = malloc((v->tensor_count + 1u) * sizeof *c.home);
  if (!c.home)
    return no_memory(&c);
  for (uint32_t t = 0; t < v->tensor_count; t++)
    c.home[t] = NONE;
  for (uint32_t h = v->host_block_count; h-- > 0;) /* 1.3: a persistent tensor's home */
    if (v->host_blocks[h].flags & SFC_BLOCK_PERSISTENT)
      c.home[v->host_blocks[h].tensor] = h;
  sfc_status_t st0 = check_arena(&c, "BLOCKS", v->blocks, v->block_count, v->header.arena_bytes,
                                 v->header.alignment, true);
  if (st0 == SFC_OK)
    st0 = check_arena(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count,
                      v->header.host_arena_bytes, 1, false);
  if (st0 == SFC_OK)
    st0 = check_pages(&c);
  if (st0 != SFC_OK) {
    free(c.home);
    return st0;
  }

  size_t nb = v->block_count + 1u, nh = v->host_block_count + 1u;
  size_t ns = v->step_count + 1u, nw = v->swap_count + 1u;
  c.vc_step = calloc(ns, sizeof *c.vc_step);
  c.vc_swap = calloc(nw, sizeof *c.vc_swap);
  c.swap_seq = calloc(nw, sizeof *c.swap_seq);
  uint32_t *per_block = malloc(5 * nb * sizeof *per_block);
  uint32_t *per_host = malloc(3 * nh * sizeof *per_host);
  sfc_status_t st = SFC_OK;
  if (!c.vc_step || !c.vc_swap || !c.swap_seq || !per_block || !per_host) {
    st = no_memory(&c);
    goto done;
  }
  memset(per_block, 0xFF, 5 * nb * sizeof *per_block); /* every entry NONE */
  memset(per_host, 0xFF, 3 * nh * sizeof *per_host);
  c.first_use = per_block;
  c.last_use = per_block + nb;
  c.filler = per_block + 2 * nb;
  c.last_out = per_block + 3 * nb;
  c.first_reads = per_block + 4 * nb;
  c.host_first_out = per_host;
  c.host_last_out = per_host + nh;
  c.host_last_in = per_host + 2 * nh;

  if ((st = check_uses(&c)) != SFC_OK || (st = check_segments(&c)) != SFC_OK ||
      (st = check_op_maps(&c)) != SFC_OK || (st = check_tile_geometry(&c)) != SFC_OK ||
      (st = compute_clocks(&c)) != SFC_OK || (st = check_swap_records(&c)) != SFC_OK ||
      (st = check_data_flow(&c)) != SFC_OK || (st = check_copy_order(&c)) != SFC_OK ||
      (st = check_reuse(&c, false)) != SFC_OK || (st = check_reuse(&c, true)) != SFC_OK)
    goto done;

  if (check_budget && v->header.budget_bytes && sfc_plan_device_need(v) > v->header.budget_bytes)
    st = fail(&c, "the %s needs %" PRIu64 " bytes, more than the budget of %" PRIu64,
              sfc_plan_paged(v) ? "paged arena" : "arena", sfc_plan_device_need(v),
              v->header.budget_bytes);
  else if (check_budget && v->header.host_budget_bytes &&
           v->header.host_arena_bytes > v->header.host_budget_bytes)
    st =
        fail(&c, "the host staging arena needs %" PRIu64 " bytes, more than its budget of %" PRIu64,
             v->header.host_arena_bytes, v->header.host_budget_bytes);

done:
  if (st == SFC_OK && out_stats)
    *out_stats = c.stats;
  free(c.vc_step);
  free(c.vc_swap);
  free(c.swap_seq);
  free(per_block);
  free(per_host);
  free(c.home);
  return st;
}

/* The pipeline's verify pass: invariants only. Whether the arena fits the budget
 * is a result (ir->fits_budget), reported by the CLI, not a broken invariant. */
sfc_status_t sfc_pass_verify(sfc_ir_t *ir, sfc_error_t *err) {
  sfc_status_t st = sfc_verify_plan(&ir->plan, false, NULL, err);
  if (st == SFC_ERR_VERIFY) {
    sfc_error_prefix(err, "verify (compiler bug: please report)");
    if (err)
      err->status = SFC_ERR_INTERNAL;
    return SFC_ERR_INTERNAL;
  }
  return st;
}
