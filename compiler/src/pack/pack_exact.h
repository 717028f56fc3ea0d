/* pack_exact.h — private helpers shared by the exact packers (pack_mip.c,
 * pack_search.c): the incumbent convention of pack.h and a monotonic clock.
 */
#ifndef SFC_PACK_EXACT_H
#define SFC_PACK_EXACT_H

#include "pack.h"

/* Default time limit of the exact packers when opt->time_limit_s <= 0. */
#define SFC_PACK_EXACT_DEFAULT_S 10.0

/* The incumbent of pack.h: when the offsets in problem->blocks[] form a valid
 * packing they are kept; otherwise greedy-size writes one into blocks[]. Either
 * way blocks[] holds a valid packing afterwards and *out_peak is its peak. */
sfc_status_t sfc_pack_exact_incumbent(sfc_pack_problem_t *problem, uint64_t *out_peak,
                                      sfc_error_t *err);

#endif /* SFC_PACK_EXACT_H */
