/* pack_greedy.c — greedy by size (TensorFlow Lite Micro's GreedyMemoryPlanner).
 *
 * Blocks are taken by size descending (ties: earlier start, then lower index).
 * Each goes to the lowest aligned offset where it collides with no block placed
 * before it whose lifetime intersects its own: the placed blocks that overlap in
 * time are sorted by offset and the first gap large enough wins — including gaps
 * below placed blocks, so A(100,[0,2)), B(80,[1,3)), C(60,[2,4)) pack into 180
 * (C slides under B, beside A), not 240.
 *
 * Finding the placed blocks that overlap a lifetime: time is compressed to the
 * distinct event times and a segment tree is built over the elementary slots. A
 * placed block is stored in the O(log T) nodes of its lifetime's canonical cover,
 * and each node counts the blocks stored in its subtree. A query reports the blocks
 * of every node its lifetime intersects, and of whole subtrees inside it (empty
 * subtrees pruned): every reported block does overlap, so the cost is
 * O(log T + k log T) for k overlapping blocks, duplicates removed with a stamp.
 * With the sort of the k candidates by offset, greedy costs O(sum k log k): linear
 * in the size of the live set at each block, which is the nature of the algorithm
 * (TFLite Micro walks every placed block). The packer portfolio adds faster ones.
 *
 * Pre-placed blocks (fixed) are stored first at their given offsets; the others
 * are placed around them, so the whole greedy family honours offline offsets.
 *
 * sfc_pack_greedy_ordered is the same placement under any order the caller gives
 * (pack_order.c builds them), taking the lowest gap that holds the block (first
 * fit) or the tightest one (best fit; the space above every candidate only when no
 * gap holds it).
 */
#include <stdlib.h>
#include <string.h>

#include "pack.h"

/* A node of the segment tree over time slots. */
typedef struct node {
  uint32_t *ids; /* blocks whose lifetime covers this node's whole range */
  uint32_t count, capacity;
  uint32_t sub; /* blocks stored in this subtree, to prune empty subtrees */
} node_t;

typedef struct tree {
  node_t *nodes; /* [2 * leaves], node 1 is the root over slots [0, leaves) */
  uint32_t leaves;
  uint32_t *stamp; /* [blocks] last query that reported the block */
  uint32_t query;
  uint32_t *out; /* [blocks] reported blocks of the current query */
  size_t n_out;
} tree_t;

/* qsort has no user pointer in C11, so sorts work on items carrying their keys. */
typedef struct item {
  uint64_t key;  /* size (descending sort) or offset (ascending sort) */
  int64_t start; /* tie-break for the size order */
  uint32_t id;
} item_t;

static int by_size_desc(const void *pa, const void *pb) {
  const item_t *x = pa, *y = pb;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

/* A placed block as the gap search needs it. */
typedef struct span {
  uint64_t offset, end; /* end = offset + size rounded up to the alignment */
} span_t;

/* Sorts spans by offset (ties in any order: the gap search takes the max end).
 * LSD radix sort over the bytes where the offsets differ, insertion sort when
 * short: the candidate sort is the packer's hot loop. */
static void sort_spans(span_t *a, span_t *tmp, size_t n) {
  if (n < 48) {
    for (size_t i = 1; i < n; i++) {
      span_t x = a[i];
      size_t j = i;
      for (; j > 0 && a[j - 1].offset > x.offset; j--)
        a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint64_t all_or = 0, all_and = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    all_or |= a[i].offset;
    all_and &= a[i].offset;
  }
  uint64_t varying = all_or ^ all_and;
  span_t *src = a, *dst = tmp;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xFF) == 0)
      continue;
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++)
      count[((src[i].offset >> shift) & 0xFF) + 1]++;
    for (int d = 0; d < 256; d++)
      count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++)
      dst[count[(src[i].offset >> shift) & 0xFF]++] = src[i];
    span_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, n * sizeof *a);
}

static bool node_push(node_t *n, uint32_t id) {
  if (n->count == n->capacity) {
    uint32_t cap = n->capacity ? n->capacity * 2 : 4;
    uint32_t *ids = realloc(n->ids, cap * sizeof *ids);
    if (!ids)
      return false;
    n->ids = ids;
    n->capacity = cap;
  }
  n->ids[n->count++] = id;
  return true;
}

/* Stores block id in the canonical cover of slots [l, r) under node v = [a, b). */
static bool tree_insert(tree_t *t, uint32_t v, uint32_t a, uint32_t b, uint32_t l, uint32_t r,
                        uint32_t id) {
  if (r <= a || b <= l)
    return true;
  t->nodes[v].sub++;
  if (l <= a && b <= r)
    return node_push(&t->nodes[v], id);
  uint32_t m = a + (b - a) / 2;
  return tree_insert(t, 2 * v, a, m, l, r, id) && tree_insert(t, 2 * v + 1, m, b, l, r, id);
}

static void report(tree_t *t, const node_t *n) {
  for (uint32_t i = 0; i < n->count; i++) {
    uint32_t id = n->ids[i];
    if (t->stamp[id] != t->query) {
      t->stamp[id] = t->query;
      t->out[t->n_out++] = id;
    }
  }
}

static void report_subtree(tree_t *t, uint32_t v) {
  if (v >= 2 * t->leaves || t->nodes[v].sub == 0)
    return;
  report(t, &t->nodes[v]);
  report_subtree(t, 2 * v);
  report_subtree(t, 2 * v + 1);
}

/* Reports every stored block whose lifetime intersects slots [l, r). */
static void tree_query(tree_t *t, uint32_t v, uint32_t a, uint32_t b, uint32_t l, uint32_t r) {
  if (r <= a || b <= l || t->nodes[v].sub == 0)
    return;
  if (l <= a && b <= r) {
    report_subtree(t, v);
    return;
  }
  report(t, &t->nodes[v]); /* covers [a, b), which intersects [l, r) */
  uint32_t m = a + (b - a) / 2;
  tree_query(t, 2 * v, a, m, l, r);
  tree_query(t, 2 * v + 1, m, b, l, r);
}

sfc_status_t sfc_pack_greedy_ordered(sfc_pack_problem_t *p, const uint32_t *given,
                                     sfc_pack_gap_t gap, sfc_pack_result_t *out, sfc_error_t *err) {
  size_t n = p->count;
  uint64_t a = p->alignment;
  out->algorithm = "greedy-size";
  out->peak = 0;
  if (n == 0)
    return SFC_OK;
  if (n > UINT32_MAX / 4)
    return sfc_error_set(err, SFC_ERR_LIMIT, "greedy: too many blocks (%zu)", n);

  item_t *order = malloc(n * sizeof *order);
  span_t *cand = malloc(n * sizeof *cand), *cand_tmp = malloc(n * sizeof *cand_tmp);
  uint32_t *slot_lo = malloc(n * sizeof *slot_lo), *slot_hi = malloc(n * sizeof *slot_hi);
  int64_t *times = malloc(2 * n * sizeof *times);
  tree_t t = {.stamp = calloc(n, sizeof(uint32_t)), .out = malloc(n * sizeof(uint32_t))};
  sfc_status_t st = SFC_OK;
  if (!order || !cand || !cand_tmp || !slot_lo || !slot_hi || !times || !t.stamp || !t.out)
    goto oom;

  /* Compress time: block i occupies elementary slots [slot_lo, slot_hi). */
  size_t nt = sfc_pack_times_distinct(p, times);
  t.leaves = 1;
  while (t.leaves < nt - 1)
    t.leaves *= 2;
  t.nodes = calloc(2 * (size_t)t.leaves, sizeof *t.nodes);
  if (!t.nodes)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    slot_lo[i] = sfc_pack_time_rank(times, nt, p->blocks[i].start);
    slot_hi[i] = sfc_pack_time_rank(times, nt, p->blocks[i].end);
    order[i] = (item_t){p->blocks[i].size, p->blocks[i].start, (uint32_t)i};
  }
  if (!given)
    qsort(order, n, sizeof *order, by_size_desc);
  /* Pre-placed blocks first, where they were given: the others go around them. */
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *b = &p->blocks[i];
    if (!b->fixed)
      continue;
    if (b->offset + b->size > out->peak)
      out->peak = b->offset + b->size;
    if (!tree_insert(&t, 1, 0, t.leaves, slot_lo[i], slot_hi[i], (uint32_t)i))
      goto oom;
  }

  for (size_t k = 0; k < n; k++) {
    uint32_t i = given ? given[k] : order[k].id;
    sfc_pack_block_t *b = &p->blocks[i];
    if (b->fixed)
      continue;
    t.query = (uint32_t)k + 1;
    t.n_out = 0;
    tree_query(&t, 1, 0, t.leaves, slot_lo[i], slot_hi[i]);
    for (size_t c = 0; c < t.n_out; c++) {
      const sfc_pack_block_t *o = &p->blocks[t.out[c]];
      cand[c] = (span_t){o->offset, (o->offset + o->size + a - 1) & ~(a - 1)};
    }
    sort_spans(cand, cand_tmp, t.n_out);
    uint64_t off = 0, best = UINT64_MAX, best_room = UINT64_MAX;
    for (size_t c = 0; c < t.n_out; c++) {
      if (off + b->size <= cand[c].offset) { /* the gap below this block holds b */
        if (gap == SFC_PACK_GAP_FIRST) {
          best = off;
          break;
        }
        if (cand[c].offset - off < best_room) { /* best fit: the tightest gap */
          best_room = cand[c].offset - off;
          best = off;
        }
      }
      if (cand[c].end > off)
        off = cand[c].end;
    }
    b->offset = best != UINT64_MAX ? best : off;
    off = b->offset;
    if (off + b->size > out->peak)
      out->peak = off + b->size;
    if (!tree_insert(&t, 1, 0, t.leaves, slot_lo[i], slot_hi[i], i))
      goto oom;
  }
  goto done;

oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "greedy: out of memory for %zu blocks", n);
done:
  if (t.nodes)
    for (size_t v = 0; v < 2 * (size_t)t.leaves; v++)
      free(t.nodes[v].ids);
  free(t.nodes);
  free(t.stamp);
  free(t.out);
  free(order);
  free(cand);
  free(cand_tmp);
  free(slot_lo);
  free(slot_hi);
  free(times);
  return st;
}

sfc_status_t sfc_pack_greedy_size(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                                  sfc_pack_result_t *out, sfc_error_t *err) {
  (void)opt;
  return sfc_pack_greedy_ordered(p, NULL, SFC_PACK_GAP_FIRST, out, err);
}
