/* integrity.h — the host device's integrity patterns (integrity.c).
 *
 * Word w (8 bytes, little-endian) of tensor t at version v is
 * splitmix64(seed(t, v) + w): every tensor, every version and every position gets
 * different bytes, so a value that landed in the wrong place, a stale copy of an
 * older iteration and another tensor's bytes all differ from what is expected.
 */
#ifndef SFCRT_INTEGRITY_H
#define SFCRT_INTEGRITY_H

#include <stdint.h>

#define SFCRT_PATTERN_OK UINT64_MAX

/* Fills bytes [0, bytes) at p with the pattern of (tensor, version). */
void sfcrt_pattern_fill(void *p, uint64_t bytes, uint32_t tensor, uint64_t version);

/* The first byte offset where p differs from the pattern, or SFCRT_PATTERN_OK.
 * *found / *expected get the 8-byte words around that offset (may be NULL). */
uint64_t sfcrt_pattern_check(const void *p, uint64_t bytes, uint32_t tensor, uint64_t version,
                             uint64_t *found, uint64_t *expected);

/* The word at byte offset `offset` (rounded down to 8) of (tensor, version). */
uint64_t sfcrt_pattern_word(uint32_t tensor, uint64_t version, uint64_t offset);

#endif /* SFCRT_INTEGRITY_H */
