/* fuzz_graph.c — fuzz target for the graph loader (compiler/src/load_graph.c).
 *
 * Feeds arbitrary bytes (JSON, gzip, garbage) to sfc_graph_load_buffer and destroys
 * the result. Under ASan/UBSan (libFuzzer, or replay_main.c over the corpora) any
 * crash, leak, overflow or UB is a finding. Beyond "no crash", it checks the loader's
 * promises and traps when one is broken:
 *   - a failure has a status, a non-empty one-line message, and no graph;
 *   - a success gives a graph every later pass may trust: operand, workspace and
 *     backward_of indices in range, backward_of earlier, non-persistent inputs
 *     produced before use, names never NULL and well-formed UTF-8 (so --json output
 *     parses), bytes within the limits;
 *   - a message has no control character (names and quotes come escaped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)                                                                              \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      __builtin_trap();                                                                            \
  } while (0)

/* Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF). */
static int utf8_ok(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  while (*s) {
    unsigned char c = *s;
    size_t len = c < 0x80                 ? 1
                 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (len == 0 || (len > 1 && (s[1] < lo || s[1] > hi)))
      return 0;
    for (size_t k = 2; k < len; k++)
      if ((s[k] & 0xc0) != 0x80)
        return 0;
    s += len;
  }
  return 1;
}

static void check_graph(const sfc_graph_t *g) {
  REQUIRE(g->name != NULL && utf8_ok(g->name));
  REQUIRE(g->n_ops >= 1 && g->n_file_tensors <= g->n_tensors);
  uint64_t total = 0;
  for (uint32_t i = 0; i < g->n_tensors; i++) {
    const sfc_tensor_t *t = &g->tensors[i];
    REQUIRE(t->name != NULL && utf8_ok(t->name));
    REQUIRE(t->bytes >= 1 && t->bytes <= SFC_MAX_TENSOR_BYTES);
    REQUIRE(t->kind < SFC_KIND_COUNT && t->dtype < SFC_DTYPE_COUNT);
    REQUIRE(t->ndim <= SFC_PLAN_MAX_DIMS);
    REQUIRE(t->batch_axis == -1 || (t->batch_axis >= 0 && t->batch_axis < (int)t->ndim));
    REQUIRE(((t->flags & SFC_TENSOR_PERSISTENT) != 0) == sfc_kind_is_persistent(t->kind));
    REQUIRE(((t->flags & SFC_TENSOR_SYNTHETIC) != 0) == (i >= g->n_file_tensors));
    total += t->bytes;
  }
  REQUIRE(total <= SFC_MAX_TOTAL_BYTES);
  uint8_t *produced = calloc(g->n_tensors ? g->n_tensors : 1, 1);
  REQUIRE(produced != NULL);
  for (uint32_t i = 0; i < g->n_ops; i++) {
    const sfc_op_t *op = &g->ops[i];
    REQUIRE(op->name != NULL && op->type != NULL && op->type[0]);
    REQUIRE(utf8_ok(op->name) && utf8_ok(op->type));
    REQUIRE(op->phase < SFC_PHASE_COUNT);
    for (uint32_t k = 0; k < op->n_inputs; k++) {
      uint32_t t = op->inputs[k];
      REQUIRE(t < g->n_file_tensors);
      REQUIRE(produced[t] || sfc_kind_is_persistent(g->tensors[t].kind));
    }
    for (uint32_t k = 0; k < op->n_outputs; k++) {
      REQUIRE(op->outputs[k] < g->n_file_tensors);
      produced[op->outputs[k]] = 1;
    }
    REQUIRE(op->backward_of == SFC_PLAN_NONE || op->backward_of < i);
    if (op->workspace != SFC_PLAN_NONE) {
      REQUIRE(op->workspace >= g->n_file_tensors && op->workspace < g->n_tensors);
      REQUIRE(g->tensors[op->workspace].bytes == op->workspace_bytes);
    } else {
      REQUIRE(op->workspace_bytes == 0);
    }
    REQUIRE(op->attrs.rank <= SFC_MAX_SPATIAL && op->attrs.groups >= 1);
    for (int d = 0; d < SFC_MAX_SPATIAL; d++)
      REQUIRE(op->attrs.kernel[d] >= 1 && op->attrs.stride[d] >= 1 && op->attrs.dilation[d] >= 1 &&
              op->attrs.scale[d] >= 1 && op->attrs.padding[d] >= 0 &&
              op->attrs.output_padding[d] >= 0);
  }
  free(produced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sfc_graph_t *g = NULL;
  sfc_error_t err;
  sfc_status_t s = sfc_graph_load_buffer((const char *)data, size, &g, &err);
  if (s == SFC_OK) {
    REQUIRE(g != NULL);
    check_graph(g);
  } else {
    REQUIRE(g == NULL && err.status == s && err.message[0] != '\0');
    for (const char *c = err.message; *c; c++)
      REQUIRE((unsigned char)*c >= 0x20 && *c != 0x7f);
  }
  sfc_graph_destroy(g);
  return 0;
}
