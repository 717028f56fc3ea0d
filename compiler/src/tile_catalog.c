/* tile_catalog.c — see tile_catalog.h. */
#include "tile_catalog.h"

#include <math.h>
#include <string.h>

static const sfc_ft_entry_t table[] = {
    {"convolution", SFC_FT_WINDOW, "out -> in by kernel, stride, padding, dilation"},
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

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t ceil_div(int64_t a, int64_t b) { /* b > 0 */
  return -floor_div(-a, b);
}

static bool window_ok(const sfc_ft_window_t *w) {
  return w->n_in > 0 && w->n_out > 0 && w->k > 0 && w->s > 0 && w->p >= 0 && w->d > 0;
}

/* For tap j: outputs o in [lo, hi] read i = o*s - p + j*d; the smallest and largest such
 * i inside [0, n_in), over every tap. */
bool sfc_ft_window_in(const sfc_ft_window_t *w, int64_t lo, int64_t hi, int64_t *in_lo,
                      int64_t *in_hi) {
  if (!window_ok(w) || lo < 0 || hi >= w->n_out || lo > hi)
    return false;
  bool any = false;
  for (int64_t j = 0; j < w->k; j++) {
    int64_t off = j * w->d - w->p; /* i = o*s + off */
    int64_t o0 = ceil_div(-off, w->s), o1 = floor_div(w->n_in - 1 - off, w->s);
    if (o0 < lo)
      o0 = lo;
    if (o1 > hi)
      o1 = hi;
    if (o0 > o1)
      continue;
    int64_t a = o0 * w->s + off, b = o1 * w->s + off;
    if (!any || a < *in_lo)
      *in_lo = a;
    if (!any || b > *in_hi)
      *in_hi = b;
    any = true;
  }
  return any;
}

/* For tap j: inputs i in [lo, hi] are read by o = (i + p - j*d) / s when that divides
 * and o is in [0, n_out). */
bool sfc_ft_window_out(const sfc_ft_window_t *w, int64_t lo, int64_t hi, int64_t *out_lo,
                       int64_t *out_hi) {
  if (!window_ok(w) || lo < 0 || hi >= w->n_in || lo > hi)
    return false;
  bool any = false;
  for (int64_t j = 0; j < w->k; j++) {
    int64_t off = j * w->d - w->p;
    int64_t o0 = ceil_div(lo - off, w->s), o1 = floor_div(hi - off, w->s);
    if (o0 < 0)
      o0 = 0;
    if (o1 > w->n_out - 1)
      o1 = w->n_out - 1;
    if (o0 > o1)
      continue;
    if (!any || o0 < *out_lo)
      *out_lo = o0;
    if (!any || o1 > *out_hi)
      *out_hi = o1;
    any = true;
  }
  return any;
}

bool sfc_ft_nearest_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                       int64_t *in_hi) {
  if (n_in <= 0 || n_out <= 0 || lo < 0 || hi >= n_out || lo > hi)
    return false;
  *in_lo = lo * n_in / n_out;
  *in_hi = hi * n_in / n_out;
  if (*in_hi > n_in - 1)
    *in_hi = n_in - 1;
  return true;
}

/* PyTorch's area_pixel_compute_source_index (align_corners false): src = (o + 0.5) *
 * n_in / n_out - 0.5, at least 0; taps floor(src) and the next one (when inside). */
static int64_t bilinear_i0(int64_t n_in, int64_t n_out, int64_t o) {
  double src = ((double)o + 0.5) * ((double)n_in / (double)n_out) - 0.5;
  return src < 0 ? 0 : (int64_t)floor(src);
}

bool sfc_ft_bilinear_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                        int64_t *in_hi) {
  if (n_in <= 0 || n_out <= 0 || lo < 0 || hi >= n_out || lo > hi)
    return false;
  *in_lo = bilinear_i0(n_in, n_out, lo);
  int64_t i0 = bilinear_i0(n_in, n_out, hi);
  *in_hi = i0 < n_in - 1 ? i0 + 1 : i0;
  return true;
}

/* Outputs whose taps [a(o), b(o)] meet [lo, hi]: a and b are nondecreasing in o, so they
 * are [first o with b(o) >= lo, last o with a(o) <= hi]. */
static bool upsample_out(bool bilinear, int64_t n_in, int64_t n_out, int64_t lo, int64_t hi,
                         int64_t *out_lo, int64_t *out_hi) {
  if (n_in <= 0 || n_out <= 0 || lo < 0 || hi >= n_in || lo > hi)
    return false;
  int64_t a = 0, b = 0;
  int64_t l = 0, r = n_out; /* first o in [0, n_out] with b(o) >= lo */
  while (l < r) {
    int64_t m = l + (r - l) / 2;
    if (bilinear)
      sfc_ft_bilinear_in(n_in, n_out, m, m, &a, &b);
    else
      sfc_ft_nearest_in(n_in, n_out, m, m, &a, &b);
    if (b >= lo)
      r = m;
    else
      l = m + 1;
  }
  int64_t first = l;
  l = -1;
  r = n_out - 1; /* last o in [-1, n_out) with a(o) <= hi */
  while (l < r) {
    int64_t m = r - (r - l) / 2;
    if (bilinear)
      sfc_ft_bilinear_in(n_in, n_out, m, m, &a, &b);
    else
      sfc_ft_nearest_in(n_in, n_out, m, m, &a, &b);
    if (a <= hi)
      l = m;
    else
      r = m - 1;
  }
  if (first > l)
    return false;
  *out_lo = first;
  *out_hi = l;
  return true;
}

bool sfc_ft_nearest_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                        int64_t *out_hi) {
  return upsample_out(false, n_in, n_out, lo, hi, out_lo, out_hi);
}

bool sfc_ft_bilinear_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                         int64_t *out_hi) {
  return upsample_out(true, n_in, n_out, lo, hi, out_lo, out_hi);
}
