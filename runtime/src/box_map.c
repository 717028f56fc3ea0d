/* box_map.c — see sfc/box_map.h. */
#include "sfc/box_map.h"

#include <math.h>

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t ceil_div(int64_t a, int64_t b) { /* b > 0 */
  return -floor_div(-a, b);
}

/* Every term at most 2^31 - 1, so o*s - p + j*d cannot overflow an int64_t (the plan
 * records k, s, p, d as int32; no spatial dimension comes near 2^31). */
static bool window_ok(const sfc_map_window_t *w) {
  return w->n_in > 0 && w->n_out > 0 && w->k > 0 && w->s > 0 && w->p >= 0 && w->d > 0 &&
         w->n_in <= INT32_MAX && w->n_out <= INT32_MAX && w->k <= INT32_MAX && w->s <= INT32_MAX &&
         w->p <= INT32_MAX && w->d <= INT32_MAX;
}

/* For tap j: outputs o in [lo, hi] read i = o*s - p + j*d; the smallest and largest such
 * i inside [0, n_in), over every tap. */
bool sfc_map_window_in(const sfc_map_window_t *w, int64_t lo, int64_t hi, int64_t *in_lo,
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
bool sfc_map_window_out(const sfc_map_window_t *w, int64_t lo, int64_t hi, int64_t *out_lo,
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

void sfc_map_window_pads(const sfc_map_window_t *w, int64_t olo, int64_t ohi, int64_t ilo,
                         int64_t ihi, uint32_t *pad_lo, uint32_t *pad_hi) {
  *pad_lo = *pad_hi = 0;
  if (!window_ok(w) || olo < 0 || ohi > w->n_out || olo >= ohi || ilo < 0 || ihi > w->n_in)
    return;
  int64_t first = olo * w->s - w->p, last = (ohi - 1) * w->s - w->p + (w->k - 1) * w->d;
  int64_t a = ilo - first, b = last + 1 - ihi;
  *pad_lo = a > 0 ? (a < UINT32_MAX ? (uint32_t)a : UINT32_MAX) : 0;
  *pad_hi = b > 0 ? (b < UINT32_MAX ? (uint32_t)b : UINT32_MAX) : 0;
}

/* Upsampling lengths up to 2^31 - 1, so o * n_in cannot overflow. */
static bool lengths_ok(int64_t n_in, int64_t n_out) {
  return n_in > 0 && n_out > 0 && n_in <= INT32_MAX && n_out <= INT32_MAX;
}

bool sfc_map_nearest_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                        int64_t *in_hi) {
  if (!lengths_ok(n_in, n_out) || lo < 0 || hi >= n_out || lo > hi)
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

bool sfc_map_bilinear_in(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *in_lo,
                         int64_t *in_hi) {
  if (!lengths_ok(n_in, n_out) || lo < 0 || hi >= n_out || lo > hi)
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
  if (!lengths_ok(n_in, n_out) || lo < 0 || hi >= n_in || lo > hi)
    return false;
  int64_t a = 0, b = 0;
  int64_t l = 0, r = n_out; /* first o in [0, n_out] with b(o) >= lo */
  while (l < r) {
    int64_t m = l + (r - l) / 2;
    if (bilinear)
      sfc_map_bilinear_in(n_in, n_out, m, m, &a, &b);
    else
      sfc_map_nearest_in(n_in, n_out, m, m, &a, &b);
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
      sfc_map_bilinear_in(n_in, n_out, m, m, &a, &b);
    else
      sfc_map_nearest_in(n_in, n_out, m, m, &a, &b);
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

bool sfc_map_nearest_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                         int64_t *out_hi) {
  return upsample_out(false, n_in, n_out, lo, hi, out_lo, out_hi);
}

bool sfc_map_bilinear_out(int64_t n_in, int64_t n_out, int64_t lo, int64_t hi, int64_t *out_lo,
                          int64_t *out_hi) {
  return upsample_out(true, n_in, n_out, lo, hi, out_lo, out_hi);
}
