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
 * distinct event times and cut into at most 1024 buckets; a placed block is listed
 * in every bucket its lifetime touches, so a query reads only the buckets its own
 * lifetime touches (deduplicated with a stamp per block). Cost O(n (k log k + b))
 * for k time-overlapping blocks and b bucket entries read; the portfolio of the
 * packer issue replaces this with faster structures.
 */
#include <stdlib.h>
#include <string.h>

#include "pack.h"

typedef struct bucket {
  uint32_t *ids;
  uint32_t count, capacity;
} bucket_t;

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

static int by_offset(const void *pa, const void *pb) {
  const item_t *x = pa, *y = pb;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : (a > b);
}

/* Index of t in the sorted distinct times (t is always present). */
static size_t time_index(const int64_t *times, size_t n, int64_t t) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (times[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static bool bucket_push(bucket_t *b, uint32_t id) {
  if (b->count == b->capacity) {
    uint32_t cap = b->capacity ? b->capacity * 2 : 8;
    uint32_t *ids = realloc(b->ids, cap * sizeof *ids);
    if (!ids)
      return false;
    b->ids = ids;
    b->capacity = cap;
  }
  b->ids[b->count++] = id;
  return true;
}

sfc_status_t sfc_pack_greedy_size(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                                  sfc_pack_result_t *out, sfc_error_t *err) {
  (void)opt;
  size_t n = p->count;
  uint64_t a = p->alignment;
  out->algorithm = "greedy-size";
  out->peak = 0;
  if (n == 0)
    return SFC_OK;
  if (n > UINT32_MAX / 2)
    return sfc_error_set(err, SFC_ERR_LIMIT, "greedy-size: too many blocks (%zu)", n);

  item_t *order = malloc(n * sizeof *order);
  item_t *cand = malloc(n * sizeof *cand);
  uint32_t *stamp = calloc(n, sizeof *stamp);
  uint32_t *b_first = malloc(n * sizeof *b_first), *b_last = malloc(n * sizeof *b_last);
  int64_t *times = malloc(2 * n * sizeof *times);
  bucket_t *buckets = NULL;
  sfc_status_t st = SFC_OK;
  if (!order || !cand || !stamp || !b_first || !b_last || !times) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "greedy-size: out of memory for %zu blocks", n);
    goto done;
  }

  /* Compress time and map each lifetime to the buckets it touches. */
  for (size_t i = 0; i < n; i++) {
    times[2 * i] = p->blocks[i].start;
    times[2 * i + 1] = p->blocks[i].end;
  }
  qsort(times, 2 * n, sizeof *times, cmp_i64);
  size_t nt = 0;
  for (size_t i = 0; i < 2 * n; i++)
    if (nt == 0 || times[nt - 1] != times[i])
      times[nt++] = times[i];
  size_t width = (nt + 1023) / 1024, nb = (nt + width - 1) / width;
  buckets = calloc(nb, sizeof *buckets);
  if (!buckets) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "greedy-size: out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    b_first[i] = (uint32_t)(time_index(times, nt, p->blocks[i].start) / width);
    b_last[i] = (uint32_t)((time_index(times, nt, p->blocks[i].end) - 1) / width);
    order[i] = (item_t){p->blocks[i].size, p->blocks[i].start, (uint32_t)i};
  }
  qsort(order, n, sizeof *order, by_size_desc);

  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k].id;
    sfc_pack_block_t *b = &p->blocks[i];
    size_t nc = 0;
    for (uint32_t q = b_first[i]; q <= b_last[i]; q++) {
      for (uint32_t e = 0; e < buckets[q].count; e++) {
        uint32_t j = buckets[q].ids[e];
        if (stamp[j] == k + 1)
          continue;
        stamp[j] = (uint32_t)k + 1;
        if (p->blocks[j].start < b->end && b->start < p->blocks[j].end)
          cand[nc++] = (item_t){p->blocks[j].offset, 0, j};
      }
    }
    qsort(cand, nc, sizeof *cand, by_offset);
    uint64_t off = 0;
    for (size_t c = 0; c < nc; c++) {
      const sfc_pack_block_t *o = &p->blocks[cand[c].id];
      if (off + b->size <= o->offset)
        break; /* the gap below o holds b */
      uint64_t end = (o->offset + o->size + a - 1) & ~(a - 1);
      if (end > off)
        off = end;
    }
    b->offset = off;
    if (off + b->size > out->peak)
      out->peak = off + b->size;
    for (uint32_t q = b_first[i]; q <= b_last[i]; q++) {
      if (!bucket_push(&buckets[q], i)) {
        st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "greedy-size: out of memory");
        goto done;
      }
    }
  }

done:
  if (buckets)
    for (size_t q = 0; q < nb; q++)
      free(buckets[q].ids);
  free(buckets);
  free(order);
  free(cand);
  free(stamp);
  free(b_first);
  free(b_last);
  free(times);
  return st;
}
