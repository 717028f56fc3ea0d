/* sfc/box_map.h — the exact index maps of tiled ops along one spatial dimension, shared by
 * the compiler's tiler (which makes tile boxes with them) and the plan checkers (the
 * runtime's loader and the compiler's verifier, which check a plan's boxes against them:
 * docs/plan-format.md invariant 58).
 *
 *   sfc_map_window_t w = {.n_in = 56, .n_out = 56, .k = 3, .s = 1, .p = 1, .d = 1};
 *   int64_t lo, hi;
 *   if (sfc_map_window_in(&w, 0, 13, &lo, &hi)) ...   // output rows 0..13 read 0..14
 *
 * Every map is exact: the smallest range holding every index the op really touches
 * (dilation can leave unread elements at a window's edges; a zero-weight bilinear tap
 * still counts, as PyTorch reads it). Ranges are inclusive [lo, hi]. Lengths, kernel,
 * stride, padding and dilation are at most 2^31 - 1 (so no product overflows; the plan
 * records windows as int32): beyond that a map reports "none" rather than wrap. Checked against the
 * 301 brute-force vectors of shared/data/tiling/halo_vectors.csv and against enumeration
 * on random shapes (tests/tiling/test_tile_catalog.c). O(k) for a window, O(log n) for
 * the upsampling inverses.
 */
#ifndef SFC_BOX_MAP_H
#define SFC_BOX_MAP_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One spatial dimension of a windowed op (convolution, pooling): input length, output
 * length, kernel, stride, padding (leading), dilation. Output o reads inputs
 * o*s - p + j*d, j in [0, k), those in [0, n_in). */
typedef struct sfc_map_window {
  int64_t n_in, n_out, k, s, p, d;
} sfc_map_window_t;

/* Outputs [lo, hi] read exactly inputs [*in_lo, *in_hi]; false when they read none (all
 * padding) or the arguments are out of range. */
bool sfc_map_window_in(const sfc_map_window_t *w, int64_t lo, int64_t hi, int64_t *in_lo,
                       int64_t *in_hi);

/* Inputs [lo, hi] are read exactly by outputs [*out_lo, *out_hi] (the backward map: their
 * gradients need those output gradients); false when no output reads them. */
bool sfc_map_window_out(const sfc_map_window_t *w, int64_t lo, int64_t hi, int64_t *out_lo,
                        int64_t *out_hi);

/* The zeros a window op supplies around input range [ilo, ihi) (half-open) for outputs
 * [olo, ohi): *pad_lo the reads before ilo, *pad_hi those at or after ihi (outside the
 * tensor, or inside it but never read). Both 0 when the range is what the outputs read
 * and lies inside the tensor, or when the arguments are out of range. */
void sfc_map_window_pads(const sfc_map_window_t *w, int64_t olo, int64_t ohi, int64_t ilo,
                         int64_t ihi, uint32_t *pad_lo, uint32_t *pad_hi);

/* Upsampling of one dimension from n_in to n_out (PyTorch's nearest, and bilinear with
 * align_corners false): outputs [lo, hi] read inputs [*in_lo, *in_hi]. */
bool sfc_map_nearest_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                        int64_t *in_hi);
bool sfc_map_bilinear_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                         int64_t *in_hi);

/* Their backward maps: inputs [lo, hi] are read exactly by outputs [*out_lo, *out_hi]
 * (every output whose taps touch them); false when none reads them. Both forward maps are
 * monotone in the output, so the outputs form one range, found by bisection. */
bool sfc_map_nearest_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                         int64_t *out_hi);
bool sfc_map_bilinear_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                          int64_t *out_hi);

#ifdef __cplusplus
}
#endif

#endif /* SFC_BOX_MAP_H */
