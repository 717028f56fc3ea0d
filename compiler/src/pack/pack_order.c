/* pack_order.c — block orders for the greedy portfolio, and the greedy packers
 * registered under each order and gap rule (greedy-lifetime, greedy-area-bestgap…).
 *
 * Greedy placement (pack_greedy.c) is only as good as its order; on real traces
 * the best of a few orders reaches the lower bound or close to it (TFLite's GPU
 * planner ships size and breadth orders; Pisarchyk & Lee 2020, "Efficient Memory
 * Management for Deep Neural Net Inference", compare them). The orders here:
 * size, lifetime, area (size x lifetime) descending, and start ascending, each
 * with ties broken towards larger sizes and finally the block index. One sort each:
 * O(n log n).
 */
#include <stdlib.h>

#include "pack.h"

const char *const sfc_pack_order_names[SFC_PACK_ORDER_COUNT] = {"size", "lifetime", "area",
                                                                "start"};

/* qsort has no user pointer in C11: items carry their keys. */
typedef struct keyed {
  uint64_t k1, k2; /* compared descending */
  uint32_t id;
} keyed_t;

static int keyed_cmp(const void *pa, const void *pb) {
  const keyed_t *x = pa, *y = pb;
  if (x->k1 != y->k1)
    return x->k1 > y->k1 ? -1 : 1;
  if (x->k2 != y->k2)
    return x->k2 > y->k2 ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

/* Maps a signed time onto an unsigned key with the same order. */
static uint64_t time_key(int64_t t) {
  return (uint64_t)t ^ (UINT64_C(1) << 63);
}

sfc_status_t sfc_pack_order_make(const sfc_pack_problem_t *p, sfc_pack_order_t kind,
                                 uint32_t *order, sfc_error_t *err) {
  size_t n = p->count;
  keyed_t *k = malloc((n ? n : 1) * sizeof *k);
  if (!k)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory ordering %zu blocks", n);
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *b = &p->blocks[i];
    uint64_t life = (uint64_t)b->end - (uint64_t)b->start;
    keyed_t *x = &k[i];
    x->id = (uint32_t)i;
    switch (kind) {
      case SFC_PACK_ORDER_LIFETIME:
        *x = (keyed_t){life, b->size, (uint32_t)i};
        break;
      case SFC_PACK_ORDER_AREA: {
        /* size <= 2^62 and life < 2^64: compare size*life in 128 bits via a double
         * first key (exact enough to order) and the size second. */
        double area = (double)b->size * (double)life;
        uint64_t ak = area >= 1.8e19 ? UINT64_MAX : (uint64_t)area;
        *x = (keyed_t){ak, b->size, (uint32_t)i};
        break;
      }
      case SFC_PACK_ORDER_START:
        *x = (keyed_t){~time_key(b->start), b->size, (uint32_t)i};
        break;
      case SFC_PACK_ORDER_SIZE:
      default:
        *x = (keyed_t){b->size, ~time_key(b->start), (uint32_t)i};
        break;
    }
  }
  qsort(k, n, sizeof *k, keyed_cmp);
  for (size_t i = 0; i < n; i++)
    order[i] = k[i].id;
  free(k);
  return SFC_OK;
}

static sfc_status_t run_order(sfc_pack_problem_t *p, sfc_pack_order_t kind, sfc_pack_gap_t gap,
                              const char *name, sfc_pack_result_t *out, sfc_error_t *err) {
  uint32_t *order = malloc((p->count ? p->count : 1) * sizeof *order);
  if (!order)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  sfc_status_t st = sfc_pack_order_make(p, kind, order, err);
  if (st == SFC_OK)
    st = sfc_pack_greedy_ordered(p, order, gap, out, err);
  out->algorithm = name;
  free(order);
  return st;
}

#define SFC_GREEDY(fn, kind, gap, name)                                                            \
  sfc_status_t fn(sfc_pack_problem_t *p, const sfc_pack_options_t *opt, sfc_pack_result_t *out,    \
                  sfc_error_t *err) {                                                              \
    (void)opt;                                                                                     \
    return run_order(p, kind, gap, name, out, err);                                                \
  }

SFC_GREEDY(sfc_pack_greedy_lifetime, SFC_PACK_ORDER_LIFETIME, SFC_PACK_GAP_FIRST, "greedy-lifetime")
SFC_GREEDY(sfc_pack_greedy_area, SFC_PACK_ORDER_AREA, SFC_PACK_GAP_FIRST, "greedy-area")
SFC_GREEDY(sfc_pack_greedy_start, SFC_PACK_ORDER_START, SFC_PACK_GAP_FIRST, "greedy-start")
SFC_GREEDY(sfc_pack_greedy_size_bestgap, SFC_PACK_ORDER_SIZE, SFC_PACK_GAP_BEST,
           "greedy-size-bestgap")
SFC_GREEDY(sfc_pack_greedy_lifetime_bestgap, SFC_PACK_ORDER_LIFETIME, SFC_PACK_GAP_BEST,
           "greedy-lifetime-bestgap")
SFC_GREEDY(sfc_pack_greedy_area_bestgap, SFC_PACK_ORDER_AREA, SFC_PACK_GAP_BEST,
           "greedy-area-bestgap")
SFC_GREEDY(sfc_pack_greedy_start_bestgap, SFC_PACK_ORDER_START, SFC_PACK_GAP_BEST,
           "greedy-start-bestgap")
