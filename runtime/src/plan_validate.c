/* plan_validate.c — references and semantics of a plan the reader has copied in.
 *
 * Runs after plan_reader.c has checked the file's structure and enforces every
 * invariant of docs/plan-format.md ("Invariants": the numbers below are that table's),
 * so replay can trust the plan blindly. Two passes, each stopping at the first
 * violation with one line naming the record, the index and why:
 *
 *  references (SFC_ERR_BAD_INPUT; 4-13): the string blob starts and ends with NUL
 *    and every string offset is inside it; every tensor, op, block, step, swap, dep,
 *    segment, tile and box index is in range; enums are known values; operand, box
 *    and dep ranges lie inside their arrays. After this pass, indexing is safe.
 *
 *  semantics (SFC_ERR_VERIFY; 14-58), in this order: the budget flag; block records
 *    (steps, alignment, arena bounds, size, EXTERNAL/PERSISTENT/UNUSED rules, PARTIAL
 *    boxes); no two live blocks of one arena share a byte; step operands (tensor,
 *    residency, boxes, PARTIAL containment, TIMED); segments and boxes (grid, order,
 *    boxes inside their tensors, each handed-on tiled output covered exactly once);
 *    ops' maps (57) and every tile step's boxes exactly what its op's map requires (58:
 *    the boxes the step's free operands imply, through sfc/box_map.h, compared);
 *    swaps (order, tensor, bytes, host contents, issue steps, SWAPPED_IN fills); deps
 *    point backwards in issue order; then happens-before: data flow (a produced block
 *    is written by its first step, a swapped-in block is read and waits for its
 *    swap-in, a swap-out waits for the last write of its block, a swap-in for the
 *    swap-out that wrote its host block, nothing writes a block a copy still reads)
 *    and arena reuse in both arenas.
 *
 * The overlap check is a sweep over steps in O(n log n): blocks enter the live set
 * at first_step and leave after last_step. The live set is kept sorted by
 * (offset, index); its blocks are pairwise disjoint, so a new block can only
 * overlap its predecessor or its successor. The set is a Fenwick tree over the
 * blocks' ranks in (offset, index) order: insert, erase and "k-th live block" are
 * O(log n) with no recursion and no worst case an adversarial file could provoke.
 *
 * Happens-before. Steps run on the compute queue, swap-ins on H2D, swap-outs on D2H;
 * each queue completes in issue order. Every node gets, for each queue, how many of
 * that queue's nodes are known complete when it starts (its own queue's predecessor
 * and every dependency, transitively): one pass in issue order, O(nodes + deps).
 * X happens before Y iff Y's count for X's queue reaches X's position.
 *
 * Arena reuse. A block B reusing bytes of an earlier block A (A ends before B
 * begins) must not be written before every access of A has completed. For each
 * queue, A's last access on it is one number (its position in the queue); B's first
 * access knows a number per queue. So the check is: over all earlier occupants of
 * B's bytes, the per-queue maximum of their last accesses is at most what B's first
 * access knows. A sweep by step inserts each block once its last step has passed
 * into a segment tree over compressed byte offsets (range "raise to at least",
 * range maximum; bottom-up, no recursion) and queries B's byte range when B begins:
 * O(n log n). Blocks nothing touches are left out (they constrain nothing).
 *
 * Segment outputs. The tiles' boxes of a tensor cover it exactly once iff the
 * boxes' corners, signed (-1)^(number of upper bounds among the coordinates),
 * cancel the tensor's own corners at every point: O(m log m) for m boxes. Every
 * sort is an in-place heapsort, so every byte comes from the caller's allocator.
 */
#include "sfc/plan_reader.h"

#include "sfc/box_map.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NONE SFC_PLAN_NONE

enum { Q_COMPUTE = 0, Q_H2D = 1, Q_D2H = 2, QUEUES = 3 };

typedef struct vctx {
  const sfc_plan_view_t *v;
  const sfc_allocator_t *a;
  sfc_error_t *err;
  char desc[4][160]; /* record descriptions for messages */
  /* happens-before and data flow (check_order); node x: step x, or swap x - step_count */
  uint32_t *clock;     /* [3 * nodes] per queue: its nodes known complete when x starts */
  uint32_t *swap_seq;  /* [swap_count] 1-based position of each swap in its queue */
  uint32_t *fill;      /* [block_count] the swap-in filling the block, NONE */
  uint32_t *first_use; /* [block_count] first step naming the block, NONE */
  uint32_t *last_use;  /* [block_count] last step naming it */
  uint32_t *last_out;  /* [block_count] last swap-out reading it, NONE */
  uint32_t *first_rd;  /* [block_count] 1: its first step reads it */
  uint32_t *acc;       /* [tensor_count] the BACKWARD segment + 1 that last accumulated it */
  uint32_t *h_first_out, *h_last_out, *h_last_in; /* [host_block_count] swaps, NONE */
  uint32_t *home; /* [tensor_count] the PERSISTENT host block of a homed tensor, NONE */
} vctx_t;

static sfc_status_t oom(vctx_t *c, size_t bytes) {
  return sfc_error_set(c->err, SFC_ERR_OUT_OF_MEMORY,
                       "out of memory (%zu bytes to validate the plan)", bytes);
}

static const char *tname(const sfc_plan_view_t *v, uint32_t t) {
  return sfc_plan_string(v, v->tensors[t].name);
}

/* "BLOCKS[3] (tensor 5 "conv1.out")" in c->desc[slot]. */
static const char *bdesc(vctx_t *c, int slot, const char *sec, uint32_t i,
                         const sfc_plan_block_t *b) {
  snprintf(c->desc[slot], sizeof c->desc[slot], "%s[%" PRIu32 "] (tensor %" PRIu32 " \"%.64s\")",
           sec, i, b->tensor, tname(c->v, b->tensor));
  return c->desc[slot];
}

/* "STEPS[4] (op "relu")" or "SWAPS[1] (swap-out of tensor 2 "a")" in c->desc[slot]. */
static const char *ndesc(vctx_t *c, int slot, uint32_t node) {
  const sfc_plan_view_t *v = c->v;
  if (node < v->step_count) {
    snprintf(c->desc[slot], sizeof c->desc[slot], "STEPS[%" PRIu32 "] (op \"%.64s\")", node,
             sfc_plan_string(v, v->ops[v->steps[node].op].name));
  } else {
    const sfc_plan_swap_t *w = &v->swaps[node - v->step_count];
    snprintf(c->desc[slot], sizeof c->desc[slot],
             "SWAPS[%" PRIu32 "] (swap-%s of tensor %" PRIu32 " \"%.64s\")", node - v->step_count,
             w->direction == SFC_SWAP_IN ? "in" : "out", w->tensor, tname(v, w->tensor));
  }
  return c->desc[slot];
}

/* ---- references --------------------------------------------------------------- */

static sfc_status_t ref_str(vctx_t *c, uint32_t ref, const char *sec, uint32_t i, const char *f) {
  if (ref < c->v->strings_bytes)
    return SFC_OK;
  char where[64];
  if (i == NONE)
    snprintf(where, sizeof where, "%s.%s", sec, f);
  else
    snprintf(where, sizeof where, "%s[%" PRIu32 "].%s", sec, i, f);
  return sfc_error_set(c->err, SFC_ERR_BAD_INPUT,
                       "%s: string offset %" PRIu32 " is past the string table (%" PRIu64 " bytes)",
                       where, ref, c->v->strings_bytes);
}

#define REF(cond, ...)                                                                             \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return sfc_error_set(c->err, SFC_ERR_BAD_INPUT, __VA_ARGS__);                                \
  } while (0)

/* [begin, begin + count) inside an array of n. */
static int range_ok(uint32_t begin, uint64_t count, uint32_t n) {
  return begin <= n && count <= (uint64_t)n - begin;
}

static sfc_status_t refs_graph(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  REF(v->strings_bytes > 0, "section STRINGS: empty (offset 0 must hold \"\")");
  REF(v->strings[0] == '\0', "section STRINGS: does not start with NUL (offset 0 must be \"\")");
  REF(v->strings[v->strings_bytes - 1] == '\0', "section STRINGS: does not end with NUL");
  SFC_TRY(ref_str(c, v->meta.graph_name, "META", NONE, "graph_name"));
  SFC_TRY(ref_str(c, v->meta.profile_name, "META", NONE, "profile_name"));
  SFC_TRY(ref_str(c, v->meta.generator, "META", NONE, "generator"));
  SFC_TRY(ref_str(c, v->meta.times_device, "META", NONE, "times_device"));
  const sfc_plan_header_t *h = &v->header;
  REF(h->alignment != 0 && (h->alignment & (h->alignment - 1)) == 0,
      "header: alignment %" PRIu32 " is not a power of two", h->alignment);
  if (h->arena_bytes > SFC_PLAN_MAX_ARENA_BYTES || h->host_arena_bytes > SFC_PLAN_MAX_ARENA_BYTES)
    return sfc_error_set(c->err, SFC_ERR_LIMIT,
                         "header: arena_bytes %" PRIu64 " / host_arena_bytes %" PRIu64
                         " exceed the limit %" PRIu64,
                         h->arena_bytes, h->host_arena_bytes, SFC_PLAN_MAX_ARENA_BYTES);
  if (v->meta.va_chunk_bytes > SFC_PLAN_MAX_ARENA_BYTES)
    return sfc_error_set(c->err, SFC_ERR_LIMIT,
                         "META.va_chunk_bytes: %" PRIu64 " exceeds the limit %" PRIu64,
                         v->meta.va_chunk_bytes, SFC_PLAN_MAX_ARENA_BYTES);
  for (uint32_t i = 0; i < v->tensor_count; i++) {
    const sfc_plan_tensor_t *t = &v->tensors[i];
    SFC_TRY(ref_str(c, t->name, "TENSORS", i, "name"));
    REF(t->kind < SFC_KIND_COUNT, "TENSORS[%" PRIu32 "].kind: %u is not a tensor kind", i, t->kind);
    REF(t->dtype < SFC_DTYPE_COUNT, "TENSORS[%" PRIu32 "].dtype: %u is not a dtype", i, t->dtype);
    REF(t->ndim <= SFC_PLAN_MAX_DIMS, "TENSORS[%" PRIu32 "].ndim: %u exceeds %d", i, t->ndim,
        SFC_PLAN_MAX_DIMS);
    REF(t->batch_axis >= -1 && t->batch_axis < (int)t->ndim,
        "TENSORS[%" PRIu32 "].batch_axis: %d is not an axis of a %u-dim tensor", i, t->batch_axis,
        t->ndim);
  }
  for (uint32_t i = 0; i < v->op_count; i++) {
    const sfc_plan_op_t *o = &v->ops[i];
    SFC_TRY(ref_str(c, o->name, "OPS", i, "name"));
    SFC_TRY(ref_str(c, o->type, "OPS", i, "type"));
    REF(o->phase < SFC_PHASE_COUNT, "OPS[%" PRIu32 "].phase: %u is not a phase", i, o->phase);
    uint64_t n = (uint64_t)o->input_count + o->output_count + o->temp_count;
    REF(range_ok(o->operand_begin, n, v->op_operand_count),
        "OPS[%" PRIu32 "]: operands [%" PRIu32 ", %" PRIu64 ") extend past OP_OPERANDS (%" PRIu32
        " entries)",
        i, o->operand_begin, o->operand_begin + n, v->op_operand_count);
    REF(o->backward_of == NONE || o->backward_of < v->op_count,
        "OPS[%" PRIu32 "].backward_of: %" PRIu32 " is out of range (%" PRIu32 " ops)", i,
        o->backward_of, v->op_count);
  }
  for (uint32_t i = 0; i < v->op_operand_count; i++)
    REF(v->op_operands[i] < v->tensor_count,
        "OP_OPERANDS[%" PRIu32 "]: tensor %" PRIu32 " is out of range (%" PRIu32 " tensors)", i,
        v->op_operands[i], v->tensor_count);
  return SFC_OK;
}

static sfc_status_t refs_blocks(vctx_t *c, const char *sec, const sfc_plan_block_t *b, uint32_t n) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0; i < n; i++) {
    REF(b[i].tensor < v->tensor_count,
        "%s[%" PRIu32 "].tensor: %" PRIu32 " is out of range (%" PRIu32 " tensors)", sec, i,
        b[i].tensor, v->tensor_count);
    REF(b[i].first_step < v->step_count,
        "%s[%" PRIu32 "].first_step: %" PRIu32 " is out of range (%" PRIu32 " steps)", sec, i,
        b[i].first_step, v->step_count);
    REF(b[i].last_step < v->step_count,
        "%s[%" PRIu32 "].last_step: %" PRIu32 " is out of range (%" PRIu32 " steps)", sec, i,
        b[i].last_step, v->step_count);
    REF(!(b[i].flags & SFC_BLOCK_PARTIAL) || b[i].box < v->box_count,
        "%s[%" PRIu32 "].box: %" PRIu32 " is out of range (%" PRIu32 " boxes)", sec, i, b[i].box,
        v->box_count);
  }
  return SFC_OK;
}

static sfc_status_t refs_schedule(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    REF(s->op < v->op_count, "STEPS[%" PRIu32 "].op: %" PRIu32 " is out of range (%" PRIu32 " ops)",
        k, s->op, v->op_count);
    REF(s->segment == NONE || s->segment < v->segment_count,
        "STEPS[%" PRIu32 "].segment: %" PRIu32 " is out of range (%" PRIu32 " segments)", k,
        s->segment, v->segment_count);
    if (s->segment == NONE)
      REF(s->tile == NONE, "STEPS[%" PRIu32 "].tile: %" PRIu32 " but the step has no segment", k,
          s->tile);
    else
      REF(s->tile < v->segments[s->segment].tile_count,
          "STEPS[%" PRIu32 "].tile: %" PRIu32 " is out of range (SEGMENTS[%" PRIu32 "] has %" PRIu32
          " tiles)",
          k, s->tile, s->segment, v->segments[s->segment].tile_count);
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint64_t n = (uint64_t)o->input_count + o->output_count + o->temp_count;
    REF(range_ok(s->operand_begin, n, v->step_operand_count),
        "STEPS[%" PRIu32 "]: operands [%" PRIu32 ", %" PRIu64
        ") extend past STEP_OPERANDS (%" PRIu32 " entries)",
        k, s->operand_begin, s->operand_begin + n, v->step_operand_count);
    REF(s->box_begin == NONE || range_ok(s->box_begin, n, v->box_count),
        "STEPS[%" PRIu32 "]: boxes [%" PRIu32 ", %" PRIu64 ") extend past BOXES (%" PRIu32
        " entries)",
        k, s->box_begin, s->box_begin + n, v->box_count);
    REF(range_ok(s->dep_begin, s->dep_count, v->dep_count),
        "STEPS[%" PRIu32 "]: deps [%" PRIu32 ", %" PRIu64 ") extend past DEPS (%" PRIu32
        " entries)",
        k, s->dep_begin, (uint64_t)s->dep_begin + s->dep_count, v->dep_count);
  }
  for (uint32_t i = 0; i < v->step_operand_count; i++)
    REF(v->step_operands[i] < v->block_count,
        "STEP_OPERANDS[%" PRIu32 "]: block %" PRIu32 " is out of range (%" PRIu32 " blocks)", i,
        v->step_operands[i], v->block_count);
  for (uint32_t i = 0; i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    REF(w->tensor < v->tensor_count,
        "SWAPS[%" PRIu32 "].tensor: %" PRIu32 " is out of range (%" PRIu32 " tensors)", i,
        w->tensor, v->tensor_count);
    REF(w->device_block < v->block_count,
        "SWAPS[%" PRIu32 "].device_block: %" PRIu32 " is out of range (%" PRIu32 " blocks)", i,
        w->device_block, v->block_count);
    REF(w->host_block < v->host_block_count,
        "SWAPS[%" PRIu32 "].host_block: %" PRIu32 " is out of range (%" PRIu32 " host blocks)", i,
        w->host_block, v->host_block_count);
    REF(w->direction == SFC_SWAP_OUT || w->direction == SFC_SWAP_IN,
        "SWAPS[%" PRIu32 "].direction: %u is neither 1 (out) nor 2 (in)", i, w->direction);
    REF(w->issue_step <= v->step_count,
        "SWAPS[%" PRIu32 "].issue_step: %" PRIu32 " is past the end (%" PRIu32 " steps)", i,
        w->issue_step, v->step_count);
    REF(range_ok(w->dep_begin, w->dep_count, v->dep_count),
        "SWAPS[%" PRIu32 "]: deps [%" PRIu32 ", %" PRIu64 ") extend past DEPS (%" PRIu32
        " entries)",
        i, w->dep_begin, (uint64_t)w->dep_begin + w->dep_count, v->dep_count);
  }
  for (uint32_t i = 0; i < v->dep_count; i++) {
    const sfc_plan_dep_t *d = &v->deps[i];
    REF(d->node_kind == SFC_NODE_STEP || d->node_kind == SFC_NODE_SWAP,
        "DEPS[%" PRIu32 "].node_kind: %" PRIu32 " is neither 0 (step) nor 1 (swap)", i,
        d->node_kind);
    uint32_t n = d->node_kind == SFC_NODE_STEP ? v->step_count : v->swap_count;
    REF(d->index < n, "DEPS[%" PRIu32 "].index: %" PRIu32 " is out of range (%" PRIu32 " %s)", i,
        d->index, n, d->node_kind == SFC_NODE_STEP ? "steps" : "swaps");
  }
  for (uint32_t i = 0; i < v->segment_count; i++) {
    const sfc_plan_segment_t *g = &v->segments[i];
    REF(range_ok(g->first_step, g->step_count, v->step_count),
        "SEGMENTS[%" PRIu32 "]: steps [%" PRIu32 ", %" PRIu64 ") extend past STEPS (%" PRIu32 ")",
        i, g->first_step, (uint64_t)g->first_step + g->step_count, v->step_count);
    REF(range_ok(g->first_op, g->op_count, v->op_count),
        "SEGMENTS[%" PRIu32 "]: ops [%" PRIu32 ", %" PRIu64 ") extend past OPS (%" PRIu32 ")", i,
        g->first_op, (uint64_t)g->first_op + g->op_count, v->op_count);
    REF(!(g->flags & ~(SFC_SEGMENT_BACKWARD | SFC_SEGMENT_SEED_HALO)),
        "SEGMENTS[%" PRIu32 "].flags: 0x%" PRIx32 " has unknown bits", i, g->flags);
    REF((g->flags & SFC_SEGMENT_BACKWARD) ? g->forward_segment < i : g->forward_segment == 0,
        "SEGMENTS[%" PRIu32 "].forward_segment: %" PRIu32 " %s", i, g->forward_segment,
        (g->flags & SFC_SEGMENT_BACKWARD) ? "is not an earlier segment" : "but not BACKWARD");
  }
  for (uint32_t i = 0; i < v->box_count; i++) {
    const sfc_plan_box_t *x = &v->boxes[i];
    REF(x->tensor < v->tensor_count,
        "BOXES[%" PRIu32 "].tensor: %" PRIu32 " is out of range (%" PRIu32 " tensors)", i,
        x->tensor, v->tensor_count);
    REF(x->ndim >= 1 && x->ndim <= SFC_PLAN_BOX_DIMS,
        "BOXES[%" PRIu32 "].ndim: %" PRIu32 " is out of range [1, %d]", i, x->ndim,
        SFC_PLAN_BOX_DIMS);
  }
  return SFC_OK;
}

typedef struct sort_key {
  uint64_t hi, lo;
} sort_key_t;

static int key_less(const sort_key_t *x, const sort_key_t *y) {
  return x->hi < y->hi || (x->hi == y->hi && x->lo < y->lo);
}

static void sift_down(sort_key_t *k, size_t root, size_t n) {
  for (size_t child; (child = 2 * root + 1) < n; root = child) {
    if (child + 1 < n && key_less(&k[child], &k[child + 1]))
      child++;
    if (!key_less(&k[root], &k[child]))
      return;
    sort_key_t t = k[root];
    k[root] = k[child];
    k[child] = t;
  }
}

static void heap_sort(sort_key_t *k, size_t n) {
  for (size_t i = n / 2; i-- > 0;)
    sift_down(k, i, n);
  for (size_t end = n; end-- > 1;) {
    sort_key_t t = k[0];
    k[0] = k[end];
    k[end] = t;
    sift_down(k, 0, end);
  }
}

/* Fenwick tree over ranks 0..m-1 (stored 1-based in fw[1..m]). */
static void fw_add(uint32_t *fw, uint32_t m, uint32_t r, uint32_t delta) {
  for (uint32_t i = r + 1; i <= m; i += i & (0u - i))
    fw[i] += delta; /* delta is 1 or UINT32_MAX (= -1 modulo 2^32) */
}
static uint32_t fw_prefix(const uint32_t *fw, uint32_t r) { /* live ranks < r */
  uint32_t s = 0;
  for (uint32_t i = r; i > 0; i -= i & (0u - i))
    s += fw[i];
  return s;
}
static uint32_t fw_kth(const uint32_t *fw, uint32_t m,
                       uint32_t kth) { /* rank of the kth (1-based) */
  uint32_t pos = 0, step = 1;
  while (step <= m / 2)
    step <<= 1;
  for (; step; step >>= 1)
    if (pos + step <= m && fw[pos + step] < kth) {
      pos += step;
      kth -= fw[pos];
    }
  return pos; /* 0-based rank */
}

static sfc_status_t overlap(vctx_t *c, const char *sec, const sfc_plan_block_t *b, uint32_t x,
                            uint32_t y, uint32_t step) {
  if (x > y) {
    uint32_t t = x;
    x = y;
    y = t;
  }
  uint64_t lo = b[x].offset > b[y].offset ? b[x].offset : b[y].offset;
  uint64_t hx = b[x].offset + b[x].bytes, hy = b[y].offset + b[y].bytes;
  return sfc_error_set(
      c->err, SFC_ERR_VERIFY,
      "%s and %s share bytes [%" PRIu64 ", %" PRIu64 ") while both are live at step %" PRIu32,
      bdesc(c, 0, sec, x, &b[x]), bdesc(c, 1, sec, y, &b[y]), lo, hx < hy ? hx : hy, step);
}

/* The sweep: blocks with bytes > 0 enter at first_step, leave after last_step. */
static sfc_status_t check_overlaps(vctx_t *c, const char *sec, const sfc_plan_block_t *b,
                                   uint32_t n) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    m += b[i].bytes > 0;
  if (m < 2)
    return SFC_OK;
  /* by_first[m] + by_last[m] keys, rank[n], at_rank[m], fw[m + 1]: all < 2^31 * 44 bytes */
  size_t bytes = (size_t)m * 2 * sizeof(sort_key_t) + ((size_t)n + 2 * (size_t)m + 1) * 4;
  sort_key_t *by_first = sfc_alloc(c->a, bytes);
  if (!by_first)
    return oom(c, bytes);
  memset(by_first, 0, bytes);
  sort_key_t *by_last = by_first + m;
  uint32_t *rank = (uint32_t *)(by_last + m), *at_rank = rank + n, *fw = at_rank + m;

  uint32_t j = 0;
  for (uint32_t i = 0; i < n; i++)
    if (b[i].bytes > 0)
      by_first[j++] = (sort_key_t){b[i].offset, i};
  heap_sort(by_first, m);
  for (uint32_t r = 0; r < m; r++) {
    rank[by_first[r].lo] = r;
    at_rank[r] = (uint32_t)by_first[r].lo;
  }
  j = 0;
  for (uint32_t i = 0; i < n; i++)
    if (b[i].bytes > 0) {
      by_first[j] = (sort_key_t){b[i].first_step, i};
      by_last[j++] = (sort_key_t){b[i].last_step, i};
    }
  heap_sort(by_first, m);
  heap_sort(by_last, m);

  sfc_status_t s = SFC_OK;
  uint32_t live = 0;
  j = 0;
  for (uint32_t f = 0; f < m && s == SFC_OK; f++) {
    uint32_t x = (uint32_t)by_first[f].lo, step = b[x].first_step;
    for (; j < m && by_last[j].hi < step; j++, live--)
      fw_add(fw, m, rank[by_last[j].lo], UINT32_MAX);
    uint32_t r = rank[x], below = fw_prefix(fw, r);
    if (below > 0) {
      uint32_t p = at_rank[fw_kth(fw, m, below)];
      if (b[p].offset + b[p].bytes > b[x].offset)
        s = overlap(c, sec, b, p, x, step);
    }
    if (s == SFC_OK && below < live) {
      uint32_t q = at_rank[fw_kth(fw, m, below + 1)];
      if (b[x].offset + b[x].bytes > b[q].offset)
        s = overlap(c, sec, b, x, q, step);
    }
    fw_add(fw, m, r, 1);
    live++;
  }
  sfc_free(c->a, by_first, bytes);
  return s;
}

/* 59 (1.7): the pages of va_chunk_bytes that live device blocks touch, at most at once.
 * A block counts from first_step through last_step, and through the issue step of a
 * swap-out of it issued later (the runtime ends such a block at that copy, before the
 * step, so counting it at the step bounds what the device holds while it issues the
 * step's copies; an end-of-iteration copy counts at the last step). A block counted so
 * may share pages, even bytes, with the next occupant of its bytes: pages are counted
 * once however many live blocks touch them. The sweep by step keeps a segment tree over
 * the blocks' page-range ends (compressed) whose nodes hold how many live ranges cover
 * them whole and the pages covered below: O(n log n). *out_step is a step where the peak
 * is first reached. */
/* The position of offset x among the distinct offsets coord[0..nc) (x is one of them). */
static uint32_t coord_index(const sort_key_t *coord, uint32_t nc, uint64_t x) {
  uint32_t lo = 0, hi = nc;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (coord[mid].hi < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

typedef struct page_tree {
  const sort_key_t *x; /* [k] distinct page-range ends, sorted (in .hi) */
  uint32_t k;
  uint64_t chunk;  /* page size */
  uint32_t *cover; /* [4k] live ranges covering the node's pages whole */
  uint64_t *pages; /* [4k] pages of the node covered by some live range */
} page_tree_t;

/* Block b's pages [*first, *end). */
static void block_pages(const sfc_plan_block_t *b, uint64_t chunk, uint64_t *first, uint64_t *end) {
  *first = b->offset / chunk;
  *end = (b->offset + b->bytes - 1) / chunk + 1;
}

static void page_tree_add(page_tree_t *t, size_t node, uint32_t l, uint32_t r, uint32_t ql,
                          uint32_t qr, uint32_t delta) { /* elementary pieces [ql, qr) */
  if (qr <= l || r <= ql)
    return;
  if (ql <= l && r <= qr) {
    t->cover[node] += delta; /* 1, or UINT32_MAX (-1 modulo 2^32) */
  } else {
    uint32_t mid = l + (r - l) / 2;
    page_tree_add(t, 2 * node, l, mid, ql, qr, delta);
    page_tree_add(t, 2 * node + 1, mid, r, ql, qr, delta);
  }
  if (t->cover[node])
    t->pages[node] = t->x[r].hi - t->x[l].hi;
  else
    t->pages[node] = r - l == 1 ? 0 : t->pages[2 * node] + t->pages[2 * node + 1];
}

/* Block b's page range enters the tree (delta 1) or leaves it (UINT32_MAX). */
static void page_tree_block(page_tree_t *t, const sfc_plan_block_t *b, uint32_t delta) {
  uint64_t first, end;
  block_pages(b, t->chunk, &first, &end);
  page_tree_add(t, 1, 0, t->k - 1, coord_index(t->x, t->k, first), coord_index(t->x, t->k, end),
                delta);
}

static sfc_status_t page_peak(vctx_t *c, uint64_t chunk, uint64_t *out_pages, uint32_t *out_step) {
  const sfc_plan_view_t *v = c->v;
  const sfc_plan_block_t *b = v->blocks;
  uint32_t n = v->block_count, m = 0;
  *out_pages = 0;
  *out_step = 0;
  for (uint32_t i = 0; i < n; i++)
    m += b[i].bytes > 0;
  if (m == 0)
    return SFC_OK;
  /* x[2m] + by_first[m] + by_last[m] keys, end[n] steps, cover[8m], pages[8m] */
  size_t bytes =
      (size_t)m * 4 * sizeof(sort_key_t) + (size_t)n * 4 + (size_t)m * 8 * 4 + (size_t)m * 8 * 8;
  sort_key_t *x = sfc_alloc(c->a, bytes);
  if (!x)
    return oom(c, bytes);
  memset(x, 0, bytes);
  sort_key_t *by_first = x + 2 * m, *by_last = by_first + m;
  uint64_t *pages = (uint64_t *)(by_last + m);
  uint32_t *cover = (uint32_t *)(pages + (size_t)8 * m), *end = cover + (size_t)8 * m;
  for (uint32_t i = 0; i < n; i++)
    end[i] = b[i].last_step;
  for (uint32_t w = 0; w < v->swap_count; w++) { /* a later swap-out holds its block */
    const sfc_plan_swap_t *sw = &v->swaps[w];
    uint32_t at = sw->issue_step < v->step_count ? sw->issue_step : v->step_count - 1;
    if (sw->direction == SFC_SWAP_OUT && at > end[sw->device_block])
      end[sw->device_block] = at;
  }
  uint32_t j = 0;
  for (uint32_t i = 0; i < n; i++)
    if (b[i].bytes > 0) {
      uint64_t first, past;
      block_pages(&b[i], chunk, &first, &past);
      x[2 * j] = (sort_key_t){first, 0};
      x[2 * j + 1] = (sort_key_t){past, 0};
      by_first[j] = (sort_key_t){b[i].first_step, i};
      by_last[j++] = (sort_key_t){end[i], i};
    }
  heap_sort(x, 2 * (size_t)m);
  uint32_t k = 0;
  for (uint32_t i = 0; i < 2 * m; i++)
    if (k == 0 || x[k - 1].hi != x[i].hi)
      x[k++] = x[i];
  heap_sort(by_first, m);
  heap_sort(by_last, m);
  page_tree_t t = {x, k, chunk, cover, pages};
  j = 0;
  for (uint32_t f = 0; f < m; f++) {
    uint32_t y = (uint32_t)by_first[f].lo;
    for (; j < m && by_last[j].hi < b[y].first_step; j++)
      page_tree_block(&t, &b[by_last[j].lo], UINT32_MAX);
    page_tree_block(&t, &b[y], 1);
    if (pages[1] > *out_pages) {
      *out_pages = pages[1];
      *out_step = b[y].first_step;
    }
  }
  sfc_free(c->a, x, bytes);
  return SFC_OK;
}

/* 59 (1.7): a PAGED plan's page peak is what its blocks touch; other plans say 0. */
static sfc_status_t check_pages(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  if (!sfc_plan_paged(v)) {
    if (v->header.version_minor >= 7 && v->meta.page_peak_bytes != 0)
      return sfc_error_set(c->err, SFC_ERR_VERIFY,
                           "META.page_peak_bytes: %" PRIu64
                           " in a plan whose arena is not PAGED (must be 0)",
                           v->meta.page_peak_bytes);
    return SFC_OK;
  }
  uint64_t chunk = v->meta.va_chunk_bytes, pages;
  uint32_t step;
  if (chunk == 0)
    return sfc_error_set(c->err, SFC_ERR_VERIFY,
                         "META.va_chunk_bytes: 0, but a PAGED arena is made of pages of that size");
  SFC_TRY(page_peak(c, chunk, &pages, &step));
  uint64_t need = pages > UINT64_MAX / chunk ? UINT64_MAX : pages * chunk;
  if (need != v->meta.page_peak_bytes)
    return sfc_error_set(c->err, SFC_ERR_VERIFY,
                         "META.page_peak_bytes: %" PRIu64
                         ", but the device blocks live at step %" PRIu32 " touch %" PRIu64
                         " pages of %" PRIu64 " bytes (%" PRIu64 " bytes)",
                         v->meta.page_peak_bytes, step, pages, chunk, need);
  return SFC_OK;
}

/* ---- semantics: header and block records ------------------------------------- */

#define VERIFY(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return sfc_error_set(c->err, SFC_ERR_VERIFY, __VA_ARGS__);                                   \
  } while (0)

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* One element of t: its dtype's size, else its bytes over its element count rounded
 * up (its bytes when the shape holds no element). */
static uint64_t elem_bytes(const sfc_plan_tensor_t *t) {
  uint32_t e = sfc_dtype_bytes(t->dtype);
  if (e)
    return e;
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->ndim; d++)
    n = sat_mul(n, t->shape[d] > 0 ? (uint64_t)t->shape[d] : 0);
  return n == 0 ? t->bytes : t->bytes / n + (t->bytes % n != 0);
}

/* Elements of a box whose axes satisfy 0 <= lo <= hi (saturating). */
static uint64_t box_elems(const sfc_plan_box_t *x) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < x->ndim; d++)
    n = sat_mul(n, (uint64_t)x->hi[d] - (uint64_t)x->lo[d]);
  return n;
}

/* The bytes block b holds: its tensor's, or (PARTIAL, box checked) its box's. */
static uint64_t content_bytes(const sfc_plan_view_t *v, const sfc_plan_block_t *b) {
  const sfc_plan_tensor_t *t = &v->tensors[b->tensor];
  if (!(b->flags & SFC_BLOCK_PARTIAL))
    return t->bytes;
  return sat_mul(box_elems(&v->boxes[b->box]), elem_bytes(t));
}

/* 14 (1.7: a PAGED plan's need is its page peak) */
static sfc_status_t check_header(vctx_t *c) {
  const sfc_plan_header_t *h = &c->v->header;
  uint64_t need = sfc_plan_device_need(c->v);
  int over = h->budget_bytes != 0 && need > h->budget_bytes;
  if (sfc_plan_paged(c->v)) {
    VERIFY(over == ((h->flags & SFC_PLAN_OVER_BUDGET) != 0),
           "header: a PAGED plan needs META.page_peak_bytes %" PRIu64 " (arena_bytes %" PRIu64
           " virtual), %s budget_bytes %" PRIu64 ", but flags %s OVER_BUDGET",
           need, h->arena_bytes, over ? "over" : "within", h->budget_bytes, over ? "lack" : "say");
    return SFC_OK;
  }
  if (over)
    VERIFY(h->flags & SFC_PLAN_OVER_BUDGET,
           "header: arena_bytes %" PRIu64 " exceed budget_bytes %" PRIu64
           " but flags lack OVER_BUDGET",
           h->arena_bytes, h->budget_bytes);
  else
    VERIFY(!(h->flags & SFC_PLAN_OVER_BUDGET),
           "header: flags say OVER_BUDGET but arena_bytes %" PRIu64 " fit budget_bytes %" PRIu64
           " (0: no budget)",
           h->arena_bytes, h->budget_bytes);
  return SFC_OK;
}

/* 27, 28: the box of PARTIAL block b (description d) is a non-empty part of its tensor. */
static sfc_status_t check_partial(vctx_t *c, const char *d, const sfc_plan_block_t *b) {
  const sfc_plan_view_t *v = c->v;
  const sfc_plan_box_t *x = &v->boxes[b->box];
  const sfc_plan_tensor_t *t = &v->tensors[b->tensor];
  VERIFY(x->tensor == b->tensor,
         "%s: PARTIAL, but its box BOXES[%" PRIu32 "] describes tensor %" PRIu32 " \"%.64s\"", d,
         b->box, x->tensor, tname(v, x->tensor));
  VERIFY(x->ndim == t->ndim,
         "%s: PARTIAL, but its box BOXES[%" PRIu32 "] has %" PRIu32
         " axes and the tensor %u (a box of a block spans every axis)",
         d, b->box, x->ndim, t->ndim);
  for (uint32_t k = 0; k < x->ndim; k++)
    VERIFY(0 <= x->lo[k] && x->lo[k] < x->hi[k] && x->hi[k] <= t->shape[k],
           "%s: PARTIAL, but its box BOXES[%" PRIu32 "] is [%" PRId64 ", %" PRId64
           ") along axis %" PRIu32 ", not a non-empty part of [0, %" PRId64 ")",
           d, b->box, x->lo[k], x->hi[k], k, t->shape[k]);
  return SFC_OK;
}

/* 15-17, 20-29 for one arena; persistent[t] = the device block of persistent tensor t
 * (c->home[t]: its PERSISTENT host block, when it has one). */
static sfc_status_t check_block_records(vctx_t *c, const char *sec, const sfc_plan_block_t *blocks,
                                        uint32_t n, uint64_t arena, int device,
                                        uint32_t *persistent) {
  const sfc_plan_view_t *v = c->v;
  uint32_t align = device ? v->header.alignment : 1;
  for (uint32_t i = 0; i < n; i++) {
    const sfc_plan_block_t *b = &blocks[i];
    const sfc_plan_tensor_t *t = &v->tensors[b->tensor];
    const char *d = bdesc(c, 0, sec, i, b);
    VERIFY(b->first_step <= b->last_step, "%s: first_step %" PRIu32 " is after last_step %" PRIu32,
           d, b->first_step, b->last_step);
    if (device && (b->flags & SFC_BLOCK_EXTERNAL)) {
      VERIFY(b->offset == 0 && b->bytes == 0,
             "%s: EXTERNAL but offset %" PRIu64 " and bytes %" PRIu64 " (both must be 0)", d,
             b->offset, b->bytes);
      VERIFY(!(b->flags & SFC_BLOCK_PARTIAL),
             "%s: EXTERNAL and PARTIAL (framework memory holds the whole tensor)", d);
      VERIFY(t->flags & SFC_TENSOR_EXTERNAL,
             "%s: EXTERNAL but the tensor is not (only an EXTERNAL tensor is bound to framework "
             "memory)",
             d);
    } else {
      VERIFY(b->offset % align == 0,
             "%s: offset %" PRIu64 " is not a multiple of the alignment %" PRIu32, d, b->offset,
             align);
      VERIFY(b->offset <= arena && b->bytes <= arena - b->offset,
             "%s: bytes [%" PRIu64 ", %" PRIu64 ") extend past the %s (%" PRIu64 " bytes)", d,
             b->offset, b->offset + b->bytes, device ? "arena" : "host arena", arena);
      if (b->flags & SFC_BLOCK_PARTIAL) {
        SFC_TRY(check_partial(c, d, b));
        uint64_t need = content_bytes(v, b);
        VERIFY(b->bytes >= need,
               "%s: %" PRIu64 " bytes, smaller than its box BOXES[%" PRIu32 "] (%" PRIu64
               " elements of %" PRIu64 " bytes)",
               d, b->bytes, b->box, box_elems(&v->boxes[b->box]), elem_bytes(t));
      } else if (device) {
        VERIFY(b->bytes >= t->bytes,
               "%s: %" PRIu64 " bytes, smaller than the tensor (%" PRIu64 " bytes)", d, b->bytes,
               t->bytes);
      }
      if (device)
        VERIFY(!(t->flags & SFC_TENSOR_EXTERNAL),
               "%s: the tensor is EXTERNAL but the block is not (an external tensor lives in "
               "framework memory)",
               d);
    }
    VERIFY(!(t->flags & SFC_TENSOR_UNUSED),
           "%s: the tensor is UNUSED (touched by no op) but has a block", d);
    if (b->flags & SFC_BLOCK_PERSISTENT) {
      VERIFY(b->first_step == 0 && b->last_step == v->step_count - 1,
             "%s: PERSISTENT but live only at steps %" PRIu32 "..%" PRIu32 " (must be 0..%" PRIu32
             ")",
             d, b->first_step, b->last_step, v->step_count - 1);
      VERIFY(t->flags & SFC_TENSOR_PERSISTENT,
             "%s: PERSISTENT but the tensor is not (its contents would outlive it)", d);
    }
    if (!device) {
      if (b->flags & SFC_BLOCK_PERSISTENT) { /* 1.3: the tensor's home */
        VERIFY(!(b->flags & SFC_BLOCK_PARTIAL) && b->bytes >= t->bytes,
               "%s: a home (PERSISTENT host block) of %" PRIu64
               " bytes%s, but it holds the whole tensor (%" PRIu64 " bytes)",
               d, b->bytes, (b->flags & SFC_BLOCK_PARTIAL) ? ", PARTIAL" : "", t->bytes);
        VERIFY(!(t->flags & SFC_TENSOR_EXTERNAL),
               "%s: PERSISTENT host block of an EXTERNAL tensor (framework memory is its home)", d);
        VERIFY(c->home[b->tensor] == i,
               "%s: a second PERSISTENT host block of tensor %" PRIu32 " (HOST_BLOCKS[%" PRIu32
               "] is its home; a persistent tensor has one)",
               d, b->tensor, c->home[b->tensor]);
      }
      continue;
    }
    if ((t->flags & SFC_TENSOR_PERSISTENT) && c->home[b->tensor] != NONE) {
      VERIFY(!(b->flags & SFC_BLOCK_PERSISTENT),
             "%s: PERSISTENT, but the tensor's home is HOST_BLOCKS[%" PRIu32
             "] (a persistent tensor has one home)",
             d, c->home[b->tensor]);
    } else if (t->flags & SFC_TENSOR_PERSISTENT) {
      VERIFY(b->flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL),
             "%s: the tensor is PERSISTENT but the block is not (its contents must survive to the "
             "next iteration)",
             d);
      VERIFY(persistent[b->tensor] == NONE,
             "%s: a second block of PERSISTENT tensor %" PRIu32 " (BLOCKS[%" PRIu32
             "] is the first; a persistent tensor has one block)",
             d, b->tensor, persistent[b->tensor]);
      persistent[b->tensor] = i;
    }
  }
  return SFC_OK;
}

/* ---- semantics: steps, segments, boxes ---------------------------------------- */

/* 30-33, 36 (a step's segment), 37, 38 */
static sfc_status_t check_steps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t bi = v->step_operands[s->operand_begin + j],
               t = v->op_operands[o->operand_begin + j];
      const sfc_plan_block_t *b = &v->blocks[bi];
      VERIFY(b->tensor == t,
             "STEPS[%" PRIu32 "] operand %" PRIu32 ": %s, but operand %" PRIu32 " of OPS[%" PRIu32
             "] (\"%.64s\") is tensor %" PRIu32 " \"%.64s\"",
             k, j, bdesc(c, 0, "BLOCKS", bi, b), j, s->op, sfc_plan_string(v, o->name), t,
             tname(v, t));
      VERIFY(b->first_step <= k && k <= b->last_step,
             "STEPS[%" PRIu32 "] operand %" PRIu32 ": %s is not resident at step %" PRIu32
             " (live at steps %" PRIu32 "..%" PRIu32 ")",
             k, j, bdesc(c, 0, "BLOCKS", bi, b), k, b->first_step, b->last_step);
      if (s->box_begin != NONE)
        VERIFY(v->boxes[s->box_begin + j].tensor == t,
               "STEPS[%" PRIu32 "] operand %" PRIu32 ": BOXES[%" PRIu32
               "] describes tensor %" PRIu32 ", not tensor %" PRIu32,
               k, j, s->box_begin + j, v->boxes[s->box_begin + j].tensor, t);
      if (!(b->flags & SFC_BLOCK_PARTIAL))
        continue;
      VERIFY(s->box_begin != NONE,
             "STEPS[%" PRIu32 "] operand %" PRIu32
             ": %s is PARTIAL but the step has no boxes (which part does it touch?)",
             k, j, bdesc(c, 0, "BLOCKS", bi, b));
      const sfc_plan_box_t *x = &v->boxes[s->box_begin + j], *y = &v->boxes[b->box];
      int inside = x->ndim == y->ndim;
      for (uint32_t d = 0; inside && d < x->ndim; d++)
        inside = y->lo[d] <= x->lo[d] && x->hi[d] <= y->hi[d];
      VERIFY(inside,
             "STEPS[%" PRIu32 "] operand %" PRIu32 ": its box BOXES[%" PRIu32
             "] is not inside BOXES[%" PRIu32 "], the part of the tensor PARTIAL %s holds",
             k, j, s->box_begin + j, b->box, bdesc(c, 0, "BLOCKS", bi, b));
    }
    if (s->flags & SFC_STEP_TIMED)
      VERIFY(isfinite(s->time_us) && s->time_us >= 0,
             "STEPS[%" PRIu32 "]: TIMED but time_us %g is not a finite duration >= 0", k,
             s->time_us);
    else
      VERIFY(s->time_us == 0,
             "STEPS[%" PRIu32 "]: time_us %g but the step is not TIMED (must be 0)", k, s->time_us);
    if (s->segment != NONE) {
      const sfc_plan_segment_t *g = &v->segments[s->segment];
      VERIFY(k >= g->first_step && k - g->first_step < g->step_count,
             "STEPS[%" PRIu32 "]: in SEGMENTS[%" PRIu32 "] but outside its steps [%" PRIu32
             ", %" PRIu64 ")",
             k, s->segment, g->first_step, (uint64_t)g->first_step + g->step_count);
      /* a recomputing step of a backward segment runs an op of its forward segment */
      const sfc_plan_segment_t *og = g;
      if (s->flags & SFC_STEP_RECOMPUTE) {
        VERIFY(g->flags & SFC_SEGMENT_BACKWARD,
               "STEPS[%" PRIu32 "]: RECOMPUTE in SEGMENTS[%" PRIu32 "], which is not BACKWARD", k,
               s->segment);
        og = &v->segments[g->forward_segment];
      }
      VERIFY(s->op >= og->first_op && s->op - og->first_op < og->op_count,
             "STEPS[%" PRIu32 "]: OPS[%" PRIu32 "] is not one of SEGMENTS[%" PRIu32 "]'s %sops", k,
             s->op, (s->flags & SFC_STEP_RECOMPUTE) ? g->forward_segment : s->segment,
             (s->flags & SFC_STEP_RECOMPUTE) ? "forward " : "");
      VERIFY(s->box_begin != NONE,
             "STEPS[%" PRIu32 "]: a tile of SEGMENTS[%" PRIu32
             "] without boxes (box_begin is NONE: the tile's geometry is missing)",
             k, s->segment);
    }
  }
  return SFC_OK;
}

/* A corner of a box: a point and its sign, for the exact-cover test. */
typedef struct corner {
  int64_t p[SFC_PLAN_BOX_DIMS];
  int64_t sign;
} corner_t;

static int corner_less(const corner_t *x, const corner_t *y) {
  for (int d = 0; d < SFC_PLAN_BOX_DIMS; d++)
    if (x->p[d] != y->p[d])
      return x->p[d] < y->p[d];
  return 0;
}

static void corner_sift(corner_t *k, size_t root, size_t n) {
  for (size_t child; (child = 2 * root + 1) < n; root = child) {
    if (child + 1 < n && corner_less(&k[child], &k[child + 1]))
      child++;
    if (!corner_less(&k[root], &k[child]))
      return;
    corner_t t = k[root];
    k[root] = k[child];
    k[child] = t;
  }
}

static void corner_sort(corner_t *k, size_t n) {
  for (size_t i = n / 2; i-- > 0;)
    corner_sift(k, i, n);
  for (size_t end = n; end-- > 1;) {
    corner_t t = k[0];
    k[0] = k[end];
    k[end] = t;
    corner_sift(k, 0, end);
  }
}

/* Axis d of box x over tensor t as [lo, hi): the box's own for d < ndim, else the
 * tensor's whole extent (1 past its rank). */
static void axis(const sfc_plan_tensor_t *t, const sfc_plan_box_t *x, uint32_t d, int64_t *lo,
                 int64_t *hi) {
  if (x && d < x->ndim) {
    *lo = x->lo[d];
    *hi = x->hi[d];
  } else {
    *lo = 0;
    *hi = d < t->ndim ? t->shape[d] : 1;
  }
}

/* Appends the 2^4 signed corners of box x (or, x NULL, of the whole tensor, negated). */
static size_t add_corners(corner_t *out, const sfc_plan_tensor_t *t, const sfc_plan_box_t *x) {
  for (uint32_t m = 0; m < (1u << SFC_PLAN_BOX_DIMS); m++) {
    int64_t sign = x ? 1 : -1;
    for (uint32_t d = 0; d < SFC_PLAN_BOX_DIMS; d++) {
      int64_t lo, hi;
      axis(t, x, d, &lo, &hi);
      out[m].p[d] = (m >> d) & 1 ? hi : lo;
      sign = (m >> d) & 1 ? -sign : sign;
    }
    out[m].sign = sign;
  }
  return 1u << SFC_PLAN_BOX_DIMS;
}

static int same_box(const sfc_plan_box_t *a, const sfc_plan_box_t *b) {
  if (a->ndim != b->ndim)
    return 0;
  for (uint32_t d = 0; d < a->ndim && d < SFC_PLAN_BOX_DIMS; d++)
    if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
      return 0;
  return 1;
}

/* 40: keys[0..m) are (segment << 32 | tensor, tile << 32 | box) of handed-on outputs,
 * sorted. */
static sfc_status_t check_covers(vctx_t *c, const sort_key_t *keys, uint32_t m, corner_t *corners) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0, j; i < m; i = j) {
    uint32_t g = (uint32_t)(keys[i].hi >> 32), t = (uint32_t)keys[i].hi;
    const sfc_plan_tensor_t *x = &v->tensors[t];
    size_t nc = add_corners(corners, x, NULL);
    uint64_t held = 0, whole = 1;
    for (j = i; j < m && keys[j].hi == keys[i].hi; j++) {
      const sfc_plan_box_t *b = &v->boxes[(uint32_t)keys[j].lo];
      /* a tile writing the same box again (an in-place op) computes no new part */
      int again = 0;
      for (uint32_t q = j; q-- > i && (keys[q].lo >> 32) == (keys[j].lo >> 32) && !again;)
        again = same_box(&v->boxes[(uint32_t)keys[q].lo], b);
      if (again)
        continue;
      nc += add_corners(corners + nc, x, b);
      held = held + box_elems(b) < held ? UINT64_MAX : held + box_elems(b);
    }
    for (uint32_t d = 0; d < x->ndim && d < SFC_PLAN_BOX_DIMS; d++)
      whole = sat_mul(whole, x->shape[d] > 0 ? (uint64_t)x->shape[d] : 0);
    corner_sort(corners, nc);
    int exact = 1;
    for (size_t a = 0, b; a < nc && exact; a = b) {
      int64_t sum = 0;
      for (b = a; b < nc && !corner_less(&corners[a], &corners[b]); b++)
        sum += corners[b].sign;
      exact = sum == 0;
    }
    VERIFY(exact,
           "SEGMENTS[%" PRIu32 "]: the tiles' boxes of tensor %" PRIu32
           " \"%.64s\" do not cover it exactly once (%s: %" PRIu64
           " elements in the boxes, %" PRIu64
           " in the tensor); an output the segment hands on is computed once, whole",
           g, t, tname(v, t),
           held > whole   ? "overlap"
           : held < whole ? "gap"
                          : "overlap and gap",
           held, whole);
  }
  return SFC_OK;
}

/* 35, 36 (segments), 39, 40 */
static sfc_status_t check_segments_boxes(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0; i < v->segment_count; i++) {
    const sfc_plan_segment_t *g = &v->segments[i];
    uint64_t tiles = 1;
    for (int d = 0; d < SFC_PLAN_BOX_DIMS; d++)
      tiles = tiles > UINT32_MAX ? tiles : tiles * g->grid[d];
    VERIFY(tiles == g->tile_count,
           "SEGMENTS[%" PRIu32 "]: tile_count %" PRIu32 " is not the product of its grid %" PRIu32
           "x%" PRIu32 "x%" PRIu32 "x%" PRIu32,
           i, g->tile_count, g->grid[0], g->grid[1], g->grid[2], g->grid[3]);
    if (i > 0) {
      const sfc_plan_segment_t *p = &v->segments[i - 1];
      VERIFY(g->first_step >= (uint64_t)p->first_step + p->step_count,
             "SEGMENTS[%" PRIu32 "]: starts at step %" PRIu32 ", inside or before SEGMENTS[%" PRIu32
             "] (segments must be sorted and disjoint)",
             i, g->first_step, i - 1);
    }
    for (uint32_t k = g->first_step; k - g->first_step < g->step_count; k++)
      VERIFY(v->steps[k].segment == i,
             "STEPS[%" PRIu32 "].segment: not %" PRIu32 " although SEGMENTS[%" PRIu32
             "] covers the step",
             k, i, i);
  }
  for (uint32_t i = 0; i < v->box_count; i++) {
    const sfc_plan_box_t *x = &v->boxes[i];
    const sfc_plan_tensor_t *t = &v->tensors[x->tensor];
    for (uint32_t d = 0; d < x->ndim; d++)
      VERIFY(x->lo[d] <= x->hi[d],
             "BOXES[%" PRIu32 "]: lo[%" PRIu32 "] %" PRId64 " > hi[%" PRIu32 "] %" PRId64, i, d,
             x->lo[d], d, x->hi[d]);
    VERIFY(x->ndim <= t->ndim,
           "BOXES[%" PRIu32 "] (tensor %" PRIu32 " \"%.64s\"): %" PRIu32
           " axes, more than the tensor's %u",
           i, x->tensor, tname(v, x->tensor), x->ndim, t->ndim);
    for (uint32_t d = 0; d < x->ndim; d++)
      VERIFY(x->lo[d] >= 0 && x->hi[d] <= t->shape[d],
             "BOXES[%" PRIu32 "] (tensor %" PRIu32 " \"%.64s\"): [%" PRId64 ", %" PRId64
             ") along axis %" PRIu32 " is not inside the tensor's [0, %" PRId64 ")",
             i, x->tensor, tname(v, x->tensor), x->lo[d], x->hi[d], d, t->shape[d]);
  }
  if (v->segment_count == 0)
    return SFC_OK;
  /* Which tensors a segment hands on: used by a step outside it (seen[t] holds the one
   * segment value, NONE - 1 for an untiled step, that names t; multi[t]: more than
   * one), an OUTPUT, or PERSISTENT or EXTERNAL. */
  const uint32_t UNSEEN = NONE, UNTILED = NONE - 1;
  size_t tb = (size_t)v->tensor_count * 2 * sizeof(uint32_t);
  uint32_t *seen = sfc_alloc(c->a, tb ? tb : 1);
  if (!seen)
    return oom(c, tb);
  uint32_t *multi = seen + v->tensor_count;
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    seen[t] = UNSEEN;
    multi[t] = 0;
  }
  uint64_t m = 0;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    uint32_t g = s->segment == NONE ? UNTILED : s->segment;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t t = v->op_operands[o->operand_begin + j];
      if (seen[t] == UNSEEN)
        seen[t] = g;
      else if (seen[t] != g)
        multi[t] = 1;
    }
    if (s->segment != NONE)
      m += o->output_count;
  }
  if (m > SFC_PLAN_MAX_RECORDS) {
    sfc_free(c->a, seen, tb ? tb : 1);
    return sfc_error_set(c->err, SFC_ERR_LIMIT,
                         "SEGMENTS: %" PRIu64 " tiled outputs exceed the limit %" PRIu32, m,
                         SFC_PLAN_MAX_RECORDS);
  }
  size_t kb = (size_t)m * sizeof(sort_key_t), cb = ((size_t)m + 1) * 16 * sizeof(corner_t);
  sort_key_t *keys = sfc_alloc(c->a, kb ? kb : 1);
  corner_t *corners = sfc_alloc(c->a, cb);
  sfc_status_t st = SFC_OK;
  if (!keys || !corners) {
    st = oom(c, kb + cb);
  } else {
    uint32_t at = 0;
    for (uint32_t k = 0; k < v->step_count; k++) {
      const sfc_plan_step_t *s = &v->steps[k];
      const sfc_plan_op_t *o = &v->ops[s->op];
      /* a backward segment's outputs are summed over tiles or per-tile (1.2) */
      int forward = s->segment != NONE && !(v->segments[s->segment].flags & SFC_SEGMENT_BACKWARD);
      for (uint32_t j = o->input_count; forward && j - o->input_count < o->output_count; j++) {
        uint32_t t = v->op_operands[o->operand_begin + j];
        const sfc_plan_tensor_t *x = &v->tensors[t];
        if (v->blocks[v->step_operands[s->operand_begin + j]].flags & SFC_BLOCK_PARTIAL)
          continue; /* a per-tile buffer: not handed on */
        if (multi[t] || x->kind == SFC_KIND_OUTPUT ||
            (x->flags & (SFC_TENSOR_PERSISTENT | SFC_TENSOR_EXTERNAL))) {
          keys[at++] = (sort_key_t){(uint64_t)s->segment << 32 | t,
                                    (uint64_t)s->tile << 32 | (s->box_begin + j)};
        }
      }
    }
    heap_sort(keys, at);
    st = check_covers(c, keys, at, corners);
  }
  sfc_free(c->a, keys, kb ? kb : 1);
  sfc_free(c->a, corners, cb);
  sfc_free(c->a, seen, tb ? tb : 1);
  return st;
}

/* ---- semantics: tile geometry (57, 58) ----------------------------------------- */

/* A box over all four axes (N, C, H, W), with the zeros to supply around it. */
typedef struct nbox {
  int64_t lo[SFC_PLAN_BOX_DIMS], hi[SFC_PLAN_BOX_DIMS];
  uint32_t pl[SFC_PLAN_BOX_DIMS], ph[SFC_PLAN_BOX_DIMS];
} nbox_t;

static int nbox_empty(const nbox_t *b) {
  for (int d = 0; d < SFC_PLAN_BOX_DIMS; d++)
    if (b->lo[d] >= b->hi[d])
      return 1;
  return 0;
}

static nbox_t nbox_of(const sfc_plan_view_t *v, const sfc_plan_box_t *x) {
  nbox_t b;
  memset(&b, 0, sizeof b);
  for (uint32_t d = 0; d < SFC_PLAN_BOX_DIMS; d++) {
    axis(&v->tensors[x->tensor], x, d, &b.lo[d], &b.hi[d]);
    if (d < x->ndim) {
      b.pl[d] = x->pad_lo[d];
      b.ph[d] = x->pad_hi[d];
    }
  }
  return b;
}

static nbox_t nbox_whole(const sfc_plan_tensor_t *t) {
  nbox_t b;
  memset(&b, 0, sizeof b);
  for (uint32_t d = 0; d < SFC_PLAN_BOX_DIMS; d++)
    axis(t, NULL, d, &b.lo[d], &b.hi[d]);
  return b;
}

static nbox_t nbox_none(void) {
  nbox_t b;
  memset(&b, 0, sizeof b);
  return b;
}

/* Equal as parts of a tensor: both empty, or the same ranges and zeros. */
static int nbox_same(const nbox_t *a, const nbox_t *b) {
  if (nbox_empty(a) || nbox_empty(b))
    return nbox_empty(a) && nbox_empty(b);
  return memcmp(a, b, sizeof *a) == 0;
}

/* b's N, H, W with t's whole C (no zeros). */
static nbox_t nbox_spatial(const nbox_t *b, const sfc_plan_tensor_t *t) {
  if (nbox_empty(b))
    return nbox_none();
  nbox_t r = *b;
  axis(t, NULL, 1, &r.lo[1], &r.hi[1]);
  memset(r.pl, 0, sizeof r.pl);
  memset(r.ph, 0, sizeof r.ph);
  return r;
}

static int op_is_4d(const sfc_plan_view_t *v, uint32_t t) {
  return v->tensors[t].ndim == 4;
}

/* The box of op f's input 0 (tensor x) that f's outputs on box `out` (of f's output 0,
 * tensor y) read, with the window's zeros; inverse: the box of y whose reads meet box
 * `out` of x. Empty when they read nothing. */
static nbox_t map_through(const sfc_plan_op_t *f, const sfc_plan_tensor_t *x,
                          const sfc_plan_tensor_t *y, const nbox_t *out, int inverse) {
  if (nbox_empty(out))
    return nbox_none();
  nbox_t r = nbox_spatial(out, inverse ? y : x);
  for (int a = 0; a < 2; a++) {
    int64_t lo = out->lo[2 + a], hi = out->hi[2 + a] - 1, rlo = lo, rhi = hi;
    int64_t n_in = x->shape[2 + a], n_out = y->shape[2 + a];
    bool any = true;
    sfc_map_window_t w = {n_in, n_out, f->kernel[a], f->stride[a], f->padding[a], f->dilation[a]};
    sfc_map_window_t wt = {n_out, n_in, f->kernel[a], f->stride[a], f->padding[a], f->dilation[a]};
    if (f->map == SFC_MAP_WINDOW)
      any = inverse ? sfc_map_window_out(&w, lo, hi, &rlo, &rhi)
                    : sfc_map_window_in(&w, lo, hi, &rlo, &rhi);
    else if (f->map == SFC_MAP_WINDOW_T) /* the convolution from y to x, maps exchanged */
      any = inverse ? sfc_map_window_in(&wt, lo, hi, &rlo, &rhi)
                    : sfc_map_window_out(&wt, lo, hi, &rlo, &rhi);
    else if (f->map == SFC_MAP_NEAREST)
      any = inverse ? sfc_map_nearest_out(n_in, n_out, lo, hi, &rlo, &rhi)
                    : sfc_map_nearest_in(n_in, n_out, lo, hi, &rlo, &rhi);
    else if (f->map == SFC_MAP_BILINEAR)
      any = inverse ? sfc_map_bilinear_out(n_in, n_out, lo, hi, &rlo, &rhi)
                    : sfc_map_bilinear_in(n_in, n_out, lo, hi, &rlo, &rhi);
    if (!any)
      return nbox_none();
    r.lo[2 + a] = rlo;
    r.hi[2 + a] = rhi + 1;
    if (f->map == SFC_MAP_WINDOW && !inverse)
      sfc_map_window_pads(&w, lo, hi + 1, rlo, rhi + 1, &r.pl[2 + a], &r.ph[2 + a]);
  }
  return r;
}

static const char *map_name(uint8_t m) {
  static const char *const names[] = {"NONE",           "WINDOW",   "POINTWISE",  "NEAREST",
                                      "BILINEAR",       "CAT",      "VIEW",       "GRAD_DATA",
                                      "GRAD_POINTWISE", "GRAD_SUM", "GRAD_SLICE", "WINDOW_T"};
  return m <= SFC_MAP_MAX ? names[m] : "?";
}

static int fmt_box(char *buf, size_t cap, const nbox_t *b) {
  if (nbox_empty(b))
    return snprintf(buf, cap, "empty");
  return snprintf(buf, cap,
                  "[%" PRId64 ",%" PRId64 ")x[%" PRId64 ",%" PRId64 ")x[%" PRId64 ",%" PRId64
                  ")x[%" PRId64 ",%" PRId64 ") zeros H %" PRIu32 "/%" PRIu32 " W %" PRIu32
                  "/%" PRIu32,
                  b->lo[0], b->hi[0], b->lo[1], b->hi[1], b->lo[2], b->hi[2], b->lo[3], b->hi[3],
                  b->pl[2], b->ph[2], b->pl[3], b->ph[3]);
}

/* 57: every op's map, and a windowed op's window. */
static sfc_status_t check_op_maps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0; i < v->op_count; i++) {
    const sfc_plan_op_t *o = &v->ops[i];
    VERIFY(o->map <= SFC_MAP_MAX, "OPS[%" PRIu32 "].map: %u is not a map", i, o->map);
    for (int a = 0; a < 2; a++) {
      if (o->map == SFC_MAP_WINDOW || o->map == SFC_MAP_WINDOW_T)
        VERIFY(o->kernel[a] >= 1 && o->stride[a] >= 1 && o->padding[a] >= 0 && o->dilation[a] >= 1,
               "OPS[%" PRIu32 "] (\"%.64s\"): window axis %d has kernel %" PRId32
               ", stride %" PRId32 ", padding %" PRId32 ", dilation %" PRId32
               " (kernel, stride and dilation must be >= 1, padding >= 0)",
               i, sfc_plan_string(v, o->name), a, o->kernel[a], o->stride[a], o->padding[a],
               o->dilation[a]);
      else
        VERIFY(!o->kernel[a] && !o->stride[a] && !o->padding[a] && !o->dilation[a],
               "OPS[%" PRIu32 "] (\"%.64s\"): map %s has a window (only WINDOW and WINDOW_T "
               "ops have one)",
               i, sfc_plan_string(v, o->name), map_name(o->map));
    }
    if (o->map == SFC_MAP_GRAD_DATA) {
      uint8_t fm = o->backward_of == NONE ? SFC_MAP_NONE : v->ops[o->backward_of].map;
      VERIFY(fm == SFC_MAP_WINDOW || fm == SFC_MAP_WINDOW_T || fm == SFC_MAP_NEAREST ||
                 fm == SFC_MAP_BILINEAR,
             "OPS[%" PRIu32 "] (\"%.64s\"): map GRAD_DATA, but backward_of names no WINDOW, "
             "WINDOW_T, NEAREST or BILINEAR op",
             i, sfc_plan_string(v, o->name));
      const sfc_plan_op_t *f = &v->ops[o->backward_of];
      VERIFY(o->input_count >= 1 && f->input_count >= 1 && f->output_count >= 1 &&
                 op_is_4d(v, v->op_operands[o->operand_begin]) &&
                 op_is_4d(v, v->op_operands[f->operand_begin]) &&
                 op_is_4d(v, v->op_operands[f->operand_begin + f->input_count]),
             "OPS[%" PRIu32 "] (\"%.64s\"): map GRAD_DATA needs a 4-D input 0 and a forward op "
             "with a 4-D input 0 and output 0",
             i, sfc_plan_string(v, o->name));
    }
    if (o->map == SFC_MAP_WINDOW || o->map == SFC_MAP_WINDOW_T || o->map == SFC_MAP_NEAREST ||
        o->map == SFC_MAP_BILINEAR)
      VERIFY(o->input_count >= 1 && o->output_count >= 1 &&
                 op_is_4d(v, v->op_operands[o->operand_begin]) &&
                 op_is_4d(v, v->op_operands[o->operand_begin + o->input_count]),
             "OPS[%" PRIu32 "] (\"%.64s\"): map %s needs a 4-D input 0 and output 0", i,
             sfc_plan_string(v, o->name), map_name(o->map));
  }
  return SFC_OK;
}

/* What tile step s's op requires of its operands' boxes (58), given their boxes `have`:
 * want[j] for operand j where set[j]. Free choices (the tile's own part) are the boxes
 * the step has; everything else follows from them through the map. */
static void tile_wants(const sfc_plan_view_t *v, const sfc_plan_step_t *s, const nbox_t *have,
                       nbox_t *want, uint8_t *set) {
  const sfc_plan_op_t *o = &v->ops[s->op];
  uint32_t ni = o->input_count, no = o->output_count;
  const uint32_t *ot = &v->op_operands[o->operand_begin];
  int seed = (v->segments[s->segment].flags & SFC_SEGMENT_SEED_HALO) != 0;
#define T(j) (&v->tensors[ot[j]])
#define WANT(j, b)                                                                                 \
  do {                                                                                             \
    want[j] = (b);                                                                                 \
    set[j] = 1;                                                                                    \
  } while (0)
  switch (o->map) {
    case SFC_MAP_WINDOW:
    case SFC_MAP_WINDOW_T:
    case SFC_MAP_POINTWISE:
    case SFC_MAP_NEAREST:
    case SFC_MAP_BILINEAR:
    case SFC_MAP_CAT: {
      /* every 4-D output on one box (its whole C); the inputs on what it reads */
      nbox_t fo = nbox_none();
      for (uint32_t j = ni; j < ni + no; j++)
        if (op_is_4d(v, ot[j]) && !nbox_empty(&have[j])) {
          fo = have[j];
          break;
        }
      for (uint32_t j = ni; j < ni + no; j++)
        if (op_is_4d(v, ot[j]))
          WANT(j, nbox_spatial(&fo, T(j)));
      int windowed = o->map != SFC_MAP_POINTWISE && o->map != SFC_MAP_CAT;
      for (uint32_t j = 0; j < ni; j++) {
        if (!op_is_4d(v, ot[j]) || (windowed && j > 0))
          WANT(j, nbox_whole(T(j)));
        else if (windowed)
          WANT(j, map_through(o, T(0), T(ni), &fo, 0));
        else
          WANT(j, nbox_spatial(&fo, T(j)));
      }
      break;
    }
    case SFC_MAP_GRAD_DATA: {
      const sfc_plan_op_t *f = &v->ops[o->backward_of];
      uint32_t fx = v->op_operands[f->operand_begin],
               fy = v->op_operands[f->operand_begin + f->input_count];
      const sfc_plan_tensor_t *X = &v->tensors[fx], *Y = &v->tensors[fy];
      uint32_t xs = NONE, gs = NONE;
      for (uint32_t j = 1; j < ni && xs == NONE; j++)
        if (ot[j] == fx)
          xs = j;
      if (no >= 1 && op_is_4d(v, ot[ni]) &&
          memcmp(T(ni)->shape, X->shape, 4 * sizeof X->shape[0]) == 0)
        gs = ni;
      int weights = 0; /* a weight's or a bias's gradient computed by this step */
      for (uint32_t j = ni; j < ni + no; j++)
        if (j != gs && T(j)->kind != SFC_KIND_WORKSPACE && !nbox_empty(&have[j]))
          weights = 1;
      nbox_t d = have[0], fwd = map_through(f, X, Y, &d, 0);
      WANT(0, nbox_spatial(&d, T(0))); /* the tile's part: free, but whole C and no zeros */
      if (seed && !weights && gs != NONE) {
        /* the input gradient exact on its box: the output gradient on what reads it, in
         * its own tensor's channels (1.6; 1.5 wrote y's: a channel view's operand) */
        nbox_t m = map_through(f, X, Y, &have[gs], 1);
        WANT(0, v->header.version_minor >= 6 ? nbox_spatial(&m, T(0)) : m);
        if (xs != NONE)
          WANT(xs, nbox_spatial(&have[gs], X));
      } else {
        if (xs != NONE)
          WANT(xs, fwd);
        if (gs != NONE)
          WANT(gs, seed ? nbox_none() : fwd);
      }
      for (uint32_t j = 1; j < ni; j++) {
        if (j == xs)
          continue;
        if (op_is_4d(v, ot[j]) && memcmp(T(j)->shape, Y->shape, 4 * sizeof Y->shape[0]) == 0)
          WANT(j, nbox_spatial(&have[0], T(j))); /* max pooling's indices, shaped like y */
        else
          WANT(j, nbox_whole(T(j))); /* a weight */
      }
      for (uint32_t j = ni; j < ni + no; j++)
        if (j != gs && T(j)->kind != SFC_KIND_WORKSPACE && (weights || !seed))
          WANT(j, nbox_whole(T(j)));
      break;
    }
    case SFC_MAP_GRAD_SUM:
    case SFC_MAP_GRAD_POINTWISE:
      if (o->map == SFC_MAP_GRAD_POINTWISE || seed) {
        /* one box for every gradient (seed: a sum's inputs exact on the sum's box) */
        uint32_t first = NONE;
        for (uint32_t j = 0; j < ni + no; j++)
          if (op_is_4d(v, ot[j])) {
            first = first == NONE ? j : first;
            WANT(j, nbox_spatial(&have[first], T(j)));
          }
      } else {
        /* masked: each input on its own support, the sum on their hull */
        nbox_t h = nbox_none();
        for (uint32_t j = 0; j < ni; j++) {
          if (!op_is_4d(v, ot[j]) || nbox_empty(&have[j]))
            continue;
          WANT(j, nbox_spatial(&have[j], T(j)));
          if (nbox_empty(&h)) {
            h = nbox_spatial(&have[j], T(j));
            continue;
          }
          for (int a = 0; a < SFC_PLAN_BOX_DIMS; a++) {
            h.lo[a] = have[j].lo[a] < h.lo[a] ? have[j].lo[a] : h.lo[a];
            h.hi[a] = have[j].hi[a] > h.hi[a] ? have[j].hi[a] : h.hi[a];
          }
        }
        for (uint32_t j = ni; j < ni + no; j++)
          if (op_is_4d(v, ot[j]))
            WANT(j, nbox_spatial(&h, T(j)));
      }
      break;
    case SFC_MAP_GRAD_SLICE:
      if (ni >= 1 && op_is_4d(v, ot[0])) {
        WANT(0, nbox_spatial(&have[0], T(0)));
        for (uint32_t j = ni; j < ni + no; j++)
          if (op_is_4d(v, ot[j]))
            WANT(j, nbox_spatial(&have[0], T(j)));
      }
      break;
    default: /* NONE (not recorded), VIEW */
      break;
  }
#undef T
#undef WANT
}

/* 58: every tile step's boxes are exactly what its op's map requires. */
static sfc_status_t check_tile_maps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  uint32_t most = 0;
  for (uint32_t i = 0; i < v->op_count; i++) {
    const sfc_plan_op_t *o = &v->ops[i];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    most = n > most ? n : most;
  }
  size_t bytes = ((size_t)most + 1) * (2 * sizeof(nbox_t) + 1);
  nbox_t *have = sfc_alloc(c->a, bytes);
  if (!have)
    return oom(c, bytes);
  nbox_t *want = have + most + 1;
  uint8_t *set = (uint8_t *)(want + most + 1);
  sfc_status_t st = SFC_OK;
  uint64_t taps = 0;
  for (uint32_t k = 0; k < v->step_count && st == SFC_OK; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    if (s->segment == NONE || o->map == SFC_MAP_NONE || o->map == SFC_MAP_VIEW)
      continue;
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    /* the taps the window maps will walk for this step, at most */
    const sfc_plan_op_t *w = o->map == SFC_MAP_GRAD_DATA ? &v->ops[o->backward_of] : o;
    if (w->map == SFC_MAP_WINDOW || w->map == SFC_MAP_WINDOW_T) {
      taps += ((uint64_t)(uint32_t)w->kernel[0] + (uint32_t)w->kernel[1]) * n;
      if (taps > SFC_PLAN_MAX_MAP_TAPS) {
        st = sfc_error_set(c->err, SFC_ERR_LIMIT,
                           "STEPS[%" PRIu32 "]: checking the tiles' boxes would walk more than "
                           "%" PRIu64 " window taps (OPS[%" PRIu32 "] has a %" PRId32 "x%" PRId32
                           " window)",
                           k, SFC_PLAN_MAX_MAP_TAPS, s->op, w->kernel[0], w->kernel[1]);
        break;
      }
    }
    for (uint32_t j = 0; j < n; j++) {
      have[j] = nbox_of(v, &v->boxes[s->box_begin + j]);
      set[j] = 0;
    }
    tile_wants(v, s, have, want, set);
    for (uint32_t j = 0; j < n; j++) {
      if (!set[j] || nbox_same(&have[j], &want[j]))
        continue;
      char hb[200], wb[200];
      fmt_box(hb, sizeof hb, &have[j]);
      fmt_box(wb, sizeof wb, &want[j]);
      uint32_t t = v->op_operands[o->operand_begin + j];
      st = sfc_error_set(c->err, SFC_ERR_VERIFY,
                         "STEPS[%" PRIu32 "] (tile %" PRIu32 " of SEGMENTS[%" PRIu32
                         "], OPS[%" PRIu32 "] \"%.64s\", map %s): operand %" PRIu32
                         " (tensor %" PRIu32 " \"%.64s\") has box %s, but the map requires %s",
                         k, s->tile, s->segment, s->op, sfc_plan_string(v, o->name),
                         map_name(o->map), j, t, tname(v, t), hb, wb);
      break;
    }
  }
  sfc_free(c->a, have, bytes);
  return st;
}

/* ---- semantics: swaps and dependencies ----------------------------------------- */

static int live_at(const sfc_plan_block_t *b, uint32_t k) {
  return b->first_step <= k && k <= b->last_step;
}

/* Which part of its tensor block b holds, for messages: "the whole tensor" or "BOXES[i]". */
static const char *part(char *buf, size_t cap, const sfc_plan_block_t *b) {
  if (b->flags & SFC_BLOCK_PARTIAL)
    snprintf(buf, cap, "BOXES[%" PRIu32 "]", b->box);
  else
    snprintf(buf, cap, "the whole tensor");
  return buf;
}

/* Device block db and host block hb hold the same part of their tensor. */
static int same_part(const sfc_plan_view_t *v, const sfc_plan_block_t *db,
                     const sfc_plan_block_t *hb) {
  if ((db->flags & SFC_BLOCK_PARTIAL) != (hb->flags & SFC_BLOCK_PARTIAL))
    return 0;
  if (!(db->flags & SFC_BLOCK_PARTIAL))
    return 1;
  const sfc_plan_box_t *x = &v->boxes[db->box], *y = &v->boxes[hb->box];
  if (x->ndim != y->ndim)
    return 0;
  for (uint32_t d = 0; d < x->ndim; d++)
    if (x->lo[d] != y->lo[d] || x->hi[d] != y->hi[d])
      return 0;
  return 1;
}

/* 41-47 (c->fill[b] = the swap-in that fills device block b) */
static sfc_status_t check_swaps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0; i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    const sfc_plan_block_t *db = &v->blocks[w->device_block], *hb = &v->host_blocks[w->host_block];
    uint32_t k = w->issue_step;
    VERIFY(i == 0 || k >= v->swaps[i - 1].issue_step,
           "SWAPS[%" PRIu32 "]: issue_step %" PRIu32 " is before SWAPS[%" PRIu32 "]'s %" PRIu32
           " (SWAPS must be sorted by issue_step)",
           i, k, i - 1, v->swaps[i - 1].issue_step);
    VERIFY(db->tensor == w->tensor,
           "SWAPS[%" PRIu32 "]: moves tensor %" PRIu32 " \"%.64s\" but its device block is %s", i,
           w->tensor, tname(v, w->tensor), bdesc(c, 0, "BLOCKS", w->device_block, db));
    VERIFY(hb->tensor == w->tensor,
           "SWAPS[%" PRIu32 "]: moves tensor %" PRIu32 " \"%.64s\" but its host block is %s", i,
           w->tensor, tname(v, w->tensor), bdesc(c, 0, "HOST_BLOCKS", w->host_block, hb));
    const char *d = bdesc(c, 0, "BLOCKS", w->device_block, db);
    const char *h = bdesc(c, 1, "HOST_BLOCKS", w->host_block, hb);
    uint64_t want = content_bytes(v, db);
    VERIFY(w->bytes == want,
           "SWAPS[%" PRIu32 "]: copies %" PRIu64 " bytes but %s holds %" PRIu64
           " (a swap moves its block's whole contents: the tensor, or the box of a PARTIAL block)",
           i, w->bytes, d, want);
    char pd[32], ph[32];
    VERIFY(same_part(v, db, hb), "SWAPS[%" PRIu32 "]: %s holds %s but %s holds %s", i, d,
           part(pd, sizeof pd, db), h, part(ph, sizeof ph, hb));
    VERIFY(hb->bytes >= w->bytes,
           "SWAPS[%" PRIu32 "]: copies %" PRIu64 " bytes but %s has only %" PRIu64, i, w->bytes, h,
           hb->bytes);
    if (w->direction == SFC_SWAP_OUT) {
      VERIFY(k >= 1 && live_at(db, k - 1),
             "SWAPS[%" PRIu32 "]: swap-out issued before step %" PRIu32
             " but %s is not live at the step before (live at steps %" PRIu32 "..%" PRIu32 ")",
             i, k, d, db->first_step, db->last_step);
      uint32_t hk = k < v->step_count ? k : v->step_count - 1;
      VERIFY(live_at(hb, hk),
             "SWAPS[%" PRIu32 "]: swap-out issued before step %" PRIu32
             " but %s is not live at step %" PRIu32 " (live at steps %" PRIu32 "..%" PRIu32 ")",
             i, k, h, hk, hb->first_step, hb->last_step);
      continue;
    }
    VERIFY(k < v->step_count && live_at(db, k),
           "SWAPS[%" PRIu32 "]: swap-in issued before step %" PRIu32
           " but %s is not live at that step (live at steps %" PRIu32 "..%" PRIu32 ")",
           i, k, d, db->first_step, db->last_step);
    VERIFY(db->flags & SFC_BLOCK_SWAPPED_IN,
           "SWAPS[%" PRIu32 "]: swap-in into %s, which is not marked SWAPPED_IN", i, d);
    VERIFY(c->fill[w->device_block] == NONE,
           "%s: filled by two swap-ins (SWAPS[%" PRIu32 "] and SWAPS[%" PRIu32 "])", d,
           c->fill[w->device_block], i);
    VERIFY(live_at(hb, k),
           "SWAPS[%" PRIu32 "]: swap-in issued before step %" PRIu32
           " but %s is not live at that step (live at steps %" PRIu32 "..%" PRIu32 ")",
           i, k, h, hb->first_step, hb->last_step);
    c->fill[w->device_block] = i;
  }
  for (uint32_t bi = 0; bi < v->block_count; bi++)
    if (v->blocks[bi].flags & SFC_BLOCK_SWAPPED_IN)
      VERIFY(c->fill[bi] != NONE, "%s: SWAPPED_IN but no swap-in fills it",
             bdesc(c, 0, "BLOCKS", bi, &v->blocks[bi]));
  return SFC_OK;
}

/* 49. Issue order: swaps with issue_step k (in SWAPS order), then step k. */
static sfc_status_t check_dep_list(vctx_t *c, const char *sec, uint32_t i, int is_step,
                                   uint32_t begin, uint32_t count) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t j = begin; j - begin < count; j++) {
    const sfc_plan_dep_t *d = &v->deps[j];
    int ok;
    if (is_step)
      ok = d->node_kind == SFC_NODE_STEP ? d->index < i : v->swaps[d->index].issue_step <= i;
    else
      ok = d->node_kind == SFC_NODE_STEP ? d->index < v->swaps[i].issue_step : d->index < i;
    VERIFY(ok,
           "%s[%" PRIu32 "]: dependency DEPS[%" PRIu32 "] on %s[%" PRIu32
           "] points forward in issue order",
           sec, i, j, d->node_kind == SFC_NODE_STEP ? "STEPS" : "SWAPS", d->index);
  }
  return SFC_OK;
}

static sfc_status_t check_deps(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t k = 0; k < v->step_count; k++)
    SFC_TRY(check_dep_list(c, "STEPS", k, 1, v->steps[k].dep_begin, v->steps[k].dep_count));
  for (uint32_t i = 0; i < v->swap_count; i++)
    SFC_TRY(check_dep_list(c, "SWAPS", i, 0, v->swaps[i].dep_begin, v->swaps[i].dep_count));
  return SFC_OK;
}

/* ---- semantics: happens-before ------------------------------------------------- */

static uint32_t queue_of(const sfc_plan_view_t *v, uint32_t node) {
  if (node < v->step_count)
    return Q_COMPUTE;
  return v->swaps[node - v->step_count].direction == SFC_SWAP_IN ? Q_H2D : Q_D2H;
}

static uint32_t seq_of(const vctx_t *c, uint32_t node) {
  return node < c->v->step_count ? node + 1 : c->swap_seq[node - c->v->step_count];
}

/* x completes before y starts. */
static int hb(const vctx_t *c, uint32_t x, uint32_t y) {
  return c->clock[3 * (size_t)y + queue_of(c->v, x)] >= seq_of(c, x);
}

/* One node in issue order: its queue's last completion, then every dependency's. */
static void clock_node(vctx_t *c, uint32_t x, uint32_t (*done)[QUEUES], uint32_t begin,
                       uint32_t count) {
  const sfc_plan_view_t *v = c->v;
  uint32_t q = queue_of(v, x), *cl = &c->clock[3 * (size_t)x];
  memcpy(cl, done[q], sizeof done[q]);
  for (uint32_t j = begin; j - begin < count; j++) {
    const sfc_plan_dep_t *d = &v->deps[j];
    uint32_t y = d->node_kind == SFC_NODE_STEP ? d->index : v->step_count + d->index;
    const uint32_t *dy = &c->clock[3 * (size_t)y];
    for (int r = 0; r < QUEUES; r++)
      cl[r] = dy[r] > cl[r] ? dy[r] : cl[r];
    uint32_t ry = queue_of(v, y), sy = seq_of(c, y);
    cl[ry] = sy > cl[ry] ? sy : cl[ry];
  }
  memcpy(done[q], cl, sizeof done[q]);
  done[q][q] = seq_of(c, x);
}

static void compute_clocks(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  uint32_t n[QUEUES] = {0}, done[QUEUES][QUEUES] = {{0}};
  for (uint32_t i = 0; i < v->swap_count; i++)
    c->swap_seq[i] = ++n[v->swaps[i].direction == SFC_SWAP_IN ? Q_H2D : Q_D2H];
  uint32_t i = 0;
  for (uint32_t k = 0; k <= v->step_count; k++) {
    for (; i < v->swap_count && v->swaps[i].issue_step == k; i++)
      clock_node(c, v->step_count + i, done, v->swaps[i].dep_begin, v->swaps[i].dep_count);
    if (k < v->step_count)
      clock_node(c, k, done, v->steps[k].dep_begin, v->steps[k].dep_count);
  }
}

/* 34, 48, 50: how each device block's data arrives. */
static sfc_status_t check_blocks_flow(vctx_t *c) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t b = v->step_operands[s->operand_begin + j];
      if (c->first_use[b] == NONE)
        c->first_use[b] = k;
      /* 1.2: a BACKWARD segment's output in a whole block is accumulated: every step of
       * the segment writing it but the first reads what the earlier ones added */
      int again = 0;
      if (j >= o->input_count && j < (uint32_t)o->input_count + o->output_count &&
          s->segment != NONE && (v->segments[s->segment].flags & SFC_SEGMENT_BACKWARD) &&
          !(v->blocks[b].flags & SFC_BLOCK_PARTIAL)) {
        uint32_t t = v->op_operands[o->operand_begin + j];
        again = c->acc[t] == s->segment + 1;
        c->acc[t] = s->segment + 1;
      }
      if (c->first_use[b] == k && (j < o->input_count || again))
        c->first_rd[b] = 1;
      c->last_use[b] = k;
    }
  }
  for (uint32_t b = 0; b < v->block_count; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    uint32_t k = c->first_use[b];
    if (x->flags & SFC_BLOCK_SWAPPED_IN) {
      VERIFY(k != NONE,
             "%s: SWAPPED_IN but no step reads it (nothing waits for SWAPS[%" PRIu32
             "], which may still write it when the block ends)",
             bdesc(c, 0, "BLOCKS", b, x), c->fill[b]);
      VERIFY(c->first_rd[b],
             "%s: SWAPPED_IN but its first use, STEPS[%" PRIu32
             "], does not read it (SWAPS[%" PRIu32 "] fills it for nothing)",
             bdesc(c, 0, "BLOCKS", b, x), k, c->fill[b]);
      VERIFY(hb(c, v->step_count + c->fill[b], k),
             "STEPS[%" PRIu32 "] is the first use of %s but does not wait for SWAPS[%" PRIu32
             "], the swap-in that fills it",
             k, bdesc(c, 0, "BLOCKS", b, x), c->fill[b]);
    } else if (!(x->flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL)) && k != NONE) {
      VERIFY(!c->first_rd[b],
             "STEPS[%" PRIu32 "] reads %s before anything wrote it (its first use; the block is "
             "not PERSISTENT, EXTERNAL or SWAPPED_IN)",
             k, bdesc(c, 0, "BLOCKS", b, x));
    }
  }
  return SFC_OK;
}

/* 51-53, 56, in issue order. last_write[b]: the node that last wrote device block b;
 * dirty[b]: the step that wrote it since its last swap (NONE: none did). */
static sfc_status_t check_copies(vctx_t *c, uint32_t *last_write, uint32_t *dirty) {
  const sfc_plan_view_t *v = c->v;
  uint32_t n = v->step_count, i = 0;
  for (uint32_t k = 0; k <= n; k++) {
    for (; i < v->swap_count && v->swaps[i].issue_step == k; i++) {
      const sfc_plan_swap_t *w = &v->swaps[i];
      uint32_t b = w->device_block, h = w->host_block, x = n + i;
      const sfc_plan_block_t *db = &v->blocks[b];
      uint32_t home = c->home[w->tensor];
      VERIFY(home == NONE || h == home,
             "SWAPS[%" PRIu32 "]: a swap of tensor %" PRIu32 " through HOST_BLOCKS[%" PRIu32
             "], but its home is HOST_BLOCKS[%" PRIu32 "] (a homed tensor moves only to and from "
             "its home)",
             i, w->tensor, h, home);
      if (w->direction == SFC_SWAP_OUT) {
        uint32_t wr = last_write[b];
        dirty[b] = NONE;
        if (wr == NONE)
          VERIFY(db->flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL),
                 "SWAPS[%" PRIu32 "]: swap-out of %s before anything wrote it", i,
                 bdesc(c, 0, "BLOCKS", b, db));
        else
          VERIFY(hb(c, wr, x),
                 "SWAPS[%" PRIu32 "]: swap-out of %s does not wait for %s, the block's last "
                 "write before it",
                 i, bdesc(c, 0, "BLOCKS", b, db), ndesc(c, 1, wr));
        uint32_t rd = c->h_last_in[h];
        VERIFY(rd == NONE || hb(c, n + rd, x),
               "SWAPS[%" PRIu32 "]: swap-out into %s does not wait for SWAPS[%" PRIu32
               "], a swap-in that still reads it",
               i, bdesc(c, 0, "HOST_BLOCKS", h, &v->host_blocks[h]), rd);
        c->last_out[b] = i;
        if (c->h_first_out[h] == NONE)
          c->h_first_out[h] = i;
        c->h_last_out[h] = i;
      } else {
        uint32_t wr = c->h_last_out[h];
        VERIFY(wr != NONE || home != NONE,
               "SWAPS[%" PRIu32 "]: swap-in from %s, which no swap-out wrote before it", i,
               bdesc(c, 0, "HOST_BLOCKS", h, &v->host_blocks[h]));
        dirty[b] = NONE;
        VERIFY(wr == NONE || hb(c, n + wr, x),
               "SWAPS[%" PRIu32 "]: swap-in does not wait for SWAPS[%" PRIu32
               "], the swap-out that wrote %s",
               i, wr, bdesc(c, 0, "HOST_BLOCKS", h, &v->host_blocks[h]));
        c->h_last_in[h] = i;
        last_write[b] = x;
      }
    }
    if (k == n)
      break;
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t m = (uint32_t)o->input_count + o->output_count + o->temp_count;
    for (uint32_t j = o->input_count; j < m; j++) {
      uint32_t b = v->step_operands[s->operand_begin + j], out = c->last_out[b];
      VERIFY(out == NONE || hb(c, n + out, k),
             "STEPS[%" PRIu32 "] writes %s but does not wait for SWAPS[%" PRIu32
             "], a swap-out that may still read it",
             k, bdesc(c, 0, "BLOCKS", b, &v->blocks[b]), out);
      last_write[b] = k;
      dirty[b] = k;
    }
  }
  /* 56: a homed tensor's writes go home before the iteration ends (and before the
   * next residency's swap-in, which 52 orders after the swap-out) */
  for (uint32_t b = 0; b < v->block_count; b++) {
    uint32_t t = v->blocks[b].tensor;
    VERIFY(dirty[b] == NONE || c->home[t] == NONE,
           "STEPS[%" PRIu32 "] writes %s, but no swap-out after it carries the write to the "
           "tensor's home HOST_BLOCKS[%" PRIu32 "]: the update would be lost",
           dirty[b], bdesc(c, 0, "BLOCKS", b, &v->blocks[b]), c->home[t]);
  }
  return SFC_OK;
}

/* Range "raise to at least" and range maximum over leaves [l, r) of a bottom-up segment
 * tree with p leaves: tag[x] applies to all of x's leaves, mx[x] is the maximum below x. */
static void mt_raise(uint32_t *tag, uint32_t *mx, uint32_t p, uint32_t l, uint32_t r,
                     uint32_t val) {
  uint32_t a = (l + p) >> 1, b = (r - 1 + p) >> 1;
  for (l += p, r += p; l < r; l >>= 1, r >>= 1) {
    if (l & 1) {
      tag[l] = tag[l] > val ? tag[l] : val;
      mx[l] = mx[l] > val ? mx[l] : val;
      l++;
    }
    if (r & 1) {
      --r;
      tag[r] = tag[r] > val ? tag[r] : val;
      mx[r] = mx[r] > val ? mx[r] : val;
    }
  }
  for (; a; a >>= 1)
    mx[a] = mx[a] > val ? mx[a] : val;
  for (; b; b >>= 1)
    mx[b] = mx[b] > val ? mx[b] : val;
}

static uint32_t mt_max(const uint32_t *tag, const uint32_t *mx, uint32_t p, uint32_t l,
                       uint32_t r) {
  uint32_t res = 0, a = (l + p) >> 1, b = (r - 1 + p) >> 1;
  for (l += p, r += p; l < r; l >>= 1, r >>= 1) {
    if (l & 1) {
      res = mx[l] > res ? mx[l] : res;
      l++;
    }
    if (r & 1) {
      --r;
      res = mx[r] > res ? mx[r] : res;
    }
  }
  for (; a; a >>= 1)
    res = tag[a] > res ? tag[a] : res;
  for (; b; b >>= 1)
    res = tag[b] > res ? tag[b] : res;
  return res;
}

/* For block i of an arena: its first access (node, NONE if nothing touches it) and its
 * last access on each queue (node, NONE). */
static uint32_t first_access(const vctx_t *c, int host, uint32_t i) {
  uint32_t n = c->v->step_count;
  if (host)
    return c->h_first_out[i] == NONE ? NONE : n + c->h_first_out[i];
  if (c->fill[i] != NONE)
    return n + c->fill[i];
  return c->first_use[i];
}

static uint32_t last_access(const vctx_t *c, int host, uint32_t i, int q) {
  uint32_t n = c->v->step_count, s;
  if (host)
    s = q == Q_H2D ? c->h_last_in[i] : q == Q_D2H ? c->h_last_out[i] : NONE;
  else if (q == Q_COMPUTE)
    return c->first_use[i] == NONE ? NONE : c->last_use[i];
  else
    s = q == Q_H2D ? c->fill[i] : c->last_out[i];
  return s == NONE ? NONE : n + s;
}

/* The earlier occupant a of block b's bytes whose last access on queue q is not
 * known complete at b's first access (the latest such occupant). */
static uint32_t reuse_culprit(const vctx_t *c, const sfc_plan_block_t *blocks, uint32_t nb,
                              int host, uint32_t b, int q, uint32_t known) {
  uint32_t best = NONE;
  const sfc_plan_block_t *x = &blocks[b];
  for (uint32_t a = 0; a < nb; a++) {
    const sfc_plan_block_t *y = &blocks[a];
    uint32_t last = last_access(c, host, a, q);
    if (y->bytes == 0 || y->last_step >= x->first_step || last == NONE ||
        first_access(c, host, a) == NONE || y->offset >= x->offset + x->bytes ||
        x->offset >= y->offset + y->bytes || seq_of(c, last) <= known)
      continue;
    if (best == NONE || y->last_step >= blocks[best].last_step)
      best = a;
  }
  return best;
}

/* 54, 55: the sweep of the file comment, for one arena. */
static sfc_status_t check_reuse(vctx_t *c, int host) {
  const sfc_plan_view_t *v = c->v;
  const char *sec = host ? "HOST_BLOCKS" : "BLOCKS";
  const sfc_plan_block_t *blocks = host ? v->host_blocks : v->blocks;
  uint32_t nb = host ? v->host_block_count : v->block_count, m = 0;
  for (uint32_t i = 0; i < nb; i++)
    m += blocks[i].bytes > 0 && first_access(c, host, i) != NONE;
  if (m < 2)
    return SFC_OK;
  uint32_t p = 1;
  while (p < 2 * m)
    p <<= 1;
  /* by_first[m], by_last[m], coord[2m]; per queue a tree: tag[2p], mx[2p] */
  size_t bytes = (size_t)4 * m * sizeof(sort_key_t) + (size_t)4 * QUEUES * p * sizeof(uint32_t);
  sort_key_t *by_first = sfc_alloc(c->a, bytes);
  if (!by_first)
    return oom(c, bytes);
  memset(by_first, 0, bytes);
  sort_key_t *by_last = by_first + m, *coord = by_last + m;
  uint32_t *tree = (uint32_t *)(coord + 2 * (size_t)m);
  uint32_t j = 0;
  for (uint32_t i = 0; i < nb; i++)
    if (blocks[i].bytes > 0 && first_access(c, host, i) != NONE) {
      by_first[j] = (sort_key_t){blocks[i].first_step, i};
      by_last[j] = (sort_key_t){blocks[i].last_step, i};
      coord[2 * j] = (sort_key_t){blocks[i].offset, 0};
      coord[2 * j + 1] = (sort_key_t){blocks[i].offset + blocks[i].bytes, 0};
      j++;
    }
  heap_sort(by_first, m);
  heap_sort(by_last, m);
  heap_sort(coord, 2 * (size_t)m);
  uint32_t nc = 0;
  for (uint32_t i = 0; i < 2 * m; i++)
    if (nc == 0 || coord[i].hi != coord[nc - 1].hi)
      coord[nc++] = coord[i];
  sfc_status_t st = SFC_OK;
  uint32_t in = 0;
  for (uint32_t f = 0; f < m && st == SFC_OK; f++) {
    uint32_t b = (uint32_t)by_first[f].lo;
    const sfc_plan_block_t *x = &blocks[b];
    for (; in < m && by_last[in].hi < x->first_step; in++) { /* earlier occupants */
      uint32_t a = (uint32_t)by_last[in].lo;
      const sfc_plan_block_t *y = &blocks[a];
      uint32_t l = coord_index(coord, nc, y->offset),
               r = coord_index(coord, nc, y->offset + y->bytes);
      for (int q = 0; q < QUEUES; q++) {
        uint32_t last = last_access(c, host, a, q);
        if (last != NONE)
          mt_raise(tree + (size_t)4 * q * p, tree + (size_t)(4 * q + 2) * p, p, l, r,
                   seq_of(c, last));
      }
    }
    uint32_t l = coord_index(coord, nc, x->offset),
             r = coord_index(coord, nc, x->offset + x->bytes);
    uint32_t w = first_access(c, host, b);
    for (int q = 0; q < QUEUES && st == SFC_OK; q++) {
      uint32_t known = c->clock[3 * (size_t)w + q];
      if (mt_max(tree + (size_t)4 * q * p, tree + (size_t)(4 * q + 2) * p, p, l, r) <= known)
        continue;
      uint32_t a = reuse_culprit(c, blocks, nb, host, b, q, known);
      if (a == NONE) /* cannot happen: the tree holds only such occupants */
        st = sfc_error_set(c->err, SFC_ERR_VERIFY, "%s: reuses bytes before they are free",
                           bdesc(c, 0, sec, b, x));
      else
        st = sfc_error_set(c->err, SFC_ERR_VERIFY,
                           "%s reuses bytes of %s, but its first access, %s, does not wait for %s",
                           bdesc(c, 0, sec, b, x), bdesc(c, 1, sec, a, &blocks[a]), ndesc(c, 2, w),
                           ndesc(c, 3, last_access(c, host, a, q)));
    }
  }
  sfc_free(c->a, by_first, bytes);
  return st;
}

/* ---- driver --------------------------------------------------------------------- */

sfc_status_t sfcrt_plan_validate(const sfc_plan_view_t *v, const sfc_allocator_t *alloc,
                                 sfc_error_t *err) {
  vctx_t c = {.v = v, .a = alloc, .err = err};
  SFC_TRY(refs_graph(&c));
  SFC_TRY(refs_blocks(&c, "BLOCKS", v->blocks, v->block_count));
  SFC_TRY(refs_blocks(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count));
  SFC_TRY(refs_schedule(&c));

  /* every per-record table of the semantic checks, in one allocation */
  size_t nodes = (size_t)v->step_count + v->swap_count, nb = v->block_count;
  size_t nh = v->host_block_count, nt = v->tensor_count;
  size_t words = 3 * nodes + v->swap_count + 7 * nb + 3 * nh + 3 * nt;
  size_t bytes = (words ? words : 1) * sizeof(uint32_t);
  uint32_t *mem = sfc_alloc(alloc, bytes);
  if (!mem)
    return oom(&c, bytes);
  memset(mem, 0, bytes);
  c.clock = mem;
  c.swap_seq = c.clock + 3 * nodes;
  c.fill = c.swap_seq + v->swap_count;
  c.first_use = c.fill + nb;
  c.last_use = c.first_use + nb;
  c.last_out = c.last_use + nb;
  c.first_rd = c.last_out + nb;
  uint32_t *last_write = c.first_rd + nb;
  c.h_first_out = last_write + nb;
  c.h_last_out = c.h_first_out + nh;
  c.h_last_in = c.h_last_out + nh;
  uint32_t *persistent = c.h_last_in + nh;
  c.acc = persistent + nt;
  c.home = c.acc + nt;
  uint32_t *dirty = c.home + nt;
  for (size_t i = 0; i < nb; i++)
    c.fill[i] = c.first_use[i] = c.last_out[i] = last_write[i] = dirty[i] = NONE;
  for (size_t i = 0; i < nh; i++)
    c.h_first_out[i] = c.h_last_out[i] = c.h_last_in[i] = NONE;
  for (size_t i = 0; i < nt; i++)
    persistent[i] = c.home[i] = NONE;
  for (uint32_t i = v->host_block_count; i-- > 0;) /* the first PERSISTENT host block */
    if (v->host_blocks[i].flags & SFC_BLOCK_PERSISTENT)
      c.home[v->host_blocks[i].tensor] = i;

  sfc_status_t s = check_header(&c);
  if (s == SFC_OK)
    s = check_block_records(&c, "BLOCKS", v->blocks, v->block_count, v->header.arena_bytes, 1,
                            persistent);
  if (s == SFC_OK)
    s = check_block_records(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count,
                            v->header.host_arena_bytes, 0, persistent);
  if (s == SFC_OK)
    s = check_overlaps(&c, "BLOCKS", v->blocks, v->block_count);
  if (s == SFC_OK)
    s = check_overlaps(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count);
  if (s == SFC_OK)
    s = check_pages(&c);
  if (s == SFC_OK)
    s = check_steps(&c);
  if (s == SFC_OK)
    s = check_segments_boxes(&c);
  if (s == SFC_OK)
    s = check_op_maps(&c);
  if (s == SFC_OK)
    s = check_tile_maps(&c);
  if (s == SFC_OK)
    s = check_swaps(&c);
  if (s == SFC_OK)
    s = check_deps(&c);
  if (s == SFC_OK) {
    compute_clocks(&c);
    s = check_blocks_flow(&c);
  }
  if (s == SFC_OK)
    s = check_copies(&c, last_write, dirty);
  if (s == SFC_OK)
    s = check_reuse(&c, 0);
  if (s == SFC_OK)
    s = check_reuse(&c, 1);
  sfc_free(alloc, mem, bytes);
  return s;
}
