/* svg.h — a picture of a packing: time on x, offset on y, one rectangle per block,
 * the lower bound and the peak as horizontal lines. Used by `sfc pack --svg` and
 * `sfc inspect --svg`.
 *
 *   sfc_svg_packing_t pic = {.blocks = b, .count = n, .lower_bound = lb,
 *                            .title = "resnet50.csv: best-fit"};
 *   SFC_TRY(sfc_svg_write_file("out.svg", &pic, &err));   // outfile.h: safe, atomic
 */
#ifndef SFC_SVG_H
#define SFC_SVG_H

#include <stdio.h>

#include "pack.h"

typedef struct sfc_svg_packing {
  const sfc_pack_block_t *blocks; /* [count] size, start, end, offset */
  const char *const *names;       /* [count] shown as each rectangle's tooltip; NULL: indices */
  size_t count;
  uint64_t lower_bound; /* drawn as a dashed line; 0: none */
  uint64_t capacity;    /* drawn as a dotted line; 0: none */
  const char *title;    /* NULL: none; XML-escaped on output */
} sfc_svg_packing_t;

/* Writes the SVG document. Returns SFC_ERR_IO when writing fails. */
sfc_status_t sfc_svg_write(FILE *out, const sfc_svg_packing_t *pic, sfc_error_t *err);

/* Writes s with <, >, & and " escaped for XML text and attributes. */
void sfc_svg_put_escaped(FILE *out, const char *s);

/* Writes the document to path through outfile.h (a temporary renamed over path). */
sfc_status_t sfc_svg_write_file(const char *path, const sfc_svg_packing_t *pic, sfc_error_t *err);

#endif /* SFC_SVG_H */
