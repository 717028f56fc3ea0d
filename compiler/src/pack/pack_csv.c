/* pack_csv.c — the minimalloc CSV reader and writer (see pack_csv.h).
 *
 * A single pass over the bytes: the header fixes which column is which, then each
 * row is split at commas; the id is kept as text, every other field parsed as a
 * strict decimal integer (optional sign, digits, nothing else; surrounding spaces
 * and a CR tolerated). Duplicate ids are found after reading by sorting them.
 * O(n log n).
 */
#include "pack_csv.h"
#include "outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_OFFSET, N_COLS };
static const char *const col_names[N_COLS] = {"id", "lower", "upper", "size", "offset"};

typedef struct reader {
  const char *p, *end;
  const char *name;
  uint64_t line;
  sfc_error_t *err;
} reader_t;

static sfc_status_t fail(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static sfc_status_t fail(reader_t *r, const char *fmt, ...) {
  char msg[SFC_ERROR_MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->name)
    return sfc_error_set(r->err, SFC_ERR_BAD_INPUT, "%s:%" PRIu64 ": %s", r->name, r->line, msg);
  return sfc_error_set(r->err, SFC_ERR_BAD_INPUT, "%" PRIu64 ": %s", r->line, msg);
}

/* The next line without its terminator (and without a trailing CR). */
static bool next_line(reader_t *r, const char **out_s, size_t *out_n) {
  if (r->p >= r->end)
    return false;
  const char *s = r->p, *nl = memchr(s, '\n', (size_t)(r->end - s));
  const char *e = nl ? nl : r->end;
  r->p = nl ? nl + 1 : r->end;
  r->line++;
  if (e > s && e[-1] == '\r')
    e--;
  *out_s = s;
  *out_n = (size_t)(e - s);
  return true;
}

static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t'))
    (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
    (*n)--;
}

/* Quotes a field for a message: at most 24 bytes, control bytes as '?'. */
static const char *quote(const char *s, size_t n, char *buf, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < cap && i < 24; i++)
    buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (n > 24 && k + 4 < cap)
    buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
  buf[k] = '\0';
  return buf;
}

static bool parse_int(const char *s, size_t n, int64_t *out) {
  if (n == 0 || n > 20)
    return false;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
    if (n == 1)
      return false;
  }
  uint64_t v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_C(9223372036854775807) - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = neg ? -(int64_t)v : (int64_t)v;
  return true;
}

static sfc_status_t read_header(reader_t *r, int col_of[N_COLS], int *out_n_fields) {
  const char *s;
  size_t n;
  if (!next_line(r, &s, &n) || n == 0)
    return fail(r, "expected the header 'id,lower,upper,size[,offset]'");
  for (int c = 0; c < N_COLS; c++)
    col_of[c] = -1;
  int field = 0;
  for (;;) {
    const char *comma = memchr(s, ',', n);
    size_t len = comma ? (size_t)(comma - s) : n;
    const char *f = s;
    size_t fl = len;
    trim(&f, &fl);
    int c = 0;
    while (c < N_COLS && !(strlen(col_names[c]) == fl && memcmp(col_names[c], f, fl) == 0))
      c++;
    char q[40];
    if (c == N_COLS)
      return fail(r, "unknown column '%s' (expected id, lower, upper, size and optionally offset)",
                  quote(f, fl, q, sizeof q));
    if (col_of[c] >= 0)
      return fail(r, "column '%s' appears twice", col_names[c]);
    col_of[c] = field++;
    if (!comma)
      break;
    n -= len + 1;
    s = comma + 1;
  }
  for (int c = 0; c < COL_OFFSET; c++)
    if (col_of[c] < 0)
      return fail(r, "the header has no '%s' column", col_names[c]);
  *out_n_fields = field;
  return SFC_OK;
}

static int cmp_id(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool id_ok(const char *s, size_t n) {
  if (n == 0 || n > SFC_PACK_CSV_MAX_ID)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] <= 0x20 || s[i] >= 0x7f)
      return false;
  return true;
}

static sfc_status_t grow(reader_t *r, sfc_pack_csv_t *out, size_t *cap) {
  size_t nc = *cap ? *cap * 2 : 1024;
  sfc_pack_block_t *b = realloc(out->blocks, nc * sizeof *b);
  if (b)
    out->blocks = b;
  const char **ids = b ? realloc(out->ids, nc * sizeof *ids) : NULL;
  if (ids)
    out->ids = ids;
  if (!b || !ids)
    return sfc_error_set(r->err, SFC_ERR_OUT_OF_MEMORY, "out of memory reading %zu rows", *cap);
  *cap = nc;
  return SFC_OK;
}

/* Appends an id to out->id_text; the offset is stored in the ids slot for now
 * (pointers are fixed once the text stops moving). */
static sfc_status_t add_id(reader_t *r, sfc_pack_csv_t *out, size_t *text_len, size_t *text_cap,
                           const char *s, size_t n) {
  if (*text_len + n + 1 > *text_cap) {
    size_t cap = *text_cap ? *text_cap * 2 : 4096;
    while (cap < *text_len + n + 1)
      cap *= 2;
    char *t = realloc(out->id_text, cap);
    if (!t)
      return sfc_error_set(r->err, SFC_ERR_OUT_OF_MEMORY, "out of memory reading ids");
    out->id_text = t;
    *text_cap = cap;
  }
  memcpy(out->id_text + *text_len, s, n);
  out->id_text[*text_len + n] = '\0';
  out->ids[out->count] = (const char *)(uintptr_t)*text_len;
  *text_len += n + 1;
  return SFC_OK;
}

static sfc_status_t read_rows(reader_t *r, const int col_of[N_COLS], int n_fields,
                              sfc_pack_csv_t *out) {
  size_t cap = 0, text_len = 0, text_cap = 0;
  const char *id = NULL;
  size_t id_len = 0;
  const char *s;
  size_t n;
  while (next_line(r, &s, &n)) {
    const char *t = s;
    size_t tn = n;
    trim(&t, &tn);
    if (tn == 0)
      continue; /* blank lines (typically the last) are allowed */
    if (out->count >= SFC_PACK_CSV_MAX_ROWS)
      return sfc_error_set(r->err, SFC_ERR_LIMIT, "%s%smore than %u rows", r->name ? r->name : "",
                           r->name ? ": " : "", SFC_PACK_CSV_MAX_ROWS);
    if (out->count == cap)
      SFC_TRY(grow(r, out, &cap));
    int64_t v[N_COLS] = {0};
    int field = 0;
    for (;;) {
      const char *comma = memchr(s, ',', n);
      size_t len = comma ? (size_t)(comma - s) : n;
      if (field >= n_fields)
        return fail(r, "more than the header's %d fields", n_fields);
      const char *f = s;
      size_t fl = len;
      trim(&f, &fl);
      int c = 0;
      while (col_of[c] != field)
        c++;
      char q[40];
      if (c == COL_ID) {
        if (!id_ok(f, fl))
          return fail(r, "id: expected 1..%u printable characters without spaces, got '%s'",
                      SFC_PACK_CSV_MAX_ID, quote(f, fl, q, sizeof q));
        id = f;
        id_len = fl;
      } else if (!parse_int(f, fl, &v[c]))
        return fail(r, "%s: expected an integer, got '%s'", col_names[c],
                    quote(f, fl, q, sizeof q));
      field++;
      if (!comma)
        break;
      n -= len + 1;
      s = comma + 1;
    }
    if (field < n_fields)
      return fail(r, "%d fields, the header has %d", field, n_fields);
    (void)v[COL_ID];
    if (v[COL_SIZE] <= 0 || (uint64_t)v[COL_SIZE] > SFC_PACK_CSV_MAX_SIZE)
      return fail(r, "size: %" PRId64 " is not in 1..2^50", v[COL_SIZE]);
    if (v[COL_UPPER] <= v[COL_LOWER])
      return fail(r, "upper %" PRId64 " is not greater than lower %" PRId64, v[COL_UPPER],
                  v[COL_LOWER]);
    if (v[COL_OFFSET] < 0)
      return fail(r, "offset: %" PRId64 " is negative", v[COL_OFFSET]);
    SFC_TRY(add_id(r, out, &text_len, &text_cap, id, id_len));
    out->blocks[out->count++] = (sfc_pack_block_t){.size = (uint64_t)v[COL_SIZE],
                                                   .start = v[COL_LOWER],
                                                   .end = v[COL_UPPER],
                                                   .offset = (uint64_t)v[COL_OFFSET]};
  }
  for (size_t i = 0; i < out->count; i++) /* the text no longer moves */
    out->ids[i] = out->id_text + (uintptr_t)out->ids[i];
  return SFC_OK;
}

static sfc_status_t check_unique_ids(reader_t *r, const sfc_pack_csv_t *out) {
  if (out->count < 2)
    return SFC_OK;
  const char **sorted = malloc(out->count * sizeof *sorted);
  if (!sorted)
    return sfc_error_set(r->err, SFC_ERR_OUT_OF_MEMORY, "out of memory checking ids");
  memcpy(sorted, out->ids, out->count * sizeof *sorted);
  qsort(sorted, out->count, sizeof *sorted, cmp_id);
  sfc_status_t st = SFC_OK;
  for (size_t i = 1; i < out->count && st == SFC_OK; i++) {
    if (strcmp(sorted[i], sorted[i - 1]) != 0)
      continue;
    uint64_t first = 0, second = 0;
    for (size_t k = 0; k < out->count; k++) { /* report the rows (2 + index) */
      if (strcmp(out->ids[k], sorted[i]) != 0)
        continue;
      if (!first)
        first = k + 2;
      else if (!second)
        second = k + 2;
    }
    r->line = second;
    st = fail(r, "id '%s' appears again (first on line %" PRIu64 ")", sorted[i], first);
  }
  free(sorted);
  return st;
}

sfc_status_t sfc_pack_csv_read_buffer(const char *data, size_t bytes, const char *name,
                                      sfc_pack_csv_t *out, sfc_error_t *err) {
  memset(out, 0, sizeof *out);
  reader_t r = {data, data + bytes, name, 0, err};
  if (bytes > SFC_PACK_CSV_MAX_BYTES)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%s%sfile larger than 1 GiB", name ? name : "",
                         name ? ": " : "");
  if (bytes > 0 && memchr(data, '\0', bytes))
    return fail(&r, "the file holds a NUL byte: not a CSV text file");
  int col_of[N_COLS], n_fields = 0;
  sfc_status_t st = read_header(&r, col_of, &n_fields);
  if (st == SFC_OK)
    st = read_rows(&r, col_of, n_fields, out);
  if (st == SFC_OK)
    st = check_unique_ids(&r, out);
  if (st != SFC_OK) {
    sfc_pack_csv_free(out);
    return st;
  }
  out->has_offsets = col_of[COL_OFFSET] >= 0;
  return SFC_OK;
}

sfc_status_t sfc_pack_csv_read_file(const char *path, sfc_pack_csv_t *out, sfc_error_t *err) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return sfc_error_set(err, SFC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t n = 0, cap = 0;
  sfc_status_t st = SFC_OK;
  for (;;) {
    if (n == cap) {
      if (cap >= SFC_PACK_CSV_MAX_BYTES + 1) {
        st = sfc_error_set(err, SFC_ERR_LIMIT, "%s: file larger than 1 GiB", path);
        break;
      }
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) {
        st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory reading", path);
        break;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f))
        st = sfc_error_set(err, SFC_ERR_IO, "%s: read error: %s", path, strerror(errno));
      break;
    }
  }
  fclose(f);
  if (st == SFC_OK)
    st = sfc_pack_csv_read_buffer(buf, n, path, out, err);
  free(buf);
  return st;
}

void sfc_pack_csv_write(FILE *out, const sfc_pack_csv_t *csv, bool with_offsets) {
  fputs(with_offsets ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n", out);
  for (size_t i = 0; i < csv->count; i++) {
    const sfc_pack_block_t *b = &csv->blocks[i];
    fprintf(out, "%s,%" PRId64 ",%" PRId64 ",%" PRIu64, csv->ids[i], b->start, b->end, b->size);
    if (with_offsets)
      fprintf(out, ",%" PRIu64, b->offset);
    fputc('\n', out);
  }
}

sfc_status_t sfc_pack_csv_write_file(const char *path, const sfc_pack_csv_t *csv,
                                     sfc_error_t *err) {
  sfc_outfile_t o;
  SFC_TRY(sfc_outfile_begin(&o, path, err));
  sfc_pack_csv_write(o.f, csv, true);
  return sfc_outfile_commit(&o, err);
}

void sfc_pack_csv_free(sfc_pack_csv_t *csv) {
  free(csv->blocks);
  free(csv->ids);
  free(csv->id_text);
  memset(csv, 0, sizeof *csv);
}
