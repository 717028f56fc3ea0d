/* refexec.h — a float64 reference CPU executor for the tiling exactness tests (issue 12
 * item 6). Plain loops, no tricks: the point is that nobody doubts it.
 *
 * Every tensor is 4-D, N C H W. A view holds one box of a tensor (half-open per axis,
 * inside `full`), densely, row-major over the box. An op computes every element of its
 * output view's box and nothing else, so the same call runs an untiled op (the box is
 * the whole tensor) or one tile of it (the box is the tile's part).
 *
 * Reads go through rx_get with global indices:
 *   - outside the tensor (an index < 0 or >= full): 0, the zero padding of a window;
 *   - inside the tensor but outside the view's box: 0, and when the view is not
 *     `zero_outside` the read is a violation, counted in rx_violations (a tile that
 *     reads data its box does not hold: a propagation bug the tests must see);
 *     `zero_outside` views are masked gradients, whose values outside the box are 0
 *     by definition.
 *
 *   rx_view_t x = rx_alloc(full, lo, hi);      // zero-filled box
 *   rx_conv2d(&p, &x, &w, bias, &y);           // y's box computed from x's
 *   if (rx_violations) ...
 *   rx_free(&x);
 */
#ifndef SFC_TEST_REFEXEC_H
#define SFC_TEST_REFEXEC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rx_view {
  int64_t full[4]; /* the whole tensor: N, C, H, W */
  int64_t lo[4];   /* the box held: [lo, hi) per axis, 0 <= lo <= hi <= full */
  int64_t hi[4];
  double *d;         /* (hi - lo) product elements, row-major over the box */
  bool zero_outside; /* reads outside the box (inside the tensor) are 0, not violations */
  int64_t *reads;    /* NULL, or [8]: rx_get widens [reads[0..4), reads[4..8)) to the hull
                        of the indices read inside the tensor (start it empty: lo > hi) */
} rx_view_t;

extern uint64_t rx_violations; /* reads outside a box that is not zero_outside */

/* A zero-filled view of box [lo, hi) of a tensor of shape `full`; lo/hi NULL = whole. */
rx_view_t rx_alloc(const int64_t full[4], const int64_t *lo, const int64_t *hi);
void rx_free(rx_view_t *v);
int64_t rx_count(const rx_view_t *v); /* elements in the box */

/* Read at global indices (rules above); pointer to an element inside the box, or NULL
 * (and a violation) when the index is outside it. */
double rx_get(const rx_view_t *v, int64_t n, int64_t c, int64_t h, int64_t w);
double *rx_at(rx_view_t *v, int64_t n, int64_t c, int64_t h, int64_t w);

/* Copies the part of src's box that lies in dst's box into dst (dst elements outside
 * src's box are left as they are); rx_add_into adds instead of copying. */
void rx_copy_into(rx_view_t *dst, const rx_view_t *src);
void rx_add_into(rx_view_t *dst, const rx_view_t *src);

/* A 2-D window: kernel, stride, padding, dilation per spatial axis (H, W); groups for
 * convolution (1 otherwise). PyTorch's conventions (ceil_mode false). */
typedef struct rx_win {
  int64_t k[2], s[2], p[2], d[2], groups;
} rx_win_t;

/* Convolution. w is whole: [C_out, C_in / groups, k_h, k_w]; bias [C_out] or NULL.
 *   y[n,co,oh,ow] = bias[co] + sum_{ci,kh,kw} w[co,ci,kh,kw] * x[n, g*Cg + ci, oh*s-p+kh*d, ...]
 * where g = co / (C_out / groups), Cg = C_in / groups. */
void rx_conv2d(const rx_win_t *p, const rx_view_t *x, const rx_view_t *w, const double *bias,
               rx_view_t *y);
/* dx over dx's box: for every element, the sum over (co, kh, kw) with an output position
 * oh = (h + p - kh*d) / s that divides exactly and lies in [0, dy.full H) (same for W) of
 * dy[n,co,oh,ow] * w[co,ci,kh,kw]; dy read by rx_get. */
void rx_conv2d_bwd_data(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *w, rx_view_t *dx);
/* Adds to dw (whole) and db ([C_out], or NULL) the sums over the output positions of
 * `region` (a box of dy's index space: lo[4], hi[4]; NULL = dy's box) of dy * x-patch and
 * dy; dy and x read by rx_get. */
void rx_conv2d_bwd_weight(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *x,
                          const int64_t *region_lo, const int64_t *region_hi, rx_view_t *dw,
                          double *db);

/* Max pooling (groups ignored): y over y's box, idx (same shape and box as y) the flat
 * index h * W_in + w of the input element chosen: the first maximum in (kh, kw) order,
 * padding never chosen (PyTorch's CPU kernel: a later tap wins only when strictly
 * greater, or NaN). */
void rx_maxpool2d(const rx_win_t *p, const rx_view_t *x, rx_view_t *y, rx_view_t *idx);
/* dx over dx's box: dx[n,c,h,w] = sum of dy[n,c,oh,ow] over the outputs whose window
 * holds (h, w) and whose idx equals h * W_in + w. An output outside a zero_outside dy's
 * box contributes nothing and its idx is not read. */
void rx_maxpool2d_bwd(const rx_win_t *p, const rx_view_t *dy, const rx_view_t *idx, rx_view_t *dx);
/* Average pooling, count_include_pad true: divisor k_h * k_w. */
void rx_avgpool2d(const rx_win_t *p, const rx_view_t *x, rx_view_t *y);
void rx_avgpool2d_bwd(const rx_win_t *p, const rx_view_t *dy, rx_view_t *dx);

/* Pointwise, over the output's box: y = max(x, 0); dx = y > 0 ? dy : 0
 * (threshold_backward on the ReLU's output); y = a + b. */
void rx_relu(const rx_view_t *x, rx_view_t *y);
void rx_relu_bwd(const rx_view_t *dy, const rx_view_t *y, rx_view_t *dx);
void rx_add(const rx_view_t *a, const rx_view_t *b, rx_view_t *y);

/* Channel concatenation y = cat(a, b) along C: y's channels [0, Ca) from a, [Ca, Ca+Cb)
 * from b; and its backward, the two slices of dy. */
void rx_cat(const rx_view_t *a, const rx_view_t *b, rx_view_t *y);
void rx_cat_bwd(const rx_view_t *dy, rx_view_t *da, rx_view_t *db);

/* Upsampling H and W from x's full size to y's full size. Nearest: src = floor(o * n_in /
 * n_out). Bilinear, align_corners false (PyTorch): src = max(0, (o + 0.5) * n_in / n_out
 * - 0.5), taps floor(src) and min(floor(src) + 1, n_in - 1) with weights 1 - frac, frac.
 * The backward gathers: every dx element sums dy over all outputs whose taps read it. */
void rx_upsample_nearest(const rx_view_t *x, rx_view_t *y);
void rx_upsample_nearest_bwd(const rx_view_t *dy, rx_view_t *dx);
void rx_upsample_bilinear(const rx_view_t *x, rx_view_t *y);
void rx_upsample_bilinear_bwd(const rx_view_t *dy, rx_view_t *dx);

/* Training-mode batch norm over whole views (statistics per channel over N, H, W; the
 * biased variance): y = (x - mean) * invstd * w[c] + b[c], invstd = 1 / sqrt(var + eps);
 * mean and invstd ([C]) are saved for the backward, as ATen's native_batch_norm does. Its
 * backward: dx over dx's box, dw = sum dy * xhat, db = sum dy (xhat = (x - mean) * invstd).
 * Neither tiles: a batch norm ends a tileable run, as in the bundled U-Net. */
void rx_batchnorm(const rx_view_t *x, const double *w, const double *b, double eps, rx_view_t *y,
                  double *mean, double *invstd);
void rx_batchnorm_bwd(const rx_view_t *dy, const rx_view_t *x, const double *w, const double *mean,
                      const double *invstd, rx_view_t *dx, double *dw, double *db);

/* Channels [c0, c0 + cn) of v as a tensor of cn channels, renumbered from 0: how an op
 * reads a channel slice of a storage (a cat's gradient read in parts, which the exporter
 * records as the storage and the view's offset). A copy of the part of v's box in those
 * channels, with v's zero_outside; reads through it are not tracked (reads NULL). */
rx_view_t rx_channel_slice(const rx_view_t *v, int64_t c0, int64_t cn);

/* Mean squared error over whole views: loss = mean((y - t)^2); dy = 2 (y - t) / count. */
double rx_mse(const rx_view_t *y, const rx_view_t *t);
void rx_mse_bwd(const rx_view_t *y, const rx_view_t *t, rx_view_t *dy);

#endif /* SFC_TEST_REFEXEC_H */
