/* load_graph_input.c — the bytes of a graph file, gunzipped, checked and parsed into a
 * cJSON tree.
 *
 * The graph loader (load_graph.c) walks a cJSON tree; this file gets it there:
 *
 *   sfc_graph_input_read_file  reads a whole file, bounded by SFC_MAX_GRAPH_FILE;
 *   sfc_graph_input_parse      gunzips the bytes when they start with the gzip magic
 *                              1f 8b (by content, never by name; output bounded by
 *                              SFC_MAX_GRAPH_FILE, see sfc_graph_input_gunzip), checks
 *                              the text against RFC 8259, then parses it with cJSON.
 *
 * cJSON is lenient: it takes leading zeros (064), "1." and "-.5", raw control
 * characters and NUL bytes in strings, any bytes as UTF-8, \u0000 and bad \u escapes
 * (both silently end the string at a NUL), bytes up to 0x20 as white space, and it
 * reads numbers through a double, so 9007199254740993 becomes 9007199254740992. So a
 * strict scan runs first, in one O(n) pass over the text: the RFC 8259 grammar,
 * well-formed UTF-8 in strings (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF), \u escapes that pair their surrogates and are not \u0000 (a C
 * string cannot hold it), numbers of at most 63 characters (cJSON's buffer). Its own
 * errors name what is wrong; where it stops at plain bad structure (a missing comma,
 * the end of the input) cJSON's parse explains it as before. The scan also keeps the
 * raw text of every number whose double does not show its value (an integer above
 * 2^53, a fraction that rounds to an integer), so the loader can refuse it and quote
 * its real digits (sfc_graph_input_number); that is the scan's only allocation, and
 * most documents have no such number.
 *
 * When cJSON fails we turn where it stopped into one line a person can act on:
 * 1-based "line:col" (columns count UTF-8 characters) and a hint — "unexpected end of
 * input" (told apart from a bad last character by parsing again with one more space:
 * a truncated document then fails past its old end), "unterminated string", nesting
 * deeper than cJSON's CJSON_NESTING_LIMIT, or the offending text itself. cJSON stops
 * after the first value, so text after the document is reported here too.
 *
 * Every message starts with "<prefix>:" when a prefix (the file's path) is given:
 * "<path>:3:14: not valid JSON: ...", "<path>: not valid gzip: ...". Costs: O(n) for
 * the scan and the parse; the diagnosis (only on failure) is another O(n) scan.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ir.h"

#include "load_graph_internal.h"

#define HINT_BYTES 24 /* how much offending text a syntax message quotes */

/* "prefix: " or "" — every message of this file starts with it. */
static const char *sep(const char *prefix) {
  return prefix ? ": " : "";
}
static const char *pre(const char *prefix) {
  return prefix ? prefix : "";
}

/* ---- reading a file ---------------------------------------------------------------- */

sfc_status_t sfc_graph_input_read_file(const char *path, char **out_data, size_t *out_len,
                                       sfc_error_t *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return sfc_error_set(err, SFC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    return sfc_error_set(err, SFC_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    fclose(f);
    return sfc_error_set(err, SFC_ERR_IO, "%s: is a directory, not a graph file", path);
  }
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > SFC_MAX_GRAPH_FILE) {
    fclose(f);
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "%s: the file is %lld bytes, more than the limit of %llu (2 GiB)", path,
                         (long long)st.st_size, (unsigned long long)SFC_MAX_GRAPH_FILE);
  }
  /* Regular files are read in one allocation; pipes and the like grow by doubling. */
  size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
  size_t len = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory reading the file", path);
  }
  for (;;) {
    if (len == cap) {
      if ((uint64_t)len > SFC_MAX_GRAPH_FILE) {
        free(buf);
        fclose(f);
        return sfc_error_set(err, SFC_ERR_LIMIT,
                             "%s: the file is more than the limit of %llu bytes (2 GiB)", path,
                             (unsigned long long)SFC_MAX_GRAPH_FILE);
      }
      size_t ncap = cap * 2;
      if ((uint64_t)ncap > SFC_MAX_GRAPH_FILE + 1)
        ncap = (size_t)SFC_MAX_GRAPH_FILE + 1;
      char *nb = realloc(buf, ncap);
      if (!nb) {
        free(buf);
        fclose(f);
        return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory reading the file",
                             path);
      }
      buf = nb;
      cap = ncap;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return sfc_error_set(err, SFC_ERR_IO, "%s: cannot read: %s", path, strerror(e));
      }
      break;
    }
  }
  fclose(f);
  if ((uint64_t)len > SFC_MAX_GRAPH_FILE) {
    free(buf);
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "%s: the file is more than the limit of %llu bytes (2 GiB)", path,
                         (unsigned long long)SFC_MAX_GRAPH_FILE);
  }
  *out_data = buf;
  *out_len = len;
  return SFC_OK;
}

/* ---- gzip -------------------------------------------------------------------------- */

static bool is_gzip(const char *data, size_t len) {
  return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

#define INFLATE_WINDOW 16384 /* the counting pass's output window, on the stack */

/* One pass over every gzip member of in[in_len]. With out, writes the output there
 * (at most out_cap bytes); without, only counts it through a window. Stops with
 * SFC_ERR_LIMIT as soon as the output passes limit; *produced is its size. */
static sfc_status_t inflate_pass(const char *in, size_t in_len, uint64_t limit, const char *prefix,
                                 char *out, size_t out_cap, size_t *produced, sfc_error_t *err) {
  unsigned char window[INFLATE_WINDOW];
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory starting zlib", pre(prefix),
                         sep(prefix));
  uint64_t total = 0;
  sfc_status_t status = SFC_OK;
  zs.next_in = (Bytef *)(uintptr_t)in; /* zlib's API is not const-correct */
  zs.avail_in = (uInt)in_len;          /* in_len <= SFC_MAX_GRAPH_FILE < UINT_MAX */
  for (;;) {
    if (out) {
      zs.next_out = (Bytef *)out + total;
      zs.avail_out = (uInt)(out_cap - total); /* out_cap <= SFC_MAX_GRAPH_FILE + 1 */
    } else {
      zs.next_out = window;
      zs.avail_out = sizeof window;
    }
    uInt room = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    total += room - zs.avail_out;
    if (total > limit) {
      status = sfc_error_set(err, SFC_ERR_LIMIT,
                             "%s%sthe decompressed graph is more than the limit of %llu bytes%s",
                             pre(prefix), sep(prefix), (unsigned long long)limit,
                             limit == SFC_MAX_GRAPH_FILE ? " (2 GiB)" : "");
      break;
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0)
        break;
      if (is_gzip((const char *)zs.next_in, zs.avail_in)) { /* another member (gzip a b) */
        inflateReset(&zs);
        continue;
      }
      status = sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "%s%snot valid gzip: %u bytes of trailing data after the "
                             "compressed stream",
                             pre(prefix), sep(prefix), (unsigned)zs.avail_in);
      break;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_out > 0) { /* no progress with room left: input ended */
      status = sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "%s%snot valid gzip: unexpected end of compressed data", pre(prefix),
                             sep(prefix));
      break;
    }
    if (rc == Z_BUF_ERROR) { /* out is full, yet more comes: more than the first pass */
      status = sfc_error_set(err, SFC_ERR_INTERNAL, "%s%sgunzip: the output grew past %zu bytes",
                             pre(prefix), sep(prefix), out_cap);
      break;
    }
    if (rc == Z_MEM_ERROR) {
      status = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory decompressing",
                             pre(prefix), sep(prefix));
      break;
    }
    status = sfc_error_set(err, SFC_ERR_BAD_INPUT, "%s%snot valid gzip: %s", pre(prefix),
                           sep(prefix), zs.msg ? zs.msg : "corrupt data");
    break;
  }
  inflateEnd(&zs);
  *produced = (size_t)total;
  return status;
}

sfc_status_t sfc_graph_input_gunzip(const char *in, size_t in_len, uint64_t limit,
                                    const char *prefix, const sfc_allocator_t *alloc, char **out,
                                    size_t *out_len, sfc_error_t *err) {
  /* Pass 1 counts (and finds every gzip error) without holding the output, so a gzip
   * bomb costs a 16 KiB window, not the limit. Pass 2 fills one exact allocation. */
  size_t n = 0, got = 0;
  SFC_TRY(inflate_pass(in, in_len, limit, prefix, NULL, 0, &n, err));
  char *buf = sfc_alloc(alloc, n + 1);
  if (!buf)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory decompressing", pre(prefix),
                         sep(prefix));
  sfc_status_t status = inflate_pass(in, in_len, n, prefix, buf, n + 1, &got, err);
  if (status == SFC_OK && got != n)
    status = sfc_error_set(err, SFC_ERR_INTERNAL, "%s%sgunzip: %zu bytes, then %zu", pre(prefix),
                           sep(prefix), n, got);
  if (status != SFC_OK) {
    sfc_free(alloc, buf, n + 1);
    return status;
  }
  buf[n] = '\0';
  *out = buf;
  *out_len = n;
  return SFC_OK;
}

/* ---- JSON syntax errors -------------------------------------------------------------- */

/* 1-based line and column of byte offset pos; columns count UTF-8 characters. */
static void line_col(const char *text, size_t pos, unsigned long *line, unsigned long *col) {
  unsigned long l = 1, c = 1;
  for (size_t i = 0; i < pos; i++) {
    unsigned char ch = (unsigned char)text[i];
    if (ch == '\n') {
      l++;
      c = 1;
    } else if ((ch & 0xc0) != 0x80) {
      c++;
    }
  }
  *line = l;
  *col = c;
}

void sfc_graph_input_quote(const char *s, size_t len, size_t max_bytes, bool stop_at_eol, char *out,
                           size_t cap) {
  if (stop_at_eol)
    for (size_t i = 0; i < len && i <= max_bytes; i++)
      if (s[i] == '\n' || s[i] == '\r') {
        len = i;
        break;
      }
  sfc_text_escape(s, len, max_bytes, out, cap);
}

/* Scans text[0..pos) like a JSON lexer that only knows strings and brackets: the
 * bracket depth at pos, and whether pos is inside a string (then *str_start is the
 * offset of its opening quote). */
static void scan_to(const char *text, size_t pos, unsigned long *depth, bool *in_string,
                    size_t *str_start) {
  unsigned long d = 0;
  bool in_str = false, esc = false;
  size_t start = 0;
  for (size_t i = 0; i < pos; i++) {
    char ch = text[i];
    if (in_str) {
      if (esc)
        esc = false;
      else if (ch == '\\')
        esc = true;
      else if (ch == '"')
        in_str = false;
    } else if (ch == '"') {
      in_str = true;
      start = i;
    } else if (ch == '[' || ch == '{') {
      d++;
    } else if ((ch == ']' || ch == '}') && d > 0) {
      d--;
    }
  }
  *depth = d;
  *in_string = in_str;
  *str_start = start;
}

/* True when a string opened before pos is never closed before len. */
static bool string_unterminated(const char *text, size_t len, size_t pos) {
  bool esc = false;
  for (size_t i = pos; i < len; i++) {
    if (esc)
      esc = false;
    else if (text[i] == '\\')
      esc = true;
    else if (text[i] == '"')
      return false;
  }
  return true;
}

static sfc_status_t syntax_error(const char *prefix, const char *text, size_t pos,
                                 sfc_status_t status, const char *what, const char *hint,
                                 sfc_error_t *err) {
  unsigned long line, col;
  line_col(text, pos, &line, &col);
  return sfc_error_set(err, status, "%s%s%lu:%lu: %s%s", pre(prefix), prefix ? ":" : "", line, col,
                       what, hint);
}

/* Where cJSON stopped when parsing text[len] (cJSON reports len-1 both for a bad last
 * character and for running out of input). */
static size_t cjson_error_pos(const char *text, size_t len, const char *end) {
  if (!end || end < text || (size_t)(end - text) > len)
    return len;
  return (size_t)(end - text);
}

/* True when the document ends before it is complete: parsing it again with one more
 * space fails at or after the old end. */
static bool truncated(const char *text, size_t len) {
  char *copy = malloc(len + 1);
  if (!copy)
    return false;
  memcpy(copy, text, len);
  copy[len] = ' ';
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 0);
  size_t pos = cjson_error_pos(copy, len + 1, end);
  cJSON_Delete(root); /* NULL-safe; a success here is impossible but harmless */
  free(copy);
  return root == NULL && pos >= len;
}

static sfc_status_t explain(const char *prefix, const char *text, size_t len, size_t pos,
                            sfc_error_t *err) {
  if (len == 0)
    return syntax_error(prefix, text, 0, SFC_ERR_BAD_INPUT,
                        "not valid JSON: ", "the input is empty", err);
  if (pos >= len - 1 && (pos >= len || truncated(text, len)))
    return syntax_error(prefix, text, len, SFC_ERR_BAD_INPUT,
                        "not valid JSON: ", "unexpected end of input", err);
  unsigned long depth;
  bool in_str;
  size_t str_start;
  scan_to(text, pos, &depth, &in_str, &str_start);
  if (in_str && string_unterminated(text, len, pos))
    return syntax_error(prefix, text, str_start, SFC_ERR_BAD_INPUT,
                        "not valid JSON: ", "unterminated string", err);
  if ((text[pos] == '[' || text[pos] == '{') && depth >= CJSON_NESTING_LIMIT) {
    char hint[64];
    snprintf(hint, sizeof hint, "nested more than %d levels deep", CJSON_NESTING_LIMIT);
    return syntax_error(prefix, text, pos, SFC_ERR_LIMIT, "JSON ", hint, err);
  }
  char snip[HINT_BYTES * 4 + 16], hint[sizeof snip + 16];
  sfc_graph_input_quote(text + pos, len - pos, HINT_BYTES, true, snip, sizeof snip);
  snprintf(hint, sizeof hint, "unexpected '%s'", snip);
  return syntax_error(prefix, text, pos, SFC_ERR_BAD_INPUT, "not valid JSON: ", hint, err);
}

static bool json_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* "unexpected '<text at pos>'", or "unexpected end of input" at the end. */
static sfc_status_t unexpected(const char *prefix, const char *text, size_t len, size_t pos,
                               sfc_error_t *err) {
  if (pos >= len)
    return syntax_error(prefix, text, len, SFC_ERR_BAD_INPUT,
                        "not valid JSON: ", "unexpected end of input", err);
  char snip[HINT_BYTES * 4 + 16], hint[sizeof snip + 16];
  sfc_graph_input_quote(text + pos, len - pos, HINT_BYTES, true, snip, sizeof snip);
  snprintf(hint, sizeof hint, "unexpected '%s'", snip);
  return syntax_error(prefix, text, pos, SFC_ERR_BAD_INPUT, "not valid JSON: ", hint, err);
}

/* ---- the strict scan (RFC 8259) ---------------------------------------------------------- */

#define NUMBER_MAX_CHARS 63 /* cJSON reads a number through a 64-byte buffer */

enum { SCAN_OK, SCAN_DEFER, SCAN_FAIL };

typedef struct scan {
  const char *text;
  size_t len;
  const char *prefix;
  sfc_error_t *err;
  sfc_status_t status;     /* SCAN_FAIL: the error */
  size_t defer_pos;        /* SCAN_DEFER: where the structure went wrong */
  uint32_t n_seen;         /* numbers so far */
  sfc_json_number_t *nums; /* the numbers a double cannot show */
  size_t n_nums, cap_nums;
  char *arena; /* their texts */
  size_t arena_len, arena_cap;
} scan_t;

static int scan_defer(scan_t *s, size_t pos) {
  s->defer_pos = pos;
  return SCAN_DEFER;
}

/* An error of the scan's own at pos: "<what><before><quote><after>", the quote being
 * text[pos..pos+n) (cut at HINT_BYTES, escaped). */
static int scan_fail(scan_t *s, size_t pos, sfc_status_t status, const char *what,
                     const char *before, size_t n, const char *after) {
  char snip[HINT_BYTES * 4 + 16], hint[sizeof snip + 200];
  sfc_graph_input_quote(s->text + pos, n, HINT_BYTES, false, snip, sizeof snip);
  snprintf(hint, sizeof hint, "%s%s%s", before, snip, after);
  s->status = syntax_error(s->prefix, s->text, pos, status, what, hint, s->err);
  return SCAN_FAIL;
}

static size_t skip_space(const char *t, size_t n, size_t i) {
  while (i < n && json_space(t[i]))
    i++;
  return i;
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

static int hex_value(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* The 4 hex digits at t[i..i+4) as a code unit, or -1. */
static long hex4(const char *t, size_t i) {
  long u = 0;
  for (size_t k = 0; k < 4; k++) {
    int h = hex_value(t[i + k]);
    if (h < 0)
      return -1;
    u = u * 16 + h;
  }
  return u;
}

/* The length of the UTF-8 sequence at t[0..n) (t[0] >= 0x80) when it is well formed
 * (RFC 3629), else 0 with *why and *bad (how many bytes to show). */
static size_t utf8_check(const unsigned char *t, size_t n, const char **why, size_t *bad) {
  unsigned char c = t[0], lo = 0x80, hi = 0xbf;
  size_t len;
  if (c < 0xc0) {
    *why = "a continuation byte without a lead byte";
    *bad = 1;
    return 0;
  }
  if (c < 0xc2) {
    *why = "an overlong encoding";
    *bad = n > 1 && (t[1] & 0xc0) == 0x80 ? 2 : 1;
    return 0;
  }
  if (c < 0xe0) {
    len = 2;
  } else if (c < 0xf0) {
    len = 3;
    lo = c == 0xe0 ? 0xa0 : 0x80;
    hi = c == 0xed ? 0x9f : 0xbf;
  } else if (c < 0xf5) {
    len = 4;
    lo = c == 0xf0 ? 0x90 : 0x80;
    hi = c == 0xf4 ? 0x8f : 0xbf;
  } else {
    *why = "not a byte of UTF-8";
    *bad = 1;
    return 0;
  }
  size_t k = 1;
  while (k < len && k < n && (t[k] & 0xc0) == 0x80)
    k++;
  *bad = k;
  if (k < len) {
    *why = "a truncated sequence";
    return 0;
  }
  if (t[1] < lo) {
    *why = "an overlong encoding";
    return 0;
  }
  if (t[1] > hi) {
    *why = c == 0xed ? "a UTF-16 surrogate encoded in UTF-8" : "above U+10FFFF";
    return 0;
  }
  return len;
}

/* The string whose opening quote is at *pi; on SCAN_OK *pi is past its closing one. */
static int scan_string(scan_t *s, size_t *pi) {
  const char *t = s->text;
  size_t n = s->len, start = *pi, i = start + 1;
  for (;;) {
    if (i >= n)
      return scan_defer(s, i); /* cJSON says "unterminated string" */
    unsigned char c = (unsigned char)t[i];
    if (c == '"') {
      *pi = i + 1;
      return SCAN_OK;
    }
    if (c == '\\') {
      if (i + 1 >= n)
        return scan_defer(s, n);
      char e = t[i + 1];
      if (e != 'u') {
        if (e && strchr("\"\\/bfnrt", e)) {
          i += 2;
          continue;
        }
        return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "invalid escape '", 2,
                         "' in a string");
      }
      if (i + 6 > n)
        return scan_defer(s, n);
      long u = hex4(t, i + 2);
      if (u < 0)
        return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "invalid escape '", 6,
                         "' in a string (\\u takes 4 hex digits)");
      if (u == 0)
        return scan_fail(s, i, SFC_ERR_BAD_INPUT, "", "'", 6,
                         "' in a string: sfc keeps strings as C strings, which end at NUL");
      if (u >= 0xdc00 && u <= 0xdfff)
        return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "lone surrogate '", 6,
                         "' in a string (a low surrogate must follow a high one)");
      if (u >= 0xd800 && u <= 0xdbff) {
        if (i + 6 >= n || (t[i + 6] == '\\' && (i + 7 >= n || (t[i + 7] == 'u' && i + 12 > n))))
          return scan_defer(s, n);
        long lo = t[i + 6] == '\\' && t[i + 7] == 'u' ? hex4(t, i + 8) : -1;
        if (lo < 0xdc00 || lo > 0xdfff)
          return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "lone surrogate '", 6,
                           "' in a string (a high surrogate must be followed by a low one, "
                           "\\udc00..\\udfff)");
        i += 12;
        continue;
      }
      i += 6;
      continue;
    }
    if (c < 0x20) {
      if (c == 0)
        return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "NUL byte in a string", 0,
                         "");
      if ((c == '\n' || c == '\r') && string_unterminated(t, n, i))
        return scan_fail(s, start, SFC_ERR_BAD_INPUT, "not valid JSON: ", "unterminated string", 0,
                         "");
      char after[64];
      snprintf(after, sizeof after, "' in a string (escape it, as \\u%04x)", c);
      return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid JSON: ", "raw control character '", 1,
                       after);
    }
    if (c < 0x80) {
      i++;
      continue;
    }
    const char *why = NULL;
    size_t bad = 1, k = utf8_check((const unsigned char *)t + i, n - i, &why, &bad);
    if (k == 0) {
      char after[64];
      snprintf(after, sizeof after, "' in a string is %s", why);
      return scan_fail(s, i, SFC_ERR_BAD_INPUT, "not valid UTF-8: ", "'", bad, after);
    }
    i += k;
  }
}

/* The exact value of the RFC 8259 number t[0..n), without rounding: an integer or
 * not, above 2^53 in magnitude or not. *show: its double may not show it (an integer
 * above 2^53; a fraction with 16 or more significant digits, or so small that it may
 * round to 0). */
static unsigned classify_number(const char *t, size_t n, bool *show) {
  char dig[NUMBER_MAX_CHARS + 1];
  size_t i = t[0] == '-', nd = 0;
  long frac = 0, exp = 0;
  while (i < n && is_digit(t[i]))
    dig[nd++] = t[i++];
  if (i < n && t[i] == '.')
    for (i++; i < n && is_digit(t[i]); i++, frac++)
      dig[nd++] = t[i];
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    bool neg = ++i < n && t[i] == '-';
    if (i < n && (t[i] == '-' || t[i] == '+'))
      i++;
    for (; i < n && is_digit(t[i]); i++)
      if (exp < 100000) /* saturates: far past any double */
        exp = exp * 10 + (t[i] - '0');
    if (neg)
      exp = -exp;
  }
  size_t a = 0, b = nd; /* the significant digits: dig[a..b) * 10^e */
  while (a < nd && dig[a] == '0')
    a++;
  *show = false;
  if (a == nd)
    return SFC_JSON_NUM_INTEGRAL; /* zero */
  while (b > a && dig[b - 1] == '0')
    b--;
  long sig = (long)(b - a), e = exp - frac + (long)(nd - b);
  if (e < 0) {
    *show = sig >= 16 || sig + e < -300;
    return 0;
  }
  static const char two53[] = "9007199254740992"; /* 16 digits */
  bool above = sig + e > 16;
  if (sig + e == 16) {
    int c = 0;
    for (long k = 0; k < 16 && c == 0; k++)
      c = (k < sig ? dig[a + k] : '0') - two53[k];
    above = c > 0;
  }
  *show = above;
  return SFC_JSON_NUM_INTEGRAL | (above ? SFC_JSON_NUM_ABOVE_2_53 : 0);
}

/* Keeps the raw text of a number the loader may have to quote. */
static int record_number(scan_t *s, size_t start, size_t n, unsigned flags) {
  if (s->n_nums == s->cap_nums) {
    size_t cap = s->cap_nums ? 2 * s->cap_nums : 16;
    sfc_json_number_t *p = realloc(s->nums, cap * sizeof *p);
    if (!p)
      goto oom;
    s->nums = p;
    s->cap_nums = cap;
  }
  if (s->arena_cap - s->arena_len < n + 1) {
    size_t cap = s->arena_cap ? 2 * s->arena_cap : 1024;
    char *p = realloc(s->arena, cap);
    if (!p)
      goto oom;
    s->arena = p;
    s->arena_cap = cap;
  }
  s->nums[s->n_nums++] = (sfc_json_number_t){s->n_seen, (uint32_t)s->arena_len, (uint8_t)flags};
  memcpy(s->arena + s->arena_len, s->text + start, n);
  s->arena[s->arena_len + n] = '\0';
  s->arena_len += n + 1;
  return SCAN_OK;
oom:
  s->status = sfc_error_set(s->err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory reading numbers",
                            pre(s->prefix), sep(s->prefix));
  return SCAN_FAIL;
}

/* The number at *pi; on SCAN_OK *pi is past it. */
static int scan_number(scan_t *s, size_t *pi) {
  const char *t = s->text;
  size_t n = s->len, start = *pi, i = start, shown = 0; /* shown: what a message quotes */
  while (start + shown < n && (is_digit(t[start + shown]) ||
                               (t[start + shown] != '\0' && strchr("+-.eE", t[start + shown]))))
    shown++;
  if (t[i] == '-')
    i++;
  if (i >= n)
    return scan_defer(s, n);
  if (t[i] == '0') {
    if (++i < n && is_digit(t[i]))
      return scan_fail(s, start, SFC_ERR_BAD_INPUT,
                       "not valid JSON: ", "number with a leading zero '", shown, "'");
  } else if (is_digit(t[i])) {
    while (i < n && is_digit(t[i]))
      i++;
  } else {
    return scan_fail(s, start, SFC_ERR_BAD_INPUT,
                     "not valid JSON: ", "'-' must be followed by a digit: '", shown, "'");
  }
  if (i < n && t[i] == '.') {
    if (++i >= n)
      return scan_defer(s, n);
    if (!is_digit(t[i]))
      return scan_fail(s, start, SFC_ERR_BAD_INPUT,
                       "not valid JSON: ", "a digit must follow the decimal point: '", shown, "'");
    while (i < n && is_digit(t[i]))
      i++;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    if (++i < n && (t[i] == '+' || t[i] == '-'))
      i++;
    if (i >= n)
      return scan_defer(s, n);
    if (!is_digit(t[i]))
      return scan_fail(s, start, SFC_ERR_BAD_INPUT,
                       "not valid JSON: ", "the exponent needs a digit: '", shown, "'");
    while (i < n && is_digit(t[i]))
      i++;
  }
  if (i - start > NUMBER_MAX_CHARS) {
    char after[64];
    snprintf(after, sizeof after, "' is longer than %d characters", NUMBER_MAX_CHARS);
    return scan_fail(s, start, SFC_ERR_LIMIT, "JSON ", "number '", i - start, after);
  }
  bool show = false;
  unsigned flags = classify_number(t + start, i - start, &show);
  if (show && record_number(s, start, i - start, flags) != SCAN_OK)
    return SCAN_FAIL;
  s->n_seen++;
  *pi = i;
  return SCAN_OK;
}

/* One pass over the document, iterative (a bit per open bracket, at most cJSON's
 * nesting limit; deeper is left to cJSON's message). SCAN_DEFER: the structure is
 * wrong at s->defer_pos (a missing comma, a bad literal, the end of the input, text
 * after the document), which cJSON's parse explains. */
static int scan_document(scan_t *s) {
  const char *t = s->text;
  size_t n = s->len, i = 0, depth = 0;
  bool object[CJSON_NESTING_LIMIT]; /* per open bracket: an object (else an array) */
  enum { VALUE, KEY, AFTER } state = VALUE;
  if (n >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0)
    i = 3; /* a byte order mark: RFC 8259 lets a parser ignore it, and cJSON does */
  for (;;) {
    i = skip_space(t, n, i);
    if (state == AFTER) {
      if (depth == 0)
        return i < n ? scan_defer(s, i) : SCAN_OK;
      if (i < n && t[i] == ',') {
        i++;
        state = object[depth - 1] ? KEY : VALUE;
      } else if (i < n && t[i] == (object[depth - 1] ? '}' : ']')) {
        i++;
        depth--;
      } else {
        return scan_defer(s, i);
      }
      continue;
    }
    if (i >= n)
      return scan_defer(s, n);
    if (state == KEY) {
      int rc = t[i] == '"' ? scan_string(s, &i) : scan_defer(s, i);
      if (rc != SCAN_OK)
        return rc;
      i = skip_space(t, n, i);
      if (i >= n || t[i] != ':')
        return scan_defer(s, i);
      i++;
      state = VALUE;
      continue;
    }
    char c = t[i];
    int rc = SCAN_OK;
    state = AFTER;
    if (c == '{' || c == '[') {
      if (depth >= CJSON_NESTING_LIMIT)
        return scan_defer(s, i);
      object[depth++] = c == '{';
      i = skip_space(t, n, i + 1);
      if (i < n && t[i] == (c == '{' ? '}' : ']')) {
        i++;
        depth--;
      } else {
        state = c == '{' ? KEY : VALUE;
      }
    } else if (c == '"') {
      rc = scan_string(s, &i);
    } else if (c == '-' || is_digit(c)) {
      rc = scan_number(s, &i);
    } else {
      const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
      size_t ll = lit ? strlen(lit) : 0;
      if (!lit || n - i < ll || memcmp(t + i, lit, ll) != 0)
        return scan_defer(s, i);
      i += ll;
    }
    if (rc != SCAN_OK)
      return rc;
  }
}

/* Numbers in document order: a pre-order walk of the tree meets them in the order
 * the scan did. Each number node's valueint (which sfc never reads: cJSON saturates
 * it at INT_MAX) becomes the index of its record, or -1. */
static void index_numbers(cJSON *node, const sfc_json_doc_t *doc, size_t *next, uint32_t *seen) {
  for (cJSON *c = node; c; c = c->next) {
    if (cJSON_IsNumber(c)) {
      bool rec = *next < doc->n_numbers && doc->numbers[*next].index == *seen;
      c->valueint = rec ? (int)(*next)++ : -1;
      (*seen)++;
    } else if (c->child) {
      index_numbers(c->child, doc, next, seen);
    }
  }
}

const char *sfc_graph_input_number(const sfc_json_doc_t *doc, const cJSON *v, unsigned *flags) {
  if (!doc || doc->n_numbers == 0 || !cJSON_IsNumber(v) || v->valueint < 0 ||
      (size_t)v->valueint >= doc->n_numbers)
    return NULL;
  const sfc_json_number_t *x = &doc->numbers[v->valueint];
  if (flags)
    *flags = x->flags;
  return doc->text + x->text;
}

void sfc_json_doc_free(sfc_json_doc_t *doc) {
  if (!doc)
    return;
  cJSON_Delete(doc->root);
  free(doc->numbers);
  free(doc->text);
  memset(doc, 0, sizeof *doc);
}

static sfc_status_t parse_text(const char *text, size_t len, const char *prefix,
                               sfc_json_doc_t *doc, sfc_error_t *err) {
  scan_t s = {.text = text, .len = len, .prefix = prefix, .err = err};
  int rc = scan_document(&s);
  doc->numbers = s.nums; /* owned by doc from here on, also on failure */
  doc->n_numbers = s.n_nums;
  doc->text = s.arena;
  if (rc == SCAN_FAIL)
    return s.status;
  const char *end = NULL;
  cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
  if (!root) {
    size_t at = cjson_error_pos(text, len, end);
    if (rc == SCAN_DEFER && s.defer_pos < at) /* cJSON took something RFC 8259 does not */
      return unexpected(prefix, text, len, s.defer_pos, err);
    return explain(prefix, text, len, at, err);
  }
  doc->root = root;
  size_t pos = cjson_error_pos(text, len, end);
  while (pos < len && json_space(text[pos]))
    pos++;
  if (rc == SCAN_DEFER && s.defer_pos < pos) /* cJSON took what RFC 8259 does not */
    return unexpected(prefix, text, len, s.defer_pos, err);
  if (pos < len) {
    char snip[HINT_BYTES * 4 + 16], hint[sizeof snip + 48];
    sfc_graph_input_quote(text + pos, len - pos, HINT_BYTES, true, snip, sizeof snip);
    snprintf(hint, sizeof hint, "unexpected text after the document: '%s'", snip);
    return syntax_error(prefix, text, pos, SFC_ERR_BAD_INPUT, "not valid JSON: ", hint, err);
  }
  if (rc == SCAN_DEFER) /* cannot happen: the scan only stops early at bad structure */
    return unexpected(prefix, text, len, s.defer_pos, err);
  size_t next = 0;
  uint32_t seen = 0;
  if (doc->n_numbers)
    index_numbers(root, doc, &next, &seen);
  if (next != doc->n_numbers)
    return sfc_error_set(err, SFC_ERR_INTERNAL,
                         "%s%sgraph loader: the scan and cJSON disagree on the numbers",
                         pre(prefix), sep(prefix));
  return SFC_OK;
}

sfc_status_t sfc_graph_input_parse(const char *data, size_t len, const char *prefix,
                                   sfc_json_doc_t *doc, sfc_error_t *err) {
  memset(doc, 0, sizeof *doc);
  if ((uint64_t)len > SFC_MAX_GRAPH_FILE)
    return sfc_error_set(
        err, SFC_ERR_LIMIT, "%s%sthe input is %llu bytes, more than the limit of %llu (2 GiB)",
        pre(prefix), sep(prefix), (unsigned long long)len, (unsigned long long)SFC_MAX_GRAPH_FILE);
  if (!is_gzip(data, len))
    return parse_text(data, len, prefix, doc, err);
  char *text = NULL;
  size_t text_len = 0;
  SFC_TRY(
      sfc_graph_input_gunzip(data, len, SFC_MAX_GRAPH_FILE, prefix, NULL, &text, &text_len, err));
  sfc_status_t status = parse_text(text, text_len, prefix, doc, err);
  sfc_free(NULL, text, text_len + 1);
  return status;
}
