/* pack_sections.h — time sections of a DSA instance, for the search packer.
 *
 * The lifetimes are swept (frees before allocations at equal times); the set of
 * blocks live just before each distinct free time is a section, numbered in time
 * order. Block i covers the contiguous sections [lo[i], hi[i]); two blocks overlap
 * in time iff their ranges intersect (both are live just before the first free
 * after the later start). A boundary after section s that no block crosses splits
 * the instance into independent parts.
 *
 *   sfc_pack_sections_t x;
 *   if (sfc_pack_sections_build(problem, max_pairs, &x, &err) != SFC_OK) ...
 *   for (uint32_t k = x.overlap_start[i]; k < x.overlap_start[i + 1]; k++) x.overlap[k] ...
 *   sfc_pack_sections_free(&x);
 */
#ifndef SFC_PACK_SECTIONS_H
#define SFC_PACK_SECTIONS_H

#include "pack.h"

typedef struct sfc_pack_sections {
  uint32_t n, count;                 /* blocks, sections */
  uint32_t *lo, *hi;                 /* [n] block i is in sections [lo[i], hi[i]) */
  uint32_t *member_start, *member;   /* section s holds member[member_start[s] .. [s+1]) */
  uint32_t *overlap_start, *overlap; /* i overlaps overlap[overlap_start[i] .. [i+1]) */
  uint64_t *total;                   /* [count] the sizes of the section's blocks, summed */
  uint32_t *cut;                     /* [count] blocks crossing the boundary after section s */
} sfc_pack_sections_t;

/* O(n log n + pairs + memberships). SFC_ERR_LIMIT when the overlap pairs or the
 * section memberships pass max_pairs (or n passes 2^31), SFC_ERR_OUT_OF_MEMORY. */
sfc_status_t sfc_pack_sections_build(const sfc_pack_problem_t *problem, uint64_t max_pairs,
                                     sfc_pack_sections_t *out, sfc_error_t *err);

void sfc_pack_sections_free(sfc_pack_sections_t *x);

#endif /* SFC_PACK_SECTIONS_H */
