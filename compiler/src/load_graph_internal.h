/* load_graph_internal.h — shared between the graph loader's two files:
 * load_graph_input.c (bytes -> parsed JSON: bounded read, gunzip, strict RFC 8259
 * check, syntax messages) and load_graph.c (parsed JSON -> validated graph). */
#ifndef SFC_LOAD_GRAPH_INTERNAL_H
#define SFC_LOAD_GRAPH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sfc/allocator.h"
#include "sfc/status.h"

/* A number of the document whose double does not show its value: an integer above
 * 2^53 in magnitude (the double rounds it), or a non-integer that may round to an
 * integral double (4.0000000000000001, 1e-400). Most documents have none. */
enum {
  SFC_JSON_NUM_INTEGRAL = 1,   /* its exact value is an integer */
  SFC_JSON_NUM_ABOVE_2_53 = 2, /* ... whose magnitude is above 2^53 */
};

typedef struct sfc_json_number {
  uint32_t index; /* its place among all the numbers of the document, 0-based */
  uint32_t text;  /* offset of its raw text (NUL-terminated) in sfc_json_doc_t.text */
  uint8_t flags;  /* SFC_JSON_NUM_* */
} sfc_json_number_t;

/* A parsed graph document: the cJSON tree and the raw text of its numbers that a
 * double cannot show (sfc_graph_input_number finds them). */
typedef struct sfc_json_doc {
  cJSON *root;
  sfc_json_number_t *numbers; /* [n_numbers], in document order */
  size_t n_numbers;
  char *text; /* their raw texts */
} sfc_json_doc_t;

/* Reads a whole file, bounded by SFC_MAX_GRAPH_FILE; *out_data is malloc'ed. */
sfc_status_t sfc_graph_input_read_file(const char *path, char **out_data, size_t *out_len,
                                       sfc_error_t *err);

/* Gunzips when the bytes start with the gzip magic, checks that the text is JSON as
 * RFC 8259 defines it (strictly: see load_graph_input.c) and parses it; syntax errors
 * become "<prefix>:line:col: not valid JSON: ...". Free *doc with sfc_json_doc_free,
 * also after a failure. */
sfc_status_t sfc_graph_input_parse(const char *data, size_t len, const char *prefix,
                                   sfc_json_doc_t *doc, sfc_error_t *err);
void sfc_json_doc_free(sfc_json_doc_t *doc);

/* The raw text of number v when its double does not show its value (flags in
 * *flags), else NULL. */
const char *sfc_graph_input_number(const sfc_json_doc_t *doc, const cJSON *v, unsigned *flags);

/* Inflates every gzip member of in[in_len] into one buffer of exactly its size
 * (*out_len bytes, plus one spare, allocated through alloc: NULL = libc; free it with
 * sfc_free(alloc, *out, *out_len + 1)). A first pass only counts, through a small
 * window on the stack, and refuses (SFC_ERR_LIMIT) as soon as the output passes limit
 * bytes: an input that inflates past the limit allocates nothing, whatever its gzip
 * footer says. The graph loader passes SFC_MAX_GRAPH_FILE; tests pass less. */
sfc_status_t sfc_graph_input_gunzip(const char *in, size_t in_len, uint64_t limit,
                                    const char *prefix, const sfc_allocator_t *alloc, char **out,
                                    size_t *out_len, sfc_error_t *err);

/* Quotes at most max_bytes of s into out[cap] for a message (sfc_text_escape), ending
 * at the first line break when stop_at_eol. */
void sfc_graph_input_quote(const char *s, size_t len, size_t max_bytes, bool stop_at_eol, char *out,
                           size_t cap);

#endif /* SFC_LOAD_GRAPH_INTERNAL_H */
