/* load_graph_internal.h — shared between the graph loader's two files:
 * load_graph_input.c (bytes -> parsed JSON: bounded read, gunzip, syntax messages)
 * and load_graph.c (parsed JSON -> validated graph). */
#ifndef SFC_LOAD_GRAPH_INTERNAL_H
#define SFC_LOAD_GRAPH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sfc/status.h"

/* Reads a whole file, bounded by SFC_MAX_GRAPH_FILE; *out_data is malloc'ed. */
sfc_status_t sfc_graph_input_read_file(const char *path, char **out_data, size_t *out_len,
                                       sfc_error_t *err);

/* Gunzips when the bytes start with the gzip magic, then parses the JSON; syntax
 * errors become "<prefix>line:col: not valid JSON: ...". */
sfc_status_t sfc_graph_input_parse(const char *data, size_t len, const char *prefix,
                                   cJSON **out_root, sfc_error_t *err);

/* Quotes at most max_bytes of s into out[cap] for a message (escaping controls). */
void sfc_graph_input_quote(const char *s, size_t len, size_t max_bytes, bool stop_at_eol, char *out,
                           size_t cap);

#endif /* SFC_LOAD_GRAPH_INTERNAL_H */
