/* pack_oracle.h — test-only helpers for the exact packers: an independent
 * brute-force optimum, a seeded instance generator and a window cutter.
 *
 * Brute force: every packing pushed down is "each block at the lowest offset above
 * the time-overlapping blocks before it" for some order of the blocks (list them by
 * offset), so the minimum over all n! orders of that placement is the optimum.
 * Written from the definition, sharing nothing with the packers; n <= 8.
 */
#ifndef SFC_TEST_PACK_ORACLE_H
#define SFC_TEST_PACK_ORACLE_H

#include <stdint.h>
#include <stdlib.h>

#include "pack.h"

static inline int oracle_overlap(const sfc_pack_block_t *a, const sfc_pack_block_t *b) {
  return a->start < b->end && b->start < a->end;
}

static inline uint64_t oracle_rec(const sfc_pack_block_t *b, size_t n, uint64_t align,
                                  uint32_t *perm, size_t k, uint64_t *off, uint64_t peak,
                                  uint64_t best) {
  if (peak >= best)
    return best;
  if (k == n)
    return peak;
  for (size_t c = k; c < n; c++) {
    uint32_t t = perm[k];
    perm[k] = perm[c];
    perm[c] = t;
    uint32_t i = perm[k];
    uint64_t x = 0;
    for (size_t l = 0; l < k; l++) {
      uint32_t j = perm[l];
      uint64_t top = off[j] + (b[j].size + align - 1) / align * align;
      if (oracle_overlap(&b[i], &b[j]) && top > x)
        x = top;
    }
    off[i] = x;
    uint64_t p = x + b[i].size > peak ? x + b[i].size : peak;
    best = oracle_rec(b, n, align, perm, k + 1, off, p, best);
    perm[c] = perm[k];
    perm[k] = t;
  }
  return best;
}

/* The optimal peak of blocks[0..n) (n <= 8), offsets multiples of align. */
static inline uint64_t oracle_optimum(const sfc_pack_block_t *b, size_t n, uint64_t align) {
  uint32_t perm[8];
  uint64_t off[8];
  for (size_t i = 0; i < n; i++)
    perm[i] = (uint32_t)i;
  return oracle_rec(b, n, align, perm, 0, off, 0, UINT64_MAX);
}

/* xorshift64*: reproducible across platforms, unlike rand(). */
static inline uint64_t oracle_rand(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(2685821657736338717);
}

/* n blocks, sizes unit * [1, max_units], lifetimes inside [0, horizon). */
static inline void oracle_random(sfc_pack_block_t *b, size_t n, uint64_t *state, uint64_t unit,
                                 uint64_t max_units, int64_t horizon) {
  for (size_t i = 0; i < n; i++) {
    int64_t s = (int64_t)(oracle_rand(state) % (uint64_t)(horizon - 1));
    int64_t len =
        1 + (int64_t)(oracle_rand(state) % (uint64_t)(horizon - s - 1 > 0 ? horizon - s - 1 : 1));
    b[i] = (sfc_pack_block_t){
        .size = unit * (1 + oracle_rand(state) % max_units), .start = s, .end = s + len};
  }
}

#endif /* SFC_TEST_PACK_ORACLE_H */
