/* test_refexec.c — the float64 reference executor's own tests (refexec.h), so that the
 * tiling exactness tests rest on something checked:
 *
 *  a. gradients: every backward op against central finite differences of the scalar
 *     L = sum(y * r) (so dL/dy = r), on conv2d (x, w, bias; stride, padding, dilation,
 *     groups), pooling, relu, add, cat, nearest and bilinear upsampling, and mse;
 *  b. boxes: an op computed over a sub-box of its output, from inputs held over exactly
 *     the hull of what it reads (found by brute force: the input elements whose change
 *     changes the sub-box), equals the slice of the whole result bit for bit without a
 *     violation; rx_get's read hull equals that hull; one row less of an input is a
 *     violation;
 *  c. tiny cases written out by hand (a 2x2 ones kernel, a max-pool tie, PyTorch's
 *     bilinear 2 -> 4);
 *  d. zero_outside views, rx_at, the read hull and rx_copy_into / rx_add_into.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "refexec.h"
#include "test_rand.h"

#define FD_H   1e-6 /* central-difference step */
#define FD_TOL 1e-6 /* relative (to max(1, |analytic|)) */

/* ---- helpers ---------------------------------------------------------------------- */

static double urand(uint64_t *s) { /* uniform in [-1, 1) */
  return (double)(test_rand_next(s) >> 11) * 0x1p-52 - 1.0;
}

static void fill_uniform(rx_view_t *v, uint64_t *s) {
  for (int64_t i = 0; i < rx_count(v); i++)
    v->d[i] = urand(s);
}

/* Distinct values 0.01 apart, shuffled: a max pool's argmax survives a step of FD_H. */
static void fill_distinct(rx_view_t *v, uint64_t *s) {
  int64_t n = rx_count(v);
  for (int64_t i = 0; i < n; i++)
    v->d[i] = 0.01 * (double)i - 0.005 * (double)n;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(test_rand_next(s) % (uint64_t)(i + 1));
    double t = v->d[i];
    v->d[i] = v->d[j];
    v->d[j] = t;
  }
}

/* |value| in [0.1, 1): a ReLU's kink is never within FD_H. */
static void fill_away_from_zero(rx_view_t *v, uint64_t *s) {
  for (int64_t i = 0; i < rx_count(v); i++) {
    double m = 0.1 + 0.45 * (urand(s) + 1.0);
    v->d[i] = test_rand_next(s) & 1 ? m : -m;
  }
}

static rx_view_t whole4(int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t f[4] = {n, c, h, w};
  return rx_alloc(f, NULL, NULL);
}

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

static double dot(const rx_view_t *a, const rx_view_t *b) {
  double s = 0;
  for (int64_t i = 0; i < rx_count(a); i++)
    s += a->d[i] * b->d[i];
  return s;
}

static bool same_bits(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Every element of v's box equals (bitwise) the element of `whole` at the same index. */
static bool same_on_box(const rx_view_t *v, const rx_view_t *whole) {
  int64_t i = 0;
  for (int64_t n = v->lo[0]; n < v->hi[0]; n++)
    for (int64_t c = v->lo[1]; c < v->hi[1]; c++)
      for (int64_t h = v->lo[2]; h < v->hi[2]; h++)
        for (int64_t w = v->lo[3]; w < v->hi[3]; w++)
          if (!same_bits(v->d[i++], rx_get(whole, n, c, h, w)))
            return false;
  return true;
}

/* ---- ops behind one interface ------------------------------------------------------- */

typedef enum {
  OP_CONV,
  OP_MAXPOOL,
  OP_AVGPOOL,
  OP_RELU,
  OP_ADD,
  OP_CAT,
  OP_UP_NEAREST,
  OP_UP_BILINEAR,
  OP_CONV_BWD_DATA,
  OP_AVGPOOL_BWD,
  OP_RELU_BWD,
  OP_UP_NEAREST_BWD,
  OP_UP_BILINEAR_BWD,
} op_kind_t;

typedef struct {
  op_kind_t kind;
  rx_win_t win;
  rx_view_t w;  /* conv weight (whole), a parameter of the op */
  double *bias; /* conv bias or NULL */
} op_t;

static int op_inputs(op_kind_t k) {
  return k == OP_ADD || k == OP_CAT || k == OP_RELU_BWD ? 2 : 1;
}
static int op_outputs(op_kind_t k) {
  return k == OP_MAXPOOL ? 2 : 1;
}

static void op_run(const op_t *op, rx_view_t *const *in, rx_view_t *const *out) {
  switch (op->kind) {
    case OP_CONV:
      rx_conv2d(&op->win, in[0], &op->w, op->bias, out[0]);
      break;
    case OP_MAXPOOL:
      rx_maxpool2d(&op->win, in[0], out[0], out[1]);
      break;
    case OP_AVGPOOL:
      rx_avgpool2d(&op->win, in[0], out[0]);
      break;
    case OP_RELU:
      rx_relu(in[0], out[0]);
      break;
    case OP_ADD:
      rx_add(in[0], in[1], out[0]);
      break;
    case OP_CAT:
      rx_cat(in[0], in[1], out[0]);
      break;
    case OP_UP_NEAREST:
      rx_upsample_nearest(in[0], out[0]);
      break;
    case OP_UP_BILINEAR:
      rx_upsample_bilinear(in[0], out[0]);
      break;
    case OP_CONV_BWD_DATA:
      rx_conv2d_bwd_data(&op->win, in[0], &op->w, out[0]);
      break;
    case OP_AVGPOOL_BWD:
      rx_avgpool2d_bwd(&op->win, in[0], out[0]);
      break;
    case OP_RELU_BWD:
      rx_relu_bwd(in[0], in[1], out[0]);
      break;
    case OP_UP_NEAREST_BWD:
      rx_upsample_nearest_bwd(in[0], out[0]);
      break;
    case OP_UP_BILINEAR_BWD:
      rx_upsample_bilinear_bwd(in[0], out[0]);
      break;
  }
}

/* ---- a. gradients by central differences ------------------------------------------- */

typedef struct {
  const op_t *op;
  rx_view_t *in[2];
  rx_view_t *out[2];
  const rx_view_t *r;
} objective_t;

static double objective(const objective_t *o) {
  op_run(o->op, o->in, o->out);
  return dot(o->out[0], o->r);
}

/* The worst relative error of the central differences of o w.r.t. p[0..n) against ana. */
static double fd_error(const objective_t *o, double *p, int64_t n, const double *ana) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double save = p[i];
    p[i] = save + FD_H;
    double lp = objective(o);
    p[i] = save - FD_H;
    double lm = objective(o);
    p[i] = save;
    double num = (lp - lm) / (2 * FD_H);
    double err = fabs(num - ana[i]) / fmax(1.0, fabs(ana[i]));
    if (!(err <= worst)) /* NaN too */
      worst = err;
  }
  return worst;
}

typedef struct {
  int64_t n, ci, co, k[2], s[2], p[2], d[2], groups;
} conv_case_t;

static const conv_case_t conv_cases[] = {
    {2, 3, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1}, /* plain same-padding */
    {1, 2, 3, {3, 2}, {2, 1}, {0, 1}, {1, 1}, 1}, /* stride 2, padding 0 */
    {1, 3, 2, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1}, /* dilation 2, padding 2 */
    {2, 4, 6, {2, 2}, {2, 2}, {1, 0}, {1, 1}, 2}, /* groups 2 */
    {1, 4, 4, {3, 3}, {2, 2}, {2, 1}, {2, 1}, 2}, /* everything at once */
};
#define N_CONV_CASES (sizeof conv_cases / sizeof conv_cases[0])

/* A 2-d window from per-axis kernel, stride, padding and dilation. */
static rx_win_t make_win(const int64_t k[2], const int64_t s[2], const int64_t p[2],
                         const int64_t d[2], int64_t groups) {
  rx_win_t w = {.groups = groups};
  for (int a = 0; a < 2; a++) {
    w.k[a] = k[a];
    w.s[a] = s[a];
    w.p[a] = p[a];
    w.d[a] = d[a];
  }
  return w;
}

static rx_win_t conv_win(const conv_case_t *c) {
  return make_win(c->k, c->s, c->p, c->d, c->groups);
}

static void test_grad_conv(void) {
  uint64_t rng = 0x243F6A8885A308D3ull;
  for (size_t t = 0; t < N_CONV_CASES; t++) {
    const conv_case_t *c = &conv_cases[t];
    int64_t h = 5 + (int64_t)(test_rand_next(&rng) % 4),
            w = 5 + (int64_t)(test_rand_next(&rng) % 4);
    op_t op = {.kind = OP_CONV, .win = conv_win(c)};
    int64_t oh = out_size(h, c->k[0], c->s[0], c->p[0], c->d[0]);
    int64_t ow = out_size(w, c->k[1], c->s[1], c->p[1], c->d[1]);
    rx_view_t x = whole4(c->n, c->ci, h, w), y = whole4(c->n, c->co, oh, ow);
    rx_view_t r = whole4(c->n, c->co, oh, ow);
    op.w = whole4(c->co, c->ci / c->groups, c->k[0], c->k[1]);
    double bias[8], db[8] = {0}, db2[8] = {0};
    for (int64_t i = 0; i < c->co; i++)
      bias[i] = urand(&rng);
    op.bias = bias;
    fill_uniform(&x, &rng);
    fill_uniform(&op.w, &rng);
    fill_uniform(&r, &rng);

    rx_view_t dx = whole4(c->n, c->ci, h, w);
    rx_view_t dw = whole4(c->co, c->ci / c->groups, c->k[0], c->k[1]);
    rx_view_t dw2 = whole4(c->co, c->ci / c->groups, c->k[0], c->k[1]);
    uint64_t v0 = rx_violations;
    rx_conv2d_bwd_data(&op.win, &r, &op.w, &dx);
    rx_conv2d_bwd_weight(&op.win, &r, &x, NULL, NULL, &dw, db);
    CHECK_EQ_U64(rx_violations, v0);

    objective_t o = {&op, {&x, NULL}, {&y, NULL}, &r};
    CHECK_NEAR(fd_error(&o, x.d, rx_count(&x), dx.d), 0, FD_TOL);
    CHECK_NEAR(fd_error(&o, op.w.d, rx_count(&op.w), dw.d), 0, FD_TOL);
    CHECK_NEAR(fd_error(&o, bias, c->co, db), 0, FD_TOL);

    /* Regions: the weight gradient over two halves of dy's rows adds up to the whole. */
    int64_t lo0[4] = {0, 0, 0, 0}, hi0[4] = {c->n, c->co, oh / 2, ow};
    int64_t lo1[4] = {0, 0, oh / 2, 0}, hi1[4] = {c->n, c->co, oh, ow};
    rx_conv2d_bwd_weight(&op.win, &r, &x, lo0, hi0, &dw2, db2);
    rx_conv2d_bwd_weight(&op.win, &r, &x, lo1, hi1, &dw2, db2);
    double e = 0;
    for (int64_t i = 0; i < rx_count(&dw); i++)
      e = fmax(e, fabs(dw.d[i] - dw2.d[i]));
    for (int64_t i = 0; i < c->co; i++)
      e = fmax(e, fabs(db[i] - db2[i]));
    CHECK_NEAR(e, 0, 1e-12);
    CHECK_EQ_U64(rx_violations, v0);

    rx_free(&x), rx_free(&y), rx_free(&r), rx_free(&op.w), rx_free(&dx), rx_free(&dw);
    rx_free(&dw2);
  }
}

typedef struct {
  int64_t k[2], s[2], p[2], d[2];
} pool_case_t;

static const pool_case_t pool_cases[] = {
    {{3, 3}, {2, 2}, {1, 1}, {1, 1}},
    {{2, 2}, {2, 2}, {0, 0}, {1, 1}},
    {{2, 3}, {1, 2}, {1, 1}, {1, 1}},
    {{3, 3}, {1, 1}, {1, 1}, {2, 2}}, /* dilated: max pool only */
};

static rx_win_t pool_win(const pool_case_t *c) {
  return make_win(c->k, c->s, c->p, c->d, 1);
}

static void test_grad_pool(void) {
  uint64_t rng = 0x13198A2E03707344ull;
  for (size_t t = 0; t < sizeof pool_cases / sizeof pool_cases[0]; t++) {
    const pool_case_t *c = &pool_cases[t];
    int64_t h = 6 + (int64_t)(test_rand_next(&rng) % 3),
            w = 6 + (int64_t)(test_rand_next(&rng) % 3);
    int64_t oh = out_size(h, c->k[0], c->s[0], c->p[0], c->d[0]);
    int64_t ow = out_size(w, c->k[1], c->s[1], c->p[1], c->d[1]);
    rx_view_t x = whole4(2, 2, h, w), y = whole4(2, 2, oh, ow), idx = whole4(2, 2, oh, ow);
    rx_view_t r = whole4(2, 2, oh, ow), dx = whole4(2, 2, h, w);
    fill_distinct(&x, &rng);
    fill_uniform(&r, &rng);
    uint64_t v0 = rx_violations;

    op_t mp = {.kind = OP_MAXPOOL, .win = pool_win(c)};
    rx_maxpool2d(&mp.win, &x, &y, &idx);
    rx_maxpool2d_bwd(&mp.win, &r, &idx, &dx);
    objective_t o = {&mp, {&x, NULL}, {&y, &idx}, &r};
    CHECK_NEAR(fd_error(&o, x.d, rx_count(&x), dx.d), 0, FD_TOL);

    if (c->d[0] == 1 && c->d[1] == 1) { /* average pooling has no dilation */
      op_t ap = {.kind = OP_AVGPOOL, .win = pool_win(c)};
      fill_uniform(&x, &rng);
      rx_avgpool2d_bwd(&ap.win, &r, &dx);
      objective_t oa = {&ap, {&x, NULL}, {&y, NULL}, &r};
      CHECK_NEAR(fd_error(&oa, x.d, rx_count(&x), dx.d), 0, FD_TOL);
    }
    CHECK_EQ_U64(rx_violations, v0);
    rx_free(&x), rx_free(&y), rx_free(&idx), rx_free(&r), rx_free(&dx);
  }
}

static void test_grad_pointwise(void) {
  uint64_t rng = 0xA4093822299F31D0ull;
  uint64_t v0 = rx_violations;
  rx_view_t a = whole4(2, 3, 5, 4), b = whole4(2, 3, 5, 4), y = whole4(2, 3, 5, 4);
  rx_view_t r = whole4(2, 3, 5, 4), da = whole4(2, 3, 5, 4);
  fill_uniform(&r, &rng);

  op_t relu = {.kind = OP_RELU};
  fill_away_from_zero(&a, &rng);
  rx_relu(&a, &y);
  rx_relu_bwd(&r, &y, &da);
  objective_t o = {&relu, {&a, NULL}, {&y, NULL}, &r};
  CHECK_NEAR(fd_error(&o, a.d, rx_count(&a), da.d), 0, FD_TOL);

  op_t add = {.kind = OP_ADD}; /* no backward op: both gradients are dy */
  fill_uniform(&a, &rng);
  fill_uniform(&b, &rng);
  objective_t oa = {&add, {&a, &b}, {&y, NULL}, &r};
  CHECK_NEAR(fd_error(&oa, a.d, rx_count(&a), r.d), 0, FD_TOL);
  CHECK_NEAR(fd_error(&oa, b.d, rx_count(&b), r.d), 0, FD_TOL);

  /* cat of 2 and 3 channels */
  rx_view_t ca = whole4(2, 2, 3, 4), cb = whole4(2, 3, 3, 4), cy = whole4(2, 5, 3, 4);
  rx_view_t cr = whole4(2, 5, 3, 4), dca = whole4(2, 2, 3, 4), dcb = whole4(2, 3, 3, 4);
  fill_uniform(&ca, &rng);
  fill_uniform(&cb, &rng);
  fill_uniform(&cr, &rng);
  rx_cat_bwd(&cr, &dca, &dcb);
  op_t cat = {.kind = OP_CAT};
  objective_t oc = {&cat, {&ca, &cb}, {&cy, NULL}, &cr};
  CHECK_NEAR(fd_error(&oc, ca.d, rx_count(&ca), dca.d), 0, FD_TOL);
  CHECK_NEAR(fd_error(&oc, cb.d, rx_count(&cb), dcb.d), 0, FD_TOL);

  CHECK_EQ_U64(rx_violations, v0);
  rx_free(&a), rx_free(&b), rx_free(&y), rx_free(&r), rx_free(&da);
  rx_free(&ca), rx_free(&cb), rx_free(&cy), rx_free(&cr), rx_free(&dca), rx_free(&dcb);
}

/* Upsampling: 2x, a non-integer ratio, and one of each. */
static const int64_t up_cases[][4] = {{4, 5, 8, 7}, {5, 3, 7, 6}, {3, 2, 3, 4}};
#define N_UP_CASES (sizeof up_cases / sizeof up_cases[0])

static void test_grad_upsample(void) {
  uint64_t rng = 0x082EFA98EC4E6C89ull;
  uint64_t v0 = rx_violations;
  for (size_t t = 0; t < N_UP_CASES; t++) {
    const int64_t *u = up_cases[t];
    rx_view_t x = whole4(1, 2, u[0], u[1]), dx = whole4(1, 2, u[0], u[1]);
    rx_view_t y = whole4(1, 2, u[2], u[3]), r = whole4(1, 2, u[2], u[3]);
    fill_uniform(&x, &rng);
    fill_uniform(&r, &rng);

    op_t nearest = {.kind = OP_UP_NEAREST};
    rx_upsample_nearest_bwd(&r, &dx);
    objective_t on = {&nearest, {&x, NULL}, {&y, NULL}, &r};
    CHECK_NEAR(fd_error(&on, x.d, rx_count(&x), dx.d), 0, FD_TOL);

    op_t bilinear = {.kind = OP_UP_BILINEAR};
    rx_upsample_bilinear_bwd(&r, &dx);
    objective_t ob = {&bilinear, {&x, NULL}, {&y, NULL}, &r};
    CHECK_NEAR(fd_error(&ob, x.d, rx_count(&x), dx.d), 0, FD_TOL);

    /* Both backward ops conserve the sum: every output's weights add up to 1. */
    for (int k = 0; k < 2; k++) {
      for (int64_t i = 0; i < rx_count(&r); i++)
        r.d[i] = 1;
      if (k)
        rx_upsample_bilinear_bwd(&r, &dx);
      else
        rx_upsample_nearest_bwd(&r, &dx);
      double s = 0;
      for (int64_t i = 0; i < rx_count(&dx); i++)
        s += dx.d[i];
      CHECK_NEAR(s, (double)rx_count(&r), 1e-12);
    }
    rx_free(&x), rx_free(&dx), rx_free(&y), rx_free(&r);
  }
  CHECK_EQ_U64(rx_violations, v0);
}

static void test_grad_mse(void) {
  uint64_t rng = 0x452821E638D01377ull;
  rx_view_t y = whole4(2, 3, 4, 5), t = whole4(2, 3, 4, 5), dy = whole4(2, 3, 4, 5);
  fill_uniform(&y, &rng);
  fill_uniform(&t, &rng);
  rx_mse_bwd(&y, &t, &dy);
  double worst = 0, direct = 0;
  for (int64_t i = 0; i < rx_count(&y); i++) {
    double save = y.d[i];
    y.d[i] = save + FD_H;
    double lp = rx_mse(&y, &t);
    y.d[i] = save - FD_H;
    double lm = rx_mse(&y, &t);
    y.d[i] = save;
    worst = fmax(worst, fabs((lp - lm) / (2 * FD_H) - dy.d[i]) / fmax(1.0, fabs(dy.d[i])));
    direct += (y.d[i] - t.d[i]) * (y.d[i] - t.d[i]);
  }
  CHECK_NEAR(worst, 0, FD_TOL);
  CHECK_NEAR(rx_mse(&y, &t), direct / (double)rx_count(&y), 1e-15);
  rx_free(&y), rx_free(&t), rx_free(&dy);
}

/* ---- b. box semantics ------------------------------------------------------------- */

static void hull_empty(int64_t h[8]) {
  for (int a = 0; a < 4; a++) {
    h[a] = INT64_MAX;
    h[4 + a] = INT64_MIN;
  }
}

static bool hull_is_empty(const int64_t h[8]) {
  return h[0] > h[4];
}

/* A view of `full` over hull h (an empty box when h is empty), filled from `src`. */
static rx_view_t view_over(const rx_view_t *src, const int64_t h[8]) {
  int64_t zero[4] = {0, 0, 0, 0};
  rx_view_t v = hull_is_empty(h) ? rx_alloc(src->full, zero, zero) : rx_alloc(src->full, h, h + 4);
  rx_copy_into(&v, src);
  return v;
}

/* Trial t's box of the output: whole, the low half, the high half, then random. */
static void pick_box(const int64_t full[4], int t, uint64_t *rng, int64_t lo[4], int64_t hi[4]) {
  for (int a = 0; a < 4; a++) {
    int64_t f = full[a];
    if (t == 0 || (t < 3 && a < 2)) {
      lo[a] = 0, hi[a] = f;
    } else if (t == 1) {
      lo[a] = 0, hi[a] = (f + 1) / 2;
    } else if (t == 2) {
      lo[a] = f / 2, hi[a] = f;
    } else {
      lo[a] = (int64_t)(test_rand_next(rng) % (uint64_t)f);
      hi[a] = lo[a] + 1 + (int64_t)(test_rand_next(rng) % (uint64_t)(f - lo[a]));
    }
  }
}

/* Runs op on whole inputs `in` (shapes given) into an output of shape ofull: over a few
 * sub-boxes, checks the read hulls and the exactness of a boxed run. */
static void box_check(const op_t *op, rx_view_t *const *in, const int64_t ofull[4], uint64_t *rng) {
  int nin = op_inputs(op->kind), nout = op_outputs(op->kind);
  /* NaN propagates through every op but the ReLUs (NaN > 0 is false): they need 1e6 too */
  int n_probes = op->kind == OP_RELU || op->kind == OP_RELU_BWD ? 2 : 1;
  rx_view_t wo[2], *wop[2] = {&wo[0], &wo[1]};
  for (int k = 0; k < nout; k++)
    wo[k] = rx_alloc(ofull, NULL, NULL);
  uint64_t v0 = rx_violations;
  op_run(op, in, wop);
  CHECK_EQ_U64(rx_violations, v0);

  for (int t = 0; t < 5; t++) {
    int64_t lo[4], hi[4];
    pick_box(ofull, t, rng, lo, hi);
    rx_view_t ob[2], *obp[2] = {&ob[0], &ob[1]};
    for (int k = 0; k < nout; k++)
      ob[k] = rx_alloc(ofull, lo, hi);

    /* Brute force: input elements whose change (to NaN or to 1e6) changes the box. */
    int64_t hull[2][8];
    bool hull_ok = true, reads_ok = true;
    for (int k = 0; k < nin; k++) {
      rx_view_t *x = in[k];
      hull_empty(hull[k]);
      int64_t i = 0;
      for (int64_t n = 0; n < x->full[0]; n++)
        for (int64_t c = 0; c < x->full[1]; c++)
          for (int64_t h = 0; h < x->full[2]; h++)
            for (int64_t w = 0; w < x->full[3]; w++, i++) {
              double save = x->d[i];
              const double probes[2] = {NAN, 1e6};
              bool changed = false;
              for (int p = 0; p < n_probes && !changed; p++) {
                x->d[i] = probes[p];
                op_run(op, in, obp);
                for (int o = 0; o < nout; o++)
                  changed = changed || !same_on_box(&ob[o], &wo[o]);
              }
              x->d[i] = save;
              if (!changed)
                continue;
              int64_t at[4] = {n, c, h, w};
              for (int a = 0; a < 4; a++) {
                hull[k][a] = at[a] < hull[k][a] ? at[a] : hull[k][a];
                hull[k][4 + a] = at[a] + 1 > hull[k][4 + a] ? at[a] + 1 : hull[k][4 + a];
              }
            }
      /* rx_get's read hull is the same box */
      int64_t reads[8];
      hull_empty(reads);
      x->reads = reads;
      op_run(op, in, obp);
      x->reads = NULL;
      if (hull_is_empty(hull[k]) ? !hull_is_empty(reads) : memcmp(reads, hull[k], sizeof reads))
        reads_ok = false;
    }
    CHECK(reads_ok);
    CHECK_EQ_U64(rx_violations, v0);

    /* Inputs held over exactly their hulls: the same bits, no violation. */
    rx_view_t xb[2], *xbp[2] = {&xb[0], &xb[1]};
    for (int k = 0; k < nin; k++)
      xb[k] = view_over(in[k], hull[k]);
    for (int k = 0; k < nout; k++)
      memset(ob[k].d, 0, (size_t)rx_count(&ob[k]) * sizeof(double));
    op_run(op, xbp, obp);
    CHECK_EQ_U64(rx_violations, v0);
    for (int k = 0; k < nout; k++)
      hull_ok = hull_ok && same_on_box(&ob[k], &wo[k]);
    CHECK(hull_ok);

    /* One row (or column) less on any side of an input: a violation. */
    bool all_seen = true;
    for (int k = 0; k < nin; k++) {
      if (hull_is_empty(hull[k]))
        continue;
      for (int a = 2; a < 4; a++)
        for (int side = 0; side < 2; side++) {
          int64_t h[8];
          memcpy(h, hull[k], sizeof h);
          if (side)
            h[4 + a]--;
          else
            h[a]++;
          rx_view_t small = view_over(in[k], h), saved = xb[k];
          xb[k] = small;
          uint64_t before = rx_violations;
          op_run(op, xbp, obp);
          all_seen = all_seen && rx_violations > before;
          xb[k] = saved;
          rx_free(&small);
        }
    }
    CHECK(all_seen);
    v0 = rx_violations;

    for (int k = 0; k < nin; k++)
      rx_free(&xb[k]);
    for (int k = 0; k < nout; k++)
      rx_free(&ob[k]);
  }
  for (int k = 0; k < nout; k++)
    rx_free(&wo[k]);
}

static void test_box_conv(void) {
  uint64_t rng = 0xBE5466CF34E90C6Cull;
  for (size_t t = 0; t < N_CONV_CASES; t++) {
    const conv_case_t *c = &conv_cases[t];
    int64_t h = 6, w = 5, n = t == 0 ? c->n : 1; /* small: the brute force is quadratic */
    op_t op = {.kind = OP_CONV, .win = conv_win(c)};
    int64_t oh = out_size(h, c->k[0], c->s[0], c->p[0], c->d[0]);
    int64_t ow = out_size(w, c->k[1], c->s[1], c->p[1], c->d[1]);
    double bias[8];
    for (int64_t i = 0; i < c->co; i++)
      bias[i] = urand(&rng);
    op.bias = bias;
    op.w = whole4(c->co, c->ci / c->groups, c->k[0], c->k[1]);
    fill_uniform(&op.w, &rng);
    rx_view_t x = whole4(n, c->ci, h, w), dy = whole4(n, c->co, oh, ow);
    fill_uniform(&x, &rng);
    fill_uniform(&dy, &rng);
    rx_view_t *in[2] = {&x, NULL};
    box_check(&op, in, dy.full, &rng);
    op.kind = OP_CONV_BWD_DATA;
    in[0] = &dy;
    box_check(&op, in, x.full, &rng);
    rx_free(&op.w), rx_free(&x), rx_free(&dy);
  }
}

static void test_box_pool(void) {
  uint64_t rng = 0xC0AC29B7C97C50DDull;
  for (size_t t = 0; t < sizeof pool_cases / sizeof pool_cases[0]; t++) {
    const pool_case_t *c = &pool_cases[t];
    int64_t h = 6, w = 7;
    int64_t oh = out_size(h, c->k[0], c->s[0], c->p[0], c->d[0]);
    int64_t ow = out_size(w, c->k[1], c->s[1], c->p[1], c->d[1]);
    rx_view_t x = whole4(2, 1, h, w), dy = whole4(2, 1, oh, ow);
    fill_uniform(&x, &rng);
    fill_uniform(&dy, &rng);
    op_t op = {.kind = OP_MAXPOOL, .win = pool_win(c)};
    rx_view_t *in[2] = {&x, NULL};
    box_check(&op, in, dy.full, &rng);
    if (c->d[0] == 1 && c->d[1] == 1) {
      op.kind = OP_AVGPOOL;
      box_check(&op, in, dy.full, &rng);
      op.kind = OP_AVGPOOL_BWD;
      in[0] = &dy;
      box_check(&op, in, x.full, &rng);
    }
    rx_free(&x), rx_free(&dy);
  }
}

static void test_box_pointwise(void) {
  uint64_t rng = 0x3F84D5B5B5470917ull;
  rx_view_t a = whole4(2, 3, 4, 5), b = whole4(2, 3, 4, 5), c2 = whole4(2, 2, 4, 5);
  fill_uniform(&a, &rng);
  fill_uniform(&b, &rng);
  fill_uniform(&c2, &rng);
  rx_view_t *in[2] = {&a, NULL};
  op_t op = {.kind = OP_RELU};
  box_check(&op, in, a.full, &rng);
  in[1] = &b;
  op.kind = OP_ADD;
  box_check(&op, in, a.full, &rng);
  op.kind = OP_RELU_BWD; /* dy = a, y = b */
  box_check(&op, in, a.full, &rng);
  in[1] = &c2;
  op.kind = OP_CAT;
  const int64_t cfull[4] = {2, 5, 4, 5};
  box_check(&op, in, cfull, &rng);
  rx_free(&a), rx_free(&b), rx_free(&c2);
}

static void test_box_upsample(void) {
  uint64_t rng = 0x9216D5D98979FB1Bull;
  for (size_t t = 0; t < N_UP_CASES; t++) {
    const int64_t *u = up_cases[t];
    rx_view_t x = whole4(1, 1, u[0], u[1]), dy = whole4(1, 1, u[2], u[3]);
    fill_uniform(&x, &rng);
    fill_uniform(&dy, &rng);
    rx_view_t *in[2] = {&x, NULL};
    op_t op = {.kind = OP_UP_NEAREST};
    box_check(&op, in, dy.full, &rng);
    op.kind = OP_UP_BILINEAR;
    box_check(&op, in, dy.full, &rng);
    in[0] = &dy;
    op.kind = OP_UP_NEAREST_BWD;
    box_check(&op, in, x.full, &rng);
    op.kind = OP_UP_BILINEAR_BWD;
    box_check(&op, in, x.full, &rng);
    rx_free(&x), rx_free(&dy);
  }
}

/* ---- c. tiny cases by hand -------------------------------------------------------- */

static void test_hand_conv(void) {
  rx_view_t x = whole4(1, 1, 3, 3), w = whole4(1, 1, 2, 2);
  for (int i = 0; i < 9; i++)
    x.d[i] = i + 1; /* 1 2 3 / 4 5 6 / 7 8 9 */
  for (int i = 0; i < 4; i++)
    w.d[i] = 1;
  rx_win_t p = {.k = {2, 2}, .s = {1, 1}, .p = {0, 0}, .d = {1, 1}, .groups = 1};
  rx_view_t y = whole4(1, 1, 2, 2);
  double bias = 0.5;
  rx_conv2d(&p, &x, &w, &bias, &y);
  const double want[4] = {1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9};
  for (int i = 0; i < 4; i++)
    CHECK(y.d[i] == want[i] + 0.5);

  /* padding 1: 4x4, zeros around */
  p.p[0] = p.p[1] = 1;
  rx_view_t yp = whole4(1, 1, 4, 4);
  rx_conv2d(&p, &x, &w, NULL, &yp);
  const double wantp[16] = {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9};
  bool ok = true;
  for (int i = 0; i < 16; i++)
    ok = ok && yp.d[i] == wantp[i];
  CHECK(ok);

  /* stride 2, padding 1: the corners of the padded sums */
  p.s[0] = p.s[1] = 2;
  rx_view_t ys = whole4(1, 1, 2, 2);
  rx_conv2d(&p, &x, &w, NULL, &ys);
  CHECK(ys.d[0] == 1 && ys.d[1] == 5 && ys.d[2] == 11 && ys.d[3] == 28);

  /* backward data of the unpadded, unit-stride conv with dy = 1: the tap counts */
  p = (rx_win_t){.k = {2, 2}, .s = {1, 1}, .p = {0, 0}, .d = {1, 1}, .groups = 1};
  rx_view_t dy = whole4(1, 1, 2, 2), dx = whole4(1, 1, 3, 3);
  for (int i = 0; i < 4; i++)
    dy.d[i] = 1;
  rx_conv2d_bwd_data(&p, &dy, &w, &dx);
  const double cnt[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
  ok = true;
  for (int i = 0; i < 9; i++)
    ok = ok && dx.d[i] == cnt[i];
  CHECK(ok);
  rx_free(&x), rx_free(&w), rx_free(&y), rx_free(&yp), rx_free(&ys), rx_free(&dy);
  rx_free(&dx);
}

static void test_hand_pool(void) {
  rx_win_t p = {.k = {2, 2}, .s = {2, 2}, .p = {0, 0}, .d = {1, 1}, .groups = 1};
  rx_view_t x = whole4(1, 1, 2, 4), y = whole4(1, 1, 1, 2), idx = whole4(1, 1, 1, 2);
  /* window 0: [1 3 / 3 2], the first 3 is at (0,1); window 1: all 7, the first at (0,2) */
  const double xs[8] = {1, 3, 7, 7, 3, 2, 7, 7};
  memcpy(x.d, xs, sizeof xs);
  rx_maxpool2d(&p, &x, &y, &idx);
  CHECK(y.d[0] == 3 && y.d[1] == 7);
  CHECK(idx.d[0] == 1 && idx.d[1] == 2);
  rx_view_t dy = whole4(1, 1, 1, 2), dx = whole4(1, 1, 2, 4);
  dy.d[0] = 10, dy.d[1] = 20;
  rx_maxpool2d_bwd(&p, &dy, &idx, &dx);
  const double wantdx[8] = {0, 10, 20, 0, 0, 0, 0, 0};
  CHECK(memcmp(dx.d, wantdx, sizeof wantdx) == 0);

  /* NaN wins and stays; padding is never chosen even when all values are negative */
  x.d[0] = NAN;
  rx_maxpool2d(&p, &x, &y, &idx);
  CHECK(isnan(y.d[0]) && idx.d[0] == 0);
  rx_win_t pp = {.k = {3, 3}, .s = {2, 2}, .p = {1, 1}, .d = {1, 1}, .groups = 1};
  for (int i = 0; i < 8; i++)
    x.d[i] = -1 - i;
  rx_maxpool2d(&pp, &x, &y, &idx);
  CHECK(y.d[0] == -1 && idx.d[0] == 0 && y.d[1] == -2 && idx.d[1] == 1);

  /* average, count_include_pad: a 2x2 window at a padded corner of ones is 1/4 */
  rx_win_t pa = {.k = {2, 2}, .s = {1, 1}, .p = {1, 1}, .d = {1, 1}, .groups = 1};
  rx_view_t ones = whole4(1, 1, 2, 2), ya = whole4(1, 1, 3, 3);
  for (int i = 0; i < 4; i++)
    ones.d[i] = 1;
  rx_avgpool2d(&pa, &ones, &ya);
  const double wanta[9] = {0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25};
  CHECK(memcmp(ya.d, wanta, sizeof wanta) == 0);
  rx_free(&x), rx_free(&y), rx_free(&idx), rx_free(&dy), rx_free(&dx), rx_free(&ones);
  rx_free(&ya);
}

static void test_hand_upsample(void) {
  rx_view_t x = whole4(1, 1, 1, 2), y = whole4(1, 1, 1, 4);
  x.d[0] = 1, x.d[1] = 3;
  rx_upsample_bilinear(&x, &y);
  const double want[4] = {1, 1.5, 2.5, 3}; /* torch.nn.functional.interpolate, bilinear */
  CHECK(memcmp(y.d, want, sizeof want) == 0);
  rx_upsample_nearest(&x, &y);
  const double wantn[4] = {1, 1, 3, 3};
  CHECK(memcmp(y.d, wantn, sizeof wantn) == 0);

  /* backward of the bilinear 2 -> 4 with dy = 1: weights 1 + .75 + .25 and .25 + .75 + 1 */
  rx_view_t dy = whole4(1, 1, 1, 4), dx = whole4(1, 1, 1, 2);
  for (int i = 0; i < 4; i++)
    dy.d[i] = 1;
  rx_upsample_bilinear_bwd(&dy, &dx);
  CHECK(dx.d[0] == 2 && dx.d[1] == 2);

  /* 2-D: 2x2 -> 4x4, the product of the 1-D weights (the centre four are 0.75/0.25 mixes) */
  rx_view_t x2 = whole4(1, 1, 2, 2), y2 = whole4(1, 1, 4, 4);
  const double xs[4] = {0, 4, 8, 12};
  memcpy(x2.d, xs, sizeof xs);
  rx_upsample_bilinear(&x2, &y2);
  const double want2[16] = {0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12};
  CHECK(memcmp(y2.d, want2, sizeof want2) == 0);
  /* nearest 5 -> 7: floor(o * 5 / 7) = 0 0 1 2 2 3 4 (PyTorch's mode='nearest') */
  rx_view_t x5 = whole4(1, 1, 1, 5), y7 = whole4(1, 1, 1, 7);
  for (int i = 0; i < 5; i++)
    x5.d[i] = 10 * i;
  rx_upsample_nearest(&x5, &y7);
  const double want7[7] = {0, 0, 10, 20, 20, 30, 40};
  CHECK(memcmp(y7.d, want7, sizeof want7) == 0);
  rx_free(&x), rx_free(&y), rx_free(&dy), rx_free(&dx), rx_free(&x2), rx_free(&y2);
  rx_free(&x5), rx_free(&y7);
}

static void test_hand_pointwise(void) {
  rx_view_t a = whole4(1, 1, 1, 4), b = whole4(1, 1, 1, 4), y = whole4(1, 1, 1, 4);
  const double as[4] = {-1, 1e-300, 0, 2}, bs[4] = {5, 6, 7, 8};
  memcpy(a.d, as, sizeof as);
  memcpy(b.d, bs, sizeof bs);
  rx_relu(&a, &y);
  const double wantr[4] = {0, 1e-300, 0, 2};
  CHECK(memcmp(y.d, wantr, sizeof wantr) == 0);
  rx_relu_bwd(&b, &y, &a); /* dx = dy where y > 0 */
  const double wantd[4] = {0, 6, 0, 8};
  CHECK(memcmp(a.d, wantd, sizeof wantd) == 0);
  rx_add(&a, &b, &y);
  const double wanta[4] = {5, 12, 7, 16};
  CHECK(memcmp(y.d, wanta, sizeof wanta) == 0);
  rx_free(&a), rx_free(&b), rx_free(&y);
}

/* ---- d. views --------------------------------------------------------------------- */

static void test_views(void) {
  const int64_t full[4] = {1, 2, 4, 4}, lo[4] = {0, 1, 1, 1}, hi[4] = {1, 2, 3, 3};
  rx_view_t v = rx_alloc(full, lo, hi);
  CHECK_EQ_I64(rx_count(&v), 4);
  for (int i = 0; i < 4; i++)
    v.d[i] = i + 1;
  CHECK(rx_get(&v, 0, 1, 1, 1) == 1 && rx_get(&v, 0, 1, 2, 2) == 4);
  CHECK(rx_at(&v, 0, 1, 2, 1) == &v.d[2]);

  uint64_t v0 = rx_violations;
  CHECK(rx_get(&v, 0, 1, -1, 2) == 0 && rx_get(&v, 0, 1, 4, 0) == 0); /* outside the tensor */
  CHECK(rx_get(&v, 0, 2, 1, 1) == 0);
  CHECK_EQ_U64(rx_violations, v0);
  CHECK(rx_get(&v, 0, 0, 1, 1) == 0); /* in the tensor, outside the box */
  CHECK_EQ_U64(rx_violations, v0 + 1);
  CHECK(rx_at(&v, 0, 1, 0, 0) == NULL);
  CHECK_EQ_U64(rx_violations, v0 + 2);

  v.zero_outside = true;
  CHECK(rx_get(&v, 0, 0, 1, 1) == 0 && rx_get(&v, 0, 1, 3, 3) == 0 && rx_get(&v, 0, 1, 2, 2) == 4);
  CHECK_EQ_U64(rx_violations, v0 + 2);

  /* the read hull: every read inside the tensor, in the box or not */
  int64_t reads[8] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX,
                      INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
  v.reads = reads;
  (void)rx_get(&v, 0, 1, 1, 2);
  (void)rx_get(&v, 0, 0, 3, 0);
  (void)rx_get(&v, 0, 1, -5, 9); /* outside the tensor: not a read */
  v.reads = NULL;
  const int64_t want[8] = {0, 0, 1, 0, 1, 2, 4, 3};
  CHECK(memcmp(reads, want, sizeof want) == 0);

  /* a zero_outside dy: a max-pool output outside its box contributes nothing and its idx
   * (here held over dy's box only) is not read */
  rx_win_t p = {.k = {2, 2}, .s = {2, 2}, .p = {0, 0}, .d = {1, 1}, .groups = 1};
  const int64_t yfull[4] = {1, 1, 2, 2}, ylo[4] = {0, 0, 0, 0}, yhi[4] = {1, 1, 1, 2};
  rx_view_t dy = rx_alloc(yfull, ylo, yhi), idx = rx_alloc(yfull, ylo, yhi);
  dy.zero_outside = true;
  dy.d[0] = 5, dy.d[1] = 7;
  idx.d[0] = 4 * 1 + 1, idx.d[1] = 2;
  const int64_t xfull[4] = {1, 1, 4, 4};
  rx_view_t dx = rx_alloc(xfull, NULL, NULL);
  uint64_t v1 = rx_violations;
  rx_maxpool2d_bwd(&p, &dy, &idx, &dx);
  CHECK_EQ_U64(rx_violations, v1);
  CHECK(dx.d[5] == 5 && dx.d[2] == 7 && dx.d[0] == 0);
  dy.zero_outside = false; /* now the rows outside are violations (dy and idx) */
  rx_maxpool2d_bwd(&p, &dy, &idx, &dx);
  CHECK(rx_violations > v1);

  /* copy / add the overlap of two boxes */
  const int64_t flo[4] = {0, 0, 0, 0}, fhi[4] = {1, 2, 2, 2};
  rx_view_t src = rx_alloc(full, flo, fhi);
  for (int i = 0; i < 8; i++)
    src.d[i] = 10 + i;
  rx_view_t dst = rx_alloc(full, lo, hi);
  for (int i = 0; i < 4; i++)
    dst.d[i] = -1;
  uint64_t v2 = rx_violations;
  rx_copy_into(&dst, &src); /* overlap: c 1, h 1, w 1 -> src (0,1,1,1) = 10 + 4 + 2 + 1 */
  CHECK(dst.d[0] == 17 && dst.d[1] == -1 && dst.d[2] == -1 && dst.d[3] == -1);
  rx_add_into(&dst, &src);
  CHECK(dst.d[0] == 34 && dst.d[1] == -1);
  CHECK_EQ_U64(rx_violations, v2); /* copies never count */

  rx_free(&v), rx_free(&dy), rx_free(&idx), rx_free(&dx), rx_free(&src), rx_free(&dst);
}

int main(void) {
  RUN(test_grad_conv);
  RUN(test_grad_pool);
  RUN(test_grad_pointwise);
  RUN(test_grad_upsample);
  RUN(test_grad_mse);
  RUN(test_box_conv);
  RUN(test_box_pool);
  RUN(test_box_pointwise);
  RUN(test_box_upsample);
  RUN(test_hand_conv);
  RUN(test_hand_pool);
  RUN(test_hand_upsample);
  RUN(test_hand_pointwise);
  RUN(test_views);
  return check_summary();
}
