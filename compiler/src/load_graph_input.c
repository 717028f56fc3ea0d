/* load_graph_input.c — the bytes of a graph file, gunzipped and parsed into a cJSON tree.
 *
 * The graph loader (load_graph.c) walks a cJSON tree; this file gets it there:
 *
 *   sfc_graph_input_read_file  reads a whole file, bounded by SFC_MAX_GRAPH_FILE;
 *   sfc_graph_input_parse      gunzips the bytes when they start with the gzip magic
 *                              1f 8b (by content, never by name; output bounded by
 *                              SFC_MAX_GRAPH_FILE), then parses them with cJSON.
 *
 * cJSON only says where it stopped. When it fails we turn that into one line a person
 * can act on: 1-based "line:col" (columns count UTF-8 characters) and a hint —
 * "unexpected end of input" (told apart from a bad last character by parsing again
 * with one more space: a truncated document then fails past its old end),
 * "unterminated string", nesting deeper than cJSON's CJSON_NESTING_LIMIT, or the
 * offending text itself. cJSON stops after the first value, so text after the
 * document is reported here too.
 *
 * Every message starts with "<prefix>:" when a prefix (the file's path) is given:
 * "<path>:3:14: not valid JSON: ...", "<path>: not valid gzip: ...". Costs: O(n) for
 * the parse; the diagnosis (only on failure) is another O(n) scan.
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

/* Inflates every gzip member of in[len] into a malloc'ed buffer of at most
 * SFC_MAX_GRAPH_FILE bytes. */
static sfc_status_t gunzip(const char *in, size_t in_len, const char *prefix, char **out_data,
                           size_t *out_len, sfc_error_t *err) {
  const size_t limit = (size_t)SFC_MAX_GRAPH_FILE;
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory starting zlib", pre(prefix),
                         sep(prefix));
  size_t cap = in_len < ((size_t)64 << 20) / 4 ? in_len * 4 : (size_t)64 << 20; /* then doubles */
  if (cap < 4096)
    cap = 4096;
  size_t used = 0;
  char *buf = malloc(cap);
  sfc_status_t status = SFC_OK;
  if (!buf) {
    status = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory decompressing",
                           pre(prefix), sep(prefix));
    goto done;
  }
  zs.next_in = (Bytef *)(uintptr_t)in; /* zlib's API is not const-correct */
  zs.avail_in = (uInt)in_len;          /* in_len <= SFC_MAX_GRAPH_FILE < UINT_MAX */
  for (;;) {
    if (used == cap) {
      if (cap > limit) {
        status = sfc_error_set(err, SFC_ERR_LIMIT,
                               "%s%sthe decompressed graph is more than the limit of %llu "
                               "bytes (2 GiB)",
                               pre(prefix), sep(prefix), (unsigned long long)SFC_MAX_GRAPH_FILE);
        goto done;
      }
      size_t ncap = cap <= limit / 2 ? cap * 2 : limit + 1;
      char *nb = realloc(buf, ncap);
      if (!nb) {
        status = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory decompressing",
                               pre(prefix), sep(prefix));
        goto done;
      }
      buf = nb;
      cap = ncap;
    }
    zs.next_out = (Bytef *)buf + used;
    zs.avail_out = (uInt)(cap - used);
    int rc = inflate(&zs, Z_NO_FLUSH);
    used = cap - zs.avail_out;
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
      goto done;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_out > 0) { /* no progress with room left: input ended */
      status = sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "%s%snot valid gzip: unexpected end of compressed data", pre(prefix),
                             sep(prefix));
      goto done;
    }
    if (rc == Z_BUF_ERROR)
      continue; /* the output is full: grow it */
    if (rc == Z_MEM_ERROR) {
      status = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory decompressing",
                             pre(prefix), sep(prefix));
      goto done;
    }
    status = sfc_error_set(err, SFC_ERR_BAD_INPUT, "%s%snot valid gzip: %s", pre(prefix),
                           sep(prefix), zs.msg ? zs.msg : "corrupt data");
    goto done;
  }
done:
  inflateEnd(&zs);
  if (status != SFC_OK) {
    free(buf);
    return status;
  }
  *out_data = buf;
  *out_len = used;
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

/* Copies up to max_bytes of s[len] into out[cap] for a message: well-formed UTF-8 and
 * printable ASCII as they are, every other byte as \xNN, "..." when cut. With
 * stop_at_eol it ends at the first line break. */
void sfc_graph_input_quote(const char *s, size_t len, size_t max_bytes, bool stop_at_eol, char *out,
                           size_t cap) {
  size_t o = 0, i = 0;
  while (i < len && o + 8 < cap) {
    unsigned char ch = (unsigned char)s[i];
    if (stop_at_eol && (ch == '\n' || ch == '\r'))
      break;
    if (i >= max_bytes) {
      memcpy(out + o, "...", 3);
      o += 3;
      break;
    }
    size_t n = ch < 0x80                  ? 1
               : ch >= 0xc2 && ch <= 0xdf ? 2
               : ch >= 0xe0 && ch <= 0xef ? 3
               : ch >= 0xf0 && ch <= 0xf4 ? 4
                                          : 0;
    for (size_t k = 1; k < n; k++)
      if (i + k >= len || ((unsigned char)s[i + k] & 0xc0) != 0x80)
        n = 0;
    if (n == 0 || ch < 0x20 || ch == 0x7f) {
      o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
      i++;
    } else if (o + n < cap) {
      memcpy(out + o, s + i, n);
      o += n;
      i += n;
    } else {
      break;
    }
  }
  out[o] = '\0';
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

static sfc_status_t parse_text(const char *text, size_t len, const char *prefix, cJSON **out_root,
                               sfc_error_t *err) {
  const char *end = NULL;
  cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
  if (!root)
    return explain(prefix, text, len, cjson_error_pos(text, len, end), err);
  size_t pos = cjson_error_pos(text, len, end);
  while (pos < len && json_space(text[pos]))
    pos++;
  if (pos < len) {
    cJSON_Delete(root);
    char snip[HINT_BYTES * 4 + 16], hint[sizeof snip + 48];
    sfc_graph_input_quote(text + pos, len - pos, HINT_BYTES, true, snip, sizeof snip);
    snprintf(hint, sizeof hint, "unexpected text after the document: '%s'", snip);
    return syntax_error(prefix, text, pos, SFC_ERR_BAD_INPUT, "not valid JSON: ", hint, err);
  }
  *out_root = root;
  return SFC_OK;
}

sfc_status_t sfc_graph_input_parse(const char *data, size_t len, const char *prefix,
                                   cJSON **out_root, sfc_error_t *err) {
  if ((uint64_t)len > SFC_MAX_GRAPH_FILE)
    return sfc_error_set(
        err, SFC_ERR_LIMIT, "%s%sthe input is %llu bytes, more than the limit of %llu (2 GiB)",
        pre(prefix), sep(prefix), (unsigned long long)len, (unsigned long long)SFC_MAX_GRAPH_FILE);
  if (!is_gzip(data, len))
    return parse_text(data, len, prefix, out_root, err);
  char *text = NULL;
  size_t text_len = 0;
  SFC_TRY(gunzip(data, len, prefix, &text, &text_len, err));
  sfc_status_t status = parse_text(text, text_len, prefix, out_root, err);
  free(text);
  return status;
}
