/* pack_exact.c — what the exact packers share: the incumbent convention of pack.h
 * (keep the caller's offsets when they verify, else run greedy-size) and a clock.
 * O(n log n) for the check, plus greedy-size when it runs.
 */
#include "pack_exact.h"
#include "units.h"

sfc_status_t sfc_pack_exact_incumbent(sfc_pack_problem_t *p, uint64_t *out_peak, sfc_error_t *err) {
  uint64_t peak = 0;
  sfc_status_t st = sfc_pack_check(p, &peak, NULL, NULL);
  if (st == SFC_OK) {
    *out_peak = peak;
    return SFC_OK;
  }
  if (st != SFC_ERR_VERIFY)
    return sfc_error_set(err, st, "out of memory checking the incumbent of %zu blocks", p->count);
  sfc_pack_result_t r = {0};
  static const sfc_pack_options_t defaults = {0};
  SFC_TRY(sfc_pack_greedy_size(p, &defaults, &r, err));
  *out_peak = r.peak;
  return SFC_OK;
}
