/* timeline.c — `sfc inspect PLAN --timeline OUT.svg` (see timeline.h). */
#include "timeline.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "svg.h"

#define MAX_COLUMNS 1200
#define LEFT        90.0
#define TOP         50.0
#define MEM_H       360.0
#define GAP         34.0
#define COPY_H      120.0
#define PLOT_W      1200.0
#define WIDTH       (LEFT + PLOT_W + 180.0)
#define HEIGHT      (TOP + MEM_H + GAP + COPY_H + 60.0)

static const char *const kind_color[SFC_KIND_COUNT] = {
    "#8c564b", /* input */
    "#1f77b4", /* param */
    "#9467bd", /* optimizer */
    "#2ca02c", /* activation */
    "#ff7f0e", /* grad */
    "#7f7f7f", /* workspace */
    "#17becf", /* output */
};

/* Per step: device bytes by kind, traffic by direction, stall. */
typedef struct series {
  uint32_t n;
  uint64_t *kind[SFC_KIND_COUNT]; /* [n] */
  uint64_t *out_bytes, *in_bytes; /* [n + 1]: issued before step k (n: at the end) */
  double *stall_us;               /* [n], NULL without a sim replay */
} series_t;

static void series_free(series_t *s) {
  for (int k = 0; k < SFC_KIND_COUNT; k++)
    free(s->kind[k]);
  free(s->out_bytes);
  free(s->in_bytes);
  free(s->stall_us);
}

static bool series_build(const sfc_plan_view_t *v, series_t *s) {
  uint32_t n = v->step_count;
  *s = (series_t){.n = n};
  int64_t *diff = calloc((size_t)n + 1, sizeof *diff);
  s->out_bytes = calloc((size_t)n + 1, sizeof *s->out_bytes);
  s->in_bytes = calloc((size_t)n + 1, sizeof *s->in_bytes);
  bool ok = diff && s->out_bytes && s->in_bytes;
  for (int k = 0; ok && k < SFC_KIND_COUNT; k++) {
    s->kind[k] = calloc((size_t)n + 1, sizeof *s->kind[k]);
    ok = s->kind[k] != NULL;
    if (!ok)
      break;
    memset(diff, 0, ((size_t)n + 1) * sizeof *diff);
    for (uint32_t b = 0; b < v->block_count; b++) {
      const sfc_plan_block_t *x = &v->blocks[b];
      if (v->tensors[x->tensor].kind != k || (x->flags & SFC_BLOCK_EXTERNAL) || x->bytes == 0)
        continue;
      diff[x->first_step] += (int64_t)x->bytes;
      diff[x->last_step + 1] -= (int64_t)x->bytes;
    }
    int64_t run = 0;
    for (uint32_t i = 0; i < n; i++) {
      run += diff[i];
      s->kind[k][i] = (uint64_t)run;
    }
  }
  for (uint32_t i = 0; ok && i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    uint64_t *to = w->direction == SFC_SWAP_OUT ? s->out_bytes : s->in_bytes;
    to[w->issue_step] += w->bytes;
  }
  free(diff);
  return ok;
}

/* The per-step stalls of one iteration on the sim device (the plan's link and op
 * times); false (and no stalls drawn) when the replay fails. */
static bool replay_stalls(const sfcrt_plan_t *plan, series_t *s) {
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_session_t *ses = NULL;
  sfc_error_t err;
  if (sfcrt_session_create(plan, &opt, &ses, &err) != SFC_OK)
    return false;
  bool ok = sfcrt_session_run(ses, 1, &err) == SFC_OK;
  sfcrt_stats_t st;
  if (ok) {
    sfcrt_session_stats(ses, &st);
    ok = st.step_stall_us && st.step_count == s->n;
  }
  if (ok) {
    s->stall_us = malloc(((size_t)s->n + 1) * sizeof *s->stall_us);
    ok = s->stall_us != NULL;
    if (ok)
      memcpy(s->stall_us, st.step_stall_us, (size_t)s->n * sizeof *s->stall_us);
  }
  sfcrt_session_destroy(ses);
  return ok;
}

static double gib(uint64_t b) {
  return (double)b / (double)(UINT64_C(1) << 30);
}

static void legend(FILE *f, double y, const char *color, const char *label, const char *dash) {
  double x = LEFT + PLOT_W + 16;
  if (dash)
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n",
            x, y - 4, x + 14, y - 4, color, dash);
  else
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x, y - 9,
            color);
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x + 20, y, label);
}

static bool write_svg(FILE *f, const sfc_plan_view_t *v, const series_t *s, const char *title) {
  uint32_t n = s->n, cols = n < MAX_COLUMNS ? n : MAX_COLUMNS;
  if (cols == 0)
    cols = 1;
  /* each column: the step of largest device bytes (its stack), traffic summed */
  uint64_t ymax = v->header.budget_bytes, tmax = 1;
  uint32_t *pick = calloc(cols, sizeof *pick);
  uint64_t *cin = calloc(cols, sizeof *cin), *cout = calloc(cols, sizeof *cout);
  double *cstall = calloc(cols, sizeof *cstall);
  if (!pick || !cin || !cout || !cstall) {
    free(pick);
    free(cin);
    free(cout);
    free(cstall);
    return false;
  }
  for (uint32_t c = 0; c < cols; c++) {
    uint32_t lo = (uint32_t)((uint64_t)c * n / cols), hi = (uint32_t)((uint64_t)(c + 1) * n / cols);
    uint64_t best = 0;
    pick[c] = lo;
    for (uint32_t k = lo; k < hi; k++) {
      uint64_t tot = 0;
      for (int j = 0; j < SFC_KIND_COUNT; j++)
        tot += s->kind[j][k];
      if (tot > best) {
        best = tot;
        pick[c] = k;
      }
      cin[c] += s->in_bytes[k];
      cout[c] += s->out_bytes[k];
      cstall[c] += s->stall_us ? s->stall_us[k] : 0;
    }
    if (c + 1 == cols) { /* copies issued at the end of the iteration */
      cin[c] += s->in_bytes[n];
      cout[c] += s->out_bytes[n];
    }
    ymax = best > ymax ? best : ymax;
    tmax = cin[c] > tmax ? cin[c] : tmax;
    tmax = cout[c] > tmax ? cout[c] : tmax;
  }
  if (ymax == 0)
    ymax = 1;
  double cw = PLOT_W / cols, sy = MEM_H / (double)ymax, half = COPY_H / 2, st = half / (double)tmax;
  double base = TOP + MEM_H, axis = TOP + MEM_H + GAP + half;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "font-family=\"sans-serif\">\n",
          WIDTH, HEIGHT);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(f, "<text x=\"%.1f\" y=\"24\" font-size=\"16\">", LEFT);
  sfc_svg_put_escaped(f, title);
  fputs("</text>\n", f);
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">step 0 .. %u "
          "(%u columns; each shows the step of most device bytes in it)</text>\n",
          LEFT + PLOT_W / 2, HEIGHT - 14, n ? n - 1 : 0, cols);
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.2f GiB</text>\n"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">0</text>\n",
          LEFT - 6, TOP + 10, gib(ymax), LEFT - 6, base);
  /* device bytes, stacked by kind */
  fputs("<g id=\"memory\">\n", f);
  for (uint32_t c = 0; c < cols; c++) {
    uint32_t k = pick[c];
    double y = base;
    for (int j = 0; j < SFC_KIND_COUNT; j++) {
      uint64_t b = s->kind[j][k];
      if (!b)
        continue;
      double h = (double)b * sy;
      y -= h;
      fprintf(f,
              "<rect class=\"mem\" data-col=\"%u\" data-step=\"%u\" data-kind=\"%s\" "
              "data-bytes=\"%" PRIu64 "\" x=\"%.2f\" y=\"%.3f\" width=\"%.2f\" height=\"%.3f\" "
              "fill=\"%s\"/>\n",
              c, k, sfc_tensor_kind_name(j), b, LEFT + c * cw, y, cw, h, kind_color[j]);
    }
  }
  fputs("</g>\n", f);
  if (v->header.budget_bytes)
    fprintf(f,
            "<line id=\"budget\" data-bytes=\"%" PRIu64 "\" x1=\"%.1f\" y1=\"%.3f\" x2=\"%.1f\" "
            "y2=\"%.3f\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n",
            v->header.budget_bytes, LEFT, base - (double)v->header.budget_bytes * sy, LEFT + PLOT_W,
            base - (double)v->header.budget_bytes * sy);
  /* stalls: a red tick above each column whose steps waited for copies */
  fputs("<g id=\"stalls\">\n", f);
  for (uint32_t c = 0; c < cols; c++)
    if (cstall[c] > 0)
      fprintf(f,
              "<rect class=\"stall\" data-col=\"%u\" data-us=\"%.3f\" x=\"%.2f\" y=\"%.1f\" "
              "width=\"%.2f\" height=\"8\" fill=\"#d62728\"><title>stall %.3f us</title></rect>\n",
              c, cstall[c], LEFT + c * cw, base + 6, cw < 1 ? 1 : cw, cstall[c]);
  fputs("</g>\n", f);
  /* traffic: swap-outs above the axis, swap-ins below */
  fprintf(f,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">out %.2f GiB</text>\n"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">in %.2f GiB</text>\n",
          LEFT, axis, LEFT + PLOT_W, axis, LEFT - 6, axis - half + 10, gib(tmax), LEFT - 6,
          axis + half, gib(tmax));
  fputs("<g id=\"traffic\">\n", f);
  for (uint32_t c = 0; c < cols; c++) {
    if (cout[c])
      fprintf(f,
              "<rect class=\"out\" data-col=\"%u\" data-bytes=\"%" PRIu64 "\" x=\"%.2f\" "
              "y=\"%.3f\" width=\"%.2f\" height=\"%.3f\" fill=\"#1f77b4\"/>\n",
              c, cout[c], LEFT + c * cw, axis - (double)cout[c] * st, cw, (double)cout[c] * st);
    if (cin[c])
      fprintf(f,
              "<rect class=\"in\" data-col=\"%u\" data-bytes=\"%" PRIu64 "\" x=\"%.2f\" "
              "y=\"%.3f\" width=\"%.2f\" height=\"%.3f\" fill=\"#ff7f0e\"/>\n",
              c, cin[c], LEFT + c * cw, axis, cw, (double)cin[c] * st);
  }
  fputs("</g>\n", f);
  double ly = TOP + 10;
  for (int j = 0; j < SFC_KIND_COUNT; j++, ly += 18)
    legend(f, ly, kind_color[j], sfc_tensor_kind_name(j), NULL);
  legend(f, ly, "#d62728", "budget", "6,4");
  legend(f, ly + 18, "#d62728", s->stall_us ? "stall (sim replay)" : "stall (not replayed)", NULL);
  legend(f, axis - half + 10, "#1f77b4", "swap-out bytes", NULL);
  legend(f, axis + 10, "#ff7f0e", "swap-in bytes", NULL);
  fputs("</svg>\n", f);
  free(pick);
  free(cin);
  free(cout);
  free(cstall);
  return true;
}

sfc_status_t sfc_timeline_write_file(const char *path, const sfcrt_plan_t *plan, const char *title,
                                     sfc_error_t *err) {
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  series_t s;
  if (!series_build(v, &s)) {
    series_free(&s);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory drawing the timeline");
  }
  replay_stalls(plan, &s); /* without it, no stalls are drawn and the legend says so */
  sfc_outfile_t o;
  sfc_status_t st = sfc_outfile_begin(&o, path, err);
  if (st == SFC_OK) {
    bool drawn = write_svg(o.f, v, &s, title);
    if (!drawn || ferror(o.f)) {
      sfc_outfile_abort(&o);
      st = drawn ? sfc_error_set(err, SFC_ERR_IO, "%s: cannot write the SVG", path)
                 : sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory drawing the timeline");
    } else {
      st = sfc_outfile_commit(&o, err);
    }
  }
  series_free(&s);
  return st;
}
