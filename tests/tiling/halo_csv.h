/* halo_csv.h — the rows of ../shared/data/tiling/halo_vectors.csv, the brute-force halo
 * vectors (tests only; $SFC_SHARED names another shared folder). One reader for the
 * tests that check the catalog's maps and the seed mode's tile boxes against them. */
#ifndef SFC_TESTS_HALO_CSV_H
#define SFC_TESTS_HALO_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct halo_row {
  int line;                        /* 2 for the first data row (line 1 is the header) */
  char op[128];                    /* e.g. "conv(k=3,s=2,p=1,d=1)" */
  int64_t n_in, n_out, k, s, p, d; /* -1 where the row gives none */
  int64_t qlo, qhi;                /* the queried output range */
  int64_t elo, ehi;                /* the exact input range (-1, -1: none) */
} halo_row_t;

/* The file, or NULL (said on stderr) when it is absent. */
static inline FILE *halo_csv_open(void) {
  const char *shared = getenv("SFC_SHARED");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/tiling/halo_vectors.csv", shared ? shared : "../shared");
  FILE *f = fopen(path, "r");
  if (!f)
    fprintf(stderr, "%s: absent (skipped)\n", path);
  return f;
}

static inline int64_t halo_csv_field(char **cur) { /* -1 for "" or "-" */
  char *f = strsep(cur, ",");
  return f && *f && strcmp(f, "-") != 0 ? strtoll(f, NULL, 10) : -1;
}

/* The next data row (the header is skipped); false at the end of the file. */
static inline bool halo_csv_next(FILE *f, halo_row_t *r) {
  char line[512];
  for (;;) {
    if (!fgets(line, sizeof line, f))
      return false;
    r->line = r->line > 0 ? r->line + 1 : 1;
    if (r->line > 1)
      break;
  }
  line[strcspn(line, "\r\n")] = '\0';
  char *cur = line;
  snprintf(r->op, sizeof r->op, "%s", strsep(&cur, ","));
  r->n_in = halo_csv_field(&cur);
  r->n_out = halo_csv_field(&cur);
  r->k = halo_csv_field(&cur);
  r->s = halo_csv_field(&cur);
  r->p = halo_csv_field(&cur);
  r->d = halo_csv_field(&cur);
  strsep(&cur, ","); /* extra: ceil_mode and output_padding only shape n_out, given */
  r->qlo = halo_csv_field(&cur);
  r->qhi = halo_csv_field(&cur);
  r->elo = halo_csv_field(&cur);
  r->ehi = halo_csv_field(&cur);
  return true;
}

#endif
