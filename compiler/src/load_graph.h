/* load_graph.h — read and validate an sfc-graph v1 JSON file (docs/graph-format.md).
 *
 *   sfc_graph_t *g;
 *   if (sfc_graph_load_file("model.json", &g, &err) != SFC_OK)
 *     fprintf(stderr, "sfc: %s\n", err.message);
 *     // "model.json: $.ops[12].inputs[1]: tensor 7 (activation \"h1\") is used before any op
    //  produces it"
 *   ...
 *   sfc_graph_destroy(g);
 *
 * Validation is complete: after a successful load every later pass may trust the
 * graph (ids unique, references resolved to indices, every non-persistent tensor
 * produced before it is used, sizes and counts within the SFC_MAX_* limits of ir.h).
 * Every failure is SFC_ERR_BAD_INPUT (or SFC_ERR_LIMIT for absurd sizes,
 * SFC_ERR_VERSION for an unsupported version, SFC_ERR_IO, SFC_ERR_OUT_OF_MEMORY)
 * with one line naming the JSON path and the reason. Files compressed with gzip
 * (by content, not by name) are decompressed transparently.
 */
#ifndef SFC_LOAD_GRAPH_H
#define SFC_LOAD_GRAPH_H

#include <stddef.h>

#include "ir.h"

/* Messages are "<path>: $.x.y: reason" (or "<path>:line:col: ..." for JSON syntax). */
sfc_status_t sfc_graph_load_file(const char *path, sfc_graph_t **out_graph, sfc_error_t *err);

/* Same, from memory; messages start at "$..." (or "line:col: ..."). */
sfc_status_t sfc_graph_load_buffer(const char *data, size_t bytes, sfc_graph_t **out_graph,
                                   sfc_error_t *err);

#endif /* SFC_LOAD_GRAPH_H */
