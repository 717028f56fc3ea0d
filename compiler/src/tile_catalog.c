/* tile_catalog.c — see tile_catalog.h. */
#include "tile_catalog.h"

#include <string.h>

static const sfc_ft_entry_t table[] = {
    {"convolution", SFC_FT_WINDOW,
     "out -> in by kernel, stride, padding, dilation (transposed: the converse map)"},
    {"max_pool2d_with_indices", SFC_FT_WINDOW, "out -> in by the pooling window"},
    {"avg_pool2d", SFC_FT_WINDOW, "out -> in by the pooling window"},
    {"convolution_backward", SFC_FT_WINDOW_BWD,
     "grad input <- grad output by the window; grad weight sums over tiles"},
    {"max_pool2d_with_indices_backward", SFC_FT_WINDOW_BWD,
     "grad input <- grad output by the window (and the indices of those outputs)"},
    {"avg_pool2d_backward", SFC_FT_WINDOW_BWD, "grad input <- grad output by the window"},
    {"relu", SFC_FT_POINTWISE, "same index"},
    {"relu_", SFC_FT_POINTWISE, "same index, in place"},
    {"threshold_backward", SFC_FT_POINTWISE, "same index"},
    {"add", SFC_FT_POINTWISE, "same index (residual adds join branches)"},
    {"add_", SFC_FT_POINTWISE, "same index, in place"},
    {"mul", SFC_FT_POINTWISE, "same index"},
    {"upsample_nearest2d", SFC_FT_UPSAMPLE_NEAREST, "out o reads floor(o * n_in / n_out)"},
    {"upsample_bilinear2d", SFC_FT_UPSAMPLE_BILINEAR, "out o reads two neighbours"},
    {"upsample_nearest2d_backward", SFC_FT_UPSAMPLE_NEAREST_BWD, "grad in <- the outputs it fed"},
    {"upsample_bilinear2d_backward", SFC_FT_UPSAMPLE_BILINEAR_BWD, "grad in <- the outputs it fed"},
    {"cat", SFC_FT_CAT, "channel concatenation (U-Net skips): same spatial index"},
    {"detach", SFC_FT_VIEW, "a view: same index"},
    {"empty", SFC_FT_VIEW, "an allocation: no data"},
    /* what ends a segment: the op needs the whole tensor (or is not spatial) */
    {"native_batch_norm", SFC_FT_END, "training-mode batch norm: statistics over H x W"},
    {"native_batch_norm_backward", SFC_FT_END, "reduces over H x W"},
    {"_adaptive_avg_pool2d", SFC_FT_END, "global pooling"},
    {"_adaptive_avg_pool2d_backward", SFC_FT_END, "global pooling"},
    {"mean", SFC_FT_END, "a reduction"},
    {"addmm", SFC_FT_END, "linear"},
    {"mm", SFC_FT_END, "linear"},
    {"_softmax", SFC_FT_END, "softmax over a whole dimension"},
    {"_log_softmax", SFC_FT_END, "softmax over a whole dimension"},
    {"nll_loss_forward", SFC_FT_END, "loss"},
    {"nll_loss2d_forward", SFC_FT_END, "loss"},
    {"mse_loss", SFC_FT_END, "loss"},
};

const sfc_ft_entry_t *sfc_ft_entries(uint32_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}

const sfc_ft_entry_t *sfc_ft_lookup(const char *type) {
  for (size_t i = 0; type && i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].type, type) == 0)
      return &table[i];
  return NULL;
}
