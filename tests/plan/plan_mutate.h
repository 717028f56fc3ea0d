/* plan_mutate.h — a structure-aware mutator for plan files, shared by the fuzz target
 * (tests/fuzz/fuzz_plan.c, as LLVMFuzzerCustomMutator) and the mutant census
 * (tests/plan/plan_mutants.c).
 *
 *   uint64_t rng = 42;
 *   size = plan_mutate(data, size, &rng);   // one random edit of one record field
 *   plan_fix_crcs(data, size);              // every CRC-32 and file_bytes made right again
 *
 * A random byte flip almost never survives the CRC-32 checks, and even with the CRCs
 * recomputed it seldom lands on a field that matters. plan_mutate finds the sections
 * through the section table (bounds-checked as the reader does), picks a record of a
 * known kind (or the header's arena, budget, alignment and flags words) and rewrites
 * one 32-bit word of it: +-1, 0, 1, NONE, a bit flip, a small index, twice or half the
 * old value, the same word of another record of the section, or the whole record
 * copied from another one. plan_fix_crcs then recomputes every section CRC the table
 * can reach, the table CRC, file_bytes and the header CRC, so the mutant reaches the
 * reference and semantic checks behind the checksums. Header-only (static), O(size)
 * per call for the CRCs, O(1) for the edit; never reads or writes outside [0, size).
 */
#ifndef SFC_TEST_PLAN_MUTATE_H
#define SFC_TEST_PLAN_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sfc/plan_format.h"

static inline uint64_t plan_mutate_rand(uint64_t *s) { /* xorshift64 (13, 7, 17) */
  uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* The header and section table, when the table lies inside the file as the reader
 * demands; 0 otherwise. */
static inline int plan_mutate_table(const uint8_t *d, size_t size, sfc_plan_header_t *h) {
  if (size < sizeof *h)
    return 0;
  memcpy(h, d, sizeof *h);
  uint64_t table = (uint64_t)h->section_count * h->section_entry_bytes;
  return h->section_count <= SFC_PLAN_MAX_SECTIONS &&
         h->section_entry_bytes >= sizeof(sfc_plan_section_t) &&
         h->section_entry_bytes <= SFC_PLAN_MAX_RECORD_BYTES && h->section_table_offset <= size &&
         table <= size - h->section_table_offset;
}

/* Recomputes every section CRC the table can reach, the table CRC, file_bytes and
 * the header CRC (the reader's bounds rules, so only reachable ranges are summed). */
static inline void plan_fix_crcs(uint8_t *d, size_t size) {
  sfc_plan_header_t h;
  if (size < sizeof h)
    return;
  if (plan_mutate_table(d, size, &h)) {
    for (uint32_t i = 0; i < h.section_count; i++) {
      uint8_t *at = d + h.section_table_offset + (uint64_t)i * h.section_entry_bytes;
      sfc_plan_section_t e;
      memcpy(&e, at, sizeof e);
      if (e.offset <= size && e.bytes <= size - e.offset) {
        e.crc32 = sfc_crc32(0, d + e.offset, (size_t)e.bytes);
        memcpy(at, &e, sizeof e);
      }
    }
    uint64_t table = (uint64_t)h.section_count * h.section_entry_bytes;
    h.section_table_crc32 = sfc_crc32(0, d + h.section_table_offset, (size_t)table);
  } else {
    memcpy(&h, d, sizeof h);
  }
  h.file_bytes = size; /* a mutated size field would only stop the load here */
  h.header_crc32 = sfc_crc32(0, &h, offsetof(sfc_plan_header_t, header_crc32));
  memcpy(d, &h, sizeof h);
}

/* A new value for the 32-bit word `old` of a record of a section with `count` records. */
static inline uint32_t plan_mutate_value(uint32_t old, uint32_t count, uint32_t other,
                                         uint64_t *rng) {
  uint64_t r = plan_mutate_rand(rng);
  switch (r % 12) {
    case 0:
      return old + 1;
    case 1:
      return old - 1;
    case 2:
      return 0;
    case 3:
      return 1;
    case 4:
      return SFC_PLAN_NONE;
    case 5:
    case 6:
      return old ^ (1u << ((r >> 8) % 32));
    case 7:
      return (uint32_t)((r >> 8) % (count + 2u));
    case 8:
      return old * 2;
    case 9:
      return old / 2;
    case 10:
      return other;
    default:
      return (uint32_t)((r >> 8) % 8);
  }
}

/* A random section of a known kind with records, in bounds: its payload's offset and
 * bytes. 0 when there is none (or no readable table). */
static inline int plan_pick_section(const uint8_t *d, size_t size, uint64_t *rng, size_t *offset,
                                    size_t *bytes) {
  sfc_plan_header_t h;
  if (!plan_mutate_table(d, size, &h))
    return 0;
  size_t at[SFC_PLAN_MAX_SECTIONS], len[SFC_PLAN_MAX_SECTIONS];
  uint32_t n = 0;
  for (uint32_t i = 0; i < h.section_count; i++) {
    sfc_plan_section_t e;
    memcpy(&e, d + h.section_table_offset + (uint64_t)i * h.section_entry_bytes, sizeof e);
    if (e.kind >= SFC_SECTION_STRINGS && e.kind <= SFC_SECTION_KIND_MAX && e.bytes > 0 &&
        e.offset <= size && e.bytes <= size - e.offset) {
      at[n] = (size_t)e.offset;
      len[n++] = (size_t)e.bytes;
    }
  }
  if (n == 0)
    return 0;
  uint32_t i = (uint32_t)(plan_mutate_rand(rng) % n);
  *offset = at[i];
  *bytes = len[i];
  return 1;
}

/* One structure-aware edit of d (size unchanged); returns size. */
static inline size_t plan_mutate(uint8_t *d, size_t size, uint64_t *rng) {
  sfc_plan_header_t h;
  if (!plan_mutate_table(d, size, &h))
    return size;
  uint64_t r = plan_mutate_rand(rng);
  if (r % 16 == 0) { /* a header word: alignment, arenas, budgets, flags */
    static const uint8_t words[] = {60, 64, 68, 72, 76, 80, 84, 88, 92, 96};
    size_t at = words[(r >> 8) % sizeof words];
    uint32_t old;
    memcpy(&old, d + at, 4);
    uint32_t v = plan_mutate_value(old, 64, old, rng);
    memcpy(d + at, &v, 4);
    return size;
  }
  /* a record of a known kind other than STRINGS, chosen by section */
  sfc_plan_section_t pick[SFC_PLAN_MAX_SECTIONS];
  uint32_t n = 0;
  for (uint32_t i = 0; i < h.section_count; i++) {
    sfc_plan_section_t e;
    memcpy(&e, d + h.section_table_offset + (uint64_t)i * h.section_entry_bytes, sizeof e);
    if (e.kind > SFC_SECTION_STRINGS && e.kind <= SFC_SECTION_KIND_MAX && e.count > 0 &&
        e.entry_bytes >= 4 && e.offset <= size && e.bytes <= size - e.offset &&
        (uint64_t)e.count * e.entry_bytes <= e.bytes)
      pick[n++] = e;
  }
  if (n == 0)
    return size;
  const sfc_plan_section_t *e = &pick[(r >> 4) % n];
  uint32_t rec = (uint32_t)(plan_mutate_rand(rng) % e->count);
  uint32_t other = (uint32_t)(plan_mutate_rand(rng) % e->count);
  uint8_t *base = d + e->offset;
  if (plan_mutate_rand(rng) % 16 == 0) { /* copy a whole record over another */
    memmove(base + (uint64_t)rec * e->entry_bytes, base + (uint64_t)other * e->entry_bytes,
            e->entry_bytes);
    return size;
  }
  uint32_t word = (uint32_t)(plan_mutate_rand(rng) % (e->entry_bytes / 4));
  uint8_t *at = base + (uint64_t)rec * e->entry_bytes + 4u * word;
  uint32_t old, same;
  memcpy(&old, at, 4);
  memcpy(&same, base + (uint64_t)other * e->entry_bytes + 4u * word, 4);
  uint32_t v = plan_mutate_value(old, e->count, same, rng);
  memcpy(at, &v, 4);
  return size;
}

#endif /* SFC_TEST_PLAN_MUTATE_H */
