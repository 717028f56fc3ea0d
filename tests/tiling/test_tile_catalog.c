/* test_tile_catalog.c — the FT op catalog's index maps (compiler/src/tile_catalog.c)
 * against shared/data/tiling/halo_vectors.csv (301 ranges found by enumerating index
 * sets, written for this project by someone else: every row of an op the catalog maps
 * must give exactly its exact_lo..exact_hi, "-" meaning no index) and against this
 * file's own enumeration on 20,000 random windows (stride, padding, dilation, every
 * query range). Exit 77 without the shared data for the first part only. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halo_csv.h"
#include "test_rand.h"
#include "tile_catalog.h"

/* The row's query mapped by the catalog: true and [lo, hi], or false (no index). */
static bool map_row(const char *op, int64_t n_in, int64_t n_out, int64_t k, int64_t s, int64_t p,
                    int64_t d, int64_t qlo, int64_t qhi, int64_t *lo, int64_t *hi, bool *known) {
  sfc_map_window_t w = {n_in, n_out, k, s, p, d};
  *known = true;
  if (strncmp(op, "conv_fwd(", 9) == 0 || strncmp(op, "pool_fwd(", 9) == 0)
    return sfc_map_window_in(&w, qlo, qhi, lo, hi);
  if (strncmp(op, "conv_bwd_data(", 14) == 0 || strcmp(op, "maxpool_bwd(dX->dY)") == 0)
    return sfc_map_window_out(&w, qlo, qhi, lo, hi);
  if (strcmp(op, "maxpool_bwd(dX->X for argmax)") == 0) { /* the outputs, then their windows */
    int64_t a, b;
    return sfc_map_window_out(&w, qlo, qhi, &a, &b) && sfc_map_window_in(&w, a, b, lo, hi);
  }
  if (strncmp(op, "convT_fwd(", 10) == 0) { /* a conv from its output back to its input */
    sfc_map_window_t c = {n_out, n_in, k, s, p, d};
    return sfc_map_window_out(&c, qlo, qhi, lo, hi);
  }
  if (strncmp(op, "upsample_nearest(", 17) == 0)
    return sfc_map_nearest_in(n_in, n_out, qlo, qhi, lo, hi);
  if (strncmp(op, "upsample_bilinear_ac_false(", 27) == 0)
    return sfc_map_bilinear_in(n_in, n_out, qlo, qhi, lo, hi);
  *known = false;
  return false;
}

static int halo_vectors(void) {
  FILE *f = halo_csv_open();
  if (!f)
    return 77;
  halo_row_t r = {0};
  int rows = 0, checked = 0;
  while (halo_csv_next(f, &r)) {
    rows++;
    int64_t lo = -1, hi = -1;
    bool known;
    bool any = map_row(r.op, r.n_in, r.n_out, r.k, r.s, r.p, r.d, r.qlo, r.qhi, &lo, &hi, &known);
    CHECK(known);
    if (!known)
      continue;
    checked++;
    if (!any)
      lo = hi = -1;
    if (lo != r.elo || hi != r.ehi)
      fprintf(stderr,
              "line %d %s n_in %lld n_out %lld k %lld s %lld p %lld d %lld [%lld, %lld]: "
              "catalog [%lld, %lld], exact [%lld, %lld]\n",
              r.line, r.op, (long long)r.n_in, (long long)r.n_out, (long long)r.k, (long long)r.s,
              (long long)r.p, (long long)r.d, (long long)r.qlo, (long long)r.qhi, (long long)lo,
              (long long)hi, (long long)r.elo, (long long)r.ehi);
    CHECK_EQ_I64(lo, r.elo);
    CHECK_EQ_I64(hi, r.ehi);
  }
  fclose(f);
  fprintf(stderr, "  halo_vectors.csv: %d rows, %d checked\n", rows, checked);
  CHECK(checked == rows && checked >= 300);
  return 0;
}

/* Enumeration: every (output, tap) pair of a random window, both maps, every range. */
static void random_windows(void) {
  uint64_t rng = 0xF7C0DEULL;
  int64_t cases = 0;
  for (int t = 0; t < 20000; t++) {
    sfc_map_window_t w;
    w.k = 1 + (int64_t)(test_rand_next(&rng) % 5);
    w.s = 1 + (int64_t)(test_rand_next(&rng) % 3);
    w.d = 1 + (int64_t)(test_rand_next(&rng) % 3);
    w.p = (int64_t)(test_rand_next(&rng) % (w.k * w.d));
    w.n_in = 1 + (int64_t)(test_rand_next(&rng) % 20);
    int64_t span = (w.k - 1) * w.d + 1;
    if (w.n_in + 2 * w.p < span)
      continue;
    w.n_out = (w.n_in + 2 * w.p - span) / w.s + 1;
    int64_t a = (int64_t)(test_rand_next(&rng) % (uint64_t)w.n_out);
    int64_t b = a + (int64_t)(test_rand_next(&rng) % (uint64_t)(w.n_out - a));
    int64_t lo = -1, hi = -1, elo = -1, ehi = -1;
    for (int64_t o = a; o <= b; o++) /* out -> in */
      for (int64_t j = 0; j < w.k; j++) {
        int64_t i = o * w.s - w.p + j * w.d;
        if (i >= 0 && i < w.n_in) {
          elo = elo < 0 || i < elo ? i : elo;
          ehi = i > ehi ? i : ehi;
        }
      }
    if (!sfc_map_window_in(&w, a, b, &lo, &hi))
      lo = hi = -1;
    CHECK_EQ_I64(lo, elo);
    CHECK_EQ_I64(hi, ehi);
    int64_t ia = (int64_t)(test_rand_next(&rng) % (uint64_t)w.n_in);
    int64_t ib = ia + (int64_t)(test_rand_next(&rng) % (uint64_t)(w.n_in - ia));
    elo = ehi = -1;
    for (int64_t o = 0; o < w.n_out; o++) /* in -> the outputs reading it */
      for (int64_t j = 0; j < w.k; j++) {
        int64_t i = o * w.s - w.p + j * w.d;
        if (i >= ia && i <= ib) {
          elo = elo < 0 || o < elo ? o : elo;
          ehi = o > ehi ? o : ehi;
        }
      }
    if (!sfc_map_window_out(&w, ia, ib, &lo, &hi))
      lo = hi = -1;
    CHECK_EQ_I64(lo, elo);
    CHECK_EQ_I64(hi, ehi);
    cases++;
  }
  fprintf(stderr, "  %lld random windows enumerated\n", (long long)cases);
  CHECK(cases > 10000);
}

/* Upsampling's backward maps (seed halo mode: which output gradients an input gradient
 * range needs) against enumeration of the forward maps, every range of small sizes. */
static void upsample_inverse(void) {
  uint64_t cases = 0;
  for (int bil = 0; bil < 2; bil++)
    for (int64_t n_in = 1; n_in <= 9; n_in++)
      for (int64_t n_out = 1; n_out <= 19; n_out++)
        for (int64_t lo = 0; lo < n_in; lo++)
          for (int64_t hi = lo; hi < n_in; hi++) {
            int64_t elo = -1, ehi = -1; /* outputs whose taps meet [lo, hi] */
            for (int64_t o = 0; o < n_out; o++) {
              int64_t a = 0, b = 0;
              if (bil)
                sfc_map_bilinear_in(n_in, n_out, o, o, &a, &b);
              else
                sfc_map_nearest_in(n_in, n_out, o, o, &a, &b);
              if (b >= lo && a <= hi) {
                elo = elo < 0 ? o : elo;
                ehi = o;
              }
            }
            int64_t olo = -1, ohi = -1;
            bool any = bil ? sfc_map_bilinear_out(n_in, n_out, lo, hi, &olo, &ohi)
                           : sfc_map_nearest_out(n_in, n_out, lo, hi, &olo, &ohi);
            CHECK(any == (elo >= 0));
            if (any && elo >= 0) {
              CHECK_EQ_I64(olo, elo);
              CHECK_EQ_I64(ohi, ehi);
            }
            cases++;
          }
  CHECK(!sfc_map_nearest_out(4, 8, 2, 4, &(int64_t){0}, &(int64_t){0})); /* out of range */
  fprintf(stderr, "  %llu upsampling backward ranges enumerated\n", (unsigned long long)cases);
}

/* The table: every bundled spatial op type is listed; unknown types end a segment. */
static void table(void) {
  const char *spatial[] = {"convolution",
                           "convolution_backward",
                           "max_pool2d_with_indices",
                           "max_pool2d_with_indices_backward",
                           "avg_pool2d",
                           "avg_pool2d_backward",
                           "relu_",
                           "threshold_backward",
                           "add_",
                           "cat",
                           "detach"};
  for (size_t i = 0; i < sizeof spatial / sizeof spatial[0]; i++) {
    const sfc_ft_entry_t *e = sfc_ft_lookup(spatial[i]);
    CHECK(e && e->cls != SFC_FT_END);
  }
  CHECK(sfc_ft_lookup("native_batch_norm")->cls == SFC_FT_END);
  CHECK(sfc_ft_lookup("some_new_op") == NULL);
  uint32_t n;
  const sfc_ft_entry_t *all = sfc_ft_entries(&n);
  for (uint32_t i = 0; i < n; i++)
    CHECK(sfc_ft_lookup(all[i].type) == &all[i]); /* no duplicates */
}

int main(void) {
  RUN(table);
  RUN(random_windows);
  RUN(upsample_inverse);
  int rc = halo_vectors();
  int failed = check_summary();
  return failed ? failed : rc;
}
