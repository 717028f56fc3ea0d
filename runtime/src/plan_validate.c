/* plan_validate.c — references and semantics of a plan the reader has copied in.
 *
 * Runs after plan_reader.c has checked the file's structure. Two passes, each
 * stopping at the first violation with one line naming the record and field:
 *
 *  references (SFC_ERR_BAD_INPUT): the string blob starts and ends with NUL and
 *    every string offset is inside it; every tensor, op, block, step, swap, dep,
 *    segment, tile and box index is in range; enums are known values; operand,
 *    box and dep ranges lie inside their arrays. After this pass, indexing is safe.
 *
 *  semantics (SFC_ERR_VERIFY): blocks fit their arena, are aligned, cover their
 *    tensor and have first <= last; no two blocks whose step ranges intersect
 *    share a byte; every step operand is a block of the op's operand tensor that
 *    is resident at the step; segments and boxes agree with their steps; swaps
 *    move their tensor between its blocks at a time both ends exist and are
 *    sorted by issue_step; deps point backwards in issue order; every SWAPPED_IN
 *    block is filled by exactly one swap-in that its first user waits for.
 *
 * The overlap check is a sweep over steps in O(n log n): blocks enter the live set
 * at first_step and leave after last_step. The live set is kept sorted by
 * (offset, index); its blocks are pairwise disjoint, so a new block can only
 * overlap its predecessor or its successor. The set is a Fenwick tree over the
 * blocks' ranks in (offset, index) order: insert, erase and "k-th live block" are
 * O(log n) with no recursion and no worst case an adversarial file could provoke.
 * Sorting is an in-place heapsort, so every byte comes from the caller's allocator.
 */
#include "sfc/plan_reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NONE SFC_PLAN_NONE

typedef struct vctx {
  const sfc_plan_view_t *v;
  const sfc_allocator_t *a;
  sfc_error_t *err;
  char desc[2][160]; /* block descriptions for messages */
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

/* ---- semantics: blocks -------------------------------------------------------- */

#define VERIFY(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return sfc_error_set(c->err, SFC_ERR_VERIFY, __VA_ARGS__);                                   \
  } while (0)

static sfc_status_t check_block_records(vctx_t *c, const char *sec, const sfc_plan_block_t *blocks,
                                        uint32_t n, uint64_t arena, int device) {
  const sfc_plan_view_t *v = c->v;
  uint32_t align = device ? v->header.alignment : 1;
  for (uint32_t i = 0; i < n; i++) {
    const sfc_plan_block_t *b = &blocks[i];
    const char *d = bdesc(c, 0, sec, i, b);
    VERIFY(b->first_step <= b->last_step, "%s: first_step %" PRIu32 " is after last_step %" PRIu32,
           d, b->first_step, b->last_step);
    if (b->flags & SFC_BLOCK_EXTERNAL) {
      VERIFY(b->offset == 0 && b->bytes == 0,
             "%s: EXTERNAL but offset %" PRIu64 " and bytes %" PRIu64 " (both must be 0)", d,
             b->offset, b->bytes);
      continue;
    }
    VERIFY(b->offset % align == 0,
           "%s: offset %" PRIu64 " is not a multiple of the alignment %" PRIu32, d, b->offset,
           align);
    VERIFY(b->offset <= arena && b->bytes <= arena - b->offset,
           "%s: bytes [%" PRIu64 ", %" PRIu64 ") extend past the %s (%" PRIu64 " bytes)", d,
           b->offset, b->offset + b->bytes, device ? "arena" : "host arena", arena);
    if (!device)
      continue;
    uint64_t tb = v->tensors[b->tensor].bytes;
    VERIFY(b->bytes >= tb, "%s: %" PRIu64 " bytes, smaller than the tensor (%" PRIu64 " bytes)", d,
           b->bytes, tb);
    VERIFY(!(b->flags & SFC_BLOCK_PERSISTENT) ||
               (b->first_step == 0 && b->last_step == v->step_count - 1),
           "%s: PERSISTENT but live only at steps %" PRIu32 "..%" PRIu32 " (must be 0..%" PRIu32
           ")",
           d, b->first_step, b->last_step, v->step_count - 1);
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

/* ---- semantics: steps, segments, swaps, deps ---------------------------------- */

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
    }
    if (s->segment != NONE) {
      const sfc_plan_segment_t *g = &v->segments[s->segment];
      VERIFY(k >= g->first_step && k - g->first_step < g->step_count,
             "STEPS[%" PRIu32 "]: in SEGMENTS[%" PRIu32 "] but outside its steps [%" PRIu32
             ", %" PRIu64 ")",
             k, s->segment, g->first_step, (uint64_t)g->first_step + g->step_count);
      VERIFY(s->op >= g->first_op && s->op - g->first_op < g->op_count,
             "STEPS[%" PRIu32 "]: OPS[%" PRIu32 "] is not one of SEGMENTS[%" PRIu32 "]'s ops", k,
             s->op, s->segment);
    }
  }
  return SFC_OK;
}

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
  for (uint32_t i = 0; i < v->box_count; i++)
    for (uint32_t d = 0; d < v->boxes[i].ndim; d++)
      VERIFY(v->boxes[i].lo[d] <= v->boxes[i].hi[d],
             "BOXES[%" PRIu32 "]: lo[%" PRIu32 "] %" PRId64 " > hi[%" PRIu32 "] %" PRId64, i, d,
             v->boxes[i].lo[d], d, v->boxes[i].hi[d]);
  return SFC_OK;
}

static int live_at(const sfc_plan_block_t *b, uint32_t k) {
  return b->first_step <= k && k <= b->last_step;
}

/* fill[b] = the swap-in that fills device block b (NONE if none). */
static sfc_status_t check_swaps(vctx_t *c, uint32_t *fill) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t i = 0; i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    const sfc_plan_block_t *db = &v->blocks[w->device_block], *hb = &v->host_blocks[w->host_block];
    const sfc_plan_tensor_t *t = &v->tensors[w->tensor];
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
    VERIFY(w->bytes <= db->bytes && w->bytes <= hb->bytes && w->bytes <= t->bytes,
           "SWAPS[%" PRIu32 "]: %" PRIu64 " bytes, more than the tensor (%" PRIu64
           "), its device block (%" PRIu64 ") or its host block (%" PRIu64 ") holds",
           i, w->bytes, t->bytes, db->bytes, hb->bytes);
    const char *d = bdesc(c, 0, "BLOCKS", w->device_block, db);
    if (w->direction == SFC_SWAP_OUT) {
      VERIFY(k >= 1 && live_at(db, k - 1),
             "SWAPS[%" PRIu32 "]: swap-out issued before step %" PRIu32
             " but %s is not live at the step before (live at steps %" PRIu32 "..%" PRIu32 ")",
             i, k, d, db->first_step, db->last_step);
      continue;
    }
    VERIFY(k < v->step_count && live_at(db, k),
           "SWAPS[%" PRIu32 "]: swap-in issued before step %" PRIu32
           " but %s is not live at that step (live at steps %" PRIu32 "..%" PRIu32 ")",
           i, k, d, db->first_step, db->last_step);
    VERIFY(db->flags & SFC_BLOCK_SWAPPED_IN,
           "SWAPS[%" PRIu32 "]: swap-in into %s, which is not marked SWAPPED_IN", i, d);
    VERIFY(fill[w->device_block] == NONE,
           "%s: filled by two swap-ins (SWAPS[%" PRIu32 "] and SWAPS[%" PRIu32 "])", d,
           fill[w->device_block], i);
    fill[w->device_block] = i;
  }
  return SFC_OK;
}

/* Issue order: swaps with issue_step k (in SWAPS order), then step k. */
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

static sfc_status_t check_deps_and_fills(vctx_t *c, uint32_t *fill, uint32_t *first_use) {
  const sfc_plan_view_t *v = c->v;
  for (uint32_t k = 0; k < v->step_count; k++)
    SFC_TRY(check_dep_list(c, "STEPS", k, 1, v->steps[k].dep_begin, v->steps[k].dep_count));
  for (uint32_t i = 0; i < v->swap_count; i++)
    SFC_TRY(check_dep_list(c, "SWAPS", i, 0, v->swaps[i].dep_begin, v->swaps[i].dep_count));
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    for (uint32_t j = 0; j < n; j++)
      if (first_use[v->step_operands[s->operand_begin + j]] == NONE)
        first_use[v->step_operands[s->operand_begin + j]] = k;
  }
  for (uint32_t bi = 0; bi < v->block_count; bi++) {
    const sfc_plan_block_t *b = &v->blocks[bi];
    if (!(b->flags & SFC_BLOCK_SWAPPED_IN))
      continue;
    VERIFY(fill[bi] != NONE, "%s: SWAPPED_IN but no swap-in fills it",
           bdesc(c, 0, "BLOCKS", bi, b));
    uint32_t k = first_use[bi];
    if (k == NONE)
      continue;
    const sfc_plan_step_t *s = &v->steps[k];
    int found = 0;
    for (uint32_t j = s->dep_begin; j - s->dep_begin < s->dep_count && !found; j++)
      found = v->deps[j].node_kind == SFC_NODE_SWAP && v->deps[j].index == fill[bi];
    VERIFY(found,
           "STEPS[%" PRIu32 "] is the first use of %s but does not depend on SWAPS[%" PRIu32
           "], the swap-in that fills it",
           k, bdesc(c, 0, "BLOCKS", bi, b), fill[bi]);
  }
  return SFC_OK;
}

sfc_status_t sfcrt_plan_validate(const sfc_plan_view_t *v, const sfc_allocator_t *alloc,
                                 sfc_error_t *err) {
  vctx_t c = {.v = v, .a = alloc, .err = err};
  SFC_TRY(refs_graph(&c));
  SFC_TRY(refs_blocks(&c, "BLOCKS", v->blocks, v->block_count));
  SFC_TRY(refs_blocks(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count));
  SFC_TRY(refs_schedule(&c));

  SFC_TRY(check_block_records(&c, "BLOCKS", v->blocks, v->block_count, v->header.arena_bytes, 1));
  SFC_TRY(check_block_records(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count,
                              v->header.host_arena_bytes, 0));
  SFC_TRY(check_overlaps(&c, "BLOCKS", v->blocks, v->block_count));
  SFC_TRY(check_overlaps(&c, "HOST_BLOCKS", v->host_blocks, v->host_block_count));
  SFC_TRY(check_steps(&c));
  SFC_TRY(check_segments_boxes(&c));

  size_t bytes = (size_t)v->block_count * 2 * sizeof(uint32_t);
  uint32_t *fill = bytes ? sfc_alloc(alloc, bytes) : NULL;
  if (bytes && !fill)
    return oom(&c, bytes);
  uint32_t *first_use = bytes ? fill + v->block_count : NULL;
  if (bytes)
    memset(fill, 0xFF, bytes); /* NONE */
  sfc_status_t s = check_swaps(&c, fill);
  if (s == SFC_OK)
    s = check_deps_and_fills(&c, fill, first_use);
  sfc_free(alloc, fill, bytes);
  return s;
}
