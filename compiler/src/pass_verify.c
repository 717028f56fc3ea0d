/* pass_verify.c — the compiler's verifier (see verify.h for the list of invariants).
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
 * block was written, so "before the writer of B" is transitive along the chain.
 * O((blocks + segments) log blocks).
 */
#include "verify.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oset.h"
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
  uint32_t *host_first_out; /* [host_block_count] first swap-out writing the host block */
  uint32_t *host_last_out;  /* [host_block_count] */
  uint32_t *host_last_in;   /* [host_block_count] last swap-in reading the host block */
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

static const char *tname(const vctx_t *c, uint32_t t) {
  return t < c->v->tensor_count ? sfc_plan_string(c->v, c->v->tensors[t].name) : "?";
}

static const char *oname(const vctx_t *c, uint32_t o) {
  return o < c->v->op_count ? sfc_plan_string(c->v, c->v->ops[o].name) : "?";
}

static uint32_t op_operand_count(const sfc_plan_op_t *op) {
  return (uint32_t)op->input_count + op->output_count + op->temp_count;
}

/* ---- 1. references --------------------------------------------------------- */

static bool str_ok(const sfc_plan_view_t *v, uint32_t ref) {
  return ref < v->strings_bytes;
}

static sfc_status_t check_references(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  if (v->strings_bytes == 0 || !v->strings || v->strings[0] != '\0' ||
      v->strings[v->strings_bytes - 1] != '\0')
    return fail(c, "strings: the table must start and end with a NUL byte");
  uint32_t a = v->header.alignment;
  if (a == 0 || (a & (a - 1)) != 0)
    return fail(c, "header: alignment %u is not a power of two", a);
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    const sfc_plan_tensor_t *x = &v->tensors[t];
    if (!str_ok(v, x->name) || x->kind >= SFC_KIND_COUNT || x->ndim > SFC_PLAN_MAX_DIMS)
      return fail(c, "tensor %u: bad name, kind or rank", t);
  }
  for (uint32_t o = 0; o < v->op_count; o++) {
    const sfc_plan_op_t *op = &v->ops[o];
    if (!str_ok(v, op->name) || !str_ok(v, op->type) || op->phase >= SFC_PHASE_COUNT)
      return fail(c, "op %u: bad name, type or phase", o);
    if ((uint64_t)op->operand_begin + op_operand_count(op) > v->op_operand_count)
      return fail(c, "op %u (\"%s\"): operands run past the operand list", o, oname(c, o));
    for (uint32_t i = 0; i < op_operand_count(op); i++)
      if (v->op_operands[op->operand_begin + i] >= v->tensor_count)
        return fail(c, "op %u (\"%s\"): operand %u is not a tensor", o, oname(c, o), i);
    if (op->backward_of != NONE && op->backward_of >= v->op_count)
      return fail(c, "op %u (\"%s\"): backward_of %u is not an op", o, oname(c, o),
                  op->backward_of);
  }
  for (uint32_t s = 0; s < v->step_count; s++) {
    const sfc_plan_step_t *st = &v->steps[s];
    if (st->op >= v->op_count)
      return fail(c, "step %u: op %u does not exist", s, st->op);
    uint32_t m = op_operand_count(&v->ops[st->op]);
    if ((uint64_t)st->operand_begin + m > v->step_operand_count)
      return fail(c, "step %u: operands run past the step operand list", s);
    if ((uint64_t)st->dep_begin + st->dep_count > v->dep_count)
      return fail(c, "step %u: dependencies run past the dependency list", s);
    if (st->segment != NONE &&
        (st->segment >= v->segment_count || st->tile >= v->segments[st->segment].tile_count))
      return fail(c, "step %u: segment %u tile %u does not exist", s, st->segment, st->tile);
    if (st->box_begin != NONE && (uint64_t)st->box_begin + m > v->box_count)
      return fail(c, "step %u: boxes run past the box list", s);
  }
  for (uint32_t j = 0; j < v->swap_count; j++) {
    const sfc_plan_swap_t *w = &v->swaps[j];
    if (w->tensor >= v->tensor_count || w->device_block >= v->block_count ||
        w->host_block >= v->host_block_count)
      return fail(c, "swap %u: tensor, device block or host block out of range", j);
    if (w->direction != SFC_SWAP_OUT && w->direction != SFC_SWAP_IN)
      return fail(c, "swap %u: direction %u is neither out (1) nor in (2)", j, w->direction);
    if (w->issue_step > v->step_count)
      return fail(c, "swap %u: issue_step %u is past the last step", j, w->issue_step);
    if (j > 0 && w->issue_step < v->swaps[j - 1].issue_step)
      return fail(c, "swap %u: swaps are not sorted by issue_step", j);
    if ((uint64_t)w->dep_begin + w->dep_count > v->dep_count)
      return fail(c, "swap %u: dependencies run past the dependency list", j);
  }
  for (uint32_t d = 0; d < v->dep_count; d++) {
    const sfc_plan_dep_t *x = &v->deps[d];
    uint32_t limit = x->node_kind == SFC_NODE_STEP   ? v->step_count
                     : x->node_kind == SFC_NODE_SWAP ? v->swap_count
                                                     : 0;
    if (x->index >= limit)
      return fail(c, "dependency %u: node %u of kind %u does not exist", d, x->index, x->node_kind);
  }
  for (uint32_t g = 0; g < v->segment_count; g++) {
    const sfc_plan_segment_t *x = &v->segments[g];
    if ((uint64_t)x->first_step + x->step_count > v->step_count ||
        (uint64_t)x->first_op + x->op_count > v->op_count)
      return fail(c, "segment %u: steps or ops out of range", g);
  }
  for (uint32_t b = 0; b < v->box_count; b++) {
    const sfc_plan_box_t *x = &v->boxes[b];
    if (x->tensor >= v->tensor_count || x->ndim == 0 || x->ndim > SFC_PLAN_BOX_DIMS)
      return fail(c, "box %u: tensor or rank out of range", b);
    for (uint32_t d = 0; d < x->ndim; d++)
      if (x->lo[d] > x->hi[d])
        return fail(c, "box %u: dimension %u has lo %" PRId64 " > hi %" PRId64, b, d, x->lo[d],
                    x->hi[d]);
  }
  return SFC_OK;
}

/* ---- 2. and 3. blocks ------------------------------------------------------- */

static sfc_status_t check_arena(vctx_t *c, const char *what, const sfc_plan_block_t *blocks,
                                uint32_t n, uint64_t arena, uint64_t align) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t b = 0; b < n; b++) {
    const sfc_plan_block_t *x = &blocks[b];
    if (x->tensor >= v->tensor_count)
      return fail(c, "%s[%u]: tensor %u does not exist", what, b, x->tensor);
    if (x->first_step > x->last_step || x->last_step >= v->step_count)
      return fail(c, "%s[%u] (tensor %u \"%s\"): steps [%u, %u] are not inside [0, %u)", what, b,
                  x->tensor, tname(c, x->tensor), x->first_step, x->last_step, v->step_count);
    if (x->flags & SFC_BLOCK_EXTERNAL)
      continue;
    if (x->offset % align != 0)
      return fail(c,
                  "%s[%u] (tensor %u \"%s\"): offset %" PRIu64
                  " is not a multiple of the alignment %" PRIu64,
                  what, b, x->tensor, tname(c, x->tensor), x->offset, align);
    if (x->offset > arena || x->bytes > arena - x->offset)
      return fail(c,
                  "%s[%u] (tensor %u \"%s\"): [%" PRIu64 ", +%" PRIu64
                  ") runs past the arena of %" PRIu64 " bytes",
                  what, b, x->tensor, tname(c, x->tensor), x->offset, x->bytes, arena);
    if (x->bytes < v->tensors[x->tensor].bytes)
      return fail(c, "%s[%u] (tensor %u \"%s\"): %" PRIu64 " bytes hold a %" PRIu64 "-byte tensor",
                  what, b, x->tensor, tname(c, x->tensor), x->bytes, v->tensors[x->tensor].bytes);
  }
  /* No live overlap: the packing checker on [first, last + 1), external blocks out. */
  sfc_pack_block_t *pb = malloc((n ? n : 1) * sizeof *pb);
  uint32_t *map = malloc((n ? n : 1) * sizeof *map);
  if (!pb || !map) {
    free(pb);
    free(map);
    return sfc_error_set(c->err, SFC_ERR_OUT_OF_MEMORY, "verify: out of memory");
  }
  size_t m = 0;
  for (uint32_t b = 0; b < n; b++) {
    if (blocks[b].flags & SFC_BLOCK_EXTERNAL || blocks[b].bytes == 0)
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
  sfc_status_t st = sfc_pack_check(&p, NULL, pair, &sub);
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

/* ---- 4. and 5. ordering ----------------------------------------------------- */

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

static bool live_at(const sfc_plan_block_t *b, uint32_t step) {
  return b->first_step <= step && step <= b->last_step;
}

/* Step operands name live blocks of the right tensor; record each block's uses. */
static sfc_status_t check_uses(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t s = 0; s < v->step_count; s++) {
    const sfc_plan_op_t *op = &v->ops[v->steps[s].op];
    for (uint32_t i = 0, m = op_operand_count(op); i < m; i++) {
      uint32_t b = v->step_operands[v->steps[s].operand_begin + i];
      uint32_t t = v->op_operands[op->operand_begin + i];
      if (b >= v->block_count)
        return fail(c, "step %u (op \"%s\"): operand %u names block %u, which does not exist", s,
                    oname(c, v->steps[s].op), i, b);
      const sfc_plan_block_t *x = &v->blocks[b];
      if (x->tensor != t)
        return fail(c,
                    "step %u (op \"%s\"): operand %u is tensor %u \"%s\" but BLOCKS[%u] "
                    "holds tensor %u \"%s\"",
                    s, oname(c, v->steps[s].op), i, t, tname(c, t), b, x->tensor,
                    tname(c, x->tensor));
      if (!live_at(x, s))
        return fail(c,
                    "step %u (op \"%s\"): tensor %u \"%s\" is not resident: BLOCKS[%u] "
                    "lives over steps [%u, %u]",
                    s, oname(c, v->steps[s].op), t, tname(c, t), b, x->first_step, x->last_step);
      if (c->first_use[b] == NONE)
        c->first_use[b] = s;
      c->last_use[b] = s;
    }
  }
  return SFC_OK;
}

static sfc_status_t check_swaps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  uint32_t *use_before = malloc((v->block_count ? v->block_count : 1) * sizeof *use_before);
  if (!use_before)
    return sfc_error_set(c->err, SFC_ERR_OUT_OF_MEMORY, "verify: out of memory");
  for (uint32_t b = 0; b < v->block_count; b++)
    use_before[b] = NONE;
  sfc_status_t st = SFC_OK;
  uint32_t next_step = 0; /* steps < next_step have been folded into use_before */
  for (uint32_t j = 0; j < v->swap_count && st == SFC_OK; j++) {
    const sfc_plan_swap_t *w = &v->swaps[j];
    const sfc_plan_block_t *db = &v->blocks[w->device_block], *hb = &v->host_blocks[w->host_block];
    node_t me = {SFC_NODE_SWAP, j};
    for (; next_step < w->issue_step && next_step < v->step_count; next_step++) {
      const sfc_plan_step_t *s = &v->steps[next_step];
      for (uint32_t i = 0, m = op_operand_count(&v->ops[s->op]); i < m; i++)
        use_before[v->step_operands[s->operand_begin + i]] = next_step;
    }
    if (db->tensor != w->tensor || hb->tensor != w->tensor)
      st = fail(c,
                "swap %u of tensor %u \"%s\": BLOCKS[%u] holds tensor %u and HOST_BLOCKS[%u] "
                "tensor %u",
                j, w->tensor, tname(c, w->tensor), w->device_block, db->tensor, w->host_block,
                hb->tensor);
    else if (w->bytes > v->tensors[w->tensor].bytes || w->bytes > db->bytes || w->bytes > hb->bytes)
      st = fail(c,
                "swap %u of tensor %u \"%s\": copies %" PRIu64 " bytes, more than the tensor "
                "or a block holds",
                j, w->tensor, tname(c, w->tensor), w->bytes);
    else if (w->direction == SFC_SWAP_IN) {
      uint32_t k = w->issue_step;
      if (k >= v->step_count || !live_at(db, k) || !live_at(hb, k))
        st = fail(c,
                  "swap-in %u of tensor %u \"%s\" before step %u: its device and host blocks "
                  "must both be live at that step",
                  j, w->tensor, tname(c, w->tensor), k);
      else if (!(db->flags & SFC_BLOCK_SWAPPED_IN))
        st = fail(c,
                  "swap-in %u of tensor %u \"%s\" writes BLOCKS[%u], which is not marked "
                  "swapped-in",
                  j, w->tensor, tname(c, w->tensor), w->device_block);
      else if (c->filler[w->device_block] != NONE)
        st = fail(c, "BLOCKS[%u] (tensor %u \"%s\") is filled by two swap-ins (%u and %u)",
                  w->device_block, w->tensor, tname(c, w->tensor), c->filler[w->device_block], j);
      else if (c->host_last_out[w->host_block] == NONE)
        st = fail(c,
                  "swap-in %u of tensor %u \"%s\" reads HOST_BLOCKS[%u], which no earlier "
                  "swap-out wrote",
                  j, w->tensor, tname(c, w->tensor), w->host_block);
      else
        st = require_hb(c, (node_t){SFC_NODE_SWAP, c->host_last_out[w->host_block]}, me,
                        "its host copy must be complete");
      c->filler[w->device_block] = j;
      c->host_last_in[w->host_block] = j;
    } else {
      uint32_t k = w->issue_step, hk = k < v->step_count ? k : v->step_count - 1;
      uint32_t src = use_before[w->device_block];
      if (k == 0 || !live_at(db, k - 1) || !live_at(hb, hk))
        st = fail(c,
                  "swap-out %u of tensor %u \"%s\" before step %u: its device block must be "
                  "live at the step before and its host block at that step",
                  j, w->tensor, tname(c, w->tensor), k);
      else if (src != NONE)
        st = require_hb(c, (node_t){SFC_NODE_STEP, src}, me,
                        "the tensor must be written before it is copied out");
      else if (c->filler[w->device_block] != NONE)
        st = require_hb(c, (node_t){SFC_NODE_SWAP, c->filler[w->device_block]}, me,
                        "the tensor must be swapped in before it is copied out");
      else
        st = fail(c, "swap-out %u of tensor %u \"%s\" copies BLOCKS[%u] before anything wrote it",
                  j, w->tensor, tname(c, w->tensor), w->device_block);
      c->last_out[w->device_block] = j;
      if (c->host_first_out[w->host_block] == NONE)
        c->host_first_out[w->host_block] = j;
      c->host_last_out[w->host_block] = j;
    }
  }
  free(use_before);
  SFC_TRY(st);
  /* Swapped-in blocks: filled exactly once, before their first use. */
  for (uint32_t b = 0; b < v->block_count; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    if (!(x->flags & SFC_BLOCK_SWAPPED_IN))
      continue;
    if (c->filler[b] == NONE)
      return fail(c, "BLOCKS[%u] (tensor %u \"%s\") is marked swapped-in but no swap-in fills it",
                  b, x->tensor, tname(c, x->tensor));
    if (c->first_use[b] != NONE)
      SFC_TRY(require_hb(c, (node_t){SFC_NODE_SWAP, c->filler[b]},
                         (node_t){SFC_NODE_STEP, c->first_use[b]},
                         "a use must wait for its swap-in"));
  }
  return SFC_OK;
}

/* The node that first writes a block, or kind NONE when nothing touches it. */
static node_t writer_of(const vctx_t *c, bool host, uint32_t b) {
  if (host)
    return (node_t){c->host_first_out[b] == NONE ? NONE : SFC_NODE_SWAP, c->host_first_out[b]};
  if (c->filler[b] != NONE)
    return (node_t){SFC_NODE_SWAP, c->filler[b]};
  return (node_t){c->first_use[b] == NONE ? NONE : SFC_NODE_STEP, c->first_use[b]};
}

/* Everything that touched block a completes before block b is written. */
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
  sfc_status_t st =
      ok ? SFC_OK : sfc_error_set(c->err, SFC_ERR_OUT_OF_MEMORY, "verify: out of memory");
  uint32_t m = 0, next_id = 0;
  for (uint32_t b = 0; ok && b < n; b++) {
    stamp[b] = NONE;
    if (!(blocks[b].flags & SFC_BLOCK_EXTERNAL) && blocks[b].bytes > 0)
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
  SFC_TRY(check_references(&c));
  SFC_TRY(check_arena(&c, "BLOCKS", v->blocks, v->block_count, v->header.arena_bytes,
                      v->header.alignment));
  SFC_TRY(check_arena(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count,
                      v->header.host_arena_bytes, 1));

  size_t nb = v->block_count + 1u, nh = v->host_block_count + 1u;
  size_t ns = v->step_count + 1u, nw = v->swap_count + 1u;
  c.vc_step = calloc(ns, sizeof *c.vc_step);
  c.vc_swap = calloc(nw, sizeof *c.vc_swap);
  c.swap_seq = calloc(nw, sizeof *c.swap_seq);
  uint32_t *per_block = malloc(4 * nb * sizeof *per_block);
  uint32_t *per_host = malloc(3 * nh * sizeof *per_host);
  sfc_status_t st = SFC_OK;
  if (!c.vc_step || !c.vc_swap || !c.swap_seq || !per_block || !per_host) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "verify: out of memory");
    goto done;
  }
  memset(per_block, 0xFF, 4 * nb * sizeof *per_block); /* every entry NONE */
  memset(per_host, 0xFF, 3 * nh * sizeof *per_host);
  c.first_use = per_block;
  c.last_use = per_block + nb;
  c.filler = per_block + 2 * nb;
  c.last_out = per_block + 3 * nb;
  c.host_first_out = per_host;
  c.host_last_out = per_host + nh;
  c.host_last_in = per_host + 2 * nh;

  if ((st = check_uses(&c)) != SFC_OK || (st = compute_clocks(&c)) != SFC_OK ||
      (st = check_swaps(&c)) != SFC_OK || (st = check_reuse(&c, false)) != SFC_OK ||
      (st = check_reuse(&c, true)) != SFC_OK)
    goto done;

  if (check_budget && v->header.budget_bytes && v->header.arena_bytes > v->header.budget_bytes)
    st = fail(&c, "the arena needs %" PRIu64 " bytes, more than the budget of %" PRIu64,
              v->header.arena_bytes, v->header.budget_bytes);
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
