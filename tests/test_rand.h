/* test_rand.h — the seeded generator of the randomised tests: xorshift64 (Marsaglia,
 * "Xorshift RNGs", J. Stat. Software 2003; shifts 13, 7, 17). Each test keeps its own
 * state (a fixed non-zero seed), so its instances are the same in every run.
 *
 *   static uint64_t rng = 0x9E3779B97F4A7C15ull;
 *   uint64_t size = 1 + test_rand_next(&rng) % 5000;
 *
 * O(1) a call. Header-only (static inline) so each test stays one file.
 */
#ifndef SFC_TEST_RAND_H
#define SFC_TEST_RAND_H

#include <stdint.h>

static inline uint64_t test_rand_next(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

#endif /* SFC_TEST_RAND_H */
