/* refexec.c — see refexec.h. Plain loops over global indices; every backward op is a
 * gather (each output element sums its own contributions), so computing a box computes
 * exactly those elements. */
#include "refexec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t rx_violations = 0;

rx_view_t rx_alloc(const int64_t full[4], const int64_t *lo, const int64_t *hi) {
  rx_view_t v = {.zero_outside = false};
  for (int a = 0; a < 4; a++) {
    v.full[a] = full[a];
    v.lo[a] = lo ? lo[a] : 0;
    v.hi[a] = hi ? hi[a] : full[a];
    if (v.hi[a] < v.lo[a])
      v.hi[a] = v.lo[a];
  }
  int64_t n = rx_count(&v);
  v.d = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  if (!v.d)
    abort();
  return v;
}

void rx_free(rx_view_t *v) {
  free(v->d);
  v->d = NULL;
}

int64_t rx_count(const rx_view_t *v) {
  int64_t n = 1;
  for (int a = 0; a < 4; a++)
    n *= v->hi[a] - v->lo[a];
  return n;
}

static bool in_tensor(const rx_view_t *v, const int64_t i[4]) {
  for (int a = 0; a < 4; a++)
    if (i[a] < 0 || i[a] >= v->full[a])
      return false;
  return true;
}

static bool in_box(const rx_view_t *v, const int64_t i[4]) {
  for (int a = 0; a < 4; a++)
    if (i[a] < v->lo[a] || i[a] >= v->hi[a])
      return false;
  return true;
}

static int64_t offset(const rx_view_t *v, const int64_t i[4]) {
  int64_t o = 0;
  for (int a = 0; a < 4; a++)
    o = o * (v->hi[a] - v->lo[a]) + (i[a] - v->lo[a]);
  return o;
}

double rx_get(const rx_view_t *v, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t i[4] = {n, c, h, w};
  if (!in_tensor(v, i))
    return 0;
  if (v->reads)
    for (int a = 0; a < 4; a++) {
      if (i[a] < v->reads[a])
        v->reads[a] = i[a];
      if (i[a] + 1 > v->reads[4 + a])
        v->reads[4 + a] = i[a] + 1;
    }
  if (!in_box(v, i)) {
    if (!v->zero_outside)
      rx_violations++;
    return 0;
  }
  return v->d[offset(v, i)];
}

double *rx_at(rx_view_t *v, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t i[4] = {n, c, h, w};
  if (!in_box(v, i)) {
    rx_violations++;
    return NULL;
  }
  return &v->d[offset(v, i)];
}

#define FOR_BOX(v, n, c, h, w)                                                                     \
  for (int64_t n = (v)->lo[0]; n < (v)->hi[0]; n++)                                                \
    for (int64_t c = (v)->lo[1]; c < (v)->hi[1]; c++)                                              \
      for (int64_t h = (v)->lo[2]; h < (v)->hi[2]; h++)                                            \
        for (int64_t w = (v)->lo[3]; w < (v)->hi[3]; w++)

static void copy_or_add(rx_view_t *dst, const rx_view_t *src, bool add) {
  FOR_BOX(dst, n, c, h, w) {
    int64_t i[4] = {n, c, h, w};
    if (!in_box(src, i))
      continue;
    double x = src->d[offset(src, i)];
    double *y = &dst->d[offset(dst, i)];
    *y = add ? *y + x : x;
  }
}

void rx_copy_into(rx_view_t *dst, const rx_view_t *src) {
  copy_or_add(dst, src, false);
}
void rx_add_into(rx_view_t *dst, const rx_view_t *src) {
  copy_or_add(dst, src, true);
}

/* ---- windows ------------------------------------------------------------------- */

/* The input element tap (kh, kw) of output (oh, ow) reads; false when it is padding. */
static bool tap_in(const rx_win_t *p, const rx_view_t *x, int64_t oh, int64_t ow, int64_t kh,
                   int64_t kw, int64_t *ih, int64_t *iw) {
  *ih = oh * p->s[0] - p->p[0] + kh * p->d[0];
  *iw = ow * p->s[1] - p->p[1] + kw * p->d[1];
  return *ih >= 0 && *ih < x->full[2] && *iw >= 0 && *iw < x->full[3];
}

/* The output whose tap (kh, kw) reads input (h, w); false when there is none. */
static bool tap_out(const rx_win_t *p, const rx_view_t *y, int64_t h, int64_t w, int64_t kh,
                    int64_t kw, int64_t *oh, int64_t *ow) {
  int64_t th = h + p->p[0] - kh * p->d[0], tw = w + p->p[1] - kw * p->d[1];
  if (th < 0 || tw < 0 || th % p->s[0] || tw % p->s[1])
    return false;
  *oh = th / p->s[0];
  *ow = tw / p->s[1];
  return *oh < y->full[2] && *ow < y->full[3];
}

/* ---- convolution ---------------------------------------------------------------- */

void rx_conv2d(const rx_win_t *p, const rx_view_t *x, const rx_view_t *w, const double *bias,
               rx_view_t *y) {
  int64_t groups = p->groups > 0 ? p->groups : 1;
  int64_t cg = w->full[1], og = y->full[1] / groups;
  FOR_BOX(y, n, co, oh, ow) {
    int64_t g = co / og;
    double s = bias ? bias[co] : 0;
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t kh = 0; kh < p->k[0]; kh++)
        for (int64_t kw = 0; kw < p->k[1]; kw++) {
          int64_t ih, iw;
          if (!tap_in(p, x, oh, ow, kh, kw, &ih, &iw))
            continue;
          s += rx_get(w, co, ci, kh, kw) * rx_get(x, n, g * cg + ci, ih, iw);
        }
    *rx_at(y, n, co, oh, ow) = s;
  }
}

void rx_conv2d_bwd_data(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *w, rx_view_t *dx) {
  int64_t groups = p->groups > 0 ? p->groups : 1;
  int64_t cg = w->full[1], og = dy->full[1] / groups;
  FOR_BOX(dx, n, c, h, x) {
    int64_t g = c / cg, ci = c % cg;
    double s = 0;
    for (int64_t co = g * og; co < (g + 1) * og; co++)
      for (int64_t kh = 0; kh < p->k[0]; kh++)
        for (int64_t kw = 0; kw < p->k[1]; kw++) {
          int64_t oh, ow;
          if (!tap_out(p, dy, h, x, kh, kw, &oh, &ow))
            continue;
          s += rx_get(dy, n, co, oh, ow) * rx_get(w, co, ci, kh, kw);
        }
    *rx_at(dx, n, c, h, x) = s;
  }
}

void rx_conv2d_bwd_weight(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *x,
                          const int64_t *region_lo, const int64_t *region_hi, rx_view_t *dw,
                          double *db) {
  int64_t groups = p->groups > 0 ? p->groups : 1;
  int64_t og = dy->full[1] / groups;
  int64_t cg = dw ? dw->full[1] : x->full[1] / groups;
  rx_view_t r = *dy;
  if (region_lo && region_hi)
    for (int a = 0; a < 4; a++) {
      r.lo[a] = region_lo[a];
      r.hi[a] = region_hi[a];
    }
  if (db)
    FOR_BOX(&r, n, co, oh, ow) {
      db[co] += rx_get(dy, n, co, oh, ow);
    }
  if (!dw)
    return;
  FOR_BOX(dw, co, ci, kh, kw) {
    int64_t g = co / og;
    double s = 0;
    for (int64_t n = r.lo[0]; n < r.hi[0]; n++)
      for (int64_t oh = r.lo[2]; oh < r.hi[2]; oh++)
        for (int64_t ow = r.lo[3]; ow < r.hi[3]; ow++) {
          if (co < r.lo[1] || co >= r.hi[1])
            continue;
          int64_t ih, iw;
          if (!tap_in(p, x, oh, ow, kh, kw, &ih, &iw))
            continue;
          s += rx_get(dy, n, co, oh, ow) * rx_get(x, n, g * cg + ci, ih, iw);
        }
    *rx_at(dw, co, ci, kh, kw) += s;
  }
}

/* ---- pooling -------------------------------------------------------------------- */

void rx_maxpool2d(const rx_win_t *p, const rx_view_t *x, rx_view_t *y, rx_view_t *idx) {
  FOR_BOX(y, n, c, oh, ow) {
    double best = -INFINITY;
    int64_t at = -1;
    for (int64_t kh = 0; kh < p->k[0]; kh++)
      for (int64_t kw = 0; kw < p->k[1]; kw++) {
        int64_t ih, iw;
        if (!tap_in(p, x, oh, ow, kh, kw, &ih, &iw))
          continue;
        double v = rx_get(x, n, c, ih, iw);
        if (v > best || isnan(v)) {
          best = v;
          at = ih * x->full[3] + iw;
        }
      }
    *rx_at(y, n, c, oh, ow) = best;
    *rx_at(idx, n, c, oh, ow) = (double)at;
  }
}

void rx_maxpool2d_bwd(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *idx, rx_view_t *dx) {
  FOR_BOX(dx, n, c, h, w) {
    double s = 0;
    for (int64_t kh = 0; kh < p->k[0]; kh++)
      for (int64_t kw = 0; kw < p->k[1]; kw++) {
        int64_t oh, ow;
        if (!tap_out(p, dy, h, w, kh, kw, &oh, &ow))
          continue;
        int64_t o[4] = {n, c, oh, ow};
        if (dy->zero_outside && !in_box(dy, o))
          continue; /* masked: contributes nothing, its index is not read */
        if ((int64_t)rx_get(idx, n, c, oh, ow) == h * dx->full[3] + w)
          s += rx_get(dy, n, c, oh, ow);
      }
    *rx_at(dx, n, c, h, w) = s;
  }
}

void rx_avgpool2d(const rx_win_t *p, const rx_view_t *x, rx_view_t *y) {
  double div = (double)(p->k[0] * p->k[1]);
  FOR_BOX(y, n, c, oh, ow) {
    double s = 0;
    for (int64_t kh = 0; kh < p->k[0]; kh++)
      for (int64_t kw = 0; kw < p->k[1]; kw++) {
        int64_t ih, iw;
        if (!tap_in(p, x, oh, ow, kh, kw, &ih, &iw))
          continue;
        s += rx_get(x, n, c, ih, iw);
      }
    *rx_at(y, n, c, oh, ow) = s / div;
  }
}

void rx_avgpool2d_bwd(const rx_win_t *p, const rx_view_t *dy, rx_view_t *dx) {
  double div = (double)(p->k[0] * p->k[1]);
  FOR_BOX(dx, n, c, h, w) {
    double s = 0;
    for (int64_t kh = 0; kh < p->k[0]; kh++)
      for (int64_t kw = 0; kw < p->k[1]; kw++) {
        int64_t oh, ow;
        if (!tap_out(p, dy, h, w, kh, kw, &oh, &ow))
          continue;
        s += rx_get(dy, n, c, oh, ow) / div;
      }
    *rx_at(dx, n, c, h, w) = s;
  }
}

/* ---- pointwise, cat ------------------------------------------------------------- */

void rx_relu(const rx_view_t *x, rx_view_t *y) {
  FOR_BOX(y, n, c, h, w) {
    double v = rx_get(x, n, c, h, w);
    *rx_at(y, n, c, h, w) = v > 0 ? v : 0;
  }
}

void rx_relu_bwd(const rx_view_t *dy, const rx_view_t *y, rx_view_t *dx) {
  FOR_BOX(dx, n, c, h, w) {
    *rx_at(dx, n, c, h, w) = rx_get(y, n, c, h, w) > 0 ? rx_get(dy, n, c, h, w) : 0;
  }
}

void rx_add(const rx_view_t *a, const rx_view_t *b, rx_view_t *y) {
  FOR_BOX(y, n, c, h, w) {
    *rx_at(y, n, c, h, w) = rx_get(a, n, c, h, w) + rx_get(b, n, c, h, w);
  }
}

void rx_cat(const rx_view_t *a, const rx_view_t *b, rx_view_t *y) {
  int64_t ca = a->full[1];
  FOR_BOX(y, n, c, h, w) {
    *rx_at(y, n, c, h, w) = c < ca ? rx_get(a, n, c, h, w) : rx_get(b, n, c - ca, h, w);
  }
}

void rx_cat_bwd(const rx_view_t *dy, rx_view_t *da, rx_view_t *db) {
  int64_t ca = da->full[1];
  FOR_BOX(da, n, c, h, w) {
    *rx_at(da, n, c, h, w) = rx_get(dy, n, c, h, w);
  }
  FOR_BOX(db, n, c, h, w) {
    *rx_at(db, n, c, h, w) = rx_get(dy, n, c + ca, h, w);
  }
}

/* ---- upsampling ----------------------------------------------------------------- */

static int64_t nearest_src(int64_t o, int64_t n_in, int64_t n_out) {
  int64_t s = (int64_t)floor((double)o * ((double)n_in / (double)n_out));
  return s < n_in - 1 ? s : n_in - 1;
}

/* The two taps of output o and their weights (align_corners false). */
static void bilinear_taps(int64_t o, int64_t n_in, int64_t n_out, int64_t *i0, int64_t *i1,
                          double *l0, double *l1) {
  double scale = (double)n_in / (double)n_out;
  double src = scale * ((double)o + 0.5) - 0.5;
  if (src < 0)
    src = 0;
  *i0 = (int64_t)src;
  *i1 = *i0 + (*i0 < n_in - 1 ? 1 : 0);
  *l1 = src - (double)*i0;
  *l0 = 1 - *l1;
}

void rx_upsample_nearest(const rx_view_t *x, rx_view_t *y) {
  FOR_BOX(y, n, c, oh, ow) {
    *rx_at(y, n, c, oh, ow) = rx_get(x, n, c, nearest_src(oh, x->full[2], y->full[2]),
                                     nearest_src(ow, x->full[3], y->full[3]));
  }
}

void rx_upsample_nearest_bwd(const rx_view_t *dy, rx_view_t *dx) {
  FOR_BOX(dx, n, c, h, w) {
    double s = 0;
    for (int64_t oh = 0; oh < dy->full[2]; oh++) {
      if (nearest_src(oh, dx->full[2], dy->full[2]) != h)
        continue;
      for (int64_t ow = 0; ow < dy->full[3]; ow++)
        if (nearest_src(ow, dx->full[3], dy->full[3]) == w)
          s += rx_get(dy, n, c, oh, ow);
    }
    *rx_at(dx, n, c, h, w) = s;
  }
}

void rx_upsample_bilinear(const rx_view_t *x, rx_view_t *y) {
  FOR_BOX(y, n, c, oh, ow) {
    int64_t h0, h1, w0, w1;
    double a0, a1, b0, b1;
    bilinear_taps(oh, x->full[2], y->full[2], &h0, &h1, &a0, &a1);
    bilinear_taps(ow, x->full[3], y->full[3], &w0, &w1, &b0, &b1);
    *rx_at(y, n, c, oh, ow) = a0 * (b0 * rx_get(x, n, c, h0, w0) + b1 * rx_get(x, n, c, h0, w1)) +
                              a1 * (b0 * rx_get(x, n, c, h1, w0) + b1 * rx_get(x, n, c, h1, w1));
  }
}

void rx_upsample_bilinear_bwd(const rx_view_t *dy, rx_view_t *dx) {
  FOR_BOX(dx, n, c, h, w) {
    double s = 0;
    for (int64_t oh = 0; oh < dy->full[2]; oh++) {
      int64_t h0, h1;
      double a0, a1;
      bilinear_taps(oh, dx->full[2], dy->full[2], &h0, &h1, &a0, &a1);
      double wh = (h0 == h ? a0 : 0) + (h1 == h ? a1 : 0);
      if (h0 != h && h1 != h)
        continue;
      for (int64_t ow = 0; ow < dy->full[3]; ow++) {
        int64_t w0, w1;
        double b0, b1;
        bilinear_taps(ow, dx->full[3], dy->full[3], &w0, &w1, &b0, &b1);
        if (w0 != w && w1 != w)
          continue;
        double ww = (w0 == w ? b0 : 0) + (w1 == w ? b1 : 0);
        s += wh * ww * rx_get(dy, n, c, oh, ow);
      }
    }
    *rx_at(dx, n, c, h, w) = s;
  }
}

/* ---- batch norm, channel slices -------------------------------------------------- */

void rx_batchnorm(const rx_view_t *x, const double *w, const double *b, double eps, rx_view_t *y,
                  double *mean, double *invstd) {
  int64_t count = x->full[0] * x->full[2] * x->full[3];
  for (int64_t c = 0; c < x->full[1]; c++) {
    double s = 0, q = 0;
    for (int64_t n = 0; n < x->full[0]; n++)
      for (int64_t h = 0; h < x->full[2]; h++)
        for (int64_t v = 0; v < x->full[3]; v++)
          s += rx_get(x, n, c, h, v);
    double m = s / (double)count;
    for (int64_t n = 0; n < x->full[0]; n++)
      for (int64_t h = 0; h < x->full[2]; h++)
        for (int64_t v = 0; v < x->full[3]; v++) {
          double d = rx_get(x, n, c, h, v) - m;
          q += d * d;
        }
    mean[c] = m;
    invstd[c] = 1 / sqrt(q / (double)count + eps);
  }
  FOR_BOX(y, n, c, h, v) {
    *rx_at(y, n, c, h, v) = (rx_get(x, n, c, h, v) - mean[c]) * invstd[c] * w[c] + b[c];
  }
}

void rx_batchnorm_bwd(const rx_view_t *dy, const rx_view_t *x, const double *w, const double *mean,
                      const double *invstd, rx_view_t *dx, double *dw, double *db) {
  int64_t count = x->full[0] * x->full[2] * x->full[3];
  for (int64_t c = 0; c < x->full[1]; c++) {
    double sg = 0, sgx = 0; /* sum dy, sum dy * xhat */
    for (int64_t n = 0; n < x->full[0]; n++)
      for (int64_t h = 0; h < x->full[2]; h++)
        for (int64_t v = 0; v < x->full[3]; v++) {
          double g = rx_get(dy, n, c, h, v);
          sg += g;
          sgx += g * (rx_get(x, n, c, h, v) - mean[c]) * invstd[c];
        }
    if (dw)
      dw[c] = sgx;
    if (db)
      db[c] = sg;
    for (int64_t n = dx->lo[0]; n < dx->hi[0] && c >= dx->lo[1] && c < dx->hi[1]; n++)
      for (int64_t h = dx->lo[2]; h < dx->hi[2]; h++)
        for (int64_t v = dx->lo[3]; v < dx->hi[3]; v++) {
          double xhat = (rx_get(x, n, c, h, v) - mean[c]) * invstd[c];
          *rx_at(dx, n, c, h, v) =
              w[c] * invstd[c] *
              (rx_get(dy, n, c, h, v) - sg / (double)count - xhat * sgx / (double)count);
        }
  }
}

rx_view_t rx_channel_slice(const rx_view_t *v, int64_t c0, int64_t cn) {
  int64_t full[4] = {v->full[0], cn, v->full[2], v->full[3]}, lo[4], hi[4];
  for (int a = 0; a < 4; a++) {
    lo[a] = v->lo[a];
    hi[a] = v->hi[a];
  }
  lo[1] = v->lo[1] - c0 > 0 ? v->lo[1] - c0 : 0;
  hi[1] = v->hi[1] - c0 < cn ? v->hi[1] - c0 : cn;
  rx_view_t s = rx_alloc(full, lo, hi);
  FOR_BOX(&s, n, c, h, w) {
    *rx_at(&s, n, c, h, w) = v->d[offset(v, (int64_t[4]){n, c + c0, h, w})];
  }
  s.zero_outside = v->zero_outside;
  return s;
}

/* ---- loss ----------------------------------------------------------------------- */

double rx_mse(const rx_view_t *y, const rx_view_t *t) {
  double s = 0;
  int64_t count = rx_count(y);
  FOR_BOX(y, n, c, h, w) {
    double d = rx_get(y, n, c, h, w) - rx_get(t, n, c, h, w);
    s += d * d;
  }
  return count ? s / (double)count : 0;
}

void rx_mse_bwd(const rx_view_t *y, const rx_view_t *t, rx_view_t *dy) {
  double count = (double)rx_count(y);
  FOR_BOX(dy, n, c, h, w) {
    *rx_at(dy, n, c, h, w) = 2 * (rx_get(y, n, c, h, w) - rx_get(t, n, c, h, w)) / count;
  }
}
