/* tile_catalog.h — which ops a fused-tiled (FT) segment may contain, and the exact index
 * maps tile-size propagation needs (issue 12 item 1; docs/algorithms.md "FT op catalog";
 * seed segmented-fused-tiled §3–4).
 *
 *   const sfc_ft_entry_t *e = sfc_ft_lookup(op->type);   // NULL: unknown, ends a segment
 *   if (e && e->cls == SFC_FT_WINDOW) {
 *     sfc_map_window_t w = {.n_in = 56, .n_out = 56, .k = 3, .s = 1, .p = 1, .d = 1};
 *     int64_t lo, hi;
 *     if (sfc_map_window_in(&w, 0, 13, &lo, &hi)) ...     // output rows 0..13 read 0..14
 *   }
 *
 * One spatial dimension at a time: height and width map independently (batch and channel
 * are not FT dimensions of a spatial op; the batch is one of every op that keeps it).
 * Every map is exact: the smallest range holding every index the op really touches
 * (dilation can leave unread elements at a window's edges; a zero-weight bilinear tap
 * still counts, as PyTorch reads it). Checked against the 301 brute-force vectors of
 * shared/data/tiling/halo_vectors.csv and against enumeration on random shapes
 * (tests/tiling/test_tile_catalog.c).
 */
#ifndef SFC_TILE_CATALOG_H
#define SFC_TILE_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

#include "sfc/box_map.h"

typedef enum sfc_ft_class {
  SFC_FT_END = 0,               /* ends a segment: its result needs the whole tensor */
  SFC_FT_WINDOW,                /* convolution, pooling forward: out -> in by the window */
  SFC_FT_WINDOW_BWD,            /* their backward (data / indices): d_in -> d_out by the window */
  SFC_FT_POINTWISE,             /* same index in and out (relu, add, mul, threshold_backward) */
  SFC_FT_UPSAMPLE_NEAREST,      /* out -> in: floor(o * n_in / n_out) */
  SFC_FT_UPSAMPLE_BILINEAR,     /* out -> in: align_corners false, two taps */
  SFC_FT_UPSAMPLE_NEAREST_BWD,  /* d_in -> d_out: the outputs each input feeds */
  SFC_FT_UPSAMPLE_BILINEAR_BWD, /* d_in -> d_out */
  SFC_FT_CAT,                   /* channel concatenation: spatial index unchanged */
  SFC_FT_VIEW,                  /* detach, empty: no data movement, same indices */
} sfc_ft_class_t;

typedef struct sfc_ft_entry {
  const char *type; /* ATen name as the exporter writes it */
  sfc_ft_class_t cls;
  const char *why; /* one line: the map, or why it ends a segment */
} sfc_ft_entry_t;

/* The entry of an op type, or NULL: an op the catalog does not know ends a segment
 * (never a guess). */
const sfc_ft_entry_t *sfc_ft_lookup(const char *type);

/* The whole table, for docs and tests. */
const sfc_ft_entry_t *sfc_ft_entries(uint32_t *count);

/* The index maps themselves (one spatial dimension at a time) are the runtime's
 * (sfc/box_map.h): the plan checkers use the same ones on the boxes the tiler writes. */

#endif /* SFC_TILE_CATALOG_H */
