/* svg.c — an SVG picture of a packing (see svg.h).
 *
 * Plot area 1000 x 600 user units inside margins for the axis labels. x maps time
 * linearly from the earliest start to the latest end, y maps offsets from 0 at the
 * bottom to max(peak, lower bound, capacity) at the top. Each block is one <rect>
 * (at least 0.5 units wide and tall so tiny blocks stay visible) with a <title>
 * tooltip (name, offset, size, lifetime), coloured by a hash of its index, and
 * class="b" so scripts and tests can count them. O(n).
 */
#include "svg.h"

#include "outfile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_W 1000.0
#define PLOT_H 600.0
#define LEFT   90.0
#define TOP    40.0
#define BOTTOM 40.0
#define RIGHT  20.0

void sfc_svg_put_escaped(FILE *out, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '<':
        fputs("&lt;", out);
        break;
      case '>':
        fputs("&gt;", out);
        break;
      case '&':
        fputs("&amp;", out);
        break;
      case '"':
        fputs("&quot;", out);
        break;
      default:
        if ((unsigned char)*s >= 0x20 || *s == '\t')
          fputc(*s, out);
    }
  }
}

static uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static void hline(FILE *out, double y, const char *colour, const char *dash, const char *label,
                  uint64_t value) {
  fprintf(out,
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
          "stroke-width=\"1.5\"%s%s%s/>\n",
          LEFT, y, LEFT + PLOT_W, y, colour, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
          dash ? "\"" : "");
  fprintf(out,
          "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\" text-anchor=\"end\">%s "
          "%" PRIu64 "</text>\n",
          LEFT + PLOT_W, y - 4, colour, label, value);
}

sfc_status_t sfc_svg_write(FILE *out, const sfc_svg_packing_t *pic, sfc_error_t *err) {
  int64_t t0 = 0, t1 = 1;
  uint64_t peak = 0;
  for (size_t i = 0; i < pic->count; i++) {
    const sfc_pack_block_t *b = &pic->blocks[i];
    if (i == 0 || b->start < t0)
      t0 = b->start;
    if (i == 0 || b->end > t1)
      t1 = b->end;
    if (b->offset + b->size > peak)
      peak = b->offset + b->size;
  }
  if (t1 <= t0)
    t1 = t0 + 1;
  uint64_t ymax = peak;
  if (pic->lower_bound > ymax)
    ymax = pic->lower_bound;
  if (pic->capacity > ymax)
    ymax = pic->capacity;
  if (ymax == 0)
    ymax = 1;
  double sx = PLOT_W / (double)(t1 - t0), sy = PLOT_H / (double)ymax;
  double width = LEFT + PLOT_W + RIGHT, height = TOP + PLOT_H + BOTTOM;
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
          width, height, width, height);
  fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width,
          height);
  if (pic->title) {
    fprintf(out, "<text x=\"%.2f\" y=\"24\" font-size=\"16\">", LEFT);
    sfc_svg_put_escaped(out, pic->title);
    fputs("</text>\n", out);
  }
  fprintf(out,
          "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
          "stroke=\"#888\"/>\n",
          LEFT, TOP, PLOT_W, PLOT_H);
  fprintf(out,
          "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\">time %" PRId64
          " .. %" PRId64 "</text>\n",
          LEFT + PLOT_W / 2, TOP + PLOT_H + 28, t0, t1);
  fprintf(out,
          "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"end\">0</text>\n"
          "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"end\">%" PRIu64 "</text>\n",
          LEFT - 6, TOP + PLOT_H, LEFT - 6, TOP + 12, ymax);
  fputs("<g stroke=\"#333\" stroke-width=\"0.2\">\n", out);
  for (size_t i = 0; i < pic->count; i++) {
    const sfc_pack_block_t *b = &pic->blocks[i];
    double x = LEFT + (double)(b->start - t0) * sx, w = (double)(b->end - b->start) * sx;
    double h = (double)b->size * sy, y = TOP + PLOT_H - (double)(b->offset + b->size) * sy;
    if (w < 0.5)
      w = 0.5;
    if (h < 0.5)
      h = 0.5;
    uint32_t c = hash32((uint32_t)i);
    fprintf(out,
            "<rect class=\"b\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
            "fill=\"hsl(%u,60%%,%u%%)\"><title>",
            x, y, w, h, c % 360, 55 + (c >> 16) % 25);
    if (pic->names)
      sfc_svg_put_escaped(out, pic->names[i]);
    else
      fprintf(out, "%zu", i);
    fprintf(out,
            ": offset %" PRIu64 ", size %" PRIu64 ", [%" PRId64 ", %" PRId64 ")</title></rect>\n",
            b->offset, b->size, b->start, b->end);
  }
  fputs("</g>\n", out);
  if (pic->lower_bound)
    hline(out, TOP + PLOT_H - (double)pic->lower_bound * sy, "#c00", "6,4", "lower bound",
          pic->lower_bound);
  hline(out, TOP + PLOT_H - (double)peak * sy, "#00c", NULL, "peak", peak);
  if (pic->capacity)
    hline(out, TOP + PLOT_H - (double)pic->capacity * sy, "#080", "2,3", "capacity", pic->capacity);
  fputs("</svg>\n", out);
  if (ferror(out))
    return sfc_error_set(err, SFC_ERR_IO, "cannot write the SVG");
  return SFC_OK;
}

sfc_status_t sfc_svg_write_file(const char *path, const sfc_svg_packing_t *pic, sfc_error_t *err) {
  sfc_outfile_t o;
  SFC_TRY(sfc_outfile_begin(&o, path, err));
  sfc_status_t st = sfc_svg_write(o.f, pic, err);
  if (st != SFC_OK) {
    sfc_error_prefix(err, path);
    sfc_outfile_abort(&o);
    return st;
  }
  return sfc_outfile_commit(&o, err);
}
