/* integrity.c — fill and check the host device's integrity patterns.
 *
 * The pattern is a counter-mode hash: word w of (tensor t, version v) is
 * splitmix64(seed + w) with seed = splitmix64(t * K1 ^ v * K2) (splitmix64: Steele,
 * Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Fill
 * and check are O(bytes), byte-order independent (words are stored little-endian
 * byte by byte where unaligned) and need no memory of their own.
 */
#include "integrity.h"

#include <string.h>

static uint64_t mix(uint64_t z) {
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t seed_of(uint32_t tensor, uint64_t version) {
  return mix(((uint64_t)tensor + 1) * UINT64_C(0xD1B54A32D192ED03) ^
             (version + 1) * UINT64_C(0xC2B2AE3D27D4EB4F));
}

static int little_endian(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static void store_le(uint8_t *p, uint64_t w, uint64_t n) {
  if (n == 8 && little_endian()) {
    memcpy(p, &w, 8);
    return;
  }
  for (uint64_t i = 0; i < n; i++)
    p[i] = (uint8_t)(w >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, uint64_t n) {
  uint64_t w = 0;
  if (n == 8 && little_endian()) {
    memcpy(&w, p, 8);
    return w;
  }
  for (uint64_t i = 0; i < n; i++)
    w |= (uint64_t)p[i] << (8 * i);
  return w;
}

uint64_t sfcrt_pattern_word(uint32_t tensor, uint64_t version, uint64_t offset) {
  return mix(seed_of(tensor, version) + offset / 8);
}

void sfcrt_pattern_fill(void *p, uint64_t bytes, uint32_t tensor, uint64_t version) {
  uint8_t *b = p;
  uint64_t seed = seed_of(tensor, version);
  uint64_t words = bytes / 8;
  for (uint64_t w = 0; w < words; w++)
    store_le(b + 8 * w, mix(seed + w), 8);
  if (bytes % 8)
    store_le(b + 8 * words, mix(seed + words), bytes % 8);
}

uint64_t sfcrt_pattern_check(const void *p, uint64_t bytes, uint32_t tensor, uint64_t version,
                             uint64_t *found, uint64_t *expected) {
  const uint8_t *b = p;
  uint64_t seed = seed_of(tensor, version);
  uint64_t words = (bytes + 7) / 8;
  for (uint64_t w = 0; w < words; w++) {
    uint64_t n = (w + 1) * 8 <= bytes ? 8 : bytes % 8;
    uint64_t want = mix(seed + w);
    uint64_t got = load_le(b + 8 * w, n);
    if (n < 8)
      want &= (UINT64_C(1) << (8 * n)) - 1;
    if (got != want) {
      uint64_t off = 8 * w;
      while (((got ^ want) & 0xFF) == 0) {
        got >>= 8, want >>= 8;
        off++;
      }
      if (found)
        *found = load_le(b + 8 * w, n);
      if (expected)
        *expected = n < 8 ? mix(seed + w) & ((UINT64_C(1) << (8 * n)) - 1) : mix(seed + w);
      return off;
    }
  }
  return SFCRT_PATTERN_OK;
}
